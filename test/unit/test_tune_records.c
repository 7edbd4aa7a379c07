/*
 * The records store (tcc/tune.h, "records"): adding, the best record (per device), every
 * record oldest first; the database's schema version; four processes writing one database
 * at once; a writer killed mid-loop losing nothing it added; a visitor stopping the walk; the
 * mean of a result's costs, and an untimed record never the best; jobs refused on an SQLite
 * file. The AutoTVM logs are test_tune_logs.c's.
 */
#include "records_support.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Stops the walk once it has seen `stop_after` records. */
typedef struct Stopper {
    int seen, stop_after;
} Stopper;

static bool stop_early(const tcc_record *record, void *user)
{
    (void)record;
    Stopper *stopper = user;
    return ++stopper->seen < stopper->stop_after;
}

START_TEST(add_best_each)
{
    /* Directories above the database are made. */
    tcc_record_store *store = open_store(in_dir("a/b/records.db"));
    tcc_record slow = make_record(1, 3e-3, "NVIDIA H200"),
               fast = make_record(2, 1e-3, "NVIDIA H200");
    tcc_record failed = make_record(3, 1e-6, "NVIDIA H200"),
               other = make_record(4, 1e-7, "NVIDIA H200");
    failed.result.error = TCC_MEASURE_RUNTIME_DEVICE;
    snprintf(failed.result.message, sizeof failed.result.message, "illegal address");
    other.template_name = "gemm";
    add(store, &slow);
    add(store, &fast);
    add(store, &failed);
    add(store, &other);

    tcc_record best = {.size = sizeof best};
    ck_assert_int_eq(tcc_record_best(store, "conv2d_no_batching", seed_key, "NVIDIA H200", &best),
                     TCC_OK);
    ck_assert_int_eq(best.config_index, 2);
    ck_assert_str_eq(best.config, seed_config);
    ck_assert_str_eq(best.workload_key, seed_key);
    ck_assert_str_eq(best.target, "cuda -arch=sm_90a");
    ck_assert_str_eq(best.tcc_version, "0.1.0");
    ck_assert_int_eq(best.result.ncost, 2);
    ck_assert_double_eq(best.result.costs[0], 1e-3);
    ck_assert_double_eq(best.result.timestamp, 1700000002.25);

    Seen seen = each(store, "conv2d_no_batching");
    ck_assert_int_eq(seen.count, 3);
    ck_assert_int_eq(seen.indices[0], 1);
    ck_assert_int_eq(seen.indices[1], 2);
    ck_assert_int_eq(seen.indices[2], 3);
    ck_assert_int_eq(each(store, NULL).count, 4);
    ck_assert_int_eq(each(store, "tutorial").count, 0);

    /* No record: the header's status and words. */
    ck_assert_int_eq(tcc_record_best(store, "conv2d_no_batching", "[\"x\"]", NULL, &best),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "no record");
    assert_one_line(ctx);

    /* What no trial has is refused. */
    tcc_record bad = make_record(5, -1.0, "NVIDIA H200");
    ck_assert_int_eq(tcc_record_add(store, &bad), TCC_ERROR_INVALID_ARGUMENT);
    assert_one_line(ctx);
    bad = make_record(5, 1.0, NULL);
    bad.config = NULL;
    ck_assert_int_eq(tcc_record_add(store, &bad), TCC_ERROR_INVALID_ARGUMENT);
    /* What could not be exported as AutoTVM's line. */
    bad = make_record(5, 1.0, NULL);
    bad.workload_key = "conv2d 1 7 7";
    ck_assert_int_eq(tcc_record_add(store, &bad), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "workload key");
    assert_one_line(ctx);
    bad.workload_key = seed_key;
    bad.config = "[[\"tile_f\", {\"x\": 1}]]";
    ck_assert_int_eq(tcc_record_add(store, &bad), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "tile_f");
    ck_assert_int_eq(each(store, NULL).count, 4);
    tcc_record_store_close(store);
}
END_TEST

START_TEST(visitor_stops)
{
    tcc_record_store *store = open_store(in_dir("records.db"));
    for (int i = 0; i < 5; i++) {
        tcc_record record = make_record(i, 1e-3, "NVIDIA H200");
        add(store, &record);
    }
    Stopper stopper = {.stop_after = 2};
    ck_assert_msg(tcc_record_each(store, NULL, stop_early, &stopper) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    ck_assert_int_eq(stopper.seen, 2);
    /* The store is usable after a walk left unfinished. */
    stopper = (Stopper){.stop_after = 100};
    ck_assert_int_eq(tcc_record_each(store, NULL, stop_early, &stopper), TCC_OK);
    ck_assert_int_eq(stopper.seen, 5);
    tcc_record record = make_record(5, 1e-3, "NVIDIA H200");
    add(store, &record);
    tcc_record_store_close(store);
}
END_TEST

START_TEST(mean_cost)
{
    tcc_measure_result result = {.ncost = 3, .costs = {1e-3, 2e-3, 6e-3}};
    ck_assert_double_eq_tol(tcc_measure_result_mean_cost(&result), 3e-3, 1e-15);
    result.error = TCC_MEASURE_WRONG_ANSWER;
    ck_assert(tcc_measure_result_mean_cost(&result) == 0);
    result.error = TCC_MEASURE_OK;
    result.ncost = 0;
    ck_assert(tcc_measure_result_mean_cost(&result) == 0);
    result.ncost = 9; /* past costs[]: not read */
    ck_assert(tcc_measure_result_mean_cost(&result) == 0);
    ck_assert(tcc_measure_result_mean_cost(NULL) == 0);
}
END_TEST

/* An error-free record with no time (its mean 0) is not the fastest: it sorts after every
 * timed one, as a failed trial does. */
START_TEST(untimed_never_best)
{
    tcc_record_store *store = open_store(in_dir("records.db"));
    tcc_record untimed = make_record(1, 1e-3, "NVIDIA H200"),
               timed = make_record(2, 5e-3, "NVIDIA H200");
    untimed.result.ncost = 0;
    add(store, &untimed);
    add(store, &timed);
    tcc_record best = {.size = sizeof best};
    ck_assert_int_eq(tcc_record_best(store, "conv2d_no_batching", seed_key, NULL, &best), TCC_OK);
    ck_assert_int_eq(best.config_index, 2);
    tcc_record_store_close(store);
}
END_TEST

START_TEST(best_per_device)
{
    tcc_record_store *store = open_store(in_dir("records.db"));
    tcc_record h100 = make_record(10, 1e-4, "NVIDIA H100 80GB HBM3");
    tcc_record h200 = make_record(20, 2e-4, "NVIDIA H200"),
               h200_slow = make_record(21, 5e-4, "NVIDIA H200");
    add(store, &h200_slow);
    add(store, &h100);
    add(store, &h200);
    tcc_record best = {.size = sizeof best};
    ck_assert_int_eq(tcc_record_best(store, "conv2d_no_batching", seed_key, "NVIDIA H200", &best),
                     TCC_OK);
    ck_assert_int_eq(best.config_index, 20);
    ck_assert_str_eq(best.device_name, "NVIDIA H200");
    ck_assert_int_eq(tcc_record_best(store, "conv2d_no_batching", seed_key, NULL, &best), TCC_OK);
    ck_assert_int_eq(best.config_index, 10);
    ck_assert_str_eq(best.device_name, "NVIDIA H100 80GB HBM3");
    ck_assert_int_eq(tcc_record_best(store, "conv2d_no_batching", seed_key, "NVIDIA A100", &best),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "no record");
    tcc_record_store_close(store);
}
END_TEST

static void sql(const char *path, const char *statement)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, statement, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

START_TEST(other_databases_refused)
{
    const char *path = in_dir("records.db");
    tcc_record_store_close(open_store(path));
    sql(path, "PRAGMA user_version = 7");
    tcc_record_store *store = NULL;
    ck_assert_int_eq(tcc_record_store_open(ctx, path, &store), TCC_ERROR_UNSUPPORTED);
    ck_assert_ptr_null(store);
    assert_contains(tcc_last_error(ctx), "schema version 7");
    assert_one_line(ctx);

    /* Another program's database, left as it is; a file that is no database. */
    const char *theirs = in_dir("theirs.db");
    sql(theirs, "CREATE TABLE t (x)");
    ck_assert_int_eq(tcc_record_store_open(ctx, theirs, &store), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "not tcc's records");
    assert_one_line(ctx);
    const char *text = in_dir("text.db");
    FILE *file = fopen(text, "w");
    fprintf(file, "no database here, but long enough to have a header's worth of bytes..........."
                  "...............................................................\n");
    fclose(file);
    ck_assert_int_ne(tcc_record_store_open(ctx, text, &store), TCC_OK);
    assert_contains(tcc_last_error(ctx), text);
    assert_one_line(ctx);
    ck_assert_int_eq(tcc_record_store_open(ctx, "", &store), TCC_ERROR_INVALID_ARGUMENT);
}
END_TEST

/* Jobs (measuring on other hosts) need a PostgreSQL store: every call on a file says so in one
 * line (test/postgres/workers.sh runs them on a server). */
START_TEST(jobs_need_postgres)
{
    tcc_record_store *store = open_store(in_dir("records.db"));
    tcc_job job = {.size = sizeof job};
    int64_t id = 0, requeued, failed;
    int count = -1;
    bool done = false, kept = true;
    tcc_measure_result result;
    tcc_record record = {.size = sizeof record};
    tcc_status statuses[] = {
        tcc_job_enqueue(store, 1, &job, &id),
        tcc_job_claim(store, "w", "cuda -arch=sm_90a", "", NULL, 1, &job, &count),
        tcc_job_heartbeat(store, "w"),
        tcc_job_finish(store, "w", 1, &record, &kept),
        tcc_job_results(store, 1, &id, &done, &result),
        tcc_job_requeue_stale(store, 1, 2, &requeued, &failed),
        tcc_job_cancel(store, "run"),
    };
    for (size_t i = 0; i < sizeof statuses / sizeof *statuses; i++)
        ck_assert_int_eq(statuses[i], TCC_ERROR_UNSUPPORTED);
    assert_contains(tcc_last_error(ctx), "tcc_job_cancel: records ");
    assert_contains(tcc_last_error(ctx), "hold no jobs: measuring on other hosts needs a "
                                         "PostgreSQL store");
    assert_one_line(ctx);
    ck_assert_int_eq(tcc_job_claim(NULL, "w", "t", "", NULL, 1, &job, &count),
                     TCC_ERROR_INVALID_ARGUMENT);
    tcc_record_store_close(store);
}
END_TEST

START_TEST(default_path)
{
    char cache[128], home[128];
    snprintf(cache, sizeof cache, "%s/xdg", dir);
    snprintf(home, sizeof home, "%s/home", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    tcc_record_store_close(open_store(NULL));
    ck_assert_int_eq(access(in_dir("xdg/tcc/records.db"), F_OK), 0);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", home, 1);
    tcc_record_store_close(open_store(NULL));
    ck_assert_int_eq(access(in_dir("home/.cache/tcc/records.db"), F_OK), 0);
}
END_TEST

/* A child's work: `count` records with indices base, base + 1, ...; exits 0 when all were
 * added. `progress`, when >= 0, gets a byte after each. */
static void writer(const char *path, int64_t base, int count, int progress)
{
    tcc_context *own = NULL;
    tcc_record_store *store = NULL;
    int failures = tcc_context_create(&own) != TCC_OK;
    failures += !failures && tcc_record_store_open(own, path, &store) != TCC_OK;
    for (int i = 0; i < count && !failures; i++) {
        tcc_record record = make_record(base + i, 1e-3 + 1e-6 * i, "NVIDIA H200");
        failures += tcc_record_add(store, &record) != TCC_OK;
        if (!failures && progress >= 0 && write(progress, "+", 1) != 1)
            failures++;
    }
    if (failures && own)
        fprintf(stderr, "writer %lld: %s\n", (long long)base, tcc_last_error(own));
    tcc_record_store_close(store);
    tcc_context_destroy(own);
    _exit(failures ? 1 : 0); /* not Check's exit path: this process is the test's child */
}

static bool seen_index(const Seen *seen, int64_t index)
{
    for (int i = 0; i < seen->count && i < 1024; i++)
        if (seen->indices[i] == index)
            return true;
    return false;
}

START_TEST(concurrent_writers)
{
    enum { WRITERS = 4, EACH = 200 };
    /* A new database: the writers also race to create its table. */
    const char *path = in_dir("shared/records.db");
    pid_t children[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        children[w] = fork();
        ck_assert_int_ge(children[w], 0);
        if (children[w] == 0)
            writer(path, 1000 * w, EACH, -1);
    }
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        ck_assert_int_eq(waitpid(children[w], &status, 0), children[w]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed", w);
    }
    tcc_record_store *store = open_store(path);
    Seen seen = each(store, NULL);
    ck_assert_int_eq(seen.count, WRITERS * EACH);
    for (int w = 0; w < WRITERS; w++)
        for (int i = 0; i < EACH; i++)
            ck_assert_msg(seen_index(&seen, 1000 * w + i), "record %d of writer %d is missing", i,
                          w);
    tcc_record_store_close(store);
}
END_TEST

START_TEST(killed_writer_loses_nothing)
{
    enum { BEFORE_KILL = 60 };
    const char *path = in_dir("records.db");
    int pipe_fds[2];
    ck_assert_int_eq(pipe(pipe_fds), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        close(pipe_fds[0]);
        writer(path, 0, 100000, pipe_fds[1]);
    }
    close(pipe_fds[1]);
    char byte;
    for (int added = 0; added < BEFORE_KILL; added++)
        ck_assert_int_eq(read(pipe_fds[0], &byte, 1), 1);
    /* Killed wherever it is: likely inside the next record's transaction. */
    kill(child, SIGKILL);
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFSIGNALED(status));
    close(pipe_fds[0]);

    tcc_record_store *store = open_store(path);
    Seen seen = each(store, NULL);
    ck_assert_int_ge(seen.count, BEFORE_KILL);
    for (int i = 0; i < BEFORE_KILL; i++)
        ck_assert_msg(seen.indices[i] == i, "record %d is missing", i);
    /* The database takes records after the kill. */
    tcc_record record = make_record(999999, 1e-3, "NVIDIA H200");
    add(store, &record);
    tcc_record_store_close(store);
}
END_TEST

static Suite *records_suite(void)
{
    Suite *suite = suite_create("tune_records");
    TCase *store = test_case(suite, "store", setup, teardown);
    tcase_add_test(store, add_best_each);
    tcase_add_test(store, visitor_stops);
    tcase_add_test(store, mean_cost);
    tcase_add_test(store, untimed_never_best);
    tcase_add_test(store, best_per_device);
    tcase_add_test(store, other_databases_refused);
    tcase_add_test(store, default_path);
    tcase_add_test(store, jobs_need_postgres);
    TCase *processes = test_case(suite, "processes", setup, teardown);
    tcase_add_test(processes, concurrent_writers);
    tcase_add_test(processes, killed_writer_loses_nothing);
    return suite;
}

TEST_MAIN(records_suite)
