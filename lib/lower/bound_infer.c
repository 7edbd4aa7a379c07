/*
 * Bound inference: the range of every axis of every stage.
 *
 * The output's root axes cover its whole shape. A stage computed at loop v of a stage P
 * must produce what its consumers read while the loops at and outside v stand still:
 * for each consumer, the loops between the consumer and v range over their whole
 * extents ("relaxed"), the others are fixed at their current value, and interval
 * arithmetic on the consumer's index expressions gives the region. Thread indices
 * follow TVM's rule: memory shared by a block is filled by all of its threads, so for a
 * shared tensor threadIdx ranges fully; for a global one blockIdx too; registers and
 * fragments belong to one thread (or warp), so nothing is relaxed for them.
 *
 * Then the extents flow down the splits and fuses to the leaf loops.
 */
#include "lower/lower.h"

#include <string.h>

/* ---- axis values ------------------------------------------------------------------------ */

typedef struct AxisValues {
    int count;
    const IterVar **axis;
    Expr **value;
} AxisValues;

static Expr *lookup(const AxisValues *av, const IterVar *iv)
{
    for (int i = 0; i < av->count; i++)
        if (av->axis[i] == iv)
            return av->value[i];
    return NULL;
}

/* The arrays have room for every axis of the stage (leaves + relation outputs). */
static void bind(AxisValues *av, const IterVar *iv, Expr *value)
{
    av->axis[av->count] = iv;
    av->value[av->count++] = value;
}

/* The offset of every axis of the stage (leaf, intermediate or root) in terms of the
 * leaf loop variables, passing values up through the relations. */
static AxisValues axis_offsets(Lowering *lw, const Stage *stage)
{
    Arena *a = lw->arena;
    size_t room = (size_t)(stage->nleaf + 2 * stage->nrel);
    AxisValues av = {0, tci_arena_alloc(a, sizeof(IterVar *) * room),
                     tci_arena_alloc(a, sizeof(Expr *) * room)};
    for (int i = 0; i < stage->nleaf; i++)
        bind(&av, stage->leaf[i], tci_ir_var(a, stage->leaf[i]->loop_var));
    for (int r = stage->nrel - 1; r >= 0; r--) {
        const Relation *rel = &stage->rel[r];
        if (rel->kind == REL_SPLIT) {
            Expr *outer = lookup(&av, rel->outer), *inner = lookup(&av, rel->inner);
            Expr *scaled = tci_ir_binary(a, EXPR_MUL, outer, tci_ir_int(a, rel->inner->extent));
            bind(&av, rel->parent, tci_ir_binary(a, EXPR_ADD, scaled, inner));
        } else {
            Expr *fused = lookup(&av, rel->fused);
            Expr *inner_extent = tci_ir_int(a, rel->inner->extent);
            bind(&av, rel->outer, tci_ir_binary(a, EXPR_DIV, fused, inner_extent));
            bind(&av, rel->inner, tci_ir_binary(a, EXPR_MOD, fused, inner_extent));
        }
    }
    return av;
}

Expr *tci_axis_offset(Lowering *lw, const Stage *stage, const IterVar *axis)
{
    AxisValues av = axis_offsets(lw, stage);
    Expr *offset = lookup(&av, axis);
    return offset ? offset : tci_ir_int(lw->arena, 0);
}

Expr *tci_axis_value(Lowering *lw, const Stage *stage, const IterVar *root)
{
    Expr *min = root->min ? root->min : tci_ir_int(lw->arena, 0);
    return tci_ir_binary(lw->arena, EXPR_ADD, min, tci_axis_offset(lw, stage, root));
}

/* ---- interval arithmetic -------------------------------------------------------------- */

typedef struct Interval {
    Expr *lo, *hi; /* inclusive; NULL when unknown */
} Interval;

static int64_t relaxed_extent(const Relaxation *relax, const Var *var)
{
    for (int i = 0; i < relax->count; i++)
        if (relax->vars[i] == var)
            return relax->extent[i];
    return 0;
}

static Interval point(Expr *e)
{
    return (Interval){e, e};
}

static Interval interval_of(Arena *a, Expr *e, const Relaxation *relax);

static Interval scale(Arena *a, Interval x, int64_t c)
{
    Expr *lo = tci_ir_binary(a, EXPR_MUL, x.lo, tci_ir_int(a, c));
    Expr *hi = tci_ir_binary(a, EXPR_MUL, x.hi, tci_ir_int(a, c));
    return c >= 0 ? (Interval){lo, hi} : (Interval){hi, lo};
}

static bool is_point(Interval x)
{
    return x.lo && x.lo == x.hi;
}

static Interval interval_binary(Arena *a, Expr *e, const Relaxation *relax)
{
    Interval x = interval_of(a, e->bin.a, relax), y = interval_of(a, e->bin.b, relax);
    Interval unknown = {NULL, NULL};
    if (!x.lo || !y.lo)
        return unknown;
    if (is_point(x) && is_point(y))
        return point(tci_ir_binary(a, e->kind, x.lo, y.lo));
    bool y_const = y.lo->kind == EXPR_INT && is_point(y);
    switch (e->kind) {
    case EXPR_ADD:
        return (Interval){tci_ir_binary(a, EXPR_ADD, x.lo, y.lo),
                          tci_ir_binary(a, EXPR_ADD, x.hi, y.hi)};
    case EXPR_SUB:
        return (Interval){tci_ir_binary(a, EXPR_SUB, x.lo, y.hi),
                          tci_ir_binary(a, EXPR_SUB, x.hi, y.lo)};
    case EXPR_MUL:
        if (y_const)
            return scale(a, x, y.lo->int_value);
        if (x.lo->kind == EXPR_INT && is_point(x))
            return scale(a, y, x.lo->int_value);
        return unknown;
    case EXPR_DIV: /* floor division by a positive constant is monotonic */
        if (y_const && y.lo->int_value > 0)
            return (Interval){tci_ir_binary(a, EXPR_DIV, x.lo, y.lo),
                              tci_ir_binary(a, EXPR_DIV, x.hi, y.lo)};
        return unknown;
    case EXPR_MOD:
        if (y_const && y.lo->int_value > 0)
            return (Interval){tci_ir_int(a, 0), tci_ir_int(a, y.lo->int_value - 1)};
        return unknown;
    case EXPR_MIN:
    case EXPR_MAX:
        return (Interval){tci_ir_binary(a, e->kind, x.lo, y.lo),
                          tci_ir_binary(a, e->kind, x.hi, y.hi)};
    default:
        return unknown;
    }
}

static Interval interval_of(Arena *a, Expr *e, const Relaxation *relax)
{
    switch (e->kind) {
    case EXPR_INT:
        return point(e);
    case EXPR_VAR: {
        int64_t extent = relaxed_extent(relax, e->var);
        if (extent == 0)
            return point(e);
        return (Interval){tci_ir_int(a, 0), tci_ir_int(a, extent - 1)};
    }
    case EXPR_ADD:
    case EXPR_SUB:
    case EXPR_MUL:
    case EXPR_DIV:
    case EXPR_MOD:
    case EXPR_MIN:
    case EXPR_MAX:
        return interval_binary(a, e, relax);
    default:
        return (Interval){NULL, NULL};
    }
}

/* Simplification needs the ranges of the relaxed loops to see through div and mod. */
static Expr *simplify_relaxed(Arena *a, Expr *e, const Relaxation *relax)
{
    VarRange ranges[64];
    int n = relax->count < 64 ? relax->count : 64;
    for (int i = 0; i < n; i++)
        ranges[i] = (VarRange){relax->vars[i], 0, relax->extent[i]};
    return tci_simplify(a, e, n, ranges);
}

tcc_status tci_access_region(Lowering *lw, const Stage *stage, int nindex, Expr *const *index,
                             const Relaxation *relax, Region *out)
{
    Arena *a = lw->arena;
    const Tensor *t = stage->tensor;
    Var *roots[2 * TCI_MAX_DIMS];
    Expr *values[2 * TCI_MAX_DIMS];
    int nroot = 0;
    for (int i = 0; i < t->ndim; i++) {
        roots[nroot] = t->axis[i]->var;
        values[nroot++] = tci_axis_value(lw, stage, t->axis[i]);
    }
    for (int i = 0; i < t->nreduce; i++) {
        roots[nroot] = t->reduce_axis[i]->var;
        values[nroot++] = tci_axis_value(lw, stage, t->reduce_axis[i]);
    }
    for (int d = 0; d < nindex; d++) {
        Expr *e = tci_expr_substitute(a, index[d], nroot, roots, values);
        Interval x = interval_of(a, tci_simplify(a, e, 0, NULL), relax);
        Expr *extent = NULL;
        if (x.lo) {
            Expr *span = tci_ir_binary(a, EXPR_SUB, x.hi, x.lo);
            extent = simplify_relaxed(a, tci_ir_binary(a, EXPR_ADD, span, tci_ir_int(a, 1)), relax);
        }
        if (!extent || extent->kind != EXPR_INT || extent->int_value < 1)
            return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                            "cannot bound index %d of an access in stage %s to a constant extent",
                            d, t->name);
        out->min[d] = simplify_relaxed(a, x.lo, relax);
        out->extent[d] = extent->int_value;
    }
    return TCC_OK;
}

/* ---- which loops are relaxed ------------------------------------------------------------ */

static bool thread_relaxed(tcc_scope scope, tcc_thread_tag tag)
{
    bool is_thread = tag >= TCC_THREAD_X;
    if (scope == TCC_SCOPE_GLOBAL)
        return true;
    return scope == TCC_SCOPE_SHARED && is_thread;
}

static void relax_var(Arena *a, Relaxation *r, Var *var, int64_t extent)
{
    for (int i = 0; i < r->count; i++) {
        if (r->vars[i] == var) {
            if (extent > r->extent[i])
                r->extent[i] = extent;
            return;
        }
    }
    Var **vars = tci_arena_alloc(a, sizeof(Var *) * (size_t)(r->count + 1));
    int64_t *extents = tci_arena_alloc(a, sizeof(int64_t) * (size_t)(r->count + 1));
    if (r->count) {
        memcpy(vars, r->vars, sizeof(Var *) * (size_t)r->count);
        memcpy(extents, r->extent, sizeof(int64_t) * (size_t)r->count);
    }
    vars[r->count] = var;
    extents[r->count] = extent;
    r->vars = vars;
    r->extent = extents;
    r->count++;
}

static const Stage *attach_parent(const Stage *st)
{
    return st->attach == ATTACH_AT ? st->attach_stage : NULL;
}

/* The loops that range fully while `target` (attached at P.v) is computed for `consumer`:
 * every loop of the stages between the consumer and P, and P's loops inside v. */
static tcc_status relaxation_for(Lowering *lw, const Stage *target, const Stage *consumer,
                                 Relaxation *out)
{
    const Stage *parent = target->attach_stage;
    int at = tci_stage_leaf_index(parent, target->attach_axis);
    bool below = true;
    for (const Stage *x = consumer, *child = NULL; x; child = x, x = attach_parent(x)) {
        bool in_parent = x == parent;
        if (in_parent && child && tci_stage_leaf_index(x, child->attach_axis) < at)
            break; /* the consumer runs outside loop v */
        for (int i = 0; i < x->nleaf; i++) {
            IterVar *leaf = x->leaf[i];
            bool relaxed = leaf->bound ? thread_relaxed(target->scope, leaf->tag)
                           : in_parent ? i > at
                                       : below;
            if (relaxed)
                relax_var(lw->arena, out, leaf->loop_var, leaf->extent);
        }
        if (in_parent)
            below = false;
    }
    if (below)
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "%s is computed at %s of %s, but its consumer %s is not inside that loop",
                        target->tensor->name, target->attach_axis->var->name, parent->tensor->name,
                        consumer->tensor->name);
    return TCC_OK;
}

/* ---- the pass ------------------------------------------------------------------------- */

typedef struct Accesses {
    Arena *arena;
    int count, cap;
    Expr **items;
} Accesses;

typedef struct Collector {
    const Tensor *tensor;
    Accesses *out;
} Collector;

static bool collect_access(Visitor *v, const Expr *e)
{
    Collector *c = v->user;
    if (e->kind == EXPR_ACCESS && e->access.tensor == c->tensor)
        tci_push(c->out->arena, (void ***)&c->out->items, &c->out->count, &c->out->cap, (void *)e);
    return true;
}

/* The accesses to t in e, in the order they appear. */
static void collect_accesses(Expr *e, const Tensor *t, Accesses *out)
{
    Collector c = {t, out};
    Visitor v = {.expr = collect_access, .user = &c};
    tci_visit_expr(&v, e);
}

/* Widens `acc` to cover `r`; the two minimums must differ by a constant. */
static bool region_union(Arena *a, Region *acc, const Region *r, int ndim, bool first)
{
    if (first) {
        *acc = *r;
        return true;
    }
    for (int d = 0; d < ndim; d++) {
        Expr *diff = tci_simplify(a, tci_ir_binary(a, EXPR_SUB, r->min[d], acc->min[d]), 0, NULL);
        if (diff->kind != EXPR_INT)
            return false;
        int64_t lo = diff->int_value < 0 ? diff->int_value : 0;
        int64_t hi_acc = acc->extent[d], hi_r = diff->int_value + r->extent[d];
        int64_t hi = hi_acc > hi_r ? hi_acc : hi_r;
        if (lo < 0)
            acc->min[d] = r->min[d];
        acc->extent[d] = hi - lo;
    }
    return true;
}

static tcc_status infer_attached(Lowering *lw, Stage *st)
{
    Func *func = lw->func;
    Tensor *t = st->tensor;
    Region region;
    bool found = false;
    for (int i = 0; i < func->nstage; i++) {
        Stage *c = func->stages[i];
        if (!c->tensor->is_compute || c->attach == ATTACH_INLINE || c == st)
            continue;
        Accesses acc = {.arena = lw->arena};
        collect_accesses(c->tensor->lowered_body, t, &acc);
        if (acc.count == 0)
            continue;
        Relaxation relax = {0};
        tcc_status status = relaxation_for(lw, st, c, &relax);
        if (status != TCC_OK)
            return status;
        for (int k = 0; k < acc.count; k++) {
            Region r;
            status = tci_access_region(lw, c, t->ndim, acc.items[k]->access.index, &relax, &r);
            if (status != TCC_OK)
                return status;
            if (!region_union(lw->arena, &region, &r, t->ndim, !found))
                return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                                "the regions of %s read by its consumers are not a constant "
                                "distance apart",
                                t->name);
            found = true;
        }
    }
    if (!found)
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE, "%s is computed but nothing reads it",
                        t->name);
    for (int d = 0; d < t->ndim; d++) {
        t->axis[d]->min = region.min[d];
        t->axis[d]->extent = region.extent[d];
    }
    return TCC_OK;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Extents flow from the root axes through the relations, in the order they were made. */
static void pass_down(Stage *st)
{
    for (int r = 0; r < st->nrel; r++) {
        Relation *rel = &st->rel[r];
        if (rel->kind == REL_SPLIT) {
            int64_t extent = rel->parent->extent;
            /* A factor larger than the extent keeps its size: a tensor-core tile stays
             * whole, and the guard of the split (schedule_ops.c) skips the excess. */
            if (rel->factor) {
                rel->inner->extent = rel->factor;
                rel->outer->extent = ceil_div(extent, rel->factor);
            } else {
                rel->outer->extent = rel->nparts;
                rel->inner->extent = ceil_div(extent, rel->nparts);
            }
        } else {
            rel->fused->extent = rel->outer->extent * rel->inner->extent;
        }
    }
}

tcc_status tci_lower_bound_infer(Lowering *lw)
{
    Func *func = lw->func;
    for (int i = func->nstage - 1; i >= 0; i--) {
        Stage *st = func->stages[i];
        Tensor *t = st->tensor;
        if (!t->is_compute || st->attach == ATTACH_INLINE)
            continue;
        for (int r = 0; r < t->nreduce; r++) {
            t->reduce_axis[r]->min = tci_ir_int(lw->arena, 0);
            t->reduce_axis[r]->extent = t->reduce_axis[r]->dom_extent;
        }
        if (st->attach == ATTACH_AT) {
            tcc_status status = infer_attached(lw, st);
            if (status != TCC_OK)
                return status;
        } else if (st->is_output) {
            for (int d = 0; d < t->ndim; d++) {
                t->axis[d]->min = tci_ir_int(lw->arena, 0);
                t->axis[d]->extent = t->shape[d];
            }
        } else {
            return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                            "stage %s is neither an output, inlined, nor computed at a loop "
                            "of another stage",
                            t->name);
        }
        pass_down(st);
    }
    return TCC_OK;
}
