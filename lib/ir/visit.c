/* Generic traversal of the loop IR: a rewriter with callbacks, a read-only visitor, and
 * substitution. */
#include "ir/ir.h"

#include <string.h>

static Expr **rewrite_list(Rewriter *rw, int n, Expr **items, bool *changed)
{
    Expr **out = items;
    for (int i = 0; i < n; i++) {
        Expr *e = tci_rewrite_expr(rw, items[i]);
        if (e != items[i] && out == items) {
            out = tci_arena_alloc(rw->arena, sizeof(Expr *) * (size_t)n);
            memcpy(out, items, sizeof(Expr *) * (size_t)n);
        }
        out[i] = e;
    }
    if (out != items)
        *changed = true;
    return out;
}

Expr *tci_rewrite_expr_children(Rewriter *rw, Expr *e)
{
    Arena *a = rw->arena;
    bool changed = false;
    switch (e->kind) {
    case EXPR_INT:
    case EXPR_FLOAT:
    case EXPR_VAR:
        return e;
    case EXPR_NOT: {
        Expr *x = tci_rewrite_expr(rw, e->bin.a);
        return x == e->bin.a ? e : tci_ir_not(a, x);
    }
    case EXPR_SELECT: {
        Expr *c = tci_rewrite_expr(rw, e->select.cond);
        Expr *t = tci_rewrite_expr(rw, e->select.then_value);
        Expr *f = tci_rewrite_expr(rw, e->select.else_value);
        if (c == e->select.cond && t == e->select.then_value && f == e->select.else_value)
            return e;
        return tci_ir_select(a, c, t, f);
    }
    case EXPR_CAST: {
        Expr *x = tci_rewrite_expr(rw, e->cast.value);
        return x == e->cast.value ? e : tci_ir_cast(a, e->type, x);
    }
    case EXPR_LOAD: {
        Expr **index = rewrite_list(rw, e->load.nindex, e->load.index, &changed);
        return changed ? tci_ir_load(a, e->load.buffer, e->load.nindex, index) : e;
    }
    case EXPR_RAMP: {
        Expr *base = tci_rewrite_expr(rw, e->ramp.base);
        return base == e->ramp.base ? e : tci_ir_ramp(a, base, e->ramp.stride, e->lanes);
    }
    case EXPR_ACCESS: {
        Expr **index = rewrite_list(rw, e->access.nindex, e->access.index, &changed);
        if (!changed)
            return e;
        Expr *copy = tci_arena_alloc(a, sizeof *copy);
        *copy = *e;
        copy->access.index = index;
        return copy;
    }
    case EXPR_REDUCE: {
        Expr *source = tci_rewrite_expr(rw, e->reduce.source);
        if (source == e->reduce.source)
            return e;
        Expr *copy = tci_arena_alloc(a, sizeof *copy);
        *copy = *e;
        copy->reduce.source = source;
        return copy;
    }
    default: {
        Expr *x = tci_rewrite_expr(rw, e->bin.a);
        Expr *y = tci_rewrite_expr(rw, e->bin.b);
        return (x == e->bin.a && y == e->bin.b) ? e : tci_ir_binary(a, e->kind, x, y);
    }
    }
}

Expr *tci_rewrite_expr(Rewriter *rw, Expr *e)
{
    if (!e)
        return NULL;
    if (rw->expr) {
        Expr *replaced = rw->expr(rw, e);
        if (replaced)
            return replaced;
    }
    return tci_rewrite_expr_children(rw, e);
}

static Stmt *copy_stmt(Arena *arena, const Stmt *s)
{
    Stmt *copy = tci_arena_alloc(arena, sizeof *copy);
    *copy = *s;
    return copy;
}

/* NULL stays NULL: the barrier index before software_pipeline, the absent offsets. */
static Expr *rewrite_optional(Rewriter *rw, Expr *e, bool *changed)
{
    Expr *out = e ? tci_rewrite_expr(rw, e) : NULL;
    *changed = *changed || out != e;
    return out;
}

static Stmt *rewrite_bulk_copy(Rewriter *rw, Stmt *s)
{
    bool changed = false;
    Expr *coords[TCI_MAX_MAP_RANK], *offsets[3];
    for (int d = 0; d < s->bulk.map->enc.rank; d++)
        coords[d] = rewrite_optional(rw, s->bulk.coords[d], &changed);
    for (int d = 0; d < 3; d++)
        offsets[d] = rewrite_optional(rw, s->bulk.offsets[d], &changed);
    Expr *dst = rewrite_optional(rw, s->bulk.dst_index, &changed);
    Expr *barrier = rewrite_optional(rw, s->bulk.barrier_index, &changed);
    if (!changed)
        return s;
    Stmt *out = tci_stmt_bulk_copy(rw->arena, s->bulk.dst, dst, s->bulk.map, coords, offsets,
                                   s->bulk.barrier, barrier);
    out->bulk.multicast = s->bulk.multicast;
    out->bulk.cache = s->bulk.cache;
    out->kind = s->kind; /* a store's fields are a copy's */
    return out;
}

static Stmt *rewrite_wmma(Rewriter *rw, Stmt *s)
{
    WmmaStmt w = s->wmma;
    bool changed = false;
    w.fragment_index = tci_rewrite_expr(rw, w.fragment_index);
    w.a_index = tci_rewrite_expr(rw, w.a_index);
    w.b_index = tci_rewrite_expr(rw, w.b_index);
    w.c_index = tci_rewrite_expr(rw, w.c_index);
    w.accumulate = tci_rewrite_expr(rw, w.accumulate);
    w.memory_index = rewrite_list(rw, w.nindex, w.memory_index, &changed);
    changed = changed || w.fragment_index != s->wmma.fragment_index ||
              w.a_index != s->wmma.a_index || w.b_index != s->wmma.b_index ||
              w.c_index != s->wmma.c_index || w.accumulate != s->wmma.accumulate;
    if (!changed)
        return s;
    Stmt *copy = copy_stmt(rw->arena, s);
    copy->wmma = w;
    return copy;
}

Stmt *tci_rewrite_stmt_children(Rewriter *rw, Stmt *s)
{
    Arena *a = rw->arena;
    bool changed = false;
    switch (s->kind) {
    case STMT_SEQ: {
        Stmt **items = s->seq.items;
        for (int i = 0; i < s->seq.count; i++) {
            Stmt *x = tci_rewrite_stmt(rw, s->seq.items[i]);
            if (x != s->seq.items[i] && items == s->seq.items) {
                items = tci_arena_alloc(a, sizeof(Stmt *) * (size_t)s->seq.count);
                memcpy(items, s->seq.items, sizeof(Stmt *) * (size_t)s->seq.count);
            }
            items[i] = x;
        }
        return items == s->seq.items ? s : tci_stmt_seq(a, s->seq.count, items);
    }
    case STMT_FOR: {
        Expr *min = tci_rewrite_expr(rw, s->loop.min);
        Expr *extent = tci_rewrite_expr(rw, s->loop.extent);
        Stmt *body = tci_rewrite_stmt(rw, s->loop.body);
        if (min == s->loop.min && extent == s->loop.extent && body == s->loop.body)
            return s;
        Stmt *copy = copy_stmt(a, s);
        copy->loop.min = min;
        copy->loop.extent = extent;
        copy->loop.body = body;
        return copy;
    }
    case STMT_STORE: {
        Expr **index = rewrite_list(rw, s->store.nindex, s->store.index, &changed);
        Expr *value = tci_rewrite_expr(rw, s->store.value);
        if (!changed && value == s->store.value)
            return s;
        return tci_stmt_store(a, s->store.buffer, s->store.nindex, index, value);
    }
    case STMT_IF: {
        Expr *cond = tci_rewrite_expr(rw, s->branch.cond);
        Stmt *then_body = tci_rewrite_stmt(rw, s->branch.then_body);
        Stmt *else_body = s->branch.else_body ? tci_rewrite_stmt(rw, s->branch.else_body) : NULL;
        if (cond == s->branch.cond && then_body == s->branch.then_body &&
            else_body == s->branch.else_body)
            return s;
        return tci_stmt_if(a, cond, then_body, else_body);
    }
    case STMT_ALLOCATE: {
        Stmt *body = tci_rewrite_stmt(rw, s->alloc.body);
        return body == s->alloc.body ? s : tci_stmt_allocate(a, s->alloc.buffer, body);
    }
    case STMT_BARRIER:
    case STMT_ASYNC_COMMIT:
    case STMT_ASYNC_WAIT:
    case STMT_BULK_WAIT:
    case STMT_WGMMA_SYNC:
    case STMT_SETMAXNREG:
        return s;
    case STMT_WMMA:
        return rewrite_wmma(rw, s);
    case STMT_BULK_COPY:
    case STMT_BULK_STORE:
        return rewrite_bulk_copy(rw, s);
    case STMT_MBARRIER: {
        Expr *index = tci_rewrite_expr(rw, s->mbarrier.index);
        Expr *parity = s->mbarrier.parity ? tci_rewrite_expr(rw, s->mbarrier.parity) : NULL;
        if (index == s->mbarrier.index && parity == s->mbarrier.parity)
            return s;
        return tci_stmt_mbarrier(a, s->mbarrier.op, s->mbarrier.barrier, index, s->mbarrier.value,
                                 parity);
    }
    case STMT_COPY_ASYNC: {
        Expr *dst = tci_rewrite_expr(rw, s->copy.dst_index);
        Expr *src = tci_rewrite_expr(rw, s->copy.src_index);
        Expr *pred = s->copy.predicate ? tci_rewrite_expr(rw, s->copy.predicate) : NULL;
        if (dst == s->copy.dst_index && src == s->copy.src_index && pred == s->copy.predicate)
            return s;
        return tci_stmt_copy_async(a, s->copy.dst, dst, s->copy.src, src, s->copy.bytes, pred);
    }
    }
    return s;
}

Stmt *tci_rewrite_stmt(Rewriter *rw, Stmt *s)
{
    if (!s)
        return NULL;
    if (rw->stmt) {
        Stmt *replaced = rw->stmt(rw, s);
        if (replaced)
            return replaced;
    }
    return tci_rewrite_stmt_children(rw, s);
}

typedef struct Substitution {
    int n;
    Var *const *vars;
    Expr *const *map;
} Substitution;

static Expr *substitute_var(Rewriter *rw, Expr *e)
{
    const Substitution *sub = rw->user;
    if (e->kind != EXPR_VAR)
        return NULL;
    for (int i = 0; i < sub->n; i++)
        if (sub->vars[i] == e->var)
            return sub->map[i];
    return e;
}

Expr *tci_expr_substitute(Arena *arena, Expr *e, int n, Var *const *vars, Expr *const *map)
{
    Substitution sub = {n, vars, map};
    Rewriter rw = {.arena = arena, .expr = substitute_var, .user = &sub};
    return tci_rewrite_expr(&rw, e);
}

Stmt *tci_stmt_substitute(Arena *arena, Stmt *s, int n, Var *const *vars, Expr *const *map)
{
    Substitution sub = {n, vars, map};
    Rewriter rw = {.arena = arena, .expr = substitute_var, .user = &sub};
    return tci_rewrite_stmt(&rw, s);
}

/* ---- the read-only visitor --------------------------------------------------------------- */

static void visit_list(Visitor *v, int n, Expr *const *items)
{
    for (int i = 0; i < n && !v->done; i++)
        tci_visit_expr(v, items[i]);
}

void tci_visit_expr(Visitor *v, const Expr *e)
{
    /* Without an expression callback there is nothing to see in expressions. */
    if (!e || !v->expr || v->done || !v->expr(v, e) || v->done)
        return;
    switch (e->kind) {
    case EXPR_INT:
    case EXPR_FLOAT:
    case EXPR_VAR:
        return;
    case EXPR_NOT:
        tci_visit_expr(v, e->bin.a);
        return;
    case EXPR_SELECT:
        tci_visit_expr(v, e->select.cond);
        tci_visit_expr(v, e->select.then_value);
        tci_visit_expr(v, e->select.else_value);
        return;
    case EXPR_CAST:
        tci_visit_expr(v, e->cast.value);
        return;
    case EXPR_LOAD:
        visit_list(v, e->load.nindex, e->load.index);
        return;
    case EXPR_RAMP:
        tci_visit_expr(v, e->ramp.base);
        return;
    case EXPR_ACCESS:
        visit_list(v, e->access.nindex, e->access.index);
        return;
    case EXPR_REDUCE:
        tci_visit_expr(v, e->reduce.source);
        return;
    default:
        tci_visit_expr(v, e->bin.a);
        tci_visit_expr(v, e->bin.b);
        return;
    }
}

static void visit_wmma(Visitor *v, const WmmaStmt *w)
{
    tci_visit_expr(v, w->fragment_index);
    tci_visit_expr(v, w->a_index);
    tci_visit_expr(v, w->b_index);
    tci_visit_expr(v, w->c_index);
    tci_visit_expr(v, w->accumulate);
    visit_list(v, w->nindex, w->memory_index);
}

void tci_visit_stmt(Visitor *v, const Stmt *s)
{
    if (!s || v->done || (v->stmt && !v->stmt(v, s)) || v->done)
        return;
    switch (s->kind) {
    case STMT_SEQ:
        for (int i = 0; i < s->seq.count && !v->done; i++)
            tci_visit_stmt(v, s->seq.items[i]);
        return;
    case STMT_FOR:
        tci_visit_expr(v, s->loop.min);
        tci_visit_expr(v, s->loop.extent);
        tci_visit_stmt(v, s->loop.body);
        return;
    case STMT_STORE:
        visit_list(v, s->store.nindex, s->store.index);
        tci_visit_expr(v, s->store.value);
        return;
    case STMT_IF:
        tci_visit_expr(v, s->branch.cond);
        tci_visit_stmt(v, s->branch.then_body);
        tci_visit_stmt(v, s->branch.else_body);
        return;
    case STMT_ALLOCATE:
        visit_list(v, s->alloc.buffer->ndim, s->alloc.buffer->min);
        tci_visit_stmt(v, s->alloc.body);
        return;
    case STMT_WMMA:
        visit_wmma(v, &s->wmma);
        return;
    case STMT_BULK_COPY:
    case STMT_BULK_STORE:
        tci_visit_expr(v, s->bulk.dst_index);
        visit_list(v, s->bulk.map->enc.rank, s->bulk.coords);
        for (int d = 0; d < 3; d++)
            tci_visit_expr(v, s->bulk.offsets[d]);
        tci_visit_expr(v, s->bulk.barrier_index);
        return;
    case STMT_MBARRIER:
        tci_visit_expr(v, s->mbarrier.index);
        tci_visit_expr(v, s->mbarrier.parity);
        return;
    case STMT_COPY_ASYNC:
        tci_visit_expr(v, s->copy.dst_index);
        tci_visit_expr(v, s->copy.src_index);
        tci_visit_expr(v, s->copy.predicate);
        return;
    case STMT_BARRIER:
    case STMT_ASYNC_COMMIT:
    case STMT_ASYNC_WAIT:
    case STMT_BULK_WAIT:
    case STMT_WGMMA_SYNC:
    case STMT_SETMAXNREG:
        return;
    }
}

/* ---- queries ----------------------------------------------------------------------------- */

static bool find_var(Visitor *v, const Expr *e)
{
    if (e->kind == EXPR_VAR && e->var == v->user)
        v->done = true;
    return true;
}

bool tci_expr_uses_var(const Expr *e, const Var *var)
{
    Visitor v = {.expr = find_var, .user = (void *)var};
    tci_visit_expr(&v, e);
    return v.done;
}

typedef struct LoadSearch {
    const Expr *cond; /* where each load of the sides must also be */
    const Expr *load; /* the load looked for in it */
    bool missing;
} LoadSearch;

/* The load looked for, among what the condition evaluates whatever its values: not on the
 * sides of an if_then_else inside it, which may not run. */
static bool find_equal(Visitor *v, const Expr *e)
{
    LoadSearch *search = v->user;
    v->done = v->done || tci_expr_equal(e, search->load);
    if (e->kind == EXPR_SELECT && !v->done) {
        tci_visit_expr(v, e->select.cond);
        return false;
    }
    return !v->done;
}

/* A load on a side, or an if_then_else there (a guarded load), is fine where the condition
 * evaluates the same whatever its values; a load not so is missing. */
static bool load_in_cond(Visitor *v, const Expr *e)
{
    LoadSearch *search = v->user;
    bool load = tci_expr_is_memory_read(e);
    if (!load && e->kind != EXPR_SELECT)
        return true;
    search->load = e;
    Visitor inner = {.expr = find_equal, .user = search};
    tci_visit_expr(&inner, search->cond);
    if (inner.done)
        return false; /* evaluated by the condition already, indices and all */
    if (load) {
        search->missing = true;
        v->done = true;
    }
    return !v->done; /* a select the condition does not make: its own sides are looked at */
}

bool tci_expr_is_memory_read(const Expr *e)
{
    return e->kind == EXPR_LOAD || e->kind == EXPR_ACCESS || e->kind == EXPR_REDUCE;
}

static bool find_memory_read(Visitor *v, const Expr *e)
{
    v->done = v->done || tci_expr_is_memory_read(e);
    return !v->done;
}

bool tci_expr_reads_memory(const Expr *e)
{
    Visitor v = {.expr = find_memory_read};
    tci_visit_expr(&v, e);
    return v.done;
}

bool tci_select_sides_load_as_cond(const Expr *select)
{
    LoadSearch search = {.cond = select->select.cond};
    Visitor v = {.expr = load_in_cond, .user = &search};
    tci_visit_expr(&v, select->select.then_value);
    tci_visit_expr(&v, select->select.else_value);
    return !search.missing;
}

static bool region_uses_var(Visitor *v, const Stmt *s)
{
    if (s->kind != STMT_ALLOCATE)
        return true;
    const Buffer *b = s->alloc.buffer;
    for (int d = 0; d < b->ndim && !v->done; d++)
        if (b->min[d] && tci_expr_uses_var(b->min[d], v->user))
            v->done = true;
    return true;
}

bool tci_stmt_allocates_region_of(const Stmt *body, const Var *var)
{
    Visitor v = {.stmt = region_uses_var, .user = (void *)var};
    tci_visit_stmt(&v, body);
    return v.done;
}
