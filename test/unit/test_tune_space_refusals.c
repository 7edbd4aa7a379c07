/*
 * What config spaces and configs (lib/tune/config.c, split.c, config_parse.c) refuse, each
 * in one line: bad definitions in a template, bad arguments to a space, configs outside
 * their space or defined differently when applied, and malformed config text. Spaces and
 * configs that work: test_tune_space.c.
 */
#include "tune_space_support.h"

#include <stdlib.h>

/* ---- refusals -------------------------------------------------------------------------------- */

/* A template that defines what the test sets in `bad`. */
static int bad;

static tcc_status bad_template(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                               tcc_arch arch, const tcc_build_options *options, tcc_kernel **kernel)
{
    (void)workload, (void)arch, (void)options, (void)kernel;
    int64_t f[32], v;
    static const int64_t values[3] = {1, 2, 1};
    switch (bad) {
    case 0:
        return tcc_define_split(cfg, "s", 8, 0, f);
    case 1:
        return tcc_define_split(cfg, "s", 0, 2, f);
    case 2:
        return tcc_define_knob(cfg, "k", 0, values, &v);
    case 3:
        tcc_define_knob(cfg, "k", 2, values, &v);
        return tcc_define_split(cfg, "k", 8, 2, f);
    case 4:
        for (int i = 0; i < 4; i++) { /* 888030^4 > 2^63 */
            char name[8] = {'s', (char)('0' + i)};
            tcc_status s = tcc_define_split(cfg, name, 1LL << 20, 8, f);
            if (s != TCC_OK)
                return s;
        }
        return TCC_OK;
    case 5:
        return tcc_define_split(cfg, "s", 1LL << 40, 32, f); /* C(71, 31) > 2^63 */
    case 6:
        return tcc_define_split(cfg, "s", 8, 33, f);
    case 7:
        return tcc_define_split(cfg, NULL, 8, 2, f);
    case 8:
        return tcc_define_split(cfg, "a\"b", 8, 2, f);
    case 9:
        return tcc_define_knob(cfg, "k", 3, values, &v);
    case 10:
        return tcc_define_split(cfg, "s", 8, 2, NULL);
    case 11:
        return tcc_define_knob(cfg, "k", 2, NULL, &v);
    case 12: /* the status dropped: the space still fails */
        tcc_define_split(cfg, "s", -3, 2, f);
        return TCC_OK;
    case 13:
        return tcc_config_reject(ctx, cfg, "too many threads\nsecond line");
    case 14:
        return tcc_define_split(cfg, "s", (1LL << 40) + 1, 2, f);
    default:
        return tcc_define_knob(cfg, "", 2, values, &v);
    }
}

static const tcc_template bad_one = {.size = sizeof(tcc_template),
                                     .name = "bad",
                                     .summary = "",
                                     .kind = TCC_WORKLOAD_CONV2D,
                                     .instantiate = bad_template};

static void assert_space_refused(int which, tcc_status expected, const char *part)
{
    bad = which;
    tcc_config_space *space = (tcc_config_space *)&bad; /* overwritten with NULL */
    assert_refused(make_space(&bad_one, &space), expected, part);
    ck_assert_ptr_null(space);
}

START_TEST(define_refusals)
{
    assert_space_refused(0, TCC_ERROR_INVALID_ARGUMENT, "num_outputs must be 1 to 32 (got 0)");
    assert_space_refused(1, TCC_ERROR_INVALID_ARGUMENT, "extent must be 1 to 2^40 (got 0)");
    assert_space_refused(2, TCC_ERROR_INVALID_ARGUMENT, "takes 1 to 4096 values (got 0)");
    assert_space_refused(3, TCC_ERROR_INVALID_ARGUMENT, "knob k is defined twice");
    assert_space_refused(4, TCC_ERROR_INVALID_ARGUMENT, "more than 2^63 points");
    assert_space_refused(5, TCC_ERROR_INVALID_ARGUMENT, "more than 2^63 tuples");
    assert_space_refused(6, TCC_ERROR_INVALID_ARGUMENT, "num_outputs must be 1 to 32 (got 33)");
    assert_space_refused(7, TCC_ERROR_INVALID_ARGUMENT, "needs a name");
    assert_space_refused(8, TCC_ERROR_INVALID_ARGUMENT, "without quotes");
    assert_space_refused(9, TCC_ERROR_INVALID_ARGUMENT, "value 1 is listed twice");
    assert_space_refused(10, TCC_ERROR_INVALID_ARGUMENT, "NULL factors");
    assert_space_refused(11, TCC_ERROR_INVALID_ARGUMENT, "NULL values");
    assert_space_refused(12, TCC_ERROR_INVALID_ARGUMENT, "got -3");
    assert_space_refused(13, TCC_ERROR_SCHEDULE, "too many threads");
    ck_assert_str_eq(tcc_last_error(test_ctx), "too many threads");
    assert_space_refused(14, TCC_ERROR_INVALID_ARGUMENT, "got 1099511627777");
    assert_space_refused(15, TCC_ERROR_INVALID_ARGUMENT, "needs a name");
    ck_assert_int_eq(tcc_config_reject(test_ctx, NULL, NULL), TCC_ERROR_SCHEDULE);
    ck_assert_int_eq(tcc_define_split(NULL, "s", 8, 2, NULL), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_define_knob(NULL, "s", 1, NULL, NULL), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert(!tcc_config_is_defining(NULL));
}
END_TEST

START_TEST(space_refusals)
{
    tcc_workload w;
    tcc_workload_init(&w, TCC_WORKLOAD_MATMUL);
    tcc_config_space *space = NULL;
    ck_assert_int_eq(tcc_config_space_create(NULL, &seed, &w, TCC_SM_80, &space),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_refused(tcc_config_space_create(test_ctx, &seed, &w, TCC_SM_80, NULL),
                   TCC_ERROR_INVALID_ARGUMENT, "NULL out");
    assert_refused(tcc_config_space_create(test_ctx, NULL, &w, TCC_SM_80, &space),
                   TCC_ERROR_INVALID_ARGUMENT, "NULL template");
    assert_refused(tcc_config_space_create(test_ctx, &seed, NULL, TCC_SM_80, &space),
                   TCC_ERROR_INVALID_ARGUMENT, "NULL workload");
    assert_refused(tcc_config_space_create(test_ctx, &seed, &w, TCC_SM_80, &space),
                   TCC_ERROR_INVALID_ARGUMENT, "takes a conv2d workload");
    tcc_workload_init(&w, TCC_WORKLOAD_CONV2D);
    w.size = 3;
    assert_refused(tcc_config_space_create(test_ctx, &seed, &w, TCC_SM_80, &space),
                   TCC_ERROR_INVALID_ARGUMENT, "tcc_workload");
    ck_assert_ptr_null(space);
    tcc_workload_init(NULL, TCC_WORKLOAD_CONV2D);
}
END_TEST

START_TEST(config_refusals)
{
    tcc_config_space *space = seed_space();
    tcc_config *cfg = (tcc_config *)space;
    assert_refused(tcc_config_create(test_ctx, space, -1, &cfg), TCC_ERROR_INVALID_ARGUMENT,
                   "config index -1 is outside the space (0 to 10454399)");
    ck_assert_ptr_null(cfg);
    assert_refused(tcc_config_create(test_ctx, space, 10454400, &cfg), TCC_ERROR_INVALID_ARGUMENT,
                   "config index 10454400 is outside");
    assert_refused(tcc_config_create(test_ctx, NULL, 0, &cfg), TCC_ERROR_INVALID_ARGUMENT,
                   "NULL space");
    ck_assert_int_eq(tcc_config_create(NULL, space, 0, &cfg), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_config_index(NULL), -1);
    ck_assert_int_eq(tcc_config_knob_choice(NULL, 0), -1);
    ck_assert_ptr_null(tcc_config_format(NULL));
    tcc_config_destroy(NULL);

    /* A template that defines differently when applying. */
    ck_assert_int_eq(tcc_config_create(test_ctx, space, 5, &cfg), TCC_OK);
    int64_t f[4], v;
    static const int64_t steps[3] = {0, 512, 1024};
    assert_refused(tcc_define_split(cfg, "tile_g", 512, 4, f), TCC_ERROR_INVALID_ARGUMENT,
                   "the space has no knob tile_g");
    tcc_config_destroy(cfg);
    ck_assert_int_eq(tcc_config_create(test_ctx, space, 5, &cfg), TCC_OK);
    assert_refused(tcc_define_split(cfg, "tile_f", 256, 4, f), TCC_ERROR_INVALID_ARGUMENT,
                   "256 into 4 outputs, but the space splits 512 into 4");
    /* the failure sticks: a later define of the same config fails the same way */
    ck_assert_int_eq(tcc_define_split(cfg, "tile_f", 512, 4, f), TCC_ERROR_INVALID_ARGUMENT);
    tcc_config_destroy(cfg);
    ck_assert_int_eq(tcc_config_create(test_ctx, space, 5, &cfg), TCC_OK);
    assert_refused(tcc_define_knob(cfg, "auto_unroll_max_step", 3, steps, &v),
                   TCC_ERROR_INVALID_ARGUMENT, "the values differ");
    tcc_config_destroy(cfg);
    ck_assert_int_eq(tcc_config_create(test_ctx, space, 5, &cfg), TCC_OK);
    assert_refused(tcc_define_knob(cfg, "tile_f", 3, steps, &v), TCC_ERROR_INVALID_ARGUMENT,
                   "knob tile_f is not a knob in the space");
    tcc_workload w;
    tcc_workload_init(&w, TCC_WORKLOAD_CONV2D);
    tcc_kernel *kernel;
    assert_refused(tcc_config_instantiate(test_ctx, &seed, NULL, &w, TCC_SM_80, NULL, &kernel),
                   TCC_ERROR_INVALID_ARGUMENT, "NULL or defining config");
    assert_refused(tcc_config_instantiate(test_ctx, NULL, cfg, &w, TCC_SM_80, NULL, &kernel),
                   TCC_ERROR_INVALID_ARGUMENT, "NULL template");
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
}
END_TEST

START_TEST(parse_refusals)
{
    tcc_config_space *space = seed_space();
    static const struct {
        const char *text, *error;
    } cases[] = {
        {"[[\"tile_q\", [-1, 2, 64, 1]]]", "the space has no knob tile_q"},
        {"[[\"tile_f\", [-1, 2, 64, 1]]]", "1 knobs given, the space has 8 (tile_y missing)"},
        {"[]", "0 knobs given, the space has 8 (tile_f missing)"},
        {"[[\"tile_f\", [-1, 2, 64, 1]], [\"tile_f\", [-1, 2, 64, 1]]]",
         "knob tile_f is given twice"},
        {"[[\"tile_f\", [-1, 3, 64, 1]]]", "not a split of 512 into 4"},
        {"[[\"tile_f\", [8, 2, 64, 1]]]", "not a split of 512 into 4"},
        {"[[\"tile_f\", [-1, 2, 64]]]", "takes 4 factors (got 3)"},
        {"[[\"tile_f\", [-1, 2, 64, 1, 1]]]", "takes 4 factors (got 5)"},
        {"[[\"auto_unroll_max_step\", 1024]]", "1024 is not one of its 3 values"},
        {"[[\"auto_unroll_max_step\", [0]]]", "expected an integer"},
        {"[[\"tile_f\", 4]]", "expected a list of split factors"},
        {"[[\"tile_f\", \"ot\", [-1, 2, 64, 1]]]", "tagged 'ot' (expected 'sp')"},
        {"[[\"unroll_explicit\", 99999999999999999999]]", "does not fit 64 bits"},
        {"[[\"unroll_explicit\", 0]] x", "expected the end after the list of knobs at offset 25"},
        {"[[\"unroll_explicit, 0]]", "expected a closing quote"},
        {"", "expected '[' opening the list of knobs at offset 0"},
        {"[[tile_f, [1]]]", "expected a quoted name"},
        {"[[\"unroll_explicit\" 0]]", "expected ',' after a knob's name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tcc_config *cfg = (tcc_config *)space;
        assert_refused(tcc_config_parse(test_ctx, space, cases[i].text, &cfg),
                       TCC_ERROR_INVALID_ARGUMENT, cases[i].error);
        ck_assert_ptr_null(cfg);
    }
    tcc_config *cfg;
    assert_refused(tcc_config_parse(test_ctx, space, NULL, &cfg), TCC_ERROR_INVALID_ARGUMENT,
                   "NULL space, text or out");
    ck_assert_int_eq(tcc_config_parse(NULL, space, best, &cfg), TCC_ERROR_INVALID_ARGUMENT);
    tcc_config_space_destroy(space);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tune_space_refusals");
    TCase *tc = test_case(s, "refusals", setup, teardown);
    tcase_add_test(tc, define_refusals);
    tcase_add_test(tc, space_refusals);
    tcase_add_test(tc, config_refusals);
    tcase_add_test(tc, parse_refusals);
    return s;
}

TEST_MAIN(suite)
