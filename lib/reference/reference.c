/*
 * What both CPU references share: reading elements as the tensor cores read them, dot
 * products in double, the epilogue, checking their arguments, and splitting the outputs
 * over threads.
 */
#include "reference/reference.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256

/* ---- elements and the epilogue ------------------------------------------------------------ */

double tci_reference_operand(tcc_dtype type, const void *data, int64_t offset)
{
    /* The tensor cores read float32 elements as tf32; every other type as stored. */
    if (type == TCC_FLOAT32)
        return tcc_f32_to_tf32(((const float *)data)[offset]);
    return tci_reference_value(type, data, offset);
}

double tci_reference_value(tcc_dtype type, const void *data, int64_t offset)
{
    switch (type) {
    case TCC_FLOAT16:
        return tcc_f16_to_f32(((const uint16_t *)data)[offset]);
    case TCC_BFLOAT16:
        return tcc_bf16_to_f32(((const uint16_t *)data)[offset]);
    case TCC_FLOAT32:
        return ((const float *)data)[offset];
    case TCC_INT8:
        return ((const int8_t *)data)[offset];
    case TCC_INT32:
        return ((const int32_t *)data)[offset];
    default:
        return 0.0; /* validation admits no other element type */
    }
}

tcc_status tci_reference_operands_init(tcc_context *ctx, ReferenceOperands *operands,
                                       tcc_dtype type, const void *a, const void *b)
{
    *operands = (ReferenceOperands){.type = type, .a = a, .b = b};
    if (type != TCC_FLOAT16)
        return TCC_OK;
    /* A table lookup is several times faster than converting every element. */
    operands->f16 = malloc(65536 * sizeof *operands->f16);
    if (!operands->f16)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory in the CPU reference");
    for (uint32_t bits = 0; bits < 65536; bits++)
        operands->f16[bits] = tcc_f16_to_f32((uint16_t)bits);
    return TCC_OK;
}

void tci_reference_operands_free(ReferenceOperands *operands)
{
    free(operands->f16);
    operands->f16 = NULL;
}

static float bf16_value(uint16_t bits)
{
    uint32_t wide = (uint32_t)bits << 16;
    float value;
    memcpy(&value, &wide, sizeof value);
    return value;
}

/* One loop per type, so that the type is not dispatched on for every element. */
double tci_reference_dot(const ReferenceOperands *operands, int64_t a_offset, int64_t a_step,
                         int64_t b_offset, int64_t b_step, int64_t count, double sum)
{
    switch (operands->type) {
    case TCC_FLOAT16: {
        const uint16_t *a = (const uint16_t *)operands->a + a_offset;
        const uint16_t *b = (const uint16_t *)operands->b + b_offset;
        for (int64_t i = 0; i < count; i++)
            sum += (double)operands->f16[a[i * a_step]] * operands->f16[b[i * b_step]];
        return sum;
    }
    case TCC_BFLOAT16: {
        const uint16_t *a = (const uint16_t *)operands->a + a_offset;
        const uint16_t *b = (const uint16_t *)operands->b + b_offset;
        for (int64_t i = 0; i < count; i++)
            sum += (double)bf16_value(a[i * a_step]) * bf16_value(b[i * b_step]);
        return sum;
    }
    case TCC_INT8: {
        const int8_t *a = (const int8_t *)operands->a + a_offset;
        const int8_t *b = (const int8_t *)operands->b + b_offset;
        for (int64_t i = 0; i < count; i++)
            sum += (double)a[i * a_step] * b[i * b_step];
        return sum;
    }
    default: /* float32, rounded to tf32 */
        for (int64_t i = 0; i < count; i++)
            sum += tci_reference_operand(operands->type, operands->a, a_offset + i * a_step) *
                   tci_reference_operand(operands->type, operands->b, b_offset + i * b_step);
        return sum;
    }
}

static double prologue_value(const tcc_epilogue *e, tcc_dtype type,
                             const tcc_reference_tensors *tensors, int64_t flat)
{
    switch (e->prologue) {
    case TCC_PROLOGUE_SET:
        return e->prologue_arg;
    case TCC_PROLOGUE_SCALE:
        return e->prologue_arg * tci_reference_value(type, tensors->previous_output, flat);
    case TCC_PROLOGUE_RELU: {
        double previous = tci_reference_value(type, tensors->previous_output, flat);
        return previous > 0.0 ? previous : 0.0;
    }
    default:
        return 0.0;
    }
}

double tci_reference_epilogue(const tcc_epilogue *epilogue, tcc_dtype output_type,
                              const tcc_reference_tensors *tensors, int64_t flat, int64_t channel,
                              double products)
{
    double acc = prologue_value(epilogue, output_type, tensors, flat) + products;
    double v = epilogue->alpha * acc;
    if (epilogue->bias)
        v += tci_reference_value(output_type, tensors->bias, channel);
    /* beta == 0 reads nothing, so a NaN or infinite source cannot leak in through 0 * x. */
    if (epilogue->beta != 0.0) {
        const void *source = epilogue->residual ? tensors->residual : tensors->previous_output;
        v += epilogue->beta * tci_reference_value(output_type, source, flat);
    }
    if (epilogue->relu && v < 0.0)
        v = 0.0;
    if (epilogue->clamp)
        v = v < epilogue->clamp_min   ? epilogue->clamp_min
            : v > epilogue->clamp_max ? epilogue->clamp_max
                                      : v;
    return v;
}

tcc_status tci_validate_reference_args(tcc_context *ctx, const char *operand_names,
                                       const tcc_epilogue *epilogue,
                                       const tcc_reference_tensors *tensors,
                                       const int64_t *positions, int64_t count, int64_t total,
                                       const double *out)
{
    if (tensors) {
        tcc_status status =
            TCI_CHECK_SIZE(ctx, "reference: tensors", tcc_reference_tensors, tensors);
        if (status != TCC_OK)
            return status;
    }
    if (!tensors || !tensors->input || !tensors->filter)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "the reference needs the %s (got NULL)",
                        operand_names);
    if (epilogue->bias && !tensors->bias)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "epilogue.bias is set but tensors.bias is NULL");
    if (tci_epilogue_reads_residual(epilogue) && !tensors->residual)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "epilogue.residual is set (beta %g) but tensors.residual is NULL",
                        epilogue->beta);
    if (tci_epilogue_reads_previous(epilogue) && !tensors->previous_output)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "the epilogue reads the output's previous contents but "
                        "tensors.previous_output is NULL");
    if (count < 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "count must be >= 0 (got %lld)",
                        (long long)count);
    if (count > 0 && !out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "out is NULL");
    if (!positions && count != total)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "count must be the number of outputs (%lld) when positions is NULL "
                        "(got %lld)",
                        (long long)total, (long long)count);
    for (int64_t i = 0; positions && i < count; i++) {
        if (positions[i] < 0 || positions[i] >= total)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "positions[%lld] = %lld is outside the output (%lld elements)",
                            (long long)i, (long long)positions[i], (long long)total);
    }
    return TCC_OK;
}

/* ---- threads ----------------------------------------------------------------------------- */

/* One thread's share: outputs begin..end-1 of the position list (or of all outputs). */
typedef struct Job {
    ReferenceOutputFn output;
    const void *problem;
    const int64_t *positions; /* NULL: position i is output i */
    double *out;
    int64_t begin, end;
} Job;

static void *run_job(void *arg)
{
    const Job *job = arg;
    for (int64_t i = job->begin; i < job->end; i++)
        job->out[i] = job->output(job->problem, job->positions ? job->positions[i] : i);
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

void tci_reference_run(ReferenceOutputFn output, const void *problem, const int64_t *positions,
                       int64_t count, int threads, double *out)
{
    if (count <= 0)
        return;
    int njob = threads <= 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
    if (njob > count)
        njob = (int)count;
    /* Contiguous shares that differ by at most one output. */
    int64_t share = count / njob, extra = count % njob;
    Job jobs[MAX_THREADS];
    for (int i = 0; i < njob; i++) {
        int64_t begin = i * share + (i < extra ? i : extra);
        jobs[i] =
            (Job){output, problem, positions, out, begin, begin + share + (i < extra ? 1 : 0)};
    }
    run_jobs(jobs, njob);
}
