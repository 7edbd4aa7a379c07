/*
 * The runtime: a GPU opened through the CUDA Driver API (libcuda.so.1, loaded at run time),
 * device buffers, kernels loaded with cuModuleLoadDataEx, launched and timed; and the
 * checks that run an operator's kernel on random inputs against its CPU reference.
 */
#ifndef TCC_RUNTIME_H
#define TCC_RUNTIME_H

#include "tcc/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tcc_device tcc_device;

/* ---- runtime (CUDA Driver API, libcuda.so.1 opened at run time) -------------------- */

tcc_status tcc_device_open(tcc_context *ctx, int ordinal, tcc_device **out);
void tcc_device_close(tcc_device *device);
const char *tcc_device_name(const tcc_device *device);
/* The context that receives the errors of this device, its buffers and kernels. */
tcc_context *tcc_device_context(const tcc_device *device);
/* Compute capability as major*10+minor, e.g. 90 */
int tcc_device_arch(const tcc_device *device);
/* Its multiprocessors (SMs): what a persistent grid's blocks should number on it
 * (tcc_gemm_schedule.grid_blocks), 132 on an H100 SXM or H200, 114 on an H100 PCIe. */
int tcc_device_multiprocessors(const tcc_device *device);
/* The CUDA version the driver supports, as cuDriverGetVersion says: 1000 * major + 10 * minor
 * (12040 for CUDA 12.4). It bounds the PTX the driver loads (PTX ISA 8.4 for 12.4; a kernel
 * for a newer one is refused at tcc_kernel_load, naming both), and a driver before CUDA 12.0
 * lacks what bulk tensor copies and clusters need: such kernels are refused at load, naming
 * the driver's missing entry point, while the others run. */
int tcc_device_driver_version(const tcc_device *device);

typedef struct tcc_device_buffer tcc_device_buffer;
tcc_status tcc_device_buffer_alloc(tcc_device *device, size_t bytes, tcc_device_buffer **out);
void tcc_device_buffer_free(tcc_device_buffer *buffer);
tcc_status tcc_device_buffer_upload(tcc_device_buffer *buffer, const void *host, size_t bytes);
tcc_status tcc_device_buffer_download(tcc_device_buffer *buffer, void *host, size_t bytes);
/* Fills every byte with `byte` (poisoning outputs before a run). */
tcc_status tcc_device_buffer_fill_bytes(tcc_device_buffer *buffer, unsigned char byte);

typedef struct tcc_loaded_kernel tcc_loaded_kernel;
/* cuModuleLoadDataEx on the kernel's PTX; a rejected module's JIT log is in the error. A
 * kernel the device or the driver cannot run is refused here, before any launch, in one line
 * naming the limit and the value: a block or grid larger than the device allows, more
 * threads a block than the kernel's registers leave room for, more shared memory than a block
 * may opt into, clusters on a device before compute capability 9.0, PTX for another arch or
 * newer than the driver, an entry point the driver lacks. Any failure here, or of a buffer
 * allocation (out of device memory: the error says how much is free) or a launch, leaves the
 * device as usable as before; only a fault inside a running kernel (cuCtxSynchronize's error)
 * spoils its context, as it does every CUDA context. */
tcc_status tcc_kernel_load(tcc_device *device, const tcc_kernel *kernel, tcc_loaded_kernel **out);
void tcc_loaded_kernel_destroy(tcc_loaded_kernel *loaded);
tcc_status tcc_kernel_launch(tcc_loaded_kernel *loaded, int nbuffer,
                             tcc_device_buffer *const *buffers);
/* Warm-up launches, then `runs` timed launches with CUDA events; the median in ms. */
tcc_status tcc_kernel_time(tcc_loaded_kernel *loaded, int nbuffer,
                           tcc_device_buffer *const *buffers, int warmup, int runs,
                           double *median_ms);

/* ---- checking and timing a kernel on a device (what tcc-conv --run does) ------------- */

typedef struct tcc_check_options {
    uint64_t seed;    /* of the random inputs; print it so a failure can be replayed */
    int64_t samples;  /* outputs compared with the reference; 0 = all of them */
    int threads;      /* of the CPU reference; 0 = all processors */
    int warmup, runs; /* timing: runs = 0 skips it */
} tcc_check_options;

typedef struct tcc_check_result {
    double max_error;      /* max |got - ref| / max |ref| over the compared outputs, where
                              ref is taken before ReLU and clamp (which shrink outputs but
                              never errors) */
    double normwise_error; /* ||got - ref|| / ||ref|| */
    double tolerance;      /* what the types allow (tcc_check_tolerance) */
    int64_t compared;      /* outputs compared */
    int64_t unwritten;     /* outputs that still hold the poison written before the run */
    bool passed;           /* unwritten == 0 and max_error <= tolerance */
    double median_ms;      /* when timed */
} tcc_check_result;

/* The largest max_error the types allow: 1e-3 for float16/bfloat16 inputs accumulated and
 * stored in float32, looser for float16 accumulation, bfloat16 or float16 outputs and tf32,
 * 0 for int8 into int32. */
double tcc_check_tolerance(tcc_dtype input, tcc_dtype accumulate, tcc_dtype output);

/* Fills the kernel's inputs (and bias, residual, previous output) with fresh random
 * values, poisons the output unless the epilogue reads it, runs the kernel once, compares
 * with the CPU reference, then times it. A failed comparison is not an error: read
 * result->passed. The kernel must come from tcc_conv2d_compile / tcc_matmul_compile (or
 * the tutorial's schedule for conv2d) with the same descriptor. */
tcc_status tcc_conv2d_check(tcc_device *device, const tcc_kernel *kernel,
                            const tcc_conv2d_desc *desc, const tcc_check_options *options,
                            tcc_check_result *result);
tcc_status tcc_matmul_check(tcc_device *device, const tcc_kernel *kernel,
                            const tcc_matmul_desc *desc, const tcc_check_options *options,
                            tcc_check_result *result);

#ifdef __cplusplus
}
#endif

#endif
