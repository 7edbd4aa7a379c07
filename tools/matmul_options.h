/*
 * tcc-matmul's command line: the product's shape and operand layouts, on top of the
 * options every tool takes (cli.h).
 */
#ifndef TOOLS_MATMUL_OPTIONS_H
#define TOOLS_MATMUL_OPTIONS_H

#include "cli.h"

typedef struct MatmulOptions {
    CliCommon common;
    tcc_matmul_desc desc; /* types and epilogue from `common` after matmul_resolve */
} MatmulOptions;

/* Parses argv into options (defaults first: a 1024 x 1024 x 1024 product). On a bad
 * argument, writes a one-line message naming the option into `error` and returns false. */
bool matmul_parse(int argc, char **argv, MatmulOptions *options, char *error, size_t error_size);
/* After parsing: the types, the epilogue and the seed. */
void matmul_resolve(MatmulOptions *options);
/* The elements of C, batch * m * n, saturated at INT64_MAX: the sizes are not validated yet
 * when main computes it, and three of up to 2^31 - 1 overflow int64. */
int64_t matmul_outputs(const tcc_matmul_desc *desc);
void matmul_usage(FILE *out);

#endif
