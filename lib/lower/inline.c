/*
 * Inline: every stage marked compute_inline disappears into its readers. An access
 * T(i, j) becomes T's body with T's axes replaced by i and j (TVM's Apad: the
 * padding condition lands in the shared-memory copy that reads it).
 */
#include "lower/lower.h"

typedef struct Inliner {
    Tensor *tensor;
} Inliner;

static Expr *inline_access(Rewriter *rw, Expr *e)
{
    Inliner *in = rw->user;
    if (e->kind != EXPR_ACCESS || e->access.tensor != in->tensor)
        return NULL;
    Expr *args = tci_rewrite_expr_children(rw, e);
    Tensor *t = in->tensor;
    Var *axes[TCI_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        axes[i] = t->axis[i]->var;
    return tci_expr_substitute(rw->arena, t->lowered_body, t->ndim, axes, args->access.index);
}

tcc_status tci_lower_inline(Lowering *lw)
{
    Func *func = lw->func;
    for (int i = 0; i < func->nstage; i++)
        func->stages[i]->tensor->lowered_body = func->stages[i]->tensor->body;
    /* Producers come first, so an inlined tensor's own body is final when it is used. */
    for (int i = 0; i < func->nstage; i++) {
        Stage *st = func->stages[i];
        if (st->attach != ATTACH_INLINE)
            continue;
        Inliner in = {st->tensor};
        Rewriter rw = {.arena = lw->arena, .expr = inline_access, .user = &in};
        for (int j = i + 1; j < func->nstage; j++) {
            Tensor *reader = func->stages[j]->tensor;
            if (reader->is_compute)
                reader->lowered_body = tci_rewrite_expr(&rw, reader->lowered_body);
        }
    }
    return TCC_OK;
}
