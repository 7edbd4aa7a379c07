/*
 * The tuners (lib/tune/tuner*.c) on spaces of templates defined here: each kind proposes every
 * point of a small space once and then has none left (grid in index order); a seed gives the
 * same proposals; results of points never proposed (warm start) mark them visited, and train
 * the model-based tuner; on a synthetic cost with one optimum (a function of the knobs'
 * features), the model-based and the genetic tuner reach it in fewer trials than random
 * search, averaged over 5 seeds; refusals in one line.
 *
 * The model-based tuner needs XGBoost (libxgboost.so.0, Debian's libxgboost0): without it its
 * tests say SKIP on stderr, unless TCC_TEST_REQUIRE_XGBOOST is set, where they fail.
 */
#include "support.h"
#include "tcc/tune.h"
#include "tune/tuner.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sanitizer builds run the search a few times slower: fewer seeds' worth of budget there. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

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
    assert_one_line(test_ctx);
}

/* ---- spaces ---------------------------------------------------------------------------------- */

/* 15 x 4 x 3 = 180 points: enough results for the model-based tuner to fit once (64). */
static tcc_status small_template(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                                 tcc_arch arch, const tcc_build_options *options,
                                 tcc_kernel **kernel)
{
    (void)ctx, (void)workload, (void)arch, (void)options, (void)kernel;
    static const int64_t unroll[4] = {0, 16, 64, 512}, vector[3] = {1, 2, 4};
    int64_t factors[3], value;
    tcc_status s = tcc_define_split(cfg, "tile", 16, 3, factors);
    if (s == TCC_OK)
        s = tcc_define_knob(cfg, "unroll", 4, unroll, &value);
    if (s == TCC_OK)
        s = tcc_define_knob(cfg, "vector", 3, vector, &value);
    if (s != TCC_OK || tcc_config_is_defining(cfg))
        return s;
    return tcc_config_reject(ctx, cfg, "a test template builds nothing");
}

/* Four splits and two knobs: 28 x 5 x 4 x 6 x 3 x 2 = 20160 points. */
static tcc_status synthetic_template(tcc_context *ctx, tcc_config *cfg,
                                     const tcc_workload *workload, tcc_arch arch,
                                     const tcc_build_options *options, tcc_kernel **kernel)
{
    (void)ctx, (void)workload, (void)arch, (void)options, (void)kernel;
    static const int64_t steps[3] = {0, 512, 1500}, explicit[2] = {0, 1};
    int64_t f[3], value;
    tcc_status s = tcc_define_split(cfg, "tile_a", 64, 3, f);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_b", 16, 2, f);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_c", 8, 2, f);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_d", 32, 2, f);
    if (s == TCC_OK)
        s = tcc_define_knob(cfg, "auto_unroll_max_step", 3, steps, &value);
    if (s == TCC_OK)
        s = tcc_define_knob(cfg, "unroll_explicit", 2, explicit, &value);
    if (s != TCC_OK || tcc_config_is_defining(cfg))
        return s;
    return tcc_config_reject(ctx, cfg, "a test template builds nothing");
}

static tcc_config_space *make_space(tcc_template *tmpl)
{
    tcc_workload workload;
    tcc_workload_init(&workload, TCC_WORKLOAD_MATMUL);
    tcc_config_space *space = NULL;
    tcc_status status = tcc_config_space_create(test_ctx, tmpl, &workload, TCC_SM_80, &space);
    ck_assert_msg(status == TCC_OK, "space: %s", tcc_last_error(test_ctx));
    return space;
}

static tcc_config_space *small_space(void)
{
    static tcc_template tmpl = {.size = sizeof(tcc_template),
                                .name = "test_small",
                                .summary = "180 points",
                                .kind = TCC_WORKLOAD_MATMUL,
                                .instantiate = small_template};
    tcc_config_space *space = make_space(&tmpl);
    ck_assert_int_eq(tcc_config_space_size(space), 180);
    return space;
}

static tcc_config_space *synthetic_space(void)
{
    static tcc_template tmpl = {.size = sizeof(tcc_template),
                                .name = "test_synthetic",
                                .summary = "20160 points",
                                .kind = TCC_WORKLOAD_MATMUL,
                                .instantiate = synthetic_template};
    tcc_config_space *space = make_space(&tmpl);
    ck_assert_int_eq(tcc_config_space_size(space), 20160);
    return space;
}

/* ---- the synthetic cost ------------------------------------------------------------------------
 */

/* GFLOP/s as a function of the knobs' features (log2 of each factor; each other knob's value
 * position): a peak of 1000 at one point, falling with the squared distance from it, and 0 where
 * the inner factors of tile_a and tile_b ask for more than 2^5 "threads" (a failed build). A tree
 * model can learn it from the same features the tuner gives it. */
static double synthetic_score(const tcc_config_space *space, int64_t index)
{
    static const double peak[] = {2, 2, 2, 1, 3, 3, 0, 2, 3, 1, 1};
    static const double weight[] = {1, 1, 1, 0.5, 0.5, 1, 1, 0.5, 0.5, 2, 2};
    double x[16];
    int n = tcc_config_space_features(space, index, x, 16);
    ck_assert_int_eq(n, 11);
    if (x[2] + x[4] > 5)
        return 0;
    double distance = 0;
    for (int i = 0; i < n; i++)
        distance += weight[i] * (x[i] - peak[i]) * (x[i] - peak[i]);
    return 1000 * exp(-0.25 * distance);
}

static double scaled_score(const tcc_config_space *space, int64_t index)
{
    (void)space;
    return index % 7 == 3 ? 0 : 1 + (double)(index * 37 % 101); /* some failures */
}

/* ---- helpers ------------------------------------------------------------------------------------
 */

/* Whether XGBoost loads; says SKIP where it does not (or fails if the run requires it). */
static bool xgboost_available(const tcc_config_space *space, const char *test)
{
    tcc_tuner *tuner = NULL;
    tcc_status status = tcc_tuner_create(test_ctx, TCC_TUNER_XGB, space, 1, &tuner);
    tcc_tuner_destroy(tuner);
    if (status == TCC_OK)
        return true;
    ck_assert_int_eq(status, TCC_ERROR_UNSUPPORTED);
    assert_contains(tcc_last_error(test_ctx), "libxgboost");
    ck_assert_msg(!getenv("TCC_TEST_REQUIRE_XGBOOST"), "XGBoost required but missing: %s",
                  tcc_last_error(test_ctx));
    fprintf(stderr, "test_tune_tuners: SKIP %s (the xgb tuner without XGBoost): %s\n", test,
            tcc_last_error(test_ctx));
    return false;
}

static tcc_tuner *make_tuner(tcc_tuner_kind kind, const tcc_config_space *space, uint64_t seed)
{
    tcc_tuner *tuner = NULL;
    tcc_status status = tcc_tuner_create(test_ctx, kind, space, seed, &tuner);
    ck_assert_msg(status == TCC_OK, "%s tuner: %s", tcc_tuner_kind_name(kind),
                  tcc_last_error(test_ctx));
    return tuner;
}

/* Proposes until the tuner has nothing left, measuring with `score`, in batches of `batch`;
 * the proposals in order in out (size of the space). Returns how many. */
static int64_t run_all(tcc_tuner *tuner, const tcc_config_space *space, int batch,
                       double (*score)(const tcc_config_space *, int64_t), int64_t *out)
{
    int64_t total = 0, size = tcc_config_space_size(space);
    int64_t indices[64];
    double scores[64];
    while (tcc_tuner_has_next(tuner)) {
        int proposed = -1;
        ck_assert_int_eq(tcc_tuner_next_batch(tuner, batch, indices, &proposed), TCC_OK);
        ck_assert_int_gt(proposed, 0);
        ck_assert_int_le(total + proposed, size);
        for (int i = 0; i < proposed; i++) {
            out[total++] = indices[i];
            scores[i] = score(space, indices[i]);
        }
        ck_assert_msg(tcc_tuner_update(tuner, proposed, indices, scores) == TCC_OK, "update: %s",
                      tcc_last_error(test_ctx));
    }
    int proposed = -1;
    ck_assert_int_eq(tcc_tuner_next_batch(tuner, batch, indices, &proposed), TCC_OK);
    ck_assert_int_eq(proposed, 0);
    return total;
}

static void assert_each_once(const int64_t *points, int64_t count, int64_t size)
{
    ck_assert_int_eq(count, size);
    char *seen = calloc((size_t)size, 1);
    for (int64_t i = 0; i < count; i++) {
        ck_assert(points[i] >= 0 && points[i] < size);
        ck_assert_msg(!seen[points[i]], "point %lld proposed twice", (long long)points[i]);
        seen[points[i]] = 1;
    }
    free(seen);
}

/* ---- every point once -------------------------------------------------------------------------
 */

static void check_exhaustive(tcc_tuner_kind kind)
{
    tcc_config_space *space = small_space();
    if (kind == TCC_TUNER_XGB && !xgboost_available(space, "every point once")) {
        tcc_config_space_destroy(space);
        return;
    }
    tcc_tuner *tuner = make_tuner(kind, space, 7);
    int64_t points[180];
    int64_t count = run_all(tuner, space, 17, scaled_score, points);
    assert_each_once(points, count, 180);
    ck_assert(!tcc_tuner_has_next(tuner));
    if (kind == TCC_TUNER_GRID)
        for (int64_t i = 0; i < count; i++)
            ck_assert_int_eq(points[i], i);
    tcc_tuner_destroy(tuner);
    tcc_config_space_destroy(space);
}

START_TEST(random_proposes_each_point_once)
{
    check_exhaustive(TCC_TUNER_RANDOM);
}
END_TEST

START_TEST(grid_proposes_points_in_order)
{
    check_exhaustive(TCC_TUNER_GRID);
}
END_TEST

START_TEST(genetic_proposes_each_point_once)
{
    check_exhaustive(TCC_TUNER_GENETIC);
}
END_TEST

START_TEST(xgb_proposes_each_point_once)
{
    check_exhaustive(TCC_TUNER_XGB);
}
END_TEST

/* Batches as large as the caller likes before any update: still no point twice. */
START_TEST(batches_without_updates)
{
    tcc_config_space *space = small_space();
    for (int kind = 0; kind < 3; kind++) {
        tcc_tuner *tuner = make_tuner((tcc_tuner_kind)kind, space, 3);
        int64_t points[180], total = 0;
        while (tcc_tuner_has_next(tuner)) {
            int proposed = 0;
            ck_assert_int_eq(tcc_tuner_next_batch(tuner, 64, points + total, &proposed), TCC_OK);
            ck_assert_int_gt(proposed, 0);
            total += proposed;
            ck_assert_int_le(total, 180);
            if (total == 128 && total < 180) /* room for a last partial batch */
                break;
        }
        int proposed = 0;
        ck_assert_int_eq(tcc_tuner_next_batch(tuner, 64, points + total, &proposed), TCC_OK);
        total += proposed;
        assert_each_once(points, total, 180);
        tcc_tuner_destroy(tuner);
    }
    tcc_config_space_destroy(space);
}
END_TEST

/* ---- determinism
 * --------------------------------------------------------------------------------- */

static void check_seeded(tcc_tuner_kind kind, const tcc_config_space *space, int64_t trials)
{
    int64_t *runs[3];
    for (int r = 0; r < 3; r++) {
        tcc_tuner *tuner = make_tuner(kind, space, r < 2 ? 11 : 12);
        runs[r] = calloc((size_t)trials, sizeof *runs[r]);
        int64_t total = 0, indices[64];
        double scores[64];
        while (total < trials) {
            int proposed = 0;
            ck_assert_int_eq(tcc_tuner_next_batch(tuner, 64, indices, &proposed), TCC_OK);
            for (int i = 0; i < proposed; i++) {
                runs[r][total++] = indices[i];
                scores[i] = synthetic_score(space, indices[i]);
            }
            ck_assert_int_eq(tcc_tuner_update(tuner, proposed, indices, scores), TCC_OK);
        }
        tcc_tuner_destroy(tuner);
    }
    ck_assert_msg(!memcmp(runs[0], runs[1], (size_t)trials * sizeof *runs[0]),
                  "%s: the same seed proposed differently", tcc_tuner_kind_name(kind));
    ck_assert_msg(memcmp(runs[0], runs[2], (size_t)trials * sizeof *runs[0]),
                  "%s: another seed proposed the same", tcc_tuner_kind_name(kind));
    for (int r = 0; r < 3; r++)
        free(runs[r]);
}

START_TEST(a_seed_gives_the_same_proposals)
{
    tcc_config_space *space = synthetic_space();
    check_seeded(TCC_TUNER_RANDOM, space, 256);
    check_seeded(TCC_TUNER_GENETIC, space, 320);
    if (xgboost_available(space, "determinism"))
        check_seeded(TCC_TUNER_XGB, space, 256); /* three plans of the model */
    tcc_config_space_destroy(space);
}
END_TEST

/* ---- warm start
 * ---------------------------------------------------------------------------------- */

/* Results of points a tuner never proposed: it never proposes them. */
START_TEST(warm_start_marks_points_visited)
{
    tcc_config_space *space = small_space();
    int64_t warm[50];
    double scores[50];
    for (int i = 0; i < 50; i++) {
        warm[i] = i * 3 + 1;
        scores[i] = scaled_score(space, warm[i]);
    }
    for (int kind = 0; kind < 4; kind++) {
        if (kind == TCC_TUNER_XGB && !xgboost_available(space, "warm start"))
            break;
        tcc_tuner *tuner = make_tuner((tcc_tuner_kind)kind, space, 5);
        ck_assert_int_eq(tcc_tuner_update(tuner, 50, warm, scores), TCC_OK);
        int64_t points[180];
        int64_t count = run_all(tuner, space, 16, scaled_score, points);
        ck_assert_int_eq(count, 130);
        for (int64_t i = 0; i < count; i++)
            for (int w = 0; w < 50; w++)
                ck_assert_int_ne(points[i], warm[w]);
        /* The warm points and the proposals together: the whole space, once. */
        memcpy(points + count, warm, sizeof warm);
        assert_each_once(points, 180, 180);
        tcc_tuner_destroy(tuner);
    }
    tcc_config_space_destroy(space);
}
END_TEST

/* The mean synthetic score of a tuner's next 64 proposals after `warm` results. */
static double next_plan_mean(tcc_tuner_kind kind, const tcc_config_space *space,
                             const int64_t *warm, const double *scores, int count)
{
    tcc_tuner *tuner = make_tuner(kind, space, 9);
    ck_assert_int_eq(tcc_tuner_update(tuner, count, warm, scores), TCC_OK);
    int64_t indices[64];
    int proposed = 0;
    ck_assert_int_eq(tcc_tuner_next_batch(tuner, 64, indices, &proposed), TCC_OK);
    ck_assert_int_eq(proposed, 64);
    double sum = 0;
    for (int i = 0; i < 64; i++)
        sum += synthetic_score(space, indices[i]);
    tcc_tuner_destroy(tuner);
    return sum / 64;
}

/* Earlier records train the model: its first plan after them is far better than random. */
START_TEST(warm_start_trains_the_model)
{
    tcc_config_space *space = synthetic_space();
    if (!xgboost_available(space, "warm start trains the model")) {
        tcc_config_space_destroy(space);
        return;
    }
    enum { WARM = 300 };
    int64_t warm[WARM];
    double scores[WARM];
    TciRng rng;
    tci_rng_seed(&rng, 2024);
    for (int i = 0; i < WARM; i++) {
        warm[i] = tci_rng_below(&rng, tcc_config_space_size(space));
        scores[i] = synthetic_score(space, warm[i]);
    }
    double model = next_plan_mean(TCC_TUNER_XGB, space, warm, scores, WARM);
    double random = next_plan_mean(TCC_TUNER_RANDOM, space, warm, scores, WARM);
    fprintf(stderr,
            "test_tune_tuners: after %d warm results, the next 64 average %.1f (xgb) "
            "against %.1f (random)\n",
            WARM, model, random);
    ck_assert_msg(model > 3 * random, "xgb %.1f, random %.1f", model, random);
    tcc_config_space_destroy(space);
}
END_TEST

/* ---- transfer from other workloads
 * -------------------------------------------------------------- */

/* Other workloads' results (each on its own scale) plan the model's first batch, before any of
 * its own: far better than random. None is marked visited, and the other kinds ignore them. */
START_TEST(transfer_plans_the_first_batch)
{
    tcc_config_space *space = synthetic_space();
    enum { OTHER = 400 };
    int64_t points[OTHER], groups[OTHER];
    double scores[OTHER];
    TciRng rng;
    tci_rng_seed(&rng, 77);
    for (int i = 0; i < OTHER; i++) {
        points[i] = tci_rng_below(&rng, tcc_config_space_size(space));
        groups[i] = i % 2;
        scores[i] = synthetic_score(space, points[i]) * (i % 2 ? 1e-3 : 10);
    }
    for (int kind = 0; kind < 4; kind++) {
        if (kind == TCC_TUNER_XGB && !xgboost_available(space, "transfer"))
            break;
        tcc_tuner *plain = make_tuner((tcc_tuner_kind)kind, space, 6);
        tcc_tuner *taught = make_tuner((tcc_tuner_kind)kind, space, 6);
        ck_assert_int_eq(tcc_tuner_transfer(taught, OTHER, points, scores, groups), TCC_OK);
        int64_t a[64], b[64];
        int na = 0, nb = 0;
        ck_assert_int_eq(tcc_tuner_next_batch(plain, 64, a, &na), TCC_OK);
        ck_assert_int_eq(tcc_tuner_next_batch(taught, 64, b, &nb), TCC_OK);
        ck_assert_int_eq(na, 64);
        ck_assert_int_eq(nb, 64);
        double mean_plain = 0, mean_taught = 0;
        for (int i = 0; i < 64; i++) {
            mean_plain += synthetic_score(space, a[i]) / 64;
            mean_taught += synthetic_score(space, b[i]) / 64;
        }
        if (kind == TCC_TUNER_XGB) {
            fprintf(stderr,
                    "test_tune_tuners: the first 64 after %d transferred results average %.1f "
                    "(xgb) against %.1f without\n",
                    OTHER, mean_taught, mean_plain);
            ck_assert_msg(mean_taught > 3 * mean_plain, "xgb %.1f, without %.1f", mean_taught,
                          mean_plain);
        } else {
            ck_assert_mem_eq(a, b, sizeof a); /* learns nothing from them */
        }
        tcc_tuner_destroy(plain);
        tcc_tuner_destroy(taught);
    }
    tcc_config_space_destroy(space);
}
END_TEST

START_TEST(transfer_refusals)
{
    tcc_config_space *space = small_space();
    tcc_tuner *tuner = make_tuner(TCC_TUNER_RANDOM, space, 1);
    int64_t point = 3, group = 0;
    double score = 1, bad = -1;
    assert_refused(tcc_tuner_transfer(tuner, 1, &point, &score, NULL), TCC_ERROR_INVALID_ARGUMENT,
                   "tcc_tuner_transfer: groups is NULL");
    assert_refused(tcc_tuner_transfer(tuner, 1, &point, &bad, &group), TCC_ERROR_INVALID_ARGUMENT,
                   "tcc_tuner_transfer: score -1");
    int64_t outside = tcc_config_space_size(space);
    assert_refused(tcc_tuner_transfer(tuner, 1, &outside, &score, &group),
                   TCC_ERROR_INVALID_ARGUMENT, "is not a point of the space");
    ck_assert_int_eq(tcc_tuner_transfer(NULL, 1, &point, &score, &group),
                     TCC_ERROR_INVALID_ARGUMENT);
    tcc_tuner_destroy(tuner);
    tcc_config_space_destroy(space);
}
END_TEST

/* ---- search quality on the synthetic cost
 * ---------------------------------------------------------- */

/* Trials until a score of at least `target`, at most `budget`. */
static int64_t trials_to_reach(tcc_tuner_kind kind, const tcc_config_space *space, uint64_t seed,
                               double target, int64_t budget)
{
    tcc_tuner *tuner = make_tuner(kind, space, seed);
    int64_t trials = 0, indices[64];
    double scores[64];
    bool reached = false;
    while (!reached && trials < budget && tcc_tuner_has_next(tuner)) {
        int proposed = 0;
        ck_assert_int_eq(tcc_tuner_next_batch(tuner, 64, indices, &proposed), TCC_OK);
        for (int i = 0; i < proposed; i++) {
            scores[i] = synthetic_score(space, indices[i]);
            if (!reached && trials < budget) {
                trials++;
                reached = scores[i] >= target;
            }
        }
        ck_assert_int_eq(tcc_tuner_update(tuner, proposed, indices, scores), TCC_OK);
    }
    tcc_tuner_destroy(tuner);
    return trials;
}

static double mean_trials(tcc_tuner_kind kind, const tcc_config_space *space, double target,
                          int64_t budget)
{
    enum { SEEDS = 5 };
    double sum = 0;
    char line[256];
    int length = snprintf(line, sizeof line, "%s:", tcc_tuner_kind_name(kind));
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        int64_t trials = trials_to_reach(kind, space, seed, target, budget);
        sum += (double)trials;
        length += snprintf(line + length, sizeof line - (size_t)length, " %lld%s",
                           (long long)trials, trials == budget ? " (budget)" : "");
    }
    fprintf(stderr, "test_tune_tuners: trials to 95%% of the optimum, %s; mean %.0f\n", line,
            sum / SEEDS);
    return sum / SEEDS;
}

static double synthetic_optimum(const tcc_config_space *space)
{
    double best = 0;
    for (int64_t i = 0; i < tcc_config_space_size(space); i++)
        best = fmax(best, synthetic_score(space, i));
    return best;
}

START_TEST(genetic_beats_random)
{
    tcc_config_space *space = synthetic_space();
    double target = 0.95 * synthetic_optimum(space);
    double random = mean_trials(TCC_TUNER_RANDOM, space, target, tcc_config_space_size(space));
    double genetic = mean_trials(TCC_TUNER_GENETIC, space, target, tcc_config_space_size(space));
    ck_assert_msg(genetic < random, "genetic %.0f trials, random %.0f", genetic, random);
    tcc_config_space_destroy(space);
}
END_TEST

START_TEST(xgb_beats_random)
{
    tcc_config_space *space = synthetic_space();
    if (!xgboost_available(space, "xgb beats random")) {
        tcc_config_space_destroy(space);
        return;
    }
    double target = 0.95 * synthetic_optimum(space);
    double random = mean_trials(TCC_TUNER_RANDOM, space, target, tcc_config_space_size(space));
    /* A budget well under random's mean: reaching it at the budget still loses. */
    double xgb = mean_trials(TCC_TUNER_XGB, space, target, SANITIZED ? 2000 : 3000);
    ck_assert_msg(xgb < random, "xgb %.0f trials, random %.0f", xgb, random);
    tcc_config_space_destroy(space);
}
END_TEST

/* AutoTVM's diversity_filter_ratio: plans picked for diverse knobs, each point still once. */
START_TEST(xgb_with_a_diversity_filter)
{
    tcc_config_space *space = small_space();
    if (!xgboost_available(space, "diversity filter")) {
        tcc_config_space_destroy(space);
        return;
    }
    tcc_tuner *tuner = make_tuner(TCC_TUNER_XGB, space, 4);
    assert_refused(tci_tuner_set_diversity_filter_ratio(tuner, 0.5), TCC_ERROR_INVALID_ARGUMENT,
                   "diversity filter ratio 0.5");
    ck_assert_int_eq(tci_tuner_set_diversity_filter_ratio(tuner, 2), TCC_OK);
    int64_t points[180];
    assert_each_once(points, run_all(tuner, space, 64, scaled_score, points), 180);
    tcc_tuner_destroy(tuner);
    tcc_config_space_destroy(space);
}
END_TEST

/* ---- names and refusals -------------------------------------------------------------------------
 */

START_TEST(kind_names_round_trip)
{
    for (int kind = 0; kind < 4; kind++) {
        const char *name = tcc_tuner_kind_name((tcc_tuner_kind)kind);
        ck_assert_ptr_nonnull(name);
        tcc_tuner_kind parsed = (tcc_tuner_kind)-1;
        ck_assert_int_eq(tcc_tuner_kind_parse(test_ctx, name, &parsed), TCC_OK);
        ck_assert_int_eq(parsed, kind);
    }
    ck_assert_str_eq(tcc_tuner_kind_name(TCC_TUNER_XGB), "xgb");
    ck_assert_ptr_null(tcc_tuner_kind_name((tcc_tuner_kind)9));
    tcc_tuner_kind parsed;
    ck_assert_int_eq(tcc_tuner_kind_parse(test_ctx, "ga", &parsed), TCC_OK);
    ck_assert_int_eq(parsed, TCC_TUNER_GENETIC);
    assert_refused(tcc_tuner_kind_parse(test_ctx, "annealing", &parsed), TCC_ERROR_INVALID_ARGUMENT,
                   "unknown tuner 'annealing'");
    assert_refused(tcc_tuner_kind_parse(test_ctx, NULL, &parsed), TCC_ERROR_INVALID_ARGUMENT,
                   "NULL");
}
END_TEST

START_TEST(refusals)
{
    tcc_config_space *space = small_space();
    tcc_tuner *tuner = (tcc_tuner *)1;
    assert_refused(tcc_tuner_create(test_ctx, TCC_TUNER_RANDOM, NULL, 1, &tuner),
                   TCC_ERROR_INVALID_ARGUMENT, "space is NULL");
    ck_assert_ptr_null(tuner);
    assert_refused(tcc_tuner_create(test_ctx, (tcc_tuner_kind)42, space, 1, &tuner),
                   TCC_ERROR_INVALID_ARGUMENT, "unknown kind 42");
    assert_refused(tcc_tuner_create(test_ctx, TCC_TUNER_RANDOM, space, 1, NULL),
                   TCC_ERROR_INVALID_ARGUMENT, "out is NULL");

    tuner = make_tuner(TCC_TUNER_RANDOM, space, 1);
    int64_t indices[4] = {0, 1, 180, 3};
    double scores[4] = {1, 2, 3, 4};
    int proposed = 5;
    assert_refused(tcc_tuner_next_batch(tuner, -1, indices, &proposed), TCC_ERROR_INVALID_ARGUMENT,
                   "count -1 is negative");
    ck_assert_int_eq(proposed, 0);
    assert_refused(tcc_tuner_next_batch(tuner, 4, NULL, &proposed), TCC_ERROR_INVALID_ARGUMENT,
                   "NULL");
    ck_assert_int_eq(tcc_tuner_next_batch(tuner, 0, NULL, &proposed), TCC_OK);
    ck_assert_int_eq(proposed, 0);
    assert_refused(tcc_tuner_update(tuner, -2, indices, scores), TCC_ERROR_INVALID_ARGUMENT,
                   "count -2 is negative");
    assert_refused(tcc_tuner_update(tuner, 4, indices, scores), TCC_ERROR_INVALID_ARGUMENT,
                   "index 180 is not a point of the space (0 to 179)");
    indices[2] = 2;
    scores[1] = NAN;
    assert_refused(tcc_tuner_update(tuner, 4, indices, scores), TCC_ERROR_INVALID_ARGUMENT,
                   "not a finite number");
    scores[1] = -1;
    assert_refused(tcc_tuner_update(tuner, 4, indices, scores), TCC_ERROR_INVALID_ARGUMENT,
                   "score -1 of point 1");
    /* A refused update changes nothing: every point is still to be proposed. */
    int64_t points[180];
    assert_each_once(points, run_all(tuner, space, 64, scaled_score, points), 180);
    tcc_tuner_destroy(tuner);
    tcc_tuner_destroy(NULL);
    ck_assert(!tcc_tuner_has_next(NULL));
    tcc_config_space_destroy(space);
}
END_TEST

/* Without XGBoost the model-based tuner refuses in one line naming the library. */
START_TEST(xgb_without_the_library)
{
    tcc_config_space *space = small_space();
    tcc_tuner *tuner = (tcc_tuner *)1;
    assert_refused(tci_tuner_create_xgb(test_ctx, space, 1, "libxgboost-missing.so.0", &tuner),
                   TCC_ERROR_UNSUPPORTED, "cannot load libxgboost-missing.so.0");
    ck_assert_ptr_null(tuner);
    tcc_config_space_destroy(space);
}
END_TEST

static Suite *tuner_suite(void)
{
    Suite *suite = suite_create("tune_tuners");
    TCase *every = test_case(suite, "every point once", setup, teardown);
    tcase_add_test(every, random_proposes_each_point_once);
    tcase_add_test(every, grid_proposes_points_in_order);
    tcase_add_test(every, genetic_proposes_each_point_once);
    tcase_add_test(every, xgb_proposes_each_point_once);
    tcase_add_test(every, batches_without_updates);
    tcase_add_test(every, xgb_with_a_diversity_filter);
    TCase *seeded = test_case(suite, "seeds and warm starts", setup, teardown);
    tcase_add_test(seeded, a_seed_gives_the_same_proposals);
    tcase_add_test(seeded, warm_start_marks_points_visited);
    tcase_add_test(seeded, warm_start_trains_the_model);
    tcase_add_test(seeded, transfer_plans_the_first_batch);
    TCase *search = test_case(suite, "search", setup, teardown);
    tcase_add_test(search, genetic_beats_random);
    tcase_add_test(search, xgb_beats_random);
    TCase *errors = test_case(suite, "refusals", setup, teardown);
    tcase_add_test(errors, kind_names_round_trip);
    tcase_add_test(errors, refusals);
    tcase_add_test(errors, transfer_refusals);
    tcase_add_test(errors, xgb_without_the_library);
    return suite;
}

TEST_MAIN(tuner_suite)
