/*
 * The implicit GEMM's default schedule: the zero fields of a tcc_gemm_schedule chosen from
 * the product's shape, types and the target arch, among what a schedule may be
 * (gemm_possible.c).
 */
#include "ops/gemm_tiles.h"

/* ---- choosing a schedule ---------------------------------------------------------------- */

/* Enough blocks to give every multiprocessor of a large GPU (108 on an A100, 132 on an
 * H100) at least one: below that, smaller blocks finish sooner than idle ones. */
enum { ENOUGH_BLOCKS = 128 };

/* Blocks of bm x bn the product takes. */
static int64_t blocks_of(const GemmOperator *op, int64_t bm, int64_t bn)
{
    return op->groups * tci_ceil_div(op->m, bm) * tci_ceil_div(op->n, bn);
}

/* Whether a block of `size` along a dimension of `extent` computes at most a third more
 * than the dimension holds (N = 64 in a 128-wide block wastes half the tensor cores; the
 * 49 rows of a batch-1 7x7 map in a 64-row block measured faster than in 16-row ones). */
static bool fits(int64_t extent, int64_t size)
{
    return tci_ceil_div(extent, size) * size * 3 <= extent * 4 || size <= 16;
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
    int64_t split = tci_ceil_div(SPLIT_BLOCKS, blocks);
    int64_t most = steps / MIN_SLICE_STEPS;
    if (most > TCC_MAX_SPLIT_K)
        most = TCC_MAX_SPLIT_K;
    if (split > most)
        split = most;
    return split > 1 ? (int)split : 1;
}

static void set_block(tcc_gemm_schedule *s, const int block[4]);

/* Whether the target's shared memory holds candidate `c`'s block at the fewest stages the
 * default takes (2 without cp.async, 3 with; padded tiles, the larger): sm_75's 64 KB do not
 * hold the float32 C tile of a 128x128 block. */
static bool block_fits_shared(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s,
                              const int c[4], int passes)
{
    const TargetArch *target = tci_target_arch(arch);
    tcc_gemm_schedule least = *s;
    set_block(&least, c);
    least.num_total_passes = least.num_fused_passes = passes;
    least.stages = target->async_copy ? 3 : 2;
    if (least.smem_layout == TCC_SMEM_AUTO)
        least.smem_layout = TCC_SMEM_PADDED;
    return tci_gemm_shared_bytes(op, tci_gemm_tiles(&least), &least) <=
           target->max_shared_per_block;
}

/* The first of candidates [0, count) that fits the product and the target's shared memory
 * and makes ENOUGH_BLOCKS blocks with `split` slices (0: chosen by split_for). */
static BlockChoice first_enough(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s,
                                int count, int split, int passes, int64_t steps)
{
    for (int i = 0; i < count; i++) {
        const int *c = block_candidates[i];
        int64_t bm = (int64_t)c[0] * c[2] * s->mma_m, bn = (int64_t)c[1] * c[3] * s->mma_n;
        int64_t blocks = blocks_of(op, bm, bn);
        int slices = split ? split : split_for(blocks, steps);
        if (fits(op->m, bm) && fits(op->n, bn) && blocks * slices >= ENOUGH_BLOCKS &&
            block_fits_shared(op, arch, s, c, passes))
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
    Tiles t = tci_gemm_tiles(&wide);
    int64_t blocks = blocks_of(op, t.bm, t.bn);
    return s->mma_m == 16 && s->mma_n == 16 && s->mma_k == 16 && op->k >= DEEP_K &&
           s->split_k <= 1 && blocks >= ENOUGH_BLOCKS && fits(op->m, t.bm) && fits(op->n, t.bn) &&
           tci_gemm_shared_bytes(op, t, &wide) <= tci_target_arch(arch)->max_shared_per_block;
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
    const int64_t steps = tci_ceil_div(op->k, (int64_t)passes * s->mma_k);
    const int given = s->split_k;
    BlockChoice choice = first_enough(op, arch, s, NLARGE, given ? given : 1, passes, steps);
    if (choice.candidate < 0 && !given)
        choice = first_enough(op, arch, s, NCANDIDATE, 0, passes, steps);
    if (choice.candidate < 0)
        choice = first_enough(op, arch, s, NCANDIDATE, given ? given : 1, passes, steps);
    if (choice.candidate < 0)
        choice = (BlockChoice){NCANDIDATE - 1, given ? given : 1};
    set_block(s, block_candidates[choice.candidate]);
    s->split_k = choice.split;
}

/* The mma.sync operation of the schedule's shape for the product's input and accumulator
 * types, or NULL when that family has none. */
const TensorShape *tci_gemm_mma_sync_row(const GemmOperator *op, const tcc_gemm_schedule *s)
{
    const TensorShape *row =
        tci_target_family_shape(TENSOR_MMA_SYNC, s->mma_m, s->mma_n, s->mma_k, op->input_type);
    return row && tci_target_shape_takes(row, op->accumulate_type) ? row : NULL;
}

enum { BLOCK_RESERVED = 1024 }; /* shared memory the driver reserves a block (CUDA 11+) */

/* The shared memory a block of schedule `s` takes, the driver's reserve included. */
static int64_t block_shared_bytes(const GemmOperator *op, const tcc_gemm_schedule *s)
{
    return tci_gemm_shared_bytes(op, tci_gemm_tiles(s), s) + BLOCK_RESERVED;
}

/* Whether one block of schedule `s` fits the target's shared memory a block. */
static bool block_shared_fits(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s)
{
    return block_shared_bytes(op, s) <= tci_target_arch(arch)->max_shared_per_block;
}

/* Whether a multiprocessor's shared memory holds schedule `s` for as many blocks as its
 * registers do: eight warps of 64x64 tiles (about 220-250 registers a thread), so two blocks
 * of four warps or one of eight. */
static bool resident_blocks_fit(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s)
{
    enum { RESIDENT_WARPS = 8 };
    Tiles t = tci_gemm_tiles(s);
    int64_t blocks = RESIDENT_WARPS / (t.warps_m * t.warps_n);
    return (blocks > 0 ? blocks : 1) * block_shared_bytes(op, s) <=
           tci_target_arch(arch)->shared_per_sm;
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
    return block_shared_fits(op, arch, &deep) && resident_blocks_fit(op, arch, &deep) ? 4 : 3;
}

/* Reductions of at least this many k steps keep one step's wgmma products in flight. */
enum { LONG_LOOP_STEPS = 24 };

/* wgmma's tiles: below WGMMA_FEW_BLOCKS blocks (half an H100's multiprocessors) the reduction
 * is sliced towards WGMMA_SPLIT_BLOCKS; two warpgroups along m (128-row blocks) only where
 * those still make WGMMA_MANY_BLOCKS blocks of 4 k steps or more, else one (64-row blocks,
 * several of which share a multiprocessor and hide each other's waits). */
enum { WGMMA_FEW_BLOCKS = 66, WGMMA_SPLIT_BLOCKS = 100, WGMMA_MANY_BLOCKS = 512 };

/* wgmma's widths of N that the default schedule takes, widest first. */
static const int wgmma_widths[] = {256, 128, 64};
enum { NWGMMA_WIDTH = (int)(sizeof wgmma_widths / sizeof wgmma_widths[0]) };

/* Whether the next narrower of wgmma_widths pads n by over an eighth less than width i: a
 * 28x28 map's 784 pixels (an NCHW pointwise product's n) take 1024 columns in 256-wide blocks
 * and 896 in 128-wide ones; r50_res3_1x1_b256 in NCHW (float16 out, an H100) ran 0.1017 ms in
 * the first against 0.0916. Also on an H100, float16 out, before -> after (one call): 8192 x
 * 384 x 8192 0.1691 -> 0.1112 ms, n = 640 0.2399 -> 0.2012, a 3x3 NHWC convolution of 384
 * channels (32 x 28x28 x 256) 0.1706 -> 0.0764. */
static bool narrower_pads_less(int64_t n, int i)
{
    if (i + 1 >= NWGMMA_WIDTH)
        return false;
    int64_t wide = tci_ceil_div(n, wgmma_widths[i]) * wgmma_widths[i];
    int64_t narrow = tci_ceil_div(n, wgmma_widths[i + 1]) * wgmma_widths[i + 1];
    return wide * 8 > narrow * 9;
}

/* The widest of wgmma_widths (that the type has) that fits n and pads it about as little as
 * the next narrower, else the narrowest. */
static int widest_wgmma_n(const GemmOperator *op, int k)
{
    for (int i = 0; i < NWGMMA_WIDTH - 1; i++)
        if (fits(op->n, wgmma_widths[i]) && !narrower_pads_less(op->n, i) &&
            tci_target_family_shape(TENSOR_WGMMA, 64, wgmma_widths[i], k, op->input_type))
            return wgmma_widths[i];
    return wgmma_widths[NWGMMA_WIDTH - 1];
}

/* Slices of `steps` k steps that give `blocks` blocks WGMMA_SPLIT_BLOCKS in all, where they are
 * fewer than WGMMA_FEW_BLOCKS (1: none). */
static int wgmma_split(int64_t blocks, int64_t steps)
{
    if (blocks >= WGMMA_FEW_BLOCKS)
        return 1;
    int64_t split = tci_ceil_div(WGMMA_SPLIT_BLOCKS, blocks), most = steps / MIN_SLICE_STEPS;
    most = most < TCC_MAX_SPLIT_K ? most : TCC_MAX_SPLIT_K;
    return (int)(split < most ? split : most > 1 ? most : 1);
}

/* wgmma's blocks: warpgroups of m64 x N, N the widest of 256, 128 and 64 that fits the product
 * (narrower_pads_less too) and, with the reduction sliced (wgmma_split), still makes
 * WGMMA_FEW_BLOCKS blocks, else the narrowest; two warpgroups along m where they make
 * WGMMA_MANY_BLOCKS. Steps of four k slices (rows of 128 bytes, wgmma's widest swizzle) and as many
 * stages as a block's shared memory holds, up to 4. On an H100 (one run): r50_res5_3x3_b32 ran
 * 0.0243 ms in 64x256 blocks sliced twice against 0.0406 in 128x64 blocks sliced thrice,
 * r50_res4_3x3_b32 0.0204 in 64x256 against 0.0269 in 128x64, r50_res4_3x3_b1 0.0092 in 64x64
 * against 0.0119 in 128x64, but r50_res2_3x3_b32 (784 blocks of 128x64) 0.0314 against 0.0338 in
 * 64x64; on an H200 the seed layer 0.204 ms in 128x256 blocks against 0.262 in 128x128 and 0.274 in
 * 64x128. */
static void choose_bulk_store(const GemmOperator *op, tcc_arch arch, tcc_gemm_schedule *s);

static void choose_wgmma(const GemmOperator *op, tcc_arch arch, tcc_gemm_schedule *s)
{
    bool shape_given = s->mma_m && s->mma_n && s->mma_k;
    int k = tci_target_wgmma_k(op->input_type);
    if (!s->warp_row_tiles)
        s->warp_row_tiles = 1;
    if (!s->warp_col_tiles)
        s->warp_col_tiles = 1;
    if (!s->num_total_passes)
        s->num_total_passes = 4;
    if (!s->num_fused_passes)
        s->num_fused_passes = s->num_total_passes;
    int64_t steps = k ? tci_ceil_div(op->k, (int64_t)s->num_total_passes * k) : 1;
    if (!s->block_row_warps) {
        int64_t n = shape_given ? s->mma_n : k ? widest_wgmma_n(op, k) : 64;
        int64_t wide = n * (s->block_col_warps ? s->block_col_warps : 1);
        bool many = blocks_of(op, 128, wide) >= WGMMA_MANY_BLOCKS && steps >= 4;
        s->block_row_warps = op->m > 64 && fits(op->m, 128) && many ? 2 : 1;
    }
    if (!s->block_col_warps)
        s->block_col_warps = 1;
    int64_t bm = (int64_t)s->block_row_warps * s->warp_row_tiles * 64;
    for (int i = 0; !shape_given && k && i < NWGMMA_WIDTH; i++) {
        int64_t bn = (int64_t)s->block_col_warps * s->warp_col_tiles * wgmma_widths[i];
        int64_t blocks = blocks_of(op, bm, bn);
        int64_t sliced = blocks * (s->split_k ? s->split_k : wgmma_split(blocks, steps));
        bool last = i + 1 == NWGMMA_WIDTH;
        tcc_gemm_schedule wide = *s;
        wide.mma_m = 64, wide.mma_n = wgmma_widths[i], wide.mma_k = k;
        bool exists = tci_target_family_shape(TENSOR_WGMMA, 64, wgmma_widths[i], k, op->input_type);
        /* The narrowest is taken whatever its registers: check_wgmma refuses it in a line. */
        bool held = tci_gemm_wgmma_tiles_possible(op, &wide);
        bool snug = fits(op->n, wgmma_widths[i]) && !narrower_pads_less(op->n, i);
        if (exists && ((held && snug && sliced >= WGMMA_FEW_BLOCKS) || last)) {
            s->mma_m = 64, s->mma_n = wgmma_widths[i], s->mma_k = k;
            break;
        }
    }
    if (s->smem_layout == TCC_SMEM_AUTO)
        s->smem_layout = TCC_SMEM_SWIZZLED;
    if (!s->split_k) {
        Tiles t = tci_gemm_tiles(s);
        s->split_k = wgmma_split(blocks_of(op, t.bm, t.bn), tci_ceil_div(op->k, t.bk));
    }
    choose_bulk_store(op, arch, s);
    for (int stages = 4; !s->stages && stages >= 2; stages--) {
        tcc_gemm_schedule try = *s;
        try.stages = stages;
        if (block_shared_fits(op, arch, &try) || stages == 2)
            s->stages = stages;
    }
    /* One step's products run on across the barrier where the stages leave the copies two
     * steps ahead and the loop is long: on an H200 the seed layer (36 steps) ran 0.1999 ms
     * against 0.2052, the 8192^3 product 1.777 against 1.883; r50_res3_1x1_b256 (8 steps)
     * 0.1177 against 0.1064; on an H100 r50_res3_3x3s2_b32 (18 steps, 64x128 blocks) 0.0246
     * with one step at once against 0.0256 or more with two. Not where the copy engine
     * stores the output: there a step releases its stage before it waits for the next
     * (wgmma_sync), and the seed layer with 4 stages ran 0.1570 ms with one step against 0.1601
     * with two (H100). */
    if (!s->wgmma_steps) {
        int64_t steps = tci_ceil_div(tci_gemm_split(op, s).slice, tci_gemm_tiles(s).bk);
        s->wgmma_steps =
            s->stages >= 4 && steps >= LONG_LOOP_STEPS && s->store != TCC_GEMM_STORE_BULK ? 2 : 1;
    }
}

/* Whether the default schedule takes wgmma: the target has it, it takes the types, and what
 * the schedule gives (a shape, warp tiles, passes, a layout) leaves it possible. */
static bool wgmma_default(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s)
{
    int k = tci_target_wgmma_k(op->input_type);
    const TensorShape *row = tci_target_family_shape(TENSOR_WGMMA, 64, 64, k, op->input_type);
    bool shape_open = !s->mma_m || s->mma_m == 64;
    /* Warp tiles of two m64 tiles: a ping-pong consumer's (--intrinsic wgmma gives them too). */
    int rows = s->consumers == TCC_GEMM_CONSUMERS_PINGPONG ? 2 : 1;
    bool tiles_open = s->warp_row_tiles <= rows && s->warp_col_tiles <= 1;
    int64_t passes = s->num_total_passes ? s->num_total_passes : 4;
    bool rows_fit = passes * k * (int64_t)tcc_dtype_size(op->input_type) <= 128;
    return tci_target_arch_has_family(arch, TENSOR_WGMMA) && row &&
           tci_target_shape_takes(row, op->accumulate_type) && shape_open && tiles_open &&
           rows_fit && tci_gemm_operands_readable(op) &&
           (s->smem_layout == TCC_SMEM_AUTO || s->smem_layout == TCC_SMEM_SWIZZLED);
}

/* A persistent grid's outputs stored by the copy engine from an output tile beside the
 * stages, which a producer warpgroup keeps filled, where a block holds a multiprocessor, the
 * tiles outnumber them and the output tile fits (a ring of two column blocks where one
 * warpgroup spans its columns, passes/store_ring.c). On an H100 the seed layer with a float16
 * output ran 0.1684 ms against 0.1718 (a block a tile through a C tile; cuDNN 0.1557),
 * bfloat16 0.1641; from registers, 4-byte stores, 0.1902. Four-byte outputs (float32, int32)
 * once left room for two stages only (0.2229 ms); in the ring they keep four, and the seed
 * layer ran 0.1661 ms against 0.1760 from registers, bfloat16 in 0.1604 against 0.1716, int8
 * 0.0894 against 0.1053, 8192^3 1.5073 against 1.5314 (r50_res3_1x1_b256, eight k steps a
 * tile, 0.1162 against 0.1141). */
static void choose_bulk_store(const GemmOperator *op, tcc_arch arch, tcc_gemm_schedule *s)
{
    if (s->store != TCC_GEMM_STORE_AUTO || s->grid == TCC_GEMM_GRID_TILES ||
        s->producer == TCC_GEMM_PRODUCER_NONE || s->copy == TCC_GEMM_COPY_THREADS ||
        s->consumers == TCC_GEMM_CONSUMERS_PINGPONG)
        return;
    tcc_gemm_schedule bulk = *s;
    bulk.store = TCC_GEMM_STORE_BULK, bulk.copy = TCC_GEMM_COPY_BULK;
    bulk.grid = TCC_GEMM_GRID_PERSISTENT, bulk.producer = TCC_GEMM_PRODUCER_WARPGROUP;
    bulk.stages = s->stages ? s->stages : 3;
    Tiles t = tci_gemm_tiles(&bulk);
    int sms = s->grid_blocks ? s->grid_blocks : tci_target_arch(arch)->multiprocessors;
    if (!tci_gemm_bulk_possible(op, arch, &bulk) || !tci_gemm_bulk_store_possible(op, &bulk) ||
        !tci_gemm_producer_possible(arch, &bulk) || !block_shared_fits(op, arch, &bulk) ||
        blocks_of(op, t.bm, t.bn) <= sms)
        return;
    s->store = TCC_GEMM_STORE_BULK;
    s->grid = TCC_GEMM_GRID_PERSISTENT;
    s->producer = TCC_GEMM_PRODUCER_WARPGROUP;
    s->copy = TCC_GEMM_COPY_BULK;
}

/* Blocks of the schedule a multiprocessor holds at once, as its shared memory and threads
 * allow. */
static int64_t resident_blocks(const GemmOperator *op, tcc_arch arch, const tcc_gemm_schedule *s)
{
    const TargetArch *target = tci_target_arch(arch);
    int64_t by_memory = target->shared_per_sm / block_shared_bytes(op, s);
    int64_t by_threads = target->max_threads_per_sm / tci_gemm_tiles(s).threads;
    return by_memory < by_threads ? by_memory : by_threads;
}

/* The grid, and with it the store: persistent where it can be, the stores from registers are
 * pairs of adjacent 4-byte elements, a multiprocessor holds one block (two or more hide each
 * other's fill and epilogue already) and the tiles outnumber the multiprocessors. On an H100
 * the seed layer ran 0.1799 ms persistent against 0.1868 (a block a tile, stored from
 * registers) and 0.1869 (shared), r50_res3_3x3s2_b32 0.0269 against 0.0285, 8192^3 1.642
 * against 1.737 ms (shared); but r50_res4_3x3_b32 (196 tiles of 96 KB, two an SM) 0.0361
 * against 0.0269, and with a float16 output (4-byte pairs) the seed layer 0.1904 against
 * 0.1731 (a block a tile, shared). */
static void choose_grid(const GemmOperator *op, tcc_arch arch, tcc_gemm_schedule *s)
{
    if (s->grid == TCC_GEMM_GRID_AUTO) {
        tcc_gemm_schedule stored = *s;
        stored.store = TCC_GEMM_STORE_REGISTERS;
        Tiles t = tci_gemm_tiles(s);
        int64_t tiles = blocks_of(op, t.bm, t.bn) * tci_gemm_split(op, s).splits;
        bool registers = s->store == TCC_GEMM_STORE_REGISTERS ||
                         (s->store == TCC_GEMM_STORE_AUTO && tcc_dtype_size(op->output_type) >= 4 &&
                          !op->output_contiguous_in_m && tci_gemm_registers_possible(op, s));
        int sms = s->grid_blocks ? s->grid_blocks : tci_target_arch(arch)->multiprocessors;
        bool pays = resident_blocks(op, arch, &stored) == 1 && tiles > sms;
        s->grid = s->copy == TCC_GEMM_COPY_BULK && registers && pays ? TCC_GEMM_GRID_PERSISTENT
                                                                     : TCC_GEMM_GRID_TILES;
    }
    if (s->store == TCC_GEMM_STORE_AUTO)
        s->store =
            s->grid == TCC_GEMM_GRID_PERSISTENT ? TCC_GEMM_STORE_REGISTERS : TCC_GEMM_STORE_SHARED;
    if (s->grid == TCC_GEMM_GRID_PERSISTENT && !s->grid_blocks)
        s->grid_blocks = tci_target_arch(arch)->multiprocessors;
}

/* An operand's bytes (its placeholder's, staged or not). */
static int64_t tensor_bytes(const tcc_tensor *t)
{
    int64_t elements = 1;
    for (int d = 0; d < t->ndim; d++)
        elements *= t->shape[d];
    return elements * (int64_t)tcc_dtype_size(t->type);
}

/* A reduction slice at least this deep, in a persistent grid, takes a producer warpgroup and
 * clusters of two blocks along m (choose_producer_and_cluster). */
enum { DEEP_PIPELINE_K = 4096 };

/* The producer and the clusters. Deep reductions in a persistent grid (DEEP_PIPELINE_K) take
 * a producer warpgroup feeding blocks in clusters of two that share their B tiles: on an H100
 * the 8192^3 product ran 1.600 and 1.599 ms against 1.691 and 1.703 without (cuBLAS 1.461),
 * bf16 1.534 against 1.710; either alone gained 1-2% or lost. Elsewhere neither: the seed
 * layer (K = 2304) ran 0.1895 ms with both against 0.1818, clusters alone 0.1926 against
 * 0.1811 (a block's copies wait for the other block's consumers too), a producer warpgroup
 * alone 0.1793 against 0.1805 (a block a tile 1-4% slower with one, on an H200); clusters of 4
 * ran the seed layer 0.35 ms and 8192^3 2.90. Clusters only where B does not fit in the L2:
 * sharing a B the L2 holds saves nothing and makes a block's copies wait for the other's
 * consumers (the seed layer with 512 and 1024 input channels, a filter of 4.5 and 9 MB, ran 2%
 * slower in them; bench/NOTES.md, twelfth session). */
static void choose_producer_and_cluster(const GemmOperator *op, tcc_arch arch, tcc_gemm_schedule *s)
{
    bool deep = s->intrinsic == TCC_GEMM_WGMMA && s->grid == TCC_GEMM_GRID_PERSISTENT &&
                tci_gemm_split(op, s).slice >= DEEP_PIPELINE_K && s->cluster != 1 &&
                s->producer != TCC_GEMM_PRODUCER_NONE && tci_gemm_producer_possible(arch, s);
    if (s->producer == TCC_GEMM_PRODUCER_AUTO)
        s->producer = deep ? TCC_GEMM_PRODUCER_WARPGROUP : TCC_GEMM_PRODUCER_NONE;
    if (!s->cluster)
        s->cluster = deep && tensor_bytes(op->b_source) > tci_target_arch(arch)->l2_bytes &&
                             tci_gemm_cluster_possible(op, arch, s, 2)
                         ? 2
                         : 1;
}

tcc_cache_hint tci_gemm_operand_cache(const GemmOperator *op, tcc_arch arch)
{
    int64_t bytes = tensor_bytes(op->a_source) + tensor_bytes(op->b_source);
    return bytes <= tci_target_arch(arch)->l2_bytes ? TCC_CACHE_EVICT_LAST : TCC_CACHE_NORMAL;
}

/* Cooperative unless asked for; ping-pong asks for what it needs of what is left open. */
static void choose_consumers(tcc_gemm_schedule *s)
{
    if (s->consumers == TCC_GEMM_CONSUMERS_AUTO)
        s->consumers = TCC_GEMM_CONSUMERS_COOPERATIVE;
    if (s->consumers != TCC_GEMM_CONSUMERS_PINGPONG)
        return;
    if (s->producer == TCC_GEMM_PRODUCER_AUTO)
        s->producer = TCC_GEMM_PRODUCER_WARPGROUP;
    if (s->grid == TCC_GEMM_GRID_AUTO)
        s->grid = TCC_GEMM_GRID_PERSISTENT;
    if (s->store == TCC_GEMM_STORE_AUTO)
        s->store = TCC_GEMM_STORE_REGISTERS;
    if (s->copy == TCC_GEMM_COPY_AUTO)
        s->copy = TCC_GEMM_COPY_BULK;
    if (!s->block_row_warps)
        s->block_row_warps = 1;
    if (!s->block_col_warps)
        s->block_col_warps = 1;
}

/* wgmma's blocks and steps, then the copies: by the copy engine where it can take them. It
 * needs two k steps or more (its barriers are the pipeline's), so a reduction that four
 * passes make one step takes two steps of two passes (64-byte rows) where that lets the
 * engine copy it (chosen, or asked for with --copy bulk) and the output is of two bytes. On
 * an H100 r50_res2_1x1_b32 (64 channels) with float16 output ran 0.0280 ms so against 0.0355
 * in one step copied by every thread (cuDNN 0.0291); with float32 output, whose stores
 * dominate, 0.0484 against 0.0470. */
static void choose_wgmma_and_copy(const GemmOperator *op, tcc_arch arch, tcc_gemm_schedule *s)
{
    tcc_gemm_schedule given = *s;
    choose_wgmma(op, arch, s);
    if (given.copy == TCC_GEMM_COPY_THREADS)
        return;
    bool bulk = tci_gemm_bulk_possible(op, arch, s);
    int64_t steps = tci_ceil_div(tci_gemm_split(op, s).slice, tci_gemm_tiles(s).bk);
    if (!bulk && steps < 2 && !given.num_total_passes && !given.num_fused_passes &&
        tcc_dtype_size(op->output_type) == 2) {
        tcc_gemm_schedule halves = given;
        halves.num_total_passes = 2;
        choose_wgmma(op, arch, &halves);
        if (tci_gemm_bulk_possible(op, arch, &halves))
            *s = halves, bulk = true;
    }
    /* choose_bulk_store may have taken the copy engine for the stores already. */
    if (s->copy == TCC_GEMM_COPY_AUTO)
        s->copy = bulk ? TCC_GEMM_COPY_BULK : TCC_GEMM_COPY_THREADS;
}

void tci_gemm_choose_defaults(const GemmOperator *op, tcc_arch arch, tcc_gemm_schedule *s)
{
    choose_consumers(s);
    if (s->intrinsic == TCC_GEMM_INTRINSIC_AUTO && wgmma_default(op, arch, s))
        s->intrinsic = TCC_GEMM_WGMMA;
    if (s->intrinsic == TCC_GEMM_WGMMA) {
        choose_wgmma_and_copy(op, arch, s);
        choose_grid(op, arch, s);
        choose_producer_and_cluster(op, arch, s);
        return;
    }
    choose_producer_and_cluster(op, arch, s);
    if (s->grid == TCC_GEMM_GRID_AUTO)
        s->grid = TCC_GEMM_GRID_TILES;
    if (s->store == TCC_GEMM_STORE_AUTO)
        s->store = TCC_GEMM_STORE_SHARED;
    if (s->copy == TCC_GEMM_COPY_AUTO)
        s->copy = TCC_GEMM_COPY_THREADS;
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
        const TensorShape *row = tci_gemm_mma_sync_row(op, s);
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
        s->smem_layout = ldmatrix && tci_gemm_operands_swizzle(op, s, &a_row, &b_row)
                             ? TCC_SMEM_SWIZZLED
                             : TCC_SMEM_PADDED;
    }
}

GemmSplit tci_gemm_split(const GemmOperator *op, const tcc_gemm_schedule *s)
{
    int64_t step = (int64_t)s->num_total_passes * s->mma_k;
    if (s->split_k <= 1)
        return (GemmSplit){1, op->k};
    /* Whole k steps per slice; the last slice may run past K, where A and B read zeros. */
    int64_t slice = tci_ceil_div(tci_ceil_div(op->k, s->split_k), step) * step;
    return (GemmSplit){tci_ceil_div(op->k, slice), slice};
}
