/*
 * What tcc-conv and tcc-matmul share, so that nothing is written twice:
 *
 *   cli_parse.c    the option-table parser and the help text (every option is a row)
 *   cli_options.c  the options both tools take: types, epilogue, schedule knobs, output,
 *                  run; and the defaults that depend on what was given
 *   cli_session.c  the steps around the library: context, device and arch, emitting the
 *                  kernel's text, printing the schedule, one-line errors
 *   cli_run.c      --run: tcc_conv2d_check / tcc_matmul_check and printing the results
 *
 * Each tool adds its own rows (shape, layouts) and its compile step. The tools only parse,
 * call tcc.h and print; the library does the work.
 */
#ifndef TOOLS_CLI_H
#define TOOLS_CLI_H

#include "tcc/tcc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The tool's name in messages ("tcc-conv"): each tool's main file defines it. */
extern const char cli_program[];

/* ---- option tables (cli_parse.c) ------------------------------------------------------ */

typedef enum CliOptKind {
    CLI_HEADING,  /* not an option: a title in the help text */
    CLI_I64,      /* one int64 field, >= min */
    CLI_INT,      /* one int field, >= min */
    CLI_I64_PAIR, /* two int64 fields: "A" (both) or "A<sep>B" */
    CLI_INT_PAIR, /* two int fields, likewise */
    CLI_DOUBLE,   /* one finite double field */
    CLI_FLAG,     /* a bool field set to true; takes no value */
    CLI_STRING,   /* a const char * field */
    CLI_CUSTOM,   /* parsed by `custom`, which finds its field(s) at offset (and offset2) */
} CliOptKind;

typedef struct CliOpt CliOpt;
/* Parses `value` into the fields of `base`; on failure writes a message naming the option
 * into err and returns false. */
typedef bool (*CliSetter)(const CliOpt *opt, const char *value, void *base, char *err, size_t n);

struct CliOpt {
    const char *name; /* "--batch"; a heading's title; "" for the tool's operand (a file) */
    CliOptKind kind;
    size_t offset, offset2; /* the field(s), from the table's base */
    int64_t min;
    char separator; /* pairs */
    CliSetter custom;
    const char *help;
    /* Writes the help text instead of `help`, for lists the library knows (archs, MMA
     * shapes), so that the tools never spell them a second time. */
    void (*describe)(char *out, size_t size);
};

/* Rows whose offsets are from `base`. A tool parses with several tables: its own (base: its
 * options struct) and the common ones (base: the CliCommon inside it). */
typedef struct CliTable {
    const CliOpt *rows;
    size_t count;
    void *base;
} CliTable;

#define CLI_HEADING_ROW(title)                                                                     \
    {                                                                                              \
        .name = title, .kind = CLI_HEADING                                                         \
    }

/* Parses argv[1..] against the tables (their fields already hold the defaults). */
bool cli_parse(int argc, char **argv, const CliTable *tables, int ntable, char *err, size_t n);
/* The options of the tables, one a line, under their headings. */
void cli_print_options(FILE *out, const CliTable *tables, int ntable);

/* Helpers for setters: a message (always returns false), and strict number parsing. */
bool cli_fail(char *err, size_t n, const char *format, ...) __attribute__((format(printf, 3, 4)));
bool cli_parse_i64(const char *name, const char *text, int64_t min, int64_t max, int64_t *out,
                   char *err, size_t n);
bool cli_parse_double(const char *name, const char *text, double *out, char *err, size_t n);
void *cli_field(void *base, size_t offset);

/* ---- the options both tools take (cli_options.c) --------------------------------------- */

typedef enum CliEmit { CLI_EMIT_LOOPS, CLI_EMIT_LLVM, CLI_EMIT_PTX } CliEmit;

typedef enum CliCheck {
    CLI_CHECK_AUTO, /* all outputs up to CLI_FULL_CHECK_LIMIT, else CLI_SAMPLES */
    CLI_CHECK_FULL,
    CLI_CHECK_SAMPLED,
    CLI_CHECK_NONE,
} CliCheck;

#define CLI_FULL_CHECK_LIMIT 1000000
#define CLI_SAMPLES 200000

typedef enum CliScheduleKind {
    CLI_SCHEDULE_AUTO,     /* the tutorial's where it applies (tcc-conv), else the default */
    CLI_SCHEDULE_TUTORIAL, /* TVM's tutorial schedule (tcc-conv only) */
    CLI_SCHEDULE_DEFAULT,  /* the implicit-GEMM schedule, knobs from --mma etc. */
} CliScheduleKind;

typedef struct CliCommon {
    /* types: TCC_VOID until given; cli_resolve fills the defaults */
    tcc_dtype input_type, accumulate_type, output_type;
    tcc_epilogue epilogue;
    bool beta_given;
    /* schedule */
    CliScheduleKind schedule_kind;
    tcc_gemm_schedule schedule; /* zero fields are chosen by the library */
    bool policy_given, block_order_given;
    bool verbose;
    /* output */
    CliEmit emit;
    bool emit_given;         /* --emit or -o: with --run, emit only when asked to */
    const char *output_path; /* NULL: stdout */
    const char *print_after; /* a pass name or "all" */
    const char *arch_name;   /* NULL: sm_80, or the device's arch with --run */
    bool list_passes;
    /* run */
    bool run;
    int runs, warmup, threads;
    CliCheck check;
    int64_t samples; /* 0 until --samples */
    uint64_t seed;
    bool seed_given;
    bool help, version;
} CliCommon;

typedef enum CliGroup {
    CLI_GROUP_TYPES,
    CLI_GROUP_EPILOGUE,
    CLI_GROUP_SCHEDULE, /* the implicit-GEMM knobs; each tool has its own --schedule row */
    CLI_GROUP_OUTPUT,
    CLI_GROUP_RUN,
    CLI_GROUP_GENERAL, /* --verbose, --help, --version */
} CliGroup;

void cli_common_defaults(CliCommon *common);
/* The rows of one group, over `common`. */
CliTable cli_common_table(CliGroup group, CliCommon *common);
/* The setter of a --schedule row (a CliScheduleKind field at opt->offset). */
bool cli_set_schedule_kind(const CliOpt *opt, const char *value, void *base, char *err, size_t n);
/* After parsing: the accumulation type (int32 for int8, else float32), the output type
 * (the accumulation type), beta 1 for --residual without --beta, the seed from the clock. */
void cli_resolve(CliCommon *common);
/* Whether any implicit-GEMM knob (--mma, --block-warps, ...) was given. */
bool cli_gemm_knobs_given(const CliCommon *common);
/* The number of outputs --run compares (0: all of them) for a problem of `outputs`. */
int64_t cli_samples(const CliCommon *common, int64_t outputs);

/* ---- the steps around the library (cli_session.c) ------------------------------------- */

/* Prints "<program>: error: <message>" as one line on stderr. */
void cli_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* What a compilation holds, so that one function frees it on every path. */
typedef struct CliSession {
    tcc_context *ctx;
    tcc_device *device; /* with --run */
    tcc_func *func;     /* when the tool defines and schedules a function itself */
    tcc_kernel *kernel;
    tcc_build_options build;
} CliSession;

/* --help, --version, --list-passes, and --print-after's pass name: returns the exit
 * status if main should stop here, or -1 to go on. */
int cli_early_exit(const CliCommon *common, void (*usage)(FILE *out));
/* Context, device (with --run), arch and build options. Returns 0, or 1 after printing. */
int cli_session_open(CliSession *s, const CliCommon *common);
void cli_session_close(CliSession *s);
/* Prints tcc_last_error as a one-line error; returns 1. */
int cli_library_error(const CliSession *s);
/* Writes text to `path` ("-" or NULL: stdout). Returns 0, or 1 after printing the error. */
int cli_write_text(const char *path, const char *text);
/* Writes the kernel's loop IR, LLVM IR or PTX to -o or stdout. Returns 0 or 1. */
int cli_emit(const CliSession *s, const CliCommon *common);
/* --verbose: "schedule: implicit GEMM: ..." on stderr. `chosen` is the library's default
 * for the problem, printed whole when no knob was given; otherwise the knobs given are
 * printed and the fields the library completes for them show as "auto". */
void cli_print_gemm_schedule(const CliSession *s, const CliCommon *common,
                             const tcc_gemm_schedule *chosen);
/* The knobs given, with --run a persistent grid's blocks (unless given) one a multiprocessor
 * of the device rather than of the target's largest part. */
tcc_gemm_schedule cli_gemm_schedule(const CliSession *s, const CliCommon *common);

/* ---- --run (cli_run.c) ----------------------------------------------------------------- */

typedef tcc_status (*CliCheckFn)(tcc_device *device, const tcc_kernel *kernel, const void *desc,
                                 const tcc_check_options *options, tcc_check_result *result);

typedef struct CliRunTarget {
    CliCheckFn check; /* tcc_conv2d_check or tcc_matmul_check, through a cast of desc */
    const void *desc;
    double flops;
    int64_t outputs;
} CliRunTarget;

/* Checks and times the session's kernel on its device; prints the seed, the device, the
 * launch, the error and the time. Returns 0, or 1 on an error or a failed check. */
int cli_run(const CliSession *s, const CliCommon *common, const CliRunTarget *target);

/* A tool's compile step: builds s->kernel from the tool's options. Returns 0, or 1 after
 * printing the error. */
typedef int (*CliCompileFn)(CliSession *s, const void *options);
/* What a compiling tool does once its options are parsed: opens the session, compiles,
 * writes the kernel's text (with --run only when --emit or -o asks), and with --run checks
 * and times it on `target`. Returns the exit status; the caller closes the session. */
int cli_compile_and_run(CliSession *s, const CliCommon *common, CliCompileFn compile,
                        const void *options, const CliRunTarget *target);

/* "sm_70|...|sm_90 (default sm_80)": the help text of --arch. */
void cli_describe_arch(char *out, size_t size);

#endif
