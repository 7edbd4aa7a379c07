/*
 * plan_shared: lays every shared allocation out in the kernel's dynamic shared memory
 * (TVM's StorageRewrite, for shared memory only). Each allocation lives from its first
 * access to its last, in program order; an access inside a serial loop that the
 * allocation encloses keeps it alive for the whole loop, since the next iteration may read
 * what this one wrote. Thread launches are not loops in time: every thread runs their body
 * once. Allocations whose lives do not overlap may share bytes; the largest are placed
 * first, each at the lowest offset (a multiple of 128 bytes, or of a swizzled tile's pattern)
 * clear of the live ones. So the
 * C tile an epilogue reads takes the bytes the stages of A and B held.
 *
 * Sets each buffer's shared_offset (buffers are shared by every statement that uses them,
 * so they are updated in place) and func->shared_bytes. Assumes thread_sync runs after it:
 * it treats overlapping buffers as one and orders their accesses with barriers.
 */
#include "passes/passes.h"

#include <stdlib.h>

enum { ALIGN = 128, MAX_DEPTH = 64 };

typedef struct Life {
    Buffer *buffer;
    int loop_depth;  /* serial loops around the allocation */
    int first, last; /* -1 until accessed */
    int open_loop;   /* the loop (by number) that must end before `last` is known, or -1 */
    int order;       /* position among the allocations */
    bool pinned;     /* an mbarrier: its bytes are never reused */
} Life;

typedef struct Planner {
    Life *lives;
    int count, cap;
    int time; /* one tick per statement */
    int loop_start[MAX_DEPTH], loop_id[MAX_DEPTH];
    int depth, next_loop;
    bool overflow;
} Planner;

static Life *life_of(Planner *p, const Buffer *b)
{
    for (int i = p->count - 1; i >= 0; i--)
        if (p->lives[i].buffer == b)
            return &p->lives[i];
    return NULL;
}

static void touch(Planner *p, const Buffer *b)
{
    Life *l = b->scope == TCC_SCOPE_SHARED ? life_of(p, b) : NULL;
    if (!l)
        return;
    int start = p->time;
    if (p->depth > l->loop_depth) {
        start = p->loop_start[l->loop_depth];
        l->open_loop = p->loop_id[l->loop_depth];
    }
    if (l->first < 0 || start < l->first)
        l->first = start;
    if (p->time > l->last)
        l->last = p->time;
}

static bool touch_load(Visitor *v, const Expr *e)
{
    if (e->kind == EXPR_LOAD)
        touch(v->user, e->load.buffer);
    return true;
}

static void touch_exprs(Planner *p, const Stmt *s)
{
    /* Only the statement's own expressions: its children are walked by walk(). */
    Visitor v = {.expr = touch_load, .user = p};
    switch (s->kind) {
    case STMT_STORE:
        for (int i = 0; i < s->store.nindex; i++)
            tci_visit_expr(&v, s->store.index[i]);
        tci_visit_expr(&v, s->store.value);
        touch(p, s->store.buffer);
        break;
    case STMT_IF:
        tci_visit_expr(&v, s->branch.cond);
        break;
    case STMT_WMMA:
        tci_visit_stmt(&v, s);
        if (s->wmma.memory)
            touch(p, s->wmma.memory);
        if (tci_wmma_operands_in_memory(&s->wmma)) {
            touch(p, s->wmma.a);
            touch(p, s->wmma.b);
        }
        break;
    case STMT_COPY_ASYNC:
        tci_visit_stmt(&v, s);
        touch(p, s->copy.dst);
        break;
    case STMT_BULK_COPY:
    case STMT_BULK_STORE: /* a store's `dst` is the tile it reads */
        tci_visit_stmt(&v, s);
        touch(p, s->bulk.dst);
        if (s->bulk.barrier)
            touch(p, s->bulk.barrier);
        break;
    case STMT_MBARRIER:
        tci_visit_stmt(&v, s);
        {
            touch(p, s->mbarrier.barrier);
            Life *l = life_of(p, s->mbarrier.barrier);
            if (l)
                l->pinned = true;
            break;
        }
    default:
        break;
    }
}

static void walk(Planner *p, const Stmt *s)
{
    if (!s)
        return;
    p->time++;
    touch_exprs(p, s);
    switch (s->kind) {
    case STMT_SEQ:
        for (int i = 0; i < s->seq.count; i++)
            walk(p, s->seq.items[i]);
        return;
    case STMT_IF:
        walk(p, s->branch.then_body);
        walk(p, s->branch.else_body);
        return;
    case STMT_ALLOCATE:
        if (s->alloc.buffer->scope == TCC_SCOPE_SHARED) {
            if (p->count == p->cap) {
                int cap = p->cap ? 2 * p->cap : 16;
                Life *grown = realloc(p->lives, sizeof *grown * (size_t)cap);
                if (!grown) {
                    p->overflow = true;
                    return;
                }
                p->lives = grown;
                p->cap = cap;
            }
            p->lives[p->count] = (Life){s->alloc.buffer, p->depth, -1, -1, -1, p->count, false};
            p->count++;
        }
        walk(p, s->alloc.body);
        return;
    case STMT_FOR: {
        bool in_time = s->loop.kind != FOR_THREAD;
        if (in_time && p->depth == MAX_DEPTH) {
            p->overflow = true;
            return;
        }
        int id = p->next_loop++;
        if (in_time) {
            p->loop_start[p->depth] = p->time;
            p->loop_id[p->depth++] = id;
        }
        walk(p, s->loop.body);
        if (!in_time)
            return;
        p->depth--;
        for (int i = 0; i < p->count; i++)
            if (p->lives[i].open_loop == id) {
                p->lives[i].last = p->time;
                p->lives[i].open_loop = -1;
            }
        return;
    }
    default:
        return;
    }
}

/* Largest first; among equals, the one used first (a total order, so the plan is the same
 * on every C library). */
static int by_size_descending(const void *x, const void *y)
{
    const Life *l = x, *r = y;
    int64_t a = tci_buffer_bytes(l->buffer), b = tci_buffer_bytes(r->buffer);
    if (a != b)
        return a < b ? 1 : -1;
    if (l->first != r->first)
        return l->first < r->first ? -1 : 1;
    return l->order < r->order ? -1 : l->order > r->order;
}

static bool overlap_in_time(const Life *a, const Life *b)
{
    return a->first <= b->last && b->first <= a->last;
}

/* A swizzled tile starts a whole pattern of its swizzle (1024 bytes for rows of 128), so that
 * the row bits of its addresses are its rows' (wgmma's descriptors swizzle addresses). */
static int64_t alignment(const Buffer *b)
{
    int64_t atom = b->swizzle.bits ? tci_swizzle_atom_bytes(b) : 0;
    return atom > ALIGN ? atom : ALIGN;
}

/* The lowest aligned offset where `l` overlaps no live buffer placed before it. */
static int64_t place(const Life *lives, int placed, const Life *l)
{
    int64_t offset = 0, align = alignment(l->buffer);
    bool moved = true;
    while (moved) {
        moved = false;
        for (int i = 0; i < placed; i++) {
            const Buffer *other = lives[i].buffer;
            int64_t end = other->shared_offset + tci_buffer_bytes(other);
            if (overlap_in_time(&lives[i], l) && offset < end &&
                other->shared_offset < offset + tci_buffer_bytes(l->buffer)) {
                offset = (end + align - 1) / align * align;
                moved = true;
            }
        }
    }
    return offset;
}

tcc_status tci_pass_plan_shared(const PassContext *pc, PrimFunc *func)
{
    Planner p = {0};
    walk(&p, func->body);
    if (p.overflow) {
        free(p.lives);
        return tci_fail(pc->ctx, TCC_ERROR_OUT_OF_MEMORY,
                        "plan_shared: too many shared buffers or loops nested too deep");
    }
    /* A buffer never accessed still gets bytes of its own: give it the whole function. So
     * does an mbarrier: a thread may still poll one after the others moved on (warp
     * specialization's producer), and the PTX ISA asks for mbarrier.inval before its bytes
     * serve anything else. */
    for (int i = 0; i < p.count; i++)
        if (p.lives[i].first < 0 || p.lives[i].pinned) {
            p.lives[i].first = 0;
            p.lives[i].last = p.time;
        }
    if (p.count > 1) /* qsort takes no NULL array, even empty */
        qsort(p.lives, (size_t)p.count, sizeof *p.lives, by_size_descending);
    int64_t total = 0;
    for (int i = 0; i < p.count; i++) {
        Buffer *b = p.lives[i].buffer;
        b->shared_offset = place(p.lives, i, &p.lives[i]);
        if (b->shared_offset + tci_buffer_bytes(b) > total)
            total = b->shared_offset + tci_buffer_bytes(b);
    }
    func->shared_bytes = total;
    free(p.lives);
    return TCC_OK;
}
