/*
 * What the measurer (tune_measure.c, tune_pipeline.c) and its runner processes (tune_runner.c)
 * say to each other over a Unix socket pair, the child's end as its fd 3. Both ends are the same
 * executable, so structs travel as their bytes. A message is a header (type, payload length)
 * and the payload:
 *
 *   runner -> parent  HELLO  once the device is open (or why it is not)
 *   parent -> runner  TRIAL  TuneTrial, then the kernel's serialized bytes
 *   runner -> parent  RESULT TuneReply
 *
 * A reply is shorter than PIPE_BUF and written at once, so a parent that polls the socket
 * readable reads it whole; a runner that dies leaves end-of-file instead.
 */
#ifndef TOOLS_TUNE_RUNNER_H
#define TOOLS_TUNE_RUNNER_H

#include "tune_measure.h"

#define TUNE_RUNNER_FD 3
#define TUNE_RUNNER_FLAG "--runner"

enum { TUNE_MSG_HELLO = 0x74630001, TUNE_MSG_TRIAL, TUNE_MSG_RESULT };

/* What a trial runs instead of its kernel (fault injection, TCC_TUNE_INJECT_FAULT). */
typedef enum TuneFault {
    TUNE_FAULT_NONE = 0,
    TUNE_FAULT_TRAP,  /* a kernel that executes `trap;` (the context is lost) */
    TUNE_FAULT_OOB,   /* a kernel that reads an unmapped address (the context is lost) */
    TUNE_FAULT_SPIN,  /* a kernel that never ends (the runner is killed) */
    TUNE_FAULT_HANG,  /* the runner stops answering (a spin without a GPU) */
    TUNE_FAULT_CRASH, /* the runner exits (a lost context without a GPU) */
    TUNE_FAULT_COUNT,
} TuneFault;

extern const char *const tune_fault_names[TUNE_FAULT_COUNT];

/* Each fault's share of the trials, and the seed of the draws (tune_faults.c). */
typedef struct TuneFaultShares {
    double share[TUNE_FAULT_COUNT];
    uint64_t seed;
} TuneFaultShares;

/* "trap:0.1,oob:0.1,spin:0.05,seed:7" (NULL or "": no faults); false with a message. */
bool tune_faults_parse(const char *text, TuneFaultShares *faults, char *error, size_t error_size);
/* The fault (or none) that trial number `trial` runs, drawn from the seed. */
TuneFault tune_faults_draw(const TuneFaultShares *faults, uint64_t trial);

typedef struct TuneHello {
    int ok;
    int compute_capability; /* major * 10 + minor */
    int multiprocessors;    /* tcc_device_multiprocessors: what the builders compile for */
    char name[128];
    char message[256]; /* why not, when !ok */
} TuneHello;

typedef struct TuneTrial {
    tcc_workload workload;
    int64_t index;
    int fault; /* TuneFault */
    int number, repeat;
    double min_repeat_ms;
    int64_t samples;
    uint64_t seed;
} TuneTrial;

typedef struct TuneReply {
    tcc_measure_result result;
    int exiting; /* the runner's context is lost: it exits after this reply */
} TuneReply;

/* One message: false when the peer is gone or on a short write. */
bool tune_send(int fd, uint32_t type, const void *head, size_t head_size, const void *body,
               size_t body_size);
/* One message, blocking; *payload malloc'd (free it). False at end of file, on a read error,
 * or on a malformed header. */
bool tune_receive(int fd, uint32_t *type, void **payload, size_t *size);

#endif
