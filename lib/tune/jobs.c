/*
 * Jobs (tcc/tune.h, "jobs"): trials that a tuning run (the coordinator) queues in a PostgreSQL
 * store and that workers on any host claim, measure and finish with their record. A job is
 * queued, then running on one worker (SELECT ... FOR UPDATE SKIP LOCKED: no two claim it, none
 * waits on another), then done with the record that worker added, in the transaction that
 * marks it done and only if it still runs it. A worker that stops answering (its heartbeat
 * older than a grace period) has its jobs queued again, until one has stopped that many
 * workers: then it is done with a RUNTIME_DEVICE record.
 */
#include "support/context.h"
#include "tune/postgres.h"
#include "tune/records.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The columns a claim returns, in tcc_job's order (read_job). */
#define JOB_COLUMNS                                                                                \
    "id, run, template, workload_key, target, device_name, config, options, config_index"
enum { JOB_TEXTS = 7 };

/* The store's PostgreSQL connection, or a line saying why there is none. */
static tcc_status jobs_of(tcc_record_store *store, const char *call)
{
    if (store->engine != &tci_records_postgres)
        return tci_fail(store->ctx, TCC_ERROR_UNSUPPORTED,
                        "%s: records %s hold no jobs: measuring on other hosts needs a "
                        "PostgreSQL store (postgresql://...)",
                        call, store->name);
    return TCC_OK;
}

static tcc_status exec(tcc_record_store *store, const char *what, const char *sql, int nparam,
                       const char *const *params, PqResult **result)
{
    return tci_pq_exec(store->db, what, sql, nparam, params, result);
}

/* A call whose one argument `name` is the statement's $1: refused where the store holds no
 * jobs or the argument is NULL. */
static tcc_status one_statement(tcc_record_store *store, const char *call, const char *name,
                                const char *value, const char *what, const char *sql)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_status status = jobs_of(store, call);
    if (status == TCC_OK && !value)
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", call, name);
    const char *params[] = {value};
    return status == TCC_OK ? exec(store, what, sql, 1, params, NULL) : status;
}

/* "{1,2,3}": ids as a PostgreSQL array literal (malloc'd; NULL out of memory). */
static char *id_array(int count, const int64_t *ids)
{
    StrBuf sb;
    tci_strbuf_init(&sb);
    tci_strbuf_printf(&sb, "{");
    for (int i = 0; i < count; i++)
        tci_strbuf_printf(&sb, "%s%" PRId64, i ? "," : "", ids[i]);
    tci_strbuf_printf(&sb, "}");
    if (sb.failed) {
        tci_strbuf_free(&sb);
        return NULL;
    }
    return sb.data;
}

/* ---- the coordinator's side ------------------------------------------------------------ */

static tcc_status check_job(tcc_record_store *store, const tcc_job *job)
{
    tcc_status status = TCI_CHECK_SIZE(store->ctx, "tcc_job_enqueue", tcc_job, job);
    if (status == TCC_OK &&
        (!job->run || !job->template_name || !job->workload_key || !job->target ||
         !job->device_name || !job->config || !job->options || job->config_index < 0))
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "tcc_job_enqueue: a job needs its run, template, workload key, target, "
                          "device name (\"\" for any), config, index and options");
    return status;
}

static tcc_status enqueue_one(tcc_record_store *store, const tcc_job *job, int64_t *id)
{
    char index[24];
    snprintf(index, sizeof index, "%" PRId64, job->config_index);
    const char *params[] = {job->run,    job->template_name, job->workload_key,
                            job->target, job->device_name,   job->config,
                            index,       job->options};
    PqResult *result = NULL;
    tcc_status status =
        exec(store, "queueing a job",
             "INSERT INTO tcc_jobs (run, template, workload_key, target, device_name, config, "
             "config_index, options) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
             8, params, &result);
    if (status == TCC_OK)
        *id = strtoll(tci_pq_value(store->db, result, 0, 0), NULL, 10);
    tci_pq_clear(store->db, result);
    return status;
}

tcc_status tcc_job_enqueue(tcc_record_store *store, int count, const tcc_job *jobs, int64_t *ids)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_status status = jobs_of(store, "tcc_job_enqueue");
    if (status == TCC_OK && (count < 0 || (count > 0 && (!jobs || !ids))))
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "tcc_job_enqueue: %d jobs, and the jobs and ids arrays", count);
    for (int i = 0; i < count && status == TCC_OK; i++)
        status = check_job(store, &jobs[i]);
    if (status != TCC_OK || count == 0)
        return status;
    status = tci_records_postgres.begin(store);
    if (status != TCC_OK)
        return status;
    for (int i = 0; i < count && status == TCC_OK; i++)
        status = enqueue_one(store, &jobs[i], &ids[i]);
    return tci_records_postgres.end(store, status);
}

tcc_status tcc_job_results(tcc_record_store *store, int count, const int64_t *ids, bool *done,
                           tcc_measure_result *results)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_status status = jobs_of(store, "tcc_job_results");
    if (status == TCC_OK && (count < 0 || (count > 0 && (!ids || !done || !results))))
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "tcc_job_results: %d jobs, and the ids, done and results arrays", count);
    if (status != TCC_OK || count == 0)
        return status;
    for (int i = 0; i < count; i++)
        done[i] = false;
    char *array = id_array(count, ids);
    if (!array)
        return tci_fail(store->ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    const char *params[] = {array};
    PqResult *result = NULL;
    status = exec(store, "reading jobs' results",
                  "WITH done AS (SELECT id AS job, record_id FROM tcc_jobs WHERE id = "
                  "ANY($1::bigint[]) AND state = 'done') SELECT " TCI_RECORD_COLUMNS
                  ", job FROM tcc_trials JOIN done ON tcc_trials.id = done.record_id",
                  1, params, &result);
    free(array);
    int rows = status == TCC_OK ? tci_pq_rows(store->db, result) : 0;
    for (int r = 0; r < rows && status == TCC_OK; r++) {
        int64_t id = strtoll(tci_pq_value(store->db, result, r, TCI_RECORD_COLUMN_COUNT), NULL, 10);
        RecordRow row;
        tci_records_postgres_read_row(store->db, result, r, &row);
        for (int i = 0; i < count && status == TCC_OK; i++)
            if (ids[i] == id) {
                status = tci_record_result_of(store, &row, &results[i]);
                done[i] = status == TCC_OK;
            }
    }
    tci_pq_clear(store->db, result);
    return status;
}

tcc_status tcc_job_cancel(tcc_record_store *store, const char *run)
{
    return one_statement(store, "tcc_job_cancel", "run", run, "removing a run's queued jobs",
                         "DELETE FROM tcc_jobs WHERE run = $1 AND state = 'queued'");
}

/* ---- the workers' side ------------------------------------------------------------------ */

/* The claimed rows as jobs, their strings copied into the store's job_strings. */
static tcc_status read_jobs(tcc_record_store *store, const PqResult *result, tcc_job *jobs,
                            int count)
{
    size_t size = 1;
    for (int r = 0; r < count; r++)
        for (int c = 1; c <= JOB_TEXTS; c++)
            size += strlen(tci_pq_value(store->db, result, r, c)) + 1;
    char *strings = malloc(size), *p = strings;
    if (!strings)
        return tci_fail(store->ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    for (int r = 0; r < count; r++) {
        const char *copies[JOB_TEXTS];
        for (int c = 1; c <= JOB_TEXTS; c++) {
            const char *text = tci_pq_value(store->db, result, r, c);
            size_t n = strlen(text) + 1;
            memcpy(p, text, n);
            copies[c - 1] = p;
            p += n;
        }
        jobs[r] = (tcc_job){
            .size = sizeof(tcc_job),
            .id = strtoll(tci_pq_value(store->db, result, r, 0), NULL, 10),
            .run = copies[0],
            .template_name = copies[1],
            .workload_key = copies[2],
            .target = copies[3],
            .device_name = copies[4],
            .config = copies[5],
            .options = copies[6],
            .config_index = strtoll(tci_pq_value(store->db, result, r, 8), NULL, 10),
        };
    }
    free(store->job_strings);
    store->job_strings = strings;
    return TCC_OK;
}

tcc_status tcc_job_claim(tcc_record_store *store, const char *worker, const char *target,
                         const char *device_name, const char *prefer_workload_key, int max,
                         tcc_job *jobs, int *count)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_status status = jobs_of(store, "tcc_job_claim");
    if (status == TCC_OK && (!worker || !target || !device_name || max < 1 || !jobs || !count))
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "tcc_job_claim: the worker, target, device name, jobs and count are "
                          "required, and max at least 1");
    if (status == TCC_OK)
        status = TCI_CHECK_SIZE(store->ctx, "tcc_job_claim: jobs", tcc_job, jobs);
    if (status != TCC_OK)
        return status;
    *count = 0;
    char limit[16];
    snprintf(limit, sizeof limit, "%d", max);
    const char *params[] = {worker, target, device_name, prefer_workload_key, limit};
    PqResult *result = NULL;
    status = exec(store, "claiming jobs",
                  "UPDATE tcc_jobs SET state = 'running', worker = $1, heartbeat = now(), "
                  "attempts = attempts + 1 WHERE id IN (SELECT id FROM tcc_jobs WHERE state = "
                  "'queued' AND target = $2 AND (device_name = '' OR device_name = $3) ORDER BY "
                  "COALESCE(workload_key = $4::text, false) DESC, id LIMIT $5::integer FOR "
                  "UPDATE SKIP LOCKED) RETURNING " JOB_COLUMNS,
                  5, params, &result);
    int rows = status == TCC_OK ? tci_pq_rows(store->db, result) : 0;
    if (rows > 0)
        status = read_jobs(store, result, jobs, rows);
    if (status == TCC_OK)
        *count = rows;
    tci_pq_clear(store->db, result);
    return status;
}

tcc_status tcc_job_heartbeat(tcc_record_store *store, const char *worker)
{
    /* Rows another transaction holds (a requeue) are skipped, never waited for: two calls that
     * lock one worker's rows can then never wait on each other. */
    return one_statement(store, "tcc_job_heartbeat", "worker", worker, "sending a heartbeat",
                         "UPDATE tcc_jobs SET heartbeat = now() WHERE id IN (SELECT id FROM "
                         "tcc_jobs WHERE worker = $1 AND state = 'running' FOR UPDATE SKIP "
                         "LOCKED)");
}

tcc_status tcc_job_release(tcc_record_store *store, const char *worker)
{
    return one_statement(store, "tcc_job_release", "worker", worker,
                         "queueing a worker's jobs again",
                         "UPDATE tcc_jobs SET state = 'queued', worker = NULL WHERE id IN (SELECT "
                         "id FROM tcc_jobs WHERE worker = $1 AND state = 'running' FOR UPDATE "
                         "SKIP LOCKED)");
}

/* In the open transaction: the job locked if `worker` still runs it. */
static tcc_status lock_running(tcc_record_store *store, const char *id, const char *worker,
                               bool *running)
{
    const char *params[] = {id, worker};
    PqResult *result = NULL;
    tcc_status status = exec(store, "finding the job",
                             "SELECT 1 FROM tcc_jobs WHERE id = $1::bigint AND state = 'running' "
                             "AND worker = $2 FOR UPDATE",
                             2, params, &result);
    *running = status == TCC_OK && tci_pq_rows(store->db, result) == 1;
    tci_pq_clear(store->db, result);
    return status;
}

/* In the open transaction: the row added and job `id` marked done with it. */
static tcc_status mark_done(tcc_record_store *store, const char *id, const RecordRow *row)
{
    int64_t record_id = 0;
    tcc_status status = tci_records_postgres_insert(store, row, &record_id);
    char record[24];
    snprintf(record, sizeof record, "%" PRId64, record_id);
    const char *params[] = {id, record};
    if (status == TCC_OK)
        status = exec(store, "marking the job done",
                      "UPDATE tcc_jobs SET state = 'done', record_id = $2::bigint, heartbeat = "
                      "now() WHERE id = $1::bigint",
                      2, params, NULL);
    return status;
}

tcc_status tcc_job_finish(tcc_record_store *store, const char *worker, int64_t id,
                          const tcc_record *record, bool *kept)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_status status = jobs_of(store, "tcc_job_finish");
    if (status == TCC_OK && (!worker || !kept))
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "tcc_job_finish: worker and kept are required");
    if (status != TCC_OK)
        return status;
    *kept = false;
    RecordRowText text;
    RecordRow row;
    status = tci_record_row_of(store, "tcc_job_finish", record, &text, &row);
    char job[24];
    snprintf(job, sizeof job, "%" PRId64, id);
    bool running = false;
    if (status == TCC_OK && (status = tci_records_postgres.begin(store)) == TCC_OK) {
        status = lock_running(store, job, worker, &running);
        if (status == TCC_OK && running)
            status = mark_done(store, job, &row);
        /* Not running it any more: nothing written, and ending rolls nothing back. */
        status = tci_records_postgres.end(store, status);
    }
    tci_strbuf_free(&text.costs);
    *kept = status == TCC_OK && running;
    return status;
}

/* ---- stale workers ---------------------------------------------------------------------- */

/* Job r of `stale` (JOB_COLUMNS, then the worker and attempts) done with a RUNTIME_DEVICE
 * record saying that its workers kept stopping, in the open transaction. */
static tcc_status fail_job(tcc_record_store *store, const PqResult *stale, int r)
{
    PqConnection *pq = store->db;
    tcc_measure_result result = {.error = TCC_MEASURE_RUNTIME_DEVICE,
                                 .timestamp = (double)time(NULL)};
    snprintf(result.message, sizeof result.message,
             "the workers measuring it stopped answering %s times (the last: %s): not tried "
             "again",
             tci_pq_value(pq, stale, r, 10), tci_pq_value(pq, stale, r, 9));
    tcc_record record = {.size = sizeof record,
                         .template_name = tci_pq_value(pq, stale, r, 2),
                         .workload_key = tci_pq_value(pq, stale, r, 3),
                         .target = tci_pq_value(pq, stale, r, 4),
                         .device_name = tci_pq_value(pq, stale, r, 5),
                         .config = tci_pq_value(pq, stale, r, 6),
                         .config_index = strtoll(tci_pq_value(pq, stale, r, 8), NULL, 10),
                         .result = result};
    RecordRowText text;
    RecordRow row;
    tcc_status status = tci_record_row_of(store, "tcc_job_requeue_stale", &record, &text, &row);
    if (status == TCC_OK)
        status = mark_done(store, tci_pq_value(pq, stale, r, 0), &row);
    tci_strbuf_free(&text.costs);
    return status;
}

tcc_status tcc_job_requeue_stale(tcc_record_store *store, double grace_s, int max_attempts,
                                 int64_t *requeued, int64_t *failed)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_status status = jobs_of(store, "tcc_job_requeue_stale");
    if (status == TCC_OK &&
        (!(grace_s >= 0 && grace_s < 1e9) || max_attempts < 1 || !requeued || !failed))
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "tcc_job_requeue_stale: grace_s %g and max_attempts %d (at least 1), "
                          "and the counts, are required",
                          grace_s, max_attempts);
    if (status != TCC_OK)
        return status;
    *requeued = *failed = 0;
    char grace[32];
    snprintf(grace, sizeof grace, "%.3f", grace_s);
    const char *params[] = {grace};
    PqResult *stale = NULL;
    if ((status = tci_records_postgres.begin(store)) != TCC_OK)
        return status;
    /* Every stale job locked at once, skipping those another holds (a heartbeat now), then
     * each failed or queued again by id: nothing here waits on another transaction's rows. */
    status = exec(store, "finding stale jobs",
                  "SELECT " JOB_COLUMNS ", worker, attempts FROM tcc_jobs WHERE state = "
                  "'running' AND heartbeat < now() - $1::double precision * interval '1 second' "
                  "ORDER BY id FOR UPDATE SKIP LOCKED",
                  1, params, &stale);
    int rows = status == TCC_OK ? tci_pq_rows(store->db, stale) : 0;
    int64_t *again = calloc((size_t)rows + 1, sizeof *again);
    int count = 0;
    if (!again)
        status = tci_fail(store->ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    for (int r = 0; r < rows && status == TCC_OK; r++) {
        if (strtol(tci_pq_value(store->db, stale, r, 10), NULL, 10) >= max_attempts) {
            status = fail_job(store, stale, r);
            *failed += status == TCC_OK;
        } else {
            again[count++] = strtoll(tci_pq_value(store->db, stale, r, 0), NULL, 10);
        }
    }
    char *array = status == TCC_OK && count > 0 ? id_array(count, again) : NULL;
    if (status == TCC_OK && count > 0 && !array)
        status = tci_fail(store->ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    const char *ids[] = {array};
    if (status == TCC_OK && count > 0)
        status = exec(store, "queueing stale jobs again",
                      "UPDATE tcc_jobs SET state = 'queued', worker = NULL WHERE id = "
                      "ANY($1::bigint[])",
                      1, ids, NULL);
    if (status == TCC_OK)
        *requeued = count;
    free(array);
    free(again);
    tci_pq_clear(store->db, stale);
    status = tci_records_postgres.end(store, status);
    if (status != TCC_OK)
        *requeued = *failed = 0;
    return status;
}
