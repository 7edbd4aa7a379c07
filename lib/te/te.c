/* Compute definitions: functions, tensors, axes and the expression builders. */
#include "te/te.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

tcc_status tcc_func_create(tcc_context *ctx, const char *name, tcc_func **out)
{
    if (!out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_func_create: the result pointer is NULL");
    Arena *arena = tci_arena_create();
    Func *func = arena ? tci_arena_alloc(arena, sizeof *func) : NULL;
    if (!func) {
        tci_arena_destroy(arena);
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    func->ctx = ctx;
    func->arena = arena;
    func->name = tci_arena_strdup(arena, name ? name : "kernel");
    *out = func;
    return TCC_OK;
}

void tcc_func_destroy(tcc_func *func)
{
    if (func)
        tci_arena_destroy(func->arena);
}

void *tci_func_fail(Func *func, tcc_status status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    if (!func->failed) {
        tci_vfail(func->ctx, status, format, args);
        func->status = status;
    }
    va_end(args);
    func->failed = true;
    return NULL;
}

tcc_context *tci_func_context(tcc_func *func)
{
    return func ? func->ctx : NULL;
}

tcc_status tci_func_status(const Func *func)
{
    return func->failed ? func->status : TCC_ERROR_INVALID_ARGUMENT;
}

void tci_push(Arena *arena, void ***items, int *count, int *cap, void *item)
{
    if (*count == *cap) {
        int grown = *cap ? *cap * 2 : 8;
        void **copy = tci_arena_alloc(arena, sizeof(void *) * (size_t)grown);
        if (*count)
            memcpy(copy, *items, sizeof(void *) * (size_t)*count);
        *items = copy;
        *cap = grown;
    }
    (*items)[(*count)++] = item;
}

IterVar *tci_iter_var_new(Func *func, const char *name, int64_t extent, bool reduce)
{
    IterVar *iv = tci_arena_alloc(func->arena, sizeof *iv);
    iv->var = tci_var(func->arena, name, func->next_var_id++);
    iv->reduce = reduce;
    iv->dom_extent = extent;
    iv->extent = extent;
    iv->for_kind = FOR_SERIAL;
    return iv;
}

int64_t tci_indexable_elements(int ndim, const int64_t *shape)
{
    int64_t elements = 1;
    for (int i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(elements, shape[i], &elements) || elements > INT32_MAX)
            return -1;
    return elements;
}

/* A placeholder is memory the kernel indexes, so its elements must fit 32-bit offsets; a
 * computed tensor only as much as its axes (int32 loop counters) until lowering gives it a
 * buffer (an im2col view of billions of elements that is only ever inlined is fine). */
static bool valid_shape(Func *func, const char *name, bool is_compute, int ndim,
                        const int64_t *shape)
{
    if (ndim < 1 || ndim > TCI_MAX_DIMS) {
        tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                      "tensor %s: %d dimensions (1 to %d allowed)", name, ndim, TCI_MAX_DIMS);
        return false;
    }
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1) {
            tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                          "tensor %s: dimension %d has size %lld (must be at least 1)", name, i,
                          (long long)shape[i]);
            return false;
        }
        if (shape[i] > INT32_MAX) {
            tci_func_fail(func, TCC_ERROR_UNSUPPORTED,
                          "tensor %s: dimension %d has size %lld (32-bit loop counters)", name, i,
                          (long long)shape[i]);
            return false;
        }
    }
    if (!is_compute && tci_indexable_elements(ndim, shape) < 0) {
        tci_func_fail(func, TCC_ERROR_UNSUPPORTED,
                      "tensor %s has more than 2^31 elements (32-bit indexing)", name);
        return false;
    }
    return true;
}

Tensor *tci_tensor_new(Func *func, const char *name, bool is_compute, int ndim,
                       const int64_t *shape, tcc_dtype type)
{
    if (func->failed)
        return NULL;
    if (!name || !shape)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT, "a tensor needs a name and a shape");
    if (!valid_shape(func, name, is_compute, ndim, shape))
        return NULL;
    Tensor *t = tci_arena_alloc(func->arena, sizeof *t);
    t->func = func;
    t->name = tci_arena_strdup(func->arena, name);
    t->is_compute = is_compute;
    t->type = type;
    t->ndim = ndim;
    memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
    tci_push(func->arena, (void ***)&func->tensors, &func->ntensor, &func->tensor_cap, t);
    return t;
}

tcc_tensor *tcc_placeholder(tcc_func *func, const char *name, int ndim, const int64_t *shape,
                            tcc_dtype type)
{
    return func ? tci_tensor_new(func, name, false, ndim, shape, type) : NULL;
}

tcc_iter_var *tcc_reduce_axis(tcc_func *func, const char *name, int64_t extent)
{
    if (!func || func->failed)
        return NULL;
    if (extent < 1)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                             "reduce axis %s has extent %lld (must be at least 1)", name,
                             (long long)extent);
    return tci_iter_var_new(func, name, extent, true);
}

/* The reduction axes a body sums over, collected from its top-level EXPR_REDUCE. */
static void collect_reduce_axes(Tensor *t)
{
    if (t->body->kind != EXPR_REDUCE)
        return;
    t->nreduce = t->body->reduce.naxis;
    for (int i = 0; i < t->nreduce; i++)
        t->reduce_axis[i] = t->body->reduce.axis[i];
}

tcc_tensor *tcc_compute(tcc_func *func, const char *name, int ndim, const int64_t *shape,
                        const char *const *axis_names, tcc_dtype type, tcc_compute_fn body,
                        void *user)
{
    if (!func)
        return NULL;
    if (func->scheduled)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                             "compute %s: define every tensor before creating the schedule",
                             name ? name : "?");
    if (!body)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT, "compute %s: no body function",
                             name ? name : "?");
    Tensor *t = tci_tensor_new(func, name, true, ndim, shape, type);
    if (!t)
        return NULL;
    tcc_expr *axes[TCI_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        /* Unnamed axes carry their tensor's name, so nested stages print apart. */
        const char *axis_name = axis_names && axis_names[i]
                                    ? axis_names[i]
                                    : tci_arena_printf(func->arena, "%s.i%d", name, i);
        t->axis[i] = tci_iter_var_new(func, axis_name, shape[i], false);
        axes[i] = tci_ir_var(func->arena, t->axis[i]->var);
    }
    t->body = body(func, axes, user);
    if (!t->body)
        return func->failed ? NULL
                            : tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                                            "compute %s: the body is empty", name);
    if (t->body->kind == EXPR_REDUCE && t->body->reduce.naxis > TCI_MAX_DIMS)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT, "compute %s: too many reduce axes",
                             name);
    t->body = tci_ir_cast(func->arena, type, t->body);
    if (t->body->kind == EXPR_CAST && t->body->cast.value->kind == EXPR_REDUCE) {
        /* A sum in another type: the accumulation happens in the output type. */
        Expr *reduce = t->body->cast.value;
        Expr *source = tci_ir_cast(func->arena, type, reduce->reduce.source);
        t->body = tci_ir_reduce(func->arena, source, reduce->reduce.naxis, reduce->reduce.axis);
    }
    collect_reduce_axes(t);
    return t;
}

tcc_tensor *tcc_compute_into(tcc_func *func, const char *name, int ndim, const int64_t *shape,
                             const char *const *axis_names, tcc_compute_fn body, tcc_tensor *target,
                             tcc_index_fn target_index, void *user)
{
    if (!func || func->failed)
        return NULL;
    if (!target || target->is_compute || target->func != func || !target_index)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                             "compute_into %s: the target must be a placeholder of this function",
                             name ? name : "?");
    Tensor *t = tcc_compute(func, name, ndim, shape, axis_names, target->type, body, user);
    if (!t)
        return NULL;
    if (t->nreduce > 0)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                             "compute_into %s: a reduction cannot store into another tensor", name);
    Expr *axes[TCI_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        axes[i] = tci_ir_var(func->arena, t->axis[i]->var);
    for (int i = 0; i < target->ndim; i++)
        t->store_index[i] = NULL;
    target_index(func, axes, t->store_index, user);
    for (int i = 0; i < target->ndim; i++)
        if (!t->store_index[i])
            return func->failed ? NULL
                                : tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                                                "compute_into %s: index %d of the target is "
                                                "missing",
                                                name, i);
    t->store_target = target;
    return t;
}

/* ---- expressions ------------------------------------------------------------------- */

Expr *tci_ir_access(Arena *arena, Tensor *tensor, int nindex, Expr *const *index)
{
    Expr *e = tci_arena_alloc(arena, sizeof *e);
    e->kind = EXPR_ACCESS;
    e->type = tensor->type;
    e->lanes = 1;
    e->access.tensor = tensor;
    e->access.nindex = nindex;
    e->access.index = tci_arena_alloc(arena, sizeof(Expr *) * (size_t)nindex);
    memcpy(e->access.index, index, sizeof(Expr *) * (size_t)nindex);
    return e;
}

Expr *tci_ir_reduce(Arena *arena, Expr *source, int naxis, IterVar *const *axis)
{
    Expr *e = tci_arena_alloc(arena, sizeof *e);
    e->kind = EXPR_REDUCE;
    e->type = source->type;
    e->lanes = 1;
    e->reduce.source = source;
    e->reduce.naxis = naxis;
    e->reduce.axis = tci_arena_alloc(arena, sizeof(IterVar *) * (size_t)naxis);
    memcpy(e->reduce.axis, axis, sizeof(IterVar *) * (size_t)naxis);
    return e;
}

tcc_expr *tcc_int(tcc_func *func, int64_t value)
{
    return func ? tci_ir_int(func->arena, value) : NULL;
}

tcc_expr *tcc_float(tcc_func *func, double value, tcc_dtype type)
{
    return func ? tci_ir_float(func->arena, value, type) : NULL;
}

tcc_expr *tcc_axis(tcc_func *func, tcc_iter_var *axis)
{
    return func && axis ? tci_ir_var(func->arena, axis->var) : NULL;
}

static tcc_expr *binary(tcc_func *func, ExprKind kind, tcc_expr *a, tcc_expr *b)
{
    if (!func || !a || !b)
        return NULL;
    bool a_int = a->type == TCC_INT32, b_int = b->type == TCC_INT32;
    if (kind != EXPR_AND && a->type != b->type && !(a_int && b_int))
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                             "operands of different types (%s and %s): cast one of them",
                             tcc_dtype_name(a->type), tcc_dtype_name(b->type));
    return tci_ir_binary(func->arena, kind, a, b);
}

tcc_expr *tcc_add(tcc_func *f, tcc_expr *a, tcc_expr *b)
{
    return binary(f, EXPR_ADD, a, b);
}
tcc_expr *tcc_sub(tcc_func *f, tcc_expr *a, tcc_expr *b)
{
    return binary(f, EXPR_SUB, a, b);
}
tcc_expr *tcc_mul(tcc_func *f, tcc_expr *a, tcc_expr *b)
{
    return binary(f, EXPR_MUL, a, b);
}
tcc_expr *tcc_div(tcc_func *f, tcc_expr *a, tcc_expr *b)
{
    return binary(f, EXPR_DIV, a, b);
}
tcc_expr *tcc_mod(tcc_func *f, tcc_expr *a, tcc_expr *b)
{
    return binary(f, EXPR_MOD, a, b);
}
tcc_expr *tcc_lt(tcc_func *f, tcc_expr *a, tcc_expr *b)
{
    return binary(f, EXPR_LT, a, b);
}
tcc_expr *tcc_le(tcc_func *f, tcc_expr *a, tcc_expr *b)
{
    return binary(f, EXPR_LE, a, b);
}
tcc_expr *tcc_and(tcc_func *f, tcc_expr *a, tcc_expr *b)
{
    return binary(f, EXPR_AND, a, b);
}

tcc_expr *tcc_select(tcc_func *func, tcc_expr *cond, tcc_expr *then_value, tcc_expr *else_value)
{
    if (!func || !cond || !then_value || !else_value)
        return NULL;
    if (then_value->type != else_value->type)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                             "if_then_else: branches of different types (%s and %s)",
                             tcc_dtype_name(then_value->type), tcc_dtype_name(else_value->type));
    return tci_ir_select(func->arena, cond, then_value, else_value);
}

tcc_expr *tcc_cast(tcc_func *func, tcc_dtype type, tcc_expr *value)
{
    return func && value ? tci_ir_cast(func->arena, type, value) : NULL;
}

tcc_expr *tcc_access(tcc_func *func, tcc_tensor *tensor, int nindex, tcc_expr *const *index)
{
    if (!func || !tensor || func->failed)
        return NULL;
    if (nindex != tensor->ndim)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                             "access to %s with %d indices (it has %d dimensions)", tensor->name,
                             nindex, tensor->ndim);
    if (nindex > 0 && !index)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT, "access to %s: no indices",
                             tensor->name);
    for (int i = 0; i < nindex; i++)
        if (!index[i])
            return NULL;
    return tci_ir_access(func->arena, tensor, nindex, index);
}

tcc_expr *tcc_sum(tcc_func *func, tcc_expr *source, int naxis, tcc_iter_var *const *axes)
{
    if (!func || !source || func->failed)
        return NULL;
    if (naxis < 1 || naxis > TCI_MAX_DIMS)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT, "sum over %d axes (1 to %d)", naxis,
                             TCI_MAX_DIMS);
    if (!axes)
        return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT, "sum: no axes");
    for (int i = 0; i < naxis; i++)
        if (!axes[i] || !axes[i]->reduce)
            return tci_func_fail(func, TCC_ERROR_INVALID_ARGUMENT,
                                 "sum: axis %d is not a reduce axis", i);
    return tci_ir_reduce(func->arena, source, naxis, axes);
}

tcc_iter_var *tcc_tensor_axis(tcc_tensor *tensor, int i)
{
    return tensor && tensor->is_compute && i >= 0 && i < tensor->ndim ? tensor->axis[i] : NULL;
}

tcc_iter_var *tcc_tensor_reduce_axis(tcc_tensor *tensor, int i)
{
    return tensor && i >= 0 && i < tensor->nreduce ? tensor->reduce_axis[i] : NULL;
}

const char *tcc_iter_var_name(const tcc_iter_var *axis)
{
    return axis && axis->var ? axis->var->name : NULL;
}

const char *tcc_tensor_name(const tcc_tensor *tensor)
{
    return tensor ? tensor->name : "?";
}
