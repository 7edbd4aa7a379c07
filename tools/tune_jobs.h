/*
 * tcc-tune and the jobs of a PostgreSQL store (tcc/tune.h, "jobs"): the coordinator's side
 * (--measure workers, tune_remote.c), which queues a batch's configs and waits for their
 * results, and the workers' (--worker, tune_worker.c), which claim, measure and finish them.
 */
#ifndef TOOLS_TUNE_JOBS_H
#define TOOLS_TUNE_JOBS_H

#include "tune_measure.h"
#include "tune_options.h"

/* A worker's heartbeat period; a grace shorter than three of them would take live workers for
 * dead (--worker-grace is refused below it). */
#define TUNE_HEARTBEAT_S 1.0
#define TUNE_MIN_GRACE_S (3 * TUNE_HEARTBEAT_S)
/* Workers that went silent on one job before it is recorded as an error instead. */
enum { TUNE_MAX_ATTEMPTS = 2 };

/* A name unique among the processes of every host: "HOST:PID:" and 64 random bits in hex (a
 * container's host name and pid may be another's). */
void tune_unique_name(char *out, size_t size);
/* The target a job is compiled for, "cuda -arch=sm_90a", and its arch read back. */
void tune_target_format(tcc_arch arch, char *out, size_t size);
tcc_status tune_target_arch(tcc_context *ctx, const char *target, tcc_arch *arch);

/* A job's measuring settings as the text it carries ("seed=... repeat=... ..."), and read back
 * into `m` (false: not such a text). Both sides' one definition of it. */
void tune_job_options_format(const TuneMeasureOptions *m, char *out, size_t size);
bool tune_job_options_parse(const char *text, TuneMeasureOptions *m);

/* ---- the coordinator ------------------------------------------------------------------- */

typedef struct TuneRemote {
    tcc_record_store *store;
    tcc_context *ctx;
    const tcc_config_space *space;
    const char *template_name, *workload_key, *target;
    const char *device_name; /* "" for any */
    char run[160];           /* this run's name (tune_unique_name) */
    char options[256];       /* the settings each job carries */
    double grace, deadline;  /* --worker-grace, --worker-deadline */
    char error[512];
} TuneRemote;

/* The run's name and its jobs' settings (from `m`). */
void tune_remote_init(TuneRemote *remote, const TuneMeasureOptions *m);
/* The configs `indices` queued as jobs of the run, ids[i] each one's; false with
 * remote->error. */
bool tune_remote_enqueue(TuneRemote *remote, int count, const int64_t *indices, int64_t *ids);
/* The results of the jobs `ids` once workers finished them all; meanwhile jobs of silent
 * workers are queued again. False, with remote->error, when the store fails (the server gone:
 * no record already written is lost) or no job finished for `deadline` seconds. */
bool tune_remote_wait(TuneRemote *remote, int count, const int64_t *ids,
                      tcc_measure_result *results);
/* The run's jobs still queued, removed (at its end, or when it fails). */
void tune_remote_cancel(TuneRemote *remote);

/* ---- the worker ---------------------------------------------------------------------------- */

/* tcc-tune --worker: claims the --db's jobs for this host's GPU (or the synthetic cost) until
 * SIGTERM or SIGINT, measuring each with the settings it carries. `tmpl` and `workload` (the
 * options' own) start the runners, which name the GPU. */
CliExit tune_worker(const TuneOptions *options, const tcc_template *tmpl,
                    const tcc_workload *workload);

#endif
