/*
 * prefetch_fragments: tensor-core fragments loaded one group of passes ahead, as CUTLASS's
 * multistage main loop does. A pipelined loop whose work is G >= 2 groups, each allocating
 * its fragments, loading them from the stage (ldmatrix or wmma.load) and multiplying,
 * becomes
 *
 *   for k pipelined {                          wait; barrier; frags(k = 0, group 0) -> slot 0
 *     wait; barrier                            for k pipelined {
 *     frags(k, 0); products(k, 0)                frags(k, 1) -> slot 1; products(k, 0)
 *     ...                             ->         ...
 *     frags(k, G-1); products(k, G-1)            copies(k + S - 1); commit; wait; barrier
 *     copies(k + S - 1); commit                  if k + 1 < K: frags(k + 1, 0) -> slot 0
 *   }                                            products(k, G-1)
 *                                              }
 *
 * so that no fragment load stands right in front of the products that need it: each group's
 * loads are issued before the previous group's products, and the next step's first loads
 * (behind the barrier) before the last group's products. The barrier still comes once a
 * step, after every read of the stage that the next step's copies overwrite (those are
 * issued after it) and before any read of the stage that the wait completed.
 *
 * A slot is a copy of a group's fragment buffers: group g uses slot g % 2, and the last of
 * an odd number of groups slot 2, since it must differ both from the group before it and
 * from the next step's first. Runs after unroll, which makes the groups straight-line
 * copies; a loop of another shape, or of one group, is left as it is.
 */
#include "passes/passes.h"

enum { MAX_GROUPS = 16, MAX_FRAGMENTS = 4, SLOTS = 3 };

typedef struct Group {
    int nfragment;
    Buffer *fragment[MAX_FRAGMENTS]; /* the buffers it allocates */
    Stmt *loads, *products;
} Group;

typedef struct Prefetch {
    Arena *arena;
    /* slot[s][i]: fragment buffer i of the groups in slot s (slot 0: the first group's) */
    int nfragment;
    Buffer *slot[SLOTS][MAX_FRAGMENTS];
    const Group *group; /* the group whose statements at_slot moves ... */
    int current;        /* ... into this slot */
} Prefetch;

/* ---- the shape of the loop ------------------------------------------------------------------ */

static bool is_fragment_scope(tcc_scope scope)
{
    return scope == TCC_SCOPE_WMMA_MATRIX_A || scope == TCC_SCOPE_WMMA_MATRIX_B;
}

static bool loads_fragment_of(const Stmt *s, const Group *g)
{
    if (s->kind != STMT_WMMA || (s->wmma.op != WMMA_LOAD_A && s->wmma.op != WMMA_LOAD_B))
        return false;
    for (int i = 0; i < g->nfragment; i++)
        if (s->wmma.fragment == g->fragment[i])
            return true;
    return false;
}

/* A group: fragment allocations around fragment loads, then what uses them. */
static bool parse_group(Arena *a, Stmt *s, Group *g)
{
    g->nfragment = 0;
    for (; s->kind == STMT_ALLOCATE && is_fragment_scope(s->alloc.buffer->scope);
         s = s->alloc.body) {
        if (g->nfragment == MAX_FRAGMENTS)
            return false;
        g->fragment[g->nfragment++] = s->alloc.buffer;
    }
    int count, loads = 0;
    Stmt *const *items = tci_stmt_items(&s, &count);
    while (loads < count && loads_fragment_of(items[loads], g))
        loads++;
    if (g->nfragment == 0 || loads == 0 || loads == count)
        return false;
    g->loads = tci_stmt_seq(a, loads, items);
    g->products = tci_stmt_seq(a, count - loads, items + loads);
    return true;
}

/* Groups are copies of one another (after unroll, the same buffers): the i-th fragment
 * buffer of each must fit the i-th slot buffer. */
static bool like_first(const Group *first, const Group *g)
{
    if (first->nfragment != g->nfragment)
        return false;
    for (int i = 0; i < g->nfragment; i++) {
        const Buffer *a = first->fragment[i], *b = g->fragment[i];
        if (a->scope != b->scope || a->type != b->type || a->elements != b->elements)
            return false;
    }
    return true;
}

/* ---- slots ---------------------------------------------------------------------------------- */

static Buffer *in_slot(const Prefetch *p, Buffer *b)
{
    for (int i = 0; b && i < p->nfragment; i++)
        if (p->group->fragment[i] == b)
            return p->slot[p->current][i];
    return b;
}

static Stmt *reslot_stmt(Rewriter *rw, Stmt *s)
{
    const Prefetch *p = rw->user;
    if (s->kind != STMT_WMMA)
        return NULL;
    WmmaStmt w = s->wmma;
    w.fragment = in_slot(p, w.fragment);
    w.a = in_slot(p, w.a);
    w.b = in_slot(p, w.b);
    return tci_stmt_wmma(rw->arena, &w);
}

static Stmt *at_slot(Prefetch *p, const Group *g, Stmt *s, int slot)
{
    p->group = g;
    p->current = slot;
    Rewriter rw = {.arena = p->arena, .stmt = reslot_stmt, .user = p};
    return tci_rewrite_stmt(&rw, s);
}

static int slot_of(int group, int groups)
{
    return group == groups - 1 && groups % 2 == 1 ? 2 : group % 2;
}

static void make_slots(Prefetch *p, const Group *g, int slots)
{
    p->nfragment = g->nfragment;
    for (int i = 0; i < g->nfragment; i++) {
        p->slot[0][i] = g->fragment[i];
        for (int s = 1; s < slots; s++) {
            Buffer *copy = tci_arena_alloc(p->arena, sizeof *copy);
            *copy = *g->fragment[i];
            copy->name = tci_arena_printf(p->arena, "%s.%d", g->fragment[i]->name, s);
            p->slot[s][i] = copy;
        }
    }
}

/* ---- the rotation --------------------------------------------------------------------------- */

static Stmt *prefetch_loop(Prefetch *p, Stmt *loop)
{
    Arena *a = p->arena;
    int count, at = 0;
    Stmt *const *items = tci_stmt_items(&loop->loop.body, &count);
    int pending = at < count && items[at]->kind == STMT_ASYNC_WAIT ? items[at++]->wait.pending : -1;
    if (at == count || items[at++]->kind != STMT_BARRIER)
        return NULL;
    Group groups[MAX_GROUPS];
    int ngroup = 0;
    while (at < count && ngroup < MAX_GROUPS && parse_group(a, items[at], &groups[ngroup]) &&
           like_first(&groups[0], &groups[ngroup])) {
        ngroup++;
        at++;
    }
    if (ngroup < 2)
        return NULL;
    int slots = ngroup % 2 == 1 ? 3 : 2;
    make_slots(p, &groups[0], slots);
    Stmt *rest = tci_stmt_seq(a, count - at, items + at);

    Var *k = loop->loop.var;
    Expr *first = loop->loop.min,
         *next = tci_ir_binary(a, EXPR_ADD, tci_ir_var(a, k), tci_ir_int(a, 1));
    Expr *end = tci_ir_binary(a, EXPR_ADD, loop->loop.min, loop->loop.extent);
    Stmt *first_loads = at_slot(p, &groups[0], groups[0].loads, 0);
    Stmt *before[3] = {pending >= 0 ? tci_stmt_async_wait(a, pending) : NULL, tci_stmt_barrier(a),
                       tci_stmt_substitute(a, first_loads, 1, &k, &first)};
    Stmt *body[2 * MAX_GROUPS];
    for (int g = 0; g < ngroup; g++) {
        if (g + 1 < ngroup) {
            body[2 * g] = at_slot(p, &groups[g + 1], groups[g + 1].loads, slot_of(g + 1, ngroup));
        } else {
            Stmt *ahead = tci_stmt_if(a, tci_ir_binary(a, EXPR_LT, next, end),
                                      tci_stmt_substitute(a, first_loads, 1, &k, &next), NULL);
            Stmt *turn[4] = {rest, pending >= 0 ? tci_stmt_async_wait(a, pending) : NULL,
                             tci_stmt_barrier(a), ahead};
            body[2 * g] = tci_stmt_seq(a, 4, turn);
        }
        body[2 * g + 1] = at_slot(p, &groups[g], groups[g].products, slot_of(g, ngroup));
    }
    Stmt *main = tci_arena_alloc(a, sizeof *main);
    *main = *loop;
    main->loop.body = tci_stmt_seq(a, 2 * ngroup, body);
    Stmt *pair[2] = {tci_stmt_seq(a, 3, before), main};
    Stmt *out = tci_simplify_stmt(a, tci_stmt_seq(a, 2, pair));
    for (int s = slots - 1; s >= 0; s--)
        for (int i = p->nfragment - 1; i >= 0; i--)
            out = tci_stmt_allocate(a, p->slot[s][i], out);
    return out;
}

static Stmt *prefetch_rewrite(Rewriter *rw, Stmt *s)
{
    if (s->kind != STMT_FOR || !s->loop.pipelined)
        return NULL;
    return prefetch_loop(rw->user, s);
}

tcc_status tci_pass_prefetch_fragments(const PassContext *pc, PrimFunc *func)
{
    (void)pc;
    Prefetch p = {.arena = func->arena};
    Rewriter rw = {.arena = func->arena, .stmt = prefetch_rewrite, .user = &p};
    func->body = tci_rewrite_stmt(&rw, func->body);
    return TCC_OK;
}
