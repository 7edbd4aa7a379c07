/*
 * A pointwise NCHW convolution (1x1, stride 1, no padding, one group) as a product per
 * image:
 *   Out[image] (K x H*W) = Filter (K x C) * In[image] (C x H*W)
 * with g = the image, m = the output channel, n = the pixel and k = the input channel. In
 * and Out are row-major matrices of the caller's tensors (pixels contiguous) and the filter
 * (KCRS or KRSC, the same for 1x1) is one K x C matrix that every image shares.
 *
 * The implicit GEMM of conv2d_gemm.c instead makes the pixels its rows: it first copies
 * an NCHW input to NHWC in a kernel of its own and then stores its tiles transposed. For a
 * 1x1 filter that copy moves as many bytes as the product itself: on an H100 (one call,
 * fp16 out), r50_res3_1x1_b256 ran 0.2812 ms that way and 0.0916 ms as this product (cuDNN
 * 0.0949), r50_res2_1x1_b32 0.0645 against 0.0276 (cuDNN 0.0289). Where a row of pixels is
 * not a multiple of 16 bytes (14x14, 7x7 maps) the tiles can come neither through the copy
 * engine nor in 16-byte copies: as tcc-matmul's batched products of those shapes they ran 2.7
 * and 1.5 times slower than the implicit GEMM, which keeps them.
 */
#include "ops/gemm.h"
#include "ops/ops.h"

typedef struct PointwiseOp {
    GemmOperator gemm;
    tcc_conv2d_desc d;
} PointwiseOp;

/* Rows of pixels a multiple of 16 bytes: what the copy engine's strides and 16-byte copies
 * need of B's and the output's rows. */
static bool pixel_rows_aligned(const tcc_conv2d_desc *d)
{
    return d->height * d->width * (int64_t)tcc_dtype_size(d->input_type) % 16 == 0 &&
           d->height * d->width * (int64_t)tcc_dtype_size(d->output_type) % 16 == 0;
}

bool tci_conv2d_pointwise(const tcc_conv2d_desc *d)
{
    bool plain_filter = d->filter_layout == TCC_FILTER_KCRS || d->filter_layout == TCC_FILTER_KRSC;
    bool pointwise = d->kernel_h == 1 && d->kernel_w == 1 && d->stride_h == 1 && d->stride_w == 1 &&
                     d->pad_top == 0 && d->pad_bottom == 0 && d->pad_left == 0 && d->pad_right == 0;
    /* B is read along n (MN-major): tensor cores take that of 16-bit types only. */
    return d->layout == TCC_LAYOUT_NCHW && plain_filter && pointwise && d->groups == 1 &&
           tci_target_wgmma_transposes(d->input_type) && pixel_rows_aligned(d);
}

static tcc_expr *c_(tcc_func *f, int64_t v)
{
    return tcc_int(f, v);
}

/* The filter's (output channel, input channel): the same matrix for every image. */
static tcc_expr *a_element(tcc_func *f, tcc_expr *g, tcc_expr *m, tcc_expr *k, void *user)
{
    (void)g;
    const PointwiseOp *op = user;
    return tci_conv2d_filter(f, op->gemm.a_source, op->d.filter_layout, m, c_(f, 0), c_(f, 0), k);
}

/* The element (or, with `index`, the index) of an NCHW tensor at (image, channel, pixel),
 * pixel = y * width + x. */
static tcc_expr *nchw(tcc_func *f, const PointwiseOp *op, tcc_tensor *t, tcc_expr *image,
                      tcc_expr *channel, tcc_expr *pixel, tcc_expr **index)
{
    tcc_expr *y = tcc_div(f, pixel, c_(f, op->d.width));
    tcc_expr *x = tcc_mod(f, pixel, c_(f, op->d.width));
    return tci_conv2d_activation(f, t, TCC_LAYOUT_NCHW, image, y, x, channel, index);
}

static tcc_expr *b_element(tcc_func *f, tcc_expr *g, tcc_expr *k, tcc_expr *n, void *user)
{
    const PointwiseOp *op = user;
    return nchw(f, op, op->gemm.b_source, g, k, n, NULL);
}

static void output_index(tcc_func *f, tcc_expr *g, tcc_expr *m, tcc_expr *n, tcc_expr **index,
                         void *user)
{
    nchw(f, user, NULL, g, m, n, index);
}

/* The filter as a K x C matrix (no image axis: every image reads the same tiles). */
static bool a_tensor_map(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                         tcc_tensor_map *map, void *user)
{
    (void)f;
    const PointwiseOp *op = user;
    int64_t channels = op->d.in_channels;
    if (channels * (int64_t)tcc_dtype_size(op->d.input_type) % 16 != 0)
        return false; /* the copy engine's strides are multiples of 16 bytes */
    if (!map)
        return true;
    *map = (tcc_tensor_map){.size = sizeof *map,
                            .mode = TCC_TENSOR_MAP_TILED,
                            .tensor = op->gemm.a_source,
                            .rank = 2,
                            .dims = {channels, op->d.out_channels},
                            .strides = {0, channels},
                            .box = {tile[2], tile[1]},
                            .coords = {axes[2], axes[1]}};
    return true;
}

/* The input and the output as images of channels x pixels. */
static bool b_tensor_map(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                         tcc_tensor_map *map, void *user)
{
    const PointwiseOp *op = user;
    const int64_t view[3] = {op->d.batch, op->d.in_channels, op->d.height * op->d.width};
    return tci_gemm_dense_map(f, op->gemm.b_source, view, axes, tile, map);
}

static bool out_tensor_map(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                           tcc_tensor_map *map, void *user)
{
    const PointwiseOp *op = user;
    const int64_t view[3] = {op->d.batch, op->d.out_channels, op->d.height * op->d.width};
    return tci_gemm_dense_map(f, op->gemm.output, view, axes, tile, map);
}

tcc_status tci_conv2d_pointwise_gemm(tcc_func *f, const tcc_conv2d_desc *d, GemmOperator **out)
{
    PointwiseOp *op = tci_arena_alloc(f->arena, sizeof *op);
    *op = (PointwiseOp){.d = *d};
    GemmOperator *g = &op->gemm;
    *g = (GemmOperator){.groups = d->batch,
                        .m = d->out_channels,
                        .n = d->height * d->width,
                        .k = d->in_channels,
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
                        .bias = TCI_BIAS_PER_ROW,
                        .b_param_first = true,
                        .a_name = "filter",
                        .b_name = "input",
                        .output_name = "output",
                        .a_layout = tci_conv2d_filter_layout_name(d->filter_layout),
                        .b_layout = tci_conv2d_layout_name(d->layout),
                        .output_layout = tci_conv2d_layout_name(d->layout),
                        .op = op};
    int64_t shape[4];
    int rank = tci_conv2d_activation_shape(d->layout, d->batch, d->height, d->width, d->in_channels,
                                           shape);
    g->b_source = tcc_placeholder(f, "input", rank, shape, d->input_type);
    rank = tci_conv2d_filter_shape(d, d->filter_layout, d->in_channels, shape);
    g->a_source = tcc_placeholder(f, "filter", rank, shape, d->input_type);
    rank = tci_conv2d_activation_shape(d->layout, d->batch, d->height, d->width, d->out_channels,
                                       shape);
    g->output = tcc_placeholder(f, "output", rank, shape, d->output_type);
    *out = g;
    return g->output && g->a_source && g->b_source ? TCC_OK : tci_func_status(f);
}
