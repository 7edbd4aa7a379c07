/*
 * The element types and the fused epilogue both operators share: their defaults and their
 * validation (ops.h).
 */
#include "ops/ops.h"
#include "target/target.h"

#include <math.h>

tcc_epilogue tci_default_epilogue(void)
{
    return (tcc_epilogue){.alpha = 1.0};
}

static bool known_dtype(tcc_dtype type)
{
    return type >= TCC_VOID && type <= TCC_FLOAT32;
}

static tcc_status validate_types(tcc_context *ctx, tcc_dtype input_type, tcc_dtype accumulate_type,
                                 tcc_dtype output_type)
{
    const struct {
        const char *name;
        tcc_dtype type;
    } fields[] = {{"input_type", input_type},
                  {"accumulate_type", accumulate_type},
                  {"output_type", output_type}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (!known_dtype(fields[i].type))
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s %d is not a tcc_dtype",
                            fields[i].name, (int)fields[i].type);
    }
    tcc_status status = tci_target_validate_types(ctx, input_type, accumulate_type);
    if (status != TCC_OK)
        return status;
    bool output_ok = accumulate_type == TCC_INT32
                         ? output_type == TCC_INT32 || output_type == TCC_FLOAT32
                         : tcc_dtype_is_float(output_type);
    if (!output_ok)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "output_type must be %s for %s accumulation "
                        "(got %s)",
                        accumulate_type == TCC_INT32 ? "int32 or float32"
                                                     : "float32, float16 or bfloat16",
                        tcc_dtype_name(accumulate_type), tcc_dtype_name(output_type));
    return TCC_OK;
}

/* A finite value; infinities are allowed where `allow_infinite` (clamp bounds). */
static tcc_status validate_number(tcc_context *ctx, const char *name, double value,
                                  bool allow_infinite)
{
    if (isnan(value) || (!allow_infinite && isinf(value)))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "epilogue.%s must be a %s number (got %g)",
                        name, allow_infinite ? "non-NaN" : "finite", value);
    return TCC_OK;
}

/* An integer output is computed in int32 arithmetic (the accumulator's exact sums), so
 * its constants must be integers that int32 holds. */
static tcc_status validate_integer_constants(tcc_context *ctx, const tcc_epilogue *e)
{
    const char *names[5] = {"alpha", "beta", "prologue_arg", "clamp_min", "clamp_max"};
    const double values[5] = {e->alpha, e->beta, e->prologue_arg, e->clamp_min, e->clamp_max};
    for (int i = 0; i < (e->clamp ? 5 : 3); i++)
        /* The range first: converting a double int32 cannot hold is undefined. */
        if (!(values[i] >= INT32_MIN && values[i] <= INT32_MAX) ||
            values[i] != (double)(int32_t)values[i])
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "epilogue.%s (%g) must be an integer in int32 for an int32 output",
                            names[i], values[i]);
    return TCC_OK;
}

static tcc_status validate_epilogue(tcc_context *ctx, const tcc_epilogue *epilogue,
                                    tcc_dtype output)
{
    if (epilogue->prologue < TCC_PROLOGUE_NONE || epilogue->prologue > TCC_PROLOGUE_RELU)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "epilogue.prologue %d is not a tcc_prologue_op", (int)epilogue->prologue);
    tcc_status status = validate_number(ctx, "alpha", epilogue->alpha, false);
    if (status == TCC_OK)
        status = validate_number(ctx, "beta", epilogue->beta, false);
    if (status == TCC_OK)
        status = validate_number(ctx, "prologue_arg", epilogue->prologue_arg, false);
    if (status == TCC_OK && output == TCC_INT32)
        status = validate_integer_constants(ctx, epilogue);
    if (status != TCC_OK || !epilogue->clamp)
        return status;
    status = validate_number(ctx, "clamp_min", epilogue->clamp_min, true);
    if (status == TCC_OK)
        status = validate_number(ctx, "clamp_max", epilogue->clamp_max, true);
    if (status == TCC_OK && epilogue->clamp_min > epilogue->clamp_max)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "epilogue.clamp_min (%g) must be <= epilogue.clamp_max (%g)",
                        epilogue->clamp_min, epilogue->clamp_max);
    return status;
}

bool tci_epilogue_reads_residual(const tcc_epilogue *epilogue)
{
    return epilogue->beta != 0.0 && epilogue->residual;
}

bool tci_epilogue_reads_previous(const tcc_epilogue *epilogue)
{
    return (epilogue->beta != 0.0 && !epilogue->residual) ||
           epilogue->prologue == TCC_PROLOGUE_SCALE || epilogue->prologue == TCC_PROLOGUE_RELU;
}

tcc_status tci_validate_elementwise(tcc_context *ctx, tcc_dtype input_type,
                                    tcc_dtype accumulate_type, tcc_dtype output_type,
                                    const tcc_epilogue *epilogue)
{
    tcc_status status = validate_types(ctx, input_type, accumulate_type, output_type);
    if (status == TCC_OK)
        status = validate_epilogue(ctx, epilogue, output_type);
    return status;
}
