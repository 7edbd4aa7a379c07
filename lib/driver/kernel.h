/*
 * A built kernel: what the pipeline (driver/pipeline.c) made and the runtime loads. It is
 * plain data, so it lives in the core library, where the runtime and its tests see it.
 */
#ifndef TCI_DRIVER_KERNEL_H
#define TCI_DRIVER_KERNEL_H

#include "tcc/te.h"

struct tcc_kernel {
    char *name; /* the PTX entry symbol */
    char *loop_ir;
    char *llvm_ir;
    char *ptx; /* NUL-terminated, as cuModuleLoadDataEx needs */
    int64_t grid[3], block[3];
    int64_t shared_bytes;         /* static and dynamic */
    int64_t dynamic_shared_bytes; /* passed at launch */
};

#endif
