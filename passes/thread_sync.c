/*
 * thread_sync: __syncthreads() where threads of a block communicate through shared
 * memory. Between a write and a later read of a shared buffer (or a read and a later
 * write), a barrier must run. Barriers go in front of the statement that conflicts with
 * what is pending since the last barrier, at the outermost statement list, so they
 * stay out of thread-dependent control flow. A loop body is checked against what its
 * own previous iteration left pending.
 */
#include "lower.h"

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

static bool contains(const Buffer *const *set, int n, const Buffer *b)
{
    for (int i = 0; i < n; i++)
        if (set[i] == b)
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

static void expr_reads(const Expr *e, Accesses *acc)
{
    if (!e)
        return;
    switch (e->kind) {
    case EXPR_INT:
    case EXPR_FLOAT:
    case EXPR_VAR:
    case EXPR_ACCESS:
    case EXPR_REDUCE:
        return;
    case EXPR_LOAD:
        if (e->load.buffer->scope == TCC_SCOPE_SHARED)
            add_read(acc, e->load.buffer);
        for (int i = 0; i < e->load.nindex; i++)
            expr_reads(e->load.index[i], acc);
        return;
    case EXPR_RAMP:
        expr_reads(e->ramp.base, acc);
        return;
    case EXPR_CAST:
        expr_reads(e->cast.value, acc);
        return;
    case EXPR_NOT:
        expr_reads(e->bin.a, acc);
        return;
    case EXPR_SELECT:
        expr_reads(e->select.cond, acc);
        expr_reads(e->select.then_value, acc);
        expr_reads(e->select.else_value, acc);
        return;
    default:
        expr_reads(e->bin.a, acc);
        expr_reads(e->bin.b, acc);
        return;
    }
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
    }
}

/* The accesses a statement makes before its first barrier; *barrier says one exists on
 * every path through it. */
static void exposed(const Stmt *s, Accesses *acc, bool *barrier)
{
    *barrier = false;
    switch (s->kind) {
    case STMT_BARRIER:
        *barrier = true;
        return;
    case STMT_SEQ:
        for (int i = 0; i < s->seq.count && !*barrier; i++)
            exposed(s->seq.items[i], acc, barrier);
        return;
    case STMT_FOR:
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

static Stmt *sync(Arena *a, Stmt *s, Accesses *pending);

/* A statement list: a barrier before each item whose first accesses conflict. */
static Stmt *sync_list(Arena *a, int count, Stmt *const *items, Accesses *pending)
{
    Stmt **out = tcc_arena_alloc(a, sizeof(Stmt *) * (size_t)(2 * count + 1));
    int n = 0;
    for (int i = 0; i < count; i++) {
        Accesses after = {0}, first = {0};
        Stmt *item = sync(a, items[i], &after);
        bool has_barrier;
        exposed(item, &first, &has_barrier);
        if (conflict(pending, &first)) {
            out[n++] = tcc_stmt_barrier(a);
            memset(pending, 0, sizeof *pending);
        }
        out[n++] = item;
        if (has_barrier)
            *pending = after;
        else
            merge(pending, &after);
    }
    return tcc_stmt_seq(a, n, out);
}

static Stmt *sync_loop(Arena *a, Stmt *s, Accesses *pending)
{
    /* What one iteration leaves pending is what the next one starts with. */
    Accesses carried = {0};
    sync_list(a, 1, &s->loop.body, &carried);
    Accesses end = carried;
    Stmt *body = sync_list(a, 1, &s->loop.body, &end);
    Stmt *copy = tcc_arena_alloc(a, sizeof *copy);
    *copy = *s;
    copy->loop.body = body;
    *pending = end;
    return copy;
}

static Stmt *sync(Arena *a, Stmt *s, Accesses *pending)
{
    switch (s->kind) {
    case STMT_SEQ:
        return sync_list(a, s->seq.count, s->seq.items, pending);
    case STMT_FOR:
        if (s->loop.kind == FOR_THREAD) {
            Stmt *copy = tcc_arena_alloc(a, sizeof *copy);
            *copy = *s;
            copy->loop.body = sync(a, s->loop.body, pending);
            return copy;
        }
        return sync_loop(a, s, pending);
    case STMT_ALLOCATE:
        return tcc_stmt_allocate(a, s->alloc.buffer, sync(a, s->alloc.body, pending));
    case STMT_IF: {
        Accesses other = *pending;
        expr_reads(s->branch.cond, pending);
        Stmt *then_body = sync(a, s->branch.then_body, pending);
        Stmt *else_body = s->branch.else_body ? sync(a, s->branch.else_body, &other) : NULL;
        merge(pending, &other);
        return tcc_stmt_if(a, s->branch.cond, then_body, else_body);
    }
    case STMT_BARRIER:
        memset(pending, 0, sizeof *pending);
        return s;
    default:
        leaf_accesses(s, pending);
        return s;
    }
}

tcc_status tcc_pass_thread_sync(tcc_context *ctx, Kernel *kernel)
{
    (void)ctx;
    Accesses pending = {0};
    kernel->body = sync(kernel->arena, kernel->body, &pending);
    return TCC_OK;
}
