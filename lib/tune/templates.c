/*
 * The built-in templates, listed once, and the workload keys they are recorded under.
 *
 * A key is AutoTVM's: a JSON array of the task's name and its arguments. The seed's template
 * keeps AutoTVM's own name and arguments (N, H, W, CO, CI, KH, KW, strides, padding), so that
 * the tutorial's logs import; tcc's templates spell out every field of the descriptor that
 * changes the kernel, so that no two workloads share a key.
 */
#include "tune/templates.h"
#include "tune/config.h"

#include "ops/ops.h"
#include "support/context.h"

#include <stdio.h>
#include <string.h>

static const tcc_template templates[] = {
    {.size = sizeof(tcc_template),
     .name = "conv2d_no_batching",
     .summary = "the seed's AutoTVM template: CUDA-core float32 NCHW convolution, batch 1 (8 "
                "knobs)",
     .kind = TCC_WORKLOAD_CONV2D,
     .instantiate = tci_template_conv2d_no_batching},
    {.size = sizeof(tcc_template),
     .name = "gemm",
     .summary = "tcc's implicit GEMM: every field of tcc_gemm_schedule (conv2d or matmul)",
     .kind = TCC_WORKLOAD_CONV2D,
     .instantiate = tci_template_gemm,
     .any_kind = true,
     .redundant_knobs = tci_template_gemm_redundant_knobs},
    {.size = sizeof(tcc_template),
     .name = "tutorial",
     .summary = "the tensor-core tutorial's schedule: warps, warp tiles and chunk (NHWCnc)",
     .kind = TCC_WORKLOAD_CONV2D,
     .instantiate = tci_template_tutorial},
};

enum { TEMPLATE_COUNT = sizeof templates / sizeof templates[0] };

int tcc_template_count(void)
{
    return TEMPLATE_COUNT;
}

const tcc_template *tcc_template_at(int index)
{
    return index >= 0 && index < TEMPLATE_COUNT ? &templates[index] : NULL;
}

const tcc_template *tcc_template_find(const char *name)
{
    for (int i = 0; name && i < TEMPLATE_COUNT; i++)
        if (strcmp(templates[i].name, name) == 0)
            return &templates[i];
    return NULL;
}

static int epilogue_key(const tcc_epilogue *e, char *buf, size_t size)
{
    return snprintf(buf, size,
                    "{\"alpha\": %.17g, \"beta\": %.17g, \"bias\": %d, \"residual\": %d, "
                    "\"relu\": %d, \"clamp\": [%d, %.17g, %.17g], \"prologue\": [%d, %.17g]}",
                    e->alpha, e->beta, e->bias, e->residual, e->relu, e->clamp, e->clamp_min,
                    e->clamp_max, (int)e->prologue, e->prologue_arg);
}

static int conv2d_key(const char *name, const tcc_conv2d_desc *d, char *buf, size_t size)
{
    char epilogue[512]; /* 5 doubles of %.17g, 6 ints and the names: about 270 at most */
    epilogue_key(&d->epilogue, epilogue, sizeof epilogue);
    return snprintf(buf, size,
                    "[\"tcc/%s/conv2d\", %lld, %lld, %lld, %lld, %lld, %lld, %lld, [%lld, %lld], "
                    "[%lld, %lld, %lld, %lld], [%lld, %lld], %lld, \"%s\", \"%s\", \"%s\", "
                    "\"%s\", \"%s\", %s]",
                    name, (long long)d->batch, (long long)d->height, (long long)d->width,
                    (long long)d->in_channels, (long long)d->out_channels, (long long)d->kernel_h,
                    (long long)d->kernel_w, (long long)d->stride_h, (long long)d->stride_w,
                    (long long)d->pad_top, (long long)d->pad_bottom, (long long)d->pad_left,
                    (long long)d->pad_right, (long long)d->dilation_h, (long long)d->dilation_w,
                    (long long)d->groups, tci_conv2d_layout_name(d->layout),
                    tci_conv2d_filter_layout_name(d->filter_layout), tcc_dtype_name(d->input_type),
                    tcc_dtype_name(d->accumulate_type), tcc_dtype_name(d->output_type), epilogue);
}

static int matmul_key(const char *name, const tcc_matmul_desc *d, char *buf, size_t size)
{
    char epilogue[512]; /* 5 doubles of %.17g, 6 ints and the names: about 270 at most */
    epilogue_key(&d->epilogue, epilogue, sizeof epilogue);
    return snprintf(buf, size,
                    "[\"tcc/%s/matmul\", %lld, %lld, %lld, %lld, %d, %d, \"%s\", \"%s\", "
                    "\"%s\", %s]",
                    name, (long long)d->batch, (long long)d->m, (long long)d->n, (long long)d->k,
                    d->a_col_major, d->b_col_major, tcc_dtype_name(d->input_type),
                    tcc_dtype_name(d->accumulate_type), tcc_dtype_name(d->output_type), epilogue);
}

int tcc_workload_key(const tcc_template *tmpl, const tcc_workload *w, char *buf, size_t size)
{
    if (!tmpl || !w)
        return snprintf(buf, size, "[]");
    /* No key from fields read at the wrong offsets: "[]" would be one all such callers share. */
    if (!tci_template_size_known(tmpl) || !TCI_KNOWN_SIZE(tcc_workload, w)) {
        if (size > 0)
            buf[0] = '\0';
        return -1;
    }
    if (w->kind == TCC_WORKLOAD_MATMUL)
        return matmul_key(tmpl->name, &w->matmul, buf, size);
    const tcc_conv2d_desc *d = &w->conv2d;
    if (tmpl->instantiate == tci_template_conv2d_no_batching)
        return snprintf(buf, size,
                        "[\"tutorial/conv2d_no_batching\", %lld, %lld, %lld, %lld, %lld, %lld, "
                        "%lld, [%lld, %lld], [%lld, %lld]]",
                        (long long)d->batch, (long long)d->height, (long long)d->width,
                        (long long)d->out_channels, (long long)d->in_channels,
                        (long long)d->kernel_h, (long long)d->kernel_w, (long long)d->stride_h,
                        (long long)d->stride_w, (long long)d->pad_top, (long long)d->pad_left);
    return conv2d_key(tmpl->name, d, buf, size);
}
