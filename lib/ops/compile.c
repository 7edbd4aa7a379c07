/*
 * The operators' entry points: tcc_conv2d_compile and tcc_matmul_compile hand the pipeline
 * (driver/pipeline.c) their implicit GEMM to define and to schedule (as given, or chosen
 * from the shape); the default schedule is what they would choose.
 */
#include "ops/gemm.h"

#include "driver/driver.h"

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

/* An operator's implicit GEMM as the pipeline's program: what define makes, schedule uses. */
typedef struct GemmProgram {
    GemmMaker make;
    const void *desc;
    const tcc_gemm_schedule *given; /* NULL: chosen from the shape */
    GemmOperator *op;
    Gemm gemm;
} GemmProgram;

/* The operator (its descriptor validated), its types against the target, then the GEMM. */
static tcc_status define_gemm(void *program, tcc_func *func, tcc_arch arch, int *nparam,
                              tcc_tensor *const **params)
{
    GemmProgram *p = program;
    tcc_status status = p->make(func, p->desc, &p->op);
    if (status == TCC_OK)
        status = tci_target_validate_input(func->ctx, p->op->input_type, arch);
    if (status == TCC_OK)
        status = tci_gemm_define(func, p->op, &p->gemm);
    *nparam = p->gemm.nparam;
    *params = p->gemm.params;
    return status;
}

/* The schedule as given, its zero fields chosen from the shape. */
static tcc_status schedule_gemm(void *program, tcc_func *func, tcc_arch arch)
{
    GemmProgram *p = program;
    tcc_gemm_schedule chosen = p->given ? *p->given : (tcc_gemm_schedule){0};
    tcc_status status = tci_gemm_complete_schedule(func->ctx, p->op, arch, &chosen);
    if (status == TCC_OK)
        status = tcc_schedule_create(func, 1, &p->gemm.out);
    if (status == TCC_OK)
        status = tci_gemm_schedule_apply(func, p->op, &p->gemm, &chosen);
    return status;
}

static tcc_status compile(tcc_context *ctx, const char *name, GemmMaker make, const void *desc,
                          const tcc_gemm_schedule *schedule, const tcc_build_options *options,
                          tcc_kernel **out)
{
    if (!ctx || !desc || !out)
        return TCC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    tcc_func *func;
    tcc_status status = tcc_func_create(ctx, name, &func);
    if (status != TCC_OK)
        return status;
    GemmProgram gemm = {.make = make, .desc = desc, .given = schedule};
    Program program = {define_gemm, schedule_gemm, &gemm};
    status = tci_compile(func, &program, 0, NULL, options, out);
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
