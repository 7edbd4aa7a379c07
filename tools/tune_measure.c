/*
 * The measurer (tune_measure.h): its options, its start and end, and its runner processes,
 * one a GPU (the tool itself, exec'd with --runner); tune_pipeline.c feeds them and the builder
 * threads the trials.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, SOCK_CLOEXEC */
#endif
#include "tune_measure_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define HELLO_TIMEOUT_S 60.0 /* a runner opening its device (CUDA's start, a busy host) */

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

/* ---- runners --------------------------------------------------------------------------------- */

/* Reaps a runner (killing it first unless it is known to be exiting); its socket closed. */
void tune_runner_stop(Runner *r, bool kill_it)
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
bool tune_runner_start(TuneMeasurer *m, Runner *r)
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
        tune_runner_stop(r, !ok);
        return false;
    }
    r->compute_capability = hello.compute_capability;
    r->multiprocessors = hello.multiprocessors;
    if (!m->device_name[0])
        snprintf(m->device_name, sizeof m->device_name, "%s", hello.name);
    return true;
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
        if (!tune_runner_start(m, &m->runners[i]))
            return false;
    m->multiprocessors = m->runners[0].multiprocessors; /* as tune_measurer_arch's */
    return !o->space || tune_builders_start(m);
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
    return m->options.synthetic || tune_builders_start(m);
}

bool tune_measurer_retarget(TuneMeasurer *m, const TuneMeasureOptions *next)
{
    if (!m->options.space)
        return tune_measurer_set_space(m, next->space, next->arch) &&
               tune_measurer_retarget(m, next);
    /* Between batches the builders wait on `changed` and build nothing, but for a build given
     * up at its time limit (LLVM cannot be stopped), which still reads the options, the
     * workload and the space: once none runs, what they read is replaced under the lock, and
     * the kernels measured (another workload's) forgotten. */
    pthread_mutex_lock(&m->lock);
    while (m->building > 0)
        pthread_cond_wait(&m->changed, &m->lock);
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
        tune_runner_stop(&m->runners[i], false);
    }
    for (int i = 0; i < m->queued; i++)
        free(m->queue[(m->head + i) % m->capacity].bytes);
    free(m->queue);
    free(m->indices);
    free(m->results);
    free(m->ended);
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

int tune_measurer_multiprocessors(const TuneMeasurer *m)
{
    return m ? m->multiprocessors : 0;
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
