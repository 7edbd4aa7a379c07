/*
 * The runtime: a GPU through the CUDA Driver API.
 *
 * libcuda.so.1 is opened with dlopen when a device is opened, so tcc builds and runs
 * (everything but this file's functions) on machines without a driver. Every driver call
 * is checked; a failure becomes one line naming the call, the error and its description.
 *
 * Each device retains its GPU's primary context (the one the CUDA runtime would use too)
 * and makes it current at the start of every call, so a device may be used from any
 * thread, one thread at a time.
 */
#include "runtime/internal.h"
#include "support/symbols.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIBCUDA "libcuda.so.1"

/* ---- errors ---------------------------------------------------------------------------- */

const char *tcc_status_string(tcc_status status)
{
    switch (status) {
    case TCC_OK:
        return "TCC_OK";
    case TCC_ERROR_INVALID_ARGUMENT:
        return "TCC_ERROR_INVALID_ARGUMENT";
    case TCC_ERROR_UNSUPPORTED:
        return "TCC_ERROR_UNSUPPORTED";
    case TCC_ERROR_SCHEDULE:
        return "TCC_ERROR_SCHEDULE";
    case TCC_ERROR_LLVM:
        return "TCC_ERROR_LLVM";
    case TCC_ERROR_CUDA:
        return "TCC_ERROR_CUDA";
    case TCC_ERROR_OUT_OF_MEMORY:
        return "TCC_ERROR_OUT_OF_MEMORY";
    }
    return "unknown tcc_status";
}

void tci_cuda_describe(const tcc_device *device, CUresult result, char *text, size_t size)
{
    const char *name = NULL, *description = NULL;
    if (device->cu.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
        name = NULL;
    if (device->cu.cuGetErrorString(result, &description) != CUDA_SUCCESS || !description)
        description = "no description";
    if (name)
        snprintf(text, size, "%s (%s)", name, description);
    else
        snprintf(text, size, "CUDA error %d (%s)", result, description);
}

tcc_status tci_cuda_fail(const tcc_device *device, CUresult result, const char *call,
                         const char *detail)
{
    char text[512];
    tci_cuda_describe(device, result, text, sizeof text);
    return tci_fail(device->ctx, TCC_ERROR_CUDA, "%s failed%s: %s", call, detail, text);
}

tcc_status tci_bind_context(tcc_device *device)
{
    CUDA_CHECK(device, cuCtxSetCurrent, (device->context));
    return TCC_OK;
}

/* ---- loading the driver ------------------------------------------------------------------ */

/* The symbols to resolve: the _v2 names are the current ABI of the calls whose first
 * version took 32-bit sizes or had other problems; `fallback` serves older drivers. An
 * optional symbol is one only some kernels need (limits.c refuses those where it is
 * missing), so that a driver older than it still runs the others. */
#define SYMBOL(field, name, fallback)                                                              \
    {                                                                                              \
        name, fallback, offsetof(CudaDriver, field), false                                         \
    }
#define OPTIONAL_SYMBOL(field, name)                                                               \
    {                                                                                              \
        name, NULL, offsetof(CudaDriver, field), true                                              \
    }

static const TciSymbol driver_symbols[] = {
    /* First, so that a missing symbol after it can be reported with the driver's version. */
    SYMBOL(cuDriverGetVersion, "cuDriverGetVersion", NULL),
    SYMBOL(cuInit, "cuInit", NULL),
    SYMBOL(cuGetErrorName, "cuGetErrorName", NULL),
    SYMBOL(cuGetErrorString, "cuGetErrorString", NULL),
    SYMBOL(cuDeviceGet, "cuDeviceGet", NULL),
    SYMBOL(cuDeviceGetCount, "cuDeviceGetCount", NULL),
    SYMBOL(cuDeviceGetName, "cuDeviceGetName", NULL),
    SYMBOL(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL),
    SYMBOL(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
    SYMBOL(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
    SYMBOL(cuCtxSetCurrent, "cuCtxSetCurrent", NULL),
    SYMBOL(cuCtxGetCurrent, "cuCtxGetCurrent", NULL),
    SYMBOL(cuCtxSynchronize, "cuCtxSynchronize", NULL),
    SYMBOL(cuMemGetInfo, "cuMemGetInfo_v2", NULL),
    SYMBOL(cuMemAlloc, "cuMemAlloc_v2", NULL),
    SYMBOL(cuMemFree, "cuMemFree_v2", NULL),
    SYMBOL(cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL),
    SYMBOL(cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL),
    SYMBOL(cuMemsetD8, "cuMemsetD8_v2", NULL),
    SYMBOL(cuModuleLoadDataEx, "cuModuleLoadDataEx", NULL),
    SYMBOL(cuModuleUnload, "cuModuleUnload", NULL),
    SYMBOL(cuModuleGetFunction, "cuModuleGetFunction", NULL),
    SYMBOL(cuFuncGetAttribute, "cuFuncGetAttribute", NULL),
    SYMBOL(cuFuncSetAttribute, "cuFuncSetAttribute", NULL),
    SYMBOL(cuLaunchKernel, "cuLaunchKernel", NULL),
    OPTIONAL_SYMBOL(cuLaunchKernelEx, "cuLaunchKernelEx"),
    OPTIONAL_SYMBOL(cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters"),
    OPTIONAL_SYMBOL(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled"),
    OPTIONAL_SYMBOL(cuTensorMapEncodeIm2col, "cuTensorMapEncodeIm2col"),
    SYMBOL(cuEventCreate, "cuEventCreate", NULL),
    SYMBOL(cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy"),
    SYMBOL(cuEventRecord, "cuEventRecord", NULL),
    SYMBOL(cuEventSynchronize, "cuEventSynchronize", NULL),
    SYMBOL(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    OPTIONAL_SYMBOL(cuStreamGetCtx, "cuStreamGetCtx"),
};

void tci_cuda_version_text(int version, char *text, size_t size)
{
    if (version > 0)
        snprintf(text, size, "%d.%d", version / 1000, version % 1000 / 10);
    else
        snprintf(text, size, "unknown");
}

static tcc_status resolve_driver(tcc_device *device, tci_driver_lookup lookup, void *handle)
{
    const char *missing =
        tci_resolve_symbols(lookup, handle, driver_symbols,
                            sizeof driver_symbols / sizeof driver_symbols[0], &device->cu);
    if (!missing)
        return TCC_OK;
    /* cuDriverGetVersion comes first in the table, so it is there to say how old. */
    char version[32];
    int number = 0;
    if (device->cu.cuDriverGetVersion && device->cu.cuDriverGetVersion(&number) != CUDA_SUCCESS)
        number = 0;
    tci_cuda_version_text(number, version, sizeof version);
    return tci_fail(device->ctx, TCC_ERROR_CUDA,
                    LIBCUDA " has no symbol %s: the NVIDIA driver (CUDA %s) is too old", missing,
                    version);
}

/* ---- devices ----------------------------------------------------------------------------- */

/* Frees whatever part of a device tci_device_open_with made (and the library it was given). */
static void destroy_device(tcc_device *device)
{
    if (device->context) {
        device->cu.cuCtxSetCurrent(NULL);
        device->cu.cuDevicePrimaryCtxRelease(device->device);
    }
    if (device->library)
        dlclose(device->library);
    free(device);
}

static tcc_status query_device(tcc_device *device, int ordinal)
{
    int major = 0, minor = 0;
    CUDA_CHECK(device, cuDriverGetVersion, (&device->driver_version));
    CUDA_CHECK(device, cuInit, (0));
    CUresult result = device->cu.cuDeviceGet(&device->device, ordinal);
    if (result != CUDA_SUCCESS) {
        char detail[64];
        snprintf(detail, sizeof detail, " for device %d", ordinal);
        return tci_cuda_fail(device, result, "cuDeviceGet", detail);
    }
    CUDA_CHECK(device, cuDeviceGetName, (device->name, (int)sizeof device->name, device->device));
    device->name[sizeof device->name - 1] = '\0';
    CUDA_CHECK(device, cuDeviceGetAttribute,
               (&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device->device));
    CUDA_CHECK(device, cuDeviceGetAttribute,
               (&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device->device));
    device->arch = major * 10 + minor;
    CUDA_CHECK(
        device, cuDeviceGetAttribute,
        (&device->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device->device));
    tcc_status status = tci_query_limits(device);
    if (status != TCC_OK)
        return status;
    /* Only a retained context is recorded, so destroy_device releases only what it holds. */
    CUcontext context = NULL;
    CUDA_CHECK(device, cuDevicePrimaryCtxRetain, (&context, device->device));
    device->context = context;
    return tci_bind_context(device);
}

tcc_status tci_device_open_with(tcc_context *ctx, int ordinal, tci_driver_lookup lookup,
                                void *handle, tcc_device **out)
{
    if (!out || !lookup)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_device_open: out or the driver's lookup is NULL");
    *out = NULL;
    tcc_device *device = calloc(1, sizeof *device);
    if (!device)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory opening a device");
    device->ctx = ctx;
    tcc_status status = resolve_driver(device, lookup, handle);
    if (status == TCC_OK)
        status = query_device(device, ordinal);
    if (status != TCC_OK) {
        destroy_device(device);
        return status;
    }
    *out = device;
    return TCC_OK;
}

tcc_status tci_device_count_with(tcc_context *ctx, tci_driver_lookup lookup, void *handle,
                                 int *count)
{
    *count = 0;
    tcc_device probe = {.ctx = ctx}; /* only its entry points: nothing to release */
    tcc_status status = resolve_driver(&probe, lookup, handle);
    if (status != TCC_OK)
        return status;
    CUresult result = probe.cu.cuInit(0);
    if (result != CUDA_SUCCESS)
        return tci_cuda_fail(&probe, result, "cuInit", "");
    result = probe.cu.cuDeviceGetCount(count);
    return result == CUDA_SUCCESS ? TCC_OK : tci_cuda_fail(&probe, result, "cuDeviceGetCount", "");
}

/* libcuda.so.1, or the one-line error that there is no driver. */
static tcc_status open_libcuda(tcc_context *ctx, void **library)
{
    *library = dlopen(LIBCUDA, RTLD_NOW | RTLD_LOCAL);
    if (*library)
        return TCC_OK;
    const char *why = dlerror();
    return tci_fail(ctx, TCC_ERROR_CUDA,
                    "cannot load " LIBCUDA ": no NVIDIA driver on this machine (%s)",
                    why ? why : "unknown dlopen error");
}

tcc_status tcc_device_count(tcc_context *ctx, int *count)
{
    if (!count)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_device_count: count is NULL");
    *count = 0;
    void *library;
    tcc_status status = open_libcuda(ctx, &library);
    if (status != TCC_OK)
        return status;
    status = tci_device_count_with(ctx, tci_dlsym, library, count);
    dlclose(library);
    return status;
}

tcc_status tcc_device_open(tcc_context *ctx, int ordinal, tcc_device **out)
{
    if (!out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_device_open: out is NULL");
    *out = NULL;
    void *library;
    tcc_status status = open_libcuda(ctx, &library);
    if (status != TCC_OK)
        return status;
    status = tci_device_open_with(ctx, ordinal, tci_dlsym, library, out);
    if (status != TCC_OK) {
        dlclose(library);
        return status;
    }
    /* Closed with the device, after its context is released. */
    (*out)->library = library;
    return TCC_OK;
}

void tcc_device_close(tcc_device *device)
{
    if (device)
        destroy_device(device);
}

tcc_context *tcc_device_context(const tcc_device *device)
{
    return device ? device->ctx : NULL;
}

const char *tcc_device_name(const tcc_device *device)
{
    return device ? device->name : "";
}

int tcc_device_arch(const tcc_device *device)
{
    return device ? device->arch : 0;
}

int tcc_device_multiprocessors(const tcc_device *device)
{
    return device ? device->multiprocessors : 0;
}

int tcc_device_driver_version(const tcc_device *device)
{
    return device ? device->driver_version : 0;
}

/* ---- buffers ----------------------------------------------------------------------------- */

/* A failed cuMemAlloc; out of memory, it says what the device has free (cuMemGetInfo), so
 * that the caller can tell a request larger than the device from one that others' buffers
 * crowd out. */
static tcc_status alloc_failure(tcc_device *device, CUresult result, size_t bytes)
{
    char text[512];
    tci_cuda_describe(device, result, text, sizeof text);
    size_t free_bytes = 0, total_bytes = 0;
    if (result != CUDA_ERROR_OUT_OF_MEMORY ||
        device->cu.cuMemGetInfo(&free_bytes, &total_bytes) != CUDA_SUCCESS)
        return tci_fail(device->ctx, TCC_ERROR_CUDA, "cuMemAlloc failed for %zu bytes: %s", bytes,
                        text);
    const double gib = 1024.0 * 1024.0 * 1024.0;
    return tci_fail(device->ctx, TCC_ERROR_CUDA,
                    "cuMemAlloc failed for %zu bytes: %s; %s has %zu bytes free of %zu (%.2f of "
                    "%.2f GiB)",
                    bytes, text, device->name, free_bytes, total_bytes, (double)free_bytes / gib,
                    (double)total_bytes / gib);
}

tcc_status tcc_device_buffer_alloc(tcc_device *device, size_t bytes, tcc_device_buffer **out)
{
    if (!device || !out)
        return tci_fail(device ? device->ctx : NULL, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_device_buffer_alloc: device or out is NULL");
    *out = NULL;
    if (bytes == 0)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_device_buffer_alloc: a buffer needs at least one byte");
    tcc_status status = tci_bind_context(device);
    if (status != TCC_OK)
        return status;
    tcc_device_buffer *buffer = calloc(1, sizeof *buffer);
    if (!buffer)
        return tci_fail(device->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory allocating a buffer");
    CUresult result = device->cu.cuMemAlloc(&buffer->pointer, bytes);
    if (result != CUDA_SUCCESS) {
        free(buffer);
        return alloc_failure(device, result, bytes);
    }
    buffer->device = device;
    buffer->bytes = bytes;
    *out = buffer;
    return TCC_OK;
}

tcc_device_ptr tcc_device_buffer_address(const tcc_device_buffer *buffer)
{
    return buffer ? (tcc_device_ptr)buffer->pointer : 0;
}

void tcc_device_buffer_free(tcc_device_buffer *buffer)
{
    if (!buffer)
        return;
    /* Nothing can be reported from here; a failure would mean the context is already lost. */
    if (tci_bind_context(buffer->device) == TCC_OK)
        buffer->device->cu.cuMemFree(buffer->pointer);
    free(buffer);
}

/* Checks a host transfer of `bytes` against the buffer. */
static tcc_status check_transfer(tcc_device_buffer *buffer, const void *host, size_t bytes,
                                 const char *function)
{
    if (!buffer)
        return tci_fail(NULL, TCC_ERROR_INVALID_ARGUMENT, "%s: buffer is NULL", function);
    tcc_context *ctx = buffer->device->ctx;
    if (!host && bytes > 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s: host pointer is NULL", function);
    if (bytes > buffer->bytes)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "%s: %zu bytes do not fit in a buffer of %zu bytes", function, bytes,
                        buffer->bytes);
    return tci_bind_context(buffer->device);
}

tcc_status tcc_device_buffer_upload(tcc_device_buffer *buffer, const void *host, size_t bytes)
{
    tcc_status status = check_transfer(buffer, host, bytes, "tcc_device_buffer_upload");
    if (status != TCC_OK || bytes == 0)
        return status;
    CUDA_CHECK(buffer->device, cuMemcpyHtoD, (buffer->pointer, host, bytes));
    return TCC_OK;
}

tcc_status tcc_device_buffer_download(tcc_device_buffer *buffer, void *host, size_t bytes)
{
    tcc_status status = check_transfer(buffer, host, bytes, "tcc_device_buffer_download");
    if (status != TCC_OK || bytes == 0)
        return status;
    CUDA_CHECK(buffer->device, cuMemcpyDtoH, (host, buffer->pointer, bytes));
    return TCC_OK;
}

tcc_status tcc_device_buffer_fill_bytes(tcc_device_buffer *buffer, unsigned char byte)
{
    if (!buffer)
        return tci_fail(NULL, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_device_buffer_fill_bytes: buffer is NULL");
    tcc_status status = tci_bind_context(buffer->device);
    if (status != TCC_OK)
        return status;
    CUDA_CHECK(buffer->device, cuMemsetD8, (buffer->pointer, byte, buffer->bytes));
    return TCC_OK;
}
