/*
 * Tuners (tcc/tune.h, "tuners"): what the four kinds share, and what each kind provides.
 *
 * tuner.c owns the common object: the space's knob lengths (a point's knobs are its index in
 * mixed radix, the first knob varying fastest, as AutoTVM's ConfigEntity numbers them), the
 * seeded random numbers, the set of points already proposed or measured (`visited`) and every
 * result given to tcc_tuner_update. A kind (tuner_search.c: random, grid, genetic;
 * tuner_xgb.c: the model-based one) sees them through this header and adds its own state.
 */
#ifndef TCI_TUNE_TUNER_H
#define TCI_TUNE_TUNER_H

#include "tcc/tune.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- random numbers: xoshiro256**, seeded through splitmix64 ---------------------------- */

/* Our own generator, so that a tuner given a seed proposes the same points on every
 * machine and libc (rand() is neither seeded per object nor portable). */
typedef struct TciRng {
    uint64_t s[4];
} TciRng;

void tci_rng_seed(TciRng *rng, uint64_t seed);
uint64_t tci_rng_next(TciRng *rng);
/* Uniform in [0, n) without modulo bias; n > 0. */
int64_t tci_rng_below(TciRng *rng, int64_t n);
/* Uniform in [0, 1). */
double tci_rng_unit(TciRng *rng);

/* ---- a set of point indices (open addressing) ------------------------------------------- */

typedef struct TciIndexSet {
    int64_t *slots; /* -1 where empty */
    int64_t capacity, count;
} TciIndexSet;

bool tci_index_set_has(const TciIndexSet *set, int64_t index);
/* Adds index (>= 0); false only when out of memory. */
bool tci_index_set_add(TciIndexSet *set, int64_t index);
void tci_index_set_free(TciIndexSet *set);

/* ---- the common tuner --------------------------------------------------------------------- */

typedef struct TciTunerOps {
    /* Fills up to `count` unvisited indices, marking each visited; *proposed says how many
     * (fewer only when the space runs out). */
    tcc_status (*next_batch)(tcc_tuner *tuner, int count, int64_t *indices, int *proposed);
    /* Called after tuner.c has appended results [first, result_count) and marked them
     * visited. NULL for kinds that learn nothing. */
    tcc_status (*update)(tcc_tuner *tuner, int64_t first);
    void (*destroy)(tcc_tuner *tuner); /* frees `state` (may be NULL) */
} TciTunerOps;

struct tcc_tuner {
    tcc_context *ctx; /* where next_batch's and update's errors go */
    tcc_tuner_kind kind;
    const tcc_config_space *space;
    int64_t size;
    int knob_count;
    int64_t *lengths; /* knob_count */
    TciRng rng;
    TciIndexSet visited;
    /* Every result given to tcc_tuner_update, in order (this tuner's and warm-start ones). */
    int64_t *result_index;
    double *result_score;
    int64_t result_count, result_capacity;
    /* Other workloads' results (tcc_tuner_transfer), for the model-based kind. */
    struct {
        int64_t *index, *group;
        double *score;
        int64_t count, capacity;
    } transfer;
    /* The unvisited points in random order, listed once half the space is visited
     * (tci_tuner_random_unvisited). */
    int64_t *dense_points;
    int64_t dense_count, dense_next;
    bool dense_made;
    const TciTunerOps *ops;
    void *state;
};

/* A point's knob choices (knob_count of them) and back (AutoTVM's point2knob, knob2point). */
void tci_tuner_point_to_knobs(const tcc_tuner *tuner, int64_t index, int64_t *knobs);
int64_t tci_tuner_knobs_to_point(const tcc_tuner *tuner, const int64_t *knobs);
/* Marks index visited; TCC_ERROR_OUT_OF_MEMORY (with the message) when the set cannot grow. */
tcc_status tci_tuner_visit(tcc_tuner *tuner, int64_t index);
/* A uniformly random point not visited yet, or -1 when all are (or out of memory, with the
 * error set). Does not mark it. */
int64_t tci_tuner_random_unvisited(tcc_tuner *tuner);

/* Point `index` (unvisited) as a proposal: marked visited, and in *proposed the point of the
 * space that builds its kernel with the fewest knobs set (tcc_config_space_canonical), marked
 * too; -1 where that point was visited already (its kernel was proposed or measured). */
tcc_status tci_tuner_propose(tcc_tuner *tuner, int64_t index, int64_t *proposed);

/* A random unvisited point as a proposal (tci_tuner_propose), in *index; -1 when none is
 * left. */
tcc_status tci_tuner_take_random(tcc_tuner *tuner, int64_t *index);

/* AutoTVM's submodular_pick with the scores zeroed, as ModelBasedTuner calls it: of the
 * `*count` points, best ranked first, greedily the one that adds the most knob values not yet
 * among those picked (the best ranked on ties), until `pick` are; they are moved to the front
 * and *count becomes how many. */
tcc_status tci_tuner_submodular_pick(tcc_tuner *tuner, int64_t *points, int *count, int pick);

/* Each kind's constructor: sets tuner->ops and tuner->state. */
tcc_status tci_tuner_init_random(tcc_tuner *tuner);
tcc_status tci_tuner_init_grid(tcc_tuner *tuner);
tcc_status tci_tuner_init_genetic(tcc_tuner *tuner);
tcc_status tci_tuner_init_xgb(tcc_tuner *tuner, const char *library);

/* The model-based tuner with the XGBoost library `library` (a dlopen name; NULL for the
 * usual libxgboost.so.0, then libxgboost.so): tests name a missing one to see the refusal. */
tcc_status tci_tuner_create_xgb(tcc_context *ctx, const tcc_config_space *space, uint64_t seed,
                                const char *library, tcc_tuner **out);
/* AutoTVM's diversity_filter_ratio for a model-based tuner: 0 (the default) picks the model's
 * top plan_size points; r >= 1 picks plan_size of its top plan_size * r by submodular_pick. */
tcc_status tci_tuner_set_diversity_filter_ratio(tcc_tuner *tuner, double ratio);

#endif
