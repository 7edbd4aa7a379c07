/*
 * conv2d: the compute definition of the TVM tensor-core tutorial, and its schedule.
 *
 * Layout NHWCnc: the input is (N/16, H, W, C/16, 16n, 16c), the filter
 * (R, S, C/16, K/16, 16c, 16k), the output (N/16, P, Q, K/16, 16n, 16k), so that each
 * innermost 16x16 block is one tensor-core tile.
 */
#include "tcc/ops.h"
#include "te/te.h"

void tcc_tutorial_conv2d_desc(tcc_conv2d_desc *desc)
{
    tcc_conv2d_desc_init(desc);
    desc->batch = 256;
    desc->height = desc->width = 14;
    desc->in_channels = 256;
    desc->out_channels = 512;
    desc->kernel_h = desc->kernel_w = 3;
    desc->pad_top = desc->pad_bottom = desc->pad_left = desc->pad_right = 1;
    desc->layout = TCC_LAYOUT_NHWCNC;
    desc->filter_layout = TCC_FILTER_BLOCKED;
}

typedef struct ConvBodies {
    const tcc_conv2d_desc *desc;
    tcc_tensor *input, *filter, *padded;
    tcc_iter_var *ic, *kh, *kw, *ii;
} ConvBodies;

/* Apad[n, h, w, i, nn, ii] = if_then_else(inside, A[n, h - pad, w - pad, i, nn, ii], 0) */
static tcc_expr *padded_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    const ConvBodies *c = user;
    const tcc_conv2d_desc *d = c->desc;
    tcc_expr *h = tcc_sub(f, ax[1], tcc_int(f, d->pad_top));
    tcc_expr *w = tcc_sub(f, ax[2], tcc_int(f, d->pad_left));
    tcc_expr *inside = tcc_and(
        f,
        tcc_and(f, tcc_le(f, tcc_int(f, d->pad_top), ax[1]), tcc_lt(f, h, tcc_int(f, d->height))),
        tcc_and(f, tcc_le(f, tcc_int(f, d->pad_left), ax[2]), tcc_lt(f, w, tcc_int(f, d->width))));
    tcc_expr *index[6] = {ax[0], h, w, ax[3], ax[4], ax[5]};
    return tcc_select(f, inside, tcc_access(f, c->input, 6, index), tcc_float(f, 0, d->input_type));
}

/* Conv[n, p, q, o, nn, oo] = sum(Apad[n, p*s + kh, q*s + kw, ic, nn, ii] * W[kh, kw, ic, o, ii,
 * oo]) */
static tcc_expr *conv_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    const ConvBodies *c = user;
    const tcc_conv2d_desc *d = c->desc;
    tcc_expr *kh = tcc_axis(f, c->kh), *kw = tcc_axis(f, c->kw);
    tcc_expr *ic = tcc_axis(f, c->ic), *ii = tcc_axis(f, c->ii);
    tcc_expr *h = tcc_add(f, tcc_mul(f, ax[1], tcc_int(f, d->stride_h)), kh);
    tcc_expr *w = tcc_add(f, tcc_mul(f, ax[2], tcc_int(f, d->stride_w)), kw);
    tcc_expr *a_index[6] = {ax[0], h, w, ic, ax[4], ii};
    tcc_expr *w_index[6] = {kh, kw, ic, ax[3], ii, ax[5]};
    tcc_expr *a = tcc_cast(f, d->output_type, tcc_access(f, c->padded, 6, a_index));
    tcc_expr *b = tcc_cast(f, d->output_type, tcc_access(f, c->filter, 6, w_index));
    tcc_iter_var *axes[4] = {c->ic, c->kh, c->kw, c->ii};
    return tcc_sum(f, tcc_mul(f, a, b), 4, axes);
}

/* The tutorial's definition is its one convolution's: everything else goes through the
 * implicit GEMM (tcc_conv2d_compile). */
static tcc_status check_tutorial_form(tcc_context *ctx, const tcc_conv2d_desc *d)
{
    const tcc_epilogue *e = &d->epilogue;
    bool plain_epilogue = e->alpha == 1 && e->beta == 0 && !e->bias && !e->relu && !e->clamp &&
                          e->prologue == TCC_PROLOGUE_NONE;
    if (d->layout != TCC_LAYOUT_NHWCNC || d->filter_layout != TCC_FILTER_BLOCKED ||
        d->groups != 1 || d->dilation_h != 1 || d->dilation_w != 1 ||
        d->input_type != TCC_FLOAT16 || d->accumulate_type != TCC_FLOAT32 ||
        d->output_type != TCC_FLOAT32 || !plain_epilogue)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "the tutorial's definition takes NHWCnc with the blocked filter, float16 "
                        "-> float32, no groups, dilation or epilogue (use the default schedule)");
    return TCC_OK;
}

tcc_status tcc_tutorial_conv2d_define(tcc_func *func, const tcc_conv2d_desc *desc,
                                      tcc_tutorial_conv2d *out)
{
    if (!func)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!desc || !out)
        return tci_fail(func->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_tutorial_conv2d_define: the %s is NULL",
                        !desc ? "descriptor" : "result pointer");
    tcc_status status = tcc_conv2d_validate(func->ctx, desc);
    if (status == TCC_OK)
        status = check_tutorial_form(func->ctx, desc);
    if (status != TCC_OK)
        return status;
    const int64_t b = 16, n = desc->batch / b, c = desc->in_channels / b,
                  k = desc->out_channels / b;
    const int64_t p = tcc_conv2d_out_height(desc), q = tcc_conv2d_out_width(desc);
    const int64_t input_shape[6] = {n, desc->height, desc->width, c, b, b};
    const int64_t filter_shape[6] = {desc->kernel_h, desc->kernel_w, c, k, b, b};
    const int64_t padded_shape[6] = {n,
                                     desc->height + desc->pad_top + desc->pad_bottom,
                                     desc->width + desc->pad_left + desc->pad_right,
                                     c,
                                     b,
                                     b};
    const int64_t output_shape[6] = {n, p, q, k, b, b};
    static const char *const padded_axes[6] = {"n", "h", "w", "i", "nn", "ii"};
    static const char *const output_axes[6] = {"n", "h", "w", "o", "nn", "oo"};

    ConvBodies bodies = {.desc = desc};
    bodies.input = tcc_placeholder(func, "A", 6, input_shape, desc->input_type);
    bodies.filter = tcc_placeholder(func, "W", 6, filter_shape, desc->input_type);
    bodies.ic = tcc_reduce_axis(func, "ic", c);
    bodies.kh = tcc_reduce_axis(func, "kh", desc->kernel_h);
    bodies.kw = tcc_reduce_axis(func, "kw", desc->kernel_w);
    bodies.ii = tcc_reduce_axis(func, "ii", b);
    bodies.padded = tcc_compute(func, "Apad", 6, padded_shape, padded_axes, desc->input_type,
                                padded_body, &bodies);
    tcc_tensor *output = tcc_compute(func, "Conv", 6, output_shape, output_axes, desc->output_type,
                                     conv_body, &bodies);
    if (!output)
        return tci_func_status(func);
    *out = (tcc_tutorial_conv2d){.input = bodies.input,
                                 .filter = bodies.filter,
                                 .output = output,
                                 .padded = bodies.padded,
                                 .reduce_rc_outer = bodies.ic,
                                 .reduce_r = bodies.kh,
                                 .reduce_s = bodies.kw,
                                 .reduce_rc_inner = bodies.ii};
    return TCC_OK;
}
