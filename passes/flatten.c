/*
 * flatten: multi-dimensional accesses become element offsets. A buffer realized over a
 * region [min, min + shape) is stored row-major, so index i of dimension d contributes
 * (i - min[d]) * strides[d] (the product of the later dimensions' shapes, unless padded).
 * Assumes that every access has one index per dimension of its buffer (schedule_ops makes
 * them so) and that the region starts are in scope where the buffer is used; afterwards
 * the starts are cleared, and an access that is flat already is left alone.
 */
#include "passes/passes.h"

static Expr *flatten_expr(Rewriter *rw, Expr *e)
{
    if (e->kind != EXPR_LOAD || e->load.nindex == 1)
        return NULL;
    Expr *x = tci_rewrite_expr_children(rw, e);
    Expr *offset = tci_buffer_flat_index(rw->arena, e->load.buffer, x->load.nindex, x->load.index);
    return tci_ir_load(rw->arena, e->load.buffer, 1, &offset);
}

static Stmt *flatten_stmt(Rewriter *rw, Stmt *s)
{
    if (s->kind == STMT_STORE && s->store.nindex != 1) {
        Stmt *x = tci_rewrite_stmt_children(rw, s);
        Expr *offset =
            tci_buffer_flat_index(rw->arena, s->store.buffer, x->store.nindex, x->store.index);
        return tci_stmt_store(rw->arena, s->store.buffer, 1, &offset, x->store.value);
    }
    if (s->kind == STMT_WMMA && s->wmma.nindex > 1) {
        Stmt *x = tci_rewrite_stmt_children(rw, s);
        WmmaStmt w = x->wmma;
        Expr *offset = tci_buffer_flat_index(rw->arena, w.memory, w.nindex, w.memory_index);
        w.nindex = 1;
        w.memory_index = &offset;
        return tci_stmt_wmma(rw->arena, &w);
    }
    return NULL;
}

/* Accesses are offsets from the region's start now: the starts no longer apply. */
static bool clear_region_start(Visitor *v, const Stmt *s)
{
    (void)v;
    if (s->kind == STMT_ALLOCATE)
        for (int d = 0; d < s->alloc.buffer->ndim; d++)
            s->alloc.buffer->min[d] = NULL;
    return true;
}

static void clear_region_starts(Stmt *s)
{
    Visitor v = {.stmt = clear_region_start};
    tci_visit_stmt(&v, s);
}

tcc_status tci_pass_flatten(const PassContext *pc, PrimFunc *func)
{
    (void)pc;
    Rewriter rw = {.arena = func->arena, .expr = flatten_expr, .stmt = flatten_stmt};
    func->body = tci_rewrite_stmt(&rw, func->body);
    clear_region_starts(func->body);
    return TCC_OK;
}
