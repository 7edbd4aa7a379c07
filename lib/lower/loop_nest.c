/*
 * schedule_ops: the loop nest of a schedule.
 *
 * Starting from the output stage, each stage becomes its leaf loops (outermost first)
 * around the store of its body. The stages computed at a loop are produced inside that
 * loop, before the loops nested in it, each in an allocation of the region bound
 * inference gave it. A reduction gets its initialization in front of its first
 * reduction loop, over the spatial loops that follow. Tensor accesses become loads of
 * the buffers, and a loop marked by tensorize is replaced, with the loops inside it, by
 * one tensor-core operation (tensorize.c checks and builds it).
 */
#include "lower/loop_nest.h"

/* ---- expressions ------------------------------------------------------------------------ */

static Expr *access_to_load(Rewriter *rw, Expr *e)
{
    if (e->kind != EXPR_ACCESS)
        return NULL;
    Expr *args = tci_rewrite_expr_children(rw, e);
    Buffer *buffer = e->access.tensor->buffer;
    return tci_ir_load(rw->arena, buffer, args->access.nindex, args->access.index);
}

/* The stage's body with its root axes replaced by their loop values and accesses by loads. */
static Expr *lowered_value(Lowering *lw, const Stage *st, Expr *body)
{
    const Tensor *t = st->tensor;
    Var *roots[2 * TCI_MAX_DIMS];
    Expr *values[2 * TCI_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++, n++) {
        roots[n] = t->axis[i]->var;
        values[n] = tci_axis_value(lw, st, t->axis[i]);
    }
    for (int i = 0; i < t->nreduce; i++, n++) {
        roots[n] = t->reduce_axis[i]->var;
        values[n] = tci_axis_value(lw, st, t->reduce_axis[i]);
    }
    Expr *e = tci_expr_substitute(lw->arena, body, n, roots, values);
    Rewriter rw = {.arena = lw->arena, .expr = access_to_load};
    return tci_rewrite_expr(&rw, e);
}

static void store_index(Lowering *lw, const Stage *st, Expr **index)
{
    for (int i = 0; i < st->tensor->ndim; i++)
        index[i] = tci_axis_value(lw, st, st->tensor->axis[i]);
}

/* A split whose factor does not divide its extent runs past the end: guard the body. */
static Expr *split_guards(Lowering *lw, const Stage *st)
{
    Arena *a = lw->arena;
    Expr *cond = tci_ir_bool(a, true);
    for (int r = 0; r < st->nrel; r++) {
        const Relation *rel = &st->rel[r];
        if (rel->kind != REL_SPLIT ||
            rel->outer->extent * rel->inner->extent == rel->parent->extent)
            continue;
        Expr *offset = tci_axis_offset(lw, st, rel->parent);
        Expr *inside = tci_ir_binary(a, EXPR_LT, offset, tci_ir_int(a, rel->parent->extent));
        cond = tci_ir_binary(a, EXPR_AND, cond, inside);
    }
    return cond;
}

/* ---- loops ------------------------------------------------------------------------------ */

static Stmt *make_loop(Lowering *lw, const IterVar *leaf, Var *var, Stmt *body)
{
    Arena *a = lw->arena;
    Stmt *loop = leaf->bound ? tci_stmt_thread(a, leaf->loop_var, leaf->tag, leaf->extent, body)
                             : tci_stmt_for(a, var, tci_ir_int(a, 0), tci_ir_int(a, leaf->extent),
                                            leaf->for_kind, body);
    loop->loop.pragmas = leaf->pragmas;
    loop->loop.auto_unroll_max_step = leaf->auto_unroll_max_step;
    loop->loop.unroll_explicit = leaf->unroll_explicit;
    if (leaf->bound)
        return loop;
    loop->loop.stages = leaf->pipeline_stages;
    loop->loop.in_flight = leaf->pipeline_in_flight;
    loop->loop.warp_specialized = leaf->warp_specialized;
    loop->loop.persistent = leaf->persistent_blocks;
    loop->loop.turns = leaf->pingpong_consumers;
    return loop;
}

static int first_reduce_leaf(const Stage *st)
{
    for (int i = 0; i < st->nleaf; i++)
        if (st->leaf[i]->reduce)
            return i;
    return st->nleaf;
}

/* The stages computed at `leaf` of `st`, produced in front of `inner`. */
static tcc_status attach_children(Lowering *lw, const Stage *st, const IterVar *leaf, Stmt **inner)
{
    Func *func = lw->func;
    Stmt *produce = NULL;
    Buffer **allocated = tci_arena_alloc(lw->arena, sizeof(Buffer *) * (size_t)func->nstage);
    int nalloc = 0;
    for (int i = 0; i < func->nstage; i++) {
        Stage *child = func->stages[i];
        if (child->attach != ATTACH_AT || child->attach_stage != st || child->attach_axis != leaf)
            continue;
        Stmt *body;
        tcc_status status = tci_build_stage(lw, child, &body);
        if (status != TCC_OK)
            return status;
        produce = tci_stmt_seq2(lw->arena, produce, body);
        allocated[nalloc++] = child->tensor->buffer;
    }
    if (!produce)
        return TCC_OK;
    Stmt *s = tci_stmt_seq2(lw->arena, produce, *inner);
    for (int i = nalloc - 1; i >= 0; i--)
        s = tci_stmt_allocate(lw->arena, allocated[i], s);
    *inner = s;
    return TCC_OK;
}

static int tensorized_leaf(const Stage *st)
{
    for (int i = 0; i < st->nleaf; i++)
        if (st->leaf[i]->tensorized)
            return i;
    return -1;
}

/* The initialization of a reduction: the spatial leaves from `first` on, over fresh
 * variables, around `store` (or a fill_fragment where they are tensorized). */
static tcc_status build_init(Lowering *lw, const Stage *st, int first, Stmt *store, Stmt **out)
{
    Arena *a = lw->arena;
    Var **from = tci_arena_alloc(a, sizeof(Var *) * (size_t)st->nleaf);
    Var **to = tci_arena_alloc(a, sizeof(Var *) * (size_t)st->nleaf);
    Expr **to_expr = tci_arena_alloc(a, sizeof(Expr *) * (size_t)st->nleaf);
    int n = 0;
    for (int i = first; i < st->nleaf; i++) {
        IterVar *leaf = st->leaf[i];
        if (leaf->reduce || leaf->bound)
            continue;
        from[n] = leaf->loop_var;
        to[n] =
            tci_prim_func_new_var(lw->prim, tci_arena_printf(a, "%s.init", leaf->loop_var->name));
        to_expr[n] = tci_ir_var(a, to[n]);
        n++;
    }
    Stmt *s = store;
    int tensorized = tensorized_leaf(st);
    for (int i = st->nleaf - 1, k = n - 1; i >= first; i--) {
        IterVar *leaf = st->leaf[i];
        if (leaf->reduce)
            continue;
        if (tensorized >= 0 && i >= tensorized) {
            if (i == tensorized) {
                tcc_status status = tci_tensorize_stage(lw, st, i, true, &s);
                if (status != TCC_OK)
                    return status;
            }
        } else {
            s = make_loop(lw, leaf, leaf->bound ? leaf->loop_var : to[k], s);
        }
        if (!leaf->bound)
            k--;
    }
    *out = tci_stmt_substitute(a, s, n, from, to_expr);
    return TCC_OK;
}

static bool is_tensorized(const Stage *st)
{
    for (int i = 0; i < st->nleaf; i++)
        if (st->leaf[i]->tensorized)
            return true;
    return false;
}

/* Whether the element at `index` of a stage computed inside another lies in the stage's
 * domain: true where the ranges of the loops prove it. */
static Expr *domain_test(Lowering *lw, const Stage *st, Expr *const *index)
{
    Arena *a = lw->arena;
    const Tensor *t = st->tensor;
    Expr *cond = tci_ir_bool(a, true);
    if (st->attach != ATTACH_AT)
        return cond;
    for (int d = 0; d < t->ndim; d++) {
        const IterVar *axis = t->axis[d];
        if (tci_expr_is_int(axis->min, 0) && axis->extent <= axis->dom_extent)
            continue;
        cond =
            tci_ir_binary(a, EXPR_AND, cond, tci_ir_binary(a, EXPR_LE, tci_ir_int(a, 0), index[d]));
        cond = tci_ir_binary(a, EXPR_AND, cond,
                             tci_ir_binary(a, EXPR_LT, index[d], tci_ir_int(a, axis->dom_extent)));
    }
    /* Most regions stay inside: the ranges of the loops prove it, and the test goes. */
    return tci_simplify(a, cond, lw->nrange, lw->ranges);
}

/* A stage computed inside another covers the region its consumers read, which can
 * reach past its own domain (a split that does not divide, a read at i - 1). There its
 * elements are zero rather than computed: nothing out of range is read, and a tile fed
 * to the tensor cores stays whole, zero-padded. (TVM skips such elements instead.) A
 * tensorized stage is computed whole: see guard_global_loads. */
static Expr *inside_domain(Lowering *lw, const Stage *st, Expr *const *index)
{
    return is_tensorized(st) ? tci_ir_bool(lw->arena, true) : domain_test(lw, st, index);
}

static Expr *zero_of(Arena *a, tcc_dtype type)
{
    return type == TCC_INT32 || type == TCC_INT8 ? tci_ir_cast(a, type, tci_ir_int(a, 0))
                                                 : tci_ir_float(a, 0, type);
}

static Expr *guard_global_load(Rewriter *rw, Expr *e)
{
    if (e->kind != EXPR_LOAD || e->load.buffer->scope != TCC_SCOPE_GLOBAL)
        return NULL;
    return tci_ir_select(rw->arena, rw->user, tci_rewrite_expr_children(rw, e),
                         zero_of(rw->arena, e->type));
}

/* A tensorized stage (the accumulators written, through an epilogue, into an output tile) is
 * computed whole, past its domain's edges too, where nothing of the tile is stored: the global
 * tensors its value reads (the output's previous values, a residual, a bias) are read inside
 * the domain only. */
static Expr *guard_global_loads(Lowering *lw, const Stage *st, Expr *const *index, Expr *value)
{
    if (!is_tensorized(st))
        return value;
    Expr *inside = domain_test(lw, st, index);
    if (tci_expr_is_int(inside, 1))
        return value;
    Rewriter rw = {.arena = lw->arena, .expr = guard_global_load, .user = inside};
    return tci_rewrite_expr(&rw, value);
}

static tcc_status make_body(Lowering *lw, const Stage *st, Stmt **update, Stmt **init)
{
    Arena *a = lw->arena;
    Tensor *t = st->tensor;
    Expr *index[TCI_MAX_DIMS];
    store_index(lw, st, index);
    Expr *value = guard_global_loads(lw, st, index, lowered_value(lw, st, t->lowered_body));
    Expr *inside = inside_domain(lw, st, index);
    if (!tci_expr_is_int(inside, 1)) {
        if (value->kind == EXPR_REDUCE) {
            Expr *copy = tci_arena_alloc(a, sizeof *copy);
            *copy = *value;
            copy->reduce.source =
                tci_ir_select(a, inside, value->reduce.source, zero_of(a, value->type));
            value = copy;
        } else {
            value = tci_ir_select(a, inside, value, zero_of(a, t->type));
        }
    }
    *init = NULL;
    if (value->kind == EXPR_REDUCE) {
        Expr *old = tci_ir_load(a, t->buffer, t->ndim, index);
        value = tci_ir_binary(a, EXPR_ADD, old, value->reduce.source);
        *init = tci_stmt_store(a, t->buffer, t->ndim, index, zero_of(a, t->type));
    }
    Stmt *store;
    if (t->store_target) {
        Tensor *target = t->store_target;
        Expr *target_index[TCI_MAX_DIMS];
        for (int d = 0; d < target->ndim; d++)
            target_index[d] = lowered_value(lw, st, t->store_index[d]);
        store = tci_stmt_store(a, target->buffer, target->ndim, target_index, value);
    } else {
        store = tci_stmt_store(a, t->buffer, t->ndim, index, value);
    }
    Expr *guard = split_guards(lw, st);
    *update = tci_expr_is_int(guard, 1) ? store : tci_stmt_if(a, guard, store, NULL);
    return TCC_OK;
}

static bool has_children(Lowering *lw, const Stage *st, const IterVar *leaf)
{
    for (int i = 0; i < lw->func->nstage; i++) {
        const Stage *child = lw->func->stages[i];
        if (child->attach == ATTACH_AT && child->attach_stage == st && child->attach_axis == leaf)
            return true;
    }
    return false;
}

tcc_status tci_build_stage(Lowering *lw, const Stage *st, Stmt **out)
{
    if (st->bulk_copy)
        return tci_build_bulk_copy(lw, st, out);
    Stmt *s, *init;
    tcc_status status = make_body(lw, st, &s, &init);
    int first_reduce = first_reduce_leaf(st);
    int tensorized = tensorized_leaf(st);
    int stored = st->bulk_store_at ? tci_stage_leaf_index(st, st->bulk_store_at) : -1;
    /* The tile a bulk store reads is written once the last stores have read it. */
    Stmt *wait = tci_bulk_store_source(lw, st) ? tci_bulk_store_wait(lw, st) : NULL;
    /* When the intrinsic covers every reduction loop, its init goes right before it. */
    if (tensorized >= 0 && first_reduce > tensorized)
        first_reduce = tensorized;
    for (int i = st->nleaf - 1; i >= 0 && status == TCC_OK; i--) {
        IterVar *leaf = st->leaf[i];
        if (tensorized >= 0 && i >= tensorized && has_children(lw, st, leaf))
            return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                            "a stage is computed at %s of %s, inside its tensorized loops",
                            leaf->var->name, st->tensor->name);
        if ((tensorized >= 0 && i > tensorized) || (stored >= 0 && i > stored))
            continue;
        if (i == stored) {
            status = tci_build_bulk_store(lw, st, i, &s);
        } else if (i == tensorized && leaf->intrinsic == TCC_WGMMA_ELEMENTS) {
            /* Right before the elements are written: in a persistent grid, at the next
             * tile's end, long after the stores. */
            status = tci_tensorize_elements(lw, st, i, s, &s);
            s = tci_stmt_seq2(lw->arena, wait, s);
            wait = NULL;
        } else if (i == tensorized) {
            status = tci_tensorize_stage(lw, st, i, false, &s);
        } else {
            status = attach_children(lw, st, leaf, &s);
            s = make_loop(lw, leaf, leaf->loop_var, s);
        }
        if (status == TCC_OK && init && i == first_reduce) {
            Stmt *init_nest = NULL;
            status = build_init(lw, st, first_reduce, init, &init_nest);
            s = tci_stmt_seq2(lw->arena, init_nest, s);
        }
    }
    *out = tci_stmt_seq2(lw->arena, wait, s);
    return status;
}

/* Every stage computed inside another gets a buffer shaped like its inferred region. */
static tcc_status realize_buffers(Lowering *lw)
{
    Func *func = lw->func;
    for (int i = 0; i < func->nstage; i++) {
        Stage *st = func->stages[i];
        Tensor *t = st->tensor;
        if (!t->is_compute || st->attach == ATTACH_INLINE || t->buffer || t->store_target)
            continue;
        if (st->attach != ATTACH_AT)
            return tci_fail(lw->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "output %s is not among the kernel's parameters", t->name);
        int64_t shape[TCI_MAX_DIMS];
        for (int d = 0; d < t->ndim; d++)
            shape[d] = t->axis[d]->extent;
        if (tci_indexable_elements(t->ndim, shape) < 0)
            return tci_lower_too_large(lw, t->name);
        t->buffer = tci_ir_buffer(lw->arena, t->name, t->type, st->scope, t->ndim, shape);
        for (int d = t->ndim - 1; d >= 0; d--) {
            t->buffer->min[d] = t->axis[d]->min;
            tci_buffer_align(t->buffer, d, st->align_factor[d], st->align_offset[d]);
        }
        if (st->swizzle_blocks && !tci_buffer_swizzle_blocks(t->buffer))
            return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                            "storage_swizzle_blocks %s: its tile cannot lie in column blocks of "
                            "128 bytes (two dimensions at least, rows a multiple of 8, columns a "
                            "multiple of the block's)",
                            t->name);
        if (st->swizzle && !st->swizzle_blocks && !tci_buffer_swizzle(t->buffer))
            return tci_fail(
                lw->ctx, TCC_ERROR_SCHEDULE,
                "storage_swizzle %s: rows of %lld bytes; a swizzle needs dense rows "
                "of a power of two of at least 32 bytes",
                t->name,
                (long long)(t->buffer->shape[t->ndim - 1] * (int64_t)tcc_dtype_size(t->type)));
    }
    return TCC_OK;
}

/* The range of every loop of the schedule, for folding the domain tests. */
static void collect_loop_ranges(Lowering *lw)
{
    Func *func = lw->func;
    int room = 6;
    for (int i = 0; i < func->nstage; i++)
        room += func->stages[i]->nleaf;
    lw->ranges = tci_arena_alloc(lw->arena, sizeof(VarRange) * (size_t)room);
    lw->nrange = 0;
    for (int tag = 0; tag < 6; tag++)
        if (lw->prim->thread_var[tag])
            lw->ranges[lw->nrange++] =
                (VarRange){lw->prim->thread_var[tag], 0, lw->prim->launch[tag]};
    for (int i = 0; i < func->nstage; i++) {
        const Stage *st = func->stages[i];
        if (!st->tensor->is_compute || st->attach == ATTACH_INLINE)
            continue;
        for (int j = 0; j < st->nleaf; j++)
            if (!st->leaf[j]->bound || st->leaf[j]->tag == TCC_VTHREAD)
                lw->ranges[lw->nrange++] =
                    (VarRange){st->leaf[j]->loop_var, 0, st->leaf[j]->extent};
    }
}

tcc_status tci_lower_loop_nest(Lowering *lw)
{
    collect_loop_ranges(lw);
    tcc_status status = realize_buffers(lw);
    Stmt *body = NULL;
    for (int i = 0; i < lw->func->nstage && status == TCC_OK; i++) {
        Stage *st = lw->func->stages[i];
        if (!st->is_output)
            continue;
        Stmt *nest;
        status = tci_build_stage(lw, st, &nest);
        body = tci_stmt_seq2(lw->arena, body, nest);
    }
    lw->prim->body = body;
    return status;
}
