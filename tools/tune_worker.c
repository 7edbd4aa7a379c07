/*
 * tcc-tune --worker (tune_jobs.h): claims the jobs of a PostgreSQL store that this host can
 * measure (its GPU's name, or "synthetic", and its arch), measures each as the tuning run that
 * queued it asks (the same builders and isolated runners as a local run, retargeted to each
 * workload), and finishes it with its record. A thread of its own keeps the heartbeat of its
 * jobs, on a connection of its own. A server that goes away is waited for, with backoff; once
 * it is back, the jobs the worker held are queued again (tcc_job_release), for any worker, and
 * so they are when the worker stops.
 */
#include "tune_jobs.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The longest wait between tries of a server that went away. */
static const double MAX_BACKOFF_S = 10.0;
/* The longest wait between claims while no job is queued: a run queues its next batch as soon
 * as the last finishes, and an idle claim costs the server one indexed query. */
static const double MAX_IDLE_S = 0.02;

static volatile sig_atomic_t stopping;

static void stop(int signal)
{
    (void)signal;
    stopping = 1;
}

/* Sleeps, waking early when stopped. */
static void nap(double seconds)
{
    for (double left = seconds; left > 0 && !stopping; left -= 0.05)
        tune_sleep_s(left < 0.05 ? left : 0.05);
}

typedef struct Worker {
    const TuneOptions *options;
    tcc_context *ctx;
    tcc_record_store *store;
    char name[128], target[64];
    const char *device_name;
    tcc_arch arch;
    TuneMeasurer *measurer;
    /* What the measurer measures now: the jobs of one template, workload and settings. */
    const tcc_template *tmpl;
    tcc_workload workload;
    tcc_config_space *space;
    char key[2048], settings[256];
    int64_t finished;
    /* The heartbeat thread. */
    pthread_t heart;
    bool heart_started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool quit;
} Worker;

/* ---- the heartbeat ---------------------------------------------------------------------- */

static void *heartbeat(void *arg)
{
    Worker *w = arg;
    tcc_context *ctx = NULL;
    tcc_record_store *store = NULL;
    pthread_mutex_lock(&w->lock);
    while (!w->quit) {
        pthread_mutex_unlock(&w->lock);
        if (!ctx && tcc_context_create(&ctx) != TCC_OK)
            ctx = NULL;
        if (ctx && !store && tcc_record_store_open(ctx, w->options->db, &store) != TCC_OK)
            store = NULL;
        /* A failure drops the connection, to be opened again next time (the server back). */
        if (store && tcc_job_heartbeat(store, w->name) != TCC_OK) {
            tcc_record_store_close(store);
            store = NULL;
        }
        pthread_mutex_lock(&w->lock);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)TUNE_HEARTBEAT_S;
        if (!w->quit)
            pthread_cond_timedwait(&w->wake, &w->lock, &until);
    }
    pthread_mutex_unlock(&w->lock);
    tcc_record_store_close(store);
    tcc_context_destroy(ctx);
    return NULL;
}

/* ---- what the measurer measures ------------------------------------------------------------ */

/* The measurer retargeted to the job's template, workload and settings; false with *result
 * saying why a job cannot be measured here (which its record then says), or *fatal set when
 * the measurer itself failed. */
static bool retarget(Worker *w, const tcc_job *job, tcc_measure_result *result, bool *fatal)
{
    if (w->tmpl && strcmp(w->tmpl->name, job->template_name) == 0 &&
        strcmp(w->key, job->workload_key) == 0 && strcmp(w->settings, job->options) == 0)
        return true;
    TuneMeasureOptions m;
    tune_measure_options_init(&m);
    const tcc_template *tmpl = tcc_template_find(job->template_name);
    tcc_workload workload = {.size = sizeof workload};
    tcc_config_space *space = NULL;
    tcc_arch arch;
    tcc_status status = TCC_OK;
    if (!tmpl)
        status = TCC_ERROR_INVALID_ARGUMENT;
    if (status == TCC_OK &&
        (status = tcc_workload_from_key(w->ctx, tmpl, job->workload_key, &workload)) == TCC_OK &&
        (status = tune_target_arch(w->ctx, job->target, &arch)) == TCC_OK)
        status = tcc_config_space_create(w->ctx, tmpl, &workload, arch, &space);
    if (status != TCC_OK || !tune_job_options_parse(job->options, &m)) {
        tune_set_result(result, TCC_MEASURE_INSTANTIATION_ERROR, "");
        snprintf(result->message, sizeof result->message, "worker %s cannot measure it: %s",
                 w->name,
                 !tmpl              ? "its tcc has no such template"
                 : status != TCC_OK ? tcc_last_error(w->ctx)
                                    : "the job's settings are not this tcc's");
        tcc_config_space_destroy(space);
        w->tmpl = NULL; /* the next job retargets */
        return false;
    }
    m.tmpl = tmpl, m.workload = &workload, m.space = space, m.arch = arch;
    if (!tune_measurer_retarget(w->measurer, &m)) {
        *fatal = true;
        tcc_config_space_destroy(space);
        return false;
    }
    tcc_config_space_destroy(w->space);
    w->space = space, w->tmpl = tmpl, w->workload = workload, w->arch = arch;
    snprintf(w->key, sizeof w->key, "%s", job->workload_key);
    snprintf(w->settings, sizeof w->settings, "%s", job->options);
    return true;
}

/* ---- claiming, measuring, finishing ------------------------------------------------------ */

/* The job done with its result as its record; false where the store failed. */
static bool finish(Worker *w, const tcc_job *job, const tcc_measure_result *result)
{
    tcc_record record = {.size = sizeof record,
                         .template_name = job->template_name,
                         .workload_key = job->workload_key,
                         .target = job->target,
                         .device_name = w->device_name,
                         .tcc_version = tcc_version_string(),
                         .config = job->config,
                         .config_index = job->config_index,
                         .result = *result};
    bool kept = false;
    if (tcc_job_finish(w->store, w->name, job->id, &record, &kept) != TCC_OK)
        return false;
    w->finished += kept;
    return true;
}

/* Jobs [first, end) share a template, workload and settings: measured as one batch. */
static int same_work(const tcc_job *jobs, int first, int count)
{
    int end = first + 1;
    while (end < count && strcmp(jobs[end].template_name, jobs[first].template_name) == 0 &&
           strcmp(jobs[end].workload_key, jobs[first].workload_key) == 0 &&
           strcmp(jobs[end].options, jobs[first].options) == 0)
        end++;
    return end;
}

/* Measures and finishes the claimed jobs. *lost: the store failed; false: the measurer. */
static bool work(Worker *w, const tcc_job *jobs, int count, bool *lost)
{
    int64_t *indices = calloc((size_t)count, sizeof *indices);
    tcc_measure_result *results = calloc((size_t)count, sizeof *results);
    bool ok = indices && results;
    for (int first = 0, end; ok && !*lost && first < count; first = end) {
        end = same_work(jobs, first, count);
        bool fatal = false;
        if (retarget(w, &jobs[first], &results[first], &fatal)) {
            for (int i = first; i < end; i++)
                indices[i] = jobs[i].config_index;
            ok = tune_measure_batch(w->measurer, end - first, indices + first, results + first) ==
                 TCC_OK;
        } else {
            ok = !fatal;
            for (int i = first + 1; ok && i < end; i++)
                results[i] = results[first];
        }
        for (int i = first; ok && !*lost && i < end; i++) {
            /* A stop signal to the process group also kills the runners: a trial they died
             * on then is left to be measured again (released), not recorded as the kernel's. */
            tcc_measure_error e = results[i].error;
            if (!stopping || (e != TCC_MEASURE_RUNTIME_DEVICE && e != TCC_MEASURE_RUN_TIMEOUT))
                *lost = !finish(w, &jobs[i], &results[i]);
        }
    }
    if (!indices || !results)
        cli_error("out of memory");
    else if (!ok)
        cli_error("worker %s: %s", w->name, tune_measurer_error(w->measurer));
    free(indices);
    free(results);
    return ok;
}

/* The store open again after it failed, waiting `*backoff` (doubled) first. */
static void reconnect(Worker *w, double *backoff)
{
    fprintf(stderr, "tcc-tune: worker %s: %s; trying again in %.1f s\n", w->name,
            tcc_last_error(w->ctx), *backoff);
    nap(*backoff);
    *backoff = *backoff * 2 < MAX_BACKOFF_S ? *backoff * 2 : MAX_BACKOFF_S;
    tcc_record_store_close(w->store);
    w->store = NULL;
    if (tcc_record_store_open(w->ctx, w->options->db, &w->store) != TCC_OK)
        w->store = NULL;
    /* The jobs held when the server went away may be finished or not: queued again, so that the
     * heartbeat does not keep alive jobs no one measures (a finished one is not running). */
    else if (tcc_job_release(w->store, w->name) != TCC_OK)
        fprintf(stderr, "tcc-tune: worker %s: %s\n", w->name, tcc_last_error(w->ctx));
}

static CliExit serve(Worker *w)
{
    int max = w->options->batch;
    tcc_job *jobs = calloc((size_t)max, sizeof *jobs);
    if (!jobs) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    fprintf(stderr, "tcc-tune: worker %s measuring jobs for %s on %s; %s\n", w->name, w->target,
            w->device_name, tune_measurer_machine_code(w->measurer));
    double idle = 0.01, backoff = 0.5;
    bool claimed = false; /* once: the store holds jobs */
    CliExit rc = CLI_EXIT_OK;
    while (!stopping && rc == CLI_EXIT_OK) {
        int count = 0;
        jobs[0].size = sizeof *jobs;
        tcc_status status = w->store ? tcc_job_claim(w->store, w->name, w->target, w->device_name,
                                                     w->tmpl ? w->key : NULL, max, jobs, &count)
                                     : TCC_ERROR_CUDA;
        /* A store that holds no jobs (an SQLite file) will not start to. */
        if (status == TCC_ERROR_UNSUPPORTED) {
            cli_error("%s", tcc_last_error(w->ctx));
            rc = cli_exit_for_status(status, false);
            break;
        }
        bool lost = status != TCC_OK;
        claimed |= !lost;
        if (!lost && count == 0) {
            nap(idle);
            idle = idle * 2 < MAX_IDLE_S ? idle * 2 : MAX_IDLE_S;
            continue;
        }
        if (!lost) {
            idle = 0.01;
            if (!work(w, jobs, count, &lost))
                rc = CLI_EXIT_ERROR;
        }
        if (lost && rc == CLI_EXIT_OK)
            reconnect(w, &backoff);
        else
            backoff = 0.5;
    }
    free(jobs);
    if (claimed && w->store && tcc_job_release(w->store, w->name) != TCC_OK)
        fprintf(stderr, "tcc-tune: worker %s: %s\n", w->name, tcc_last_error(w->ctx));
    fprintf(stderr, "tcc-tune: worker %s stopped after %lld jobs\n", w->name,
            (long long)w->finished);
    return rc;
}

static CliExit start(Worker *w, const tcc_template *tmpl, const tcc_workload *workload)
{
    const TuneOptions *o = w->options;
    TuneMeasureOptions m;
    tune_measure_options_init(&m);
    m.tmpl = tmpl, m.workload = workload, m.devices = o->devices, m.builders = o->builders;
    m.machine_code = o->machine_code, m.synthetic = o->synthetic;
    char error[512];
    if (!(w->measurer = tune_measurer_create(&m, error, sizeof error))) {
        cli_error("%s", error);
        return o->synthetic ? CLI_EXIT_ERROR : CLI_EXIT_NO_GPU;
    }
    w->device_name = tune_measurer_device_name(w->measurer);
    w->arch = tune_measurer_arch(w->measurer);
    const char *arch = o->conv.common.arch_name;
    if (arch && strcmp(arch, "native") != 0 && tcc_arch_parse(w->ctx, arch, &w->arch) != TCC_OK) {
        cli_error("%s", tcc_last_error(w->ctx));
        return CLI_EXIT_USAGE;
    }
    tune_target_format(w->arch, w->target, sizeof w->target);
    tcc_status status = tcc_record_store_open(w->ctx, o->db, &w->store);
    if (status != TCC_OK) {
        cli_error("%s", tcc_last_error(w->ctx));
        return cli_exit_for_status(status, false);
    }
    if (o->worker_name)
        snprintf(w->name, sizeof w->name, "%s", o->worker_name);
    else
        tune_unique_name(w->name, sizeof w->name);
    w->heart_started = pthread_create(&w->heart, NULL, heartbeat, w) == 0;
    if (!w->heart_started) {
        cli_error("cannot start the heartbeat thread");
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

CliExit tune_worker(const TuneOptions *options, const tcc_template *tmpl,
                    const tcc_workload *workload)
{
    Worker w = {.options = options};
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.wake, NULL);
    struct sigaction action = {.sa_handler = stop};
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    CliExit rc = tcc_context_create(&w.ctx) == TCC_OK ? start(&w, tmpl, workload) : CLI_EXIT_ERROR;
    if (rc == CLI_EXIT_OK)
        rc = serve(&w);
    if (w.heart_started) {
        pthread_mutex_lock(&w.lock);
        w.quit = true;
        pthread_cond_signal(&w.wake);
        pthread_mutex_unlock(&w.lock);
        pthread_join(w.heart, NULL);
    }
    tune_measurer_destroy(w.measurer);
    tcc_config_space_destroy(w.space);
    tcc_record_store_close(w.store);
    tcc_context_destroy(w.ctx);
    pthread_mutex_destroy(&w.lock);
    pthread_cond_destroy(&w.wake);
    return rc;
}
