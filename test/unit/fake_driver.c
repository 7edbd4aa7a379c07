/* The fake CUDA driver (fake_driver.h). */
#include "fake_driver.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

FakeDriver fake;

void fake_reset(void)
{
    fake = (FakeDriver){.version = 12040, .arch = 90, .stream_owner = FAKE_PRIMARY};
    int *a = fake.attributes;
    a[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 1024;
    a[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X] = 1024;
    a[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + 1] = 1024;
    a[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + 2] = 64;
    a[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X] = 2147483647;
    a[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + 1] = 65535;
    a[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + 2] = 65535;
    a[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK] = 65536;
    a[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] = 132;
    a[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] = 232448;
    fake.function_max_threads = 1024;
    fake.function_registers = 32;
    fake.free_bytes = fake.total_bytes = (size_t)80 << 30;
    /* GPCs that give what an H100 SXM's driver says: 66, 30, 15 and 7 clusters of 2, 4, 8
     * and 16 blocks. */
    static const int gpcs[] = {18, 18, 18, 18, 18, 16, 16, 10};
    memcpy(fake.gpc_multiprocessors, gpcs, sizeof gpcs);
}

static CUresult fake_cuDriverGetVersion(int *version)
{
    *version = fake.version;
    return CUDA_SUCCESS;
}

static CUresult fake_cuInit(unsigned int flags)
{
    return flags == 0 ? CUDA_SUCCESS : FAKE_INVALID_VALUE;
}

static CUresult fake_cuGetErrorName(CUresult error, const char **text)
{
    static const struct {
        CUresult result;
        const char *name;
    } names[] = {
        {FAKE_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
        {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
        {FAKE_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
        {FAKE_INVALID_PTX, "CUDA_ERROR_INVALID_PTX"},
        {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
        {FAKE_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (names[i].result == error) {
            *text = names[i].name;
            return CUDA_SUCCESS;
        }
    }
    return FAKE_INVALID_VALUE;
}

static CUresult fake_cuGetErrorString(CUresult error, const char **text)
{
    (void)error;
    *text = "the fake driver's description";
    return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGet(CUdevice *device, int ordinal)
{
    *device = ordinal;
    return ordinal == 0 ? CUDA_SUCCESS : FAKE_INVALID_DEVICE;
}

static CUresult fake_cuDeviceGetCount(int *count)
{
    *count = 1;
    return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetName(char *name, int length, CUdevice device)
{
    (void)device;
    snprintf(name, (size_t)length, "Fake GPU");
    return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device)
{
    (void)device;
    if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        *value = fake.arch / 10;
    else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        *value = fake.arch % 10;
    else if (attribute >= 0 && attribute < 128)
        *value = fake.attributes[attribute];
    else
        return FAKE_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult fake_cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device)
{
    (void)device;
    *context = FAKE_PRIMARY;
    fake.contexts++;
    return CUDA_SUCCESS;
}

static CUresult fake_cuDevicePrimaryCtxRelease(CUdevice device)
{
    (void)device;
    fake.contexts--;
    return CUDA_SUCCESS;
}

static CUresult fake_cuCtxSetCurrent(CUcontext context)
{
    fake.current = context;
    return CUDA_SUCCESS;
}

static CUresult fake_cuCtxGetCurrent(CUcontext *context)
{
    *context = fake.current;
    return CUDA_SUCCESS;
}

/* NULL, CU_STREAM_LEGACY (1) and CU_STREAM_PER_THREAD (2) are the current context's. */
static CUresult fake_cuStreamGetCtx(CUstream stream, CUcontext *context)
{
    if (fake.stream_result != CUDA_SUCCESS)
        return fake.stream_result;
    *context = (uintptr_t)stream <= 2 ? fake.current : fake.stream_owner;
    return CUDA_SUCCESS;
}

static CUresult fake_cuCtxSynchronize(void)
{
    fake.synchronizes++;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = fake.free_bytes;
    *total_bytes = fake.total_bytes;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemAlloc(CUdeviceptr *pointer, size_t bytes)
{
    if (bytes > fake.free_bytes)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pointer = 0x10000u * (CUdeviceptr)(++fake.buffers);
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemFree(CUdeviceptr pointer)
{
    (void)pointer;
    fake.buffers--;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes)
{
    (void)dst, (void)src, (void)bytes;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes)
{
    (void)src;
    memset(dst, 0, bytes);
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t count)
{
    (void)dst;
    fake.memsets++;
    fake.memset_value = value;
    fake.memset_bytes = count;
    return CUDA_SUCCESS;
}

/* A failed load writes fake.load_log where the caller asked for the JIT's error log. */
static CUresult fake_cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int noption,
                                        CUjit_option *options, void **values)
{
    fake.loads++;
    if (strncmp(image,
                "\x7f"
                "ELF",
                4) == 0) { /* stops at a short PTX's NUL */
        fake.machine_code_loads++;
        if (fake.machine_code_result != CUDA_SUCCESS)
            return fake.machine_code_result;
    } else if (fake.load_result != CUDA_SUCCESS) {
        for (unsigned int i = 0; i + 1 < noption && fake.load_log; i++) {
            if (options[i] == CU_JIT_ERROR_LOG_BUFFER &&
                options[i + 1] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
                snprintf(values[i], (size_t)(uintptr_t)values[i + 1], "%s", fake.load_log);
        }
        return fake.load_result;
    }
    *module = (CUmodule)&fake.modules;
    fake.modules++;
    return CUDA_SUCCESS;
}

static CUresult fake_cuModuleUnload(CUmodule module)
{
    (void)module;
    fake.modules--;
    return CUDA_SUCCESS;
}

static CUresult fake_cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name)
{
    (void)module, (void)name;
    *function = (CUfunction)&fake.launches;
    return CUDA_SUCCESS;
}

static CUresult fake_cuFuncGetAttribute(int *value, int attribute, CUfunction function)
{
    (void)function;
    if (attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        *value = fake.function_max_threads;
    else if (attribute == CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
        *value = fake.function_static_shared;
    else if (attribute == CU_FUNC_ATTRIBUTE_NUM_REGS)
        *value = fake.function_registers;
    else
        return FAKE_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult fake_cuFuncSetAttribute(CUfunction function, int attribute, int value)
{
    (void)function;
    if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        fake.dynamic_shared = (unsigned int)value;
    return CUDA_SUCCESS;
}

/* The runtime passes each launch an array of parameter pointers with room for its tensor maps
 * after them (NULL where there are fewer), so the first eight entries can be read. */
static void record_launch(CUstream stream, void **params)
{
    fake.launch_stream = stream;
    fake.launch_context = fake.current;
    for (int i = 0; i < 8; i++)
        fake.launch_values[i] = params && params[i] ? *(const unsigned long long *)params[i] : 0;
}

static CUresult fake_cuLaunchKernel(CUfunction function, unsigned int gx, unsigned int gy,
                                    unsigned int gz, unsigned int bx, unsigned int by,
                                    unsigned int bz, unsigned int shared, CUstream stream,
                                    void **params, void **extra)
{
    (void)function, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
    (void)extra;
    fake.launches++;
    record_launch(stream, params);
    return fake.launch_result;
}

static CUresult fake_cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction function,
                                      void **params, void **extra)
{
    (void)function, (void)extra;
    fake.cluster_launches++;
    record_launch(config->hStream, params);
    return fake.launch_result;
}

static CUresult fake_cuOccupancyMaxActiveClusters(int *clusters, CUfunction function,
                                                  const CUlaunchConfig *config)
{
    (void)function;
    if (!fake.current)
        return FAKE_INVALID_CONTEXT;
    unsigned int size = config->numAttrs ? config->attrs[0].value.clusterDim.x : 1;
    fake.occupancy_shared = config->sharedMemBytes;
    *clusters = 0;
    for (int i = 0; i < 8 && fake.gpc_multiprocessors[i]; i++)
        *clusters += fake.gpc_multiprocessors[i] / (int)size;
    return CUDA_SUCCESS;
}

static CUresult fake_cuTensorMapEncodeTiled(CUtensorMap *map, int type, unsigned int rank,
                                            void *address, const unsigned long long *dims,
                                            const unsigned long long *strides,
                                            const unsigned int *box,
                                            const unsigned int *element_strides, int interleave,
                                            int swizzle, int l2_promotion, int oob_fill)
{
    (void)type, (void)rank, (void)dims, (void)strides, (void)box;
    (void)element_strides, (void)interleave, (void)swizzle, (void)l2_promotion, (void)oob_fill;
    if (!fake.current) /* as the real encoders, which want a context */
        return FAKE_INVALID_CONTEXT;
    memset(map, 0, sizeof *map);
    fake.encodes++;
    fake.encode_address = (unsigned long long)(uintptr_t)address;
    return CUDA_SUCCESS;
}

static CUresult fake_cuTensorMapEncodeIm2col(CUtensorMap *map, int type, unsigned int rank,
                                             void *address, const unsigned long long *dims,
                                             const unsigned long long *strides, const int *lower,
                                             const int *upper, unsigned int channels,
                                             unsigned int pixels,
                                             const unsigned int *element_strides, int interleave,
                                             int swizzle, int l2_promotion, int oob_fill)
{
    (void)type, (void)rank, (void)dims, (void)strides, (void)lower, (void)upper;
    (void)channels, (void)pixels, (void)element_strides, (void)interleave, (void)swizzle;
    (void)l2_promotion, (void)oob_fill;
    if (!fake.current) /* as the real encoders, which want a context */
        return FAKE_INVALID_CONTEXT;
    memset(map, 0, sizeof *map);
    fake.encodes++;
    fake.encode_address = (unsigned long long)(uintptr_t)address;
    return CUDA_SUCCESS;
}

static CUresult fake_cuEventCreate(CUevent *event, unsigned int flags)
{
    (void)flags;
    *event = (CUevent)&fake.events;
    fake.events++;
    return CUDA_SUCCESS;
}

static CUresult fake_cuEventDestroy(CUevent event)
{
    (void)event;
    fake.events--;
    return CUDA_SUCCESS;
}

static CUresult fake_cuEventRecord(CUevent event, CUstream stream)
{
    (void)event, (void)stream;
    return CUDA_SUCCESS;
}

static CUresult fake_cuEventSynchronize(CUevent event)
{
    (void)event;
    return CUDA_SUCCESS;
}

static CUresult fake_cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
    (void)start, (void)end;
    *ms = 0.5f;
    return CUDA_SUCCESS;
}

/* The fake's entry points under the names the runtime looks up: X(name, function) for each
 * (test/lit/fake_cuda/libcuda.c exports them under these names). */
#define FAKE_ENTRY_POINTS(X)                                                                       \
    X(cuDriverGetVersion, fake_cuDriverGetVersion)                                                 \
    X(cuInit, fake_cuInit)                                                                         \
    X(cuGetErrorName, fake_cuGetErrorName)                                                         \
    X(cuGetErrorString, fake_cuGetErrorString)                                                     \
    X(cuDeviceGet, fake_cuDeviceGet)                                                               \
    X(cuDeviceGetCount, fake_cuDeviceGetCount)                                                     \
    X(cuDeviceGetName, fake_cuDeviceGetName)                                                       \
    X(cuDeviceGetAttribute, fake_cuDeviceGetAttribute)                                             \
    X(cuDevicePrimaryCtxRetain, fake_cuDevicePrimaryCtxRetain)                                     \
    X(cuDevicePrimaryCtxRelease_v2, fake_cuDevicePrimaryCtxRelease)                                \
    X(cuCtxSetCurrent, fake_cuCtxSetCurrent)                                                       \
    X(cuCtxGetCurrent, fake_cuCtxGetCurrent)                                                       \
    X(cuCtxSynchronize, fake_cuCtxSynchronize)                                                     \
    X(cuMemGetInfo_v2, fake_cuMemGetInfo)                                                          \
    X(cuMemAlloc_v2, fake_cuMemAlloc)                                                              \
    X(cuMemFree_v2, fake_cuMemFree)                                                                \
    X(cuMemcpyHtoD_v2, fake_cuMemcpyHtoD)                                                          \
    X(cuMemcpyDtoH_v2, fake_cuMemcpyDtoH)                                                          \
    X(cuMemsetD8_v2, fake_cuMemsetD8)                                                              \
    X(cuModuleLoadDataEx, fake_cuModuleLoadDataEx)                                                 \
    X(cuModuleUnload, fake_cuModuleUnload)                                                         \
    X(cuModuleGetFunction, fake_cuModuleGetFunction)                                               \
    X(cuFuncGetAttribute, fake_cuFuncGetAttribute)                                                 \
    X(cuFuncSetAttribute, fake_cuFuncSetAttribute)                                                 \
    X(cuLaunchKernel, fake_cuLaunchKernel)                                                         \
    X(cuLaunchKernelEx, fake_cuLaunchKernelEx)                                                     \
    X(cuOccupancyMaxActiveClusters, fake_cuOccupancyMaxActiveClusters)                             \
    X(cuTensorMapEncodeTiled, fake_cuTensorMapEncodeTiled)                                         \
    X(cuTensorMapEncodeIm2col, fake_cuTensorMapEncodeIm2col)                                       \
    X(cuEventCreate, fake_cuEventCreate)                                                           \
    X(cuEventDestroy_v2, fake_cuEventDestroy)                                                      \
    X(cuEventRecord, fake_cuEventRecord)                                                           \
    X(cuEventSynchronize, fake_cuEventSynchronize)                                                 \
    X(cuEventElapsedTime_v2, fake_cuEventElapsedTime)                                              \
    X(cuStreamGetCtx, fake_cuStreamGetCtx)

/* A function pointer of any type converts to another and back; the lookup hands it out as
 * POSIX's dlsym does. */
typedef void (*AnyFunction)(void);
#define ENTRY(name, function) {#name, (AnyFunction)function},
static const struct {
    const char *name;
    AnyFunction function;
} fake_entries[] = {FAKE_ENTRY_POINTS(ENTRY)};

void *fake_lookup(void *handle, const char *name)
{
    (void)handle;
    for (size_t i = 0; i < sizeof fake.missing / sizeof fake.missing[0]; i++) {
        if (fake.missing[i] && strcmp(fake.missing[i], name) == 0)
            return NULL;
    }
    for (size_t i = 0; i < sizeof fake_entries / sizeof fake_entries[0]; i++) {
        if (strcmp(fake_entries[i].name, name) == 0) {
            void *address;
            _Static_assert(sizeof address == sizeof fake_entries[i].function,
                           "function and data pointers alike, as dlsym needs");
            memcpy(&address, &fake_entries[i].function, sizeof address);
            return address;
        }
    }
    return NULL;
}
