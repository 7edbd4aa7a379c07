/*
 * The implicit GEMM's tiles (what a tcc_gemm_schedule makes of the block, the warps and the
 * k step) and the shared memory they take: what choosing a schedule (gemm_choose.c) and
 * applying it (gemm_schedule.c) both ask; and what a schedule may be (gemm_possible.c, which
 * says why of each), which choosing asks and checking (gemm_check.c) enforces.
 */
#ifndef TCI_OPS_GEMM_TILES_H
#define TCI_OPS_GEMM_TILES_H

#include "ops/gemm.h"

typedef struct Tiles {
    int64_t mm, mn, mk; /* the MMA shape */
    int64_t bm, bn, bk; /* block tile and reduction step */
    int64_t wm, wn, fk; /* warp (warpgroup) tile; k of the fused passes */
    /* Warps along m and n, or warpgroups under wgmma; `lanes` threads each (32, or 128). */
    int64_t warps_m, warps_n, lanes, threads;
    tcc_gemm_intrinsic intrinsic;
} Tiles;

/* ceil(a / b) for positive b. */
static inline int64_t tci_ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

Tiles tci_gemm_tiles(const tcc_gemm_schedule *s);
/* A WMMA operation (TCC_WMMA_*), or its twin of the schedule's family. */
tcc_intrinsic tci_gemm_op(Tiles t, tcc_intrinsic wmma);
/* Elements each row of a tile is padded by (C: `c_tile`). */
int64_t tci_gemm_row_pad(tcc_dtype type, const tcc_gemm_schedule *s, bool c_tile);
/* Whether the rows of the A and B tiles (*a and *b bytes, elements contiguous) can be
 * swizzled. */
bool tci_gemm_operands_swizzle(const GemmOperator *op, const tcc_gemm_schedule *s, int64_t *a,
                               int64_t *b);
/* Shared memory a block takes: the stages of A and B, or C where it is larger. */
int64_t tci_gemm_shared_bytes(const GemmOperator *op, Tiles t, const tcc_gemm_schedule *s);

/* ---- what a schedule may be (gemm_possible.c; the mma.sync row: gemm_choose.c) ---------- */

const TensorShape *tci_gemm_mma_sync_row(const GemmOperator *op, const tcc_gemm_schedule *s);
bool tci_gemm_operands_readable(const GemmOperator *op);
bool tci_gemm_bulk_possible(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s);
bool tci_gemm_producer_possible(tcc_arch arch, const tcc_gemm_schedule *s);
bool tci_gemm_wgmma_tiles_possible(const GemmOperator *op, const tcc_gemm_schedule *s);
bool tci_gemm_pingpong_possible(const tcc_gemm_schedule *s);
bool tci_gemm_registers_possible(const GemmOperator *op, const tcc_gemm_schedule *s);
/* Whether the copy engine can store the block's output tile (store = bulk). */
bool tci_gemm_bulk_store_possible(const GemmOperator *op, const tcc_gemm_schedule *s);
bool tci_gemm_persistent_possible(const tcc_gemm_schedule *s);
bool tci_gemm_cluster_possible(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s,
                               int blocks);
/* Fills the zero fields of a schedule whose given knobs are in range. */
void tci_gemm_choose_defaults(const GemmOperator *op, tcc_arch arch, tcc_gemm_schedule *s);

#endif
