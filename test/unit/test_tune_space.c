/*
 * Config spaces and configs (lib/tune/config.c, split.c, config_parse.c) against AutoTVM:
 * the seed tutorial's space (../shared/seeds/003: its eight knobs, their lengths, its printed
 * text), split enumeration against a brute-force copy of AutoTVM's depth-first search, the
 * indices the tutorial's log prints for its configs, format/parse round trips, features,
 * tcc_split_by_factors on printed loop IR, and every refusal in one line.
 */
#include "ir_support.h"
#include "tcc/tune.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static tcc_context *test_ctx;

static void setup(void)
{
    test_ctx = test_context();
}

static void teardown(void)
{
    tcc_context_destroy(test_ctx);
    test_ctx = NULL;
}

static void assert_refused(tcc_status status, tcc_status expected, const char *part)
{
    ck_assert_int_eq(status, expected);
    assert_contains(tcc_last_error(test_ctx), part);
    const char *error = tcc_last_error(test_ctx);
    ck_assert_msg(*error && !strchr(error, '\n'), "not one line: \"%s\"", error);
}

/* ---- the seed's template --------------------------------------------------------------------- */

/* What the seed template read from its config the last time it applied one. */
typedef struct SeedKnobs {
    int64_t f[4], y[4], x[4], rc[3], ry[3], rx[3];
    int64_t unroll_step, unroll_explicit;
} SeedKnobs;
static SeedKnobs seed_read;

/* The knobs of the tutorial's conv2d_no_batching for N=1, 7x7, 512->512, 3x3, in its order. */
static tcc_status seed_template(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                                tcc_arch arch, const tcc_build_options *options,
                                tcc_kernel **kernel)
{
    (void)ctx, (void)workload, (void)arch, (void)options, (void)kernel;
    static const int64_t steps[3] = {0, 512, 1500}, explicit[2] = {0, 1};
    SeedKnobs *r = &seed_read;
    tcc_status s = tcc_define_split(cfg, "tile_f", 512, 4, r->f);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_y", 7, 4, r->y);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_x", 7, 4, r->x);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_rc", 512, 3, r->rc);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_ry", 3, 3, r->ry);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_rx", 3, 3, r->rx);
    if (s == TCC_OK)
        s = tcc_define_knob(cfg, "auto_unroll_max_step", 3, steps, &r->unroll_step);
    if (s == TCC_OK)
        s = tcc_define_knob(cfg, "unroll_explicit", 2, explicit, &r->unroll_explicit);
    if (s != TCC_OK || tcc_config_is_defining(cfg))
        return s;
    return TCC_OK; /* applying: no kernel (this test links no code generator) */
}

static const tcc_template seed = {.size = sizeof(tcc_template),
                                  .name = "seed",
                                  .summary = "the tutorial's knobs",
                                  .kind = TCC_WORKLOAD_CONV2D,
                                  .instantiate = seed_template};

static tcc_config_space *seed_space(void)
{
    tcc_workload w;
    tcc_workload_init(&w, TCC_WORKLOAD_CONV2D);
    tcc_config_space *space = NULL;
    ck_assert_int_eq(tcc_config_space_create(test_ctx, &seed, &w, TCC_SM_80, &space), TCC_OK);
    ck_assert_ptr_nonnull(space);
    return space;
}

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

static const char *const best =
    "[[\"tile_f\", [-1, 2, 64, 1]], [\"tile_y\", [-1, 1, 1, 7]], [\"tile_x\", [-1, 1, 7, 1]], "
    "[\"tile_rc\", [-1, 2, 2]], [\"tile_ry\", [-1, 3, 1]], [\"tile_rx\", [-1, 1, 3]], "
    "[\"auto_unroll_max_step\", 1500], [\"unroll_explicit\", 0]]";

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

static tcc_status make_space(const tcc_template *tmpl, tcc_config_space **space)
{
    tcc_workload w;
    tcc_workload_init(&w, tmpl->kind);
    return tcc_config_space_create(test_ctx, tmpl, &w, TCC_SM_80, space);
}

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
    tcase_add_test(tc, define_refusals);
    tcase_add_test(tc, space_refusals);
    tcase_add_test(tc, config_refusals);
    tcase_add_test(tc, parse_refusals);
    tcase_add_test(tc, empty_space);
    tcase_add_test(tc, split_by_factors_nests);
    return s;
}

TEST_MAIN(suite)
