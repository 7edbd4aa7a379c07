/*
 * tcc-conv's own options (shape, layouts, the tutorial's schedule) and how they resolve
 * into a conv2d descriptor together with the options every tool takes (cli_options.c).
 */
#include "conv_options.h"

#include <string.h>

/* ---- setters -------------------------------------------------------------------------- */

/* --pad P | PH,PW | T,B,L,R */
static bool set_pad(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    tcc_conv2d_desc *d = &((ConvOptions *)base)->desc;
    int64_t pads[4];
    int count = 0;
    const char *start = value;
    for (;;) {
        const char *comma = strchr(start, ',');
        size_t len = comma ? (size_t)(comma - start) : strlen(start);
        char number[32];
        if (count == 4 || len >= sizeof number)
            return cli_fail(err, n, "%s: expected P, PH,PW or T,B,L,R, got '%s'", opt->name, value);
        memcpy(number, start, len);
        number[len] = '\0';
        if (!cli_parse_i64(opt->name, number, 0, INT32_MAX, &pads[count++], err, n))
            return false;
        if (!comma)
            break;
        start = comma + 1;
    }
    if (count == 3)
        return cli_fail(err, n, "%s: expected P, PH,PW or T,B,L,R, got '%s'", opt->name, value);
    if (count == 1)
        pads[1] = pads[2] = pads[3] = pads[0];
    if (count == 2) /* PH,PW: top and bottom PH, left and right PW */
        pads[3] = pads[2] = pads[1], pads[1] = pads[0];
    d->pad_top = pads[0], d->pad_bottom = pads[1], d->pad_left = pads[2], d->pad_right = pads[3];
    return true;
}

static const struct {
    const char *name;
    tcc_layout layout;
} layout_names[] = {
    {"nhwc", TCC_LAYOUT_NHWC}, {"nchw", TCC_LAYOUT_NCHW}, {"nhwcnc", TCC_LAYOUT_NHWCNC}};

static const struct {
    const char *name;
    tcc_filter_layout layout;
} filter_layout_names[] = {
    {"krsc", TCC_FILTER_KRSC}, {"kcrs", TCC_FILTER_KCRS}, {"blocked", TCC_FILTER_BLOCKED}};

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

const char *conv_layout_name(tcc_layout layout)
{
    for (size_t i = 0; i < COUNT(layout_names); i++)
        if (layout_names[i].layout == layout)
            return layout_names[i].name;
    return "unknown";
}

const char *conv_filter_layout_name(tcc_filter_layout layout)
{
    for (size_t i = 0; i < COUNT(filter_layout_names); i++)
        if (filter_layout_names[i].layout == layout)
            return filter_layout_names[i].name;
    return "unknown";
}

static bool set_layout(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    ConvOptions *o = base;
    for (size_t i = 0; i < COUNT(layout_names); i++) {
        if (strcmp(value, layout_names[i].name) == 0) {
            o->desc.layout = layout_names[i].layout;
            o->layout_given = true;
            return true;
        }
    }
    return cli_fail(err, n, "%s: unknown layout '%s' (expected nhwc, nchw or nhwcnc)", opt->name,
                    value);
}

static bool set_filter_layout(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    ConvOptions *o = base;
    for (size_t i = 0; i < COUNT(filter_layout_names); i++) {
        if (strcmp(value, filter_layout_names[i].name) == 0) {
            o->desc.filter_layout = filter_layout_names[i].layout;
            o->filter_layout_given = true;
            return true;
        }
    }
    return cli_fail(err, n, "%s: unknown filter layout '%s' (expected krsc, kcrs or blocked)",
                    opt->name, value);
}

/* ---- the tables ------------------------------------------------------------------------- */

/* clang-format off */
#define F(member) offsetof(ConvOptions, member)
#define I64(name_, member_, min_, help_) {.name = name_, .kind = CLI_I64, .offset = F(member_), .min = min_, .help = help_}
#define PAIR(name_, m1_, m2_, min_, sep_, help_) {.name = name_, .kind = CLI_I64_PAIR, .offset = F(m1_), .offset2 = F(m2_), .min = min_, .separator = sep_, .help = help_}
#define FLAG(name_, member_, help_) {.name = name_, .kind = CLI_FLAG, .offset = F(member_), .help = help_}
#define STRING(name_, member_, help_) {.name = name_, .kind = CLI_STRING, .offset = F(member_), .help = help_}
#define CUSTOM(name_, member_, fn_, help_) {.name = name_, .kind = CLI_CUSTOM, .offset = F(member_), .custom = fn_, .help = help_}

static const CliOpt shape_rows[] = {
    CLI_HEADING_ROW("convolution (each option changes only what it names; the rest is the "
                    "tutorial's N=256, 14x14, 256->512, 3x3, s1, p1, or --layer's)"),
    STRING("--layer", layer, "NAME: a layer of layers.csv as the shape (options override it)"),
    FLAG("--list-layers", list_layers, "list the named layers and exit"),
    STRING("--layers-file", layers_file,
           "FILE.csv: each layer of FILE in turn, in this one process (layers.csv's columns: "
           "name,N,H,W,C,K,R,S,stride,pad,dilation,groups; options override each)"),
    I64("--batch", desc.batch, 1, "N: batch size"),
    I64("--height", desc.height, 1, "H: input height"),
    I64("--width", desc.width, 1, "W: input width"),
    I64("--in-channels", desc.in_channels, 1, "C: input channels"),
    I64("--out-channels", desc.out_channels, 1, "K: output channels"),
    PAIR("--kernel", desc.kernel_h, desc.kernel_w, 1, 'x', "RxS or R: filter size"),
    I64("--kernel-h", desc.kernel_h, 1, "R: filter height"),
    I64("--kernel-w", desc.kernel_w, 1, "S: filter width"),
    PAIR("--stride", desc.stride_h, desc.stride_w, 1, ',', "S or SH,SW"),
    CUSTOM("--pad", desc, set_pad, "P, PH,PW or T,B,L,R: zero padding"),
    PAIR("--dilation", desc.dilation_h, desc.dilation_w, 1, ',', "D or DH,DW"),
    I64("--groups", desc.groups, 1, "G: divides C and K; G = C = K is depthwise"),
};

static const CliOpt layout_rows[] = {
    CLI_HEADING_ROW("layouts (with shape options the default is nhwc)"),
    CUSTOM("--layout", desc.layout, set_layout,
           "nhwc|nchw|nhwcnc: input and output (nhwcnc: (N/16, H, W, C/16, 16n, 16c))"),
    CUSTOM("--filter-layout", desc.filter_layout, set_filter_layout,
           "krsc|kcrs|blocked (default: krsc with nhwc, kcrs with nchw, blocked with nhwcnc)"),
};

static const CliOpt schedule_rows[] = {
    CLI_HEADING_ROW("schedule"),
    CUSTOM("--schedule", common.schedule_kind, cli_set_schedule_kind,
           "auto|tutorial|default: TVM's tutorial schedule where it applies, else the "
           "implicit GEMM (auto)"),
    I64("--block-row-warps", tiles.block_row_warps, 1, "N: tutorial: warps of a block along rows"),
    I64("--block-col-warps", tiles.block_col_warps, 1,
        "N: tutorial: warps of a block along columns"),
    I64("--warp-row-tiles", tiles.warp_row_tiles, 1, "N: tutorial: 16x16 tiles of a warp along rows"),
    I64("--warp-col-tiles", tiles.warp_col_tiles, 1,
        "N: tutorial: 16x16 tiles of a warp along columns"),
    I64("--chunk", tiles.chunk, 1, "N: tutorial: 16-channel groups staged per step"),
};
/* clang-format on */

#define ROWS(array, base) ((CliTable){array, sizeof array / sizeof array[0], base})
#define NTABLE 9

int conv_problem_tables(ConvOptions *o, CliTable tables[CONV_PROBLEM_TABLES])
{
    tables[0] = ROWS(shape_rows, o);
    tables[1] = ROWS(layout_rows, o);
    tables[2] = cli_common_table(CLI_GROUP_TYPES, &o->common);
    tables[3] = cli_common_table(CLI_GROUP_EPILOGUE, &o->common);
    return CONV_PROBLEM_TABLES;
}

/* The tables in the order of the help text. */
static void conv_tables(ConvOptions *o, CliTable tables[NTABLE])
{
    CliCommon *c = &o->common;
    conv_problem_tables(o, tables);
    tables[4] = ROWS(schedule_rows, o);
    tables[5] = cli_common_table(CLI_GROUP_SCHEDULE, c);
    tables[6] = cli_common_table(CLI_GROUP_OUTPUT, c);
    tables[7] = cli_common_table(CLI_GROUP_RUN, c);
    tables[8] = cli_common_table(CLI_GROUP_GENERAL, c);
}

/* ---- parsing and resolving -------------------------------------------------------------- */

/* The fields shape options set: CONV_UNSET until given, so that the others can be filled
 * in from --layer or the tutorial's convolution. */
#define NSHAPE 16

static void shape_fields(tcc_conv2d_desc *d, int64_t *fields[NSHAPE])
{
    int64_t *all[NSHAPE] = {&d->batch,        &d->height,     &d->width,      &d->in_channels,
                            &d->out_channels, &d->kernel_h,   &d->kernel_w,   &d->stride_h,
                            &d->stride_w,     &d->pad_top,    &d->pad_bottom, &d->pad_left,
                            &d->pad_right,    &d->dilation_h, &d->dilation_w, &d->groups};
    memcpy(fields, all, sizeof all);
}

void conv_defaults(ConvOptions *o)
{
    memset(o, 0, sizeof *o);
    cli_common_defaults(&o->common);
    tcc_conv2d_desc_init(&o->desc);
    int64_t *fields[NSHAPE];
    shape_fields(&o->desc, fields);
    for (int i = 0; i < NSHAPE; i++)
        *fields[i] = CONV_UNSET;
}

bool conv_parse(int argc, char **argv, ConvOptions *o, char *error, size_t error_size)
{
    conv_defaults(o);
    CliTable tables[NTABLE];
    conv_tables(o, tables);
    return cli_parse(argc, argv, tables, NTABLE, error, error_size);
}

/* The shape defaults: the layer's, or those of the tutorial's convolution. */
static void default_shape(const ConvLayer *layer, tcc_conv2d_desc *shape)
{
    tcc_tutorial_conv2d_desc(shape);
    if (!layer)
        return;
    shape->batch = layer->batch;
    shape->height = layer->height;
    shape->width = layer->width;
    shape->in_channels = layer->in_channels;
    shape->out_channels = layer->out_channels;
    shape->kernel_h = layer->kernel_h;
    shape->kernel_w = layer->kernel_w;
    shape->stride_h = shape->stride_w = layer->stride;
    shape->pad_top = shape->pad_bottom = shape->pad_left = shape->pad_right = layer->pad;
    shape->dilation_h = shape->dilation_w = layer->dilation;
    shape->groups = layer->groups;
}

/* Fills the unset shape fields from `shape`; returns whether any was set. */
static bool fill_shape(tcc_conv2d_desc *d, tcc_conv2d_desc *shape)
{
    int64_t *fields[NSHAPE], *defaults[NSHAPE];
    shape_fields(d, fields);
    shape_fields(shape, defaults);
    bool given = false;
    for (int i = 0; i < NSHAPE; i++) {
        given |= *fields[i] != CONV_UNSET;
        if (*fields[i] == CONV_UNSET)
            *fields[i] = *defaults[i];
    }
    return given;
}

static tcc_filter_layout filter_layout_for(tcc_layout layout)
{
    switch (layout) {
    case TCC_LAYOUT_NCHW:
        return TCC_FILTER_KCRS;
    case TCC_LAYOUT_NHWCNC:
        return TCC_FILTER_BLOCKED;
    case TCC_LAYOUT_NHWC:
        break;
    }
    return TCC_FILTER_KRSC;
}

static void resolve_layouts(ConvOptions *o, bool shape_given)
{
    bool any = shape_given || o->layout_given || o->filter_layout_given;
    if (!o->layout_given)
        o->desc.layout = any ? TCC_LAYOUT_NHWC : TCC_LAYOUT_NHWCNC;
    if (!o->filter_layout_given)
        o->desc.filter_layout = filter_layout_for(o->desc.layout);
}

static void resolve_tiles(ConvOptions *o)
{
    tcc_tutorial_conv2d_params defaults;
    tcc_tutorial_conv2d_params_init(&defaults);
    int64_t *tiles[5] = {&o->tiles.block_row_warps, &o->tiles.block_col_warps,
                         &o->tiles.warp_row_tiles, &o->tiles.warp_col_tiles, &o->tiles.chunk};
    const int64_t fallback[5] = {defaults.block_row_warps, defaults.block_col_warps,
                                 defaults.warp_row_tiles, defaults.warp_col_tiles, defaults.chunk};
    for (int i = 0; i < 5; i++) {
        o->tiles_given |= *tiles[i] != 0;
        if (!*tiles[i])
            *tiles[i] = fallback[i];
    }
}

bool conv_check_options(const ConvOptions *o, char *error, size_t error_size)
{
    if (o->layers_file && o->layer)
        return cli_fail(error, error_size,
                        "--layer and --layers-file: give one (the layers are the file's)");
    if (o->layers_file && o->common.output_path)
        return cli_fail(error, error_size,
                        "-o and --layers-file: one file cannot hold the kernels of several layers");
    return cli_check_common(&o->common, error, error_size);
}

bool conv_resolve(ConvOptions *o, char *error, size_t error_size)
{
    const ConvLayer *layer = NULL;
    if (o->layer && !(layer = conv_find_layer(o->layer)))
        return cli_fail(error, error_size, "--layer: unknown layer '%s' (see --list-layers)",
                        o->layer);
    conv_resolve_layer(o, layer);
    return true;
}

void conv_resolve_layer(ConvOptions *o, const ConvLayer *layer)
{
    tcc_conv2d_desc shape;
    default_shape(layer, &shape);
    bool shape_given = fill_shape(&o->desc, &shape) || layer;
    resolve_layouts(o, shape_given);
    cli_resolve(&o->common);
    o->desc.input_type = o->common.input_type;
    o->desc.accumulate_type = o->common.accumulate_type;
    o->desc.output_type = o->common.output_type;
    o->desc.epilogue = o->common.epilogue;
    resolve_tiles(o);
}

/* Here rather than in tcc_conv.c so that the fuzz target of the command line (test/fuzz) runs
 * the same check. */
int conv_schedule_kind(const ConvOptions *o)
{
    bool knobs = cli_gemm_knobs_given(&o->common);
    CliScheduleKind kind = o->common.schedule_kind;
    if (kind == CLI_SCHEDULE_AUTO && (knobs || o->tiles_given))
        kind = o->tiles_given ? CLI_SCHEDULE_TUTORIAL : CLI_SCHEDULE_DEFAULT;
    if (kind == CLI_SCHEDULE_TUTORIAL && knobs) {
        cli_error("--mma, --block-warps, --warp-tiles, --passes, --fused-passes, --policy, "
                  "--block-order, --stages, --smem and --intrinsic tune the implicit-GEMM "
                  "schedule, not the tutorial's");
        return -1;
    }
    if (kind == CLI_SCHEDULE_DEFAULT && o->tiles_given) {
        cli_error("--block-row-warps, --block-col-warps, --warp-row-tiles, --warp-col-tiles "
                  "and --chunk tune the tutorial's schedule, not the implicit GEMM's");
        return -1;
    }
    return (int)kind;
}

void conv_usage(FILE *out)
{
    ConvOptions o;
    memset(&o, 0, sizeof o);
    CliTable tables[NTABLE];
    conv_tables(&o, tables);
    fputs("usage: tcc-conv [options]\n"
          "\n"
          "Compiles a tensor-core conv2d and writes its loop IR, LLVM IR or PTX; with --run,\n"
          "runs it on the GPU, checks it against a CPU reference and times it. Without\n"
          "options it is TVM's tensor-core tutorial: N=256, 14x14, 256->512 channels, 3x3,\n"
          "stride 1, pad 1, fp16 in, fp32 out, NHWCnc, with the tutorial's schedule. Any\n"
          "shape, stride, padding, dilation, groups, layout, type and fused epilogue compiles\n"
          "as an implicit GEMM with a default schedule (--schedule, --mma, ... tune it).\n"
          "With --run, nothing is written unless --emit or -o asks for it.\n"
          "\n"
          "options (VALUE as --name=VALUE or --name VALUE):\n",
          out);
    cli_print_options(out, tables, NTABLE);
    fputs("\n--layers-file runs each layer of the file in turn, going on after one fails; with\n"
          "--format json each is one line, with csv one row, in the file's order. The text\n"
          "format puts a line 'layer: NAME' before each.\n",
          out);
    cli_print_exit_codes(out, true);
    fputs("  With several layers (--layers-file), the worst of theirs: 4, then 5, 1, 2, 3.\n", out);
}

tcc_status conv_schedule_tutorial(tcc_context *ctx, const ConvOptions *options, tcc_func **func,
                                  tcc_tutorial_conv2d *conv)
{
    tcc_status status = tcc_func_create(ctx, "conv2d", func);
    if (status == TCC_OK)
        status = tcc_tutorial_conv2d_define(*func, &options->desc, conv);
    if (status == TCC_OK)
        status = tcc_schedule_create(*func, 1, &conv->output);
    if (status == TCC_OK)
        status = tcc_tutorial_conv2d_schedule(*func, conv, &options->tiles);
    return status;
}
