/*
 * tcc-conv's command line: the convolution's shape, layouts and schedule, on top of the
 * options every tool takes (cli.h), parsed and resolved into a descriptor before any
 * library call is made.
 */
#ifndef TOOLS_CONV_OPTIONS_H
#define TOOLS_CONV_OPTIONS_H

#include "cli.h"

typedef struct ConvOptions {
    CliCommon common;
    /* The convolution. Shape fields hold CONV_UNSET until given; conv_resolve takes
     * the rest from --layer or the tutorial's convolution, and the types and epilogue from
     * `common`. */
    tcc_conv2d_desc desc;
    bool layout_given, filter_layout_given;
    tcc_tutorial_conv2d_params tiles; /* zero until given; --schedule tutorial's tiles */
    bool tiles_given;                 /* set by conv_resolve */
    const char *layer;
    const char *layers_file;
    bool list_layers;
} ConvOptions;

#define CONV_UNSET (-1)

/* The defaults conv_parse starts from: shape fields CONV_UNSET, the common defaults. */
void conv_defaults(ConvOptions *options);
/* The option tables of the problem alone (shape, layouts, types, epilogue), for a tool that
 * takes a convolution but not tcc-conv's schedule, output and run options (tcc-tune). */
#define CONV_PROBLEM_TABLES 4
int conv_problem_tables(ConvOptions *options, CliTable tables[CONV_PROBLEM_TABLES]);
/* Parses argv into options (defaults first). On a bad argument, writes a one-line
 * message naming the option into `error` and returns false. */
bool conv_parse(int argc, char **argv, ConvOptions *options, char *error, size_t error_size);
/* After parsing: the layer, the shape defaults, the layouts, types, epilogue and tiles.
 * Without any shape or layout option (or --layer), the convolution is the tutorial's in its
 * NHWCnc layout; with one, NHWC unless --layout says otherwise, and the filter layout that
 * goes with the layout. Returns false with a message (an unknown layer). */
bool conv_resolve(ConvOptions *options, char *error, size_t error_size);
/* The options that contradict each other (--layer with --layers-file, -o with several
 * layers, and cli_check_common's): false with a message. */
bool conv_check_options(const ConvOptions *options, char *error, size_t error_size);
/* --schedule, made definite by the options given (a CliScheduleKind): tutorial tiles ask for
 * the tutorial's schedule, implicit-GEMM knobs for the default one. Returns -1 after printing
 * the error when both are given, or one against the --schedule named. */
int conv_schedule_kind(const ConvOptions *options);
/* The tutorial's definition of the convolution and its schedule with the options' tiles, in a
 * new function *func of ctx (TCC_ERROR_UNSUPPORTED: a convolution the tutorial cannot take). */
tcc_status conv_schedule_tutorial(tcc_context *ctx, const ConvOptions *options, tcc_func **func,
                                  tcc_tutorial_conv2d *conv);
void conv_usage(FILE *out);
/* The names --layout and --filter-layout take ("nhwc", "krsc"). */
const char *conv_layout_name(tcc_layout layout);
const char *conv_filter_layout_name(tcc_filter_layout layout);

/* ---- the named layers of ../shared/layers.csv (conv_layers.c) --------------------------- */

typedef struct ConvLayer {
    const char *name;
    int64_t batch, height, width, in_channels, out_channels, kernel_h, kernel_w;
    int64_t stride, pad, dilation, groups;
} ConvLayer;

/* The layer called `name`, or NULL. */
const ConvLayer *conv_find_layer(const char *name);
/* One line a layer: its name and shape. */
void conv_list_layers(FILE *out);
/* conv_resolve with `layer` (NULL: none) as the shape's defaults instead of --layer's. */
void conv_resolve_layer(ConvOptions *options, const ConvLayer *layer);

/* The layers of a file in layers.csv's format (--layers-file). */
typedef struct ConvLayerList {
    ConvLayer *layers;
    int count;
} ConvLayerList;

/* Reads `path`: a header naming the columns name,N,H,W,C,K,R,S,stride,pad,dilation,groups
 * (in any order), then a layer a line; blank lines and lines starting with '#' are skipped.
 * On a malformed file, writes one line "FILE:LINE: what is wrong" into `error` and returns
 * false. Free the list with conv_free_layers. */
bool conv_read_layers(const char *path, ConvLayerList *list, char *error, size_t error_size);
void conv_free_layers(ConvLayerList *list);

#endif
