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
 *
 * The lowered PrimFunc lives in an arena and the module in the context's LLVM context, both
 * gone when the pipeline returns; the tcc_kernel owns plain copies of what it reports.
 */
#include "codegen/codegen.h"
#include "codegen/llvm.h"
#include "driver/driver.h"
#include "driver/kernel.h"

#include <stdlib.h>
#include <string.h>

/* What the kernel reports of its loop IR: the final text, its symbol and launch shape. */
static tcc_status describe(tcc_context *ctx, const PrimFunc *prim, tcc_kernel *kernel)
{
    kernel->loop_ir = tci_prim_func_text(prim);
    kernel->name = tci_codegen_symbol(prim->name);
    if (!kernel->loop_ir || !kernel->name)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory printing the kernel");
    for (int i = 0; i < 3; i++) {
        kernel->grid[i] = prim->launch[i];
        kernel->block[i] = prim->launch[3 + i];
    }
    return TCC_OK;
}

tcc_status tci_compile(tcc_func *func, const Program *program, int nparam,
                       tcc_tensor *const *params, const tcc_build_options *options,
                       tcc_kernel **out)
{
    tcc_context *ctx = tci_func_context(func);
    tcc_build_options defaults;
    if (!options) {
        tcc_build_options_init(&defaults);
        options = &defaults;
    }
    tcc_arch arch = options->arch;
    /* Before anything else, which is the slow part. */
    if (!tci_target_arch(arch))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "unknown arch %d", (int)arch);
    tcc_kernel *kernel = calloc(1, sizeof *kernel);
    Arena *arena = tci_arena_create();
    PrimFunc *prim = NULL;
    LLVMModuleRef module = NULL;
    tcc_status status =
        kernel && arena ? TCC_OK
                        : tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory starting a build");

    if (status == TCC_OK && program && program->define)
        status = program->define(program->program, func, arch, &nparam, &params);
    if (status == TCC_OK && program && program->schedule)
        status = program->schedule(program->program, func, arch);
    if (status == TCC_OK)
        status = tci_lower(func, nparam, params, options, arena, &prim);
    if (status == TCC_OK)
        status = describe(ctx, prim, kernel);
    if (status == TCC_OK)
        status = tci_codegen(ctx, prim, arch, &module, &kernel->shared_bytes);
    if (status == TCC_OK) {
        kernel->dynamic_shared_bytes = prim->shared_bytes;
        kernel->shared_bytes += prim->shared_bytes;
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

    if (module)
        LLVMDisposeModule(module);
    tci_arena_destroy(arena);
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
    return tci_compile(func, NULL, nparam, params, options, out);
}
