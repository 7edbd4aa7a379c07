/*
 * Machine code at build time (tcc_kernel_compile_machine_code, lib/runtime/machine_code.c):
 * convolutions of one and several launches compiled by nvJitLink into an ELF cubin, each
 * launch's registers and spills read from ptxas's log, kept through serialization byte for
 * byte; the build option does the same inside tcc_build; ptxas's errors, and a block that
 * cannot hold its threads' registers, are refused in one line; and a library that cannot be
 * opened is one line naming it and TCC_NVJITLINK.
 *
 * CMake points TCC_NVJITLINK at the toolkit's libnvJitLink where it finds one. Where there is
 * none, the tests that need it check the one-line error and say SKIP for the rest.
 */
#include "driver/kernel.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static tcc_context *ctx;

static void setup(void)
{
    ctx = test_context();
}

static void teardown(void)
{
    tcc_context_destroy(ctx);
}

/* Whether nvJitLink opens; when not, its error must be one line that says how to point at
 * it, and the caller skips what needs the library. */
static bool have_nvjitlink(const char *test)
{
    int major = -1, minor = -1;
    tcc_status status = tcc_machine_code_available(ctx, &major, &minor);
    if (status == TCC_OK) {
        ck_assert_int_ge(major, 12);
        ck_assert_int_ge(minor, 0);
        return true;
    }
    ck_assert_int_eq(status, TCC_ERROR_CUDA);
    assert_one_line(ctx);
    assert_contains(tcc_last_error(ctx), "TCC_NVJITLINK");
    printf("SKIP %s: %s\n", test, tcc_last_error(ctx));
    return false;
}

static tcc_conv2d_desc small_conv(tcc_layout layout, int64_t in_channels)
{
    tcc_conv2d_desc d;
    tcc_conv2d_desc_init(&d);
    d.batch = 1, d.height = d.width = 14;
    d.in_channels = in_channels, d.out_channels = 64, d.kernel_h = d.kernel_w = 3;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.layout = layout;
    d.filter_layout = layout == TCC_LAYOUT_NCHW ? TCC_FILTER_KCRS : TCC_FILTER_KRSC;
    return d;
}

static tcc_kernel *compile_conv(const tcc_conv2d_desc *d, tcc_arch arch, bool machine_code)
{
    tcc_build_options options;
    tcc_build_options_init(&options);
    ck_assert(!options.machine_code); /* off unless asked for */
    options.arch = arch;
    options.machine_code = machine_code;
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_conv2d_compile(ctx, d, NULL, &options, &kernel) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    return kernel;
}

/* The cubin is an ELF image; every launch has its registers and spills. */
static void assert_machine_code(const tcc_kernel *kernel)
{
    size_t size = 0;
    const unsigned char *code = tcc_kernel_machine_code(kernel, &size);
    ck_assert_ptr_nonnull(code);
    ck_assert_uint_gt(size, 64);
    ck_assert(memcmp(code,
                     "\x7f"
                     "ELF",
                     4) == 0);
    for (int i = 0; i < tcc_kernel_launch_count(kernel); i++) {
        ck_assert_msg(tcc_kernel_launch_registers(kernel, i) > 0, "launch %d (%s): %d registers", i,
                      tcc_kernel_launch_name(kernel, i), tcc_kernel_launch_registers(kernel, i));
        ck_assert_int_le(tcc_kernel_launch_registers(kernel, i), 255);
        ck_assert_int_ge(tcc_kernel_launch_spill_bytes(kernel, i), 0);
    }
    ck_assert_int_eq(tcc_kernel_launch_registers(kernel, tcc_kernel_launch_count(kernel)), -1);
}

/* Serialized and read back: the same cubin, byte for byte, and the same registers. */
static void assert_round_trip(const tcc_kernel *kernel)
{
    void *bytes = NULL;
    size_t size = 0;
    ck_assert_int_eq(tcc_kernel_serialize(ctx, kernel, &bytes, &size), TCC_OK);
    tcc_kernel *back = NULL;
    ck_assert_msg(tcc_kernel_deserialize(ctx, bytes, size, &back) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    size_t a_size = 0, b_size = 0;
    const void *a = tcc_kernel_machine_code(kernel, &a_size);
    const void *b = tcc_kernel_machine_code(back, &b_size);
    ck_assert_uint_eq(a_size, b_size);
    ck_assert(memcmp(a, b, a_size) == 0);
    for (int i = 0; i < tcc_kernel_launch_count(kernel); i++) {
        ck_assert_int_eq(tcc_kernel_launch_registers(back, i),
                         tcc_kernel_launch_registers(kernel, i));
        ck_assert_int_eq(tcc_kernel_launch_spill_bytes(back, i),
                         tcc_kernel_launch_spill_bytes(kernel, i));
    }
    tcc_kernel_destroy(back);
    free(bytes);
}

/* Run first, in a child of its own: the library is opened once a process, and this must be
 * the first attempt. */
START_TEST(test_missing_library_is_one_line)
{
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        setenv("TCC_NVJITLINK", "/nonexistent/libnvJitLink.so.13", 1);
        tcc_context *c = NULL;
        int major = -1;
        bool ok = tcc_context_create(&c) == TCC_OK &&
                  tcc_machine_code_available(c, &major, NULL) == TCC_ERROR_CUDA && major == 0;
        const char *error = ok ? tcc_last_error(c) : "";
        ok = ok && strstr(error, "TCC_NVJITLINK=/nonexistent/libnvJitLink.so.13") &&
             !strchr(error, '\n');
        /* Compiling says the same. */
        tcc_kernel kernel = {.ptx = (char *)".version 7.0\n.target sm_80\n", .nlaunch = 1};
        ok = ok && tcc_kernel_compile_machine_code(c, &kernel) == TCC_ERROR_CUDA &&
             strstr(tcc_last_error(c), "/nonexistent/libnvJitLink.so.13") && !kernel.machine_code;
        if (!ok)
            fprintf(stderr, "unexpected: %s\n", c ? tcc_last_error(c) : "no context");
        tcc_context_destroy(c);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

START_TEST(test_compiles_one_launch)
{
    tcc_conv2d_desc d = small_conv(TCC_LAYOUT_NHWC, 64);
    tcc_kernel *kernel = compile_conv(&d, TCC_SM_80, false);
    size_t size = 1;
    ck_assert_ptr_null(tcc_kernel_machine_code(kernel, &size));
    ck_assert_uint_eq(size, 0);
    ck_assert_int_eq(tcc_kernel_launch_registers(kernel, 0), -1);
    ck_assert_int_eq(tcc_kernel_launch_spill_bytes(kernel, 0), -1);
    if (have_nvjitlink("compiles_one_launch")) {
        ck_assert_msg(tcc_kernel_compile_machine_code(ctx, kernel) == TCC_OK, "%s",
                      tcc_last_error(ctx));
        assert_machine_code(kernel);
        assert_round_trip(kernel);
        /* A count the log did not say (the H200 host's nvJitLink 13.0 printed no spill line):
         * the sum is unknown, -1, not -2 or a count short of one side. */
        kernel->launches[0].spill_load_bytes = -1;
        ck_assert_int_eq(tcc_kernel_launch_spill_bytes(kernel, 0), -1);
    } else {
        ck_assert_int_eq(tcc_kernel_compile_machine_code(ctx, kernel), TCC_ERROR_CUDA);
        ck_assert_ptr_null(tcc_kernel_machine_code(kernel, NULL));
    }
    tcc_kernel_destroy(kernel);
}
END_TEST

/* NCHW with few channels on sm_90a: staging copies and the product, whose names share a
 * prefix (conv2d, conv2d_input_nhwc), each with its own registers; by the build option. */
START_TEST(test_build_option_several_launches)
{
    if (!have_nvjitlink("build_option_several_launches"))
        return;
    tcc_conv2d_desc d = small_conv(TCC_LAYOUT_NCHW, 3);
    tcc_kernel *kernel = compile_conv(&d, TCC_SM_90A, true);
    ck_assert_int_gt(tcc_kernel_launch_count(kernel), 1);
    assert_machine_code(kernel);
    assert_round_trip(kernel);
    tcc_kernel_destroy(kernel);
}
END_TEST

/* ptxas's error: TCC_ERROR_LLVM (device code that did not compile) with its first line. */
START_TEST(test_ptxas_error_is_one_line)
{
    if (!have_nvjitlink("ptxas_error_is_one_line"))
        return;
    tcc_kernel *kernel = calloc(1, sizeof *kernel);
    kernel->ptx = strdup(".version 7.0\n.target sm_80\n.address_size 64\n"
                         ".visible .entry broken()\n{\n    bogus.instruction;\n    ret;\n}\n");
    kernel->nlaunch = 1;
    kernel->launches[0] = (KernelLaunch){.name = strdup("broken"), .block = {32, 1, 1}};
    ck_assert_int_eq(tcc_kernel_compile_machine_code(ctx, kernel), TCC_ERROR_LLVM);
    assert_one_line(ctx);
    assert_contains(tcc_last_error(ctx), "kernel 'broken' on sm_80");
    assert_contains(tcc_last_error(ctx), "ptxas");
    ck_assert_ptr_null(tcc_kernel_machine_code(kernel, NULL));
    tcc_kernel_destroy(kernel);
}
END_TEST

/* A block of more threads than its registers allow: refused, naming the kernel, the registers
 * and the threads. The kernel was compiled for 32 threads (.maxntid), its launch says 1024. */
START_TEST(test_refuses_registers_past_the_block)
{
    if (!have_nvjitlink("refuses_registers_past_the_block"))
        return;
    tcc_conv2d_desc d = small_conv(TCC_LAYOUT_NHWC, 64);
    tcc_kernel *kernel = compile_conv(&d, TCC_SM_80, true);
    KernelLaunch *launch = &kernel->launches[kernel->main_launch];
    int registers = launch->registers;
    ck_assert_int_gt(registers, 64); /* 1024 threads of more than 64 need more than 65536 */
    launch->block[0] = 1024, launch->block[1] = launch->block[2] = 1;
    ck_assert_int_eq(tcc_kernel_compile_machine_code(ctx, kernel), TCC_ERROR_SCHEDULE);
    assert_one_line(ctx);
    char expected[160];
    snprintf(expected, sizeof expected,
             "kernel 'conv2d' cannot launch: its block of 1024 threads "
             "at %d registers a thread",
             registers);
    assert_contains(tcc_last_error(ctx), expected);
    ck_assert_ptr_null(tcc_kernel_machine_code(kernel, NULL));
    tcc_kernel_destroy(kernel);
}
END_TEST

START_TEST(test_refuses_kernel_without_ptx)
{
    tcc_kernel kernel = {.nlaunch = 1};
    ck_assert_int_eq(tcc_kernel_compile_machine_code(ctx, &kernel), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "no PTX");
    kernel.ptx = (char *)".version 7.0\n";
    ck_assert_int_eq(tcc_kernel_compile_machine_code(ctx, &kernel), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "no .target");
    ck_assert_int_eq(tcc_kernel_compile_machine_code(ctx, NULL), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(tcc_kernel_machine_code(NULL, NULL));
    ck_assert_int_eq(tcc_kernel_launch_spill_bytes(NULL, 0), -1);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *suite = suite_create("machine_code");
    TCase *tc = test_case(suite, "machine_code", setup, teardown);
    tcase_add_test(tc, test_missing_library_is_one_line);
    tcase_add_test(tc, test_compiles_one_launch);
    tcase_add_test(tc, test_build_option_several_launches);
    tcase_add_test(tc, test_ptxas_error_is_one_line);
    tcase_add_test(tc, test_refuses_registers_past_the_block);
    tcase_add_test(tc, test_refuses_kernel_without_ptx);
    return suite;
}

TEST_MAIN(make_suite)
