#include "support.h"

#include <math.h>
#include <stdlib.h>

int test_run(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

tcc_context *test_context(void)
{
    tcc_context *ctx = NULL;
    ck_assert_int_eq(tcc_context_create(&ctx), TCC_OK);
    ck_assert_ptr_nonnull(ctx);
    return ctx;
}

uint64_t test_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int64_t test_random_below(uint64_t *state, int64_t bound)
{
    return bound <= 0 ? 0 : (int64_t)(test_random(state) % (uint64_t)bound);
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
