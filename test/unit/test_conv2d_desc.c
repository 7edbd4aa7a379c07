/*
 * The conv2d descriptor: its helpers (the defaults, the tutorial's descriptor, output sizes,
 * flops, element counts), the layers of /work/shared/layers.csv, and validation: each bad
 * field refused in one line naming it, every supported type combination and only those, and
 * the reference's refusals of bad positions and missing tensors. The reference's values:
 * test_conv2d_reference.c and test_conv2d_arithmetic.c.
 */
#include "conv2d_support.h"

/* ---- the descriptor's helpers --------------------------------------------------------- */

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

static Suite *conv2d_desc_suite(void)
{
    Suite *suite = suite_create("conv2d_desc");
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
    return suite;
}

TEST_MAIN(conv2d_desc_suite)
