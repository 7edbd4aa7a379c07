/*
 * tcc-conv's argument parser. Every option is a row of one table, so the parser, the
 * error messages and the help text cannot disagree about what exists. Values come as
 * `--name=value` or `--name value`; a bad one stops parsing with a message that names
 * the option, before the library is touched.
 */
#include "conv_options.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Sizes beyond int32 are no convolution anyone runs, and keep products from overflowing. */
#define SIZE_MAX_VALUE INT32_MAX

typedef enum OptKind {
    OPT_I64,    /* one int64 field, >= min */
    OPT_INT,    /* one int field, >= min */
    OPT_PAIR,   /* two int64 fields: "A" (both) or "A<sep>B" */
    OPT_FLAG,   /* a bool field set to true; takes no value */
    OPT_STRING, /* a const char * field */
    OPT_CUSTOM, /* parsed by `custom` */
} OptKind;

typedef struct Opt Opt;
struct Opt {
    const char *name;
    OptKind kind;
    size_t offset, offset2; /* the field(s) in ConvOptions */
    int64_t min;
    char separator; /* OPT_PAIR */
    bool (*custom)(const Opt *opt, const char *value, ConvOptions *o, char *err, size_t n);
    const char *help;
};

static bool fail(char *err, size_t n, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(char *err, size_t n, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(err, n, format, args);
    va_end(args);
    return false;
}

/* A decimal integer in [min, max], all of `text` and nothing else. */
static bool parse_i64(const char *name, const char *text, int64_t min, int64_t max, int64_t *out,
                      char *err, size_t n)
{
    const char *what = min > 0 ? "a positive integer" : "a non-negative integer";
    char *end = NULL;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    bool digits = *text && (*text == '-' || *text == '+' || (*text >= '0' && *text <= '9'));
    if (!digits || end == text || *end != '\0')
        return fail(err, n, "%s: expected %s, got '%s'", name, what, text);
    if (value < min)
        return fail(err, n, "%s: expected %s, got '%s'", name, what, text);
    if (errno == ERANGE || value > max)
        return fail(err, n, "%s: '%s' is too large (at most %" PRId64 ")", name, text, max);
    *out = value;
    return true;
}

static void *field(ConvOptions *o, size_t offset)
{
    return (char *)o + offset;
}

static bool set_pair(const Opt *opt, const char *value, ConvOptions *o, char *err, size_t n)
{
    char first[64];
    const char *sep = strchr(value, opt->separator);
    size_t len = sep ? (size_t)(sep - value) : strlen(value);
    int64_t a = 0, b = 0;
    bool ok = len < sizeof first;
    if (ok) {
        memcpy(first, value, len);
        first[len] = '\0';
        ok = parse_i64(opt->name, first, opt->min, SIZE_MAX_VALUE, &a, err, n) &&
             (!sep || parse_i64(opt->name, sep + 1, opt->min, SIZE_MAX_VALUE, &b, err, n));
    }
    if (!ok) {
        if (len < sizeof first && strstr(err, "too large"))
            return false; /* that message already says what is wrong */
        return fail(err, n, "%s: expected %s or two joined by '%c', got '%s'", opt->name,
                    opt->min > 0 ? "a positive integer" : "a non-negative integer", opt->separator,
                    value);
    }
    *(int64_t *)field(o, opt->offset) = a;
    *(int64_t *)field(o, opt->offset2) = sep ? b : a;
    return true;
}

static bool set_emit(const Opt *opt, const char *value, ConvOptions *o, char *err, size_t n)
{
    static const struct {
        const char *name;
        ConvEmit emit;
    } kinds[] = {{"loops", CONV_EMIT_LOOPS}, {"llvm", CONV_EMIT_LLVM}, {"ptx", CONV_EMIT_PTX}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(value, kinds[i].name) == 0) {
            o->emit = kinds[i].emit;
            o->emit_given = true;
            return true;
        }
    }
    return fail(err, n, "%s: unknown kind '%s' (expected loops, llvm or ptx)", opt->name, value);
}

static bool set_check(const Opt *opt, const char *value, ConvOptions *o, char *err, size_t n)
{
    if (strcmp(value, "full") == 0)
        o->check = CONV_CHECK_FULL;
    else if (strcmp(value, "sampled") == 0)
        o->check = CONV_CHECK_SAMPLED;
    else if (strcmp(value, "none") == 0)
        o->check = CONV_CHECK_NONE;
    else
        return fail(err, n, "%s: unknown mode '%s' (expected full, sampled or none)", opt->name,
                    value);
    return true;
}

static bool set_seed(const Opt *opt, const char *value, ConvOptions *o, char *err, size_t n)
{
    char *end = NULL;
    errno = 0;
    unsigned long long seed = strtoull(value, &end, 10);
    if (!(*value >= '0' && *value <= '9') || *end != '\0' || errno == ERANGE)
        return fail(err, n, "%s: expected an unsigned 64-bit integer, got '%s'", opt->name, value);
    o->seed = seed;
    o->seed_given = true;
    return true;
}

static bool set_layout(const Opt *opt, const char *value, ConvOptions *o, char *err, size_t n)
{
    if (strcmp(value, "nhwcnc") != 0)
        return fail(err, n, "%s: unknown layout '%s' (expected nhwcnc)", opt->name, value);
    o->desc.layout = TCC_LAYOUT_NHWCNC;
    return true;
}

static bool set_output(const Opt *opt, const char *value, ConvOptions *o, char *err, size_t n)
{
    if (!*value)
        return fail(err, n, "%s: expected a file name", opt->name);
    o->output_path = value;
    o->emit_given = true;
    return true;
}

/* One row per option reads better than what clang-format would make of these. */
/* clang-format off */
#define F(member) offsetof(ConvOptions, member)
#define I64(name, member, min, help) {name, OPT_I64, F(member), 0, min, 0, NULL, help}
#define INT(name, member, min, help) {name, OPT_INT, F(member), 0, min, 0, NULL, help}
#define PAIR(name, m1, m2, min, sep, help) {name, OPT_PAIR, F(m1), F(m2), min, sep, NULL, help}
#define FLAG(name, member, help) {name, OPT_FLAG, F(member), 0, 0, 0, NULL, help}
#define STRING(name, member, help) {name, OPT_STRING, F(member), 0, 0, 0, NULL, help}
#define CUSTOM(name, fn, help) {name, OPT_CUSTOM, 0, 0, 0, 0, fn, help}

static const Opt options_table[] = {
    I64("--batch", desc.batch, 1, "N: batch size (a multiple of 16)"),
    I64("--height", desc.height, 1, "H: input height"),
    I64("--width", desc.width, 1, "W: input width"),
    I64("--in-channels", desc.in_channels, 1, "C: input channels (a multiple of 16)"),
    I64("--out-channels", desc.out_channels, 1, "K: output channels (a multiple of 16)"),
    PAIR("--kernel", desc.kernel_h, desc.kernel_w, 1, 'x', "RxS or R: filter size"),
    I64("--kernel-h", desc.kernel_h, 1, "R: filter height"),
    I64("--kernel-w", desc.kernel_w, 1, "S: filter width"),
    PAIR("--stride", desc.stride_h, desc.stride_w, 1, ',', "S or SH,SW"),
    PAIR("--pad", desc.pad_h, desc.pad_w, 0, ',', "P or PH,PW: zero padding"),
    CUSTOM("--layout", set_layout, "nhwcnc: (N/16, H, W, C/16, 16n, 16c), the only one"),
    I64("--block-row-warps", tiles.block_row_warps, 1, "N: warps of a block along rows"),
    I64("--block-col-warps", tiles.block_col_warps, 1, "N: warps of a block along columns"),
    I64("--warp-row-tiles", tiles.warp_row_tiles, 1, "N: 16x16 tiles of a warp along rows"),
    I64("--warp-col-tiles", tiles.warp_col_tiles, 1, "N: 16x16 tiles of a warp along columns"),
    I64("--chunk", tiles.chunk, 1, "N: 16-channel groups staged in shared memory per step"),
    CUSTOM("--emit", set_emit, "loops|llvm|ptx: what to write (default ptx)"),
    CUSTOM("-o", set_output, "FILE: write it to FILE (default stdout)"),
    STRING("--print-after", print_after, "PASS|all: print the loop IR after PASS to stderr"),
    FLAG("--list-passes", list_passes, "list the lowering passes and exit"),
    STRING("--arch", arch_name, "sm_70|sm_75|sm_80|sm_86|sm_89|sm_90 (default sm_80)"),
    FLAG("--run", run, "run, check and time the kernel on GPU 0 (arch: the GPU's)"),
    INT("--runs", runs, 1, "N: timed launches (default 50)"),
    INT("--warmup", warmup, 0, "N: untimed launches first (default 10)"),
    CUSTOM("--check", set_check, "full|sampled|none (default: full below 1M outputs)"),
    CUSTOM("--seed", set_seed, "N: seed of the random inputs (default from the clock)"),
    INT("--threads", threads, 1, "N: CPU threads of the reference (default: all)"),
    FLAG("--help", help, "print this help and exit"),
    FLAG("--version", version, "print the version and exit"),
};
/* clang-format on */

static const Opt *find_option(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof options_table / sizeof options_table[0]; i++)
        if (strlen(options_table[i].name) == len && strncmp(options_table[i].name, name, len) == 0)
            return &options_table[i];
    return NULL;
}

static bool apply(const Opt *opt, const char *value, ConvOptions *o, char *err, size_t n)
{
    int64_t number;
    switch (opt->kind) {
    case OPT_I64:
        if (!parse_i64(opt->name, value, opt->min, SIZE_MAX_VALUE, &number, err, n))
            return false;
        *(int64_t *)field(o, opt->offset) = number;
        return true;
    case OPT_INT:
        if (!parse_i64(opt->name, value, opt->min, 1000000, &number, err, n))
            return false;
        *(int *)field(o, opt->offset) = (int)number;
        return true;
    case OPT_PAIR:
        return set_pair(opt, value, o, err, n);
    case OPT_FLAG:
        *(bool *)field(o, opt->offset) = true;
        return true;
    case OPT_STRING:
        if (!*value)
            return fail(err, n, "%s: expected a value", opt->name);
        *(const char **)field(o, opt->offset) = value;
        return true;
    case OPT_CUSTOM:
        return opt->custom(opt, value, o, err, n);
    }
    return fail(err, n, "%s: internal error", opt->name);
}

static void set_defaults(ConvOptions *o)
{
    memset(o, 0, sizeof *o);
    tcc_conv2d_seed_desc(&o->desc);
    tcc_conv2d_tutorial_params_init(&o->tiles);
    o->emit = CONV_EMIT_PTX;
    o->runs = 50;
    o->warmup = 10;
    o->check = CONV_CHECK_AUTO;
}

/* Splits "--name=value" (or "-oFILE"); finds the option and, if it takes one, its value
 * (from the same word or the next). Returns the index of the last word it used. */
static int parse_one(int argc, char **argv, int i, ConvOptions *o, char *err, size_t n)
{
    const char *word = argv[i];
    const char *eq = strchr(word, '=');
    size_t len = eq ? (size_t)(eq - word) : strlen(word);
    const char *value = eq ? eq + 1 : NULL;
    if (strcmp(word, "-h") == 0)
        word = "--help", len = strlen(word);
    else if (strncmp(word, "-o", 2) == 0 && word[2] && word[2] != '=')
        len = 2, value = word + 2;
    const Opt *opt = find_option(word, len);
    if (!opt) {
        if (word[0] == '-')
            fail(err, n, "unknown option '%.*s' (see --help)", (int)len, word);
        else
            fail(err, n, "unexpected argument '%s' (see --help)", word);
        return -1;
    }
    if (opt->kind == OPT_FLAG) {
        if (value) {
            fail(err, n, "%s: takes no value", opt->name);
            return -1;
        }
    } else if (!value) {
        if (i + 1 >= argc) {
            fail(err, n, "%s: missing value", opt->name);
            return -1;
        }
        value = argv[++i];
    }
    return apply(opt, value, o, err, n) ? i : -1;
}

bool tcc_cli_parse(int argc, char **argv, ConvOptions *options, char *error, size_t error_size)
{
    set_defaults(options);
    error[0] = '\0';
    for (int i = 1; i < argc; i++) {
        i = parse_one(argc, argv, i, options, error, error_size);
        if (i < 0)
            return false;
    }
    return true;
}

void tcc_cli_usage(FILE *out)
{
    fputs("usage: tcc-conv [options]\n"
          "\n"
          "Compiles a tensor-core conv2d (fp16 in, fp32 out), scheduled as in TVM's\n"
          "tensor-core tutorial, and writes its loop IR, LLVM IR or PTX. Without shape\n"
          "options it is the tutorial's convolution: N=256, 14x14, 256->512 channels,\n"
          "3x3, stride 1, pad 1; shape options change only the sizes they name.\n"
          "With --run, nothing is written unless --emit or -o asks for it.\n"
          "\n"
          "options (VALUE as --name=VALUE or --name VALUE):\n",
          out);
    for (size_t i = 0; i < sizeof options_table / sizeof options_table[0]; i++)
        fprintf(out, "  %-20s %s\n", options_table[i].name, options_table[i].help);
    fputs("\nexit status: 0 on success, 1 on any error or a failed check.\n", out);
}
