/*
 * The pipeline: the whole compiler in one function that reads top to bottom, as QBE's
 * main.c and Halide's lower_impl do. Each step hands the next one a finished value:
 *
 *   define    the compute definition (an operator's, or the caller's own)  lib/ops/, lib/te/
 *   schedule  TVM's primitives on it                                       lib/ops/, lib/te/
 *   lower     the pass table, schedule_ops to thread_sync                  driver/passes.c
 *   codegen   loop IR -> LLVM IR with llvm.nvvm.* intrinsics               lib/codegen/
 *   verify    LLVM's verifier                                              codegen/llvm.c
 *   optimize  default<O3> with the NVPTX target machine, then verify again codegen/llvm.c
 *   PTX       the NVPTX backend's text                                     codegen/llvm.c
 *   cubin     with options->machine_code: the PTX through nvJitLink        runtime/machine_code.c
 *
 * A program of several kernels (staging copies, split-K) defines, schedules, lowers and
 * generates each in turn into one module. Each lowered PrimFunc lives in an arena and the
 * module in the context's LLVM context, both gone when the pipeline returns; the
 * tcc_kernel owns plain copies of what it reports.
 */
#include "codegen/codegen.h"
#include "codegen/llvm.h"
#include "driver/driver.h"
#include "driver/kernel.h"
#include "support/strbuf.h"

#include <stdlib.h>
#include <string.h>

/* Launch k of the kernel: its symbol and launch shape, and its loop IR after the others'. */
static tcc_status describe(tcc_context *ctx, const PrimFunc *prim, StrBuf *loop_ir,
                           KernelLaunch *launch)
{
    char *text = tci_prim_func_text(prim);
    launch->name = tci_codegen_symbol(prim->name);
    if (text)
        tci_strbuf_printf(loop_ir, "%s", text);
    free(text);
    if (!text || !launch->name || loop_ir->failed)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory printing the kernel");
    for (int i = 0; i < 3; i++) {
        launch->grid[i] = prim->launch[i];
        launch->block[i] = prim->launch[3 + i];
        launch->cluster[i] = prim->cluster[i];
    }
    launch->dynamic_shared_bytes = prim->shared_bytes;
    if (prim->ntensor_map > TCI_MAX_LAUNCH_MAPS)
        return tci_fail(ctx, TCC_ERROR_SCHEDULE, "kernel %s takes %d tensor maps; at most %d",
                        prim->name, prim->ntensor_map, TCI_MAX_LAUNCH_MAPS);
    launch->ntensor_map = prim->ntensor_map;
    for (int i = 0; i < prim->ntensor_map; i++)
        launch->tensor_maps[i] = prim->tensor_maps[i]->enc;
    return TCC_OK;
}

/* The bytes of the trailing `count` parameters, the workspaces the runtime allocates; every
 * kernel of a program takes the same parameters. */
static tcc_status record_workspaces(tcc_context *ctx, tcc_kernel *kernel, int k, int nparam,
                                    tcc_tensor *const *params, int count)
{
    if (count < 0 || count > TCI_MAX_WORKSPACES || count > nparam)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%d workspaces of %d parameters", count,
                        nparam);
    if (k > 0 && nparam - count != kernel->nparam)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "kernel %d takes %d parameters; kernel 0 took %d", k, nparam - count,
                        kernel->nparam);
    kernel->nparam = nparam - count;
    kernel->nworkspace = count;
    for (int i = 0; i < count; i++) {
        const tcc_tensor *t = params[nparam - count + i];
        int64_t elements = 1;
        for (int d = 0; d < t->ndim; d++)
            elements *= t->shape[d];
        kernel->workspace_bytes[i] = elements * (int64_t)tcc_dtype_size(t->type);
    }
    return TCC_OK;
}

/* Kernel k of the program: defined and scheduled in `func`, lowered, and generated into
 * `module` as launch k. */
static tcc_status compile_kernel(tcc_func *func, const Program *program, int k, int nparam,
                                 tcc_tensor *const *params, const tcc_build_options *options,
                                 LLVMModuleRef module, StrBuf *loop_ir, tcc_kernel *kernel)
{
    tcc_context *ctx = tci_func_context(func);
    tcc_arch arch = options->arch;
    KernelLaunch *launch = &kernel->launches[k];
    Arena *arena = tci_arena_create();
    PrimFunc *prim = NULL;
    tcc_status status =
        arena ? TCC_OK : tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory starting a build");
    if (status == TCC_OK && program && program->define)
        status = program->define(program->program, k, func, arch, &nparam, &params);
    if (status == TCC_OK && program && program->schedule)
        status = program->schedule(program->program, k, func, arch);
    if (status == TCC_OK)
        status = tci_lower(func, nparam, params, options, arena, &prim);
    if (status == TCC_OK)
        status = describe(ctx, prim, loop_ir, launch);
    if (status == TCC_OK)
        status = tci_codegen(ctx, prim, arch, module, &launch->shared_bytes);
    if (status == TCC_OK) {
        launch->shared_bytes += prim->shared_bytes;
        status =
            record_workspaces(ctx, kernel, k, nparam, params, program ? program->nworkspace : 0);
    }
    tci_arena_destroy(arena);
    return status;
}

/* Kernel k's function: the caller's for kernel 0, else a new one (the caller's to
 * destroy). */
static tcc_status kernel_func(tcc_func *func, const Program *program, int k, tcc_func **out)
{
    if (k == 0) {
        *out = func;
        return TCC_OK;
    }
    const char *name = program->names[k] ? program->names[k] : "kernel";
    return tcc_func_create(tci_func_context(func), name, out);
}

tcc_status tci_compile(tcc_func *func, const Program *program, int nparam,
                       tcc_tensor *const *params, const tcc_build_options *options,
                       tcc_kernel **out)
{
    tcc_context *ctx = tci_func_context(func);
    tcc_build_options resolved;
    tcc_status status = tci_build_options(ctx, options, &resolved);
    if (status != TCC_OK)
        return status;
    options = &resolved;
    tcc_arch arch = options->arch;
    int nkernel = program && program->nkernel > 0 ? program->nkernel : 1;
    if (nkernel > TCI_MAX_LAUNCHES || (program && program->main_kernel >= nkernel))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%d kernels (at most %d), the main one %d",
                        nkernel, TCI_MAX_LAUNCHES, program ? program->main_kernel : 0);
    tcc_kernel *kernel = calloc(1, sizeof *kernel);
    LLVMModuleRef module = NULL;
    StrBuf loop_ir;
    tci_strbuf_init(&loop_ir);
    status = kernel ? tci_codegen_module(ctx, func->name, arch, &module)
                    : tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory starting a build");

    for (int k = 0; k < nkernel && status == TCC_OK; k++) {
        tcc_func *kfunc = NULL;
        status = kernel_func(func, program, k, &kfunc);
        if (status == TCC_OK) {
            kernel->nlaunch = k + 1;
            status = compile_kernel(kfunc, program, k, nparam, params, options, module, &loop_ir,
                                    kernel);
        }
        if (kfunc != func)
            tcc_func_destroy(kfunc);
    }
    if (status == TCC_OK) {
        kernel->main_launch = program ? program->main_kernel : 0;
        kernel->loop_ir = loop_ir.data;
        loop_ir.data = NULL;
    }
    if (status == TCC_OK)
        status = tci_llvm_verify(ctx, module);
    if (status == TCC_OK)
        status = tci_llvm_optimize(ctx, module, arch);
    if (status == TCC_OK)
        status = tci_llvm_verify(ctx, module);
    if (status == TCC_OK)
        status = tci_llvm_print_module(ctx, module, &kernel->llvm_ir);
    if (status == TCC_OK)
        status = tci_llvm_emit_ptx(ctx, module, arch, &kernel->ptx);
    if (status == TCC_OK && options->machine_code)
        status = tcc_kernel_compile_machine_code(ctx, kernel);

    tci_strbuf_free(&loop_ir);
    if (module)
        LLVMDisposeModule(module);
    if (status != TCC_OK) {
        tcc_kernel_destroy(kernel);
        return status;
    }
    *out = kernel;
    return TCC_OK;
}

tcc_status tcc_build(tcc_func *func, int nparam, tcc_tensor *const *params,
                     const tcc_build_options *options, tcc_kernel **out)
{
    if (!out)
        return TCC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (!func)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (nparam < 0 || (nparam > 0 && !params))
        return tci_fail(tci_func_context(func), TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_build: %d parameters but no list", nparam);
    tcc_status status = tci_compile(func, NULL, nparam, params, options, out);
    if (status == TCC_OK) /* the operators describe theirs (ops/compile.c) */
        status = tci_kernel_describe_tensors(tci_func_context(func), *out, func, nparam, params);
    if (status != TCC_OK) {
        tcc_kernel_destroy(*out);
        *out = NULL;
    }
    return status;
}
