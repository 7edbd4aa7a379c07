/*
 * swizzle_shared: every access to a swizzled shared buffer (Swizzle, ir/ir.h) goes where its
 * element lives: index i becomes xor(i, i / 2^shift % 2^bits * 2^base). The terms of i that
 * are multiples of the swizzle's period (a stage's offset) are added outside, where they do
 * not change it, so that what is left is the same in every iteration. A vector of at most
 * 16 bytes stays one: it lies in one 16-byte chunk, which the swizzle moves whole.
 * ldmatrix's lanes are swizzled by codegen, which addresses them one by one; wgmma's operands
 * keep their logical offsets, as its shared-memory descriptors name the swizzle and the
 * hardware applies it (rows of 32, 64 or 128 bytes only: its three swizzle modes); wmma.load and
 * stores of fragments, which take one row stride, cannot read or write a swizzled tile and
 * are refused. Assumes flattened accesses, and runs after the passes that read indices as
 * sums (vectorize, inject_async_copy).
 */
#include "passes/passes.h"

typedef struct Swizzler {
    const PassContext *pc;
    Arena *arena;
    bool failed;
    /* The thread indices' ranges: a thread's stores into a tile in column blocks (an epilogue's
     * output tile) then address it without the block's divisions and remainders. */
    int nthread;
    VarRange threads[3];
} Swizzler;

static Expr *swizzled(Swizzler *z, const Buffer *b, Expr *index)
{
    Arena *a = z->arena;
    if (index->kind == EXPR_RAMP) {
        int64_t bytes = (int64_t)index->lanes * (int64_t)tcc_dtype_size(b->type);
        if (index->ramp.stride != 1 || bytes > 16 ||
            tci_expr_known_divisor(a, index->ramp.base) % index->lanes != 0) {
            if (!z->failed)
                tci_fail(z->pc->ctx, TCC_ERROR_SCHEDULE,
                         "swizzle_shared: a vector of %d elements of '%s' may cross a 16-byte "
                         "chunk, which the swizzle moves apart",
                         index->lanes, b->name);
            z->failed = true;
            return index;
        }
        return tci_ir_ramp(a, swizzled(z, b, index->ramp.base), index->ramp.stride, index->lanes);
    }
    Expr *aligned, *rest;
    tci_swizzle_split(a, b, index, &aligned, &rest);
    return tci_ir_binary(a, EXPR_ADD, tci_swizzle_index(a, b, rest), aligned);
}

static bool is_swizzled(const Buffer *b)
{
    return b && b->swizzle.bits > 0;
}

static Expr *swizzle_expr(Rewriter *rw, Expr *e)
{
    if (e->kind != EXPR_LOAD || !is_swizzled(e->load.buffer))
        return NULL;
    Expr *x = tci_rewrite_expr_children(rw, e);
    Expr *index = swizzled(rw->user, e->load.buffer, x->load.index[0]);
    return tci_ir_load(rw->arena, e->load.buffer, 1, &index);
}

/* wgmma's descriptors name one of three swizzles: rows of 32, 64 or 128 bytes, permuted by
 * their 128-byte line (tci_buffer_swizzle's layout for such rows). */
static bool wgmma_reads(Swizzler *z, const Buffer *b)
{
    int64_t columns = b->swizzle.block ? b->swizzle.block : b->shape[b->ndim - 1];
    int64_t row = columns * (int64_t)tcc_dtype_size(b->type);
    if (is_swizzled(b) && row <= 128)
        return true;
    if (!z->failed)
        tci_fail(z->pc->ctx, TCC_ERROR_SCHEDULE,
                 "swizzle_shared: wgmma reads '%s' through a descriptor, which needs it swizzled "
                 "in rows of 32, 64 or 128 bytes (its rows are %lld bytes%s)",
                 b->name, (long long)row, is_swizzled(b) ? "" : ", not swizzled");
    z->failed = true;
    return false;
}

static Stmt *swizzle_stmt(Rewriter *rw, Stmt *s)
{
    Swizzler *z = rw->user;
    if (s->kind == STMT_WMMA && tci_wmma_operands_in_memory(&s->wmma)) {
        if (wgmma_reads(z, s->wmma.a))
            wgmma_reads(z, s->wmma.b);
        return s;
    }
    if (s->kind == STMT_STORE && is_swizzled(s->store.buffer)) {
        Stmt *x = tci_rewrite_stmt_children(rw, s);
        Expr *index = swizzled(z, s->store.buffer, x->store.index[0]);
        if (s->store.buffer->swizzle.block)
            index = tci_simplify(rw->arena, index, z->nthread, z->threads);
        return tci_stmt_store(rw->arena, s->store.buffer, 1, &index, x->store.value);
    }
    if (s->kind == STMT_COPY_ASYNC && is_swizzled(s->copy.dst)) {
        Stmt *x = tci_rewrite_stmt_children(rw, s);
        return tci_stmt_copy_async(rw->arena, x->copy.dst,
                                   swizzled(z, x->copy.dst, x->copy.dst_index), x->copy.src,
                                   x->copy.src_index, x->copy.bytes, x->copy.predicate);
    }
    if (s->kind == STMT_WMMA && is_swizzled(s->wmma.memory) &&
        (s->wmma.family != TENSOR_MMA_SYNC || s->wmma.op == WMMA_STORE ||
         s->wmma.memory->swizzle.block)) {
        if (!z->failed)
            tci_fail(z->pc->ctx, TCC_ERROR_SCHEDULE,
                     "swizzle_shared: '%s' is swizzled, but %s; only ldmatrix (mma_sync) and wgmma "
                     "read a swizzled tile",
                     s->wmma.memory->name,
                     s->wmma.op == WMMA_STORE        ? "a fragment store writes it by rows"
                     : s->wmma.memory->swizzle.block ? "ldmatrix cannot read column blocks"
                                                     : "wmma.load reads it by rows");
        z->failed = true;
    }
    return NULL;
}

tcc_status tci_pass_swizzle_shared(const PassContext *pc, PrimFunc *func)
{
    Swizzler z = {.pc = pc, .arena = func->arena};
    z.nthread = tci_prim_func_thread_ranges(func, z.threads);
    Rewriter rw = {.arena = func->arena, .expr = swizzle_expr, .stmt = swizzle_stmt, .user = &z};
    Stmt *body = tci_rewrite_stmt(&rw, func->body);
    if (z.failed)
        return TCC_ERROR_SCHEDULE;
    func->body = body;
    return TCC_OK;
}
