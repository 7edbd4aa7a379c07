/*
 * The tuners without a model: random (AutoTVM's RandomTuner: uniform, no point twice), grid
 * (GridSearchTuner: indices in order) and genetic (GATuner: a population of 100 knob vectors,
 * 3 elites, crossover of knob choices, mutation of each knob with probability 0.1, fitness the
 * score, children only among unvisited points).
 */
#include "tune/tuner.h"

#include "support/context.h"

#include <stdlib.h>
#include <string.h>

/* ---- random ------------------------------------------------------------------------------------
 */

static tcc_status random_next_batch(tcc_tuner *tuner, int count, int64_t *indices, int *proposed)
{
    while (*proposed < count) {
        int64_t index;
        tcc_status status = tci_tuner_take_random(tuner, &index);
        if (status != TCC_OK)
            return status;
        if (index < 0)
            break;
        indices[(*proposed)++] = index;
    }
    return TCC_OK;
}

static const TciTunerOps random_ops = {.next_batch = random_next_batch};

tcc_status tci_tuner_init_random(tcc_tuner *tuner)
{
    tuner->ops = &random_ops;
    return TCC_OK;
}

/* ---- grid --------------------------------------------------------------------------------------
 */

/* The state is the next index to look at; points visited by results are stepped over. */
static tcc_status grid_next_batch(tcc_tuner *tuner, int count, int64_t *indices, int *proposed)
{
    int64_t *cursor = tuner->state;
    for (; *cursor < tuner->size && *proposed < count; ++*cursor) {
        if (tci_index_set_has(&tuner->visited, *cursor))
            continue;
        int64_t index;
        tcc_status status = tci_tuner_propose(tuner, *cursor, &index);
        if (status != TCC_OK)
            return status;
        if (index >= 0)
            indices[(*proposed)++] = index;
    }
    return TCC_OK;
}

static void free_state(tcc_tuner *tuner)
{
    free(tuner->state);
}

static const TciTunerOps grid_ops = {.next_batch = grid_next_batch, .destroy = free_state};

tcc_status tci_tuner_init_grid(tcc_tuner *tuner)
{
    tuner->state = calloc(1, sizeof(int64_t));
    if (!tuner->state)
        return tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory creating a tuner");
    tuner->ops = &grid_ops;
    return TCC_OK;
}

/* ---- genetic -----------------------------------------------------------------------------------
 */

#define POPULATION 100
#define ELITES 3
#define MUTATION_PROBABILITY 0.1
/* Re-mutations of a child that landed on a visited point before a random point replaces it. */
#define MAX_REMUTATIONS 64

typedef struct Genetic {
    /* The generation being proposed, front to back. */
    int64_t generation[POPULATION];
    int generation_count, generation_next;
    /* Who breeds: the results since the last breeding and the elites, kept for a breeding
     * that finds no new result (the caller asked for more before updating). */
    int64_t *parents;
    double *parent_scores;
    int64_t parent_count;
    int64_t elites[ELITES];
    double elite_scores[ELITES];
    int elite_count;
    int64_t results_bred; /* tuner->result_count at the last breeding */
    int64_t *knobs;       /* 3 x knob_count: two parents and the child */
} Genetic;

/* The ELITES best of the parents, best first (ties: the earlier). */
static void choose_elites(Genetic *ga)
{
    int64_t best[ELITES];
    int n = 0;
    for (int64_t i = 0; i < ga->parent_count; i++) {
        int at = n < ELITES ? n++ : ELITES;
        while (at > 0 && ga->parent_scores[best[at - 1]] < ga->parent_scores[i]) {
            if (at < ELITES)
                best[at] = best[at - 1];
            at--;
        }
        if (at < ELITES)
            best[at] = i;
    }
    for (int e = 0; e < n; e++) {
        ga->elites[e] = ga->parents[best[e]];
        ga->elite_scores[e] = ga->parent_scores[best[e]];
    }
    ga->elite_count = n;
}

/* The parents of the next generation: the new results and the elites. False when out of
 * memory. */
static bool gather_parents(tcc_tuner *tuner, Genetic *ga)
{
    int64_t fresh = tuner->result_count - ga->results_bred;
    if (fresh == 0)
        return true; /* breed again from the same parents */
    int64_t count = fresh + ga->elite_count;
    int64_t *parents = malloc((size_t)count * sizeof *parents);
    double *scores = malloc((size_t)count * sizeof *scores);
    if (!parents || !scores) {
        free(parents);
        free(scores);
        return false;
    }
    memcpy(parents, tuner->result_index + ga->results_bred, (size_t)fresh * sizeof *parents);
    memcpy(scores, tuner->result_score + ga->results_bred, (size_t)fresh * sizeof *scores);
    memcpy(parents + fresh, ga->elites, (size_t)ga->elite_count * sizeof *parents);
    memcpy(scores + fresh, ga->elite_scores, (size_t)ga->elite_count * sizeof *scores);
    free(ga->parents);
    free(ga->parent_scores);
    ga->parents = parents;
    ga->parent_scores = scores;
    ga->parent_count = count;
    ga->results_bred = tuner->result_count;
    choose_elites(ga);
    return true;
}

/* A parent drawn with probability proportional to its score (uniformly when every score is 0),
 * never `other` (AutoTVM draws its two parents without replacement). */
static int64_t roulette(tcc_tuner *tuner, const Genetic *ga, int64_t other)
{
    double total = 0;
    for (int64_t i = 0; i < ga->parent_count; i++)
        if (i != other)
            total += ga->parent_scores[i];
    if (total <= 0) {
        int64_t n = ga->parent_count - (other >= 0);
        int64_t pick = tci_rng_below(&tuner->rng, n);
        return other >= 0 && pick >= other ? pick + 1 : pick;
    }
    double x = tci_rng_unit(&tuner->rng) * total;
    int64_t last = -1;
    for (int64_t i = 0; i < ga->parent_count; i++) {
        if (i == other || ga->parent_scores[i] <= 0)
            continue;
        last = i;
        x -= ga->parent_scores[i];
        if (x < 0)
            return i;
    }
    return last; /* rounding left x just above 0 */
}

static bool in_generation(const Genetic *ga, int64_t index)
{
    for (int i = 0; i < ga->generation_count; i++)
        if (ga->generation[i] == index)
            return true;
    return false;
}

static bool fresh_point(const tcc_tuner *tuner, const Genetic *ga, int64_t index)
{
    return !tci_index_set_has(&tuner->visited, index) && !in_generation(ga, index);
}

/* One child: crossover of two parents' knobs at a random point, then mutation; re-mutated
 * while it is a point already visited or in this generation. -1 when that keeps failing. */
static int64_t make_child(tcc_tuner *tuner, Genetic *ga)
{
    int n = tuner->knob_count;
    int64_t *a = ga->knobs, *b = a + n, *child = b + n;
    int64_t first = roulette(tuner, ga, -1);
    int64_t second = ga->parent_count > 1 ? roulette(tuner, ga, first) : first;
    tci_tuner_point_to_knobs(tuner, ga->parents[first], a);
    tci_tuner_point_to_knobs(tuner, ga->parents[second], b);
    int point = n > 0 ? (int)tci_rng_below(&tuner->rng, n) : 0;
    for (int k = 0; k < n; k++)
        child[k] = k < point ? a[k] : b[k];
    for (int k = 0; k < n; k++)
        if (tci_rng_unit(&tuner->rng) < MUTATION_PROBABILITY)
            child[k] = tci_rng_below(&tuner->rng, tuner->lengths[k]);
    for (int attempt = 0; attempt < MAX_REMUTATIONS && n > 0; attempt++) {
        int64_t index = tci_tuner_knobs_to_point(tuner, child);
        if (fresh_point(tuner, ga, index))
            return index;
        int k = (int)tci_rng_below(&tuner->rng, n);
        child[k] = tci_rng_below(&tuner->rng, tuner->lengths[k]);
    }
    return -1;
}

/* A random point for the generation (the first one, or a child that found no free point). */
static int64_t random_member(tcc_tuner *tuner, const Genetic *ga)
{
    for (int attempt = 0; attempt < MAX_REMUTATIONS; attempt++) {
        int64_t index = tci_tuner_random_unvisited(tuner);
        if (index < 0 || !in_generation(ga, index))
            return index;
    }
    return -1;
}

static tcc_status breed(tcc_tuner *tuner, Genetic *ga)
{
    if (!gather_parents(tuner, ga))
        return tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory breeding a generation");
    ga->generation_count = ga->generation_next = 0;
    int64_t unvisited = tuner->size - tuner->visited.count;
    while (ga->generation_count < POPULATION && ga->generation_count < unvisited) {
        int64_t index = ga->parent_count > 0 ? make_child(tuner, ga) : -1;
        if (index < 0)
            index = random_member(tuner, ga);
        if (index < 0)
            break; /* the few points left keep eluding: propose the ones found */
        ga->generation[ga->generation_count++] = index;
    }
    if (ga->generation_count == 0 && unvisited > 0) {
        int64_t index = tci_tuner_random_unvisited(tuner);
        if (index < 0)
            return TCC_ERROR_OUT_OF_MEMORY; /* set by tci_tuner_random_unvisited */
        ga->generation[ga->generation_count++] = index;
    }
    return TCC_OK;
}

static tcc_status genetic_next_batch(tcc_tuner *tuner, int count, int64_t *indices, int *proposed)
{
    Genetic *ga = tuner->state;
    while (*proposed < count && tcc_tuner_has_next(tuner)) {
        if (ga->generation_next == ga->generation_count) {
            tcc_status status = breed(tuner, ga);
            if (status != TCC_OK)
                return status;
        }
        int64_t index = ga->generation[ga->generation_next++];
        if (tci_index_set_has(&tuner->visited, index))
            continue; /* a result for it came in since it was bred */
        tcc_status status = tci_tuner_propose(tuner, index, &index);
        if (status != TCC_OK)
            return status;
        if (index >= 0)
            indices[(*proposed)++] = index;
    }
    return TCC_OK;
}

/* A whole generation's worth of results breeds the next one at once, as AutoTVM does when
 * every gene of a generation is scored; what is left of the old one is dropped. */
static tcc_status genetic_update(tcc_tuner *tuner, int64_t first)
{
    (void)first;
    Genetic *ga = tuner->state;
    if (tuner->result_count - ga->results_bred < POPULATION)
        return TCC_OK;
    return breed(tuner, ga);
}

static void genetic_destroy(tcc_tuner *tuner)
{
    Genetic *ga = tuner->state;
    if (!ga)
        return;
    free(ga->parents);
    free(ga->parent_scores);
    free(ga->knobs);
    free(ga);
}

static const TciTunerOps genetic_ops = {
    .next_batch = genetic_next_batch, .update = genetic_update, .destroy = genetic_destroy};

tcc_status tci_tuner_init_genetic(tcc_tuner *tuner)
{
    Genetic *ga = calloc(1, sizeof *ga);
    if (ga)
        ga->knobs = calloc(3 * (size_t)tuner->knob_count + 1, sizeof *ga->knobs);
    tuner->state = ga;
    tuner->ops = &genetic_ops;
    if (!ga || !ga->knobs)
        return tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory creating a tuner");
    return TCC_OK;
}
