/*
 * What the fuzz targets share: splitting an input into argv, reading fuzzed fields from
 * the input's bytes, and the invariant every target asserts of the library: a call either
 * succeeds or fails with a message. A broken invariant is a finding, so it traps, which
 * libFuzzer reports as a crash with the input that caused it.
 */
#ifndef TCC_FUZZ_SUPPORT_H
#define TCC_FUZZ_SUPPORT_H

#include "tcc/tcc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The tool's name in argv[0], then the input's lines (a NUL byte ends a line too), one
 * argument each. */
typedef struct FuzzArgv {
    int argc;
    char **argv; /* argv[argc] is NULL, as main's */
    char *text;  /* the lines' storage */
} FuzzArgv;

/* False when out of memory (the input is then skipped). */
bool fuzz_split_argv(const uint8_t *data, size_t size, const char *program, FuzzArgv *out);
void fuzz_free_argv(FuzzArgv *args);

/* Traps (a finding) when `message` is NULL or empty: every failure must say why. */
void fuzz_require_message(const char *what, const char *message);
/* Traps when a library call failed with no message; returns status unchanged. */
tcc_status fuzz_check_status(const tcc_context *ctx, const char *call, tcc_status status);

/* A sink for what the tools would print (help text, layer lists): /dev/null, opened once,
 * so the printing code runs without filling the fuzzer's output. */
FILE *fuzz_null_stream(void);

/* Fuzzed fields, read from the front of the input; past its end every read gives 0. */
typedef struct FuzzBytes {
    const uint8_t *data;
    size_t size, pos;
} FuzzBytes;

uint32_t fuzz_u32(FuzzBytes *in, int bytes);
/* A value in [lo, hi]. */
int64_t fuzz_range(FuzzBytes *in, int64_t lo, int64_t hi);
bool fuzz_bool(FuzzBytes *in);
/* One of values[0..count). */
int64_t fuzz_pick(FuzzBytes *in, const int64_t *values, size_t count);
/* A double from a table of awkward values (0, 1, NaN, infinities, 1e300, 2^31, ...) or, now
 * and then, any 64 bits. */
double fuzz_double(FuzzBytes *in);

#define FUZZ_COUNT(array) (sizeof(array) / sizeof((array)[0]))

#endif
