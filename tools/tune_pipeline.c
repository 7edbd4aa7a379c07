/*
 * The measurer's trials (tune_measure.h): builder threads and the runners fed a batch, or a
 * stream, of configs.
 *
 * A batch: the builders take the batch's configs in order, at most `capacity` built or
 * building ahead of the runners (a bounded queue), and record their own failures. The calling
 * thread hands each built kernel to an idle runner and waits on every busy runner's socket
 * (and a pipe the builders write to when they queue one) until the earliest deadline: a reply
 * is the trial's result; end of file is a runner that died (RUNTIME_DEVICE); a deadline passed
 * is a runner killed (RUN_TIMEOUT). A runner gone is started again for its next trial.
 *
 * A config whose kernel was measured before (tune_seen.c) is not measured again: its trial
 * copies that result, at once or, where the kernel's own trial is in this batch, at the end.
 *
 * A stream (a worker's jobs) is a batch that grows: whenever fewer configs are building or
 * built than the queue holds, the stream is asked for as many more, and each trial is told as
 * it ends. So the builders never wait for the last trial of a claim, nor the GPU for the first
 * build of the next. A stream measures every kernel (no copies).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, SOCK_CLOEXEC */
#endif
#include "tune_measure_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STREAM_ASK_S 0.05 /* how soon a stream that gave no configs is asked again */

/* ---- builders -------------------------------------------------------------------------------- */

static void wake(TuneMeasurer *m)
{
    char byte = 1;
    ssize_t n = write(m->wake[1], &byte, 1); /* full: the waiter wakes anyway */
    (void)n;
}

/* Trial `slot` ended, its result in m->results (under the lock). */
static void end_slot(TuneMeasurer *m, int slot)
{
    m->finished++;
    m->ended[m->nended++] = slot;
}

static void *builder_main(void *arg)
{
    TuneMeasurer *m = arg;
    tcc_context *ctx = NULL;
    if (tcc_context_create(&ctx) != TCC_OK)
        return NULL; /* the others build; a pool of none is refused at creation */
    pthread_mutex_lock(&m->lock);
    int id = m->started_builders++;
    for (;;) {
        while (!m->stop && (m->next >= m->count || m->queued + m->building >= m->capacity))
            pthread_cond_wait(&m->changed, &m->lock);
        if (m->stop)
            break;
        int slot = m->next++;
        int64_t index = m->indices[slot];
        m->building++;
        m->work[id].slot = slot;
        m->work[id].batch = m->batch;
        m->work[id].started = tune_monotonic_s();
        m->work[id].given_up = false;
        pthread_mutex_unlock(&m->lock);
        TuneBuilt made;
        tcc_measure_result result;
        bool ok = tune_build(&m->options, &m->workload, m->machine_code, m->multiprocessors, ctx,
                             index, &made, &result);
        Built built = {
            .slot = slot, .bytes = made.bytes, .size = made.size, .build_s = made.build_s};
        pthread_mutex_lock(&m->lock);
        m->building--;
        pthread_cond_broadcast(&m->changed); /* a retarget waits for no build to run */
        bool wanted = !m->work[id].given_up && m->work[id].batch == m->batch;
        m->work[id].slot = -1;
        if (!wanted) {
            free(built.bytes); /* its trial was recorded as BUILD_TIMEOUT */
            continue;
        }
        m->results[slot] = result;
        bool copies =
            ok && m->copying && tune_seen_copies(&m->seen, slot, index, made.identity, m->results);
        if (ok && !copies) {
            m->queue[(m->head + m->queued++) % m->capacity] = built;
        } else {
            free(built.bytes);
            end_slot(m, slot);
        }
        wake(m);
    }
    pthread_mutex_unlock(&m->lock);
    tcc_context_destroy(ctx);
    return NULL;
}

bool tune_builders_start(TuneMeasurer *m)
{
    /* The processors this process may run on (taskset, a container's limit), as nproc says. */
    cpu_set_t cpus;
    long processors = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus)
                                                                    : sysconf(_SC_NPROCESSORS_ONLN);
    int n = m->options.builders > 0 ? m->options.builders : processors > 0 ? (int)processors : 1;
    n = n > MAX_BUILDERS ? MAX_BUILDERS : n;
    m->capacity = n + 2 * m->nrunner;
    m->queue = calloc((size_t)m->capacity, sizeof *m->queue);
    for (int i = 0; i < MAX_BUILDERS; i++)
        m->work[i].slot = -1;
    if (!m->queue || pipe2(m->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(m->error, sizeof m->error, "cannot start the builders: %s", strerror(errno));
        return false;
    }
    for (int i = 0; i < n; i++) {
        if (pthread_create(&m->builders[i], NULL, builder_main, m) != 0) {
            snprintf(m->error, sizeof m->error, "cannot start builder thread %d", i);
            return false;
        }
        m->nbuilder = i + 1;
    }
    return true;
}

static void finish_trial(TuneMeasurer *m, Runner *r, const tcc_measure_result *result)
{
    tcc_measure_result *out = &m->results[r->trial.slot];
    double build_s = r->trial.build_s;
    *out = *result;
    out->all_cost += build_s;
    out->timestamp = tune_wall_s();
    free(r->trial.bytes);
    r->trial.bytes = NULL;
    r->busy = false;
    pthread_mutex_lock(&m->lock);
    end_slot(m, r->trial.slot);
    pthread_mutex_unlock(&m->lock);
}

/* Sends a built kernel to runner r (started again first if it is gone). */
static void send_trial(TuneMeasurer *m, Runner *r, Built built)
{
    const TuneMeasureOptions *o = &m->options;
    TuneTrial trial = {.workload = m->workload,
                       .index = m->indices[built.slot],
                       .fault = tune_faults_draw(&m->faults, m->trials),
                       .number = o->number,
                       .repeat = o->repeat,
                       .min_repeat_ms = o->min_repeat_ms,
                       .samples = o->check_samples,
                       .seed = tune_mix(o->seed ^ m->trials)};
    m->trials++;
    r->trial = built;
    r->busy = true;
    double start = tune_monotonic_s();
    if (r->pid <= 0 && !tune_runner_start(m, r)) {
        tcc_measure_result result = {0};
        tune_set_result(&result, TCC_MEASURE_RUNTIME_DEVICE, m->error);
        finish_trial(m, r, &result);
        m->failed_starts++;
        return;
    }
    m->failed_starts = 0;
    r->deadline = tune_monotonic_s() + o->run_timeout;
    if (!tune_send(r->fd, TUNE_MSG_TRIAL, &trial, sizeof trial, built.bytes, built.size))
        r->deadline = start; /* gone: its end of file is read as a death */
}

/* Runner r is readable or past its deadline: its reply, its death or its timeout. */
static void collect(TuneMeasurer *m, Runner *r, bool readable)
{
    tcc_measure_result result = {0};
    if (!readable) {
        char message[96];
        snprintf(message, sizeof message, "no reply in %.1f s: the runner was killed",
                 m->options.run_timeout);
        tune_set_result(&result, TCC_MEASURE_RUN_TIMEOUT, message);
        tune_runner_stop(r, true);
        m->restarts++;
        finish_trial(m, r, &result);
        return;
    }
    uint32_t type = 0;
    void *payload = NULL;
    size_t size = 0;
    if (tune_receive(r->fd, &type, &payload, &size) && type == TUNE_MSG_RESULT &&
        size == sizeof(TuneReply)) {
        TuneReply reply;
        memcpy(&reply, payload, sizeof reply);
        free(payload);
        if (reply.exiting) {
            tune_runner_stop(r, false);
            m->restarts++;
        }
        finish_trial(m, r, &reply.result);
        return;
    }
    free(payload);
    int status = 0;
    close(r->fd);
    r->fd = -1;
    if (waitpid(r->pid, &status, WNOHANG) == 0) /* alive, its reply malformed: not waited on */
        kill(r->pid, SIGKILL);
    while (r->pid > 0 && waitpid(r->pid, &status, 0) < 0 && errno == EINTR)
        ;
    r->pid = 0;
    m->restarts++;
    char message[96];
    if (WIFSIGNALED(status))
        snprintf(message, sizeof message, "the runner died (signal %d)", WTERMSIG(status));
    else
        snprintf(message, sizeof message, "the runner died (exit status %d)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    tune_set_result(&result, TCC_MEASURE_RUNTIME_DEVICE, message);
    finish_trial(m, r, &result);
}

/* ---- a batch --------------------------------------------------------------------------------- */

/* Hands queued kernels to idle runners. */
static void dispatch(TuneMeasurer *m)
{
    for (int i = 0; i < m->nrunner; i++) {
        Runner *r = &m->runners[i];
        if (r->busy)
            continue;
        pthread_mutex_lock(&m->lock);
        bool have = m->queued > 0;
        Built built = {0};
        if (have) {
            built = m->queue[m->head];
            m->head = (m->head + 1) % m->capacity;
            m->queued--;
            pthread_cond_broadcast(&m->changed); /* room for another build */
        }
        pthread_mutex_unlock(&m->lock);
        if (have)
            send_trial(m, r, built);
    }
}

/* Every trial given has ended. */
static bool batch_done(TuneMeasurer *m)
{
    pthread_mutex_lock(&m->lock);
    bool done = m->finished >= m->count;
    pthread_mutex_unlock(&m->lock);
    return done;
}

/* Builds of this batch past the time limit are given up (LLVM cannot be stopped: the thread
 * finishes unused). Returns when the next build running reaches the limit (-1: none runs). */
static double give_up_slow_builds(TuneMeasurer *m)
{
    double now = tune_monotonic_s(), limit = m->options.build_timeout, next = -1;
    pthread_mutex_lock(&m->lock);
    for (int b = 0; b < m->started_builders; b++) {
        if (m->work[b].slot < 0 || m->work[b].given_up || m->work[b].batch != m->batch)
            continue;
        double end = m->work[b].started + limit;
        if (now < end) {
            next = next < 0 || end < next ? end : next;
            continue;
        }
        m->work[b].given_up = true;
        tcc_measure_result *r = &m->results[m->work[b].slot];
        *r = (tcc_measure_result){.all_cost = now - m->work[b].started, .timestamp = tune_wall_s()};
        snprintf(r->message, sizeof r->message, "build still running after %.1f s", limit);
        r->error = TCC_MEASURE_BUILD_TIMEOUT;
        end_slot(m, m->work[b].slot);
    }
    pthread_mutex_unlock(&m->lock);
    return next;
}

/* Waits for a builder's wake-up, a runner's reply or the earliest deadline, at most `within`
 * seconds (-1: until one of them), and collects the runners' replies. */
static void wait_and_collect(TuneMeasurer *m, double within)
{
    struct pollfd fds[MAX_DEVICES + 1] = {{.fd = m->wake[0], .events = POLLIN}};
    double deadline = give_up_slow_builds(m);
    if (within >= 0 && (deadline < 0 || tune_monotonic_s() + within < deadline))
        deadline = tune_monotonic_s() + within;
    if (batch_done(m))
        return; /* the last trial was a build given up */
    for (int i = 0; i < m->nrunner; i++) {
        const Runner *r = &m->runners[i];
        fds[i + 1] = (struct pollfd){.fd = r->busy ? r->fd : -1, .events = POLLIN};
        if (r->busy && (deadline < 0 || r->deadline < deadline))
            deadline = r->deadline;
    }
    int timeout = -1;
    if (deadline >= 0) {
        double left = deadline - tune_monotonic_s();
        timeout = left <= 0 ? 0 : (int)(left * 1000) + 1;
    }
    int n = poll(fds, (nfds_t)m->nrunner + 1, timeout);
    if (n < 0)
        return; /* EINTR: look again */
    char drain[64];
    while (read(m->wake[0], drain, sizeof drain) > 0)
        ;
    double now = tune_monotonic_s();
    for (int i = 0; i < m->nrunner; i++) {
        Runner *r = &m->runners[i];
        bool ready = fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR);
        if (r->busy && (ready || now >= r->deadline))
            collect(m, r, ready);
    }
}

/* Room for `slots` trials, under the lock (the builders read the arrays). */
static bool reserve(TuneMeasurer *m, int slots)
{
    if (slots <= m->slots)
        return true;
    int want = m->slots ? m->slots : 64;
    while (want < slots && want <= INT_MAX / 2)
        want *= 2;
    if (want < slots) {
        snprintf(m->error, sizeof m->error, "too many trials: %d", slots);
        return false;
    }
    int64_t *indices = realloc(m->indices, (size_t)want * sizeof *indices);
    m->indices = indices ? indices : m->indices;
    tcc_measure_result *results = realloc(m->results, (size_t)want * sizeof *results);
    m->results = results ? results : m->results;
    int *ended = realloc(m->ended, (size_t)want * sizeof *ended);
    m->ended = ended ? ended : m->ended;
    if (!indices || !results || !ended) {
        snprintf(m->error, sizeof m->error, "out of memory for %d trials", slots);
        return false;
    }
    m->slots = want;
    return true;
}

/* A batch of `count` configs, or a stream (count 0, more to come), for the builders. */
static bool begin(TuneMeasurer *m, int count, const int64_t *indices, bool copying)
{
    pthread_mutex_lock(&m->lock);
    bool ok = reserve(m, count > 0 ? count : 1);
    if (ok && copying && !(ok = tune_seen_start_batch(&m->seen, count)))
        snprintf(m->error, sizeof m->error, "out of memory for a batch of %d", count);
    if (ok) {
        if (count > 0)
            memcpy(m->indices, indices, (size_t)count * sizeof *indices);
        m->count = count;
        m->next = m->finished = m->nended = 0;
        m->copying = copying;
        m->batch++;
        pthread_cond_broadcast(&m->changed);
    }
    pthread_mutex_unlock(&m->lock);
    return ok;
}

/* Asks the stream for as many configs as the builders would start on now: how many it gave,
 * -1 when out of memory. */
static int feed(TuneMeasurer *m, const TuneStream *stream)
{
    pthread_mutex_lock(&m->lock);
    int room = m->capacity - m->queued - m->building - (m->count - m->next);
    int count = m->count;
    bool ok = room <= 0 || reserve(m, count + room);
    pthread_mutex_unlock(&m->lock);
    if (!ok || room <= 0)
        return ok ? 0 : -1;
    /* Slots from `count` on are not the builders' until the count says so. */
    int given = stream->more(stream->user, room, m->indices + count);
    given = given < 0 ? 0 : given > room ? room : given;
    pthread_mutex_lock(&m->lock);
    m->count += given;
    pthread_cond_broadcast(&m->changed);
    pthread_mutex_unlock(&m->lock);
    return given;
}

/* Tells the stream of the trials ended since it was last told. */
static void report(TuneMeasurer *m, const TuneStream *stream)
{
    for (;;) {
        pthread_mutex_lock(&m->lock);
        int slot = m->nended > 0 ? m->ended[--m->nended] : -1;
        tcc_measure_result result;
        if (slot >= 0)
            result = m->results[slot];
        pthread_mutex_unlock(&m->lock);
        if (slot < 0)
            return;
        stream->ended(stream->user, slot, &result);
    }
}

/* The batch or stream over: a build still running is dropped when it ends, and a kernel queued
 * or on a runner (a run that failed) is no trial of the next. */
static void end_run(TuneMeasurer *m)
{
    for (int i = 0; i < m->nrunner; i++) {
        Runner *r = &m->runners[i];
        if (r->busy) {
            tune_runner_stop(r, true);
            free(r->trial.bytes);
            r->trial.bytes = NULL;
            r->busy = false;
        }
    }
    pthread_mutex_lock(&m->lock);
    m->count = m->next = 0; /* the builders wait for the next batch */
    m->batch++;
    for (; m->queued > 0; m->queued--, m->head = (m->head + 1) % m->capacity)
        free(m->queue[m->head].bytes);
    pthread_mutex_unlock(&m->lock);
}

/* Builds and measures the batch, or the stream until it gives no more and every trial ended. */
static tcc_status run(TuneMeasurer *m, const TuneStream *stream)
{
    tcc_status status = TCC_OK;
    for (;;) {
        int given = stream ? feed(m, stream) : 0;
        if (given < 0) {
            status = TCC_ERROR_OUT_OF_MEMORY;
            break;
        }
        /* Read before the ends are told: a trial a builder ends meanwhile is told next round. */
        bool done = given == 0 && batch_done(m);
        if (stream)
            report(m, stream);
        if (done)
            break;
        /* A GPU gone (its runners no longer start) ends the measuring instead of every trial. */
        if (m->failed_starts >= MAX_FAILED_STARTS) {
            status = TCC_ERROR_CUDA;
            break;
        }
        dispatch(m);
        /* A stream short of configs is asked again soon: jobs may have been queued since. */
        wait_and_collect(m, stream ? STREAM_ASK_S : -1);
    }
    if (status == TCC_OK && m->copying)
        tune_seen_end_batch(&m->seen, m->results);
    end_run(m);
    return status;
}

static void measure_synthetic(TuneMeasurer *m, int64_t index, tcc_measure_result *result)
{
    tune_synthetic_measure(m->options.space, m->options.seed, index, result);
    if (m->synthetic_ms > 0)
        tune_sleep_s(m->synthetic_ms * 1e-3);
}

tcc_status tune_measure_batch(TuneMeasurer *m, int count, const int64_t *indices,
                              tcc_measure_result *results)
{
    if (!m || !m->options.space || count < 0 || (count > 0 && (!indices || !results)))
        return TCC_ERROR_INVALID_ARGUMENT;
    if (m->options.synthetic) {
        for (int i = 0; i < count; i++)
            measure_synthetic(m, indices[i], &results[i]);
        return TCC_OK;
    }
    if (count == 0)
        return TCC_OK;
    if (!begin(m, count, indices, !m->options.measure_duplicates))
        return TCC_ERROR_OUT_OF_MEMORY;
    tcc_status status = run(m, NULL);
    memcpy(results, m->results, (size_t)count * sizeof *results);
    return status;
}

tcc_status tune_measure_stream(TuneMeasurer *m, const TuneStream *stream)
{
    if (!m || !m->options.space || !stream || !stream->more || !stream->ended)
        return TCC_ERROR_INVALID_ARGUMENT;
    /* The synthetic cost is measured one config at a time: it asks for one. */
    int64_t index;
    for (int slot = 0; m->options.synthetic && stream->more(stream->user, 1, &index) > 0; slot++) {
        tcc_measure_result result;
        measure_synthetic(m, index, &result);
        stream->ended(stream->user, slot, &result);
    }
    if (m->options.synthetic)
        return TCC_OK;
    return begin(m, 0, NULL, false) ? run(m, stream) : TCC_ERROR_OUT_OF_MEMORY;
}
