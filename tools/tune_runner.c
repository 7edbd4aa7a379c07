/*
 * A runner: the child process that measures on one GPU (tune_measure.h). It is the tool itself
 * exec'd with --runner --device N, so it starts clean and single-threaded, with a CUDA context
 * of its own that a faulting kernel may kill without harm to the tuner. For each trial it
 *
 *   1. reads the kernel's bytes back (tcc_kernel_deserialize) and loads it: a module the driver
 *      refuses is COMPILE_DEVICE;
 *   2. checks it once with a poisoned output against the CPU reference at sampled outputs, on
 *      random inputs and a reference made once per workload (tune_check.c): WRONG_ANSWER when
 *      it differs;
 *   3. times it as AutoTVM does: `repeat` timings of `number` runs, number raised so that a
 *      timing lasts min_repeat_ms, on the check's buffers;
 *
 * and replies. A launch that fails is RUNTIME_DEVICE; if the context is lost with it (a fault
 * inside the kernel), the runner says so and exits, and the parent starts another.
 */
#include "tune_runner.h"
#include "tune_check.h"

#include "driver/kernel.h" /* the fault-injection kernels, described by hand */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_NUMBER 10000 /* runs a timing, however fast the kernel */

const char *const tune_fault_names[TUNE_FAULT_COUNT] = {"none", "trap", "oob",
                                                        "spin", "hang", "crash"};

/* ---- messages ------------------------------------------------------------------------------ */

typedef struct MessageHeader {
    uint32_t type;
    uint32_t reserved;
    uint64_t size;
} MessageHeader;

/* Everything of `size` bytes, or false (the peer is gone: no SIGPIPE, MSG_NOSIGNAL). */
static bool send_all(int fd, const void *data, size_t size)
{
    const char *at = data;
    while (size > 0) {
        ssize_t n = send(fd, at, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        at += n;
        size -= (size_t)n;
    }
    return true;
}

static bool receive_all(int fd, void *data, size_t size)
{
    char *at = data;
    while (size > 0) {
        ssize_t n = read(fd, at, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        at += n;
        size -= (size_t)n;
    }
    return true;
}

bool tune_send(int fd, uint32_t type, const void *head, size_t head_size, const void *body,
               size_t body_size)
{
    MessageHeader header = {.type = type, .size = head_size + body_size};
    /* Small messages go in one write, so that a reply arrives whole or not at all. */
    char buffer[1024];
    if (sizeof header + head_size <= sizeof buffer) {
        memcpy(buffer, &header, sizeof header);
        memcpy(buffer + sizeof header, head, head_size);
        return send_all(fd, buffer, sizeof header + head_size) &&
               (body_size == 0 || send_all(fd, body, body_size));
    }
    return send_all(fd, &header, sizeof header) && send_all(fd, head, head_size) &&
           (body_size == 0 || send_all(fd, body, body_size));
}

/* No message is larger than a kernel's bytes; a header that says more is not ours. */
#define MAX_MESSAGE ((uint64_t)1 << 31)

bool tune_receive(int fd, uint32_t *type, void **payload, size_t *size)
{
    MessageHeader header;
    *payload = NULL;
    if (!receive_all(fd, &header, sizeof header) || header.size > MAX_MESSAGE)
        return false;
    void *data = malloc(header.size ? (size_t)header.size : 1);
    if (!data || !receive_all(fd, data, (size_t)header.size)) {
        free(data);
        return false;
    }
    *type = header.type;
    *payload = data;
    *size = (size_t)header.size;
    return true;
}

/* ---- the runner's state -------------------------------------------------------------------- */

typedef struct Runner {
    tcc_context *ctx;
    tcc_device *device;
    int fd;
    TuneCheck *check; /* the workload's inputs and reference, kept */
} Runner;

static void fail_result(tcc_measure_result *result, tcc_measure_error error, const char *what,
                        const char *why)
{
    result->error = error;
    result->ncost = 0;
    snprintf(result->message, sizeof result->message, "%s: %s", what, why);
}

/* Whether the device still works: a small buffer written and read back. A fault inside a
 * kernel makes every later call fail (the context is lost). */
static bool device_alive(Runner *r)
{
    tcc_device_buffer *probe = NULL;
    unsigned char byte = 0;
    bool alive = tcc_device_buffer_alloc(r->device, 16, &probe) == TCC_OK &&
                 tcc_device_buffer_fill_bytes(probe, 7) == TCC_OK &&
                 tcc_device_buffer_download(probe, &byte, 1) == TCC_OK && byte == 7;
    tcc_device_buffer_free(probe);
    return alive;
}

/* ---- fault injection ----------------------------------------------------------------------- */

/* Three entry points of one parameter (a 16-byte buffer of zeros): `trap;`, a load from an
 * address no allocation has, a loop waiting for a value the buffer never holds. Volatile
 * accesses, so that ptxas keeps them. */
static const char FAULT_PTX[] = ".version 7.0\n"
                                ".target sm_70\n"
                                ".address_size 64\n"
                                ".visible .entry tcc_fault_trap(.param .u64 p)\n"
                                "{\n"
                                "    trap;\n"
                                "    ret;\n"
                                "}\n"
                                ".visible .entry tcc_fault_oob(.param .u64 p)\n"
                                "{\n"
                                "    .reg .u64 %rd<3>;\n"
                                "    .reg .u32 %r<2>;\n"
                                "    ld.param.u64 %rd1, [p];\n"
                                "    cvta.to.global.u64 %rd1, %rd1;\n"
                                "    add.u64 %rd2, %rd1, 0x40000000000;\n"
                                "    ld.volatile.global.u32 %r1, [%rd2];\n"
                                "    st.volatile.global.u32 [%rd1], %r1;\n"
                                "    ret;\n"
                                "}\n"
                                ".visible .entry tcc_fault_spin(.param .u64 p)\n"
                                "{\n"
                                "    .reg .u64 %rd<2>;\n"
                                "    .reg .u32 %r<2>;\n"
                                "    .reg .pred %p<2>;\n"
                                "    ld.param.u64 %rd1, [p];\n"
                                "    cvta.to.global.u64 %rd1, %rd1;\n"
                                "LOOP:\n"
                                "    ld.volatile.global.u32 %r1, [%rd1];\n"
                                "    setp.ne.u32 %p1, %r1, 305419896;\n"
                                "    @%p1 bra LOOP;\n"
                                "    ret;\n"
                                "}\n";

/* Runs the fault kernel `fault` instead of the trial's: what a faulting or spinning kernel of
 * the tuner would do. */
static void run_fault(Runner *r, TuneFault fault, tcc_measure_result *result)
{
    static const char *const entries[] = {[TUNE_FAULT_TRAP] = "tcc_fault_trap",
                                          [TUNE_FAULT_OOB] = "tcc_fault_oob",
                                          [TUNE_FAULT_SPIN] = "tcc_fault_spin"};
    tcc_kernel *kernel = calloc(1, sizeof *kernel);
    tcc_device_buffer *buffer = NULL;
    tcc_loaded_kernel *loaded = NULL;
    tcc_status status = TCC_ERROR_OUT_OF_MEMORY;
    if (kernel && (kernel->ptx = strdup(FAULT_PTX)) &&
        (kernel->launches[0].name = strdup(entries[fault]))) {
        kernel->nlaunch = kernel->nparam = 1;
        for (int d = 0; d < 3; d++)
            kernel->launches[0].grid[d] = kernel->launches[0].block[d] = 1;
        status = tcc_device_buffer_alloc(r->device, 16, &buffer);
    }
    if (status == TCC_OK)
        status = tcc_device_buffer_fill_bytes(buffer, 0);
    if (status == TCC_OK)
        status = tcc_kernel_load(r->device, kernel, &loaded);
    if (status == TCC_OK)
        status = tcc_kernel_launch(loaded, 1, &buffer);
    if (status == TCC_OK) /* the fake driver computes nothing: the fault did not happen */
        fail_result(result, TCC_MEASURE_WRONG_ANSWER, "injected fault", "the kernel returned");
    else
        fail_result(result, TCC_MEASURE_RUNTIME_DEVICE, "injected fault", tcc_last_error(r->ctx));
    tcc_loaded_kernel_destroy(loaded);
    tcc_device_buffer_free(buffer);
    tcc_kernel_destroy(kernel);
}

/* ---- a trial --------------------------------------------------------------------------------- */

/* AutoTVM's timing: `repeat` costs, each the time of one of `number` runs. */
static tcc_status time_kernel(Runner *r, tcc_loaded_kernel *loaded, const TuneTrial *t,
                              tcc_measure_result *result)
{
    int number = t->number > 0 ? t->number : 1;
    int repeat = t->repeat < 1 ? 1 : t->repeat > 8 ? 8 : t->repeat;
    double ms = 0;
    tcc_device_buffer *const *buffers = NULL;
    int nbuffer = tune_check_buffers(r->check, &buffers);
    tcc_status status = tcc_kernel_time(loaded, nbuffer, buffers, 1, number, &ms);
    if (status == TCC_OK && ms > 0 && number * ms < t->min_repeat_ms) {
        double wanted = ceil(t->min_repeat_ms / ms);
        number = wanted > MAX_NUMBER ? MAX_NUMBER : (int)wanted;
    }
    for (int i = 0; i < repeat && status == TCC_OK; i++) {
        status = tcc_kernel_time(loaded, nbuffer, buffers, 0, number, &ms);
        result->costs[i] = ms * 1e-3;
        result->ncost = i + 1;
    }
    return status;
}

/* Load, check, time. */
static void measure(Runner *r, const tcc_kernel *kernel, const TuneTrial *t,
                    tcc_measure_result *result)
{
    tcc_loaded_kernel *loaded = NULL;
    tcc_check_result check;
    double start = tune_monotonic_s(), loaded_at = start, checked_at = start;
    if (tcc_kernel_load(r->device, kernel, &loaded) != TCC_OK) {
        fail_result(result, TCC_MEASURE_COMPILE_DEVICE, "load", tcc_last_error(r->ctx));
    } else if ((loaded_at = tune_monotonic_s(),
                tune_check_prepare(&r->check, r->ctx, r->device, &t->workload, kernel, t->samples,
                                   t->seed)) != TCC_OK) {
        fail_result(result, TCC_MEASURE_RUNTIME_DEVICE, "check inputs", tcc_last_error(r->ctx));
    } else if (tune_check_run(r->check, loaded, &check) != TCC_OK) {
        fail_result(result, TCC_MEASURE_RUNTIME_DEVICE, "check", tcc_last_error(r->ctx));
    } else if (checked_at = tune_monotonic_s(), !check.passed) {
        char why[200];
        snprintf(why, sizeof why, "max error %.3g (tolerance %.3g), %lld of %lld unwritten",
                 check.max_error, check.tolerance, (long long)check.unwritten,
                 (long long)check.compared);
        fail_result(result, TCC_MEASURE_WRONG_ANSWER, "check", why);
    } else if (time_kernel(r, loaded, t, result) != TCC_OK) {
        fail_result(result, TCC_MEASURE_RUNTIME_DEVICE, "timing", tcc_last_error(r->ctx));
    } else { /* where a trial's time goes, for whoever tunes the measurement */
        snprintf(result->message, sizeof result->message,
                 "load %.1f ms, check %.1f ms, timing %.1f ms", 1e3 * (loaded_at - start),
                 1e3 * (checked_at - loaded_at), 1e3 * (tune_monotonic_s() - checked_at));
    }
    tcc_loaded_kernel_destroy(loaded);
}

/* One trial's reply; *exiting when the context is lost. */
static void run_trial(Runner *r, const TuneTrial *t, const void *bytes, size_t size,
                      TuneReply *reply)
{
    *reply = (TuneReply){0};
    tcc_measure_result *result = &reply->result;
    if (t->fault == TUNE_FAULT_HANG)
        for (;;)
            pause(); /* until the parent's SIGKILL */
    if (t->fault == TUNE_FAULT_CRASH)
        _exit(70);
    if (t->fault > TUNE_FAULT_NONE && t->fault < TUNE_FAULT_HANG) {
        run_fault(r, (TuneFault)t->fault, result);
    } else {
        tcc_kernel *kernel = NULL;
        if (tcc_kernel_deserialize(r->ctx, bytes, size, &kernel) != TCC_OK)
            fail_result(result, TCC_MEASURE_UNKNOWN_ERROR, "runner", tcc_last_error(r->ctx));
        else
            measure(r, kernel, t, result);
        tcc_kernel_destroy(kernel);
    }
    if (result->error == TCC_MEASURE_RUNTIME_DEVICE && !device_alive(r)) {
        reply->exiting = 1;
        size_t n = strlen(result->message);
        snprintf(result->message + n, sizeof result->message - n, " (context lost)");
    }
}

/* ---- the runner's main ---------------------------------------------------------------------- */

static int open_device(Runner *r, int ordinal)
{
    TuneHello hello = {0};
    tcc_status status = tcc_context_create(&r->ctx);
    if (status == TCC_OK)
        status = tcc_device_open(r->ctx, ordinal, &r->device);
    if (status == TCC_OK) {
        hello.ok = 1;
        hello.compute_capability = tcc_device_arch(r->device);
        hello.multiprocessors = tcc_device_multiprocessors(r->device);
        snprintf(hello.name, sizeof hello.name, "%s", tcc_device_name(r->device));
    } else {
        snprintf(hello.message, sizeof hello.message, "device %d: %s", ordinal,
                 r->ctx ? tcc_last_error(r->ctx) : "out of memory");
    }
    bool sent = tune_send(r->fd, TUNE_MSG_HELLO, &hello, sizeof hello, NULL, 0);
    return hello.ok && sent ? 0 : 2;
}

static int serve(Runner *r)
{
    for (;;) {
        uint32_t type = 0;
        void *payload = NULL;
        size_t size = 0;
        if (!tune_receive(r->fd, &type, &payload, &size))
            return 0; /* the parent closed the socket: done */
        if (type != TUNE_MSG_TRIAL || size < sizeof(TuneTrial)) {
            free(payload);
            return 2;
        }
        TuneTrial trial;
        memcpy(&trial, payload, sizeof trial);
        TuneReply reply;
        run_trial(r, &trial, (char *)payload + sizeof trial, size - sizeof trial, &reply);
        free(payload);
        if (!tune_send(r->fd, TUNE_MSG_RESULT, &reply, sizeof reply, NULL, 0))
            return 2;
        if (reply.exiting)
            return 3;
    }
}

int tune_runner_main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], TUNE_RUNNER_FLAG) != 0)
        return -1;
    int ordinal = 0;
    if (argc >= 4 && strcmp(argv[2], "--device") == 0)
        ordinal = atoi(argv[3]);
    Runner r = {.fd = TUNE_RUNNER_FD};
    int rc = open_device(&r, ordinal);
    if (rc == 0)
        rc = serve(&r);
    tune_check_destroy(r.check);
    tcc_device_close(r.device);
    tcc_context_destroy(r.ctx);
    return rc;
}
