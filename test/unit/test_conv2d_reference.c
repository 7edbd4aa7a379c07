/*
 * The conv2d descriptor helpers and the CPU reference, checked against hand-computed
 * outputs and against an independent naive convolution over logical (n, h, w, c) indices.
 */
#include "conv2d.h"
#include "support.h"

#include <stdbool.h>
#include <stdlib.h>

/* ---- an independent naive convolution ------------------------------------------------- */

/* The NHWCnc offsets, written out from the layout's definition. */
static int64_t input_offset(const tcc_conv2d_desc *d, int64_t n, int64_t h, int64_t w, int64_t c)
{
    return ((((n / 16 * d->height + h) * d->width + w) * (d->in_channels / 16) + c / 16) * 16 +
            n % 16) *
               16 +
           c % 16;
}

static int64_t filter_offset(const tcc_conv2d_desc *d, int64_t r, int64_t s, int64_t c, int64_t k)
{
    return ((((r * d->kernel_w + s) * (d->in_channels / 16) + c / 16) * (d->out_channels / 16) +
             k / 16) *
                16 +
            c % 16) *
               16 +
           k % 16;
}

static int64_t output_offset(const tcc_conv2d_desc *d, int64_t n, int64_t p, int64_t q, int64_t k)
{
    int64_t P = tcc_conv2d_out_height(d), Q = tcc_conv2d_out_width(d);
    return ((((n / 16 * P + p) * Q + q) * (d->out_channels / 16) + k / 16) * 16 + n % 16) * 16 +
           k % 16;
}

/* The padded input: zero outside. */
static double input_at(const tcc_conv2d_desc *d, const uint16_t *input, int64_t n, int64_t h,
                       int64_t w, int64_t c)
{
    if (h < 0 || h >= d->height || w < 0 || w >= d->width)
        return 0.0;
    return tcc_f16_to_f32(input[input_offset(d, n, h, w, c)]);
}

static double *naive_conv(const tcc_conv2d_desc *d, const uint16_t *input, const uint16_t *filter)
{
    int64_t P = tcc_conv2d_out_height(d), Q = tcc_conv2d_out_width(d);
    double *out = calloc((size_t)tcc_conv2d_output_elements(d), sizeof *out);
    ck_assert_ptr_nonnull(out);
    for (int64_t n = 0; n < d->batch; n++)
        for (int64_t p = 0; p < P; p++)
            for (int64_t q = 0; q < Q; q++)
                for (int64_t k = 0; k < d->out_channels; k++) {
                    double sum = 0.0;
                    for (int64_t r = 0; r < d->kernel_h; r++)
                        for (int64_t s = 0; s < d->kernel_w; s++)
                            for (int64_t c = 0; c < d->in_channels; c++)
                                sum += input_at(d, input, n, p * d->stride_h - d->pad_h + r,
                                                q * d->stride_w - d->pad_w + s, c) *
                                       tcc_f16_to_f32(filter[filter_offset(d, r, s, c, k)]);
                    out[output_offset(d, n, p, q, k)] = sum;
                }
    return out;
}

/* ---- data ------------------------------------------------------------------------------ */

static tcc_conv2d_desc small_desc(int64_t n, int64_t hw, int64_t c, int64_t k, int64_t rs,
                                  int64_t stride, int64_t pad)
{
    tcc_conv2d_desc d;
    tcc_conv2d_seed_desc(&d);
    d.batch = n;
    d.height = d.width = hw;
    d.in_channels = c;
    d.out_channels = k;
    d.kernel_h = d.kernel_w = rs;
    d.stride_h = d.stride_w = stride;
    d.pad_h = d.pad_w = pad;
    return d;
}

/* Multiples of 1/4 in [-2, 2]: every product and sum is exact in double, so any summation
 * order gives the same bits and results can be compared with ==. */
static uint16_t *random_halves(int64_t count, uint64_t *state)
{
    uint16_t *data = malloc((size_t)count * sizeof *data);
    ck_assert_ptr_nonnull(data);
    for (int64_t i = 0; i < count; i++)
        data[i] = tcc_f32_to_f16((float)(tcc_test_random_below(state, 17) - 8) / 4.0f);
    return data;
}

static uint16_t *filled_halves(int64_t count, float value)
{
    uint16_t *data = malloc((size_t)count * sizeof *data);
    ck_assert_ptr_nonnull(data);
    for (int64_t i = 0; i < count; i++)
        data[i] = tcc_f32_to_f16(value);
    return data;
}

/* The reference over all outputs. */
static double *reference_all(const tcc_conv2d_desc *d, const uint16_t *input,
                             const uint16_t *filter, int threads)
{
    tcc_context *ctx = tcc_test_context();
    int64_t count = tcc_conv2d_output_elements(d);
    double *out = malloc((size_t)count * sizeof *out);
    ck_assert_ptr_nonnull(out);
    ck_assert_msg(tcc_conv2d_reference(ctx, d, input, filter, NULL, count, threads, out) == TCC_OK,
                  "%s", tcc_last_error(ctx));
    tcc_context_destroy(ctx);
    return out;
}

static void check_against_naive(const tcc_conv2d_desc *d, uint64_t seed)
{
    uint64_t state = seed;
    uint16_t *input = random_halves(tcc_conv2d_input_elements(d), &state);
    uint16_t *filter = random_halves(tcc_conv2d_filter_elements(d), &state);
    double *expected = naive_conv(d, input, filter);
    double *got = reference_all(d, input, filter, 1);
    for (int64_t i = 0; i < tcc_conv2d_output_elements(d); i++)
        ck_assert_msg(got[i] == expected[i], "output %lld: %g, expected %g", (long long)i, got[i],
                      expected[i]);
    free(input);
    free(filter);
    free(expected);
    free(got);
}

/* ---- the descriptor ------------------------------------------------------------------- */

START_TEST(test_seed_desc)
{
    tcc_conv2d_desc d;
    tcc_conv2d_seed_desc(&d);
    ck_assert_int_eq(d.batch, 256);
    ck_assert_int_eq(d.height, 14);
    ck_assert_int_eq(d.width, 14);
    ck_assert_int_eq(d.in_channels, 256);
    ck_assert_int_eq(d.out_channels, 512);
    ck_assert_int_eq(d.kernel_h, 3);
    ck_assert_int_eq(d.kernel_w, 3);
    ck_assert_int_eq(d.stride_h, 1);
    ck_assert_int_eq(d.stride_w, 1);
    ck_assert_int_eq(d.pad_h, 1);
    ck_assert_int_eq(d.pad_w, 1);
    ck_assert_int_eq(d.layout, TCC_LAYOUT_NHWCNC);
    ck_assert_int_eq(d.input_type, TCC_FLOAT16);
    ck_assert_int_eq(d.output_type, TCC_FLOAT32);
    ck_assert_int_eq(tcc_conv2d_out_height(&d), 14);
    ck_assert_int_eq(tcc_conv2d_out_width(&d), 14);
    ck_assert_int_eq(tcc_conv2d_input_elements(&d), 256LL * 14 * 14 * 256);
    ck_assert_int_eq(tcc_conv2d_filter_elements(&d), 3LL * 3 * 256 * 512);
    ck_assert_int_eq(tcc_conv2d_output_elements(&d), 256LL * 14 * 14 * 512);
    ck_assert(tcc_conv2d_flops(&d) == 2.0 * 256 * 512 * 14 * 14 * 256 * 3 * 3);
    tcc_context *ctx = tcc_test_context();
    ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), TCC_OK);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_output_sizes)
{
    tcc_conv2d_desc d = small_desc(16, 7, 16, 16, 3, 2, 1);
    ck_assert_int_eq(tcc_conv2d_out_height(&d), 4); /* (7 + 2 - 3) / 2 + 1 */
    d.width = 8;
    d.kernel_w = 2;
    d.pad_w = 0;
    ck_assert_int_eq(tcc_conv2d_out_width(&d), 4); /* (8 - 2) / 2 + 1 */
    ck_assert(tcc_conv2d_flops(&d) == 2.0 * 16 * 16 * 4 * 4 * 16 * 3 * 2);
    /* One row short of a window: empty, even though (-1) / 2 truncates to 0. */
    d = small_desc(16, 2, 16, 16, 3, 2, 0);
    ck_assert_int_eq(tcc_conv2d_out_height(&d), 0);
}
END_TEST

/* ---- validation ----------------------------------------------------------------------- */

typedef struct BadDesc {
    const char *field; /* expected in the message */
    tcc_status status;
    void (*spoil)(tcc_conv2d_desc *d);
} BadDesc;

static void zero_batch(tcc_conv2d_desc *d)
{
    d->batch = 0;
}
static void odd_batch(tcc_conv2d_desc *d)
{
    d->batch = 24;
}
static void zero_height(tcc_conv2d_desc *d)
{
    d->height = 0;
}
static void negative_width(tcc_conv2d_desc *d)
{
    d->width = -3;
}
static void odd_channels(tcc_conv2d_desc *d)
{
    d->in_channels = 200;
}
static void odd_out_channels(tcc_conv2d_desc *d)
{
    d->out_channels = 8;
}
static void zero_kernel_h(tcc_conv2d_desc *d)
{
    d->kernel_h = 0;
}
static void huge_kernel_w(tcc_conv2d_desc *d)
{
    d->kernel_w = 17;
}
static void huge_kernel_h(tcc_conv2d_desc *d)
{
    d->kernel_h = 17;
}
static void zero_stride_h(tcc_conv2d_desc *d)
{
    d->stride_h = 0;
}
static void negative_stride_w(tcc_conv2d_desc *d)
{
    d->stride_w = -1;
}
static void negative_pad_h(tcc_conv2d_desc *d)
{
    d->pad_h = -1;
}
static void negative_pad_w(tcc_conv2d_desc *d)
{
    d->pad_w = -2;
}
static void int64_height(tcc_conv2d_desc *d)
{
    d->height = 1LL << 40;
}
static void bad_layout(tcc_conv2d_desc *d)
{
    d->layout = (tcc_layout)7;
}
static void fp32_input(tcc_conv2d_desc *d)
{
    d->input_type = TCC_FLOAT32;
}
static void fp16_output(tcc_conv2d_desc *d)
{
    d->output_type = TCC_FLOAT16;
}

static void too_many_elements(tcc_conv2d_desc *d)
{
    d->batch = d->in_channels = 2147483632; /* the largest multiple of 16 in int32 */
    d->height = d->width = 2147483647;
}

static const BadDesc bad_descs[] = {
    {"batch", TCC_ERROR_INVALID_ARGUMENT, zero_batch},
    {"batch must be a multiple of 16", TCC_ERROR_INVALID_ARGUMENT, odd_batch},
    {"height", TCC_ERROR_INVALID_ARGUMENT, zero_height},
    {"width", TCC_ERROR_INVALID_ARGUMENT, negative_width},
    {"in_channels must be a multiple of 16 for the NHWCnc layout (got 200)",
     TCC_ERROR_INVALID_ARGUMENT, odd_channels},
    {"out_channels must be a multiple of 16", TCC_ERROR_INVALID_ARGUMENT, odd_out_channels},
    {"kernel_h", TCC_ERROR_INVALID_ARGUMENT, zero_kernel_h},
    {"kernel_w (17)", TCC_ERROR_INVALID_ARGUMENT, huge_kernel_w},
    {"kernel_h (17)", TCC_ERROR_INVALID_ARGUMENT, huge_kernel_h},
    {"stride_h", TCC_ERROR_INVALID_ARGUMENT, zero_stride_h},
    {"stride_w", TCC_ERROR_INVALID_ARGUMENT, negative_stride_w},
    {"pad_h", TCC_ERROR_INVALID_ARGUMENT, negative_pad_h},
    {"pad_w", TCC_ERROR_INVALID_ARGUMENT, negative_pad_w},
    {"height", TCC_ERROR_INVALID_ARGUMENT, int64_height},
    {"too many elements", TCC_ERROR_INVALID_ARGUMENT, too_many_elements},
    {"layout", TCC_ERROR_INVALID_ARGUMENT, bad_layout},
    {"input_type must be float16 (got float32)", TCC_ERROR_UNSUPPORTED, fp32_input},
    {"output_type must be float32 (got float16)", TCC_ERROR_UNSUPPORTED, fp16_output},
};

START_TEST(test_validation_errors)
{
    const BadDesc *bad = &bad_descs[_i];
    tcc_context *ctx = tcc_test_context();
    tcc_conv2d_desc d;
    tcc_conv2d_seed_desc(&d);
    bad->spoil(&d);
    ck_assert_int_eq(tcc_conv2d_validate(ctx, &d), bad->status);
    tcc_assert_contains(tcc_last_error(ctx), bad->field);
    tcc_assert_one_line(ctx);
    /* The reference validates the same way, before touching any data. */
    double out[1];
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, NULL, NULL, NULL, 1, 1, out), bad->status);
    tcc_assert_contains(tcc_last_error(ctx), bad->field);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_null_desc)
{
    tcc_context *ctx = tcc_test_context();
    ck_assert_int_eq(tcc_conv2d_validate(ctx, NULL), TCC_ERROR_INVALID_ARGUMENT);
    tcc_assert_contains(tcc_last_error(ctx), "descriptor");
    ck_assert_int_eq(tcc_conv2d_out_height(NULL), 0);
    ck_assert_int_eq(tcc_conv2d_output_elements(NULL), 0);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_bad_positions)
{
    tcc_context *ctx = tcc_test_context();
    tcc_conv2d_desc d = small_desc(16, 2, 16, 16, 1, 1, 0);
    int64_t total = tcc_conv2d_output_elements(&d);
    uint16_t *input = filled_halves(tcc_conv2d_input_elements(&d), 1.0f);
    uint16_t *filter = filled_halves(tcc_conv2d_filter_elements(&d), 1.0f);
    double out[4];

    int64_t outside[] = {0, total, 1};
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, input, filter, outside, 3, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    tcc_assert_contains(tcc_last_error(ctx), "positions[1]");
    int64_t negative[] = {-1};
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, input, filter, negative, 1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    tcc_assert_contains(tcc_last_error(ctx), "positions[0]");
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, input, filter, NULL, 4, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    tcc_assert_contains(tcc_last_error(ctx), "count");
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, input, filter, outside, -1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    tcc_assert_contains(tcc_last_error(ctx), "count");
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, NULL, filter, outside, 1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    tcc_assert_one_line(ctx);
    /* Nothing to compute is fine. */
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, input, filter, outside, 0, 4, out), TCC_OK);
    free(input);
    free(filter);
    tcc_context_destroy(ctx);
}
END_TEST

/* ---- values ---------------------------------------------------------------------------- */

/* All ones, 3x3, pad 1 on a 3x3 image: each output counts the in-range taps times C. */
START_TEST(test_ones_by_hand)
{
    tcc_conv2d_desc d = small_desc(16, 3, 16, 16, 3, 1, 1);
    uint16_t *input = filled_halves(tcc_conv2d_input_elements(&d), 1.0f);
    uint16_t *filter = filled_halves(tcc_conv2d_filter_elements(&d), 1.0f);
    double *out = reference_all(&d, input, filter, 1);
    static const double taps[3][3] = {{4, 6, 4}, {6, 9, 6}, {4, 6, 4}};
    for (int n = 0; n < 16; n++)
        for (int p = 0; p < 3; p++)
            for (int q = 0; q < 3; q++)
                for (int k = 0; k < 16; k++)
                    ck_assert(out[output_offset(&d, n, p, q, k)] == 16 * taps[p][q]);
    free(input);
    free(filter);
    free(out);
}
END_TEST

/* One non-zero input and one non-zero filter tap: exactly one output is non-zero, at the
 * place the layout formulas put it. */
START_TEST(test_single_tap_by_hand)
{
    tcc_conv2d_desc d = small_desc(32, 4, 32, 32, 3, 1, 1);
    uint16_t *input = filled_halves(tcc_conv2d_input_elements(&d), 0.0f);
    uint16_t *filter = filled_halves(tcc_conv2d_filter_elements(&d), 0.0f);
    input[input_offset(&d, 19, 1, 2, 17)] = tcc_f32_to_f16(2.0f);
    filter[filter_offset(&d, 0, 1, 17, 20)] = tcc_f32_to_f16(3.0f);
    double *out = reference_all(&d, input, filter, 1);
    /* h = p - 1 + r = 1 with r = 0 gives p = 2; w = q - 1 + s = 2 with s = 1 gives q = 2. */
    int64_t hit = output_offset(&d, 19, 2, 2, 20);
    for (int64_t i = 0; i < tcc_conv2d_output_elements(&d); i++)
        ck_assert_msg(out[i] == (i == hit ? 6.0 : 0.0), "output %lld = %g", (long long)i, out[i]);
    free(input);
    free(filter);
    free(out);
}
END_TEST

START_TEST(test_matches_naive_3x3_pad)
{
    tcc_conv2d_desc d = small_desc(16, 5, 32, 16, 3, 1, 1);
    d.width = 7;
    check_against_naive(&d, 1);
}
END_TEST

START_TEST(test_matches_naive_stride_2)
{
    tcc_conv2d_desc d = small_desc(32, 9, 16, 32, 3, 2, 1);
    d.width = 8;
    d.kernel_w = 2;
    d.pad_w = 0;
    check_against_naive(&d, 2);
}
END_TEST

START_TEST(test_matches_naive_1x1_and_large_pad)
{
    tcc_conv2d_desc d = small_desc(16, 4, 48, 32, 1, 1, 0);
    check_against_naive(&d, 3);
    d = small_desc(16, 2, 16, 16, 3, 1, 2); /* more padding than image */
    d.stride_w = 3;
    check_against_naive(&d, 4);
}
END_TEST

START_TEST(test_sampled_equals_full)
{
    tcc_conv2d_desc d = small_desc(32, 6, 32, 32, 3, 1, 1);
    uint64_t state = 5;
    uint16_t *input = random_halves(tcc_conv2d_input_elements(&d), &state);
    uint16_t *filter = random_halves(tcc_conv2d_filter_elements(&d), &state);
    double *full = reference_all(&d, input, filter, 1);
    enum { SAMPLES = 1000 };
    int64_t positions[SAMPLES];
    double sampled[SAMPLES];
    for (int i = 0; i < SAMPLES; i++)
        positions[i] = tcc_test_random_below(&state, tcc_conv2d_output_elements(&d));
    positions[0] = 0;
    positions[1] = tcc_conv2d_output_elements(&d) - 1;
    tcc_context *ctx = tcc_test_context();
    ck_assert_int_eq(tcc_conv2d_reference(ctx, &d, input, filter, positions, SAMPLES, 3, sampled),
                     TCC_OK);
    for (int i = 0; i < SAMPLES; i++)
        ck_assert(sampled[i] == full[positions[i]]);
    tcc_context_destroy(ctx);
    free(input);
    free(filter);
    free(full);
}
END_TEST

/* With arbitrary fp16 values (sums not exact) the result is still bit-identical whatever
 * the number of threads: each output is computed the same way by whichever thread. */
START_TEST(test_threads_equal_single_thread)
{
    tcc_conv2d_desc d = small_desc(16, 7, 32, 48, 3, 1, 1);
    uint64_t state = 6;
    int64_t nin = tcc_conv2d_input_elements(&d), nfilter = tcc_conv2d_filter_elements(&d);
    uint16_t *input = malloc((size_t)nin * sizeof *input);
    uint16_t *filter = malloc((size_t)nfilter * sizeof *filter);
    ck_assert(input && filter);
    for (int64_t i = 0; i < nin; i++)
        input[i] = tcc_f32_to_f16((float)tcc_test_random(&state) / 1.8e19f - 0.5f);
    for (int64_t i = 0; i < nfilter; i++)
        filter[i] = tcc_f32_to_f16((float)tcc_test_random(&state) / 1.8e19f - 0.5f);
    size_t bytes = (size_t)tcc_conv2d_output_elements(&d) * sizeof(double);
    double *one = reference_all(&d, input, filter, 1);
    static const int thread_counts[] = {0, 2, 3, 7, 16, 100000};
    for (size_t i = 0; i < sizeof thread_counts / sizeof thread_counts[0]; i++) {
        double *many = reference_all(&d, input, filter, thread_counts[i]);
        ck_assert_msg(memcmp(one, many, bytes) == 0, "threads = %d", thread_counts[i]);
        free(many);
    }
    free(input);
    free(filter);
    free(one);
}
END_TEST

static Suite *conv2d_reference_suite(void)
{
    Suite *suite = suite_create("conv2d_reference");
    TCase *desc = tcase_create("desc");
    tcase_add_test(desc, test_seed_desc);
    tcase_add_test(desc, test_output_sizes);
    tcase_add_loop_test(desc, test_validation_errors, 0,
                        (int)(sizeof bad_descs / sizeof bad_descs[0]));
    tcase_add_test(desc, test_null_desc);
    tcase_add_test(desc, test_bad_positions);
    suite_add_tcase(suite, desc);

    TCase *values = tcase_create("values");
    tcase_set_timeout(values, 60);
    tcase_add_test(values, test_ones_by_hand);
    tcase_add_test(values, test_single_tap_by_hand);
    tcase_add_test(values, test_matches_naive_3x3_pad);
    tcase_add_test(values, test_matches_naive_stride_2);
    tcase_add_test(values, test_matches_naive_1x1_and_large_pad);
    tcase_add_test(values, test_sampled_equals_full);
    tcase_add_test(values, test_threads_equal_single_thread);
    suite_add_tcase(suite, values);
    return suite;
}

int main(void)
{
    return tcc_test_run(conv2d_reference_suite());
}
