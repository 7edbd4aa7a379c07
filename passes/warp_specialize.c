/*
 * warp_specialize: gives the `producer` loop that software_pipeline made of a warp-specialized
 * pipeline (the bulk copies of every iteration, each stage refilled once the consumers
 * released it) to a warpgroup of its own, added to the block after the others (CUTLASS's TMA
 * warp-specialized kernels):
 *
 *   launch blocks {                         launch blocks {
 *     ... allocate A.shared [S, ...] {        allocate A.shared, full, empty, ... {
 *       setup (barriers' init; barrier)         setup
 *       for i producer { fill stage i }   ->    if (threadIdx.y == W) {        (the producer)
 *       for k pipelined { work k }                setmaxnreg.dec(40)
 *       ... __syncthreads() ...                   if (threadIdx.x == 0) { for i producer ... }
 *     }                                         } else {                       (the consumers)
 *   }                                             setmaxnreg.inc(232)
 *                                                 ... for k pipelined ...
 *                                                 ... barrier.sync(1, 256) ...
 *                                               }
 *                                             }
 *                                           }
 *
 * The shared buffers allocated around the producer loop, and the statements before it in its
 * sequence (the mbarriers' initialization and the block barrier that publishes it), move in
 * front of the branch: every thread of the block runs them. Past the branch the producer
 * never meets the consumers at a barrier, so theirs become a named barrier of the consumer
 * threads alone. One thread issues the copies; its warpgroup keeps few registers and the
 * consumers share what it gives up (setmaxnreg; 232 each for two consumer warpgroups, 104 for
 * four; none with one, where every thread already has all it can use).
 *
 * Consumers taking turns (`turns(T)` on the pipelined loop, ping-pong): the schedule's block is
 * one warpgroup, and T of them run its code, each the tiles g, g + T, ... of the pipelined
 * loop's (consumer_turns); the setup is the first warpgroup's. Blocks in clusters: the
 * consumers' last statement, the cluster's barrier, is met by every thread after the branch.
 *
 * Runs last: thread_sync placed the barriers for the consumer threads, which were the whole
 * block until now, and plan_shared laid out the buffers (it keeps the mbarriers' bytes for
 * the whole kernel, since the producer may still poll one while the consumers move on).
 * Assumes the consumer warpgroups lie along threadIdx.y or threadIdx.z (blockDim.x is one
 * warpgroup), and one producer loop, inside thread launches, allocations and sequences only.
 */
#include "passes/passes.h"

#include "target/target.h"

#define WARPGROUP (tci_device_limits.warpgroup_size)

enum {
    /* The producer's registers: its loop's addresses and barrier phases (CUTLASS's 40). */
    PRODUCER_REGISTERS = 40,
    MAX_PATH = 64,
};

typedef struct Specializer {
    const PassContext *pc;
    PrimFunc *func;
    Arena *arena;
    const Stmt *producer;       /* the producer loop */
    const Stmt *path[MAX_PATH]; /* the statements from the first below the block launches to it */
    int depth;
    const Stmt *seq; /* the sequence the producer loop is item `at` of */
    int at;
    tcc_thread_tag axis; /* the consumer warpgroups' thread index, `consumers` of them */
    int consumers;
    bool turns; /* the consumers take turns at tiles: each runs the schedule's block */
    /* The consumers' last statement was the cluster's barrier (their blocks' copies and
     * releases reach each other): every thread meets it after the branch. */
    bool cluster_exit;
    const char *failed;
} Specializer;

static tcc_status fail(const Specializer *w, const char *why)
{
    return tci_fail(w->pc->ctx, TCC_ERROR_SCHEDULE, "warp_specialize: %s", why);
}

/* Finds the producer loop below `s`, recording the path to it; false when there is none. */
static bool find_producer(Specializer *w, const Stmt *s)
{
    if (!s || w->depth == MAX_PATH)
        return false;
    w->path[w->depth++] = s;
    if (s->kind == STMT_FOR && s->loop.producer) {
        w->producer = s;
        return true;
    }
    switch (s->kind) {
    case STMT_SEQ:
        for (int i = 0; i < s->seq.count; i++)
            if (find_producer(w, s->seq.items[i]))
                return true;
        break;
    case STMT_FOR:
        if (find_producer(w, s->loop.body))
            return true;
        break;
    case STMT_ALLOCATE:
        if (find_producer(w, s->alloc.body))
            return true;
        break;
    case STMT_IF:
        if (find_producer(w, s->branch.then_body) || find_producer(w, s->branch.else_body))
            return true;
        break;
    default:
        break;
    }
    w->depth--;
    return false;
}

static bool count_producer(Visitor *v, const Stmt *s)
{
    if (s->kind == STMT_FOR && s->loop.producer)
        (*(int *)v->user)++;
    return true;
}

static bool is_block_launch(const Stmt *s)
{
    return s && s->kind == STMT_FOR && s->loop.kind == FOR_THREAD && s->loop.tag <= TCC_BLOCK_Z;
}

static bool hoisted(const Specializer *w, const Buffer *b)
{
    for (int i = 0; i < w->depth; i++)
        if (w->path[i]->kind == STMT_ALLOCATE && w->path[i]->alloc.buffer == b)
            return b->scope == TCC_SCOPE_SHARED;
    return false;
}

/* Finds the sequence the producer loop is an item of, and its index there; false when its
 * parent is no sequence. */
static bool locate_in_seq(Specializer *w)
{
    const Stmt *seq = w->depth >= 2 ? w->path[w->depth - 2] : NULL;
    if (!seq || seq->kind != STMT_SEQ)
        return false;
    for (w->at = 0; seq->seq.items[w->at] != w->producer; w->at++)
        ;
    w->seq = seq;
    return true;
}

/* Whether the producer loop's sequence is the last thing the block runs: each sequence on the
 * way to it (above it) ends with the statement that leads there. */
static bool seq_ends_kernel(const Specializer *w)
{
    for (int i = 0; i + 2 < w->depth; i++) {
        const Stmt *s = w->path[i];
        if (s->kind == STMT_SEQ && s->seq.items[s->seq.count - 1] != w->path[i + 1])
            return false;
    }
    return true;
}

/* The consumers' program: the code with the hoisted allocations unwrapped, the setup and the
 * producer loop gone, and the block barriers made the consumers'. */
static Stmt *consumer_stmt(Rewriter *rw, Stmt *s)
{
    Specializer *w = rw->user;
    if (s->kind == STMT_ALLOCATE && hoisted(w, s->alloc.buffer))
        return tci_rewrite_stmt(rw, s->alloc.body);
    if (s->kind == STMT_BARRIER && !s->barrier.threads && !s->barrier.cluster)
        return tci_stmt_named_barrier(rw->arena, TCI_BARRIER_CONSUMERS, w->consumers * WARPGROUP);
    if (s->kind == STMT_BARRIER && s->barrier.cluster)
        w->failed = "the consumers meet the cluster's barrier before their last statement, "
                    "where the producer cannot meet them";
    if (s == w->seq) {
        Stmt **rest = tci_arena_alloc(rw->arena, sizeof(Stmt *) * (size_t)s->seq.count);
        int n = 0, count = s->seq.count;
        const Stmt *last = s->seq.items[count - 1];
        if (count > w->at + 1 && last->kind == STMT_BARRIER && last->barrier.cluster) {
            /* Met by every thread after the branch, where nothing follows: code after it
             * (an epilogue through the stages' memory) must wait for the other blocks' copies
             * into this one, and the producer cannot meet the consumers there. */
            if (!seq_ends_kernel(w))
                w->failed = "the consumers go on past the cluster's barrier, which the producer "
                            "cannot meet (a persistent grid stores from inside its loop)";
            w->cluster_exit = true;
            count--;
        }
        for (int i = w->at + 1; i < count; i++)
            rest[n++] = tci_rewrite_stmt(rw, s->seq.items[i]);
        return tci_stmt_seq(rw->arena, n, rest);
    }
    return NULL;
}

/* The registers every thread starts with: one block an SM (the kernel says so) shares the
 * register file, in steps of 8 a thread, at most 255; ptxas gives a kernel with setmaxnreg
 * exactly that. */
static int entry_registers(int consumers)
{
    int64_t regs = tci_device_limits.registers_per_block / ((consumers + 1) * WARPGROUP) / 8 * 8;
    return regs > 255 ? 255 : (int)regs;
}

/* What each consumer thread raises its count to: setmaxnreg.inc takes registers only from
 * those the block's own setmaxnreg.dec released (it waits for them forever otherwise), so the
 * consumers share what the producer gives up (a multiple of 8, at most 256). */
static int consumer_registers(int consumers)
{
    int entry = entry_registers(consumers);
    int regs = (entry + (entry - PRODUCER_REGISTERS) / consumers) / 8 * 8;
    return regs > 256 ? 256 : regs;
}

static Expr *thread_index(Specializer *w, tcc_thread_tag tag)
{
    return tci_ir_var(w->arena, tci_prim_func_thread_var(w->func, tag));
}

static Expr *thread_is(Specializer *w, tcc_thread_tag tag, int64_t value)
{
    return tci_ir_binary(w->arena, EXPR_EQ, thread_index(w, tag), tci_ir_int(w->arena, value));
}

/* ---- consumers taking turns (ping-pong) ------------------------------------------------- */

static bool find_turns(Visitor *v, const Stmt *s)
{
    if (s->kind == STMT_FOR && s->loop.pipelined && !s->loop.producer && s->loop.turns > 1)
        *(const Stmt **)v->user = s;
    return true;
}

/* The pipelined loop whose consumers take turns; NULL for none. */
static const Stmt *turns_loop(const Stmt *body)
{
    const Stmt *found = NULL;
    Visitor v = {.stmt = find_turns, .user = &found};
    tci_visit_stmt(&v, body);
    return found;
}

/* The schedule's block was one warpgroup, whose index along the consumers' axis was 0: its
 * code with that index 0, where the axis now counts the consumers. */
static Stmt *as_first_warpgroup(Specializer *w, Stmt *s)
{
    Var *index = w->func->thread_var[w->axis];
    Expr *zero = tci_ir_int(w->arena, 0);
    return index && s ? tci_stmt_substitute(w->arena, s, 1, &index, &zero) : s;
}

/* Consumer g's loop of the turns loop: iteration u of it is iteration ((u / K) T + g) K + u % K
 * of the pipeline, the iterations of the pipeline's tiles g, g + T, ... (K steps a tile, T
 * consumers, g = the consumer's index along the axis). */
static Stmt *consumer_turns(Rewriter *rw, Stmt *s)
{
    Specializer *w = rw->user;
    Arena *a = w->arena;
    if (s->kind == STMT_FOR && s->loop.kind == FOR_THREAD && s->loop.tag == w->axis)
        return tci_rewrite_stmt(rw, as_first_warpgroup(w, s->loop.body));
    if (!(s->kind == STMT_FOR && s->loop.pipelined && s->loop.turns > 1))
        return NULL;
    int64_t steps = s->loop.tile_steps, turns = s->loop.turns, extent;
    if (steps < 1 || !tci_expr_is_const(s->loop.extent) ||
        (extent = s->loop.extent->int_value) % (steps * turns)) {
        w->failed = "the consumers' turns do not divide the pipelined loop (persistent_grid "
                    "makes its rounds whole turns)";
        return NULL;
    }
    Var *u = tci_prim_func_new_var(w->func, tci_arena_printf(a, "%s.turn", s->loop.var->name));
    Expr *uv = tci_ir_var(a, u), *k = tci_ir_int(a, steps);
    Expr *tile = tci_ir_binary(
        a, EXPR_ADD,
        tci_ir_binary(a, EXPR_MUL, tci_ir_binary(a, EXPR_DIV, uv, k), tci_ir_int(a, turns)),
        thread_index(w, w->axis));
    Expr *i = tci_ir_binary(a, EXPR_ADD, s->loop.min,
                            tci_ir_binary(a, EXPR_ADD, tci_ir_binary(a, EXPR_MUL, tile, k),
                                          tci_ir_binary(a, EXPR_MOD, uv, k)));
    /* Launches along the axis inside it go first (their index 0), then the consumer's index
     * comes in with the iteration. */
    Stmt *body = tci_stmt_substitute(a, tci_rewrite_stmt(rw, s->loop.body), 1, &s->loop.var, &i);
    Stmt *loop =
        tci_stmt_for(a, u, tci_ir_int(a, 0), tci_ir_int(a, extent / turns), s->loop.kind, body);
    loop->loop.pipelined = true;
    loop->loop.in_flight = s->loop.in_flight;
    loop->loop.turns = s->loop.turns;
    loop->loop.tile_steps = steps;
    return tci_simplify_stmt(a, loop);
}

/* The setup, which the schedule's block ran, run by the first warpgroup (with index 0); the
 * others meet it at its barriers. */
static Stmt *setup_of_first_warpgroup(Specializer *w, Stmt *setup)
{
    int count;
    Stmt *const *items = tci_stmt_items(&setup, &count);
    Stmt **out = tci_arena_alloc(w->arena, sizeof(Stmt *) * (size_t)(count ? count : 1));
    for (int i = 0; i < count; i++)
        out[i] = items[i]->kind == STMT_BARRIER
                     ? items[i]
                     : tci_stmt_if(w->arena, thread_is(w, w->axis, 0),
                                   as_first_warpgroup(w, items[i]), NULL);
    return tci_stmt_seq(w->arena, count, out);
}

/* `below` (the code under the block launches) split between the producer and the consumers. */
static Stmt *specialize(Specializer *w, Stmt *below)
{
    Arena *a = w->arena;
    int consumers = w->consumers;
    Stmt *setup = tci_stmt_seq(a, w->at, w->seq->seq.items);
    Stmt *producer = tci_stmt_if(a, thread_is(w, TCC_THREAD_X, 0), (Stmt *)w->producer, NULL);
    Rewriter rw = {.arena = a, .stmt = consumer_stmt, .user = w};
    Stmt *consumer = tci_rewrite_stmt(&rw, below);
    if (w->turns) {
        Rewriter turns = {.arena = a, .stmt = consumer_turns, .user = w};
        consumer = tci_rewrite_stmt(&turns, consumer);
        setup = setup_of_first_warpgroup(w, setup);
        producer = as_first_warpgroup(w, producer);
    }
    if (consumers >= 2 && consumer_registers(consumers) > entry_registers(consumers)) {
        producer = tci_stmt_seq2(a, tci_stmt_setmaxnreg(a, false, PRODUCER_REGISTERS), producer);
        consumer =
            tci_stmt_seq2(a, tci_stmt_setmaxnreg(a, true, consumer_registers(consumers)), consumer);
    }
    Stmt *parts[3] = {setup, tci_stmt_if(a, thread_is(w, w->axis, consumers), producer, consumer),
                      w->cluster_exit ? tci_stmt_cluster_barrier(a) : NULL};
    Stmt *split = tci_stmt_seq(a, w->cluster_exit ? 3 : 2, parts);
    for (int i = w->depth - 1; i >= 0; i--)
        if (w->path[i]->kind == STMT_ALLOCATE && hoisted(w, w->path[i]->alloc.buffer))
            split = tci_stmt_allocate(a, w->path[i]->alloc.buffer, split);
    return split;
}

/* The block launches around the code, with `below` rebuilt under them. */
static Stmt *under_blocks(Specializer *w, Stmt *s)
{
    if (!is_block_launch(s))
        return specialize(w, s);
    Stmt *body = under_blocks(w, s->loop.body);
    Stmt *copy = tci_arena_alloc(w->arena, sizeof *copy);
    *copy = *s;
    copy->loop.body = body;
    return copy;
}

tcc_status tci_pass_warp_specialize(const PassContext *pc, PrimFunc *func)
{
    Specializer w = {.pc = pc, .func = func, .arena = func->arena};
    const Stmt *below = func->body;
    while (is_block_launch(below))
        below = below->loop.body;
    if (!find_producer(&w, below))
        return TCC_OK;
    int producers = 0;
    Visitor count = {.stmt = count_producer, .user = &producers};
    tci_visit_stmt(&count, func->body);
    if (producers > 1)
        return fail(&w, "the kernel has more than one producer loop");
    for (int i = 0; i < w.depth - 1; i++) {
        const Stmt *s = w.path[i];
        bool passes = s->kind == STMT_SEQ || s->kind == STMT_ALLOCATE ||
                      (s->kind == STMT_FOR && s->loop.kind == FOR_THREAD);
        if (!passes)
            return fail(&w, "the producer loop is inside a loop or a condition");
    }
    if (!locate_in_seq(&w))
        return fail(&w, "the producer loop is not followed by the consumers' loop");
    const int64_t *block = func->launch + 3;
    if (block[0] != WARPGROUP || (block[1] > 1 && block[2] > 1))
        return fail(&w, "the consumer warpgroups must be blockDim.x = 128 threads each, along "
                        "threadIdx.y or threadIdx.z");
    w.axis = block[2] > 1 ? TCC_THREAD_Z : TCC_THREAD_Y;
    w.consumers = (int)(block[1] * block[2]);
    const Stmt *turns = turns_loop(below);
    if (turns) {
        if (w.consumers != 1)
            return fail(&w, "consumers taking turns each compute the schedule's block, which "
                            "must be one warpgroup");
        w.turns = true;
        w.consumers = turns->loop.turns;
    }
    Stmt *body = under_blocks(&w, func->body);
    if (w.failed)
        return fail(&w, w.failed);
    func->body = body;
    func->launch[w.axis] = w.consumers + 1; /* the producer after them */
    return tci_target_validate_launch(pc->ctx, func->launch);
}
