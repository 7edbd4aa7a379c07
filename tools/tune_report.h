/*
 * What tcc-tune prints while and after it tunes: the history of trials, a progress bar or a
 * line a batch, AutoTVM's per-trial line (--verbose), the table of the fastest configs, and
 * the tuning curve as SVG (--plot).
 */
#ifndef TOOLS_TUNE_REPORT_H
#define TOOLS_TUNE_REPORT_H

#include "tcc/tcc.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct TuneTrial {
    int64_t index;
    char *config; /* tcc_config_format's text, owned */
    tcc_measure_result result;
    double gflops; /* 0 for a failed trial */
} TuneTrial;

typedef struct TuneHistory {
    TuneTrial *trials;
    int64_t count, cap;
    double flops;       /* of the workload, for GFLOP/s */
    double best_gflops; /* so far */
    int64_t best_trial; /* its position in trials (-1: none yet) */
    int64_t errors[TCC_MEASURE_UNKNOWN_ERROR + 1];
    int64_t refused;    /* configs validation refused: recorded, but not trials */
    int64_t duplicates; /* configs whose kernel was measured before: its result, not trials */
    double start;       /* seconds, monotonic */
} TuneHistory;

void tune_history_init(TuneHistory *h, double flops);
void tune_history_free(TuneHistory *h);
/* Adds a trial (the config text is copied); false when out of memory. */
bool tune_history_add(TuneHistory *h, int64_t index, const char *config,
                      const tcc_measure_result *result);
/* The result's GFLOP/s for the history's workload (0 for a failed trial). */
double tune_history_gflops(const TuneHistory *h, const tcc_measure_result *result);
double tune_now(void);

/* AutoTVM's line for trial `number` (1-based):
 * "No: 1\tGFLOPS: 456.68/456.68\tresult: MeasureResult(costs=(0.000506,), error_no=0, ...)\t
 * [('tile_f', [-1, 2, 64, 1]), ...],None,4881186". */
void tune_print_trial(FILE *out, const TuneHistory *h, int64_t number);
/* The progress after a batch: a bar redrawn in place (`bar`), else one line. */
void tune_print_progress(FILE *out, const TuneHistory *h, int64_t n_trial, bool bar);
/* The `top` fastest configs, a row each. */
void tune_print_top(FILE *out, const TuneHistory *h, int top);
/* The tuning curve as SVG: best GFLOP/s against trials, with a line for each reference of more
 * than 0 GFLOP/s. False with a message when the file cannot be written. */
bool tune_write_plot(const char *path, const TuneHistory *h, const char *title,
                     double default_gflops, double reference_gflops, const char *reference_name,
                     char *error, size_t error_size);

#endif
