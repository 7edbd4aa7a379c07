/*
 * The runtime's failure paths on a fake CUDA driver (fake_driver.c: entry points handed to
 * tci_device_open_with in place of libcuda.so.1's), so that what only a GPU (or an old
 * driver, or an exhausted one) would provoke runs on every machine, under the sanitizers
 * too: a driver without the optional entry points, device memory exhausted, launches the
 * device would refuse (block, threads for the registers, grid, shared memory, clusters), PTX
 * newer than the driver or for another arch, a launch the driver refuses. Each is one line
 * naming the limit and the value; the fake counts what is live (contexts, buffers, modules,
 * events), so a leak on a failure path fails the test; and the device then runs the next
 * kernel.
 */
#include "driver/kernel.h"
#include "fake_driver.h"
#include "runtime/internal.h"
#include "support.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
START_TEST(test_device_count)
{
    int count = -1;
    ck_assert_int_eq(tci_device_count_with(ctx, fake_lookup, NULL, &count), TCC_OK);
    ck_assert_int_eq(count, 1);
    /* A driver whose count fails says so, and counts nothing. */
    fake.missing[0] = "cuDeviceGetCount";
    count = -1;
    ck_assert_int_eq(tci_device_count_with(ctx, fake_lookup, NULL, &count), TCC_ERROR_CUDA);
    ck_assert_int_eq(count, 0);
    assert_contains(tcc_last_error(ctx), "cuDeviceGetCount");
    ck_assert_int_eq(tcc_device_count(ctx, NULL), TCC_ERROR_INVALID_ARGUMENT);
}
END_TEST

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

/* A persistent grid's blocks in clusters: the clusters the driver counts for a probe that
 * takes a multiprocessor's shared memory (the fake's GPCs give an H100 SXM's 132, 120 and 120
 * blocks), times their size, never more than the multiprocessors; refused, `blocks` left as
 * it was, for a bad size, where none fits, without the entry point, before sm_90 or when the
 * probe does not load. The probe's module is unloaded (close_fake). */
START_TEST(test_persistent_blocks)
{
    static const int sizes[] = {1, 2, 4, 8}, expected[] = {132, 132, 120, 120};
    for (int i = 0; i < 4; i++) {
        int blocks = 0;
        ck_assert_msg(tcc_device_persistent_blocks(device, sizes[i], &blocks) == TCC_OK, "%s",
                      tcc_last_error(ctx));
        ck_assert_int_eq(blocks, expected[i]);
    }
    ck_assert_uint_eq(fake.occupancy_shared, 232448);
    ck_assert_uint_eq(fake.dynamic_shared, 232448);
    int blocks = -1;
    ck_assert_int_eq(tcc_device_persistent_blocks(device, 9, &blocks), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "a cluster's blocks must be 1 to 8, not 9");
    ck_assert_int_eq(tcc_device_persistent_blocks(device, 0, &blocks), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_device_persistent_blocks(device, 2, NULL), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_device_persistent_blocks(NULL, 2, &blocks), TCC_ERROR_INVALID_ARGUMENT);

    fake.load_result = FAKE_INVALID_PTX;
    ck_assert_int_eq(tcc_device_persistent_blocks(device, 2, &blocks), TCC_ERROR_CUDA);
    assert_contains(tcc_last_error(ctx), "cuModuleLoadDataEx failed (the cluster probe)");
    fake.load_result = CUDA_SUCCESS;

    /* GPCs of 3 multiprocessors hold no cluster of 4; more clusters than multiprocessors are
     * held to them. */
    static const int small[8] = {3, 3, 3};
    memcpy(fake.gpc_multiprocessors, small, sizeof small);
    ck_assert_int_eq(tcc_device_persistent_blocks(device, 4, &blocks), TCC_ERROR_UNSUPPORTED);
    assert_contains(tcc_last_error(ctx), "no cluster of 4 blocks");
    ck_assert_int_eq(blocks, -1);
    static const int many[8] = {100, 100};
    memcpy(fake.gpc_multiprocessors, many, sizeof many);
    ck_assert_int_eq(tcc_device_persistent_blocks(device, 2, &blocks), TCC_OK);
    ck_assert_int_eq(blocks, 132);

    fake.missing[0] = "cuOccupancyMaxActiveClusters";
    reopen_fake();
    ck_assert_int_eq(tcc_device_persistent_blocks(device, 2, &blocks), TCC_ERROR_UNSUPPORTED);
    assert_contains(tcc_last_error(ctx), "lacks cuOccupancyMaxActiveClusters");
    ck_assert_int_eq(tcc_device_persistent_blocks(device, 1, &blocks), TCC_OK);
    ck_assert_int_eq(blocks, 132);

    fake.missing[0] = NULL;
    fake.arch = 80;
    reopen_fake();
    ck_assert_int_eq(tcc_device_persistent_blocks(device, 2, &blocks), TCC_ERROR_UNSUPPORTED);
    assert_contains(tcc_last_error(ctx), "clusters of blocks need compute capability 9.0");
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

/* A kernel's workspaces are filled with 0xFF bytes (NaN, -1) when it loads, so that a kernel
 * reading scratch it never wrote is wrong every time, not only on memory that held leftovers. */
START_TEST(test_workspaces_poisoned_at_load)
{
    tcc_kernel k = plain_kernel();
    k.nworkspace = 2;
    k.workspace_bytes[0] = 1024;
    k.workspace_bytes[1] = 4096;
    int memsets = fake.memsets;
    tcc_loaded_kernel *loaded = NULL;
    ck_assert_msg(tcc_kernel_load(device, &k, &loaded) == TCC_OK, "%s", tcc_last_error(ctx));
    ck_assert_int_eq(fake.memsets, memsets + 2);
    ck_assert_int_eq(fake.memset_value, 0xFF);
    ck_assert_uint_eq(fake.memset_bytes, 4096);
    tcc_loaded_kernel_destroy(loaded);
    ck_assert_int_eq(fake.buffers, 0);
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
    tcase_add_test(driver, test_device_count);
    tcase_add_test(driver, test_missing_required_entry_point);
    tcase_add_test(driver, test_old_driver_without_optional_entry_points);
    tcase_add_test(driver, test_optional_entry_points_used);
    tcase_add_test(driver, test_persistent_blocks);
    tcase_add_test(driver, test_out_of_device_memory);
    tcase_add_test(driver, test_launch_limits);
    tcase_add_test(driver, test_ptx_newer_than_driver);
    tcase_add_test(driver, test_ptx_for_another_arch);
    tcase_add_test(driver, test_launch_refused_by_driver);
    tcase_add_test(driver, test_workspaces_poisoned_at_load);
    return suite;
}

TEST_MAIN(runtime_fake_suite)
