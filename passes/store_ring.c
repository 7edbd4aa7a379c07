/*
 * store_ring: an output tile that the copy engine stores a column block at a time (bulk
 * stores, tile in column blocks: an epilogue through shared memory), marked a ring by the
 * lowering (Swizzle.ring, tci_store_ring), keeps only `ring` column blocks, so that it takes a
 * fraction of the shared memory it did and the stages of the main loop the rest (the seed
 * layer's 64 KB float16 tile 32 KB: room for a fourth stage of 48 KB). Its writers (a
 * warpgroup, or the block) then write and store it block by block: before block j's writes,
 * the issuing thread waits until its stores have read all but their last ring - 1 blocks
 * (cp.async.bulk.wait_group.read), which frees j's slot; the writers meet at their barrier;
 * they write block j into slot j % ring; they meet again; the issuing thread stores it. In the
 * tile those are the sequence
 *
 *     if (issuer) { bulk_wait_read(0) }   barriers   writes   barriers   if (issuer) { stores }
 *
 * that lower/bulk_copy.c builds, once unroll has made the writes statements (in the order of
 * their columns) and swizzle_shared has laid the tile out in blocks (block j at rows x block
 * elements times j). A marked tile whose accesses are not that sequence (writes in a loop, a
 * write whose block the simplifier cannot prove, a store that does not name its block by a
 * constant) keeps its blocks and loses the mark. Runs after swizzle_shared and before
 * plan_shared, which then finds the smaller tile.
 */
#include "passes/passes.h"

typedef struct Ring {
    Arena *arena;
    const Stmt *body; /* the function's */
    int nthread;
    VarRange threads[3];
} Ring;

static bool is_store_to(const Stmt *s, const Buffer *b)
{
    return s->kind == STMT_STORE && s->store.buffer == b;
}

/* The tile that `s` stores a column block at a time from the issuing thread (an if whose
 * body is bulk stores of one tile in column blocks), or NULL. */
static Buffer *stored_tile(const Stmt *s, int *nstores)
{
    if (s->kind != STMT_IF || s->branch.else_body)
        return NULL;
    int n;
    Stmt *const *items = tci_stmt_items(&s->branch.then_body, &n);
    Buffer *tile = NULL;
    for (int i = 0; i < n; i++) {
        if (items[i]->kind != STMT_BULK_STORE || (tile && items[i]->bulk.dst != tile))
            return NULL;
        tile = items[i]->bulk.dst;
    }
    *nstores = n;
    return tile && tile->swizzle.ring > 0 && tile->ndim >= 2 ? tile : NULL;
}

/* Whether `s` is a barrier of the writers: __syncthreads, or a named barrier in a branch. */
static bool is_writers_barrier(const Stmt *s)
{
    if (s->kind == STMT_BARRIER)
        return true;
    return s->kind == STMT_IF && !s->branch.else_body && s->branch.then_body->kind == STMT_BARRIER;
}

static bool is_store_wait(const Stmt *s)
{
    return s->kind == STMT_IF && !s->branch.else_body &&
           s->branch.then_body->kind == STMT_BULK_WAIT;
}

static Expr *first_element(Expr *index)
{
    return index->kind == EXPR_RAMP ? index->ramp.base : index;
}

/* The column block of the tile that element `index` lies in, or -1 where not provably one. */
static int64_t block_of(Ring *r, Expr *index, int64_t block_elements)
{
    Expr *b = tci_simplify(r->arena,
                           tci_ir_binary(r->arena, EXPR_DIV, first_element(index),
                                         tci_ir_int(r->arena, block_elements)),
                           r->nthread, r->threads);
    return b->kind == EXPR_INT ? b->int_value : -1;
}

/* `index` moved by -`shift` elements (a ramp's first lane, and so all of them). */
static Expr *shifted(Ring *r, Expr *index, int64_t shift)
{
    Arena *a = r->arena;
    Expr *base = tci_simplify(
        a, tci_ir_binary(a, EXPR_SUB, first_element(index), tci_ir_int(a, shift)), 0, NULL);
    return index->kind == EXPR_RAMP ? tci_ir_ramp(a, base, index->ramp.stride, index->lanes) : base;
}

/* The sequence in a block of statements, items[first..end]: the wait, the barriers, the
 * writes, the barriers, the stores (find_pattern). */
typedef struct Pattern {
    int first; /* the wait's position */
    Stmt *wait, *stores;
    Stmt **before, **after; /* the barriers */
    int nbefore, nafter;
    Stmt **writes;
    int nwrites, nstores;
    Buffer *tile;
    int nfound; /* the tile's stores in the whole function */
} Pattern;

static int64_t tile_blocks(const Buffer *tile)
{
    return tile->shape[tile->ndim - 1] / tile->swizzle.block;
}

static int64_t block_elements(const Buffer *tile)
{
    return tile->shape[tile->ndim - 2] * tile->swizzle.block;
}

static bool count_store(Visitor *v, const Stmt *s)
{
    if (s->kind == STMT_BULK_STORE && s->bulk.dst == ((const Pattern *)v->user)->tile)
        ((Pattern *)v->user)->nfound++;
    return true;
}

/* Blocks j of the stores in order, and writes in equal runs of each block in that order. */
static bool blocks_line_up(Ring *r, Pattern *p)
{
    int n;
    Stmt *const *stores = tci_stmt_items(&p->stores->branch.then_body, &n);
    int64_t elements = block_elements(p->tile), blocks = tile_blocks(p->tile);
    if (p->nstores != blocks || blocks <= p->tile->swizzle.ring || p->nwrites % p->nstores)
        return false;
    /* The tile's one sequence of stores: every other access would keep the old layout. */
    Visitor v = {.stmt = count_store, .user = (void *)p};
    tci_visit_stmt(&v, r->body);
    if (p->nfound != p->nstores)
        return false;
    for (int j = 0; j < p->nstores; j++)
        if (block_of(r, stores[j]->bulk.dst_index, elements) != j)
            return false;
    int per_block = p->nwrites / p->nstores;
    for (int i = 0; i < p->nwrites; i++)
        if (block_of(r, p->writes[i]->store.index[0], elements) != i / per_block)
            return false;
    return true;
}

/* Finds the pattern ending with the stores at items[end]. */
static bool find_pattern(Ring *r, Stmt **items, int end, Pattern *p)
{
    *p = (Pattern){.stores = items[end]};
    p->tile = stored_tile(items[end], &p->nstores);
    if (!p->tile)
        return false;
    int i = end - 1;
    while (i >= 0 && is_writers_barrier(items[i]))
        i--;
    p->after = items + i + 1, p->nafter = end - 1 - i;
    int last_write = i;
    while (i >= 0 && is_store_to(items[i], p->tile))
        i--;
    p->writes = items + i + 1, p->nwrites = last_write - i;
    int last_barrier = i;
    while (i >= 0 && is_writers_barrier(items[i]))
        i--;
    p->before = items + i + 1, p->nbefore = last_barrier - i;
    if (i < 0 || !is_store_wait(items[i]) || !p->nafter || !p->nbefore || !p->nwrites)
        return false;
    p->wait = items[i], p->first = i;
    return blocks_line_up(r, p);
}

static Stmt *seq_of(Arena *a, Stmt **items, int n)
{
    return n ? tci_stmt_seq(a, n, items) : NULL;
}

/* Block j: the wait for its slot, the barriers, its writes and its store, in the slot. */
static Stmt *ring_block(Ring *r, const Pattern *p, int j)
{
    Arena *a = r->arena;
    int ring = p->tile->swizzle.ring;
    int64_t shift = j / ring * ring * block_elements(p->tile);
    int per_block = p->nwrites / p->nstores;
    Stmt **writes = tci_arena_alloc(a, sizeof *writes * (size_t)per_block);
    for (int i = 0; i < per_block; i++) {
        const Stmt *w = p->writes[j * per_block + i];
        Expr *index = shifted(r, w->store.index[0], shift);
        writes[i] = tci_stmt_store(a, p->tile, 1, &index, w->store.value);
    }
    int n;
    const Stmt *store = tci_stmt_items(&p->stores->branch.then_body, &n)[j];
    Stmt *moved = tci_stmt_bulk_store(a, p->tile, shifted(r, store->bulk.dst_index, shift),
                                      store->bulk.map, store->bulk.coords);
    moved->bulk.cache = store->bulk.cache;
    Stmt *wait = tci_stmt_if(a, p->wait->branch.cond, tci_stmt_bulk_wait(a, ring - 1), NULL);
    Stmt *parts[5] = {wait, seq_of(a, p->before, p->nbefore), seq_of(a, writes, per_block),
                      seq_of(a, p->after, p->nafter),
                      tci_stmt_if(a, p->stores->branch.cond, moved, NULL)};
    return tci_stmt_seq(a, 5, parts);
}

/* The tile's last dimension as the ring's blocks; its strides and span follow. */
static void shrink(Buffer *tile)
{
    tile->shape[tile->ndim - 1] = tile->swizzle.ring * tile->swizzle.block;
    tile->strides[tile->ndim - 1] = 1;
    for (int d = tile->ndim - 2; d >= 0; d--)
        tile->strides[d] = tile->strides[d + 1] * tile->shape[d + 1];
    tile->elements = tile->shape[0] * tile->strides[0];
}

static Stmt *ring_seq(Rewriter *rw, Stmt *s)
{
    Ring *r = rw->user;
    if (s->kind != STMT_SEQ)
        return NULL;
    Stmt *x = tci_rewrite_stmt_children(rw, s);
    for (int end = 0; end < x->seq.count; end++) {
        Pattern p;
        if (!find_pattern(r, x->seq.items, end, &p))
            continue;
        Stmt **items = tci_arena_alloc(rw->arena, sizeof *items * (size_t)x->seq.count);
        int n = 0;
        for (int i = 0; i < p.first; i++)
            items[n++] = x->seq.items[i];
        Stmt **blocks = tci_arena_alloc(rw->arena, sizeof *blocks * (size_t)p.nstores);
        for (int j = 0; j < p.nstores; j++)
            blocks[j] = ring_block(r, &p, j);
        items[n++] = tci_stmt_seq(rw->arena, p.nstores, blocks);
        for (int i = end + 1; i < x->seq.count; i++)
            items[n++] = x->seq.items[i];
        shrink(p.tile);
        return tci_stmt_seq(rw->arena, n, items);
    }
    return x;
}

/* A tile still marked a ring with its whole width (its accesses were not the sequence):
 * unmarked, so that nothing takes it for one. */
static bool unmark_unringed(Visitor *v, const Stmt *s)
{
    (void)v;
    if (s->kind == STMT_ALLOCATE && s->alloc.buffer->swizzle.ring > 0) {
        Buffer *b = s->alloc.buffer;
        if (b->shape[b->ndim - 1] != b->swizzle.ring * b->swizzle.block)
            b->swizzle.ring = 0;
    }
    return true;
}

tcc_status tci_pass_store_ring(const PassContext *pc, PrimFunc *func)
{
    (void)pc;
    Ring r = {.arena = func->arena, .body = func->body};
    r.nthread = tci_prim_func_thread_ranges(func, r.threads);
    Rewriter rw = {.arena = func->arena, .stmt = ring_seq, .user = &r};
    func->body = tci_rewrite_stmt(&rw, func->body);
    Visitor v = {.stmt = unmark_unringed};
    tci_visit_stmt(&v, func->body);
    return TCC_OK;
}
