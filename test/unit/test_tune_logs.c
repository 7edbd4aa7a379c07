/*
 * The records store's AutoTVM logs (tcc/tune.h, "records"): export and import as AutoTVM's log
 * lines (a round trip, a line of the seed tutorial's log, bad lines refused by number); the
 * JSON writer's numbers; tcc_measure_error_name.
 */
#include "records_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_file(const char *path)
{
    FILE *file = fopen(path, "r");
    ck_assert_ptr_nonnull(file);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, file);
    text[n] = '\0';
    fclose(file);
    return text;
}

static void write_file(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs(text, file);
    fclose(file);
}

START_TEST(export_import_round_trip)
{
    tcc_record_store *store = open_store(in_dir("first.db"));
    tcc_record records[5];
    for (int i = 0; i < 5; i++)
        records[i] =
            make_record(100 + i, 1e-4 * (i + 1) / 3.0, i % 2 ? "NVIDIA H100" : "NVIDIA H200");
    records[1].result.error = TCC_MEASURE_WRONG_ANSWER;
    records[1].result.ncost = 0;
    snprintf(records[1].result.message, sizeof records[1].result.message,
             "output 3 is 1.5, \"expected\" 2\t(\\) \xc3\xa9");
    records[2].template_name = "gemm";
    records[2].workload_key = "[\"gemm\", 4096, 4096, 4096, \"float16\"]";
    records[2].config = "[[\"block_warps\", [2, 4]], [\"policy\", \"block\"]]";
    records[3].result.ncost = 8;
    for (int c = 0; c < 8; c++)
        records[3].result.costs[c] = 1.0 / (c + 3);
    records[4].target = NULL; /* stored as "" */
    for (int i = 0; i < 5; i++)
        add(store, &records[i]);
    const char *first = in_dir("first.log"), *second = in_dir("second.log");
    ck_assert_msg(tcc_record_export(store, first) == TCC_OK, "%s", tcc_last_error(ctx));
    tcc_record_store_close(store);

    store = open_store(in_dir("second.db"));
    int64_t imported = -1;
    ck_assert_msg(tcc_record_import(store, first, &imported) == TCC_OK, "%s", tcc_last_error(ctx));
    ck_assert_int_eq(imported, 5);
    ck_assert_msg(tcc_record_export(store, second) == TCC_OK, "%s", tcc_last_error(ctx));
    char *text = strdup(read_file(first));
    ck_assert_str_eq(read_file(second), text);
    assert_contains(text, "{\"input\": [\"cuda -arch=sm_90a\", \"tutorial/conv2d_no_batching\", "
                          "[1, 7, 7, 512, 512, 3, 3, [1, 1], [1, 1]], {}], \"config\": {\"index\": "
                          "100, \"code_hash\": null, \"entity\": [[\"tile_f\", \"sp\", [-1, 2, 64, "
                          "1]]");
    assert_contains(text,
                    "[\"auto_unroll_max_step\", \"ot\", 1500], [\"unroll_explicit\", \"ot\", 0]]}");
    assert_contains(text, "\"result\": [[1000000000.0], 5, 0.05, 1700000101.25]");
    assert_contains(text, "\"version\": 0.2");
    free(text);

    /* Another store's file imports whole (a migration); never into itself. */
    tcc_record_store *third = open_store(in_dir("third.db"));
    ck_assert_msg(tcc_record_import(third, in_dir("second.db"), &imported) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    ck_assert_int_eq(imported, 5);
    const char *third_log = in_dir("third.log");
    ck_assert_msg(tcc_record_export(third, third_log) == TCC_OK, "%s", tcc_last_error(ctx));
    char *migrated = strdup(read_file(third_log));
    ck_assert_str_eq(read_file(in_dir("first.log")), migrated);
    free(migrated);
    ck_assert_int_eq(tcc_record_import(third, in_dir("third.db"), &imported),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "third.db is the database importing it");
    assert_one_line(ctx);
    tcc_record_store_close(third);

    /* What the import stored is what was added. */
    tcc_record best = {.size = sizeof best};
    ck_assert_int_eq(tcc_record_best(store, "gemm", records[2].workload_key, NULL, &best), TCC_OK);
    ck_assert_str_eq(best.config, records[2].config);
    ck_assert_str_eq(best.device_name, "NVIDIA H200");
    ck_assert_double_eq(best.result.costs[0], records[2].result.costs[0]);
    ck_assert_int_eq(tcc_record_best(store, "conv2d_no_batching", seed_key, "NVIDIA H100", &best),
                     TCC_OK);
    ck_assert_int_eq(best.config_index, 103);
    ck_assert_int_eq(best.result.ncost, 8);
    for (int c = 0; c < 8; c++)
        ck_assert_double_eq(best.result.costs[c], 1.0 / (c + 3));
    tcc_record_store_close(store);
}
END_TEST

/* One line of the tutorial's log (AutoTVM 0.2), its best config. */
static const char *const autotvm_line =
    "{\"input\": [\"cuda -keys=cuda,gpu -arch=sm_90a -max_num_threads=1024 -thread_warp_size=32\", "
    "\"tutorial/conv2d_no_batching\", [1, 7, 7, 512, 512, 3, 3, [1, 1], [1, 1]], {}], "
    "\"config\": {\"index\": 4881186, \"code_hash\": null, \"entity\": [[\"tile_f\", \"sp\", [-1, "
    "2, 64, 1]], [\"tile_y\", \"sp\", [-1, 1, 1, 7]], [\"tile_x\", \"sp\", [-1, 1, 7, 1]], "
    "[\"tile_rc\", \"sp\", [-1, 2, 2]], [\"tile_ry\", \"sp\", [-1, 3, 1]], [\"tile_rx\", \"sp\", "
    "[-1, 1, 3]], [\"auto_unroll_max_step\", \"ot\", 1500], [\"unroll_explicit\", \"ot\", 0]]}, "
    "\"result\": [[0.000505, 0.000506, 0.000507], 0, 1.48, 1606247193.9], \"version\": 0.2, "
    "\"tvm_version\": \"0.8.dev0\"}\n";

START_TEST(autotvm_log_imports)
{
    const char *log = in_dir("tutorial.log");
    char text[4096];
    /* A comment, the best config, and a trial that timed out (AutoTVM's 1e9 cost). */
    snprintf(text, sizeof text,
             "# conv2d_no_batching, tuned by AutoTVM\n%s"
             "{\"input\": [\"cuda\", \"tutorial/conv2d_no_batching\", [1, 7, 7, 512, 512, 3, 3, "
             "[1, 1], [1, 1]], {}], \"config\": {\"index\": 7, \"code_hash\": null, \"entity\": "
             "[[\"unroll_explicit\", \"ot\", 1]]}, \"result\": [[1000000000.0], 6, 10.0, "
             "1606247200.0], \"version\": 0.2, \"tvm_version\": \"0.8.dev0\"}\n",
             autotvm_line);
    write_file(log, text);
    tcc_record_store *store = open_store(in_dir("records.db"));
    int64_t imported = 0;
    ck_assert_msg(tcc_record_import(store, log, &imported) == TCC_OK, "%s", tcc_last_error(ctx));
    ck_assert_int_eq(imported, 2);
    tcc_record best = {.size = sizeof best};
    ck_assert_msg(tcc_record_best(store, "conv2d_no_batching", seed_key, NULL, &best) == TCC_OK,
                  "%s", tcc_last_error(ctx));
    ck_assert_str_eq(best.template_name, "conv2d_no_batching");
    ck_assert_str_eq(best.workload_key, seed_key);
    ck_assert_str_eq(best.config, seed_config);
    ck_assert_int_eq(best.config_index, 4881186);
    ck_assert_str_eq(best.target,
                     "cuda -keys=cuda,gpu -arch=sm_90a -max_num_threads=1024 -thread_warp_size=32");
    ck_assert_int_eq(best.result.error, TCC_MEASURE_OK);
    ck_assert_int_eq(best.result.ncost, 3);
    ck_assert_double_eq(best.result.costs[1], 0.000506);
    ck_assert_double_eq(best.result.all_cost, 1.48);
    ck_assert_double_eq(best.result.timestamp, 1606247193.9);
    /* The log names no device: none is matched by name. */
    ck_assert_int_eq(tcc_record_best(store, "conv2d_no_batching", seed_key, "NVIDIA H200", &best),
                     TCC_ERROR_INVALID_ARGUMENT);
    Seen seen = each(store, "conv2d_no_batching");
    ck_assert_int_eq(seen.count, 2);
    ck_assert_int_eq(seen.indices[1], 7);
    tcc_record_store_close(store);
}
END_TEST

START_TEST(bad_lines_refused)
{
    static const struct {
        const char *line, *why;
    } cases[] = {
        {"{\"input\": [\"cuda\", \"t/x\", [1], {}],}", "expected a key"},
        {"[1, 2]", "not a JSON object"},
        {"{\"i\": [], \"r\": [], \"v\": 0.1}", "version 0.1"},
        {"{\"a\": 1, \"a\": 2}", "\"a\" twice"},
        {"{\"a\": \"\\ud800\"}", "surrogate"},
        {"{\"a\": 01}", "leading zero"},
        {"{\"a\": 1e999}", "out of range"},
        {"{\"a\": \"tab\there\"}", "control character"},
        {"{\"a\": [1, 2}", "expected ',' or ']'"},
        {"{\"a\": tru}", "expected 'true'"},
        {"{\"a\": 1} x", "text after the value"},
        {"{\"input\": [\"cuda\", \"t/x\", [1], {}], \"config\": {\"index\": 1, \"code_hash\": "
         "null, \"entity\": [[\"order\", \"re\", [1, 0]]]}, \"result\": [[0.1], 0, 1.0, 2.0]}",
         "kind \"re\""},
        {"{\"input\": [\"cuda\", \"t/x\", [1], {}], \"config\": {\"index\": 1, \"code_hash\": "
         "null, \"entity\": []}, \"result\": [[0.1], 9, 1.0, 2.0]}",
         "error_no 9"},
        {"{\"input\": [\"cuda\", \"t/x\", [1]], \"config\": {\"index\": 1, \"code_hash\": "
         "null, \"entity\": []}, \"result\": [[0.1], 0, 1.0, 2.0]}",
         "\"input\" is not"},
        {"{\"input\": [\"cuda\", \"t/x\", [1], {}], \"result\": [[0.1], 0, 1.0, 2.0]}",
         "\"config\" is missing"},
    };
    const char *log = in_dir("bad.log");
    tcc_record_store *store = open_store(in_dir("records.db"));
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[4096];
        snprintf(text, sizeof text, "%s\n%s\n", autotvm_line, cases[i].line);
        write_file(log, text);
        int64_t imported = -1;
        ck_assert_int_eq(tcc_record_import(store, log, &imported), TCC_ERROR_INVALID_ARGUMENT);
        char where[160];
        snprintf(where, sizeof where, "%s:3: ", log);
        assert_contains(tcc_last_error(ctx), where);
        assert_contains(tcc_last_error(ctx), cases[i].why);
        assert_one_line(ctx);
        ck_assert_int_eq(imported, 0);
    }
    /* Deep nesting is refused, not recursed into. */
    char deep[512] = "{\"a\": ";
    for (int i = 0; i < 100; i++)
        strcat(deep, "[");
    write_file(log, deep);
    ck_assert_int_eq(tcc_record_import(store, log, NULL), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "nested deeper");
    /* Each file imported nothing: its good first line went with its bad one. */
    ck_assert_int_eq(each(store, NULL).count, 0);
    ck_assert_int_eq(tcc_record_import(store, in_dir("missing.log"), NULL),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "missing.log");
    tcc_record_store_close(store);
}
END_TEST

START_TEST(numbers_as_python_writes_them)
{
    static const struct {
        double value;
        const char *text;
    } cases[] = {
        {0.000506, "0.000506"},
        {1e9, "1000000000.0"},
        {1606247193.9, "1606247193.9"},
        {1e-7, "1e-07"},
        {1e16, "1e+16"},
        {0.1, "0.1"},
        {1.0 / 3, "0.3333333333333333"},
        {0.0001, "0.0001"},
        {123456789012345.6, "123456789012345.6"},
        {0.0, "0.0"},
        {2.5e-05, "2.5e-05"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        StrBuf sb;
        tci_strbuf_init(&sb);
        tci_json_write_double(&sb, cases[i].value);
        ck_assert_str_eq(sb.data, cases[i].text);
        tci_strbuf_free(&sb);
    }
}
END_TEST

START_TEST(measure_error_names)
{
    static const char *const names[] = {"NO_ERROR",       "INSTANTIATION_ERROR", "COMPILE_HOST",
                                        "COMPILE_DEVICE", "RUNTIME_DEVICE",      "WRONG_ANSWER",
                                        "BUILD_TIMEOUT",  "RUN_TIMEOUT",         "UNKNOWN_ERROR"};
    for (int i = 0; i <= TCC_MEASURE_UNKNOWN_ERROR; i++)
        ck_assert_str_eq(tcc_measure_error_name((tcc_measure_error)i), names[i]);
    ck_assert_str_eq(tcc_measure_error_name((tcc_measure_error)42), "UNKNOWN_ERROR");
}
END_TEST

static Suite *logs_suite(void)
{
    Suite *suite = suite_create("tune_logs");
    TCase *logs = test_case(suite, "logs", setup, teardown);
    tcase_add_test(logs, export_import_round_trip);
    tcase_add_test(logs, autotvm_log_imports);
    tcase_add_test(logs, bad_lines_refused);
    tcase_add_test(logs, numbers_as_python_writes_them);
    tcase_add_test(logs, measure_error_names);
    return suite;
}

TEST_MAIN(logs_suite)
