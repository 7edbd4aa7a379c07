/*
 * tcc-opt's command line, apart from its main so that the fuzz target of the parser
 * (test/fuzz) reads argv exactly as the tool does.
 */
#ifndef TOOLS_OPT_OPTIONS_H
#define TOOLS_OPT_OPTIONS_H

#include "cli.h"

typedef struct OptOptions {
    CliCommon common;   /* -o, --print-after, --list-passes, --help, --version */
    const char *input;  /* NULL or "-": standard input */
    const char *passes; /* "a,b,c" */
    int auto_unroll_max_step;
} OptOptions;

/* Parses argv into options (defaults first). On a bad argument, writes a one-line message
 * naming the option into `error` and returns false. */
bool opt_parse(int argc, char **argv, OptOptions *options, char *error, size_t error_size);
void opt_usage(FILE *out);

#endif
