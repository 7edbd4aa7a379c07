/*
 * conv2d as an implicit GEMM: per group g, row m = (n, p, q) of the output pixels,
 * column n = the group's output channel, reduction k = (r, s, c) over the filter window
 * and the group's input channels. Batch 1 and 7x7 maps still give M = N*P*Q rows, so
 * every shape runs on the tensor cores; zero padding, strides, dilation and the ragged
 * edges are the range tests of A's elements.
 *
 * Layouts (element offsets as in ops/conv2d.c):
 *   input/output NHWC (N, H, W, C), NCHW (N, C, H, W), NHWCnc (N/16, H, W, C/16, 16n, 16c)
 *   filter KRSC (K, R, S, C/g), KCRS (K, C/g, R, S), blocked (R, S, C/16, K/16, 16c, 16k)
 */
#include "ops/gemm.h"
#include "ops/ops.h"

typedef struct ConvOp {
    GemmOperator gemm;
    tcc_conv2d_desc d;
    int64_t p, q;   /* output height and width */
    int64_t cg, kg; /* input and output channels per group */
    int64_t cr;     /* channels per group as the product reads them: cg, or padded */
    /* How the product reads its operands: the descriptor's layouts, or NHWC and KRSC
     * where an NCHW input and a KCRS filter are first staged into workspaces in those
     * layouts (16-byte copies along the channels instead of 2-byte gathers). */
    tcc_layout a_layout;
    tcc_filter_layout b_layout;
} ConvOp;

static tcc_expr *c_(tcc_func *f, int64_t v)
{
    return tcc_int(f, v);
}

/* (r, s, c) of a reduction index: c fastest for channels-last data, s fastest for NCHW,
 * so that consecutive k read neighbouring input elements. */
static void decode_k(tcc_func *f, const ConvOp *op, tcc_expr *k, tcc_expr **r, tcc_expr **s,
                     tcc_expr **c)
{
    const tcc_conv2d_desc *d = &op->d;
    if (op->a_layout == TCC_LAYOUT_NCHW) {
        *c = tcc_div(f, k, c_(f, d->kernel_h * d->kernel_w));
        *r = tcc_mod(f, tcc_div(f, k, c_(f, d->kernel_w)), c_(f, d->kernel_h));
        *s = tcc_mod(f, k, c_(f, d->kernel_w));
    } else {
        *r = tcc_div(f, k, c_(f, d->kernel_w * op->cr));
        *s = tcc_mod(f, tcc_div(f, k, c_(f, op->cr)), c_(f, d->kernel_w));
        *c = tcc_mod(f, k, c_(f, op->cr));
    }
}

/* (image, p, q) of an output row. */
static void decode_m(tcc_func *f, const ConvOp *op, tcc_expr *m, tcc_expr **n, tcc_expr **p,
                     tcc_expr **q)
{
    *n = tcc_div(f, m, c_(f, op->p * op->q));
    *p = tcc_mod(f, tcc_div(f, m, c_(f, op->q)), c_(f, op->p));
    *q = tcc_mod(f, m, c_(f, op->q));
}

tcc_expr *tci_conv2d_activation(tcc_func *f, tcc_tensor *t, tcc_layout layout, tcc_expr *n,
                                tcc_expr *y, tcc_expr *x, tcc_expr *channel, tcc_expr **index_out)
{
    tcc_expr *index[6];
    int ndim = 4;
    if (layout == TCC_LAYOUT_NHWC) {
        index[0] = n, index[1] = y, index[2] = x, index[3] = channel;
    } else if (layout == TCC_LAYOUT_NCHW) {
        index[0] = n, index[1] = channel, index[2] = y, index[3] = x;
    } else {
        ndim = 6;
        index[0] = tcc_div(f, n, c_(f, 16)), index[1] = y, index[2] = x;
        index[3] = tcc_div(f, channel, c_(f, 16));
        index[4] = tcc_mod(f, n, c_(f, 16)), index[5] = tcc_mod(f, channel, c_(f, 16));
    }
    if (index_out) {
        for (int i = 0; i < ndim; i++)
            index_out[i] = index[i];
        return NULL;
    }
    return tcc_access(f, t, ndim, index);
}

static tcc_expr *in_range(tcc_func *f, tcc_expr *x, int64_t size)
{
    return tcc_and(f, tcc_le(f, c_(f, 0), x), tcc_lt(f, x, c_(f, size)));
}

static tcc_expr *a_element(tcc_func *f, tcc_expr *g, tcc_expr *m, tcc_expr *k, void *user)
{
    const ConvOp *op = user;
    const tcc_conv2d_desc *d = &op->d;
    tcc_expr *n, *p, *q, *r, *s, *c;
    decode_m(f, op, m, &n, &p, &q);
    decode_k(f, op, k, &r, &s, &c);
    tcc_expr *y = tcc_add(f, tcc_sub(f, tcc_mul(f, p, c_(f, d->stride_h)), c_(f, d->pad_top)),
                          tcc_mul(f, r, c_(f, d->dilation_h)));
    tcc_expr *x = tcc_add(f, tcc_sub(f, tcc_mul(f, q, c_(f, d->stride_w)), c_(f, d->pad_left)),
                          tcc_mul(f, s, c_(f, d->dilation_w)));
    tcc_expr *channel = tcc_add(f, tcc_mul(f, g, c_(f, op->cr)), c);
    tcc_expr *value =
        tci_conv2d_activation(f, op->gemm.a_source, op->a_layout, n, y, x, channel, NULL);
    tcc_expr *inside = tcc_and(f, in_range(f, y, d->height), in_range(f, x, d->width));
    return tcc_select(f, inside, value, tcc_cast(f, d->input_type, c_(f, 0)));
}

tcc_expr *tci_conv2d_filter(tcc_func *f, tcc_tensor *t, tcc_filter_layout layout, tcc_expr *ko,
                            tcc_expr *r, tcc_expr *s, tcc_expr *c)
{
    tcc_expr *index[6];
    int ndim = 4;
    if (layout == TCC_FILTER_KRSC) {
        index[0] = ko, index[1] = r, index[2] = s, index[3] = c;
    } else if (layout == TCC_FILTER_KCRS) {
        index[0] = ko, index[1] = c, index[2] = r, index[3] = s;
    } else {
        ndim = 6;
        index[0] = r, index[1] = s, index[2] = tcc_div(f, c, c_(f, 16));
        index[3] = tcc_div(f, ko, c_(f, 16));
        index[4] = tcc_mod(f, c, c_(f, 16)), index[5] = tcc_mod(f, ko, c_(f, 16));
    }
    return tcc_access(f, t, ndim, index);
}

static tcc_expr *b_element(tcc_func *f, tcc_expr *g, tcc_expr *k, tcc_expr *n, void *user)
{
    const ConvOp *op = user;
    tcc_expr *r, *s, *c;
    decode_k(f, op, k, &r, &s, &c);
    tcc_expr *ko = tcc_add(f, tcc_mul(f, g, c_(f, op->kg)), n);
    return tci_conv2d_filter(f, op->gemm.b_source, op->b_layout, ko, r, s, c);
}

/* A's tiles as the copy engine's im2col boxes: the tile's pixels (m, in the order an
 * im2col box walks them: q, then p, then the image) at one filter offset (r, s), and a run
 * of channels of it, which the k step must not carry past the group's channels. The window
 * starts (q * stride - pad) and the offsets (s * dilation) are in the input's coordinates;
 * what falls outside the input (the padding) reads as zero. */
static bool a_tensor_map(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                         tcc_tensor_map *map, void *user)
{
    const ConvOp *op = user;
    const tcc_conv2d_desc *d = &op->d;
    int64_t channels = op->cr * d->groups, size = (int64_t)tcc_dtype_size(d->input_type);
    int lower[2] = {(int)-d->pad_left, (int)-d->pad_top};
    int upper[2] = {(int)(d->pad_right - (d->kernel_w - 1) * d->dilation_w),
                    (int)(d->pad_bottom - (d->kernel_h - 1) * d->dilation_h)};
    bool corners = true;
    for (int i = 0; i < 2; i++)
        corners =
            corners && lower[i] >= -128 && upper[i] >= -128 && lower[i] <= 127 && upper[i] <= 127;
    if (op->a_layout != TCC_LAYOUT_NHWC || op->cr % tile[2] != 0 || channels * size % 16 != 0 ||
        d->stride_h > 8 || d->stride_w > 8 || !corners)
        return false;
    if (!map)
        return true;
    *map = (tcc_tensor_map){
        .size = sizeof *map,
        .mode = TCC_TENSOR_MAP_IM2COL,
        .tensor = op->gemm.a_source,
        .rank = 4,
        .dims = {channels, d->width, d->height, d->batch},
        .strides = {1, channels, d->width * channels, d->height * d->width * channels},
        .box = {tile[2], tile[1]},
        .element_strides = {1, (int)d->stride_w, (int)d->stride_h, 1},
        .lower_corner = {lower[0], lower[1]},
        .upper_corner = {upper[0], upper[1]}};
    tcc_expr *image, *p, *q, *r, *s, *c;
    decode_m(f, op, axes[1], &image, &p, &q);
    decode_k(f, op, axes[2], &r, &s, &c);
    map->coords[0] = tcc_add(f, tcc_mul(f, axes[0], c_(f, op->cr)), c);
    map->coords[1] = tcc_sub(f, tcc_mul(f, q, c_(f, d->stride_w)), c_(f, d->pad_left));
    map->coords[2] = tcc_sub(f, tcc_mul(f, p, c_(f, d->stride_h)), c_(f, d->pad_top));
    map->coords[3] = image;
    map->offsets[0] = tcc_mul(f, s, c_(f, d->dilation_w));
    map->offsets[1] = tcc_mul(f, r, c_(f, d->dilation_h));
    return true;
}

/* B's tiles from a KRSC filter: per group, kg rows of R * S * C/groups, k contiguous. */
static bool b_tensor_map(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                         tcc_tensor_map *map, void *user)
{
    const ConvOp *op = user;
    const tcc_conv2d_desc *d = &op->d;
    const int64_t view[3] = {d->groups, op->kg, d->kernel_h * d->kernel_w * op->cr};
    if (op->b_layout != TCC_FILTER_KRSC)
        return false;
    return tci_gemm_dense_map(f, op->gemm.b_source, view, axes, tile, map);
}

/* An NHWC output is the product's rows m of groups x kg channels: a map of (n, g, m). */
static bool out_tensor_map(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                           tcc_tensor_map *map, void *user)
{
    (void)f;
    const ConvOp *op = user;
    int64_t size = (int64_t)tcc_dtype_size(op->d.output_type);
    if (op->d.layout != TCC_LAYOUT_NHWC || op->kg * size % 16 != 0)
        return false; /* the copy engine's strides are multiples of 16 bytes */
    if (!map)
        return true;
    *map = (tcc_tensor_map){.size = sizeof *map,
                            .mode = TCC_TENSOR_MAP_TILED,
                            .tensor = op->gemm.output,
                            .rank = 3,
                            .dims = {op->kg, op->d.groups, op->gemm.m},
                            .strides = {0, op->kg, op->d.groups * op->kg},
                            .box = {tile[2], 1, tile[1]},
                            .coords = {axes[2], axes[0], axes[1]}};
    return true;
}

static void output_index(tcc_func *f, tcc_expr *g, tcc_expr *m, tcc_expr *n, tcc_expr **index,
                         void *user)
{
    const ConvOp *op = user;
    tcc_expr *image, *p, *q;
    decode_m(f, op, m, &image, &p, &q);
    tcc_expr *ko = tcc_add(f, tcc_mul(f, g, c_(f, op->kg)), n);
    tci_conv2d_activation(f, NULL, op->d.layout, image, p, q, ko, index);
}

int tci_conv2d_activation_shape(tcc_layout layout, int64_t n, int64_t h, int64_t w, int64_t c,
                                int64_t *shape)
{
    if (layout == TCC_LAYOUT_NHWC) {
        shape[0] = n, shape[1] = h, shape[2] = w, shape[3] = c;
        return 4;
    }
    if (layout == TCC_LAYOUT_NCHW) {
        shape[0] = n, shape[1] = c, shape[2] = h, shape[3] = w;
        return 4;
    }
    shape[0] = n / 16, shape[1] = h, shape[2] = w, shape[3] = c / 16, shape[4] = 16, shape[5] = 16;
    return 6;
}

int tci_conv2d_filter_shape(const tcc_conv2d_desc *d, tcc_filter_layout layout, int64_t cg,
                            int64_t *shape)
{
    int64_t k = d->out_channels, r = d->kernel_h, s = d->kernel_w;
    if (layout == TCC_FILTER_KRSC) {
        shape[0] = k, shape[1] = r, shape[2] = s, shape[3] = cg;
        return 4;
    }
    if (layout == TCC_FILTER_KCRS) {
        shape[0] = k, shape[1] = cg, shape[2] = r, shape[3] = s;
        return 4;
    }
    shape[0] = r, shape[1] = s, shape[2] = d->in_channels / 16, shape[3] = k / 16;
    shape[4] = 16, shape[5] = 16;
    return 6;
}

/* NCHW -> NHWC and KCRS -> KRSC are the same move: dimension 1 last. */
static void stage(GemmOperator *g, tcc_tensor *from, tcc_tensor *to, bool channels_second)
{
    static const int channel_last[4] = {0, 3, 1, 2}; /* from's index, from to's axes */
    StagedOperand *st = &g->staged[g->nstaged++];
    st->from = from;
    st->to = to;
    for (int i = 0; i < 4; i++)
        st->perm[i] = channels_second ? channel_last[i] : i;
}

/* The input and filter, copied channels-last (NHWC, KRSC) into workspaces by kernels of
 * their own, as cuDNN does, with `cr` channels (zeros past the real ones): the product then
 * reads both 16 bytes at a time. Two cases:
 * - an NCHW input with a KCRS filter (but a pointwise one: conv2d_pointwise.c): 2-byte
 *   gathers along the window otherwise (an input copy costs a read and a write of the input;
 *   the gathers, several times the product);
 * - a few channels (a first layer's 3): each pixel's channels padded to 16 bytes, as
 *   CUTLASS's fixed-channel iterators want them, instead of one element a copy. */
static void stage_channels_last(tcc_func *f, ConvOp *op, int64_t cr)
{
    const tcc_conv2d_desc *d = &op->d;
    GemmOperator *g = &op->gemm;
    int64_t shape[6];
    g->a_param = g->a_source;
    g->b_param = g->b_source;
    tci_conv2d_activation_shape(TCC_LAYOUT_NHWC, d->batch, d->height, d->width, cr * d->groups,
                                shape);
    g->a_source = tcc_placeholder(f, "input_nhwc", 4, shape, d->input_type);
    tci_conv2d_filter_shape(d, TCC_FILTER_KRSC, cr, shape);
    g->b_source = tcc_placeholder(f, "filter_krsc", 4, shape, d->input_type);
    stage(g, g->a_param, g->a_source, d->layout == TCC_LAYOUT_NCHW);
    stage(g, g->b_param, g->b_source, d->filter_layout == TCC_FILTER_KCRS);
    op->a_layout = TCC_LAYOUT_NHWC;
    op->b_layout = TCC_FILTER_KRSC;
    op->cr = cr;
    g->k = cr * d->kernel_h * d->kernel_w;
}

/* Whether, and with how many channels, the operands are staged channels-last. */
static int64_t staged_channels(const tcc_conv2d_desc *d, int64_t cg)
{
    const int64_t vector = 16 / (int64_t)tcc_dtype_size(d->input_type);
    bool plain_layouts =
        (d->layout == TCC_LAYOUT_NHWC || d->layout == TCC_LAYOUT_NCHW) &&
        (d->filter_layout == TCC_FILTER_KRSC || d->filter_layout == TCC_FILTER_KCRS);
    /* The padded copy must stay a tensor tcc can index (the unstaged path is valid). */
    const int64_t padded = d->batch * d->height * d->width * d->groups * vector;
    if (!plain_layouts)
        return 0;
    if (cg < vector && d->groups == 1 && padded <= TCI_MAX_TENSOR_ELEMENTS)
        return vector;
    if (d->layout == TCC_LAYOUT_NCHW && d->filter_layout == TCC_FILTER_KCRS && cg % vector == 0)
        return cg;
    return 0;
}

/* The GEMM of a convolution, with its placeholders, in the function's arena. */
tcc_status tci_conv2d_gemm(tcc_func *f, const void *desc, GemmOperator **out)
{
    const tcc_conv2d_desc *d = desc;
    tcc_status status = tcc_conv2d_validate(f->ctx, d);
    if (status != TCC_OK)
        return status;
    if (tci_conv2d_pointwise(d))
        return tci_conv2d_pointwise_gemm(f, d, out);
    ConvOp *op = tci_arena_alloc(f->arena, sizeof *op);
    *op = (ConvOp){.d = *d};
    op->p = tcc_conv2d_out_height(d);
    op->q = tcc_conv2d_out_width(d);
    op->cg = d->in_channels / d->groups;
    op->kg = d->out_channels / d->groups;
    GemmOperator *g = &op->gemm;
    *g = (GemmOperator){.groups = d->groups,
                        .m = d->batch * op->p * op->q,
                        .n = op->kg,
                        .k = op->cg * d->kernel_h * d->kernel_w,
                        .input_type = d->input_type,
                        .accumulate_type = d->accumulate_type,
                        .output_type = d->output_type,
                        .epilogue = d->epilogue,
                        .a_element = a_element,
                        .b_element = b_element,
                        .output_index = output_index,
                        .a_tensor_map = a_tensor_map,
                        .b_tensor_map = b_tensor_map,
                        .out_tensor_map = out_tensor_map,
                        .output_contiguous_in_m = d->layout == TCC_LAYOUT_NCHW,
                        .bias = TCI_BIAS_PER_GROUP_COLUMN,
                        /* KRSC and KCRS filters run along k; the blocked one along n. */
                        .b_col_major = d->filter_layout != TCC_FILTER_BLOCKED,
                        .a_name = "input",
                        .b_name = "filter",
                        .output_name = "output",
                        .a_layout = tci_conv2d_layout_name(d->layout),
                        .b_layout = tci_conv2d_filter_layout_name(d->filter_layout),
                        .output_layout = tci_conv2d_layout_name(d->layout),
                        .op = op};
    int64_t shape[6];
    int n = tci_conv2d_activation_shape(d->layout, d->batch, d->height, d->width, d->in_channels,
                                        shape);
    g->a_source = tcc_placeholder(f, "input", n, shape, d->input_type);
    n = tci_conv2d_filter_shape(d, d->filter_layout, op->cg, shape);
    g->b_source = tcc_placeholder(f, "filter", n, shape, d->input_type);
    n = tci_conv2d_activation_shape(d->layout, d->batch, op->p, op->q, d->out_channels, shape);
    g->output = tcc_placeholder(f, "output", n, shape, d->output_type);
    op->a_layout = d->layout;
    op->b_layout = d->filter_layout;
    op->cr = op->cg;
    int64_t staged = staged_channels(d, op->cg);
    if (staged)
        stage_channels_last(f, op, staged);
    *out = g;
    return g->output && g->a_source && g->b_source ? TCC_OK : tci_func_status(f);
}
