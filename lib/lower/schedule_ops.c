/*
 * schedule_ops: the first pass, from a schedule to its loop nest.
 *
 * Binds the kernel's parameters to global buffers and every thread-bound axis to the
 * kernel's one variable for its index, substitutes inlined stages, infers the range of every
 * axis, checks the launch against the device, and builds the loop nest (TVM's InferBound
 * followed by ScheduleOps). Assumes a complete schedule: tcc_schedule_create was called and
 * no builder failed. The lowering state it writes on the axes and tensors is cleared first,
 * so the same schedule lowers twice alike.
 */
#include "lower/lower.h"

#include <string.h>

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

tcc_status tci_lower_too_large(Lowering *lw, const char *tensor)
{
    return tci_fail(lw->ctx, TCC_ERROR_UNSUPPORTED,
                    "tensor %s has more than 2^31 elements (32-bit indexing)", tensor);
}

static tcc_status bind_params(Lowering *lw, int nparam, tcc_tensor *const *params)
{
    PrimFunc *k = lw->prim;
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
        if (tci_indexable_elements(t->ndim, t->shape) < 0)
            return tci_lower_too_large(lw, t->name);
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
    PrimFunc *k = lw->prim;
    for (int i = 0; i < lw->func->nstage; i++) {
        Stage *st = lw->func->stages[i];
        if (!st->tensor->is_compute || st->attach == ATTACH_INLINE)
            continue;
        for (int j = 0; j < st->nleaf; j++) {
            IterVar *leaf = st->leaf[j];
            /* A virtual thread keeps a variable of its own: it is no launch dimension. */
            if (!leaf->bound || leaf->tag == TCC_VTHREAD)
                continue;
            if (!k->thread_var[leaf->tag])
                k->thread_var[leaf->tag] = tci_prim_func_new_var(k, tci_thread_tag_name(leaf->tag));
            leaf->loop_var = k->thread_var[leaf->tag];
            if (extents_known && leaf->extent > k->launch[leaf->tag])
                k->launch[leaf->tag] = leaf->extent;
            if (leaf->cluster_blocks > 1)
                k->cluster[leaf->tag] = leaf->cluster_blocks;
        }
    }
}

tcc_status tci_pass_schedule_ops(const PassContext *pc, PrimFunc *func)
{
    Func *schedule = pc->schedule;
    if (!schedule)
        return tci_fail(pc->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "schedule_ops lowers a schedule; this function is loop IR already");
    if (schedule->failed)
        return tci_func_status(schedule);
    if (!schedule->scheduled)
        return tci_fail(pc->ctx, TCC_ERROR_INVALID_ARGUMENT, "create the schedule before building");
    Lowering lw = {schedule, pc->ctx, func->arena, func, 0, NULL};
    tcc_status status;
    for (int i = 0; i < 6; i++)
        func->launch[i] = 1;
    reset_lowering_state(schedule);
    bind_thread_vars(&lw, false);
    if ((status = bind_params(&lw, pc->nparam, pc->params)) != TCC_OK)
        return status;
    if ((status = tci_lower_inline(&lw)) != TCC_OK)
        return status;
    if ((status = tci_lower_bound_infer(&lw)) != TCC_OK)
        return status;
    bind_thread_vars(&lw, true);
    /* A grid past blockIdx.y's or .z's limit is checked as fold_grid will launch it. */
    int64_t folded[6];
    bool fold = tci_target_fold_launch(func->launch, folded);
    if ((status = tci_target_validate_launch(pc->ctx, fold ? folded : func->launch)) != TCC_OK)
        return status;
    if ((func->cluster[0] > 1) + (func->cluster[1] > 1) + (func->cluster[2] > 1) > 1)
        return tci_fail(pc->ctx, TCC_ERROR_SCHEDULE, "cluster: clusters lie along one block index");
    for (int d = 0; d < 3; d++)
        if (func->cluster[d] > 1 && func->launch[d] % func->cluster[d])
            return tci_fail(pc->ctx, TCC_ERROR_SCHEDULE,
                            "cluster: the %lld blocks along %s are not a multiple of the "
                            "cluster's %lld",
                            (long long)func->launch[d], tci_thread_tag_name((tcc_thread_tag)d),
                            (long long)func->cluster[d]);
    return tci_lower_loop_nest(&lw);
}
