/*
 * The conv2d CPU reference's values in each layout and shape, checked against hand-computed
 * outputs and against the independent naive convolution of conv2d_support.h (written from
 * the layout formulas of conv2d_reference.c): the blocked layouts, NHWC and NCHW with each
 * filter layout and shape, the filter layouts holding the same filter, and sampled positions
 * and any number of threads giving the full single-threaded result. Types and the epilogue:
 * test_conv2d_arithmetic.c; the descriptor and its validation: test_conv2d_desc.c.
 */
#include "conv2d_support.h"

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
    TCase *values = test_case(suite, "values", NULL, NULL);
    tcase_set_timeout(values, 60);
    tcase_add_test(values, test_ones_by_hand);
    tcase_add_test(values, test_single_tap_by_hand);
    tcase_add_test(values, test_single_tap_each_layout);
    tcase_add_test(values, test_matches_naive_blocked);
    tcase_add_loop_test(values, test_matches_naive_plain, 0, NSHAPES * 4);
    tcase_add_test(values, test_filter_layouts_agree);
    tcase_add_test(values, test_sampled_equals_full);
    tcase_add_test(values, test_threads_equal_single_thread);
    return suite;
}

TEST_MAIN(conv2d_reference_suite)
