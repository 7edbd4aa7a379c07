/*
 * Tuners: the common object (tune/tuner.h), kind names, the set of visited points and the
 * dispatch of has_next / next_batch / update to each kind.
 *
 * A point is "visited" once the tuner proposed it or a result for it came in (AutoTVM's
 * `visited`): no tuner proposes a point twice, and results of points the tuner never proposed
 * (earlier records, warm start) count as measured.
 */
#include "tune/tuner.h"

#include "support/context.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers ------------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void tci_rng_seed(TciRng *rng, uint64_t seed)
{
    /* splitmix64 spreads any seed (0 included) over the four words xoshiro needs nonzero. */
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t tci_rng_next(TciRng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

int64_t tci_rng_below(TciRng *rng, int64_t n)
{
    /* Draws past the largest multiple of n are redrawn, so every residue is equally likely. */
    uint64_t range = (uint64_t)n;
    uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    uint64_t x;
    do
        x = tci_rng_next(rng);
    while (x >= limit);
    return (int64_t)(x % range);
}

double tci_rng_unit(TciRng *rng)
{
    return (double)(tci_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* ---- the set of indices ---------------------------------------------------------------------- */

static int64_t slot_of(int64_t index, int64_t capacity)
{
    uint64_t h = (uint64_t)index * 0x9e3779b97f4a7c15ULL;
    return (int64_t)((h ^ (h >> 32)) & (uint64_t)(capacity - 1));
}

bool tci_index_set_has(const TciIndexSet *set, int64_t index)
{
    if (!set->capacity)
        return false;
    for (int64_t i = slot_of(index, set->capacity);; i = (i + 1) & (set->capacity - 1)) {
        if (set->slots[i] == index)
            return true;
        if (set->slots[i] < 0)
            return false;
    }
}

static void insert_slot(int64_t *slots, int64_t capacity, int64_t index)
{
    int64_t i = slot_of(index, capacity);
    while (slots[i] >= 0 && slots[i] != index)
        i = (i + 1) & (capacity - 1);
    slots[i] = index;
}

static bool grow(TciIndexSet *set)
{
    int64_t capacity = set->capacity ? set->capacity * 2 : 64;
    int64_t *slots = malloc((size_t)capacity * sizeof *slots);
    if (!slots)
        return false;
    memset(slots, 0xff, (size_t)capacity * sizeof *slots); /* every slot -1 */
    for (int64_t i = 0; i < set->capacity; i++)
        if (set->slots[i] >= 0)
            insert_slot(slots, capacity, set->slots[i]);
    free(set->slots);
    set->slots = slots;
    set->capacity = capacity;
    return true;
}

bool tci_index_set_add(TciIndexSet *set, int64_t index)
{
    if (tci_index_set_has(set, index))
        return true;
    /* At most half full, so that probes stay short. */
    if (2 * (set->count + 1) > set->capacity && !grow(set))
        return false;
    insert_slot(set->slots, set->capacity, index);
    set->count++;
    return true;
}

void tci_index_set_free(TciIndexSet *set)
{
    free(set->slots);
    memset(set, 0, sizeof *set);
}

/* ---- points ------------------------------------------------------------------------------------
 */

void tci_tuner_point_to_knobs(const tcc_tuner *tuner, int64_t index, int64_t *knobs)
{
    for (int k = 0; k < tuner->knob_count; k++) {
        knobs[k] = index % tuner->lengths[k];
        index /= tuner->lengths[k];
    }
}

int64_t tci_tuner_knobs_to_point(const tcc_tuner *tuner, const int64_t *knobs)
{
    int64_t index = 0;
    for (int k = tuner->knob_count - 1; k >= 0; k--)
        index = index * tuner->lengths[k] + knobs[k];
    return index;
}

tcc_status tci_tuner_visit(tcc_tuner *tuner, int64_t index)
{
    if (!tci_index_set_add(&tuner->visited, index))
        return tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY,
                        "out of memory recording the tuner's visited points");
    return TCC_OK;
}

/* Once at least half the space is visited, drawing and redrawing would take longer and
 * longer: the unvisited points are listed once, in random order. Points visited since are
 * skipped as they come up; the next one not visited is uniform among those left. The list is
 * made again only when it runs out with points unvisited (taken from it, then dropped). */
static bool make_dense_order(tcc_tuner *tuner)
{
    int64_t left = tuner->size - tuner->visited.count;
    tuner->dense_points = malloc((size_t)left * sizeof *tuner->dense_points);
    if (!tuner->dense_points)
        return false;
    int64_t *points = tuner->dense_points, n = 0;
    for (int64_t p = 0; p < tuner->size; p++)
        if (!tci_index_set_has(&tuner->visited, p))
            points[n++] = p;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = tci_rng_below(&tuner->rng, i + 1);
        int64_t t = points[i];
        points[i] = points[j];
        points[j] = t;
    }
    tuner->dense_count = n;
    tuner->dense_next = 0;
    tuner->dense_made = true;
    return true;
}

int64_t tci_tuner_random_unvisited(tcc_tuner *tuner)
{
    if (tuner->visited.count >= tuner->size)
        return -1;
    if (!tuner->dense_made && 2 * tuner->visited.count < tuner->size) {
        for (;;) { /* fewer than two draws on average */
            int64_t p = tci_rng_below(&tuner->rng, tuner->size);
            if (!tci_index_set_has(&tuner->visited, p))
                return p;
        }
    }
    /* A point taken from the list may be dropped unvisited (the genetic tuner's generation
     * already has it, or is thrown away): a list run out with points unvisited is listed
     * again, once. */
    for (int pass = 0; pass < 2; pass++) {
        if (!tuner->dense_made && !make_dense_order(tuner)) {
            tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY,
                     "out of memory listing the space's unvisited points");
            return -1;
        }
        while (tuner->dense_next < tuner->dense_count) {
            int64_t p = tuner->dense_points[tuner->dense_next++];
            if (!tci_index_set_has(&tuner->visited, p))
                return p;
        }
        free(tuner->dense_points);
        tuner->dense_points = NULL;
        tuner->dense_made = false;
    }
    tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "the space's unvisited points were lost");
    return -1;
}

static int64_t canonical_of(const tcc_tuner *tuner, int64_t index)
{
    int64_t canonical = tcc_config_space_canonical(tuner->space, index);
    return canonical < 0 ? index : canonical;
}

/* The canonical point of `index` is visited with it: a point whose kernel a result came in for
 * is not proposed (tcc_tuner_update), whichever of its points the result named. */
static tcc_status visit_with_canonical(tcc_tuner *tuner, int64_t index, int64_t canonical)
{
    tcc_status status = tci_tuner_visit(tuner, index);
    if (status == TCC_OK && canonical != index && !tci_index_set_has(&tuner->visited, canonical))
        status = tci_tuner_visit(tuner, canonical);
    return status;
}

tcc_status tci_tuner_propose(tcc_tuner *tuner, int64_t index, int64_t *proposed)
{
    int64_t canonical = canonical_of(tuner, index);
    *proposed = -1;
    if (canonical != index && tci_index_set_has(&tuner->visited, canonical))
        return tci_tuner_visit(tuner, index);
    tcc_status status = visit_with_canonical(tuner, index, canonical);
    if (status == TCC_OK)
        *proposed = canonical;
    return status;
}

tcc_status tci_tuner_take_random(tcc_tuner *tuner, int64_t *index)
{
    for (*index = -1; *index < 0;) {
        int64_t drawn = tci_tuner_random_unvisited(tuner);
        if (drawn < 0) /* none left, or no memory to list them (the error is set) */
            return tuner->visited.count < tuner->size ? TCC_ERROR_OUT_OF_MEMORY : TCC_OK;
        tcc_status status = tci_tuner_propose(tuner, drawn, index);
        if (status != TCC_OK)
            return status;
    }
    return TCC_OK;
}

/* ---- kinds -------------------------------------------------------------------------------------
 */

static const char *const kind_names[] = {"random", "grid", "genetic", "xgb"};
#define KIND_COUNT ((int)(sizeof kind_names / sizeof kind_names[0]))

const char *tcc_tuner_kind_name(tcc_tuner_kind kind)
{
    return (int)kind >= 0 && (int)kind < KIND_COUNT ? kind_names[kind] : NULL;
}

tcc_status tcc_tuner_kind_parse(tcc_context *ctx, const char *name, tcc_tuner_kind *out)
{
    /* AutoTVM's (and tvmc's) names are taken too: "ga", "gridsearch". */
    static const struct {
        const char *name;
        tcc_tuner_kind kind;
    } aliases[] = {{"ga", TCC_TUNER_GENETIC}, {"gridsearch", TCC_TUNER_GRID}};
    if (!name || !out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_tuner_kind_parse: name or out is NULL");
    for (int k = 0; k < KIND_COUNT; k++)
        if (!strcmp(name, kind_names[k])) {
            *out = (tcc_tuner_kind)k;
            return TCC_OK;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(name, aliases[i].name)) {
            *out = aliases[i].kind;
            return TCC_OK;
        }
    return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                    "unknown tuner '%s' (random, grid, genetic or xgb)", name);
}

/* ---- creation ----------------------------------------------------------------------------------
 */

static tcc_status read_space(tcc_tuner *tuner)
{
    const tcc_config_space *space = tuner->space;
    tuner->size = tcc_config_space_size(space);
    tuner->knob_count = tcc_config_space_knob_count(space);
    if (tuner->size <= 0 || tuner->knob_count < 0)
        return tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_tuner_create: the config space is empty");
    tuner->lengths = calloc((size_t)tuner->knob_count + 1, sizeof *tuner->lengths);
    if (!tuner->lengths)
        return tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory creating a tuner");
    for (int k = 0; k < tuner->knob_count; k++) {
        tuner->lengths[k] = tcc_config_space_knob_length(space, k);
        if (tuner->lengths[k] <= 0)
            return tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "tcc_tuner_create: knob %d of the config space has no values", k);
    }
    return TCC_OK;
}

static tcc_status new_tuner(tcc_context *ctx, tcc_tuner_kind kind, const tcc_config_space *space,
                            uint64_t seed, tcc_tuner **out)
{
    if (!out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_tuner_create: out is NULL");
    *out = NULL;
    if (!space)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_tuner_create: space is NULL");
    if (!tcc_tuner_kind_name(kind))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_tuner_create: unknown kind %d",
                        (int)kind);
    tcc_tuner *tuner = calloc(1, sizeof *tuner);
    if (!tuner)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory creating a tuner");
    tuner->ctx = ctx;
    tuner->kind = kind;
    tuner->space = space;
    tci_rng_seed(&tuner->rng, seed);
    tcc_status status = read_space(tuner);
    if (status != TCC_OK) {
        tcc_tuner_destroy(tuner);
        return status;
    }
    *out = tuner;
    return TCC_OK;
}

static tcc_status finish_create(tcc_tuner *tuner, tcc_status status, tcc_tuner **out)
{
    if (status != TCC_OK) {
        tcc_tuner_destroy(tuner);
        *out = NULL;
    }
    return status;
}

tcc_status tcc_tuner_create(tcc_context *ctx, tcc_tuner_kind kind, const tcc_config_space *space,
                            uint64_t seed, tcc_tuner **out)
{
    tcc_status status = new_tuner(ctx, kind, space, seed, out);
    if (status != TCC_OK)
        return status;
    tcc_tuner *tuner = *out;
    switch (kind) {
    case TCC_TUNER_RANDOM:
        status = tci_tuner_init_random(tuner);
        break;
    case TCC_TUNER_GRID:
        status = tci_tuner_init_grid(tuner);
        break;
    case TCC_TUNER_GENETIC:
        status = tci_tuner_init_genetic(tuner);
        break;
    case TCC_TUNER_XGB:
        status = tci_tuner_init_xgb(tuner, NULL);
        break;
    }
    return finish_create(tuner, status, out);
}

tcc_status tci_tuner_create_xgb(tcc_context *ctx, const tcc_config_space *space, uint64_t seed,
                                const char *library, tcc_tuner **out)
{
    tcc_status status = new_tuner(ctx, TCC_TUNER_XGB, space, seed, out);
    if (status != TCC_OK)
        return status;
    return finish_create(*out, tci_tuner_init_xgb(*out, library), out);
}

void tcc_tuner_destroy(tcc_tuner *tuner)
{
    if (!tuner)
        return;
    if (tuner->ops && tuner->ops->destroy)
        tuner->ops->destroy(tuner);
    free(tuner->dense_points);
    tci_index_set_free(&tuner->visited);
    free(tuner->lengths);
    free(tuner->result_index);
    free(tuner->result_score);
    free(tuner->transfer.index);
    free(tuner->transfer.group);
    free(tuner->transfer.score);
    free(tuner);
}

/* ---- proposing and learning --------------------------------------------------------------------
 */

bool tcc_tuner_has_next(const tcc_tuner *tuner)
{
    return tuner && tuner->visited.count < tuner->size;
}

tcc_status tcc_tuner_next_batch(tcc_tuner *tuner, int count, int64_t *indices, int *proposed)
{
    if (!tuner)
        return TCC_ERROR_INVALID_ARGUMENT; /* no context to say it in */
    if (!proposed || (count > 0 && !indices))
        return tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_tuner_next_batch: indices or proposed is NULL");
    *proposed = 0;
    if (count < 0)
        return tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_tuner_next_batch: count %d is negative", count);
    if (count == 0 || !tcc_tuner_has_next(tuner))
        return TCC_OK;
    return tuner->ops->next_batch(tuner, count, indices, proposed);
}

static tcc_status check_results(tcc_tuner *tuner, const char *call, int count,
                                const int64_t *indices, const double *scores)
{
    if (count < 0)
        return tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT, "%s: count %d is negative", call,
                        count);
    if (count > 0 && (!indices || !scores))
        return tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT, "%s: indices or scores is NULL",
                        call);
    for (int i = 0; i < count; i++) {
        if (indices[i] < 0 || indices[i] >= tuner->size)
            return tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "%s: index %lld is not a point of the space (0 to %lld)", call,
                            (long long)indices[i], (long long)tuner->size - 1);
        /* Scores are normalized and used as weights: a NaN or a negative one would poison
         * every later ranking. */
        if (!isfinite(scores[i]) || scores[i] < 0)
            return tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "%s: score %g of point %lld is not a finite number >= 0", call,
                            scores[i], (long long)indices[i]);
    }
    return TCC_OK;
}

static tcc_status reserve_results(tcc_tuner *tuner, int64_t more)
{
    int64_t need = tuner->result_count + more;
    if (need <= tuner->result_capacity)
        return TCC_OK;
    int64_t capacity = tuner->result_capacity ? tuner->result_capacity : 256;
    while (capacity < need)
        capacity *= 2;
    int64_t *index = realloc(tuner->result_index, (size_t)capacity * sizeof *index);
    if (index)
        tuner->result_index = index;
    double *score = realloc(tuner->result_score, (size_t)capacity * sizeof *score);
    if (score)
        tuner->result_score = score;
    if (!index || !score)
        return tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory keeping results");
    tuner->result_capacity = capacity;
    return TCC_OK;
}

tcc_status tcc_tuner_update(tcc_tuner *tuner, int count, const int64_t *indices,
                            const double *scores)
{
    if (!tuner)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_status status = check_results(tuner, "tcc_tuner_update", count, indices, scores);
    if (status == TCC_OK)
        status = reserve_results(tuner, count);
    if (status != TCC_OK || count == 0)
        return status;
    int64_t first = tuner->result_count;
    for (int i = 0; i < count; i++) {
        status = visit_with_canonical(tuner, indices[i], canonical_of(tuner, indices[i]));
        if (status != TCC_OK)
            return status;
        tuner->result_index[tuner->result_count] = indices[i];
        tuner->result_score[tuner->result_count++] = scores[i];
    }
    return tuner->ops->update ? tuner->ops->update(tuner, first) : TCC_OK;
}

static tcc_status reserve_transfer(tcc_tuner *tuner, int64_t more)
{
    int64_t need = tuner->transfer.count + more;
    if (need <= tuner->transfer.capacity)
        return TCC_OK;
    int64_t capacity = tuner->transfer.capacity ? tuner->transfer.capacity : 256;
    while (capacity < need)
        capacity *= 2;
    int64_t *index = realloc(tuner->transfer.index, (size_t)capacity * sizeof *index);
    if (index)
        tuner->transfer.index = index;
    int64_t *group = realloc(tuner->transfer.group, (size_t)capacity * sizeof *group);
    if (group)
        tuner->transfer.group = group;
    double *score = realloc(tuner->transfer.score, (size_t)capacity * sizeof *score);
    if (score)
        tuner->transfer.score = score;
    if (!index || !group || !score)
        return tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory keeping results");
    tuner->transfer.capacity = capacity;
    return TCC_OK;
}

tcc_status tcc_tuner_transfer(tcc_tuner *tuner, int count, const int64_t *indices,
                              const double *scores, const int64_t *groups)
{
    if (!tuner)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_status status = check_results(tuner, "tcc_tuner_transfer", count, indices, scores);
    if (status == TCC_OK && count > 0 && !groups)
        status =
            tci_fail(tuner->ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_tuner_transfer: groups is NULL");
    if (status == TCC_OK)
        status = reserve_transfer(tuner, count);
    for (int i = 0; status == TCC_OK && i < count; i++) {
        int64_t at = tuner->transfer.count++;
        tuner->transfer.index[at] = indices[i];
        tuner->transfer.group[at] = groups[i];
        tuner->transfer.score[at] = scores[i];
    }
    return status;
}

/* ---- choosing diverse points ------------------------------------------------------------------
 */

tcc_status tci_tuner_submodular_pick(tcc_tuner *tuner, int64_t *points, int *count, int pick)
{
    int n = tuner->knob_count, total = *count;
    int64_t *knobs = malloc(((size_t)total * (size_t)n + 1) * sizeof *knobs);
    bool *taken = calloc((size_t)total + 1, sizeof *taken);
    int64_t *chosen = malloc(((size_t)pick + 1) * sizeof *chosen);
    if (!knobs || !taken || !chosen) {
        free(knobs);
        free(taken);
        free(chosen);
        return tci_fail(tuner->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory picking a plan");
    }
    for (int i = 0; i < total; i++)
        tci_tuner_point_to_knobs(tuner, points[i], knobs + (size_t)i * n);
    int picked = 0;
    for (; picked < pick && picked < total; picked++) {
        int winner = -1, most = -1;
        for (int i = 0; i < total; i++) {
            if (taken[i])
                continue;
            int gain = 0;
            for (int k = 0; k < n; k++) {
                bool seen = false;
                for (int c = 0; c < picked && !seen; c++)
                    seen = knobs[chosen[c] * n + k] == knobs[(size_t)i * n + k];
                gain += !seen;
            }
            if (gain > most) {
                most = gain;
                winner = i;
            }
        }
        taken[winner] = true;
        chosen[picked] = winner;
    }
    for (int i = 0; i < picked; i++)
        chosen[i] = points[chosen[i]];
    memcpy(points, chosen, (size_t)picked * sizeof *chosen);
    *count = picked;
    free(knobs);
    free(taken);
    free(chosen);
    return TCC_OK;
}
