/*
 * tcc-tune's command line: the workload (tcc-conv's shape, layout, type and epilogue options,
 * or --layer), the template, the tuner and its budget, the measurement, the records.
 */
#ifndef TOOLS_TUNE_OPTIONS_H
#define TOOLS_TUNE_OPTIONS_H

#include "conv_options.h"
#include "tune_measure.h"

typedef struct TuneOptions {
    ConvOptions conv; /* the convolution, as tcc-conv reads it; conv.common.arch_name */
    const char *template_name;
    tcc_tuner_kind tuner;
    int64_t n_trial;         /* trials at most (default 1000; the space's size if smaller) */
    int64_t early_stopping;  /* stop after this many trials without a better one (0: never) */
    int batch;               /* configs proposed and measured at a time */
    bool no_transfer;        /* --transfer off: no learning from other workloads' records */
    bool skip_default;       /* --measure-default off: the gemm template's point 0 not first */
    const char *db;          /* the records' SQLite file (NULL: the default under the cache) */
    bool synthetic;          /* --measure synthetic */
    bool workers;            /* --measure workers: the jobs of a PostgreSQL --db, by workers */
    bool worker;             /* --worker: measure those jobs */
    const char *device_name; /* --device-name: the GPU the jobs are for (NULL: any) */
    const char *worker_name; /* --worker-name (NULL: host:pid) */
    double worker_grace;     /* a worker silent this long has its jobs queued again */
    double worker_deadline;  /* a batch none of whose jobs finishes for this long fails */
    const char *devices;     /* "0,1": the GPUs measuring */
    int builders;            /* compiling threads (0: the cores) */
    TuneMachineCode machine_code;
    double build_timeout, run_timeout; /* seconds */
    int repeat;
    double min_repeat_ms;
    uint64_t seed;
    bool seed_given;
    bool print_space, list_templates, progress_given, progress;
    const char *plot;      /* FILE.svg: the tuning curve */
    double default_gflops; /* horizontal lines on the plot (0: none) */
    double reference_gflops;
    const char *reference_name;
    const char *export_path, *import_path;
    int top;
} TuneOptions;

/* Parses argv (defaults first); false with a one-line message naming the option. */
bool tune_parse(int argc, char **argv, TuneOptions *options, char *error, size_t error_size);
/* After parsing: the workload's shape from --layer or the options, and the defaults that
 * depend on the template (conv2d_no_batching: NCHW float32). False with a message. */
bool tune_resolve(TuneOptions *options, const tcc_template **tmpl, tcc_workload *workload,
                  char *error, size_t error_size);
void tune_usage(FILE *out);

#endif
