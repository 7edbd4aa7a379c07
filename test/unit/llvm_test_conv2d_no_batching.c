/*
 * The seed's AutoTVM template conv2d_no_batching (lib/tune/template_conv2d_no_batching.c) on
 * the tutorial's layer (N=1, 7x7, 512->512, 3x3, stride 1, pad 1): its space, the tutorial's
 * best config built for sm_80 and sm_90a into PTX that ptxas accepts (where the CUDA toolkit
 * is installed), its loop IR (virtual threads injected, register caches, the pragmas), other
 * configs, and the configs and workloads it refuses. Its results on a GPU:
 * test/gpu/conv2d_no_batching.c.
 */
#include "support.h"
#include "tcc/tune.h"
#include "tune/templates.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PTXAS "/usr/local/cuda/bin/ptxas"

static const tcc_template conv2d_no_batching = {.size = sizeof(tcc_template),
                                                .name = "conv2d_no_batching",
                                                .summary = "the seed's AutoTVM template",
                                                .kind = TCC_WORKLOAD_CONV2D,
                                                .instantiate = tci_template_conv2d_no_batching};

/* The tutorial's best config (its log's line 1, index 4881186). */
static const char *const best_config =
    "[[\"tile_f\", [-1, 2, 64, 1]], [\"tile_y\", [-1, 1, 1, 7]], [\"tile_x\", [-1, 1, 7, 1]], "
    "[\"tile_rc\", [-1, 2, 2]], [\"tile_ry\", [-1, 3, 1]], [\"tile_rx\", [-1, 1, 3]], "
    "[\"auto_unroll_max_step\", 1500], [\"unroll_explicit\", 0]]";

static void tutorial_layer(tcc_workload *w)
{
    tcc_workload_init(w, TCC_WORKLOAD_CONV2D);
    tcc_conv2d_desc *d = &w->conv2d;
    d->batch = 1;
    d->height = d->width = 7;
    d->in_channels = d->out_channels = 512;
    d->kernel_h = d->kernel_w = 3;
    d->stride_h = d->stride_w = 1;
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
    d->dilation_h = d->dilation_w = 1;
    d->groups = 1;
    d->layout = TCC_LAYOUT_NCHW;
    d->filter_layout = TCC_FILTER_KCRS;
    d->input_type = d->accumulate_type = d->output_type = TCC_FLOAT32;
}

/* ptxas lists the archs it accepts in its help. */
static bool ptxas_knows(const char *arch)
{
    char command[256];
    snprintf(command, sizeof command, PTXAS " --help 2>/dev/null | grep -q \"'%s'\"", arch);
    return system(command) == 0;
}

/* Assembles the PTX with ptxas for `arch`; says so and passes where there is no toolkit. */
static void check_ptxas(const char *ptx, tcc_arch arch)
{
    const char *name = tcc_arch_name(arch);
    if (access(PTXAS, X_OK) != 0 || !ptxas_knows(name)) {
        fprintf(stderr, "skipped: no %s that knows %s\n", PTXAS, name);
        return;
    }
    char path[] = "/tmp/tcc_conv2d_no_batching_XXXXXX.ptx";
    int fd = mkstemps(path, 4);
    ck_assert_int_ge(fd, 0);
    size_t len = strlen(ptx);
    ck_assert_int_eq(write(fd, ptx, len), (ssize_t)len);
    close(fd);
    char command[512];
    snprintf(command, sizeof command, PTXAS " -arch=%s %s -o /dev/null", name, path);
    int rc = system(command);
    unlink(path);
    ck_assert_msg(rc == 0, "ptxas -arch=%s rejected the template's PTX", name);
}

/* Builds the config written as the tutorial logs it; the kernel (NULL on failure) and the
 * status. */
static tcc_status build(tcc_context *ctx, const tcc_workload *w, tcc_arch arch, const char *config,
                        tcc_kernel **kernel)
{
    tcc_config_space *space = NULL;
    tcc_config *cfg = NULL;
    *kernel = NULL;
    ck_assert_int_eq(tcc_config_space_create(ctx, &conv2d_no_batching, w, arch, &space), TCC_OK);
    ck_assert_msg(tcc_config_parse(ctx, space, config, &cfg) == TCC_OK, "%s", tcc_last_error(ctx));
    tcc_status status =
        tcc_config_instantiate(ctx, &conv2d_no_batching, cfg, w, arch, NULL, kernel);
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
    return status;
}

START_TEST(test_space)
{
    tcc_context *ctx = test_context();
    tcc_workload w;
    tutorial_layer(&w);
    tcc_config_space *space = NULL;
    ck_assert_int_eq(tcc_config_space_create(ctx, &conv2d_no_batching, &w, TCC_SM_80, &space),
                     TCC_OK);
    ck_assert_int_eq(tcc_config_space_size(space), 10454400);
    static const char *const names[8] = {"tile_f",
                                         "tile_y",
                                         "tile_x",
                                         "tile_rc",
                                         "tile_ry",
                                         "tile_rx",
                                         "auto_unroll_max_step",
                                         "unroll_explicit"};
    static const int64_t lengths[8] = {220, 4, 4, 55, 3, 3, 3, 2};
    ck_assert_int_eq(tcc_config_space_knob_count(space), 8);
    for (int i = 0; i < 8; i++) {
        ck_assert_str_eq(tcc_config_space_knob_name(space, i), names[i]);
        ck_assert_int_eq(tcc_config_space_knob_length(space, i), lengths[i]);
    }
    tcc_config *cfg = NULL;
    ck_assert_int_eq(tcc_config_parse(ctx, space, best_config, &cfg), TCC_OK);
    ck_assert_int_eq(tcc_config_index(cfg), 4881186);
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
    tcc_context_destroy(ctx);
}
END_TEST

/* The tutorial's best config: its loop IR and PTX for sm_80 and sm_90a. */
static void check_best(tcc_arch arch)
{
    tcc_context *ctx = test_context();
    tcc_workload w;
    tutorial_layer(&w);
    tcc_kernel *kernel = NULL;
    tcc_status status = build(ctx, &w, arch, best_config, &kernel);
    ck_assert_msg(status == TCC_OK, "%s", tcc_last_error(ctx));
    int64_t grid[3], block[3];
    tcc_kernel_grid(kernel, grid);
    tcc_kernel_block(kernel, block);
    /* 512 / (2 * 64 * 1) blocks of filters, one of rows and columns; 64 x 1 x 7 threads */
    ck_assert_int_eq(grid[0], 1);
    ck_assert_int_eq(grid[1], 1);
    ck_assert_int_eq(grid[2], 4);
    ck_assert_int_eq(block[0], 7);
    ck_assert_int_eq(block[1], 1);
    ck_assert_int_eq(block[2], 64);
    const char *ir = tcc_kernel_loop_ir(kernel);
    if (getenv("TCC_TEST_DUMP")) {
        FILE *dump = fopen(getenv("TCC_TEST_DUMP"), "w");
        if (dump) {
            fputs(ir, dump);
            fclose(dump);
        }
    }
    /* no virtual thread left; the output's registers replicated for vf's 2 virtual threads */
    ck_assert_msg(!strstr(ir, "vthread"), "%s", ir);
    assert_contains(ir, "compute.local: float32 local [2, 1, 1, 7, 1]");
    assert_contains(ir, "pad_temp.shared: float32 shared");
    assert_contains(ir, "kernel.shared: float32 shared");
    assert_contains(ir, "pad_temp.shared.local: float32 local");
    assert_contains(ir, "kernel.shared.local: float32 local");
    assert_contains(ir, "pragma(auto_unroll_max_step=1500) pragma(unroll_explicit=0)");
    assert_contains(ir, "llvm_unroll");
    assert_contains(tcc_kernel_llvm_ir(kernel), "@conv2d_no_batching");
    assert_contains(tcc_kernel_ptx(kernel), ".entry conv2d_no_batching");
    check_ptxas(tcc_kernel_ptx(kernel), arch);
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}

START_TEST(test_best_sm80)
{
    check_best(TCC_SM_80);
}
END_TEST

START_TEST(test_best_sm90a)
{
    check_best(TCC_SM_90A);
}
END_TEST

/* Other points of the space: explicit unrolling, several virtual threads along every axis,
 * no unrolling at all, a ragged cooperative fetch. */
START_TEST(test_other_configs)
{
    static const char *const configs[] = {
        "[[\"tile_f\", [-1, 2, 64, 1]], [\"tile_y\", [-1, 1, 1, 7]], [\"tile_x\", [-1, 1, 7, "
        "1]], [\"tile_rc\", [-1, 2, 2]], [\"tile_ry\", [-1, 3, 1]], [\"tile_rx\", [-1, 1, 3]], "
        "[\"auto_unroll_max_step\", 512], [\"unroll_explicit\", 1]]",
        "[[\"tile_f\", [-1, 2, 16, 2]], [\"tile_y\", [-1, 7, 1, 1]], [\"tile_x\", [-1, 7, 1, "
        "1]], [\"tile_rc\", [-1, 4, 2]], [\"tile_ry\", [-1, 1, 3]], [\"tile_rx\", [-1, 3, 1]], "
        "[\"auto_unroll_max_step\", 1500], [\"unroll_explicit\", 1]]",
        "[[\"tile_f\", [-1, 4, 32, 1]], [\"tile_y\", [-1, 1, 1, 7]], [\"tile_x\", [-1, 1, 1, "
        "1]], [\"tile_rc\", [-1, 1, 16]], [\"tile_ry\", [-1, 1, 1]], [\"tile_rx\", [-1, 1, 1]], "
        "[\"auto_unroll_max_step\", 0], [\"unroll_explicit\", 0]]",
        "[[\"tile_f\", [-1, 8, 64, 1]], [\"tile_y\", [-1, 1, 1, 7]], [\"tile_x\", [-1, 1, 1, "
        "7]], [\"tile_rc\", [-1, 2, 2]], [\"tile_ry\", [-1, 1, 1]], [\"tile_rx\", [-1, 3, 1]], "
        "[\"auto_unroll_max_step\", 1500], [\"unroll_explicit\", 0]]",
    };
    tcc_context *ctx = test_context();
    tcc_workload w;
    tutorial_layer(&w);
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        tcc_kernel *kernel = NULL;
        tcc_status status = build(ctx, &w, TCC_SM_80, configs[i], &kernel);
        ck_assert_msg(status == TCC_OK, "config %zu: %s", i, tcc_last_error(ctx));
        ck_assert_msg(!strstr(tcc_kernel_loop_ir(kernel), "vthread"), "config %zu", i);
        check_ptxas(tcc_kernel_ptx(kernel), TCC_SM_80);
        tcc_kernel_destroy(kernel);
    }
    tcc_context_destroy(ctx);
}
END_TEST

/* Configs tcc cannot build are refused in one line, no kernel: the tutorial's log's trials 2
 * and 17 (2048 and 3584 threads a block). */
START_TEST(test_refused_configs)
{
    static const char *const configs[] = {
        "[[\"tile_f\", [-1, 8, 4, 4]], [\"tile_y\", [-1, 1, 1, 1]], [\"tile_x\", [-1, 1, 1, "
        "7]], [\"tile_rc\", [-1, 16, 16]], [\"tile_ry\", [-1, 1, 1]], [\"tile_rx\", [-1, 1, 1]], "
        "[\"auto_unroll_max_step\", 512], [\"unroll_explicit\", 1]]",
        "[[\"tile_f\", [-1, 1, 512, 1]], [\"tile_y\", [-1, 7, 1, 1]], [\"tile_x\", [-1, 1, 1, "
        "7]], [\"tile_rc\", [-1, 16, 4]], [\"tile_ry\", [-1, 1, 1]], [\"tile_rx\", [-1, 1, 3]], "
        "[\"auto_unroll_max_step\", 1500], [\"unroll_explicit\", 0]]",
    };
    tcc_context *ctx = test_context();
    tcc_workload w;
    tutorial_layer(&w);
    tcc_kernel *kernel = NULL;
    /* trial 2's 4 x 1 x 1 threads build; 8 x 4 x 4 virtual threads of 16 x 16 channels do too,
     * so only the second is refused by the launch's threads */
    (void)build(ctx, &w, TCC_SM_80, configs[0], &kernel);
    tcc_kernel_destroy(kernel);
    ck_assert_int_ne(build(ctx, &w, TCC_SM_80, configs[1], &kernel), TCC_OK);
    ck_assert_ptr_null(kernel);
    assert_one_line(ctx);
    assert_contains(tcc_last_error(ctx), "threadIdx.z");
    tcc_context_destroy(ctx);
}
END_TEST

/* Workloads outside the tutorial's template are refused, defining as applying. */
START_TEST(test_refused_workloads)
{
    tcc_context *ctx = test_context();
    tcc_config_space *space = NULL;
    tcc_workload w;
    tutorial_layer(&w);
    w.conv2d.batch = 2;
    ck_assert_int_eq(tcc_config_space_create(ctx, &conv2d_no_batching, &w, TCC_SM_80, &space),
                     TCC_ERROR_UNSUPPORTED);
    assert_contains(tcc_last_error(ctx), "batch 1");
    tutorial_layer(&w);
    w.conv2d.layout = TCC_LAYOUT_NHWC;
    ck_assert_int_eq(tcc_config_space_create(ctx, &conv2d_no_batching, &w, TCC_SM_80, &space),
                     TCC_ERROR_UNSUPPORTED);
    tutorial_layer(&w);
    w.conv2d.input_type = TCC_FLOAT16;
    ck_assert_int_eq(tcc_config_space_create(ctx, &conv2d_no_batching, &w, TCC_SM_80, &space),
                     TCC_ERROR_UNSUPPORTED);
    assert_one_line(ctx);
    /* What the tutorial's workload key cannot tell apart: a dilation, or padding that differs
     * between the sides of an axis; and sizes whose sums would overflow. */
    tutorial_layer(&w);
    w.conv2d.dilation_h = 2;
    ck_assert_int_eq(tcc_config_space_create(ctx, &conv2d_no_batching, &w, TCC_SM_80, &space),
                     TCC_ERROR_UNSUPPORTED);
    assert_contains(tcc_last_error(ctx), "dilation 1");
    tutorial_layer(&w);
    w.conv2d.pad_bottom = 2;
    ck_assert_int_eq(tcc_config_space_create(ctx, &conv2d_no_batching, &w, TCC_SM_80, &space),
                     TCC_ERROR_UNSUPPORTED);
    tutorial_layer(&w);
    w.conv2d.height = INT64_MAX;
    ck_assert_int_ne(tcc_config_space_create(ctx, &conv2d_no_batching, &w, TCC_SM_80, &space),
                     TCC_OK);
    assert_one_line(ctx);
    tcc_workload_init(&w, TCC_WORKLOAD_MATMUL);
    ck_assert_int_eq(tcc_config_space_create(ctx, &conv2d_no_batching, &w, TCC_SM_80, &space),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(space);
    tcc_context_destroy(ctx);
}
END_TEST

static tcc_expr *twice(tcc_func *f, tcc_expr *const *axes, void *user)
{
    tcc_tensor *a = user;
    return tcc_mul(f, tcc_access(f, a, 1, axes), tcc_float(f, 2, TCC_FLOAT32));
}

/* The pragma primitive refuses a name it does not know and values out of range, in one line;
 * two virtual-thread axes of one stage are fine, where two threadIdx.x are not. */
START_TEST(test_primitive_refusals)
{
    tcc_context *ctx = test_context();
    tcc_func *f = NULL;
    ck_assert_int_eq(tcc_func_create(ctx, "f", &f), TCC_OK);
    int64_t shape[1] = {64};
    tcc_tensor *a = tcc_placeholder(f, "a", 1, shape, TCC_FLOAT32);
    tcc_tensor *b = tcc_compute(f, "b", 1, shape, NULL, TCC_FLOAT32, twice, a);
    ck_assert_int_eq(tcc_schedule_create(f, 1, &b), TCC_OK);
    tcc_stage *st = tcc_stage_of(f, b);
    tcc_iter_var *i = tcc_tensor_axis(b, 0), *o, *v, *w, *t;
    ck_assert_int_eq(tcc_pragma(st, i, "unroll_everything", 1), TCC_ERROR_SCHEDULE);
    assert_contains(tcc_last_error(ctx), "unknown pragma 'unroll_everything'");
    assert_one_line(ctx);
    ck_assert_int_eq(tcc_pragma(st, i, NULL, 1), TCC_ERROR_SCHEDULE);
    ck_assert_int_eq(tcc_pragma(st, i, "auto_unroll_max_step", -1), TCC_ERROR_SCHEDULE);
    ck_assert_int_eq(tcc_pragma(st, i, "unroll_explicit", 2), TCC_ERROR_SCHEDULE);
    ck_assert_int_eq(tcc_split(st, i, 16, &o, &i), TCC_OK);
    ck_assert_int_eq(tcc_split(st, i, 4, &v, &i), TCC_OK);
    ck_assert_int_eq(tcc_split(st, i, 2, &w, &t), TCC_OK);
    ck_assert_int_eq(tcc_pragma(st, tcc_tensor_axis(b, 0), "auto_unroll_max_step", 0),
                     TCC_ERROR_SCHEDULE);
    assert_contains(tcc_last_error(ctx), "not a loop");
    ck_assert_int_eq(tcc_pragma(st, o, "auto_unroll_max_step", 16), TCC_OK);
    ck_assert_int_eq(tcc_pragma(st, o, "unroll_explicit", 1), TCC_OK);
    ck_assert_int_eq(tcc_bind(st, o, TCC_BLOCK_X), TCC_OK);
    ck_assert_int_eq(tcc_bind(st, v, TCC_VTHREAD), TCC_OK);
    ck_assert_int_eq(tcc_bind(st, w, TCC_VTHREAD), TCC_OK);
    ck_assert_int_eq(tcc_bind(st, t, TCC_THREAD_X), TCC_OK);
    ck_assert_int_eq(tcc_bind(st, w, TCC_THREAD_X), TCC_ERROR_SCHEDULE);
    ck_assert_int_eq(tcc_bind(st, t, (tcc_thread_tag)(TCC_VTHREAD + 1)), TCC_ERROR_SCHEDULE);
    /* blocks of 2 threads, each running 4 x 2 virtual threads of one element */
    tcc_tensor *params[2] = {a, b};
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_build(f, 2, params, NULL, &kernel) == TCC_OK, "%s", tcc_last_error(ctx));
    int64_t block[3];
    tcc_kernel_block(kernel, block);
    ck_assert_int_eq(block[0], 2);
    ck_assert_msg(!strstr(tcc_kernel_loop_ir(kernel), "vthread"), "%s", tcc_kernel_loop_ir(kernel));
    tcc_kernel_destroy(kernel);
    tcc_func_destroy(f);
    tcc_context_destroy(ctx);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("conv2d_no_batching");
    TCase *tc = test_case(s, "template", NULL, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_space);
    tcase_add_test(tc, test_best_sm80);
    tcase_add_test(tc, test_best_sm90a);
    tcase_add_test(tc, test_other_configs);
    tcase_add_test(tc, test_refused_configs);
    tcase_add_test(tc, test_refused_workloads);
    tcase_add_test(tc, test_primitive_refusals);
    return s;
}

TEST_MAIN(make_suite)
