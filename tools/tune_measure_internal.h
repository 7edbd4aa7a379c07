/*
 * What the measurer's two files share (tune_measure.h): tune_measure.c starts and stops the
 * measurer and its runner processes; tune_pipeline.c feeds the builders and the runners the
 * trials of a batch or a stream.
 */
#ifndef TOOLS_TUNE_MEASURE_INTERNAL_H
#define TOOLS_TUNE_MEASURE_INTERNAL_H

#include "tune_runner.h"

#include <pthread.h>
#include <sys/types.h>

#define MAX_DEVICES 16
#define MAX_BUILDERS 256
#define MAX_FAILED_STARTS 3 /* in a row: the GPU is gone */

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
    int multiprocessors;
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
    /* The first runner's GPU's multiprocessors, which the builders compile a persistent grid's
     * blocks for (tcc_build_options.multiprocessors); 0 (the target's) when synthetic. Set
     * before the builders start, never changed after. */
    int multiprocessors;
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
    uint64_t batch; /* numbers the batches and streams: a build of an older one is dropped */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool stop;
    /* The configs of this batch or stream by slot, their results, and the slots ended since
     * the stream was last told (all `slots` long, grown as a stream gives more). */
    int64_t *indices;
    tcc_measure_result *results;
    int *ended;
    int slots, nended;
    int count, next, building, finished;
    bool copying; /* trials copy a kernel's earlier result (a batch without measure_duplicates) */
    Built *queue; /* a ring of `capacity` */
    int capacity, head, queued;
    TuneSeen seen;       /* the kernels measured, each once */
    double synthetic_ms; /* $TCC_TUNE_SYNTHETIC_MS: each synthetic trial lasts this long */
    int wake[2];         /* builders -> the waiting thread */
};

/* tune_measure.c: runner r's process started (waiting for its HELLO), or stopped (killed first
 * unless it is known to be exiting). False with m->error when it did not start. */
bool tune_runner_start(TuneMeasurer *m, Runner *r);
void tune_runner_stop(Runner *r, bool kill_it);
/* tune_pipeline.c: the builder threads started; false with m->error. */
bool tune_builders_start(TuneMeasurer *m);

#endif
