/*
 * Checking and timing a compiled conv2d or matmul on a device (tcc_conv2d_check,
 * tcc_matmul_check): what `tcc-conv --run` and `tcc-matmul --run` do.
 *
 *   1. fresh random inputs from the seed (splitmix64), and the bias, residual and previous
 *      output when the epilogue reads them;
 *   2. the output buffer holds the previous output when the epilogue reads it, otherwise
 *      poison (NaN bytes for float types, 0x80 bytes for int32) so that an output the
 *      kernel never writes cannot pass for a computed one;
 *   3. one launch, one download; poisoned outputs still there are counted as unwritten;
 *   4. the CPU reference at `samples` random positions (or all), max and normwise errors;
 *   5. the median of `runs` timed launches.
 * Both operators share every step; a CheckProblem says what differs.
 */
#include "reference/reference.h"
#include "support/context.h"
#include "tcc/runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Random integers: int8 inputs in [-16, 16] keep every int32 sum exact and small; int32
 * bias, residual and previous outputs in [-64, 64] are of the same order as the sums. */
#define INPUT_INT_RANGE 16
#define EPILOGUE_INT_RANGE 64

/* Poison bytes: 0xFF makes a NaN of every float type; 0x80 makes int32 -2139062144, which
 * no sum of the value ranges above can reach. */
#define FLOAT_POISON_BYTE 0xFF
#define INT32_POISON_BYTE 0x80
#define INT32_POISON ((int32_t)0x80808080u)

#define MAX_BUFFERS 5 /* A or input, B or filter, [bias], [residual], output */

/* ---- tolerances ------------------------------------------------------------------------ */

/* int32 sums are exact; a float32 output adds one float32 rounding in the epilogue. */
#define INT32_TO_FLOAT32_TOLERANCE 1e-6

double tcc_check_tolerance(tcc_dtype input, tcc_dtype accumulate, tcc_dtype output)
{
    /* Every rule that applies gives a bound; the loosest one wins. */
    double tolerance = 0.0;
    if ((input == TCC_FLOAT16 || input == TCC_BFLOAT16) && accumulate == TCC_FLOAT32)
        tolerance = fmax(tolerance, 1e-3);
    if (input == TCC_FLOAT32) /* tf32: 10 mantissa bits */
        tolerance = fmax(tolerance, 5e-3);
    if (accumulate == TCC_FLOAT16)
        tolerance = fmax(tolerance, 2e-2);
    if (output == TCC_FLOAT16)
        tolerance = fmax(tolerance, 2e-3);
    if (output == TCC_BFLOAT16)
        tolerance = fmax(tolerance, 1e-2);
    if (accumulate == TCC_INT32 && output == TCC_FLOAT32)
        tolerance = fmax(tolerance, INT32_TO_FLOAT32_TOLERANCE);
    return tolerance;
}

/* ---- what differs between the operators ------------------------------------------------ */

typedef tcc_status (*ReferenceFn)(tcc_context *ctx, const void *desc,
                                  const tcc_reference_tensors *tensors, const int64_t *positions,
                                  int64_t count, int threads, double *out);

typedef struct CheckProblem {
    const void *desc;
    /* The same operator without ReLU and clamp: errors are measured against its scale (see
     * compare), NULL when the epilogue has neither. */
    const void *linear_desc;
    ReferenceFn reference;
    tcc_dtype input_type, accumulate_type, output_type;
    const tcc_epilogue *epilogue;
    int64_t a_count, b_count, bias_count, output_count; /* elements */
} CheckProblem;

static tcc_status conv2d_reference(tcc_context *ctx, const void *desc,
                                   const tcc_reference_tensors *tensors, const int64_t *positions,
                                   int64_t count, int threads, double *out)
{
    return tcc_conv2d_reference(ctx, desc, tensors, positions, count, threads, out);
}

static tcc_status matmul_reference(tcc_context *ctx, const void *desc,
                                   const tcc_reference_tensors *tensors, const int64_t *positions,
                                   int64_t count, int threads, double *out)
{
    return tcc_matmul_reference(ctx, desc, tensors, positions, count, threads, out);
}

/* ---- random data ------------------------------------------------------------------------- */

/* splitmix64: tiny, seedable with any value (zero included), and good enough for data. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1]. */
static float random_unit(uint64_t *state)
{
    double unit = (double)(next_random(state) >> 11) * 0x1.0p-53;
    return (float)(2.0 * unit - 1.0);
}

/* Uniform in [-range, range]. */
static int32_t random_int(uint64_t *state, int32_t range)
{
    return (int32_t)(next_random(state) % (uint64_t)(2 * range + 1)) - range;
}

static void fill_random(void *data, tcc_dtype type, int64_t count, int32_t int_range,
                        uint64_t *state)
{
    for (int64_t i = 0; i < count; i++) {
        switch (type) {
        case TCC_FLOAT16:
            ((uint16_t *)data)[i] = tcc_f32_to_f16(random_unit(state));
            break;
        case TCC_BFLOAT16:
            ((uint16_t *)data)[i] = tcc_f32_to_bf16(random_unit(state));
            break;
        case TCC_FLOAT32:
            ((float *)data)[i] = random_unit(state);
            break;
        case TCC_INT8:
            ((int8_t *)data)[i] = (int8_t)random_int(state, int_range);
            break;
        case TCC_INT32:
            ((int32_t *)data)[i] = random_int(state, int_range);
            break;
        default: /* validation admits no other element type */
            return;
        }
    }
}

/* ---- one check --------------------------------------------------------------------------- */

/* Everything one check holds, so that one function frees it on every path. */
typedef struct Check {
    tcc_context *ctx;
    tcc_device *device;
    const CheckProblem *problem;
    const tcc_check_options *options;
    uint64_t random;
    tcc_reference_tensors tensors; /* host copies of what the kernel reads */
    void *a, *b, *bias, *residual, *previous, *got;
    bool poisoned;      /* the output buffer held poison before the launch */
    int64_t *positions; /* NULL: every output, in order */
    int64_t count;
    double *reference;
    double *linear_reference; /* before ReLU and clamp; NULL when there are none */
    tcc_device_buffer *buffers[MAX_BUFFERS];
    int nbuffer;
    tcc_loaded_kernel *loaded;
} Check;

static void check_free(Check *c)
{
    tcc_loaded_kernel_destroy(c->loaded);
    for (int i = 0; i < c->nbuffer; i++)
        tcc_device_buffer_free(c->buffers[i]);
    free(c->a);
    free(c->b);
    free(c->bias);
    free(c->residual);
    free(c->previous);
    free(c->got);
    free(c->positions);
    free(c->reference);
    free(c->linear_reference);
}

static size_t bytes_of(tcc_dtype type, int64_t count)
{
    return tcc_dtype_size(type) * (size_t)count;
}

/* A host tensor of `count` random elements. */
static tcc_status random_tensor(Check *c, tcc_dtype type, int64_t count, int32_t int_range,
                                void **out)
{
    *out = malloc(bytes_of(type, count));
    if (!*out)
        return tci_fail(c->ctx, TCC_ERROR_OUT_OF_MEMORY,
                        "out of memory for a host tensor of %lld elements", (long long)count);
    fill_random(*out, type, count, int_range, &c->random);
    return TCC_OK;
}

/* The operands, then the tensors the epilogue reads, in a fixed order so a seed replays. */
static tcc_status make_host_tensors(Check *c)
{
    const CheckProblem *p = c->problem;
    const tcc_epilogue *e = p->epilogue;
    tcc_status status = random_tensor(c, p->input_type, p->a_count, INPUT_INT_RANGE, &c->a);
    if (status == TCC_OK)
        status = random_tensor(c, p->input_type, p->b_count, INPUT_INT_RANGE, &c->b);
    if (status == TCC_OK && e->bias)
        status = random_tensor(c, p->output_type, p->bias_count, EPILOGUE_INT_RANGE, &c->bias);
    if (status == TCC_OK && tci_epilogue_reads_residual(e))
        status =
            random_tensor(c, p->output_type, p->output_count, EPILOGUE_INT_RANGE, &c->residual);
    if (status == TCC_OK && tci_epilogue_reads_previous(e))
        status =
            random_tensor(c, p->output_type, p->output_count, EPILOGUE_INT_RANGE, &c->previous);
    if (status == TCC_OK && !(c->got = malloc(bytes_of(p->output_type, p->output_count))))
        status = tci_fail(c->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory for the output");
    c->tensors = (tcc_reference_tensors){.size = sizeof c->tensors,
                                         .input = c->a,
                                         .filter = c->b,
                                         .bias = c->bias,
                                         .residual = c->residual,
                                         .previous_output = c->previous};
    return status;
}

/* A device buffer holding `host` (or uninitialized if host is NULL), appended to the
 * kernel's parameters. */
static tcc_status add_buffer(Check *c, const void *host, size_t bytes)
{
    tcc_device_buffer **buffer = &c->buffers[c->nbuffer];
    tcc_status status = tcc_device_buffer_alloc(c->device, bytes, buffer);
    if (status != TCC_OK)
        return status;
    c->nbuffer++;
    return host ? tcc_device_buffer_upload(*buffer, host, bytes) : TCC_OK;
}

/* The kernel's parameters, in order: A, B, [bias], [residual], output. */
static tcc_status make_device_buffers(Check *c)
{
    const CheckProblem *p = c->problem;
    size_t output_bytes = bytes_of(p->output_type, p->output_count);
    tcc_status status = add_buffer(c, c->a, bytes_of(p->input_type, p->a_count));
    if (status == TCC_OK)
        status = add_buffer(c, c->b, bytes_of(p->input_type, p->b_count));
    if (status == TCC_OK && c->bias)
        status = add_buffer(c, c->bias, bytes_of(p->output_type, p->bias_count));
    if (status == TCC_OK && c->residual)
        status = add_buffer(c, c->residual, output_bytes);
    if (status == TCC_OK)
        status = add_buffer(c, c->previous, output_bytes);
    if (status != TCC_OK || c->previous)
        return status;
    c->poisoned = true;
    unsigned char poison = p->output_type == TCC_INT32 ? INT32_POISON_BYTE : FLOAT_POISON_BYTE;
    return tcc_device_buffer_fill_bytes(c->buffers[c->nbuffer - 1], poison);
}

static tcc_status launch_once(Check *c, const tcc_kernel *kernel)
{
    const CheckProblem *p = c->problem;
    tcc_status status = tcc_kernel_load(c->device, kernel, &c->loaded);
    if (status == TCC_OK)
        status = tcc_kernel_launch(c->loaded, c->nbuffer, c->buffers);
    if (status == TCC_OK)
        status = tcc_device_buffer_download(c->buffers[c->nbuffer - 1], c->got,
                                            bytes_of(p->output_type, p->output_count));
    return status;
}

/* Whether the output at `flat` still holds the poison written before the launch. */
static bool is_poison(const Check *c, int64_t flat)
{
    if (!c->poisoned)
        return false;
    if (c->problem->output_type == TCC_INT32)
        return ((const int32_t *)c->got)[flat] == INT32_POISON;
    return isnan(tci_reference_value(c->problem->output_type, c->got, flat));
}

static int64_t count_unwritten(const Check *c)
{
    int64_t unwritten = 0;
    for (int64_t i = 0; c->poisoned && i < c->problem->output_count; i++)
        unwritten += is_poison(c, i);
    return unwritten;
}

static int reference_threads(int threads)
{
    if (threads > 0)
        return threads;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}

/* The positions to compare: all of them (positions NULL), or `samples` drawn at random. */
static tcc_status choose_positions(Check *c)
{
    int64_t total = c->problem->output_count, samples = c->options->samples;
    c->count = samples <= 0 || samples >= total ? total : samples;
    if (c->count < total) {
        c->positions = malloc(sizeof *c->positions * (size_t)c->count);
        for (int64_t i = 0; c->positions && i < c->count; i++)
            c->positions[i] = (int64_t)(next_random(&c->random) % (uint64_t)total);
    }
    c->reference = malloc(sizeof *c->reference * (size_t)c->count);
    if (!c->reference || (c->count < total && !c->positions))
        return tci_fail(c->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory for %lld reference outputs",
                        (long long)c->count);
    return TCC_OK;
}

/* max |got - ref| / max |ref| and ||got - ref|| / ||ref|| over the compared outputs (the
 * plain differences where the reference is all zero). An error relative to each output
 * alone would mean nothing where a long sum cancels to nearly zero. ReLU and clamp never
 * enlarge an error (|clamp(x) - clamp(y)| <= |x - y|) but can shrink the outputs far below
 * the sums whose rounding made it, so with them the scale is that of the outputs before
 * them. Unwritten outputs are counted apart; any other NaN or infinity makes the error
 * infinite. */
static void compare(const Check *c, tcc_check_result *result)
{
    double max_ref = 0.0, max_diff = 0.0, sum_diff2 = 0.0, sum_ref2 = 0.0;
    const double *scale = c->linear_reference ? c->linear_reference : c->reference;
    for (int64_t i = 0; i < c->count; i++) {
        int64_t flat = c->positions ? c->positions[i] : i;
        double ref = c->reference[i];
        max_ref = fmax(max_ref, fabs(scale[i]));
        sum_ref2 += scale[i] * scale[i];
        if (is_poison(c, flat))
            continue;
        double diff = fabs(tci_reference_value(c->problem->output_type, c->got, flat) - ref);
        if (!isfinite(diff))
            diff = INFINITY;
        max_diff = fmax(max_diff, diff);
        sum_diff2 += diff * diff;
    }
    result->max_error = max_ref > 0.0 ? max_diff / max_ref : max_diff;
    result->normwise_error = sum_ref2 > 0.0 ? sqrt(sum_diff2 / sum_ref2) : sqrt(sum_diff2);
    result->compared = c->count;
}

static tcc_status check_against_reference(Check *c, tcc_check_result *result)
{
    const CheckProblem *p = c->problem;
    tcc_status status = choose_positions(c);
    int threads = reference_threads(c->options->threads);
    if (status == TCC_OK)
        status = p->reference(c->ctx, p->desc, &c->tensors, c->positions, c->count, threads,
                              c->reference);
    if (status == TCC_OK && p->linear_desc) {
        c->linear_reference = malloc(sizeof *c->linear_reference * (size_t)c->count);
        status = c->linear_reference
                     ? p->reference(c->ctx, p->linear_desc, &c->tensors, c->positions, c->count,
                                    threads, c->linear_reference)
                     : tci_fail(c->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    if (status != TCC_OK)
        return status;
    compare(c, result);
    result->unwritten = count_unwritten(c);
    result->passed = result->unwritten == 0 && result->max_error <= result->tolerance;
    return TCC_OK;
}

static tcc_status run_check(Check *c, const tcc_kernel *kernel, tcc_check_result *result)
{
    tcc_status status = make_host_tensors(c);
    if (status == TCC_OK)
        status = make_device_buffers(c);
    if (status == TCC_OK)
        status = launch_once(c, kernel);
    if (status == TCC_OK)
        status = check_against_reference(c, result);
    if (status == TCC_OK && c->options->runs > 0)
        status = tcc_kernel_time(c->loaded, c->nbuffer, c->buffers, c->options->warmup,
                                 c->options->runs, &result->median_ms);
    return status;
}

static tcc_status check(tcc_device *device, const tcc_kernel *kernel, const CheckProblem *problem,
                        const tcc_check_options *options, tcc_check_result *result)
{
    tcc_context *ctx = tcc_device_context(device);
    if (!kernel || !options || !result)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "the check needs a kernel, options and a result (got NULL)");
    tcc_status status = TCI_CHECK_SIZE(ctx, "check", tcc_check_options, options);
    if (status == TCC_OK)
        status = TCI_CHECK_SIZE(ctx, "check: result", tcc_check_result, result);
    if (status != TCC_OK)
        return status;
    if (options->warmup < 0 || options->runs < 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "check options: warmup and runs must be >= 0 (got %d and %d)",
                        options->warmup, options->runs);
    *result = (tcc_check_result){
        .size = sizeof *result,
        .tolerance = tcc_check_tolerance(problem->input_type, problem->accumulate_type,
                                         problem->output_type),
    };
    Check c = {.ctx = ctx,
               .device = device,
               .problem = problem,
               .options = options,
               .random = options->seed};
    status = run_check(&c, kernel, result);
    check_free(&c);
    return status;
}

void tcc_check_options_init_size(tcc_check_options *options, size_t size)
{
    tcc_check_options defaults = {.size = sizeof defaults, .seed = 1};
    tci_init_struct(options, size, &defaults, sizeof defaults, sizeof defaults);
}

/* The symbol a program built before the macro calls: the first release's size. */
void(tcc_check_options_init)(tcc_check_options *options)
{
    tcc_check_options_init_size(options, sizeof *options);
}

tcc_status tcc_conv2d_check(tcc_device *device, const tcc_kernel *kernel,
                            const tcc_conv2d_desc *desc, const tcc_check_options *options,
                            tcc_check_result *result)
{
    if (!device)
        return TCC_ERROR_INVALID_ARGUMENT; /* no context to say so in */
    tcc_status status = tcc_conv2d_validate(tcc_device_context(device), desc);
    if (status != TCC_OK)
        return status;
    tcc_conv2d_desc linear = *desc;
    linear.epilogue.relu = linear.epilogue.clamp = false;
    CheckProblem problem = {
        .desc = desc,
        .linear_desc = desc->epilogue.relu || desc->epilogue.clamp ? &linear : NULL,
        .reference = conv2d_reference,
        .input_type = desc->input_type,
        .accumulate_type = desc->accumulate_type,
        .output_type = desc->output_type,
        .epilogue = &desc->epilogue,
        .a_count = tcc_conv2d_input_elements(desc),
        .b_count = tcc_conv2d_filter_elements(desc),
        .bias_count = desc->out_channels,
        .output_count = tcc_conv2d_output_elements(desc),
    };
    return check(device, kernel, &problem, options, result);
}

tcc_status tcc_matmul_check(tcc_device *device, const tcc_kernel *kernel,
                            const tcc_matmul_desc *desc, const tcc_check_options *options,
                            tcc_check_result *result)
{
    if (!device)
        return TCC_ERROR_INVALID_ARGUMENT; /* no context to say so in */
    tcc_status status = tcc_matmul_validate(tcc_device_context(device), desc);
    if (status != TCC_OK)
        return status;
    tcc_matmul_desc linear = *desc;
    linear.epilogue.relu = linear.epilogue.clamp = false;
    CheckProblem problem = {
        .desc = desc,
        .linear_desc = desc->epilogue.relu || desc->epilogue.clamp ? &linear : NULL,
        .reference = matmul_reference,
        .input_type = desc->input_type,
        .accumulate_type = desc->accumulate_type,
        .output_type = desc->output_type,
        .epilogue = &desc->epilogue,
        .a_count = desc->batch * desc->m * desc->k,
        .b_count = desc->batch * desc->k * desc->n,
        .bias_count = desc->n,
        .output_count = desc->batch * desc->m * desc->n,
    };
    return check(device, kernel, &problem, options, result);
}
