/*
 * The matmul descriptor helpers, the validation and the CPU reference, checked against
 * hand-computed products and a naive product over logical (b, i, j, l) indices written
 * here from the offsets of matmul_reference.c.
 */
#include "reference_support.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the layouts, written out from their definitions ---------------------------------- */

static int64_t a_offset(const tcc_matmul_desc *d, int64_t b, int64_t i, int64_t l)
{
    return d->a_col_major ? (b * d->k + l) * d->m + i : (b * d->m + i) * d->k + l;
}

static int64_t b_offset(const tcc_matmul_desc *d, int64_t b, int64_t l, int64_t j)
{
    return d->b_col_major ? (b * d->n + j) * d->k + l : (b * d->k + l) * d->n + j;
}

static int64_t c_offset(const tcc_matmul_desc *d, int64_t b, int64_t i, int64_t j)
{
    return (b * d->m + i) * d->n + j;
}

static int64_t a_elements(const tcc_matmul_desc *d)
{
    return d->batch * d->m * d->k;
}

static int64_t b_elements(const tcc_matmul_desc *d)
{
    return d->batch * d->k * d->n;
}

static int64_t c_elements(const tcc_matmul_desc *d)
{
    return d->batch * d->m * d->n;
}

/* ---- data ------------------------------------------------------------------------------ */

/* Random operands of the product, in its types. */
static TestOperands random_data(const tcc_matmul_desc *d, uint64_t seed, bool raw)
{
    TestOperandSizes sizes = {d->input_type, d->output_type, a_elements(d),
                              b_elements(d), d->n,           c_elements(d)};
    return test_random_operands(&sizes, seed, raw);
}

/* ---- a naive product ------------------------------------------------------------------- */

static double *naive_matmul(const tcc_matmul_desc *d, const TestOperands *data)
{
    double *out = malloc((size_t)c_elements(d) * sizeof *out);
    ck_assert_ptr_nonnull(out);
    for (int64_t b = 0; b < d->batch; b++)
        for (int64_t i = 0; i < d->m; i++)
            for (int64_t j = 0; j < d->n; j++) {
                double sum = 0.0;
                for (int64_t l = 0; l < d->k; l++)
                    sum += test_element(d->input_type, data->input, a_offset(d, b, i, l), true) *
                           test_element(d->input_type, data->filter, b_offset(d, b, l, j), true);
                int64_t o = c_offset(d, b, i, j);
                out[o] = test_naive_epilogue(&d->epilogue, d->output_type, data->bias,
                                             data->residual, data->previous, o, j, sum);
            }
    return out;
}

TEST_OP(matmul_op, tcc_matmul_desc, tcc_matmul_validate, tcc_matmul_reference, c_elements);

static double *reference_all(const tcc_matmul_desc *d, const tcc_reference_tensors *tensors,
                             int threads)
{
    return test_reference_all(&matmul_op, d, tensors, threads);
}

static void check_against_naive(const tcc_matmul_desc *d, uint64_t seed, bool raw, const char *what)
{
    TestOperands data = random_data(d, seed, raw);
    double *expected = naive_matmul(d, &data);
    assert_reference_equals(&matmul_op, d, &data.tensors, expected, raw, what);
    free(expected);
    test_free_operands(&data);
}

static tcc_matmul_desc small_desc(int64_t batch, int64_t m, int64_t n, int64_t k, bool a_col,
                                  bool b_col)
{
    tcc_matmul_desc d;
    tcc_matmul_desc_init(&d);
    d.batch = batch;
    d.m = m;
    d.n = n;
    d.k = k;
    d.a_col_major = a_col;
    d.b_col_major = b_col;
    return d;
}

/* ---- the descriptor -------------------------------------------------------------------- */

START_TEST(test_desc_init)
{
    tcc_matmul_desc d;
    memset(&d, 0x5a, sizeof d);
    tcc_matmul_desc_init(&d);
    ck_assert_int_eq(d.batch, 1);
    ck_assert_int_eq(d.m, 1);
    ck_assert_int_eq(d.n, 1);
    ck_assert_int_eq(d.k, 1);
    ck_assert(!d.a_col_major && !d.b_col_major);
    assert_default_types(d.input_type, d.accumulate_type, d.output_type, &d.epilogue);
    ck_assert(tcc_matmul_flops(&d) == 2.0);
    tcc_context *ctx = test_context();
    ck_assert_int_eq(tcc_matmul_validate(ctx, &d), TCC_OK);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_flops)
{
    tcc_matmul_desc d = small_desc(3, 1024, 512, 4096, false, true);
    ck_assert(tcc_matmul_flops(&d) == 2.0 * 3 * 1024 * 512 * 4096);
    ck_assert(tcc_matmul_flops(NULL) == 0.0);
}
END_TEST

/* ---- validation ------------------------------------------------------------------------ */

typedef struct BadDesc {
    const char *message;
    tcc_status status;
    void (*spoil)(tcc_matmul_desc *d);
} BadDesc;

#define SPOIL(name, statement) TEST_SPOIL(tcc_matmul_desc, name, statement)

SPOIL(zero_batch, d->batch = 0)
SPOIL(zero_m, d->m = 0)
SPOIL(negative_n, d->n = -4)
SPOIL(zero_k, d->k = 0)
SPOIL(int64_m, d->m = 1LL << 40)
SPOIL(big_a, d->m = 1 << 16; d->k = 1 << 15)               /* 2^31 */
SPOIL(big_b, d->batch = 2; d->n = 1 << 15; d->k = 1 << 15) /* 2^31 */
SPOIL(big_c, d->m = INT32_MAX; d->n = 2; d->k = 1)
SPOIL(overflowing_a, d->batch = d->m = d->k = INT32_MAX)
SPOIL(unknown_input, d->input_type = (tcc_dtype)12)
SPOIL(int32_input, d->input_type = TCC_INT32)
SPOIL(bf16_f16_acc, d->input_type = TCC_BFLOAT16; d->accumulate_type = TCC_FLOAT16)
SPOIL(int8_f32_acc, d->input_type = TCC_INT8)
SPOIL(bool_output, d->output_type = TCC_BOOL)
SPOIL(clamp_reversed, d->epilogue.clamp = true; d->epilogue.clamp_min = 1;
      d->epilogue.clamp_max = 0)
SPOIL(alpha_infinite, d->epilogue.alpha = -INFINITY)
SPOIL(bad_prologue, d->epilogue.prologue = (tcc_prologue_op)-3)

static const BadDesc bad_descs[] = {
    {"batch must be in 1..", TCC_ERROR_INVALID_ARGUMENT, zero_batch},
    {"m must be in 1..", TCC_ERROR_INVALID_ARGUMENT, zero_m},
    {"n must be in 1..2147483647 (got -4)", TCC_ERROR_INVALID_ARGUMENT, negative_n},
    {"k must be in 1..", TCC_ERROR_INVALID_ARGUMENT, zero_k},
    {"m must be in 1..", TCC_ERROR_INVALID_ARGUMENT, int64_m},
    {"A (batch*m*k) has too many elements", TCC_ERROR_INVALID_ARGUMENT, big_a},
    {"B (batch*k*n) has too many elements", TCC_ERROR_INVALID_ARGUMENT, big_b},
    {"C (batch*m*n) has too many elements", TCC_ERROR_INVALID_ARGUMENT, big_c},
    {"A (batch*m*k)", TCC_ERROR_INVALID_ARGUMENT, overflowing_a},
    {"input_type 12 is not a tcc_dtype", TCC_ERROR_INVALID_ARGUMENT, unknown_input},
    {"input_type must be float16, bfloat16, float32 or int8 (got int32)", TCC_ERROR_UNSUPPORTED,
     int32_input},
    {"bfloat16 inputs accumulate in float32, not float16", TCC_ERROR_UNSUPPORTED, bf16_f16_acc},
    {"int8 inputs accumulate in int32, not float32", TCC_ERROR_UNSUPPORTED, int8_f32_acc},
    {"output_type must be float32, float16 or bfloat16 for float32 accumulation (got bool)",
     TCC_ERROR_UNSUPPORTED, bool_output},
    {"epilogue.clamp_min (1) must be <= epilogue.clamp_max (0)", TCC_ERROR_INVALID_ARGUMENT,
     clamp_reversed},
    {"epilogue.alpha", TCC_ERROR_INVALID_ARGUMENT, alpha_infinite},
    {"epilogue.prologue -3", TCC_ERROR_INVALID_ARGUMENT, bad_prologue},
};

START_TEST(test_validation_errors)
{
    const BadDesc *bad = &bad_descs[_i];
    tcc_context *ctx = test_context();
    tcc_matmul_desc d = small_desc(1, 64, 32, 16, false, false);
    ck_assert_int_eq(tcc_matmul_validate(ctx, &d), TCC_OK);
    bad->spoil(&d);
    assert_refused(ctx, &matmul_op, &d, bad->status, bad->message);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_largest_operands_validate)
{
    tcc_context *ctx = test_context();
    tcc_matmul_desc d = small_desc(1, INT32_MAX, 1, 1, false, false); /* 2^31 - 1 each */
    ck_assert_msg(tcc_matmul_validate(ctx, &d) == TCC_OK, "%s", tcc_last_error(ctx));
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_null_arguments)
{
    tcc_context *ctx = test_context();
    double out[4];
    ck_assert_int_eq(tcc_matmul_validate(ctx, NULL), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "descriptor");
    ck_assert_int_eq(tcc_matmul_reference(ctx, NULL, NULL, NULL, 1, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "descriptor");

    tcc_matmul_desc d = small_desc(1, 2, 2, 2, false, false);
    TestOperands data = random_data(&d, 1, false);
    tcc_reference_tensors t = {sizeof(tcc_reference_tensors), data.input, NULL, NULL, NULL, NULL};
    ck_assert_int_eq(tcc_matmul_reference(ctx, &d, &t, NULL, 4, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "A and B");
    t.filter = data.filter;
    ck_assert_int_eq(tcc_matmul_reference(ctx, &d, &t, NULL, 4, 1, out), TCC_OK);
    d.epilogue.bias = true;
    ck_assert_int_eq(tcc_matmul_reference(ctx, &d, &t, NULL, 4, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "tensors.bias");
    d.epilogue.bias = false;
    d.epilogue.beta = 1;
    ck_assert_int_eq(tcc_matmul_reference(ctx, &d, &t, NULL, 4, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "tensors.previous_output");
    d.epilogue.residual = true;
    ck_assert_int_eq(tcc_matmul_reference(ctx, &d, &t, NULL, 4, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "tensors.residual");
    d.epilogue.beta = 0;
    ck_assert_int_eq(tcc_matmul_reference(ctx, &d, &t, NULL, 4, 1, out), TCC_OK);

    int64_t outside[] = {3, 4};
    ck_assert_int_eq(tcc_matmul_reference(ctx, &d, &t, outside, 2, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "positions[1]");
    ck_assert_int_eq(tcc_matmul_reference(ctx, &d, &t, NULL, 3, 1, out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "count");
    ck_assert_int_eq(tcc_matmul_reference(ctx, &d, &t, NULL, 4, 1, NULL),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_one_line(ctx);
    test_free_operands(&data);
    tcc_context_destroy(ctx);
}
END_TEST

/* ---- values ---------------------------------------------------------------------------- */

/* [[1 2] [3 4]] x [[5 6] [7 8]] = [[19 22] [43 50]], whichever way A and B are stored. */
START_TEST(test_two_by_two_by_hand)
{
    static const float a_rows[] = {1, 2, 3, 4}, a_columns[] = {1, 3, 2, 4};
    static const float b_rows[] = {5, 6, 7, 8}, b_columns[] = {5, 7, 6, 8};
    for (int layout = 0; layout < 4; layout++) {
        tcc_matmul_desc d = small_desc(1, 2, 2, 2, layout & 1, layout & 2);
        d.input_type = TCC_FLOAT32;
        tcc_reference_tensors t = {sizeof(tcc_reference_tensors),
                                   d.a_col_major ? a_columns : a_rows,
                                   d.b_col_major ? b_columns : b_rows,
                                   NULL,
                                   NULL,
                                   NULL};
        double *c = reference_all(&d, &t, 1);
        ck_assert_msg(c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50,
                      "layout %d: %g %g %g %g", layout, c[0], c[1], c[2], c[3]);
        free(c);
    }
}
END_TEST

/* A 1 x 3 row times a 3 x 2 matrix: the shapes are not square, the bias is per column. */
START_TEST(test_bias_per_column_by_hand)
{
    static const float a[] = {1, 2, 3}, b[] = {1, 0, 0, 1, 1, 1}; /* B rows (1 0) (0 1) (1 1) */
    static const float bias[] = {0.5f, -10}, residual[] = {100, 200};
    tcc_matmul_desc d = small_desc(1, 1, 2, 3, false, false);
    d.input_type = TCC_FLOAT32;
    d.epilogue.bias = true;
    d.epilogue.residual = true;
    d.epilogue.beta = 0.5;
    d.epilogue.alpha = 2;
    tcc_reference_tensors t = {sizeof(tcc_reference_tensors), a, b, bias, residual, NULL};
    double *c = reference_all(&d, &t, 1);
    /* A B = (4, 5); 2 * (4, 5) + (0.5, -10) + 0.5 * (100, 200) */
    ck_assert(c[0] == 58.5 && c[1] == 100);
    free(c);
}
END_TEST

/* Batches are independent products of their own slices. */
START_TEST(test_batch_by_hand)
{
    static const int8_t a[] = {1, 2, -1, -2}; /* batch 0: (1 2), batch 1: (-1 -2) */
    static const int8_t b[] = {3, 4, 5, 6};   /* batch 0: (3 4)^T, batch 1: (5 6)^T */
    tcc_matmul_desc d = small_desc(2, 1, 1, 2, false, false);
    d.input_type = TCC_INT8;
    d.accumulate_type = d.output_type = TCC_INT32;
    tcc_reference_tensors t = {sizeof(tcc_reference_tensors), a, b, NULL, NULL, NULL};
    double *c = reference_all(&d, &t, 1);
    ck_assert(c[0] == 11 && c[1] == -17);
    free(c);
}
END_TEST

/* Row- and column-major A and B, one product or a batch, against the naive product. */
START_TEST(test_matches_naive_layouts)
{
    bool a_col = _i & 1, b_col = _i & 2, batched = _i & 4;
    tcc_matmul_desc d = small_desc(batched ? 3 : 1, 5, 7, 9, a_col, b_col);
    char what[64];
    snprintf(what, sizeof what, "A %s, B %s, batch %lld", a_col ? "col" : "row",
             b_col ? "col" : "row", (long long)d.batch);
    check_against_naive(&d, 10 + (uint64_t)_i, false, what);
}
END_TEST

static const TestTypes type_cases[] = {
    {TCC_FLOAT16, TCC_FLOAT32, TCC_FLOAT32, false},
    {TCC_FLOAT16, TCC_FLOAT16, TCC_FLOAT16, false},
    {TCC_BFLOAT16, TCC_FLOAT32, TCC_BFLOAT16, false},
    {TCC_FLOAT32, TCC_FLOAT32, TCC_FLOAT32, true},
    {TCC_INT8, TCC_INT32, TCC_INT32, false},
    {TCC_INT8, TCC_INT32, TCC_FLOAT32, false},
};

START_TEST(test_matches_naive_types)
{
    const TestTypes *types = &type_cases[_i];
    tcc_matmul_desc d = small_desc(2, 6, 5, 33, true, false);
    d.input_type = types->input;
    d.accumulate_type = types->accumulate;
    d.output_type = types->output;
    d.epilogue.bias = true;
    d.epilogue.beta = 3;
    d.epilogue.prologue = TCC_PROLOGUE_RELU;
    check_against_naive(&d, 20 + (uint64_t)_i, types->raw, tcc_dtype_name(types->input));
}
END_TEST

static const tcc_epilogue epilogues[] = {
    {.alpha = -2},
    {.alpha = 1, .bias = true},
    {.alpha = 1, .beta = 0.5, .residual = true},
    {.alpha = 1, .beta = -1},
    {.alpha = 1, .relu = true},
    {.alpha = 1, .clamp = true, .clamp_min = -1, .clamp_max = 1.5},
    {.alpha = 1, .prologue = TCC_PROLOGUE_SET, .prologue_arg = 4},
    {.alpha = 1, .prologue = TCC_PROLOGUE_SCALE, .prologue_arg = -0.5},
    {.alpha = 1, .prologue = TCC_PROLOGUE_RELU},
    {.alpha = 0.25,
     .beta = 1,
     .bias = true,
     .residual = true,
     .relu = true,
     .clamp = true,
     .clamp_min = 0.5,
     .clamp_max = 2,
     .prologue = TCC_PROLOGUE_SET,
     .prologue_arg = 1},
};

START_TEST(test_matches_naive_epilogue)
{
    tcc_matmul_desc d = small_desc(2, 4, 6, 8, false, true);
    d.epilogue = epilogues[_i];
    char what[32];
    snprintf(what, sizeof what, "epilogue %d", _i);
    check_against_naive(&d, 30 + (uint64_t)_i, false, what);
}
END_TEST

START_TEST(test_sampled_and_threads)
{
    tcc_matmul_desc d = small_desc(3, 17, 23, 40, true, true);
    d.input_type = TCC_FLOAT32;
    d.epilogue = epilogues[9];
    TestOperands data = random_data(&d, 40, true);
    double *full = reference_all(&d, &data.tensors, 1);
    static const int thread_counts[] = {0, 2, 5, 64, 1000};
    assert_threads_agree(&matmul_op, &d, &data.tensors, full, thread_counts,
                         (int)(sizeof thread_counts / sizeof thread_counts[0]));
    enum { SAMPLES = 300 };
    int64_t positions[SAMPLES];
    uint64_t state = 41;
    for (int i = 0; i < SAMPLES; i++)
        positions[i] = test_random_below(&state, c_elements(&d));
    positions[0] = c_elements(&d) - 1;
    assert_sampled_agree(&matmul_op, &d, &data.tensors, full, positions, SAMPLES, 4);
    free(full);
    test_free_operands(&data);
}
END_TEST

static Suite *matmul_reference_suite(void)
{
    Suite *suite = suite_create("matmul_reference");
    TCase *desc = test_case(suite, "desc", NULL, NULL);
    tcase_add_test(desc, test_desc_init);
    tcase_add_test(desc, test_flops);
    tcase_add_loop_test(desc, test_validation_errors, 0,
                        (int)(sizeof bad_descs / sizeof bad_descs[0]));
    tcase_add_test(desc, test_largest_operands_validate);
    tcase_add_test(desc, test_null_arguments);

    TCase *values = test_case(suite, "values", NULL, NULL);
    tcase_set_timeout(values, 60);
    tcase_add_test(values, test_two_by_two_by_hand);
    tcase_add_test(values, test_bias_per_column_by_hand);
    tcase_add_test(values, test_batch_by_hand);
    tcase_add_loop_test(values, test_matches_naive_layouts, 0, 8);
    tcase_add_loop_test(values, test_matches_naive_types, 0,
                        (int)(sizeof type_cases / sizeof type_cases[0]));
    tcase_add_loop_test(values, test_matches_naive_epilogue, 0,
                        (int)(sizeof epilogues / sizeof epilogues[0]));
    tcase_add_test(values, test_sampled_and_threads);
    return suite;
}

TEST_MAIN(matmul_reference_suite)
