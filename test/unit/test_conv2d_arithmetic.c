/*
 * The conv2d CPU reference's arithmetic: each type combination against the naive convolution
 * of conv2d_support.h, integer epilogue constants for integer outputs, tf32 rounding, int8
 * and the 16-bit types by hand, and the epilogue and the prologue by hand and, each
 * epilogue in NHWC, NCHW and NHWCnc, against the naive convolution. The values in each
 * layout and shape: test_conv2d_reference.c.
 */
#include "conv2d_support.h"

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

/* Each type combination, in NHWC and NCHW, with groups and an epilogue that reads every
 * tensor of the output type. */
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

static Suite *conv2d_arithmetic_suite(void)
{
    Suite *suite = suite_create("conv2d_arithmetic");
    TCase *values = test_case(suite, "values", NULL, NULL);
    tcase_set_timeout(values, 60);
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
    return suite;
}

TEST_MAIN(conv2d_arithmetic_suite)
