/*
 * The conv2d descriptor (validation, shapes, FLOPs) and the CPU reference convolution.
 *
 * The reference works directly on the blocked NHWCnc layout from the same fp16 bits the GPU
 * reads, accumulating in double, so a GPU result can be compared with it output by output.
 * Large problems are checked at sampled output positions, split over threads.
 */
#include "context.h"
#include "conv2d.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#define BLOCK 16 /* the n and c (k) blocks of the NHWCnc layout */
#define MAX_THREADS 256

/* ---- the descriptor ---------------------------------------------------------------------- */

void tcc_conv2d_seed_desc(tcc_conv2d_desc *desc)
{
    *desc = (tcc_conv2d_desc){
        .batch = 256,
        .height = 14,
        .width = 14,
        .in_channels = 256,
        .out_channels = 512,
        .kernel_h = 3,
        .kernel_w = 3,
        .stride_h = 1,
        .stride_w = 1,
        .pad_h = 1,
        .pad_w = 1,
        .layout = TCC_LAYOUT_NHWCNC,
        .input_type = TCC_FLOAT16,
        .output_type = TCC_FLOAT32,
    };
}

/* (size + 2*pad - kernel) / stride + 1, or 0 where no window fits (or the sizes are bad). */
static int64_t out_extent(int64_t size, int64_t kernel, int64_t stride, int64_t pad)
{
    if (size < 1 || kernel < 1 || stride < 1 || pad < 0 || size > INT32_MAX || pad > INT32_MAX)
        return 0;
    int64_t span = size + 2 * pad - kernel;
    return span < 0 ? 0 : span / stride + 1;
}

int64_t tcc_conv2d_out_height(const tcc_conv2d_desc *desc)
{
    return desc ? out_extent(desc->height, desc->kernel_h, desc->stride_h, desc->pad_h) : 0;
}

int64_t tcc_conv2d_out_width(const tcc_conv2d_desc *desc)
{
    return desc ? out_extent(desc->width, desc->kernel_w, desc->stride_w, desc->pad_w) : 0;
}

double tcc_conv2d_flops(const tcc_conv2d_desc *desc)
{
    if (!desc)
        return 0.0;
    return 2.0 * (double)desc->batch * (double)desc->out_channels *
           (double)tcc_conv2d_out_height(desc) * (double)tcc_conv2d_out_width(desc) *
           (double)desc->in_channels * (double)desc->kernel_h * (double)desc->kernel_w;
}

int64_t tcc_conv2d_input_elements(const tcc_conv2d_desc *desc)
{
    return desc ? desc->batch * desc->height * desc->width * desc->in_channels : 0;
}

int64_t tcc_conv2d_filter_elements(const tcc_conv2d_desc *desc)
{
    return desc ? desc->kernel_h * desc->kernel_w * desc->in_channels * desc->out_channels : 0;
}

int64_t tcc_conv2d_output_elements(const tcc_conv2d_desc *desc)
{
    return desc ? desc->batch * tcc_conv2d_out_height(desc) * tcc_conv2d_out_width(desc) *
                      desc->out_channels
                : 0;
}

/* ---- validation -------------------------------------------------------------------------- */

typedef struct SizeField {
    const char *name;
    int64_t value;
    int64_t min;  /* 1 for sizes, 0 for pads */
    bool blocked; /* must be a multiple of BLOCK in the NHWCnc layout */
} SizeField;

/* Sizes are limited to int32 so that no derived size or window bound can overflow. */
static tcc_status check_field(tcc_context *ctx, const SizeField *field)
{
    if (field->value < field->min || field->value > INT32_MAX)
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s must be in %lld..%d (got %lld)",
                        field->name, (long long)field->min, INT32_MAX, (long long)field->value);
    if (field->blocked && field->value % BLOCK != 0)
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "%s must be a multiple of %d for the NHWCnc layout (got %lld)", field->name,
                        BLOCK, (long long)field->value);
    return TCC_OK;
}

static tcc_status check_sizes(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    const SizeField fields[] = {
        {"batch", desc->batch, 1, true},
        {"height", desc->height, 1, false},
        {"width", desc->width, 1, false},
        {"in_channels", desc->in_channels, 1, true},
        {"out_channels", desc->out_channels, 1, true},
        {"kernel_h", desc->kernel_h, 1, false},
        {"kernel_w", desc->kernel_w, 1, false},
        {"stride_h", desc->stride_h, 1, false},
        {"stride_w", desc->stride_w, 1, false},
        {"pad_h", desc->pad_h, 0, false},
        {"pad_w", desc->pad_w, 0, false},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        tcc_status status = check_field(ctx, &fields[i]);
        if (status != TCC_OK)
            return status;
    }
    return TCC_OK;
}

/* The window must fit in the padded input at least once along each axis. */
static tcc_status check_output(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    if (tcc_conv2d_out_height(desc) < 1)
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "kernel_h (%lld) exceeds height + 2*pad_h (%lld): the output is empty",
                        (long long)desc->kernel_h, (long long)(desc->height + 2 * desc->pad_h));
    if (tcc_conv2d_out_width(desc) < 1)
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "kernel_w (%lld) exceeds width + 2*pad_w (%lld): the output is empty",
                        (long long)desc->kernel_w, (long long)(desc->width + 2 * desc->pad_w));
    return TCC_OK;
}

/* a*b*c*d, false on int64 overflow (all factors are positive). */
static bool product4(int64_t a, int64_t b, int64_t c, int64_t d, int64_t *out)
{
    int64_t ab, abc;
    return !__builtin_mul_overflow(a, b, &ab) && !__builtin_mul_overflow(ab, c, &abc) &&
           !__builtin_mul_overflow(abc, d, out);
}

static tcc_status check_element_counts(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    int64_t p = tcc_conv2d_out_height(desc), q = tcc_conv2d_out_width(desc), count;
    if (!product4(desc->batch, desc->height, desc->width, desc->in_channels, &count))
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "the input (batch*height*width*in_channels) has too many elements");
    if (!product4(desc->kernel_h, desc->kernel_w, desc->in_channels, desc->out_channels, &count))
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "the filter (kernel_h*kernel_w*in_channels*out_channels) has too many "
                        "elements");
    if (!product4(desc->batch, p, q, desc->out_channels, &count))
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "the output (batch*P*Q*out_channels) has too many elements");
    return TCC_OK;
}

static tcc_status check_types(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    if (desc->input_type != TCC_FLOAT16)
        return tcc_fail(ctx, TCC_ERROR_UNSUPPORTED, "input_type must be float16 (got %s)",
                        tcc_dtype_name(desc->input_type));
    if (desc->output_type != TCC_FLOAT32)
        return tcc_fail(ctx, TCC_ERROR_UNSUPPORTED, "output_type must be float32 (got %s)",
                        tcc_dtype_name(desc->output_type));
    return TCC_OK;
}

tcc_status tcc_conv2d_validate(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    if (!desc)
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "the conv2d descriptor is NULL");
    if (desc->layout != TCC_LAYOUT_NHWCNC)
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "layout %d is not a known layout",
                        (int)desc->layout);
    tcc_status status = check_sizes(ctx, desc);
    if (status == TCC_OK)
        status = check_output(ctx, desc);
    if (status == TCC_OK)
        status = check_element_counts(ctx, desc);
    if (status == TCC_OK)
        status = check_types(ctx, desc);
    return status;
}

/* ---- the reference ----------------------------------------------------------------------- */

/* The sizes of a validated descriptor, as the index arithmetic uses them. */
typedef struct Shape {
    int64_t height, width, cblocks, kblocks; /* cblocks = C/16, kblocks = K/16 */
    int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
    int64_t out_h, out_w;
} Shape;

/* One thread's share: outputs begin..end-1 of the position list (or of all outputs). */
typedef struct Job {
    const Shape *shape;
    const float *f16_table; /* the float value of every fp16 bit pattern */
    const uint16_t *input, *filter;
    const int64_t *positions; /* NULL: position i is output i */
    double *out;
    int64_t begin, end;
} Job;

static Shape shape_of(const tcc_conv2d_desc *desc)
{
    return (Shape){
        .height = desc->height,
        .width = desc->width,
        .cblocks = desc->in_channels / BLOCK,
        .kblocks = desc->out_channels / BLOCK,
        .kernel_h = desc->kernel_h,
        .kernel_w = desc->kernel_w,
        .stride_h = desc->stride_h,
        .stride_w = desc->stride_w,
        .pad_h = desc->pad_h,
        .pad_w = desc->pad_w,
        .out_h = tcc_conv2d_out_height(desc),
        .out_w = tcc_conv2d_out_width(desc),
    };
}

/* The sum over c of input[n, h, w, c] * filter[r, s, c, k] for one in-range (h, w). */
static double channel_sum(const Job *job, int64_t nb, int64_t ni, int64_t h, int64_t w, int64_t r,
                          int64_t s, int64_t kb, int64_t ki)
{
    const Shape *sh = job->shape;
    const float *f16 = job->f16_table;
    /* input  ((((nb*H + h)*W + w)*CB + cb)*16 + ni)*16 + ci
     * filter ((((r*S + s)*CB + cb)*KB + kb)*16 + ci)*16 + ki */
    const uint16_t *in = job->input +
                         ((nb * sh->height + h) * sh->width + w) * sh->cblocks * BLOCK * BLOCK +
                         ni * BLOCK;
    const uint16_t *fl = job->filter +
                         ((r * sh->kernel_w + s) * sh->cblocks * sh->kblocks + kb) * BLOCK * BLOCK +
                         ki;
    double sum = 0.0;
    for (int64_t cb = 0; cb < sh->cblocks; cb++) {
        const uint16_t *in_block = in + cb * BLOCK * BLOCK;
        const uint16_t *fl_block = fl + cb * sh->kblocks * BLOCK * BLOCK;
        for (int ci = 0; ci < BLOCK; ci++)
            sum += (double)f16[in_block[ci]] * (double)f16[fl_block[ci * BLOCK]];
    }
    return sum;
}

/* One output, given its flat offset in the (N/16, P, Q, K/16, 16n, 16k) layout. */
static double output_at(const Job *job, int64_t flat)
{
    const Shape *sh = job->shape;
    int64_t ki = flat % BLOCK, rest = flat / BLOCK;
    int64_t ni = rest % BLOCK;
    rest /= BLOCK;
    int64_t kb = rest % sh->kblocks;
    rest /= sh->kblocks;
    int64_t q = rest % sh->out_w;
    rest /= sh->out_w;
    int64_t p = rest % sh->out_h, nb = rest / sh->out_h;

    double sum = 0.0;
    for (int64_t r = 0; r < sh->kernel_h; r++) {
        int64_t h = p * sh->stride_h - sh->pad_h + r;
        if (h < 0 || h >= sh->height)
            continue; /* zero padding */
        for (int64_t s = 0; s < sh->kernel_w; s++) {
            int64_t w = q * sh->stride_w - sh->pad_w + s;
            if (w >= 0 && w < sh->width)
                sum += channel_sum(job, nb, ni, h, w, r, s, kb, ki);
        }
    }
    return sum;
}

static void *run_job(void *arg)
{
    const Job *job = arg;
    for (int64_t i = job->begin; i < job->end; i++)
        job->out[i] = output_at(job, job->positions ? job->positions[i] : i);
    return NULL;
}

/* Runs the jobs, job 0 on the calling thread; a job whose thread cannot start runs here too,
 * so the result never depends on how many threads the system grants. */
static void run_jobs(Job *jobs, int njob)
{
    pthread_t threads[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    for (int i = 1; i < njob; i++)
        started[i] = pthread_create(&threads[i], NULL, run_job, &jobs[i]) == 0;
    run_job(&jobs[0]);
    for (int i = 1; i < njob; i++) {
        if (started[i])
            pthread_join(threads[i], NULL);
        else
            run_job(&jobs[i]);
    }
}

static tcc_status check_positions(tcc_context *ctx, const int64_t *positions, int64_t count,
                                  int64_t total)
{
    if (count < 0)
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "count must be >= 0 (got %lld)",
                        (long long)count);
    if (!positions && count != total)
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "count must be the number of outputs (%lld) when positions is NULL "
                        "(got %lld)",
                        (long long)total, (long long)count);
    for (int64_t i = 0; positions && i < count; i++) {
        if (positions[i] < 0 || positions[i] >= total)
            return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "positions[%lld] = %lld is outside the output (%lld elements)",
                            (long long)i, (long long)positions[i], (long long)total);
    }
    return TCC_OK;
}

static float *make_f16_table(void)
{
    float *table = malloc(65536 * sizeof *table);
    for (uint32_t bits = 0; table && bits < 65536; bits++)
        table[bits] = tcc_f16_to_f32((uint16_t)bits);
    return table;
}

tcc_status tcc_conv2d_reference(tcc_context *ctx, const tcc_conv2d_desc *desc,
                                const uint16_t *input, const uint16_t *filter,
                                const int64_t *positions, int64_t count, int threads, double *out)
{
    tcc_status status = tcc_conv2d_validate(ctx, desc);
    if (status != TCC_OK)
        return status;
    status = check_positions(ctx, positions, count, tcc_conv2d_output_elements(desc));
    if (status != TCC_OK || count == 0)
        return status;
    if (!input || !filter || !out)
        return tcc_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_conv2d_reference: input, filter or out is NULL");
    float *table = make_f16_table();
    if (!table)
        return tcc_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory in the conv2d reference");

    Shape shape = shape_of(desc);
    int njob = threads <= 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
    if (njob > count)
        njob = (int)count;
    /* Contiguous shares that differ by at most one output. */
    int64_t share = count / njob, extra = count % njob;
    Job jobs[MAX_THREADS];
    for (int i = 0; i < njob; i++) {
        int64_t begin = i * share + (i < extra ? i : extra);
        jobs[i] = (Job){&shape,    table, input, filter,
                        positions, out,   begin, begin + share + (i < extra ? 1 : 0)};
    }
    run_jobs(jobs, njob);
    free(table);
    return TCC_OK;
}
