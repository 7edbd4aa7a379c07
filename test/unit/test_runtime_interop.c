/*
 * Launching on the caller's memory and stream (tcc_kernel_launch_async), on the fake CUDA
 * driver (fake_driver.c): the addresses reach the launches (and the tensor maps) in order
 * with the workspaces after them, on the caller's stream, with no synchronization, in the
 * primary context, and whatever context was current before is current again; every refusal
 * (parameter count, a NULL or misaligned address, a stream of another context, workspaces)
 * names what is wrong in one line and launches nothing. Also tcc_status_string,
 * tcc_param_role_name and tcc_device_buffer_address, which need no device.
 */
#include "driver/kernel.h"
#include "fake_driver.h"
#include "runtime/internal.h"
#include "support.h"

#include <stdint.h>

/* ---- without a device ----------------------------------------------------------------------- */

START_TEST(test_status_strings)
{
    const struct {
        tcc_status status;
        const char *name;
    } names[] = {
        {TCC_OK, "TCC_OK"},
        {TCC_ERROR_INVALID_ARGUMENT, "TCC_ERROR_INVALID_ARGUMENT"},
        {TCC_ERROR_UNSUPPORTED, "TCC_ERROR_UNSUPPORTED"},
        {TCC_ERROR_SCHEDULE, "TCC_ERROR_SCHEDULE"},
        {TCC_ERROR_LLVM, "TCC_ERROR_LLVM"},
        {TCC_ERROR_CUDA, "TCC_ERROR_CUDA"},
        {TCC_ERROR_OUT_OF_MEMORY, "TCC_ERROR_OUT_OF_MEMORY"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ck_assert_str_eq(tcc_status_string(names[i].status), names[i].name);
    ck_assert_str_eq(tcc_status_string((tcc_status)(TCC_ERROR_OUT_OF_MEMORY + 1)),
                     "unknown tcc_status");
    ck_assert_str_eq(tcc_status_string((tcc_status)-1), "unknown tcc_status");

    ck_assert_str_eq(tcc_param_role_name(TCC_PARAM_INPUT), "input");
    ck_assert_str_eq(tcc_param_role_name(TCC_PARAM_OUTPUT), "output");
    ck_assert_str_eq(tcc_param_role_name(TCC_PARAM_INPUT_OUTPUT), "input_output");
    ck_assert_str_eq(tcc_param_role_name((tcc_param_role)7), "unknown");
}
END_TEST

START_TEST(test_without_device)
{
    ck_assert_uint_eq(tcc_device_buffer_address(NULL), 0);
    tcc_device_ptr address = 0x1000;
    ck_assert_int_eq(tcc_kernel_launch_async(NULL, 1, &address, NULL), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_kernel_launch_async_with_workspaces(NULL, 1, &address, 0, NULL, NULL),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_kernel_param_count(NULL), 0);
    tcc_kernel_param_info info = {.size = sizeof(tcc_kernel_param_info), .rank = -1};
    ck_assert(!tcc_kernel_param(NULL, 0, &info));
    ck_assert_int_eq(info.rank, -1);
}
END_TEST

/* ---- on the fake device --------------------------------------------------------------------- */

static tcc_context *ctx;
static tcc_device *device;

/* The context current on the test's thread before each call: the caller's own. */
#define CALLERS_CONTEXT ((CUcontext)(uintptr_t)0xca11e5)
/* A stream the caller created in its context. */
#define STREAM ((void *)(uintptr_t)0x5770)

static void setup(void)
{
    fake_reset();
    ctx = test_context();
    ck_assert_msg(tci_device_open_with(ctx, 0, fake_lookup, NULL, &device) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    fake.current = CALLERS_CONTEXT;
}

static void teardown(void)
{
    tcc_device_close(device);
    ck_assert_int_eq(fake.contexts, 0);
    ck_assert_int_eq(fake.buffers, 0);
    ck_assert_int_eq(fake.modules, 0);
    tcc_context_destroy(ctx);
}

static const char ptx[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                          ".visible .entry tcc_fake()\n{\n    ret;\n}\n";

/* conv2d's parameters as the operator describes them (only the names and alignments matter
 * to the launch). */
static const tcc_kernel_param_info conv_params[] = {
    {.name = "input", .alignment = 16},
    {.name = "filter", .alignment = 16},
    {.name = "output", .alignment = 16},
};

/* A kernel of one launch taking three parameters, as a conv2d without an epilogue does. */
static tcc_kernel conv_like_kernel(void)
{
    return (tcc_kernel){.ptx = (char *)ptx,
                        .nlaunch = 1,
                        .launches = {{.name = (char *)"tcc_fake",
                                      .grid = {4, 1, 1},
                                      .block = {128, 1, 1},
                                      .cluster = {1, 1, 1}}},
                        .nparam = 3,
                        .params = (tcc_kernel_param_info *)conv_params};
}

static tcc_loaded_kernel *load(const tcc_kernel *kernel)
{
    tcc_loaded_kernel *loaded = NULL;
    CUcontext before = fake.current;
    ck_assert_msg(tcc_kernel_load(device, kernel, &loaded) == TCC_OK, "%s", tcc_last_error(ctx));
    fake.current = before; /* the calls before this one leave the primary context current */
    return loaded;
}

static const tcc_device_ptr addresses[3] = {0x100000, 0x200000, 0x300000};

START_TEST(test_launch_on_callers_stream)
{
    tcc_kernel kernel = conv_like_kernel();
    tcc_loaded_kernel *loaded = load(&kernel);
    int synchronizes = fake.synchronizes;
    ck_assert_msg(tcc_kernel_launch_async(loaded, 3, addresses, STREAM) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    ck_assert_int_eq(fake.launches, 1);
    ck_assert_ptr_eq(fake.launch_stream, STREAM);
    ck_assert_ptr_eq(fake.launch_context, FAKE_PRIMARY);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(fake.launch_values[i], addresses[i]);
    ck_assert_uint_eq(fake.launch_values[3], 0); /* nothing after them */
    ck_assert_int_eq(fake.synchronizes, synchronizes);
    ck_assert_ptr_eq(fake.current, CALLERS_CONTEXT);

    /* The legacy default stream; and a thread with no context current gets none back. */
    fake.current = NULL;
    ck_assert_int_eq(tcc_kernel_launch_async(loaded, 3, addresses, NULL), TCC_OK);
    ck_assert_ptr_null(fake.launch_stream);
    ck_assert_ptr_eq(fake.launch_context, FAKE_PRIMARY);
    ck_assert_ptr_null(fake.current);
    /* With the primary context current already (PyTorch's), it stays so. */
    fake.current = FAKE_PRIMARY;
    ck_assert_int_eq(tcc_kernel_launch_async(loaded, 3, addresses, STREAM), TCC_OK);
    ck_assert_ptr_eq(fake.current, FAKE_PRIMARY);
    ck_assert_int_eq(fake.launches, 3);
    ck_assert_int_eq(fake.synchronizes, synchronizes);

    /* tcc_kernel_launch: the buffers' addresses, the default stream, a synchronization. */
    tcc_device_buffer *buffers[3];
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(tcc_device_buffer_alloc(device, 256, &buffers[i]), TCC_OK);
    ck_assert_int_eq(tcc_kernel_launch(loaded, 3, buffers), TCC_OK);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_ne(tcc_device_buffer_address(buffers[i]), 0);
        ck_assert_uint_eq(fake.launch_values[i], tcc_device_buffer_address(buffers[i]));
    }
    ck_assert_ptr_null(fake.launch_stream);
    ck_assert_int_eq(fake.synchronizes, synchronizes + 1);
    for (int i = 0; i < 3; i++)
        tcc_device_buffer_free(buffers[i]);
    tcc_loaded_kernel_destroy(loaded);
}
END_TEST

/* A refusal: the status, one line containing `part`, nothing launched, and the caller's
 * context current again. */
static void assert_refused(tcc_status got, tcc_status status, const char *part)
{
    ck_assert_int_eq(got, status);
    assert_contains(tcc_last_error(ctx), part);
    assert_one_line(ctx);
    ck_assert_int_eq(fake.launches + fake.cluster_launches, 0);
    ck_assert_ptr_eq(fake.current, CALLERS_CONTEXT);
}

START_TEST(test_refusals)
{
    tcc_kernel kernel = conv_like_kernel();
    tcc_loaded_kernel *loaded = load(&kernel);
    assert_refused(tcc_kernel_launch_async(loaded, 2, addresses, STREAM),
                   TCC_ERROR_INVALID_ARGUMENT,
                   "tcc_kernel_launch_async: kernel 'tcc_fake' takes 3 parameters "
                   "(tcc_kernel_param_count), not 2");
    assert_refused(tcc_kernel_launch_async(loaded, 3, NULL, STREAM), TCC_ERROR_INVALID_ARGUMENT,
                   "takes 3 parameters (tcc_kernel_param_count), and no list of 3");
    tcc_device_ptr bad[3] = {addresses[0], 0, addresses[2]};
    assert_refused(tcc_kernel_launch_async(loaded, 3, bad, STREAM), TCC_ERROR_INVALID_ARGUMENT,
                   "tcc_kernel_launch_async: kernel 'tcc_fake': parameter 1 (filter) is NULL");
    bad[1] = 0x200008;
    assert_refused(tcc_kernel_launch_async(loaded, 3, bad, STREAM), TCC_ERROR_INVALID_ARGUMENT,
                   "kernel 'tcc_fake': parameter 1 (filter) at 0x200008 is not 16-byte aligned "
                   "(the kernel needs its address a multiple of 16)");
    bad[1] = addresses[1];
    bad[2] = 0x300002;
    assert_refused(tcc_kernel_launch_async(loaded, 3, bad, STREAM), TCC_ERROR_INVALID_ARGUMENT,
                   "parameter 2 (output) at 0x300002 is not 16-byte aligned");

    /* A stream of another context, and one the driver does not know. */
    fake.stream_owner = CALLERS_CONTEXT;
    assert_refused(tcc_kernel_launch_async(loaded, 3, addresses, STREAM),
                   TCC_ERROR_INVALID_ARGUMENT,
                   "kernel 'tcc_fake': the stream belongs to another CUDA context than the "
                   "primary context of Fake GPU, where the kernel is loaded");
    /* The special handles are the current context's: the device's during the call. */
    ck_assert_int_eq(tcc_kernel_launch_async(loaded, 3, addresses, (void *)(uintptr_t)2), TCC_OK);
    ck_assert_ptr_eq(fake.launch_context, FAKE_PRIMARY);
    ck_assert_ptr_eq(fake.current, CALLERS_CONTEXT);
    fake.launches = 0;
    fake.stream_owner = FAKE_PRIMARY;
    fake.stream_result = FAKE_INVALID_HANDLE;
    assert_refused(tcc_kernel_launch_async(loaded, 3, addresses, STREAM), TCC_ERROR_CUDA,
                   "cuStreamGetCtx failed for the stream given to kernel 'tcc_fake'");
    fake.stream_result = CUDA_SUCCESS;

    /* A launch the driver refuses: its error, and the caller's context back. */
    fake.launch_result = FAKE_INVALID_VALUE;
    ck_assert_int_eq(tcc_kernel_launch_async(loaded, 3, addresses, STREAM), TCC_ERROR_CUDA);
    assert_contains(tcc_last_error(ctx), "cuLaunchKernel failed for kernel 'tcc_fake'");
    ck_assert_ptr_eq(fake.current, CALLERS_CONTEXT);
    fake.launch_result = CUDA_SUCCESS;
    ck_assert_int_eq(tcc_kernel_launch_async(loaded, 3, addresses, STREAM), TCC_OK);
    tcc_loaded_kernel_destroy(loaded);
}
END_TEST

/* A driver without cuStreamGetCtx: the stream is taken as it is. */
START_TEST(test_stream_unchecked_without_entry_point)
{
    tcc_device_close(device);
    fake.missing[0] = "cuStreamGetCtx";
    ck_assert_int_eq(tci_device_open_with(ctx, 0, fake_lookup, NULL, &device), TCC_OK);
    fake.stream_owner = CALLERS_CONTEXT;
    tcc_kernel kernel = conv_like_kernel();
    tcc_loaded_kernel *loaded = load(&kernel);
    fake.current = CALLERS_CONTEXT;
    ck_assert_int_eq(tcc_kernel_launch_async(loaded, 3, addresses, STREAM), TCC_OK);
    ck_assert_ptr_eq(fake.launch_stream, STREAM);
    tcc_loaded_kernel_destroy(loaded);
}
END_TEST

/* Two launches (a staging copy and the product) with a workspace and the product's tensor map
 * of parameter 0, in clusters: the maps are encoded from the caller's address (in the device's
 * context: the encoders want one, which a caller may not have current), the workspace
 * follows the parameters (the loaded kernel's, or the caller's), every launch on the stream. */
START_TEST(test_workspaces_and_tensor_maps)
{
    tcc_kernel kernel = conv_like_kernel();
    kernel.nlaunch = 2;
    kernel.main_launch = 1;
    kernel.launches[1] = kernel.launches[0];
    kernel.launches[0].name = (char *)"tcc_fake_stage";
    kernel.launches[1].cluster[0] = 2;
    kernel.launches[1].ntensor_map = 1;
    kernel.launches[1].tensor_maps[0] = (tcc_tensor_map_encoding){
        .mode = TCC_TENSOR_MAP_TILED,
        .param = 0,
        .type = TCC_FLOAT16,
        .rank = 2,
        .dims = {64, 64},
        .strides = {2, 128},
        .box = {64, 64},
        .element_strides = {1, 1},
        .swizzle_bytes = 128,
    };
    kernel.nworkspace = 1;
    kernel.workspace_bytes[0] = 4096;
    tcc_loaded_kernel *loaded = load(&kernel);
    tcc_device_ptr own = (tcc_device_ptr)loaded->workspaces[0]->pointer;

    fake.current = NULL;
    ck_assert_msg(tcc_kernel_launch_async(loaded, 3, addresses, STREAM) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    ck_assert_ptr_null(fake.current);
    fake.current = CALLERS_CONTEXT;
    ck_assert_int_eq(fake.launches, 1);
    ck_assert_int_eq(fake.cluster_launches, 1);
    ck_assert_ptr_eq(fake.launch_stream, STREAM);
    ck_assert_uint_eq(fake.encode_address, addresses[0]);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(fake.launch_values[i], addresses[i]);
    ck_assert_uint_eq(fake.launch_values[3], own);
    ck_assert_ptr_eq(fake.current, CALLERS_CONTEXT);

    const tcc_device_ptr mine = 0x900000;
    ck_assert_int_eq(
        tcc_kernel_launch_async_with_workspaces(loaded, 3, addresses, 1, &mine, STREAM), TCC_OK);
    ck_assert_uint_eq(fake.launch_values[3], mine);
    ck_assert_int_eq(tcc_kernel_launch_async_with_workspaces(loaded, 3, addresses, 0, NULL, STREAM),
                     TCC_OK);
    ck_assert_uint_eq(fake.launch_values[3], own);

    fake.launches = fake.cluster_launches = 0;
    assert_refused(tcc_kernel_launch_async_with_workspaces(loaded, 3, addresses, 2, &mine, STREAM),
                   TCC_ERROR_INVALID_ARGUMENT,
                   "kernel 'tcc_fake' takes 1 workspaces (tcc_kernel_workspace_count), not 2");
    assert_refused(tcc_kernel_launch_async_with_workspaces(loaded, 3, addresses, 1, NULL, STREAM),
                   TCC_ERROR_INVALID_ARGUMENT, "and no list of 1");
    const tcc_device_ptr odd = 0x900004;
    assert_refused(tcc_kernel_launch_async_with_workspaces(loaded, 3, addresses, 1, &odd, STREAM),
                   TCC_ERROR_INVALID_ARGUMENT, "workspace 0 at 0x900004 is not 16-byte aligned");
    tcc_loaded_kernel_destroy(loaded);
}
END_TEST

/* A kernel described by hand (no parameter names): the checks number the parameters. */
START_TEST(test_unnamed_parameters)
{
    tcc_kernel kernel = conv_like_kernel();
    kernel.params = NULL;
    tcc_loaded_kernel *loaded = load(&kernel);
    tcc_device_ptr bad[3] = {addresses[0], addresses[1], 0x300001};
    assert_refused(tcc_kernel_launch_async(loaded, 3, bad, STREAM), TCC_ERROR_INVALID_ARGUMENT,
                   "kernel 'tcc_fake': parameter 2 at 0x300001 is not 16-byte aligned");
    tcc_loaded_kernel_destroy(loaded);
}
END_TEST

static Suite *runtime_interop_suite(void)
{
    Suite *suite = suite_create("runtime_interop");
    TCase *plain = test_case(suite, "no_device", NULL, NULL);
    tcase_add_test(plain, test_status_strings);
    tcase_add_test(plain, test_without_device);
    TCase *driver = test_case(suite, "fake_driver", setup, teardown);
    tcase_add_test(driver, test_launch_on_callers_stream);
    tcase_add_test(driver, test_refusals);
    tcase_add_test(driver, test_stream_unchecked_without_entry_point);
    tcase_add_test(driver, test_workspaces_and_tensor_maps);
    tcase_add_test(driver, test_unnamed_parameters);
    return suite;
}

TEST_MAIN(runtime_interop_suite)
