/*
 * schedule_ops: a stage filled by the bulk tensor copy engine (tcc_storage_bulk_copy)
 * becomes bulk copies instead of a loop nest. Its map's coordinates, written over the stage's
 * own axes, are evaluated at the region the stage realizes (each root axis at its min). The
 * hardware swizzles rows of at most 128 bytes, so a tile in column blocks takes one copy a
 * block, each one block further along dimension 0 of the map; a k-major tile of 128-byte rows
 * takes one. The map becomes a parameter of the kernel; software_pipeline gives the copies
 * their barrier.
 *
 * A global stage marked tcc_bulk_store copies its shared tile out the other way, one store a
 * column block, from the block's first thread: after a barrier that orders the block's
 * writes of the tile before the copy engine's reads (wgmma_sync puts the proxy fence before
 * it), and with a wait right before the tile is written again, so that the engine has read
 * the last tile's stores by then (in a persistent grid, a whole tile later); codegen waits for
 * the stores before the kernel ends. In a persistent grid whose warpgroups write the tile from
 * their accumulators, each warpgroup does all of this for its own block of the tile, at a
 * barrier of its own (tile_writers).
 *
 * In a grid of thread-block clusters (tcc_cluster), a tiled copy whose coordinates do not
 * depend on the clustered block index fetches the same box in every block of a cluster: each
 * block then copies 1/C of it (a slice of its outermost dimension, whole swizzle periods) and
 * multicasts the slice into every block's stage, at the same offset.
 */
#include "lower/loop_nest.h"

static tcc_status fail(Lowering *lw, const Stage *st, const char *why)
{
    return tci_fail(lw->ctx, TCC_ERROR_SCHEDULE, "storage_bulk_copy %s: %s", st->tensor->name, why);
}

/* The map's encoding, for a tile whose swizzled rows hold `row` elements (one copy's
 * dimension 0). */
static TensorMap encoded_map(const tcc_tensor_map *spec, tcc_dtype type, int64_t row)
{
    int64_t size = (int64_t)tcc_dtype_size(type);
    Buffer *tensor = spec->tensor->buffer;
    tcc_tensor_map_encoding e = {.mode = spec->mode,
                                 .param = tensor->param_index,
                                 .type = type,
                                 .rank = spec->rank,
                                 .swizzle_bytes = (int)(row * size)};
    for (int d = 0; d < spec->rank; d++) {
        e.dims[d] = spec->dims[d];
        e.strides[d] = d ? spec->strides[d] * size : size;
        e.box[d] = spec->box[d];
        e.element_strides[d] = spec->element_strides[d] ? spec->element_strides[d] : 1;
    }
    e.box[0] = row;
    for (int d = 0; d < 3; d++) {
        e.lower_corner[d] = spec->lower_corner[d];
        e.upper_corner[d] = spec->upper_corner[d];
    }
    return (TensorMap){.enc = e, .tensor = tensor};
}

/* The copy engine's swizzle of N-byte rows repeats every 8 rows (it permutes 16-byte chunks
 * by the row's low three bits): a slice that starts a period lands as the whole box would. */
enum { SWIZZLE_PERIOD_ROWS = 8 };

static bool uses_any(Expr *const *exprs, int n, const Var *var)
{
    for (int i = 0; i < n; i++)
        if (exprs[i] && tci_expr_uses_var(exprs[i], var))
            return true;
    return false;
}

/* The dimension of `map`'s box that a cluster of `blocks` slices for a multicast copy: the
 * outermost of more than one element, if it splits into whole swizzle periods; else -1. */
static int multicast_dim(const TensorMap *map, int blocks)
{
    const tcc_tensor_map_encoding *e = &map->enc;
    if (e->mode != TCC_TENSOR_MAP_TILED)
        return -1;
    int d = e->rank - 1;
    while (d > 0 && e->box[d] == 1)
        d--;
    int64_t slice = tci_tensor_map_copy_bytes(map) / blocks;
    int64_t period = (int64_t)e->swizzle_bytes * SWIZZLE_PERIOD_ROWS;
    return d > 0 && e->box[d] % blocks == 0 && slice % period == 0 ? d : -1;
}

/* The map of `st`'s copies or stores of the shared tile `b`, one a column block
 * (*copies of them, *row elements wide). */
static tcc_status tile_map(Lowering *lw, const Stage *st, const Buffer *b, TensorMap *encoded,
                           int64_t *copies, int64_t *row)
{
    const tcc_tensor_map *spec = &st->map;
    int64_t size = (int64_t)tcc_dtype_size(b->type);
    *row = b->swizzle.block ? b->swizzle.block : b->shape[b->ndim - 1];
    if (!b->swizzle.bits || !tci_buffer_is_dense(b) ||
        (*row * size != 32 && *row * size != 64 && *row * size != 128))
        return fail(lw, st,
                    "the copy engine moves swizzled rows of 32, 64 or 128 bytes: lay the "
                    "tile out with storage_swizzle or storage_swizzle_blocks");
    if (!spec->tensor->buffer)
        return fail(lw, st, "the map's tensor is not among the kernel's parameters");
    *encoded = encoded_map(spec, b->type, *row);
    *copies = spec->box[0] / *row;
    if (spec->box[0] % *row || (spec->mode == TCC_TENSOR_MAP_IM2COL && *copies != 1) ||
        *copies * tci_tensor_map_copy_bytes(encoded) != tci_buffer_bytes(b))
        return fail(lw, st, "the map's box is not the stage's tile");
    return TCC_OK;
}

tcc_status tci_build_bulk_copy(Lowering *lw, const Stage *st, Stmt **out)
{
    Arena *a = lw->arena;
    const Tensor *t = st->tensor;
    const tcc_tensor_map *spec = &st->map;
    Buffer *b = t->buffer;
    TensorMap encoded;
    int64_t copies, row;
    TRY(tile_map(lw, st, b, &encoded, &copies, &row));

    /* The coordinates at the tile's start: each root axis of the stage at its region's min. */
    Var *roots[TCI_MAX_DIMS];
    Expr *starts[TCI_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        roots[d] = t->axis[d]->var;
        starts[d] = t->axis[d]->min ? t->axis[d]->min : tci_ir_int(a, 0);
    }
    Expr *coords[TCI_MAX_MAP_RANK] = {0}, *offsets[3] = {0};
    for (int d = 0; d < spec->rank; d++)
        coords[d] = tci_expr_substitute(a, spec->coords[d], t->ndim, roots, starts);
    for (int d = 0; spec->mode == TCC_TENSOR_MAP_IM2COL && d < spec->rank - 2; d++)
        offsets[d] = tci_expr_substitute(a, spec->offsets[d], t->ndim, roots, starts);

    /* A box the same for a cluster's blocks: each copies its slice of dimension `sliced` (the
     * rank's), and the copy engine writes it into all of them. */
    int axis = tci_cluster_axis(lw->prim);
    Var *clustered = axis >= 0 ? lw->prim->thread_var[axis] : NULL;
    int blocks = axis >= 0 ? (int)lw->prim->cluster[axis] : 1;
    int sliced =
        blocks > 1 && !uses_any(coords, spec->rank, clustered) && !uses_any(offsets, 3, clustered)
            ? multicast_dim(&encoded, blocks)
            : -1;
    Expr *rank = tci_ir_int(a, 0);
    if (sliced > 0) {
        encoded.enc.box[sliced] /= blocks;
        rank = tci_ir_binary(a, EXPR_MOD, tci_ir_var(a, clustered), tci_ir_int(a, blocks));
        coords[sliced] =
            tci_ir_binary(a, EXPR_ADD, coords[sliced],
                          tci_ir_binary(a, EXPR_MUL, rank, tci_ir_int(a, encoded.enc.box[sliced])));
    }
    const TensorMap *map = tci_prim_func_add_tensor_map(lw->prim, &encoded);
    if (!map)
        return tci_fail(lw->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory while lowering");

    int64_t per_copy = b->elements / copies;
    int64_t per_slice = sliced > 0 ? per_copy / blocks : 0;
    Stmt *s = NULL;
    Expr *first = coords[0];
    for (int64_t j = 0; j < copies; j++) {
        coords[0] = tci_ir_binary(a, EXPR_ADD, first, tci_ir_int(a, j * row));
        Expr *dst = tci_ir_binary(a, EXPR_ADD, tci_ir_int(a, j * per_copy),
                                  tci_ir_binary(a, EXPR_MUL, rank, tci_ir_int(a, per_slice)));
        Stmt *copy = tci_stmt_bulk_copy(a, b, tci_simplify(a, dst, 0, NULL), map, coords, offsets,
                                        NULL, NULL);
        copy->bulk.multicast = sliced > 0 ? blocks : 0;
        copy->bulk.cache = spec->cache;
        s = tci_stmt_seq2(a, s, copy);
    }
    *out = s;
    return TCC_OK;
}

/* The stage marked tcc_bulk_store that stores the tile `src` computes, or NULL. */
static const Stage *store_of(const Lowering *lw, const Stage *src)
{
    for (int i = 0; i < lw->func->nstage; i++) {
        const Stage *store = lw->func->stages[i];
        if (store->bulk_store_at && store->tensor->body->access.tensor == src->tensor)
            return store;
    }
    return NULL;
}

bool tci_bulk_store_source(const Lowering *lw, const Stage *st)
{
    return store_of(lw, st) != NULL;
}

/* Thread 0 of the block, which issues the stores. threadIdx.x, which the elements' threads
 * (tensorize) run along, is named here before tensorize makes it. */
static Expr *issuer(Lowering *lw)
{
    tci_prim_func_thread_var(lw->prim, TCC_THREAD_X);
    return tci_first_thread(lw->arena, lw->prim);
}

/* ---- a store a warpgroup ------------------------------------------------------------------ */

/* The warpgroups that write a tile from their accumulators (TCC_WGMMA_ELEMENTS), `rows` x
 * `cols` of them along threadIdx.y and threadIdx.z, each its block of the tile; 1 x 1 where
 * the block's threads store the tile together. Where each warpgroup's block is whole swizzle
 * periods of rows and whole column blocks, each stores its own block after a barrier of its
 * own, and goes on without waiting for the others: one warpgroup's epilogue then runs under
 * the other's products instead of all of them meeting at the tile's end. */
typedef struct Writers {
    int64_t rows, cols;
} Writers;

static int64_t writers_along(const Stage *src, int axis, tcc_thread_tag tag)
{
    for (int r = 0; r < src->nrel; r++) {
        const Relation *rel = &src->rel[r];
        if (rel->kind == REL_SPLIT && rel->parent == src->tensor->axis[axis] && rel->outer->bound &&
            rel->outer->tag == tag && rel->nparts > 0)
            return rel->nparts;
    }
    return 1;
}

static bool written_from_accumulators(const Stage *src)
{
    for (int i = 0; i < src->nleaf; i++)
        if (src->leaf[i]->tensorized && src->leaf[i]->intrinsic == TCC_WGMMA_ELEMENTS)
            return true;
    return false;
}

/* Whether the grid is persistent (tcc_persistent): where a block goes on with a next tile,
 * whose products can run under a warpgroup's epilogue. A block a tile ends with its stores. */
static bool persistent_grid(const Func *func)
{
    for (int i = 0; i < func->nstage; i++)
        for (int j = 0; j < func->stages[i]->nleaf; j++)
            if (func->stages[i]->leaf[j]->persistent_blocks)
                return true;
    return false;
}

/* `b` is the tile, `src` the stage that writes it, `box` the store map's box. */
static Writers tile_writers(const Stage *src, const Buffer *b, const tcc_tensor_map_encoding *box)
{
    Writers one = {1, 1};
    int n = src->tensor->ndim;
    if (n < 2 || b->ndim != n || !written_from_accumulators(src) || !persistent_grid(src->func))
        return one;
    Writers w = {writers_along(src, n - 2, TCC_THREAD_Y), writers_along(src, n - 1, TCC_THREAD_Z)};
    int64_t rows = b->shape[n - 2];
    int64_t blocks = b->swizzle.block ? b->shape[n - 1] / b->swizzle.block : 1;
    int spanned = 0; /* the box's dimensions past the row of more than one element: rows */
    for (int d = 1; d < box->rank; d++)
        spanned += box->box[d] > 1 ? (box->box[d] == rows ? 1 : 2) : 0;
    if (w.rows * w.cols < 2 || spanned != 1 || rows % w.rows || blocks % w.cols ||
        rows / w.rows % SWIZZLE_PERIOD_ROWS ||
        TCI_BARRIER_WRITERS + w.rows * w.cols - 1 > TCI_BARRIER_LAST)
        return one;
    return w;
}

static Writers store_writers(Lowering *lw, const Stage *store)
{
    const Stage *src = store->tensor->body->access.tensor->stage;
    const Buffer *b = store->tensor->body->access.tensor->buffer;
    TensorMap encoded;
    int64_t copies, row;
    Writers one = {1, 1};
    if (!src || !b || tile_map(lw, store, b, &encoded, &copies, &row) != TCC_OK)
        return one;
    return tile_writers(src, b, &encoded.enc);
}

/* The writers' index along threadIdx.y or .z: 0 where `count` is 1. */
static Expr *writer_index(Lowering *lw, tcc_thread_tag tag, int64_t count)
{
    Arena *a = lw->arena;
    if (count == 1)
        return tci_ir_int(a, 0);
    return tci_ir_var(a, tci_prim_func_thread_var(lw->prim, tag));
}

static Expr *thread_is(Lowering *lw, tcc_thread_tag tag, int64_t value, int64_t count)
{
    Arena *a = lw->arena;
    if (count == 1)
        return tci_ir_bool(a, true);
    return tci_ir_binary(a, EXPR_EQ, writer_index(lw, tag, count), tci_ir_int(a, value));
}

/* Where the tile's writers meet: the block, or each warpgroup at a barrier of its own. */
static Stmt *writers_barrier(Lowering *lw, Writers w)
{
    Arena *a = lw->arena;
    if (w.rows * w.cols == 1)
        return tci_stmt_barrier(a);
    Stmt *s = NULL;
    for (int64_t y = 0; y < w.rows; y++)
        for (int64_t z = 0; z < w.cols; z++) {
            Expr *is = tci_ir_binary(a, EXPR_AND, thread_is(lw, TCC_THREAD_Y, y, w.rows),
                                     thread_is(lw, TCC_THREAD_Z, z, w.cols));
            int id = TCI_BARRIER_WRITERS + (int)(y * w.cols + z);
            s = tci_stmt_seq2(
                a, s,
                tci_stmt_if(a, tci_simplify(a, is, 0, NULL),
                            tci_stmt_named_barrier(a, id, tci_device_limits.warpgroup_size), NULL));
        }
    return s;
}

/* Who issues the stores: the block's first thread, or each warpgroup's. */
static Expr *store_issuer(Lowering *lw, Writers w)
{
    Arena *a = lw->arena;
    Expr *first = issuer(lw);
    if (w.rows * w.cols == 1)
        return first;
    return tci_ir_binary(a, EXPR_EQ, tci_ir_var(a, lw->prim->thread_var[TCC_THREAD_X]),
                         tci_ir_int(a, 0));
}

Stmt *tci_bulk_store_wait(Lowering *lw, const Stage *src)
{
    Arena *a = lw->arena;
    const Stage *store = store_of(lw, src);
    Writers w = store ? store_writers(lw, store) : (Writers){1, 1};
    return tci_stmt_seq2(a, tci_stmt_if(a, store_issuer(lw, w), tci_stmt_bulk_wait(a, 0), NULL),
                         writers_barrier(lw, w));
}

tcc_status tci_build_bulk_store(Lowering *lw, const Stage *st, int at, Stmt **out)
{
    Arena *a = lw->arena;
    const Tensor *t = st->tensor;
    Buffer *b = t->body->access.tensor->buffer;
    if (!b || b->scope != TCC_SCOPE_SHARED)
        return fail(lw, st, "the copy engine stores a tile from shared memory");
    TensorMap encoded;
    int64_t copies, row;
    TRY(tile_map(lw, st, b, &encoded, &copies, &row));
    const Stage *src = t->body->access.tensor->stage;
    Writers w = src ? tile_writers(src, b, &encoded.enc) : (Writers){1, 1};
    b->swizzle.ring = b->swizzle.block ? tci_store_ring(copies, w.cols) : 0;
    int rows_dim = 1; /* the box's dimension of the tile's rows */
    while (w.rows > 1 && encoded.enc.box[rows_dim] != b->shape[b->ndim - 2])
        rows_dim++;
    encoded.enc.box[rows_dim] /= w.rows;
    const TensorMap *map = tci_prim_func_add_tensor_map(lw->prim, &encoded);
    if (!map)
        return tci_fail(lw->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory while lowering");
    /* The coordinates at the tile's start: the stage's root axes at their values with the
     * loops from `at` in at zero. */
    Var *roots[TCI_MAX_DIMS], *inner[TCI_MAX_DIMS * 2];
    Expr *values[TCI_MAX_DIMS], *zeros[TCI_MAX_DIMS * 2];
    int ninner = 0;
    for (int i = at; i < st->nleaf && ninner < TCI_MAX_DIMS * 2; i++, ninner++) {
        inner[ninner] = st->leaf[i]->loop_var;
        zeros[ninner] = tci_ir_int(a, 0);
    }
    for (int d = 0; d < t->ndim; d++) {
        roots[d] = t->axis[d]->var;
        values[d] =
            tci_expr_substitute(a, tci_axis_value(lw, st, t->axis[d]), ninner, inner, zeros);
    }
    Expr *coords[TCI_MAX_MAP_RANK];
    for (int d = 0; d < map->enc.rank; d++)
        coords[d] = tci_expr_substitute(a, st->map.coords[d], t->ndim, roots, values);
    /* Warpgroup (y, z) stores rows y of its column blocks z: box rows from row y * box, at
     * y * box rows into each block of the tile. */
    int64_t per_copy = b->elements / copies, mine = copies / w.cols;
    Expr *y = writer_index(lw, TCC_THREAD_Y, w.rows), *z = writer_index(lw, TCC_THREAD_Z, w.cols);
    coords[rows_dim] =
        tci_ir_binary(a, EXPR_ADD, coords[rows_dim],
                      tci_ir_binary(a, EXPR_MUL, y, tci_ir_int(a, map->enc.box[rows_dim])));
    for (int d = 1; d < map->enc.rank; d++)
        coords[d] = tci_simplify(a, coords[d], 0, NULL);
    Expr *rows_at = tci_ir_binary(a, EXPR_MUL, y, tci_ir_int(a, per_copy / w.rows));
    Stmt *s = NULL;
    Expr *first = coords[0];
    for (int64_t j = 0; j < mine; j++) {
        Expr *block = tci_ir_binary(a, EXPR_ADD, tci_ir_binary(a, EXPR_MUL, z, tci_ir_int(a, mine)),
                                    tci_ir_int(a, j));
        coords[0] =
            tci_simplify(a,
                         tci_ir_binary(a, EXPR_ADD, first,
                                       tci_ir_binary(a, EXPR_MUL, block, tci_ir_int(a, row))),
                         0, NULL);
        Expr *dst = tci_ir_binary(
            a, EXPR_ADD, tci_ir_binary(a, EXPR_MUL, block, tci_ir_int(a, per_copy)), rows_at);
        Stmt *store = tci_stmt_bulk_store(a, b, tci_simplify(a, dst, 0, NULL), map, coords);
        store->bulk.cache = st->map.cache;
        s = tci_stmt_seq2(a, s, store);
    }
    *out = tci_stmt_seq2(a, writers_barrier(lw, w), tci_stmt_if(a, store_issuer(lw, w), s, NULL));
    return TCC_OK;
}
