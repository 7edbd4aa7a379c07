/*
 * Config spaces and configs (lib/tune/config.c, split.c, config_parse.c) against AutoTVM:
 * the seed tutorial's space (../shared/seeds/003: its eight knobs, their lengths, its printed
 * text), split enumeration against a brute-force copy of AutoTVM's depth-first search, the
 * indices the tutorial's log prints for its configs, format/parse round trips, features, the
 * empty space, and tcc_split_by_factors on printed loop IR. What they refuse:
 * test_tune_space_refusals.c.
 */
#include "tune_space_support.h"

#include <math.h>
#include <stdlib.h>

/* ---- the seed's space ------------------------------------------------------------------------ */

static const char *const seed_text =
    "ConfigSpace (len=10454400, space_map=\n"
    "   0 tile_f: Split(policy=factors, product=512, num_outputs=4) len=220\n"
    "   1 tile_y: Split(policy=factors, product=7, num_outputs=4) len=4\n"
    "   2 tile_x: Split(policy=factors, product=7, num_outputs=4) len=4\n"
    "   3 tile_rc: Split(policy=factors, product=512, num_outputs=3) len=55\n"
    "   4 tile_ry: Split(policy=factors, product=3, num_outputs=3) len=3\n"
    "   5 tile_rx: Split(policy=factors, product=3, num_outputs=3) len=3\n"
    "   6 auto_unroll_max_step: OtherOption([0, 512, 1500]) len=3\n"
    "   7 unroll_explicit: OtherOption([0, 1]) len=2\n"
    ")";

START_TEST(seed_space_sizes)
{
    tcc_config_space *space = seed_space();
    ck_assert_int_eq(tcc_config_space_size(space), 10454400);
    static const char *const names[8] = {"tile_f",
                                         "tile_y",
                                         "tile_x",
                                         "tile_rc",
                                         "tile_ry",
                                         "tile_rx",
                                         "auto_unroll_max_step",
                                         "unroll_explicit"};
    static const int64_t lengths[8] = {220, 4, 4, 55, 3, 3, 3, 2};
    ck_assert_int_eq(tcc_config_space_knob_count(space), 8);
    for (int i = 0; i < 8; i++) {
        ck_assert_str_eq(tcc_config_space_knob_name(space, i), names[i]);
        ck_assert_int_eq(tcc_config_space_knob_length(space, i), lengths[i]);
        ck_assert_int_eq(tcc_config_space_knob_kind(space, i),
                         i < 6 ? TCC_KNOB_SPLIT : TCC_KNOB_OTHER);
    }
    ck_assert_ptr_null(tcc_config_space_knob_name(space, 8));
    ck_assert_int_eq(tcc_config_space_knob_length(space, -1), 0);
    ck_assert_int_eq(tcc_config_space_size(NULL), 0);
    ck_assert_int_eq(tcc_config_space_knob_count(NULL), 0);
    char *text = tcc_config_space_format(space);
    ck_assert_str_eq(text, seed_text);
    free(text);
    ck_assert_ptr_null(tcc_config_space_format(NULL));
    tcc_config_space_destroy(space);
    tcc_config_space_destroy(NULL);
}
END_TEST

/* The tutorial's log (seed 003) prints each trial's config and its index: AutoTVM's order. */
static const struct {
    const char *printed;
    int64_t index;
} logged[] = {
    {"[('tile_f', [-1, 2, 64, 1]), ('tile_y', [-1, 1, 1, 7]), ('tile_x', [-1, 1, 7, 1]), "
     "('tile_rc', [-1, 2, 2]), ('tile_ry', [-1, 3, 1]), ('tile_rx', [-1, 1, 3]), "
     "('auto_unroll_max_step', 1500), ('unroll_explicit', 0)]",
     4881186},
    {"[('tile_f', [-1, 8, 4, 4]), ('tile_y', [-1, 1, 1, 1]), ('tile_x', [-1, 1, 1, 7]), "
     "('tile_rc', [-1, 16, 16]), ('tile_ry', [-1, 1, 1]), ('tile_rx', [-1, 1, 1]), "
     "('auto_unroll_max_step', 512), ('unroll_explicit', 1)]",
     7106118},
    {"[('tile_f', [-1, 4, 32, 1]), ('tile_y', [-1, 1, 1, 7]), ('tile_x', [-1, 1, 1, 1]), "
     "('tile_rc', [-1, 1, 16]), ('tile_ry', [-1, 1, 1]), ('tile_rx', [-1, 1, 1]), "
     "('auto_unroll_max_step', 1500), ('unroll_explicit', 0)]",
     3605182},
    {"[('tile_f', [-1, 8, 2, 32]), ('tile_y', [-1, 7, 1, 1]), ('tile_x', [-1, 7, 1, 1]), "
     "('tile_rc', [-1, 4, 16]), ('tile_ry', [-1, 1, 1]), ('tile_rx', [-1, 3, 1]), "
     "('auto_unroll_max_step', 1500), ('unroll_explicit', 1)]",
     9420813},
    {"[('tile_f', [-1, 1, 512, 1]), ('tile_y', [-1, 7, 1, 1]), ('tile_x', [-1, 1, 1, 7]), "
     "('tile_rc', [-1, 16, 4]), ('tile_ry', [-1, 1, 1]), ('tile_rx', [-1, 1, 3]), "
     "('auto_unroll_max_step', 1500), ('unroll_explicit', 0)]",
     4730274},
    {"[('tile_f', [-1, 4, 8, 8]), ('tile_y', [-1, 7, 1, 1]), ('tile_x', [-1, 7, 1, 1]), "
     "('tile_rc', [-1, 64, 8]), ('tile_ry', [-1, 1, 1]), ('tile_rx', [-1, 3, 1]), "
     "('auto_unroll_max_step', 512), ('unroll_explicit', 0)]",
     2440616},
};

START_TEST(tutorial_indices)
{
    tcc_config_space *space = seed_space();
    for (size_t i = 0; i < sizeof logged / sizeof logged[0]; i++) {
        tcc_config *cfg = NULL;
        ck_assert_int_eq(tcc_config_parse(test_ctx, space, logged[i].printed, &cfg), TCC_OK);
        ck_assert_int_eq(tcc_config_index(cfg), logged[i].index);
        tcc_config_destroy(cfg);
    }
    tcc_config *cfg = NULL;
    ck_assert_int_eq(tcc_config_create(test_ctx, space, 4881186, &cfg), TCC_OK);
    char *text = tcc_config_format(cfg);
    ck_assert_str_eq(text, best);
    free(text);
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
}
END_TEST

START_TEST(best_config_applies)
{
    tcc_config_space *space = seed_space();
    tcc_config *cfg = NULL;
    ck_assert_int_eq(tcc_config_parse(test_ctx, space, best, &cfg), TCC_OK);
    ck_assert_int_eq(tcc_config_index(cfg), 4881186);
    /* mixed radix over (220, 4, 4, 55, 3, 3, 3, 2), the first knob fastest */
    static const int64_t choices[8] = {46, 3, 2, 11, 1, 2, 2, 0};
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(tcc_config_knob_choice(cfg, i), choices[i]);
    ck_assert_int_eq(tcc_config_knob_choice(cfg, 8), -1);
    /* The template reads the real outer factors. */
    tcc_workload w;
    tcc_workload_init(&w, TCC_WORKLOAD_CONV2D);
    tcc_kernel *kernel = (tcc_kernel *)&w; /* overwritten with NULL */
    assert_refused(tcc_config_instantiate(test_ctx, &seed, cfg, &w, TCC_SM_80, NULL, &kernel),
                   TCC_ERROR_SCHEDULE, "built no kernel");
    ck_assert_ptr_null(kernel);
    const SeedKnobs *r = &seed_read;
    int64_t f[4] = {4, 2, 64, 1}, y[4] = {1, 1, 1, 7}, x[4] = {1, 1, 7, 1};
    int64_t rc[3] = {128, 2, 2}, ry[3] = {1, 3, 1}, rx[3] = {1, 1, 3};
    ck_assert_mem_eq(r->f, f, sizeof f);
    ck_assert_mem_eq(r->y, y, sizeof y);
    ck_assert_mem_eq(r->x, x, sizeof x);
    ck_assert_mem_eq(r->rc, rc, sizeof rc);
    ck_assert_mem_eq(r->ry, ry, sizeof ry);
    ck_assert_mem_eq(r->rx, rx, sizeof rx);
    ck_assert_int_eq(r->unroll_step, 1500);
    ck_assert_int_eq(r->unroll_explicit, 0);
    /* The real outer factor reads as well as -1; AutoTVM's tagged log entity too. */
    tcc_config *again = NULL;
    ck_assert_int_eq(
        tcc_config_parse(test_ctx, space,
                         " [ [\"tile_f\",\"sp\",[4,2,64,1]],[\"tile_y\",[1,1,1,7]],"
                         "[\"tile_x\",[-1,1,7,1]],[\"tile_rc\",[128,2,2]],[\"tile_ry\","
                         "\"sp\",[-1,3,1]],[\"tile_rx\",[1,1,3]],[\"unroll_explicit\",\"ot\",0],"
                         "[\"auto_unroll_max_step\",1500]] ",
                         &again),
        TCC_OK);
    ck_assert_int_eq(tcc_config_index(again), 4881186);
    tcc_config_destroy(again);
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
}
END_TEST

START_TEST(index_round_trip)
{
    tcc_config_space *space = seed_space();
    uint64_t state = 12;
    for (int trial = 0; trial < 2000; trial++) {
        int64_t index = trial < 2 ? trial * (tcc_config_space_size(space) - 1)
                                  : test_random_below(&state, tcc_config_space_size(space));
        tcc_config *cfg = NULL, *back = NULL;
        ck_assert_int_eq(tcc_config_create(test_ctx, space, index, &cfg), TCC_OK);
        ck_assert_int_eq(tcc_config_index(cfg), index);
        /* choices -> index: the first knob fastest */
        int64_t again = 0;
        for (int k = 7; k >= 0; k--)
            again = again * tcc_config_space_knob_length(space, k) + tcc_config_knob_choice(cfg, k);
        ck_assert_int_eq(again, index);
        char *text = tcc_config_format(cfg);
        ck_assert_int_eq(tcc_config_parse(test_ctx, space, text, &back), TCC_OK);
        ck_assert_int_eq(tcc_config_index(back), index);
        free(text);
        tcc_config_destroy(back);
        tcc_config_destroy(cfg);
    }
    tcc_config_space_destroy(space);
}
END_TEST

START_TEST(features)
{
    tcc_config_space *space = seed_space();
    tcc_config *cfg = NULL;
    ck_assert_int_eq(tcc_config_parse(test_ctx, space, best, &cfg), TCC_OK);
    const double expected[23] = {2, 1, 6, 0, 0,       0, 0, log2(7), 0,       0, log2(7), 0,
                                 7, 1, 1, 0, log2(3), 0, 0, 0,       log2(3), 2, 0};
    double got[24] = {0}, from_space[24] = {0};
    ck_assert_int_eq(tcc_config_features(cfg, got, 24), 23);
    ck_assert_int_eq(tcc_config_space_features(space, 4881186, from_space, 24), 23);
    for (int i = 0; i < 23; i++) {
        ck_assert_double_eq_tol(got[i], expected[i], 1e-12);
        ck_assert_double_eq_tol(from_space[i], expected[i], 1e-12);
    }
    double few[3] = {-5, -5, -5};
    ck_assert_int_eq(tcc_config_features(cfg, few, 2), 23); /* writes at most count */
    ck_assert_double_eq(few[2], -5);
    ck_assert_int_eq(tcc_config_features(cfg, NULL, 0), 23);
    ck_assert_int_eq(tcc_config_space_features(space, -1, got, 24), -1);
    ck_assert_int_eq(tcc_config_space_features(space, 10454400, got, 24), -1);
    ck_assert_int_eq(tcc_config_features(NULL, got, 24), -1);
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
}
END_TEST

/* ---- splits against AutoTVM's search -----------------------------------------------------------
 */

/* SplitSpace._generate_space with policy "factors", copied as a brute force: every divisor at
 * every level, innermost first, kept when the product divides the extent. */
typedef struct Brute {
    int64_t extent;
    int n, ndiv, count, cap;
    int64_t divisors[512];
    int64_t stack[16];
    int64_t *tuples; /* count rows of n, outermost first, real values */
} Brute;

static void brute_search(Brute *b, int now)
{
    if (now == b->n - 1) {
        int64_t prod = 1;
        for (int i = 0; i < now; i++)
            prod *= b->stack[i];
        if (prod > b->extent || b->extent % prod)
            return;
        ck_assert_int_lt(b->count, b->cap);
        int64_t *row = &b->tuples[b->count++ * b->n];
        row[0] = b->extent / prod;
        for (int i = 1; i < b->n; i++) /* [-1] + stack[::-1] */
            row[i] = b->stack[b->n - 1 - i];
        return;
    }
    for (int d = 0; d < b->ndiv; d++) {
        b->stack[now] = b->divisors[d];
        brute_search(b, now + 1);
    }
}

static int64_t split_extent;
static int split_outputs;

static tcc_status one_split(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                            tcc_arch arch, const tcc_build_options *options, tcc_kernel **kernel)
{
    (void)ctx, (void)workload, (void)arch, (void)options, (void)kernel;
    int64_t factors[32];
    return tcc_define_split(cfg, "s", split_extent, split_outputs, factors);
}

static const tcc_template one_split_template = {.size = sizeof(tcc_template),
                                                .name = "one_split",
                                                .summary = "",
                                                .kind = TCC_WORKLOAD_MATMUL,
                                                .instantiate = one_split};

static void check_split(int64_t extent, int n)
{
    Brute b = {.extent = extent, .n = n, .cap = 40000};
    for (int64_t d = 1; d <= extent; d++)
        if (extent % d == 0)
            b.divisors[b.ndiv++] = d;
    b.tuples = malloc(sizeof(int64_t) * (size_t)(b.cap * n));
    brute_search(&b, 0);
    split_extent = extent;
    split_outputs = n;
    tcc_config_space *space = NULL;
    ck_assert_int_eq(make_space(&one_split_template, &space), TCC_OK);
    ck_assert_int_eq(tcc_config_space_size(space), b.count);
    for (int i = 0; i < b.count; i++) {
        tcc_config *cfg = NULL;
        ck_assert_int_eq(tcc_config_create(test_ctx, space, i, &cfg), TCC_OK);
        int64_t factors[16];
        ck_assert_int_eq(tcc_define_split(cfg, "s", extent, n, factors), TCC_OK);
        ck_assert_msg(!memcmp(factors, &b.tuples[i * n], sizeof(int64_t) * (size_t)n),
                      "split of %lld into %d: tuple %d differs", (long long)extent, n, i);
        char *text = tcc_config_format(cfg);
        tcc_config *back = NULL;
        ck_assert_int_eq(tcc_config_parse(test_ctx, space, text, &back), TCC_OK);
        ck_assert_int_eq(tcc_config_index(back), i);
        tcc_config_destroy(back);
        free(text);
        tcc_config_destroy(cfg);
    }
    tcc_config_space_destroy(space);
    free(b.tuples);
}

START_TEST(split_enumeration)
{
    static const struct {
        int64_t extent;
        int n;
    } cases[] = {{1, 1},   {1, 4},   {2, 1},   {7, 4},    {13, 2},   {97, 3},
                 {3, 3},   {512, 3}, {512, 4}, {1024, 2}, {4096, 5}, {360, 3},
                 {360, 4}, {720, 2}, {30, 6},  {49, 3},   {1, 2},    {64, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_split(cases[i].extent, cases[i].n);
}
END_TEST

START_TEST(split_lengths)
{
    /* prod over primes p^a of C(a + n - 1, n - 1) */
    static const struct {
        int64_t extent;
        int n;
        int64_t length;
    } cases[] = {{512, 4, 220},        {7, 4, 4},  {512, 3, 55},       {3, 3, 3},
                 {360, 4, 800},        {1, 32, 1}, {1LL << 40, 2, 41}, {1LL << 20, 8, 888030},
                 {999999999989, 3, 3}, {2, 32, 32}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        split_extent = cases[i].extent;
        split_outputs = cases[i].n;
        tcc_config_space *space = NULL;
        ck_assert_int_eq(make_space(&one_split_template, &space), TCC_OK);
        ck_assert_int_eq(tcc_config_space_size(space), cases[i].length);
        /* the last tuple: everything innermost */
        tcc_config *cfg = NULL;
        ck_assert_int_eq(tcc_config_create(test_ctx, space, cases[i].length - 1, &cfg), TCC_OK);
        int64_t factors[32];
        ck_assert_int_eq(tcc_define_split(cfg, "s", split_extent, split_outputs, factors), TCC_OK);
        ck_assert_int_eq(factors[split_outputs - 1], split_extent);
        tcc_config_destroy(cfg);
        tcc_config_space_destroy(space);
    }
}
END_TEST

/* ---- the empty space ------------------------------------------------------------------------ */

/* A template with no knob: one point, as AutoTVM's empty product. */
static tcc_status no_knobs(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                           tcc_arch arch, const tcc_build_options *options, tcc_kernel **kernel)
{
    (void)ctx, (void)cfg, (void)workload, (void)arch, (void)options, (void)kernel;
    return TCC_OK;
}

START_TEST(empty_space)
{
    static const tcc_template empty = {.size = sizeof(tcc_template),
                                       .name = "empty",
                                       .summary = "",
                                       .kind = TCC_WORKLOAD_CONV2D,
                                       .instantiate = no_knobs};
    tcc_config_space *space = NULL;
    ck_assert_int_eq(make_space(&empty, &space), TCC_OK);
    ck_assert_int_eq(tcc_config_space_size(space), 1);
    char *text = tcc_config_space_format(space);
    ck_assert_str_eq(text, "ConfigSpace (len=1, space_map=\n)");
    free(text);
    tcc_config *cfg = NULL;
    ck_assert_int_eq(tcc_config_parse(test_ctx, space, " [ ] ", &cfg), TCC_OK);
    text = tcc_config_format(cfg);
    ck_assert_str_eq(text, "[]");
    free(text);
    ck_assert_int_eq(tcc_config_features(cfg, NULL, 0), 0);
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
}
END_TEST

/* ---- tcc_split_by_factors ----------------------------------------------------------------- */

static tcc_expr *twice(tcc_func *f, tcc_expr *const *ax, void *user)
{
    return tcc_mul(f, tcc_access(f, user, 1, ax), tcc_float(f, 2, TCC_FLOAT32));
}

START_TEST(split_by_factors_nests)
{
    tcc_func *func = NULL;
    ck_assert_int_eq(tcc_func_create(test_ctx, "k", &func), TCC_OK);
    int64_t shape[1] = {512};
    static const char *const names[1] = {"f"};
    tcc_tensor *a = tcc_placeholder(func, "A", 1, shape, TCC_FLOAT32);
    tcc_tensor *b = tcc_compute(func, "B", 1, shape, names, TCC_FLOAT32, twice, a);
    ck_assert_int_eq(tcc_schedule_create(func, 1, &b), TCC_OK);
    tcc_stage *stage = tcc_stage_of(func, b);
    tcc_iter_var *parts[4];
    int64_t factors[4] = {-1, 2, 64, 1};
    ck_assert_int_eq(tcc_split_by_factors(stage, tcc_tensor_axis(b, 0), 4, factors, parts), TCC_OK);
    ck_assert_str_eq(tcc_iter_var_name(parts[0]), "f.outer");
    ck_assert_str_eq(tcc_iter_var_name(parts[1]), "f.inner.outer");
    ck_assert_str_eq(tcc_iter_var_name(parts[2]), "f.inner.inner.outer");
    ck_assert_str_eq(tcc_iter_var_name(parts[3]), "f.inner.inner.inner");

    PrintCapture captured = {0};
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.print_after_pass = "schedule_ops";
    options.print_callback = capture_print;
    options.print_user = &captured;
    tcc_tensor *params[2] = {a, b};
    Lowered lowering = lower(func, 2, params, &options);
    ck_assert_msg(lowering.status == TCC_OK, "%s", tcc_last_error(test_ctx));
    assert_contains(captured.last, "  for f.outer in 0..4 {\n"
                                   "    for f.inner.outer in 0..2 {\n"
                                   "      for f.inner.inner.outer in 0..64 {\n"
                                   "        for f.inner.inner.inner in 0..1 {\n");
    lowered_free(&lowering);
    free(captured.last);

    /* Refusals: one line each, through the stage's context. */
    int64_t zero[3] = {-1, 0, 4};
    assert_refused(tcc_split_by_factors(stage, parts[0], 3, zero, parts), TCC_ERROR_SCHEDULE,
                   "factor 1 must be at least 1 (got 0)");
    assert_refused(tcc_split_by_factors(stage, parts[0], 0, factors, parts),
                   TCC_ERROR_INVALID_ARGUMENT, "num_outputs must be 1 to 32 (got 0)");
    assert_refused(tcc_split_by_factors(stage, parts[0], 2, NULL, parts),
                   TCC_ERROR_INVALID_ARGUMENT, "NULL axis, factors or parts");
    int64_t huge[3] = {-1, INT64_MAX / 2, 4};
    assert_refused(tcc_split_by_factors(stage, parts[0], 3, huge, parts), TCC_ERROR_SCHEDULE,
                   "product overflows");
    ck_assert_int_eq(tcc_split_by_factors(NULL, parts[0], 2, factors, parts),
                     TCC_ERROR_INVALID_ARGUMENT);
    /* One output: the axis itself. */
    tcc_iter_var *one[1];
    ck_assert_int_eq(tcc_split_by_factors(stage, parts[3], 1, factors, one), TCC_OK);
    ck_assert_ptr_eq(one[0], parts[3]);
    tcc_func_destroy(func);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tune_space");
    TCase *tc = test_case(s, "space", setup, teardown);
    tcase_add_test(tc, seed_space_sizes);
    tcase_add_test(tc, tutorial_indices);
    tcase_add_test(tc, best_config_applies);
    tcase_add_test(tc, index_round_trip);
    tcase_add_test(tc, features);
    tcase_add_test(tc, split_enumeration);
    tcase_add_test(tc, split_lengths);
    tcase_add_test(tc, empty_space);
    tcase_add_test(tc, split_by_factors_nests);
    return s;
}

TEST_MAIN(suite)
