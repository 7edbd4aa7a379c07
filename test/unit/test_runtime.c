/*
 * The CUDA runtime. Without an NVIDIA driver (CI): opening a device fails cleanly, with a
 * one-line TCC_ERROR_CUDA naming libcuda.so.1, and nothing leaks (checked under ASan). With
 * a driver: buffers, kernel loading (hand-written PTX), launches, timing and the errors of
 * each are exercised on device 0.
 */
#include "driver/kernel.h"
#include "runtime/internal.h"
#include "support.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>

/* ---- a stand-in for the code generator's kernels ---------------------------------------- */

/* A hand-made kernel: the runtime only needs its name, PTX and launch shape. */
/* out[i] = 2 * in[i] for i = blockIdx.x * blockDim.x + threadIdx.x. */
static const char double_ptx[] = ".version 7.0\n"
                                 ".target sm_70\n"
                                 ".address_size 64\n"
                                 "\n"
                                 ".visible .entry tcc_test_double(\n"
                                 "    .param .u64 in_param,\n"
                                 "    .param .u64 out_param\n"
                                 ")\n"
                                 "{\n"
                                 "    .reg .b32 %r<5>;\n"
                                 "    .reg .f32 %f<3>;\n"
                                 "    .reg .b64 %rd<8>;\n"
                                 "    ld.param.u64 %rd1, [in_param];\n"
                                 "    ld.param.u64 %rd2, [out_param];\n"
                                 "    cvta.to.global.u64 %rd3, %rd1;\n"
                                 "    cvta.to.global.u64 %rd4, %rd2;\n"
                                 "    mov.u32 %r1, %ctaid.x;\n"
                                 "    mov.u32 %r2, %ntid.x;\n"
                                 "    mov.u32 %r3, %tid.x;\n"
                                 "    mad.lo.s32 %r4, %r1, %r2, %r3;\n"
                                 "    mul.wide.s32 %rd5, %r4, 4;\n"
                                 "    add.s64 %rd6, %rd3, %rd5;\n"
                                 "    ld.global.f32 %f1, [%rd6];\n"
                                 "    add.f32 %f2, %f1, %f1;\n"
                                 "    add.s64 %rd7, %rd4, %rd5;\n"
                                 "    st.global.f32 [%rd7], %f2;\n"
                                 "    ret;\n"
                                 "}\n";

/* Two entry points run in order with (in, out, workspace): the first writes in + 1 into the
 * workspace, the second twice that into out. */
#define TWO_STEP_ENTRY(name, load_from, op, store_to)                                              \
    ".visible .entry " name "(.param .u64 in_param, .param .u64 out_param, "                       \
    ".param .u64 ws_param)\n"                                                                      \
    "{\n"                                                                                          \
    "    .reg .b32 %r<2>;\n"                                                                       \
    "    .reg .f32 %f<3>;\n"                                                                       \
    "    .reg .b64 %rd<6>;\n"                                                                      \
    "    ld.param.u64 %rd1, [" load_from "];\n"                                                    \
    "    ld.param.u64 %rd2, [" store_to "];\n"                                                     \
    "    cvta.to.global.u64 %rd1, %rd1;\n"                                                         \
    "    cvta.to.global.u64 %rd2, %rd2;\n"                                                         \
    "    mov.u32 %r1, %tid.x;\n"                                                                   \
    "    mul.wide.u32 %rd3, %r1, 4;\n"                                                             \
    "    add.s64 %rd4, %rd1, %rd3;\n"                                                              \
    "    add.s64 %rd5, %rd2, %rd3;\n"                                                              \
    "    ld.global.f32 %f1, [%rd4];\n"                                                             \
    "    " op "\n"                                                                                 \
    "    st.global.f32 [%rd5], %f2;\n"                                                             \
    "    ret;\n"                                                                                   \
    "}\n"

static const char two_step_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n\n" TWO_STEP_ENTRY(
        "tcc_test_stage", "in_param", "add.f32 %f2, %f1, 0f3F800000;", "ws_param")
        TWO_STEP_ENTRY("tcc_test_finish", "ws_param", "add.f32 %f2, %f1, %f1;", "out_param");

/* Stores through a null pointer: the launch succeeds, the run fails. */
static const char fault_ptx[] = ".version 7.0\n"
                                ".target sm_70\n"
                                ".address_size 64\n"
                                "\n"
                                ".visible .entry tcc_test_fault()\n"
                                "{\n"
                                "    .reg .b32 %r<2>;\n"
                                "    .reg .b64 %rd<2>;\n"
                                "    mov.u32 %r1, 7;\n"
                                "    mov.u64 %rd1, 0;\n"
                                "    st.global.u32 [%rd1], %r1;\n"
                                "    ret;\n"
                                "}\n";

enum { COUNT = 256 };

static const tcc_kernel double_kernel = {
    .ptx = (char *)double_ptx,
    .nlaunch = 1,
    .launches = {{.name = (char *)"tcc_test_double", .grid = {4, 1, 1}, .block = {64, 1, 1}}}};

/* ---- without a driver --------------------------------------------------------------------- */

static bool driver_present(void)
{
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library)
        dlclose(library);
    return library != NULL;
}

START_TEST(test_open_without_driver)
{
    if (driver_present())
        return; /* covered by the device tests below */
    tcc_context *ctx = test_context();
    /* Repeated, so a leak on the failure path would stand out under LeakSanitizer. */
    for (int i = 0; i < 50; i++) {
        tcc_device *device = (tcc_device *)&device; /* must be reset to NULL */
        ck_assert_int_eq(tcc_device_open(ctx, 0, &device), TCC_ERROR_CUDA);
        ck_assert_ptr_null(device);
        assert_contains(tcc_last_error(ctx), "cannot load libcuda.so.1");
        assert_contains(tcc_last_error(ctx), "no NVIDIA driver");
        assert_one_line(ctx);
    }
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_null_handles)
{
    tcc_context *ctx = test_context();
    ck_assert_int_eq(tcc_device_open(ctx, 0, NULL), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "out is NULL");
    tcc_device_close(NULL);
    tcc_device_buffer_free(NULL);
    tcc_loaded_kernel_destroy(NULL);
    ck_assert_str_eq(tcc_device_name(NULL), "");
    ck_assert_int_eq(tcc_device_arch(NULL), 0);
    ck_assert_int_eq(tcc_device_multiprocessors(NULL), 0);
    char host[4];
    ck_assert_int_eq(tcc_device_buffer_upload(NULL, host, 4), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_device_buffer_download(NULL, host, 4), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_device_buffer_fill_bytes(NULL, 0), TCC_ERROR_INVALID_ARGUMENT);
    tcc_device_buffer *buffer = NULL;
    ck_assert_int_eq(tcc_device_buffer_alloc(NULL, 4, &buffer), TCC_ERROR_INVALID_ARGUMENT);
    tcc_loaded_kernel *loaded = NULL;
    ck_assert_int_eq(tcc_kernel_load(NULL, &double_kernel, &loaded), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_kernel_launch(NULL, 0, NULL), TCC_ERROR_INVALID_ARGUMENT);
    double ms;
    ck_assert_int_eq(tcc_kernel_time(NULL, 0, NULL, 1, 1, &ms), TCC_ERROR_INVALID_ARGUMENT);
    tcc_context_destroy(ctx);
}
END_TEST

/* ---- with a driver (skipped without one) -------------------------------------------------- */

typedef struct Gpu {
    tcc_context *ctx;
    tcc_device *device;
} Gpu;

/* Device 0, opened by the device tests' fixture; without a driver its device stays NULL and
 * each test returns at once (it passes vacuously). */
static Gpu gpu;

/* Opens device 0, or returns false where there is no driver. */
static bool open_gpu(Gpu *g)
{
    if (!driver_present())
        return false;
    g->ctx = test_context();
    ck_assert_msg(tcc_device_open(g->ctx, 0, &g->device) == TCC_OK, "%s", tcc_last_error(g->ctx));
    return true;
}

static void close_gpu(Gpu *g)
{
    tcc_device_close(g->device);
    tcc_context_destroy(g->ctx);
    *g = (Gpu){NULL, NULL};
}

static void gpu_setup(void)
{
    open_gpu(&gpu);
}

static void gpu_teardown(void)
{
    if (gpu.ctx)
        close_gpu(&gpu);
}

static tcc_device_buffer *alloc_buffer(size_t bytes)
{
    tcc_device_buffer *buffer = NULL;
    ck_assert_msg(tcc_device_buffer_alloc(gpu.device, bytes, &buffer) == TCC_OK, "%s",
                  tcc_last_error(gpu.ctx));
    return buffer;
}

/* The double kernel's input and output: COUNT floats each. */
static void alloc_pair(tcc_device_buffer *buffers[2])
{
    buffers[0] = alloc_buffer(sizeof(float) * COUNT);
    buffers[1] = alloc_buffer(sizeof(float) * COUNT);
}

static void free_pair(tcc_device_buffer *buffers[2])
{
    tcc_device_buffer_free(buffers[0]);
    tcc_device_buffer_free(buffers[1]);
}

/* k loaded on the device; the load must succeed. */
static tcc_loaded_kernel *load(const tcc_kernel *k)
{
    tcc_loaded_kernel *loaded = NULL;
    ck_assert_msg(tcc_kernel_load(gpu.device, k, &loaded) == TCC_OK, "%s", tcc_last_error(gpu.ctx));
    return loaded;
}

START_TEST(test_device_info)
{
    if (!gpu.device)
        return;
    ck_assert_int_gt((int)strlen(tcc_device_name(gpu.device)), 0);
    ck_assert_int_ge(tcc_device_arch(gpu.device), 70);
    ck_assert_int_ge(tcc_device_multiprocessors(gpu.device), 1);
    close_gpu(&gpu);
    /* Opening again after a close works (the driver library is loaded afresh). */
    ck_assert(open_gpu(&gpu));
}
END_TEST

START_TEST(test_bad_ordinal)
{
    if (!gpu.device)
        return;
    tcc_device *other = NULL;
    ck_assert_int_eq(tcc_device_open(gpu.ctx, 9999, &other), TCC_ERROR_CUDA);
    ck_assert_ptr_null(other);
    assert_contains(tcc_last_error(gpu.ctx), "cuDeviceGet failed for device 9999: CUDA_ERROR_");
    assert_one_line(gpu.ctx);
}
END_TEST

START_TEST(test_buffers)
{
    if (!gpu.device)
        return;
    unsigned char up[100], down[100];
    for (int i = 0; i < 100; i++)
        up[i] = (unsigned char)i;
    tcc_device_buffer *buffer = alloc_buffer(sizeof up);
    ck_assert_int_eq(tcc_device_buffer_upload(buffer, up, sizeof up), TCC_OK);
    ck_assert_int_eq(tcc_device_buffer_download(buffer, down, sizeof down), TCC_OK);
    ck_assert_mem_eq(up, down, sizeof up);
    ck_assert_int_eq(tcc_device_buffer_fill_bytes(buffer, 0xab), TCC_OK);
    ck_assert_int_eq(tcc_device_buffer_download(buffer, down, sizeof down), TCC_OK);
    for (int i = 0; i < 100; i++)
        ck_assert_uint_eq(down[i], 0xab);

    ck_assert_int_eq(tcc_device_buffer_upload(buffer, up, 101), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(gpu.ctx), "101 bytes do not fit in a buffer of 100");
    ck_assert_int_eq(tcc_device_buffer_download(buffer, NULL, 10), TCC_ERROR_INVALID_ARGUMENT);
    tcc_device_buffer *empty = NULL;
    ck_assert_int_eq(tcc_device_buffer_alloc(gpu.device, 0, &empty), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(empty);
    /* More memory than any GPU has: the driver's error comes back. */
    ck_assert_int_eq(tcc_device_buffer_alloc(gpu.device, (size_t)1 << 50, &empty), TCC_ERROR_CUDA);
    assert_contains(tcc_last_error(gpu.ctx), "cuMemAlloc failed for 1125899906842624 bytes: "
                                             "CUDA_ERROR_OUT_OF_MEMORY");
    ck_assert_ptr_null(empty);
    tcc_device_buffer_free(buffer);
}
END_TEST

/* Allocates the (in, out) pair, uploads a ramp into in, poisons out, launches `loaded` on
 * them once and downloads out. */
static void run_on_ramp(tcc_loaded_kernel *loaded, tcc_device_buffer *buffers[2], float in[COUNT],
                        float out[COUNT])
{
    for (int i = 0; i < COUNT; i++)
        in[i] = (float)i - 100.0f;
    alloc_pair(buffers);
    ck_assert_int_eq(tcc_device_buffer_upload(buffers[0], in, sizeof(float) * COUNT), TCC_OK);
    ck_assert_int_eq(tcc_device_buffer_fill_bytes(buffers[1], 0xff), TCC_OK);
    ck_assert_msg(tcc_kernel_launch(loaded, 2, buffers) == TCC_OK, "%s", tcc_last_error(gpu.ctx));
    ck_assert_int_eq(tcc_device_buffer_download(buffers[1], out, sizeof(float) * COUNT), TCC_OK);
}

START_TEST(test_load_launch_and_time)
{
    if (!gpu.device)
        return;
    float in[COUNT], out[COUNT];
    tcc_device_buffer *buffers[2];
    tcc_loaded_kernel *loaded = load(&double_kernel);
    run_on_ramp(loaded, buffers, in, out);
    for (int i = 0; i < COUNT; i++)
        ck_assert(out[i] == 2 * in[i]);

    double ms = -1.0;
    ck_assert_msg(tcc_kernel_time(loaded, 2, buffers, 3, 10, &ms) == TCC_OK, "%s",
                  tcc_last_error(gpu.ctx));
    ck_assert(ms > 0.0 && ms < 1000.0);
    ck_assert_int_eq(tcc_kernel_time(loaded, 2, buffers, 0, 0, &ms), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_kernel_launch(loaded, 2, (tcc_device_buffer *[]){buffers[0], NULL}),
                     TCC_ERROR_INVALID_ARGUMENT);
    tcc_loaded_kernel_destroy(loaded);
    free_pair(buffers);
}
END_TEST

/* A kernel of two launches and a workspace, as split-K's: the launches run in order, the
 * workspace follows the caller's buffers, and the main launch is what the accessors say. */
START_TEST(test_launches_share_a_workspace)
{
    if (!gpu.device)
        return;
    tcc_kernel two = {
        .ptx = (char *)two_step_ptx,
        .nlaunch = 2,
        .main_launch = 1,
        .launches = {{.name = (char *)"tcc_test_stage", .grid = {1, 1, 1}, .block = {COUNT, 1, 1}},
                     {.name = (char *)"tcc_test_finish",
                      .grid = {1, 1, 1},
                      .block = {COUNT, 1, 1}}},
        .nparam = 2,
        .nworkspace = 1,
        .workspace_bytes = {sizeof(float) * COUNT}};
    ck_assert_str_eq(tcc_kernel_name(&two), "tcc_test_finish");
    ck_assert_int_eq(tcc_kernel_launch_count(&two), 2);
    ck_assert_ptr_null(tcc_kernel_launch_name(&two, 2));
    float in[COUNT], out[COUNT];
    tcc_device_buffer *buffers[2];
    tcc_loaded_kernel *loaded = load(&two);
    run_on_ramp(loaded, buffers, in, out);
    for (int i = 0; i < COUNT; i++)
        ck_assert(out[i] == 2 * (in[i] + 1));
    /* One buffer short would put the workspace in the output's place: refused. */
    ck_assert_int_eq(tcc_kernel_launch(loaded, 1, buffers), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(gpu.ctx), "takes 2 buffers (its workspaces follow them), not 1");
    tcc_loaded_kernel_destroy(loaded);
    free_pair(buffers);
}
END_TEST

START_TEST(test_rejected_module_reports_jit_log)
{
    if (!gpu.device)
        return;
    static const char bad_ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
                                  ".visible .entry broken()\n{\n    bogus.instruction;\n"
                                  "    ret;\n}\n";
    tcc_kernel broken = {
        .ptx = (char *)bad_ptx,
        .nlaunch = 1,
        .launches = {{.name = (char *)"broken", .grid = {1, 1, 1}, .block = {1, 1, 1}}}};
    tcc_loaded_kernel *loaded = (tcc_loaded_kernel *)&broken;
    ck_assert_int_eq(tcc_kernel_load(gpu.device, &broken, &loaded), TCC_ERROR_CUDA);
    ck_assert_ptr_null(loaded);
    assert_contains(tcc_last_error(gpu.ctx), "cuModuleLoadDataEx failed for kernel 'broken': "
                                             "CUDA_ERROR_INVALID_PTX");
    assert_contains(tcc_last_error(gpu.ctx), "bogus");
    assert_one_line(gpu.ctx);

    tcc_kernel misnamed = double_kernel;
    misnamed.launches[0].name = (char *)"not_in_module";
    ck_assert_int_eq(tcc_kernel_load(gpu.device, &misnamed, &loaded), TCC_ERROR_CUDA);
    assert_contains(tcc_last_error(gpu.ctx), "cuModuleGetFunction failed for kernel "
                                             "'not_in_module': CUDA_ERROR_NOT_FOUND");
    tcc_kernel no_ptx = double_kernel;
    no_ptx.ptx = (char *)"";
    ck_assert_int_eq(tcc_kernel_load(gpu.device, &no_ptx, &loaded), TCC_ERROR_INVALID_ARGUMENT);
    tcc_kernel zero_block = double_kernel;
    zero_block.launches[0].block[1] = 0;
    ck_assert_int_eq(tcc_kernel_load(gpu.device, &zero_block, &loaded), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(gpu.ctx), "block dimension 1 is 0");
}
END_TEST

/* A launch the device would refuse is refused at load, naming the limit and the value (the
 * fake driver's tests, test_runtime_fake.c, cover every limit); the device then runs the
 * next kernel. */
START_TEST(test_launch_errors)
{
    if (!gpu.device)
        return;
    tcc_kernel huge_block = double_kernel;
    huge_block.launches[0].block[0] = 4096; /* above every GPU's 1024 threads per block */
    tcc_loaded_kernel *loaded = (tcc_loaded_kernel *)&huge_block;
    ck_assert_int_eq(tcc_kernel_load(gpu.device, &huge_block, &loaded), TCC_ERROR_SCHEDULE);
    ck_assert_ptr_null(loaded);
    assert_contains(tcc_last_error(gpu.ctx), "kernel 'tcc_test_double' cannot launch on ");
    assert_contains(tcc_last_error(gpu.ctx), "its block is 4096x1x1 threads, and the device "
                                             "allows 1024 along x "
                                             "(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)");
    assert_one_line(gpu.ctx);
    float in[COUNT], out[COUNT];
    tcc_device_buffer *buffers[2];
    loaded = load(&double_kernel);
    run_on_ramp(loaded, buffers, in, out);
    for (int i = 0; i < COUNT; i++)
        ck_assert(out[i] == 2 * in[i]);
    tcc_loaded_kernel_destroy(loaded);
    free_pair(buffers);
}
END_TEST

/* A fault while running is reported by the synchronization after the launch. It leaves the
 * context unusable, so this test runs last (and, forked, alone). */
START_TEST(test_fault_is_reported)
{
    if (!gpu.device)
        return;
    tcc_kernel fault = {
        .ptx = (char *)fault_ptx,
        .nlaunch = 1,
        .launches = {{.name = (char *)"tcc_test_fault", .grid = {1, 1, 1}, .block = {1, 1, 1}}}};
    tcc_loaded_kernel *loaded = load(&fault);
    ck_assert_int_eq(tcc_kernel_launch(loaded, 0, NULL), TCC_ERROR_CUDA);
    assert_contains(tcc_last_error(gpu.ctx),
                    "cuCtxSynchronize failed after kernel 'tcc_test_fault': CUDA_ERROR_");
    assert_one_line(gpu.ctx);
    tcc_loaded_kernel_destroy(loaded);
}
END_TEST

/* A JIT log line that says the JIT undid a kernel's asynchrony is found; others are not. */
START_TEST(test_jit_log_refusal)
{
    char line[256];
    const char *injected =
        "ptxas info    : 0 bytes gmem\nptxas info    : (C7517) warpgroup.wait is "
        "injected in around line 411 by compiler\nptxas info    : Used 9 "
        "registers\n";
    ck_assert_ptr_nonnull(tci_jit_log_refusal(injected, line, sizeof line));
    ck_assert_str_eq(line, "ptxas info    : (C7517) warpgroup.wait is injected in around line "
                           "411 by compiler");
    ck_assert_ptr_nonnull(tci_jit_log_refusal("Potential Performance Loss: wgmma.mma_async "
                                              "instructions are serialized due to a call",
                                              line, sizeof line));
    ck_assert_ptr_null(tci_jit_log_refusal("ptxas info    : Used 184 registers, used 1 barriers\n",
                                           line, sizeof line));
    ck_assert_ptr_null(tci_jit_log_refusal("", line, sizeof line));
    ck_assert_ptr_null(tci_jit_log_refusal(NULL, line, sizeof line));
}
END_TEST

/* On sm_90a, a module whose wgmma accumulators are read before a wait (the JIT injects one)
 * is refused at load with the JIT's line. */
START_TEST(test_undone_asynchrony_is_refused)
{
    if (!gpu.device || tcc_device_arch(gpu.device) != 90)
        return;
    static const char ptx[] =
        ".version 8.0\n.target sm_90a\n.address_size 64\n"
        ".extern .shared .align 1024 .b8 tile[];\n"
        ".visible .entry unwaited(.param .u64 out)\n{\n"
        "    .reg .f32 %f<5>;\n    .reg .b64 %rd<4>;\n"
        "    mov.f32 %f1, 0f00000000;\n    mov.f32 %f2, 0f00000000;\n"
        "    mov.f32 %f3, 0f00000000;\n    mov.f32 %f4, 0f00000000;\n"
        "    mov.u64 %rd1, tile;\n    shr.u64 %rd1, %rd1, 4;\n"
        "    wgmma.fence.sync.aligned;\n"
        "    wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd1, "
        "1, 1, 1, 0, 0;\n"
        "    wgmma.commit_group.sync.aligned;\n"
        "    ld.param.u64 %rd2, [out];\n    cvta.to.global.u64 %rd3, %rd2;\n"
        "    st.global.f32 [%rd3], %f1;\n    ret;\n}\n";
    tcc_kernel unwaited = {
        .ptx = (char *)ptx,
        .nlaunch = 1,
        .launches = {{.name = (char *)"unwaited", .grid = {1, 1, 1}, .block = {128, 1, 1}}}};
    tcc_loaded_kernel *loaded = (tcc_loaded_kernel *)&unwaited;
    ck_assert_int_eq(tcc_kernel_load(gpu.device, &unwaited, &loaded), TCC_ERROR_UNSUPPORTED);
    ck_assert_ptr_null(loaded);
    assert_contains(tcc_last_error(gpu.ctx), "kernel 'unwaited': the JIT undid its asynchrony");
    assert_contains(tcc_last_error(gpu.ctx), "C7517");
    assert_one_line(gpu.ctx);
}
END_TEST

static Suite *runtime_suite(void)
{
    Suite *suite = suite_create("runtime");
    TCase *no_driver = test_case(suite, "no_driver", NULL, NULL);
    tcase_add_test(no_driver, test_open_without_driver);
    tcase_add_test(no_driver, test_null_handles);
    tcase_add_test(no_driver, test_jit_log_refusal);

    TCase *device = test_case(suite, "device", gpu_setup, gpu_teardown);
    tcase_set_timeout(device, 60);
    tcase_add_test(device, test_device_info);
    tcase_add_test(device, test_bad_ordinal);
    tcase_add_test(device, test_buffers);
    tcase_add_test(device, test_load_launch_and_time);
    tcase_add_test(device, test_launches_share_a_workspace);
    tcase_add_test(device, test_rejected_module_reports_jit_log);
    tcase_add_test(device, test_undone_asynchrony_is_refused);
    tcase_add_test(device, test_launch_errors);
    tcase_add_test(device, test_fault_is_reported);
    return suite;
}

TEST_MAIN(runtime_suite)
