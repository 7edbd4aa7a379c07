/*
 * thread_sync: __syncthreads() where threads of a block communicate through shared
 * memory. Between a write and a later read of a shared buffer (or a read and a later
 * write), a barrier must run. Barriers go in front of the statement that conflicts with
 * what is pending since the last barrier, at the outermost statement list. Every thread
 * of the block must reach a barrier, so none is ever placed inside an `if` or inside a
 * thread launch narrower than the block; a conflict that would need one there is
 * refused. A loop body is checked against what its own previous iteration left pending.
 * Buffers plan_shared laid over the same bytes count as one; a cp.async or a bulk copy
 * writes its destination; mbarriers synchronize themselves and are not tracked; a `pipelined` loop
 * is left as software_pipeline and prefetch_fragments synchronized it. Assumes the launch shape
 * (func->launch) is the block's, so that a thread launch of a smaller extent is known to leave
 * threads out, and tracks only shared buffers.
 */
#include "passes/passes.h"

#include <string.h>

enum { MAX_TRACKED = 32 };

typedef struct Accesses {
    int nread, nwrite;
    const Buffer *read[MAX_TRACKED], *write[MAX_TRACKED];
    bool overflow; /* more buffers than tracked: assume every access conflicts */
} Accesses;

static void add_to(Accesses *acc, const Buffer **set, int *n, const Buffer *b)
{
    for (int i = 0; i < *n; i++)
        if (set[i] == b)
            return;
    if (*n < MAX_TRACKED)
        set[(*n)++] = b;
    else
        acc->overflow = true;
}

#define add_read(acc, b) add_to((acc), (acc)->read, &(acc)->nread, (b))
#define add_write(acc, b) add_to((acc), (acc)->write, &(acc)->nwrite, (b))

static void merge(Accesses *into, const Accesses *from)
{
    for (int i = 0; i < from->nread; i++)
        add_read(into, from->read[i]);
    for (int i = 0; i < from->nwrite; i++)
        add_write(into, from->write[i]);
    into->overflow = into->overflow || from->overflow;
}

/* The same buffer, or two that plan_shared laid over the same bytes. */
static bool same_memory(const Buffer *a, const Buffer *b)
{
    if (a == b)
        return true;
    if (a->shared_offset < 0 || b->shared_offset < 0)
        return false;
    int64_t a_end = a->shared_offset + tci_buffer_bytes(a);
    int64_t b_end = b->shared_offset + tci_buffer_bytes(b);
    return a->shared_offset < b_end && b->shared_offset < a_end;
}

static bool contains(const Buffer *const *set, int n, const Buffer *b)
{
    for (int i = 0; i < n; i++)
        if (same_memory(set[i], b))
            return true;
    return false;
}

static bool conflict(const Accesses *pending, const Accesses *next)
{
    bool any = pending->nread + pending->nwrite > 0 && next->nread + next->nwrite > 0;
    if ((pending->overflow || next->overflow) && any)
        return true;
    for (int i = 0; i < next->nread; i++)
        if (contains(pending->write, pending->nwrite, next->read[i]))
            return true;
    for (int i = 0; i < next->nwrite; i++)
        if (contains(pending->read, pending->nread, next->write[i]))
            return true;
    return false;
}

static bool note_shared_load(Visitor *v, const Expr *e)
{
    Accesses *acc = v->user;
    if (e->kind == EXPR_LOAD && e->load.buffer->scope == TCC_SCOPE_SHARED)
        add_read(acc, e->load.buffer);
    return true;
}

/* The shared buffers an expression loads from. */
static void expr_reads(const Expr *e, Accesses *acc)
{
    Visitor v = {.expr = note_shared_load, .user = acc};
    tci_visit_expr(&v, e);
}

/* The shared-memory accesses of a leaf statement. */
static void leaf_accesses(const Stmt *s, Accesses *acc)
{
    if (s->kind == STMT_STORE) {
        expr_reads(s->store.value, acc);
        for (int i = 0; i < s->store.nindex; i++)
            expr_reads(s->store.index[i], acc);
        if (s->store.buffer->scope == TCC_SCOPE_SHARED)
            add_write(acc, s->store.buffer);
    } else if (s->kind == STMT_WMMA && s->wmma.memory &&
               s->wmma.memory->scope == TCC_SCOPE_SHARED) {
        if (s->wmma.op == WMMA_STORE)
            add_write(acc, s->wmma.memory);
        else
            add_read(acc, s->wmma.memory);
    } else if (s->kind == STMT_COPY_ASYNC) {
        add_write(acc, s->copy.dst);
    } else if (s->kind == STMT_BULK_COPY) {
        add_write(acc, s->bulk.dst);
    } else if (s->kind == STMT_BULK_STORE) {
        add_read(acc, s->bulk.dst); /* the tile it stores */
    }
    if (s->kind == STMT_WMMA && tci_wmma_operands_in_memory(&s->wmma)) {
        add_read(acc, s->wmma.a);
        add_read(acc, s->wmma.b);
    }
}

static bool note_leaf(Visitor *v, const Stmt *s)
{
    leaf_accesses(s, v->user);
    return true;
}

/* Every shared access of a statement, wherever it is. */
static void all_accesses(const Stmt *s, Accesses *acc)
{
    Visitor v = {.expr = note_shared_load, .stmt = note_leaf, .user = acc};
    tci_visit_stmt(&v, s);
}

/* The accesses a statement makes before its first barrier; *barrier says one exists on
 * every path through it. */
static void exposed(const Stmt *s, Accesses *acc, bool *barrier)
{
    *barrier = false;
    if (!s)
        return;
    switch (s->kind) {
    case STMT_BARRIER:
        *barrier = !s->barrier.arrive; /* bar.arrive waits for nobody */
        return;
    case STMT_SEQ:
        for (int i = 0; i < s->seq.count && !*barrier; i++)
            exposed(s->seq.items[i], acc, barrier);
        return;
    case STMT_FOR:
        /* A pipelined loop is ordered against what precedes it by its own barriers (and the
         * fragments prefetch_fragments loads before it read a stage its first copies leave
         * alone). */
        if (!s->loop.pipelined)
            exposed(s->loop.body, acc, barrier);
        return;
    case STMT_ALLOCATE:
        exposed(s->alloc.body, acc, barrier);
        return;
    case STMT_IF: {
        bool then_barrier, else_barrier = false;
        expr_reads(s->branch.cond, acc);
        exposed(s->branch.then_body, acc, &then_barrier);
        if (s->branch.else_body)
            exposed(s->branch.else_body, acc, &else_barrier);
        *barrier = then_barrier && else_barrier;
        return;
    }
    default:
        leaf_accesses(s, acc);
        return;
    }
}

typedef struct Sync {
    Arena *arena;
    const PrimFunc *func;
    bool uniform;  /* every thread of the block runs the statements being visited */
    bool diverged; /* a barrier was needed where not every thread runs */
} Sync;

static Stmt *sync(Sync *y, Stmt *s, Accesses *pending);

/* A statement list: a barrier before each item whose first accesses conflict. */
static Stmt *sync_list(Sync *y, int count, Stmt *const *items, Accesses *pending)
{
    Arena *a = y->arena;
    Stmt **out = tci_arena_alloc(a, sizeof(Stmt *) * (size_t)(2 * count + 1));
    int n = 0;
    for (int i = 0; i < count; i++) {
        Accesses after = {0}, first = {0};
        Stmt *item = sync(y, items[i], &after);
        bool has_barrier;
        exposed(item, &first, &has_barrier);
        if (conflict(pending, &first)) {
            if (y->uniform)
                out[n++] = tci_stmt_barrier(a);
            else
                y->diverged = true;
            memset(pending, 0, sizeof *pending);
        }
        out[n++] = item;
        if (has_barrier)
            *pending = after;
        else
            merge(pending, &after);
    }
    return tci_stmt_seq(a, n, out);
}

static Stmt *sync_loop(Sync *y, Stmt *s, Accesses *pending)
{
    /* What one iteration leaves pending is what the next one starts with. */
    Accesses carried = {0};
    sync_list(y, 1, &s->loop.body, &carried);
    Accesses end = carried;
    Stmt *body = sync_list(y, 1, &s->loop.body, &end);
    Stmt *copy = tci_arena_alloc(y->arena, sizeof *copy);
    *copy = *s;
    copy->loop.body = body;
    *pending = end;
    return copy;
}

/* Visits a body that only some threads may run. */
static Stmt *sync_divergent(Sync *y, Stmt *s, Accesses *pending, bool divergent)
{
    bool uniform = y->uniform;
    y->uniform = uniform && !divergent;
    Stmt *out = sync(y, s, pending);
    y->uniform = uniform;
    return out;
}

static Stmt *sync(Sync *y, Stmt *s, Accesses *pending)
{
    Arena *a = y->arena;
    if (!s) /* an empty body (loop IR read from text has them) */
        return NULL;
    switch (s->kind) {
    case STMT_SEQ:
        return sync_list(y, s->seq.count, s->seq.items, pending);
    case STMT_FOR:
        if (s->loop.kind == FOR_THREAD) {
            /* A virtual thread (loop IR read from text, inject_virtual_thread not run) has no
             * launch size: the loop is as narrow as it may be. */
            bool narrow = s->loop.tag > TCC_THREAD_Z ||
                          !tci_expr_is_int(s->loop.extent, y->func->launch[s->loop.tag]);
            Stmt *copy = tci_arena_alloc(a, sizeof *copy);
            *copy = *s;
            copy->loop.body = sync_divergent(y, s->loop.body, pending, narrow);
            return copy;
        }
        if (s->loop.pipelined) {
            /* software_pipeline synchronized it: a barrier each iteration. */
            memset(pending, 0, sizeof *pending);
            all_accesses(s, pending);
            return s;
        }
        return sync_loop(y, s, pending);
    case STMT_ALLOCATE:
        return tci_stmt_allocate(a, s->alloc.buffer, sync(y, s->alloc.body, pending));
    case STMT_IF: {
        Accesses other = *pending;
        expr_reads(s->branch.cond, pending);
        Stmt *then_body = sync_divergent(y, s->branch.then_body, pending, true);
        Stmt *else_body =
            s->branch.else_body ? sync_divergent(y, s->branch.else_body, &other, true) : NULL;
        merge(pending, &other);
        return tci_stmt_if(a, s->branch.cond, then_body, else_body);
    }
    case STMT_BARRIER:
        if (!s->barrier.arrive) /* bar.arrive waits for nobody */
            memset(pending, 0, sizeof *pending);
        return s;
    default:
        leaf_accesses(s, pending);
        return s;
    }
}

tcc_status tci_pass_thread_sync(const PassContext *pc, PrimFunc *func)
{
    Accesses pending = {0};
    Sync y = {func->arena, func, true, false};
    Stmt *body = sync(&y, func->body, &pending);
    if (y.diverged)
        return tci_fail(pc->ctx, TCC_ERROR_SCHEDULE,
                        "threads exchange data through shared memory inside code that only some "
                        "threads run (an if, or a thread loop narrower than the block): no "
                        "barrier can be placed there");
    func->body = body;
    return TCC_OK;
}
