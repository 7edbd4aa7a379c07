/*
 * The option-table parser of tcc-conv and tcc-matmul. Every option is a row of a table,
 * so the parser, the error messages and the help text cannot disagree about what exists.
 * Values come as `--name=value` or `--name value`; a bad one stops parsing with a message
 * that names the option, before the library is touched.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sizes beyond int32 are no problem anyone runs, and keep products from overflowing. */
#define SIZE_MAX_VALUE INT32_MAX
/* Counts (runs, threads, tiles) beyond this are typing mistakes. */
#define COUNT_MAX_VALUE 1000000

bool cli_fail(char *err, size_t n, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(err, n, format, args);
    va_end(args);
    return false;
}

void *cli_field(void *base, size_t offset)
{
    return (char *)base + offset;
}

/* A decimal integer in [min, max], all of `text` and nothing else. */
bool cli_parse_i64(const char *name, const char *text, int64_t min, int64_t max, int64_t *out,
                   char *err, size_t n)
{
    const char *what = min > 0 ? "a positive integer" : "a non-negative integer";
    char *end = NULL;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    bool digits = *text && (*text == '-' || *text == '+' || (*text >= '0' && *text <= '9'));
    if (!digits || end == text || *end != '\0')
        return cli_fail(err, n, "%s: expected %s, got '%s'", name, what, text);
    if (value < min)
        return cli_fail(err, n, "%s: expected %s, got '%s'", name, what, text);
    if (errno == ERANGE || value > max)
        return cli_fail(err, n, "%s: '%s' is too large (at most %" PRId64 ")", name, text, max);
    *out = value;
    return true;
}

/* A finite decimal number, all of `text`. */
bool cli_parse_double(const char *name, const char *text, double *out, char *err, size_t n)
{
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end);
    if (!*text || end == text || *end != '\0' || errno == ERANGE || !isfinite(value))
        return cli_fail(err, n, "%s: expected a finite number, got '%s'", name, text);
    *out = value;
    return true;
}

/* "A" or "A<sep>B" into two values (B = A when absent). */
static bool parse_pair(const CliOpt *opt, const char *value, int64_t max, int64_t *a, int64_t *b,
                       char *err, size_t n)
{
    char first[64];
    const char *sep = strchr(value, opt->separator);
    size_t len = sep ? (size_t)(sep - value) : strlen(value);
    bool ok = len < sizeof first;
    if (ok) {
        memcpy(first, value, len);
        first[len] = '\0';
        ok = cli_parse_i64(opt->name, first, opt->min, max, a, err, n) &&
             (!sep || cli_parse_i64(opt->name, sep + 1, opt->min, max, b, err, n));
    }
    if (!ok) {
        if (len < sizeof first && strstr(err, "too large"))
            return false; /* that message already says what is wrong */
        return cli_fail(err, n, "%s: expected %s or two joined by '%c', got '%s'", opt->name,
                        opt->min > 0 ? "a positive integer" : "a non-negative integer",
                        opt->separator, value);
    }
    if (!sep)
        *b = *a;
    return true;
}

static bool apply(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    int64_t number, second;
    switch (opt->kind) {
    case CLI_I64:
        if (!cli_parse_i64(opt->name, value, opt->min, SIZE_MAX_VALUE, &number, err, n))
            return false;
        *(int64_t *)cli_field(base, opt->offset) = number;
        return true;
    case CLI_INT:
        if (!cli_parse_i64(opt->name, value, opt->min, COUNT_MAX_VALUE, &number, err, n))
            return false;
        *(int *)cli_field(base, opt->offset) = (int)number;
        return true;
    case CLI_I64_PAIR:
        if (!parse_pair(opt, value, SIZE_MAX_VALUE, &number, &second, err, n))
            return false;
        *(int64_t *)cli_field(base, opt->offset) = number;
        *(int64_t *)cli_field(base, opt->offset2) = second;
        return true;
    case CLI_INT_PAIR:
        if (!parse_pair(opt, value, COUNT_MAX_VALUE, &number, &second, err, n))
            return false;
        *(int *)cli_field(base, opt->offset) = (int)number;
        *(int *)cli_field(base, opt->offset2) = (int)second;
        return true;
    case CLI_DOUBLE:
        return cli_parse_double(opt->name, value, (double *)cli_field(base, opt->offset), err, n);
    case CLI_FLAG:
        *(bool *)cli_field(base, opt->offset) = true;
        return true;
    case CLI_STRING:
        if (!*value)
            return cli_fail(err, n, "%s: expected a value", opt->name);
        *(const char **)cli_field(base, opt->offset) = value;
        return true;
    case CLI_CUSTOM:
        return opt->custom(opt, value, base, err, n);
    case CLI_HEADING:
        break;
    }
    return cli_fail(err, n, "%s: internal error", opt->name);
}

/* The row named name[0..len) and the base of its table, or NULL. */
static const CliOpt *find_option(const CliTable *tables, int ntable, const char *name, size_t len,
                                 void **base)
{
    for (int t = 0; t < ntable; t++) {
        for (size_t i = 0; i < tables[t].count; i++) {
            const CliOpt *opt = &tables[t].rows[i];
            if (opt->kind != CLI_HEADING && strlen(opt->name) == len &&
                strncmp(opt->name, name, len) == 0) {
                *base = tables[t].base;
                return opt;
            }
        }
    }
    return NULL;
}

/* Splits "--name=value" (or "-oFILE"); finds the option and, if it takes one, its value
 * (from the same word or the next). Returns the index of the last word it used, or -1. */
static int parse_one(int argc, char **argv, int i, const CliTable *tables, int ntable, char *err,
                     size_t n)
{
    const char *word = argv[i];
    const char *eq = strchr(word, '=');
    size_t len = eq ? (size_t)(eq - word) : strlen(word);
    const char *value = eq ? eq + 1 : NULL;
    if (strcmp(word, "-h") == 0)
        word = "--help", len = strlen(word);
    else if (strncmp(word, "-o", 2) == 0 && word[2] && word[2] != '=')
        len = 2, value = word + 2;
    void *base = NULL;
    /* A word that is not an option is the tool's operand, given once (its row is named ""). */
    if (word[0] != '-' || strcmp(word, "-") == 0) {
        const CliOpt *operand = find_option(tables, ntable, "", 0, &base);
        if (operand && !*(const char **)cli_field(base, operand->offset))
            return apply(operand, word, base, err, n) ? i : -1;
        cli_fail(err, n, "unexpected argument '%s' (see --help)", word);
        return -1;
    }
    const CliOpt *opt = find_option(tables, ntable, word, len, &base);
    /* Long options take one dash as well as two, as LLVM's tools do: -passes=a,b. */
    char dashed[64];
    if (!opt && word[1] != '-' && len + 2 < sizeof dashed) {
        snprintf(dashed, sizeof dashed, "-%.*s", (int)len, word);
        opt = find_option(tables, ntable, dashed, len + 1, &base);
    }
    if (!opt) {
        cli_fail(err, n, "unknown option '%.*s' (see --help)", (int)len, word);
        return -1;
    }
    if (opt->kind == CLI_FLAG) {
        if (value) {
            cli_fail(err, n, "%s: takes no value", opt->name);
            return -1;
        }
    } else if (!value) {
        if (i + 1 >= argc) {
            cli_fail(err, n, "%s: missing value", opt->name);
            return -1;
        }
        value = argv[++i];
    }
    return apply(opt, value, base, err, n) ? i : -1;
}

bool cli_parse(int argc, char **argv, const CliTable *tables, int ntable, char *err, size_t n)
{
    err[0] = '\0';
    for (int i = 1; i < argc; i++) {
        i = parse_one(argc, argv, i, tables, ntable, err, n);
        if (i < 0)
            return false;
    }
    return true;
}

void cli_print_options(FILE *out, const CliTable *tables, int ntable)
{
    for (int t = 0; t < ntable; t++) {
        for (size_t i = 0; i < tables[t].count; i++) {
            const CliOpt *opt = &tables[t].rows[i];
            char described[256];
            if (opt->describe)
                opt->describe(described, sizeof described);
            if (!*opt->name)
                continue; /* the operand: the usage line names it */
            if (opt->kind == CLI_HEADING)
                fprintf(out, "\n%s:\n", opt->name);
            else
                fprintf(out, "  %-22s %s\n", opt->name, opt->describe ? described : opt->help);
        }
    }
}

void cli_print_exit_codes(FILE *out, bool runs)
{
    fputs("\nexit status:\n"
          "  0  success\n"
          "  1  any other error: writing the output, out of memory, an internal error",
          out);
    fputs(runs ? ", the\n     driver failing after the device opened\n" : "\n", out);
    fputs("  2  usage: an unknown option, a bad or contradictory value, an input file that\n"
          "     cannot be read or is malformed, a problem the library calls invalid",
          out);
    fputs(runs ? ", a\n     --device that is not there\n" : "\n", out);
    fputs("  3  unsupported: valid, but not something tcc compiles (the problem's form, the\n"
          "     types on the arch, a schedule beyond the target's or the device's limits)\n",
          out);
    if (runs)
        fputs("  4  a failed check (--run): results beyond the tolerance, or outputs unwritten\n",
              out);
    fprintf(out, "  5  no GPU: %s without an NVIDIA driver or device\n",
            runs ? "--run or --arch native" : "--arch native");
}
