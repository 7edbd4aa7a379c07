/*
 * persistent_grid: a loop marked `persistent(P)` (tcc_persistent) is the pipelined loop of a
 * block that computes one tile of the launch. The launch becomes P blocks that each compute
 * every P-th tile, and the loop runs on from one tile into the next, so that software_pipeline
 * pipelines the whole run: the next tile's first copies fly while this tile's last products
 * and epilogue run, and the mbarriers' phases carry on across tiles.
 *
 *   launch blockIdx.y in 0..Gy {              launch blockIdx.x in 0..P {
 *     launch blockIdx.x in 0..Gx {              allocate acc {
 *       allocate acc {                            for t in 0..n * K stages(S) {
 *         fill(acc)                                 allocate A [...] {
 *         for k in 0..K stages(S)      ->             copies(k, tile)
 *           persistent(P) {                           if (k == 0) { fill(acc) }
 *           allocate A [...] {                        work(k)
 *             copies(k, bx, by)                       if (k == K - 1) {
 *             work(k)                                   if (tile < T) { epilogue(tile) }
 *           }                                         }
 *         }                                         }
 *         epilogue(acc, bx, by)                   }
 *       }                                       }
 *     }                                       }
 *   }
 *
 * where k = t % K and tile = blockIdx.x + (t / K) * P, the tile the launch's block tile % Gx,
 * tile / Gx % Gy, ... computed (blockIdx.x fastest, as the hardware numbers blocks). The T
 * tiles take n = ceil(T / P) rounds; P is then lowered to ceil(T / n), so that no round leaves
 * more blocks idle than it must. The tiles of the last round past T compute in range (every
 * block index wraps) and store nothing. The statements around the loop inside the block run
 * at each tile's first iteration (those before it, outer ones first) and its last (those
 * after, inner ones first); they must not allocate shared memory, which the stages now hold
 * for the whole run, but may use buffers allocated outside the loop (a bulk store's output
 * tile, which then lives beside the stages). The loop's body must start with bulk copies,
 * after which the fill goes, and write nothing to global memory (a tile past the last would
 * write a tile again).
 *
 * In a grid of thread-block clusters of C blocks along one block index, the persistent blocks
 * form clusters of C along blockIdx.x, and a cluster takes units of C tiles that differ along
 * the clustered index only (block rank r = blockIdx.x % C taking the r-th), so that the blocks
 * of a cluster always share what they multicast: P / C clusters take the T / C units.
 *
 * Where consumers take turns at tiles (`turns(T)`, ping-pong: warp_specialize gives consumer g
 * the rounds g, g + T, ...), the rounds come in whole turns, and the loop made says its
 * iterations a tile (`tile_steps`) for software_pipeline and warp_specialize.
 *
 * Runs before software_pipeline. Assumes flattened accesses, and block launches, thread
 * launches, allocations and sequences between the kernel's top and the loop; refuses any
 * other. A function without a persistent loop is left as it is.
 */
#include "passes/passes.h"

#include "target/target.h"

enum { MAX_LEVELS = 64 };

/* The statements of one sequence on the way to the loop: those before it and after it. */
typedef struct Level {
    Stmt *const *items;
    int at, count;
} Level;

typedef struct Persist {
    const PassContext *pc;
    PrimFunc *func;
    Arena *arena;
    const Stmt *loop; /* the persistent loop */
    Var *block_var[3];
    int64_t block_extent[3];
    /* Thread-block clusters: the clustered launch dimension and its blocks a cluster (1 and
     * -1 for none). A cluster's blocks take tiles that differ along that dimension only. */
    int cluster_dim;
    int64_t cluster;
    Level levels[MAX_LEVELS];
    int nlevel;
    const char *failure;
} Persist;

static bool find_persistent(Visitor *v, const Stmt *s)
{
    if (s->kind == STMT_FOR && s->loop.persistent > 0) {
        const Stmt **found = v->user;
        if (*found)
            v->done = true; /* a second one: refused */
        else
            *found = s;
    }
    return !v->done;
}

static bool contains_stmt(Visitor *v, const Stmt *s)
{
    if (s == v->user)
        v->done = true;
    return !v->done;
}

static bool contains(const Stmt *s, const Stmt *target)
{
    Visitor v = {.stmt = contains_stmt, .user = (void *)target};
    tci_visit_stmt(&v, s);
    return v.done;
}

/* An allocation of shared memory in a statement beside the loop would move into the loop's
 * body, where the stages hold the bytes; buffers allocated outside it (a bulk store's output
 * tile) stay apart from them for the whole run (plan_shared). */
static bool find_shared_allocation(Visitor *v, const Stmt *s)
{
    v->done = v->done || (s->kind == STMT_ALLOCATE && s->alloc.buffer->scope == TCC_SCOPE_SHARED);
    return !v->done;
}

static bool allocates_shared(const Stmt *s)
{
    Visitor v = {.stmt = find_shared_allocation};
    tci_visit_stmt(&v, s);
    return v.done;
}

static bool find_global_write(Visitor *v, const Stmt *s)
{
    const Buffer *b = s->kind == STMT_STORE                              ? s->store.buffer
                      : s->kind == STMT_WMMA && s->wmma.op == WMMA_STORE ? s->wmma.memory
                                                                         : NULL;
    v->done = v->done || (b && b->scope == TCC_SCOPE_GLOBAL) || s->kind == STMT_BULK_STORE;
    return !v->done;
}

/* Whether `s` writes global memory: a loop body that does would write a tile again in the
 * rounds past the last tile, which compute in range. */
static bool writes_global(const Stmt *s)
{
    Visitor v = {.stmt = find_global_write};
    tci_visit_stmt(&v, s);
    return v.done;
}

static Stmt *refuse(Persist *p, const char *why)
{
    if (!p->failure)
        p->failure = why;
    return NULL;
}

/* `s` without its block launches, and with the statements beside the loop on the way to it
 * taken out (into p->levels); the loop itself is replaced by `flat`, to be built. */
static Stmt *strip(Persist *p, Stmt *s, Stmt *flat)
{
    if (s == p->loop)
        return flat;
    if (s->kind == STMT_FOR && s->loop.kind == FOR_THREAD) {
        Stmt *body = strip(p, s->loop.body, flat);
        if (!body || s->loop.tag > TCC_BLOCK_Z) {
            Stmt *launch = tci_stmt_new(p->arena, STMT_FOR);
            *launch = *s;
            launch->loop.body = body;
            return body ? launch : NULL;
        }
        p->block_var[s->loop.tag] = s->loop.var;
        p->block_extent[s->loop.tag] = p->func->launch[s->loop.tag];
        return body;
    }
    if (s->kind == STMT_ALLOCATE) {
        Stmt *body = strip(p, s->alloc.body, flat);
        return body ? tci_stmt_allocate(p->arena, s->alloc.buffer, body) : NULL;
    }
    if (s->kind != STMT_SEQ)
        return refuse(p, "only launches, allocations and sequences may enclose the loop");
    int at = 0;
    while (at < s->seq.count && !contains(s->seq.items[at], p->loop))
        at++;
    if (at == s->seq.count)
        return refuse(p, "the loop is not where the launches lead");
    if (p->nlevel == MAX_LEVELS)
        return refuse(p, "the loop lies too deep");
    for (int i = 0; i < s->seq.count; i++)
        if (i != at && allocates_shared(s->seq.items[i]))
            return refuse(p, "the statements around the loop allocate shared memory, which "
                             "its stages hold across tiles");
    p->levels[p->nlevel++] = (Level){s->seq.items, at, s->seq.count};
    return strip(p, s->seq.items[at], flat);
}

/* The statements taken out of the way to the loop: before it (outer ones first), or after
 * it (inner ones first); NULL for none. */
static Stmt *beside(const Persist *p, bool after)
{
    Stmt *out = NULL;
    for (int l = 0; l < p->nlevel; l++) {
        const Level *level = &p->levels[after ? p->nlevel - 1 - l : l];
        int from = after ? level->at + 1 : 0, to = after ? level->count : level->at;
        if (to > from)
            out = tci_stmt_seq2(p->arena, out,
                                tci_stmt_seq(p->arena, to - from, level->items + from));
    }
    return out;
}

static Expr *binary(Persist *p, ExprKind kind, Expr *a, int64_t b)
{
    return tci_ir_binary(p->arena, kind, a, tci_ir_int(p->arena, b));
}

/* The loop's body with `first` after its leading bulk copies and `last` at its end. */
static Stmt *body_around(Persist *p, Stmt *body, Stmt *first, Stmt *last)
{
    if (!body) /* empty (loop IR read from text) */
        return refuse(p, "its stages must be filled by bulk copies");
    if (body->kind == STMT_ALLOCATE) {
        Stmt *inner = body_around(p, body->alloc.body, first, last);
        return inner ? tci_stmt_allocate(p->arena, body->alloc.buffer, inner) : NULL;
    }
    int count;
    Stmt *const *items = tci_stmt_items(&body, &count);
    int copies = 0;
    while (copies < count && items[copies]->kind == STMT_BULK_COPY)
        copies++;
    if (copies == 0)
        return refuse(p, "its stages must be filled by bulk copies");
    Stmt *parts[4] = {tci_stmt_seq(p->arena, copies, items), first,
                      tci_stmt_seq(p->arena, count - copies, items + copies), last};
    return tci_stmt_seq(p->arena, 4, parts);
}

/* The block's cluster (`block` / C) and its rank in it (`block` % C); `block` and 0 without
 * clusters. */
static Expr *cluster_of(Persist *p, Var *block)
{
    Expr *b = tci_ir_var(p->arena, block);
    return p->cluster > 1 ? binary(p, EXPR_DIV, b, p->cluster) : b;
}

static Expr *rank_in_cluster(Persist *p, Var *block)
{
    return binary(p, EXPR_MOD, tci_ir_var(p->arena, block), p->cluster);
}

/* The loop over every iteration of every tile of the block, in place of `loop`. `clusters`
 * (blocks / C) take the `units` (tiles / C) in `rounds`; unit u is the C tiles that differ
 * only along the clustered dimension, where block rank r of the cluster takes the r-th. */
static Stmt *carry_loop(Persist *p, Var *block, int64_t clusters, int64_t rounds, int64_t units)
{
    Arena *a = p->arena;
    const Stmt *loop = p->loop;
    int64_t steps;
    if (!tci_expr_is_const(loop->loop.extent) || (steps = loop->loop.extent->int_value) < 1)
        return refuse(p, "its extent must be a constant");
    if (writes_global(loop->loop.body))
        return refuse(p, "its body writes global memory (a tile's results must wait for the "
                         "statements after the loop)");
    Var *t = tci_prim_func_new_var(p->func, tci_arena_printf(a, "%s.tiles", loop->loop.var->name));
    Expr *step = binary(p, EXPR_MOD, tci_ir_var(a, t), steps);
    Expr *unit =
        tci_ir_binary(a, EXPR_ADD, cluster_of(p, block),
                      binary(p, EXPR_MUL, binary(p, EXPR_DIV, tci_ir_var(a, t), steps), clusters));
    /* The launch's block indices of the tile, x fastest; each wraps, so a tile past the
     * last one computes in range. */
    Var *vars[4] = {loop->loop.var};
    Expr *map[4] = {tci_ir_binary(a, EXPR_ADD, loop->loop.min, step)};
    int n = 1;
    int64_t below = 1;
    for (int d = 0; d < 3; d++) {
        if (!p->block_var[d])
            continue;
        bool clustered = d == p->cluster_dim;
        int64_t extent = clustered ? p->block_extent[d] / p->cluster : p->block_extent[d];
        vars[n] = p->block_var[d];
        map[n] = binary(p, EXPR_MOD, binary(p, EXPR_DIV, unit, below), extent);
        if (clustered)
            map[n] = tci_ir_binary(a, EXPR_ADD, binary(p, EXPR_MUL, map[n], p->cluster),
                                   rank_in_cluster(p, block));
        n++;
        below *= extent;
    }
    Stmt *first = beside(p, false), *last = beside(p, true);
    if (first && writes_global(first))
        return refuse(p, "the statements before it write global memory (the rounds past the "
                         "last tile would write a tile again)");
    if (last && rounds * clusters > units)
        last = tci_stmt_if(a, binary(p, EXPR_LT, unit, units), last, NULL);
    first = first ? tci_stmt_if(a, binary(p, EXPR_EQ, step, 0), first, NULL) : NULL;
    last = last ? tci_stmt_if(a, binary(p, EXPR_EQ, step, steps - 1), last, NULL) : NULL;
    Stmt *body = body_around(p, loop->loop.body, first, last);
    if (!body)
        return NULL;
    body = tci_stmt_substitute(a, body, n, vars, map);
    Stmt *out =
        tci_stmt_for(a, t, tci_ir_int(a, 0), tci_ir_int(a, rounds * steps), loop->loop.kind, body);
    out->loop.stages = loop->loop.stages;
    out->loop.in_flight = loop->loop.in_flight;
    out->loop.warp_specialized = loop->loop.warp_specialized;
    out->loop.turns = loop->loop.turns;
    out->loop.tile_steps = steps;
    return out;
}

static tcc_status persist(Persist *p)
{
    Arena *a = p->arena;
    PrimFunc *f = p->func;
    Stmt *flat = tci_stmt_new(a, STMT_SEQ);
    Stmt *body = strip(p, f->body, flat);
    if (!body)
        return tci_fail(p->pc->ctx, TCC_ERROR_SCHEDULE, "persistent_grid: loop %s: %s",
                        p->loop->loop.var->name, p->failure);
    /* Clusters of C blocks take units of C tiles: P / C clusters, ceil(T / C / (P / C))
     * rounds. */
    int64_t units = f->launch[0] * f->launch[1] * f->launch[2] / p->cluster;
    int64_t clusters = p->loop->loop.persistent / p->cluster;
    if (clusters < 1)
        clusters = 1;
    if (clusters > units)
        clusters = units;
    int64_t rounds = (units + clusters - 1) / clusters;
    /* Consumers taking turns take one tile each a turn: rounds come in whole turns, those
     * past the last tile computing in range and storing nothing. */
    int64_t turns = p->loop->loop.turns > 1 ? p->loop->loop.turns : 1;
    rounds = (rounds + turns - 1) / turns * turns;
    clusters = (units + rounds - 1) / rounds;
    Var *block = tci_prim_func_new_var(f, tci_thread_tag_name(TCC_BLOCK_X));
    Stmt *loop = carry_loop(p, block, clusters, rounds, units);
    if (!loop)
        return tci_fail(p->pc->ctx, TCC_ERROR_SCHEDULE, "persistent_grid: loop %s: %s",
                        p->loop->loop.var->name, p->failure);
    *flat = *loop;
    int64_t blocks = clusters * p->cluster;
    f->body = tci_stmt_thread(a, block, TCC_BLOCK_X, blocks, body);
    for (int d = 0; d < 3; d++) {
        f->thread_var[d] = d == 0 ? block : NULL;
        f->launch[d] = d == 0 ? blocks : 1;
        f->cluster[d] = p->cluster == 1 ? 0 : d == 0 ? p->cluster : 1;
    }
    return TCC_OK;
}

static bool find_turns(Visitor *v, const Stmt *s)
{
    v->done = v->done || (s->kind == STMT_FOR && s->loop.turns > 1 && !s->loop.tile_steps);
    return !v->done;
}

/* Consumers taking turns without tiles: a loop marked turns(T) that is not persistent (one
 * that persistent_grid made says its tile_steps). */
static tcc_status turns_refused(const PassContext *pc, const PrimFunc *func)
{
    Visitor v = {.stmt = find_turns};
    tci_visit_stmt(&v, func->body);
    return v.done ? tci_fail(pc->ctx, TCC_ERROR_SCHEDULE,
                             "persistent_grid: consumers taking turns need a persistent loop")
                  : TCC_OK;
}

tcc_status tci_pass_persistent_grid(const PassContext *pc, PrimFunc *func)
{
    const Stmt *found = NULL;
    Visitor v = {.stmt = find_persistent, .user = &found};
    tci_visit_stmt(&v, func->body);
    if (v.done)
        return tci_fail(pc->ctx, TCC_ERROR_SCHEDULE,
                        "persistent_grid: more than one loop is persistent");
    if (!found)
        return turns_refused(pc, func);
    if (found->loop.turns > 1 && !found->loop.warp_specialized)
        return tci_fail(pc->ctx, TCC_ERROR_SCHEDULE,
                        "persistent_grid: loop %s: consumers taking turns need a producer "
                        "warpgroup (warp_specialized)",
                        found->loop.var->name);
    Persist p = {.pc = pc,
                 .func = func,
                 .arena = func->arena,
                 .loop = found,
                 .cluster_dim = tci_cluster_axis(func),
                 .cluster = tci_cluster_blocks(func)};
    if (p.cluster > 1 && (p.cluster != tci_cluster_dim(func, p.cluster_dim) ||
                          func->launch[p.cluster_dim] % p.cluster))
        return tci_fail(pc->ctx, TCC_ERROR_SCHEDULE,
                        "persistent_grid: loop %s: its clusters must lie along one block index "
                        "and divide its blocks",
                        found->loop.var->name);
    return persist(&p);
}
