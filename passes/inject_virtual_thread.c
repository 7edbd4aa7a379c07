/*
 * inject_virtual_thread: loops bound to TCC_VTHREAD (TVM's vthread) disappear; their iterations
 * run one after the other inside each thread, interleaved statement by statement, as TVM's
 * InjectVirtualThread does. A virtual thread is no hardware dimension: it is a way to write a
 * tile of work per thread as several strided tiles, whose loads and stores then sit next to each
 * other (so that the copies of different virtual threads can be issued together) and whose
 * register buffers are replicated, one slice per virtual thread.
 *
 * For each virtual-thread loop, innermost first:
 *   1. Which variables and buffers depend on its variable ("touched"): a loop variable whose
 *      range uses a touched one, a buffer stored at an index or with a value that uses one
 *      (loads name their buffer), to a fixed point.
 *   2. Every allocation of a touched buffer inside gets a slice per virtual thread (the
 *      virtual thread becomes its outermost dimension; accesses move by v * the slice).
 *   3. The replication goes as deep as it can: each statement that touches the variable and
 *      contains no deeper such statement (a store; a loop or branch whose range or condition
 *      uses it) is replaced by one copy per virtual thread with the variable a constant (fewer
 *      than 16 virtual threads and no loop inside), else by a serial loop over them.
 *   Statements that touch nothing (a shared tile's copy, filled cooperatively by the threads,
 *   and barriers) run once, shared by the virtual threads.
 *
 * Assumes flattened accesses, constant extents of the virtual threads, and no tensor-core,
 * asynchronous or bulk-copy statements inside a virtual thread (refused). Loops of every
 * other kind pass through.
 */
#include "passes/passes.h"

#include <string.h>

/* ---- 1. what the virtual thread's variable touches ------------------------------------ */

/* A set of variables and buffers, both compared by address. */
typedef struct Set {
    int count, cap;
    const void **items;
} Set;

static bool set_has(const Set *s, const void *x)
{
    for (int i = 0; i < s->count; i++)
        if (s->items[i] == x)
            return true;
    return false;
}

/* Appends to an arena-backed array of pointers, doubling it when full. */
static void push(Arena *a, const void ***items, int *count, int *cap, const void *x)
{
    if (*count == *cap) {
        int grown = *cap ? 2 * *cap : 8;
        const void **bigger = tci_arena_alloc(a, sizeof(void *) * (size_t)grown);
        if (*count)
            memcpy(bigger, *items, sizeof(void *) * (size_t)*count);
        *items = bigger;
        *cap = grown;
    }
    (*items)[(*count)++] = x;
}

static void set_add(Arena *a, Set *s, const void *x)
{
    if (!set_has(s, x))
        push(a, &s->items, &s->count, &s->cap, x);
}

/* A definition: `target` (a buffer stored, a loop variable) computed from `uses`. */
typedef struct Definition {
    const void *target;
    Set uses;
    Arena *arena;
} Definition;

typedef struct Analysis {
    Arena *arena;
    int count, cap;
    const void **defs; /* Definition * */
} Analysis;

static bool collect_use(Visitor *v, const Expr *e)
{
    Definition *d = v->user;
    if (e->kind == EXPR_VAR)
        set_add(d->arena, &d->uses, e->var);
    else if (e->kind == EXPR_LOAD)
        set_add(d->arena, &d->uses, e->load.buffer);
    return true;
}

static void define(Analysis *an, const void *target, int nexpr, const Expr *const *exprs)
{
    Definition *d = tci_arena_alloc(an->arena, sizeof *d);
    d->target = target;
    d->arena = an->arena;
    Visitor v = {.expr = collect_use, .user = d};
    for (int i = 0; i < nexpr; i++)
        if (exprs[i])
            tci_visit_expr(&v, exprs[i]);
    push(an->arena, &an->defs, &an->count, &an->cap, d);
}

static bool record_definition(Visitor *v, const Stmt *s)
{
    Analysis *an = v->user;
    if (s->kind == STMT_STORE) {
        const Expr *exprs[TCI_MAX_DIMS + 1];
        int n = 0;
        for (int i = 0; i < s->store.nindex && n < TCI_MAX_DIMS; i++)
            exprs[n++] = s->store.index[i];
        exprs[n++] = s->store.value;
        define(an, s->store.buffer, n, exprs);
    } else if (s->kind == STMT_FOR) {
        const Expr *exprs[2] = {s->loop.min, s->loop.extent};
        define(an, s->loop.var, 2, exprs);
    }
    return true;
}

/* The variables and buffers that depend on `var` in `body`. */
static Set touched_by(Arena *a, Stmt *body, Var *var)
{
    Analysis an = {.arena = a};
    Visitor v = {.stmt = record_definition, .user = &an};
    tci_visit_stmt(&v, body);
    Set touched = {0};
    set_add(a, &touched, var);
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < an.count; i++) {
            const Definition *d = an.defs[i];
            if (set_has(&touched, d->target))
                continue;
            for (int k = 0; k < d->uses.count; k++)
                if (set_has(&touched, d->uses.items[k])) {
                    set_add(a, &touched, d->target);
                    changed = true;
                    break;
                }
        }
    }
    return touched;
}

/* ---- 2 and 3. the injection ------------------------------------------------------------ */

typedef struct Injector {
    Arena *arena;
    PrimFunc *func;
    tcc_context *ctx;
    tcc_status status;
    Var *var;
    int64_t threads;
    Set touched;
    int nremap, remap_cap;
    const void **remap; /* pairs: a touched allocation, then its replicated buffer */
    bool uses_touched;  /* the expression or statement just visited touches var */
    bool injected;      /* inside a statement being replicated */
    int loop_depth;     /* serial loops inside the statement just visited */
} Injector;

static Buffer *remapped(const Injector *in, const Buffer *b)
{
    for (int i = 0; i + 1 < in->nremap; i += 2)
        if (in->remap[i] == b)
            return (Buffer *)in->remap[i + 1];
    return NULL;
}

/* index + v * (the slice of one virtual thread) */
static Expr *slice_index(Injector *in, Buffer *replicated, Expr *index)
{
    Arena *a = in->arena;
    Expr *offset =
        tci_ir_binary(a, EXPR_MUL, tci_ir_var(a, in->var), tci_ir_int(a, replicated->strides[0]));
    return tci_ir_binary(a, EXPR_ADD, index, offset);
}

static Expr *visit_expr_node(Rewriter *rw, Expr *e)
{
    Injector *in = rw->user;
    if (e->kind == EXPR_VAR) {
        if (set_has(&in->touched, e->var))
            in->uses_touched = true;
        return e;
    }
    if (e->kind != EXPR_LOAD)
        return NULL;
    Expr *x = tci_rewrite_expr_children(rw, e);
    if (set_has(&in->touched, e->load.buffer))
        in->uses_touched = true;
    Buffer *to = remapped(in, e->load.buffer);
    if (!to)
        return x;
    if (x->load.nindex != 1) {
        in->status = tci_fail(in->ctx, TCC_ERROR_SCHEDULE,
                              "inject_virtual_thread: %s is accessed before flattening",
                              e->load.buffer->name);
        return x;
    }
    Expr *index = slice_index(in, to, x->load.index[0]);
    Expr *load = tci_ir_load(in->arena, to, 1, &index);
    load->type = x->type;
    load->lanes = x->lanes;
    return load;
}

static Expr *visit_expr(Injector *in, Expr *e)
{
    if (!e)
        return NULL;
    Rewriter rw = {.arena = in->arena, .expr = visit_expr_node, .user = in};
    return tci_rewrite_expr(&rw, e);
}

static Stmt *visit(Injector *in, Stmt *s);

/* One copy of `s` per virtual thread (TVM's InjectVTLoop); `mutate`: `s` is still to be
 * visited (its accesses remapped) first. */
static Stmt *replicate(Injector *in, Stmt *s, bool mutate)
{
    Arena *a = in->arena;
    in->uses_touched = false;
    in->injected = true;
    if (mutate)
        s = visit(in, s);
    in->injected = false;
    in->uses_touched = false;
    /* Few copies of a statement without loops are written out: its registers then have
     * constant indices. Otherwise a loop over the virtual threads. */
    if (in->loop_depth == 0 && in->threads < 16) {
        Stmt **copies = tci_arena_alloc(a, sizeof(Stmt *) * (size_t)in->threads);
        for (int64_t i = 0; i < in->threads; i++) {
            Expr *value = tci_ir_int(a, i);
            copies[i] = tci_stmt_substitute(a, s, 1, &in->var, &value);
        }
        return tci_stmt_seq(a, (int)in->threads, copies);
    }
    Var *index = tci_prim_func_new_var(in->func, tci_arena_printf(a, "%s.s", in->var->name));
    Expr *value = tci_ir_var(a, index);
    Stmt *body = tci_stmt_substitute(a, s, 1, &in->var, &value);
    return tci_stmt_for(a, index, tci_ir_int(a, 0), tci_ir_int(a, in->threads), FOR_SERIAL, body);
}

static Stmt *copy_of(Arena *a, const Stmt *s)
{
    Stmt *copy = tci_arena_alloc(a, sizeof *copy);
    *copy = *s;
    return copy;
}

static Stmt *visit_for(Injector *in, Stmt *s)
{
    Expr *min = visit_expr(in, s->loop.min), *extent = visit_expr(in, s->loop.extent);
    bool counts = s->loop.kind != FOR_THREAD;
    if (in->uses_touched && !in->injected) {
        Stmt *r = replicate(in, s, true);
        in->loop_depth += counts;
        return r;
    }
    in->uses_touched = false;
    Stmt *body = visit(in, s->loop.body);
    in->loop_depth += counts;
    Stmt *copy = copy_of(in->arena, s);
    copy->loop.min = min;
    copy->loop.extent = extent;
    copy->loop.body = body;
    return copy;
}

static Stmt *visit_store(Injector *in, Stmt *s)
{
    Arena *a = in->arena;
    Expr **index = tci_arena_alloc(a, sizeof(Expr *) * (size_t)(s->store.nindex + 1));
    for (int i = 0; i < s->store.nindex; i++)
        index[i] = visit_expr(in, s->store.index[i]);
    Expr *value = visit_expr(in, s->store.value);
    if (set_has(&in->touched, s->store.buffer))
        in->uses_touched = true;
    Buffer *to = remapped(in, s->store.buffer);
    if (!to)
        return tci_stmt_store(a, s->store.buffer, s->store.nindex, index, value);
    if (s->store.nindex != 1) {
        in->status = tci_fail(in->ctx, TCC_ERROR_SCHEDULE,
                              "inject_virtual_thread: %s is stored before flattening",
                              s->store.buffer->name);
        return s;
    }
    index[0] = slice_index(in, to, index[0]);
    return tci_stmt_store(a, to, 1, index, value);
}

static Stmt *visit_if(Injector *in, Stmt *s)
{
    Expr *cond = visit_expr(in, s->branch.cond);
    if (in->uses_touched && !in->injected)
        return replicate(in, s, true);
    in->uses_touched = false;
    Stmt *then_body = visit(in, s->branch.then_body);
    int depth = in->loop_depth;
    in->loop_depth = 0;
    Stmt *else_body = s->branch.else_body ? visit(in, s->branch.else_body) : NULL;
    in->loop_depth = depth > in->loop_depth ? depth : in->loop_depth;
    return tci_stmt_if(in->arena, cond, then_body, else_body);
}

/* A touched allocation gets a slice per virtual thread, the virtual thread outermost. */
static Stmt *visit_allocate(Injector *in, Stmt *s)
{
    Buffer *b = s->alloc.buffer;
    if (!set_has(&in->touched, b))
        return tci_stmt_allocate(in->arena, b, visit(in, s->alloc.body));
    /* Allocated again (a copy of an if that holds it): the replicated buffer, which its
     * accesses are redirected to, is the one allocated. */
    Buffer *replicated = remapped(in, b);
    if (replicated)
        return tci_stmt_allocate(in->arena, replicated, visit(in, s->alloc.body));
    int64_t elements;
    if (__builtin_mul_overflow(b->elements, in->threads, &elements)) {
        in->status = tci_fail(in->ctx, TCC_ERROR_SCHEDULE,
                              "inject_virtual_thread: %s replicated %lld times is too large",
                              b->name, (long long)in->threads);
        return s;
    }
    if (b->ndim >= TCI_MAX_DIMS || b->swizzle.bits) {
        in->status = tci_fail(in->ctx, TCC_ERROR_SCHEDULE,
                              "inject_virtual_thread: %s cannot be replicated per virtual thread "
                              "(%d dimensions, or swizzled)",
                              b->name, b->ndim);
        return s;
    }
    Buffer *r = tci_arena_alloc(in->arena, sizeof *r);
    *r = *b;
    r->ndim = b->ndim + 1;
    r->shape[0] = in->threads;
    r->strides[0] = b->elements;
    r->min[0] = NULL;
    for (int d = 0; d < b->ndim; d++) {
        r->shape[d + 1] = b->shape[d];
        r->strides[d + 1] = b->strides[d];
        r->min[d + 1] = b->min[d];
    }
    r->elements = elements;
    push(in->arena, &in->remap, &in->nremap, &in->remap_cap, b);
    push(in->arena, &in->remap, &in->nremap, &in->remap_cap, r);
    return tci_stmt_allocate(in->arena, r, visit(in, s->alloc.body));
}

static Stmt *visit_seq(Injector *in, Stmt *s)
{
    Stmt **items = tci_arena_alloc(in->arena, sizeof(Stmt *) * (size_t)s->seq.count);
    int depth = in->loop_depth;
    for (int i = 0; i < s->seq.count; i++) {
        in->loop_depth = 0;
        items[i] = visit(in, s->seq.items[i]);
        depth = depth > in->loop_depth ? depth : in->loop_depth;
    }
    in->loop_depth = depth;
    return tci_stmt_seq(in->arena, s->seq.count, items);
}

/* TVM's VTInjector::VisitStmt: the node, then its replication if it touched the variable
 * and nothing inside it was replicated. */
static Stmt *visit(Injector *in, Stmt *s)
{
    if (!s || in->status != TCC_OK)
        return s;
    Stmt *r;
    switch (s->kind) {
    case STMT_SEQ:
        r = visit_seq(in, s);
        break;
    case STMT_FOR:
        r = visit_for(in, s);
        break;
    case STMT_STORE:
        r = visit_store(in, s);
        break;
    case STMT_IF:
        r = visit_if(in, s);
        break;
    case STMT_ALLOCATE:
        r = visit_allocate(in, s);
        break;
    case STMT_BARRIER:
        r = s;
        break;
    default:
        in->status = tci_fail(in->ctx, TCC_ERROR_UNSUPPORTED,
                              "inject_virtual_thread: virtual thread %s holds a tensor-core, "
                              "asynchronous or bulk copy statement; only loops, stores, branches "
                              "and allocations can be replicated",
                              in->var->name);
        return s;
    }
    if (in->uses_touched) {
        if (!in->injected)
            return replicate(in, r, false);
        in->uses_touched = false;
    }
    return r;
}

typedef struct Lowering {
    PrimFunc *func;
    tcc_context *ctx;
    tcc_status status;
} Lowering;

static Stmt *inject_loop(Rewriter *rw, Stmt *s)
{
    Lowering *lw = rw->user;
    if (s->kind != STMT_FOR || s->loop.kind != FOR_THREAD || s->loop.tag != TCC_VTHREAD ||
        lw->status != TCC_OK)
        return NULL;
    /* Inner virtual threads first: the outer one then replicates what they made. */
    Stmt *body = tci_rewrite_stmt(rw, s->loop.body);
    if (lw->status != TCC_OK)
        return s;
    const Expr *extent = s->loop.extent;
    if (extent->kind != EXPR_INT || extent->int_value < 1 || extent->int_value > 1024 ||
        !tci_expr_is_int(s->loop.min, 0)) {
        lw->status = tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                              "inject_virtual_thread: virtual thread %s must start at 0 and have "
                              "a constant extent of 1 to 1024",
                              s->loop.var->name);
        return s;
    }
    if (tci_stmt_allocates_region_of(body, s->loop.var)) {
        lw->status = tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                              "inject_virtual_thread: a buffer's region starts at virtual "
                              "thread %s, which the injection would replace",
                              s->loop.var->name);
        return s;
    }
    /* One virtual thread is no thread at all: its variable is 0, nothing is replicated. */
    if (extent->int_value == 1) {
        Expr *zero = tci_ir_int(rw->arena, 0);
        return tci_stmt_substitute(rw->arena, body, 1, &s->loop.var, &zero);
    }
    Injector in = {.arena = rw->arena,
                   .func = lw->func,
                   .ctx = lw->ctx,
                   .status = TCC_OK,
                   .var = s->loop.var,
                   .threads = extent->int_value};
    in.touched = touched_by(rw->arena, body, s->loop.var);
    Stmt *r = visit(&in, body);
    lw->status = in.status;
    return r;
}

tcc_status tci_pass_inject_virtual_thread(const PassContext *pc, PrimFunc *func)
{
    Lowering lw = {func, pc->ctx, TCC_OK};
    Rewriter rw = {.arena = func->arena, .stmt = inject_loop, .user = &lw};
    Stmt *body = tci_rewrite_stmt(&rw, func->body);
    if (lw.status != TCC_OK)
        return lw.status;
    /* The copies' constants fold into their indices (v * 64 + ...). */
    func->body = tci_simplify_stmt(func->arena, body);
    return TCC_OK;
}
