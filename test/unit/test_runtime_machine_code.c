/*
 * Loading a kernel that has machine code (tcc_kernel_compile_machine_code's cubin), on the
 * fake CUDA driver (fake_driver.c): the cubin is loaded instead of the PTX, with no JIT; where
 * the driver cannot take it for what it was built for (another GPU, a newer toolkit) the PTX
 * is loaded in its place; another failure of the cubin's load is reported, naming it; and the
 * PTX's arch is still checked against the device before anything loads.
 */
#include "driver/kernel.h"
#include "fake_driver.h"
#include "runtime/internal.h"
#include "support.h"

static tcc_context *ctx;
static tcc_device *device;

static void setup(void)
{
    fake_reset();
    ctx = test_context();
    ck_assert_msg(tci_device_open_with(ctx, 0, fake_lookup, NULL, &device) == TCC_OK, "%s",
                  tcc_last_error(ctx));
}

static void teardown(void)
{
    tcc_device_close(device);
    ck_assert_int_eq(fake.modules, 0);
    ck_assert_int_eq(fake.contexts, 0);
    tcc_context_destroy(ctx);
}

static const char sm80_ptx[] = ".version 7.0\n.target sm_80\n.address_size 64\n"
                               ".visible .entry tcc_fake()\n{\n    ret;\n}\n";

/* An ELF64 header's first bytes, as a cubin starts: what the driver tells machine code by. */
static unsigned char cubin[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};

/* A kernel of one launch with PTX and machine code. */
static tcc_kernel kernel_with_machine_code(const char *ptx)
{
    return (tcc_kernel){.ptx = (char *)ptx,
                        .machine_code = cubin,
                        .machine_code_size = sizeof cubin,
                        .nlaunch = 1,
                        .launches = {{.name = (char *)"tcc_fake",
                                      .grid = {4, 1, 1},
                                      .block = {64, 1, 1},
                                      .cluster = {1, 1, 1},
                                      .registers = 40}}};
}

START_TEST(test_loads_machine_code_without_jit)
{
    tcc_kernel kernel = kernel_with_machine_code(sm80_ptx);
    tcc_loaded_kernel *loaded = NULL;
    ck_assert_msg(tcc_kernel_load(device, &kernel, &loaded) == TCC_OK, "%s", tcc_last_error(ctx));
    ck_assert_int_eq(fake.loads, 1);
    ck_assert_int_eq(fake.machine_code_loads, 1);
    ck_assert_int_eq(fake.modules, 1);
    ck_assert_int_eq(tcc_kernel_launch(loaded, 0, NULL), TCC_OK);
    tcc_loaded_kernel_destroy(loaded);
    ck_assert_int_eq(fake.modules, 0);
}
END_TEST

/* The driver's refusals of a cubin built for another GPU or by a newer toolkit: the PTX. */
START_TEST(test_falls_back_to_ptx_on_mismatch)
{
    const CUresult mismatches[] = {209 /* NO_BINARY_FOR_GPU */, 200 /* INVALID_IMAGE */,
                                   222 /* UNSUPPORTED_PTX_VERSION */};
    for (size_t i = 0; i < sizeof mismatches / sizeof mismatches[0]; i++) {
        fake.loads = fake.machine_code_loads = 0;
        fake.machine_code_result = mismatches[i];
        tcc_kernel kernel = kernel_with_machine_code(sm80_ptx);
        tcc_loaded_kernel *loaded = NULL;
        ck_assert_msg(tcc_kernel_load(device, &kernel, &loaded) == TCC_OK, "%s",
                      tcc_last_error(ctx));
        ck_assert_int_eq(fake.machine_code_loads, 1);
        ck_assert_int_eq(fake.loads, 2); /* the cubin, then the PTX */
        ck_assert_int_eq(fake.modules, 1);
        tcc_loaded_kernel_destroy(loaded);
    }
}
END_TEST

/* Any other failure is the cubin's, reported as such, without a second load. */
START_TEST(test_reports_other_failures)
{
    fake.machine_code_result = FAKE_INVALID_CONTEXT;
    tcc_kernel kernel = kernel_with_machine_code(sm80_ptx);
    tcc_loaded_kernel *loaded = (tcc_loaded_kernel *)&loaded;
    ck_assert_int_eq(tcc_kernel_load(device, &kernel, &loaded), TCC_ERROR_CUDA);
    ck_assert_ptr_null(loaded);
    assert_contains(
        tcc_last_error(ctx),
        "cuModuleLoadDataEx failed for the machine code of kernel 'tcc_fake' (64 bytes)");
    assert_one_line(ctx);
    ck_assert_int_eq(fake.loads, 1);
    ck_assert_int_eq(fake.modules, 0);
}
END_TEST

/* The PTX's .target is checked against the device before the cubin is offered. */
START_TEST(test_checks_ptx_arch_first)
{
    static const char sm90a_ptx[] = ".version 8.0\n.target sm_90a\n.address_size 64\n";
    fake.arch = 80;
    tcc_device_close(device);
    ck_assert_int_eq(tci_device_open_with(ctx, 0, fake_lookup, NULL, &device), TCC_OK);
    tcc_kernel kernel = kernel_with_machine_code(sm90a_ptx);
    tcc_loaded_kernel *loaded = NULL;
    ck_assert_int_eq(tcc_kernel_load(device, &kernel, &loaded), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "built for sm_90a");
    ck_assert_int_eq(fake.loads, 0);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *suite = suite_create("runtime_machine_code");
    TCase *tc = test_case(suite, "load", setup, teardown);
    tcase_add_test(tc, test_loads_machine_code_without_jit);
    tcase_add_test(tc, test_falls_back_to_ptx_on_mismatch);
    tcase_add_test(tc, test_reports_other_failures);
    tcase_add_test(tc, test_checks_ptx_arch_first);
    return suite;
}

TEST_MAIN(make_suite)
