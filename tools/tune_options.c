/*
 * tcc-tune's options: a table of its own (template, tuner, budget, measurement, records,
 * output) beside tcc-conv's tables of the convolution, parsed in one pass (cli_parse).
 */
#include "tune_options.h"
#include "tune_jobs.h"

#include <stdlib.h>
#include <string.h>

static bool set_tuner(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    tcc_context *ctx;
    if (tcc_context_create(&ctx) != TCC_OK)
        return cli_fail(err, n, "%s: out of memory", opt->name);
    tcc_status status = tcc_tuner_kind_parse(ctx, value, cli_field(base, opt->offset));
    if (status != TCC_OK)
        cli_fail(err, n, "%s: %s", opt->name, tcc_last_error(ctx));
    tcc_context_destroy(ctx);
    return status == TCC_OK;
}

static bool set_measure(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    bool *synthetic = cli_field(base, opt->offset), *workers = cli_field(base, opt->offset2);
    if (strcmp(value, "gpu") == 0 || strcmp(value, "synthetic") == 0 ||
        strcmp(value, "workers") == 0) {
        *synthetic = value[0] == 's';
        *workers = value[0] == 'w';
        return true;
    }
    return cli_fail(err, n, "%s: unknown measurer '%s' (expected gpu, synthetic or workers)",
                    opt->name, value);
}

static bool set_machine_code(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    static const char *const names[] = {"auto", "nvjitlink", "driver"};
    for (int i = 0; i < 3; i++)
        if (strcmp(value, names[i]) == 0) {
            *(TuneMachineCode *)cli_field(base, opt->offset) = (TuneMachineCode)i;
            return true;
        }
    return cli_fail(err, n, "%s: expected auto, nvjitlink or driver, not '%s'", opt->name, value);
}

static bool set_seconds(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    double *seconds = cli_field(base, opt->offset);
    if (!cli_parse_double(opt->name, value, seconds, err, n))
        return false;
    if (*seconds > 0)
        return true;
    return cli_fail(err, n, "%s: must be more than 0 seconds, not %s", opt->name, value);
}

/* A worker's grace: long enough that a live worker's heartbeat always comes within it. */
static bool set_grace(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    double *seconds = cli_field(base, opt->offset);
    if (!cli_parse_double(opt->name, value, seconds, err, n))
        return false;
    if (*seconds >= TUNE_MIN_GRACE_S && *seconds <= 1e6)
        return true;
    return cli_fail(err, n, "%s: %s is not %g to 1000000 seconds (three heartbeats at least)",
                    opt->name, value, TUNE_MIN_GRACE_S);
}

static bool set_u64(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    int64_t seed;
    if (!cli_parse_i64(opt->name, value, 0, INT64_MAX, &seed, err, n))
        return false;
    *(uint64_t *)cli_field(base, opt->offset) = (uint64_t)seed;
    *(bool *)cli_field(base, opt->offset2) = true;
    return true;
}

static bool set_progress(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    bool *progress = cli_field(base, opt->offset);
    *(bool *)cli_field(base, opt->offset2) = true;
    if (strcmp(value, "bar") == 0 || strcmp(value, "lines") == 0) {
        *progress = value[0] == 'b';
        return true;
    }
    return cli_fail(err, n, "%s: expected bar or lines, not '%s'", opt->name, value);
}

/* An on|off switch whose field says "off" (default on: the field zeroed). */
static bool set_off(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    bool *off = cli_field(base, opt->offset);
    if (strcmp(value, "on") == 0 || strcmp(value, "off") == 0) {
        *off = value[1] == 'f';
        return true;
    }
    return cli_fail(err, n, "%s: expected on or off, not '%s'", opt->name, value);
}

static void describe_templates(char *out, size_t size)
{
    size_t used = (size_t)snprintf(out, size, "NAME: the template (default gemm):");
    for (int i = 0; i < tcc_template_count() && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s %s", i ? "," : "",
                                 tcc_template_at(i)->name);
}

/* clang-format off */
#define F(member) offsetof(TuneOptions, member)
#define INT(name_, member_, min_, help_) {.name = name_, .kind = CLI_INT, .offset = F(member_), .min = min_, .help = help_}
#define I64(name_, member_, min_, help_) {.name = name_, .kind = CLI_I64, .offset = F(member_), .min = min_, .help = help_}
#define DOUBLE(name_, member_, help_) {.name = name_, .kind = CLI_DOUBLE, .offset = F(member_), .help = help_}
#define FLAG(name_, member_, help_) {.name = name_, .kind = CLI_FLAG, .offset = F(member_), .help = help_}
#define STRING(name_, member_, help_) {.name = name_, .kind = CLI_STRING, .offset = F(member_), .help = help_}
#define CUSTOM(name_, member_, fn_, help_) {.name = name_, .kind = CLI_CUSTOM, .offset = F(member_), .custom = fn_, .help = help_}
#define CUSTOM2(name_, member_, member2_, fn_, help_) {.name = name_, .kind = CLI_CUSTOM, .offset = F(member_), .offset2 = F(member2_), .custom = fn_, .help = help_}

static const CliOpt tune_rows[] = {
    CLI_HEADING_ROW("tuning"),
    {.name = "--template", .kind = CLI_STRING, .offset = F(template_name), .describe = describe_templates},
    FLAG("--list-templates", list_templates, "list the templates and exit"),
    FLAG("--print-space", print_space, "print the template's config space for the workload and exit"),
    CUSTOM("--tuner", tuner, set_tuner, "xgb|ga|random|grid: the search (default xgb, gradient-boosted trees through libxgboost)"),
    I64("--n-trial", n_trial, 1, "N: trials at most (default 1000, or the whole space if smaller)"),
    I64("--early-stopping", early_stopping, 1, "N: stop after N trials without a faster config"),
    INT("--batch", batch, 1, "N: configs proposed and measured at a time; a worker's most jobs claimed at a time (default 64)"),
    CUSTOM("--transfer", no_transfer, set_off, "on|off: the xgb tuner also learns from the template's records of other workloads on the GPU (AutoTVM's transfer learning; default on)"),
    CUSTOM("--measure-default", skip_default, set_off, "on|off: measure the default schedule (the gemm template's point 0) before the tuner's first config, so that tuning never ends slower than it (default on; off compares tuners from nothing)"),
    CUSTOM2("--seed", seed, seed_given, set_u64, "N: seed of the tuner and of the inputs (default from the clock)"),
    {.name = "--arch", .kind = CLI_STRING, .offset = F(conv.common.arch_name), .describe = cli_describe_arch},
    CLI_HEADING_ROW("measuring"),
    CUSTOM2("--measure", synthetic, workers, set_measure, "gpu|synthetic|workers: time each config on the GPUs, or a deterministic cost of its knobs (no GPU: for tests), or queue it as a job for the workers of the PostgreSQL --db (tcc-tune --worker on any host)"),
    STRING("--devices", devices, "N[,N...]: the GPUs measuring, one process each (default 0)"),
    CUSTOM("--machine-code", machine_code, set_machine_code, "auto|nvjitlink|driver: who compiles the PTX for the GPU: nvJitLink in the build threads (libnvJitLink.so, or $TCC_NVJITLINK), or the driver as each kernel loads (default auto: nvJitLink where it opens)"),
    INT("--builders", builders, 1, "N: threads compiling configs while the GPUs measure (default: the cores this process may run on)"),
    CUSTOM("--build-timeout", build_timeout, set_seconds, "S: a compile's time limit (default 10)"),
    CUSTOM("--timeout", run_timeout, set_seconds, "S: a run's time limit, after which its process is killed (default 4)"),
    INT("--repeat", repeat, 1, "N: timings of each config, its cost their mean (default 3)"),
    DOUBLE("--min-repeat-ms", min_repeat_ms, "MS: launches in a timing until it lasts this long (default 5)"),
    CLI_HEADING_ROW("workers (jobs in a PostgreSQL --db)"),
    FLAG("--worker", worker, "measure the jobs of the --db that a tuning run with --measure workers queued, on this host's GPUs (--devices) or the synthetic cost (--measure synthetic), until stopped (SIGTERM, SIGINT)"),
    STRING("--worker-name", worker_name, "NAME: the worker's name, unique among the workers (default HOST:PID)"),
    STRING("--device-name", device_name, "NAME: the GPU the run's jobs are for, as its driver names it (\"NVIDIA H200\"; default: any)"),
    CUSTOM("--worker-grace", worker_grace, set_grace, "S: a worker silent this long (3 or more) has its jobs queued again; a job two such workers went silent on is recorded as a RUNTIME_DEVICE error (default 30)"),
    CUSTOM("--worker-deadline", worker_deadline, set_seconds, "S: a batch of jobs none of which is finished for this long stops the run (default 300)"),
    CLI_HEADING_ROW("records"),
    STRING("--db", db,
           "FILE|URL: the records, an SQLite file (default $XDG_CACHE_HOME/tcc/records.db) or a "
           "PostgreSQL server's postgresql://user@host/database URL (through libpq.so.5)"),
    STRING("--export", export_path, "FILE: write the records as AutoTVM log lines (JSON) and exit"),
    STRING("--import", import_path, "FILE: read AutoTVM log lines (tcc's or AutoTVM's), or every record of another SQLite records file (a migration into PostgreSQL), into the records and exit"),
    CLI_HEADING_ROW("reporting"),
    CUSTOM2("--progress", progress, progress_given, set_progress, "bar|lines: a bar on a terminal, a line a batch otherwise (default: bar when stderr is a terminal)"),
    INT("--top", top, 1, "N: the fastest configs listed at the end (default 10)"),
    STRING("--plot", plot, "FILE.svg: the tuning curve, best GFLOP/s against trials"),
    DOUBLE("--default-gflops", default_gflops, "G: the default schedule's GFLOP/s, a line on the plot"),
    DOUBLE("--reference-gflops", reference_gflops, "G: a reference's GFLOP/s (cuDNN), a line on the plot"),
    STRING("--reference-name", reference_name, "NAME: the reference's name on the plot (default cuDNN)"),
};
/* clang-format on */

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define NTABLE (CONV_PROBLEM_TABLES + 2)

static void tune_tables(TuneOptions *o, CliTable tables[NTABLE])
{
    tables[0] = (CliTable){tune_rows, COUNT(tune_rows), o};
    conv_problem_tables(&o->conv, tables + 1);
    tables[NTABLE - 1] = cli_common_table(CLI_GROUP_GENERAL, &o->conv.common);
}

bool tune_parse(int argc, char **argv, TuneOptions *o, char *error, size_t error_size)
{
    memset(o, 0, sizeof *o);
    conv_defaults(&o->conv);
    o->template_name = "gemm";
    o->tuner = TCC_TUNER_XGB;
    o->n_trial = 1000;
    o->batch = 64;
    o->worker_grace = 30;
    o->worker_deadline = 300;
    o->build_timeout = 10;
    o->run_timeout = 4;
    o->repeat = 3;
    o->min_repeat_ms = 5;
    o->top = 10;
    o->devices = "0";
    o->reference_name = "cuDNN";
    CliTable tables[NTABLE];
    tune_tables(o, tables);
    return cli_parse(argc, argv, tables, NTABLE, error, error_size);
}

/* The seed's template computes in float32 on NCHW tensors, as AutoTVM's tutorial does. */
static void template_defaults(TuneOptions *o, const tcc_template *tmpl)
{
    if (strcmp(tmpl->name, "conv2d_no_batching") == 0) {
        if (!o->conv.layout_given)
            o->conv.desc.layout = TCC_LAYOUT_NCHW, o->conv.layout_given = true;
        if (!o->conv.filter_layout_given)
            o->conv.desc.filter_layout = TCC_FILTER_KCRS, o->conv.filter_layout_given = true;
        o->conv.common.input_type = TCC_FLOAT32;
    }
}

bool tune_resolve(TuneOptions *o, const tcc_template **tmpl, tcc_workload *w, char *error,
                  size_t error_size)
{
    *tmpl = tcc_template_find(o->template_name);
    if (!*tmpl)
        return cli_fail(error, error_size,
                        "--template: unknown template '%s' (see --list-templates)",
                        o->template_name);
    if (o->repeat > (int)(sizeof((tcc_measure_result *)0)->costs / sizeof(double)))
        return cli_fail(error, error_size, "--repeat: at most 8 timings (a record's costs)");
    template_defaults(o, *tmpl);
    if (!conv_resolve(&o->conv, error, error_size))
        return false;
    tcc_workload_init(w, TCC_WORKLOAD_CONV2D);
    w->conv2d = o->conv.desc;
    return true;
}

void tune_usage(FILE *out)
{
    fputs("usage: tcc-tune [options]\n"
          "\n"
          "Tunes a template's knobs for one convolution, as AutoTVM does: a tuner proposes\n"
          "configs of the template's space, threads compile them while a process per GPU checks\n"
          "each against the CPU reference and times it, and every trial is recorded in an SQLite\n"
          "database. tcc-conv --tuned then builds the fastest recorded config.\n"
          "\n"
          "options (VALUE as --name=VALUE or --name VALUE):\n",
          out);
    TuneOptions o;
    memset(&o, 0, sizeof o);
    CliTable tables[NTABLE];
    tune_tables(&o, tables);
    cli_print_options(out, tables, NTABLE);
    cli_print_exit_codes(out, true);
}
