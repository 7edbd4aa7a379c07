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

/* The GPUs the driver sees (cuDeviceGetCount): ordinals 0 to *count - 1 (0 where there is no
 * driver, which fails with TCC_ERROR_CUDA and says so). */
tcc_status tcc_device_count(tcc_context *ctx, int *count);
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
/* What a persistent grid's blocks should number on it when they run in clusters of `cluster`
 * blocks (1 to TCC_MAX_CLUSTER_BLOCKS; tcc_gemm_schedule.cluster), each block holding a
 * multiprocessor: the clusters that fit at once (cuOccupancyMaxActiveClusters) times
 * `cluster`, the multiprocessors for 1. A cluster stays inside a GPC, so where a GPC's
 * multiprocessors are not a multiple of it some stay idle: an H100 SXM fits 66 clusters of 2
 * (132 blocks) but 30 of 4 and 15 of 8 (120), and a grid of 132 blocks in clusters of 4 runs
 * three of its clusters after the others. Give it to tcc_build_options.multiprocessors for
 * a schedule in such clusters. TCC_ERROR_UNSUPPORTED for clusters before compute capability
 * 9.0, on a driver before CUDA 12.0, or where none fits; `blocks` is written on success only. */
tcc_status tcc_device_persistent_blocks(tcc_device *device, int cluster, int *blocks);
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
    size_t size;   /* sizeof(tcc_check_options): set by tcc_check_options_init (tcc/tcc.h, "ABI") */
    uint64_t seed; /* of the random inputs; print it so a failure can be replayed */
    int64_t samples;  /* outputs compared with the reference; 0 = all of them */
    int threads;      /* of the CPU reference; 0 = all processors */
    int warmup, runs; /* timing: runs = 0 skips it */
} tcc_check_options;

/* Seed 1, every output compared, all processors, no timing; the size set. */
void tcc_check_options_init_size(tcc_check_options *options, size_t size);
/* Also a macro over tcc_check_options_init_size with its sizeof (tcc/tcc.h, "ABI"). */
void tcc_check_options_init(tcc_check_options *options);
#define tcc_check_options_init(options)                                                            \
    tcc_check_options_init_size((options), sizeof(tcc_check_options))

typedef struct tcc_check_result {
    size_t size;           /* sizeof(tcc_check_result), set by the caller (tcc/tcc.h, "ABI") */
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

/* ---- interop: a kernel's parameters, your own memory and stream, status names --------- */

/* The name of a status: "TCC_OK", "TCC_ERROR_UNSUPPORTED", ...; "unknown tcc_status" for a
 * value that is none. Never NULL. */
const char *tcc_status_string(tcc_status status);

/* What a built kernel takes, parameter by parameter (tcc_kernel_param), without a GPU: what a
 * caller checks its own tensors against before tcc_kernel_launch_async. */
typedef enum tcc_param_role {
    TCC_PARAM_INPUT = 0, /* only read */
    TCC_PARAM_OUTPUT,    /* written; its previous contents are not read */
    /* Read, then written: an output whose previous contents the epilogue reads (beta != 0
     * without a residual; a SCALE or RELU prologue); for tcc_build, a placeholder that a
     * compute stores into (tcc_compute_into) and a compute reads. */
    TCC_PARAM_INPUT_OUTPUT,
} tcc_param_role;

/* "input", "output", "input_output"; "unknown" for a value that is none. */
const char *tcc_param_role_name(tcc_param_role role);

#define TCC_PARAM_MAX_RANK 8

/* One parameter. Its memory is dense in `shape`'s order (outermost first, the last dimension
 * contiguous: C order), whatever `layout` calls it:
 *   "NHWC"       conv2d input, output, residual (N, H, W, C): PyTorch's channels_last
 *   "NCHW"       the same as (N, C, H, W): PyTorch's contiguous
 *   "NHWCnc"     the same as (N/16, H, W, C/16, 16n, 16c): the TVM tutorial's
 *   "KRSC"       conv2d filter (K, R, S, C/groups)
 *   "KCRS"       conv2d filter (K, C/groups, R, S): PyTorch's weight
 *   "blocked"    conv2d filter (R, S, C/16, K/16, 16c, 16k): the TVM tutorial's
 *   "row_major"  matmul A (batch, m, k), B (batch, k, n), C and residual (batch, m, n), the
 *                batch there when it is 1 too; a tcc_build placeholder (its shape)
 *   "col_major"  matmul A (batch, k, m), B (batch, n, k): the matrix's transpose row-major
 *   "vector"     a bias: (out_channels) for conv2d, (n) for matmul, of the output type */
typedef struct tcc_kernel_param_info {
    size_t size; /* sizeof(tcc_kernel_param_info), set by the caller (tcc/tcc.h, "ABI") */
    /* conv2d: "input", "filter", "bias", "residual", "output"; matmul: "A", "B", "bias",
     * "residual", "C"; tcc_build: the placeholder's name. Lives as long as the kernel. */
    const char *name;
    tcc_param_role role;
    tcc_dtype dtype;
    const char *layout; /* one of the names above; a static string */
    int rank;
    int64_t shape[TCC_PARAM_MAX_RANK]; /* [rank .. TCC_PARAM_MAX_RANK) are 0 */
    int64_t elements;                  /* the product of the shape */
    int64_t bytes;                     /* elements * tcc_dtype_size(dtype) */
    int alignment; /* bytes the device address must be a multiple of (16: the kernel's
                      vector accesses and bulk copies assume it of every parameter) */
} tcc_kernel_param_info;

/* The caller's parameters, in launch order (the workspaces that follow them are not
 * counted): conv2d: input, filter, [bias], [residual], output; matmul: A, B, [bias],
 * [residual], C; tcc_build: its params. 0 for NULL. */
int tcc_kernel_param_count(const tcc_kernel *kernel);
/* Parameter `index` into *out (whose size the caller sets); false (and *out untouched) out of
 * range, for NULL, or for a size this library does not know. */
bool tcc_kernel_param(const tcc_kernel *kernel, int index, tcc_kernel_param_info *out);

/* A device address (CUdeviceptr): what cuMemAlloc, cudaMalloc and PyTorch's data_ptr() give,
 * in the device's primary context. */
typedef uint64_t tcc_device_ptr;

/* The buffer's device address; 0 for NULL. Buffers and the caller's own memory mix. */
tcc_device_ptr tcc_device_buffer_address(const tcc_device_buffer *buffer);

/* Runs a loaded kernel on the caller's memory and stream, without waiting: params[i] is the
 * device address of parameter i (tcc_kernel_param: nparam of them, each holding at least its
 * bytes), `stream` a CUstream (cast to void *) of the device's primary context, which is the
 * one the CUDA runtime and PyTorch use, or NULL for the legacy default stream. Every launch
 * of the kernel (staging copies, the product, split-K's reduction) is enqueued on the stream
 * in order, its tensor maps encoded from the addresses; the call returns once they are
 * enqueued. A fault while the kernel runs surfaces at the caller's next synchronization
 * (cuStreamSynchronize), as with any asynchronous launch. The device's primary context is
 * made current on the calling thread for the call, and whatever was current before is
 * current again when it returns.
 * Refused with TCC_ERROR_INVALID_ARGUMENT, nothing enqueued: nparam other than
 * tcc_kernel_param_count, a NULL address or one that is not a multiple of the parameter's
 * alignment (the error names the parameter, its address and the alignment), a stream of
 * another CUDA context (where the driver can tell: cuStreamGetCtx).
 * Workspaces: a kernel with workspaces (tcc_kernel_workspace_count > 0: staged operands,
 * split-K) uses those tcc_kernel_load allocated with it (filled with 0xFF bytes, a NaN or -1,
 * so that scratch a kernel reads without writing shows), the same for every launch, so two
 * launches of one loaded kernel must not overlap: on one stream they are ordered; on two, the
 * caller orders them (an event) or passes each its own workspaces (below). Host memory is not
 * held past the call: the arguments are copied when the launches are enqueued.
 * A kernel of several launches whose later launch fails to enqueue leaves the earlier ones
 * enqueued (they only write its workspaces). tcc_kernel_launch launches the same way on the
 * legacy default stream, with its buffers' addresses and the loaded kernel's workspaces, and
 * then synchronizes; it leaves the device's context current. */
tcc_status tcc_kernel_launch_async(tcc_loaded_kernel *loaded, int nparam,
                                   const tcc_device_ptr *params, void *stream);
/* The same with the caller's workspaces instead of the loaded kernel's: nworkspace ==
 * tcc_kernel_workspace_count, workspaces[i] the address of at least
 * tcc_kernel_workspace_bytes(kernel, i) bytes, 16-byte aligned, which nothing else uses until
 * the kernel has run on `stream` (PyTorch: tensors from its allocator on that stream).
 * nworkspace 0 with NULL workspaces: the loaded kernel's own, as tcc_kernel_launch_async. */
tcc_status tcc_kernel_launch_async_with_workspaces(tcc_loaded_kernel *loaded, int nparam,
                                                   const tcc_device_ptr *params, int nworkspace,
                                                   const tcc_device_ptr *workspaces, void *stream);

#ifdef __cplusplus
}
#endif

#endif
