/*
 * tcc-conv's command line: what the user asked for, parsed and range-checked, before
 * any library call is made.
 */
#ifndef TCC_TOOLS_CONV_OPTIONS_H
#define TCC_TOOLS_CONV_OPTIONS_H

#include "tcc/tcc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum ConvEmit { CONV_EMIT_LOOPS, CONV_EMIT_LLVM, CONV_EMIT_PTX } ConvEmit;

typedef enum ConvCheck {
    CONV_CHECK_AUTO, /* full below a million outputs, sampled above */
    CONV_CHECK_FULL,
    CONV_CHECK_SAMPLED,
    CONV_CHECK_NONE,
} ConvCheck;

typedef struct ConvOptions {
    tcc_conv2d_desc desc; /* the seed convolution, with the given shape options applied */
    tcc_conv2d_tutorial_params tiles;
    ConvEmit emit;
    bool emit_given;         /* --emit or -o: with --run, emit only when asked to */
    const char *output_path; /* NULL: stdout */
    const char *print_after; /* a pass name or "all"; checked against tcc_pass_names() */
    const char *arch_name;   /* NULL: sm_80, or the device's arch with --run */
    bool help, version, list_passes;
    bool run;
    int runs, warmup, threads;
    ConvCheck check;
    uint64_t seed;
    bool seed_given;
} ConvOptions;

/* Parses argv into options (defaults first). On a bad argument, writes a one-line
 * message naming the option into `error` and returns false. */
bool tcc_cli_parse(int argc, char **argv, ConvOptions *options, char *error, size_t error_size);
void tcc_cli_usage(FILE *out);

/* Runs, checks and times the built kernel on an open device (conv_run.c). Prints the
 * results to stdout; returns 0 on success, 1 on any failure (message already printed). */
int tcc_cli_run(tcc_context *ctx, tcc_device *device, const tcc_kernel *kernel,
                const ConvOptions *options);

/* Prints "tcc-conv: error: <message>" as one line on stderr. */
void tcc_cli_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
