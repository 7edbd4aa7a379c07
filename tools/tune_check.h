/*
 * The runner's check of a kernel against the CPU reference (tune_check.c): inputs, sampled
 * positions and the reference there made once per workload and kept; each trial poisons the
 * output, launches, downloads and compares. Its buffers serve the timing too.
 */
#ifndef TOOLS_TUNE_CHECK_H
#define TOOLS_TUNE_CHECK_H

#include "tcc/tcc.h"
#include "tcc/tune.h"

#define TUNE_CHECK_MAX_PARAMS 8

typedef struct TuneCheck TuneCheck;

/* *cache ready for `workload` and the kernel's parameters: kept when it already is, else made
 * again (random inputs from `seed`, `samples` outputs compared; 0: all). */
tcc_status tune_check_prepare(TuneCheck **cache, tcc_context *ctx, tcc_device *device,
                              const tcc_workload *workload, const tcc_kernel *kernel,
                              int64_t samples, uint64_t seed);
/* One launch on the kept inputs, compared at the samples: result->passed. */
tcc_status tune_check_run(TuneCheck *check, tcc_loaded_kernel *loaded, tcc_check_result *result);
/* The kernel's parameters' buffers (for timing); their number. */
int tune_check_buffers(TuneCheck *check, tcc_device_buffer *const **buffers);
void tune_check_destroy(TuneCheck *check);

#endif
