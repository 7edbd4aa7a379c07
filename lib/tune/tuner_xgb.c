/*
 * The model-based tuner (AutoTVM's XGBTuner: ModelBasedTuner with XGBoostCostModel and
 * SimulatedAnnealingOptimizer): gradient-boosted trees ranking the configs' features
 * (rank:pairwise, depth 3), refit from every result each time plan_size (64) new ones came
 * in; simulated annealing over the space looks for the points the model ranks highest, which
 * are proposed best first, the last 5% of each plan random (epsilon-greedy). Until the first
 * model it proposes random points.
 *
 * XGBoost is opened at run time through its C API (the loader below), so tcc
 * builds and runs without it; only creating this tuner needs it.
 */
#include "tune/tuner.h"

#include "support/context.h"
#include "support/symbols.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_SIZE 64
/* Boosting rounds: AutoTVM allows 8000 and stops 20 rounds after the training set's average
 * recall@plan_size last improved; it stops within a few dozen rounds on tuning data, and the
 * cap only bounds a pathological set. */
#define MAX_ROUNDS 1000
#define STOPPING_ROUNDS 20
/* Simulated annealing (SimulatedAnnealingOptimizer's defaults). */
#define SA_PARALLEL 128
#define SA_ITERATIONS 500
#define SA_EARLY_STOP 50
/* Of the annealing's starting points, at most this many are the best measured ones. */
#define SA_SEEDED 32

/* ---- XGBoost's C API, the few entry points used --------------------------------------------- */

typedef void *XgbMatrix;
typedef void *XgbBooster;
typedef uint64_t XgbSize; /* bst_ulong */

typedef struct XgbApi {
    void *library;
    const char *name; /* the library opened */
    const char *(*XGBGetLastError)(void);
    int (*XGDMatrixCreateFromMat)(const float *data, XgbSize rows, XgbSize columns, float missing,
                                  XgbMatrix *out);
    int (*XGDMatrixSetFloatInfo)(XgbMatrix matrix, const char *field, const float *array,
                                 XgbSize length);
    int (*XGDMatrixSetUIntInfo)(XgbMatrix matrix, const char *field, const unsigned *array,
                                XgbSize length);
    int (*XGDMatrixFree)(XgbMatrix matrix);
    int (*XGBoosterCreate)(const XgbMatrix matrices[], XgbSize count, XgbBooster *out);
    int (*XGBoosterSetParam)(XgbBooster booster, const char *name, const char *value);
    int (*XGBoosterUpdateOneIter)(XgbBooster booster, int iteration, XgbMatrix train);
    int (*XGBoosterPredict)(XgbBooster booster, XgbMatrix matrix, int option_mask,
                            unsigned tree_limit, int training, XgbSize *length,
                            const float **result);
    int (*XGBoosterFree)(XgbBooster booster);
} XgbApi;

#define XGB_SYMBOL(name)                                                                           \
    {                                                                                              \
#name, NULL, offsetof(XgbApi, name), false                                                 \
    }
static const TciSymbol xgb_symbols[] = {
    XGB_SYMBOL(XGBGetLastError),       XGB_SYMBOL(XGDMatrixCreateFromMat),
    XGB_SYMBOL(XGDMatrixSetFloatInfo), XGB_SYMBOL(XGDMatrixSetUIntInfo),
    XGB_SYMBOL(XGDMatrixFree),         XGB_SYMBOL(XGBoosterCreate),
    XGB_SYMBOL(XGBoosterSetParam),     XGB_SYMBOL(XGBoosterUpdateOneIter),
    XGB_SYMBOL(XGBoosterPredict),      XGB_SYMBOL(XGBoosterFree),
};

/* Debian's libxgboost0 installs the first; a pip or source build of XGBoost the second. */
static const char *const xgb_libraries[] = {"libxgboost.so.0", "libxgboost.so"};

static tcc_status open_xgboost(tcc_context *ctx, const char *library, XgbApi *api)
{
    /* RTLD_NODELETE: the library stays mapped after dlclose, as its OpenMP threads and static
     * registries outlive a tuner (and a leak checker then still sees what they point to). */
    int flags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;
    const char *why = NULL;
    size_t n = library ? 1 : sizeof xgb_libraries / sizeof xgb_libraries[0];
    for (size_t i = 0; i < n && !api->library; i++) {
        api->name = library ? library : xgb_libraries[i];
        api->library = dlopen(api->name, flags);
        if (!api->library && i == 0)
            why = dlerror(); /* the first name's error says most */
    }
    if (!api->library)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "the xgb tuner needs XGBoost: cannot load %s (Debian: apt-get install "
                        "libxgboost0): %s",
                        library ? library : xgb_libraries[0], why ? why : "not found");
    const char *missing = tci_resolve_symbols(tci_dlsym, api->library, xgb_symbols,
                                              sizeof xgb_symbols / sizeof xgb_symbols[0], api);
    return missing ? tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                              "%s has no symbol %s: not XGBoost's C API", api->name, missing)
                   : TCC_OK;
}

static tcc_status xgb_fail(tcc_tuner *tuner, const XgbApi *api, const char *call)
{
    const char *why = api->XGBGetLastError();
    /* XGBoost's messages span lines (a source location, then the reason): keep the last. */
    const char *line = why ? why : "no message";
    for (const char *p = line; *p; p++)
        if (*p == '\n' && p[1])
            line = p + 1;
    int length = (int)strcspn(line, "\n");
    return tci_fail(tuner->ctx, TCC_ERROR_UNSUPPORTED, "XGBoost's %s failed: %.*s", call, length,
                    line);
}

#define XGB_CHECK(tuner, api, call, args)                                                          \
    do {                                                                                           \
        if ((api)->call args != 0)                                                                 \
            return xgb_fail((tuner), (api), #call);                                                \
    } while (0)

/* ---- the tuner's state --------------------------------------------------------------------------
 */

typedef struct Model {
    XgbApi api;
    XgbBooster booster; /* NULL before the first fit */
    unsigned trees;     /* the rounds up to the best one, which predictions use */
    int features;       /* per point */
    double *values;     /* one point's features, as the space gives them */
    float *rows;        /* rows of features for a prediction, reused */
    int64_t row_capacity;
    /* The plan: the points the model ranked highest, best first. */
    int64_t *trials;
    int64_t trial_count, trial_next;
    int64_t results_fitted; /* tuner->result_count at the last fit */
    double diversity_filter_ratio;
    int64_t sa_points[SA_PARALLEL]; /* where the annealing walks, kept across plans */
    int sa_count;
} Model;

/* XGBoost takes float32 rows. */
static void point_features(const tcc_tuner *tuner, Model *model, int64_t point, float *row)
{
    tcc_config_space_features(tuner->space, point, model->values, model->features);
    for (int j = 0; j < model->features; j++)
        row[j] = (float)model->values[j];
}

static tcc_status feature_rows(tcc_tuner *tuner, Model *model, const int64_t *points, int64_t count)
{
    int f = model->features;
    if (count > model->row_capacity) {
        float *rows = realloc(model->rows, (size_t)count * (size_t)f * sizeof *rows);
        if (!rows)
            return tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory for features");
        model->rows = rows;
        model->row_capacity = count;
    }
    for (int64_t i = 0; i < count; i++)
        point_features(tuner, model, points[i], model->rows + i * f);
    return TCC_OK;
}

/* The model's scores of `count` points (higher: ranked better). */
static tcc_status predict(tcc_tuner *tuner, Model *model, const int64_t *points, int64_t count,
                          double *scores)
{
    const XgbApi *api = &model->api;
    tcc_status status = feature_rows(tuner, model, points, count);
    if (status != TCC_OK)
        return status;
    XgbMatrix matrix = NULL;
    XGB_CHECK(tuner, api, XGDMatrixCreateFromMat,
              (model->rows, (XgbSize)count, (XgbSize)model->features, NAN, &matrix));
    XgbSize length = 0;
    const float *result = NULL;
    int failed =
        api->XGBoosterPredict(model->booster, matrix, 0, model->trees, 0, &length, &result);
    if (!failed && length != (XgbSize)count)
        failed = -1;
    for (int64_t i = 0; !failed && i < count; i++)
        scores[i] = result[i];
    api->XGDMatrixFree(matrix);
    return failed ? xgb_fail(tuner, api, "XGBoosterPredict") : TCC_OK;
}

/* ---- fitting ------------------------------------------------------------------------------------
 */

typedef struct Ranked {
    double key;
    int64_t position;
} Ranked;

/* Descending by key, ties by position: a stable order, so that fits are reproducible. */
static int by_key_descending(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? 1 : -1;
    return (x->position > y->position) - (x->position < y->position);
}

/* AutoTVM's a-recall@n (xgb_average_recalln_curve_score): the training points in the order the
 * model ranks them; at each of the first n, the share of those before it that are among the
 * labels' best that far. `label_rank[i]`: point i's rank by label (0 the best). */
static double average_recall(const float *predictions, const int64_t *label_rank, int64_t count,
                             int n, Ranked *order)
{
    for (int64_t i = 0; i < count; i++)
        order[i] = (Ranked){predictions[i], i};
    qsort(order, (size_t)count, sizeof *order, by_key_descending);
    double sum = 0;
    for (int i = 0; i < n && i < count; i++) {
        int64_t hits = 0;
        for (int j = 0; j < i; j++)
            hits += label_rank[order[j].position] <= i;
        sum += (double)hits / (i + 1);
    }
    return sum / n;
}

typedef struct TrainSet {
    float *rows, *labels;
    int64_t *label_rank;
    Ranked *order;
    int64_t count;
    unsigned *group_sizes; /* XGBoost's query groups: consecutive rows ranked together */
    int group_count;
} TrainSet;

static void free_train_set(TrainSet *set)
{
    free(set->rows);
    free(set->labels);
    free(set->label_rank);
    free(set->order);
    free(set->group_sizes);
}

/* The rows' points in order: other workloads' results (tcc_tuner_transfer) grouped by
 * workload, then this workload's in a random order (as AutoTVM permutes them). */
static void order_points(tcc_tuner *tuner, Ranked *order, int64_t *points, double *scores,
                         int64_t *groups)
{
    int64_t other = tuner->transfer.count, own = tuner->result_count;
    for (int64_t i = 0; i < other; i++)
        order[i] = (Ranked){(double)tuner->transfer.group[i], i};
    qsort(order, (size_t)other, sizeof *order, by_key_descending);
    for (int64_t i = 0; i < other; i++) {
        int64_t from = order[i].position;
        points[i] = tuner->transfer.index[from];
        scores[i] = tuner->transfer.score[from];
        groups[i] = tuner->transfer.group[from];
    }
    for (int64_t i = 0; i < own; i++)
        order[i] = (Ranked){0, i};
    for (int64_t i = own - 1; i > 0; i--) {
        int64_t j = tci_rng_below(&tuner->rng, i + 1);
        Ranked t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    /* A group of its own: any number but that of the rows before it. */
    int64_t own_group = other && groups[other - 1] == 0 ? 1 : 0;
    for (int64_t i = 0; i < own; i++) {
        int64_t from = order[i].position;
        points[other + i] = tuner->result_index[from];
        scores[other + i] = tuner->result_score[from];
        groups[other + i] = own_group;
    }
}

/* Labels: each score divided by the best of its group, so that every workload ranks on the
 * same scale; a group's size for XGBoost. */
static void label_groups(TrainSet *set, const double *scores, const int64_t *groups)
{
    for (int64_t start = 0, end; start < set->count; start = end) {
        double best = 1e-8;
        for (end = start; end < set->count && groups[end] == groups[start]; end++)
            best = fmax(best, scores[end]);
        for (int64_t i = start; i < end; i++)
            set->labels[i] = (float)(scores[i] / best);
        set->group_sizes[set->group_count++] = (unsigned)(end - start);
    }
}

static tcc_status make_train_set(tcc_tuner *tuner, Model *model, TrainSet *set)
{
    int64_t n = tuner->result_count + tuner->transfer.count;
    size_t slots = (size_t)n + 1;
    int64_t *points = malloc(slots * sizeof *points), *groups = malloc(slots * sizeof *groups);
    double *scores = malloc(slots * sizeof *scores);
    set->count = n;
    set->labels = malloc(slots * sizeof *set->labels);
    set->label_rank = malloc(slots * sizeof *set->label_rank);
    set->order = malloc(slots * sizeof *set->order);
    set->group_sizes = malloc(slots * sizeof *set->group_sizes);
    set->rows = malloc(slots * (size_t)model->features * sizeof *set->rows);
    bool ok = points && groups && scores && set->labels && set->label_rank && set->order &&
              set->group_sizes && set->rows;
    if (ok) {
        order_points(tuner, set->order, points, scores, groups);
        label_groups(set, scores, groups);
        for (int64_t i = 0; i < n; i++)
            point_features(tuner, model, points[i], set->rows + i * model->features);
        for (int64_t i = 0; i < n; i++)
            set->order[i] = (Ranked){set->labels[i], i};
        qsort(set->order, (size_t)n, sizeof *set->order, by_key_descending);
        for (int64_t i = 0; i < n; i++)
            set->label_rank[set->order[i].position] = i;
    }
    free(points);
    free(groups);
    free(scores);
    return ok ? TCC_OK
              : tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory fitting the model");
}

static tcc_status set_parameters(tcc_tuner *tuner, Model *model, XgbBooster booster)
{
    /* XGBTuner's rank model (XGBoostCostModel, loss_type "rank"); one thread, so that a seed
     * gives the same trees everywhere and the tuner shares the host with the compiles. */
    char seed[32];
    snprintf(seed, sizeof seed, "%u", (unsigned)(tci_rng_next(&tuner->rng) >> 33));
    const char *params[][2] = {
        {"verbosity", "0"},
        {"nthread", "1"},
        {"objective", "rank:pairwise"},
        {"max_depth", "3"},
        {"eta", "0.3"},
        {"gamma", "0.0001"},
        {"min_child_weight", "1"},
        {"subsample", "1.0"},
        {"lambda", "1"},
        {"alpha", "0"},
        {"seed", seed},
    };
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++)
        XGB_CHECK(tuner, &model->api, XGBoosterSetParam, (booster, params[i][0], params[i][1]));
    return TCC_OK;
}

/* Boosts until the training set's a-recall@plan_size has not improved for STOPPING_ROUNDS
 * rounds (AutoTVM's custom_callback); predictions then use the rounds up to the best. */
static tcc_status boost(tcc_tuner *tuner, Model *model, XgbBooster booster, XgbMatrix train,
                        TrainSet *set)
{
    const XgbApi *api = &model->api;
    double best = -1;
    int best_round = 0;
    for (int round = 0; round < MAX_ROUNDS && round - best_round < STOPPING_ROUNDS; round++) {
        XGB_CHECK(tuner, api, XGBoosterUpdateOneIter, (booster, round, train));
        XgbSize length = 0;
        const float *predictions = NULL;
        XGB_CHECK(tuner, api, XGBoosterPredict, (booster, train, 0, 0, 0, &length, &predictions));
        if (length != (XgbSize)set->count)
            return tci_fail(tuner->ctx, TCC_ERROR_UNSUPPORTED,
                            "XGBoost predicted %llu values for %lld points",
                            (unsigned long long)length, (long long)set->count);
        double recall =
            average_recall(predictions, set->label_rank, set->count, PLAN_SIZE, set->order);
        if (recall > best) {
            best = recall;
            best_round = round;
        }
    }
    model->trees = (unsigned)best_round + 1;
    return TCC_OK;
}

static tcc_status fit(tcc_tuner *tuner, Model *model)
{
    const XgbApi *api = &model->api;
    TrainSet set = {0};
    XgbMatrix train = NULL;
    XgbBooster booster = NULL;
    tcc_status status = make_train_set(tuner, model, &set);
    if (status == TCC_OK && api->XGDMatrixCreateFromMat(set.rows, (XgbSize)set.count,
                                                        (XgbSize)model->features, NAN, &train))
        status = xgb_fail(tuner, api, "XGDMatrixCreateFromMat");
    if (status == TCC_OK &&
        (api->XGDMatrixSetFloatInfo(train, "label", set.labels, (XgbSize)set.count) ||
         api->XGDMatrixSetUIntInfo(train, "group", set.group_sizes, (XgbSize)set.group_count)))
        status = xgb_fail(tuner, api, "XGDMatrixSetFloatInfo/SetUIntInfo");
    if (status == TCC_OK && api->XGBoosterCreate(&train, 1, &booster))
        status = xgb_fail(tuner, api, "XGBoosterCreate");
    if (status == TCC_OK)
        status = set_parameters(tuner, model, booster);
    if (status == TCC_OK)
        status = boost(tuner, model, booster, train, &set);
    if (status == TCC_OK) {
        if (model->booster)
            api->XGBoosterFree(model->booster);
        model->booster = booster;
        booster = NULL;
    }
    if (booster)
        api->XGBoosterFree(booster);
    if (train)
        api->XGDMatrixFree(train);
    free_train_set(&set);
    return status;
}

/* ---- simulated annealing over the model -------------------------------------------------------
 */

/* The best `capacity` points found, none visited, none twice, each its kernel's canonical
 * point. */
typedef struct Best {
    int64_t *points;
    double *scores;
    int count, capacity, lowest; /* lowest: the position of the lowest score when full */
} Best;

static bool best_has(const Best *best, int64_t point)
{
    for (int i = 0; i < best->count; i++)
        if (best->points[i] == point)
            return true;
    return false;
}

/* A point the model scores `score`, as the point of the space that builds its kernel
 * (tcc_config_space_canonical): the plan holds distinct kernels. */
static bool best_offer(const tcc_tuner *tuner, Best *best, int64_t point, double score)
{
    bool full = best->count == best->capacity;
    if (full && score <= best->scores[best->lowest])
        return false;
    int64_t canonical = tcc_config_space_canonical(tuner->space, point);
    point = canonical >= 0 ? canonical : point;
    if (tci_index_set_has(&tuner->visited, point) || best_has(best, point))
        return false;
    int at = full ? best->lowest : best->count++;
    best->points[at] = point;
    best->scores[at] = score;
    if (best->count == best->capacity) {
        best->lowest = 0;
        for (int i = 1; i < best->count; i++)
            if (best->scores[i] < best->scores[best->lowest])
                best->lowest = i;
    }
    return true;
}

/* A neighbour: one knob changed to another of its values (AutoTVM's random_walk). */
static int64_t random_walk(tcc_tuner *tuner, int64_t point, int64_t *knobs)
{
    if (tuner->size < 2)
        return point;
    tci_tuner_point_to_knobs(tuner, point, knobs);
    int k;
    do
        k = (int)tci_rng_below(&tuner->rng, tuner->knob_count);
    while (tuner->lengths[k] < 2);
    int64_t value = tci_rng_below(&tuner->rng, tuner->lengths[k] - 1);
    knobs[k] = value >= knobs[k] ? value + 1 : value;
    return tci_tuner_knobs_to_point(tuner, knobs);
}

/* Where the walks start: those of the last plan (AutoTVM's persistent points, random the first
 * time), the first of them replaced by the best points measured so far, so that the search
 * also refines around what is known to be good. */
static void start_points(tcc_tuner *tuner, Model *model, Ranked *order)
{
    if (model->sa_count == 0) {
        model->sa_count = SA_PARALLEL;
        for (int i = 0; i < SA_PARALLEL; i++)
            model->sa_points[i] = tci_rng_below(&tuner->rng, tuner->size);
    }
    int64_t n = tuner->result_count;
    for (int64_t i = 0; i < n; i++)
        order[i] = (Ranked){tuner->result_score[i], i};
    qsort(order, (size_t)n, sizeof *order, by_key_descending);
    for (int i = 0; i < SA_SEEDED && i < n && order[i].key > 0; i++)
        model->sa_points[i] = tuner->result_index[order[i].position];
}

typedef struct Anneal {
    int64_t points[SA_PARALLEL], next[SA_PARALLEL];
    double scores[SA_PARALLEL], next_scores[SA_PARALLEL];
} Anneal;

/* One step of every walk; *improved when one of them found a point among the best. */
static tcc_status anneal_step(tcc_tuner *tuner, Model *model, Anneal *a, double temperature,
                              int64_t *knobs, Best *best, bool *improved)
{
    for (int i = 0; i < SA_PARALLEL; i++)
        a->next[i] = random_walk(tuner, a->points[i], knobs);
    tcc_status status = predict(tuner, model, a->next, SA_PARALLEL, a->next_scores);
    if (status != TCC_OK)
        return status;
    for (int i = 0; i < SA_PARALLEL; i++) {
        double gain = a->next_scores[i] - a->scores[i];
        if (gain >= 0 || tci_rng_unit(&tuner->rng) < exp(gain / temperature)) {
            a->points[i] = a->next[i];
            a->scores[i] = a->next_scores[i];
        }
        *improved |= best_offer(tuner, best, a->next[i], a->next_scores[i]);
    }
    return TCC_OK;
}

/* AutoTVM's SimulatedAnnealingOptimizer.find_maximums: up to `num` unvisited points the model
 * scores highest, best first, in best->points. The temperature falls from 1 towards 0 over
 * SA_ITERATIONS steps; the search stops early when the best set stops changing. */
static tcc_status find_maximums(tcc_tuner *tuner, Model *model, Best *best)
{
    Anneal *a = malloc(sizeof *a);
    int64_t *knobs = malloc(((size_t)tuner->knob_count + 1) * sizeof *knobs);
    /* Sorts the results, then the best points found. */
    int64_t ranked = tuner->result_count > best->capacity ? tuner->result_count : best->capacity;
    Ranked *order = malloc(((size_t)ranked + 1) * sizeof *order);
    tcc_status status = TCC_OK;
    if (!a || !knobs || !order)
        status = tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory annealing");
    if (status == TCC_OK) {
        start_points(tuner, model, order);
        memcpy(a->points, model->sa_points, sizeof a->points);
        status = predict(tuner, model, a->points, SA_PARALLEL, a->scores);
    }
    for (int i = 0; status == TCC_OK && i < SA_PARALLEL; i++)
        best_offer(tuner, best, a->points[i], a->scores[i]);
    double temperature = 1, cool = 1.0 / (SA_ITERATIONS + 1);
    for (int k = 0, last = 0; status == TCC_OK && k < SA_ITERATIONS && k < last + SA_EARLY_STOP;
         k++, temperature -= cool) {
        bool improved = false;
        status = anneal_step(tuner, model, a, temperature, knobs, best, &improved);
        if (improved)
            last = k;
    }
    if (status == TCC_OK) {
        memcpy(model->sa_points, a->points, sizeof a->points);
        for (int i = 0; i < best->count; i++)
            order[i] = (Ranked){best->scores[i], best->points[i]};
        qsort(order, (size_t)best->count, sizeof *order, by_key_descending);
        for (int i = 0; i < best->count; i++) {
            best->points[i] = order[i].position;
            best->scores[i] = order[i].key;
        }
    }
    free(a);
    free(knobs);
    free(order);
    return status;
}

/* ---- the tuner
 * ------------------------------------------------------------------------------------ */

/* A new plan from a fresh model: its plan_size best points, or with a diversity filter the
 * plan_size most diverse of its plan_size * ratio best. */
static tcc_status plan(tcc_tuner *tuner, Model *model)
{
    int capacity = PLAN_SIZE;
    if (model->diversity_filter_ratio >= 1)
        capacity = (int)(PLAN_SIZE * model->diversity_filter_ratio);
    Best best = {.capacity = capacity};
    best.points = malloc((size_t)capacity * sizeof *best.points);
    best.scores = malloc((size_t)capacity * sizeof *best.scores);
    tcc_status status = TCC_OK;
    if (!best.points || !best.scores)
        status = tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory planning trials");
    if (status == TCC_OK)
        status = find_maximums(tuner, model, &best);
    if (status == TCC_OK && capacity > PLAN_SIZE)
        status = tci_tuner_submodular_pick(tuner, best.points, &best.count, PLAN_SIZE);
    if (status == TCC_OK) {
        free(model->trials);
        model->trials = best.points;
        model->trial_count = best.count;
        model->trial_next = 0;
        best.points = NULL;
    }
    free(best.points);
    free(best.scores);
    return status;
}

static bool any_positive(const double *scores, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        if (scores[i] > 1e-6)
            return true;
    return false;
}

/* A model fitted to other workloads' results (tcc_tuner_transfer) plans the first batch, where
 * there are a plan's worth of them and something to rank. */
static tcc_status plan_from_transfer(tcc_tuner *tuner, Model *model)
{
    if (model->booster || tuner->transfer.count < PLAN_SIZE ||
        !any_positive(tuner->transfer.score, tuner->transfer.count))
        return TCC_OK;
    tcc_status status = fit(tuner, model);
    return status == TCC_OK ? plan(tuner, model) : status;
}

static tcc_status xgb_next_batch(tcc_tuner *tuner, int count, int64_t *indices, int *proposed)
{
    Model *model = tuner->state;
    tcc_status planned = plan_from_transfer(tuner, model);
    if (planned != TCC_OK)
        return planned;
    while (*proposed < count && tcc_tuner_has_next(tuner)) {
        while (model->trial_next < model->trial_count &&
               tci_index_set_has(&tuner->visited, model->trials[model->trial_next]))
            model->trial_next++;
        int64_t index;
        tcc_status status;
        /* ModelBasedTuner's epsilon-greedy: once no more than 5% of the plan is left (or there is
         * no plan yet), a random point. */
        if (model->trial_next >= model->trial_count - (int64_t)(0.05 * PLAN_SIZE)) {
            status = tci_tuner_take_random(tuner, &index);
            if (status == TCC_OK && index < 0)
                break;
        } else {
            status = tci_tuner_propose(tuner, model->trials[model->trial_next++], &index);
        }
        if (status != TCC_OK)
            return status;
        if (index >= 0)
            indices[(*proposed)++] = index;
    }
    return TCC_OK;
}

/* Refits from every result once plan_size new ones came in, unless every score is still 0
 * (nothing to rank). */
static tcc_status xgb_update(tcc_tuner *tuner, int64_t first)
{
    (void)first;
    Model *model = tuner->state;
    if (tuner->result_count - model->results_fitted < PLAN_SIZE ||
        !(any_positive(tuner->result_score, tuner->result_count) ||
          any_positive(tuner->transfer.score, tuner->transfer.count)))
        return TCC_OK;
    model->results_fitted = tuner->result_count;
    tcc_status status = fit(tuner, model);
    return status == TCC_OK ? plan(tuner, model) : status;
}

static void xgb_destroy(tcc_tuner *tuner)
{
    Model *model = tuner->state;
    if (!model)
        return;
    if (model->booster)
        model->api.XGBoosterFree(model->booster);
    if (model->api.library)
        dlclose(model->api.library);
    free(model->values);
    free(model->rows);
    free(model->trials);
    free(model);
}

static const TciTunerOps xgb_ops = {
    .next_batch = xgb_next_batch, .update = xgb_update, .destroy = xgb_destroy};

tcc_status tci_tuner_init_xgb(tcc_tuner *tuner, const char *library)
{
    Model *model = calloc(1, sizeof *model);
    tuner->state = model;
    tuner->ops = &xgb_ops;
    if (!model)
        return tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory creating a tuner");
    double none;
    model->features = tcc_config_space_features(tuner->space, 0, &none, 0);
    if (model->features <= 0)
        return tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "the xgb tuner needs features, and the config space has none");
    model->values = malloc((size_t)model->features * sizeof *model->values);
    if (!model->values)
        return tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory creating a tuner");
    return open_xgboost(tuner->ctx, library, &model->api);
}

tcc_status tci_tuner_set_diversity_filter_ratio(tcc_tuner *tuner, double ratio)
{
    if (!tuner || tuner->kind != TCC_TUNER_XGB)
        return tuner ? tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT,
                                "a diversity filter is for the xgb tuner only")
                     : TCC_ERROR_INVALID_ARGUMENT;
    /* AutoTVM asserts the ratio is at least 1; past 64 the plan's candidates get unwieldy. */
    if (!(ratio == 0 || (ratio >= 1 && ratio <= 64)))
        return tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "diversity filter ratio %g: 0 (none) or 1 to 64", ratio);
    ((Model *)tuner->state)->diversity_filter_ratio = ratio;
    return TCC_OK;
}
