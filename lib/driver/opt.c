/*
 * tcc-opt's pipeline (tcc_loop_ir_transform): loop IR text -> the parser -> the passes named,
 * from the same table the compiler runs (driver/passes.c) -> the printer. What LLVM's opt is
 * to LLVM IR: a pass can be tested on its own, on input written by hand.
 */
#include "driver/driver.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_PASSES = 64 };

/* Splits "a,b,c" into the passes of the table; every name is checked before any runs. */
static tcc_status find_passes(tcc_context *ctx, const char *list, const Pass **passes, int *count)
{
    *count = 0;
    for (const char *at = list; at && *at;) {
        size_t len = strcspn(at, ",");
        char name[64];
        if (len == 0 || len >= sizeof name)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "passes: %s pass name in '%s'",
                            len ? "an overlong" : "an empty", list);
        memcpy(name, at, len);
        name[len] = '\0';
        const Pass *pass = tci_find_pass(name);
        if (!pass)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "unknown pass '%s' (see --list-passes)", name);
        if (*count == MAX_PASSES)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "more than %d passes in '%s'",
                            MAX_PASSES, list);
        passes[(*count)++] = pass;
        at += len;
        if (*at == ',' && !*++at)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "passes: an empty pass name in '%s'",
                            list);
    }
    return TCC_OK;
}

tcc_status tcc_loop_ir_transform(tcc_context *ctx, const char *text, const char *passes,
                                 const tcc_build_options *options, char **out)
{
    if (!ctx || !out)
        return TCC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (!text)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_loop_ir_transform: no text");
    const Pass *chosen[MAX_PASSES];
    int count = 0;
    tcc_status status =
        options ? tci_check_build_options_size(ctx, "tcc_loop_ir_transform: options", options)
                : TCC_OK;
    if (status == TCC_OK)
        status = find_passes(ctx, passes, chosen, &count);
    if (status == TCC_OK)
        status = tci_validate_print_after(ctx, options);
    if (status != TCC_OK)
        return status;
    Arena *arena = tci_arena_create();
    if (!arena)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory reading the loop IR");
    PrimFunc *func = NULL;
    status = tci_parse_prim_func(ctx, arena, text, &func);
    PassContext pc = tci_pass_context(ctx, options);
    for (int i = 0; i < count && status == TCC_OK; i++) {
        status = tci_run_pass(&pc, chosen[i], func);
        if (status == TCC_OK)
            tci_print_after(options, chosen[i]->name, func);
    }
    if (status == TCC_OK && !(*out = tci_prim_func_text(func)))
        status = tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory printing the loop IR");
    tci_arena_destroy(arena);
    return status;
}
