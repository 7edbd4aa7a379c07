/*
 * What the conv2d reference's tests share (test_conv2d_desc.c, the descriptor and its
 * validation; test_conv2d_reference.c, the values in each layout and shape;
 * test_conv2d_arithmetic.c, the values of each type and epilogue): the layouts written out
 * from their definitions, operands, an independent naive convolution over logical
 * (n, h, w, c) indices, the reference run in full and checked against it, small descriptors,
 * and the table of epilogues. Static, so each test program has its own.
 */
#ifndef TCC_TEST_CONV2D_SUPPORT_H
#define TCC_TEST_CONV2D_SUPPORT_H

#include "reference/reference.h"
#include "reference_support.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the layouts, written out from their definitions ---------------------------------- */

/* An activation (n, y, x, j) of Y x X x J per image: the input (H, W, C) or output (P, Q, K). */
static inline int64_t activation_offset(tcc_layout layout, int64_t Y, int64_t X, int64_t J,
                                        int64_t n, int64_t y, int64_t x, int64_t j)
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

static inline int64_t input_offset(const tcc_conv2d_desc *d, int64_t n, int64_t h, int64_t w,
                                   int64_t c)
{
    return activation_offset(d->layout, d->height, d->width, d->in_channels, n, h, w, c);
}

static inline int64_t output_offset(const tcc_conv2d_desc *d, int64_t n, int64_t p, int64_t q,
                                    int64_t k)
{
    return activation_offset(d->layout, tcc_conv2d_out_height(d), tcc_conv2d_out_width(d),
                             d->out_channels, n, p, q, k);
}

/* c is the channel within the group of output channel k. */
static inline int64_t filter_offset(const tcc_conv2d_desc *d, int64_t k, int64_t r, int64_t s,
                                    int64_t c)
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
static inline void *filled_tensor(tcc_dtype type, int64_t count, double value)
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
static inline TestOperands random_data(const tcc_conv2d_desc *d, uint64_t seed, bool raw)
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
static inline TestOperands filled_data(const tcc_conv2d_desc *d, double input, double filter)
{
    return test_operands(filled_tensor(d->input_type, tcc_conv2d_input_elements(d), input),
                         filled_tensor(d->input_type, tcc_conv2d_filter_elements(d), filter));
}

/* ---- an independent naive convolution ------------------------------------------------- */

static inline double naive_input(const tcc_conv2d_desc *d, const TestOperands *data, int64_t n,
                                 int64_t h, int64_t w, int64_t c)
{
    if (h < 0 || h >= d->height || w < 0 || w >= d->width)
        return 0.0; /* the zero padding */
    return test_element(d->input_type, data->input, input_offset(d, n, h, w, c), true);
}

static inline double naive_output(const tcc_conv2d_desc *d, const TestOperands *data, int64_t n,
                                  int64_t p, int64_t q, int64_t k)
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

static inline double *naive_conv(const tcc_conv2d_desc *d, const TestOperands *data)
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

static inline double *reference_all(const tcc_conv2d_desc *d, const TestOperands *data, int threads)
{
    return test_reference_all(&conv2d_op, d, &data->tensors, threads);
}

static inline void check_against_naive(const tcc_conv2d_desc *d, uint64_t seed, bool raw,
                                       const char *what)
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

static inline void set_pads(tcc_conv2d_desc *d, int64_t pad)
{
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = pad;
}

/* An NHWCnc descriptor like the tutorial's, of another size. */
static inline tcc_conv2d_desc blocked_desc(int64_t n, int64_t hw, int64_t c, int64_t k, int64_t rs,
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
static inline tcc_conv2d_desc plain_desc(tcc_layout layout, tcc_filter_layout filter_layout)
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
static inline tcc_conv2d_desc plain_desc_at(int i)
{
    return plain_desc(i / 2 ? TCC_LAYOUT_NCHW : TCC_LAYOUT_NHWC,
                      i % 2 ? TCC_FILTER_KCRS : TCC_FILTER_KRSC);
}

/* One change to a descriptor (TEST_SPOIL), for the tables of bad descriptors and of shapes. */
#define SPOIL(name, statement) TEST_SPOIL(tcc_conv2d_desc, name, statement)

/* ---- epilogues ------------------------------------------------------------------------ */

/* Each part of the epilogue and the prologue alone, then all of them (the last). */
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

#endif
