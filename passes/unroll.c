/*
 * unroll: loops marked unrolled, and (TVM's tir.UnrollLoop auto_max_step) innermost
 * loops of constant extent whose total number of steps is at most auto_max_step, are
 * replaced by copies of their body. Fragment indices become constants this way, which
 * lets LLVM keep tensor-core fragments in registers. Assumes nothing: a loop whose extent
 * is not a constant stays, and so do the loops around it, as does a loop whose body allocates
 * a region starting at its variable (tci_stmt_allocates_region_of); the copies are simplified.
 * A loop's pragmas (tcc_pragma) set auto_max_step and TVM's unroll_explicit for its nest:
 * under unroll_explicit 0 the loops unrolled automatically stay, marked llvm_unroll for the
 * code generator (llvm.loop.unroll.full), as TVM's CUDA code gets `#pragma unroll`.
 */
#include "passes/passes.h"

enum { NOT_UNROLLABLE = 1 << 30 };

typedef struct Unroller {
    Arena *arena;
    int64_t max_step;
    /* false under pragma unroll_explicit 0: loops unrolled automatically stay loops, marked
     * for LLVM to unroll (llvm_unroll) */
    bool explicit_unroll;
} Unroller;

static Stmt *unroll(Unroller *u, Stmt *s, int64_t *steps);

static Stmt *replicate(Unroller *u, Stmt *loop, Stmt *body, int64_t extent)
{
    Stmt **copies = tci_arena_alloc(u->arena, sizeof(Stmt *) * (size_t)extent);
    for (int64_t i = 0; i < extent; i++) {
        Expr *value = tci_ir_binary(u->arena, EXPR_ADD, loop->loop.min, tci_ir_int(u->arena, i));
        copies[i] = tci_stmt_substitute(u->arena, body, 1, &loop->loop.var, &value);
    }
    return tci_stmt_seq(u->arena, (int)extent, copies);
}

static Stmt *unroll_loop(Unroller *u, Stmt *s, int64_t *steps)
{
    int64_t body_steps;
    Stmt *body = unroll(u, s->loop.body, &body_steps);
    bool constant = s->loop.extent->kind == EXPR_INT;
    /* A loop of a negative extent (loop IR read from text may have one) runs no iteration. */
    int64_t extent = constant && s->loop.extent->int_value > 0 ? s->loop.extent->int_value : 0;
    bool marked = s->loop.kind == FOR_UNROLLED && constant;
    /* extent * body_steps, saturated at NOT_UNROLLABLE (loop IR read from text may carry an
     * extent whose product overflows). */
    int64_t total;
    if (__builtin_mul_overflow(extent, body_steps, &total) || total > NOT_UNROLLABLE)
        total = NOT_UNROLLABLE;
    bool automatic = s->loop.kind == FOR_SERIAL && !s->loop.pipelined && constant &&
                     body_steps < NOT_UNROLLABLE && total <= u->max_step;
    if ((marked || automatic) && extent <= 4096 &&
        !tci_stmt_allocates_region_of(body, s->loop.var)) {
        *steps = total;
        if (marked || u->explicit_unroll)
            return replicate(u, s, body, extent);
        /* TVM's UnrollLoop without explicit_unroll: the loop is marked, its steps still count
         * for the loops around it, and the code generator has it unrolled. */
        Stmt *copy = tci_arena_alloc(u->arena, sizeof *copy);
        *copy = *s;
        copy->loop.body = body;
        copy->loop.llvm_unroll = true;
        return copy;
    }
    *steps = NOT_UNROLLABLE;
    if (body == s->loop.body && s->loop.kind != FOR_UNROLLED)
        return s;
    Stmt *copy = tci_arena_alloc(u->arena, sizeof *copy);
    *copy = *s;
    copy->loop.body = body;
    if (copy->loop.kind == FOR_UNROLLED)
        copy->loop.kind = FOR_SERIAL;
    return copy;
}

/* A loop carrying pragmas (tcc_pragma) sets the unroll parameters of its nest, itself
 * included, as TVM's pragma_auto_unroll_max_step and pragma_unroll_explicit attributes do. */
static Stmt *unroll_with_pragmas(Unroller *u, Stmt *s, int64_t *steps)
{
    Unroller saved = *u;
    if (s->loop.pragmas & PRAGMA_AUTO_UNROLL_MAX_STEP)
        u->max_step = s->loop.auto_unroll_max_step;
    if (s->loop.pragmas & PRAGMA_UNROLL_EXPLICIT)
        u->explicit_unroll = s->loop.unroll_explicit;
    Stmt copy = *s;
    copy.loop.pragmas = 0;
    Stmt *r = unroll(u, &copy, steps);
    *u = saved;
    /* The pragmas stay printed on the loop when it stays; copies of a replicated one lose
     * them, having nothing left to say. */
    if (r == &copy) {
        r = tci_arena_alloc(u->arena, sizeof *r);
        *r = copy;
    }
    if (r->kind == STMT_FOR && r->loop.var == s->loop.var) {
        r->loop.pragmas = s->loop.pragmas;
        r->loop.auto_unroll_max_step = s->loop.auto_unroll_max_step;
        r->loop.unroll_explicit = s->loop.unroll_explicit;
    }
    return r;
}

static Stmt *unroll(Unroller *u, Stmt *s, int64_t *steps)
{
    if (s && s->kind == STMT_FOR && s->loop.pragmas)
        return unroll_with_pragmas(u, s, steps);
    if (!s) { /* an empty body: nothing to run, nothing to copy */
        *steps = 0;
        return NULL;
    }
    switch (s->kind) {
    case STMT_FOR:
        if (s->loop.kind == FOR_THREAD || s->loop.kind == FOR_VECTORIZED) {
            int64_t inner;
            Stmt *body = unroll(u, s->loop.body, &inner);
            *steps = NOT_UNROLLABLE;
            if (body == s->loop.body)
                return s;
            Stmt *copy = tci_arena_alloc(u->arena, sizeof *copy);
            *copy = *s;
            copy->loop.body = body;
            return copy;
        }
        return unroll_loop(u, s, steps);
    case STMT_SEQ: {
        Stmt **items = tci_arena_alloc(u->arena, sizeof(Stmt *) * (size_t)s->seq.count);
        int64_t total = 0;
        for (int i = 0; i < s->seq.count; i++) {
            int64_t n;
            items[i] = unroll(u, s->seq.items[i], &n);
            total = total + n < NOT_UNROLLABLE ? total + n : NOT_UNROLLABLE;
        }
        *steps = total;
        return tci_stmt_seq(u->arena, s->seq.count, items);
    }
    case STMT_IF: {
        int64_t a, b = 0;
        Stmt *then_body = unroll(u, s->branch.then_body, &a);
        Stmt *else_body = s->branch.else_body ? unroll(u, s->branch.else_body, &b) : NULL;
        *steps = a + b < NOT_UNROLLABLE ? a + b : NOT_UNROLLABLE;
        return tci_stmt_if(u->arena, s->branch.cond, then_body, else_body);
    }
    case STMT_ALLOCATE: {
        Stmt *body = unroll(u, s->alloc.body, steps);
        return tci_stmt_allocate(u->arena, s->alloc.buffer, body);
    }
    default:
        *steps = 1;
        return s;
    }
}

tcc_status tci_pass_unroll(const PassContext *pc, PrimFunc *func)
{
    Unroller u = {func->arena, pc->auto_unroll_max_step, true};
    int64_t steps;
    func->body = unroll(&u, func->body, &steps);
    func->body = tci_simplify_stmt(func->arena, func->body);
    return TCC_OK;
}
