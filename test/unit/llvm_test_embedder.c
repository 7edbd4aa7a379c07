/*
 * tcc as an embedder sees it: a program that links the library and provokes each class of
 * error through the public API, as a compiler or an inference server calling it would. After
 * each one the call has returned an error with a one-line message, the program is still
 * running (a test's cases run one after another in one process), and the same context
 * compiles the next kernel to the very PTX a fresh context gives (no state left behind).
 *
 * The classes: bad arguments and NULLs, bad descriptors, schedules refused, loop IR that
 * does not parse, and the runtime's: no driver (here), or with a GPU (device 0) device
 * memory exhausted, launches the device refuses (threads over the kernel's .maxntid, a grid
 * or shared memory over the device's limits), PTX newer than the driver, bad buffers; after
 * which the same device still runs a kernel and checks it against the CPU reference. The
 * runtime's refusals need PTX the compiler never makes, so that part bends a compiled kernel
 * through driver/kernel.h (the one internal header used). Without a GPU it is skipped with a
 * message; test_runtime_fake.c runs the same failure paths on a fake driver.
 */
#include "driver/kernel.h"
#include "support.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the next kernel ---------------------------------------------------------------------- */

/* The kernel compiled after every error: a small matmul with an epilogue, for sm_80. */
static void next_matmul(tcc_matmul_desc *desc)
{
    tcc_matmul_desc_init(desc);
    desc->m = 96;
    desc->n = 64;
    desc->k = 80;
    desc->epilogue.bias = true;
    desc->epilogue.relu = true;
}

/* Its PTX, compiled by a fresh context: what every later compile must give again. */
static char *reference_ptx;

static char *compile_next(tcc_context *ctx)
{
    tcc_matmul_desc desc;
    next_matmul(&desc);
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_matmul_compile(ctx, &desc, NULL, NULL, &kernel) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    char *ptx = strdup(tcc_kernel_ptx(kernel));
    ck_assert_ptr_nonnull(ptx);
    tcc_kernel_destroy(kernel);
    return ptx;
}

static void setup(void)
{
    tcc_context *ctx = test_context();
    reference_ptx = compile_next(ctx);
    tcc_context_destroy(ctx);
}

static void teardown(void)
{
    free(reference_ptx);
    reference_ptx = NULL;
}

/* The call failed (`status` is an error) with a one-line message containing `part`, and the
 * context then compiles the next kernel to the reference PTX. */
static void assert_error(tcc_context *ctx, tcc_status status, const char *part)
{
    ck_assert_msg(status != TCC_OK, "expected an error with \"%s\"", part);
    assert_one_line(ctx);
    assert_contains(tcc_last_error(ctx), part);
    char *ptx = compile_next(ctx);
    ck_assert_msg(strcmp(ptx, reference_ptx) == 0, "the PTX changed after: %s", part);
    free(ptx);
}

/* ---- compiling ------------------------------------------------------------------------------ */

static tcc_status compile_matmul(tcc_context *ctx, const tcc_matmul_desc *desc,
                                 const tcc_gemm_schedule *schedule, tcc_arch arch)
{
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = arch;
    tcc_kernel *kernel = (tcc_kernel *)&options; /* must come back NULL */
    tcc_status status = tcc_matmul_compile(ctx, desc, schedule, &options, &kernel);
    ck_assert_ptr_null(kernel);
    return status;
}

static tcc_status compile_conv2d(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    tcc_kernel *kernel = (tcc_kernel *)desc;
    tcc_status status = tcc_conv2d_compile(ctx, desc, NULL, NULL, &kernel);
    ck_assert_ptr_null(kernel);
    return status;
}

START_TEST(test_bad_arguments)
{
    tcc_context *ctx = test_context();
    tcc_matmul_desc m;
    next_matmul(&m);
    m.k = 0;
    assert_error(ctx, compile_matmul(ctx, &m, NULL, TCC_SM_80),
                 "k must be in 1..2147483647 (got 0)");
    next_matmul(&m);
    m.batch = -3;
    assert_error(ctx, compile_matmul(ctx, &m, NULL, TCC_SM_80), "batch must be in 1..");
    next_matmul(&m);
    m.input_type = TCC_INT8;
    m.accumulate_type = TCC_FLOAT16;
    assert_error(ctx, compile_matmul(ctx, &m, NULL, TCC_SM_80),
                 "int8 inputs accumulate in int32, not float16");
    next_matmul(&m);
    m.epilogue.clamp = true;
    m.epilogue.clamp_min = 1.0;
    m.epilogue.clamp_max = -1.0;
    assert_error(ctx, compile_matmul(ctx, &m, NULL, TCC_SM_80),
                 "epilogue.clamp_min (1) must be <= epilogue.clamp_max (-1)");
    next_matmul(&m);
    m.epilogue.alpha = NAN;
    assert_error(ctx, compile_matmul(ctx, &m, NULL, TCC_SM_80),
                 "epilogue.alpha must be a finite number");
    next_matmul(&m);
    m.m = (int64_t)1 << 40;
    assert_error(ctx, compile_matmul(ctx, &m, NULL, TCC_SM_80), "m must be in 1..");
    next_matmul(&m);
    m.input_type = TCC_BFLOAT16;
    assert_error(ctx, compile_matmul(ctx, &m, NULL, TCC_SM_75),
                 "bfloat16 tensor cores need sm_80 or newer; the target is sm_75");
    tcc_arch arch;
    assert_error(ctx, tcc_arch_parse(ctx, "sm_1000", &arch), "unknown arch 'sm_1000'");
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_nulls)
{
    tcc_context *ctx = test_context();
    tcc_matmul_desc m;
    next_matmul(&m);
    assert_error(ctx, tcc_matmul_compile(ctx, &m, NULL, NULL, NULL),
                 "tcc_matmul_compile: the result pointer is NULL");
    tcc_kernel *kernel = NULL;
    assert_error(ctx, tcc_matmul_compile(ctx, NULL, NULL, NULL, &kernel),
                 "tcc_matmul_compile: the descriptor is NULL");
    assert_error(ctx, tcc_conv2d_compile(ctx, NULL, NULL, NULL, &kernel),
                 "tcc_conv2d_compile: the descriptor is NULL");
    ck_assert_ptr_null(kernel);
    tcc_gemm_schedule schedule;
    tcc_gemm_schedule_init(&schedule);
    assert_error(ctx, tcc_matmul_default_schedule(ctx, NULL, TCC_SM_80, &schedule),
                 "tcc_matmul_default_schedule: the descriptor is NULL");
    assert_error(ctx, tcc_matmul_default_schedule(ctx, &m, TCC_SM_80, NULL),
                 "tcc_matmul_default_schedule: the result pointer is NULL");
    assert_error(ctx, tcc_func_create(ctx, "f", NULL),
                 "tcc_func_create: the result pointer is NULL");
    char *text = NULL;
    assert_error(ctx, tcc_loop_ir_transform(ctx, NULL, NULL, NULL, &text),
                 "tcc_loop_ir_transform: no text");
    ck_assert_ptr_null(text);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_bad_descriptors)
{
    tcc_context *ctx = test_context();
    tcc_conv2d_desc c;
    tcc_conv2d_desc_init(&c);
    c.in_channels = 64;
    c.out_channels = 48;
    c.groups = 5;
    assert_error(ctx, compile_conv2d(ctx, &c),
                 "groups (5) must divide in_channels (64) and out_channels (48)");
    tcc_conv2d_desc_init(&c);
    c.layout = TCC_LAYOUT_NHWCNC;
    c.filter_layout = TCC_FILTER_BLOCKED;
    c.batch = 8;
    c.in_channels = c.out_channels = 16;
    assert_error(ctx, compile_conv2d(ctx, &c), "batch must be a multiple of 16 for the NHWCnc");
    tcc_conv2d_desc_init(&c);
    c.height = c.width = 3;
    c.kernel_h = c.kernel_w = 5;
    assert_error(ctx, compile_conv2d(ctx, &c), "the output is empty");
    tcc_conv2d_desc_init(&c);
    c.pad_left = -1;
    assert_error(ctx, compile_conv2d(ctx, &c), "pad_left must be in 0..");
    tcc_conv2d_desc_init(&c);
    c.layout = (tcc_layout)42;
    assert_error(ctx, compile_conv2d(ctx, &c), "layout 42 is not a tcc_layout");
    tcc_conv2d_desc_init(&c);
    c.output_type = TCC_INT32;
    assert_error(ctx, compile_conv2d(ctx, &c), "output_type must be float32, float16 or bfloat16");
    tcc_context_destroy(ctx);
}
END_TEST

/* A default schedule bent one knob at a time into something that cannot be built. */
START_TEST(test_refused_schedules)
{
    tcc_context *ctx = test_context();
    tcc_matmul_desc m;
    next_matmul(&m);
    m.m = m.n = m.k = 512;
    tcc_gemm_schedule base, s;
    tcc_gemm_schedule_init(&base);
    ck_assert_int_eq(tcc_matmul_default_schedule(ctx, &m, TCC_SM_80, &base), TCC_OK);
    s = base;
    s.intrinsic = TCC_GEMM_WGMMA;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_80), "wgmma needs sm_90a");
    s = base;
    s.stages = TCC_MAX_GEMM_STAGES + 1;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_80),
                 "stages must be 1 to 8 (or 0: chosen), not 9");
    s = base;
    s.split_k = TCC_MAX_SPLIT_K + 1;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_80),
                 "split_k must be 1 to 32 (or 0: chosen), not 33");
    /* Given on an empty schedule, before the chooser multiplies them (a fuzzer's values). */
    tcc_gemm_schedule_init(&s);
    s.stages = INT_MIN;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_90A),
                 "stages must be 1 to 8 (or 0: chosen), not -2147483648");
    tcc_gemm_schedule_init(&s);
    s.mma_m = INT_MAX;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_80),
                 "mma_m must be 1 to 256 (or 0: chosen), not 2147483647");
    s = base;
    s.mma_m = 16, s.mma_n = 16, s.mma_k = 32;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_80), "no MMA shape m16n16k32");
    s = base;
    s.block_row_warps = s.block_col_warps = 8;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_80), "2048 threads per block");
    s = base;
    s.num_total_passes = 3;
    s.num_fused_passes = 2;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_80),
                 "num_fused_passes (2) must divide num_total_passes (3)");
    s = base;
    s.cluster = 2;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_80), "clusters of 2 blocks need bulk");
    s = base;
    s.copy = TCC_GEMM_COPY_BULK;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_80), "bulk tensor copies need sm_90a");
    tcc_gemm_schedule h;
    tcc_gemm_schedule_init(&h);
    ck_assert_int_eq(tcc_matmul_default_schedule(ctx, &m, TCC_SM_90A, &h), TCC_OK);
    s = h;
    s.cluster = 3;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_90A), "clusters of 3 blocks");
    s = h;
    s.grid = TCC_GEMM_GRID_PERSISTENT;
    s.store = TCC_GEMM_STORE_SHARED;
    assert_error(ctx, compile_matmul(ctx, &m, &s, TCC_SM_90A), "a persistent grid needs");
    tcc_context_destroy(ctx);
}
END_TEST

/* The tensor-expression API. A function keeps its first error (later calls on it fail
 * quietly, as a builder does), so each error has a function of its own. */
static tcc_func *new_func(tcc_context *ctx)
{
    tcc_func *func = NULL;
    ck_assert_int_eq(tcc_func_create(ctx, "f", &func), TCC_OK);
    return func;
}

static tcc_status failed_if_null(const void *made)
{
    return made ? TCC_OK : TCC_ERROR_INVALID_ARGUMENT;
}

/* B = 2 A */
static tcc_expr *twice(tcc_func *func, tcc_expr *const *axes, void *user)
{
    return tcc_mul(func, tcc_access(func, user, 2, axes), tcc_float(func, 2.0, TCC_FLOAT16));
}

START_TEST(test_tensor_expressions)
{
    tcc_context *ctx = test_context();
    int64_t shape[2] = {16, 0};
    tcc_func *func = new_func(ctx);
    assert_error(ctx, failed_if_null(tcc_placeholder(func, "A", 2, shape, TCC_FLOAT16)),
                 "tensor A: dimension 1 has size 0");
    tcc_func_destroy(func);
    func = new_func(ctx);
    assert_error(ctx, failed_if_null(tcc_placeholder(func, "A", 9, shape, TCC_FLOAT16)),
                 "tensor A: 9 dimensions");
    tcc_func_destroy(func);
    func = new_func(ctx);
    assert_error(ctx, failed_if_null(tcc_reduce_axis(func, "k", 0)), "reduce axis k has extent 0");
    tcc_func_destroy(func);

    shape[1] = 16;
    func = new_func(ctx);
    tcc_tensor *a = tcc_placeholder(func, "A", 2, shape, TCC_FLOAT16);
    ck_assert_ptr_nonnull(a);
    tcc_kernel *kernel = NULL;
    assert_error(ctx, tcc_build(func, 1, &a, NULL, &kernel), "create the schedule before building");
    ck_assert_ptr_null(kernel);
    tcc_func_destroy(func);
    func = new_func(ctx);
    a = tcc_placeholder(func, "A", 2, shape, TCC_FLOAT16);
    tcc_tensor *b = tcc_compute(func, "B", 2, shape, NULL, TCC_FLOAT16, twice, a);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(tcc_schedule_create(func, 1, &b), TCC_OK);
    tcc_iter_var *outer = NULL, *inner = NULL;
    tcc_stage *stage = tcc_stage_of(func, b);
    ck_assert_ptr_nonnull(stage);
    assert_error(ctx, tcc_split(stage, tcc_tensor_axis(b, 0), 0, &outer, &inner),
                 "split: the factor must be at least 1 (got 0)");
    tcc_func_destroy(func);

    char *text = NULL;
    assert_error(ctx,
                 tcc_loop_ir_transform(ctx, "kernel k(\n  for i in [0, 4 {\n", NULL, NULL, &text),
                 "2:3: expected a type");
    ck_assert_ptr_null(text);
    assert_error(ctx, tcc_loop_ir_transform(ctx, "", "no_such_pass", NULL, &text),
                 "unknown pass 'no_such_pass'");
    tcc_context_destroy(ctx);
}
END_TEST

/* ---- the runtime ---------------------------------------------------------------------------- */

static bool driver_present(void)
{
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library)
        dlclose(library);
    return library != NULL;
}

/* The load must fail with a one-line error containing `part`, leaving nothing loaded. */
static void assert_load_refused(tcc_device *device, const tcc_kernel *kernel, const char *part)
{
    tcc_context *ctx = tcc_device_context(device);
    tcc_loaded_kernel *loaded = (tcc_loaded_kernel *)&loaded;
    assert_error(ctx, tcc_kernel_load(device, kernel, &loaded), part);
    ck_assert_ptr_null(loaded);
}

/* `ptx` with its ".version" or ".target" operand replaced by `value` (free() it). */
static char *replace_directive(const char *ptx, const char *directive, const char *value)
{
    const char *at = strstr(ptx, directive);
    ck_assert_ptr_nonnull(at);
    at += strlen(directive);
    const char *end = at + strcspn(at, "\n");
    size_t head = (size_t)(at - ptx);
    char *out = malloc(head + strlen(value) + strlen(end) + 1);
    ck_assert_ptr_nonnull(out);
    memcpy(out, ptx, head);
    strcpy(out + head, value);
    strcat(out, end);
    return out;
}

/* On the device: each refusal, then the same device runs the next kernel and checks it. */
static void provoke_runtime_errors(tcc_context *ctx, tcc_device *device)
{
    tcc_device *other = (tcc_device *)&other;
    assert_error(ctx, tcc_device_open(ctx, 9999, &other), "cuDeviceGet failed for device 9999");
    ck_assert_ptr_null(other);
    tcc_device_buffer *buffer = (tcc_device_buffer *)&buffer;
    assert_error(ctx, tcc_device_buffer_alloc(device, (size_t)1 << 50, &buffer),
                 "cuMemAlloc failed for 1125899906842624 bytes: CUDA_ERROR_OUT_OF_MEMORY");
    assert_contains(tcc_last_error(ctx), " bytes free of ");
    ck_assert_ptr_null(buffer);

    /* The next kernel, for this device, bent one way at a time into what it refuses. */
    tcc_matmul_desc desc;
    next_matmul(&desc);
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = tcc_arch_for_device(tcc_device_arch(device));
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_matmul_compile(ctx, &desc, NULL, &options, &kernel) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    KernelLaunch *product = &kernel->launches[kernel->main_launch];
    tcc_kernel bent = *kernel;
    KernelLaunch *b = &bent.launches[kernel->main_launch];
    b->block[0] = product->block[0] * 2; /* over the kernel's .maxntid */
    assert_load_refused(device, &bent, "cannot launch on ");
    assert_contains(tcc_last_error(ctx), "_THREADS_PER_BLOCK");
    *b = *product;
    b->grid[1] = 70000;
    assert_load_refused(device, &bent, "along y (CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)");
    *b = *product;
    b->dynamic_shared_bytes = 1 << 20;
    assert_load_refused(device, &bent, "(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)");
    *b = *product;
    char *ptx = replace_directive(kernel->ptx, ".version ", "9.9");
    bent.ptx = ptx;
    assert_load_refused(device, &bent, "is PTX ISA 9.9, ");
    free(ptx);
    char target[32];
    snprintf(target, sizeof target, "sm_%da", tcc_device_arch(device) + 1);
    ptx = replace_directive(kernel->ptx, ".target ", target);
    bent.ptx = ptx;
    assert_load_refused(device, &bent, "which runs on compute capability");
    free(ptx);

    /* Bad buffers and timing arguments, on a kernel that loaded. */
    tcc_loaded_kernel *loaded = NULL;
    ck_assert_msg(tcc_kernel_load(device, kernel, &loaded) == TCC_OK, "%s", tcc_last_error(ctx));
    tcc_device_buffer *none[5] = {NULL};
    assert_error(ctx, tcc_kernel_launch(loaded, kernel->nparam, none), "is NULL");
    double ms = 0.0;
    assert_error(ctx, tcc_kernel_time(loaded, kernel->nparam, none, 0, 0, &ms), "runs >= 1");
    tcc_loaded_kernel_destroy(loaded);

    /* The device runs the next kernel, checked against the CPU reference. */
    tcc_check_options check = {
        .size = sizeof(tcc_check_options), .seed = 7, .warmup = 1, .runs = 3};
    tcc_check_result result = {.size = sizeof result};
    ck_assert_msg(tcc_matmul_check(device, kernel, &desc, &check, &result) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    ck_assert_msg(result.passed, "max error %g (tolerance %g), %lld unwritten", result.max_error,
                  result.tolerance, (long long)result.unwritten);
    tcc_kernel_destroy(kernel);
}

START_TEST(test_runtime_errors)
{
    tcc_context *ctx = test_context();
    tcc_device *device = (tcc_device *)&device;
    tcc_status status = tcc_device_open(ctx, 0, &device);
    if (!driver_present()) {
        assert_error(ctx, status, "cannot load libcuda.so.1: no NVIDIA driver");
        ck_assert_ptr_null(device);
        fprintf(stderr, "llvm_test_embedder: SKIP the runtime's errors on a GPU (out of device "
                        "memory, refused launches, PTX newer than the driver): no NVIDIA driver "
                        "here (test_runtime_fake runs them on a fake driver)\n");
    } else {
        ck_assert_msg(status == TCC_OK, "%s", tcc_last_error(ctx));
        provoke_runtime_errors(ctx, device);
        tcc_device_close(device);
    }
    tcc_context_destroy(ctx);
}
END_TEST

static Suite *embedder_suite(void)
{
    Suite *suite = suite_create("embedder");
    TCase *api = test_case(suite, "api", setup, teardown);
    tcase_add_test(api, test_bad_arguments);
    tcase_add_test(api, test_nulls);
    tcase_add_test(api, test_bad_descriptors);
    tcase_add_test(api, test_refused_schedules);
    tcase_add_test(api, test_tensor_expressions);
    TCase *runtime = test_case(suite, "runtime", setup, teardown);
    tcase_set_timeout(runtime, 120);
    tcase_add_test(runtime, test_runtime_errors);
    return suite;
}

TEST_MAIN(embedder_suite)
