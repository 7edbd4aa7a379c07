/*
 * What a built kernel says of its parameters (tcc_kernel_param), without a GPU: for conv2d
 * (NHWC, NCHW staged into workspaces, NCHW pointwise as a product per image, the tutorial's
 * blocked layouts; bias, residual, an epilogue that reads the output), matmul (row- and
 * column-major operands, a batch, bias, residual, split-K's workspace) and tcc_build (the
 * placeholders, inputs, outputs and an output read before it is written): names, roles,
 * types, shapes in the layout's order, element and byte counts, alignment and layout names,
 * exactly what a dense tensor of that layout has. Workspaces are not parameters.
 */
#include "support.h"

/* Parameter `index` of `kernel` is as given; shape has `rank` entries. */
static void assert_param(const tcc_kernel *kernel, int index, const char *name, tcc_param_role role,
                         tcc_dtype dtype, const char *layout, int rank, const int64_t *shape)
{
    tcc_kernel_param_info p = {.size = sizeof p};
    ck_assert_msg(tcc_kernel_param(kernel, index, &p), "no parameter %d", index);
    ck_assert_str_eq(p.name, name);
    ck_assert_msg(p.role == role, "%s: role %s, expected %s", name, tcc_param_role_name(p.role),
                  tcc_param_role_name(role));
    ck_assert_msg(p.dtype == dtype, "%s: dtype %s, expected %s", name, tcc_dtype_name(p.dtype),
                  tcc_dtype_name(dtype));
    ck_assert_str_eq(p.layout, layout);
    ck_assert_int_eq(p.rank, rank);
    int64_t elements = 1;
    for (int d = 0; d < rank; d++) {
        ck_assert_msg(p.shape[d] == shape[d], "%s: dimension %d is %lld, expected %lld", name, d,
                      (long long)p.shape[d], (long long)shape[d]);
        elements *= shape[d];
    }
    for (int d = rank; d < TCC_PARAM_MAX_RANK; d++)
        ck_assert_int_eq(p.shape[d], 0);
    ck_assert_int_eq(p.elements, elements);
    ck_assert_int_eq(p.bytes, elements * (int64_t)tcc_dtype_size(dtype));
    ck_assert_int_eq(p.alignment, 16);
}

#define SHAPE(...)                                                                                 \
    (const int64_t[])                                                                              \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

static tcc_kernel *compile_conv(tcc_context *ctx, const tcc_conv2d_desc *desc)
{
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_conv2d_compile(ctx, desc, NULL, NULL, &kernel) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    return kernel;
}

static tcc_kernel *compile_matmul(tcc_context *ctx, const tcc_matmul_desc *desc,
                                  const tcc_gemm_schedule *schedule)
{
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_matmul_compile(ctx, desc, schedule, NULL, &kernel) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    return kernel;
}

/* N 2, 9 x 7 input, 32 -> 48 channels, 3x3, stride 2, pad 1: a 5 x 4 output. */
static void conv_desc(tcc_conv2d_desc *d)
{
    tcc_conv2d_desc_init(d);
    d->batch = 2, d->height = 9, d->width = 7, d->in_channels = 32, d->out_channels = 48;
    d->kernel_h = d->kernel_w = 3, d->stride_h = d->stride_w = 2;
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
}

START_TEST(test_conv2d_nhwc_bias_residual)
{
    tcc_context *ctx = test_context();
    tcc_conv2d_desc d;
    conv_desc(&d);
    d.epilogue.bias = true;
    d.epilogue.residual = true;
    d.epilogue.beta = 0.5;
    tcc_kernel *kernel = compile_conv(ctx, &d);
    ck_assert_int_eq(tcc_kernel_param_count(kernel), 5);
    assert_param(kernel, 0, "input", TCC_PARAM_INPUT, TCC_FLOAT16, "NHWC", 4, SHAPE(2, 9, 7, 32));
    assert_param(kernel, 1, "filter", TCC_PARAM_INPUT, TCC_FLOAT16, "KRSC", 4, SHAPE(48, 3, 3, 32));
    assert_param(kernel, 2, "bias", TCC_PARAM_INPUT, TCC_FLOAT32, "vector", 1, SHAPE(48));
    assert_param(kernel, 3, "residual", TCC_PARAM_INPUT, TCC_FLOAT32, "NHWC", 4,
                 SHAPE(2, 5, 4, 48));
    assert_param(kernel, 4, "output", TCC_PARAM_OUTPUT, TCC_FLOAT32, "NHWC", 4, SHAPE(2, 5, 4, 48));
    tcc_kernel_param_info p = {.size = sizeof(tcc_kernel_param_info), .rank = -1};
    ck_assert(!tcc_kernel_param(kernel, 5, &p));
    ck_assert(!tcc_kernel_param(kernel, -1, &p));
    ck_assert(!tcc_kernel_param(kernel, 0, NULL));
    ck_assert_int_eq(p.rank, -1);
    tcc_kernel_destroy(kernel);

    /* Without the epilogue's tensors: three parameters; the output's element count is the
     * operator's. */
    conv_desc(&d);
    d.output_type = TCC_FLOAT16;
    kernel = compile_conv(ctx, &d);
    ck_assert_int_eq(tcc_kernel_param_count(kernel), 3);
    assert_param(kernel, 2, "output", TCC_PARAM_OUTPUT, TCC_FLOAT16, "NHWC", 4, SHAPE(2, 5, 4, 48));
    tcc_kernel_param_info out = {.size = sizeof out};
    ck_assert(tcc_kernel_param(kernel, 2, &out));
    ck_assert_int_eq(out.elements, tcc_conv2d_output_elements(&d));
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}
END_TEST

/* A pointwise NCHW convolution runs as a product per image whose A is the filter and B the
 * input (conv2d_pointwise.c), but takes its parameters in every convolution's order, with the
 * bias a vector of the output channels and no workspace. */
START_TEST(test_conv2d_nchw_pointwise)
{
    tcc_context *ctx = test_context();
    tcc_conv2d_desc d;
    tcc_conv2d_desc_init(&d);
    d.batch = 3, d.height = 4, d.width = 8, d.in_channels = 32, d.out_channels = 48;
    d.layout = TCC_LAYOUT_NCHW;
    d.filter_layout = TCC_FILTER_KCRS;
    d.epilogue.bias = true;
    d.epilogue.residual = true;
    d.epilogue.beta = 1.0;
    tcc_kernel *kernel = compile_conv(ctx, &d);
    ck_assert_int_eq(tcc_kernel_param_count(kernel), 5);
    ck_assert_int_eq(tcc_kernel_workspace_count(kernel), 0);
    assert_param(kernel, 0, "input", TCC_PARAM_INPUT, TCC_FLOAT16, "NCHW", 4, SHAPE(3, 32, 4, 8));
    assert_param(kernel, 1, "filter", TCC_PARAM_INPUT, TCC_FLOAT16, "KCRS", 4, SHAPE(48, 32, 1, 1));
    assert_param(kernel, 2, "bias", TCC_PARAM_INPUT, TCC_FLOAT32, "vector", 1, SHAPE(48));
    assert_param(kernel, 3, "residual", TCC_PARAM_INPUT, TCC_FLOAT32, "NCHW", 4,
                 SHAPE(3, 48, 4, 8));
    assert_param(kernel, 4, "output", TCC_PARAM_OUTPUT, TCC_FLOAT32, "NCHW", 4, SHAPE(3, 48, 4, 8));
    tcc_kernel_destroy(kernel);

    /* Rows of 4 x 7 pixels (56 bytes) stage the input NHWC instead: two workspaces. */
    d.width = 7;
    kernel = compile_conv(ctx, &d);
    ck_assert_int_eq(tcc_kernel_workspace_count(kernel), 2);
    assert_param(kernel, 1, "filter", TCC_PARAM_INPUT, TCC_FLOAT16, "KCRS", 4, SHAPE(48, 32, 1, 1));
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}
END_TEST

/* NCHW with PyTorch's KCRS filter and groups: the caller's layouts, though the kernel stages
 * both channels-last into workspaces first; beta without a residual reads the output. */
START_TEST(test_conv2d_nchw_reads_output)
{
    tcc_context *ctx = test_context();
    tcc_conv2d_desc d;
    conv_desc(&d);
    d.layout = TCC_LAYOUT_NCHW;
    d.filter_layout = TCC_FILTER_KCRS;
    d.groups = 2;
    d.epilogue.beta = 1.0;
    tcc_kernel *kernel = compile_conv(ctx, &d);
    ck_assert_int_eq(tcc_kernel_param_count(kernel), 3);
    ck_assert_int_eq(tcc_kernel_workspace_count(kernel), 2);
    assert_param(kernel, 0, "input", TCC_PARAM_INPUT, TCC_FLOAT16, "NCHW", 4, SHAPE(2, 32, 9, 7));
    assert_param(kernel, 1, "filter", TCC_PARAM_INPUT, TCC_FLOAT16, "KCRS", 4, SHAPE(48, 16, 3, 3));
    assert_param(kernel, 2, "output", TCC_PARAM_INPUT_OUTPUT, TCC_FLOAT32, "NCHW", 4,
                 SHAPE(2, 48, 5, 4));
    ck_assert(!tcc_kernel_param(kernel, 3,
                                &(tcc_kernel_param_info){.size = sizeof(tcc_kernel_param_info)}));
    tcc_kernel_destroy(kernel);

    /* A SCALE prologue reads the output too; bfloat16 in and out. */
    conv_desc(&d);
    d.input_type = TCC_BFLOAT16;
    d.output_type = TCC_BFLOAT16;
    d.epilogue.prologue = TCC_PROLOGUE_SCALE;
    d.epilogue.prologue_arg = 0.5;
    kernel = compile_conv(ctx, &d);
    assert_param(kernel, 0, "input", TCC_PARAM_INPUT, TCC_BFLOAT16, "NHWC", 4, SHAPE(2, 9, 7, 32));
    assert_param(kernel, 2, "output", TCC_PARAM_INPUT_OUTPUT, TCC_BFLOAT16, "NHWC", 4,
                 SHAPE(2, 5, 4, 48));
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}
END_TEST

/* The tutorial's blocked layouts: 6-D, the blocks last. */
START_TEST(test_conv2d_blocked)
{
    tcc_context *ctx = test_context();
    tcc_conv2d_desc d;
    conv_desc(&d);
    d.batch = 32;
    d.out_channels = 16;
    d.layout = TCC_LAYOUT_NHWCNC;
    d.filter_layout = TCC_FILTER_BLOCKED;
    d.epilogue.bias = true;
    tcc_kernel *kernel = compile_conv(ctx, &d);
    ck_assert_int_eq(tcc_kernel_param_count(kernel), 4);
    assert_param(kernel, 0, "input", TCC_PARAM_INPUT, TCC_FLOAT16, "NHWCnc", 6,
                 SHAPE(2, 9, 7, 2, 16, 16));
    assert_param(kernel, 1, "filter", TCC_PARAM_INPUT, TCC_FLOAT16, "blocked", 6,
                 SHAPE(3, 3, 2, 1, 16, 16));
    assert_param(kernel, 2, "bias", TCC_PARAM_INPUT, TCC_FLOAT32, "vector", 1, SHAPE(16));
    assert_param(kernel, 3, "output", TCC_PARAM_OUTPUT, TCC_FLOAT32, "NHWCnc", 6,
                 SHAPE(2, 5, 4, 1, 16, 16));
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}
END_TEST

/* A batch of three, A column-major (its transpose stored row-major), a bias of n. */
START_TEST(test_matmul_batched_col_major_bias)
{
    tcc_context *ctx = test_context();
    tcc_matmul_desc d;
    tcc_matmul_desc_init(&d);
    d.batch = 3, d.m = 32, d.n = 48, d.k = 64;
    d.a_col_major = true;
    d.epilogue.bias = true;
    d.epilogue.relu = true;
    tcc_kernel *kernel = compile_matmul(ctx, &d, NULL);
    ck_assert_int_eq(tcc_kernel_param_count(kernel), 4);
    assert_param(kernel, 0, "A", TCC_PARAM_INPUT, TCC_FLOAT16, "col_major", 3, SHAPE(3, 64, 32));
    assert_param(kernel, 1, "B", TCC_PARAM_INPUT, TCC_FLOAT16, "row_major", 3, SHAPE(3, 64, 48));
    assert_param(kernel, 2, "bias", TCC_PARAM_INPUT, TCC_FLOAT32, "vector", 1, SHAPE(48));
    assert_param(kernel, 3, "C", TCC_PARAM_OUTPUT, TCC_FLOAT32, "row_major", 3, SHAPE(3, 32, 48));
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}
END_TEST

/* One product (the batch there as 1), B column-major, int8 into int32, a residual; under
 * split-K the partial sums' workspace is no parameter. */
START_TEST(test_matmul_residual_split_k)
{
    tcc_context *ctx = test_context();
    tcc_matmul_desc d;
    tcc_matmul_desc_init(&d);
    d.m = 16, d.n = 32, d.k = 256;
    d.b_col_major = true;
    d.input_type = TCC_INT8;
    d.accumulate_type = d.output_type = TCC_INT32;
    d.epilogue.residual = true;
    d.epilogue.beta = 2.0;
    tcc_gemm_schedule schedule;
    tcc_gemm_schedule_init(&schedule);
    ck_assert_int_eq(tcc_matmul_default_schedule(ctx, &d, TCC_SM_80, &schedule), TCC_OK);
    schedule.split_k = 2;
    tcc_kernel *kernel = compile_matmul(ctx, &d, &schedule);
    ck_assert_int_eq(tcc_kernel_launch_count(kernel), 2);
    ck_assert_int_eq(tcc_kernel_workspace_count(kernel), 1);
    ck_assert_int_eq(tcc_kernel_param_count(kernel), 4);
    assert_param(kernel, 0, "A", TCC_PARAM_INPUT, TCC_INT8, "row_major", 3, SHAPE(1, 16, 256));
    assert_param(kernel, 1, "B", TCC_PARAM_INPUT, TCC_INT8, "col_major", 3, SHAPE(1, 32, 256));
    assert_param(kernel, 2, "residual", TCC_PARAM_INPUT, TCC_INT32, "row_major", 3,
                 SHAPE(1, 16, 32));
    assert_param(kernel, 3, "C", TCC_PARAM_OUTPUT, TCC_INT32, "row_major", 3, SHAPE(1, 16, 32));
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}
END_TEST

/* tcc_build: the placeholders' names and shapes, row-major. */
START_TEST(test_build_tutorial)
{
    tcc_context *ctx = test_context();
    tcc_func *func = NULL;
    ck_assert_int_eq(tcc_func_create(ctx, "tutorial", &func), TCC_OK);
    tcc_tensor *params[3];
    test_tutorial_conv2d(func, params);
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_build(func, 3, params, NULL, &kernel) == TCC_OK, "%s", tcc_last_error(ctx));
    ck_assert_int_eq(tcc_kernel_param_count(kernel), 3);
    assert_param(kernel, 0, "A", TCC_PARAM_INPUT, TCC_FLOAT16, "row_major", 6,
                 SHAPE(16, 14, 14, 16, 16, 16));
    assert_param(kernel, 1, "W", TCC_PARAM_INPUT, TCC_FLOAT16, "row_major", 6,
                 SHAPE(3, 3, 16, 32, 16, 16));
    assert_param(kernel, 2, "Conv", TCC_PARAM_OUTPUT, TCC_FLOAT32, "row_major", 6,
                 SHAPE(16, 14, 14, 32, 16, 16));
    tcc_func_destroy(func);
    /* The kernel outlives its function: the names are its own. */
    assert_param(kernel, 0, "A", TCC_PARAM_INPUT, TCC_FLOAT16, "row_major", 6,
                 SHAPE(16, 14, 14, 16, 16, 16));
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}
END_TEST

/* y = x + y, or 3 x into y. */
typedef struct Axpy {
    tcc_tensor *xy[2];
    bool read_target;
} Axpy;

static tcc_expr *axpy(tcc_func *func, tcc_expr *const *axes, void *user)
{
    const Axpy *a = user;
    tcc_expr *x = tcc_access(func, a->xy[0], 1, axes);
    if (!a->read_target)
        return tcc_mul(func, x, tcc_float(func, 3.0, TCC_FLOAT32));
    return tcc_add(func, x, tcc_access(func, a->xy[1], 1, axes));
}

static void same_index(tcc_func *func, tcc_expr *const *axes, tcc_expr **index, void *user)
{
    (void)func, (void)user;
    index[0] = axes[0];
}

/* A function that stores into the placeholder y, reading it first if `read_target`. */
static tcc_kernel *build_into(tcc_context *ctx, bool read_target)
{
    tcc_func *func = NULL;
    ck_assert_int_eq(tcc_func_create(ctx, "into", &func), TCC_OK);
    const int64_t n = 256;
    Axpy a = {.xy = {tcc_placeholder(func, "x", 1, &n, TCC_FLOAT32),
                     tcc_placeholder(func, "y", 1, &n, TCC_FLOAT32)},
              .read_target = read_target};
    tcc_tensor *out = tcc_compute_into(func, "out", 1, &n, NULL, axpy, a.xy[1], same_index, &a);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(tcc_schedule_create(func, 1, &out), TCC_OK);
    tcc_iter_var *outer, *inner;
    tcc_stage *stage = tcc_stage_of(func, out);
    ck_assert_int_eq(tcc_split(stage, tcc_tensor_axis(out, 0), 64, &outer, &inner), TCC_OK);
    ck_assert_int_eq(tcc_bind(stage, outer, TCC_BLOCK_X), TCC_OK);
    ck_assert_int_eq(tcc_bind(stage, inner, TCC_THREAD_X), TCC_OK);
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_build(func, 2, a.xy, NULL, &kernel) == TCC_OK, "%s", tcc_last_error(ctx));
    tcc_func_destroy(func);
    return kernel;
}

START_TEST(test_build_compute_into)
{
    tcc_context *ctx = test_context();
    tcc_kernel *kernel = build_into(ctx, true);
    ck_assert_int_eq(tcc_kernel_param_count(kernel), 2);
    assert_param(kernel, 0, "x", TCC_PARAM_INPUT, TCC_FLOAT32, "row_major", 1, SHAPE(256));
    assert_param(kernel, 1, "y", TCC_PARAM_INPUT_OUTPUT, TCC_FLOAT32, "row_major", 1, SHAPE(256));
    tcc_kernel_destroy(kernel);
    kernel = build_into(ctx, false);
    assert_param(kernel, 1, "y", TCC_PARAM_OUTPUT, TCC_FLOAT32, "row_major", 1, SHAPE(256));
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}
END_TEST

static Suite *params_suite(void)
{
    Suite *suite = suite_create("params");
    TCase *ops = test_case(suite, "operators", NULL, NULL);
    tcase_add_test(ops, test_conv2d_nhwc_bias_residual);
    tcase_add_test(ops, test_conv2d_nchw_reads_output);
    tcase_add_test(ops, test_conv2d_nchw_pointwise);
    tcase_add_test(ops, test_conv2d_blocked);
    tcase_add_test(ops, test_matmul_batched_col_major_bias);
    tcase_add_test(ops, test_matmul_residual_split_k);
    TCase *build = test_case(suite, "build", NULL, NULL);
    tcase_add_test(build, test_build_tutorial);
    tcase_add_test(build, test_build_compute_into);
    return suite;
}

TEST_MAIN(params_suite)
