/*
 * From an operator to a kernel: check the types against the target, define the implicit
 * GEMM, schedule it (as given, or chosen from the shape), and build it.
 */
#include "ops/gemm.h"

tcc_status tci_gemm_validate_arch(tcc_context *ctx, const GemmOperator *op, tcc_arch arch)
{
    const char *what = NULL;
    int needed = 70;
    if (op->input_type == TCC_BFLOAT16)
        what = "bfloat16", needed = 80;
    else if (op->input_type == TCC_FLOAT32)
        what = "tf32 (float32 inputs)", needed = 80;
    else if (op->input_type == TCC_INT8)
        what = "int8", needed = 75; /* sm_72, and every arch tcc targets from sm_75 on */
    if ((int)arch < needed)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "%s tensor cores need sm_%d or newer; the target is sm_%d",
                        what ? what : "float16", needed == 75 ? 72 : needed, (int)arch);
    return TCC_OK;
}

tcc_status tci_gemm_prepare(tcc_func *func, GemmMaker make, const void *desc,
                            const tcc_gemm_schedule *schedule, tcc_arch arch, Gemm *out)
{
    tcc_context *ctx = func->ctx;
    GemmOperator *op;
    tcc_status status = make(func, desc, &op);
    if (status == TCC_OK)
        status = tci_gemm_validate_arch(ctx, op, arch);
    if (status != TCC_OK)
        return status;
    tcc_gemm_schedule chosen = {0};
    if (schedule)
        chosen = *schedule;
    if ((status = tci_gemm_complete_schedule(ctx, op, arch, &chosen)) != TCC_OK)
        return status;
    if ((status = tci_gemm_define(func, op, out)) != TCC_OK)
        return status;
    if ((status = tcc_schedule_create(func, 1, &out->out)) != TCC_OK)
        return status;
    return tci_gemm_schedule_apply(func, op, out, &chosen);
}

tcc_status tci_gemm_default_schedule(tcc_context *ctx, GemmMaker make, const void *desc,
                                     tcc_arch arch, tcc_gemm_schedule *out)
{
    if (!ctx || !desc || !out)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_func *func;
    tcc_status status = tcc_func_create(ctx, "schedule", &func);
    if (status != TCC_OK)
        return status;
    GemmOperator *op;
    status = make(func, desc, &op);
    *out = (tcc_gemm_schedule){0};
    if (status == TCC_OK)
        status = tci_gemm_complete_schedule(ctx, op, arch, out);
    tcc_func_destroy(func);
    return status;
}

tcc_status tcc_conv2d_default_schedule(tcc_context *ctx, const tcc_conv2d_desc *desc, tcc_arch arch,
                                       tcc_gemm_schedule *out)
{
    return tci_gemm_default_schedule(ctx, tci_conv2d_gemm, desc, arch, out);
}

tcc_status tcc_matmul_default_schedule(tcc_context *ctx, const tcc_matmul_desc *desc, tcc_arch arch,
                                       tcc_gemm_schedule *out)
{
    return tci_gemm_default_schedule(ctx, tci_matmul_gemm, desc, arch, out);
}

static tcc_status compile(tcc_context *ctx, const char *name, GemmMaker make, const void *desc,
                          const tcc_gemm_schedule *schedule, const tcc_build_options *options,
                          tcc_kernel **out)
{
    if (!ctx || !desc || !out)
        return TCC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    tcc_build_options defaults;
    if (!options) {
        tcc_build_options_init(&defaults);
        options = &defaults;
    }
    tcc_func *func;
    tcc_status status = tcc_func_create(ctx, name, &func);
    if (status != TCC_OK)
        return status;
    Gemm gemm;
    status = tci_gemm_prepare(func, make, desc, schedule, options->arch, &gemm);
    if (status == TCC_OK)
        status = tcc_build(func, gemm.nparam, gemm.params, options, out);
    tcc_func_destroy(func);
    return status;
}

tcc_status tcc_conv2d_compile(tcc_context *ctx, const tcc_conv2d_desc *desc,
                              const tcc_gemm_schedule *schedule, const tcc_build_options *options,
                              tcc_kernel **out)
{
    return compile(ctx, "conv2d", tci_conv2d_gemm, desc, schedule, options, out);
}

tcc_status tcc_matmul_compile(tcc_context *ctx, const tcc_matmul_desc *desc,
                              const tcc_gemm_schedule *schedule, const tcc_build_options *options,
                              tcc_kernel **out)
{
    return compile(ctx, "matmul", tci_matmul_gemm, desc, schedule, options, out);
}
