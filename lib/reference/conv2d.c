/*
 * The conv2d descriptor (defaults, validation, shapes, FLOPs), the CPU reference
 * convolution, and the helpers it shares with the matmul reference (conv2d.h).
 *
 * The reference reads the same raw elements the GPU reads, in the descriptor's layouts,
 * and computes in double, so a GPU result can be compared with it output by output. Large
 * problems are checked at sampled output positions, split over threads.
 *
 * ---- Layouts -----------------------------------------------------------------------------
 * N batch, H x W input, C input channels, K output channels, R x S filter, P x Q output
 * (tcc_conv2d_out_height/width), G groups, Cg = C/G, CB = C/16, KB = K/16; / and % are
 * integer division and remainder. The element offset of each logical index, which the code
 * generator must match exactly:
 *
 *   input (n, h, w, c)
 *     NHWC     ((n*H + h)*W + w)*C + c
 *     NCHW     ((n*C + c)*H + h)*W + w
 *     NHWCnc   ((((n/16*H + h)*W + w)*CB + c/16)*16 + n%16)*16 + c%16
 *   output (n, p, q, k): in the input's layout, with P, Q, K for H, W, C
 *     NHWC     ((n*P + p)*Q + q)*K + k
 *     NCHW     ((n*K + k)*P + p)*Q + q
 *     NHWCnc   ((((n/16*P + p)*Q + q)*KB + k/16)*16 + n%16)*16 + k%16
 *   filter (k, r, s, c), c in 0..Cg-1 the channel within the group of output channel k
 *     KRSC     ((k*R + r)*S + s)*Cg + c
 *     KCRS     ((k*Cg + c)*R + r)*S + s
 *     BLOCKED  ((((r*S + s)*CB + c/16)*KB + k/16)*16 + c%16)*16 + k%16     (G == 1)
 *
 * Output k belongs to group g = k / (K/G) and reads input channels g*Cg .. g*Cg + Cg - 1.
 * Output (n, p, q, k) reads input row h = p*stride_h - pad_top + r*dilation_h and column
 * w = q*stride_w - pad_left + s*dilation_w; outside 0..H-1 x 0..W-1 the input is zero.
 * NHWCnc requires N, C and K to be multiples of 16, G == 1 and the BLOCKED filter.
 */
#include "reference/reference.h"
#include "support/context.h"
#include "target/target.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 16 /* the n and c (k) blocks of the NHWCnc layout and the blocked filter */
#define MAX_THREADS 256

/* ---- the descriptor ---------------------------------------------------------------------- */

static tcc_epilogue default_epilogue(void)
{
    return (tcc_epilogue){.alpha = 1.0};
}

void tcc_conv2d_desc_init(tcc_conv2d_desc *desc)
{
    *desc = (tcc_conv2d_desc){
        .batch = 1,
        .height = 1,
        .width = 1,
        .in_channels = 1,
        .out_channels = 1,
        .kernel_h = 1,
        .kernel_w = 1,
        .stride_h = 1,
        .stride_w = 1,
        .dilation_h = 1,
        .dilation_w = 1,
        .groups = 1,
        .layout = TCC_LAYOUT_NHWC,
        .filter_layout = TCC_FILTER_KRSC,
        .input_type = TCC_FLOAT16,
        .accumulate_type = TCC_FLOAT32,
        .output_type = TCC_FLOAT32,
        .epilogue = default_epilogue(),
    };
}

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

void tcc_matmul_desc_init(tcc_matmul_desc *desc)
{
    *desc = (tcc_matmul_desc){
        .batch = 1,
        .m = 1,
        .n = 1,
        .k = 1,
        .input_type = TCC_FLOAT16,
        .accumulate_type = TCC_FLOAT32,
        .output_type = TCC_FLOAT32,
        .epilogue = default_epilogue(),
    };
}

static bool in_range(int64_t value, int64_t min)
{
    return value >= min && value <= INT32_MAX;
}

/* (size + pads - dilation*(kernel-1) - 1) / stride + 1, or 0 where no window fits (or the
 * sizes are out of range, so that nothing below can overflow). */
static int64_t out_extent(int64_t size, int64_t kernel, int64_t stride, int64_t pad_before,
                          int64_t pad_after, int64_t dilation)
{
    if (!in_range(size, 1) || !in_range(kernel, 1) || !in_range(stride, 1) ||
        !in_range(pad_before, 0) || !in_range(pad_after, 0) || !in_range(dilation, 1))
        return 0;
    int64_t span = size + pad_before + pad_after - dilation * (kernel - 1) - 1;
    return span < 0 ? 0 : span / stride + 1;
}

int64_t tcc_conv2d_out_height(const tcc_conv2d_desc *desc)
{
    return desc ? out_extent(desc->height, desc->kernel_h, desc->stride_h, desc->pad_top,
                             desc->pad_bottom, desc->dilation_h)
                : 0;
}

int64_t tcc_conv2d_out_width(const tcc_conv2d_desc *desc)
{
    return desc ? out_extent(desc->width, desc->kernel_w, desc->stride_w, desc->pad_left,
                             desc->pad_right, desc->dilation_w)
                : 0;
}

/* The input channels each output channel reads; 0 for a descriptor without valid groups. */
static int64_t group_channels(const tcc_conv2d_desc *desc)
{
    return desc->groups >= 1 ? desc->in_channels / desc->groups : 0;
}

double tcc_conv2d_flops(const tcc_conv2d_desc *desc)
{
    if (!desc)
        return 0.0;
    return 2.0 * (double)desc->batch * (double)desc->out_channels *
           (double)tcc_conv2d_out_height(desc) * (double)tcc_conv2d_out_width(desc) *
           (double)group_channels(desc) * (double)desc->kernel_h * (double)desc->kernel_w;
}

double tcc_matmul_flops(const tcc_matmul_desc *desc)
{
    if (!desc)
        return 0.0;
    return 2.0 * (double)desc->batch * (double)desc->m * (double)desc->n * (double)desc->k;
}

/* a*b*c*d, saturated at INT64_MAX on overflow (the factors are >= 0). Every layout holds
 * the same elements in another order (the blocked ones only add divisibility rules), so
 * the counts are plain products. */
static int64_t product4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t ab, abc, abcd;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc) ||
        __builtin_mul_overflow(abc, d, &abcd))
        return INT64_MAX;
    return abcd;
}

int64_t tcc_conv2d_input_elements(const tcc_conv2d_desc *desc)
{
    return desc ? product4(desc->batch, desc->height, desc->width, desc->in_channels) : 0;
}

int64_t tcc_conv2d_filter_elements(const tcc_conv2d_desc *desc)
{
    return desc ? product4(desc->out_channels, desc->kernel_h, desc->kernel_w, group_channels(desc))
                : 0;
}

int64_t tcc_conv2d_output_elements(const tcc_conv2d_desc *desc)
{
    return desc ? product4(desc->batch, tcc_conv2d_out_height(desc), tcc_conv2d_out_width(desc),
                           desc->out_channels)
                : 0;
}

/* ---- validation shared with the matmul --------------------------------------------------- */

static bool known_dtype(tcc_dtype type)
{
    return type >= TCC_VOID && type <= TCC_FLOAT32;
}

static bool is_float(tcc_dtype type)
{
    return type == TCC_FLOAT16 || type == TCC_BFLOAT16 || type == TCC_FLOAT32;
}

tcc_status tci_validate_mma_types(tcc_context *ctx, tcc_dtype input_type, tcc_dtype accumulate_type,
                                  tcc_dtype output_type)
{
    const struct {
        const char *name;
        tcc_dtype type;
    } fields[] = {{"input_type", input_type},
                  {"accumulate_type", accumulate_type},
                  {"output_type", output_type}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (!known_dtype(fields[i].type))
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s %d is not a tcc_dtype",
                            fields[i].name, (int)fields[i].type);
    }
    tcc_status status = tci_target_validate_types(ctx, input_type, accumulate_type);
    if (status != TCC_OK)
        return status;
    bool output_ok = accumulate_type == TCC_INT32
                         ? output_type == TCC_INT32 || output_type == TCC_FLOAT32
                         : is_float(output_type);
    if (!output_ok)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "output_type must be %s for %s accumulation "
                        "(got %s)",
                        accumulate_type == TCC_INT32 ? "int32 or float32"
                                                     : "float32, float16 or bfloat16",
                        tcc_dtype_name(accumulate_type), tcc_dtype_name(output_type));
    return TCC_OK;
}

/* A finite value; infinities are allowed where `allow_infinite` (clamp bounds). */
static tcc_status check_number(tcc_context *ctx, const char *name, double value,
                               bool allow_infinite)
{
    if (isnan(value) || (!allow_infinite && isinf(value)))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "epilogue.%s must be a %s number (got %g)",
                        name, allow_infinite ? "non-NaN" : "finite", value);
    return TCC_OK;
}

/* An integer output is computed in int32 arithmetic (the accumulator's exact sums), so
 * its constants must be integers that int32 holds. */
static tcc_status check_integer_constants(tcc_context *ctx, const tcc_epilogue *e)
{
    const char *names[5] = {"alpha", "beta", "prologue_arg", "clamp_min", "clamp_max"};
    const double values[5] = {e->alpha, e->beta, e->prologue_arg, e->clamp_min, e->clamp_max};
    for (int i = 0; i < (e->clamp ? 5 : 3); i++)
        if (values[i] != (double)(int32_t)values[i] || values[i] < INT32_MIN ||
            values[i] > INT32_MAX)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "epilogue.%s (%g) must be an integer in int32 for an int32 output",
                            names[i], values[i]);
    return TCC_OK;
}

tcc_status tci_validate_epilogue(tcc_context *ctx, const tcc_epilogue *epilogue, tcc_dtype output)
{
    if (epilogue->prologue < TCC_PROLOGUE_NONE || epilogue->prologue > TCC_PROLOGUE_RELU)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "epilogue.prologue %d is not a tcc_prologue_op", (int)epilogue->prologue);
    tcc_status status = check_number(ctx, "alpha", epilogue->alpha, false);
    if (status == TCC_OK)
        status = check_number(ctx, "beta", epilogue->beta, false);
    if (status == TCC_OK)
        status = check_number(ctx, "prologue_arg", epilogue->prologue_arg, false);
    if (status == TCC_OK && output == TCC_INT32)
        status = check_integer_constants(ctx, epilogue);
    if (status != TCC_OK || !epilogue->clamp)
        return status;
    status = check_number(ctx, "clamp_min", epilogue->clamp_min, true);
    if (status == TCC_OK)
        status = check_number(ctx, "clamp_max", epilogue->clamp_max, true);
    if (status == TCC_OK && epilogue->clamp_min > epilogue->clamp_max)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "epilogue.clamp_min (%g) must be <= epilogue.clamp_max (%g)",
                        epilogue->clamp_min, epilogue->clamp_max);
    return status;
}

bool tci_epilogue_reads_residual(const tcc_epilogue *epilogue)
{
    return epilogue->beta != 0.0 && epilogue->residual;
}

bool tci_epilogue_reads_previous(const tcc_epilogue *epilogue)
{
    return (epilogue->beta != 0.0 && !epilogue->residual) ||
           epilogue->prologue == TCC_PROLOGUE_SCALE || epilogue->prologue == TCC_PROLOGUE_RELU;
}

/* ---- conv2d validation ------------------------------------------------------------------- */

static const char *layout_name(tcc_layout layout)
{
    static const char *const names[] = {"NHWC", "NCHW", "NHWCnc"};
    return layout >= TCC_LAYOUT_NHWC && layout <= TCC_LAYOUT_NHWCNC ? names[layout] : "unknown";
}

static const char *filter_layout_name(tcc_filter_layout layout)
{
    static const char *const names[] = {"KRSC", "KCRS", "BLOCKED"};
    return layout >= TCC_FILTER_KRSC && layout <= TCC_FILTER_BLOCKED ? names[layout] : "unknown";
}

static tcc_status check_enums(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    if (desc->layout < TCC_LAYOUT_NHWC || desc->layout > TCC_LAYOUT_NHWCNC)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "layout %d is not a tcc_layout",
                        (int)desc->layout);
    if (desc->filter_layout < TCC_FILTER_KRSC || desc->filter_layout > TCC_FILTER_BLOCKED)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "filter_layout %d is not a tcc_filter_layout", (int)desc->filter_layout);
    return TCC_OK;
}

typedef struct SizeField {
    const char *name;
    int64_t value;
    int64_t min; /* 1 for sizes, 0 for pads */
} SizeField;

/* Fields are limited to int32 so that no derived size or window bound can overflow. */
static tcc_status check_fields(tcc_context *ctx, const SizeField *fields, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (!in_range(fields[i].value, fields[i].min))
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s must be in %lld..%d (got %lld)",
                            fields[i].name, (long long)fields[i].min, INT32_MAX,
                            (long long)fields[i].value);
    }
    return TCC_OK;
}

static tcc_status check_conv_sizes(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    const SizeField fields[] = {
        {"batch", desc->batch, 1},
        {"height", desc->height, 1},
        {"width", desc->width, 1},
        {"in_channels", desc->in_channels, 1},
        {"out_channels", desc->out_channels, 1},
        {"kernel_h", desc->kernel_h, 1},
        {"kernel_w", desc->kernel_w, 1},
        {"stride_h", desc->stride_h, 1},
        {"stride_w", desc->stride_w, 1},
        {"pad_top", desc->pad_top, 0},
        {"pad_bottom", desc->pad_bottom, 0},
        {"pad_left", desc->pad_left, 0},
        {"pad_right", desc->pad_right, 0},
        {"dilation_h", desc->dilation_h, 1},
        {"dilation_w", desc->dilation_w, 1},
        {"groups", desc->groups, 1},
    };
    return check_fields(ctx, fields, sizeof fields / sizeof fields[0]);
}

static tcc_status check_groups(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    if (desc->in_channels % desc->groups != 0 || desc->out_channels % desc->groups != 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "groups (%lld) must divide in_channels (%lld) and out_channels (%lld)",
                        (long long)desc->groups, (long long)desc->in_channels,
                        (long long)desc->out_channels);
    return TCC_OK;
}

/* The blocked layouts go together and hold whole 16 x 16 blocks of one group. */
static tcc_status check_blocked_layout(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    bool blocked = desc->layout == TCC_LAYOUT_NHWCNC;
    if (blocked != (desc->filter_layout == TCC_FILTER_BLOCKED))
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "filter_layout %s does not go with layout %s: the NHWCnc layout takes "
                        "the BLOCKED filter, and only it does",
                        filter_layout_name(desc->filter_layout), layout_name(desc->layout));
    if (!blocked)
        return TCC_OK;
    const SizeField fields[] = {{"batch", desc->batch, 0},
                                {"in_channels", desc->in_channels, 0},
                                {"out_channels", desc->out_channels, 0}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (fields[i].value % BLOCK != 0)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "%s must be a multiple of %d for the NHWCnc layout (got %lld)",
                            fields[i].name, BLOCK, (long long)fields[i].value);
    }
    if (desc->groups != 1)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "groups must be 1 for the NHWCnc layout (got %lld)",
                        (long long)desc->groups);
    return TCC_OK;
}

/* The dilated window must fit in the padded input at least once along each axis. */
static tcc_status check_window(tcc_context *ctx, const char *kernel, int64_t kernel_value,
                               const char *dilation, int64_t dilation_value, const char *padded,
                               int64_t padded_value)
{
    if (padded_value > INT32_MAX)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s (%lld) must be at most %d", padded,
                        (long long)padded_value, INT32_MAX);
    int64_t span = dilation_value * (kernel_value - 1) + 1;
    if (span > padded_value)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "%s (%lld) with %s (%lld) spans %lld, more than %s (%lld): the output "
                        "is empty",
                        kernel, (long long)kernel_value, dilation, (long long)dilation_value,
                        (long long)span, padded, (long long)padded_value);
    return TCC_OK;
}

static tcc_status check_output(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    tcc_status status = check_window(ctx, "kernel_h", desc->kernel_h, "dilation_h",
                                     desc->dilation_h, "height + pad_top + pad_bottom",
                                     desc->height + desc->pad_top + desc->pad_bottom);
    if (status != TCC_OK)
        return status;
    return check_window(ctx, "kernel_w", desc->kernel_w, "dilation_w", desc->dilation_w,
                        "width + pad_left + pad_right",
                        desc->width + desc->pad_left + desc->pad_right);
}

static tcc_status check_count(tcc_context *ctx, const char *tensor, int64_t count)
{
    if (count > TCI_MAX_TENSOR_ELEMENTS)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "%s has too many elements for 32-bit indexing (%lld, at most %d)", tensor,
                        (long long)count, TCI_MAX_TENSOR_ELEMENTS);
    return TCC_OK;
}

static tcc_status check_element_counts(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    tcc_status status = check_count(ctx, "the input (batch*height*width*in_channels)",
                                    tcc_conv2d_input_elements(desc));
    if (status == TCC_OK)
        status = check_count(ctx, "the filter (out_channels*kernel_h*kernel_w*in_channels/groups)",
                             tcc_conv2d_filter_elements(desc));
    if (status == TCC_OK)
        status = check_count(ctx, "the output (batch*P*Q*out_channels)",
                             tcc_conv2d_output_elements(desc));
    return status;
}

tcc_status tcc_conv2d_validate(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    if (!desc)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "the conv2d descriptor is NULL");
    tcc_status status = check_enums(ctx, desc);
    if (status == TCC_OK)
        status = check_conv_sizes(ctx, desc);
    if (status == TCC_OK)
        status = check_groups(ctx, desc);
    if (status == TCC_OK)
        status = check_blocked_layout(ctx, desc);
    if (status == TCC_OK)
        status = check_output(ctx, desc);
    if (status == TCC_OK)
        status = check_element_counts(ctx, desc);
    if (status == TCC_OK)
        status =
            tci_validate_mma_types(ctx, desc->input_type, desc->accumulate_type, desc->output_type);
    if (status == TCC_OK)
        status = tci_validate_epilogue(ctx, &desc->epilogue, desc->output_type);
    return status;
}

/* ---- element access and the epilogue, shared with the matmul ------------------------------ */

double tci_reference_operand(tcc_dtype type, const void *data, int64_t offset)
{
    switch (type) {
    case TCC_FLOAT16:
        return tcc_f16_to_f32(((const uint16_t *)data)[offset]);
    case TCC_BFLOAT16:
        return tcc_bf16_to_f32(((const uint16_t *)data)[offset]);
    case TCC_FLOAT32:
        return tcc_f32_to_tf32(((const float *)data)[offset]); /* what the MMA reads */
    case TCC_INT8:
        return ((const int8_t *)data)[offset];
    default:
        return tci_reference_value(type, data, offset);
    }
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

/* ---- the conv2d reference ---------------------------------------------------------------- */

/* The offset of a logical index (i, y, x, j) in one of the layouts above: each of i and j
 * contributes i/16*block + i%16*lane, y and x one step each. A layout that does not block a
 * dimension has block = 16*lane, so one formula serves every layout. The input's index is
 * (n, h, w, c), the output's (n, p, q, k), the filter's (k, r, s, c). */
typedef struct Strides {
    int64_t i_block, i_lane, y, x, j_block, j_lane;
} Strides;

static int64_t part(int64_t index, int64_t block, int64_t lane)
{
    return index / BLOCK * block + index % BLOCK * lane;
}

/* Strides of an unblocked layout from the steps of its four logical dimensions. */
static Strides plain_strides(int64_t i, int64_t y, int64_t x, int64_t j)
{
    return (Strides){BLOCK * i, i, y, x, BLOCK * j, j};
}

/* The input (extent_i, Y, X, J) = (N, H, W, C) or the output (N, P, Q, K). */
static Strides activation_strides(tcc_layout layout, int64_t Y, int64_t X, int64_t J)
{
    switch (layout) {
    case TCC_LAYOUT_NCHW:
        return plain_strides(J * Y * X, X, 1, Y * X);
    case TCC_LAYOUT_NHWCNC: {
        int64_t x = J / BLOCK * BLOCK * BLOCK, y = X * x;
        return (Strides){Y * y, BLOCK, y, x, BLOCK * BLOCK, 1};
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
        int64_t lane_block = BLOCK * BLOCK, s = Cg / BLOCK * (K / BLOCK) * lane_block;
        return (Strides){lane_block, 1, S * s, s, K / BLOCK * lane_block, BLOCK};
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
        int64_t k_lane = flat % BLOCK, n_lane = flat / BLOCK % BLOCK;
        int64_t rest = flat / (BLOCK * BLOCK), kblocks = K / BLOCK;
        *k = rest % kblocks * BLOCK + k_lane;
        *q = rest / kblocks % Q;
        *p = rest / (kblocks * Q) % P;
        *n = rest / (kblocks * Q * P) * BLOCK + n_lane;
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
    for (int64_t c = 0; c < cv->group_in; c += BLOCK) {
        int64_t lanes = cv->group_in - c < BLOCK ? cv->group_in - c : BLOCK;
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
