/*
 * inject_async_copy: the copies a cp.async group commits become cp.async (TVM's
 * InjectPTXAsyncCopy). In a statement list, everything before a cp.async.commit_group is
 * in the group; in it, a store
 *
 *   S[ramp(i, 1, L)] = G[ramp(j, 1, L)]                     (S shared, G global)
 *   S[ramp(i, 1, L)] = if_then_else(c, G[ramp(j, 1, L)], 0)   (nested guards: c1 && c2)
 *
 * of 4, 8 or 16 bytes whose two addresses are provably that aligned becomes
 * cp.async(&S[i], &G[j], bytes[, zero unless c]): the `.s` form reads nothing and writes
 * zeros where c fails, which is how padding and ragged edges cost no branch. Anything else
 * (a scalar float16, a gather, an unaligned run) stays a synchronous store, which the
 * pipeline's barrier orders just as well. Assumes flattened, vectorized accesses.
 */
#include "passes/passes.h"

static int64_t lanes_of(const Expr *index)
{
    if (index->kind == EXPR_RAMP)
        return index->ramp.stride == 1 ? index->lanes : 0;
    return index->lanes == 1 ? 1 : 0;
}

static Expr *base_of(Expr *index)
{
    return index->kind == EXPR_RAMP ? index->ramp.base : index;
}

/* 0, 0.0 or a cast of one: what the zero-filling copy writes. */
static bool is_zero(const Expr *e)
{
    if (e->kind == EXPR_CAST)
        return is_zero(e->cast.value);
    return (e->kind == EXPR_FLOAT && e->float_value == 0.0) ||
           (e->kind == EXPR_INT && e->int_value == 0);
}

/* Whether a flat element offset is a multiple of `bytes` bytes. */
static bool aligned(Arena *a, const Buffer *b, Expr *offset, int64_t bytes)
{
    int64_t size = (int64_t)tcc_dtype_size(b->type);
    return tci_expr_known_divisor(a, offset) * size % bytes == 0;
}

/* The cp.async a store can become, or NULL. */
static Stmt *as_copy_async(Arena *a, const Stmt *s)
{
    if (s->kind != STMT_STORE || s->store.nindex != 1 || s->store.buffer->scope != TCC_SCOPE_SHARED)
        return NULL;
    Expr *value = s->store.value, *predicate = NULL;
    /* Nested guards (a split-K slice's end around a window's edge) are one predicate. */
    while (value->kind == EXPR_SELECT && is_zero(value->select.else_value)) {
        Expr *cond = value->select.cond;
        predicate = predicate ? tci_ir_binary(a, EXPR_AND, predicate, cond) : cond;
        value = value->select.then_value;
    }
    if (value->kind != EXPR_LOAD || value->load.nindex != 1 ||
        value->load.buffer->scope != TCC_SCOPE_GLOBAL || value->type != s->store.buffer->type ||
        (predicate && predicate->lanes != 1))
        return NULL;
    Expr *dst = s->store.index[0], *src = value->load.index[0];
    int64_t lanes = lanes_of(dst);
    int64_t bytes = lanes * (int64_t)tcc_dtype_size(s->store.buffer->type);
    if (lanes == 0 || lanes_of(src) != lanes || (bytes != 4 && bytes != 8 && bytes != 16))
        return NULL;
    if (!aligned(a, s->store.buffer, base_of(dst), bytes) ||
        !aligned(a, value->load.buffer, base_of(src), bytes))
        return NULL;
    return tci_stmt_copy_async(a, s->store.buffer, base_of(dst), value->load.buffer, base_of(src),
                               (int)bytes, predicate);
}

static Stmt *inject_store(Rewriter *rw, Stmt *s)
{
    return as_copy_async(rw->arena, s);
}

/* The items of a list before its last commit are in a group: their stores are converted. */
static Stmt *inject_list(Rewriter *rw, Stmt *s)
{
    if (s->kind != STMT_SEQ)
        return NULL;
    int last_commit = -1;
    for (int i = 0; i < s->seq.count; i++)
        if (s->seq.items[i]->kind == STMT_ASYNC_COMMIT)
            last_commit = i;
    Stmt **items = tci_arena_alloc(rw->arena, sizeof(Stmt *) * (size_t)(s->seq.count + 1));
    Rewriter in_group = {.arena = rw->arena, .stmt = inject_store};
    for (int i = 0; i < s->seq.count; i++)
        items[i] = tci_rewrite_stmt(i < last_commit ? &in_group : rw, s->seq.items[i]);
    return tci_stmt_seq(rw->arena, s->seq.count, items);
}

tcc_status tci_pass_inject_async_copy(const PassContext *pc, PrimFunc *func)
{
    (void)pc;
    Rewriter rw = {.arena = func->arena, .stmt = inject_list};
    func->body = tci_rewrite_stmt(&rw, func->body);
    return TCC_OK;
}
