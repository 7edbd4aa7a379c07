/*
 * vectorize: a loop marked vectorized whose body stores a contiguous run of elements
 * (index = base + v) becomes one vector store of ramp(base, 1, lanes), its loads of
 * contiguous elements become vector loads, values the same in every lane stay scalars,
 * and an if_then_else whose condition is the same in every lane selects whole vectors.
 * Anything else becomes a serial loop: a vector is a speed-up, never a change of meaning.
 * Assumes flattened accesses (one index each), so that contiguity is a question about one
 * expression.
 */
#include "passes/passes.h"

typedef struct Vectorizer {
    Arena *arena;
    Var *var;
    int lanes;
    bool ok;
} Vectorizer;

/* base if e == base + var (with base free of var), else NULL. */
static Expr *contiguous_base(Vectorizer *v, Expr *e)
{
    Arena *a = v->arena;
    Expr *zero = tci_ir_int(a, 0);
    Expr *base = tci_simplify(a, tci_expr_substitute(a, e, 1, &v->var, &zero), 0, NULL);
    Expr *diff = tci_simplify(a, tci_ir_binary(a, EXPR_SUB, e, base), 0, NULL);
    if (diff->kind != EXPR_VAR || diff->var != v->var || tci_expr_uses_var(base, v->var))
        return NULL;
    return base;
}

static Expr *vectorize_expr(Rewriter *rw, Expr *e)
{
    Vectorizer *v = rw->user;
    /* The same in every lane: a scalar, broadcast by the code generator. */
    if (!tci_expr_uses_var(e, v->var))
        return e;
    switch (e->kind) {
    case EXPR_LOAD: {
        Expr *base = e->load.nindex == 1 ? contiguous_base(v, e->load.index[0]) : NULL;
        if (!base) {
            v->ok = false;
            return e;
        }
        Expr *ramp = tci_ir_ramp(rw->arena, base, 1, v->lanes);
        return tci_ir_load(rw->arena, e->load.buffer, 1, &ramp);
    }
    case EXPR_CAST:
        return NULL; /* recurse: a cast of a vector is a vector cast */
    case EXPR_SELECT:
        /* A range test shared by all lanes (an aligned group of channels) guards the
         * whole vector; one that differs between lanes cannot. */
        if (tci_expr_uses_var(e->select.cond, v->var)) {
            v->ok = false;
            return e;
        }
        return tci_ir_select(rw->arena, e->select.cond, tci_rewrite_expr(rw, e->select.then_value),
                             tci_rewrite_expr(rw, e->select.else_value));
    default:
        /* Arithmetic on lanes would need vector arithmetic: keep it scalar. */
        v->ok = false;
        return e;
    }
}

static Stmt *vectorize_loop(Arena *a, Stmt *loop)
{
    Stmt *body = loop->loop.body;
    /* An empty body (NULL) has nothing to vectorize; the loop stays, made serial. */
    if (!body || loop->loop.extent->kind != EXPR_INT || body->kind != STMT_STORE ||
        body->store.nindex != 1)
        return NULL;
    /* Vectors of 1 to 2^16 lanes, as the loop-IR reader takes them: an extent of 0 or below
     * (read from text) runs no iteration, not a vector of no lanes. */
    if (loop->loop.extent->int_value < 1 || loop->loop.extent->int_value > 1 << 16)
        return NULL;
    Vectorizer v = {a, loop->loop.var, (int)loop->loop.extent->int_value, true};
    Expr *base = contiguous_base(&v, body->store.index[0]);
    Rewriter rw = {.arena = a, .expr = vectorize_expr, .user = &v};
    Expr *value = tci_rewrite_expr(&rw, body->store.value);
    if (!base || !v.ok || value->lanes != v.lanes || !tci_expr_is_int(loop->loop.min, 0))
        return NULL;
    Expr *ramp = tci_ir_ramp(a, base, 1, v.lanes);
    return tci_stmt_store(a, body->store.buffer, 1, &ramp, value);
}

static Stmt *vectorize_stmt(Rewriter *rw, Stmt *s)
{
    if (s->kind != STMT_FOR || s->loop.kind != FOR_VECTORIZED)
        return NULL;
    Stmt *vector = vectorize_loop(rw->arena, s);
    if (vector)
        return vector;
    Stmt *scalar = tci_arena_alloc(rw->arena, sizeof *scalar);
    *scalar = *s;
    scalar->loop.kind = FOR_SERIAL;
    scalar->loop.body = tci_rewrite_stmt(rw, s->loop.body);
    return scalar;
}

tcc_status tci_pass_vectorize(const PassContext *pc, PrimFunc *func)
{
    (void)pc;
    Rewriter rw = {.arena = func->arena, .stmt = vectorize_stmt};
    func->body = tci_rewrite_stmt(&rw, func->body);
    return TCC_OK;
}
