/*
 * The operators' entry points: tcc_conv2d_compile and tcc_matmul_compile hand the pipeline
 * (driver/pipeline.c) their implicit GEMM to define and to schedule (as given, or chosen
 * from the shape); the default schedule is what they would choose.
 */
#include "ops/gemm.h"

#include "driver/driver.h"

#include <stdio.h>

/* The operator in a scratch function, its input type checked against the target, then the
 * schedule completed for it: a persistent grid's blocks, where not given, the GPU's
 * multiprocessors when they are known (before the choices that weigh the tiles against them),
 * else the target's. */
tcc_status tci_gemm_plan(tcc_context *ctx, GemmMaker make, const void *desc, tcc_arch arch,
                         int multiprocessors, const tcc_gemm_schedule *given, GemmPlan *out)
{
    if (!ctx || !desc || !out)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (given) {
        tcc_status status = TCI_CHECK_SIZE(ctx, "schedule", tcc_gemm_schedule, given);
        if (status != TCC_OK)
            return status;
    }
    *out = (GemmPlan){.schedule = given ? *given : (tcc_gemm_schedule){0}};
    if (!out->schedule.grid_blocks && multiprocessors > 0)
        out->schedule.grid_blocks = multiprocessors;
    tcc_func *func;
    tcc_status status = tcc_func_create(ctx, "schedule", &func);
    if (status != TCC_OK)
        return status;
    GemmOperator *op;
    status = make(func, desc, &op);
    if (status == TCC_OK)
        status = tci_target_validate_input(ctx, op->input_type, arch);
    if (status == TCC_OK)
        status = tci_gemm_complete_schedule(ctx, op, arch, &out->schedule);
    if (status == TCC_OK) {
        out->operand_cache = tci_gemm_operand_cache(op, arch);
        out->nstaged = op->nstaged;
        for (int i = 0; i < op->nstaged; i++)
            snprintf(out->staged_names[i], sizeof out->staged_names[i], "%s",
                     op->staged[i].to->name);
    }
    tcc_func_destroy(func);
    return status;
}

/* A NULL descriptor or result pointer of tcc_<op>_<what>, named in the context's message. */
static tcc_status missing_argument(tcc_context *ctx, const char *op, const char *what,
                                   const void *desc)
{
    return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_%s_%s: the %s is NULL", op, what,
                    !desc ? "descriptor" : "result pointer");
}

void tcc_gemm_schedule_init_size(tcc_gemm_schedule *schedule, size_t size)
{
    tcc_gemm_schedule defaults = {.size = sizeof defaults};
    tci_init_struct(schedule, size, &defaults, sizeof defaults, sizeof defaults);
}

/* The symbol a program built before the macro calls: the first release's size. */
void(tcc_gemm_schedule_init)(tcc_gemm_schedule *schedule)
{
    tcc_gemm_schedule_init_size(schedule, sizeof *schedule);
}

static tcc_status default_schedule(tcc_context *ctx, const char *op, GemmMaker make,
                                   const void *desc, tcc_arch arch, tcc_gemm_schedule *out)
{
    if (!desc || !out)
        return missing_argument(ctx, op, "default_schedule", desc);
    tcc_status status = TCI_CHECK_SIZE(ctx, "default schedule: out", tcc_gemm_schedule, out);
    if (status != TCC_OK)
        return status;
    GemmPlan plan;
    status = tci_gemm_plan(ctx, make, desc, arch, 0, NULL, &plan);
    *out = status == TCC_OK ? plan.schedule : (tcc_gemm_schedule){0};
    out->size = sizeof *out;
    return status;
}

tcc_status tcc_conv2d_default_schedule(tcc_context *ctx, const tcc_conv2d_desc *desc, tcc_arch arch,
                                       tcc_gemm_schedule *out)
{
    return default_schedule(ctx, "conv2d", tci_conv2d_gemm, desc, arch, out);
}

tcc_status tcc_matmul_default_schedule(tcc_context *ctx, const tcc_matmul_desc *desc, tcc_arch arch,
                                       tcc_gemm_schedule *out)
{
    return default_schedule(ctx, "matmul", tci_matmul_gemm, desc, arch, out);
}

/* An operator's implicit GEMM as the pipeline's program, its kernels in launch order: one
 * copy per staged operand (an NCHW input into NHWC), the product (into the partial sums
 * under split-K), split-K's reduction and epilogue. */
typedef struct GemmProgram {
    GemmMaker make;
    const void *desc;
    GemmPlan plan;
    GemmOperator *op;
    Gemm gemm;
} GemmProgram;

typedef enum { KERNEL_STAGING, KERNEL_PRODUCT, KERNEL_REDUCTION } KernelRole;

static KernelRole role(const GemmProgram *p, int k)
{
    if (k < p->plan.nstaged)
        return KERNEL_STAGING;
    return k == p->plan.nstaged ? KERNEL_PRODUCT : KERNEL_REDUCTION;
}

static tcc_status define_gemm(void *program, int k, tcc_func *func, tcc_arch arch, int *nparam,
                              tcc_tensor *const **params)
{
    (void)arch;
    GemmProgram *p = program;
    tcc_status status = p->make(func, p->desc, &p->op);
    if (status == TCC_OK) {
        GemmSplit split = tci_gemm_split(p->op, &p->plan.schedule);
        switch (role(p, k)) {
        case KERNEL_STAGING:
            status = tci_gemm_define_staging(func, p->op, split, k, &p->gemm);
            break;
        case KERNEL_PRODUCT:
            status = tci_gemm_define(func, p->op, split, &p->gemm);
            break;
        case KERNEL_REDUCTION:
            status = tci_gemm_define_reduce(func, p->op, split, &p->gemm);
            break;
        }
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
    if (role(p, k) == KERNEL_PRODUCT)
        return tci_gemm_schedule_apply(func, p->op, &p->gemm, &p->plan.schedule,
                                       p->plan.operand_cache);
    return tci_gemm_schedule_elementwise(func, p->op, &p->gemm);
}

static tcc_status compile(tcc_context *ctx, const char *name, GemmMaker make, const void *desc,
                          const tcc_gemm_schedule *schedule, const tcc_build_options *options,
                          tcc_kernel **out)
{
    if (!ctx)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!desc || !out)
        return missing_argument(ctx, name, "compile", desc);
    *out = NULL;
    tcc_build_options resolved;
    tcc_status status = tci_build_options(ctx, options, &resolved);
    if (status != TCC_OK)
        return status;
    GemmProgram gemm = {.make = make, .desc = desc};
    status = tci_gemm_plan(ctx, make, desc, resolved.arch, resolved.multiprocessors, schedule,
                           &gemm.plan);
    if (status != TCC_OK)
        return status;
    bool split = gemm.plan.schedule.split_k > 1;
    int nstaged = gemm.plan.nstaged;
    char names[TCI_MAX_LAUNCHES][96];
    Program program = {.define = define_gemm,
                       .schedule = schedule_gemm,
                       .program = &gemm,
                       .nkernel = nstaged + 1 + split,
                       .main_kernel = nstaged,
                       .nworkspace = nstaged + split};
    for (int k = 0; k < program.nkernel; k++) {
        if (k < nstaged)
            snprintf(names[k], sizeof names[k], "%s_%s", name, gemm.plan.staged_names[k]);
        else
            snprintf(names[k], sizeof names[k], "%s%s", name, k > nstaged ? "_split_k_reduce" : "");
        program.names[k] = names[k];
    }
    tcc_func *func;
    status = tcc_func_create(ctx, names[0], &func);
    if (status != TCC_OK)
        return status;
    status = tci_compile(func, &program, 0, NULL, &resolved, out);
    tcc_func_destroy(func);
    /* Every kernel declared the caller's parameters alike; the last one's labels remain. */
    if (status == TCC_OK)
        status = tci_kernel_describe_params(ctx, *out, gemm.gemm.nlabel, gemm.gemm.labels);
    if (status != TCC_OK) {
        tcc_kernel_destroy(*out);
        *out = NULL;
    }
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
