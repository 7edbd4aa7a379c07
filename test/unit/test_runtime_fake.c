/*
 * The runtime's failure paths on a fake CUDA driver: entry points that a test defines and
 * hands to tci_device_open_with in place of libcuda.so.1's, so that what only a GPU (or an
 * old driver, or an exhausted one) would provoke runs on every machine, under the sanitizers
 * too: a driver without the optional entry points, device memory exhausted, launches the
 * device would refuse (block, threads for the registers, grid, shared memory, clusters), PTX
 * newer than the driver or for another arch, a launch the driver refuses. Each is one line
 * naming the limit and the value; the fake counts what is live (contexts, buffers, modules,
 * events), so a leak on a failure path fails the test; and the device then runs the next
 * kernel.
 */
#include "driver/kernel.h"
#include "runtime/internal.h"
#include "support.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the fake driver ------------------------------------------------------------------ */

enum {
    FAKE_INVALID_VALUE = 1,
    FAKE_INVALID_PTX = 218,
    FAKE_INVALID_DEVICE = 101,
    FAKE_LAUNCH_OUT_OF_RESOURCES = 701,
};

typedef struct FakeDriver {
    int version; /* cuDriverGetVersion */
    int arch;    /* compute capability, major * 10 + minor */
    int attributes[128];
    int function_max_threads, function_registers, function_static_shared;
    size_t free_bytes, total_bytes;
    CUresult load_result, launch_result;
    const char *load_log; /* written into the JIT's error log when a load fails */
    const char *missing[4];
    /* What is live: each must be 0 once the device is closed. */
    int contexts, buffers, modules, events;
    /* Calls made: a refusal before the driver is asked must leave them unchanged. */
    int loads, launches, cluster_launches, encodes;
    unsigned int dynamic_shared; /* the last CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
} FakeDriver;

static FakeDriver fake;

/* An H100 SXM with a CUDA 12.4 driver. */
static void fake_reset(void)
{
    fake = (FakeDriver){.version = 12040, .arch = 90};
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
    *context = (CUcontext)&fake;
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
    (void)context;
    return CUDA_SUCCESS;
}

static CUresult fake_cuCtxSynchronize(void)
{
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
    (void)dst, (void)value, (void)count;
    return CUDA_SUCCESS;
}

/* A failed load writes fake.load_log where the caller asked for the JIT's error log. */
static CUresult fake_cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int noption,
                                        CUjit_option *options, void **values)
{
    (void)image;
    fake.loads++;
    if (fake.load_result != CUDA_SUCCESS) {
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

static CUresult fake_cuLaunchKernel(CUfunction function, unsigned int gx, unsigned int gy,
                                    unsigned int gz, unsigned int bx, unsigned int by,
                                    unsigned int bz, unsigned int shared, CUstream stream,
                                    void **params, void **extra)
{
    (void)function, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
    (void)stream, (void)params, (void)extra;
    fake.launches++;
    return fake.launch_result;
}

static CUresult fake_cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction function,
                                      void **params, void **extra)
{
    (void)config, (void)function, (void)params, (void)extra;
    fake.cluster_launches++;
    return fake.launch_result;
}

static CUresult fake_cuTensorMapEncodeTiled(CUtensorMap *map, int type, unsigned int rank,
                                            void *address, const unsigned long long *dims,
                                            const unsigned long long *strides,
                                            const unsigned int *box,
                                            const unsigned int *element_strides, int interleave,
                                            int swizzle, int l2_promotion, int oob_fill)
{
    (void)type, (void)rank, (void)address, (void)dims, (void)strides, (void)box;
    (void)element_strides, (void)interleave, (void)swizzle, (void)l2_promotion, (void)oob_fill;
    memset(map, 0, sizeof *map);
    fake.encodes++;
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
    (void)type, (void)rank, (void)address, (void)dims, (void)strides, (void)lower, (void)upper;
    (void)channels, (void)pixels, (void)element_strides, (void)interleave, (void)swizzle;
    (void)l2_promotion, (void)oob_fill;
    memset(map, 0, sizeof *map);
    fake.encodes++;
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

/* The fake's entry points under the names the runtime looks up (a function pointer of any
 * type converts to another and back; the lookup hands it out as POSIX's dlsym does). */
typedef void (*AnyFunction)(void);
#define ENTRY(name, function)                                                                      \
    {                                                                                              \
        name, (AnyFunction)function                                                                \
    }
static const struct {
    const char *name;
    AnyFunction function;
} fake_entries[] = {
    ENTRY("cuDriverGetVersion", fake_cuDriverGetVersion),
    ENTRY("cuInit", fake_cuInit),
    ENTRY("cuGetErrorName", fake_cuGetErrorName),
    ENTRY("cuGetErrorString", fake_cuGetErrorString),
    ENTRY("cuDeviceGet", fake_cuDeviceGet),
    ENTRY("cuDeviceGetName", fake_cuDeviceGetName),
    ENTRY("cuDeviceGetAttribute", fake_cuDeviceGetAttribute),
    ENTRY("cuDevicePrimaryCtxRetain", fake_cuDevicePrimaryCtxRetain),
    ENTRY("cuDevicePrimaryCtxRelease_v2", fake_cuDevicePrimaryCtxRelease),
    ENTRY("cuCtxSetCurrent", fake_cuCtxSetCurrent),
    ENTRY("cuCtxSynchronize", fake_cuCtxSynchronize),
    ENTRY("cuMemGetInfo_v2", fake_cuMemGetInfo),
    ENTRY("cuMemAlloc_v2", fake_cuMemAlloc),
    ENTRY("cuMemFree_v2", fake_cuMemFree),
    ENTRY("cuMemcpyHtoD_v2", fake_cuMemcpyHtoD),
    ENTRY("cuMemcpyDtoH_v2", fake_cuMemcpyDtoH),
    ENTRY("cuMemsetD8_v2", fake_cuMemsetD8),
    ENTRY("cuModuleLoadDataEx", fake_cuModuleLoadDataEx),
    ENTRY("cuModuleUnload", fake_cuModuleUnload),
    ENTRY("cuModuleGetFunction", fake_cuModuleGetFunction),
    ENTRY("cuFuncGetAttribute", fake_cuFuncGetAttribute),
    ENTRY("cuFuncSetAttribute", fake_cuFuncSetAttribute),
    ENTRY("cuLaunchKernel", fake_cuLaunchKernel),
    ENTRY("cuLaunchKernelEx", fake_cuLaunchKernelEx),
    ENTRY("cuTensorMapEncodeTiled", fake_cuTensorMapEncodeTiled),
    ENTRY("cuTensorMapEncodeIm2col", fake_cuTensorMapEncodeIm2col),
    ENTRY("cuEventCreate", fake_cuEventCreate),
    ENTRY("cuEventDestroy_v2", fake_cuEventDestroy),
    ENTRY("cuEventRecord", fake_cuEventRecord),
    ENTRY("cuEventSynchronize", fake_cuEventSynchronize),
    ENTRY("cuEventElapsedTime_v2", fake_cuEventElapsedTime),
};

static void *fake_lookup(void *handle, const char *name)
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

/* ---- the device on it --------------------------------------------------------------------- */

static tcc_context *ctx;
static tcc_device *device;

static void open_fake(void)
{
    ck_assert_msg(tci_device_open_with(ctx, 0, fake_lookup, NULL, &device) == TCC_OK, "%s",
                  tcc_last_error(ctx));
}

static void setup(void)
{
    fake_reset();
    ctx = test_context();
    open_fake();
}

/* Closes the device: everything the runtime took from the driver has been given back. */
static void close_fake(void)
{
    tcc_device_close(device);
    device = NULL;
    ck_assert_int_eq(fake.contexts, 0);
    ck_assert_int_eq(fake.buffers, 0);
    ck_assert_int_eq(fake.modules, 0);
    ck_assert_int_eq(fake.events, 0);
}

static void teardown(void)
{
    close_fake();
    tcc_context_destroy(ctx);
}

/* Reopens the device after the test changed the fake (its arch, its driver). */
static void reopen_fake(void)
{
    close_fake();
    open_fake();
}

static const char sm70_ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
                               ".visible .entry tcc_fake()\n{\n    ret;\n}\n";

/* A kernel of one launch, grid 4, block 64, no parameters: each test bends one field. */
static tcc_kernel plain_kernel(void)
{
    return (tcc_kernel){.ptx = (char *)sm70_ptx,
                        .nlaunch = 1,
                        .launches = {{.name = (char *)"tcc_fake",
                                      .grid = {4, 1, 1},
                                      .block = {64, 1, 1},
                                      .cluster = {1, 1, 1}}}};
}

/* The kernel must be refused at load with `status` and a one-line error containing `part`,
 * before the driver was asked to launch anything, and nothing it loaded may stay loaded. */
static void assert_refused(const tcc_kernel *kernel, tcc_status status, const char *part)
{
    int launches = fake.launches + fake.cluster_launches;
    tcc_loaded_kernel *loaded = (tcc_loaded_kernel *)&loaded;
    ck_assert_int_eq(tcc_kernel_load(device, kernel, &loaded), status);
    ck_assert_ptr_null(loaded);
    assert_contains(tcc_last_error(ctx), part);
    assert_one_line(ctx);
    ck_assert_int_eq(fake.modules, 0);
    ck_assert_int_eq(fake.buffers, 0);
    ck_assert_int_eq(fake.launches + fake.cluster_launches, launches);
}

/* The device still loads and runs the plain kernel (and times it). */
static void assert_still_runs(void)
{
    tcc_kernel kernel = plain_kernel();
    tcc_loaded_kernel *loaded = NULL;
    ck_assert_msg(tcc_kernel_load(device, &kernel, &loaded) == TCC_OK, "%s", tcc_last_error(ctx));
    int launches = fake.launches;
    ck_assert_msg(tcc_kernel_launch(loaded, 0, NULL) == TCC_OK, "%s", tcc_last_error(ctx));
    double ms = 0.0;
    ck_assert_msg(tcc_kernel_time(loaded, 0, NULL, 1, 3, &ms) == TCC_OK, "%s", tcc_last_error(ctx));
    ck_assert(ms == 0.5);
    ck_assert_int_eq(fake.launches, launches + 5);
    tcc_loaded_kernel_destroy(loaded);
    ck_assert_int_eq(fake.modules, 0);
    ck_assert_int_eq(fake.events, 0);
}

START_TEST(test_fake_device)
{
    ck_assert_str_eq(tcc_device_name(device), "Fake GPU");
    ck_assert_int_eq(tcc_device_arch(device), 90);
    ck_assert_int_eq(tcc_device_multiprocessors(device), 132);
    ck_assert_int_eq(tcc_device_driver_version(device), 12040);
    ck_assert_int_eq(tcc_device_driver_version(NULL), 0);
    ck_assert_int_eq(fake.contexts, 1);
    assert_still_runs();
    /* A device the driver does not have: nothing is retained. */
    tcc_device *other = (tcc_device *)&other;
    ck_assert_int_eq(tci_device_open_with(ctx, 3, fake_lookup, NULL, &other), TCC_ERROR_CUDA);
    ck_assert_ptr_null(other);
    assert_contains(tcc_last_error(ctx), "cuDeviceGet failed for device 3: "
                                         "CUDA_ERROR_INVALID_DEVICE");
    ck_assert_int_eq(fake.contexts, 1);
}
END_TEST

/* A required entry point missing: the device does not open, naming it and the driver. */
START_TEST(test_missing_required_entry_point)
{
    close_fake();
    fake.version = 11040;
    fake.missing[0] = "cuMemAlloc_v2";
    tcc_device *other = (tcc_device *)&other;
    ck_assert_int_eq(tci_device_open_with(ctx, 0, fake_lookup, NULL, &other), TCC_ERROR_CUDA);
    ck_assert_ptr_null(other);
    assert_contains(tcc_last_error(ctx),
                    "libcuda.so.1 has no symbol cuMemAlloc_v2: the NVIDIA driver (CUDA 11.4) is "
                    "too old");
    assert_one_line(ctx);
    ck_assert_int_eq(fake.contexts, 0);
    fake.missing[0] = NULL;
    open_fake();
}
END_TEST

/* A kernel whose launch `index` reads a tensor map of `mode` from parameter 0. */
static tcc_kernel tensor_map_kernel(tcc_tensor_map_mode mode)
{
    tcc_kernel kernel = plain_kernel();
    kernel.nparam = 1;
    KernelLaunch *l = &kernel.launches[0];
    l->ntensor_map = 1;
    l->tensor_maps[0] = (tcc_tensor_map_encoding){
        .mode = mode,
        .param = 0,
        .type = TCC_FLOAT16,
        .rank = 2,
        .dims = {64, 64},
        .strides = {2, 128},
        .box = {64, 64},
        .element_strides = {1, 1},
        .swizzle_bytes = 128,
    };
    return kernel;
}

/* A driver before CUDA 12.0 has neither the tensor-map encoders nor cuLaunchKernelEx: the
 * device opens, runs kernels that need none of them, and refuses those that do at load,
 * naming the entry point and the driver's version. */
START_TEST(test_old_driver_without_optional_entry_points)
{
    fake.version = 11080;
    fake.missing[0] = "cuLaunchKernelEx";
    fake.missing[1] = "cuTensorMapEncodeTiled";
    fake.missing[2] = "cuTensorMapEncodeIm2col";
    reopen_fake();
    assert_still_runs();
    int loads = fake.loads;

    tcc_kernel tiled = tensor_map_kernel(TCC_TENSOR_MAP_TILED);
    assert_refused(&tiled, TCC_ERROR_CUDA,
                   "kernel 'tcc_fake' needs the driver entry point cuTensorMapEncodeTiled (for its "
                   "tensor maps), which the NVIDIA driver (CUDA 11.8) lacks: it needs a driver "
                   "for CUDA 12.0 or newer");
    tcc_kernel im2col = tensor_map_kernel(TCC_TENSOR_MAP_IM2COL);
    assert_refused(&im2col, TCC_ERROR_CUDA, "needs the driver entry point cuTensorMapEncodeIm2col");
    tcc_kernel clustered = plain_kernel();
    clustered.launches[0].cluster[0] = 2;
    assert_refused(&clustered, TCC_ERROR_CUDA,
                   "kernel 'tcc_fake' needs the driver entry point cuLaunchKernelEx (for its "
                   "thread-block clusters), which the NVIDIA driver (CUDA 11.8) lacks");
    /* Refused before the module was loaded. */
    ck_assert_int_eq(fake.loads, loads);
    assert_still_runs();
}
END_TEST

/* With the entry points there, the same kernels load and launch through them. */
START_TEST(test_optional_entry_points_used)
{
    tcc_device_buffer *buffer = NULL;
    ck_assert_int_eq(tcc_device_buffer_alloc(device, 64 * 64 * 2, &buffer), TCC_OK);
    tcc_kernel kernels[] = {tensor_map_kernel(TCC_TENSOR_MAP_TILED),
                            tensor_map_kernel(TCC_TENSOR_MAP_IM2COL), plain_kernel()};
    kernels[2].launches[0].cluster[0] = 2;
    for (int i = 0; i < 3; i++) {
        tcc_loaded_kernel *loaded = NULL;
        ck_assert_msg(tcc_kernel_load(device, &kernels[i], &loaded) == TCC_OK, "%s",
                      tcc_last_error(ctx));
        ck_assert_msg(tcc_kernel_launch(loaded, i < 2 ? 1 : 0, &buffer) == TCC_OK, "%s",
                      tcc_last_error(ctx));
        tcc_loaded_kernel_destroy(loaded);
    }
    ck_assert_int_eq(fake.encodes, 2);
    ck_assert_int_eq(fake.cluster_launches, 1);
    tcc_device_buffer_free(buffer);
}
END_TEST

/* Device memory exhausted: the error says what was asked and what is free; nothing of a
 * kernel whose workspace did not fit stays loaded; smaller requests then succeed. */
START_TEST(test_out_of_device_memory)
{
    fake.free_bytes = (size_t)1 << 30;
    tcc_device_buffer *buffer = (tcc_device_buffer *)&buffer;
    ck_assert_int_eq(tcc_device_buffer_alloc(device, (size_t)2 << 30, &buffer), TCC_ERROR_CUDA);
    ck_assert_ptr_null(buffer);
    assert_contains(tcc_last_error(ctx),
                    "cuMemAlloc failed for 2147483648 bytes: CUDA_ERROR_OUT_OF_MEMORY (the fake "
                    "driver's description); Fake GPU has 1073741824 bytes free of 85899345920 "
                    "(1.00 of 80.00 GiB)");
    assert_one_line(ctx);

    tcc_kernel split = plain_kernel();
    split.nworkspace = 2;
    split.workspace_bytes[0] = 1024;
    split.workspace_bytes[1] = (int64_t)3 << 30;
    assert_refused(&split, TCC_ERROR_CUDA, "cuMemAlloc failed for 3221225472 bytes");

    ck_assert_int_eq(tcc_device_buffer_alloc(device, 1024, &buffer), TCC_OK);
    tcc_device_buffer_free(buffer);
    assert_still_runs();
}
END_TEST

/* Every launch the device would refuse is refused at load, naming the limit and the value;
 * the device then runs the next kernel. */
START_TEST(test_launch_limits)
{
    tcc_kernel k = plain_kernel();
    k.launches[0].block[0] = 2048;
    assert_refused(&k, TCC_ERROR_SCHEDULE,
                   "kernel 'tcc_fake' cannot launch on Fake GPU: its block is 2048x1x1 threads, "
                   "and the device allows 1024 along x (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)");
    k = plain_kernel();
    k.launches[0].block[0] = 1;
    k.launches[0].block[2] = 128;
    assert_refused(&k, TCC_ERROR_SCHEDULE,
                   "allows 64 along z (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)");
    k = plain_kernel();
    k.launches[0].block[0] = 32;
    k.launches[0].block[1] = 64;
    assert_refused(&k, TCC_ERROR_SCHEDULE,
                   "its block of 2048 threads exceeds the device's 1024 "
                   "(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)");
    assert_still_runs();

    /* Too many registers for the block: the function takes at most 512 threads. */
    fake.function_registers = 128;
    fake.function_max_threads = 512;
    k = plain_kernel();
    k.launches[0].block[0] = 1024;
    assert_refused(&k, TCC_ERROR_SCHEDULE,
                   "its block of 1024 threads at 128 registers a thread needs 131072 registers, "
                   "and the device has 65536 a block (CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK; "
                   "at most 512 threads of this kernel fit)");
    /* A .maxntid below the block. */
    fake.function_registers = 32;
    fake.function_max_threads = 128;
    k.launches[0].block[0] = 256;
    assert_refused(&k, TCC_ERROR_SCHEDULE,
                   "its block of 256 threads exceeds the 128 the compiled kernel takes "
                   "(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, from its .maxntid; 32 registers a "
                   "thread)");
    fake.function_max_threads = 1024;

    k = plain_kernel();
    k.launches[0].grid[1] = 70000;
    assert_refused(&k, TCC_ERROR_SCHEDULE,
                   "its grid is 4x70000x1 blocks, and the device allows 65535 along y "
                   "(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)");
    k = plain_kernel();
    k.launches[0].dynamic_shared_bytes = 232000;
    fake.function_static_shared = 1024;
    assert_refused(&k, TCC_ERROR_SCHEDULE,
                   "it needs 233024 bytes of shared memory a block (1024 static, 232000 dynamic), "
                   "and the device allows 232448 "
                   "(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)");
    fake.function_static_shared = 0;
    tcc_loaded_kernel *loaded = NULL;
    ck_assert_msg(tcc_kernel_load(device, &k, &loaded) == TCC_OK, "%s", tcc_last_error(ctx));
    ck_assert_uint_eq(fake.dynamic_shared, 232000);
    tcc_loaded_kernel_destroy(loaded);

    k = plain_kernel();
    k.launches[0].grid[0] = 3;
    k.launches[0].cluster[0] = 2;
    assert_refused(&k, TCC_ERROR_INVALID_ARGUMENT,
                   "kernel 'tcc_fake': its grid of 3x1x1 blocks is not a whole number of its "
                   "2x1x1 clusters along x");
    k.launches[0].grid[0] = 32;
    k.launches[0].cluster[0] = 16;
    assert_refused(&k, TCC_ERROR_SCHEDULE,
                   "its clusters of 16 blocks exceed the portable cluster size, 8");
    fake.arch = 80;
    reopen_fake();
    k.launches[0].cluster[0] = 2;
    assert_refused(&k, TCC_ERROR_SCHEDULE,
                   "kernel 'tcc_fake' cannot launch on Fake GPU: it runs in clusters of 2x1x1 "
                   "blocks, which need compute capability 9.0 or newer, and the device is 8.0");
    assert_still_runs();
}
END_TEST

/* PTX newer than the driver: the kernel's PTX ISA and the driver's CUDA version and PTX ISA,
 * whether the driver says UNSUPPORTED_PTX_VERSION or (older ones) INVALID_PTX with ptxas's
 * line. */
START_TEST(test_ptx_newer_than_driver)
{
    tcc_kernel k = plain_kernel();
    k.ptx = (char *)"//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.7\n.target sm_90a\n"
                    ".address_size 64\n";
    fake.load_result = CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    assert_refused(&k, TCC_ERROR_CUDA,
                   "kernel 'tcc_fake' is PTX ISA 8.7, and the NVIDIA driver (CUDA 12.4) loads PTX "
                   "ISA up to 8.4: update the driver (cuModuleLoadDataEx failed: "
                   "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (the fake driver's description))");
    fake.load_result = FAKE_INVALID_PTX;
    fake.load_log = "ptxas application ptx input, line 5; fatal   : Unsupported .version 8.7; "
                    "current version is '8.4'\n";
    assert_refused(&k, TCC_ERROR_CUDA,
                   "kernel 'tcc_fake' is PTX ISA 8.7, and the NVIDIA driver (CUDA 12.4) loads PTX "
                   "ISA up to 8.4: update the driver");
    /* Other rejections keep the JIT's log. */
    fake.load_log = "ptxas application ptx input, line 9; error   : Unknown symbol 'x'\n";
    assert_refused(&k, TCC_ERROR_CUDA,
                   "cuModuleLoadDataEx failed for kernel 'tcc_fake': CUDA_ERROR_INVALID_PTX (the "
                   "fake driver's description): ptxas application ptx input, line 9; error   : "
                   "Unknown symbol 'x'");
    /* A driver newer than the table still names the kernel's version. */
    fake.load_result = CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    fake.version = 99000;
    reopen_fake();
    assert_refused(&k, TCC_ERROR_CUDA,
                   "is PTX ISA 8.7, newer than the NVIDIA driver (CUDA 99.0) "
                   "loads");
    fake.load_result = CUDA_SUCCESS;
    assert_still_runs();
}
END_TEST

/* PTX for an arch the device cannot run is refused before the driver sees it. */
START_TEST(test_ptx_for_another_arch)
{
    fake.arch = 80;
    reopen_fake();
    int loads = fake.loads;
    tcc_kernel k = plain_kernel();
    k.ptx = (char *)".version 8.0\n.target sm_90a\n.address_size 64\n";
    assert_refused(&k, TCC_ERROR_INVALID_ARGUMENT,
                   "kernel 'tcc_fake' is built for sm_90a, which runs on compute capability 9.0 "
                   "only, and Fake GPU is 8.0: build it for sm_80");
    k.ptx = (char *)".version 7.8\n  .target sm_86, debug\n";
    assert_refused(&k, TCC_ERROR_INVALID_ARGUMENT,
                   "is built for sm_86, which runs on compute capability 8.6 or newer, and Fake "
                   "GPU is 8.0");
    ck_assert_int_eq(fake.loads, loads);
    /* sm_90a on 9.0 and sm_80 on 9.0 load; sm_90a does not on 10.0. */
    fake.arch = 90;
    reopen_fake();
    k.ptx = (char *)".version 8.0\n.target sm_90a\n";
    tcc_loaded_kernel *loaded = NULL;
    ck_assert_int_eq(tcc_kernel_load(device, &k, &loaded), TCC_OK);
    tcc_loaded_kernel_destroy(loaded);
    fake.arch = 100;
    reopen_fake();
    assert_refused(&k, TCC_ERROR_INVALID_ARGUMENT,
                   "runs on compute capability 9.0 only, and "
                   "Fake GPU is 10.0");
    assert_still_runs();
}
END_TEST

/* A launch the driver refuses anyway (what no check here foresees): its error, and the next
 * launch of the same loaded kernel runs; timing leaves no event behind. */
START_TEST(test_launch_refused_by_driver)
{
    tcc_kernel k = plain_kernel();
    tcc_loaded_kernel *loaded = NULL;
    ck_assert_int_eq(tcc_kernel_load(device, &k, &loaded), TCC_OK);
    fake.launch_result = FAKE_LAUNCH_OUT_OF_RESOURCES;
    ck_assert_int_eq(tcc_kernel_launch(loaded, 0, NULL), TCC_ERROR_CUDA);
    assert_contains(tcc_last_error(ctx),
                    "cuLaunchKernel failed for kernel 'tcc_fake' (grid "
                    "4x1x1, block 64x1x1): CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
    assert_one_line(ctx);
    double ms = -1.0;
    ck_assert_int_eq(tcc_kernel_time(loaded, 0, NULL, 0, 4, &ms), TCC_ERROR_CUDA);
    ck_assert(ms == -1.0);
    ck_assert_int_eq(fake.events, 0);
    fake.launch_result = CUDA_SUCCESS;
    ck_assert_int_eq(tcc_kernel_launch(loaded, 0, NULL), TCC_OK);
    ck_assert_int_eq(tcc_kernel_time(loaded, 0, NULL, 0, 4, &ms), TCC_OK);
    tcc_loaded_kernel_destroy(loaded);
}
END_TEST

static Suite *runtime_fake_suite(void)
{
    Suite *suite = suite_create("runtime_fake");
    TCase *driver = test_case(suite, "fake_driver", setup, teardown);
    tcase_add_test(driver, test_fake_device);
    tcase_add_test(driver, test_missing_required_entry_point);
    tcase_add_test(driver, test_old_driver_without_optional_entry_points);
    tcase_add_test(driver, test_optional_entry_points_used);
    tcase_add_test(driver, test_out_of_device_memory);
    tcase_add_test(driver, test_launch_limits);
    tcase_add_test(driver, test_ptx_newer_than_driver);
    tcase_add_test(driver, test_ptx_for_another_arch);
    tcase_add_test(driver, test_launch_refused_by_driver);
    return suite;
}

TEST_MAIN(runtime_fake_suite)
