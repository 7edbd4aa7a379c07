/*
 * The CPU reference convolution. It reads the same raw elements the GPU reads, in the
 * descriptor's layouts (ops/conv2d.c gives each layout's element offsets, which the code
 * generator must match exactly), and computes in double, so a GPU result can be compared
 * with it output by output. Large problems are checked at sampled output positions, split
 * over threads.
 */
#include "reference/reference.h"

#include <stdint.h>

/* The offset of a logical index (i, y, x, j) in one of the layouts above: each of i and j
 * contributes i/16*block + i%16*lane, y and x one step each. A layout that does not block a
 * dimension has block = 16*lane, so one formula serves every layout. The input's index is
 * (n, h, w, c), the output's (n, p, q, k), the filter's (k, r, s, c). */
typedef struct Strides {
    int64_t i_block, i_lane, y, x, j_block, j_lane;
} Strides;

static int64_t part(int64_t index, int64_t block, int64_t lane)
{
    return index / TCI_LAYOUT_BLOCK * block + index % TCI_LAYOUT_BLOCK * lane;
}

/* Strides of an unblocked layout from the steps of its four logical dimensions. */
static Strides plain_strides(int64_t i, int64_t y, int64_t x, int64_t j)
{
    return (Strides){TCI_LAYOUT_BLOCK * i, i, y, x, TCI_LAYOUT_BLOCK * j, j};
}

/* The input (extent_i, Y, X, J) = (N, H, W, C) or the output (N, P, Q, K). */
static Strides activation_strides(tcc_layout layout, int64_t Y, int64_t X, int64_t J)
{
    switch (layout) {
    case TCC_LAYOUT_NCHW:
        return plain_strides(J * Y * X, X, 1, Y * X);
    case TCC_LAYOUT_NHWCNC: {
        int64_t x = J / TCI_LAYOUT_BLOCK * TCI_LAYOUT_BLOCK * TCI_LAYOUT_BLOCK, y = X * x;
        return (Strides){Y * y, TCI_LAYOUT_BLOCK, y, x, TCI_LAYOUT_BLOCK * TCI_LAYOUT_BLOCK, 1};
    }
    default: /* NHWC */
        return plain_strides(Y * X * J, X * J, J, 1);
    }
}

/* The filter (K, R, S, Cg). */
static Strides filter_strides(tcc_filter_layout layout, int64_t K, int64_t R, int64_t S, int64_t Cg)
{
    switch (layout) {
    case TCC_FILTER_KCRS:
        return plain_strides(Cg * R * S, S, 1, R * S);
    case TCC_FILTER_BLOCKED: {
        int64_t lane_block = TCI_LAYOUT_BLOCK * TCI_LAYOUT_BLOCK,
                s = Cg / TCI_LAYOUT_BLOCK * (K / TCI_LAYOUT_BLOCK) * lane_block;
        return (Strides){lane_block,      1, S * s, s, K / TCI_LAYOUT_BLOCK * lane_block,
                         TCI_LAYOUT_BLOCK};
    }
    default: /* KRSC */
        return plain_strides(R * S * Cg, S * Cg, Cg, 1);
    }
}

/* A validated descriptor, as the index arithmetic uses it. */
typedef struct Conv {
    const tcc_conv2d_desc *desc;
    const tcc_reference_tensors *tensors;
    ReferenceOperands operands;                /* the input and the filter */
    int64_t out_h, out_w, group_in, group_out; /* P, Q, C/groups, K/groups */
    Strides input, filter;
} Conv;

/* The logical index of an output from its flat offset: the output formulas, inverted. */
static void output_index(const Conv *cv, int64_t flat, int64_t *n, int64_t *p, int64_t *q,
                         int64_t *k)
{
    int64_t K = cv->desc->out_channels, P = cv->out_h, Q = cv->out_w;
    switch (cv->desc->layout) {
    case TCC_LAYOUT_NCHW:
        *q = flat % Q;
        *p = flat / Q % P;
        *k = flat / (Q * P) % K;
        *n = flat / (Q * P * K);
        return;
    case TCC_LAYOUT_NHWCNC: {
        int64_t k_lane = flat % TCI_LAYOUT_BLOCK,
                n_lane = flat / TCI_LAYOUT_BLOCK % TCI_LAYOUT_BLOCK;
        int64_t rest = flat / (TCI_LAYOUT_BLOCK * TCI_LAYOUT_BLOCK), kblocks = K / TCI_LAYOUT_BLOCK;
        *k = rest % kblocks * TCI_LAYOUT_BLOCK + k_lane;
        *q = rest / kblocks % Q;
        *p = rest / (kblocks * Q) % P;
        *n = rest / (kblocks * Q * P) * TCI_LAYOUT_BLOCK + n_lane;
        return;
    }
    default: /* NHWC */
        *k = flat % K;
        *q = flat / K % Q;
        *p = flat / (K * Q) % P;
        *n = flat / (K * Q * P);
        return;
    }
}

/* sum + the sum over the group's channels c of input[n, h, w, c0 + c] * filter[k, r, s, c].
 * Within a block of 16 channels both offsets are linear in c (the unblocked layouts are
 * linear throughout, and the blocked ones have c0 == 0), so each block is one dot product. */
static double channel_sum(const Conv *cv, int64_t input_base, int64_t c0, int64_t filter_base,
                          double sum)
{
    const Strides *in = &cv->input, *fl = &cv->filter;
    for (int64_t c = 0; c < cv->group_in; c += TCI_LAYOUT_BLOCK) {
        int64_t lanes = cv->group_in - c < TCI_LAYOUT_BLOCK ? cv->group_in - c : TCI_LAYOUT_BLOCK;
        sum = tci_reference_dot(&cv->operands, input_base + part(c0 + c, in->j_block, in->j_lane),
                                in->j_lane, filter_base + part(c, fl->j_block, fl->j_lane),
                                fl->j_lane, lanes, sum);
    }
    return sum;
}

static double conv_output(const void *problem, int64_t flat)
{
    const Conv *cv = problem;
    const tcc_conv2d_desc *d = cv->desc;
    int64_t n, p, q, k;
    output_index(cv, flat, &n, &p, &q, &k);
    int64_t c0 = k / cv->group_out * cv->group_in; /* the group's first input channel */
    int64_t input_n = part(n, cv->input.i_block, cv->input.i_lane);
    int64_t filter_k = part(k, cv->filter.i_block, cv->filter.i_lane);

    double sum = 0.0;
    for (int64_t r = 0; r < d->kernel_h; r++) {
        int64_t h = p * d->stride_h - d->pad_top + r * d->dilation_h;
        if (h < 0 || h >= d->height)
            continue; /* zero padding */
        for (int64_t s = 0; s < d->kernel_w; s++) {
            int64_t w = q * d->stride_w - d->pad_left + s * d->dilation_w;
            if (w < 0 || w >= d->width)
                continue;
            sum = channel_sum(cv, input_n + h * cv->input.y + w * cv->input.x, c0,
                              filter_k + r * cv->filter.y + s * cv->filter.x, sum);
        }
    }
    return tci_reference_epilogue(&d->epilogue, d->output_type, cv->tensors, flat, k, sum);
}

tcc_status tcc_conv2d_reference(tcc_context *ctx, const tcc_conv2d_desc *desc,
                                const tcc_reference_tensors *tensors, const int64_t *positions,
                                int64_t count, int threads, double *out)
{
    tcc_status status = tcc_conv2d_validate(ctx, desc);
    if (status == TCC_OK)
        status =
            tci_validate_reference_args(ctx, "input and filter", &desc->epilogue, tensors,
                                        positions, count, tcc_conv2d_output_elements(desc), out);
    if (status != TCC_OK)
        return status;
    Conv cv = {
        .desc = desc,
        .tensors = tensors,
        .out_h = tcc_conv2d_out_height(desc),
        .out_w = tcc_conv2d_out_width(desc),
        .group_in = desc->in_channels / desc->groups,
        .group_out = desc->out_channels / desc->groups,
        .input = activation_strides(desc->layout, desc->height, desc->width, desc->in_channels),
        .filter = filter_strides(desc->filter_layout, desc->out_channels, desc->kernel_h,
                                 desc->kernel_w, desc->in_channels / desc->groups),
    };
    status = tci_reference_operands_init(ctx, &cv.operands, desc->input_type, tensors->input,
                                         tensors->filter);
    if (status != TCC_OK)
        return status;
    tci_reference_run(conv_output, &cv, positions, count, threads, out);
    tci_reference_operands_free(&cv.operands);
    return TCC_OK;
}
