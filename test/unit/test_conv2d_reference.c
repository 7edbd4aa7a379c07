/*
 * The conv2d descriptor helpers, the validation and the CPU reference, checked against
 * hand-computed outputs and against an independent naive convolution over logical
 * (n, h, w, c) indices, written here from the layout formulas of conv2d_reference.c.
 */
#include "reference/reference.h"
#include "reference_support.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the layouts, written out from their definitions ---------------------------------- */

/* An activation (n, y, x, j) of Y x X x J per image: the input (H, W, C) or output (P, Q, K). */
static int64_t activation_offset(tcc_layout layout, int64_t Y, int64_t X, int64_t J, int64_t n,
                                 int64_t y, int64_t x, int64_t j)
{
    switch (layout) {
    case TCC_LAYOUT_NHWC:
        return ((n * Y + y) * X + x) * J + j;
    case TCC_LAYOUT_NCHW:
        return ((n * J + j) * Y + y) * X + x;
    case TCC_LAYOUT_NHWCNC:
        return ((((n / 16 * Y + y) * X + x) * (J / 16) + j / 16) * 16 + n % 16) * 16 + j % 16;
    }
    ck_abort_msg("unknown layout");
    return 0;
}

static int64_t input_offset(const tcc_conv2d_desc *d, int64_t n, int64_t h, int64_t w, int64_t c)
{
    return activation_offset(d->layout, d->height, d->width, d->in_channels, n, h, w, c);
}

static int64_t output_offset(const tcc_conv2d_desc *d, int64_t n, int64_t p, int64_t q, int64_t k)
{
    return activation_offset(d->layout, tcc_conv2d_out_height(d), tcc_conv2d_out_width(d),
                             d->out_channels, n, p, q, k);
}

/* c is the channel within the group of output channel k. */
static int64_t filter_offset(const tcc_conv2d_desc *d, int64_t k, int64_t r, int64_t s, int64_t c)
{
    int64_t R = d->kernel_h, S = d->kernel_w, Cg = d->in_channels / d->groups;
    int64_t CB = d->in_channels / 16, KB = d->out_channels / 16;
    switch (d->filter_layout) {
    case TCC_FILTER_KRSC:
        return ((k * R + r) * S + s) * Cg + c;
    case TCC_FILTER_KCRS:
        return ((k * Cg + c) * R + r) * S + s;
    case TCC_FILTER_BLOCKED:
        return ((((r * S + s) * CB + c / 16) * KB + k / 16) * 16 + c % 16) * 16 + k % 16;
    }
    ck_abort_msg("unknown filter layout");
    return 0;
}

/* ---- data ------------------------------------------------------------------------------ */

/* Every element `value` (converted to `type`). */
static void *filled_tensor(tcc_dtype type, int64_t count, double value)
{
    void *data = malloc((size_t)count * tcc_dtype_size(type));
    ck_assert_ptr_nonnull(data);
    for (int64_t i = 0; i < count; i++) {
        switch (type) {
        case TCC_FLOAT16:
            ((uint16_t *)data)[i] = tcc_f32_to_f16((float)value);
            break;
        case TCC_BFLOAT16:
            ((uint16_t *)data)[i] = tcc_f32_to_bf16((float)value);
            break;
        case TCC_FLOAT32:
            ((float *)data)[i] = (float)value;
            break;
        case TCC_INT8:
            ((int8_t *)data)[i] = (int8_t)value;
            break;
        case TCC_INT32:
            ((int32_t *)data)[i] = (int32_t)value;
            break;
        default:
            ck_abort_msg("no %s tensor", tcc_dtype_name(type));
        }
    }
    return data;
}

/* Random operands of the problem, in its types and layouts. */
static TestOperands random_data(const tcc_conv2d_desc *d, uint64_t seed, bool raw)
{
    TestOperandSizes sizes = {d->input_type,
                              d->output_type,
                              tcc_conv2d_input_elements(d),
                              tcc_conv2d_filter_elements(d),
                              d->out_channels,
                              tcc_conv2d_output_elements(d)};
    return test_random_operands(&sizes, seed, raw);
}

/* Input and filter filled with one value each, no epilogue tensors. */
static TestOperands filled_data(const tcc_conv2d_desc *d, double input, double filter)
{
    return test_operands(filled_tensor(d->input_type, tcc_conv2d_input_elements(d), input),
                         filled_tensor(d->input_type, tcc_conv2d_filter_elements(d), filter));
}

/* ---- an independent naive convolution ------------------------------------------------- */

static double naive_input(const tcc_conv2d_desc *d, const TestOperands *data, int64_t n, int64_t h,
                          int64_t w, int64_t c)
{
    if (h < 0 || h >= d->height || w < 0 || w >= d->width)
        return 0.0; /* the zero padding */
    return test_element(d->input_type, data->input, input_offset(d, n, h, w, c), true);
}

static double naive_output(const tcc_conv2d_desc *d, const TestOperands *data, int64_t n, int64_t p,
                           int64_t q, int64_t k)
{
    int64_t Cg = d->in_channels / d->groups, g = k / (d->out_channels / d->groups);
    double sum = 0.0;
    for (int64_t r = 0; r < d->kernel_h; r++)
        for (int64_t s = 0; s < d->kernel_w; s++)
            for (int64_t c = 0; c < Cg; c++)
                sum +=
                    naive_input(d, data, n, p * d->stride_h - d->pad_top + r * d->dilation_h,
                                q * d->stride_w - d->pad_left + s * d->dilation_w, g * Cg + c) *
                    test_element(d->input_type, data->filter, filter_offset(d, k, r, s, c), true);
    return test_naive_epilogue(&d->epilogue, d->output_type, data->bias, data->residual,
                               data->previous, output_offset(d, n, p, q, k), k, sum);
}

static double *naive_conv(const tcc_conv2d_desc *d, const TestOperands *data)
{
    int64_t P = tcc_conv2d_out_height(d), Q = tcc_conv2d_out_width(d);
    double *out = malloc((size_t)tcc_conv2d_output_elements(d) * sizeof *out);
    ck_assert_ptr_nonnull(out);
    for (int64_t i = 0; i < tcc_conv2d_output_elements(d); i++)
        out[i] = NAN; /* every output must be written exactly once */
    for (int64_t n = 0; n < d->batch; n++)
        for (int64_t p = 0; p < P; p++)
            for (int64_t q = 0; q < Q; q++)
                for (int64_t k = 0; k < d->out_channels; k++) {
                    int64_t o = output_offset(d, n, p, q, k);
                    ck_assert(isnan(out[o]));
                    out[o] = naive_output(d, data, n, p, q, k);
                }
    return out;
}

/* ---- running the reference ------------------------------------------------------------ */

TEST_OP(conv2d_op, tcc_conv2d_desc, tcc_conv2d_validate, tcc_conv2d_reference,
        tcc_conv2d_output_elements);

static double *reference_all(const tcc_conv2d_desc *d, const TestOperands *data, int threads)
{
    return test_reference_all(&conv2d_op, d, &data->tensors, threads);
}

static void check_against_naive(const tcc_conv2d_desc *d, uint64_t seed, bool raw, const char *what)
{
    tcc_context *ctx = test_context();
    ck_assert_msg(tcc_conv2d_validate(ctx, d) == TCC_OK, "%s: %s", what, tcc_last_error(ctx));
    tcc_context_destroy(ctx);
    TestOperands data = random_data(d, seed, raw);
    double *expected = naive_conv(d, &data);
    assert_reference_equals(&conv2d_op, d, &data.tensors, expected, raw, what);
    free(expected);
    test_free_operands(&data);
}

/* ---- descriptors ---------------------------------------------------------------------- */

static void set_pads(tcc_conv2d_desc *d, int64_t pad)
{
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = pad;
}

/* An NHWCnc descriptor like the tutorial's, of another size. */
static tcc_conv2d_desc blocked_desc(int64_t n, int64_t hw, int64_t c, int64_t k, int64_t rs,
                                    int64_t stride, int64_t pad)
{
    tcc_conv2d_desc d;
    tcc_tutorial_conv2d_desc(&d);
    d.batch = n;
    d.height = d.width = hw;
    d.in_channels = c;
    d.out_channels = k;
    d.kernel_h = d.kernel_w = rs;
    d.stride_h = d.stride_w = stride;
    set_pads(&d, pad);
    return d;
}

/* A small NHWC (or NCHW) descriptor: 2 images of 7 x 6, 8 -> 6 channels, 3 x 3, pad 1. */
static tcc_conv2d_desc plain_desc(tcc_layout layout, tcc_filter_layout filter_layout)
{
    tcc_conv2d_desc d;
    tcc_conv2d_desc_init(&d);
    d.batch = 2;
    d.height = 7;
    d.width = 6;
    d.in_channels = 8;
    d.out_channels = 6;
    d.kernel_h = d.kernel_w = 3;
    set_pads(&d, 1);
    d.layout = layout;
    d.filter_layout = filter_layout;
    return d;
}

/* plain_desc in the i-th (0 to 3) of the unblocked layouts: NHWC then NCHW, each with the
 * KRSC then the KCRS filter. */
static tcc_conv2d_desc plain_desc_at(int i)
{
    return plain_desc(i / 2 ? TCC_LAYOUT_NCHW : TCC_LAYOUT_NHWC,
                      i % 2 ? TCC_FILTER_KCRS : TCC_FILTER_KRSC);
}

START_TEST(test_desc_init)
{
    tcc_conv2d_desc d;
    memset(&d, 0x5a, sizeof d);
    tcc_conv2d_desc_init(&d);
    ck_assert_int_eq(d.batch, 1);
    ck_assert_int_eq(d.height, 1);
    ck_assert_int_eq(d.width, 1);
    ck_assert_int_eq(d.in_channels, 1);
    ck_assert_int_eq(d.out_channels, 1);
    ck_assert_int_eq(d.kernel_h, 1);
    ck_assert_int_eq(d.kernel_w, 1);
    ck_assert_int_eq(d.stride_h, 1);
    ck_assert_int_eq(d.stride_w, 1);
    ck_assert_int_eq(d.pad_top + d.pad_bottom + d.pad_left + d.pad_right, 0);
    ck_assert_int_eq(d.dilation_h, 1);
    ck_assert_int_eq(d.dilation_w, 1);
    ck_assert_int_eq(d.groups, 1);
    ck_assert_int_eq(d.layout, TCC_LAYOUT_NHWC);
    ck_assert_int_eq(d.filter_layout, TCC_FILTER_KRSC);
    assert_default_types(d.input_type, d.accumulate_type, d.output_type, &d.epilogue);
    ck_assert(d.epilogue.clamp_min == 0.0 && d.epilogue.clamp_max == 0.0);
    ck_assert(d.epilogue.prologue_arg == 0.0);
    ck_assert_int_eq(tcc_conv2d_out_height(&d), 1);
    ck_assert_int_eq(tcc_conv2d_out_width(&d), 1);
    ck_assert(tcc_conv2d_flops(&d) == 2.0);
    tcc_context *ctx = test_context();
    ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), TCC_OK);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_tutorial_desc)
{
    tcc_conv2d_desc d;
    memset(&d, 0x5a, sizeof d);
    tcc_tutorial_conv2d_desc(&d);
    ck_assert_int_eq(d.batch, 256);
    ck_assert_int_eq(d.height, 14);
    ck_assert_int_eq(d.width, 14);
    ck_assert_int_eq(d.in_channels, 256);
    ck_assert_int_eq(d.out_channels, 512);
    ck_assert_int_eq(d.kernel_h, 3);
    ck_assert_int_eq(d.kernel_w, 3);
    ck_assert_int_eq(d.stride_h, 1);
    ck_assert_int_eq(d.stride_w, 1);
    ck_assert_int_eq(d.pad_top, 1);
    ck_assert_int_eq(d.pad_bottom, 1);
    ck_assert_int_eq(d.pad_left, 1);
    ck_assert_int_eq(d.pad_right, 1);
    ck_assert_int_eq(d.dilation_h, 1);
    ck_assert_int_eq(d.dilation_w, 1);
    ck_assert_int_eq(d.groups, 1);
    ck_assert_int_eq(d.layout, TCC_LAYOUT_NHWCNC);
    ck_assert_int_eq(d.filter_layout, TCC_FILTER_BLOCKED);
    assert_default_types(d.input_type, d.accumulate_type, d.output_type, &d.epilogue);
    ck_assert_int_eq(tcc_conv2d_out_height(&d), 14);
    ck_assert_int_eq(tcc_conv2d_out_width(&d), 14);
    ck_assert_int_eq(tcc_conv2d_input_elements(&d), 256LL * 14 * 14 * 256);
    ck_assert_int_eq(tcc_conv2d_filter_elements(&d), 3LL * 3 * 256 * 512);
    ck_assert_int_eq(tcc_conv2d_output_elements(&d), 256LL * 14 * 14 * 512);
    ck_assert(tcc_conv2d_flops(&d) == 2.0 * 256 * 512 * 14 * 14 * 256 * 3 * 3);
    tcc_context *ctx = test_context();
    ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), TCC_OK);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_output_sizes)
{
    tcc_conv2d_desc d = blocked_desc(16, 7, 16, 16, 3, 2, 1);
    ck_assert_int_eq(tcc_conv2d_out_height(&d), 4); /* (7 + 2 - 3) / 2 + 1 */
    d.width = 8;
    d.kernel_w = 2;
    d.pad_left = d.pad_right = 0;
    ck_assert_int_eq(tcc_conv2d_out_width(&d), 4); /* (8 - 2) / 2 + 1 */
    ck_assert(tcc_conv2d_flops(&d) == 2.0 * 16 * 16 * 4 * 4 * 16 * 3 * 2);
    /* One row short of a window: empty, even though (-1) / 2 truncates to 0. */
    d = blocked_desc(16, 2, 16, 16, 3, 2, 0);
    ck_assert_int_eq(tcc_conv2d_out_height(&d), 0);
    ck_assert_int_eq(tcc_conv2d_output_elements(&d), 0);

    /* Asymmetric pads and dilation: (7 + 0 + 2 - 2*(3-1) - 1) / 2 + 1 = 3. */
    d = plain_desc(TCC_LAYOUT_NHWC, TCC_FILTER_KRSC);
    d.pad_top = 0;
    d.pad_bottom = 2;
    d.dilation_h = 2;
    d.stride_h = 2;
    ck_assert_int_eq(tcc_conv2d_out_height(&d), 3);
    /* (6 + 3 + 0 - 3*(3-1) - 1) / 1 + 1 = 3. */
    d.pad_left = 3;
    d.pad_right = 0;
    d.dilation_w = 3;
    ck_assert_int_eq(tcc_conv2d_out_width(&d), 3);
    /* Bad sizes give no output rather than overflowing. */
    d.dilation_w = 0;
    ck_assert_int_eq(tcc_conv2d_out_width(&d), 0);
    d.dilation_w = 1LL << 40;
    ck_assert_int_eq(tcc_conv2d_out_width(&d), 0);
}
END_TEST

START_TEST(test_flops_with_groups)
{
    tcc_conv2d_desc d = plain_desc(TCC_LAYOUT_NHWC, TCC_FILTER_KRSC);
    d.groups = 2; /* each output reads C/2 = 4 channels */
    ck_assert(tcc_conv2d_flops(&d) == 2.0 * 2 * 6 * 7 * 6 * 4 * 3 * 3);
    d.groups = 0; /* invalid: nothing to count */
    ck_assert(tcc_conv2d_flops(&d) == 0.0);
    ck_assert(tcc_conv2d_flops(NULL) == 0.0);
}
END_TEST

/* The counts are the same products in every layout. */
START_TEST(test_element_counts_each_layout)
{
    for (int i = 0; i < 4; i++) {
        tcc_conv2d_desc d = plain_desc_at(i);
        d.groups = 2;
        d.stride_w = 2; /* P = 7, Q = (6 + 2 - 3) / 2 + 1 = 3 */
        ck_assert_int_eq(tcc_conv2d_input_elements(&d), 2 * 7 * 6 * 8);
        ck_assert_int_eq(tcc_conv2d_filter_elements(&d), 6 * 3 * 3 * 4);
        ck_assert_int_eq(tcc_conv2d_output_elements(&d), 2 * 7 * 3 * 6);
    }
    tcc_conv2d_desc d = blocked_desc(32, 5, 48, 16, 3, 2, 0); /* P = Q = 2 */
    ck_assert_int_eq(tcc_conv2d_input_elements(&d), 32 * 5 * 5 * 48);
    ck_assert_int_eq(tcc_conv2d_filter_elements(&d), 3 * 3 * 48 * 16);
    ck_assert_int_eq(tcc_conv2d_output_elements(&d), 32 * 2 * 2 * 16);
    ck_assert_int_eq(tcc_conv2d_input_elements(NULL), 0);
    ck_assert_int_eq(tcc_conv2d_filter_elements(NULL), 0);
    ck_assert_int_eq(tcc_conv2d_output_elements(NULL), 0);
}
END_TEST

/* ---- the layers of /work/shared/layers.csv -------------------------------------------- */

typedef struct Layer {
    const char *name;
    int64_t n, h, w, c, k, r, s, stride, pad, dilation, groups;
    int64_t out; /* P = Q, worked out by hand */
} Layer;

static const Layer layers[] = {
    {"seed_tutorial", 256, 14, 14, 256, 512, 3, 3, 1, 1, 1, 1, 14},
    {"seed_autotvm", 1, 7, 7, 512, 512, 3, 3, 1, 1, 1, 1, 7},
    {"r50_res2_3x3_b32", 32, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1, 56},
    {"r50_res2_1x1_b32", 32, 56, 56, 64, 256, 1, 1, 1, 0, 1, 1, 56},
    {"r50_res3_3x3s2_b32", 32, 56, 56, 128, 128, 3, 3, 2, 1, 1, 1, 28},
    {"r50_res4_3x3_b32", 32, 14, 14, 256, 256, 3, 3, 1, 1, 1, 1, 14},
    {"r50_res5_3x3_b32", 32, 7, 7, 512, 512, 3, 3, 1, 1, 1, 1, 7},
    {"r50_res3_1x1_b256", 256, 28, 28, 512, 128, 1, 1, 1, 0, 1, 1, 28},
    {"r50_res4_3x3_b1", 1, 14, 14, 256, 256, 3, 3, 1, 1, 1, 1, 14},
};

static tcc_conv2d_desc layer_desc(const Layer *layer, tcc_layout layout,
                                  tcc_filter_layout filter_layout)
{
    tcc_conv2d_desc d;
    tcc_conv2d_desc_init(&d);
    d.batch = layer->n;
    d.height = layer->h;
    d.width = layer->w;
    d.in_channels = layer->c;
    d.out_channels = layer->k;
    d.kernel_h = layer->r;
    d.kernel_w = layer->s;
    d.stride_h = d.stride_w = layer->stride;
    set_pads(&d, layer->pad);
    d.dilation_h = d.dilation_w = layer->dilation;
    d.groups = layer->groups;
    d.layout = layout;
    d.filter_layout = filter_layout;
    return d;
}

static void check_layer(const Layer *layer, tcc_layout layout, tcc_filter_layout filter_layout)
{
    tcc_context *ctx = test_context();
    tcc_conv2d_desc d = layer_desc(layer, layout, filter_layout);
    ck_assert_msg(tcc_conv2d_validate(ctx, &d) == TCC_OK, "%s: %s", layer->name,
                  tcc_last_error(ctx));
    ck_assert_int_eq(tcc_conv2d_out_height(&d), layer->out);
    ck_assert_int_eq(tcc_conv2d_out_width(&d), layer->out);
    ck_assert_int_eq(tcc_conv2d_input_elements(&d), layer->n * layer->h * layer->w * layer->c);
    ck_assert_int_eq(tcc_conv2d_filter_elements(&d),
                     layer->k * layer->r * layer->s * layer->c / layer->groups);
    ck_assert_int_eq(tcc_conv2d_output_elements(&d), layer->n * layer->out * layer->out * layer->k);
    ck_assert(tcc_conv2d_flops(&d) == 2.0 * (double)(layer->n * layer->out * layer->out * layer->k *
                                                     layer->r * layer->s * layer->c));
    tcc_context_destroy(ctx);
}

START_TEST(test_layers_validate)
{
    const Layer *layer = &layers[_i];
    check_layer(layer, TCC_LAYOUT_NHWC, TCC_FILTER_KRSC);
    check_layer(layer, TCC_LAYOUT_NHWC, TCC_FILTER_KCRS);
    check_layer(layer, TCC_LAYOUT_NCHW, TCC_FILTER_KCRS);
    check_layer(layer, TCC_LAYOUT_NCHW, TCC_FILTER_KRSC);
    /* The blocked layouts take the layers whose batch is a multiple of 16. */
    tcc_context *ctx = test_context();
    tcc_conv2d_desc d = layer_desc(layer, TCC_LAYOUT_NHWCNC, TCC_FILTER_BLOCKED);
    if (layer->n % 16 == 0) {
        check_layer(layer, TCC_LAYOUT_NHWCNC, TCC_FILTER_BLOCKED);
    } else {
        ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), TCC_ERROR_INVALID_ARGUMENT);
        assert_contains(tcc_last_error(ctx), "batch must be a multiple of 16");
    }
    tcc_context_destroy(ctx);
}
END_TEST

/* The first row is the tutorial's descriptor itself. */
START_TEST(test_first_layer_is_the_seed)
{
    tcc_conv2d_desc tutorial, layer = layer_desc(&layers[0], TCC_LAYOUT_NHWCNC, TCC_FILTER_BLOCKED);
    tcc_tutorial_conv2d_desc(&tutorial);
    const int64_t tutorial_sizes[] = {
        tutorial.batch,        tutorial.height,     tutorial.width,      tutorial.in_channels,
        tutorial.out_channels, tutorial.kernel_h,   tutorial.kernel_w,   tutorial.stride_h,
        tutorial.stride_w,     tutorial.pad_top,    tutorial.pad_bottom, tutorial.pad_left,
        tutorial.pad_right,    tutorial.dilation_h, tutorial.dilation_w, tutorial.groups};
    const int64_t layer_sizes[] = {
        layer.batch,        layer.height,     layer.width,      layer.in_channels,
        layer.out_channels, layer.kernel_h,   layer.kernel_w,   layer.stride_h,
        layer.stride_w,     layer.pad_top,    layer.pad_bottom, layer.pad_left,
        layer.pad_right,    layer.dilation_h, layer.dilation_w, layer.groups};
    ck_assert_mem_eq(tutorial_sizes, layer_sizes, sizeof tutorial_sizes);
}
END_TEST

/* ---- validation ----------------------------------------------------------------------- */

typedef struct BadDesc {
    const char *message; /* expected in the message: names the field */
    tcc_status status;
    bool blocked; /* spoils the tutorial's descriptor (NHWCnc) rather than an NHWC descriptor */
    void (*spoil)(tcc_conv2d_desc *d);
} BadDesc;

#define SPOIL(name, statement) TEST_SPOIL(tcc_conv2d_desc, name, statement)

SPOIL(zero_batch, d->batch = 0)
SPOIL(zero_height, d->height = 0)
SPOIL(negative_width, d->width = -3)
SPOIL(zero_in_channels, d->in_channels = 0)
SPOIL(zero_out_channels, d->out_channels = -1)
SPOIL(zero_kernel_h, d->kernel_h = 0)
SPOIL(zero_kernel_w, d->kernel_w = 0)
SPOIL(huge_kernel_w, d->kernel_w = 17)
SPOIL(huge_kernel_h, d->kernel_h = 17)
SPOIL(zero_stride_h, d->stride_h = 0)
SPOIL(negative_stride_w, d->stride_w = -1)
SPOIL(negative_pad_top, d->pad_top = -1)
SPOIL(negative_pad_bottom, d->pad_bottom = -2)
SPOIL(negative_pad_left, d->pad_left = -1)
SPOIL(negative_pad_right, d->pad_right = -1)
SPOIL(zero_dilation_h, d->dilation_h = 0)
SPOIL(negative_dilation_w, d->dilation_w = -2)
SPOIL(huge_dilation_h, d->dilation_h = 5) /* 5*2 + 1 = 11 > 7 + 2 */
SPOIL(huge_dilation_w, d->dilation_w = 4) /* 4*2 + 1 = 9 > 6 + 2 */
SPOIL(zero_groups, d->groups = 0)
SPOIL(groups_3, d->groups = 3) /* divides neither 8 nor 6 */
SPOIL(groups_4, d->groups = 4) /* divides 8 but not 6 */
SPOIL(int64_height, d->height = 1LL << 40)
SPOIL(int32_pads, d->pad_top = d->pad_bottom = INT32_MAX / 2 + 1)
SPOIL(bad_layout, d->layout = (tcc_layout)7)
SPOIL(bad_filter_layout, d->filter_layout = (tcc_filter_layout)-1)
SPOIL(blocked_filter_with_nhwc, d->filter_layout = TCC_FILTER_BLOCKED)
SPOIL(blocked_filter_with_nchw, d->layout = TCC_LAYOUT_NCHW; d->filter_layout = TCC_FILTER_BLOCKED)
SPOIL(nhwcnc_with_krsc, d->filter_layout = TCC_FILTER_KRSC)
SPOIL(nhwcnc_with_kcrs, d->filter_layout = TCC_FILTER_KCRS)
SPOIL(odd_batch, d->batch = 24)
SPOIL(odd_in_channels, d->in_channels = 200)
SPOIL(odd_out_channels, d->out_channels = 8)
SPOIL(nhwcnc_groups, d->groups = 2)
SPOIL(big_input, d->batch = 1 << 16; d->height = d->width = 128) /* 2^31 elements */
SPOIL(big_filter, d->in_channels = 1 << 14; d->out_channels = 1 << 14; d->kernel_h = 3;
      d->kernel_w = 3)
SPOIL(big_output, d->in_channels = 1; d->height = d->width = 1024; d->out_channels = 1 << 11;
      d->kernel_h = d->kernel_w = 1)
SPOIL(overflowing_input, d->batch = d->height = d->width = d->in_channels = INT32_MAX;
      d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 0)
SPOIL(bool_input, d->input_type = TCC_BOOL)
SPOIL(int32_input, d->input_type = TCC_INT32)
SPOIL(unknown_input, d->input_type = (tcc_dtype)42)
SPOIL(unknown_output, d->output_type = (tcc_dtype)-1)
SPOIL(bf16_f16_acc, d->input_type = TCC_BFLOAT16; d->accumulate_type = TCC_FLOAT16)
SPOIL(tf32_f16_acc, d->input_type = TCC_FLOAT32; d->accumulate_type = TCC_FLOAT16)
SPOIL(f16_int32_acc, d->accumulate_type = TCC_INT32)
SPOIL(int8_f32_acc, d->input_type = TCC_INT8)
SPOIL(int8_output, d->output_type = TCC_INT8)
SPOIL(int32_output_float_acc, d->output_type = TCC_INT32)
SPOIL(f16_output_int_acc, d->input_type = TCC_INT8; d->accumulate_type = TCC_INT32;
      d->output_type = TCC_FLOAT16)
SPOIL(clamp_reversed, d->epilogue.clamp = true; d->epilogue.clamp_min = 3;
      d->epilogue.clamp_max = 1)
SPOIL(clamp_nan, d->epilogue.clamp = true; d->epilogue.clamp_max = NAN)
SPOIL(alpha_nan, d->epilogue.alpha = NAN)
SPOIL(beta_infinite, d->epilogue.beta = INFINITY)
SPOIL(bad_prologue, d->epilogue.prologue = (tcc_prologue_op)9)
SPOIL(prologue_arg_nan, d->epilogue.prologue = TCC_PROLOGUE_SET; d->epilogue.prologue_arg = NAN)

#define INVALID TCC_ERROR_INVALID_ARGUMENT
#define UNSUPPORTED TCC_ERROR_UNSUPPORTED

static const BadDesc bad_descs[] = {
    {"batch must be in 1..", INVALID, false, zero_batch},
    {"height must be in 1..", INVALID, false, zero_height},
    {"width must be in 1..2147483647 (got -3)", INVALID, false, negative_width},
    {"in_channels", INVALID, false, zero_in_channels},
    {"out_channels", INVALID, false, zero_out_channels},
    {"kernel_h", INVALID, false, zero_kernel_h},
    {"kernel_w", INVALID, false, zero_kernel_w},
    {"kernel_w (17)", INVALID, true, huge_kernel_w},
    {"kernel_h (17)", INVALID, true, huge_kernel_h},
    {"stride_h", INVALID, false, zero_stride_h},
    {"stride_w", INVALID, false, negative_stride_w},
    {"pad_top must be in 0..", INVALID, false, negative_pad_top},
    {"pad_bottom", INVALID, false, negative_pad_bottom},
    {"pad_left", INVALID, false, negative_pad_left},
    {"pad_right", INVALID, false, negative_pad_right},
    {"dilation_h", INVALID, false, zero_dilation_h},
    {"dilation_w", INVALID, false, negative_dilation_w},
    {"dilation_h (5)", INVALID, false, huge_dilation_h},
    {"dilation_w (4)", INVALID, false, huge_dilation_w},
    {"groups must be in 1..", INVALID, false, zero_groups},
    {"groups (3) must divide in_channels (8) and out_channels (6)", INVALID, false, groups_3},
    {"groups (4) must divide", INVALID, false, groups_4},
    {"height must be in 1..2147483647", INVALID, false, int64_height},
    {"height + pad_top + pad_bottom", INVALID, false, int32_pads},
    {"layout 7", INVALID, false, bad_layout},
    {"filter_layout -1", INVALID, false, bad_filter_layout},
    {"filter_layout blocked does not go with layout NHWC", UNSUPPORTED, false,
     blocked_filter_with_nhwc},
    {"filter_layout blocked does not go with layout NCHW", UNSUPPORTED, false,
     blocked_filter_with_nchw},
    {"filter_layout KRSC does not go with layout NHWCnc", UNSUPPORTED, true, nhwcnc_with_krsc},
    {"filter_layout KCRS", UNSUPPORTED, true, nhwcnc_with_kcrs},
    {"batch must be a multiple of 16", INVALID, true, odd_batch},
    {"in_channels must be a multiple of 16 for the NHWCnc layout (got 200)", INVALID, true,
     odd_in_channels},
    {"out_channels must be a multiple of 16", INVALID, true, odd_out_channels},
    {"groups must be 1 for the NHWCnc layout (got 2)", UNSUPPORTED, true, nhwcnc_groups},
    {"the input (batch*height*width*in_channels) has too many elements", INVALID, false, big_input},
    {"the filter", INVALID, false, big_filter},
    {"the output", INVALID, false, big_output},
    {"the input", INVALID, false, overflowing_input},
    {"input_type must be float16, bfloat16, float32 or int8 (got bool)", UNSUPPORTED, false,
     bool_input},
    {"input_type must be", UNSUPPORTED, false, int32_input},
    {"input_type 42 is not a tcc_dtype", INVALID, false, unknown_input},
    {"output_type -1", INVALID, false, unknown_output},
    {"bfloat16 inputs accumulate in float32, not float16", UNSUPPORTED, false, bf16_f16_acc},
    {"float32 inputs accumulate in float32, not float16", UNSUPPORTED, false, tf32_f16_acc},
    {"float16 inputs accumulate in float32 or float16, not int32", UNSUPPORTED, false,
     f16_int32_acc},
    {"int8 inputs accumulate in int32, not float32", UNSUPPORTED, false, int8_f32_acc},
    {"output_type must be float32, float16 or bfloat16 for float32 accumulation (got int8)",
     UNSUPPORTED, false, int8_output},
    {"output_type", UNSUPPORTED, false, int32_output_float_acc},
    {"output_type must be int32 or float32 for int32 accumulation (got float16)", UNSUPPORTED,
     false, f16_output_int_acc},
    {"epilogue.clamp_min (3) must be <= epilogue.clamp_max (1)", INVALID, false, clamp_reversed},
    {"epilogue.clamp_max", INVALID, false, clamp_nan},
    {"epilogue.alpha", INVALID, false, alpha_nan},
    {"epilogue.beta", INVALID, false, beta_infinite},
    {"epilogue.prologue 9", INVALID, false, bad_prologue},
    {"epilogue.prologue_arg", INVALID, false, prologue_arg_nan},
};

START_TEST(test_validation_errors)
{
    const BadDesc *bad = &bad_descs[_i];
    tcc_context *ctx = test_context();
    tcc_conv2d_desc d = plain_desc(TCC_LAYOUT_NHWC, TCC_FILTER_KRSC);
    if (bad->blocked)
        tcc_tutorial_conv2d_desc(&d);
    ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), TCC_OK);
    bad->spoil(&d);
    assert_refused(ctx, &conv2d_op, &d, bad->status, bad->message);
    tcc_context_destroy(ctx);
}
END_TEST

/* Every supported type combination, and only those, validates. */
static bool supported_types(tcc_dtype input, tcc_dtype acc, tcc_dtype output)
{
    bool float_out = output == TCC_FLOAT32 || output == TCC_FLOAT16 || output == TCC_BFLOAT16;
    switch (input) {
    case TCC_FLOAT16:
        return (acc == TCC_FLOAT32 || acc == TCC_FLOAT16) && float_out;
    case TCC_BFLOAT16:
    case TCC_FLOAT32:
        return acc == TCC_FLOAT32 && float_out;
    case TCC_INT8:
        return acc == TCC_INT32 && (output == TCC_INT32 || output == TCC_FLOAT32);
    default:
        return false;
    }
}

START_TEST(test_type_combinations)
{
    tcc_context *ctx = test_context();
    tcc_conv2d_desc d = plain_desc(TCC_LAYOUT_NCHW, TCC_FILTER_KCRS);
    int supported = 0;
    for (int in = TCC_VOID; in <= TCC_FLOAT32; in++)
        for (int acc = TCC_VOID; acc <= TCC_FLOAT32; acc++)
            for (int out = TCC_VOID; out <= TCC_FLOAT32; out++) {
                d.input_type = (tcc_dtype)in;
                d.accumulate_type = (tcc_dtype)acc;
                d.output_type = (tcc_dtype)out;
                bool ok = supported_types(d.input_type, d.accumulate_type, d.output_type);
                tcc_status status = tcc_conv2d_validate(ctx, &d);
                ck_assert_msg(status == (ok ? TCC_OK : TCC_ERROR_UNSUPPORTED), "%s -> %s -> %s: %s",
                              tcc_dtype_name(d.input_type), tcc_dtype_name(d.accumulate_type),
                              tcc_dtype_name(d.output_type), tcc_last_error(ctx));
                supported += ok;
            }
    ck_assert_int_eq(supported, 2 * 3 + 3 + 3 + 2);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_epilogue_values_accepted)
{
    tcc_context *ctx = test_context();
    tcc_conv2d_desc d = plain_desc(TCC_LAYOUT_NHWC, TCC_FILTER_KRSC);
    d.epilogue.clamp = true;
    d.epilogue.clamp_min = d.epilogue.clamp_max = 2; /* a constant output */
    ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), TCC_OK);
    d.epilogue.clamp_min = -INFINITY; /* one-sided */
    ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), TCC_OK);
    d.epilogue.clamp = false;
    d.epilogue.clamp_min = NAN; /* not read without clamp */
    d.epilogue.alpha = 0;
    d.epilogue.beta = -1;
    d.epilogue.prologue = TCC_PROLOGUE_RELU;
    ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), TCC_OK);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_null_desc)
{
    tcc_context *ctx = test_context();
    ck_assert_int_eq(tcc_conv2d_validate(ctx, NULL), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "descriptor");
    double out[1];
    ck_assert_int_eq(tcc_conv2d_reference(ctx, NULL, NULL, NULL, 1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "descriptor");
    ck_assert_int_eq(tcc_conv2d_out_height(NULL), 0);
    ck_assert_int_eq(tcc_conv2d_out_width(NULL), 0);
    ck_assert_int_eq(tcc_conv2d_output_elements(NULL), 0);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_bad_positions)
{
    tcc_context *ctx = test_context();
    tcc_conv2d_desc d = blocked_desc(16, 2, 16, 16, 1, 1, 0);
    int64_t total = tcc_conv2d_output_elements(&d);
    TestOperands data = filled_data(&d, 1.0, 1.0);
    double out[4];

    int64_t outside[] = {0, total, 1};
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &data.tensors, outside, 3, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "positions[1]");
    int64_t negative[] = {-1};
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &data.tensors, negative, 1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "positions[0]");
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &data.tensors, NULL, 4, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "count");
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &data.tensors, outside, -1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "count");
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &data.tensors, outside, 1, 1, NULL),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "out");
    assert_one_line(ctx);
    /* Nothing to compute is fine. */
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &data.tensors, outside, 0, 4, out), TCC_OK);
    test_free_operands(&data);
    tcc_context_destroy(ctx);
}
END_TEST

/* Each tensor the reference reads must be there; those it does not read may be NULL. */
START_TEST(test_missing_tensors)
{
    tcc_context *ctx = test_context();
    tcc_conv2d_desc d = plain_desc(TCC_LAYOUT_NHWC, TCC_FILTER_KRSC);
    TestOperands data = random_data(&d, 7, false);
    int64_t position = 5;
    double out[1];
    tcc_reference_tensors t = {
        sizeof(tcc_reference_tensors), data.input, data.filter, NULL, NULL, NULL};
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, NULL, &position, 1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "input and filter");
    t.input = NULL;
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &t, &position, 1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "input and filter");
    t.input = data.input;
    t.filter = NULL;
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &t, &position, 1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    t.filter = data.filter;
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &t, &position, 1, 1, out), TCC_OK);

    d.epilogue.bias = true;
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &t, &position, 1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "tensors.bias");
    t.bias = data.bias;
    d.epilogue.residual = true; /* with beta 0 the residual is not read */
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &t, &position, 1, 1, out), TCC_OK);
    d.epilogue.beta = 1;
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &t, &position, 1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "tensors.residual");
    t.residual = data.residual;
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &t, &position, 1, 1, out), TCC_OK);
    d.epilogue.residual = false; /* beta now reads the previous output */
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &t, &position, 1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "tensors.previous_output");
    d.epilogue.beta = 0;
    static const tcc_prologue_op reading[] = {TCC_PROLOGUE_SCALE, TCC_PROLOGUE_RELU};
    for (int i = 0; i < 2; i++) {
        d.epilogue.prologue = reading[i];
        ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &t, &position, 1, 1, out),
                         TCC_ERROR_INVALID_ARGUMENT);
        assert_contains(tcc_last_error(ctx), "tensors.previous_output");
        assert_one_line(ctx);
    }
    d.epilogue.prologue = TCC_PROLOGUE_SET;
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, &t, &position, 1, 1, out), TCC_OK);
    test_free_operands(&data);
    tcc_context_destroy(ctx);
}
END_TEST

/* ---- values: the blocked layouts ------------------------------------------------------ */

/* All ones, 3x3, pad 1 on a 3x3 image: each output counts the in-range taps times C. */
START_TEST(test_ones_by_hand)
{
    tcc_conv2d_desc d = blocked_desc(16, 3, 16, 16, 3, 1, 1);
    TestOperands data = filled_data(&d, 1.0, 1.0);
    double *out = reference_all(&d, &data, 1);
    static const double taps[3][3] = {{4, 6, 4}, {6, 9, 6}, {4, 6, 4}};
    for (int n = 0; n < 16; n++)
        for (int p = 0; p < 3; p++)
            for (int q = 0; q < 3; q++)
                for (int k = 0; k < 16; k++)
                    ck_assert(out[output_offset(&d, n, p, q, k)] == 16 * taps[p][q]);
    test_free_operands(&data);
    free(out);
}
END_TEST

/* One non-zero input (image n, channel c) and one non-zero filter tap (output channel k):
 * exactly one output is non-zero, at the place the layout formulas put it. */
static void check_single_tap(tcc_conv2d_desc d, int64_t n, int64_t c, int64_t k)
{
    TestOperands data = filled_data(&d, 0.0, 0.0);
    uint16_t *input = data.input, *filter = data.filter;
    input[input_offset(&d, n, 1, 2, c)] = tcc_f32_to_f16(2.0f);
    filter[filter_offset(&d, k, 0, 1, c % (d.in_channels / d.groups))] = tcc_f32_to_f16(3.0f);
    double *out = reference_all(&d, &data, 1);
    /* h = p - 1 + r = 1 with r = 0 gives p = 2; w = q - 1 + s = 2 with s = 1 gives q = 2. */
    int64_t hit = output_offset(&d, n, 2, 2, k);
    for (int64_t i = 0; i < tcc_conv2d_output_elements(&d); i++)
        ck_assert_msg(out[i] == (i == hit ? 6.0 : 0.0), "output %lld = %g", (long long)i, out[i]);
    test_free_operands(&data);
    free(out);
}

START_TEST(test_single_tap_by_hand)
{
    tcc_conv2d_desc d = blocked_desc(32, 4, 32, 32, 3, 1, 1);
    check_single_tap(d, 1, 3, 4);
    /* Larger indices within the blocks (n 19, c 17, k 20) in the blocked layouts. */
    check_single_tap(d, 19, 17, 20);
}
END_TEST

START_TEST(test_single_tap_each_layout)
{
    for (int i = 0; i < 4; i++)
        check_single_tap(plain_desc_at(i), 1, 3, 4);
}
END_TEST

START_TEST(test_matches_naive_blocked)
{
    tcc_conv2d_desc d = blocked_desc(16, 5, 32, 16, 3, 1, 1);
    d.width = 7;
    check_against_naive(&d, 1, false, "3x3 pad 1");
    d = blocked_desc(32, 9, 16, 32, 3, 2, 1);
    d.width = 8;
    d.kernel_w = 2;
    d.pad_left = d.pad_right = 0;
    check_against_naive(&d, 2, false, "stride 2");
    d = blocked_desc(16, 4, 48, 32, 1, 1, 0);
    check_against_naive(&d, 3, false, "1x1");
    d = blocked_desc(16, 2, 16, 16, 3, 1, 2); /* more padding than image */
    d.stride_w = 3;
    check_against_naive(&d, 4, false, "large pad");
    d = blocked_desc(16, 6, 16, 32, 3, 1, 0); /* asymmetric pads and dilation */
    d.pad_top = 2;
    d.pad_right = 1;
    d.dilation_h = 2;
    d.dilation_w = 3;
    check_against_naive(&d, 5, false, "dilated");
}
END_TEST

/* ---- values: NHWC and NCHW ------------------------------------------------------------ */

typedef struct Shape {
    const char *name;
    void (*apply)(tcc_conv2d_desc *d);
} Shape;

SPOIL(asymmetric_pads, d->pad_top = 0; d->pad_bottom = 2; d->pad_left = 3; d->pad_right = 0)
SPOIL(stride_2, d->stride_h = d->stride_w = 2)
SPOIL(stride_2_by_3, d->stride_h = 2; d->stride_w = 3; d->pad_top = 0)
SPOIL(dilation_2, d->dilation_h = d->dilation_w = 2; d->pad_top = d->pad_left = 2)
SPOIL(dilation_3_by_1, d->dilation_h = 3; d->pad_bottom = 3)
SPOIL(groups_2, d->groups = 2)
SPOIL(depthwise, d->in_channels = d->out_channels = d->groups = 8)
SPOIL(depthwise_multiplier, d->in_channels = d->groups = 4; d->out_channels = 8)
SPOIL(one_by_one, d->kernel_h = d->kernel_w = 1; d->pad_top = d->pad_bottom = 0;
      d->pad_left = d->pad_right = 0)
SPOIL(one_by_one_strided, d->kernel_h = d->kernel_w = 1; d->stride_h = d->stride_w = 2)
SPOIL(rectangular, d->kernel_h = 1; d->kernel_w = 5; d->pad_left = 2; d->pad_right = 2)
SPOIL(everything, d->groups = 2; d->stride_h = 2; d->dilation_w = 2; d->pad_top = 2;
      d->pad_bottom = 0; d->pad_left = 0; d->pad_right = 3)

static const Shape shapes[] = {
    {"asymmetric pads", asymmetric_pads},
    {"stride 2", stride_2},
    {"stride 2 x 3", stride_2_by_3},
    {"dilation 2", dilation_2},
    {"dilation 3 x 1", dilation_3_by_1},
    {"groups 2", groups_2},
    {"depthwise", depthwise},
    {"depthwise x2", depthwise_multiplier},
    {"1x1", one_by_one},
    {"1x1 stride 2", one_by_one_strided},
    {"1x5", rectangular},
    {"everything", everything},
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* Each shape in NHWC and NCHW with each unblocked filter layout. */
START_TEST(test_matches_naive_plain)
{
    const Shape *shape = &shapes[_i / 4];
    tcc_layout layout = _i % 2 ? TCC_LAYOUT_NCHW : TCC_LAYOUT_NHWC;
    tcc_filter_layout filter_layout = _i / 2 % 2 ? TCC_FILTER_KCRS : TCC_FILTER_KRSC;
    tcc_conv2d_desc d = plain_desc(layout, filter_layout);
    shape->apply(&d);
    char what[128];
    snprintf(what, sizeof what, "%s, %s, %s", shape->name, layout ? "NCHW" : "NHWC",
             filter_layout ? "KCRS" : "KRSC");
    check_against_naive(&d, 100 + (uint64_t)_i, false, what);
}
END_TEST

/* The filter layouts hold the same filter: reordering one into another gives the same
 * output, in either activation layout (and the blocked ones, for a blocked problem). */
START_TEST(test_filter_layouts_agree)
{
    tcc_conv2d_desc krsc = blocked_desc(16, 5, 32, 16, 3, 1, 1);
    krsc.layout = TCC_LAYOUT_NHWC;
    krsc.filter_layout = TCC_FILTER_KRSC;
    TestOperands data = random_data(&krsc, 8, false);
    double *expected = reference_all(&krsc, &data, 2);
    static const tcc_layout layouts[] = {TCC_LAYOUT_NHWC, TCC_LAYOUT_NCHW, TCC_LAYOUT_NHWCNC};
    static const tcc_filter_layout filters[] = {TCC_FILTER_KCRS, TCC_FILTER_KRSC,
                                                TCC_FILTER_BLOCKED};
    for (int i = 0; i < 3; i++) {
        tcc_conv2d_desc other = krsc;
        other.layout = layouts[i];
        other.filter_layout = filters[i];
        TestOperands moved = random_data(&other, 8, false);
        uint16_t *in = moved.input, *fl = moved.filter;
        for (int64_t n = 0; n < 16; n++)
            for (int64_t h = 0; h < 5; h++)
                for (int64_t w = 0; w < 5; w++)
                    for (int64_t c = 0; c < 32; c++)
                        in[input_offset(&other, n, h, w, c)] =
                            ((uint16_t *)data.input)[input_offset(&krsc, n, h, w, c)];
        for (int64_t k = 0; k < 16; k++)
            for (int64_t r = 0; r < 3; r++)
                for (int64_t s = 0; s < 3; s++)
                    for (int64_t c = 0; c < 32; c++)
                        fl[filter_offset(&other, k, r, s, c)] =
                            ((uint16_t *)data.filter)[filter_offset(&krsc, k, r, s, c)];
        double *got = reference_all(&other, &moved, 2);
        for (int64_t n = 0; n < 16; n++)
            for (int64_t p = 0; p < 5; p++)
                for (int64_t q = 0; q < 5; q++)
                    for (int64_t k = 0; k < 16; k++)
                        ck_assert(got[output_offset(&other, n, p, q, k)] ==
                                  expected[output_offset(&krsc, n, p, q, k)]);
        free(got);
        test_free_operands(&moved);
    }
    free(expected);
    test_free_operands(&data);
}
END_TEST

/* ---- values: types -------------------------------------------------------------------- */

static const TestTypes type_cases[] = {
    {TCC_FLOAT16, TCC_FLOAT32, TCC_FLOAT32, false},
    {TCC_FLOAT16, TCC_FLOAT16, TCC_FLOAT16, false},
    {TCC_FLOAT16, TCC_FLOAT32, TCC_BFLOAT16, false},
    {TCC_BFLOAT16, TCC_FLOAT32, TCC_FLOAT32, false},
    {TCC_BFLOAT16, TCC_FLOAT32, TCC_BFLOAT16, false},
    {TCC_FLOAT32, TCC_FLOAT32, TCC_FLOAT32, false},
    {TCC_FLOAT32, TCC_FLOAT32, TCC_FLOAT32, true},
    {TCC_FLOAT32, TCC_FLOAT32, TCC_FLOAT16, true},
    {TCC_INT8, TCC_INT32, TCC_INT32, false},
    {TCC_INT8, TCC_INT32, TCC_FLOAT32, false},
};

/* Each type combination, in NHWC and NCHW, with groups and an epilogue that reads every
 * tensor of the output type. */
START_TEST(test_integer_output_needs_integer_constants)
{
    tcc_conv2d_desc d;
    tcc_conv2d_desc_init(&d);
    d.input_type = TCC_INT8;
    d.accumulate_type = TCC_INT32;
    d.output_type = TCC_INT32;
    d.epilogue.alpha = 0.5;
    tcc_context *ctx = test_context();
    ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "epilogue.alpha (0.5) must be an integer");
    d.epilogue.alpha = 2;
    d.epilogue.clamp = true;
    d.epilogue.clamp_min = -1.5;
    d.epilogue.clamp_max = 100;
    ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "epilogue.clamp_min");
    d.epilogue.clamp_min = -1;
    ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), TCC_OK);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_matches_naive_types)
{
    const TestTypes *types = &type_cases[_i / 2];
    tcc_conv2d_desc d = plain_desc(_i % 2 ? TCC_LAYOUT_NCHW : TCC_LAYOUT_NHWC,
                                   _i % 2 ? TCC_FILTER_KCRS : TCC_FILTER_KRSC);
    d.groups = 2;
    d.stride_w = 2;
    d.input_type = types->input;
    d.accumulate_type = types->accumulate;
    d.output_type = types->output;
    /* An int32 output computes in int32: its constants are integers. */
    bool integer = types->output == TCC_INT32;
    d.epilogue.alpha = integer ? 3 : 0.5;
    d.epilogue.bias = true;
    d.epilogue.residual = true;
    d.epilogue.beta = -2;
    d.epilogue.prologue = TCC_PROLOGUE_SCALE;
    d.epilogue.prologue_arg = integer ? 2 : 0.25;
    char what[128];
    snprintf(what, sizeof what, "%s -> %s -> %s%s", tcc_dtype_name(types->input),
             tcc_dtype_name(types->accumulate), tcc_dtype_name(types->output),
             types->raw ? " (raw)" : "");
    check_against_naive(&d, 200 + (uint64_t)_i, types->raw, what);
}
END_TEST

/* A 1x1 convolution of one channel: out = in * filter (+ epilogue). */
static tcc_conv2d_desc pointwise_desc(tcc_dtype input, tcc_dtype accumulate, tcc_dtype output)
{
    tcc_conv2d_desc d;
    tcc_conv2d_desc_init(&d);
    d.input_type = input;
    d.accumulate_type = accumulate;
    d.output_type = output;
    return d;
}

static double reference_one(const tcc_conv2d_desc *d, const tcc_reference_tensors *tensors)
{
    tcc_context *ctx = test_context();
    double out = NAN;
    ck_assert_msg(tcc_conv2d_reference(ctx, d, tensors, NULL, 1, 1, &out) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    tcc_context_destroy(ctx);
    return out;
}

/* float32 operands are rounded to tf32 (ties away from zero); epilogue tensors are not. */
START_TEST(test_tf32_rounding_by_hand)
{
    tcc_conv2d_desc d = pointwise_desc(TCC_FLOAT32, TCC_FLOAT32, TCC_FLOAT32);
    float ulp = ldexpf(1, -10), one = 1.0f;
    float input = 1.0f + ulp / 2; /* a tie: away from zero */
    tcc_reference_tensors t = {sizeof(tcc_reference_tensors), &input, &one, NULL, NULL, NULL};
    ck_assert(reference_one(&d, &t) == 1.0 + ulp);
    input = -input;
    ck_assert(reference_one(&d, &t) == -(1.0 + ulp));
    input = nextafterf(1.0f + ulp / 2, 0); /* below the tie: down */
    ck_assert(reference_one(&d, &t) == 1.0);
    float filter = 3.0f + 3 * ulp / 2; /* rounds the filter too: 3 + 2 ulp */
    input = 1.0f;
    t.filter = &filter;
    ck_assert(reference_one(&d, &t) == 3.0 + 2 * ulp);
    /* The bias keeps its float32 value. */
    float bias = 1.0f + ulp / 4;
    d.epilogue.bias = true;
    t.bias = &bias;
    ck_assert(reference_one(&d, &t) == 3.0 + 2 * ulp + 1.0 + ulp / 4);
}
END_TEST

START_TEST(test_int8_by_hand)
{
    tcc_conv2d_desc d = plain_desc(TCC_LAYOUT_NCHW, TCC_FILTER_KCRS);
    d.input_type = TCC_INT8;
    d.accumulate_type = TCC_INT32;
    d.output_type = TCC_INT32;
    set_pads(&d, 0); /* every tap in range: 3*3*8 products of 16384 */
    TestOperands data = filled_data(&d, -128, -128);
    double *out = reference_all(&d, &data, 1);
    for (int64_t i = 0; i < tcc_conv2d_output_elements(&d); i++)
        ck_assert(out[i] == 72.0 * 16384);
    free(out);
    test_free_operands(&data);
    /* int32 epilogue tensors: out = 2 * (1 * -1) + bias 7 - 1 * residual 100. */
    d = pointwise_desc(TCC_INT8, TCC_INT32, TCC_INT32);
    int8_t one = 1, minus = -1;
    int32_t bias = 7, residual = 100;
    d.epilogue.alpha = 2;
    d.epilogue.bias = d.epilogue.residual = true;
    d.epilogue.beta = -1;
    tcc_reference_tensors t = {sizeof(tcc_reference_tensors), &one, &minus, &bias, &residual, NULL};
    ck_assert(reference_one(&d, &t) == -95.0);
}
END_TEST

START_TEST(test_half_types_by_hand)
{
    /* bfloat16 operands and a bfloat16 output: 1.5 * -2.5 + bias 0.125. */
    tcc_conv2d_desc d = pointwise_desc(TCC_BFLOAT16, TCC_FLOAT32, TCC_BFLOAT16);
    uint16_t input = tcc_f32_to_bf16(1.5f), filter = tcc_f32_to_bf16(-2.5f);
    uint16_t bias = tcc_f32_to_bf16(0.125f);
    d.epilogue.bias = true;
    tcc_reference_tensors t = {sizeof(tcc_reference_tensors), &input, &filter, &bias, NULL, NULL};
    ck_assert(reference_one(&d, &t) == -3.625);
    /* float16 with float16 accumulation, output and previous output: not rounded. */
    d = pointwise_desc(TCC_FLOAT16, TCC_FLOAT16, TCC_FLOAT16);
    input = tcc_f32_to_f16(2049.0f); /* 2048 in float16 */
    filter = tcc_f32_to_f16(1.0f);
    uint16_t previous = tcc_f32_to_f16(0.5f);
    d.epilogue.beta = 1;
    t = (tcc_reference_tensors){sizeof t, &input, &filter, NULL, NULL, &previous};
    ck_assert(reference_one(&d, &t) == 2048.5); /* the caller compares with tolerance */
}
END_TEST

/* ---- values: the epilogue ------------------------------------------------------------- */

/* A 1x1 convolution of 1 input channel to 2 output channels on one pixel: out[k] =
 * in * filter[k] = 2 * 3 and 2 * -1, so the epilogue's per-channel effects show. */
typedef struct Pixel {
    tcc_conv2d_desc d;
    float input, filter[2], bias[2], residual[2], previous[2];
    tcc_reference_tensors tensors;
    double out[2];
} Pixel;

static void pixel_init(Pixel *px)
{
    *px = (Pixel){.input = 2,
                  .filter = {3, -1},
                  .bias = {0.5f, -0.25f},
                  .residual = {10, 20},
                  .previous = {-4, 8}};
    px->d = pointwise_desc(TCC_FLOAT32, TCC_FLOAT32, TCC_FLOAT32);
    px->d.out_channels = 2;
    px->tensors = (tcc_reference_tensors){sizeof(tcc_reference_tensors),
                                          &px->input,
                                          px->filter,
                                          px->bias,
                                          px->residual,
                                          px->previous};
}

static void pixel_run(Pixel *px, double expected0, double expected1)
{
    tcc_context *ctx = test_context();
    ck_assert_msg(tcc_conv2d_reference(ctx, &px->d, &px->tensors, NULL, 2, 1, px->out) == TCC_OK,
                  "%s", tcc_last_error(ctx));
    ck_assert_msg(px->out[0] == expected0 && px->out[1] == expected1, "got %g %g, expected %g %g",
                  px->out[0], px->out[1], expected0, expected1);
    tcc_context_destroy(ctx);
}

START_TEST(test_epilogue_by_hand)
{
    Pixel px;
    pixel_init(&px);
    pixel_run(&px, 6, -2);
    px.d.epilogue.alpha = 0.5;
    pixel_run(&px, 3, -1);
    px.d.epilogue.bias = true;
    pixel_run(&px, 3.5, -1.25);
    px.d.epilogue.beta = 2; /* the previous output: 2 * (-4, 8) */
    pixel_run(&px, -4.5, 14.75);
    px.d.epilogue.residual = true; /* the residual: 2 * (10, 20) */
    pixel_run(&px, 23.5, 38.75);
    px.d.epilogue.beta = -1;
    pixel_run(&px, -6.5, -21.25);
    px.d.epilogue.relu = true;
    pixel_run(&px, 0, 0);
    px.d.epilogue.relu = false;
    px.d.epilogue.clamp = true;
    px.d.epilogue.clamp_min = -10;
    px.d.epilogue.clamp_max = -7;
    pixel_run(&px, -7, -10);
    /* relu first, then clamp */
    px.d.epilogue.relu = true;
    px.d.epilogue.clamp_min = 1;
    px.d.epilogue.clamp_max = 2;
    pixel_run(&px, 1, 1);
}
END_TEST

START_TEST(test_prologue_by_hand)
{
    Pixel px;
    pixel_init(&px);
    px.d.epilogue.alpha = 2;
    px.d.epilogue.prologue = TCC_PROLOGUE_SET; /* acc = 1.5 + (6, -2), times 2 */
    px.d.epilogue.prologue_arg = 1.5;
    pixel_run(&px, 15, -1);
    px.d.epilogue.prologue = TCC_PROLOGUE_SCALE; /* acc = 1.5 * (-4, 8) + (6, -2) */
    pixel_run(&px, 0, 20);
    px.d.epilogue.prologue = TCC_PROLOGUE_RELU; /* acc = (0, 8) + (6, -2) */
    pixel_run(&px, 12, 12);
    px.d.epilogue.prologue = TCC_PROLOGUE_NONE; /* prologue_arg is ignored */
    pixel_run(&px, 12, -4);
    /* The prologue goes through alpha, the bias and beta * source do not. */
    px.d.epilogue.prologue = TCC_PROLOGUE_SET;
    px.d.epilogue.bias = true;
    px.d.epilogue.beta = 1;
    px.d.epilogue.residual = true;
    pixel_run(&px, 15 + 0.5 + 10, -1 - 0.25 + 20);
}
END_TEST

typedef struct EpilogueCase {
    const char *name;
    tcc_epilogue epilogue;
} EpilogueCase;

static const EpilogueCase epilogue_cases[] = {
    {"alpha", {.alpha = -0.75}},
    {"bias", {.alpha = 1, .bias = true}},
    {"beta residual", {.alpha = 1, .beta = 0.5, .residual = true}},
    {"beta previous", {.alpha = 1, .beta = -1.25}},
    {"relu", {.alpha = 1, .relu = true}},
    {"clamp", {.alpha = 1, .clamp = true, .clamp_min = -3, .clamp_max = 2.5}},
    {"set", {.alpha = 1, .prologue = TCC_PROLOGUE_SET, .prologue_arg = -7}},
    {"scale", {.alpha = 1, .prologue = TCC_PROLOGUE_SCALE, .prologue_arg = 3}},
    {"relu prologue", {.alpha = 1, .prologue = TCC_PROLOGUE_RELU}},
    {"all",
     {.alpha = 0.5,
      .beta = 2,
      .bias = true,
      .residual = true,
      .relu = true,
      .clamp = true,
      .clamp_min = 0,
      .clamp_max = 4,
      .prologue = TCC_PROLOGUE_SCALE,
      .prologue_arg = -1}},
};

/* Each epilogue, in NHWC, NCHW and NHWCnc, against the naive convolution. */
START_TEST(test_matches_naive_epilogue)
{
    const EpilogueCase *e = &epilogue_cases[_i / 3];
    tcc_conv2d_desc d = plain_desc(TCC_LAYOUT_NHWC, TCC_FILTER_KRSC);
    if (_i % 3 == 1) {
        d.layout = TCC_LAYOUT_NCHW;
        d.filter_layout = TCC_FILTER_KCRS;
    } else if (_i % 3 == 2) {
        d = blocked_desc(16, 4, 16, 32, 3, 1, 1);
    }
    d.epilogue = e->epilogue;
    check_against_naive(&d, 300 + (uint64_t)_i, false, e->name);
}
END_TEST

/* ---- positions and threads ------------------------------------------------------------ */

static void check_sampled(const tcc_conv2d_desc *d, uint64_t seed)
{
    TestOperands data = random_data(d, seed, false);
    double *full = reference_all(d, &data, 1);
    enum { SAMPLES = 1000 };
    int64_t positions[SAMPLES];
    uint64_t state = seed;
    for (int i = 0; i < SAMPLES; i++)
        positions[i] = test_random_below(&state, tcc_conv2d_output_elements(d));
    positions[0] = 0;
    positions[1] = tcc_conv2d_output_elements(d) - 1;
    positions[2] = positions[3]; /* repeats are fine */
    assert_sampled_agree(&conv2d_op, d, &data.tensors, full, positions, SAMPLES, 3);
    test_free_operands(&data);
    free(full);
}

START_TEST(test_sampled_equals_full)
{
    tcc_conv2d_desc d = blocked_desc(32, 6, 32, 32, 3, 1, 1);
    check_sampled(&d, 5);
    d = plain_desc(TCC_LAYOUT_NCHW, TCC_FILTER_KRSC);
    everything(&d);
    d.epilogue = epilogue_cases[9].epilogue; /* all of it */
    check_sampled(&d, 6);
    d = plain_desc(TCC_LAYOUT_NHWC, TCC_FILTER_KCRS);
    depthwise(&d);
    check_sampled(&d, 7);
}
END_TEST

/* With arbitrary values (sums not exact) the result is still bit-identical whatever the
 * number of threads: each output is computed the same way by whichever thread. */
static void check_threads(const tcc_conv2d_desc *d, uint64_t seed)
{
    TestOperands data = random_data(d, seed, true);
    if (d->input_type == TCC_FLOAT16) {
        uint64_t state = seed;
        uint16_t *input = data.input, *filter = data.filter;
        for (int64_t i = 0; i < tcc_conv2d_input_elements(d); i++)
            input[i] = tcc_f32_to_f16((float)test_random(&state) / 1.8e19f - 0.5f);
        for (int64_t i = 0; i < tcc_conv2d_filter_elements(d); i++)
            filter[i] = tcc_f32_to_f16((float)test_random(&state) / 1.8e19f - 0.5f);
    }
    double *one = reference_all(d, &data, 1);
    static const int thread_counts[] = {0, -5, 2, 3, 7, 16, 100000};
    assert_threads_agree(&conv2d_op, d, &data.tensors, one, thread_counts,
                         (int)(sizeof thread_counts / sizeof thread_counts[0]));
    test_free_operands(&data);
    free(one);
}

START_TEST(test_threads_equal_single_thread)
{
    tcc_conv2d_desc d = blocked_desc(16, 7, 32, 48, 3, 1, 1);
    check_threads(&d, 6);
    d = plain_desc(TCC_LAYOUT_NHWC, TCC_FILTER_KRSC);
    d.input_type = TCC_FLOAT32;
    d.groups = 2;
    d.epilogue = epilogue_cases[9].epilogue;
    check_threads(&d, 7);
}
END_TEST

static Suite *conv2d_reference_suite(void)
{
    Suite *suite = suite_create("conv2d_reference");
    TCase *desc = test_case(suite, "desc", NULL, NULL);
    tcase_add_test(desc, test_desc_init);
    tcase_add_test(desc, test_tutorial_desc);
    tcase_add_test(desc, test_output_sizes);
    tcase_add_test(desc, test_flops_with_groups);
    tcase_add_test(desc, test_element_counts_each_layout);
    tcase_add_loop_test(desc, test_layers_validate, 0, (int)(sizeof layers / sizeof layers[0]));
    tcase_add_test(desc, test_first_layer_is_the_seed);

    TCase *errors = test_case(suite, "validation", NULL, NULL);
    tcase_add_loop_test(errors, test_validation_errors, 0,
                        (int)(sizeof bad_descs / sizeof bad_descs[0]));
    tcase_add_test(errors, test_type_combinations);
    tcase_add_test(errors, test_epilogue_values_accepted);
    tcase_add_test(errors, test_null_desc);
    tcase_add_test(errors, test_bad_positions);
    tcase_add_test(errors, test_missing_tensors);

    TCase *values = test_case(suite, "values", NULL, NULL);
    tcase_set_timeout(values, 60);
    tcase_add_test(values, test_ones_by_hand);
    tcase_add_test(values, test_single_tap_by_hand);
    tcase_add_test(values, test_single_tap_each_layout);
    tcase_add_test(values, test_matches_naive_blocked);
    tcase_add_loop_test(values, test_matches_naive_plain, 0, NSHAPES * 4);
    tcase_add_test(values, test_filter_layouts_agree);
    tcase_add_loop_test(values, test_matches_naive_types, 0,
                        2 * (int)(sizeof type_cases / sizeof type_cases[0]));
    tcase_add_test(values, test_tf32_rounding_by_hand);
    tcase_add_test(values, test_int8_by_hand);
    tcase_add_test(values, test_integer_output_needs_integer_constants);
    tcase_add_test(values, test_half_types_by_hand);
    tcase_add_test(values, test_epilogue_by_hand);
    tcase_add_test(values, test_prologue_by_hand);
    tcase_add_loop_test(values, test_matches_naive_epilogue, 0,
                        3 * (int)(sizeof epilogue_cases / sizeof epilogue_cases[0]));
    tcase_add_test(values, test_sampled_equals_full);
    tcase_add_test(values, test_threads_equal_single_thread);
    return suite;
}

TEST_MAIN(conv2d_reference_suite)
