/*
 * The fuzz targets' shared helpers (fuzz_support.h).
 */
#include "fuzz_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool fuzz_split_argv(const uint8_t *data, size_t size, const char *program, FuzzArgv *out)
{
    *out = (FuzzArgv){0};
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n' || data[i] == '\0';
    out->text = malloc(size + 1);
    out->argv = calloc(lines + 2, sizeof *out->argv);
    if (!out->text || !out->argv) {
        fuzz_free_argv(out);
        return false;
    }
    memcpy(out->text, data, size);
    out->text[size] = '\0';
    out->argv[out->argc++] = (char *)program;
    /* A final newline ends the last argument; it does not start an empty one. */
    size_t end = size && (data[size - 1] == '\n' || data[size - 1] == '\0') ? size - 1 : size;
    char *start = out->text;
    for (size_t i = 0; i <= end && size; i++) {
        if (i == end || out->text[i] == '\n' || out->text[i] == '\0') {
            out->text[i] = '\0';
            out->argv[out->argc++] = start;
            start = out->text + i + 1;
        }
    }
    out->argv[out->argc] = NULL;
    return true;
}

void fuzz_free_argv(FuzzArgv *args)
{
    free(args->argv);
    free(args->text);
    *args = (FuzzArgv){0};
}

void fuzz_require_message(const char *what, const char *message)
{
    if (!message || !*message) {
        fprintf(stderr, "fuzz: %s failed with no message\n", what);
        __builtin_trap();
    }
}

tcc_status fuzz_check_status(const tcc_context *ctx, const char *call, tcc_status status)
{
    if (status != TCC_OK)
        fuzz_require_message(call, tcc_last_error(ctx));
    return status;
}

FILE *fuzz_null_stream(void)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    if (!sink)
        __builtin_trap(); /* not a finding, but the target cannot run without it */
    return sink;
}

uint32_t fuzz_u32(FuzzBytes *in, int bytes)
{
    uint32_t value = 0;
    for (int i = 0; i < bytes; i++) {
        uint8_t byte = in->pos < in->size ? in->data[in->pos++] : 0;
        value = value << 8 | byte;
    }
    return value;
}

int64_t fuzz_range(FuzzBytes *in, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    int bytes = span <= 0x100 ? 1 : span <= 0x10000 ? 2 : 4;
    uint64_t value = fuzz_u32(in, bytes);
    return lo + (int64_t)(span ? value % span : value);
}

bool fuzz_bool(FuzzBytes *in)
{
    return fuzz_u32(in, 1) & 1;
}

int64_t fuzz_pick(FuzzBytes *in, const int64_t *values, size_t count)
{
    return values[fuzz_range(in, 0, (int64_t)count - 1)];
}

double fuzz_double(FuzzBytes *in)
{
    static const double awkward[] = {
        0.0,    1.0,   -1.0,  0.5,      2.0,          -0.25,        6.0,
        1e10,   -1e10, 1e300, -1e300,   2147483647.0, 2147483648.0, -2147483649.0,
        1e-310, 3.5,   NAN,   INFINITY, -INFINITY,    -0.0,
    };
    uint32_t choice = fuzz_u32(in, 1);
    if (choice < 240)
        return awkward[choice % FUZZ_COUNT(awkward)];
    uint64_t bits = (uint64_t)fuzz_u32(in, 4) << 32 | fuzz_u32(in, 4);
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}
