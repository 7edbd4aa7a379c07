/*
 * simplify: arithmetic simplification with the ranges of the enclosing loops, and serial
 * loops of one iteration replaced by their body (a thread launch of one stays: it names a
 * launch dimension, nor does a loop carrying pragmas). Extents are folded first so that unit loops
 * show, and the arithmetic again after their variables become constants. Assumes that index
 * arithmetic fits in int32, as it does for tensors of fewer than 2^31 elements (what validation
 * admits).
 */
#include "passes/passes.h"

static Stmt *remove_unit_loop(Rewriter *rw, Stmt *s)
{
    /* A loop carrying pragmas stays: they say how to unroll the loops inside it. So does one
     * whose variable starts a region allocated inside it (tci_stmt_allocates_region_of). */
    if (s->kind != STMT_FOR || s->loop.kind == FOR_THREAD || s->loop.pragmas ||
        !tci_expr_is_int(s->loop.extent, 1) ||
        tci_stmt_allocates_region_of(s->loop.body, s->loop.var))
        return NULL;
    Stmt *body = tci_rewrite_stmt(rw, s->loop.body);
    return tci_stmt_substitute(rw->arena, body, 1, &s->loop.var, &s->loop.min);
}

tcc_status tci_pass_simplify(const PassContext *pc, PrimFunc *func)
{
    (void)pc;
    Arena *a = func->arena;
    /* Extents become constants first, then unit loops go, then the arithmetic folds. */
    func->body = tci_simplify_stmt(a, func->body);
    Rewriter rw = {.arena = a, .stmt = remove_unit_loop};
    func->body = tci_rewrite_stmt(&rw, func->body);
    func->body = tci_simplify_stmt(a, func->body);
    return TCC_OK;
}
