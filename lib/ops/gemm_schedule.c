/*
 * The implicit GEMM's schedule, in TVM's primitives (the tutorial's structure, plus an
 * epilogue staged through shared memory):
 *
 *   Out   blocks of BM x BN over (g, m, n); its elements spread over all threads, with
 *         guards where M or N is not a multiple of the block
 *   C     in shared memory, computed per block: each warp stores its fragments there
 *   C.acc per warp, WM x WN accumulator fragments; the reduction walks K in steps of
 *         num_total_passes MMA passes through shared-memory tiles of A and B, loading
 *         the fragments of num_fused_passes passes at a time; the MMA policy orders the
 *         passes and the tiles of the warp
 *
 * The epilogue reads C from shared memory, so any output layout, any edge and any
 * element-wise work come after the tensor cores without constraining them. With wgmma it may
 * instead read the accumulators where they are (store = registers): C is inlined, and Out,
 * split like the warpgroups' tiles, is tensorized into each thread's loop over the elements
 * it holds; or (store = bulk) Out's cache in shared memory is, and the copy engine stores
 * that tile into the output.
 */
#include "ops/gemm_tiles.h"

#include <string.h>

/* ---- applying it ------------------------------------------------------------------------ */

/* Spreads a loop over every thread of the block: threadIdx.x fastest. */
static tcc_status spread_over_threads(tcc_stage *s, tcc_iter_var *axis, Tiles t)
{
    tcc_iter_var *rest, *inner, *ty, *lanes, *tz, *tx;
    TRY(tcc_split(s, axis, t.threads, &rest, &inner));
    TRY(tcc_split(s, inner, t.lanes * t.warps_n, &ty, &lanes));
    TRY(tcc_split(s, lanes, t.lanes, &tz, &tx));
    TRY(tcc_bind(s, ty, TCC_THREAD_Y));
    TRY(tcc_bind(s, tz, TCC_THREAD_Z));
    return tcc_bind(s, tx, TCC_THREAD_X);
}

/* Out's blocks over (g, m, n), in the schedule's block order. Returns the block's rows and
 * columns (*mi, *ni) and the innermost block axis. */
static tcc_status split_into_blocks(tcc_func *f, const Gemm *gemm, const tcc_gemm_schedule *s,
                                    Tiles t, tcc_iter_var **mi, tcc_iter_var **ni,
                                    tcc_iter_var **block_axis)
{
    tcc_stage *so = tcc_stage_of(f, gemm->out);
    tcc_iter_var *g = tcc_tensor_axis(gemm->out, 0);
    tcc_iter_var *mo, *no;
    TRY(tcc_split(so, tcc_tensor_axis(gemm->out, 1), t.bm, &mo, mi));
    TRY(tcc_split(so, tcc_tensor_axis(gemm->out, 2), t.bn, &no, ni));
    tcc_iter_var *row_major[5] = {g, mo, no, *mi, *ni}, *col_major[5] = {g, no, mo, *mi, *ni};
    TRY(tcc_reorder(so, 5, s->column_major_blocks ? col_major : row_major));
    TRY(tcc_bind(so, g, TCC_BLOCK_Z));
    /* blockIdx.x walks the blocks of the inner of the two block loops. */
    TRY(tcc_bind(so, s->column_major_blocks ? no : mo, TCC_BLOCK_Y));
    TRY(tcc_bind(so, s->column_major_blocks ? mo : no, TCC_BLOCK_X));
    if (s->cluster > 1)
        TRY(tcc_cluster(so, mo, s->cluster));
    *block_axis = s->column_major_blocks ? mo : no;
    return TCC_OK;
}

/* Out: blocks over (g, m, n), then the block's elements over its threads. Returns the
 * innermost block axis, where the block's C is computed. */
static tcc_status schedule_out(tcc_func *f, const GemmOperator *op, const Gemm *gemm,
                               const tcc_gemm_schedule *s, Tiles t, tcc_iter_var **block_axis)
{
    /* Split-K's partial sums lie n-contiguous whatever the output's layout. */
    bool m_contiguous = op->output_contiguous_in_m && !gemm->partial;
    tcc_stage *so = tcc_stage_of(f, gemm->out);
    tcc_iter_var *mi, *ni, *elements;
    TRY(split_into_blocks(f, gemm, s, t, &mi, &ni, block_axis));
    /* Consecutive threads write consecutive addresses of the output. */
    if (m_contiguous) {
        tcc_iter_var *order[2] = {ni, mi};
        TRY(tcc_reorder(so, 2, order));
        TRY(tcc_fuse(so, ni, mi, &elements));
    } else {
        TRY(tcc_fuse(so, mi, ni, &elements));
    }
    /* 16 bytes a thread along n where the output allows (the vectorize pass keeps the
     * vector only where it proves the elements contiguous in the output and in C). Along
     * m (NCHW) rows of images break the runs: one element a thread, coalesced per warp. */
    tcc_tensor *stored = gemm->partial ? gemm->partial : op->output;
    int64_t lanes = 16 / (int64_t)tcc_dtype_size(stored->type), count = t.bm * t.bn;
    if (!m_contiguous && count % (lanes * t.threads) == 0) {
        tcc_iter_var *groups, *vector;
        TRY(tcc_split(so, elements, lanes, &groups, &vector));
        TRY(tcc_vectorize(so, vector));
        elements = groups;
    }
    return spread_over_threads(so, elements, t);
}

/* C in shared memory: each warp stores its own accumulator fragments. Returns the warp
 * axis, where the warp's accumulator is computed. */
static tcc_status schedule_c(tcc_func *f, const Gemm *gemm, Tiles t, tcc_iter_var *block_axis,
                             tcc_iter_var **warp_axis)
{
    tcc_stage *sc = tcc_stage_of(f, gemm->c);
    tcc_stage *so = tcc_stage_of(f, gemm->out);
    TRY(tcc_compute_at(sc, so, block_axis));
    tcc_iter_var *wy, *mr, *wz, *nr, *tm, *tmi, *tn, *tni;
    TRY(tcc_split_nparts(sc, tcc_tensor_axis(gemm->c, 1), t.warps_m, &wy, &mr));
    TRY(tcc_split_nparts(sc, tcc_tensor_axis(gemm->c, 2), t.warps_n, &wz, &nr));
    TRY(tcc_split(sc, mr, t.mm, &tm, &tmi));
    TRY(tcc_split(sc, nr, t.mn, &tn, &tni));
    tcc_iter_var *order[6] = {wy, wz, tm, tn, tmi, tni};
    TRY(tcc_reorder(sc, 6, order));
    TRY(tcc_bind(sc, wy, TCC_THREAD_Y));
    TRY(tcc_bind(sc, wz, TCC_THREAD_Z));
    TRY(tcc_tensorize(sc, tmi, tci_gemm_op(t, TCC_WMMA_STORE), (int)t.mm, (int)t.mn, (int)t.mk));
    *warp_axis = wz;
    return TCC_OK;
}

/* A block's tile (`stored`, rows mi and columns ni) from registers: the block's warpgroups
 * over it as its accumulators lie, each thread applying the epilogue to the elements it holds
 * (TCC_WGMMA_ELEMENTS). Returns the warpgroup axis, where its accumulator is computed. */
static tcc_status split_as_accumulators(tcc_func *f, tcc_tensor *stored, tcc_iter_var *mi,
                                        tcc_iter_var *ni, Tiles t, tcc_iter_var **warp_axis)
{
    tcc_stage *so = tcc_stage_of(f, stored);
    tcc_iter_var *wy, *mr, *wz, *nr, *tm, *tmi, *tn, *tni;
    TRY(tcc_split_nparts(so, mi, t.warps_m, &wy, &mr));
    TRY(tcc_split_nparts(so, ni, t.warps_n, &wz, &nr));
    TRY(tcc_split(so, mr, t.mm, &tm, &tmi));
    TRY(tcc_split(so, nr, t.mn, &tn, &tni));
    tcc_iter_var *order[6] = {wy, wz, tm, tn, tmi, tni};
    TRY(tcc_reorder(so, 6, order));
    TRY(tcc_bind(so, wy, TCC_THREAD_Y));
    TRY(tcc_bind(so, wz, TCC_THREAD_Z));
    TRY(tcc_tensorize(so, tmi, TCC_WGMMA_ELEMENTS, (int)t.mm, (int)t.mn, (int)t.mk));
    /* Codegen reads an accumulator by register number: a warpgroup's several tiles unrolled. */
    TRY(tcc_unroll(so, tm));
    TRY(tcc_unroll(so, tn));
    *warp_axis = wz;
    return TCC_OK;
}

/* Out from registers: stored by each thread (store = registers), or written into an output
 * tile in shared memory (`staged`, Out's cache) that the copy engine stores (store = bulk).
 * Returns the warpgroup axis, where its accumulator is computed. */
static tcc_status schedule_out_from_registers(tcc_func *f, const GemmOperator *op, const Gemm *gemm,
                                              const tcc_gemm_schedule *s, Tiles t,
                                              tcc_tensor *staged, tcc_iter_var **warp_axis)
{
    tcc_iter_var *mi, *ni, *block_axis;
    TRY(split_into_blocks(f, gemm, s, t, &mi, &ni, &block_axis));
    if (!staged)
        return split_as_accumulators(f, gemm->out, mi, ni, t, warp_axis);
    tcc_stage *so = tcc_stage_of(f, gemm->out);
    tcc_expr *axes[3];
    for (int i = 0; i < 3; i++)
        axes[i] = tcc_axis(f, tcc_tensor_axis(gemm->out, i));
    const int64_t tile[3] = {1, t.bm, t.bn};
    tcc_tensor_map map;
    if (!op->out_tensor_map || !op->out_tensor_map(f, axes, tile, &map, op->op))
        return tci_fail(f->ctx, TCC_ERROR_SCHEDULE,
                        "schedule: the copy engine cannot store the tiles of %s",
                        tcc_tensor_name(gemm->out));
    TRY(tcc_bulk_store(so, mi, &map));
    TRY(tcc_compute_at(tcc_stage_of(f, staged), so, block_axis));
    TRY(tcc_storage_swizzle_blocks(tcc_stage_of(f, staged)));
    return split_as_accumulators(f, staged, tcc_tensor_axis(staged, 1), tcc_tensor_axis(staged, 2),
                                 t, warp_axis);
}

/* The warp's accumulator, computed at `warp_axis` of `parent` (C, or Out from registers), and
 * the reduction. Returns the step and fused-pass axes. */
static tcc_status schedule_accumulator(tcc_func *f, tcc_tensor *acc, tcc_stage *parent,
                                       const tcc_gemm_schedule *s, Tiles t, tcc_iter_var *warp_axis,
                                       tcc_iter_var **step, tcc_iter_var **group)
{
    tcc_stage *sf = tcc_stage_of(f, acc);
    TRY(tcc_compute_at(sf, parent, warp_axis));
    tcc_iter_var *ko, *ki, *kg, *kp, *pass, *kk, *tm, *tmi, *tn, *tni;
    TRY(tcc_split(sf, tcc_tensor_reduce_axis(acc, 0), t.bk, &ko, &ki));
    TRY(tcc_split(sf, ki, t.fk, &kg, &kp));
    TRY(tcc_split(sf, kp, t.mk, &pass, &kk));
    TRY(tcc_split(sf, tcc_tensor_axis(acc, 1), t.mm, &tm, &tmi));
    TRY(tcc_split(sf, tcc_tensor_axis(acc, 2), t.mn, &tn, &tni));
    tcc_iter_var *pass_order[8] = {ko, kg, pass, tm, tn, tmi, tni, kk};
    tcc_iter_var *block_order[8] = {ko, kg, tm, tn, pass, tmi, tni, kk};
    TRY(tcc_reorder(sf, 8, s->policy == TCC_MMA_BLOCK_ORDER ? block_order : pass_order));
    TRY(tcc_tensorize(sf, tmi, tci_gemm_op(t, TCC_WMMA_MMA), (int)t.mm, (int)t.mn, (int)t.mk));
    /* The groups of passes of one step in straight-line code, so that ptxas may load the
     * next group's fragments while this group's products run (a loop hides them). wgmma's
     * passes too: one run of products between a fence and a commit (wgmma_sync). */
    TRY(tcc_unroll(sf, kg));
    if (t.intrinsic == TCC_GEMM_WGMMA) {
        TRY(tcc_unroll(sf, pass));
        TRY(tcc_unroll(sf, tm));
        TRY(tcc_unroll(sf, tn));
    }
    *step = ko;
    *group = kg;
    return TCC_OK;
}

/* A fragment cache: 2-D tiles of rows x cols (as they lie in memory) at the end of its
 * loops. */
static tcc_status schedule_fragments(tcc_func *f, tcc_tensor *frag, int64_t rows, int64_t cols,
                                     tcc_intrinsic intrinsic, bool col_major, Tiles t)
{
    tcc_stage *s = tcc_stage_of(f, frag);
    tcc_iter_var *ro, *ri, *co, *ci;
    TRY(tcc_split(s, tcc_tensor_axis(frag, 1), rows, &ro, &ri));
    TRY(tcc_split(s, tcc_tensor_axis(frag, 2), cols, &co, &ci));
    tcc_iter_var *order[4] = {ro, co, ri, ci};
    TRY(tcc_reorder(s, 4, order));
    return tcc_tensorize_layout(s, ri, tci_gemm_op(t, intrinsic), (int)t.mm, (int)t.mn, (int)t.mk,
                                col_major);
}

/* The A and B fragments, loaded a group of passes at a time, as their tiles lie. */
static tcc_status schedule_operand_fragments(tcc_func *f, const GemmOperator *op, tcc_tensor *af,
                                             tcc_tensor *bf, tcc_stage *sf, tcc_iter_var *group,
                                             Tiles t)
{
    TRY(tcc_compute_at(tcc_stage_of(f, af), sf, group));
    TRY(tcc_compute_at(tcc_stage_of(f, bf), sf, group));
    if (op->a_col_major)
        TRY(schedule_fragments(f, af, t.mk, t.mm, TCC_WMMA_LOAD_A, true, t));
    else
        TRY(schedule_fragments(f, af, t.mm, t.mk, TCC_WMMA_LOAD_A, false, t));
    if (op->b_col_major)
        return schedule_fragments(f, bf, t.mn, t.mk, TCC_WMMA_LOAD_B, true, t);
    return schedule_fragments(f, bf, t.mk, t.mn, TCC_WMMA_LOAD_B, false, t);
}

/* Rows of a tile in shared memory (dimension 1; dimension 2, of `cols` elements, is
 * contiguous) padded or swizzled as the schedule says; in swizzled column blocks of 128
 * bytes where wgmma reads the tile along m or n (`mn_major`). */
static tcc_status lay_out(tcc_func *f, tcc_tensor *tile, int64_t cols, const tcc_gemm_schedule *s,
                          bool c_tile, bool mn_major)
{
    if (mn_major)
        return tcc_storage_swizzle_blocks(tcc_stage_of(f, tile));
    if (!c_tile && s->smem_layout == TCC_SMEM_SWIZZLED)
        return tcc_storage_swizzle(tcc_stage_of(f, tile));
    int64_t pad = tci_gemm_row_pad(tile->type, s, c_tile);
    if (!pad)
        return TCC_OK;
    return tcc_storage_align(tcc_stage_of(f, tile), tcc_tensor_axis(tile, 1), cols, pad);
}

/* A shared-memory tile, filled by every thread of the block, 16 bytes at a time where its
 * rows allow (the vectorize pass keeps a vector only where it proves the elements
 * contiguous in the source too, e.g. channels-last data with C/groups a multiple of 8). */
static tcc_status schedule_shared(tcc_func *f, tcc_tensor *shared, Tiles t)
{
    tcc_stage *s = tcc_stage_of(f, shared);
    tcc_iter_var *elements, *groups, *lanes;
    int64_t lanes_16_bytes = 16 / (int64_t)tcc_dtype_size(shared->type);
    TRY(tcc_fuse(s, tcc_tensor_axis(shared, 1), tcc_tensor_axis(shared, 2), &elements));
    TRY(tcc_split(s, elements, lanes_16_bytes, &groups, &lanes));
    TRY(tcc_vectorize(s, lanes));
    return spread_over_threads(s, groups, t);
}

/* A shared tile filled by the bulk copy engine, through the operand's tensor map, its lines
 * kept in L2 as `cache` says. */
static tcc_status bulk_copy(tcc_func *f, const GemmOperator *op, tcc_tensor *shared,
                            bool (*tensor_map)(tcc_func *, tcc_expr *const *, const int64_t *,
                                               tcc_tensor_map *, void *),
                            const int64_t *tile, tcc_cache_hint cache)
{
    tcc_expr *axes[3];
    for (int i = 0; i < 3; i++)
        axes[i] = tcc_axis(f, tcc_tensor_axis(shared, i));
    tcc_tensor_map map;
    if (!tensor_map || !tensor_map(f, axes, tile, &map, op->op))
        return tci_fail(f->ctx, TCC_ERROR_SCHEDULE,
                        "schedule: the copy engine cannot fetch the tiles of %s",
                        tcc_tensor_name(shared));
    map.cache = cache;
    return tcc_storage_bulk_copy(tcc_stage_of(f, shared), &map);
}

tcc_status tci_gemm_schedule_apply(tcc_func *f, const GemmOperator *op, const Gemm *gemm,
                                   const tcc_gemm_schedule *s, tcc_cache_hint operand_cache)
{
    Tiles t = tci_gemm_tiles(s);
    tcc_tensor *c = gemm->c;
    TRY(tcc_compute_inline(tcc_stage_of(f, gemm->a)));
    TRY(tcc_compute_inline(tcc_stage_of(f, gemm->b)));
    tcc_tensor *as = tcc_cache_read(f, gemm->a, TCC_SCOPE_SHARED, 1, &c);
    tcc_tensor *bs = tcc_cache_read(f, gemm->b, TCC_SCOPE_SHARED, 1, &c);
    /* wgmma reads A and B from shared memory: no fragments. */
    bool fragments = t.intrinsic != TCC_GEMM_WGMMA;
    tcc_tensor *af = fragments ? tcc_cache_read(f, as, TCC_SCOPE_WMMA_MATRIX_A, 1, &c) : NULL;
    tcc_tensor *bf = fragments ? tcc_cache_read(f, bs, TCC_SCOPE_WMMA_MATRIX_B, 1, &c) : NULL;
    bool bulk_store = s->store == TCC_GEMM_STORE_BULK;
    bool from_registers = s->store == TCC_GEMM_STORE_REGISTERS || bulk_store;
    tcc_tensor *staged = bulk_store ? tcc_cache_write(f, gemm->out, TCC_SCOPE_SHARED) : NULL;
    if (!from_registers)
        TRY(tcc_set_scope(tcc_stage_of(f, c), TCC_SCOPE_SHARED));
    tcc_tensor *acc = tcc_cache_write(f, c, TCC_SCOPE_WMMA_ACCUMULATOR);
    if (!as || !bs || (fragments && (!af || !bf)) || !acc || (bulk_store && !staged))
        return tci_func_status(f);

    tcc_iter_var *block_axis, *warp_axis, *step, *group;
    if (from_registers) {
        /* Out reads the accumulator itself. */
        TRY(tcc_compute_inline(tcc_stage_of(f, c)));
        TRY(schedule_out_from_registers(f, op, gemm, s, t, staged, &warp_axis));
    } else {
        TRY(schedule_out(f, op, gemm, s, t, &block_axis));
        TRY(schedule_c(f, gemm, t, block_axis, &warp_axis));
    }
    tcc_stage *parent = tcc_stage_of(f, staged ? staged : from_registers ? gemm->out : c);
    TRY(schedule_accumulator(f, acc, parent, s, t, warp_axis, &step, &group));
    tcc_stage *sf = tcc_stage_of(f, acc);
    TRY(tcc_compute_at(tcc_stage_of(f, as), sf, step));
    TRY(tcc_compute_at(tcc_stage_of(f, bs), sf, step));
    if (fragments)
        TRY(schedule_operand_fragments(f, op, af, bf, sf, group, t));
    if (s->copy == TCC_GEMM_COPY_BULK) {
        int64_t a_tile[3], b_tile[3];
        tci_gemm_operand_tiles(op, s, a_tile, b_tile);
        TRY(bulk_copy(f, op, as, op->a_tensor_map, a_tile, operand_cache));
        TRY(bulk_copy(f, op, bs, op->b_tensor_map, b_tile, operand_cache));
    } else {
        TRY(schedule_shared(f, as, t));
        TRY(schedule_shared(f, bs, t));
    }
    TRY(lay_out(f, as, op->a_col_major ? t.bm : t.bk, s, false, !fragments && op->a_col_major));
    TRY(lay_out(f, bs, op->b_col_major ? t.bk : t.bn, s, false, !fragments && !op->b_col_major));
    if (!from_registers)
        TRY(lay_out(f, c, t.bn, s, true, false));
    /* wgmma's products may run on across the barrier, a step late (wgmma_steps). */
    int in_flight = t.intrinsic == TCC_GEMM_WGMMA ? s->wgmma_steps - 1 : 0;
    if (s->stages > 1)
        TRY(tcc_pipeline_in_flight(sf, step, s->stages, in_flight));
    if (s->grid == TCC_GEMM_GRID_PERSISTENT)
        TRY(tcc_persistent(sf, step, s->grid_blocks));
    if (s->producer == TCC_GEMM_PRODUCER_WARPGROUP)
        TRY(tcc_warp_specialize(sf, step));
    return s->consumers == TCC_GEMM_CONSUMERS_PINGPONG ? tcc_pingpong(sf, step, 2) : TCC_OK;
}

/* ---- the elementwise kernels: split-K's reduction, staging copies ------------------------- */

enum { ELEMENTWISE_THREADS = 256 };

/* Fuses axes[0 .. n), adjacent and outermost first, into *out. */
static tcc_status fuse_all(tcc_stage *s, int n, tcc_iter_var *const *axes, tcc_iter_var **out)
{
    *out = axes[0];
    for (int i = 1; i < n; i++)
        TRY(tcc_fuse(s, *out, axes[i], out));
    return TCC_OK;
}

/* Every axis of `t`, outermost first. */
static int axes_of(tcc_tensor *t, tcc_iter_var **axes)
{
    for (int i = 0; i < t->ndim; i++)
        axes[i] = tcc_tensor_axis(t, i);
    return t->ndim;
}

/* A staging copy that moves the source's fastest dimension (w of an NCHW input) away from
 * the last (c of NHWC) is a transpose: through shared memory in tiles of TILE x TILE, read
 * along the source's fastest dimension and written along the workspace's, so that both
 * sides move whole sectors. Rows of the tile are padded by 2 elements (one bank) so that
 * the column reads do not conflict. */
enum { TILE = 32, TILE_PAD = 2 };

static tcc_status schedule_transpose(tcc_func *f, const StagedOperand *st, const Gemm *gemm,
                                     int read_fastest)
{
    tcc_tensor *out = gemm->out;
    int ndim = out->ndim, last = ndim - 1;
    tcc_tensor *readers[1] = {out};
    tcc_tensor *tile = tcc_cache_read(f, st->from, TCC_SCOPE_SHARED, 1, readers);
    if (!tile)
        return tci_func_status(f);
    tcc_stage *so = tcc_stage_of(f, out), *sh = tcc_stage_of(f, tile);
    tcc_iter_var *ro, *ri, *wo, *wi, *order[TCI_MAX_DIMS + 2], *block, *elements, *rest, *tx;
    TRY(tcc_split(so, tcc_tensor_axis(out, read_fastest), TILE, &ro, &ri));
    TRY(tcc_split(so, tcc_tensor_axis(out, last), TILE, &wo, &wi));
    int n = 0;
    for (int i = 0; i < last; i++)
        order[n++] = i == read_fastest ? ro : tcc_tensor_axis(out, i);
    order[n++] = wo;
    order[n++] = ri;
    order[n++] = wi;
    TRY(tcc_reorder(so, n, order));
    TRY(fuse_all(so, n - 2, order, &block));
    TRY(tcc_bind(so, block, TCC_BLOCK_X));
    TRY(tcc_fuse(so, ri, wi, &elements));
    TRY(tcc_split(so, elements, ELEMENTWISE_THREADS, &rest, &tx));
    TRY(tcc_bind(so, tx, TCC_THREAD_X));
    TRY(tcc_compute_at(sh, so, block));
    /* The tile's copy: every thread, consecutive ones along the source's fastest axis. */
    tcc_iter_var *tile_axes[TCI_MAX_DIMS] = {0}, *all, *copy_rest, *copy_tx;
    int tile_ndim = axes_of(tile, tile_axes);
    TRY(fuse_all(sh, tile_ndim, tile_axes, &all));
    TRY(tcc_split(sh, all, ELEMENTWISE_THREADS, &copy_rest, &copy_tx));
    TRY(tcc_bind(sh, copy_tx, TCC_THREAD_X));
    /* The tile's rows: the source dimension the workspace runs fastest (c of NCHW). */
    int rows = 0;
    while (rows < tile->ndim - 1 && st->perm[rows] != last)
        rows++;
    return tcc_storage_align(sh, tcc_tensor_axis(tile, rows), TILE, TILE_PAD);
}

tcc_status tci_gemm_schedule_elementwise(tcc_func *f, const GemmOperator *op, const Gemm *gemm)
{
    for (int i = 0; i < op->nstaged; i++) {
        const StagedOperand *st = &op->staged[i];
        int read_fastest = st->perm[st->from->ndim - 1]; /* the axis of `to` it is */
        if (st->to == gemm->out->store_target && read_fastest != gemm->out->ndim - 1)
            return schedule_transpose(f, st, gemm, read_fastest);
    }

    bool reduction = gemm->c != NULL; /* split-K's: Out's axes are (g, m, n) */
    if (reduction)
        TRY(tcc_compute_inline(tcc_stage_of(f, gemm->c)));
    tcc_stage *so = tcc_stage_of(f, gemm->out);
    tcc_iter_var *axes[TCI_MAX_DIMS], *all, *bx, *tx;
    int ndim = axes_of(gemm->out, axes);
    /* Consecutive threads write consecutive addresses of the output. */
    if (reduction && op->output_contiguous_in_m) {
        tcc_iter_var *m = axes[1];
        axes[1] = axes[2];
        axes[2] = m;
        TRY(tcc_reorder(so, ndim, axes));
    }
    TRY(fuse_all(so, ndim, axes, &all));
    TRY(tcc_split(so, all, ELEMENTWISE_THREADS, &bx, &tx));
    TRY(tcc_bind(so, bx, TCC_BLOCK_X));
    return tcc_bind(so, tx, TCC_THREAD_X);
}
