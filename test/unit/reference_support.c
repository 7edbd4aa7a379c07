#include "reference_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- operands ------------------------------------------------------------------------------ */

/* One element i of `type`, as test_random_tensor describes. */
static void put_random(tcc_dtype type, void *data, int64_t i, uint64_t *state, bool raw)
{
    float quarter = (float)(test_random_below(state, 17) - 8) / 4.0f;
    switch (type) {
    case TCC_FLOAT16:
        ((uint16_t *)data)[i] = tcc_f32_to_f16(quarter);
        return;
    case TCC_BFLOAT16:
        ((uint16_t *)data)[i] = tcc_f32_to_bf16(quarter);
        return;
    case TCC_FLOAT32:
        ((float *)data)[i] =
            raw ? (float)test_random_below(state, 1 << 24) / (1 << 22) - 2.0f : quarter;
        return;
    case TCC_INT8:
        ((int8_t *)data)[i] = (int8_t)(test_random_below(state, 256) - 128);
        return;
    case TCC_INT32:
        ((int32_t *)data)[i] = (int32_t)(test_random_below(state, 201) - 100);
        return;
    default:
        ck_abort_msg("no random %s", tcc_dtype_name(type));
    }
}

void *test_random_tensor(tcc_dtype type, int64_t count, uint64_t *state, bool raw)
{
    void *data = malloc((size_t)count * tcc_dtype_size(type));
    ck_assert_ptr_nonnull(data);
    for (int64_t i = 0; i < count; i++)
        put_random(type, data, i, state, raw);
    return data;
}

TestOperands test_operands(void *input, void *filter)
{
    TestOperands operands = {.input = input, .filter = filter};
    operands.tensors =
        (tcc_reference_tensors){.size = sizeof operands.tensors, .input = input, .filter = filter};
    return operands;
}

TestOperands test_random_operands(const TestOperandSizes *sizes, uint64_t seed, bool raw)
{
    /* One generator, drawn in this order: a seed gives the same operands every time. */
    uint64_t state = seed;
    TestOperands operands = {0};
    operands.input = test_random_tensor(sizes->input_type, sizes->input, &state, raw);
    operands.filter = test_random_tensor(sizes->input_type, sizes->filter, &state, raw);
    operands.bias = test_random_tensor(sizes->output_type, sizes->channels, &state, false);
    operands.residual = test_random_tensor(sizes->output_type, sizes->output, &state, false);
    operands.previous = test_random_tensor(sizes->output_type, sizes->output, &state, false);
    operands.tensors = (tcc_reference_tensors){sizeof(tcc_reference_tensors),
                                               operands.input,
                                               operands.filter,
                                               operands.bias,
                                               operands.residual,
                                               operands.previous};
    return operands;
}

void test_free_operands(TestOperands *operands)
{
    free(operands->input);
    free(operands->filter);
    free(operands->bias);
    free(operands->residual);
    free(operands->previous);
}

double *test_reference_all(const TestOp *op, const void *desc, const tcc_reference_tensors *t,
                           int threads)
{
    tcc_context *ctx = test_context();
    int64_t count = op->outputs(desc);
    double *out = malloc((size_t)count * sizeof *out);
    ck_assert_ptr_nonnull(out);
    ck_assert_msg(op->reference(ctx, desc, t, NULL, count, threads, out) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    tcc_context_destroy(ctx);
    return out;
}

void assert_reference_equals(const TestOp *op, const void *desc, const tcc_reference_tensors *t,
                             const double *expected, bool raw, const char *what)
{
    double *got = test_reference_all(op, desc, t, 1);
    for (int64_t i = 0; i < op->outputs(desc); i++) {
        bool same = raw ? fabs(got[i] - expected[i]) <= 1e-12 * (1.0 + fabs(expected[i]))
                        : got[i] == expected[i];
        ck_assert_msg(same, "%s: output %lld = %.17g, expected %.17g", what, (long long)i, got[i],
                      expected[i]);
    }
    free(got);
}

void assert_threads_agree(const TestOp *op, const void *desc, const tcc_reference_tensors *t,
                          const double *one, const int *thread_counts, int n)
{
    size_t bytes = (size_t)op->outputs(desc) * sizeof(double);
    for (int i = 0; i < n; i++) {
        double *many = test_reference_all(op, desc, t, thread_counts[i]);
        ck_assert_msg(memcmp(one, many, bytes) == 0, "threads = %d", thread_counts[i]);
        free(many);
    }
}

void assert_sampled_agree(const TestOp *op, const void *desc, const tcc_reference_tensors *t,
                          const double *full, const int64_t *positions, int count, int threads)
{
    double *sampled = malloc((size_t)count * sizeof *sampled);
    ck_assert_ptr_nonnull(sampled);
    tcc_context *ctx = test_context();
    ck_assert_int_eq(op->reference(ctx, desc, t, positions, count, threads, sampled), TCC_OK);
    for (int i = 0; i < count; i++)
        ck_assert(sampled[i] == full[positions[i]]);
    tcc_context_destroy(ctx);
    free(sampled);
}

void assert_refused(tcc_context *ctx, const TestOp *op, const void *desc, tcc_status status,
                    const char *message)
{
    ck_assert_msg(op->validate(ctx, desc) == status, "%s: got \"%s\"", message,
                  tcc_last_error(ctx));
    assert_contains(tcc_last_error(ctx), message);
    assert_one_line(ctx);
    /* The reference validates the same way, before touching any data. */
    double out[1];
    ck_assert_int_eq(op->reference(ctx, desc, NULL, NULL, 1, 1, out), status);
    assert_contains(tcc_last_error(ctx), message);
}

void assert_default_types(tcc_dtype input, tcc_dtype accumulate, tcc_dtype output,
                          const tcc_epilogue *epilogue)
{
    ck_assert_int_eq(input, TCC_FLOAT16);
    ck_assert_int_eq(accumulate, TCC_FLOAT32);
    ck_assert_int_eq(output, TCC_FLOAT32);
    ck_assert(epilogue->alpha == 1.0 && epilogue->beta == 0.0);
    ck_assert(!epilogue->bias && !epilogue->residual && !epilogue->relu && !epilogue->clamp);
    ck_assert_int_eq(epilogue->prologue, TCC_PROLOGUE_NONE);
}

/* ---- independent naive arithmetic for the reference tests ---------------------------- */

/* An element as the tensor cores read it (operands) or as stored (the epilogue's). */
double test_element(tcc_dtype type, const void *data, int64_t i, bool operand)
{
    switch (type) {
    case TCC_FLOAT16:
        return tcc_f16_to_f32(((const uint16_t *)data)[i]);
    case TCC_BFLOAT16:
        return tcc_bf16_to_f32(((const uint16_t *)data)[i]);
    case TCC_FLOAT32: {
        float value = ((const float *)data)[i];
        return operand ? tcc_f32_to_tf32(value) : value;
    }
    case TCC_INT8:
        return ((const int8_t *)data)[i];
    case TCC_INT32:
        return ((const int32_t *)data)[i];
    default:
        ck_abort_msg("no %s element", tcc_dtype_name(type));
        return 0;
    }
}

/* The epilogue as tcc.h defines it, for output offset o of channel `channel`. */
double test_naive_epilogue(const tcc_epilogue *e, tcc_dtype type, const void *bias,
                           const void *residual, const void *previous, int64_t o, int64_t channel,
                           double sum)
{
    double acc = sum;
    if (e->prologue == TCC_PROLOGUE_SET)
        acc = e->prologue_arg + sum;
    else if (e->prologue == TCC_PROLOGUE_SCALE)
        acc = e->prologue_arg * test_element(type, previous, o, false) + sum;
    else if (e->prologue == TCC_PROLOGUE_RELU)
        acc = fmax(test_element(type, previous, o, false), 0.0) + sum;
    double v = e->alpha * acc;
    if (e->bias)
        v += test_element(type, bias, channel, false);
    if (e->beta != 0)
        v += e->beta * test_element(type, e->residual ? residual : previous, o, false);
    if (e->relu)
        v = fmax(v, 0.0);
    if (e->clamp)
        v = fmin(fmax(v, e->clamp_min), e->clamp_max);
    return v;
}
