/*
 * What an implicit GEMM's schedule may be on a target: the predicates that choosing a default
 * (gemm_choose.c) asks before it takes a knob and checking a given schedule (gemm_check.c)
 * asks before it compiles one: wgmma's operands and tiles, the copy engine, a producer
 * warpgroup, stores from registers or through the copy engine, persistent grids, ping-pong
 * consumers and clusters.
 */
#include "ops/gemm_tiles.h"

/* Whether wgmma reads the operands' tiles as they lie: k-major (A row-major, B column-major,
 * a convolution's), or MN-major for the types it reads transposed. */
bool tci_gemm_operands_readable(const GemmOperator *op)
{
    return tci_target_wgmma_transposes(op->input_type) || (!op->a_col_major && op->b_col_major);
}

/* Whether the copy engine can fetch both operands' tiles: wgmma on a target with it, a
 * pipelined loop of two k steps or more (its barriers are the copies'), k steps of one
 * swizzle row of 64 or 128 bytes (a box's first dimension is at most 128 bytes; wider column
 * blocks take a copy each; on an H100 64-byte steps in 8 stages ran the seed layer 0.243 ms
 * against 0.180: twice the copies' rows), tensor maps for A and B. */
bool tci_gemm_bulk_possible(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s)
{
    int64_t a[3], b[3];
    tci_gemm_operand_tiles(op, s, a, b);
    Tiles t = tci_gemm_tiles(s);
    int64_t k_row = t.bk * (int64_t)tcc_dtype_size(op->input_type);
    int64_t steps = tci_ceil_div(tci_gemm_split(op, s).slice, t.bk);
    return s->intrinsic == TCC_GEMM_WGMMA && tci_target_arch(arch)->bulk_copy &&
           (k_row == 64 || k_row == 128) && s->stages >= 2 && steps >= 2 && op->a_tensor_map &&
           op->b_tensor_map && op->a_tensor_map(NULL, NULL, a, NULL, op->op) &&
           op->b_tensor_map(NULL, NULL, b, NULL, op->op);
}

/* Whether a producer warpgroup can issue the copies: bulk ones, on a target whose warpgroups
 * move registers, the consumer warpgroups in one row or column (warp_specialize adds the
 * producer along that axis) and the block within its threads with it. */
bool tci_gemm_producer_possible(tcc_arch arch, const tcc_gemm_schedule *s)
{
    int consumers = s->block_row_warps * s->block_col_warps;
    return s->copy == TCC_GEMM_COPY_BULK && tci_target_arch(arch)->setmaxnreg &&
           (s->block_row_warps == 1 || s->block_col_warps == 1) &&
           (consumers + 1) * tci_target_family_threads(TENSOR_WGMMA) <=
               tci_device_limits.threads_per_block;
}

/* A warpgroup's accumulators take at most this many registers a thread: one m64n256 tile
 * of float32, or two m64n128 (CUTLASS's largest); more leave none to address and store with. */
enum { WGMMA_MOST_ACCUMULATOR_REGISTERS = 128 };

static int wgmma_accumulator_registers(const GemmOperator *op, const tcc_gemm_schedule *s)
{
    const TensorAccumulator *acc = tci_target_accumulator(op->accumulate_type);
    return acc ? tci_target_accumulator_regs(acc, TENSOR_WGMMA, s->mma_m, s->mma_n) *
                     s->warp_row_tiles * s->warp_col_tiles
               : 0;
}

/* Whether a warpgroup's tiles can be the schedule's warp tiles: along m (the descriptors of
 * A's tiles step through the stage), with their accumulators within
 * WGMMA_MOST_ACCUMULATOR_REGISTERS. */
bool tci_gemm_wgmma_tiles_possible(const GemmOperator *op, const tcc_gemm_schedule *s)
{
    return s->warp_col_tiles == 1 && s->warp_row_tiles >= 1 &&
           wgmma_accumulator_registers(op, s) <= WGMMA_MOST_ACCUMULATOR_REGISTERS;
}

/* Registers a thread needs beside its accumulators to store them with the epilogue (its
 * addresses and the epilogue's operands): ptxas needed 154 for 128 accumulators of m64n256
 * (and refused four warpgroups of those, at 128 registers a thread). */
enum { STORE_REGISTERS_SPARE = 32 };

/* Whether each thread can store the accumulators it holds: wgmma's, one element a register,
 * with registers to spare for the stores. */
bool tci_gemm_registers_possible(const GemmOperator *op, const tcc_gemm_schedule *s)
{
    const TensorAccumulator *acc = tci_target_accumulator(op->accumulate_type);
    if (s->intrinsic != TCC_GEMM_WGMMA || !acc || acc->elements_per_reg != 1)
        return false;
    Tiles t = tci_gemm_tiles(s);
    int64_t per_thread = tci_device_limits.registers_per_block / t.threads;
    if (per_thread > tci_device_limits.registers_per_thread)
        per_thread = tci_device_limits.registers_per_thread;
    return wgmma_accumulator_registers(op, s) + STORE_REGISTERS_SPARE <= per_thread;
}

bool tci_gemm_bulk_store_possible(const GemmOperator *op, const tcc_gemm_schedule *s)
{
    Tiles t = tci_gemm_tiles(s);
    int64_t tile[3] = {1, t.bm, t.bn};
    /* Its barriers are the block's consumers': ping-pong's take their tiles apart. Each store
     * is a box of the tile's rows by a column block of its 128-byte lines. */
    return tci_gemm_registers_possible(op, s) && s->copy == TCC_GEMM_COPY_BULK && s->split_k <= 1 &&
           s->consumers != TCC_GEMM_CONSUMERS_PINGPONG && t.bm <= TCI_MAP_MAX_BOX &&
           t.bn * (int64_t)tcc_dtype_size(op->output_type) % TCI_SWIZZLE_BLOCK_BYTES == 0 &&
           op->out_tensor_map && op->out_tensor_map(NULL, NULL, tile, NULL, op->op);
}

/* Whether the blocks can run the tiles in a persistent grid: its pipeline's stages filled by
 * bulk copies, and nothing in shared memory that they might take (the accumulators stored
 * from registers, or through an output tile of its own). */
bool tci_gemm_persistent_possible(const tcc_gemm_schedule *s)
{
    return s->copy == TCC_GEMM_COPY_BULK &&
           (s->store == TCC_GEMM_STORE_REGISTERS || s->store == TCC_GEMM_STORE_BULK);
}

/* Whether two consumer warpgroups can take the tiles in turns: each the schedule's block of
 * one warpgroup, fed by a producer warpgroup in a persistent grid. */
bool tci_gemm_pingpong_possible(const tcc_gemm_schedule *s)
{
    return s->producer == TCC_GEMM_PRODUCER_WARPGROUP && s->grid == TCC_GEMM_GRID_PERSISTENT &&
           s->block_row_warps == 1 && s->block_col_warps == 1;
}

/* Whether blocks can run in clusters of `blocks` along m, sharing their B tiles: bulk copies
 * on a target with clusters, the blocks along m a multiple of it; with a producer warpgroup in
 * a persistent grid (which meets the cluster's last barrier after its loop, where nothing
 * follows; a block a tile stores after it). */
bool tci_gemm_cluster_possible(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s,
                               int blocks)
{
    Tiles t = tci_gemm_tiles(s);
    return s->copy == TCC_GEMM_COPY_BULK && tci_target_arch(arch)->clusters &&
           (s->producer != TCC_GEMM_PRODUCER_WARPGROUP || s->grid == TCC_GEMM_GRID_PERSISTENT) &&
           tci_ceil_div(op->m, t.bm) % blocks == 0;
}
