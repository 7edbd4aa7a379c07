/*
 * tcc-conv --run: fill random fp16 inputs, launch the kernel once on a poisoned output,
 * compare against the CPU reference, then time it. Every buffer is freed on every path.
 */
#include "conv_options.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Outputs below this many are checked in full by default; above it, a random sample. */
#define FULL_CHECK_LIMIT 1000000
#define SAMPLE_COUNT 200000
#define MAX_REL_ERROR 1e-3

/* splitmix64: tiny, seedable with any value (zero included), and good enough for data. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1], rounded to fp16. */
static void fill_random_f16(uint16_t *data, int64_t count, uint64_t *state)
{
    for (int64_t i = 0; i < count; i++) {
        double unit = (double)(next_random(state) >> 11) * 0x1.0p-53;
        data[i] = tcc_f32_to_f16((float)(2.0 * unit - 1.0));
    }
}

typedef struct RunState {
    tcc_context *ctx;
    tcc_device *device;
    const tcc_kernel *kernel;
    const ConvOptions *options;
    int64_t n_input, n_filter, n_output;
    uint16_t *input, *filter;
    float *output;
    int64_t *positions;
    double *reference;
    tcc_device_buffer *buffers[3]; /* input, filter, output: the kernel's parameters */
    tcc_loaded_kernel *loaded;
} RunState;

static void run_state_free(RunState *s)
{
    tcc_loaded_kernel_destroy(s->loaded);
    for (int i = 0; i < 3; i++)
        tcc_buffer_free(s->buffers[i]);
    free(s->input);
    free(s->filter);
    free(s->output);
    free(s->positions);
    free(s->reference);
}

static int lib_error(const RunState *s)
{
    tcc_cli_error("%s", tcc_last_error(s->ctx));
    return 1;
}

static int out_of_memory(void)
{
    tcc_cli_error("out of memory on the host");
    return 1;
}

static int prepare(RunState *s, uint64_t *random_state)
{
    s->n_input = tcc_conv2d_input_elements(&s->options->desc);
    s->n_filter = tcc_conv2d_filter_elements(&s->options->desc);
    s->n_output = tcc_conv2d_output_elements(&s->options->desc);
    s->input = malloc(sizeof(uint16_t) * (size_t)s->n_input);
    s->filter = malloc(sizeof(uint16_t) * (size_t)s->n_filter);
    s->output = malloc(sizeof(float) * (size_t)s->n_output);
    if (!s->input || !s->filter || !s->output)
        return out_of_memory();
    fill_random_f16(s->input, s->n_input, random_state);
    fill_random_f16(s->filter, s->n_filter, random_state);

    size_t bytes[3] = {sizeof(uint16_t) * (size_t)s->n_input,
                       sizeof(uint16_t) * (size_t)s->n_filter, sizeof(float) * (size_t)s->n_output};
    for (int i = 0; i < 3; i++)
        if (tcc_buffer_alloc(s->device, bytes[i], &s->buffers[i]) != TCC_OK)
            return lib_error(s);
    if (tcc_buffer_upload(s->buffers[0], s->input, bytes[0]) != TCC_OK ||
        tcc_buffer_upload(s->buffers[1], s->filter, bytes[1]) != TCC_OK ||
        tcc_kernel_load(s->device, s->kernel, &s->loaded) != TCC_OK)
        return lib_error(s);
    return 0;
}

/* One launch on an output poisoned with 0xFF bytes (NaN in float32), so that anything
 * the kernel fails to write stays NaN and is caught by the check. */
static int launch_and_download(RunState *s)
{
    if (tcc_buffer_fill_bytes(s->buffers[2], 0xFF) != TCC_OK ||
        tcc_kernel_launch(s->loaded, 3, s->buffers) != TCC_OK ||
        tcc_buffer_download(s->buffers[2], s->output, sizeof(float) * (size_t)s->n_output) !=
            TCC_OK)
        return lib_error(s);
    return 0;
}

/* The positions to compare: all of them, or SAMPLE_COUNT drawn at random. */
static int choose_positions(RunState *s, uint64_t *random_state, int64_t *count)
{
    ConvCheck mode = s->options->check;
    if (mode == CONV_CHECK_AUTO)
        mode = s->n_output < FULL_CHECK_LIMIT ? CONV_CHECK_FULL : CONV_CHECK_SAMPLED;
    *count = mode == CONV_CHECK_FULL || s->n_output <= SAMPLE_COUNT ? s->n_output : SAMPLE_COUNT;
    s->positions = malloc(sizeof(int64_t) * (size_t)*count);
    s->reference = malloc(sizeof(double) * (size_t)*count);
    if (!s->positions || !s->reference)
        return out_of_memory();
    for (int64_t i = 0; i < *count; i++)
        s->positions[i] = *count == s->n_output
                              ? i
                              : (int64_t)(next_random(random_state) % (uint64_t)s->n_output);
    return 0;
}

/* max |got - ref| / max |ref|: the error relative to the scale of the outputs. An error
 * relative to each output alone means nothing where a long sum cancels to nearly zero;
 * fp16 inputs with fp32 accumulation give about 1e-5 here. Also the normwise
 * ||got - ref|| / ||ref||. NaN (an unwritten, poisoned output) is counted apart. */
static double max_relative_error(const RunState *s, int64_t count, int64_t *nan_count,
                                 double *normwise)
{
    double max_ref = 0.0, max_diff = 0.0, sum_diff2 = 0.0, sum_ref2 = 0.0;
    *nan_count = 0;
    for (int64_t i = 0; i < count; i++) {
        double got = s->output[s->positions[i]], ref = s->reference[i];
        max_ref = fmax(max_ref, fabs(ref));
        sum_ref2 += ref * ref;
        if (isnan(got)) {
            ++*nan_count;
            continue;
        }
        max_diff = fmax(max_diff, fabs(got - ref));
        sum_diff2 += (got - ref) * (got - ref);
    }
    *normwise = sum_ref2 > 0.0 ? sqrt(sum_diff2 / sum_ref2) : sqrt(sum_diff2);
    return max_ref > 0.0 ? max_diff / max_ref : max_diff;
}

static int check(RunState *s, uint64_t *random_state)
{
    int64_t count = 0, written = 0, nan_checked = 0;
    for (int64_t i = 0; i < s->n_output; i++)
        written += !isnan(s->output[i]);
    if (choose_positions(s, random_state, &count) != 0)
        return 1;
    if (tcc_conv2d_reference(s->ctx, &s->options->desc, s->input, s->filter, s->positions, count,
                             s->options->threads, s->reference) != TCC_OK)
        return lib_error(s);
    double normwise;
    double error = max_relative_error(s, count, &nan_checked, &normwise);
    printf("max relative error: %.3g (max |got - ref| / max |ref|; normwise %.3g; %lld outputs "
           "checked, %lld of %lld written)\n",
           error, normwise, (long long)count, (long long)written, (long long)s->n_output);
    fflush(stdout);
    if (written < s->n_output || nan_checked) {
        tcc_cli_error("check failed: %lld of %lld outputs not written (NaN)",
                      (long long)(s->n_output - written), (long long)s->n_output);
        return 1;
    }
    if (!(error <= MAX_REL_ERROR)) {
        tcc_cli_error("check failed: max relative error %.3g exceeds %g", error, MAX_REL_ERROR);
        return 1;
    }
    return 0;
}

static int time_kernel(RunState *s)
{
    double ms = 0.0;
    if (tcc_kernel_time(s->loaded, 3, s->buffers, s->options->warmup, s->options->runs, &ms) !=
        TCC_OK)
        return lib_error(s);
    double tflops = ms > 0.0 ? tcc_conv2d_flops(&s->options->desc) / (ms * 1e-3) / 1e12 : 0.0;
    printf("time: %.4f ms (median of %d runs), %.1f TFLOP/s\n", ms, s->options->runs, tflops);
    return 0;
}

static void print_launch(const RunState *s)
{
    int64_t grid[3], block[3];
    tcc_kernel_grid(s->kernel, grid);
    tcc_kernel_block(s->kernel, block);
    printf("device: %s (sm_%d)\n", tcc_device_name(s->device), tcc_device_arch(s->device));
    printf("launch: grid(%lld, %lld, %lld) block(%lld, %lld, %lld), %lld bytes of shared memory\n",
           (long long)grid[0], (long long)grid[1], (long long)grid[2], (long long)block[0],
           (long long)block[1], (long long)block[2], (long long)tcc_kernel_shared_bytes(s->kernel));
}

int tcc_cli_run(tcc_context *ctx, tcc_device *device, const tcc_kernel *kernel,
                const ConvOptions *options)
{
    RunState s = {.ctx = ctx, .device = device, .kernel = kernel, .options = options};
    uint64_t random_state = options->seed;
    printf("seed: %llu\n", (unsigned long long)options->seed);
    fflush(stdout); /* the seed must be out even if the run dies, to replay it */
    int rc = prepare(&s, &random_state);
    if (rc == 0)
        rc = launch_and_download(&s);
    if (rc == 0 && options->check != CONV_CHECK_NONE)
        rc = check(&s, &random_state);
    if (rc == 0)
        rc = time_kernel(&s);
    if (rc == 0)
        print_launch(&s);
    run_state_free(&s);
    return rc;
}
