/*
 * What the runtime's files share (runtime.c: the driver, devices and buffers; kernels.c:
 * loading and timing kernels; launch.c: launching them, on buffers or on the caller's
 * addresses and stream; limits.c: what the device and the driver allow a kernel, checked
 * before it loads; occupancy.c: the clusters a device runs at once; tensor_maps.c): the
 * objects behind the public handles and the checked-call helpers.
 */
#ifndef TCI_RUNTIME_INTERNAL_H
#define TCI_RUNTIME_INTERNAL_H

#include "driver/kernel.h"
#include "runtime/cuda_driver.h"
#include "support/context.h"
#include "tcc/runtime.h"

#include <stddef.h>

/* What the device allows one launch, read when it opens (limits.c checks each launch). */
typedef struct QueriedLimits {
    int threads_per_block;
    int block[3], grid[3]; /* the largest block and grid dimensions */
    int registers_per_block;
    int shared_per_block; /* bytes a block may opt into (static and dynamic) */
} QueriedLimits;

struct tcc_device {
    tcc_context *ctx; /* receives the errors of this device, its buffers and kernels */
    void *library;    /* dlopen handle of libcuda.so.1; NULL for a driver given by lookup */
    CudaDriver cu;
    int driver_version; /* cuDriverGetVersion: 1000 * major + 10 * minor of CUDA */
    CUdevice device;
    CUcontext context; /* the retained primary context; NULL until retained */
    char name[256];
    int arch; /* major*10 + minor */
    int multiprocessors;
    QueriedLimits limits;
};

struct tcc_device_buffer {
    tcc_device *device;
    CUdeviceptr pointer;
    size_t bytes;
};

/* One entry point of a loaded module and how it is launched. */
typedef struct LoadedLaunch {
    CUfunction function;
    unsigned int grid[3], block[3];
    unsigned int cluster[3];     /* 1, 1, 1: launched without clusters */
    unsigned int dynamic_shared; /* bytes of dynamic shared memory each launch passes */
    char name[256];
    int ntensor_map; /* passed after the buffers, encoded for each launch's buffers */
    tcc_tensor_map_encoding tensor_maps[TCI_MAX_LAUNCH_MAPS];
} LoadedLaunch;

/* A caller's parameter as the checks of its address name it (tcc_kernel_param). */
typedef struct LoadedParam {
    char name[64]; /* "" for a kernel described by hand */
    int alignment;
} LoadedParam;

struct tcc_loaded_kernel {
    tcc_device *device;
    CUmodule module;
    int nlaunch, main_launch;
    LoadedLaunch launches[TCI_MAX_LAUNCHES]; /* run in this order */
    int nparam;          /* the caller's buffers, checked where workspaces follow them */
    LoadedParam *params; /* nparam of them */
    int nworkspace;
    tcc_device_buffer *workspaces[TCI_MAX_WORKSPACES]; /* passed after the caller's buffers */
};

/* Finds a driver entry point by name: dlsym on libcuda.so.1, or a test's fake driver. */
typedef void *(*tci_driver_lookup)(void *handle, const char *name);

/* tcc_device_open with the driver's entry points found through lookup(handle, name) instead
 * of in libcuda.so.1, which is not opened: how the unit tests run the runtime's failure paths
 * on a fake driver. The device does not own handle. */
tcc_status tci_device_open_with(tcc_context *ctx, int ordinal, tci_driver_lookup lookup,
                                void *handle, tcc_device **out);
/* tcc_device_count likewise. */
tcc_status tci_device_count_with(tcc_context *ctx, tci_driver_lookup lookup, void *handle,
                                 int *count);

/* ---- limits.c ---- */

/* Reads the device's limits (device->limits). */
tcc_status tci_query_limits(tcc_device *device);
/* Refuses, before its module loads, a kernel the device or the driver cannot run: PTX built
 * for another arch, an entry point the driver lacks (clusters, tensor maps). */
tcc_status tci_check_loadable(tcc_device *device, const char *ptx, const tcc_loaded_kernel *loaded);
/* The driver entry points one launch needs (cuLaunchKernelEx for clusters, the tensor-map
 * encoders), which older drivers lack. */
tcc_status tci_check_entries(tcc_device *device, const LoadedLaunch *launch);
/* Refuses a launch the device would refuse, once its function is found: block, grid,
 * threads for the function's registers, shared memory, clusters; each in one line naming the
 * limit and the value. */
tcc_status tci_check_launch(tcc_device *device, const LoadedLaunch *launch);
/* The error of a module the driver rejected for its PTX version: the kernel's version and
 * the driver's. */
tcc_status tci_fail_ptx_version(tcc_device *device, const char *ptx, const char *kernel,
                                const char *driver_text);
/* The PTX's ".target sm_NN[a|f]": *target NN, *suffix 'a', 'f' or '\0'; false when the PTX
 * has no such line. */
bool tci_ptx_target(const char *ptx, int *target, char *suffix);
/* "12.4" for cuDriverGetVersion's 12040. */
void tci_cuda_version_text(int version, char *text, size_t size);

/* Encodes the tensor maps of `launch` (tensor_maps.c) for buffers at `pointers` (one per
 * kernel parameter) into maps[0 .. launch->ntensor_map). */
tcc_status tci_encode_tensor_maps(tcc_device *device, const LoadedLaunch *launch,
                                  const CUdeviceptr *pointers, int npointer, CUtensorMap *maps);

/* ---- launch.c ---- */

/* The kernel parameters of each launch of a loaded kernel: params[k][i] points at
 * pointers[i], the device address of parameter i (the caller's, then the workspaces), then
 * at launch k's tensor maps, encoded for those addresses. */
typedef struct LaunchArgs {
    CUdeviceptr *pointers;
    void **params[TCI_MAX_LAUNCHES];
    CUtensorMap *maps; /* TCI_MAX_LAUNCH_MAPS a launch */
} LaunchArgs;

/* The arguments for `buffers` (checked: not NULL, of the kernel's device; as many as the
 * kernel takes where workspaces follow them) and the loaded kernel's workspaces, encoded with
 * the device's context made current (the tensor-map encoders need one), which stays so. */
tcc_status tci_launch_args_for_buffers(tcc_loaded_kernel *loaded, int nbuffer,
                                       tcc_device_buffer *const *buffers, LaunchArgs *args);
void tci_launch_args_free(LaunchArgs *args);
/* Enqueues every launch of the kernel in order on `stream` (NULL: the legacy default
 * stream) in the current context; only the launches themselves are checked. */
tcc_status tci_launch_enqueue(tcc_loaded_kernel *loaded, const LaunchArgs *args, CUstream stream);
/* Waits for the device; an error here is one the kernel hit while running. */
tcc_status tci_launch_synchronize(tcc_loaded_kernel *loaded);

/* Records "<call> failed<detail>: CUDA_ERROR_NAME (description)" and returns TCC_ERROR_CUDA.
 * `detail` (may be "") says what the call was for. */
tcc_status tci_cuda_fail(const tcc_device *device, CUresult result, const char *call,
                         const char *detail);
/* "CUDA_ERROR_NAME (description)" for a driver result. */
void tci_cuda_describe(const tcc_device *device, CUresult result, char *text, size_t size);
/* The line of a JIT log that says the JIT undid a kernel's asynchrony (wgmma serialized, a
 * wait it had to inject, setmaxnreg ignored), which tcc treats as an error, as the kernel
 * would run many times slower than it was built to; NULL when there is none. The line is
 * copied into out (size bytes). */
const char *tci_jit_log_refusal(const char *log, char *out, size_t size);
/* Makes the device's context current on the calling thread. */
tcc_status tci_bind_context(tcc_device *device);

/* Checks one driver call: CUDA_CHECK(device, cuMemAlloc, (&pointer, bytes)) returns the
 * failure from the calling function. */
#define CUDA_CHECK(device, function, args)                                                         \
    do {                                                                                           \
        CUresult check_result_ = (device)->cu.function args;                                       \
        if (check_result_ != CUDA_SUCCESS)                                                         \
            return tci_cuda_fail((device), check_result_, #function, "");                          \
    } while (0)

#endif
