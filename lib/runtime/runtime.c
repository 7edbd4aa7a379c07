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
#include "tcc/runtime.h"
#include "runtime/cuda_driver.h"
#include "support/context.h"

#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIBCUDA "libcuda.so.1"

struct tcc_device {
    tcc_context *ctx; /* receives the errors of this device, its buffers and kernels */
    void *library;    /* dlopen handle of libcuda.so.1 */
    CudaDriver cu;
    CUdevice device;
    CUcontext context; /* the retained primary context; NULL until retained */
    char name[256];
    int arch; /* major*10 + minor */
};

struct tcc_device_buffer {
    tcc_device *device;
    CUdeviceptr pointer;
    size_t bytes;
};

struct tcc_loaded_kernel {
    tcc_device *device;
    CUmodule module;
    CUfunction function;
    unsigned int grid[3], block[3];
    int64_t shared_bytes;        /* static and dynamic */
    unsigned int dynamic_shared; /* bytes of dynamic shared memory each launch passes */
    char name[256];
};

/* ---- errors ---------------------------------------------------------------------------- */

/* "CUDA_ERROR_NAME (description)" for a driver result. */
static void describe_result(const tcc_device *device, CUresult result, char *text, size_t size)
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

/* Records "<call> failed<detail>: CUDA_ERROR_NAME (description)" and returns TCC_ERROR_CUDA.
 * `detail` (may be "") says what the call was for. */
static tcc_status cuda_fail(const tcc_device *device, CUresult result, const char *call,
                            const char *detail)
{
    char text[512];
    describe_result(device, result, text, sizeof text);
    return tci_fail(device->ctx, TCC_ERROR_CUDA, "%s failed%s: %s", call, detail, text);
}

/* Checks one driver call: CUDA_CHECK(device, cuMemAlloc, (&pointer, bytes)) returns the
 * failure from the calling function. */
#define CUDA_CHECK(device, function, args)                                                         \
    do {                                                                                           \
        CUresult check_result_ = (device)->cu.function args;                                       \
        if (check_result_ != CUDA_SUCCESS)                                                         \
            return cuda_fail((device), check_result_, #function, "");                              \
    } while (0)

/* Makes the device's context current on the calling thread. */
static tcc_status bind_context(tcc_device *device)
{
    CUDA_CHECK(device, cuCtxSetCurrent, (device->context));
    return TCC_OK;
}

/* ---- loading the driver ------------------------------------------------------------------ */

/* The symbols to resolve: the _v2 names are the current ABI of the calls whose first
 * version took 32-bit sizes or had other problems; `fallback` serves older drivers. */
typedef struct DriverSymbol {
    const char *name;
    const char *fallback; /* or NULL */
    size_t offset;        /* of the pointer in CudaDriver */
} DriverSymbol;

#define SYMBOL(field, name, fallback)                                                              \
    {                                                                                              \
        name, fallback, offsetof(CudaDriver, field)                                                \
    }

static const DriverSymbol driver_symbols[] = {
    SYMBOL(cuInit, "cuInit", NULL),
    SYMBOL(cuGetErrorName, "cuGetErrorName", NULL),
    SYMBOL(cuGetErrorString, "cuGetErrorString", NULL),
    SYMBOL(cuDeviceGet, "cuDeviceGet", NULL),
    SYMBOL(cuDeviceGetName, "cuDeviceGetName", NULL),
    SYMBOL(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL),
    SYMBOL(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
    SYMBOL(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
    SYMBOL(cuCtxSetCurrent, "cuCtxSetCurrent", NULL),
    SYMBOL(cuCtxSynchronize, "cuCtxSynchronize", NULL),
    SYMBOL(cuMemAlloc, "cuMemAlloc_v2", NULL),
    SYMBOL(cuMemFree, "cuMemFree_v2", NULL),
    SYMBOL(cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL),
    SYMBOL(cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL),
    SYMBOL(cuMemsetD8, "cuMemsetD8_v2", NULL),
    SYMBOL(cuModuleLoadDataEx, "cuModuleLoadDataEx", NULL),
    SYMBOL(cuModuleUnload, "cuModuleUnload", NULL),
    SYMBOL(cuModuleGetFunction, "cuModuleGetFunction", NULL),
    SYMBOL(cuFuncSetAttribute, "cuFuncSetAttribute", NULL),
    SYMBOL(cuLaunchKernel, "cuLaunchKernel", NULL),
    SYMBOL(cuEventCreate, "cuEventCreate", NULL),
    SYMBOL(cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy"),
    SYMBOL(cuEventRecord, "cuEventRecord", NULL),
    SYMBOL(cuEventSynchronize, "cuEventSynchronize", NULL),
    SYMBOL(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
};

static tcc_status load_driver(tcc_device *device)
{
    device->library = dlopen(LIBCUDA, RTLD_NOW | RTLD_LOCAL);
    if (!device->library) {
        const char *why = dlerror();
        return tci_fail(device->ctx, TCC_ERROR_CUDA,
                        "cannot load " LIBCUDA ": no NVIDIA driver on this machine (%s)",
                        why ? why : "unknown dlopen error");
    }
    for (size_t i = 0; i < sizeof driver_symbols / sizeof driver_symbols[0]; i++) {
        const DriverSymbol *symbol = &driver_symbols[i];
        void *address = dlsym(device->library, symbol->name);
        if (!address && symbol->fallback)
            address = dlsym(device->library, symbol->fallback);
        if (!address)
            return tci_fail(device->ctx, TCC_ERROR_CUDA,
                            LIBCUDA " has no symbol %s: the NVIDIA driver is too old",
                            symbol->name);
        /* POSIX guarantees that a data pointer can hold a function address. */
        memcpy((char *)&device->cu + symbol->offset, &address, sizeof address);
    }
    return TCC_OK;
}

/* ---- devices ----------------------------------------------------------------------------- */

/* Frees whatever part of a device open_device made. */
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
    CUDA_CHECK(device, cuInit, (0));
    CUresult result = device->cu.cuDeviceGet(&device->device, ordinal);
    if (result != CUDA_SUCCESS) {
        char detail[64];
        snprintf(detail, sizeof detail, " for device %d", ordinal);
        return cuda_fail(device, result, "cuDeviceGet", detail);
    }
    CUDA_CHECK(device, cuDeviceGetName, (device->name, (int)sizeof device->name, device->device));
    device->name[sizeof device->name - 1] = '\0';
    CUDA_CHECK(device, cuDeviceGetAttribute,
               (&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device->device));
    CUDA_CHECK(device, cuDeviceGetAttribute,
               (&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device->device));
    device->arch = major * 10 + minor;
    /* Only a retained context is recorded, so destroy_device releases only what it holds. */
    CUcontext context = NULL;
    CUDA_CHECK(device, cuDevicePrimaryCtxRetain, (&context, device->device));
    device->context = context;
    return bind_context(device);
}

tcc_status tcc_device_open(tcc_context *ctx, int ordinal, tcc_device **out)
{
    if (!out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_device_open: out is NULL");
    *out = NULL;
    tcc_device *device = calloc(1, sizeof *device);
    if (!device)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory opening a device");
    device->ctx = ctx;
    tcc_status status = load_driver(device);
    if (status == TCC_OK)
        status = query_device(device, ordinal);
    if (status != TCC_OK) {
        destroy_device(device);
        return status;
    }
    *out = device;
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

/* ---- buffers ----------------------------------------------------------------------------- */

tcc_status tcc_device_buffer_alloc(tcc_device *device, size_t bytes, tcc_device_buffer **out)
{
    if (!device || !out)
        return tci_fail(device ? device->ctx : NULL, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_device_buffer_alloc: device or out is NULL");
    *out = NULL;
    if (bytes == 0)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_device_buffer_alloc: a buffer needs at least one byte");
    tcc_status status = bind_context(device);
    if (status != TCC_OK)
        return status;
    tcc_device_buffer *buffer = calloc(1, sizeof *buffer);
    if (!buffer)
        return tci_fail(device->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory allocating a buffer");
    CUresult result = device->cu.cuMemAlloc(&buffer->pointer, bytes);
    if (result != CUDA_SUCCESS) {
        free(buffer);
        char detail[64];
        snprintf(detail, sizeof detail, " for %zu bytes", bytes);
        return cuda_fail(device, result, "cuMemAlloc", detail);
    }
    buffer->device = device;
    buffer->bytes = bytes;
    *out = buffer;
    return TCC_OK;
}

void tcc_device_buffer_free(tcc_device_buffer *buffer)
{
    if (!buffer)
        return;
    /* Nothing can be reported from here; a failure would mean the context is already lost. */
    if (bind_context(buffer->device) == TCC_OK)
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
    return bind_context(buffer->device);
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
    tcc_status status = bind_context(buffer->device);
    if (status != TCC_OK)
        return status;
    CUDA_CHECK(buffer->device, cuMemsetD8, (buffer->pointer, byte, buffer->bytes));
    return TCC_OK;
}

/* ---- kernels ----------------------------------------------------------------------------- */

/* Copies a JIT log into `out` on one line: newlines become "; ", trailing blanks go. */
static void flatten_log(const char *log, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = log; *p && n + 3 < size; p++) {
        if (*p == '\n' || *p == '\r') {
            while (p[1] == '\n' || p[1] == '\r')
                p++;
            if (p[1] == '\0')
                break;
            out[n++] = ';';
            out[n++] = ' ';
        } else {
            out[n++] = *p;
        }
    }
    while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t' || out[n - 1] == ';'))
        n--;
    out[n] = '\0';
}

/* A launch dimension must be a positive 32-bit value (the driver checks the real limits). */
static tcc_status launch_dims(tcc_context *ctx, const char *what, const int64_t in[3],
                              unsigned int out[3])
{
    for (int i = 0; i < 3; i++) {
        if (in[i] < 1 || in[i] > (int64_t)UINT_MAX)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "tcc_kernel_load: %s dimension %d is %lld (must be in 1..%u)", what, i,
                            (long long)in[i], UINT_MAX);
        out[i] = (unsigned int)in[i];
    }
    return TCC_OK;
}

/* Reads the launch shape and name of a built kernel into `loaded`. */
static tcc_status describe_kernel(tcc_device *device, const tcc_kernel *kernel,
                                  tcc_loaded_kernel *loaded)
{
    int64_t grid[3], block[3];
    const char *name = tcc_kernel_name(kernel);
    if (!name || !*name)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_kernel_load: unnamed kernel");
    if (strlen(name) >= sizeof loaded->name)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_load: kernel name '%.40s...' is too long", name);
    strcpy(loaded->name, name);
    tcc_kernel_grid(kernel, grid);
    tcc_kernel_block(kernel, block);
    tcc_status status = launch_dims(device->ctx, "grid", grid, loaded->grid);
    if (status == TCC_OK)
        status = launch_dims(device->ctx, "block", block, loaded->block);
    loaded->shared_bytes = tcc_kernel_shared_bytes(kernel);
    loaded->dynamic_shared = (unsigned int)tcc_kernel_dynamic_shared_bytes(kernel);
    return status;
}

/* cuModuleLoadDataEx with the JIT logs captured, so a rejected module says why. */
static tcc_status load_module(tcc_device *device, const char *ptx, tcc_loaded_kernel *loaded)
{
    char info_log[4096] = "", error_log[4096] = "";
    CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                              CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {info_log, (void *)(uintptr_t)sizeof info_log, error_log,
                      (void *)(uintptr_t)sizeof error_log};
    CUresult result = device->cu.cuModuleLoadDataEx(
        &loaded->module, ptx, (unsigned int)(sizeof options / sizeof options[0]), options, values);
    if (result == CUDA_SUCCESS)
        return TCC_OK;
    loaded->module = NULL;
    error_log[sizeof error_log - 1] = info_log[sizeof info_log - 1] = '\0';
    char text[512], log[900], detail[300];
    describe_result(device, result, text, sizeof text);
    flatten_log(*error_log ? error_log : info_log, log, sizeof log);
    snprintf(detail, sizeof detail, " for kernel '%s'", loaded->name);
    return tci_fail(device->ctx, TCC_ERROR_CUDA, "cuModuleLoadDataEx failed%s: %s: %s", detail,
                    text, *log ? log : "the JIT log is empty");
}

static tcc_status find_function(tcc_device *device, tcc_loaded_kernel *loaded)
{
    CUresult result =
        device->cu.cuModuleGetFunction(&loaded->function, loaded->module, loaded->name);
    if (result == CUDA_SUCCESS)
        return TCC_OK;
    char detail[300];
    snprintf(detail, sizeof detail, " for kernel '%s'", loaded->name);
    return cuda_fail(device, result, "cuModuleGetFunction", detail);
}

/* Shared memory past the default 48 KB is there only when the kernel opts in, up to what
 * the device allows a block: read from the device, refused in one line when exceeded. */
static tcc_status allow_shared_memory(tcc_device *device, tcc_loaded_kernel *loaded)
{
    if (loaded->dynamic_shared == 0)
        return TCC_OK;
    int limit = 0;
    CUDA_CHECK(device, cuDeviceGetAttribute,
               (&limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device->device));
    if (loaded->shared_bytes > limit)
        return tci_fail(device->ctx, TCC_ERROR_SCHEDULE,
                        "kernel '%s' needs %lld bytes of shared memory; %s allows %d a block",
                        loaded->name, (long long)loaded->shared_bytes, device->name, limit);
    CUDA_CHECK(device, cuFuncSetAttribute,
               (loaded->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                (int)loaded->dynamic_shared));
    return TCC_OK;
}

tcc_status tcc_kernel_load(tcc_device *device, const tcc_kernel *kernel, tcc_loaded_kernel **out)
{
    if (!device || !kernel || !out)
        return tci_fail(device ? device->ctx : NULL, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_load: device, kernel or out is NULL");
    *out = NULL;
    const char *ptx = tcc_kernel_ptx(kernel);
    if (!ptx || !*ptx)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_kernel_load: no PTX");
    tcc_loaded_kernel *loaded = calloc(1, sizeof *loaded);
    if (!loaded)
        return tci_fail(device->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory loading a kernel");
    loaded->device = device;
    tcc_status status = describe_kernel(device, kernel, loaded);
    if (status == TCC_OK)
        status = bind_context(device);
    if (status == TCC_OK)
        status = load_module(device, ptx, loaded);
    if (status == TCC_OK)
        status = find_function(device, loaded);
    if (status == TCC_OK)
        status = allow_shared_memory(device, loaded);
    if (status != TCC_OK) {
        tcc_loaded_kernel_destroy(loaded);
        return status;
    }
    *out = loaded;
    return TCC_OK;
}

void tcc_loaded_kernel_destroy(tcc_loaded_kernel *loaded)
{
    if (!loaded)
        return;
    if (loaded->module && bind_context(loaded->device) == TCC_OK)
        loaded->device->cu.cuModuleUnload(loaded->module);
    free(loaded);
}

/* ---- launches ---------------------------------------------------------------------------- */

/* The kernel parameters: params[i] points at pointers[i], the device address of buffer i. */
typedef struct LaunchArgs {
    CUdeviceptr *pointers;
    void **params;
} LaunchArgs;

static void free_args(LaunchArgs *args)
{
    free(args->pointers);
    free(args->params);
}

static tcc_status make_args(tcc_loaded_kernel *loaded, int nbuffer,
                            tcc_device_buffer *const *buffers, LaunchArgs *args)
{
    tcc_context *ctx = loaded->device->ctx;
    args->pointers = NULL;
    args->params = NULL;
    if (nbuffer < 0 || (nbuffer > 0 && !buffers))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "kernel '%s': bad buffer list (%d)",
                        loaded->name, nbuffer);
    for (int i = 0; i < nbuffer; i++) {
        if (!buffers[i] || buffers[i]->device != loaded->device)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "kernel '%s': buffer %d is NULL or belongs to another device",
                            loaded->name, i);
    }
    size_t count = nbuffer > 0 ? (size_t)nbuffer : 1;
    args->pointers = calloc(count, sizeof *args->pointers);
    args->params = calloc(count, sizeof *args->params);
    if (!args->pointers || !args->params) {
        free_args(args);
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory launching a kernel");
    }
    for (int i = 0; i < nbuffer; i++) {
        args->pointers[i] = buffers[i]->pointer;
        args->params[i] = &args->pointers[i];
    }
    return TCC_OK;
}

/* One asynchronous launch on the default stream; only the launch itself is checked. */
static tcc_status launch_once(tcc_loaded_kernel *loaded, const LaunchArgs *args)
{
    const unsigned int *g = loaded->grid, *b = loaded->block;
    CUresult result =
        loaded->device->cu.cuLaunchKernel(loaded->function, g[0], g[1], g[2], b[0], b[1], b[2],
                                          loaded->dynamic_shared, NULL, args->params, NULL);
    if (result == CUDA_SUCCESS)
        return TCC_OK;
    char detail[400];
    snprintf(detail, sizeof detail, " for kernel '%s' (grid %ux%ux%u, block %ux%ux%u)",
             loaded->name, g[0], g[1], g[2], b[0], b[1], b[2]);
    return cuda_fail(loaded->device, result, "cuLaunchKernel", detail);
}

/* Waits for the device; an error here is one the kernel hit while running. */
static tcc_status synchronize(tcc_loaded_kernel *loaded)
{
    CUresult result = loaded->device->cu.cuCtxSynchronize();
    if (result == CUDA_SUCCESS)
        return TCC_OK;
    char detail[300];
    snprintf(detail, sizeof detail, " after kernel '%s'", loaded->name);
    return cuda_fail(loaded->device, result, "cuCtxSynchronize", detail);
}

tcc_status tcc_kernel_launch(tcc_loaded_kernel *loaded, int nbuffer,
                             tcc_device_buffer *const *buffers)
{
    if (!loaded)
        return tci_fail(NULL, TCC_ERROR_INVALID_ARGUMENT, "tcc_kernel_launch: kernel is NULL");
    LaunchArgs args;
    tcc_status status = make_args(loaded, nbuffer, buffers, &args);
    if (status != TCC_OK)
        return status;
    status = bind_context(loaded->device);
    if (status == TCC_OK)
        status = launch_once(loaded, &args);
    if (status == TCC_OK)
        status = synchronize(loaded);
    free_args(&args);
    return status;
}

/* ---- timing ------------------------------------------------------------------------------ */

/* `runs` pairs of events: start[i] and end[i] bracket run i. */
typedef struct EventPairs {
    CUevent *start, *end;
    int count;
} EventPairs;

static void destroy_events(tcc_device *device, EventPairs *events)
{
    for (int i = 0; i < events->count; i++) {
        if (events->start && events->start[i])
            device->cu.cuEventDestroy(events->start[i]);
        if (events->end && events->end[i])
            device->cu.cuEventDestroy(events->end[i]);
    }
    free(events->start);
    free(events->end);
}

static tcc_status create_events(tcc_device *device, int runs, EventPairs *events)
{
    events->count = runs;
    events->start = calloc((size_t)runs, sizeof *events->start);
    events->end = calloc((size_t)runs, sizeof *events->end);
    if (!events->start || !events->end)
        return tci_fail(device->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory timing a kernel");
    for (int i = 0; i < runs; i++) {
        CUDA_CHECK(device, cuEventCreate, (&events->start[i], CU_EVENT_DEFAULT));
        CUDA_CHECK(device, cuEventCreate, (&events->end[i], CU_EVENT_DEFAULT));
    }
    return TCC_OK;
}

/* Issues every timed launch back to back, then waits once: no host gap inside a bracket. */
static tcc_status timed_runs(tcc_loaded_kernel *loaded, const LaunchArgs *args,
                             const EventPairs *events, double *times)
{
    tcc_device *device = loaded->device;
    for (int i = 0; i < events->count; i++) {
        CUDA_CHECK(device, cuEventRecord, (events->start[i], NULL));
        tcc_status status = launch_once(loaded, args);
        if (status != TCC_OK)
            return status;
        CUDA_CHECK(device, cuEventRecord, (events->end[i], NULL));
    }
    tcc_status status = synchronize(loaded);
    if (status != TCC_OK)
        return status;
    for (int i = 0; i < events->count; i++) {
        float ms = 0.0f;
        CUDA_CHECK(device, cuEventSynchronize, (events->end[i]));
        CUDA_CHECK(device, cuEventElapsedTime, (&ms, events->start[i], events->end[i]));
        times[i] = ms;
    }
    return TCC_OK;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of `count` values; sorts them. */
static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    if (count % 2)
        return values[count / 2];
    return 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

static tcc_status warm_up(tcc_loaded_kernel *loaded, const LaunchArgs *args, int warmup)
{
    for (int i = 0; i < warmup; i++) {
        tcc_status status = launch_once(loaded, args);
        if (status != TCC_OK)
            return status;
    }
    return synchronize(loaded);
}

tcc_status tcc_kernel_time(tcc_loaded_kernel *loaded, int nbuffer,
                           tcc_device_buffer *const *buffers, int warmup, int runs,
                           double *median_ms)
{
    if (!loaded)
        return tci_fail(NULL, TCC_ERROR_INVALID_ARGUMENT, "tcc_kernel_time: kernel is NULL");
    tcc_device *device = loaded->device;
    if (warmup < 0 || runs < 1 || !median_ms)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_time: needs warmup >= 0, runs >= 1 and a result pointer "
                        "(got warmup %d, runs %d)",
                        warmup, runs);
    LaunchArgs args;
    tcc_status status = make_args(loaded, nbuffer, buffers, &args);
    if (status != TCC_OK)
        return status;
    EventPairs events = {0};
    double *times = calloc((size_t)runs, sizeof *times);
    status = times
                 ? bind_context(device)
                 : tci_fail(device->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory timing a kernel");
    if (status == TCC_OK)
        status = warm_up(loaded, &args, warmup);
    if (status == TCC_OK)
        status = create_events(device, runs, &events);
    if (status == TCC_OK)
        status = timed_runs(loaded, &args, &events, times);
    if (status == TCC_OK)
        *median_ms = median(times, runs);
    destroy_events(device, &events);
    free(times);
    free_args(&args);
    return status;
}
