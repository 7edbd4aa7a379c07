/*
 * The operators' entry points: tcc_conv2d_compile and tcc_matmul_compile hand the pipeline
 * (driver/pipeline.c) their implicit GEMM to define and to schedule (as given, or chosen
 * from the shape); the default schedule is what they would choose.
 */
#include "ops/gemm.h"

#include "driver/driver.h"

#include <stdio.h>

/* The operator in a scratch function, its input type checked against the target, then the
 * schedule completed for it. */
tcc_status tci_gemm_choose_schedule(tcc_context *ctx, GemmMaker make, const void *desc,
                                    tcc_arch arch, const tcc_gemm_schedule *given,
                                    tcc_gemm_schedule *out)
{
    if (!ctx || !desc || !out)
        return TCC_ERROR_INVALID_ARGUMENT;
    *out = given ? *given : (tcc_gemm_schedule){0};
    tcc_func *func;
    tcc_status status = tcc_func_create(ctx, "schedule", &func);
    if (status != TCC_OK)
        return status;
    GemmOperator *op;
    status = make(func, desc, &op);
    if (status == TCC_OK)
        status = tci_target_validate_input(ctx, op->input_type, arch);
    if (status == TCC_OK)
        status = tci_gemm_complete_schedule(ctx, op, arch, out);
    tcc_func_destroy(func);
    return status;
}

tcc_status tcc_conv2d_default_schedule(tcc_context *ctx, const tcc_conv2d_desc *desc, tcc_arch arch,
                                       tcc_gemm_schedule *out)
{
    return tci_gemm_choose_schedule(ctx, tci_conv2d_gemm, desc, arch, NULL, out);
}

tcc_status tcc_matmul_default_schedule(tcc_context *ctx, const tcc_matmul_desc *desc, tcc_arch arch,
                                       tcc_gemm_schedule *out)
{
    return tci_gemm_choose_schedule(ctx, tci_matmul_gemm, desc, arch, NULL, out);
}

/* An operator's implicit GEMM as the pipeline's program: kernel 0 is the product (into the
 * partial sums under split-K), kernel 1 split-K's reduction and epilogue. */
typedef struct GemmProgram {
    GemmMaker make;
    const void *desc;
    tcc_gemm_schedule schedule; /* complete */
    GemmOperator *op;
    Gemm gemm;
} GemmProgram;

static tcc_status define_gemm(void *program, int k, tcc_func *func, tcc_arch arch, int *nparam,
                              tcc_tensor *const **params)
{
    (void)arch;
    GemmProgram *p = program;
    GemmSplit split;
    tcc_status status = p->make(func, p->desc, &p->op);
    if (status == TCC_OK) {
        split = tci_gemm_split(p->op, &p->schedule);
        status = k == 0 ? tci_gemm_define(func, p->op, split, &p->gemm)
                        : tci_gemm_define_reduce(func, p->op, split, &p->gemm);
    }
    *nparam = p->gemm.nparam;
    *params = p->gemm.params;
    return status;
}

static tcc_status schedule_gemm(void *program, int k, tcc_func *func, tcc_arch arch)
{
    (void)arch;
    GemmProgram *p = program;
    tcc_status status = tcc_schedule_create(func, 1, &p->gemm.out);
    if (status != TCC_OK)
        return status;
    if (k == 0)
        return tci_gemm_schedule_apply(func, p->op, &p->gemm, &p->schedule);
    return tci_gemm_schedule_reduce(func, p->op, &p->gemm);
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
    if (!tci_target_arch(options->arch))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "unknown arch %d", (int)options->arch);
    GemmProgram gemm = {.make = make, .desc = desc};
    tcc_status status =
        tci_gemm_choose_schedule(ctx, make, desc, options->arch, schedule, &gemm.schedule);
    if (status != TCC_OK)
        return status;
    char reduce_name[64];
    snprintf(reduce_name, sizeof reduce_name, "%s_split_k_reduce", name);
    bool split = gemm.schedule.split_k > 1;
    Program program = {.define = define_gemm,
                       .schedule = schedule_gemm,
                       .program = &gemm,
                       .nkernel = split ? 2 : 1,
                       .names = {name, reduce_name},
                       .nworkspace = split ? 1 : 0};
    tcc_func *func;
    status = tcc_func_create(ctx, name, &func);
    if (status != TCC_OK)
        return status;
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
