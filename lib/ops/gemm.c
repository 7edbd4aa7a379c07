/*
 * The implicit GEMM's compute definition: the operands with their range tests, the
 * product, and the epilogue (see gemm.h and tcc_epilogue in tcc.h).
 */
#include "ops/gemm.h"
#include "ops/ops.h"

typedef struct Bodies {
    const GemmOperator *op;
    Gemm *gemm;
    GemmSplit split;
} Bodies;

/* The operands are defined over exactly (m, k) and (k, n): where a whole tile reaches past
 * M, N or K, the shared-memory copy that reads them evaluates to zero there (a stage's
 * domain guard, schedule_ops.c), so an element is only ever built inside the range. */
static tcc_expr *a_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    const GemmOperator *op = ((Bodies *)user)->op;
    tcc_expr *m = op->a_col_major ? ax[2] : ax[1], *k = op->a_col_major ? ax[1] : ax[2];
    return op->a_element(f, ax[0], m, k, op->op);
}

static tcc_expr *b_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    const GemmOperator *op = ((Bodies *)user)->op;
    tcc_expr *k = op->b_col_major ? ax[2] : ax[1], *n = op->b_col_major ? ax[1] : ax[2];
    return op->b_element(f, ax[0], k, n, op->op);
}

/* The group and the reduction index of C's element at axis 0 = `z` and reduction step
 * `rk`: under split-K, z = s * groups + g and k = s * slice + rk. */
static void group_and_k(tcc_func *f, const Bodies *b, tcc_expr *z, tcc_expr *rk, tcc_expr **g,
                        tcc_expr **k)
{
    *g = z;
    *k = rk;
    if (b->split.splits <= 1)
        return;
    tcc_expr *groups = tcc_int(f, b->op->groups), *slice = tcc_int(f, b->split.slice);
    *g = b->op->groups == 1 ? tcc_int(f, 0) : tcc_mod(f, z, groups);
    tcc_expr *s = b->op->groups == 1 ? z : tcc_div(f, z, groups);
    *k = tcc_add(f, tcc_mul(f, s, slice), rk);
}

static tcc_expr *c_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    Bodies *b = user;
    const GemmOperator *op = b->op;
    tcc_dtype acc = op->accumulate_type;
    tcc_expr *g, *k;
    group_and_k(f, b, ax[0], tcc_axis(f, b->gemm->reduce), &g, &k);
    tcc_expr *a_index[3] = {g, op->a_col_major ? k : ax[1], op->a_col_major ? ax[1] : k};
    tcc_expr *b_index[3] = {g, op->b_col_major ? ax[2] : k, op->b_col_major ? k : ax[2]};
    tcc_expr *product = tcc_mul(f, tcc_cast(f, acc, tcc_access(f, b->gemm->a, 3, a_index)),
                                tcc_cast(f, acc, tcc_access(f, b->gemm->b, 3, b_index)));
    return tcc_sum(f, product, 1, &b->gemm->reduce);
}

/* ---- the epilogue ---------------------------------------------------------------------- */

/* Epilogue arithmetic happens in float32, or in int32 for an integer output. */
static tcc_dtype math_type(const GemmOperator *op)
{
    return tcc_dtype_is_float(op->output_type) ? TCC_FLOAT32 : TCC_INT32;
}

static tcc_expr *constant(tcc_func *f, double value, tcc_dtype type)
{
    return type == TCC_INT32 ? tcc_int(f, (int64_t)value) : tcc_float(f, value, type);
}

static tcc_expr *max0(tcc_func *f, tcc_expr *v, tcc_dtype type)
{
    tcc_expr *z = constant(f, 0, type);
    return tcc_select(f, tcc_lt(f, v, z), z, v);
}

static tcc_expr *clamp(tcc_func *f, tcc_expr *v, double lo, double hi, tcc_dtype type)
{
    tcc_expr *low = constant(f, lo, type), *high = constant(f, hi, type);
    v = tcc_select(f, tcc_lt(f, v, low), low, v);
    return tcc_select(f, tcc_lt(f, high, v), high, v);
}

static void output_index(tcc_func *f, tcc_expr *const *ax, tcc_expr **index, void *user)
{
    const GemmOperator *op = ((Bodies *)user)->op;
    op->output_index(f, ax[0], ax[1], ax[2], index, op->op);
}

/* The output tensor's previous contents (for beta and the SCALE/RELU prologues). */
static tcc_expr *previous(tcc_func *f, const Bodies *b, tcc_expr *const *ax, tcc_dtype type)
{
    tcc_expr *index[TCI_MAX_DIMS];
    output_index(f, ax, index, (void *)b);
    tcc_tensor *output = b->op->output;
    return tcc_cast(f, type, tcc_access(f, output, output->ndim, index));
}

static tcc_expr *prologue(tcc_func *f, const Bodies *b, tcc_expr *const *ax, tcc_dtype type)
{
    const tcc_epilogue *e = &b->op->epilogue;
    switch (e->prologue) {
    case TCC_PROLOGUE_SET:
        return constant(f, e->prologue_arg, type);
    case TCC_PROLOGUE_SCALE:
        return tcc_mul(f, constant(f, e->prologue_arg, type), previous(f, b, ax, type));
    case TCC_PROLOGUE_RELU:
        return max0(f, previous(f, b, ax, type), type);
    default:
        return NULL;
    }
}

static tcc_expr *out_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    const Bodies *b = user;
    const GemmOperator *op = b->op;
    const tcc_epilogue *e = &op->epilogue;
    tcc_dtype type = math_type(op);
    tcc_expr *v = tcc_cast(f, type, tcc_access(f, b->gemm->c, 3, ax));
    tcc_expr *start = prologue(f, b, ax, type);
    if (start)
        v = tcc_add(f, start, v);
    if (e->alpha != 1)
        v = tcc_mul(f, constant(f, e->alpha, type), v);
    if (e->bias) {
        tcc_expr *channel = op->bias == TCI_BIAS_PER_ROW ? ax[1]
                            : op->bias == TCI_BIAS_PER_GROUP_COLUMN
                                ? tcc_add(f, tcc_mul(f, ax[0], tcc_int(f, op->n)), ax[2])
                                : ax[2];
        v = tcc_add(f, v, tcc_cast(f, type, tcc_access(f, b->gemm->bias, 1, &channel)));
    }
    if (e->beta != 0) {
        tcc_expr *source;
        if (e->residual) {
            tcc_expr *index[TCI_MAX_DIMS];
            output_index(f, ax, index, (void *)b);
            source = tcc_cast(f, type, tcc_access(f, b->gemm->residual, op->output->ndim, index));
        } else {
            source = previous(f, b, ax, type);
        }
        v = tcc_add(f, v, tcc_mul(f, constant(f, e->beta, type), source));
    }
    if (e->relu)
        v = max0(f, v, type);
    if (e->clamp)
        v = clamp(f, v, e->clamp_min, e->clamp_max, type);
    return tcc_cast(f, op->output_type, v);
}

/* ---- the definition ------------------------------------------------------------------- */

static void add_workspace(Gemm *gemm, tcc_tensor *t)
{
    gemm->params[gemm->nparam++] = t;
}

/* A parameter of the caller's, described as tcc_kernel_param reports it. */
static void add_param(Gemm *gemm, tcc_tensor *t, const char *name, const char *layout,
                      tcc_param_role role)
{
    gemm->labels[gemm->nlabel++] = tci_param_info(t, name, layout, role);
    add_workspace(gemm, t);
}

/* The parameters every kernel of the product takes, in order: the operands, the
 * epilogue's tensors, the output, and the workspaces (staged operands, split-K's). */
static void declare_params(tcc_func *func, const GemmOperator *op, GemmSplit split, Gemm *gemm)
{
    const tcc_epilogue *e = &op->epilogue;
    *gemm = (Gemm){0};
    tcc_tensor *a = op->a_param ? op->a_param : op->a_source;
    tcc_tensor *b = op->b_param ? op->b_param : op->b_source;
    if (op->b_param_first)
        add_param(gemm, b, op->b_name, op->b_layout, TCC_PARAM_INPUT);
    add_param(gemm, a, op->a_name, op->a_layout, TCC_PARAM_INPUT);
    if (!op->b_param_first)
        add_param(gemm, b, op->b_name, op->b_layout, TCC_PARAM_INPUT);
    if (e->bias) {
        const int64_t channels = op->bias == TCI_BIAS_PER_ROW            ? op->m
                                 : op->bias == TCI_BIAS_PER_GROUP_COLUMN ? op->groups * op->n
                                                                         : op->n;
        gemm->bias = tcc_placeholder(func, "bias", 1, &channels, op->output_type);
        add_param(gemm, gemm->bias, "bias", "vector", TCC_PARAM_INPUT);
    }
    if (e->beta != 0 && e->residual) {
        gemm->residual =
            tcc_placeholder(func, "residual", op->output->ndim, op->output->shape, op->output_type);
        add_param(gemm, gemm->residual, "residual", op->output_layout, TCC_PARAM_INPUT);
    }
    add_param(gemm, op->output, op->output_name, op->output_layout,
              tci_epilogue_reads_previous(e) ? TCC_PARAM_INPUT_OUTPUT : TCC_PARAM_OUTPUT);
    for (int i = 0; i < op->nstaged; i++)
        add_workspace(gemm, op->staged[i].to);
    if (split.splits > 1) {
        const int64_t shape[3] = {split.splits * op->groups, op->m, op->n};
        gemm->partial = tcc_placeholder(func, "partial", 3, shape, op->accumulate_type);
        add_workspace(gemm, gemm->partial);
    }
}

static const char *const c_axes[3] = {"g", "m", "n"};

static tcc_expr *partial_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    return tcc_access(f, ((Bodies *)user)->gemm->c, 3, ax);
}

static void partial_index(tcc_func *f, tcc_expr *const *ax, tcc_expr **index, void *user)
{
    (void)f, (void)user;
    for (int i = 0; i < 3; i++)
        index[i] = ax[i];
}

tcc_status tci_gemm_define(tcc_func *func, const GemmOperator *op, GemmSplit split, Gemm *gemm)
{
    Bodies bodies = {op, gemm, split};
    const int64_t a_shape[3] = {op->groups, op->a_col_major ? op->k : op->m,
                                op->a_col_major ? op->m : op->k};
    const int64_t b_shape[3] = {op->groups, op->b_col_major ? op->n : op->k,
                                op->b_col_major ? op->k : op->n};
    const int64_t splits = split.splits > 1 ? split.splits : 1;
    const int64_t c_shape[3] = {splits * op->groups, op->m, op->n};
    static const char *const a_row[3] = {"g", "m", "k"}, *const a_col[3] = {"g", "k", "m"};
    static const char *const b_row[3] = {"g", "k", "n"}, *const b_col[3] = {"g", "n", "k"};
    const char *const *a_axes = op->a_col_major ? a_col : a_row;
    const char *const *b_axes = op->b_col_major ? b_col : b_row;

    declare_params(func, op, split, gemm);
    gemm->reduce = tcc_reduce_axis(func, "rk", splits > 1 ? split.slice : op->k);
    gemm->a = tcc_compute(func, "A", 3, a_shape, a_axes, op->input_type, a_body, &bodies);
    gemm->b = tcc_compute(func, "B", 3, b_shape, b_axes, op->input_type, b_body, &bodies);
    gemm->c = tcc_compute(func, "C", 3, c_shape, c_axes, op->accumulate_type, c_body, &bodies);
    if (splits > 1)
        gemm->out = tcc_compute_into(func, "Out", 3, c_shape, c_axes, partial_body, gemm->partial,
                                     partial_index, &bodies);
    else
        gemm->out = tcc_compute_into(func, "Out", 3, c_shape, c_axes, out_body, op->output,
                                     output_index, &bodies);
    if (!gemm->out)
        return tci_func_status(func);
    return TCC_OK;
}

/* The slices summed in order: the same sum whenever and wherever each was computed. */
static tcc_expr *sum_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    const Bodies *b = user;
    tcc_expr *sum = NULL;
    for (int64_t s = 0; s < b->split.splits; s++) {
        tcc_expr *z = tcc_add(f, tcc_int(f, s * b->op->groups), ax[0]);
        tcc_expr *index[3] = {z, ax[1], ax[2]};
        tcc_expr *slice = tcc_access(f, b->gemm->partial, 3, index);
        sum = sum ? tcc_add(f, sum, slice) : slice;
    }
    return sum;
}

tcc_status tci_gemm_define_reduce(tcc_func *func, const GemmOperator *op, GemmSplit split,
                                  Gemm *gemm)
{
    Bodies bodies = {op, gemm, split};
    const int64_t shape[3] = {op->groups, op->m, op->n};
    declare_params(func, op, split, gemm);
    gemm->c = tcc_compute(func, "C", 3, shape, c_axes, op->accumulate_type, sum_body, &bodies);
    gemm->out = tcc_compute_into(func, "Out", 3, shape, c_axes, out_body, op->output, output_index,
                                 &bodies);
    if (!gemm->out)
        return tci_func_status(func);
    return TCC_OK;
}

/* ---- staging an operand ------------------------------------------------------------------- */

/* The source element, or zero where the workspace is wider than the source (channels
 * padded to fill 16-byte copies). */
static tcc_expr *staged_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    const StagedOperand *st = user;
    tcc_expr *index[TCI_MAX_DIMS] = {0}, *inside = NULL;
    for (int i = 0; i < st->from->ndim; i++) {
        index[i] = ax[st->perm[i]];
        if (st->to->shape[st->perm[i]] > st->from->shape[i]) {
            tcc_expr *in = tcc_lt(f, index[i], tcc_int(f, st->from->shape[i]));
            inside = inside ? tcc_and(f, inside, in) : in;
        }
    }
    tcc_expr *value = tcc_access(f, st->from, st->from->ndim, index);
    if (!inside)
        return value;
    return tcc_select(f, inside, value, tcc_cast(f, st->to->type, tcc_int(f, 0)));
}

static void staged_index(tcc_func *f, tcc_expr *const *ax, tcc_expr **index, void *user)
{
    (void)f;
    for (int i = 0; i < ((const StagedOperand *)user)->to->ndim; i++)
        index[i] = ax[i];
}

tcc_status tci_gemm_define_staging(tcc_func *func, const GemmOperator *op, GemmSplit split,
                                   int index, Gemm *gemm)
{
    static const char *const axes[TCI_MAX_DIMS] = {"i0", "i1", "i2", "i3", "i4", "i5"};
    const StagedOperand *st = &op->staged[index];
    declare_params(func, op, split, gemm);
    gemm->out = tcc_compute_into(func, "Out", st->to->ndim, st->to->shape, axes, staged_body,
                                 st->to, staged_index, (void *)st);
    if (!gemm->out)
        return tci_func_status(func);
    return TCC_OK;
}

bool tci_gemm_dense_map(tcc_func *f, tcc_tensor *t, const int64_t *view, tcc_expr *const *axes,
                        const int64_t *tile, tcc_tensor_map *map)
{
    (void)f;
    if (view[2] * (int64_t)tcc_dtype_size(t->type) % 16 != 0)
        return false; /* the copy engine's strides are multiples of 16 bytes */
    if (!map)
        return true;
    *map =
        (tcc_tensor_map){.size = sizeof *map, .mode = TCC_TENSOR_MAP_TILED, .tensor = t, .rank = 3};
    for (int d = 0; d < 3; d++) {
        map->dims[d] = view[2 - d];
        map->box[d] = tile[2 - d];
        map->coords[d] = axes[2 - d];
    }
    map->strides[1] = view[2];
    map->strides[2] = view[1] * view[2];
    return true;
}
