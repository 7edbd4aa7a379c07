/*
 * tcc_build: lower the schedule, print the final loop IR, generate LLVM IR and PTX, and
 * keep the texts and the launch shape in a tcc_kernel. The lowered PrimFunc lives in an
 * arena that dies here; the tcc_kernel owns plain copies of everything it reports.
 */
#include "codegen/codegen.h"
#include "codegen/llvm.h"
#include "driver/kernel.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "support/context.h"

#include <stdlib.h>
#include <string.h>

/* The final loop IR as a malloc'd string (NULL when out of memory). */
static char *print_kernel(const PrimFunc *kernel)
{
    StrBuf sb;
    tci_strbuf_init(&sb);
    tci_print_prim_func(&sb, kernel);
    bool failed = sb.failed;
    if (failed || !sb.data) {
        tci_strbuf_free(&sb);
        return failed ? NULL : strdup("");
    }
    return sb.data; /* ownership moves to the caller */
}

/* Lowering, printing and codegen of one kernel into `result`. */
static tcc_status build_into(tcc_context *ctx, tcc_func *func, int nparam,
                             tcc_tensor *const *params, const tcc_build_options *options,
                             Arena *arena, tcc_kernel *result)
{
    PrimFunc *kernel = NULL;
    tcc_status status = tci_lower(func, nparam, params, options, arena, &kernel);
    if (status != TCC_OK)
        return status;
    result->loop_ir = print_kernel(kernel);
    result->name = tci_codegen_symbol(kernel->name);
    if (!result->loop_ir || !result->name)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory printing the kernel");
    for (int i = 0; i < 3; i++) {
        result->grid[i] = kernel->launch[i];
        result->block[i] = kernel->launch[3 + i];
    }
    return tci_codegen(ctx, kernel, options->arch, &result->llvm_ir, &result->ptx,
                       &result->shared_bytes);
}

tcc_status tcc_build(tcc_func *func, int nparam, tcc_tensor *const *params,
                     const tcc_build_options *options, tcc_kernel **out)
{
    if (!out)
        return TCC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (!func)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_context *ctx = tci_func_context(func);
    if (nparam < 0 || (nparam > 0 && !params))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_build: %d parameters but no list",
                        nparam);
    tcc_build_options defaults;
    if (!options) {
        tcc_build_options_init(&defaults);
        options = &defaults;
    }
    /* Before lowering, which is the slow part. */
    if (!tci_llvm_cpu_name(options->arch))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_build: unknown arch %d",
                        (int)options->arch);
    tcc_kernel *result = calloc(1, sizeof *result);
    Arena *arena = tci_arena_create();
    if (!result || !arena) {
        free(result);
        tci_arena_destroy(arena);
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory starting a build");
    }
    tcc_status status = build_into(ctx, func, nparam, params, options, arena, result);
    tci_arena_destroy(arena);
    if (status != TCC_OK) {
        tcc_kernel_destroy(result);
        return status;
    }
    *out = result;
    return TCC_OK;
}
