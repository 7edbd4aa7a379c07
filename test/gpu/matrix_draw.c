/*
 * tcc-matrix's random configurations (what is drawn, and how often: matrix.c's comment),
 * each from its own splitmix64 stream derived from the seed and its index: the operator
 * and its sizes and layouts, the types, the epilogue, the schedule, and the shapes for the
 * bulk copy engine and for clusters.
 */
#include "matrix_draw.h"

/* ---- random numbers ----------------------------------------------------------------------- */

uint64_t next_u64(Rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]; the modulo bias is irrelevant for ranges this small. */
static int64_t uniform(Rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(next_u64(r) % (uint64_t)(hi - lo + 1));
}

static bool chance(Rng *r, double p)
{
    return (double)(next_u64(r) >> 11) * 0x1.0p-53 < p;
}

static double pick_double(Rng *r, const double *values, int count)
{
    return values[uniform(r, 0, count - 1)];
}

/* The stream of configuration `index`: independent of every other index, so one
 * configuration can be replayed without drawing the ones before it. */
static Rng config_rng(uint64_t seed, int index)
{
    Rng r = {seed ^ (0xd1b54a32d192ed03ull * (uint64_t)(index + 1))};
    next_u64(&r);
    return r;
}

/* ---- configurations ----------------------------------------------------------------------- */

tcc_dtype input_type(const Config *c)
{
    return c->matmul ? c->mm.input_type : c->conv.input_type;
}

typedef struct TypeCombo {
    tcc_dtype input, accumulate, output;
    int weight;
} TypeCombo;

/* f16 into f32 is the common case; every other combination the tensor cores offer appears
 * often enough that 240 draws see each several times. */
static const TypeCombo type_combos[] = {
    {TCC_FLOAT16, TCC_FLOAT32, TCC_FLOAT32, 36},  {TCC_FLOAT16, TCC_FLOAT16, TCC_FLOAT16, 8},
    {TCC_FLOAT16, TCC_FLOAT16, TCC_FLOAT32, 4},   {TCC_FLOAT16, TCC_FLOAT32, TCC_FLOAT16, 8},
    {TCC_FLOAT16, TCC_FLOAT32, TCC_BFLOAT16, 4},  {TCC_BFLOAT16, TCC_FLOAT32, TCC_FLOAT32, 10},
    {TCC_BFLOAT16, TCC_FLOAT32, TCC_BFLOAT16, 5}, {TCC_FLOAT32, TCC_FLOAT32, TCC_FLOAT32, 10},
    {TCC_INT8, TCC_INT32, TCC_INT32, 11},         {TCC_INT8, TCC_INT32, TCC_FLOAT32, 4},
};

static TypeCombo draw_types(Rng *r)
{
    int total = 0, count = (int)(sizeof type_combos / sizeof type_combos[0]);
    for (int i = 0; i < count; i++)
        total += type_combos[i].weight;
    int64_t ticket = uniform(r, 0, total - 1);
    for (int i = 0; i < count; i++) {
        if (ticket < type_combos[i].weight)
            return type_combos[i];
        ticket -= type_combos[i].weight;
    }
    return type_combos[0];
}

/* alpha, beta and the prologue's argument. An int32 output takes whole numbers only: the
 * exact int8 check (tolerance 0) must not depend on how a fraction is rounded. */
static double draw_scale(Rng *r, bool integral)
{
    static const double real[] = {0.5, 2.0, -1.0, 0.25, 1.5, -0.75};
    static const double whole[] = {2.0, -1.0, 3.0, -2.0};
    return integral ? pick_double(r, whole, 4) : pick_double(r, real, 6);
}

static void draw_clamp(Rng *r, tcc_epilogue *e, bool integral)
{
    static const double real_min[] = {-1.0, -0.5, -4.0}, real_max[] = {0.5, 1.0, 4.0};
    static const double whole_min[] = {-8.0, -2.0, -30.0}, whole_max[] = {4.0, 16.0, 30.0};
    e->clamp = true;
    e->clamp_min = pick_double(r, integral ? whole_min : real_min, 3);
    e->clamp_max = pick_double(r, integral ? whole_max : real_max, 3);
}

/* A random subset of the epilogue's and the prologue's operations (a third: none). */
static void draw_epilogue(Rng *r, tcc_epilogue *e, tcc_dtype output)
{
    bool integral = output == TCC_INT32;
    if (chance(r, 0.35))
        return;
    e->bias = chance(r, 0.5);
    if (chance(r, 0.4))
        e->alpha = draw_scale(r, integral);
    if (chance(r, 0.4)) {
        e->beta = draw_scale(r, integral);
        e->residual = chance(r, 0.5);
    }
    e->relu = chance(r, 0.3);
    if (chance(r, 0.25))
        draw_clamp(r, e, integral);
    if (chance(r, 0.3)) {
        e->prologue = (tcc_prologue_op)uniform(r, TCC_PROLOGUE_SET, TCC_PROLOGUE_RELU);
        if (e->prologue != TCC_PROLOGUE_RELU)
            e->prologue_arg = draw_scale(r, integral);
    }
}

/* One spatial axis of a convolution. */
typedef struct Axis {
    int64_t size, kernel, stride, pad_lo, pad_hi, dilation;
} Axis;

static Axis draw_axis(Rng *r, int64_t max_size)
{
    static const double kernels[] = {1, 2, 3, 5, 7};
    Axis a = {.size = uniform(r, 1, max_size),
              .kernel = (int64_t)pick_double(r, kernels, 5),
              .stride = uniform(r, 1, 3),
              .pad_lo = uniform(r, 0, 3),
              .pad_hi = uniform(r, 0, 3),
              .dilation = chance(r, 0.6) ? 1 : uniform(r, 2, 3)};
    return a;
}

/* The dilated window must fit in the padded input once; grow the input where it does not
 * (a span is at most 3 * 6 + 1 = 19, so the input stays within 20). */
static void fit_axis(Axis *a)
{
    int64_t span = a->dilation * (a->kernel - 1) + 1;
    if (a->size + a->pad_lo + a->pad_hi < span)
        a->size = span - a->pad_lo - a->pad_hi;
}

static int64_t draw_channels(Rng *r)
{
    return chance(r, 0.3) ? 16 * uniform(r, 1, 4) : uniform(r, 1, 72);
}

static int64_t round_up(int64_t value, int64_t multiple)
{
    return (value + multiple - 1) / multiple * multiple;
}

/* groups 1 (most), 2 or 3 (channels rounded up to a multiple) or depthwise (K = C or 2C). */
static void draw_groups(Rng *r, tcc_conv2d_desc *d)
{
    int64_t kind = uniform(r, 0, 9);
    if (kind < 6)
        return;
    if (kind < 8) {
        d->groups = uniform(r, 2, 3);
        d->in_channels = round_up(d->in_channels, d->groups);
        d->out_channels = round_up(d->out_channels, d->groups);
        return;
    }
    d->groups = d->in_channels;
    d->out_channels = d->in_channels * uniform(r, 1, 2);
}

static void set_axes(tcc_conv2d_desc *d, Axis h, Axis w)
{
    d->height = h.size, d->kernel_h = h.kernel, d->stride_h = h.stride;
    d->pad_top = h.pad_lo, d->pad_bottom = h.pad_hi, d->dilation_h = h.dilation;
    d->width = w.size, d->kernel_w = w.kernel, d->stride_w = w.stride;
    d->pad_left = w.pad_lo, d->pad_right = w.pad_hi, d->dilation_w = w.dilation;
}

/* A pointwise window (1x1, stride 1, no padding) over a map of a multiple of 8 pixels, its
 * rows of any width (so that tiles of pixels start inside rows): an NCHW one of 16-bit
 * inputs and one group is a product per image (conv2d_pointwise.c), which the draws above
 * would make one time in hundreds. */
static void draw_pointwise(Rng *r, tcc_conv2d_desc *d)
{
    Axis w = {.size = uniform(r, 1, 20), .kernel = 1, .stride = 1, .dilation = 1};
    int64_t even = w.size & -w.size; /* the largest power of two dividing the width */
    int64_t step = 8 / (even < 8 ? even : 8);
    Axis h = {.size = step * uniform(r, 1, 20 / step), .kernel = 1, .stride = 1, .dilation = 1};
    set_axes(d, h, w);
}

/* The blocked layout holds whole 16 x 16 blocks: N = 16, C and K multiples of 16, one
 * group; its maps are kept small since the batch is 16. */
static void draw_conv(Rng *r, tcc_conv2d_desc *d)
{
    tcc_conv2d_desc_init(d);
    bool blocked = chance(r, 0.1);
    Axis h = draw_axis(r, blocked ? 10 : 20);
    Axis w = draw_axis(r, blocked ? 10 : 20);
    if (chance(r, 0.5)) { /* a square window, as most networks have */
        w.kernel = h.kernel, w.stride = h.stride, w.dilation = h.dilation;
    }
    fit_axis(&h);
    fit_axis(&w);
    set_axes(d, h, w);
    if (blocked) {
        d->batch = 16;
        d->in_channels = 16 * uniform(r, 1, 4);
        d->out_channels = 16 * uniform(r, 1, 4);
        d->layout = TCC_LAYOUT_NHWCNC;
        d->filter_layout = TCC_FILTER_BLOCKED;
        return;
    }
    d->batch = uniform(r, 1, 4);
    d->in_channels = draw_channels(r);
    d->out_channels = draw_channels(r);
    draw_groups(r, d);
    d->layout = chance(r, 0.5) ? TCC_LAYOUT_NHWC : TCC_LAYOUT_NCHW;
    d->filter_layout = chance(r, 0.5) ? TCC_FILTER_KRSC : TCC_FILTER_KCRS;
    if (d->layout == TCC_LAYOUT_NCHW && chance(r, 0.25))
        draw_pointwise(r, d);
}

static int64_t draw_extent(Rng *r)
{
    return chance(r, 0.25) ? 16 * uniform(r, 1, 9) : uniform(r, 1, 150);
}

static void draw_matmul(Rng *r, tcc_matmul_desc *d)
{
    tcc_matmul_desc_init(d);
    d->batch = chance(r, 0.5) ? 1 : uniform(r, 2, 3);
    d->m = draw_extent(r);
    d->n = draw_extent(r);
    d->k = draw_extent(r);
    d->a_col_major = chance(r, 0.5);
    d->b_col_major = chance(r, 0.5);
}

/* A warpgroup's m64nNk16 (wgmma, sm_90a) one time in four where the types allow it. */
static void draw_mma_shape(Rng *r, tcc_dtype input, tcc_dtype accumulate, tcc_gemm_schedule *s)
{
    static const int shapes[3][3] = {{16, 16, 16}, {32, 8, 16}, {8, 32, 16}};
    static const int wgmma_n[3] = {64, 128, 256};
    if (input == TCC_FLOAT32) { /* tf32 has one shape */
        s->mma_m = 16, s->mma_n = 16, s->mma_k = 8;
        return;
    }
    bool wgmma = (input == TCC_FLOAT16 || input == TCC_BFLOAT16) && accumulate == TCC_FLOAT32;
    if (wgmma && chance(r, 0.25)) {
        s->mma_m = 64, s->mma_n = wgmma_n[uniform(r, 0, 2)], s->mma_k = 16;
        return;
    }
    int i = (int)uniform(r, 0, 2);
    s->mma_m = shapes[i][0], s->mma_n = shapes[i][1], s->mma_k = shapes[i][2];
}

static bool is_wgmma_shape(const tcc_gemm_schedule *s)
{
    return s->mma_m == 64;
}

/* Where the copies may be bulk and the accumulators go out from registers (or through the copy
 * engine), half the time a persistent grid, mostly of 1 to 3 blocks so that each runs several
 * tiles (refused, and drawn again, where the copies are not bulk). */
static void draw_grid(Rng *r, tcc_gemm_schedule *s)
{
    bool from_registers = s->store == TCC_GEMM_STORE_REGISTERS || s->store == TCC_GEMM_STORE_BULK;
    if (s->copy != TCC_GEMM_COPY_AUTO || !from_registers || chance(r, 0.5))
        return;
    s->grid = TCC_GEMM_GRID_PERSISTENT;
    s->grid_blocks = chance(r, 0.25) ? 0 : (int)uniform(r, 1, 3);
}

/* The epilogue from registers half the time, a third of those through the copy engine
 * (refused, and drawn again, for accumulators that are not float32, too few registers, an
 * output the engine cannot address or copies that are not bulk). */
static tcc_gemm_store draw_store(Rng *r)
{
    if (chance(r, 0.5))
        return TCC_GEMM_STORE_AUTO;
    return chance(r, 1.0 / 3) ? TCC_GEMM_STORE_BULK : TCC_GEMM_STORE_REGISTERS;
}

/* wgmma's knobs: one MMA tile a warpgroup, steps of rows of at most 128 bytes (1, 2 or 4
 * passes), swizzled tiles, copies by the threads or chosen (bulk where the operands allow). */
static void draw_wgmma_knobs(Rng *r, tcc_gemm_schedule *s)
{
    static const int passes[4] = {0, 1, 2, 4};
    s->warp_row_tiles = s->warp_col_tiles = chance(r, 0.5) ? 0 : 1;
    s->num_total_passes = s->num_fused_passes = passes[uniform(r, 0, 3)];
    s->intrinsic = TCC_GEMM_WGMMA;
    s->smem_layout = chance(r, 0.5) ? TCC_SMEM_AUTO : TCC_SMEM_SWIZZLED;
    s->wgmma_steps = (int)uniform(r, 0, 2);
    s->copy = chance(r, 0.5) ? TCC_GEMM_COPY_AUTO : TCC_GEMM_COPY_THREADS;
    /* A producer warpgroup where the copies may be bulk (refused, and drawn again, where
     * they are not). */
    bool bulk = s->copy == TCC_GEMM_COPY_AUTO;
    s->producer = bulk && chance(r, 0.5) ? TCC_GEMM_PRODUCER_WARPGROUP : TCC_GEMM_PRODUCER_AUTO;
    s->store = draw_store(r);
    draw_grid(r, s);
}

/* A knob of 1..max, or (one time in eight) 0 for the library's choice. */
static int draw_knob(Rng *r, int max)
{
    return chance(r, 0.125) ? 0 : (int)uniform(r, 1, max);
}

/* Warps, warp tiles, passes (fused passes dividing them), policy, block order, pipeline
 * stages, shared-memory layout, intrinsic (mma.sync where it has the shape and type) and
 * split-K. */
void draw_knobs(Rng *r, tcc_dtype input, tcc_gemm_schedule *s)
{
    s->block_row_warps = draw_knob(r, 2);
    s->block_col_warps = draw_knob(r, 2);
    s->warp_row_tiles = draw_knob(r, 4);
    s->warp_col_tiles = draw_knob(r, 4);
    s->num_total_passes = draw_knob(r, 4);
    s->num_fused_passes = 0;
    if (s->num_total_passes) {
        int divisors[4], count = 0;
        for (int d = 1; d <= s->num_total_passes; d++)
            if (s->num_total_passes % d == 0)
                divisors[count++] = d;
        s->num_fused_passes = divisors[uniform(r, 0, count - 1)];
    }
    s->policy = chance(r, 0.5) ? TCC_MMA_PASS_ORDER : TCC_MMA_BLOCK_ORDER;
    s->column_major_blocks = chance(r, 0.5);
    s->stages = draw_knob(r, TCC_MAX_GEMM_STAGES);
    /* Half the products unsliced, the others 2 to 6 slices or the library's choice. */
    s->split_k = chance(r, 0.5) ? 1 : draw_knob(r, 6);
    if (is_wgmma_shape(s)) {
        draw_wgmma_knobs(r, s);
        return;
    }
    bool mma_sync = s->mma_m == 16 && s->mma_n == 16 && s->mma_k == 16 &&
                    (input == TCC_FLOAT16 || input == TCC_BFLOAT16);
    s->intrinsic = (tcc_gemm_intrinsic)uniform(r, TCC_GEMM_INTRINSIC_AUTO,
                                               mma_sync ? TCC_GEMM_MMA_SYNC : TCC_GEMM_WMMA);
    /* Swizzled tiles only where ldmatrix reads them (rows the swizzle cannot take redraw). */
    s->smem_layout = (tcc_smem_layout)uniform(
        r, TCC_SMEM_AUTO, s->intrinsic == TCC_GEMM_MMA_SYNC ? TCC_SMEM_SWIZZLED : TCC_SMEM_PADDED);
}

/* 30%: no schedule; 20%: an MMA shape only; 50%: the shape and every knob. */
static void draw_schedule(Rng *r, Config *c)
{
    int64_t kind = uniform(r, 0, 9);
    c->scheduled = kind >= 3;
    c->schedule = (tcc_gemm_schedule){.size = sizeof(tcc_gemm_schedule)};
    if (!c->scheduled)
        return;
    tcc_dtype accumulate = c->matmul ? c->mm.accumulate_type : c->conv.accumulate_type;
    draw_mma_shape(r, input_type(c), accumulate, &c->schedule);
    if (kind >= 5)
        draw_knobs(r, input_type(c), &c->schedule);
    if (is_wgmma_shape(&c->schedule))
        c->schedule.intrinsic = TCC_GEMM_WGMMA;
}

static void set_types(Config *c, TypeCombo t)
{
    tcc_dtype *in = c->matmul ? &c->mm.input_type : &c->conv.input_type;
    tcc_dtype *acc = c->matmul ? &c->mm.accumulate_type : &c->conv.accumulate_type;
    tcc_dtype *out = c->matmul ? &c->mm.output_type : &c->conv.output_type;
    *in = t.input, *acc = t.accumulate, *out = t.output;
}

/* Clusters of two blocks along m sharing B's tiles: m made 256 (two or four blocks of 128 or
 * 64 rows; a convolution of 4 images of 8x8 outputs), the grid persistent half the time. */
static void draw_cluster(Rng *r, Config *c)
{
    if (c->matmul) {
        c->mm.m = 256;
    } else {
        c->conv.batch = 4;
        c->conv.height = c->conv.width = 8;
        c->conv.kernel_h = c->conv.kernel_w = 3;
        c->conv.stride_h = c->conv.stride_w = 1;
        c->conv.dilation_h = c->conv.dilation_w = 1;
        c->conv.pad_top = c->conv.pad_bottom = c->conv.pad_left = c->conv.pad_right = 1;
    }
    c->scheduled = true;
    c->schedule = (tcc_gemm_schedule){.size = sizeof(tcc_gemm_schedule), .cluster = 2};
    if (chance(r, 0.5))
        c->schedule.store = TCC_GEMM_STORE_REGISTERS;
    draw_grid(r, &c->schedule);
    /* A producer warpgroup for half of the persistent ones (it meets the cluster's last
     * barrier after its loop). */
    if (c->schedule.grid == TCC_GEMM_GRID_PERSISTENT && chance(r, 0.5))
        c->schedule.producer = TCC_GEMM_PRODUCER_WARPGROUP;
}

/* One configuration in six is shaped for the bulk copy engine (sm_90a): a channels-last
 * convolution of 64 or 128 channels a group, KRSC, or a product whose k is a multiple of 64
 * and whose rows are whole 16-byte units; half of those ask for a producer warpgroup (the
 * library refuses it for types without wgmma, and the schedule is drawn again). */
static void shape_for_bulk_copies(Rng *r, Config *c)
{
    if (c->matmul) {
        c->mm.k = 64 * uniform(r, 2, 4);
        c->mm.m = 8 * uniform(r, 1, 18);
        c->mm.n = 8 * uniform(r, 1, 18);
    } else {
        c->conv.in_channels = 64 * uniform(r, 1, 2);
        c->conv.groups = 1;
        c->conv.layout = TCC_LAYOUT_NHWC;
        c->conv.filter_layout = TCC_FILTER_KRSC;
    }
    if (chance(r, 0.5)) {
        c->scheduled = true;
        c->schedule = (tcc_gemm_schedule){.size = sizeof(tcc_gemm_schedule),
                                          .producer = TCC_GEMM_PRODUCER_WARPGROUP};
        /* Storing from registers needs wgmma's float32 accumulators (redrawn where not); a
         * third of these through the copy engine, whose tiles run past the output's edges. */
        c->schedule.store = chance(r, 1.0 / 3) ? TCC_GEMM_STORE_BULK : draw_store(r);
        /* ...which addresses rows of a multiple of 16 bytes: channels a multiple of 8. */
        if (c->schedule.store == TCC_GEMM_STORE_BULK && !c->matmul)
            c->conv.out_channels = (c->conv.out_channels + 7) / 8 * 8;
        draw_grid(r, &c->schedule);
        /* Half of the persistent ones ping-pong, a consumer's tile one or two m64 tiles. */
        if (c->schedule.grid == TCC_GEMM_GRID_PERSISTENT && chance(r, 0.5)) {
            c->schedule.consumers = TCC_GEMM_CONSUMERS_PINGPONG;
            c->schedule.warp_row_tiles = chance(r, 0.5) ? 2 : 0;
        }
    } else if (chance(r, 0.5)) {
        draw_cluster(r, c);
    }
}

Config draw_config(uint64_t seed, int index)
{
    Config c = {.index = index, .rng = config_rng(seed, index)};
    Rng *r = &c.rng;
    c.matmul = chance(r, 0.25);
    if (c.matmul)
        draw_matmul(r, &c.mm);
    else
        draw_conv(r, &c.conv);
    TypeCombo types = draw_types(r);
    set_types(&c, types);
    draw_epilogue(r, c.matmul ? &c.mm.epilogue : &c.conv.epilogue, types.output);
    draw_schedule(r, &c);
    bool blocked = !c.matmul && c.conv.layout == TCC_LAYOUT_NHWCNC;
    if (!blocked && chance(r, 1.0 / 6))
        shape_for_bulk_copies(r, &c);
    c.data_seed = next_u64(r);
    return c;
}
