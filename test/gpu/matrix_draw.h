/*
 * The configurations tcc-matrix draws (matrix_draw.c) as its runner (matrix.c) takes them:
 * a configuration's stream of random numbers, the configuration itself, the whole draw of
 * configuration `index` of a seed, and the draw of a schedule's knobs again, from what is
 * left of the stream, where the library refuses them for their size.
 */
#ifndef TCC_MATRIX_DRAW_H
#define TCC_MATRIX_DRAW_H

#include <tcc/tcc.h>

#include <stdbool.h>
#include <stdint.h>

/* splitmix64: seedable with any value, and a state of one word is easy to derive per index. */
typedef struct Rng {
    uint64_t state;
} Rng;

uint64_t next_u64(Rng *r);

typedef struct Config {
    int index;
    bool matmul;
    tcc_conv2d_desc conv;
    tcc_matmul_desc mm;
    bool scheduled; /* false: the library chooses (a NULL schedule) */
    tcc_gemm_schedule schedule;
    uint64_t data_seed; /* of the random inputs of the check */
    Rng rng;            /* what is left of the stream: schedule redraws come from it */
} Config;

tcc_dtype input_type(const Config *c);

/* Configuration `index` of the matrix of `seed`, drawn from its own stream (config_rng), so
 * that it is the same alone as in the whole matrix. */
Config draw_config(uint64_t seed, int index);

/* Warps, warp tiles, passes (fused passes dividing them), policy, block order, pipeline
 * stages, shared-memory layout, intrinsic (mma.sync where it has the shape and type) and
 * split-K. */
void draw_knobs(Rng *r, tcc_dtype input, tcc_gemm_schedule *s);

#endif
