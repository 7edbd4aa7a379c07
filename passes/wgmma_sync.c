/*
 * wgmma_sync: the protocol of wgmma's asynchronous products (WgmmaSync, ir/ir.h), placed
 * around what the schedule and thread_sync built:
 *
 *   - each run of consecutive wgmma products (the k16 slices of a step) is opened by
 *     wgmma.fence (the accumulators were last written by other instructions: the fill, or
 *     the previous run) and closed by wgmma.commit_group;
 *   - the warpgroup waits for its products (wgmma.wait_group(0)) before the first barrier
 *     that follows the commit in the same sequence: past that barrier the step's tiles may be
 *     overwritten, and the accumulators read. With no barrier after it, at the sequence's end.
 *     The copies issued between the commit and the wait overlap the products. A statement
 *     that reads the accumulators element by element (or fills or stores them whole), or
 *     releases a stage (mbarrier.arrive, at a ping-pong consumer's turn end), waits for all
 *     before it (inside a branch that every thread takes alike). bar.arrive waits for
 *     nothing and gets nothing. In a pipelined loop whose work stays `in_flight(F)`
 *     (software_pipeline then copies into stages F steps older), the wait leaves F groups
 *     running across the barrier, and the loop is followed by a wait for all. A pipelined
 *     loop of bulk copies whose step waits for its own products (in_flight(0)) carries that
 *     wait into the next step, before its first release, which then comes before the wait
 *     for the step's stage (place_carried), and is followed by a wait for all;
 *   - before each barrier, fence.proxy.async makes what the thread wrote to shared memory
 *     (the tiles, by cp.async or by stores: the generic proxy) visible to wgmma's reads (the
 *     async proxy) once the barrier publishes it to the other warps.
 *
 * Runs last, after thread_sync has placed the barriers. A function without wgmma products is
 * left as it is.
 */
#include "passes/passes.h"

#include <stdlib.h>

static bool is_wgmma_product(const Stmt *s)
{
    return s && s->kind == STMT_WMMA && tci_wmma_operands_in_memory(&s->wmma);
}

static bool find_product(Visitor *v, const Stmt *s)
{
    if (is_wgmma_product(s))
        v->done = true;
    return !v->done;
}

static bool find_register_read(Visitor *v, const Expr *e)
{
    if (e->kind == EXPR_LOAD && e->load.buffer->scope == TCC_SCOPE_WMMA_ACCUMULATOR)
        v->done = true;
    return !v->done;
}

static bool find_release(Visitor *v, const Stmt *s)
{
    if (s->kind == STMT_MBARRIER && s->mbarrier.op == MBARRIER_ARRIVE)
        v->done = true;
    if (s->kind == STMT_WMMA && (s->wmma.op == WMMA_FILL || s->wmma.op == WMMA_STORE))
        v->done = true;
    return !v->done;
}

/* Whether `s` reads accumulators element by element (the epilogue from registers), writes or
 * stores them whole, or releases a stage (a consumer's last ones at the end of its turn): each
 * needs the products done. */
static bool needs_products(const Stmt *s)
{
    Visitor v = {.expr = find_register_read, .stmt = find_release};
    tci_visit_stmt(&v, s);
    return v.done;
}

typedef struct Placer {
    const PrimFunc *func;
    bool failed; /* out of memory */
    int pending; /* groups a wait leaves in flight: the enclosing pipelined loop's in_flight */
} Placer;

/* Whether every thread of a warpgroup takes the branch alike (its condition reads no thread
 * index): wgmma.wait_group is .aligned, so only such a branch may hold one. */
static bool uniform_branch(const Placer *p, const Stmt *s)
{
    if (s->kind != STMT_IF || s->branch.else_body)
        return false;
    for (int tag = TCC_THREAD_X; tag <= TCC_THREAD_Z; tag++) {
        const Var *index = p->func->thread_var[tag];
        if (index && tci_expr_uses_var(s->branch.cond, index))
            return false;
    }
    return true;
}

/* The items of a sequence with the protocol placed among them (and inside them). Where
 * `carried`, the sequence is a pipelined loop's body: the products of the iteration before are
 * still running when it starts, and its own are left running at its end. */
static Stmt *place_in_seq(Rewriter *rw, Stmt *const *items, int count, bool carried)
{
    Arena *a = rw->arena;
    /* Each item can gain two statements: a fence and a commit around a product, a wait and a
     * proxy fence before a barrier. */
    Stmt **out = malloc(sizeof(Stmt *) * (size_t)(3 * count + 1));
    if (!out) {
        ((Placer *)rw->user)->failed = true;
        return NULL;
    }
    int n = 0, pending = ((Placer *)rw->user)->pending;
    bool waiting = carried; /* a group was committed and not yet waited for */
    for (int i = 0; i < count; i++) {
        Stmt *s = items[i];
        if (is_wgmma_product(s)) {
            if (i == 0 || !is_wgmma_product(items[i - 1]))
                out[n++] = tci_stmt_wgmma_sync(a, WGMMA_FENCE, 0);
            out[n++] = s;
            if (i + 1 == count || !is_wgmma_product(items[i + 1])) {
                out[n++] = tci_stmt_wgmma_sync(a, WGMMA_COMMIT, 0);
                waiting = true;
            }
            continue;
        }
        if (waiting && needs_products(s) && uniform_branch(rw->user, s)) {
            /* Only where the branch is taken (a persistent loop's last step of a tile): the
             * other steps leave their products running. */
            Stmt *then = tci_stmt_seq2(a, tci_stmt_wgmma_sync(a, WGMMA_WAIT, 0),
                                       tci_rewrite_stmt(rw, s->branch.then_body));
            out[n++] = tci_stmt_if(a, s->branch.cond, then, NULL);
            continue;
        }
        if (waiting && needs_products(s)) {
            out[n++] = tci_stmt_wgmma_sync(a, WGMMA_WAIT, 0);
            waiting = false;
        }
        if (s->kind == STMT_BARRIER && !s->barrier.arrive) { /* bar.arrive waits for nobody */
            if (waiting)
                out[n++] = tci_stmt_wgmma_sync(a, WGMMA_WAIT, pending);
            waiting = false;
            out[n++] = tci_stmt_wgmma_sync(a, WGMMA_PROXY_FENCE, 0);
            out[n++] = s;
            continue;
        }
        out[n++] = tci_rewrite_stmt(rw, s);
    }
    if (waiting && !carried)
        out[n++] = tci_stmt_wgmma_sync(a, WGMMA_WAIT, pending);
    Stmt *seq = tci_stmt_seq(a, n, out);
    free(out);
    return seq;
}

/* A pipelined loop whose products stay in flight: its waits leave them running, and a wait
 * for all follows it. */
static Stmt *place_in_flight(Rewriter *rw, Stmt *s)
{
    Placer *p = rw->user;
    int outer = p->pending;
    p->pending = s->loop.in_flight;
    Stmt *loop = tci_rewrite_stmt_children(rw, s);
    p->pending = outer;
    return tci_stmt_seq2(rw->arena, loop, tci_stmt_wgmma_sync(rw->arena, WGMMA_WAIT, 0));
}

/* `placed` with `stage_wait` put before its first products (their wgmma.fence): after the
 * carried wait and the release it allows, before anything reads the stage. */
static Stmt *wait_before_products(Arena *a, Stmt *placed, Stmt *stage_wait)
{
    int at = 0;
    while (at < placed->seq.count && !(placed->seq.items[at]->kind == STMT_WGMMA_SYNC &&
                                       placed->seq.items[at]->wgmma_sync.op == WGMMA_FENCE))
        at++;
    Stmt *before = at ? tci_stmt_seq(a, at, placed->seq.items) : NULL;
    Stmt *after = at < placed->seq.count
                      ? tci_stmt_seq(a, placed->seq.count - at, placed->seq.items + at)
                      : NULL;
    return tci_stmt_seq2(a, tci_stmt_seq2(a, before, stage_wait), after);
}

/* A pipelined loop of bulk copies whose step waits for its own products (in_flight(0)): the
 * wait moves from the end of step k to step k+1, so that the loop's own work (its index
 * arithmetic) runs under step k's products rather than between them and the next ones, and
 * the stage of step k is released right after it, before the wait for step k+1's stage. A
 * release held behind that wait would leave the producer's next copy as late as the data it
 * waits for: on an H100 the seed layer ran 0.1569 ms released first against 0.1620, a
 * 1024-channel one 0.5911 against 0.6682. The other warpgroup's products cover the drain.
 * (Ping-pong consumers, whose turns are barriers in branches, keep the wait at the step's
 * end.) */
static Stmt *place_carried(Rewriter *rw, Stmt *s)
{
    Stmt *body = s->loop.body;
    Stmt *placed = place_in_seq(rw, body->seq.items + 1, body->seq.count - 1, true);
    if (!placed)
        return NULL;
    Stmt *loop = tci_arena_alloc(rw->arena, sizeof *loop);
    *loop = *s;
    loop->loop.body = wait_before_products(rw->arena, placed, body->seq.items[0]);
    return tci_stmt_seq2(rw->arena, loop, tci_stmt_wgmma_sync(rw->arena, WGMMA_WAIT, 0));
}

static bool first_is_stage_wait(const Stmt *seq)
{
    const Stmt *first = seq->seq.count ? seq->seq.items[0] : NULL;
    return first && first->kind == STMT_MBARRIER && first->mbarrier.op == MBARRIER_WAIT;
}

static bool carries_its_wait(const Stmt *s)
{
    return s->kind == STMT_FOR && s->loop.pipelined && s->loop.in_flight == 0 &&
           s->loop.turns < 2 && s->loop.body->kind == STMT_SEQ && first_is_stage_wait(s->loop.body);
}

/* Sequences, and lone products (a body of one statement is a sequence of one). */
static Stmt *place(Rewriter *rw, Stmt *s)
{
    if (s->kind == STMT_FOR && s->loop.pipelined && s->loop.in_flight > 0)
        return place_in_flight(rw, s);
    if (carries_its_wait(s))
        return place_carried(rw, s);
    if (s->kind == STMT_SEQ)
        return place_in_seq(rw, s->seq.items, s->seq.count, false);
    if (is_wgmma_product(s) || (s->kind == STMT_BARRIER && !s->barrier.arrive))
        return place_in_seq(rw, &s, 1, false);
    return NULL;
}

tcc_status tci_pass_wgmma_sync(const PassContext *pc, PrimFunc *func)
{
    Visitor v = {.stmt = find_product};
    tci_visit_stmt(&v, func->body);
    if (!v.done)
        return TCC_OK;
    Placer p = {.func = func};
    Rewriter rw = {.arena = func->arena, .stmt = place, .user = &p};
    Stmt *body = tci_rewrite_stmt(&rw, func->body);
    if (p.failed)
        return tci_fail(pc->ctx, TCC_ERROR_OUT_OF_MEMORY, "wgmma_sync: out of memory");
    func->body = body;
    return TCC_OK;
}
