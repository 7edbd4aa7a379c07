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

#include "tcc/runtime.h"

enum { TCI_MAX_LAUNCHES = 4, TCI_MAX_WORKSPACES = 4, TCI_MAX_LAUNCH_MAPS = 8 };

/* The alignment of every parameter's and workspace's device address: the code generator
 * proves a vector access aligned from its index and assumes this of the base of every global
 * parameter (codegen/memory.c), and bulk copies need it of their tensors. */
enum { TCI_PARAM_ALIGNMENT = 16 };

typedef struct KernelLaunch {
    char *name; /* the PTX entry symbol */
    int64_t grid[3], block[3];
    int64_t cluster[3];           /* blocks of a thread-block cluster; 0 or 1 where none */
    int64_t shared_bytes;         /* static and dynamic */
    int64_t dynamic_shared_bytes; /* passed at launch */
    /* The tensor maps the launcher encodes and passes after the buffers and workspaces. */
    int ntensor_map;
    tcc_tensor_map_encoding tensor_maps[TCI_MAX_LAUNCH_MAPS];
    /* What ptxas reported of the entry point when the kernel's machine code was compiled
     * (tcc_kernel_compile_machine_code); meaningful only while the kernel has machine code. */
    int registers; /* 32-bit registers a thread */
    int64_t spill_store_bytes, spill_load_bytes;
} KernelLaunch;

struct tcc_kernel {
    char *loop_ir; /* every launch's loop IR, in order */
    char *llvm_ir;
    char *ptx; /* NUL-terminated, as cuModuleLoadDataEx needs */
    /* The PTX compiled for its .target by nvJitLink (an ELF cubin), which the runtime loads
     * instead of having the driver compile the PTX; NULL when not compiled. */
    unsigned char *machine_code;
    size_t machine_code_size;
    int nlaunch;
    int main_launch; /* the one the single-launch accessors describe: the product */
    KernelLaunch launches[TCI_MAX_LAUNCHES];
    int nparam; /* the caller's buffers, which the workspaces follow */
    int nworkspace;
    int64_t workspace_bytes[TCI_MAX_WORKSPACES];
    /* What each of the nparam parameters is (tcc_kernel_param), each name a copy the kernel
     * owns; NULL for a kernel described by hand (the runtime's tests). */
    tcc_kernel_param_info *params;
};

/* A parameter's description from its tensor (its dtype and shape, in the tensor's order),
 * with elements, bytes and alignment filled in; `name` and `layout` are kept as pointers. */
tcc_kernel_param_info tci_param_info(const tcc_tensor *tensor, const char *name, const char *layout,
                                     tcc_param_role role);

/* Sets the description of the kernel's parameters to `count` (kernel->nparam) entries, copied
 * with their names. */
tcc_status tci_kernel_describe_params(tcc_context *ctx, tcc_kernel *kernel, int count,
                                      const tcc_kernel_param_info *params);

/* The description of tcc_build's parameters, from the tensors of `func`: each placeholder's
 * name, dtype and shape, "row_major"; an output where a compute stores into it (or it is a
 * compute), read and written where some compute also reads it. */
tcc_status tci_kernel_describe_tensors(tcc_context *ctx, tcc_kernel *kernel, tcc_func *func,
                                       int nparam, tcc_tensor *const *params);

#endif
