/*
 * Tensorize: a loop nest replaced by one warp-wide tensor-core operation.
 *
 * The loops from the tensorized axis inwards must be exactly the operation's tile: two
 * loops of m x n (k for the A/B operands) for a copy, three of m x n x k for the
 * multiply-accumulate. Bound inference's interval analysis, with those loops relaxed,
 * gives the region each access touches; a region must be a tile of the right shape
 * whose columns are contiguous (the last dimension), and a fragment's region must be
 * whole fragments (its last two dimensions are the tile), whose number is then the
 * fragment index (TVM's elem_offset // 256).
 */
#include "lower/loop_nest.h"

typedef struct Tile {
    int64_t rows, cols;
} Tile;

static tcc_status fail(Lowering *lw, const Stage *st, const char *what)
{
    return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE, "tensorize %s: %s", st->tensor->name, what);
}

/* The loops from `at` inwards (spatial ones only for an init), relaxed. */
static tcc_status tile_loops(Lowering *lw, const Stage *st, int at, bool init, Relaxation *relax,
                             int64_t *extents, bool *reduce, int *count)
{
    Arena *a = lw->arena;
    int n = 0;
    relax->count = 0;
    relax->vars = tci_arena_alloc(a, sizeof(Var *) * (size_t)st->nleaf);
    relax->extent = tci_arena_alloc(a, sizeof(int64_t) * (size_t)st->nleaf);
    for (int i = at; i < st->nleaf; i++) {
        const IterVar *leaf = st->leaf[i];
        if (init && leaf->reduce)
            continue;
        if (leaf->bound)
            return fail(lw, st, "a tensorized loop nest cannot contain thread-bound loops");
        if (n == 3)
            return fail(lw, st, "more loops inside the tensorized axis than the operation has");
        relax->vars[relax->count] = leaf->loop_var;
        relax->extent[relax->count++] = leaf->extent;
        extents[n] = leaf->extent;
        reduce[n++] = leaf->reduce;
    }
    *count = n;
    return TCC_OK;
}

/* The two varying dimensions of a region: rows, then contiguous columns. */
static tcc_status tile_region(Lowering *lw, const Stage *st, const Buffer *b, const Region *r,
                              Tile tile, int *row_dim, int64_t *stride)
{
    int dims[2], n = 0;
    for (int d = 0; d < b->ndim; d++) {
        if (r->extent[d] == 1)
            continue;
        if (n == 2)
            return fail(lw, st, "the operation's tile spans more than two dimensions");
        dims[n++] = d;
    }
    if (n != 2 || r->extent[dims[0]] != tile.rows || r->extent[dims[1]] != tile.cols)
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "tensorize %s: %s is not read or written as a %lldx%lld tile",
                        st->tensor->name, b->name, (long long)tile.rows, (long long)tile.cols);
    if (dims[1] != b->ndim - 1)
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "tensorize %s: the columns of the tile of %s are not contiguous",
                        st->tensor->name, b->name);
    *row_dim = dims[0];
    *stride = b->strides[dims[0]];
    return TCC_OK;
}

/* Which fragment of `frag` the region is. The buffer is a grid of tiles: along each
 * dimension the tile spans the region's extent (1 outside the tile's two dimensions), so
 * the region's start over that extent is its tile coordinate. */
static tcc_status fragment_index(Lowering *lw, const Stage *st, const Buffer *frag, const Region *r,
                                 Tile tile, Expr **out)
{
    Arena *a = lw->arena;
    int varying = 0;
    int64_t elements = 1;
    for (int d = 0; d < frag->ndim; d++) {
        varying += r->extent[d] > 1;
        elements *= r->extent[d];
        if (frag->shape[d] % r->extent[d] != 0)
            varying = 3;
    }
    if (varying > 2 || elements != tile.rows * tile.cols)
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "tensorize %s: the region of fragment %s is not a %lldx%lld tile of it",
                        st->tensor->name, frag->name, (long long)tile.rows, (long long)tile.cols);
    Expr *index = tci_ir_int(a, 0);
    int64_t tiles = 1;
    for (int d = frag->ndim - 1; d >= 0; d--) {
        Expr *start =
            frag->min[d] ? tci_ir_binary(a, EXPR_SUB, r->min[d], frag->min[d]) : r->min[d];
        Expr *extent = tci_ir_int(a, r->extent[d]);
        if (!tci_expr_is_int(tci_simplify(a, tci_ir_binary(a, EXPR_MOD, start, extent), 0, NULL),
                             0))
            return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                            "tensorize %s: a tile of fragment %s does not start at a multiple of "
                            "its extent %lld in dimension %d",
                            st->tensor->name, frag->name, (long long)r->extent[d], d);
        Expr *coordinate = tci_ir_binary(a, EXPR_DIV, start, extent);
        index = tci_ir_binary(a, EXPR_ADD, index,
                              tci_ir_binary(a, EXPR_MUL, coordinate, tci_ir_int(a, tiles)));
        tiles *= frag->shape[d] / r->extent[d];
    }
    *out = tci_simplify(a, index, 0, NULL);
    return TCC_OK;
}

/* The tile as it lies in memory: rows, then contiguous columns. */
static Tile memory_tile(const IterVar *leaf, int64_t m, int64_t n, int64_t k)
{
    Tile t = leaf->intrinsic == TCC_WMMA_LOAD_A   ? (Tile){m, k}
             : leaf->intrinsic == TCC_WMMA_LOAD_B ? (Tile){k, n}
                                                  : (Tile){m, n};
    return leaf->col_major ? (Tile){t.cols, t.rows} : t;
}

static Expr *strip_cast(Expr *e)
{
    return e->kind == EXPR_CAST ? e->cast.value : e;
}

static tcc_status own_region(Lowering *lw, const Stage *st, const Relaxation *relax, Region *r)
{
    Expr *index[TCI_MAX_DIMS];
    for (int d = 0; d < st->tensor->ndim; d++)
        index[d] = tci_ir_var(lw->arena, st->tensor->axis[d]->var);
    return tci_access_region(lw, st, st->tensor->ndim, index, relax, r);
}

static tcc_status check_loops(Lowering *lw, const Stage *st, int count, const int64_t *extents,
                              const bool *reduce, int64_t m, int64_t n, int64_t k, bool mma)
{
    bool ok = mma ? count == 3 && extents[0] == m && extents[1] == n && extents[2] == k &&
                        !reduce[0] && !reduce[1] && reduce[2]
                  : count == 2 && extents[0] == m && extents[1] == n;
    if (!ok)
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "tensorize %s: the loops inside the tensorized axis are not the "
                        "operation's m%lldn%lldk%lld tile",
                        st->tensor->name, (long long)m, (long long)n, (long long)k);
    return TCC_OK;
}

static tcc_status build_copy(Lowering *lw, const Stage *st, const IterVar *leaf,
                             const Relaxation *relax, WmmaStmt *w)
{
    const Tensor *t = st->tensor;
    Expr *body = t->lowered_body;
    bool load = leaf->intrinsic != TCC_WMMA_STORE;
    if (body->kind != EXPR_ACCESS)
        return fail(lw, st, "a WMMA load or store must copy a tensor element by element");
    Tensor *source = body->access.tensor;
    tcc_scope want = leaf->intrinsic == TCC_WMMA_LOAD_A   ? TCC_SCOPE_WMMA_MATRIX_A
                     : leaf->intrinsic == TCC_WMMA_LOAD_B ? TCC_SCOPE_WMMA_MATRIX_B
                                                          : TCC_SCOPE_WMMA_ACCUMULATOR;
    tcc_scope frag_scope = load ? st->scope : source->stage->scope;
    if (frag_scope != want)
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "tensorize %s: the fragment must be in %s scope", t->name,
                        tci_scope_name(want));
    Tile tile = memory_tile(leaf, w->m, w->n, w->k);
    Region src, dst;
    tcc_status status = tci_access_region(lw, st, source->ndim, body->access.index, relax, &src);
    if (status == TCC_OK)
        status = own_region(lw, st, relax, &dst);
    if (status != TCC_OK)
        return status;
    const Region *memory_region = load ? &src : &dst;
    const Region *fragment_region = load ? &dst : &src;
    w->memory = load ? source->buffer : t->buffer;
    w->fragment = load ? t->buffer : source->buffer;
    w->op = leaf->intrinsic == TCC_WMMA_LOAD_A   ? WMMA_LOAD_A
            : leaf->intrinsic == TCC_WMMA_LOAD_B ? WMMA_LOAD_B
                                                 : WMMA_STORE;
    int row_dim;
    status = tile_region(lw, st, w->memory, memory_region, tile, &row_dim, &w->stride);
    if (status == TCC_OK)
        status = fragment_index(lw, st, w->fragment, fragment_region, tile, &w->fragment_index);
    w->col_major = leaf->col_major;
    w->nindex = w->memory->ndim;
    w->memory_index = tci_arena_alloc(lw->arena, sizeof(Expr *) * (size_t)w->nindex);
    for (int d = 0; d < w->nindex; d++)
        w->memory_index[d] = memory_region->min[d];
    return status;
}

/* Whether the last index of an operand's access runs along k (a reduction axis). */
static bool last_is_k(const Stage *st, const Expr *access)
{
    const Expr *last = access->access.index[access->access.nindex - 1];
    for (int i = 0; i < st->tensor->nreduce; i++)
        if (tci_expr_uses_var(last, st->tensor->reduce_axis[i]->var))
            return true;
    return false;
}

/* How a fragment's tile was loaded (tensorize_layout on the stage that fills it). */
static bool loaded_col_major(const Tensor *fragment)
{
    const Stage *s = fragment->stage;
    for (int i = 0; i < s->nleaf; i++)
        if (s->leaf[i]->tensorized)
            return s->leaf[i]->col_major;
    return false;
}

/* A's last index runs along k when it is row-major, B's when it is column-major. */
static bool orientation_matches(const Stage *st, const Expr *access, bool is_a)
{
    bool k_last = last_is_k(st, access);
    bool col_major = loaded_col_major(access->access.tensor);
    return is_a ? k_last != col_major : k_last == col_major;
}

static tcc_status operand(Lowering *lw, const Stage *st, Expr *access, tcc_scope scope,
                          const Relaxation *relax, Tile tile, Buffer **buffer, Expr **index)
{
    access = strip_cast(access);
    if (access->kind != EXPR_ACCESS || access->access.tensor->stage->scope != scope)
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "tensorize %s: an operand of the product is not read from %s",
                        st->tensor->name, tci_scope_name(scope));
    Tensor *t = access->access.tensor;
    if (!orientation_matches(st, access, scope == TCC_SCOPE_WMMA_MATRIX_A))
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "tensorize %s: %s is loaded %s-major, but the product reads it the other "
                        "way",
                        st->tensor->name, t->name, loaded_col_major(t) ? "column" : "row");
    Region r;
    tcc_status status = tci_access_region(lw, st, t->ndim, access->access.index, relax, &r);
    if (status != TCC_OK)
        return status;
    *buffer = t->buffer;
    return fragment_index(lw, st, t->buffer, &r, tile, index);
}

/* A wgmma operand: an mn x k tile read straight from a shared-memory tile whose rows run
 * along k (A m x k, B n x k) or along m or n (k x m, k x n): its first element's offset
 * there. */
static tcc_status shared_operand(Lowering *lw, const Stage *st, Expr *access, int64_t mn, int64_t k,
                                 const Relaxation *relax, Buffer **buffer, Expr **index)
{
    access = strip_cast(access);
    if (access->kind != EXPR_ACCESS || access->access.tensor->stage->scope != TCC_SCOPE_SHARED)
        return fail(lw, st, "wgmma reads both operands of the product from shared memory");
    Tensor *t = access->access.tensor;
    bool mn_major = !last_is_k(st, access);
    Tile tile = mn_major ? (Tile){k, mn} : (Tile){mn, k};
    /* wgmma reads a tile transposed exactly when it lies in column blocks. */
    if (mn_major != (t->buffer->swizzle.block > 0))
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "tensorize %s: wgmma reads %s %s: it must %s in column blocks "
                        "(tcc_storage_swizzle_blocks)",
                        st->tensor->name, t->name,
                        mn_major ? "along m or n (transposed)" : "along k",
                        mn_major ? "lie" : "not lie");
    Region r;
    int row_dim;
    int64_t stride;
    tcc_status status = tci_access_region(lw, st, t->ndim, access->access.index, relax, &r);
    if (status == TCC_OK)
        status = tile_region(lw, st, t->buffer, &r, tile, &row_dim, &stride);
    if (status != TCC_OK)
        return status;
    if (stride != t->buffer->shape[t->buffer->ndim - 1])
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "tensorize %s: wgmma reads %s in whole rows; its rows are %lld "
                        "elements apart, not %lld",
                        st->tensor->name, t->name, (long long)stride,
                        (long long)t->buffer->shape[t->buffer->ndim - 1]);
    *buffer = t->buffer;
    *index = tci_buffer_flat_index(lw->arena, t->buffer, t->ndim, r.min);
    return TCC_OK;
}

static tcc_status build_mma(Lowering *lw, const Stage *st, bool init, const Relaxation *relax,
                            WmmaStmt *w)
{
    const Tensor *t = st->tensor;
    if (st->scope != TCC_SCOPE_WMMA_ACCUMULATOR || t->lowered_body->kind != EXPR_REDUCE)
        return fail(lw, st, "mma_sync needs a reduction into a wmma.accumulator tensor");
    Expr *product = strip_cast(t->lowered_body->reduce.source);
    if (product->kind != EXPR_MUL)
        return fail(lw, st, "mma_sync needs a sum of products");
    Region c;
    tcc_status status = own_region(lw, st, relax, &c);
    if (status == TCC_OK)
        status = fragment_index(lw, st, t->buffer, &c, (Tile){w->m, w->n}, &w->fragment_index);
    w->fragment = t->buffer;
    if (init || status != TCC_OK) {
        w->op = WMMA_FILL;
        w->fill_value = 0;
        return status;
    }
    w->op = WMMA_MMA;
    w->c = t->buffer;
    w->c_index = w->fragment_index;
    if (w->family == TENSOR_WGMMA) {
        status = shared_operand(lw, st, product->bin.a, w->m, w->k, relax, &w->a, &w->a_index);
        if (status == TCC_OK)
            status = shared_operand(lw, st, product->bin.b, w->n, w->k, relax, &w->b, &w->b_index);
        return status;
    }
    status = operand(lw, st, product->bin.a, TCC_SCOPE_WMMA_MATRIX_A, relax, (Tile){w->m, w->k},
                     &w->a, &w->a_index);
    if (status == TCC_OK)
        status = operand(lw, st, product->bin.b, TCC_SCOPE_WMMA_MATRIX_B, relax, (Tile){w->k, w->n},
                         &w->b, &w->b_index);
    return status;
}

tcc_status tci_tensorize_stage(Lowering *lw, const Stage *st, int at, bool init, Stmt **out)
{
    const IterVar *leaf = st->leaf[at];
    Relaxation relax;
    int64_t extents[3];
    bool reduce[3];
    int count = 0;
    tcc_status status = tile_loops(lw, st, at, init, &relax, extents, reduce, &count);
    if (status != TCC_OK)
        return status;
    WmmaStmt w = {.family = leaf->family, .m = leaf->mma_m, .n = leaf->mma_n, .k = leaf->mma_k};
    bool mma = leaf->intrinsic == TCC_WMMA_MMA && !init;
    Tile tile = memory_tile(leaf, w.m, w.n, w.k);
    status = check_loops(lw, st, count, extents, reduce, tile.rows, tile.cols, w.k, mma);
    if (status != TCC_OK)
        return status;
    if (leaf->intrinsic == TCC_WMMA_MMA)
        status = build_mma(lw, st, init, &relax, &w);
    else
        status = build_copy(lw, st, leaf, &relax, &w);
    if (status != TCC_OK)
        return status;
    *out = tci_stmt_wmma(lw->arena, &w);
    return TCC_OK;
}

/* ---- the epilogue from registers ---------------------------------------------------------- */

typedef struct AccumulatorRead {
    const Tensor *tensor; /* the accumulator tensor the body reads; NULL until found */
    const Expr *access;
    bool several; /* it reads two tensors of accumulator scope, or one at two indices */
} AccumulatorRead;

static bool find_accumulator_read(Visitor *v, const Expr *e)
{
    AccumulatorRead *r = v->user;
    if (e->kind != EXPR_ACCESS || e->access.tensor->stage->scope != TCC_SCOPE_WMMA_ACCUMULATOR)
        return true;
    if (r->access && !tci_expr_equal(r->access, e))
        r->several = true;
    r->tensor = e->access.tensor;
    r->access = e;
    return false;
}

/* Loads of the accumulator (at the element tensorize checked) become loads of one register,
 * `index`: the fragment's number times its registers, plus the register. */
typedef struct RegisterLoad {
    const Buffer *fragment;
    Expr *index;
} RegisterLoad;

static Expr *to_register(Rewriter *rw, Expr *e)
{
    const RegisterLoad *r = rw->user;
    if (e->kind != EXPR_LOAD || e->load.buffer != r->fragment)
        return NULL;
    return tci_ir_load(rw->arena, e->load.buffer, 1, &r->index);
}

/* Whether index - start runs exactly along `var` (the tile's row or column loop). */
static bool runs_along(Arena *a, Expr *index, Expr *start, Var *var)
{
    Expr *offset = tci_simplify(a, tci_ir_binary(a, EXPR_SUB, index, start), 0, NULL);
    return offset->kind == EXPR_VAR && offset->var == var;
}

tcc_status tci_tensorize_elements(Lowering *lw, const Stage *st, int at, Stmt *body, Stmt **out)
{
    Arena *a = lw->arena;
    const IterVar *leaf = st->leaf[at];
    Relaxation relax;
    int64_t extents[3];
    bool reduce[3];
    int count = 0;
    TRY(tile_loops(lw, st, at, false, &relax, extents, reduce, &count));
    TRY(check_loops(lw, st, count, extents, reduce, leaf->mma_m, leaf->mma_n, 0, false));
    AccumulatorRead read = {0};
    Visitor v = {.expr = find_accumulator_read, .user = &read};
    tci_visit_expr(&v, st->tensor->lowered_body);
    if (!read.tensor || read.several)
        return fail(lw, st, "the element-wise epilogue must read one accumulator at one index");
    Buffer *frag = read.tensor->buffer;
    const TensorAccumulator *acc = tci_target_accumulator(frag->type);
    if (!acc || acc->elements_per_reg != 1)
        return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE,
                        "tensorize %s: the epilogue from registers reads one element a register "
                        "(float32 or int32 accumulators), not %s",
                        st->tensor->name, tcc_dtype_name(frag->type));
    /* The body reads one whole fragment, its (row, column) at the loops' (row, column). */
    Region r;
    Tile tile = {leaf->mma_m, leaf->mma_n};
    Expr *fragment;
    int row_dim;
    int64_t stride;
    TRY(tci_access_region(lw, st, read.access->access.nindex, read.access->access.index, &relax,
                          &r));
    TRY(tile_region(lw, st, frag, &r, tile, &row_dim, &stride));
    TRY(fragment_index(lw, st, frag, &r, tile, &fragment));
    /* ... its rows along the first loop, its columns along the second, one to one. */
    const Tensor *t = st->tensor;
    Var *roots[TCI_MAX_DIMS];
    Expr *values[TCI_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        roots[d] = t->axis[d]->var;
        values[d] = tci_axis_value(lw, st, t->axis[d]);
    }
    int last = frag->ndim - 1;
    Var *row = st->leaf[at]->loop_var, *col = st->leaf[at + 1]->loop_var;
    Expr *row_index =
        tci_expr_substitute(a, read.access->access.index[row_dim], t->ndim, roots, values);
    Expr *col_index =
        tci_expr_substitute(a, read.access->access.index[last], t->ndim, roots, values);
    if (!runs_along(a, row_index, r.min[row_dim], row) ||
        !runs_along(a, col_index, r.min[last], col))
        return fail(lw, st,
                    "the element-wise epilogue must read the accumulator at its own "
                    "row and column");
    /* Thread x of the warpgroup holds register `reg` at row 16 (x / 32) + (x % 32) / 4 +
     * row(reg) (a warp's band: an m16n8 tile's 16 rows, twice the lower rows' offset),
     * column 2 (x % 4) + col(reg) (tci_target_accumulator_element): pairs of
     * adjacent columns, registers 2p and 2p + 1, whose place depends on p only through p % 2
     * (the lower rows, as pair 1's) and p / 2 (the next m16n8 tile, as pair 2's). */
    int lanes = tci_target_family_threads(leaf->family);
    int regs = tci_target_accumulator_regs(acc, leaf->family, (int)tile.rows, (int)tile.cols);
    Var *x = tci_prim_func_thread_var(lw->prim, TCC_THREAD_X);
    if (lw->prim->launch[TCC_THREAD_X] < lanes)
        lw->prim->launch[TCC_THREAD_X] = lanes;
    int lower_rows, tile_cols, unused;
    tci_target_accumulator_element(2, &lower_rows, &unused);
    tci_target_accumulator_element(4, &unused, &tile_cols);
    Var *pair = tci_prim_func_new_var(lw->prim, tci_arena_printf(a, "%s.pair", t->name));
    Var *lane2 = tci_prim_func_new_var(lw->prim, tci_arena_printf(a, "%s.column", t->name));
    Expr *xv = tci_ir_var(a, x), *pv = tci_ir_var(a, pair), *jv = tci_ir_var(a, lane2);
    int warp = tci_device_limits.warp_size;
    Expr *two = tci_ir_int(a, 2), *four = tci_ir_int(a, 4), *warp_size = tci_ir_int(a, warp);
    Expr *lane = tci_ir_binary(a, EXPR_MOD, xv, warp_size);
    Expr *band = tci_ir_binary(a, EXPR_MUL,
                               tci_ir_binary(a, EXPR_MOD, tci_ir_binary(a, EXPR_DIV, xv, warp_size),
                                             tci_ir_int(a, lanes / warp)),
                               tci_ir_int(a, 2 * lower_rows));
    Expr *row_value = tci_ir_binary(
        a, EXPR_ADD, tci_ir_binary(a, EXPR_ADD, band, tci_ir_binary(a, EXPR_DIV, lane, four)),
        tci_ir_binary(a, EXPR_MUL, tci_ir_binary(a, EXPR_MOD, pv, two), tci_ir_int(a, lower_rows)));
    Expr *col_value = tci_ir_binary(
        a, EXPR_ADD,
        tci_ir_binary(a, EXPR_MUL, tci_ir_binary(a, EXPR_DIV, pv, two), tci_ir_int(a, tile_cols)),
        tci_ir_binary(a, EXPR_ADD,
                      tci_ir_binary(a, EXPR_MUL, tci_ir_binary(a, EXPR_MOD, lane, four), two), jv));
    Var *tile_vars[2] = {row, col};
    Expr *tile_values[2] = {row_value, col_value};
    Stmt *element = tci_stmt_substitute(a, body, 2, tile_vars, tile_values);
    Expr *reg = tci_ir_binary(a, EXPR_ADD, tci_ir_binary(a, EXPR_MUL, pv, two), jv);
    RegisterLoad load = {
        frag,
        tci_ir_binary(a, EXPR_ADD, tci_ir_binary(a, EXPR_MUL, fragment, tci_ir_int(a, regs)), reg)};
    Rewriter rw = {.arena = a, .expr = to_register, .user = &load};
    element = tci_rewrite_stmt(&rw, element);
    Stmt *columns = tci_stmt_for(a, lane2, tci_ir_int(a, 0), two, FOR_VECTORIZED, element);
    *out = tci_stmt_for(a, pair, tci_ir_int(a, 0), tci_ir_int(a, regs / 2), FOR_UNROLLED, columns);
    return TCC_OK;
}
