/*
 * vectorize: a loop marked vectorized whose body stores a contiguous run of elements
 * (index = base + v) becomes one vector store of ramp(base, 1, lanes), its loads of
 * contiguous elements become vector loads, values the same in every lane stay scalars,
 * arithmetic, comparisons and casts of vectors are vector ones (lane by lane, the same
 * operations in the same order), and an if_then_else selects whole vectors where its
 * condition is the same in every lane, or where its sides load only what the condition
 * loads (a fused epilogue's relu: `x < 0 ? 0 : x`). Anything else becomes a serial loop: a
 * vector is a speed-up, never a change of meaning.
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

static bool find_int_division(Visitor *v, const Expr *e)
{
    bool divides = e->kind == EXPR_DIV || e->kind == EXPR_MOD;
    bool by_constant = divides && e->bin.b->kind == EXPR_INT && e->bin.b->int_value != 0;
    v->done = v->done || (divides && !by_constant && (e->type == TCC_INT8 || e->type == TCC_INT32));
    return !v->done;
}

/* Whether both sides of an if_then_else whose condition differs between lanes may run: they
 * load only what the condition loads, and divide integers by nonzero constants only (not by a
 * zero the condition was there to avoid). */
static bool both_sides_may_run(const Expr *select)
{
    Visitor v = {.expr = find_int_division};
    tci_visit_expr(&v, select->select.then_value);
    tci_visit_expr(&v, select->select.else_value);
    return !v.done && tci_select_sides_load_as_cond(select);
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
    case EXPR_NOT:
        return NULL; /* recurse: a cast of a vector is a vector cast */
    case EXPR_SELECT:
        /* A range test shared by all lanes (an aligned group of channels) guards the
         * whole vector; one that differs between lanes chooses lane by lane between both
         * sides evaluated, where they may run. */
        if (tci_expr_uses_var(e->select.cond, v->var) && !both_sides_may_run(e)) {
            v->ok = false;
            return e;
        }
        return NULL;
    case EXPR_ADD:
    case EXPR_SUB:
    case EXPR_MUL:
    case EXPR_DIV:
    case EXPR_MIN:
    case EXPR_MAX:
    case EXPR_EQ:
    case EXPR_NE:
    case EXPR_LT:
    case EXPR_LE:
    case EXPR_AND:
    case EXPR_OR:
        return NULL; /* recurse: lane by lane */
    default:
        /* The lane itself as a value, a modulo, a ramp: kept scalar. */
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
