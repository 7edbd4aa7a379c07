/*
 * The implicit GEMM's tiles and the shared memory they take (gemm_tiles.h).
 */
#include "ops/gemm_tiles.h"

Tiles tci_gemm_tiles(const tcc_gemm_schedule *s)
{
    Tiles t = {.mm = s->mma_m, .mn = s->mma_n, .mk = s->mma_k};
    t.wm = s->warp_row_tiles * t.mm;
    t.wn = s->warp_col_tiles * t.mn;
    t.bm = s->block_row_warps * t.wm;
    t.bn = s->block_col_warps * t.wn;
    t.bk = s->num_total_passes * t.mk;
    t.fk = s->num_fused_passes * t.mk;
    t.warps_m = s->block_row_warps;
    t.warps_n = s->block_col_warps;
    t.intrinsic = s->intrinsic;
    t.lanes = s->intrinsic == TCC_GEMM_WGMMA ? 128 : 32;
    t.threads = t.lanes * t.warps_m * t.warps_n;
    return t;
}

tcc_intrinsic tci_gemm_op(Tiles t, tcc_intrinsic wmma)
{
    if (t.intrinsic == TCC_GEMM_WGMMA)
        return wmma == TCC_WMMA_MMA ? TCC_WGMMA_MMA : TCC_WGMMA_STORE;
    if (t.intrinsic == TCC_GEMM_MMA_SYNC)
        return (tcc_intrinsic)(wmma - TCC_WMMA_LOAD_A + TCC_MMA_SYNC_LOAD_A);
    return wmma;
}

/* ---- shared memory ------------------------------------------------------------------------ */

/* Padding a row by 16 bytes moves each row four banks on from the last. The C tile, which
 * ldmatrix never reads, is padded where A and B are swizzled too. On an H200 the 32-byte
 * padding of float32 C tiles took the seed layer's 0.80 million store conflicts to none
 * (0.2020 -> 0.1988 ms with wgmma, 0.2978 -> 0.2951 with mma.sync). */
int64_t tci_gemm_row_pad(tcc_dtype type, const tcc_gemm_schedule *s, bool c_tile)
{
    bool padded =
        s->smem_layout == TCC_SMEM_PADDED || (c_tile && s->smem_layout == TCC_SMEM_SWIZZLED);
    /* A float32 C tile takes each thread's pairs of accumulators as 8-byte stores, which the
     * hardware serves a half-warp (four rows) at a time: rows 32 bytes apart in the banks keep
     * those four rows apart; 16 bytes would put two on the same banks. */
    int64_t bytes = c_tile && tcc_dtype_size(type) == 4 ? 32 : 16;
    return padded ? bytes / (int64_t)tcc_dtype_size(type) : 0;
}

/* Bytes of a rows x cols tile (cols contiguous), rounded as plan_shared's 128-byte offsets
 * round it (a swizzled tile may start further on, at its pattern's alignment). */
static int64_t tile_bytes(int64_t rows, int64_t cols, tcc_dtype type, const tcc_gemm_schedule *s,
                          bool c_tile)
{
    int64_t bytes =
        rows * (cols + tci_gemm_row_pad(type, s, c_tile)) * (int64_t)tcc_dtype_size(type);
    return (bytes + 127) / 128 * 128;
}

bool tci_gemm_operands_swizzle(const GemmOperator *op, const tcc_gemm_schedule *s, int64_t *a,
                               int64_t *b)
{
    Tiles t = tci_gemm_tiles(s);
    int64_t size = (int64_t)tcc_dtype_size(op->input_type);
    *a = (op->a_col_major ? t.bm : t.bk) * size;
    *b = (op->b_col_major ? t.bk : t.bn) * size;
    return tci_swizzle_takes_rows(*a) && tci_swizzle_takes_rows(*b);
}

/* C takes the bytes of A's and B's stages once the reduction is over (plan_shared); the bulk
 * store's output tile does not. */
int64_t tci_gemm_shared_bytes(const GemmOperator *op, Tiles t, const tcc_gemm_schedule *s)
{
    tcc_dtype in = op->input_type;
    int64_t a = op->a_col_major ? tile_bytes(t.bk, t.bm, in, s, false)
                                : tile_bytes(t.bm, t.bk, in, s, false);
    int64_t b = op->b_col_major ? tile_bytes(t.bn, t.bk, in, s, false)
                                : tile_bytes(t.bk, t.bn, in, s, false);
    bool c_tile = s->store != TCC_GEMM_STORE_REGISTERS && s->store != TCC_GEMM_STORE_BULK;
    int64_t c = c_tile ? tile_bytes(t.bm, t.bn, op->accumulate_type, s, true) : 0;
    int64_t stages = s->stages * (a + b);
    int64_t tiles = stages > c ? stages : c;
    /* The copy engine's output tile lives beside the stages, for the whole run: a ring of
     * column blocks where one warpgroup spans its columns (store_ring). */
    if (s->store == TCC_GEMM_STORE_BULK) {
        int64_t size = (int64_t)tcc_dtype_size(op->output_type);
        int64_t block = TCI_SWIZZLE_BLOCK_BYTES / size;
        int ring = tci_store_ring(tci_ceil_div(t.bn, block), t.warps_n);
        tiles += t.bm * (ring ? ring * block : t.bn) * size;
    }
    /* Bulk copies: two mbarriers of 8 bytes a stage, in two buffers that nothing shares. */
    if (s->copy == TCC_GEMM_COPY_BULK)
        tiles += 2 * ((s->stages * 8 + 127) / 128 * 128);
    return tiles;
}

void tci_gemm_operand_tiles(const GemmOperator *op, const tcc_gemm_schedule *s, int64_t a[3],
                            int64_t b[3])
{
    Tiles t = tci_gemm_tiles(s);
    a[0] = b[0] = 1;
    a[1] = op->a_col_major ? t.bk : t.bm;
    a[2] = op->a_col_major ? t.bm : t.bk;
    b[1] = op->b_col_major ? t.bn : t.bk;
    b[2] = op->b_col_major ? t.bk : t.bn;
}
