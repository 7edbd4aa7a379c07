/*
 * What tcc-conv and tcc-matmul share, so that nothing is written twice:
 *
 *   cli_parse.c    the option-table parser and the help text (every option is a row)
 *   cli_options.c  the options both tools take: types, epilogue, schedule knobs, output,
 *                  run; and the defaults that depend on what was given
 *   cli_session.c  the steps around the library: context, device and arch, emitting the
 *                  kernel's text, printing the schedule, one-line errors
 *   cli_run.c      --run: tcc_conv2d_check / tcc_matmul_check and printing the results
 *   cli_format.c   JSON Lines and CSV from one description of a record (--format)
 *   cli_report.c   what a result holds (its keys), and the loop that compiles, runs and
 *                  reports each problem (a layer) in turn
 *   cli_exit.h     the exit status, and the one mapping of a library status to it
 *
 * Each tool adds its own rows (shape, layouts) and its compile step. The tools only parse,
 * call tcc.h and print; the library does the work. cli_format.c and cli_report.c are the
 * tools' alone: what the fuzz target of the command lines (test/fuzz) links does not call
 * them.
 */
#ifndef TOOLS_CLI_H
#define TOOLS_CLI_H

#include "cli_exit.h"
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
/* The exit statuses, for --help; `runs`: the tool has --run (a failed check, several
 * layers). */
void cli_print_exit_codes(FILE *out, bool runs);

/* Helpers for setters: a message (always returns false), and strict number parsing. */
bool cli_fail(char *err, size_t n, const char *format, ...) __attribute__((format(printf, 3, 4)));
bool cli_parse_i64(const char *name, const char *text, int64_t min, int64_t max, int64_t *out,
                   char *err, size_t n);
bool cli_parse_double(const char *name, const char *text, double *out, char *err, size_t n);
void *cli_field(void *base, size_t offset);

/* ---- the options both tools take (cli_options.c) --------------------------------------- */

/* cubin: the PTX compiled to machine code by nvJitLink (tcc_kernel_compile_machine_code). */
typedef enum CliEmit { CLI_EMIT_LOOPS, CLI_EMIT_LLVM, CLI_EMIT_PTX, CLI_EMIT_CUBIN } CliEmit;

/* What stdout holds: the kernel's text or the run's lines (text), or one record a result. */
typedef enum CliFormat { CLI_FORMAT_TEXT, CLI_FORMAT_JSON, CLI_FORMAT_CSV } CliFormat;

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
    const char *arch_name;   /* NULL: sm_80, or the device's arch with --run; "native" */
    bool list_passes;
    CliFormat format;
    /* run */
    bool run;
    int device; /* the ordinal of the GPU of --run and --arch native */
    int runs, warmup, threads;
    CliCheck check;
    int64_t samples; /* 0 until --samples */
    uint64_t seed;
    bool seed_given;
    bool help, version;
    /* --tuned: the fastest record of tcc-tune's gemm template in --db's records */
    bool tuned;
    const char *db;
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
/* The options that contradict each other: with --format json or csv, --emit without -o (or
 * -o -) asks for the kernel's text where the records go. False with a message. */
bool cli_check_common(const CliCommon *common, char *error, size_t error_size);
/* Whether any implicit-GEMM knob (--mma, --block-warps, ...) was given. */
bool cli_gemm_knobs_given(const CliCommon *common);
/* The number of outputs --run compares (0: all of them) for a problem of `outputs`. */
int64_t cli_samples(const CliCommon *common, int64_t outputs);
/* The name of a schedule knob's value as its option spells it ("swizzled" for --smem's
 * TCC_SMEM_SWIZZLED); NULL for 0 (chosen by the library) or an unknown value. `option` is
 * the knob's option: "--smem", "--intrinsic", "--copy", "--producer", "--store", "--grid",
 * "--policy". */
const char *cli_knob_name(const char *option, int value);
/* Whether the arch named by --arch is the selected device's. */
bool cli_arch_is_native(const CliCommon *common);

/* ---- the steps around the library (cli_session.c) ------------------------------------- */

/* Prints "<program>: error: <message>" as one line on stderr, and keeps the message for the
 * result's record (cli_error_message): every error path says its message through here. */
void cli_error(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* The last message of cli_error ("" after cli_error_clear), and the status of the library
 * call it reported (TCC_OK: not the library's). The tools run on one thread. */
const char *cli_error_message(void);
tcc_status cli_error_status(void);
void cli_error_clear(void);

/* What a compilation holds, so that one function frees it on every path. */
typedef struct CliSession {
    tcc_context *ctx;
    tcc_device *device; /* with --run or --arch native */
    tcc_func *func;     /* when the tool defines and schedules a function itself */
    tcc_kernel *kernel;
    tcc_build_options build;
    /* The schedule the kernel was compiled with, for the report: the tutorial's tiles, or
     * the implicit GEMM's schedule: whole (the library's default, no knob given) or the
     * knobs given, the library completing their zero fields. */
    bool tutorial;
    tcc_tutorial_conv2d_params tiles;
    tcc_gemm_schedule schedule;
    bool schedule_whole;
} CliSession;

/* --tuned (cli_tuned.c): the fastest recorded config of the gemm template for `workload` (on
 * the session's GPU when it has one), else the default schedule, compiled into s->kernel; says
 * which on stderr. Returns CLI_EXIT_OK, or the exit status after printing the error. */
CliExit cli_compile_tuned(CliSession *s, const CliCommon *common, const tcc_workload *workload);

/* --help, --version, --list-passes, and --print-after's pass name: returns the exit
 * status if main should stop here, or -1 to go on. */
int cli_early_exit(const CliCommon *common, void (*usage)(FILE *out));
/* Context, device (with --run or --arch native), arch and build options. Returns
 * CLI_EXIT_OK, or the exit status after printing the error. */
CliExit cli_session_open(CliSession *s, const CliCommon *common);
/* Frees the kernel and function of one compilation, keeping the context and device. */
void cli_session_reset(CliSession *s);
void cli_session_close(CliSession *s);
/* --arch native without a session (tcc-opt): the arch of device `ordinal`, opened and closed
 * on ctx. Returns CLI_EXIT_OK, or the exit status after printing the error. */
CliExit cli_arch_of_device(tcc_context *ctx, int ordinal, tcc_arch *arch);
/* Prints tcc_last_error as a one-line error; returns the exit status of `status`. */
CliExit cli_library_error(const CliSession *s, tcc_status status);
/* Writes text to `path` ("-" or NULL: stdout). Returns 0, or CLI_EXIT_ERROR after printing
 * the error. */
CliExit cli_write_text(const char *path, const char *text);
/* Writes the kernel's loop IR, LLVM IR or PTX to -o or stdout. */
CliExit cli_emit(const CliSession *s, const CliCommon *common);
/* Records the implicit GEMM's schedule in the session for the report, and with --verbose
 * prints it on stderr ("schedule: implicit GEMM: ..."). `chosen` is the library's default for
 * the problem, recorded whole when no knob was given (then it must be set); otherwise the
 * knobs given are, the fields the library completes for them 0 ("auto"). */
void cli_record_gemm_schedule(CliSession *s, const CliCommon *common,
                              const tcc_gemm_schedule *chosen);
/* The knobs given, as a schedule (with --run, a persistent grid's blocks that are not given
 * are the device's through the build options: cli_session_open). */
tcc_gemm_schedule cli_gemm_schedule(const CliCommon *common);

/* ---- --run (cli_run.c) ----------------------------------------------------------------- */

typedef tcc_status (*CliCheckFn)(tcc_device *device, const tcc_kernel *kernel, const void *desc,
                                 const tcc_check_options *options, tcc_check_result *result);

typedef struct CliRunTarget {
    CliCheckFn check; /* tcc_conv2d_check or tcc_matmul_check, through a cast of desc */
    const void *desc;
    double flops;
    int64_t outputs;
} CliRunTarget;

/* What --run found. */
typedef struct CliRunResult {
    bool ran; /* the check returned a result */
    tcc_check_result check;
    bool checked; /* outputs were compared (not --check none) */
    bool passed;  /* the tool's verdict: compared within the tolerance, all written */
    int64_t outputs;
    double tflops; /* 0 when not timed */
} CliRunResult;

/* Checks and times the session's kernel on its device; in text format prints the seed, the
 * device, the launch, the error and the time. Returns CLI_EXIT_OK, CLI_EXIT_CHECK_FAILED, or
 * the status of a failed call, after printing the error. */
CliExit cli_run(const CliSession *s, const CliCommon *common, const CliRunTarget *target,
                CliRunResult *result);

/* A tool's compile step: builds s->kernel from the tool's options and records its schedule
 * in s. Returns CLI_EXIT_OK, or the exit status after printing the error. */
typedef CliExit (*CliCompileFn)(CliSession *s, const void *options);

/* "sm_70|...|sm_90|native (default sm_80)": the help text of --arch. */
void cli_describe_arch(char *out, size_t size);

/* ---- JSON Lines and CSV (cli_format.c) ------------------------------------------------ */

#define CLI_OUT_DEPTH 8
#define CLI_OUT_COLUMNS 128
#define CLI_OUT_NAME 64

typedef struct CliOutLevel {
    size_t path_length;  /* of the path before this level */
    bool list;           /* a JSON array */
    bool was_suppressed; /* inside an absent part before this level */
    int item;            /* the enclosing list's item before this level */
} CliOutLevel;

/* A writer of records: begin, the values (keys under objects and lists), finish. */
typedef struct CliOut {
    CliFormat format;
    FILE *file;
    int depth;
    CliOutLevel levels[CLI_OUT_DEPTH];
    int count[CLI_OUT_DEPTH]; /* JSON: values written at each level */
    bool suppressed;          /* inside an absent part */
    int item;                 /* the index of the list item being written */
    char path[CLI_OUT_NAME];  /* CSV: "run." */
    /* CSV: the record's columns */
    int ncolumn;
    char names[CLI_OUT_COLUMNS][CLI_OUT_NAME];
    char *values[CLI_OUT_COLUMNS];
    bool header_written;
} CliOut;

void cli_out_init(CliOut *out, CliFormat format, FILE *file);
void cli_out_free(CliOut *out);
void cli_out_begin(CliOut *out);
/* JSON: "}" and a newline; CSV: the header before the first row, then the row. Flushes. */
void cli_out_finish(CliOut *out);
/* What a tool's main returns: `code`, or CLI_EXIT_ERROR with a message on stderr when standard
 * output could not be written (a full disk, a closed pipe), which would otherwise exit 0 with
 * the output cut short. */
int cli_exit_after_output(const char *tool, int code);
/* An object under `key`; absent: JSON null, empty CSV columns. Ends with cli_out_end. */
void cli_out_object(CliOut *out, const char *key, bool present);
/* A list of objects under `key`: cli_out_item for each (index from 0), each ended with
 * cli_out_end, then cli_out_end. An empty list describes one absent item (CSV columns). */
void cli_out_list(CliOut *out, const char *key);
void cli_out_item(CliOut *out, int index, bool present);
void cli_out_end(CliOut *out);
void cli_out_int(CliOut *out, const char *key, int64_t number);
void cli_out_uint(CliOut *out, const char *key, uint64_t number);
/* Not finite: null. */
void cli_out_double(CliOut *out, const char *key, double number);
void cli_out_bool(CliOut *out, const char *key, bool flag);
void cli_out_null(CliOut *out, const char *key);
/* NULL: null. */
void cli_out_string(CliOut *out, const char *key, const char *text);
/* Three sizes: JSON [x,y,z]; CSV "XxYxZ". */
void cli_out_dims(CliOut *out, const char *key, const int64_t dims[3]);
/* 0 (chosen by the library): null. */
void cli_out_count(CliOut *out, const char *key, int64_t number);
/* The --format of a command line that did not parse (text if none). */
CliFormat cli_format_in_argv(int argc, char **argv);

/* ---- the tools' main loop and its report (cli_report.c) --------------------------------- */

/* What a tool contributes to the loop. */
typedef struct CliTool {
    const char *op; /* "conv2d", "matmul" */
    CliCompileFn compile;
    /* Writes the problem's "shape" object's keys (desc: the tool's descriptor; all zero when
     * absent, when only the keys matter). */
    void (*write_shape)(CliOut *out, const void *desc);
    bool tutorial; /* the tool has the tutorial's schedule (the "schedule.tutorial" keys) */
} CliTool;

/* One problem: a layer of --layers-file, or the command line's. */
typedef struct CliJob {
    const char *layer;       /* its name, or NULL */
    const void *options;     /* the tool's, resolved: what compile reads */
    const CliCommon *common; /* inside options */
    CliRunTarget target;     /* desc is the tool's descriptor */
} CliJob;

typedef struct CliReport {
    const CliTool *tool;
    CliFormat format;
    CliOut out;
    bool announce; /* text: a "layer: NAME" line before each (several layers) */
} CliReport;

void cli_report_init(CliReport *r, const CliTool *tool, CliFormat format);
void cli_report_free(CliReport *r);
/* A failure before any problem (a usage error, no GPU): in JSON or CSV, one record with the
 * error of cli_error_message (`layer`: the layer it concerns, or NULL). Returns `code`. */
CliExit cli_report_failure(CliReport *r, CliExit code, const char *layer);
/* A command line that did not parse: prints `error`, and the record in the format it asked
 * for. Returns CLI_EXIT_USAGE. */
CliExit cli_usage_error(const CliTool *tool, int argc, char **argv, const char *error);
/* Compiles the job, writes the kernel's text (in text format, with --run only when --emit or
 * -o asks; otherwise to -o), runs it with --run, and writes its record. The session stays
 * open (its kernel freed) for the next job. Returns the job's exit status. */
CliExit cli_report_job(CliReport *r, CliSession *s, const CliJob *job);

#endif
