/*
 * The conv2d operator's descriptor: defaults, output shape, FLOPs, element counts and
 * validation. Its implicit GEMM is conv2d_gemm.c's; its CPU reference reference/conv2d.c's.
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
#include "ops/ops.h"

#include <stdbool.h>
#include <stdint.h>

void tcc_conv2d_desc_init_size(tcc_conv2d_desc *desc, size_t size)
{
    tcc_conv2d_desc defaults = {
        .size = sizeof(tcc_conv2d_desc),
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
        .epilogue = tci_default_epilogue(),
    };
    tci_init_struct(desc, size, &defaults, sizeof defaults, sizeof defaults);
}

/* The symbol a program built before the macro calls: the first release's size. */
void(tcc_conv2d_desc_init)(tcc_conv2d_desc *desc)
{
    tcc_conv2d_desc_init_size(desc, sizeof *desc);
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
    return TCI_KNOWN_SIZE(tcc_conv2d_desc, desc)
               ? out_extent(desc->height, desc->kernel_h, desc->stride_h, desc->pad_top,
                            desc->pad_bottom, desc->dilation_h)
               : 0;
}

int64_t tcc_conv2d_out_width(const tcc_conv2d_desc *desc)
{
    return TCI_KNOWN_SIZE(tcc_conv2d_desc, desc)
               ? out_extent(desc->width, desc->kernel_w, desc->stride_w, desc->pad_left,
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
    if (!TCI_KNOWN_SIZE(tcc_conv2d_desc, desc))
        return 0.0;
    return 2.0 * (double)desc->batch * (double)desc->out_channels *
           (double)tcc_conv2d_out_height(desc) * (double)tcc_conv2d_out_width(desc) *
           (double)group_channels(desc) * (double)desc->kernel_h * (double)desc->kernel_w;
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
    return TCI_KNOWN_SIZE(tcc_conv2d_desc, desc)
               ? product4(desc->batch, desc->height, desc->width, desc->in_channels)
               : 0;
}

int64_t tcc_conv2d_filter_elements(const tcc_conv2d_desc *desc)
{
    return TCI_KNOWN_SIZE(tcc_conv2d_desc, desc)
               ? product4(desc->out_channels, desc->kernel_h, desc->kernel_w, group_channels(desc))
               : 0;
}

int64_t tcc_conv2d_output_elements(const tcc_conv2d_desc *desc)
{
    return TCI_KNOWN_SIZE(tcc_conv2d_desc, desc)
               ? product4(desc->batch, tcc_conv2d_out_height(desc), tcc_conv2d_out_width(desc),
                          desc->out_channels)
               : 0;
}

const char *tci_conv2d_layout_name(tcc_layout layout)
{
    static const char *const names[] = {"NHWC", "NCHW", "NHWCnc"};
    return layout >= TCC_LAYOUT_NHWC && layout <= TCC_LAYOUT_NHWCNC ? names[layout] : "unknown";
}

const char *tci_conv2d_filter_layout_name(tcc_filter_layout layout)
{
    static const char *const names[] = {"KRSC", "KCRS", "blocked"};
    return layout >= TCC_FILTER_KRSC && layout <= TCC_FILTER_BLOCKED ? names[layout] : "unknown";
}

static tcc_status validate_enums(tcc_context *ctx, const tcc_conv2d_desc *desc)
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
static tcc_status validate_fields(tcc_context *ctx, const SizeField *fields, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (!in_range(fields[i].value, fields[i].min))
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s must be in %lld..%d (got %lld)",
                            fields[i].name, (long long)fields[i].min, INT32_MAX,
                            (long long)fields[i].value);
    }
    return TCC_OK;
}

static tcc_status validate_conv_sizes(tcc_context *ctx, const tcc_conv2d_desc *desc)
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
    return validate_fields(ctx, fields, sizeof fields / sizeof fields[0]);
}

static tcc_status validate_groups(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    if (desc->in_channels % desc->groups != 0 || desc->out_channels % desc->groups != 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "groups (%lld) must divide in_channels (%lld) and out_channels (%lld)",
                        (long long)desc->groups, (long long)desc->in_channels,
                        (long long)desc->out_channels);
    return TCC_OK;
}

/* The blocked layouts go together and hold whole 16 x 16 blocks of one group. */
static tcc_status validate_blocked_layout(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    bool blocked = desc->layout == TCC_LAYOUT_NHWCNC;
    if (blocked != (desc->filter_layout == TCC_FILTER_BLOCKED))
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "filter_layout %s does not go with layout %s: the NHWCnc layout takes "
                        "the blocked filter, and only it does",
                        tci_conv2d_filter_layout_name(desc->filter_layout),
                        tci_conv2d_layout_name(desc->layout));
    if (!blocked)
        return TCC_OK;
    const SizeField fields[] = {{"batch", desc->batch, 0},
                                {"in_channels", desc->in_channels, 0},
                                {"out_channels", desc->out_channels, 0}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (fields[i].value % TCI_LAYOUT_BLOCK != 0)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "%s must be a multiple of %d for the NHWCnc layout (got %lld)",
                            fields[i].name, TCI_LAYOUT_BLOCK, (long long)fields[i].value);
    }
    if (desc->groups != 1)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "groups must be 1 for the NHWCnc layout (got %lld)",
                        (long long)desc->groups);
    return TCC_OK;
}

/* The dilated window must fit in the padded input at least once along each axis. */
static tcc_status validate_window(tcc_context *ctx, const char *kernel, int64_t kernel_value,
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

static tcc_status validate_output(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    tcc_status status = validate_window(ctx, "kernel_h", desc->kernel_h, "dilation_h",
                                        desc->dilation_h, "height + pad_top + pad_bottom",
                                        desc->height + desc->pad_top + desc->pad_bottom);
    if (status != TCC_OK)
        return status;
    return validate_window(ctx, "kernel_w", desc->kernel_w, "dilation_w", desc->dilation_w,
                           "width + pad_left + pad_right",
                           desc->width + desc->pad_left + desc->pad_right);
}

static tcc_status validate_count(tcc_context *ctx, const char *tensor, int64_t count)
{
    if (count > TCI_MAX_TENSOR_ELEMENTS)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "%s has too many elements for 32-bit indexing (%lld, at most %d)", tensor,
                        (long long)count, TCI_MAX_TENSOR_ELEMENTS);
    return TCC_OK;
}

static tcc_status validate_element_counts(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    tcc_status status = validate_count(ctx, "the input (batch*height*width*in_channels)",
                                       tcc_conv2d_input_elements(desc));
    if (status == TCC_OK)
        status =
            validate_count(ctx, "the filter (out_channels*kernel_h*kernel_w*in_channels/groups)",
                           tcc_conv2d_filter_elements(desc));
    if (status == TCC_OK)
        status = validate_count(ctx, "the output (batch*P*Q*out_channels)",
                                tcc_conv2d_output_elements(desc));
    return status;
}

tcc_status tcc_conv2d_validate(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    if (!desc)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "the conv2d descriptor is NULL");
    tcc_status status = TCI_CHECK_SIZE(ctx, "conv2d", tcc_conv2d_desc, desc);
    if (status == TCC_OK)
        status = validate_enums(ctx, desc);
    if (status == TCC_OK)
        status = validate_conv_sizes(ctx, desc);
    if (status == TCC_OK)
        status = validate_groups(ctx, desc);
    if (status == TCC_OK)
        status = validate_blocked_layout(ctx, desc);
    if (status == TCC_OK)
        status = validate_output(ctx, desc);
    if (status == TCC_OK)
        status = validate_element_counts(ctx, desc);
    if (status == TCC_OK)
        status = tci_validate_elementwise(ctx, desc->input_type, desc->accumulate_type,
                                          desc->output_type, &desc->epilogue);
    return status;
}
