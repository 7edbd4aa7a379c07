/*
 * Schedule primitives. Each one checks its arguments, edits one stage (or, for
 * cache_read/cache_write, adds a tensor and its stage) and returns; nothing here builds
 * loops: passes/ reads the stages when lowering.
 */
#include "te/te.h"

#include <string.h>

Stage *tci_stage_new(Func *func, Tensor *tensor)
{
    Stage *st = tci_arena_alloc(func->arena, sizeof *st);
    st->func = func;
    st->tensor = tensor;
    st->scope = TCC_SCOPE_GLOBAL;
    st->attach = ATTACH_ROOT;
    tensor->stage = st;
    if (!tensor->is_compute)
        return st;
    for (int i = 0; i < tensor->ndim; i++)
        tci_push(func->arena, (void ***)&st->leaf, &st->nleaf, &st->leaf_cap, tensor->axis[i]);
    for (int i = 0; i < tensor->nreduce; i++)
        tci_push(func->arena, (void ***)&st->leaf, &st->nleaf, &st->leaf_cap,
                 tensor->reduce_axis[i]);
    for (int i = 0; i < st->nleaf; i++)
        st->leaf[i]->stage = st;
    return st;
}

tcc_status tcc_schedule_create(tcc_func *func, int noutput, tcc_tensor *const *outputs)
{
    if (!func)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (func->failed)
        return tci_func_status(func);
    if (func->scheduled)
        return tci_fail(func->ctx, TCC_ERROR_INVALID_ARGUMENT, "the schedule already exists");
    if (noutput < 1 || !outputs)
        return tci_fail(func->ctx, TCC_ERROR_INVALID_ARGUMENT, "a schedule needs an output");
    for (int i = 0; i < func->ntensor; i++) {
        Stage *st = tci_stage_new(func, func->tensors[i]);
        tci_push(func->arena, (void ***)&func->stages, &func->nstage, &func->stage_cap, st);
    }
    for (int i = 0; i < noutput; i++) {
        if (!outputs[i] || !outputs[i]->is_compute || outputs[i]->func != func)
            return tci_fail(func->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "output %d is not a compute tensor of this function", i);
        outputs[i]->stage->is_output = true;
    }
    func->scheduled = true;
    return TCC_OK;
}

tcc_stage *tcc_stage_of(tcc_func *func, tcc_tensor *tensor)
{
    if (!func || !tensor || !func->scheduled)
        return NULL;
    return tensor->stage;
}

/* ---- reading relations ----------------------------------------------------------------- */

static bool find_access(Visitor *v, const Expr *e)
{
    if (e->kind == EXPR_ACCESS && e->access.tensor == v->user)
        v->done = true;
    return true;
}

bool tci_expr_reads(const Expr *e, const Tensor *tensor)
{
    Visitor v = {.expr = find_access, .user = (void *)tensor};
    tci_visit_expr(&v, e);
    return v.done;
}

int tci_stage_readers(Func *func, const Tensor *tensor, Stage **out, int max)
{
    int n = 0;
    for (int i = 0; i < func->nstage; i++) {
        Tensor *t = func->stages[i]->tensor;
        if (t->is_compute && tci_expr_reads(t->body, tensor) && n < max)
            out[n++] = func->stages[i];
    }
    return n;
}

/* ---- cache_read / cache_write ------------------------------------------------------------ */

static void insert_stage(Func *func, Stage *st, int position)
{
    tci_push(func->arena, (void ***)&func->stages, &func->nstage, &func->stage_cap, st);
    memmove(&func->stages[position + 1], &func->stages[position],
            sizeof(Stage *) * (size_t)(func->nstage - 1 - position));
    func->stages[position] = st;
}

static int stage_position(Func *func, const Stage *st)
{
    for (int i = 0; i < func->nstage; i++)
        if (func->stages[i] == st)
            return i;
    return -1;
}

/* A compute tensor `name` that copies `source` element by element. */
static Tensor *copy_tensor(Func *func, const char *name, Tensor *source)
{
    Tensor *t = tci_tensor_new(func, name, true, source->ndim, source->shape, source->type);
    if (!t)
        return NULL;
    Expr *index[TCI_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        char *axis_name = tci_arena_printf(func->arena, "ax%d", i);
        t->axis[i] = tci_iter_var_new(func, axis_name, t->shape[i], false);
        index[i] = tci_ir_var(func->arena, t->axis[i]->var);
    }
    t->body = tci_ir_access(func->arena, source, t->ndim, index);
    return t;
}

typedef struct Retarget {
    Tensor *from, *to;
} Retarget;

static Expr *retarget_access(Rewriter *rw, Expr *e)
{
    Retarget *r = rw->user;
    if (e->kind != EXPR_ACCESS || e->access.tensor != r->from)
        return NULL;
    Expr *copy = tci_rewrite_expr_children(rw, e);
    return tci_ir_access(rw->arena, r->to, copy->access.nindex, copy->access.index);
}

tcc_tensor *tcc_cache_read(tcc_func *func, tcc_tensor *tensor, tcc_scope scope, int nreader,
                           tcc_tensor *const *readers)
{
    if (!func || !tensor || !func->scheduled || func->failed)
        return NULL;
    if (nreader < 1 || !readers)
        return tci_func_fail(func, TCC_ERROR_SCHEDULE, "cache_read %s: no readers", tensor->name);
    for (int i = 0; i < nreader; i++)
        if (!readers[i] || !readers[i]->is_compute || !tci_expr_reads(readers[i]->body, tensor))
            return tci_func_fail(func, TCC_ERROR_SCHEDULE, "cache_read: %s does not read %s",
                                 readers[i] ? readers[i]->name : "?", tensor->name);
    const char *name = tci_arena_printf(func->arena, "%s.%s", tensor->name, tci_scope_name(scope));
    Tensor *cache = copy_tensor(func, name, tensor);
    if (!cache)
        return NULL;
    Retarget r = {tensor, cache};
    Rewriter rw = {.arena = func->arena, .expr = retarget_access, .user = &r};
    for (int i = 0; i < nreader; i++)
        readers[i]->body = tci_rewrite_expr(&rw, readers[i]->body);
    Stage *st = tci_stage_new(func, cache);
    st->scope = scope;
    insert_stage(func, st, stage_position(func, tensor->stage) + 1);
    return cache;
}

tcc_tensor *tcc_cache_write(tcc_func *func, tcc_tensor *tensor, tcc_scope scope)
{
    if (!func || !tensor || !func->scheduled || func->failed)
        return NULL;
    Stage *old = tensor->stage;
    if (!tensor->is_compute || old->nrel > 0)
        return tci_func_fail(func, TCC_ERROR_SCHEDULE,
                             "cache_write: %s must be a compute tensor not yet split or fused",
                             tensor->name);
    const char *name = tci_arena_printf(func->arena, "%s.%s", tensor->name, tci_scope_name(scope));
    Tensor *cache = tci_tensor_new(func, name, true, tensor->ndim, tensor->shape, tensor->type);
    if (!cache)
        return NULL;
    /* The cache computes what the tensor computed, over axes of its own; the tensor
     * becomes a copy of the cache. The reduction axes move with the computation. */
    Var *from[TCI_MAX_DIMS];
    Expr *to[TCI_MAX_DIMS], *index[TCI_MAX_DIMS];
    for (int i = 0; i < tensor->ndim; i++) {
        char *axis_name = tci_arena_printf(func->arena, "%s.c", tensor->axis[i]->var->name);
        cache->axis[i] = tci_iter_var_new(func, axis_name, tensor->shape[i], false);
        from[i] = tensor->axis[i]->var;
        to[i] = tci_ir_var(func->arena, cache->axis[i]->var);
        index[i] = tci_ir_var(func->arena, tensor->axis[i]->var);
    }
    cache->body = tci_expr_substitute(func->arena, tensor->body, tensor->ndim, from, to);
    cache->nreduce = tensor->nreduce;
    memcpy(cache->reduce_axis, tensor->reduce_axis, sizeof cache->reduce_axis);
    tensor->nreduce = 0;
    tensor->body = tci_ir_access(func->arena, cache, tensor->ndim, index);
    old->nleaf = tensor->ndim;
    Stage *st = tci_stage_new(func, cache);
    st->scope = scope;
    insert_stage(func, st, stage_position(func, old));
    return cache;
}

tcc_status tcc_set_scope(tcc_stage *stage, tcc_scope scope)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!stage->tensor->is_compute || stage->is_output || (int)scope < TCC_SCOPE_GLOBAL ||
        scope > TCC_SCOPE_WMMA_ACCUMULATOR)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "set_scope: %s must be a compute that is not an output, and the scope "
                        "known",
                        stage->tensor->name);
    stage->scope = scope;
    return TCC_OK;
}

/* ---- loop primitives ---------------------------------------------------------------------- */

int tci_stage_leaf_index(const Stage *stage, const IterVar *axis)
{
    for (int i = 0; i < stage->nleaf; i++)
        if (stage->leaf[i] == axis)
            return i;
    return -1;
}

static tcc_status not_a_leaf(const Stage *stage, const IterVar *axis, const char *primitive)
{
    return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                    "%s: axis %s is not a loop of stage %s (already split or fused, or of "
                    "another stage)",
                    primitive, axis ? axis->var->name : "(null)", stage->tensor->name);
}

static Relation *add_relation(Stage *stage)
{
    Func *func = stage->func;
    if (stage->nrel == stage->rel_cap) {
        int cap = stage->rel_cap ? stage->rel_cap * 2 : 8;
        Relation *rel = tci_arena_alloc(func->arena, sizeof(Relation) * (size_t)cap);
        if (stage->nrel)
            memcpy(rel, stage->rel, sizeof(Relation) * (size_t)stage->nrel);
        stage->rel = rel;
        stage->rel_cap = cap;
    }
    return &stage->rel[stage->nrel++];
}

static IterVar *derived_axis(Stage *stage, const char *name, bool reduce)
{
    IterVar *iv = tci_iter_var_new(stage->func, name, 0, reduce);
    iv->stage = stage;
    return iv;
}

static tcc_status split(tcc_stage *stage, tcc_iter_var *axis, int64_t factor, int64_t nparts,
                        tcc_iter_var **outer, tcc_iter_var **inner)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    int at = tci_stage_leaf_index(stage, axis);
    if (at < 0)
        return not_a_leaf(stage, axis, "split");
    if (factor < 0 || nparts < 0 || (factor == 0 && nparts == 0))
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "split of %s: the factor must be at least 1 (got %lld)", axis->var->name,
                        (long long)(factor ? factor : nparts));
    Arena *arena = stage->func->arena;
    Relation *rel = add_relation(stage);
    rel->kind = REL_SPLIT;
    rel->parent = axis;
    rel->factor = factor;
    rel->nparts = nparts;
    rel->outer =
        derived_axis(stage, tci_arena_printf(arena, "%s.outer", axis->var->name), axis->reduce);
    rel->inner =
        derived_axis(stage, tci_arena_printf(arena, "%s.inner", axis->var->name), axis->reduce);
    stage->leaf[at] = rel->outer;
    tci_push(arena, (void ***)&stage->leaf, &stage->nleaf, &stage->leaf_cap, NULL);
    memmove(&stage->leaf[at + 2], &stage->leaf[at + 1],
            sizeof(IterVar *) * (size_t)(stage->nleaf - at - 2));
    stage->leaf[at + 1] = rel->inner;
    if (outer)
        *outer = rel->outer;
    if (inner)
        *inner = rel->inner;
    return TCC_OK;
}

tcc_status tcc_split(tcc_stage *stage, tcc_iter_var *axis, int64_t factor, tcc_iter_var **outer,
                     tcc_iter_var **inner)
{
    if (stage && factor < 1)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "split: the factor must be at least 1 (got %lld)", (long long)factor);
    return split(stage, axis, factor, 0, outer, inner);
}

tcc_status tcc_split_nparts(tcc_stage *stage, tcc_iter_var *axis, int64_t nparts,
                            tcc_iter_var **outer, tcc_iter_var **inner)
{
    if (stage && nparts < 1)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "split: nparts must be at least 1 (got %lld)", (long long)nparts);
    return split(stage, axis, 0, nparts, outer, inner);
}

tcc_status tcc_fuse(tcc_stage *stage, tcc_iter_var *outer, tcc_iter_var *inner,
                    tcc_iter_var **fused)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    int a = tci_stage_leaf_index(stage, outer), b = tci_stage_leaf_index(stage, inner);
    if (a < 0)
        return not_a_leaf(stage, outer, "fuse");
    if (b < 0)
        return not_a_leaf(stage, inner, "fuse");
    if (b != a + 1)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "fuse: %s must be the loop directly inside %s", inner->var->name,
                        outer->var->name);
    if (outer->reduce != inner->reduce)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "fuse: cannot fuse a reduce axis with a spatial one");
    Arena *arena = stage->func->arena;
    Relation *rel = add_relation(stage);
    rel->kind = REL_FUSE;
    rel->outer = outer;
    rel->inner = inner;
    rel->fused = derived_axis(
        stage, tci_arena_printf(arena, "%s.%s.fused", outer->var->name, inner->var->name),
        outer->reduce);
    stage->leaf[a] = rel->fused;
    memmove(&stage->leaf[b], &stage->leaf[b + 1],
            sizeof(IterVar *) * (size_t)(stage->nleaf - b - 1));
    stage->nleaf--;
    if (fused)
        *fused = rel->fused;
    return TCC_OK;
}

tcc_status tcc_reorder(tcc_stage *stage, int naxis, tcc_iter_var *const *order)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    int position[64];
    if (naxis < 1 || naxis > 64 || naxis > stage->nleaf || !order)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE, "reorder: bad number of axes (%d)",
                        naxis);
    for (int i = 0; i < naxis; i++) {
        position[i] = tci_stage_leaf_index(stage, order[i]);
        if (position[i] < 0)
            return not_a_leaf(stage, order[i], "reorder");
        for (int j = 0; j < i; j++)
            if (position[j] == position[i])
                return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                                "reorder: axis %s appears twice", order[i]->var->name);
    }
    /* The named axes keep the set of positions they occupy, in the new order. */
    int sorted[64];
    memcpy(sorted, position, sizeof(int) * (size_t)naxis);
    for (int i = 1; i < naxis; i++)
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            int t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    for (int i = 0; i < naxis; i++)
        stage->leaf[sorted[i]] = order[i];
    return TCC_OK;
}

tcc_status tcc_bind(tcc_stage *stage, tcc_iter_var *axis, tcc_thread_tag tag)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (tci_stage_leaf_index(stage, axis) < 0)
        return not_a_leaf(stage, axis, "bind");
    if (axis->reduce)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "bind: reduce axis %s cannot be bound to %s", axis->var->name,
                        tci_thread_tag_name(tag));
    if ((int)tag < TCC_BLOCK_X || tag > TCC_VTHREAD)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE, "bind: unknown thread tag");
    /* Virtual threads are axes of their own, as many as the stage likes (TVM's vthread). */
    for (int i = 0; i < stage->nleaf && tag != TCC_VTHREAD; i++)
        if (stage->leaf[i] != axis && stage->leaf[i]->bound && stage->leaf[i]->tag == tag)
            return tci_fail(
                stage->func->ctx, TCC_ERROR_SCHEDULE, "bind: %s of stage %s is already bound to %s",
                stage->leaf[i]->var->name, stage->tensor->name, tci_thread_tag_name(tag));
    axis->bound = true;
    axis->tag = tag;
    return TCC_OK;
}

tcc_status tcc_compute_at(tcc_stage *stage, tcc_stage *parent, tcc_iter_var *axis)
{
    if (!stage || !parent)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (tci_stage_leaf_index(parent, axis) < 0)
        return not_a_leaf(parent, axis, "compute_at");
    if (stage == parent || !stage->tensor->is_compute)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "compute_at: %s cannot be computed inside %s", stage->tensor->name,
                        parent->tensor->name);
    stage->attach = ATTACH_AT;
    stage->attach_stage = parent;
    stage->attach_axis = axis;
    return TCC_OK;
}

tcc_status tcc_compute_inline(tcc_stage *stage)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!stage->tensor->is_compute || stage->tensor->nreduce > 0 || stage->is_output)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "compute_inline: %s must be an element-wise compute that is not an output",
                        stage->tensor->name);
    stage->attach = ATTACH_INLINE;
    return TCC_OK;
}

static tcc_status annotate(tcc_stage *stage, tcc_iter_var *axis, ForKind kind, const char *name)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (tci_stage_leaf_index(stage, axis) < 0)
        return not_a_leaf(stage, axis, name);
    axis->for_kind = kind;
    return TCC_OK;
}

tcc_status tcc_vectorize(tcc_stage *stage, tcc_iter_var *axis)
{
    return annotate(stage, axis, FOR_VECTORIZED, "vectorize");
}

tcc_status tcc_unroll(tcc_stage *stage, tcc_iter_var *axis)
{
    return annotate(stage, axis, FOR_UNROLLED, "unroll");
}

tcc_status tcc_pragma(tcc_stage *stage, tcc_iter_var *axis, const char *name, int64_t value)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (tci_stage_leaf_index(stage, axis) < 0)
        return not_a_leaf(stage, axis, "pragma");
    PragmaKind kind = name ? tci_pragma_kind(name, strlen(name)) : (PragmaKind)0;
    if (!kind)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "pragma: unknown pragma '%.64s' (auto_unroll_max_step, unroll_explicit)",
                        name ? name : "(null)");
    if (kind == PRAGMA_AUTO_UNROLL_MAX_STEP && (value < 0 || value > INT32_MAX))
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "pragma auto_unroll_max_step: %lld is not 0 to 2^31 - 1", (long long)value);
    if (kind == PRAGMA_UNROLL_EXPLICIT && value != 0 && value != 1)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "pragma unroll_explicit: %lld is neither 0 nor 1", (long long)value);
    axis->pragmas |= (unsigned)kind;
    if (kind == PRAGMA_AUTO_UNROLL_MAX_STEP)
        axis->auto_unroll_max_step = value;
    else
        axis->unroll_explicit = value == 1;
    return TCC_OK;
}

tcc_status tcc_pipeline(tcc_stage *stage, tcc_iter_var *axis, int stages)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (tci_stage_leaf_index(stage, axis) < 0)
        return not_a_leaf(stage, axis, "pipeline");
    if (stages < 2 || stages > TCC_MAX_PIPELINE_STAGES || axis->bound || axis->tensorized ||
        axis->for_kind != FOR_SERIAL)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "pipeline %s: %s must be a serial loop and stages between 2 and %d, not %d",
                        stage->tensor->name, axis->var->name, TCC_MAX_PIPELINE_STAGES, stages);
    axis->pipeline_stages = stages;
    axis->pipeline_in_flight = 0;
    return TCC_OK;
}

tcc_status tcc_pipeline_in_flight(tcc_stage *stage, tcc_iter_var *axis, int stages, int in_flight)
{
    if (stage && (in_flight < 0 || in_flight > stages - 2))
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "pipeline %s: the iterations in flight must be 0 to %d (the stages less "
                        "2), not %d",
                        stage->tensor->name, stages - 2, in_flight);
    tcc_status status = tcc_pipeline(stage, axis, stages);
    if (status == TCC_OK)
        axis->pipeline_in_flight = in_flight;
    return status;
}

tcc_status tcc_warp_specialize(tcc_stage *stage, tcc_iter_var *axis)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (tci_stage_leaf_index(stage, axis) < 0)
        return not_a_leaf(stage, axis, "warp_specialize");
    if (!axis->pipeline_stages)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "warp_specialize %s: %s is not pipelined (tcc_pipeline it first)",
                        stage->tensor->name, axis->var->name);
    axis->warp_specialized = true;
    return TCC_OK;
}

tcc_status tcc_persistent(tcc_stage *stage, tcc_iter_var *axis, int64_t blocks)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (tci_stage_leaf_index(stage, axis) < 0)
        return not_a_leaf(stage, axis, "persistent");
    if (!axis->pipeline_stages || blocks < 1 || blocks > tci_device_limits.grid_dim[0])
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "persistent %s: %s must be pipelined (tcc_pipeline it first) and the "
                        "blocks between 1 and %lld, not %lld",
                        stage->tensor->name, axis->var->name,
                        (long long)tci_device_limits.grid_dim[0], (long long)blocks);
    axis->persistent_blocks = blocks;
    return TCC_OK;
}

tcc_status tcc_pingpong(tcc_stage *stage, tcc_iter_var *axis, int consumers)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (tci_stage_leaf_index(stage, axis) < 0)
        return not_a_leaf(stage, axis, "pingpong");
    if (!axis->warp_specialized || !axis->persistent_blocks || consumers < 2 ||
        consumers > TCC_MAX_PINGPONG_CONSUMERS)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "pingpong %s: %s must be persistent and warp-specialized (tcc_persistent, "
                        "tcc_warp_specialize), and the consumers 2 to %d, not %d",
                        stage->tensor->name, axis->var->name, TCC_MAX_PINGPONG_CONSUMERS,
                        consumers);
    axis->pingpong_consumers = consumers;
    return TCC_OK;
}

tcc_status tcc_cluster(tcc_stage *stage, tcc_iter_var *axis, int blocks)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (tci_stage_leaf_index(stage, axis) < 0)
        return not_a_leaf(stage, axis, "cluster");
    if (!axis->bound || axis->tag > TCC_BLOCK_Z || blocks < 1 || blocks > TCC_MAX_CLUSTER_BLOCKS)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "cluster %s: %s must be bound to a block index and the cluster's blocks "
                        "1 to %d, not %d",
                        stage->tensor->name, axis->var->name, TCC_MAX_CLUSTER_BLOCKS, blocks);
    for (int i = 0; i < stage->nleaf; i++)
        if (stage->leaf[i] != axis && stage->leaf[i]->cluster_blocks > 1 && blocks > 1)
            return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                            "cluster %s: %s is clustered already; clusters lie along one axis",
                            stage->tensor->name, stage->leaf[i]->var->name);
    axis->cluster_blocks = blocks;
    return TCC_OK;
}

tcc_status tcc_storage_align(tcc_stage *stage, tcc_iter_var *axis, int64_t factor, int64_t offset)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    Tensor *t = stage->tensor;
    for (int d = 0; d < t->ndim; d++)
        if (t->is_compute && t->axis[d] == axis) {
            if (factor < 1 || offset < 0)
                return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                                "storage_align %s: factor %lld must be positive and offset %lld "
                                "not negative",
                                t->name, (long long)factor, (long long)offset);
            stage->align_factor[d] = factor;
            stage->align_offset[d] = offset;
            return TCC_OK;
        }
    return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                    "storage_align %s: the axis must be one of the tensor's own axes", t->name);
}

tcc_status tcc_storage_swizzle(tcc_stage *stage)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!stage->tensor->is_compute || stage->scope != TCC_SCOPE_SHARED)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE,
                        "storage_swizzle %s: only a computed shared stage can be swizzled",
                        stage->tensor->name);
    stage->swizzle = true;
    return TCC_OK;
}

tcc_status tcc_storage_swizzle_blocks(tcc_stage *stage)
{
    tcc_status status = tcc_storage_swizzle(stage);
    if (status == TCC_OK)
        stage->swizzle_blocks = true;
    return status;
}

tcc_status tcc_tensorize(tcc_stage *stage, tcc_iter_var *axis, tcc_intrinsic intrinsic, int m,
                         int n, int k)
{
    return tcc_tensorize_layout(stage, axis, intrinsic, m, n, k, false);
}

tcc_status tcc_tensorize_layout(tcc_stage *stage, tcc_iter_var *axis, tcc_intrinsic intrinsic,
                                int m, int n, int k, bool col_major)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (tci_stage_leaf_index(stage, axis) < 0)
        return not_a_leaf(stage, axis, "tensorize");
    if (!tci_target_shape_exists(m, n, k)) {
        char shape[32], names[128];
        tci_target_shape_names(TCC_VOID, " or ", names, sizeof names);
        return tci_fail(stage->func->ctx, TCC_ERROR_UNSUPPORTED, "tensorize: no MMA shape %s (%s)",
                        tci_target_shape_name(m, n, k, shape, sizeof shape), names);
    }
    if ((int)intrinsic < TCC_WMMA_LOAD_A || intrinsic > TCC_WGMMA_ELEMENTS)
        return tci_fail(stage->func->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tensorize: unknown intrinsic %d", (int)intrinsic);
    /* The operation (load A, load B, mma, store, elements) and the family that spells it. */
    if (intrinsic == TCC_WGMMA_ELEMENTS) {
        axis->family = TENSOR_WGMMA;
    } else if (intrinsic >= TCC_WGMMA_MMA) {
        axis->family = TENSOR_WGMMA;
        intrinsic = intrinsic == TCC_WGMMA_MMA ? TCC_WMMA_MMA : TCC_WMMA_STORE;
    } else if (intrinsic >= TCC_MMA_SYNC_LOAD_A) {
        axis->family = TENSOR_MMA_SYNC;
        intrinsic = (tcc_intrinsic)(intrinsic - TCC_MMA_SYNC_LOAD_A + TCC_WMMA_LOAD_A);
    } else {
        axis->family = TENSOR_WMMA;
    }
    axis->tensorized = true;
    axis->intrinsic = intrinsic;
    axis->mma_m = m;
    axis->mma_n = n;
    axis->mma_k = k;
    axis->col_major = col_major && intrinsic != TCC_WMMA_MMA;
    return TCC_OK;
}
