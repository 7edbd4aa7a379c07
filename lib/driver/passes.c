/*
 * The pass table: the pipeline's lowering, in order. --list-passes prints it, --print-after
 * and tcc-opt's -passes name its rows, and tci_lower runs it. A new pass is a row here and
 * a file in passes/ (or lib/lower/ for what builds the loop nest from a schedule).
 */
#include "driver/driver.h"

#include "lower/lower.h"
#include "passes/passes.h"
#include "target/target.h"

#include <stdlib.h>
#include <string.h>

static const Pass passes[] = {
    {"schedule_ops", tci_pass_schedule_ops,
     "the loop nest of the schedule: bound inference, inlining, tensorize (lib/lower/)"},
    {"flatten", tci_pass_flatten, "multi-dimensional accesses become element offsets"},
    {"simplify", tci_pass_simplify, "arithmetic simplified in loop ranges; unit loops removed"},
    {"inject_virtual_thread", tci_pass_inject_virtual_thread,
     "vthread loops go: statements that depend on them copied per virtual thread, innermost"},
    {"vectorize", tci_pass_vectorize, "vectorized loops become vector loads and stores"},
    {"persistent_grid", tci_pass_persistent_grid,
     "a loop marked persistent(P): P blocks run every tile, the loop carried across tiles"},
    {"fold_grid", tci_pass_fold_grid,
     "a grid past blockIdx.y's or .z's limit runs along blockIdx.x, its indices recovered"},
    {"software_pipeline", tci_pass_software_pipeline,
     "loops marked stages(S): S buffers, copies issued S - 1 iterations ahead"},
    {"inject_async_copy", tci_pass_inject_async_copy,
     "copies in a cp.async group become cp.async (zero-filling where guarded)"},
    {"unroll", tci_pass_unroll, "unrolled and small constant loops replaced by copies"},
    {"prefetch_fragments", tci_pass_prefetch_fragments,
     "fragments loaded a group of passes ahead, across the pipelined loop's barrier"},
    {"swizzle_shared", tci_pass_swizzle_shared,
     "accesses to swizzled shared tiles at their elements' places (xor of the index)"},
    {"store_ring", tci_pass_store_ring,
     "an output tile the copy engine stores a column block at a time kept as a ring of blocks"},
    {"plan_shared", tci_pass_plan_shared,
     "shared buffers placed in dynamic shared memory, reusing bytes no longer live"},
    {"thread_sync", tci_pass_thread_sync, "__syncthreads() where threads share memory"},
    {"wgmma_zero_init", tci_pass_wgmma_zero_init,
     "a fill of zeros that wgmma products follow becomes the first product's scale-d"},
    {"wgmma_sync", tci_pass_wgmma_sync,
     "wgmma's fences, commits and waits around its products; a proxy fence before every barrier"},
    {"warp_specialize", tci_pass_warp_specialize,
     "a producer warpgroup issues the bulk copies; the consumers compute (setmaxnreg)"},
};

#define NPASS ((int)(sizeof passes / sizeof passes[0]))

const Pass *tci_find_pass(const char *name)
{
    for (int i = 0; name && i < NPASS; i++)
        if (strcmp(passes[i].name, name) == 0)
            return &passes[i];
    return NULL;
}

int tcc_pass_count(void)
{
    return NPASS;
}

const char *tcc_pass_name(int index)
{
    return index >= 0 && index < NPASS ? passes[index].name : NULL;
}

const char *tcc_pass_summary(int index)
{
    return index >= 0 && index < NPASS ? passes[index].summary : NULL;
}

int tcc_pass_index(const char *name)
{
    const Pass *pass = tci_find_pass(name);
    return pass ? (int)(pass - passes) : -1;
}

void tcc_build_options_init_size(tcc_build_options *options, size_t size)
{
    tcc_build_options defaults = {
        .size = sizeof defaults, .arch = TCC_SM_80, .auto_unroll_max_step = 16};
    tci_init_struct(options, size, &defaults, TCI_BUILD_OPTIONS_FIRST_SIZE, sizeof defaults);
}

/* The symbol a program built before the macro calls: the first release's size, which a
 * program built against the headers of that release has (no machine_code, no
 * multiprocessors). */
void(tcc_build_options_init)(tcc_build_options *options)
{
    tcc_build_options_init_size(options, TCI_BUILD_OPTIONS_FIRST_SIZE);
}

tcc_status tci_check_build_options_size(tcc_context *ctx, const char *what,
                                        const tcc_build_options *options)
{
    return tci_check_struct_size(ctx, what, "tcc_build_options", options->size,
                                 TCI_BUILD_OPTIONS_FIRST_SIZE, sizeof *options);
}

tcc_status tci_build_options(tcc_context *ctx, const tcc_build_options *options,
                             tcc_build_options *out)
{
    tcc_build_options_init(out);
    if (options) {
        tcc_status status = tci_read_struct(ctx, "build options", "tcc_build_options", options,
                                            TCI_BUILD_OPTIONS_FIRST_SIZE, sizeof *out, out);
        if (status != TCC_OK)
            return status;
    }
    if (!tci_target_arch(out->arch))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "unknown arch %d", (int)out->arch);
    if (out->multiprocessors < 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "build options: multiprocessors must be 0 (the target's) or more, not %d",
                        out->multiprocessors);
    return TCC_OK;
}

PassContext tci_pass_context(tcc_context *ctx, const tcc_build_options *options)
{
    tcc_build_options defaults;
    if (!options) {
        tcc_build_options_init(&defaults);
        options = &defaults;
    }
    return (PassContext){
        .ctx = ctx, .arch = options->arch, .auto_unroll_max_step = options->auto_unroll_max_step};
}

tcc_status tci_run_pass(const PassContext *pc, const Pass *pass, PrimFunc *func)
{
    /* Passes allocate from the arena without checking each allocation: one that fails
     * jumps back here. */
    jmp_buf recovery;
    if (setjmp(recovery)) {
        tci_arena_set_recovery(func->arena, NULL);
        return tci_fail(pc->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory in pass %s", pass->name);
    }
    tci_arena_set_recovery(func->arena, &recovery);
    tcc_status status = pass->run(pc, func);
    tci_arena_set_recovery(func->arena, NULL);
    return status;
}

void tci_print_after(const tcc_build_options *options, const char *pass, const PrimFunc *func)
{
    const char *wanted = options ? options->print_after_pass : NULL;
    if (!wanted || !options->print_callback)
        return;
    if (strcmp(wanted, "all") != 0 && strcmp(wanted, pass) != 0)
        return;
    char *text = tci_prim_func_text(func);
    options->print_callback(pass, text ? text : "", options->print_user);
    free(text);
}

tcc_status tci_validate_print_after(tcc_context *ctx, const tcc_build_options *options)
{
    const char *name = options ? options->print_after_pass : NULL;
    if (!name || strcmp(name, "all") == 0 || tci_find_pass(name))
        return TCC_OK;
    return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                    "unknown pass '%s' for --print-after (see --list-passes)", name);
}

tcc_status tci_lower(tcc_func *func, int nparam, tcc_tensor *const *params,
                     const tcc_build_options *options, Arena *arena, PrimFunc **out)
{
    if (!func || !arena || !out)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_context *ctx = tci_func_context(func);
    tcc_status status = tci_validate_print_after(ctx, options);
    if (status != TCC_OK)
        return status;
    PrimFunc *prim = tci_arena_alloc(arena, sizeof *prim);
    const char *name = prim ? tci_arena_strdup(arena, func->name) : NULL;
    if (!name)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory while lowering");
    *prim = (PrimFunc){.name = name, .arena = arena, .next_var_id = func->next_var_id};
    PassContext pc = tci_pass_context(ctx, options);
    pc.schedule = func;
    pc.nparam = nparam;
    pc.params = params;
    for (int i = 0; i < NPASS && status == TCC_OK; i++) {
        status = tci_run_pass(&pc, &passes[i], prim);
        if (status == TCC_OK)
            tci_print_after(options, passes[i].name, prim);
    }
    if (status == TCC_OK)
        *out = prim;
    return status;
}
