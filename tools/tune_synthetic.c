/*
 * --measure synthetic: a deterministic cost of a config's knobs in place of the GPU, so that
 * the tuners, the records and the whole tool run in CI. The cost is a smooth bowl over the
 * config's features (per split the log2 of each factor, per other knob its value's position:
 * tcc_config_space_features) around one optimum, a point of the space drawn from the seed, so
 * a tuner that follows the features finds it faster than one that does not; a fixed share of
 * the other points, drawn from the seed and the index, is "invalid" (INSTANTIATION_ERROR),
 * as real templates refuse configs.
 */
#include "tune_measure.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_FEATURES 64
#define BEST_SECONDS 1e-4    /* the optimum's cost */
#define INVALID_PER_MILLE 80 /* of the points other than the optimum */

/* Per feature a weight in [0.5, 2): some knobs matter more than others. */
static double weight(uint64_t seed, int feature)
{
    return 0.5 +
           1.5 * (double)(tune_mix(seed ^ (uint64_t)feature * 0x100000001b3ull) >> 11) * 0x1p-53;
}

void tune_synthetic_measure(const tcc_config_space *space, uint64_t seed, int64_t index,
                            tcc_measure_result *result)
{
    *result = (tcc_measure_result){.timestamp = tune_wall_s()};
    int64_t size = tcc_config_space_size(space);
    int64_t best = size > 0 ? (int64_t)(tune_mix(seed) % (uint64_t)size) : 0;
    double f[MAX_FEATURES], g[MAX_FEATURES];
    int n = tcc_config_space_features(space, index, f, MAX_FEATURES);
    int nb = tcc_config_space_features(space, best, g, MAX_FEATURES);
    if (n < 0 || nb != n) {
        result->error = TCC_MEASURE_INSTANTIATION_ERROR;
        snprintf(result->message, sizeof result->message, "config %lld is outside the space",
                 (long long)index);
        return;
    }
    if (index != best && tune_mix(seed ^ tune_mix((uint64_t)index)) % 1000 < INVALID_PER_MILLE) {
        result->error = TCC_MEASURE_INSTANTIATION_ERROR;
        snprintf(result->message, sizeof result->message,
                 "synthetic: config %lld is invalid (seeded)", (long long)index);
        return;
    }
    double distance = 0.0;
    for (int i = 0; i < n && i < MAX_FEATURES; i++)
        distance += weight(seed, i) * (f[i] - g[i]) * (f[i] - g[i]);
    double cost = BEST_SECONDS * (1.0 + 0.25 * distance);
    result->ncost = 3;
    for (int r = 0; r < result->ncost; r++) /* repeats that differ by a deterministic hair */
        result->costs[r] =
            cost * (1.0 + 1e-3 * (double)(tune_mix((uint64_t)index * 3 + (uint64_t)r) % 8));
    result->all_cost = cost * 10;
}
