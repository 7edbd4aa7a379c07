/*
 * The implicit GEMM's schedule, in TVM's primitives (the tutorial's structure, plus an
 * epilogue staged through shared memory):
 *
 *   Out   blocks of BM x BN over (g, m, n); its elements spread over all threads, with
 *         guards where M or N is not a multiple of the block
 *   C     in shared memory, computed per block: each warp stores its fragments there
 *   C.acc per warp, WM x WN accumulator fragments; the reduction walks K in steps of
 *         num_total_passes MMA passes through shared-memory tiles of A and B, loading
 *         the fragments of num_fused_passes passes at a time; the MMA policy orders the
 *         passes and the tiles of the warp
 *
 * The epilogue reads C from shared memory, so any output layout, any edge and any
 * element-wise work come after the tensor cores without constraining them.
 */
#include "ops/gemm.h"

#include <string.h>

typedef struct Tiles {
    int64_t mm, mn, mk; /* the MMA shape */
    int64_t bm, bn, bk; /* block tile and reduction step */
    int64_t wm, wn, fk; /* warp tile; k of the fused passes */
    int64_t warps_m, warps_n, threads;
    bool mma_sync; /* the tensor-core operations are mma.sync's, not WMMA's */
} Tiles;

static Tiles tiles_of(const tcc_gemm_schedule *s)
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
    t.threads = 32 * t.warps_m * t.warps_n;
    t.mma_sync = s->intrinsic == TCC_GEMM_MMA_SYNC;
    return t;
}

/* A WMMA operation, or its mma.sync twin when the schedule chose that family. */
static tcc_intrinsic op(Tiles t, tcc_intrinsic wmma)
{
    return t.mma_sync ? (tcc_intrinsic)(wmma - TCC_WMMA_LOAD_A + TCC_MMA_SYNC_LOAD_A) : wmma;
}

/* ---- shared memory ------------------------------------------------------------------------ */

/* Padding a row by 16 bytes moves each row four banks on from the last. The C tile, which
 * ldmatrix never reads, is padded where A and B are swizzled too. */
static int64_t row_pad(tcc_dtype type, const tcc_gemm_schedule *s, bool c_tile)
{
    bool padded =
        s->smem_layout == TCC_SMEM_PADDED || (c_tile && s->smem_layout == TCC_SMEM_SWIZZLED);
    return padded ? 16 / (int64_t)tcc_dtype_size(type) : 0;
}

/* Bytes of a rows x cols tile (cols contiguous), as plan_shared places it. */
static int64_t tile_bytes(int64_t rows, int64_t cols, tcc_dtype type, const tcc_gemm_schedule *s,
                          bool c_tile)
{
    int64_t bytes = rows * (cols + row_pad(type, s, c_tile)) * (int64_t)tcc_dtype_size(type);
    return (bytes + 127) / 128 * 128;
}

/* Whether the rows of the A and B tiles (*a and *b bytes, elements contiguous) can be
 * swizzled. */
static bool operands_swizzle(const GemmOperator *op, const tcc_gemm_schedule *s, int64_t *a,
                             int64_t *b)
{
    Tiles t = tiles_of(s);
    int64_t size = (int64_t)tcc_dtype_size(op->input_type);
    *a = (op->a_col_major ? t.bm : t.bk) * size;
    *b = (op->b_col_major ? t.bk : t.bn) * size;
    return tci_swizzle_takes_rows(*a) && tci_swizzle_takes_rows(*b);
}

/* The stages of A and B, or C where it is larger: C takes their bytes once the reduction
 * is over (plan_shared). */
static int64_t shared_bytes(const GemmOperator *op, Tiles t, const tcc_gemm_schedule *s)
{
    tcc_dtype in = op->input_type;
    int64_t a = op->a_col_major ? tile_bytes(t.bk, t.bm, in, s, false)
                                : tile_bytes(t.bm, t.bk, in, s, false);
    int64_t b = op->b_col_major ? tile_bytes(t.bn, t.bk, in, s, false)
                                : tile_bytes(t.bk, t.bn, in, s, false);
    int64_t c = tile_bytes(t.bm, t.bn, op->accumulate_type, s, true);
    int64_t stages = s->stages * (a + b);
    return stages > c ? stages : c;
}

/* ---- choosing and checking a schedule -------------------------------------------------- */

/* Enough blocks to give every multiprocessor of a large GPU (108 on an A100, 132 on an
 * H100) at least one: below that, smaller blocks finish sooner than idle ones. */
enum { ENOUGH_BLOCKS = 128 };

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Whether a block of `size` along a dimension of `extent` computes at most a third more
 * than the dimension holds (N = 64 in a 128-wide block wastes half the tensor cores; the
 * 49 rows of a batch-1 7x7 map in a 64-row block measured faster than in 16-row ones). */
static bool fits(int64_t extent, int64_t size)
{
    return ceil_div(extent, size) * size * 3 <= extent * 4 || size <= 16;
}

/* A split-K slice keeps at least this many k steps: the pipeline's prologue and the
 * workspace's traffic are paid per slice. Slices aim at SPLIT_BLOCKS blocks in all: two
 * per multiprocessor of a large GPU, as many as the largest blocks keep resident. */
enum { MIN_SLICE_STEPS = 8, SPLIT_BLOCKS = 2 * ENOUGH_BLOCKS };

/* Warps and tiles, in MMA tiles, from the largest block to the smallest. */
static const int block_candidates[][4] = {
    /* block_row_warps, block_col_warps, warp_row_tiles, warp_col_tiles */
    {2, 2, 4, 4}, {2, 2, 4, 2}, {2, 2, 2, 4}, {2, 2, 2, 2},
    {2, 2, 1, 2}, {1, 2, 1, 2}, {1, 2, 1, 1}, {1, 1, 1, 1},
};
enum {
    NCANDIDATE = (int)(sizeof block_candidates / sizeof block_candidates[0]),
    /* The first candidates' warps compute at least 64x32 each: below them a warp loads
     * as many fragments as it multiplies, and slicing the reduction pays more. */
    NLARGE = 3,
};

typedef struct BlockChoice {
    int candidate; /* index into block_candidates, or -1 */
    int split;
} BlockChoice;

/* Slices that give `blocks` blocks SPLIT_BLOCKS in all, as far as `steps` k steps allow
 * (1: no split). */
static int split_for(int64_t blocks, int64_t steps)
{
    int64_t split = ceil_div(SPLIT_BLOCKS, blocks);
    int64_t most = steps / MIN_SLICE_STEPS;
    if (most > TCC_MAX_SPLIT_K)
        most = TCC_MAX_SPLIT_K;
    if (split > most)
        split = most;
    return split > 1 ? (int)split : 1;
}

/* The first of candidates [0, count) that fits the product and makes ENOUGH_BLOCKS blocks
 * with `split` slices (0: chosen by split_for). */
static BlockChoice first_enough(const GemmOperator *op, const tcc_gemm_schedule *s, int count,
                                int split, int64_t steps)
{
    for (int i = 0; i < count; i++) {
        const int *c = block_candidates[i];
        int64_t bm = (int64_t)c[0] * c[2] * s->mma_m, bn = (int64_t)c[1] * c[3] * s->mma_n;
        int64_t blocks = op->groups * ceil_div(op->m, bm) * ceil_div(op->n, bn);
        int slices = split ? split : split_for(blocks, steps);
        if (fits(op->m, bm) && fits(op->n, bn) && blocks * slices >= ENOUGH_BLOCKS)
            return (BlockChoice){i, slices};
    }
    return (BlockChoice){-1, 1};
}

/* Warps and tiles from a row of block_candidates (or wide_block). */
static void set_block(tcc_gemm_schedule *s, const int block[4])
{
    s->block_row_warps = block[0];
    s->block_col_warps = block[1];
    s->warp_row_tiles = block[2];
    s->warp_col_tiles = block[3];
}

/* A block of eight 64x64 warps (128x256), taken for deep reductions (K >= DEEP_K) where
 * the target's shared memory holds its 3 stages of 64-deep steps: its longer prologue and
 * epilogue are paid once per longer loop. On an H200 the 8192^3 product ran 2.93 ms
 * against 3.84 ms in 128x128 blocks; the seed layer (K = 2304) ran no faster. */
static const int wide_block[4] = {2, 4, 4, 4};
enum { DEEP_K = 4096 };

static bool wide_block_fits(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s)
{
    tcc_gemm_schedule wide = *s;
    set_block(&wide, wide_block);
    if (!wide.num_total_passes)
        wide.num_total_passes = 4;
    if (!wide.stages)
        wide.stages = 3;
    if (wide.smem_layout == TCC_SMEM_AUTO)
        wide.smem_layout = TCC_SMEM_PADDED;
    Tiles t = tiles_of(&wide);
    int64_t blocks = op->groups * ceil_div(op->m, t.bm) * ceil_div(op->n, t.bn);
    return s->mma_m == 16 && s->mma_n == 16 && s->mma_k == 16 && op->k >= DEEP_K &&
           s->split_k <= 1 && blocks >= ENOUGH_BLOCKS && fits(op->m, t.bm) && fits(op->n, t.bn) &&
           shared_bytes(op, t, &wide) <= tci_target_arch(arch)->max_shared_per_block;
}

/* The block, and split-K where the schedule leaves it open: the wide block where it fits
 * (wide_block_fits); else a large block that fills the GPU alone; else, where the
 * reduction is deep enough to slice (batch 1, 7x7 maps), the largest block that fills it
 * with slices; else the largest that fills it, or the smallest. With 16x16 tiles, 128x128
 * blocks of four 64x64 warps are what measured fastest on an H200 for the seed layer
 * (0.36 ms against 0.54 ms for 64x128 and 0.45 ms for 128x256). */
static void choose_block(const GemmOperator *op, tcc_arch arch, tcc_gemm_schedule *s, int passes)
{
    if (wide_block_fits(op, arch, s)) {
        set_block(s, wide_block);
        if (!s->split_k)
            s->split_k = 1;
        return;
    }
    const int64_t steps = ceil_div(op->k, (int64_t)passes * s->mma_k);
    const int given = s->split_k;
    BlockChoice choice = first_enough(op, s, NLARGE, given ? given : 1, steps);
    if (choice.candidate < 0 && !given)
        choice = first_enough(op, s, NCANDIDATE, 0, steps);
    if (choice.candidate < 0)
        choice = first_enough(op, s, NCANDIDATE, given ? given : 1, steps);
    if (choice.candidate < 0)
        choice = (BlockChoice){NCANDIDATE - 1, given ? given : 1};
    set_block(s, block_candidates[choice.candidate]);
    s->split_k = choice.split;
}

/* The mma.sync operation of the schedule's shape for the product's input and accumulator
 * types, or NULL when that family has none. */
static const TensorShape *mma_sync_row(const GemmOperator *op, const tcc_gemm_schedule *s)
{
    const TensorShape *row =
        tci_target_family_shape(TENSOR_MMA_SYNC, s->mma_m, s->mma_n, s->mma_k, op->input_type);
    return row && tci_target_shape_takes(row, op->accumulate_type) ? row : NULL;
}

enum { BLOCK_RESERVED = 1024 }; /* shared memory the driver reserves a block (CUDA 11+) */

/* Whether a multiprocessor's shared memory holds schedule `s` for as many blocks as its
 * registers do: eight warps of 64x64 tiles (about 220-250 registers a thread), so two blocks
 * of four warps or one of eight. */
static bool resident_blocks_fit(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s)
{
    enum { RESIDENT_WARPS = 8 };
    Tiles t = tiles_of(s);
    int64_t blocks = RESIDENT_WARPS / (t.warps_m * t.warps_n);
    int64_t bytes = shared_bytes(op, t, s) + BLOCK_RESERVED;
    return (blocks > 0 ? blocks : 1) * bytes <= tci_target_arch(arch)->shared_per_sm;
}

/* MMA passes per shared-memory step: a 64-deep step (4 passes of k16) halves the barriers
 * and waits of a 32-deep one, where the product is deep (4 such steps at least) and not
 * sliced, and resident_blocks_fit: sm_90's 228 KB hold two 128x128 blocks of 3 such stages;
 * sm_80's 164 KB and sm_86/89's 100 KB do not. On an H200 the seed layer ran 0.344 ms against
 * 0.367 ms, the 1x1 layer of batch 256 0.109 against 0.136; sliced products (r50_res5)
 * ran slower. */
static int choose_passes(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s)
{
    enum { SHALLOW = 2, DEEP = 4 };
    if (s->mma_k != 16 || op->k < 4 * DEEP * s->mma_k || s->split_k > 1)
        return SHALLOW;
    tcc_gemm_schedule deep = *s;
    deep.num_total_passes = deep.num_fused_passes = DEEP;
    return resident_blocks_fit(op, arch, &deep) ? DEEP : SHALLOW;
}

/* Shared-memory stages: double buffering without cp.async (before sm_80); with it, four
 * where the multiprocessor's shared memory holds them for as many blocks as its registers do
 * (at two passes a step), else three. On an H200 (swizzled tiles) the seed layer ran 0.2985
 * ms against 0.338 with three, the 8192^3 product 2.42 ms against 2.53. */
static int choose_stages(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s)
{
    if (!tci_target_arch(arch)->async_copy)
        return 2;
    tcc_gemm_schedule deep = *s;
    deep.stages = 4;
    if (deep.smem_layout == TCC_SMEM_AUTO) /* not chosen yet: padded tiles are the larger */
        deep.smem_layout = TCC_SMEM_PADDED;
    if (!deep.num_total_passes)
        deep.num_total_passes = deep.num_fused_passes = 2;
    int64_t bytes = shared_bytes(op, tiles_of(&deep), &deep) + BLOCK_RESERVED;
    return bytes <= tci_target_arch(arch)->max_shared_per_block &&
                   resident_blocks_fit(op, arch, &deep)
               ? 4
               : 3;
}

static void choose_defaults(const GemmOperator *op, tcc_arch arch, tcc_gemm_schedule *s)
{
    if (!s->mma_m || !s->mma_n || !s->mma_k) {
        s->mma_m = 16;
        s->mma_n = 16;
        s->mma_k = op->input_type == TCC_FLOAT32 ? 8 : 16;
    }
    bool no_tiles =
        !s->block_row_warps && !s->block_col_warps && !s->warp_row_tiles && !s->warp_col_tiles;
    if (no_tiles && s->mma_m == 16 && s->mma_n == 16)
        choose_block(op, arch, s, s->num_total_passes ? s->num_total_passes : 2);
    /* Otherwise a warp computes 32 x 64 of C whatever the MMA shape... */
    if (!s->warp_row_tiles)
        s->warp_row_tiles = s->mma_m >= 32 ? 1 : 32 / s->mma_m;
    if (!s->warp_col_tiles)
        s->warp_col_tiles = 64 / s->mma_n > 0 ? 64 / s->mma_n : 1;
    /* ...in 2 x 2 warps, fewer where the product is too narrow to fill them. */
    if (!s->block_row_warps)
        s->block_row_warps = op->m > s->warp_row_tiles * s->mma_m ? 2 : 1;
    if (!s->block_col_warps)
        s->block_col_warps = op->n > s->warp_col_tiles * s->mma_n ? 2 : 1;
    if (!s->stages)
        s->stages = choose_stages(op, arch, s);
    if (s->intrinsic == TCC_GEMM_INTRINSIC_AUTO) {
        const TensorShape *row = mma_sync_row(op, s);
        s->intrinsic = row && (int)arch >= row->min_arch ? TCC_GEMM_MMA_SYNC : TCC_GEMM_WMMA;
    }
    if (!s->split_k)
        s->split_k = 1;
    if (!s->num_total_passes)
        s->num_total_passes = choose_passes(op, arch, s);
    /* Each pass's fragments loaded on their own, so that prefetch_fragments loads them a pass
     * ahead of their products (on an H200 the seed layer in 2 passes a step ran 0.2985 ms
     * against 0.338 ms loading both at once); WMMA keeps 4 passes so (measured faster). */
    if (!s->num_fused_passes)
        s->num_fused_passes =
            s->num_total_passes >= 4 || s->intrinsic == TCC_GEMM_MMA_SYNC ? 1 : s->num_total_passes;
    /* Swizzled where ldmatrix reads the tiles and their rows allow: padding leaves rows
     * misaligned with the 128-byte lines, so that a 16-byte copy of a warp writes twice as
     * many shared-memory wavefronts (on an H200, ncu counted 31% of the 8192^3 product's
     * shared wavefronts as excess); a swizzle spreads the banks and keeps rows on lines. */
    if (s->smem_layout == TCC_SMEM_AUTO) {
        int64_t a_row, b_row;
        bool ldmatrix = s->intrinsic == TCC_GEMM_MMA_SYNC;
        s->smem_layout = ldmatrix && operands_swizzle(op, s, &a_row, &b_row) ? TCC_SMEM_SWIZZLED
                                                                             : TCC_SMEM_PADDED;
    }
}

GemmSplit tci_gemm_split(const GemmOperator *op, const tcc_gemm_schedule *s)
{
    int64_t step = (int64_t)s->num_total_passes * s->mma_k;
    if (s->split_k <= 1)
        return (GemmSplit){1, op->k};
    /* Whole k steps per slice; the last slice may run past K, where A and B read zeros. */
    int64_t slice = ceil_div(ceil_div(op->k, s->split_k), step) * step;
    return (GemmSplit){ceil_div(op->k, slice), slice};
}

tcc_status tci_gemm_complete_schedule(tcc_context *ctx, const GemmOperator *op, tcc_arch arch,
                                      tcc_gemm_schedule *s)
{
    choose_defaults(op, arch, s);
    tcc_status status =
        tci_target_validate_shape(ctx, op->input_type, s->mma_m, s->mma_n, s->mma_k);
    if (status != TCC_OK)
        return status;
    const int knobs[6] = {s->block_row_warps, s->block_col_warps,  s->warp_row_tiles,
                          s->warp_col_tiles,  s->num_total_passes, s->num_fused_passes};
    for (int i = 0; i < 6; i++)
        if (knobs[i] < 1 || knobs[i] > 64)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "schedule: warps, tiles and passes must be between 1 and 64");
    if (s->num_total_passes % s->num_fused_passes != 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "schedule: num_fused_passes (%d) must divide num_total_passes (%d)",
                        s->num_fused_passes, s->num_total_passes);
    if ((int)s->policy < TCC_MMA_PASS_ORDER || s->policy > TCC_MMA_BLOCK_ORDER)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: unknown MMA policy");
    if (s->stages < 1 || s->stages > TCC_MAX_GEMM_STAGES)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: stages must be 1 to %d, not %d",
                        TCC_MAX_GEMM_STAGES, s->stages);
    if ((int)s->smem_layout < TCC_SMEM_DENSE || s->smem_layout > TCC_SMEM_SWIZZLED)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: unknown shared-memory layout");
    if (s->smem_layout == TCC_SMEM_SWIZZLED) {
        int64_t a_row, b_row;
        bool rows = operands_swizzle(op, s, &a_row, &b_row);
        if (s->intrinsic != TCC_GEMM_MMA_SYNC)
            return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                            "schedule: swizzled tiles are read by ldmatrix: they need the "
                            "mma_sync intrinsic, not WMMA");
        if (!rows)
            return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                            "schedule: swizzled tiles need rows of a power of two of at least 32 "
                            "bytes; A's are %lld and B's %lld",
                            (long long)a_row, (long long)b_row);
    }
    if ((int)s->intrinsic < TCC_GEMM_WMMA || s->intrinsic > TCC_GEMM_MMA_SYNC)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: unknown intrinsic");
    if (s->split_k < 1 || s->split_k > TCC_MAX_SPLIT_K)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "schedule: split_k must be 1 to %d, not %d", TCC_MAX_SPLIT_K, s->split_k);
    if (s->intrinsic == TCC_GEMM_MMA_SYNC) {
        const TensorShape *row = mma_sync_row(op, s);
        char shape[32];
        if (!row)
            return tci_fail(
                ctx, TCC_ERROR_UNSUPPORTED,
                "schedule: mma.sync has no %s for %s inputs and %s accumulation",
                tci_target_shape_name(s->mma_m, s->mma_n, s->mma_k, shape, sizeof shape),
                tcc_dtype_name(op->input_type), tcc_dtype_name(op->accumulate_type));
        if ((int)arch < row->min_arch)
            return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                            "schedule: mma.sync needs sm_%d or newer; the target is sm_%d",
                            row->min_arch, (int)arch);
    }
    Tiles t = tiles_of(s);
    const DeviceLimits *limits = &tci_device_limits;
    if (t.threads > limits->threads_per_block)
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule needs %lld threads per block (%d x %d warps); the limit is %lld",
                        (long long)t.threads, s->block_row_warps, s->block_col_warps,
                        (long long)limits->threads_per_block);
    int64_t bytes = shared_bytes(op, t, s);
    const TargetArch *target = tci_target_arch(arch);
    if (bytes > target->max_shared_per_block)
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule needs %lld bytes of shared memory (a %lldx%lld block, k step "
                        "%lld, %d stages); %s allows %lld a block",
                        (long long)bytes, (long long)t.bm, (long long)t.bn, (long long)t.bk,
                        s->stages, target->name, (long long)target->max_shared_per_block);
    /* The slices there really are: whole k steps each, so a shallow product has fewer. */
    s->split_k = (int)tci_gemm_split(op, s).splits;
    return TCC_OK;
}

/* ---- applying it ------------------------------------------------------------------------ */

/* Spreads a loop over every thread of the block: threadIdx.x fastest. */
static tcc_status spread_over_threads(tcc_stage *s, tcc_iter_var *axis, Tiles t)
{
    tcc_iter_var *rest, *inner, *ty, *lanes, *tz, *tx;
    TRY(tcc_split(s, axis, t.threads, &rest, &inner));
    TRY(tcc_split(s, inner, 32 * t.warps_n, &ty, &lanes));
    TRY(tcc_split(s, lanes, 32, &tz, &tx));
    TRY(tcc_bind(s, ty, TCC_THREAD_Y));
    TRY(tcc_bind(s, tz, TCC_THREAD_Z));
    return tcc_bind(s, tx, TCC_THREAD_X);
}

/* Out: blocks over (g, m, n), then the block's elements over its threads. Returns the
 * innermost block axis, where the block's C is computed. */
static tcc_status schedule_out(tcc_func *f, const GemmOperator *op, const Gemm *gemm,
                               const tcc_gemm_schedule *s, Tiles t, tcc_iter_var **block_axis)
{
    /* Split-K's partial sums lie n-contiguous whatever the output's layout. */
    bool m_contiguous = op->output_contiguous_in_m && !gemm->partial;
    tcc_stage *so = tcc_stage_of(f, gemm->out);
    tcc_iter_var *g = tcc_tensor_axis(gemm->out, 0);
    tcc_iter_var *mo, *mi, *no, *ni, *elements;
    TRY(tcc_split(so, tcc_tensor_axis(gemm->out, 1), t.bm, &mo, &mi));
    TRY(tcc_split(so, tcc_tensor_axis(gemm->out, 2), t.bn, &no, &ni));
    tcc_iter_var *row_major[5] = {g, mo, no, mi, ni}, *col_major[5] = {g, no, mo, mi, ni};
    TRY(tcc_reorder(so, 5, s->column_major_blocks ? col_major : row_major));
    TRY(tcc_bind(so, g, TCC_BLOCK_Z));
    /* blockIdx.x walks the blocks of the inner of the two block loops. */
    TRY(tcc_bind(so, s->column_major_blocks ? no : mo, TCC_BLOCK_Y));
    TRY(tcc_bind(so, s->column_major_blocks ? mo : no, TCC_BLOCK_X));
    *block_axis = s->column_major_blocks ? mo : no;
    /* Consecutive threads write consecutive addresses of the output. */
    if (m_contiguous) {
        tcc_iter_var *order[2] = {ni, mi};
        TRY(tcc_reorder(so, 2, order));
        TRY(tcc_fuse(so, ni, mi, &elements));
    } else {
        TRY(tcc_fuse(so, mi, ni, &elements));
    }
    /* 16 bytes a thread along n where the output allows (the vectorize pass keeps the
     * vector only where it proves the elements contiguous in the output and in C). Along
     * m (NCHW) rows of images break the runs: one element a thread, coalesced per warp. */
    tcc_tensor *stored = gemm->partial ? gemm->partial : op->output;
    int64_t lanes = 16 / (int64_t)tcc_dtype_size(stored->type), count = t.bm * t.bn;
    if (!m_contiguous && count % (lanes * t.threads) == 0) {
        tcc_iter_var *groups, *vector;
        TRY(tcc_split(so, elements, lanes, &groups, &vector));
        TRY(tcc_vectorize(so, vector));
        elements = groups;
    }
    return spread_over_threads(so, elements, t);
}

/* C in shared memory: each warp stores its own accumulator fragments. Returns the warp
 * axis, where the warp's accumulator is computed. */
static tcc_status schedule_c(tcc_func *f, const Gemm *gemm, Tiles t, tcc_iter_var *block_axis,
                             tcc_iter_var **warp_axis)
{
    tcc_stage *sc = tcc_stage_of(f, gemm->c);
    tcc_stage *so = tcc_stage_of(f, gemm->out);
    TRY(tcc_compute_at(sc, so, block_axis));
    tcc_iter_var *wy, *mr, *wz, *nr, *tm, *tmi, *tn, *tni;
    TRY(tcc_split_nparts(sc, tcc_tensor_axis(gemm->c, 1), t.warps_m, &wy, &mr));
    TRY(tcc_split_nparts(sc, tcc_tensor_axis(gemm->c, 2), t.warps_n, &wz, &nr));
    TRY(tcc_split(sc, mr, t.mm, &tm, &tmi));
    TRY(tcc_split(sc, nr, t.mn, &tn, &tni));
    tcc_iter_var *order[6] = {wy, wz, tm, tn, tmi, tni};
    TRY(tcc_reorder(sc, 6, order));
    TRY(tcc_bind(sc, wy, TCC_THREAD_Y));
    TRY(tcc_bind(sc, wz, TCC_THREAD_Z));
    TRY(tcc_tensorize(sc, tmi, op(t, TCC_WMMA_STORE), (int)t.mm, (int)t.mn, (int)t.mk));
    *warp_axis = wz;
    return TCC_OK;
}

/* The warp's accumulator and the reduction. Returns the step and fused-pass axes. */
static tcc_status schedule_accumulator(tcc_func *f, tcc_tensor *acc, const Gemm *gemm,
                                       const tcc_gemm_schedule *s, Tiles t, tcc_iter_var *warp_axis,
                                       tcc_iter_var **step, tcc_iter_var **group)
{
    tcc_stage *sf = tcc_stage_of(f, acc);
    TRY(tcc_compute_at(sf, tcc_stage_of(f, gemm->c), warp_axis));
    tcc_iter_var *ko, *ki, *kg, *kp, *pass, *kk, *tm, *tmi, *tn, *tni;
    TRY(tcc_split(sf, tcc_tensor_reduce_axis(acc, 0), t.bk, &ko, &ki));
    TRY(tcc_split(sf, ki, t.fk, &kg, &kp));
    TRY(tcc_split(sf, kp, t.mk, &pass, &kk));
    TRY(tcc_split(sf, tcc_tensor_axis(acc, 1), t.mm, &tm, &tmi));
    TRY(tcc_split(sf, tcc_tensor_axis(acc, 2), t.mn, &tn, &tni));
    tcc_iter_var *pass_order[8] = {ko, kg, pass, tm, tn, tmi, tni, kk};
    tcc_iter_var *block_order[8] = {ko, kg, tm, tn, pass, tmi, tni, kk};
    TRY(tcc_reorder(sf, 8, s->policy == TCC_MMA_BLOCK_ORDER ? block_order : pass_order));
    TRY(tcc_tensorize(sf, tmi, op(t, TCC_WMMA_MMA), (int)t.mm, (int)t.mn, (int)t.mk));
    /* The groups of passes of one step in straight-line code, so that ptxas may load the
     * next group's fragments while this group's products run (a loop hides them). */
    TRY(tcc_unroll(sf, kg));
    *step = ko;
    *group = kg;
    return TCC_OK;
}

/* A fragment cache: 2-D tiles of rows x cols (as they lie in memory) at the end of its
 * loops. */
static tcc_status schedule_fragments(tcc_func *f, tcc_tensor *frag, int64_t rows, int64_t cols,
                                     tcc_intrinsic intrinsic, bool col_major, Tiles t)
{
    tcc_stage *s = tcc_stage_of(f, frag);
    tcc_iter_var *ro, *ri, *co, *ci;
    TRY(tcc_split(s, tcc_tensor_axis(frag, 1), rows, &ro, &ri));
    TRY(tcc_split(s, tcc_tensor_axis(frag, 2), cols, &co, &ci));
    tcc_iter_var *order[4] = {ro, co, ri, ci};
    TRY(tcc_reorder(s, 4, order));
    return tcc_tensorize_layout(s, ri, op(t, intrinsic), (int)t.mm, (int)t.mn, (int)t.mk,
                                col_major);
}

/* Rows of a tile in shared memory (dimension 1; dimension 2, of `cols` elements, is
 * contiguous) padded as the schedule says. */
static tcc_status lay_out(tcc_func *f, tcc_tensor *tile, int64_t cols, const tcc_gemm_schedule *s,
                          bool c_tile)
{
    if (!c_tile && s->smem_layout == TCC_SMEM_SWIZZLED)
        return tcc_storage_swizzle(tcc_stage_of(f, tile));
    int64_t pad = row_pad(tile->type, s, c_tile);
    if (!pad)
        return TCC_OK;
    return tcc_storage_align(tcc_stage_of(f, tile), tcc_tensor_axis(tile, 1), cols, pad);
}

/* A shared-memory tile, filled by every thread of the block, 16 bytes at a time where its
 * rows allow (the vectorize pass keeps a vector only where it proves the elements
 * contiguous in the source too, e.g. channels-last data with C/groups a multiple of 8). */
static tcc_status schedule_shared(tcc_func *f, tcc_tensor *shared, Tiles t)
{
    tcc_stage *s = tcc_stage_of(f, shared);
    tcc_iter_var *elements, *groups, *lanes;
    int64_t lanes_16_bytes = 16 / (int64_t)tcc_dtype_size(shared->type);
    TRY(tcc_fuse(s, tcc_tensor_axis(shared, 1), tcc_tensor_axis(shared, 2), &elements));
    TRY(tcc_split(s, elements, lanes_16_bytes, &groups, &lanes));
    TRY(tcc_vectorize(s, lanes));
    return spread_over_threads(s, groups, t);
}

tcc_status tci_gemm_schedule_apply(tcc_func *f, const GemmOperator *op, const Gemm *gemm,
                                   const tcc_gemm_schedule *s)
{
    Tiles t = tiles_of(s);
    tcc_tensor *c = gemm->c;
    TRY(tcc_compute_inline(tcc_stage_of(f, gemm->a)));
    TRY(tcc_compute_inline(tcc_stage_of(f, gemm->b)));
    tcc_tensor *as = tcc_cache_read(f, gemm->a, TCC_SCOPE_SHARED, 1, &c);
    tcc_tensor *bs = tcc_cache_read(f, gemm->b, TCC_SCOPE_SHARED, 1, &c);
    tcc_tensor *af = tcc_cache_read(f, as, TCC_SCOPE_WMMA_MATRIX_A, 1, &c);
    tcc_tensor *bf = tcc_cache_read(f, bs, TCC_SCOPE_WMMA_MATRIX_B, 1, &c);
    TRY(tcc_set_scope(tcc_stage_of(f, c), TCC_SCOPE_SHARED));
    tcc_tensor *acc = tcc_cache_write(f, c, TCC_SCOPE_WMMA_ACCUMULATOR);
    if (!as || !bs || !af || !bf || !acc)
        return tci_func_status(f);

    tcc_iter_var *block_axis, *warp_axis, *step, *group;
    TRY(schedule_out(f, op, gemm, s, t, &block_axis));
    TRY(schedule_c(f, gemm, t, block_axis, &warp_axis));
    TRY(schedule_accumulator(f, acc, gemm, s, t, warp_axis, &step, &group));
    tcc_stage *sf = tcc_stage_of(f, acc);
    TRY(tcc_compute_at(tcc_stage_of(f, as), sf, step));
    TRY(tcc_compute_at(tcc_stage_of(f, bs), sf, step));
    TRY(tcc_compute_at(tcc_stage_of(f, af), sf, group));
    TRY(tcc_compute_at(tcc_stage_of(f, bf), sf, group));
    if (op->a_col_major)
        TRY(schedule_fragments(f, af, t.mk, t.mm, TCC_WMMA_LOAD_A, true, t));
    else
        TRY(schedule_fragments(f, af, t.mm, t.mk, TCC_WMMA_LOAD_A, false, t));
    if (op->b_col_major)
        TRY(schedule_fragments(f, bf, t.mn, t.mk, TCC_WMMA_LOAD_B, true, t));
    else
        TRY(schedule_fragments(f, bf, t.mk, t.mn, TCC_WMMA_LOAD_B, false, t));
    TRY(schedule_shared(f, as, t));
    TRY(schedule_shared(f, bs, t));
    TRY(lay_out(f, as, op->a_col_major ? t.bm : t.bk, s, false));
    TRY(lay_out(f, bs, op->b_col_major ? t.bk : t.bn, s, false));
    TRY(lay_out(f, c, t.bn, s, true));
    return s->stages > 1 ? tcc_pipeline(sf, step, s->stages) : TCC_OK;
}

/* ---- the elementwise kernels: split-K's reduction, staging copies ------------------------- */

enum { ELEMENTWISE_THREADS = 256 };

/* Fuses axes[0 .. n), adjacent and outermost first, into *out. */
static tcc_status fuse_all(tcc_stage *s, int n, tcc_iter_var *const *axes, tcc_iter_var **out)
{
    *out = axes[0];
    for (int i = 1; i < n; i++)
        TRY(tcc_fuse(s, *out, axes[i], out));
    return TCC_OK;
}

/* Every axis of `t`, outermost first. */
static int axes_of(tcc_tensor *t, tcc_iter_var **axes)
{
    for (int i = 0; i < t->ndim; i++)
        axes[i] = tcc_tensor_axis(t, i);
    return t->ndim;
}

/* A staging copy that moves the source's fastest dimension (w of an NCHW input) away from
 * the last (c of NHWC) is a transpose: through shared memory in tiles of TILE x TILE, read
 * along the source's fastest dimension and written along the workspace's, so that both
 * sides move whole sectors. Rows of the tile are padded by 2 elements (one bank) so that
 * the column reads do not conflict. */
enum { TILE = 32, TILE_PAD = 2 };

static tcc_status schedule_transpose(tcc_func *f, const StagedOperand *st, const Gemm *gemm,
                                     int read_fastest)
{
    tcc_tensor *out = gemm->out;
    int ndim = out->ndim, last = ndim - 1;
    tcc_tensor *readers[1] = {out};
    tcc_tensor *tile = tcc_cache_read(f, st->from, TCC_SCOPE_SHARED, 1, readers);
    if (!tile)
        return tci_func_status(f);
    tcc_stage *so = tcc_stage_of(f, out), *sh = tcc_stage_of(f, tile);
    tcc_iter_var *ro, *ri, *wo, *wi, *order[TCI_MAX_DIMS + 2], *block, *elements, *rest, *tx;
    TRY(tcc_split(so, tcc_tensor_axis(out, read_fastest), TILE, &ro, &ri));
    TRY(tcc_split(so, tcc_tensor_axis(out, last), TILE, &wo, &wi));
    int n = 0;
    for (int i = 0; i < last; i++)
        order[n++] = i == read_fastest ? ro : tcc_tensor_axis(out, i);
    order[n++] = wo;
    order[n++] = ri;
    order[n++] = wi;
    TRY(tcc_reorder(so, n, order));
    TRY(fuse_all(so, n - 2, order, &block));
    TRY(tcc_bind(so, block, TCC_BLOCK_X));
    TRY(tcc_fuse(so, ri, wi, &elements));
    TRY(tcc_split(so, elements, ELEMENTWISE_THREADS, &rest, &tx));
    TRY(tcc_bind(so, tx, TCC_THREAD_X));
    TRY(tcc_compute_at(sh, so, block));
    /* The tile's copy: every thread, consecutive ones along the source's fastest axis. */
    tcc_iter_var *tile_axes[TCI_MAX_DIMS] = {0}, *all, *copy_rest, *copy_tx;
    int tile_ndim = axes_of(tile, tile_axes);
    TRY(fuse_all(sh, tile_ndim, tile_axes, &all));
    TRY(tcc_split(sh, all, ELEMENTWISE_THREADS, &copy_rest, &copy_tx));
    TRY(tcc_bind(sh, copy_tx, TCC_THREAD_X));
    /* The tile's rows: the source dimension the workspace runs fastest (c of NCHW). */
    int rows = 0;
    while (rows < tile->ndim - 1 && st->perm[rows] != last)
        rows++;
    return tcc_storage_align(sh, tcc_tensor_axis(tile, rows), TILE, TILE_PAD);
}

tcc_status tci_gemm_schedule_elementwise(tcc_func *f, const GemmOperator *op, const Gemm *gemm)
{
    for (int i = 0; i < op->nstaged; i++) {
        const StagedOperand *st = &op->staged[i];
        int read_fastest = st->perm[st->from->ndim - 1]; /* the axis of `to` it is */
        if (st->to == gemm->out->store_target && read_fastest != gemm->out->ndim - 1)
            return schedule_transpose(f, st, gemm, read_fastest);
    }

    bool reduction = gemm->c != NULL; /* split-K's: Out's axes are (g, m, n) */
    if (reduction)
        TRY(tcc_compute_inline(tcc_stage_of(f, gemm->c)));
    tcc_stage *so = tcc_stage_of(f, gemm->out);
    tcc_iter_var *axes[TCI_MAX_DIMS], *all, *bx, *tx;
    int ndim = axes_of(gemm->out, axes);
    /* Consecutive threads write consecutive addresses of the output. */
    if (reduction && op->output_contiguous_in_m) {
        tcc_iter_var *m = axes[1];
        axes[1] = axes[2];
        axes[2] = m;
        TRY(tcc_reorder(so, ndim, axes));
    }
    TRY(fuse_all(so, ndim, axes, &all));
    TRY(tcc_split(so, all, ELEMENTWISE_THREADS, &bx, &tx));
    TRY(tcc_bind(so, bx, TCC_BLOCK_X));
    return tcc_bind(so, tx, TCC_THREAD_X);
}
