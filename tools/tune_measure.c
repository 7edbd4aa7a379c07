/*
 * The measurer (tune_measure.h): builder threads and a runner process per GPU, or the
 * synthetic cost.
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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, SOCK_CLOEXEC */
#endif
#include "tune_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVICES 16
#define MAX_BUILDERS 256
#define MAX_FAILED_STARTS 3  /* in a row: the GPU is gone */
#define HELLO_TIMEOUT_S 60.0 /* a runner opening its device (CUDA's start, a busy host) */

/* ---- types ----------------------------------------------------------------------------------- */

typedef struct Built {
    int slot; /* the trial's position in the batch */
    void *bytes;
    size_t size;
    double build_s;
} Built;

typedef struct Runner {
    int device;
    pid_t pid; /* 0: not running */
    int fd;
    int compute_capability;
    bool busy;
    Built trial;
    double deadline;
} Runner;

struct TuneMeasurer {
    TuneMeasureOptions options;
    tcc_workload workload;
    char devices_text[128];
    char runner_path[4096];
    char error[512];
    char device_name[128];
    bool machine_code;         /* the builders compile it (nvJitLink) */
    char machine_code_by[256]; /* who compiles it, in words */
    TuneFaultShares faults;
    uint64_t trials; /* every trial so far, numbering the fault draws */
    int restarts;
    int failed_starts; /* runners that failed to start since one last started */
    int nrunner;
    Runner runners[MAX_DEVICES];
    /* The builders and what they share, under `lock`. */
    int nbuilder, started_builders;
    pthread_t builders[MAX_BUILDERS];
    /* What each builder builds: one past its time limit is given up (BUILD_TIMEOUT). */
    struct {
        int slot;       /* -1: none */
        uint64_t batch; /* the batch it belongs to */
        double started;
        bool given_up;
    } work[MAX_BUILDERS];
    uint64_t batch;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool stop;
    const int64_t *indices;
    tcc_measure_result *results;
    int count, next, building, finished;
    Built *queue; /* a ring of `capacity` */
    int capacity, head, queued;
    TuneSeen seen;       /* the kernels measured, each once */
    double synthetic_ms; /* $TCC_TUNE_SYNTHETIC_MS: each synthetic trial lasts this long */
    int wake[2];         /* builders -> the waiting thread */
};

/* ---- options --------------------------------------------------------------------------------- */

void tune_measure_options_init(TuneMeasureOptions *o)
{
    *o = (TuneMeasureOptions){.arch = TCC_SM_90A,
                              .devices = "0",
                              .build_timeout = 10.0,
                              .run_timeout = 10.0,
                              .number = 1,
                              .repeat = 3,
                              .min_repeat_ms = 5.0,
                              .check_samples = 2048,
                              .seed = 1};
}

static bool parse_devices(TuneMeasurer *m, const char *text)
{
    const char *at = text && *text ? text : "0";
    while (*at) {
        char *end = NULL;
        long device = strtol(at, &end, 10);
        if (end == at || device < 0 || device > 1023 || m->nrunner == MAX_DEVICES ||
            (*end && *end != ',')) {
            snprintf(m->error, sizeof m->error,
                     "--devices: expected GPU ordinals separated by commas, got '%s'", text);
            return false;
        }
        m->runners[m->nrunner++] = (Runner){.device = (int)device, .fd = -1};
        at = *end ? end + 1 : end;
    }
    return m->nrunner > 0;
}

/* ---- builders -------------------------------------------------------------------------------- */

static void wake(TuneMeasurer *m)
{
    char byte = 1;
    ssize_t n = write(m->wake[1], &byte, 1); /* full: the waiter wakes anyway */
    (void)n;
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
        bool ok =
            tune_build(&m->options, &m->workload, m->machine_code, ctx, index, &made, &result);
        Built built = {
            .slot = slot, .bytes = made.bytes, .size = made.size, .build_s = made.build_s};
        pthread_mutex_lock(&m->lock);
        m->building--;
        bool wanted = !m->work[id].given_up && m->work[id].batch == m->batch;
        m->work[id].slot = -1;
        if (!wanted) {
            free(built.bytes); /* its trial was recorded as BUILD_TIMEOUT */
            continue;
        }
        m->results[slot] = result;
        bool copies = ok && !m->options.measure_duplicates &&
                      tune_seen_copies(&m->seen, slot, index, made.identity, m->results);
        if (ok && !copies) {
            m->queue[(m->head + m->queued++) % m->capacity] = built;
        } else {
            free(built.bytes);
            m->finished++;
        }
        wake(m);
    }
    pthread_mutex_unlock(&m->lock);
    tcc_context_destroy(ctx);
    return NULL;
}

static bool start_builders(TuneMeasurer *m)
{
    long processors = sysconf(_SC_NPROCESSORS_ONLN);
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

/* ---- runners --------------------------------------------------------------------------------- */

/* Reaps a runner (killing it first unless it is known to be exiting); its socket closed. */
static void stop_runner(Runner *r, bool kill_it)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    if (r->pid <= 0)
        return;
    if (kill_it)
        kill(r->pid, SIGKILL);
    /* A runner told to go (end of file) or exiting on its own gets a few seconds to release
     * its GPU before it is killed. */
    for (int waited = 0; !kill_it && waited < 500; waited++) {
        if (waitpid(r->pid, NULL, WNOHANG) == r->pid) {
            r->pid = 0;
            return;
        }
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    if (!kill_it)
        kill(r->pid, SIGKILL);
    while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    r->pid = 0;
}

/* Waits until `fd` is readable or the deadline passes. */
static bool readable_by(int fd, double deadline)
{
    for (;;) {
        double left = deadline - tune_monotonic_s();
        if (left <= 0)
            return false;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n > 0)
            return true;
        if (n < 0 && errno != EINTR)
            return false;
    }
}

/* The child's side of the fork: only async-signal-safe calls (the builders hold locks). */
static void exec_runner(const char *path, char *const argv[], int fd, pid_t parent)
{
    /* A runner inside a spinning kernel would outlive a tuner killed: it dies with it. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(127);
    if (fd == TUNE_RUNNER_FD)
        fcntl(fd, F_SETFD, 0);
    else if (dup2(fd, TUNE_RUNNER_FD) < 0)
        _exit(127);
    execv(path, argv);
    _exit(127);
}

/* Starts the runner of r->device and waits for its HELLO. */
static bool start_runner(TuneMeasurer *m, Runner *r)
{
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        snprintf(m->error, sizeof m->error, "socketpair: %s", strerror(errno));
        return false;
    }
    char device[16];
    snprintf(device, sizeof device, "%d", r->device);
    char *argv[] = {m->runner_path, TUNE_RUNNER_FLAG, "--device", device, NULL};
    pid_t parent = getpid(), pid = fork();
    if (pid == 0)
        exec_runner(m->runner_path, argv, pair[1], parent);
    close(pair[1]);
    if (pid < 0) {
        close(pair[0]);
        snprintf(m->error, sizeof m->error, "fork: %s", strerror(errno));
        return false;
    }
    r->pid = pid;
    r->fd = pair[0];
    uint32_t type = 0;
    void *payload = NULL;
    size_t size = 0;
    bool ok = readable_by(r->fd, tune_monotonic_s() + HELLO_TIMEOUT_S) &&
              tune_receive(r->fd, &type, &payload, &size) && type == TUNE_MSG_HELLO &&
              size == sizeof(TuneHello);
    TuneHello hello = {0};
    if (ok)
        memcpy(&hello, payload, sizeof hello);
    free(payload);
    if (!ok || !hello.ok) {
        snprintf(m->error, sizeof m->error, "%s",
                 ok ? hello.message : "the measuring process did not start (--runner)");
        stop_runner(r, !ok);
        return false;
    }
    r->compute_capability = hello.compute_capability;
    if (!m->device_name[0])
        snprintf(m->device_name, sizeof m->device_name, "%s", hello.name);
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
    m->finished++;
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
    if (r->pid <= 0 && !start_runner(m, r)) {
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
        stop_runner(r, true);
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
            stop_runner(r, false);
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

/* Waits for a builder's wake-up, a runner's reply or the earliest deadline. */
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
        m->finished++;
    }
    pthread_mutex_unlock(&m->lock);
    return next;
}

static void wait_and_collect(TuneMeasurer *m)
{
    struct pollfd fds[MAX_DEVICES + 1] = {{.fd = m->wake[0], .events = POLLIN}};
    double deadline = give_up_slow_builds(m);
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

static tcc_status measure_on_gpus(TuneMeasurer *m, int count, const int64_t *indices,
                                  tcc_measure_result *results)
{
    pthread_mutex_lock(&m->lock);
    if (!tune_seen_start_batch(&m->seen, count)) {
        pthread_mutex_unlock(&m->lock);
        snprintf(m->error, sizeof m->error, "out of memory for a batch of %d", count);
        return TCC_ERROR_OUT_OF_MEMORY;
    }
    m->indices = indices;
    m->results = results;
    m->count = count;
    m->next = m->finished = 0;
    m->batch++;
    pthread_cond_broadcast(&m->changed);
    pthread_mutex_unlock(&m->lock);
    /* A GPU gone (its runners no longer start) ends the measuring instead of every trial. */
    while (!batch_done(m) && m->failed_starts < MAX_FAILED_STARTS) {
        dispatch(m);
        wait_and_collect(m);
    }
    if (batch_done(m))
        tune_seen_end_batch(&m->seen, results);
    pthread_mutex_lock(&m->lock);
    m->count = m->next = 0; /* the builders wait for the next batch */
    pthread_mutex_unlock(&m->lock);
    return m->failed_starts < MAX_FAILED_STARTS ? TCC_OK : TCC_ERROR_CUDA;
}

tcc_status tune_measure_batch(TuneMeasurer *m, int count, const int64_t *indices,
                              tcc_measure_result *results)
{
    if (!m || !m->options.space || count < 0 || (count > 0 && (!indices || !results)))
        return TCC_ERROR_INVALID_ARGUMENT;
    if (m->options.synthetic) {
        for (int i = 0; i < count; i++) {
            tune_synthetic_measure(m->options.space, m->options.seed, indices[i], &results[i]);
            if (m->synthetic_ms > 0)
                tune_sleep_s(m->synthetic_ms * 1e-3);
        }
        return TCC_OK;
    }
    return count > 0 ? measure_on_gpus(m, count, indices, results) : TCC_OK;
}

/* ---- the measurer ---------------------------------------------------------------------------- */

static bool setup(TuneMeasurer *m, const TuneMeasureOptions *o)
{
    if (!o->workload || (!o->synthetic && !o->tmpl)) {
        snprintf(m->error, sizeof m->error, "the measurer needs a template and a workload");
        return false;
    }
    m->workload = *o->workload;
    if (o->synthetic) {
        snprintf(m->device_name, sizeof m->device_name, "synthetic");
        const char *ms = getenv("TCC_TUNE_SYNTHETIC_MS");
        m->synthetic_ms = ms ? atof(ms) : 0;
        return true;
    }
    const char *path = o->runner_path ? o->runner_path : "/proc/self/exe";
    if (!o->runner_path) { /* resolved now: /proc/self/exe would be the shell after an exec */
        ssize_t n = readlink(path, m->runner_path, sizeof m->runner_path - 1);
        if (n <= 0) {
            snprintf(m->error, sizeof m->error, "cannot find this program: %s", strerror(errno));
            return false;
        }
        m->runner_path[n] = '\0';
    } else {
        snprintf(m->runner_path, sizeof m->runner_path, "%s", path);
    }
    const char *faults = o->inject_fault ? o->inject_fault : getenv("TCC_TUNE_INJECT_FAULT");
    if (!tune_machine_code_choose(o->machine_code, &m->machine_code, m->machine_code_by,
                                  sizeof m->machine_code_by, m->error, sizeof m->error) ||
        !parse_devices(m, o->devices) ||
        !tune_faults_parse(faults, &m->faults, m->error, sizeof m->error))
        return false;
    for (int i = 0; i < m->nrunner; i++)
        if (!start_runner(m, &m->runners[i]))
            return false;
    return !o->space || start_builders(m);
}

bool tune_measurer_set_space(TuneMeasurer *m, const tcc_config_space *space, tcc_arch arch)
{
    if (!m)
        return false;
    if (!space || m->nbuilder) {
        snprintf(m->error, sizeof m->error,
                 "the measurer's space is given once, before the first batch");
        return false;
    }
    m->options.space = space;
    m->options.arch = arch;
    return m->options.synthetic || start_builders(m);
}

bool tune_measurer_retarget(TuneMeasurer *m, const TuneMeasureOptions *next)
{
    if (!m->options.space)
        return tune_measurer_set_space(m, next->space, next->arch) &&
               tune_measurer_retarget(m, next);
    /* Between batches the builders wait on `changed` and build nothing: what they read is
     * replaced under the lock, and the kernels measured (another workload's) forgotten. */
    pthread_mutex_lock(&m->lock);
    TuneMeasureOptions *o = &m->options;
    o->tmpl = next->tmpl;
    m->workload = *next->workload;
    o->space = next->space;
    o->arch = next->arch;
    o->seed = next->seed;
    o->number = next->number;
    o->check_samples = next->check_samples;
    o->repeat = next->repeat;
    o->min_repeat_ms = next->min_repeat_ms;
    o->run_timeout = next->run_timeout;
    o->build_timeout = next->build_timeout;
    o->measure_duplicates = next->measure_duplicates;
    tune_seen_free(&m->seen);
    memset(&m->seen, 0, sizeof m->seen);
    pthread_mutex_unlock(&m->lock);
    return true;
}

TuneMeasurer *tune_measurer_create(const TuneMeasureOptions *options, char *error,
                                   size_t error_size)
{
    TuneMeasurer *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    m->options = *options;
    m->wake[0] = m->wake[1] = -1;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->changed, NULL);
    if (!setup(m, options)) {
        snprintf(error, error_size, "%s", m->error);
        tune_measurer_destroy(m);
        return NULL;
    }
    return m;
}

void tune_measurer_destroy(TuneMeasurer *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    m->stop = true;
    pthread_cond_broadcast(&m->changed);
    pthread_mutex_unlock(&m->lock);
    for (int i = 0; i < m->nbuilder; i++)
        pthread_join(m->builders[i], NULL);
    for (int i = 0; i < m->nrunner; i++) {
        free(m->runners[i].trial.bytes);
        stop_runner(&m->runners[i], false);
    }
    for (int i = 0; i < m->queued; i++)
        free(m->queue[(m->head + i) % m->capacity].bytes);
    free(m->queue);
    tune_seen_free(&m->seen);
    for (int i = 0; i < 2; i++)
        if (m->wake[i] >= 0)
            close(m->wake[i]);
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->changed);
    free(m);
}

const char *tune_measurer_error(const TuneMeasurer *m)
{
    return m ? m->error : "";
}

const char *tune_measurer_device_name(const TuneMeasurer *m)
{
    return m && m->device_name[0] ? m->device_name : "unknown";
}

tcc_arch tune_measurer_arch(const TuneMeasurer *m)
{
    if (!m)
        return TCC_SM_90A;
    tcc_arch arch = m->nrunner > 0 ? tcc_arch_for_device(m->runners[0].compute_capability) : 0;
    return arch ? arch : m->options.arch;
}

const char *tune_measurer_machine_code(const TuneMeasurer *m)
{
    return m && m->machine_code_by[0] ? m->machine_code_by : "none (synthetic)";
}

int64_t tune_measurer_same_as(const TuneMeasurer *m, int slot)
{
    return m ? tune_seen_same_as(&m->seen, slot) : -1;
}

int tune_measurer_restarts(const TuneMeasurer *m)
{
    return m ? m->restarts : 0;
}
