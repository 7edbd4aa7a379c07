/*
 * A built kernel: what the pipeline (driver/pipeline.c) made and the runtime loads. It is
 * plain data, so it lives in the core library, where the runtime and its tests see it.
 *
 * One module may hold several entry points, launched in order on one stream with the same
 * parameters (the caller's buffers, then the workspaces the runtime allocates): copies
 * that stage an operand channels-last, the product, split-K's reduction of its partial
 * sums.
 */
#ifndef TCI_DRIVER_KERNEL_H
#define TCI_DRIVER_KERNEL_H

#include "tcc/te.h"

enum { TCI_MAX_LAUNCHES = 4, TCI_MAX_WORKSPACES = 4, TCI_MAX_LAUNCH_MAPS = 8 };

typedef struct KernelLaunch {
    char *name; /* the PTX entry symbol */
    int64_t grid[3], block[3];
    int64_t cluster[3];           /* blocks of a thread-block cluster; 0 or 1 where none */
    int64_t shared_bytes;         /* static and dynamic */
    int64_t dynamic_shared_bytes; /* passed at launch */
    /* The tensor maps the launcher encodes and passes after the buffers and workspaces. */
    int ntensor_map;
    tcc_tensor_map_encoding tensor_maps[TCI_MAX_LAUNCH_MAPS];
} KernelLaunch;

struct tcc_kernel {
    char *loop_ir; /* every launch's loop IR, in order */
    char *llvm_ir;
    char *ptx; /* NUL-terminated, as cuModuleLoadDataEx needs */
    int nlaunch;
    int main_launch; /* the one the single-launch accessors describe: the product */
    KernelLaunch launches[TCI_MAX_LAUNCHES];
    int nparam; /* the caller's buffers, which the workspaces follow */
    int nworkspace;
    int64_t workspace_bytes[TCI_MAX_WORKSPACES];
};

#endif
