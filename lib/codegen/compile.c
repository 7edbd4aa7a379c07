/*
 * The operators' compile functions: prepare the scheduled implicit GEMM (lib/ops), then
 * build it. They live beside tcc_build because they need the code generator.
 */
#include "ops/gemm.h"

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
    status = tcc_gemm_prepare(func, make, desc, schedule, options->arch, &gemm);
    if (status == TCC_OK)
        status = tcc_build(func, gemm.nparam, gemm.params, options, out);
    tcc_func_destroy(func);
    return status;
}

tcc_status tcc_conv2d_compile(tcc_context *ctx, const tcc_conv2d_desc *desc,
                              const tcc_gemm_schedule *schedule, const tcc_build_options *options,
                              tcc_kernel **out)
{
    return compile(ctx, "conv2d", tcc_conv2d_gemm, desc, schedule, options, out);
}

tcc_status tcc_matmul_compile(tcc_context *ctx, const tcc_matmul_desc *desc,
                              const tcc_gemm_schedule *schedule, const tcc_build_options *options,
                              tcc_kernel **out)
{
    return compile(ctx, "matmul", tcc_matmul_gemm, desc, schedule, options, out);
}
