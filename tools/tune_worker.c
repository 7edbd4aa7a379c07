/*
 * tcc-tune --worker (tune_jobs.h): claims the jobs of a PostgreSQL store that this host can
 * measure (its GPU's name, or "synthetic", and its arch), measures each as the tuning run that
 * queued it asks (the same builders and isolated runners as a local run, retargeted to each
 * workload), and finishes it with its record as its trial ends. The jobs of one workload are
 * one stream (tune_measure_stream): more are claimed whenever the builders have room, so that
 * the GPU measures while the next jobs build, and no claim waits for the last of another. A thread
 * of its own keeps the heartbeat of its jobs, on a connection of its own. A server that goes away
 * is waited for, with backoff; once it is back, the jobs the worker held are queued again
 * (tcc_job_release), for any worker, and so they are when the worker stops.
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

/* A stream of this many jobs ends, and another starts: the memory of its trials is freed. */
enum { MAX_STREAM_JOBS = 4096 };
/* A stream claims the jobs of its own workload first; it ends after this long, and the next
 * starts from the oldest job queued, so that the jobs of another run (whose coordinator waits
 * for them) are not left behind those of a run that keeps its next batch queued.
 * TCC_TUNE_STREAM_S=S sets it (a test of two runs sharing one worker). */
static const double MAX_STREAM_S = 10.0;

typedef struct Claimed Claimed;
typedef struct Jobs {
    Claimed *at;
    int count, capacity;
} Jobs;

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
    /* The jobs claimed: those the measurer has not been given, and those it has (by slot). */
    tcc_job *claims; /* what a claim returns, --batch of them */
    Jobs pending, stream;
    double stream_start, stream_limit_s; /* when the stream measuring now started; its end */
    bool lost; /* the store failed: the jobs held are released once it is back */
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

/* ---- the jobs claimed --------------------------------------------------------------------- */

/* A job claimed, its strings copied: the store's last only until its next call. */
typedef struct Claimed {
    int64_t id, config_index;
    char *template_name, *workload_key, *options, *config;
} Claimed;

static void claimed_free(Claimed *c)
{
    free(c->template_name);
    free(c->workload_key);
    free(c->options);
    free(c->config);
}

static bool jobs_reserve(Jobs *jobs, int count)
{
    if (count <= jobs->capacity)
        return true;
    int capacity = jobs->capacity ? 2 * jobs->capacity : 64;
    capacity = capacity < count ? count : capacity;
    Claimed *at = realloc(jobs->at, (size_t)capacity * sizeof *at);
    if (!at)
        return false;
    jobs->at = at, jobs->capacity = capacity;
    return true;
}

static void jobs_clear(Jobs *jobs)
{
    for (int i = 0; i < jobs->count; i++)
        claimed_free(&jobs->at[i]);
    jobs->count = 0;
}

static bool same_work(const Claimed *a, const Claimed *b)
{
    return strcmp(a->template_name, b->template_name) == 0 &&
           strcmp(a->workload_key, b->workload_key) == 0 && strcmp(a->options, b->options) == 0;
}

/* Up to `max` jobs claimed onto the pending ones: those of the workload measured now first,
 * where `same_first`, else the oldest. */
static tcc_status claim(Worker *w, int max, bool same_first)
{
    max = max < w->options->batch ? max : w->options->batch;
    int count = 0;
    w->claims[0].size = sizeof *w->claims;
    const char *prefer = same_first && w->tmpl ? w->key : NULL;
    tcc_status status =
        tcc_job_claim(w->store, w->name, w->target, w->device_name, prefer, max, w->claims, &count);
    if (status == TCC_OK && !jobs_reserve(&w->pending, w->pending.count + count))
        status = TCC_ERROR_OUT_OF_MEMORY;
    for (int i = 0; status == TCC_OK && i < count; i++) {
        const tcc_job *job = &w->claims[i];
        Claimed c = {.id = job->id,
                     .config_index = job->config_index,
                     .template_name = strdup(job->template_name),
                     .workload_key = strdup(job->workload_key),
                     .options = strdup(job->options),
                     .config = strdup(job->config)};
        w->pending.at[w->pending.count++] = c;
        if (!c.template_name || !c.workload_key || !c.options || !c.config)
            status = TCC_ERROR_OUT_OF_MEMORY;
    }
    return status; /* out of memory: the caller releases every job held, as for a lost store */
}

/* ---- what the measurer measures ------------------------------------------------------------ */

static bool measures(const Worker *w, const Claimed *job)
{
    return w->tmpl && strcmp(w->tmpl->name, job->template_name) == 0 &&
           strcmp(w->key, job->workload_key) == 0 && strcmp(w->settings, job->options) == 0;
}

/* The measurer retargeted to the job's template, workload and settings; false with *result
 * saying why a job cannot be measured here (which its record then says), or *fatal set when
 * the measurer itself failed. */
static bool retarget(Worker *w, const Claimed *job, tcc_measure_result *result, bool *fatal)
{
    if (measures(w, job))
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
        (status = tune_target_arch(w->ctx, w->target, &arch)) == TCC_OK)
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

/* ---- measuring and finishing ------------------------------------------------------------- */

/* The job done with its result as its record; false where the store failed. */
static bool finish(Worker *w, const Claimed *job, const tcc_measure_result *result)
{
    tcc_record record = {.size = sizeof record,
                         .template_name = job->template_name,
                         .workload_key = job->workload_key,
                         .target = w->target,
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

/* The pending jobs of the measurer's work, up to `room`, handed to it (indices[]) in order;
 * the others stay pending. How many. */
static int hand_over(Worker *w, int room, int64_t *indices)
{
    int given = 0, kept = 0;
    for (int i = 0; i < w->pending.count; i++) {
        Claimed *job = &w->pending.at[i];
        bool take = given < room && measures(w, job);
        if (take && !jobs_reserve(&w->stream, w->stream.count + 1)) {
            w->lost = true; /* out of memory: every job held is released, as for a lost store */
            take = false;
        }
        if (take) {
            indices[given++] = job->config_index;
            w->stream.at[w->stream.count++] = *job;
        } else {
            w->pending.at[kept++] = *job;
        }
    }
    w->pending.count = kept;
    return given;
}

/* The measurer's builders have room (TuneStream.more): the pending jobs of its work first, then
 * jobs claimed now, the same workload's first. A job of other work ends the stream: the
 * measurer is retargeted to it once the trials given have ended. */
static int more_jobs(void *user, int room, int64_t *indices)
{
    Worker *w = user;
    if (stopping || w->lost || w->stream.count >= MAX_STREAM_JOBS ||
        tune_monotonic_s() - w->stream_start > w->stream_limit_s)
        return 0;
    int given = hand_over(w, room, indices);
    if (given < room && w->pending.count == 0) {
        tcc_status status = claim(w, room - given, true);
        if (status != TCC_OK) {
            w->lost = true; /* the store failed, or memory: the jobs held are released */
            return given;
        }
        given += hand_over(w, room - given, indices + given);
    }
    return given;
}

/* A trial ended (TuneStream.ended): its job finished with the result as its record. */
static void job_ended(void *user, int slot, const tcc_measure_result *result)
{
    Worker *w = user;
    /* A stop signal to the process group also kills the runners: a trial they died on then is
     * left to be measured again (released), not recorded as the kernel's. */
    tcc_measure_error e = result->error;
    bool killed = stopping && (e == TCC_MEASURE_RUNTIME_DEVICE || e == TCC_MEASURE_RUN_TIMEOUT);
    if (!w->lost && !killed && !finish(w, &w->stream.at[slot], result))
        w->lost = true;
}

/* Measures the first pending job and every job of its work the worker holds or can claim, as
 * one stream; false where the measurer failed. */
static bool measure_pending(Worker *w)
{
    Claimed first = w->pending.at[0];
    tcc_measure_result result;
    bool fatal = false;
    if (!retarget(w, &first, &result, &fatal)) {
        if (fatal) {
            cli_error("worker %s: %s", w->name, tune_measurer_error(w->measurer));
            return false;
        }
        /* Every job of that work gets the one result. `first` is a copy of the first job, whose
         * strings the others are compared with: they are freed last, not with the job. */
        int kept = 0;
        for (int i = 0; i < w->pending.count; i++) {
            Claimed *job = &w->pending.at[i];
            if (!same_work(job, &first)) {
                w->pending.at[kept++] = *job;
                continue;
            }
            if (!w->lost && !finish(w, job, &result))
                w->lost = true;
            if (job != &w->pending.at[0])
                claimed_free(job);
        }
        claimed_free(&first);
        w->pending.count = kept;
        return true;
    }
    TuneStream stream = {.user = w, .more = more_jobs, .ended = job_ended};
    w->stream_start = tune_monotonic_s();
    tcc_status status = tune_measure_stream(w->measurer, &stream);
    jobs_clear(&w->stream);
    if (status != TCC_OK)
        cli_error("worker %s: %s", w->name, tune_measurer_error(w->measurer));
    return status == TCC_OK;
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
    jobs_clear(&w->pending);
    if (tcc_record_store_open(w->ctx, w->options->db, &w->store) != TCC_OK)
        w->store = NULL;
    /* The jobs held when the server went away may be finished or not: queued again, so that the
     * heartbeat does not keep alive jobs no one measures (a finished one is not running). */
    else if (tcc_job_release(w->store, w->name) != TCC_OK)
        fprintf(stderr, "tcc-tune: worker %s: %s\n", w->name, tcc_last_error(w->ctx));
    w->lost = !w->store;
}

static CliExit serve(Worker *w)
{
    if (!(w->claims = calloc((size_t)w->options->batch, sizeof *w->claims))) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    fprintf(stderr, "tcc-tune: worker %s measuring jobs for %s on %s; %s\n", w->name, w->target,
            w->device_name, tune_measurer_machine_code(w->measurer));
    double idle = 0.01, backoff = 0.5;
    bool claimed = false; /* once: the store holds jobs */
    CliExit rc = CLI_EXIT_OK;
    while (!stopping && rc == CLI_EXIT_OK) {
        if (w->lost) {
            reconnect(w, &backoff);
            continue;
        }
        backoff = 0.5;
        if (w->pending.count == 0) {
            /* The oldest job, to learn what to measure; the stream claims as its builders have
             * room, leaving the rest to other workers. */
            tcc_status status = claim(w, 1, false);
            /* A store that holds no jobs (an SQLite file) will not start to. */
            if (status == TCC_ERROR_UNSUPPORTED) {
                cli_error("%s", tcc_last_error(w->ctx));
                rc = cli_exit_for_status(status, false);
                break;
            }
            w->lost = status != TCC_OK;
            claimed |= !w->lost;
            if (!w->lost && w->pending.count == 0) {
                nap(idle);
                idle = idle * 2 < MAX_IDLE_S ? idle * 2 : MAX_IDLE_S;
            }
            if (w->lost || w->pending.count == 0)
                continue;
        }
        idle = 0.01;
        if (!measure_pending(w))
            rc = CLI_EXIT_ERROR;
    }
    jobs_clear(&w->pending);
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
    const char *stream_s = getenv("TCC_TUNE_STREAM_S");
    Worker w = {.options = options,
                .stream_limit_s = stream_s && atof(stream_s) > 0 ? atof(stream_s) : MAX_STREAM_S};
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
    jobs_clear(&w.pending);
    jobs_clear(&w.stream);
    free(w.pending.at);
    free(w.stream.at);
    free(w.claims);
    tcc_config_space_destroy(w.space);
    tcc_record_store_close(w.store);
    tcc_context_destroy(w.ctx);
    pthread_mutex_destroy(&w.lock);
    pthread_cond_destroy(&w.wake);
    return rc;
}
