/*
 * The seed's AutoTVM template, "tutorial/conv2d_no_batching" (../shared/seeds/003, "Tuning
 * High Performance Convolution on NVIDIA GPUs"), in C: a CUDA-core convolution, float32, NCHW
 * with a KCRS filter, batch 1, written primitive by primitive as the tutorial writes it.
 *
 *   knobs      tile_f, tile_y, tile_x (split in 4), tile_rc, tile_ry, tile_rx (in 3),
 *              auto_unroll_max_step [0, 512, 1500], unroll_explicit [0, 1], in that order
 *   compute    the padding a compute of its own, inlined; conv = sum(pad * kernel)
 *   caches     OL = cache_write(conv, local): each thread accumulates its outputs in
 *              registers across the whole reduction and writes them back at the end;
 *              AA, WW = shared copies of the (padded) data and the filter, AL, WL = local
 *              copies of those
 *   tiles      f, y, x split in 4 and bound to blockIdx.z/y/x, vthread (three axes of their
 *              own), threadIdx.z/y/x, and the inner tile; OL at tx; rc, ry, rx split in 3;
 *              AA, WW at rxo, AL, WL at rxm; the shared copies fused and spread over the
 *              block's threads (cooperative fetching)
 *   unroll     both pragmas at the kernel's outermost loop, n
 *
 * The kernel takes data (N, CI, H, W), kernel (CO, CI, KH, KW) and output (N, CO, OH, OW), so
 * that tcc_conv2d_check can check it for a tcc_conv2d_desc of the same convolution.
 */
#include "tune/templates.h"

#include "te/te.h"

#include <string.h>

typedef struct Shape {
    int64_t ci, h, w, co, kh, kw, oh, ow;
    int64_t sh, sw, dh, dw, pt, pl; /* strides, dilations, the top and left padding */
    int64_t ph, pw;                 /* the padded input's height and width */
} Shape;

/* What the template takes: the tutorial's convolution and only it. */
static tcc_status check_workload(tcc_context *ctx, const tcc_workload *w, Shape *s)
{
    if (!w)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "conv2d_no_batching: no workload");
    tcc_status status = TCI_CHECK_SIZE(ctx, "workload", tcc_workload, w);
    if (status == TCC_OK && w->kind != TCC_WORKLOAD_CONV2D)
        status = tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "conv2d_no_batching: the workload is not a convolution");
    if (status == TCC_OK)
        status = TCI_CHECK_SIZE(ctx, "conv2d descriptor", tcc_conv2d_desc, &w->conv2d);
    if (status != TCC_OK)
        return status;
    const tcc_conv2d_desc *d = &w->conv2d;
    const tcc_epilogue *e = &d->epilogue;
    bool plain = e->alpha == 1 && e->beta == 0 && !e->bias && !e->residual && !e->relu &&
                 !e->clamp && e->prologue == TCC_PROLOGUE_NONE;
    if (d->batch != 1 || d->groups != 1 || d->layout != TCC_LAYOUT_NCHW ||
        d->filter_layout != TCC_FILTER_KCRS || d->input_type != TCC_FLOAT32 ||
        d->accumulate_type != TCC_FLOAT32 || d->output_type != TCC_FLOAT32 || !plain)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "conv2d_no_batching takes batch 1, one group, NCHW with a KCRS filter, "
                        "float32 throughout and no epilogue (as the tutorial's template)");
    /* The tutorial's arguments are strides and one padding an axis: its records' keys
     * (tcc_workload_key) hold no more, so no other workload may share them. */
    if (d->dilation_h != 1 || d->dilation_w != 1 || d->pad_bottom != d->pad_top ||
        d->pad_right != d->pad_left)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "conv2d_no_batching takes dilation 1 and the same padding on both sides "
                        "of an axis (the tutorial's arguments)");
    /* Bounded before the sizes below are summed. */
    status = tcc_conv2d_validate(ctx, d);
    if (status != TCC_OK)
        return status;
    *s = (Shape){.ci = d->in_channels,
                 .h = d->height,
                 .w = d->width,
                 .co = d->out_channels,
                 .kh = d->kernel_h,
                 .kw = d->kernel_w,
                 .oh = tcc_conv2d_out_height(d),
                 .ow = tcc_conv2d_out_width(d),
                 .sh = d->stride_h,
                 .sw = d->stride_w,
                 .dh = d->dilation_h,
                 .dw = d->dilation_w,
                 .pt = d->pad_top,
                 .pl = d->pad_left};
    s->ph = d->height + d->pad_top + d->pad_bottom;
    s->pw = d->width + d->pad_left + d->pad_right;
    if (s->ci < 1 || s->co < 1 || s->kh < 1 || s->kw < 1 || s->oh < 1 || s->ow < 1 || s->sh < 1 ||
        s->sw < 1 || s->dh < 1 || s->dw < 1 || d->pad_top < 0 || d->pad_bottom < 0 ||
        d->pad_left < 0 || d->pad_right < 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "conv2d_no_batching: the convolution has no output (sizes, strides, "
                        "dilations and padding)");
    return TCC_OK;
}

/* ---- the compute: topi.nn.conv2d_nchw with its padding as a compute of its own ---------- */

typedef struct Definition {
    const Shape *s;
    tcc_tensor *data, *pad, *kernel;
    tcc_iter_var *rc, *ry, *rx;
} Definition;

/* pad_data[n, c, y, x] = data[n, c, y - pt, x - pl] inside the input, else 0. */
static tcc_expr *pad_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    const Definition *d = user;
    tcc_expr *y = tcc_sub(f, ax[2], tcc_int(f, d->s->pt));
    tcc_expr *x = tcc_sub(f, ax[3], tcc_int(f, d->s->pl));
    tcc_expr *inside =
        tcc_and(f, tcc_and(f, tcc_le(f, tcc_int(f, 0), y), tcc_lt(f, y, tcc_int(f, d->s->h))),
                tcc_and(f, tcc_le(f, tcc_int(f, 0), x), tcc_lt(f, x, tcc_int(f, d->s->w))));
    tcc_expr *index[4] = {ax[0], ax[1], y, x};
    return tcc_select(f, inside, tcc_access(f, d->data, 4, index), tcc_float(f, 0, TCC_FLOAT32));
}

/* conv[n, f, y, x] = sum over rc, ry, rx of pad[n, rc, y*sh + ry*dh, x*sw + rx*dw] *
 * kernel[f, rc, ry, rx]. */
static tcc_expr *conv_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    const Definition *d = user;
    tcc_expr *rc = tcc_axis(f, d->rc), *ry = tcc_axis(f, d->ry), *rx = tcc_axis(f, d->rx);
    tcc_expr *y =
        tcc_add(f, tcc_mul(f, ax[2], tcc_int(f, d->s->sh)), tcc_mul(f, ry, tcc_int(f, d->s->dh)));
    tcc_expr *x =
        tcc_add(f, tcc_mul(f, ax[3], tcc_int(f, d->s->sw)), tcc_mul(f, rx, tcc_int(f, d->s->dw)));
    tcc_expr *data_index[4] = {ax[0], rc, y, x};
    tcc_expr *kernel_index[4] = {ax[1], rc, ry, rx};
    tcc_expr *product =
        tcc_mul(f, tcc_access(f, d->pad, 4, data_index), tcc_access(f, d->kernel, 4, kernel_index));
    tcc_iter_var *axes[3] = {d->rc, d->ry, d->rx};
    return tcc_sum(f, product, 3, axes);
}

/* ---- the knobs ------------------------------------------------------------------------ */

typedef struct Knobs {
    int64_t tile_f[4], tile_y[4], tile_x[4], tile_rc[3], tile_ry[3], tile_rx[3];
    int64_t auto_unroll_max_step, unroll_explicit;
} Knobs;

/* The space definition, in the tutorial's order (its order is the space's). */
static tcc_status define_knobs(tcc_config *cfg, const Shape *s, Knobs *k)
{
    static const int64_t unroll_steps[3] = {0, 512, 1500}, explicit_values[2] = {0, 1};
    tcc_status status;
    if ((status = tcc_define_split(cfg, "tile_f", s->co, 4, k->tile_f)) != TCC_OK ||
        (status = tcc_define_split(cfg, "tile_y", s->oh, 4, k->tile_y)) != TCC_OK ||
        (status = tcc_define_split(cfg, "tile_x", s->ow, 4, k->tile_x)) != TCC_OK ||
        (status = tcc_define_split(cfg, "tile_rc", s->ci, 3, k->tile_rc)) != TCC_OK ||
        (status = tcc_define_split(cfg, "tile_ry", s->kh, 3, k->tile_ry)) != TCC_OK ||
        (status = tcc_define_split(cfg, "tile_rx", s->kw, 3, k->tile_rx)) != TCC_OK)
        return status;
    if ((status = tcc_define_knob(cfg, "auto_unroll_max_step", 3, unroll_steps,
                                  &k->auto_unroll_max_step)) != TCC_OK)
        return status;
    return tcc_define_knob(cfg, "unroll_explicit", 2, explicit_values, &k->unroll_explicit);
}

/* ---- the schedule ----------------------------------------------------------------------- */

typedef struct Tensors {
    tcc_tensor *data, *kernel, *pad, *conv;
} Tensors;

static tcc_status define(tcc_func *f, const Shape *s, Definition *d, Tensors *t)
{
    int64_t data_shape[4] = {1, s->ci, s->h, s->w}, kernel_shape[4] = {s->co, s->ci, s->kh, s->kw};
    int64_t pad_shape[4] = {1, s->ci, s->ph, s->pw}, out_shape[4] = {1, s->co, s->oh, s->ow};
    static const char *const pad_axes[4] = {"i0", "i1", "i2", "i3"};
    static const char *const conv_axes[4] = {"nn", "ff", "yy", "xx"};
    d->s = s;
    /* In topi's order (the padding before the filter), so that the shared copy of the data
     * comes before the filter's, as in TVM's lowering. */
    t->data = d->data = tcc_placeholder(f, "data", 4, data_shape, TCC_FLOAT32);
    t->pad = d->pad = tcc_compute(f, "pad_temp", 4, pad_shape, pad_axes, TCC_FLOAT32, pad_body, d);
    t->kernel = d->kernel = tcc_placeholder(f, "kernel", 4, kernel_shape, TCC_FLOAT32);
    d->rc = tcc_reduce_axis(f, "rc", s->ci);
    d->ry = tcc_reduce_axis(f, "ry", s->kh);
    d->rx = tcc_reduce_axis(f, "rx", s->kw);
    t->conv = tcc_compute(f, "compute", 4, out_shape, conv_axes, TCC_FLOAT32, conv_body, d);
    if (!t->conv)
        return tci_func_status(f);
    return tcc_schedule_create(f, 1, &t->conv);
}

/* AutoTVM's cfg[name].apply(s, stage, axis). */
static tcc_status apply_split(tcc_stage *st, tcc_iter_var *axis, int n, const int64_t *factors,
                              tcc_iter_var **parts)
{
    return tcc_split_by_factors(st, axis, n, factors, parts);
}

/* Cooperative fetching: the copy's axes fused, then spread over threadIdx.z, .y, .x in that
 * order (split by nparts: the block's threads along each), the rest a loop in each thread. */
static tcc_status cooperative_fetch(tcc_stage *st, tcc_tensor *load, const Knobs *k)
{
    tcc_iter_var *fused, *tz, *ty, *tx;
    TRY(tcc_fuse(st, tcc_tensor_axis(load, 0), tcc_tensor_axis(load, 1), &fused));
    TRY(tcc_fuse(st, fused, tcc_tensor_axis(load, 2), &fused));
    TRY(tcc_fuse(st, fused, tcc_tensor_axis(load, 3), &fused));
    TRY(tcc_split_nparts(st, fused, k->tile_f[2], &tz, &fused));
    TRY(tcc_split_nparts(st, fused, k->tile_y[2], &ty, &fused));
    TRY(tcc_split_nparts(st, fused, k->tile_x[2], &tx, &fused));
    TRY(tcc_bind(st, tz, TCC_THREAD_Z));
    TRY(tcc_bind(st, ty, TCC_THREAD_Y));
    return tcc_bind(st, tx, TCC_THREAD_X);
}

static tcc_status schedule(tcc_func *f, const Tensors *t, const Knobs *k)
{
    /* inline padding */
    TRY(tcc_compute_inline(tcc_stage_of(f, t->pad)));
    tcc_tensor *output = t->conv;
    tcc_tensor *OL = tcc_cache_write(f, output, TCC_SCOPE_LOCAL);
    /* create cache stages: the shared copy of the data reads the padded data, inlined */
    tcc_tensor *AA = OL ? tcc_cache_read(f, t->pad, TCC_SCOPE_SHARED, 1, &OL) : NULL;
    tcc_tensor *WW = AA ? tcc_cache_read(f, t->kernel, TCC_SCOPE_SHARED, 1, &OL) : NULL;
    tcc_tensor *AL = WW ? tcc_cache_read(f, AA, TCC_SCOPE_LOCAL, 1, &OL) : NULL;
    tcc_tensor *WL = AL ? tcc_cache_read(f, WW, TCC_SCOPE_LOCAL, 1, &OL) : NULL;
    if (!WL)
        return tci_func_status(f);

    /* tile and bind spatial axes */
    tcc_stage *so = tcc_stage_of(f, output);
    tcc_iter_var *n = tcc_tensor_axis(output, 0), *bf[4], *by[4], *bx[4];
    TRY(apply_split(so, tcc_tensor_axis(output, 1), 4, k->tile_f, bf));
    TRY(apply_split(so, tcc_tensor_axis(output, 2), 4, k->tile_y, by));
    TRY(apply_split(so, tcc_tensor_axis(output, 3), 4, k->tile_x, bx));
    tcc_iter_var *kernel_scope = n; /* the scope the kernel-wide pragmas attach to */
    TRY(tcc_bind(so, bf[0], TCC_BLOCK_Z));
    TRY(tcc_bind(so, by[0], TCC_BLOCK_Y));
    TRY(tcc_bind(so, bx[0], TCC_BLOCK_X));
    TRY(tcc_bind(so, bf[1], TCC_VTHREAD));
    TRY(tcc_bind(so, by[1], TCC_VTHREAD));
    TRY(tcc_bind(so, bx[1], TCC_VTHREAD));
    TRY(tcc_bind(so, bf[2], TCC_THREAD_Z));
    TRY(tcc_bind(so, by[2], TCC_THREAD_Y));
    TRY(tcc_bind(so, bx[2], TCC_THREAD_X));
    tcc_iter_var *order[13] = {n,     bf[0], by[0], bx[0], bf[1], by[1], bx[1],
                               bf[2], by[2], bx[2], bf[3], by[3], bx[3]};
    TRY(tcc_reorder(so, 13, order));
    tcc_stage *sl = tcc_stage_of(f, OL);
    TRY(tcc_compute_at(sl, so, bx[2]));

    /* tile reduction axes. The tutorial splits ry by tile_rx and rx by tile_ry
     * (`cfg["tile_rx"].apply(s, OL, ry)`), a quirk kept so that its logs mean the same here:
     * for its square filters both knobs range over the same splits. */
    tcc_iter_var *rc[3], *ry[3], *rx[3];
    TRY(apply_split(sl, tcc_tensor_reduce_axis(OL, 0), 3, k->tile_rc, rc));
    TRY(apply_split(sl, tcc_tensor_reduce_axis(OL, 1), 3, k->tile_rx, ry));
    TRY(apply_split(sl, tcc_tensor_reduce_axis(OL, 2), 3, k->tile_ry, rx));
    tcc_iter_var *reduce_order[13] = {rc[0],
                                      ry[0],
                                      rx[0],
                                      rc[1],
                                      ry[1],
                                      rx[1],
                                      rc[2],
                                      ry[2],
                                      rx[2],
                                      tcc_tensor_axis(OL, 0),
                                      tcc_tensor_axis(OL, 1),
                                      tcc_tensor_axis(OL, 2),
                                      tcc_tensor_axis(OL, 3)};
    TRY(tcc_reorder(sl, 13, reduce_order));
    TRY(tcc_compute_at(tcc_stage_of(f, AA), sl, rx[0]));
    TRY(tcc_compute_at(tcc_stage_of(f, WW), sl, rx[0]));
    TRY(tcc_compute_at(tcc_stage_of(f, AL), sl, rx[1]));
    TRY(tcc_compute_at(tcc_stage_of(f, WL), sl, rx[1]));

    /* cooperative fetching */
    TRY(cooperative_fetch(tcc_stage_of(f, AA), AA, k));
    TRY(cooperative_fetch(tcc_stage_of(f, WW), WW, k));

    /* tune unroll */
    TRY(tcc_pragma(so, kernel_scope, "auto_unroll_max_step", k->auto_unroll_max_step));
    return tcc_pragma(so, kernel_scope, "unroll_explicit", k->unroll_explicit);
}

tcc_status tci_template_conv2d_no_batching(tcc_context *ctx, tcc_config *cfg,
                                           const tcc_workload *workload, tcc_arch arch,
                                           const tcc_build_options *options, tcc_kernel **kernel)
{
    if (kernel)
        *kernel = NULL;
    if (!ctx)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!cfg)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "conv2d_no_batching: no config");
    Shape s;
    Knobs k;
    tcc_status status = check_workload(ctx, workload, &s);
    if (status == TCC_OK)
        status = define_knobs(cfg, &s, &k);
    if (status != TCC_OK || tcc_config_is_defining(cfg))
        return status;
    if (!kernel)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "conv2d_no_batching: no kernel to set");
    tcc_build_options o;
    tcc_build_options_init(&o);
    if (options) {
        if ((status = TCI_CHECK_SIZE(ctx, "build options", tcc_build_options, options)) != TCC_OK)
            return status;
        o = *options;
    }
    o.arch = arch;

    tcc_func *f = NULL;
    if ((status = tcc_func_create(ctx, "conv2d_no_batching", &f)) != TCC_OK)
        return status;
    Definition d = {0};
    Tensors t = {0};
    status = define(f, &s, &d, &t);
    if (status == TCC_OK)
        status = schedule(f, &t, &k);
    if (status == TCC_OK) {
        tcc_tensor *params[3] = {t.data, t.kernel, t.conv};
        status = tcc_build(f, 3, params, &o, kernel);
    }
    tcc_func_destroy(f);
    return status;
}
