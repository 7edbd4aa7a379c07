/*
 * tcc-tune --measure workers (tune_jobs.h): a batch's configs queued as jobs in the PostgreSQL
 * store for the workers of any host, and their results read back as the workers finish them.
 * The workers add each trial's record, in the transaction that finishes its job; the
 * coordinator only waits, queueing again the jobs of workers that stopped answering.
 */
#include "tune_jobs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How often the results are read while waiting, and stale workers looked for. */
static const double POLL_S = 0.05, STALE_CHECK_S = 1.0;

/* The settings a job carries, each written and read by this one format (and copied by
 * tune_measurer_retarget). */
#define JOB_OPTIONS                                                                                \
    "seed=%" PRIu64 " number=%d repeat=%d min_repeat_ms=%.17g timeout=%.17g "                      \
    "build_timeout=%.17g samples=%" PRId64 " measure_duplicates=%d"
#define JOB_OPTIONS_READ                                                                           \
    "seed=%" SCNu64 " number=%d repeat=%d min_repeat_ms=%lf timeout=%lf build_timeout=%lf "        \
    "samples=%" SCNd64 " measure_duplicates=%d%n"

void tune_job_options_format(const TuneMeasureOptions *m, char *out, size_t size)
{
    snprintf(out, size, JOB_OPTIONS, m->seed, m->number, m->repeat, m->min_repeat_ms,
             m->run_timeout, m->build_timeout, m->check_samples, (int)m->measure_duplicates);
}

bool tune_job_options_parse(const char *text, TuneMeasureOptions *m)
{
    int duplicates = 0, end = 0;
    if (sscanf(text, JOB_OPTIONS_READ, &m->seed, &m->number, &m->repeat, &m->min_repeat_ms,
               &m->run_timeout, &m->build_timeout, &m->check_samples, &duplicates, &end) != 8 ||
        text[end] != '\0' || m->number < 1 || m->repeat < 1 || !(m->run_timeout > 0) ||
        !(m->build_timeout > 0) || m->check_samples < 0)
        return false;
    m->measure_duplicates = duplicates != 0;
    return true;
}

void tune_unique_name(char *out, size_t size)
{
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    uint64_t nonce = tune_mix((uint64_t)getpid() ^ (uint64_t)(tune_wall_s() * 1e9));
    FILE *random = fopen("/dev/urandom", "rb");
    if (random) {
        if (fread(&nonce, sizeof nonce, 1, random) != 1)
            nonce ^= tune_mix(nonce);
        fclose(random);
    }
    snprintf(out, size, "%s:%d:%016" PRIx64, host, (int)getpid(), nonce);
}

void tune_target_format(tcc_arch arch, char *out, size_t size)
{
    snprintf(out, size, "cuda -arch=%s", tcc_arch_name(arch));
}

tcc_status tune_target_arch(tcc_context *ctx, const char *target, tcc_arch *arch)
{
    const char *name = strstr(target, "-arch=");
    return tcc_arch_parse(ctx, name ? name + strlen("-arch=") : target, arch);
}

void tune_remote_init(TuneRemote *r, const TuneMeasureOptions *m)
{
    tune_unique_name(r->run, sizeof r->run);
    /* Each job is measured by itself: a worker's result copied from another config's kernel
     * would be a trial that ran nothing, recorded as this config's. */
    TuneMeasureOptions own = *m;
    own.measure_duplicates = true;
    tune_job_options_format(&own, r->options, sizeof r->options);
}

static bool fail(TuneRemote *r)
{
    snprintf(r->error, sizeof r->error, "%s", tcc_last_error(r->ctx));
    return false;
}

bool tune_remote_enqueue(TuneRemote *r, int count, const int64_t *indices, int64_t *ids)
{
    tcc_job *jobs = calloc((size_t)count, sizeof *jobs);
    char **texts = calloc((size_t)count, sizeof *texts);
    bool ok = jobs && texts;
    if (!ok)
        snprintf(r->error, sizeof r->error, "out of memory");
    for (int i = 0; ok && i < count; i++) {
        tcc_config *cfg;
        ok = tcc_config_create(r->ctx, r->space, indices[i], &cfg) == TCC_OK || fail(r);
        if (ok) {
            texts[i] = tcc_config_format(cfg);
            tcc_config_destroy(cfg);
            if (!(ok = texts[i] != NULL))
                snprintf(r->error, sizeof r->error, "out of memory");
        }
        jobs[i] = (tcc_job){.size = sizeof(tcc_job),
                            .run = r->run,
                            .template_name = r->template_name,
                            .workload_key = r->workload_key,
                            .target = r->target,
                            .device_name = r->device_name,
                            .config = texts[i],
                            .options = r->options,
                            .config_index = indices[i]};
    }
    ok = ok && (tcc_job_enqueue(r->store, count, jobs, ids) == TCC_OK || fail(r));
    for (int i = 0; texts && i < count; i++)
        free(texts[i]);
    free(texts);
    free(jobs);
    return ok;
}

/* Waits until every job is done, reading their results (done[i] and results[i] for each). */
static bool wait_for(TuneRemote *r, int count, const int64_t *ids, bool *done,
                     tcc_measure_result *results)
{
    double last_progress = tune_monotonic_s(), last_stale_check = 0;
    int finished = 0;
    while (finished < count) {
        if (tcc_job_results(r->store, count, ids, done, results) != TCC_OK)
            return fail(r);
        int now_finished = 0;
        for (int i = 0; i < count; i++)
            now_finished += done[i];
        double now = tune_monotonic_s();
        if (now_finished > finished)
            last_progress = now;
        finished = now_finished;
        if (finished == count)
            break;
        if (now - last_progress > r->deadline) {
            snprintf(r->error, sizeof r->error,
                     "no worker finished any of the %d jobs left in %.0f s (--worker-deadline): "
                     "are workers for %s%s%s running on the store's jobs?",
                     count - finished, r->deadline, r->target, r->device_name[0] ? " on " : "",
                     r->device_name);
            return false;
        }
        if (now - last_stale_check > STALE_CHECK_S) {
            int64_t requeued = 0, failed = 0;
            if (tcc_job_requeue_stale(r->store, r->grace, TUNE_MAX_ATTEMPTS, &requeued, &failed) !=
                TCC_OK)
                return fail(r);
            if (requeued || failed)
                fprintf(stderr,
                        "tcc-tune: %lld jobs of silent workers queued again, %lld recorded as "
                        "errors after %d such workers\n",
                        (long long)requeued, (long long)failed, TUNE_MAX_ATTEMPTS);
            last_stale_check = now;
        }
        tune_sleep_s(POLL_S);
    }
    return true;
}

bool tune_remote_wait(TuneRemote *r, int count, const int64_t *ids, tcc_measure_result *results)
{
    if (count == 0)
        return true;
    bool *done = calloc((size_t)count, sizeof *done);
    if (!done)
        snprintf(r->error, sizeof r->error, "out of memory");
    bool ok = done && wait_for(r, count, ids, done, results);
    free(done);
    return ok;
}

void tune_remote_cancel(TuneRemote *r)
{
    if (r->store)
        tcc_job_cancel(r->store, r->run); /* a failure leaves jobs some worker measures */
}
