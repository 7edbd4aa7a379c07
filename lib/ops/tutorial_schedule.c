/*
 * The schedule of the TVM tensor-core tutorial, primitive by primitive, written with
 * tcc's public schedule API. Each block computes (block_row_warps x warp_row_tiles) x
 * (block_col_warps x warp_col_tiles) output tiles of 16x16; each warp a
 * warp_row_tiles x warp_col_tiles group of accumulator fragments; the reduction walks
 * the input channels `chunk` tiles at a time through shared memory.
 */
#include "tcc/ops.h"
#include "te/te.h"

void tcc_tutorial_conv2d_params_init(tcc_tutorial_conv2d_params *p)
{
    p->block_row_warps = 4;
    p->block_col_warps = 2;
    p->warp_row_tiles = 2;
    p->warp_col_tiles = 4;
    p->chunk = 2;
}

/* The schedule splits exactly; refuse shapes it cannot tile instead of guarding. */
static tcc_status check_tiling(tcc_func *func, const tcc_tutorial_conv2d *conv,
                               const tcc_tutorial_conv2d_params *p)
{
    const int64_t *out = conv->output->shape, *in = conv->input->shape;
    const int64_t params[5] = {p->block_row_warps, p->block_col_warps, p->warp_row_tiles,
                               p->warp_col_tiles, p->chunk};
    /* Bounded before any product of them, which could overflow. */
    for (int i = 0; i < 5; i++)
        if (params[i] < 1 || params[i] > 64)
            return tci_fail(func->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "tile sizes of the tutorial schedule must be 1 to 64 (got %lld)",
                            (long long)params[i]);
    int64_t rows = p->block_row_warps * p->warp_row_tiles;
    int64_t cols = p->block_col_warps * p->warp_col_tiles;
    if (out[0] % rows != 0)
        return tci_fail(func->ctx, TCC_ERROR_UNSUPPORTED,
                        "the tutorial schedule cannot tile batch %lld: it must be a multiple of "
                        "%lld (16 x block_row_warps x warp_row_tiles)",
                        (long long)(out[0] * 16), (long long)(rows * 16));
    if (out[3] % cols != 0)
        return tci_fail(func->ctx, TCC_ERROR_UNSUPPORTED,
                        "the tutorial schedule cannot tile out_channels %lld: it must be a "
                        "multiple of %lld (16 x block_col_warps x warp_col_tiles)",
                        (long long)(out[3] * 16), (long long)(cols * 16));
    if (in[3] % p->chunk != 0)
        return tci_fail(func->ctx, TCC_ERROR_UNSUPPORTED,
                        "the tutorial schedule cannot tile in_channels %lld: it must be a "
                        "multiple of %lld (16 x chunk)",
                        (long long)(in[3] * 16), (long long)(p->chunk * 16));
    return TCC_OK;
}

/* Fills a shared-memory tile with all the block's threads: the outer axis over the
 * warps (threadIdx.y, threadIdx.z), the innermost 16x16 over the 32 lanes. */
static tcc_status schedule_shared_a(tcc_stage *s, const tcc_tutorial_conv2d_params *p)
{
    tcc_tensor *t = s->tensor;
    tcc_iter_var *tx, *xo, *ty, *yo, *fused, *to, *ti;
    TRY(tcc_split_nparts(s, tcc_tensor_axis(t, 0), p->block_row_warps, &tx, &xo));
    TRY(tcc_split_nparts(s, xo, p->block_col_warps, &ty, &yo));
    TRY(tcc_fuse(s, tcc_tensor_axis(t, 4), tcc_tensor_axis(t, 5), &fused));
    TRY(tcc_split(s, fused, 32, &to, &ti));
    TRY(tcc_bind(s, tx, TCC_THREAD_Y));
    TRY(tcc_bind(s, ty, TCC_THREAD_Z));
    return tcc_bind(s, ti, TCC_THREAD_X);
}

/* The filter tile: the same, but each lane copies 8 contiguous halves (16 bytes). */
static tcc_status schedule_shared_w(tcc_stage *s, const tcc_tutorial_conv2d_params *p)
{
    tcc_tensor *t = s->tensor;
    tcc_iter_var *tx, *xo, *ty, *yo, *fused, *to, *ti;
    TRY(tcc_split_nparts(s, tcc_tensor_axis(t, 3), p->block_row_warps, &tx, &xo));
    TRY(tcc_split_nparts(s, xo, p->block_col_warps, &ty, &yo));
    TRY(tcc_fuse(s, tcc_tensor_axis(t, 4), tcc_tensor_axis(t, 5), &fused));
    TRY(tcc_split_nparts(s, fused, 32, &to, &ti));
    TRY(tcc_bind(s, tx, TCC_THREAD_Y));
    TRY(tcc_bind(s, ty, TCC_THREAD_Z));
    TRY(tcc_bind(s, to, TCC_THREAD_X));
    return tcc_vectorize(s, ti);
}

tcc_status tcc_tutorial_conv2d_schedule(tcc_func *func, const tcc_tutorial_conv2d *conv,
                                        const tcc_tutorial_conv2d_params *params)
{
    if (!func)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!conv || !conv->output)
        return tci_fail(func->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_tutorial_conv2d_schedule: the convolution is NULL");
    if (!tcc_stage_of(func, conv->output))
        return tci_fail(func->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_tutorial_conv2d_schedule: create the schedule first "
                        "(tcc_schedule_create)");
    tcc_tutorial_conv2d_params defaults;
    if (!params) {
        tcc_tutorial_conv2d_params_init(&defaults);
        params = &defaults;
    }
    const tcc_tutorial_conv2d_params *p = params;
    TRY(check_tiling(func, conv, p));
    tcc_tensor *out = conv->output;
    TRY(tcc_compute_inline(tcc_stage_of(func, conv->padded)));

    /* The memory hierarchy: global -> shared -> fragments -> accumulator -> global. */
    tcc_tensor *as = tcc_cache_read(func, conv->padded, TCC_SCOPE_SHARED, 1, &out);
    tcc_tensor *ws = tcc_cache_read(func, conv->filter, TCC_SCOPE_SHARED, 1, &out);
    tcc_tensor *af = tcc_cache_read(func, as, TCC_SCOPE_WMMA_MATRIX_A, 1, &out);
    tcc_tensor *wf = tcc_cache_read(func, ws, TCC_SCOPE_WMMA_MATRIX_B, 1, &out);
    tcc_tensor *acc = tcc_cache_write(func, out, TCC_SCOPE_WMMA_ACCUMULATOR);
    if (!as || !ws || !af || !wf || !acc)
        return tci_func_status(func);

    /* The output: blocks over (h*w, n tiles, k tiles), warps over (n, k), tiles per warp. */
    tcc_stage *s = tcc_stage_of(func, out);
    tcc_iter_var *block_k, *nc, *nci, *block_i, *oc, *oci, *block_j;
    TRY(tcc_fuse(s, tcc_tensor_axis(out, 1), tcc_tensor_axis(out, 2), &block_k));
    TRY(tcc_bind(s, block_k, TCC_BLOCK_Z));
    TRY(tcc_split(s, tcc_tensor_axis(out, 0), p->warp_row_tiles, &nc, &nci));
    TRY(tcc_split(s, nc, p->block_row_warps, &block_i, &nc));
    TRY(tcc_split(s, tcc_tensor_axis(out, 3), p->warp_col_tiles, &oc, &oci));
    TRY(tcc_split(s, oc, p->block_col_warps, &block_j, &oc));
    tcc_iter_var *order[9] = {block_k,
                              block_i,
                              block_j,
                              nc,
                              oc,
                              nci,
                              oci,
                              tcc_tensor_axis(out, 4),
                              tcc_tensor_axis(out, 5)};
    TRY(tcc_reorder(s, 9, order));
    TRY(tcc_bind(s, block_i, TCC_BLOCK_X));
    TRY(tcc_bind(s, block_j, TCC_BLOCK_Y));
    TRY(tcc_bind(s, nc, TCC_THREAD_Y));
    TRY(tcc_bind(s, oc, TCC_THREAD_Z));

    /* The accumulator, per warp; the reduction chunked over input channels. */
    tcc_stage *sf = tcc_stage_of(func, acc);
    TRY(tcc_compute_at(sf, s, oc));
    tcc_iter_var *ko, *ki;
    TRY(tcc_split(sf, conv->reduce_rc_outer, p->chunk, &ko, &ki));
    tcc_iter_var *order_f[9] = {ko,
                                conv->reduce_r,
                                ki,
                                conv->reduce_s,
                                tcc_tensor_axis(acc, 0),
                                tcc_tensor_axis(acc, 3),
                                tcc_tensor_axis(acc, 4),
                                tcc_tensor_axis(acc, 5),
                                conv->reduce_rc_inner};
    TRY(tcc_reorder(sf, 9, order_f));

    TRY(tcc_compute_at(tcc_stage_of(func, af), sf, conv->reduce_s));
    TRY(tcc_compute_at(tcc_stage_of(func, wf), sf, conv->reduce_s));
    TRY(tcc_compute_at(tcc_stage_of(func, as), sf, conv->reduce_r));
    TRY(tcc_compute_at(tcc_stage_of(func, ws), sf, conv->reduce_r));
    TRY(schedule_shared_a(tcc_stage_of(func, as), p));
    TRY(schedule_shared_w(tcc_stage_of(func, ws), p));

    /* Tensor cores: 16x16 fragment loads, 16x16x16 multiply-accumulate, 16x16 stores. */
    TRY(tcc_tensorize(tcc_stage_of(func, af), tcc_tensor_axis(af, 4), TCC_WMMA_LOAD_A, 16, 16, 16));
    TRY(tcc_tensorize(tcc_stage_of(func, wf), tcc_tensor_axis(wf, 4), TCC_WMMA_LOAD_B, 16, 16, 16));
    TRY(tcc_tensorize(s, tcc_tensor_axis(out, 4), TCC_WMMA_STORE, 16, 16, 16));
    return tcc_tensorize(sf, tcc_tensor_axis(acc, 4), TCC_WMMA_MMA, 16, 16, 16);
}
