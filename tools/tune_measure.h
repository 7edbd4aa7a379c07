/*
 * tcc-tune's measurement, AutoTVM's LocalBuilder + LocalRunner:
 *
 *   builders  a pool of CPU threads, each with its own tcc_context, instantiating the
 *             template at each config and serializing the kernel, while the GPUs measure
 *             the kernels built before (a bounded queue between them)
 *   runners   one child process a GPU (the tool itself, exec'd with --runner --device N):
 *             the only processes that touch CUDA. Each loads a kernel, checks it once against
 *             the CPU reference on sampled outputs, times it with CUDA events (repeat,
 *             min_repeat_ms) and replies. A runner that hangs is killed at the time limit
 *             (RUN_TIMEOUT), one that dies (a faulting kernel loses its CUDA context) is
 *             restarted (RUNTIME_DEVICE): a bad kernel costs one trial, never the tuner.
 *   synthetic a deterministic cost of the knobs instead of the GPU (tune_synthetic.c), so
 *             the whole tool runs in CI.
 *
 * TCC_TUNE_SYNTHETIC_MS=N makes each synthetic trial last N ms (a worker killed mid-job).
 * Fault injection (testing the isolation): TCC_TUNE_INJECT_FAULT="trap:0.1,oob:0.1,spin:0.05,
 * seed:7" makes that share of GPU trials run a tiny kernel that traps, reads an invalid address
 * or spins forever instead of the real one; "hang" and "crash" make the runner itself hang or
 * exit (what a spinning or faulting kernel does to it, without a GPU: the fake driver).
 */
#ifndef TOOLS_TUNE_MEASURE_H
#define TOOLS_TUNE_MEASURE_H

#include "tcc/tcc.h"
#include "tcc/tune.h"

#include <stddef.h>

typedef struct TuneMeasurer TuneMeasurer;

/* Who compiles the PTX to machine code (--machine-code). */
typedef enum TuneMachineCode {
    TUNE_MACHINE_CODE_AUTO = 0,  /* nvJitLink in the builders where it opens, else the driver */
    TUNE_MACHINE_CODE_NVJITLINK, /* nvJitLink, or the measurer refuses to start */
    TUNE_MACHINE_CODE_DRIVER,    /* the driver's JIT, as the runner loads each kernel */
} TuneMachineCode;

typedef struct TuneMeasureOptions {
    const tcc_template *tmpl;
    const tcc_workload *workload;      /* copied */
    const tcc_config_space *space;     /* must outlive the measurer; NULL: given later */
    tcc_arch arch;                     /* what the builders compile for */
    const char *devices;               /* "0,1": a runner each (default "0") */
    int builders;                      /* compiling threads (0: the processors) */
    double build_timeout, run_timeout; /* seconds a build, a trial on the GPU (10, 10) */
    int number, repeat;                /* AutoTVM's: runs a timing, timings (1, 3) */
    double min_repeat_ms;              /* a timing's runs raised to last this long (5) */
    int64_t check_samples;             /* outputs compared with the reference (2048) */
    bool synthetic;                    /* the synthetic cost instead of the GPU */
    /* Measure a kernel for every config that builds it, not once (tune_seen.c): a config
     * after the first then gets its own timing (noise, or the GPU tests' throughput). */
    bool measure_duplicates;
    TuneMachineCode machine_code; /* who compiles the PTX for the GPU */
    uint64_t seed;                /* of the check's inputs and of the synthetic cost */
    /* The executable whose --runner mode measures (NULL: /proc/self/exe, this program). */
    const char *runner_path;
    /* The fault-injection setting (NULL: $TCC_TUNE_INJECT_FAULT). */
    const char *inject_fault;
} TuneMeasureOptions;

void tune_measure_options_init(TuneMeasureOptions *options);

/* Starts the builders and a runner per device (each opens its GPU and says which it is).
 * NULL with a one-line message in `error` when it cannot (no GPU, a bad --devices). */
TuneMeasurer *tune_measurer_create(const TuneMeasureOptions *options, char *error,
                                   size_t error_size);
/* The space and the arch the builders compile for, where they were not given at creation:
 * the arch of --arch native is the runners' GPU's (tune_measurer_arch), which the space of a
 * template depends on. Once, before the first batch; false with tune_measurer_error's message
 * when the builders cannot start. */
bool tune_measurer_set_space(TuneMeasurer *measurer, const tcc_config_space *space, tcc_arch arch);
/* Another template, workload and space (and seed, number, repeat, min_repeat_ms, timeouts,
 * check_samples and measure_duplicates) from `next`, for the batches to come, on the same runners
 * and builders: a worker's next jobs may be another run's. Between batches; false with
 * tune_measurer_error's message where the builders cannot start. */
bool tune_measurer_retarget(TuneMeasurer *measurer, const TuneMeasureOptions *next);
/* Measures the configs `indices` of the space: results[i] for indices[i], each with its
 * error class. Fails (TCC_ERROR_OUT_OF_MEMORY, TCC_ERROR_CUDA where a runner can no longer be
 * started) only when the measurement itself cannot go on: tune_measurer_error says why. */
tcc_status tune_measure_batch(TuneMeasurer *measurer, int count, const int64_t *indices,
                              tcc_measure_result *results);
/* A stream of trials (a worker's jobs): the measurer asks for configs as its builders have
 * room, and says when each trial ends, so that building never waits for a batch's last trial. */
typedef struct TuneStream {
    void *user;
    /* Up to `room` further configs of the space into indices[]: how many. 0 while none is to be
     * had now; the stream ends when it gives none and every trial it gave has ended. */
    int (*more)(void *user, int room, int64_t *indices);
    /* The trial of the slot-th config given (from 0) ended with *result. */
    void (*ended)(void *user, int slot, const tcc_measure_result *result);
} TuneStream;
/* Measures the stream's configs until it ends; every kernel is measured (no trial copies
 * another's result). Fails as tune_measure_batch does; trials not ended then are not told. */
tcc_status tune_measure_stream(TuneMeasurer *measurer, const TuneStream *stream);
const char *tune_measurer_error(const TuneMeasurer *measurer);
/* After tune_measure_batch: for its trial `slot`, the config whose kernel (the same as this
 * one's) was measured, whose result the trial copies; -1 for a trial measured itself. */
int64_t tune_measurer_same_as(const TuneMeasurer *measurer, int slot);
/* The first device's name ("NVIDIA H200"), or "synthetic". */
const char *tune_measurer_device_name(const TuneMeasurer *measurer);
/* The newest arch the first device runs (tcc_arch_for_device), or the options' arch. */
tcc_arch tune_measurer_arch(const TuneMeasurer *measurer);
/* The first device's multiprocessors, which the builders compile a persistent grid's blocks for
 * (tcc_build_options.multiprocessors), or 0 (the target's) when synthetic. */
int tune_measurer_multiprocessors(const TuneMeasurer *measurer);
/* Who compiles the PTX, in words ("machine code from nvJitLink 13.0 in the build threads"). */
const char *tune_measurer_machine_code(const TuneMeasurer *measurer);
/* Runners restarted so far (after a death or a timeout). */
int tune_measurer_restarts(const TuneMeasurer *measurer);
void tune_measurer_destroy(TuneMeasurer *measurer);

/* Called first in main: with --runner in argv this process is a runner; returns its exit
 * status when it ends. -1 otherwise (go on as the tool). */
int tune_runner_main(int argc, char **argv);

/* ---- shared by tune_*.c ---------------------------------------------------------------- */

/* tune_common.c: SplitMix64's finalizer (the seeded draws of the faults and of the synthetic
 * cost), and the clocks: monotonic for deadlines, the wall's for timestamps (seconds). */
uint64_t tune_mix(uint64_t z);
double tune_monotonic_s(void);
double tune_wall_s(void);
void tune_sleep_s(double seconds);
/* tune_build.c: a result with its error class and one-line message, no costs. */
void tune_set_result(tcc_measure_result *result, tcc_measure_error error, const char *message);

typedef struct TuneBuilt {
    void *bytes; /* the serialized kernel (malloc'd), for the runner */
    size_t size;
    double build_s;
    uint64_t identity; /* what the GPU runs, hashed: equal for configs that build one kernel */
} TuneBuilt;

/* tune_build.c: the config at `index` built (and compiled to machine code where asked) into
 * *built, for a GPU of `multiprocessors` (0: the target's), or false with *result saying why
 * (its error class and message). */
bool tune_build(const TuneMeasureOptions *options, const tcc_workload *workload, bool machine_code,
                int multiprocessors, tcc_context *ctx, int64_t index, TuneBuilt *built,
                tcc_measure_result *result);
/* *use: whether the builders compile machine code for `wanted` (nvJitLink opened once to see);
 * `description`: who compiles it, in words. False, with `error`, where nvJitLink was required
 * and does not open. */
bool tune_machine_code_choose(TuneMachineCode wanted, bool *use, char *description, size_t size,
                              char *error, size_t error_size);

/* tune_seen.c: the kernels measured, by identity, so that each is measured once; and per
 * trial of the batch, the config whose kernel's result it copies. */
typedef struct TuneSeenKernel {
    uint64_t identity; /* 0: an empty slot */
    int64_t index;     /* the config that built it first */
    uint64_t batch;    /* the batch of that config's trial, */
    int slot;          /* and its position in it */
    bool measured;     /* `result` is the kernel's */
    tcc_measure_result result;
} TuneSeenKernel;

/* A trial of the batch: its config, the config whose result it copies (-1: none), the trial of
 * this batch it copies (-1: none), its kernel's identity (0: none built). */
typedef struct TuneSeenTrial {
    int64_t index, same_as;
    int same_slot;
    uint64_t identity;
} TuneSeenTrial;

typedef struct TuneSeen {
    TuneSeenKernel *kernels;
    int64_t capacity, count;
    uint64_t batch;
    TuneSeenTrial *trials;
    int trial_count, trial_capacity;
} TuneSeen;

/* A new batch of `count` trials; false when out of memory. */
bool tune_seen_start_batch(TuneSeen *seen, int count);
/* Whether trial `slot` (config `index`) built a kernel measured before, or claimed by another
 * trial of this batch: it then copies that result into results[slot] (now, or at the batch's
 * end) and is not measured. Otherwise the trial claims the kernel. */
bool tune_seen_copies(TuneSeen *seen, int slot, int64_t index, uint64_t identity,
                      tcc_measure_result *results);
/* Every trial of the batch done: the kernels it measured keep their results (where the
 * result is the kernel's own: it ran, right or wrong, or the driver refused it), and the
 * trials that copy one of them get it. Of a kernel's trials in the batch, the first is named
 * the measured one, whichever build ended first. */
void tune_seen_end_batch(TuneSeen *seen, tcc_measure_result *results);
/* Trial `slot` of the last batch: the config whose result it copies, or -1. */
int64_t tune_seen_same_as(const TuneSeen *seen, int slot);
void tune_seen_free(TuneSeen *seen);

/* The synthetic cost of point `index` (tune_synthetic.c): deterministic in the seed. */
void tune_synthetic_measure(const tcc_config_space *space, uint64_t seed, int64_t index,
                            tcc_measure_result *result);

#endif
