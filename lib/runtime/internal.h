/*
 * What the runtime's files share (runtime.c: the driver, devices and buffers; kernels.c:
 * loading, launching and timing kernels): the objects behind the public handles and the
 * checked-call helpers.
 */
#ifndef TCI_RUNTIME_INTERNAL_H
#define TCI_RUNTIME_INTERNAL_H

#include "driver/kernel.h"
#include "runtime/cuda_driver.h"
#include "support/context.h"
#include "tcc/runtime.h"

#include <stddef.h>

struct tcc_device {
    tcc_context *ctx; /* receives the errors of this device, its buffers and kernels */
    void *library;    /* dlopen handle of libcuda.so.1 */
    CudaDriver cu;
    CUdevice device;
    CUcontext context; /* the retained primary context; NULL until retained */
    char name[256];
    int arch; /* major*10 + minor */
    int multiprocessors;
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
    int64_t shared_bytes;        /* static and dynamic */
    unsigned int dynamic_shared; /* bytes of dynamic shared memory each launch passes */
    char name[256];
    int ntensor_map; /* passed after the buffers, encoded for each launch's buffers */
    tcc_tensor_map_encoding tensor_maps[TCI_MAX_LAUNCH_MAPS];
} LoadedLaunch;

struct tcc_loaded_kernel {
    tcc_device *device;
    CUmodule module;
    int nlaunch, main_launch;
    LoadedLaunch launches[TCI_MAX_LAUNCHES]; /* run in this order */
    int nparam; /* the caller's buffers, checked where workspaces follow them */
    int nworkspace;
    tcc_device_buffer *workspaces[TCI_MAX_WORKSPACES]; /* passed after the caller's buffers */
};

/* Encodes the tensor maps of `launch` (tensor_maps.c) for buffers at `pointers` (one per
 * kernel parameter) into maps[0 .. launch->ntensor_map). */
tcc_status tci_encode_tensor_maps(tcc_device *device, const LoadedLaunch *launch,
                                  const CUdeviceptr *pointers, int npointer, CUtensorMap *maps);

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
