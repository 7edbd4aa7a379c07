/*
 * The runner's check, with everything that depends only on the workload kept from trial to
 * trial: random inputs (uploaded once), the sampled output positions and the CPU reference
 * there. tcc_matmul_check makes all of them again for each kernel, which for a 2048^3 product
 * took 200 ms a trial on an H200 host, most of the trial; here a trial only poisons the output
 * (or restores the previous one the epilogue reads), launches, downloads and compares the
 * samples. The same buffers serve the timing. Errors are measured as tcc_check does: max
 * |got - ref| over max |ref| before ReLU and clamp, poison counted as unwritten.
 */
#include "tune_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FLOAT_POISON_BYTE 0xFF /* NaN in every float type */
#define INT32_POISON_BYTE 0x80
#define INT32_POISON ((int32_t)0x80808080u)

struct TuneCheck {
    tcc_context *ctx;
    tcc_workload workload;
    int nparam, output;
    int64_t elements[TUNE_CHECK_MAX_PARAMS];
    tcc_dtype types[TUNE_CHECK_MAX_PARAMS];
    void *host[TUNE_CHECK_MAX_PARAMS]; /* inputs; the output's previous contents if read */
    bool output_read;
    tcc_device_buffer *buffers[TUNE_CHECK_MAX_PARAMS];
    int64_t count, *positions;
    double *reference, *scale; /* scale: before ReLU and clamp */
    void *got;
};

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* check.c's ranges: floats in [-1, 1]; int8 in [-16, 16]; int32 in [-64, 64]. */
static void fill_random(void *data, tcc_dtype type, int64_t count, uint64_t *state)
{
    for (int64_t i = 0; i < count; i++) {
        uint64_t bits = next_random(state);
        float unit = (float)(2.0 * (double)(bits >> 11) * 0x1.0p-53 - 1.0);
        if (type == TCC_FLOAT16)
            ((uint16_t *)data)[i] = tcc_f32_to_f16(unit);
        else if (type == TCC_BFLOAT16)
            ((uint16_t *)data)[i] = tcc_f32_to_bf16(unit);
        else if (type == TCC_FLOAT32)
            ((float *)data)[i] = unit;
        else if (type == TCC_INT8)
            ((int8_t *)data)[i] = (int8_t)((int)(bits % 33) - 16);
        else if (type == TCC_INT32)
            ((int32_t *)data)[i] = (int32_t)(bits % 129) - 64;
    }
}

static double value_at(tcc_dtype type, const void *data, int64_t i)
{
    switch (type) {
    case TCC_FLOAT16:
        return tcc_f16_to_f32(((const uint16_t *)data)[i]);
    case TCC_BFLOAT16:
        return tcc_bf16_to_f32(((const uint16_t *)data)[i]);
    case TCC_FLOAT32:
        return ((const float *)data)[i];
    case TCC_INT32:
        return ((const int32_t *)data)[i] == INT32_POISON ? NAN : ((const int32_t *)data)[i];
    default:
        return ((const int8_t *)data)[i];
    }
}

void tune_check_destroy(TuneCheck *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nparam; i++) {
        free(c->host[i]);
        tcc_device_buffer_free(c->buffers[i]);
    }
    free(c->positions);
    free(c->reference);
    free(c->scale);
    free(c->got);
    free(c);
}

/* The reference tensors of the parameters: the operands in the order every kernel takes them
 * (conv2d: input, filter; matmul: A, B; whatever a template names them: the seed's "data" and
 * "kernel"), then bias and residual by name. */
static tcc_reference_tensors reference_tensors(const TuneCheck *c, const tcc_kernel *kernel)
{
    tcc_reference_tensors t = {.size = sizeof t};
    int operands = 0;
    for (int i = 0; i < c->nparam; i++) {
        tcc_kernel_param_info p = {.size = sizeof p};
        if (!tcc_kernel_param(kernel, i, &p))
            continue;
        bool named = !strcmp(p.name, "bias") || !strcmp(p.name, "residual");
        if (i != c->output && !named && operands < 2)
            *(operands++ ? &t.filter : &t.input) = c->host[i];
        else if (!strcmp(p.name, "bias"))
            t.bias = c->host[i];
        else if (!strcmp(p.name, "residual"))
            t.residual = c->host[i];
        else if (i == c->output)
            t.previous_output = c->host[i];
    }
    return t;
}

static tcc_status reference(TuneCheck *c, const tcc_kernel *kernel, bool linear, double *out)
{
    tcc_reference_tensors t = reference_tensors(c, kernel);
    tcc_workload w = c->workload;
    tcc_epilogue *e = w.kind == TCC_WORKLOAD_CONV2D ? &w.conv2d.epilogue : &w.matmul.epilogue;
    if (linear)
        e->relu = e->clamp = false;
    return w.kind == TCC_WORKLOAD_CONV2D
               ? tcc_conv2d_reference(c->ctx, &w.conv2d, &t, c->positions, c->count, 1, out)
               : tcc_matmul_reference(c->ctx, &w.matmul, &t, c->positions, c->count, 1, out);
}

/* Host tensors, device buffers (inputs uploaded), positions and the reference. */
static tcc_status prepare(TuneCheck *c, tcc_device *device, const tcc_kernel *kernel,
                          int64_t samples, uint64_t seed)
{
    tcc_status status = TCC_OK;
    for (int i = 0; i < c->nparam && status == TCC_OK; i++) {
        tcc_kernel_param_info p = {.size = sizeof p};
        if (!tcc_kernel_param(kernel, i, &p))
            return TCC_ERROR_INVALID_ARGUMENT;
        c->elements[i] = p.elements;
        c->types[i] = p.dtype;
        bool output = p.role != TCC_PARAM_INPUT;
        if (output) {
            c->output = i;
            c->output_read = p.role == TCC_PARAM_INPUT_OUTPUT;
        }
        size_t bytes = (size_t)p.bytes > 0 ? (size_t)p.bytes : 16;
        status = tcc_device_buffer_alloc(device, bytes, &c->buffers[i]);
        if (status == TCC_OK && (!output || c->output_read)) {
            if (!(c->host[i] = malloc(bytes)))
                return TCC_ERROR_OUT_OF_MEMORY;
            fill_random(c->host[i], p.dtype, p.elements, &seed);
            status = tcc_device_buffer_upload(c->buffers[i], c->host[i], (size_t)p.bytes);
        }
    }
    if (status != TCC_OK || c->output < 0)
        return status != TCC_OK ? status : TCC_ERROR_INVALID_ARGUMENT;
    int64_t total = c->elements[c->output];
    c->count = samples <= 0 || samples > total ? total : samples;
    c->positions = malloc(sizeof *c->positions * (size_t)c->count);
    c->reference = malloc(sizeof *c->reference * (size_t)c->count);
    c->scale = malloc(sizeof *c->scale * (size_t)c->count);
    c->got = malloc(tcc_dtype_size(c->types[c->output]) * (size_t)total);
    if (!c->positions || !c->reference || !c->scale || !c->got)
        return TCC_ERROR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < c->count; i++)
        c->positions[i] = c->count == total ? i : (int64_t)(next_random(&seed) % (uint64_t)total);
    status = reference(c, kernel, false, c->reference);
    return status == TCC_OK ? reference(c, kernel, true, c->scale) : status;
}

tcc_status tune_check_prepare(TuneCheck **cache, tcc_context *ctx, tcc_device *device,
                              const tcc_workload *workload, const tcc_kernel *kernel,
                              int64_t samples, uint64_t seed)
{
    TuneCheck *c = *cache;
    int nparam = tcc_kernel_param_count(kernel);
    if (c && c->nparam == nparam && !memcmp(&c->workload, workload, sizeof *workload))
        return TCC_OK;
    tune_check_destroy(c);
    *cache = NULL;
    if (nparam < 1 || nparam > TUNE_CHECK_MAX_PARAMS)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!(c = calloc(1, sizeof *c)))
        return TCC_ERROR_OUT_OF_MEMORY;
    *c = (TuneCheck){.ctx = ctx, .workload = *workload, .nparam = nparam, .output = -1};
    tcc_status status = prepare(c, device, kernel, samples, seed);
    if (status != TCC_OK) {
        tune_check_destroy(c);
        return status;
    }
    *cache = c;
    return TCC_OK;
}

static void compare(const TuneCheck *c, tcc_check_result *result)
{
    double max_ref = 0, max_diff = 0;
    tcc_dtype type = c->types[c->output];
    for (int64_t i = 0; i < c->count; i++) {
        max_ref = fmax(max_ref, fabs(c->scale[i]));
        double got = value_at(type, c->got, c->positions[i]);
        if (isnan(got) && !c->output_read) {
            result->unwritten++;
            continue;
        }
        double diff = fabs(got - c->reference[i]);
        max_diff = fmax(max_diff, isfinite(diff) ? diff : INFINITY);
    }
    result->max_error = max_ref > 0 ? max_diff / max_ref : max_diff;
    result->compared = c->count;
    result->passed = result->unwritten == 0 && result->max_error <= result->tolerance;
}

tcc_status tune_check_run(TuneCheck *c, tcc_loaded_kernel *loaded, tcc_check_result *result)
{
    const tcc_workload *w = &c->workload;
    bool conv = w->kind == TCC_WORKLOAD_CONV2D;
    *result = (tcc_check_result){
        .size = sizeof *result,
        .tolerance = conv ? tcc_check_tolerance(w->conv2d.input_type, w->conv2d.accumulate_type,
                                                w->conv2d.output_type)
                          : tcc_check_tolerance(w->matmul.input_type, w->matmul.accumulate_type,
                                                w->matmul.output_type)};
    tcc_device_buffer *out = c->buffers[c->output];
    size_t bytes = tcc_dtype_size(c->types[c->output]) * (size_t)c->elements[c->output];
    tcc_status status = c->output_read
                            ? tcc_device_buffer_upload(out, c->host[c->output], bytes)
                            : tcc_device_buffer_fill_bytes(out, c->types[c->output] == TCC_INT32
                                                                    ? INT32_POISON_BYTE
                                                                    : FLOAT_POISON_BYTE);
    if (status == TCC_OK)
        status = tcc_kernel_launch(loaded, c->nparam, c->buffers);
    if (status == TCC_OK)
        status = tcc_device_buffer_download(out, c->got, bytes);
    if (status == TCC_OK)
        compare(c, result);
    return status;
}

int tune_check_buffers(TuneCheck *c, tcc_device_buffer *const **buffers)
{
    *buffers = c->buffers;
    return c->nparam;
}
