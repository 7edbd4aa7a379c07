/*
 * The lowering pipeline, in one function: tci_lower reads top to bottom.
 */
#include "lower/lower.h"

#include <string.h>

static const char *const pass_names[] = {
    "schedule_ops", "flatten", "simplify", "vectorize", "unroll", "thread_sync", NULL,
};

const char *const *tcc_pass_names(void)
{
    return pass_names;
}

void tcc_build_options_init(tcc_build_options *options)
{
    if (!options)
        return;
    memset(options, 0, sizeof *options);
    options->arch = TCC_SM_80;
    options->auto_unroll_max_step = 16;
}

tcc_context *tci_func_context(tcc_func *func)
{
    return func ? func->ctx : NULL;
}

static bool known_pass(const char *name)
{
    if (strcmp(name, "all") == 0)
        return true;
    for (int i = 0; pass_names[i]; i++)
        if (strcmp(pass_names[i], name) == 0)
            return true;
    return false;
}

/* Calls the print callback if the options ask for the IR after this pass. */
static void print_after(const tcc_build_options *options, const char *pass, const PrimFunc *kernel)
{
    const char *wanted = options ? options->print_after_pass : NULL;
    if (!wanted || !options->print_callback)
        return;
    if (strcmp(wanted, "all") != 0 && strcmp(wanted, pass) != 0)
        return;
    StrBuf sb;
    tci_strbuf_init(&sb);
    tci_print_prim_func(&sb, kernel);
    options->print_callback(pass, sb.data ? sb.data : "", options->print_user);
    tci_strbuf_free(&sb);
}

/* Lowering state lives on the axes and tensors; clear what an earlier lowering left. */
static void reset_lowering_state(Func *func)
{
    for (int i = 0; i < func->nstage; i++) {
        Stage *st = func->stages[i];
        st->tensor->buffer = NULL;
        st->tensor->lowered_body = NULL;
        for (int j = 0; j < st->nleaf; j++)
            st->leaf[j]->loop_var = st->leaf[j]->var;
        for (int r = 0; r < st->nrel; r++) {
            Relation *rel = &st->rel[r];
            IterVar *axes[4] = {rel->parent, rel->outer, rel->inner, rel->fused};
            for (int k = 0; k < 4; k++)
                if (axes[k])
                    axes[k]->loop_var = axes[k]->var, axes[k]->min = NULL;
        }
        for (int d = 0; d < st->tensor->ndim && st->tensor->is_compute; d++)
            st->tensor->axis[d]->min = NULL;
    }
}

static tcc_status bind_params(Lowering *lw, int nparam, tcc_tensor *const *params)
{
    PrimFunc *k = lw->kernel;
    k->nparam = nparam;
    k->params = tci_arena_alloc(lw->arena, sizeof(Buffer *) * (size_t)(nparam ? nparam : 1));
    for (int i = 0; i < nparam; i++) {
        Tensor *t = params[i];
        if (!t || t->func != lw->func ||
            (t->is_compute && (!t->stage->is_output || t->store_target)))
            return tci_fail(lw->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "parameter %d must be a placeholder or an output of this function", i);
        if (t->buffer)
            return tci_fail(lw->ctx, TCC_ERROR_INVALID_ARGUMENT, "parameter %s is listed twice",
                            t->name);
        t->buffer = tci_ir_buffer(lw->arena, t->name, t->type, TCC_SCOPE_GLOBAL, t->ndim, t->shape);
        t->buffer->param_index = i;
        k->params[i] = t->buffer;
    }
    for (int i = 0; i < lw->func->ntensor; i++) {
        Tensor *t = lw->func->tensors[i];
        if (!t->is_compute && !t->buffer)
            return tci_fail(lw->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "placeholder %s is not among the kernel's parameters", t->name);
    }
    return TCC_OK;
}

/* Every loop bound to a thread index uses the kernel's one variable for that index; the
 * launch size of an index is the largest extent bound to it. */
static void bind_thread_vars(Lowering *lw, bool extents_known)
{
    PrimFunc *k = lw->kernel;
    for (int i = 0; i < lw->func->nstage; i++) {
        Stage *st = lw->func->stages[i];
        if (!st->tensor->is_compute || st->attach == ATTACH_INLINE)
            continue;
        for (int j = 0; j < st->nleaf; j++) {
            IterVar *leaf = st->leaf[j];
            if (!leaf->bound)
                continue;
            if (!k->thread_var[leaf->tag])
                k->thread_var[leaf->tag] = tci_prim_func_new_var(k, tci_thread_tag_name(leaf->tag));
            leaf->loop_var = k->thread_var[leaf->tag];
            if (extents_known && leaf->extent > k->launch[leaf->tag])
                k->launch[leaf->tag] = leaf->extent;
        }
    }
}

static tcc_status check_launch(Lowering *lw)
{
    const int64_t *l = lw->kernel->launch;
    int64_t threads = l[TCC_THREAD_X] * l[TCC_THREAD_Y] * l[TCC_THREAD_Z];
    if (threads > 1024)
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "schedule needs %lld threads per block (%lld x %lld x %lld); the limit "
                        "is 1024",
                        (long long)threads, (long long)l[TCC_THREAD_X], (long long)l[TCC_THREAD_Y],
                        (long long)l[TCC_THREAD_Z]);
    if (l[TCC_THREAD_Z] > 64 || l[TCC_BLOCK_Y] > 65535 || l[TCC_BLOCK_Z] > 65535 ||
        l[TCC_BLOCK_X] > INT32_MAX)
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "launch grid(%lld, %lld, %lld) block(%lld, %lld, %lld) exceeds the "
                        "device's limits",
                        (long long)l[0], (long long)l[1], (long long)l[2], (long long)l[3],
                        (long long)l[4], (long long)l[5]);
    return TCC_OK;
}

static tcc_status lower(Lowering *lw, int nparam, tcc_tensor *const *params,
                        const tcc_build_options *options)
{
    PrimFunc *k = lw->kernel;
    tcc_status status;
    for (int i = 0; i < 6; i++)
        k->launch[i] = 1;
    reset_lowering_state(lw->func);
    bind_thread_vars(lw, false);
    if ((status = bind_params(lw, nparam, params)) != TCC_OK)
        return status;
    if ((status = tci_pass_inline(lw)) != TCC_OK)
        return status;
    if ((status = tci_pass_bound_infer(lw)) != TCC_OK)
        return status;
    bind_thread_vars(lw, true);
    if ((status = check_launch(lw)) != TCC_OK)
        return status;
    if ((status = tci_pass_schedule_ops(lw)) != TCC_OK)
        return status;
    print_after(options, "schedule_ops", k);

    tcc_context *ctx = lw->ctx;
    if ((status = tci_pass_flatten(ctx, k)) != TCC_OK)
        return status;
    print_after(options, "flatten", k);
    if ((status = tci_pass_simplify(ctx, k)) != TCC_OK)
        return status;
    print_after(options, "simplify", k);
    if ((status = tci_pass_vectorize(ctx, k)) != TCC_OK)
        return status;
    print_after(options, "vectorize", k);
    int max_step = options ? options->auto_unroll_max_step : 16;
    if ((status = tci_pass_unroll(ctx, k, max_step)) != TCC_OK)
        return status;
    print_after(options, "unroll", k);
    if ((status = tci_pass_thread_sync(ctx, k)) != TCC_OK)
        return status;
    print_after(options, "thread_sync", k);
    return TCC_OK;
}

tcc_status tci_lower(tcc_func *func, int nparam, tcc_tensor *const *params,
                     const tcc_build_options *options, Arena *arena, PrimFunc **out)
{
    if (!func || !arena || !out)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_context *ctx = func->ctx;
    if (func->failed)
        return tci_func_status(func);
    if (!func->scheduled)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "create the schedule before building");
    if (options && options->print_after_pass && !known_pass(options->print_after_pass))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "unknown pass '%s' for --print-after (see --list-passes)",
                        options->print_after_pass);
    jmp_buf recovery;
    if (setjmp(recovery)) {
        tci_arena_set_recovery(arena, NULL);
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory while lowering");
    }
    tci_arena_set_recovery(arena, &recovery);
    PrimFunc *kernel = tci_arena_alloc(arena, sizeof *kernel);
    kernel->arena = arena;
    kernel->name = tci_arena_strdup(arena, func->name);
    kernel->next_var_id = func->next_var_id;
    Lowering lw = {func, ctx, arena, kernel, 0, NULL};
    tcc_status status = lower(&lw, nparam, params, options);
    tci_arena_set_recovery(arena, NULL);
    if (status == TCC_OK)
        *out = kernel;
    return status;
}
