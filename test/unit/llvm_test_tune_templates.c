/*
 * The built-in templates (lib/tune/templates.c) and apply_history_best (apply_best.c): the
 * registry; the workload keys (the seed's as AutoTVM keys it, so that its logs import); the
 * gemm template's point 0 is the default schedule and the tutorial template's point of the
 * tutorial's tiles is the tutorial's schedule (the same PTX); apply_history_best builds the
 * fastest record that still builds, or point 0 without one.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* A layer of layers.csv: r50_res2_3x3_b32, NHWC float16 -> float32. */
static tcc_workload resnet_layer(void)
{
    tcc_workload w;
    tcc_workload_init(&w, TCC_WORKLOAD_CONV2D);
    tcc_conv2d_desc *d = &w.conv2d;
    d->batch = 32, d->height = d->width = 56, d->in_channels = d->out_channels = 64;
    d->kernel_h = d->kernel_w = 3;
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
    d->output_type = TCC_FLOAT32;
    return w;
}

static tcc_kernel *instantiate(const tcc_template *t, const tcc_workload *w, tcc_arch arch,
                               int64_t index)
{
    tcc_config_space *space;
    tcc_config *cfg;
    tcc_kernel *kernel = NULL;
    ck_assert_int_eq(tcc_config_space_create(ctx, t, w, arch, &space), TCC_OK);
    ck_assert_int_eq(tcc_config_create(ctx, space, index, &cfg), TCC_OK);
    ck_assert_msg(tcc_config_instantiate(ctx, t, cfg, w, arch, NULL, &kernel) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
    return kernel;
}

START_TEST(test_registry)
{
    ck_assert_int_eq(tcc_template_count(), 3);
    const char *names[] = {"conv2d_no_batching", "gemm", "tutorial"};
    for (int i = 0; i < 3; i++) {
        ck_assert_ptr_eq(tcc_template_find(names[i]), tcc_template_at(i));
        ck_assert_ptr_nonnull(tcc_template_at(i)->instantiate);
        ck_assert_ptr_nonnull(tcc_template_at(i)->summary);
    }
    ck_assert_ptr_null(tcc_template_find("nosuch"));
    ck_assert_ptr_null(tcc_template_find(NULL));
    ck_assert_ptr_null(tcc_template_at(3));
}
END_TEST

START_TEST(test_workload_keys)
{
    tcc_workload w;
    tcc_workload_init(&w, TCC_WORKLOAD_CONV2D);
    tcc_conv2d_desc *d = &w.conv2d;
    d->batch = 1, d->height = d->width = 7, d->in_channels = d->out_channels = 512;
    d->kernel_h = d->kernel_w = 3;
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
    char key[1024];
    tcc_workload_key(tcc_template_find("conv2d_no_batching"), &w, key, sizeof key);
    ck_assert_str_eq(key, "[\"tutorial/conv2d_no_batching\", 1, 7, 7, 512, 512, 3, 3, [1, 1], "
                          "[1, 1]]");
    tcc_workload_key(tcc_template_find("gemm"), &w, key, sizeof key);
    ck_assert_str_eq(key, "[\"tcc/gemm/conv2d\", 1, 7, 7, 512, 512, 3, 3, [1, 1], [1, 1, 1, 1], "
                          "[1, 1], 1, \"NHWC\", \"KRSC\", \"float16\", \"float32\", "
                          "\"float32\", {\"alpha\": 1, \"beta\": 0, \"bias\": 0, "
                          "\"residual\": 0, \"relu\": 0, \"clamp\": [0, 0, 0], "
                          "\"prologue\": [0, 0]}]");
    tcc_workload m;
    tcc_workload_init(&m, TCC_WORKLOAD_MATMUL);
    m.matmul.m = 128, m.matmul.n = 256, m.matmul.k = 64, m.matmul.b_col_major = true;
    tcc_workload_key(tcc_template_find("gemm"), &m, key, sizeof key);
    ck_assert_str_eq(key, "[\"tcc/gemm/matmul\", 1, 128, 256, 64, 0, 1, \"float16\", "
                          "\"float32\", \"float32\", {\"alpha\": 1, \"beta\": 0, \"bias\": 0, "
                          "\"residual\": 0, \"relu\": 0, \"clamp\": [0, 0, 0], "
                          "\"prologue\": [0, 0]}]");
}
END_TEST

/* Point 0 of the gemm template chooses every knob: the default schedule's kernel. */
START_TEST(test_gemm_point_zero_is_default)
{
    tcc_workload w = resnet_layer();
    tcc_arch archs[] = {TCC_SM_80, TCC_SM_90A};
    for (int a = 0; a < 2; a++) {
        tcc_kernel *tuned = instantiate(tcc_template_find("gemm"), &w, archs[a], 0), *plain;
        tcc_build_options options;
        tcc_build_options_init(&options);
        options.arch = archs[a];
        ck_assert_int_eq(tcc_conv2d_compile(ctx, &w.conv2d, NULL, &options, &plain), TCC_OK);
        ck_assert_str_eq(tcc_kernel_ptx(tuned), tcc_kernel_ptx(plain));
        tcc_kernel_destroy(tuned);
        tcc_kernel_destroy(plain);
    }
    tcc_workload m;
    tcc_workload_init(&m, TCC_WORKLOAD_MATMUL);
    m.matmul.m = m.matmul.n = m.matmul.k = 512;
    tcc_kernel *kernel = instantiate(tcc_template_find("gemm"), &m, TCC_SM_90A, 0);
    ck_assert_ptr_nonnull(tcc_kernel_ptx(kernel));
    tcc_kernel_destroy(kernel);
}
END_TEST

/* A kernel's PTX, or NULL where the point does not build (the caller frees it). */
static char *point_ptx(const tcc_config_space *space, const tcc_workload *w, int64_t index)
{
    tcc_config *cfg;
    tcc_kernel *kernel = NULL;
    ck_assert_int_eq(tcc_config_create(ctx, space, index, &cfg), TCC_OK);
    tcc_status status =
        tcc_config_instantiate(ctx, tcc_template_find("gemm"), cfg, w, TCC_SM_90A, NULL, &kernel);
    char *ptx = status == TCC_OK ? strdup(tcc_kernel_ptx(kernel)) : NULL;
    tcc_kernel_destroy(kernel);
    tcc_config_destroy(cfg);
    return ptx;
}

/* Four batches of 64 from a tuner of `kind`, fed scores of the knobs (so that the model-based
 * one plans from a model): every point canonical, none twice. Without XGBoost, its tuner is
 * refused and skipped. */
static void assert_tuner_proposes_kernels_once(const tcc_config_space *space, tcc_tuner_kind kind)
{
    tcc_tuner *tuner = NULL;
    tcc_status status = tcc_tuner_create(ctx, kind, space, 3, &tuner);
    if (kind == TCC_TUNER_XGB && status == TCC_ERROR_UNSUPPORTED) {
        fprintf(stderr, "llvm_test_tune_templates: SKIP the xgb tuner (no XGBoost): %s\n",
                tcc_last_error(ctx));
        return;
    }
    ck_assert_int_eq(status, TCC_OK);
    enum { BATCH = 64, BATCHES = 4 };
    int64_t proposed[BATCH * BATCHES];
    int total = 0;
    for (int b = 0; b < BATCHES; b++) {
        int count = 0;
        ck_assert_int_eq(tcc_tuner_next_batch(tuner, BATCH, proposed + total, &count), TCC_OK);
        ck_assert_int_eq(count, BATCH);
        double scores[BATCH];
        for (int i = 0; i < count; i++) /* a score of the knobs: some points rank higher */
            scores[i] = (double)(proposed[total + i] % 97) + 1;
        ck_assert_int_eq(tcc_tuner_update(tuner, count, proposed + total, scores), TCC_OK);
        total += count;
    }
    for (int i = 0; i < total; i++) {
        ck_assert_int_eq(tcc_config_space_canonical(space, proposed[i]), proposed[i]);
        for (int j = 0; j < i; j++)
            ck_assert(proposed[i] != proposed[j]);
    }
    tcc_tuner_destroy(tuner);
}

/* The gemm template's canonical points: a wgmma kernel's point with warp tiles and the
 * intrinsic named is the point with them chosen; a canonical point is its own; and a point
 * builds what its canonical point builds (sampled; each with fewer knobs set). The random and
 * the model-based tuner propose canonical points only. */
START_TEST(test_gemm_canonical_points)
{
    tcc_workload w = resnet_layer();
    tcc_config_space *space;
    ck_assert_int_eq(
        tcc_config_space_create(ctx, tcc_template_find("gemm"), &w, TCC_SM_90A, &space), TCC_OK);
    ck_assert_int_eq(tcc_config_space_canonical(space, -1), -1);
    ck_assert_int_eq(tcc_config_space_canonical(space, 0), 0);
    /* Knob 0 the intrinsic (3: wgmma, the default's here), knob 4 warp_row_tiles (2: 2). */
    int64_t lengths[32], n = tcc_config_space_knob_count(space);
    for (int k = 0; k < n; k++)
        lengths[k] = tcc_config_space_knob_length(space, k);
    int64_t named = 3 + lengths[0] * lengths[1] * lengths[2] * lengths[3] * 2;
    ck_assert_int_eq(tcc_config_space_canonical(space, named), 0);
    uint64_t seed = 7;
    int compared = 0;
    for (int i = 0; i < 400 && compared < 6; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int64_t index = (int64_t)((seed >> 11) % (uint64_t)tcc_config_space_size(space));
        int64_t canonical = tcc_config_space_canonical(space, index);
        ck_assert(canonical >= 0 && canonical <= index);
        ck_assert_int_eq(tcc_config_space_canonical(space, canonical), canonical);
        if (canonical == index)
            continue;
        char *a = point_ptx(space, &w, index);
        if (!a)
            continue;
        char *b = point_ptx(space, &w, canonical);
        ck_assert_msg(b && strcmp(a, b) == 0, "points %lld and %lld", (long long)index,
                      (long long)canonical);
        free(a);
        free(b);
        compared++;
    }
    ck_assert_int_eq(compared, 6);
    assert_tuner_proposes_kernels_once(space, TCC_TUNER_RANDOM);
    assert_tuner_proposes_kernels_once(space, TCC_TUNER_XGB);
    tcc_config_space_destroy(space);
}
END_TEST

/* The tutorial's tiles (4, 2, 2, 4, 2) are a point of the tutorial template: the same kernel as
 * tcc_tutorial_conv2d_schedule's defaults. */
START_TEST(test_tutorial_point_is_tutorial)
{
    tcc_workload w;
    tcc_workload_init(&w, TCC_WORKLOAD_CONV2D);
    tcc_tutorial_conv2d_desc(&w.conv2d);
    const tcc_template *t = tcc_template_find("tutorial");
    tcc_config_space *space;
    ck_assert_int_eq(tcc_config_space_create(ctx, t, &w, TCC_SM_80, &space), TCC_OK);
    tcc_config *cfg;
    ck_assert_int_eq(tcc_config_parse(ctx, space,
                                      "[[\"block_row_warps\", 4], [\"block_col_warps\", 2], "
                                      "[\"warp_row_tiles\", 2], [\"warp_col_tiles\", 4], "
                                      "[\"chunk\", 2]]",
                                      &cfg),
                     TCC_OK);
    int64_t index = tcc_config_index(cfg);
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
    tcc_kernel *tuned = instantiate(t, &w, TCC_SM_80, index), *plain;
    tcc_func *func;
    tcc_tutorial_conv2d conv;
    tcc_tutorial_conv2d_params params;
    tcc_tutorial_conv2d_params_init(&params);
    ck_assert_int_eq(tcc_func_create(ctx, "conv2d", &func), TCC_OK);
    ck_assert_int_eq(tcc_tutorial_conv2d_define(func, &w.conv2d, &conv), TCC_OK);
    ck_assert_int_eq(tcc_schedule_create(func, 1, &conv.output), TCC_OK);
    ck_assert_int_eq(tcc_tutorial_conv2d_schedule(func, &conv, &params), TCC_OK);
    tcc_tensor *tensors[3] = {conv.input, conv.filter, conv.output};
    ck_assert_int_eq(tcc_build(func, 3, tensors, NULL, &plain), TCC_OK);
    ck_assert_str_eq(tcc_kernel_ptx(tuned), tcc_kernel_ptx(plain));
    tcc_func_destroy(func);
    tcc_kernel_destroy(tuned);
    tcc_kernel_destroy(plain);
}
END_TEST

static void add_record(tcc_record_store *store, const char *key, const char *config, int64_t index,
                       double seconds, tcc_measure_error error)
{
    tcc_record r = {.size = sizeof r,
                    .template_name = "gemm",
                    .workload_key = key,
                    .target = "cuda -arch=sm_90a",
                    .device_name = "NVIDIA H200",
                    .tcc_version = tcc_version_string(),
                    .config = config,
                    .config_index = index};
    r.result.error = error;
    r.result.ncost = error == TCC_MEASURE_OK;
    r.result.costs[0] = seconds;
    ck_assert_msg(tcc_record_add(store, &r) == TCC_OK, "%s", tcc_last_error(ctx));
}

/* mma.sync in 4 x 4 warps of 4 x 4 tiles: 512 threads too many for tcc to build. */
#define REFUSED_CONFIG                                                                             \
    "[[\"intrinsic\", 2], [\"mma_shape\", 0], [\"block_row_warps\", 4], "                          \
    "[\"block_col_warps\", 4], [\"warp_row_tiles\", 4], [\"warp_col_tiles\", 4], "                 \
    "[\"num_total_passes\", 0], [\"num_fused_passes\", 0], [\"policy\", 0], "                      \
    "[\"column_major_blocks\", 0], [\"stages\", 0], [\"smem_layout\", 0], [\"split_k\", 0], "      \
    "[\"wgmma_shape\", 0], [\"wgmma_steps\", 0], [\"copy\", 0], [\"producer\", 0], [\"store\", "   \
    "0], "                                                                                         \
    "[\"grid\", 0], [\"cluster\", 0], [\"consumers\", 0]]"

/* The config text of point `index` of the gemm space. */
static char *config_text(const tcc_config_space *space, int64_t index)
{
    tcc_config *cfg;
    ck_assert_int_eq(tcc_config_create(ctx, space, index, &cfg), TCC_OK);
    char *text = tcc_config_format(cfg);
    tcc_config_destroy(cfg);
    return text;
}

START_TEST(test_apply_history_best)
{
    char path[] = "/tmp/tcc-apply-best-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
    tcc_record_store *store;
    ck_assert_int_eq(tcc_record_store_open(ctx, path, &store), TCC_OK);
    tcc_workload w = resnet_layer();
    const tcc_template *gemm = tcc_template_find("gemm");
    tcc_kernel *kernel = NULL;
    int64_t used = 7;
    /* No record: point 0, the default schedule. */
    ck_assert_int_eq(
        tcc_apply_history_best(ctx, store, gemm, &w, TCC_SM_90A, NULL, NULL, &kernel, &used),
        TCC_OK);
    ck_assert_int_eq(used, -1);
    tcc_kernel_destroy(kernel);
    tcc_config_space *space;
    ck_assert_int_eq(tcc_config_space_create(ctx, gemm, &w, TCC_SM_90A, &space), TCC_OK);
    char key[1024];
    tcc_workload_key(gemm, &w, key, sizeof key);
    /* The fastest record's config is one tcc refuses (REFUSED_CONFIG); the next fastest
     * builds; a failed trial and another device's are not
     * candidates; nor is another workload's. */
    tcc_config *cfg;
    ck_assert_int_eq(tcc_config_parse(ctx, space, REFUSED_CONFIG, &cfg), TCC_OK);
    int64_t refused = tcc_config_index(cfg);
    tcc_config_destroy(cfg);
    char *refused_text = config_text(space, refused), *good = config_text(space, 5),
         *failed = config_text(space, 9);
    add_record(store, key, refused_text, refused, 1e-5, TCC_MEASURE_OK);
    add_record(store, key, good, 5, 2e-5, TCC_MEASURE_OK);
    add_record(store, key, failed, 9, 0, TCC_MEASURE_RUNTIME_DEVICE);
    add_record(store, "[\"tcc/gemm/conv2d\", 1]", failed, 9, 1e-6, TCC_MEASURE_OK);
    ck_assert_int_eq(tcc_apply_history_best(ctx, store, gemm, &w, TCC_SM_90A, "NVIDIA H200", NULL,
                                            &kernel, &used),
                     TCC_OK);
    ck_assert_int_eq(used, 5);
    tcc_kernel_destroy(kernel);
    /* Another device has no record: point 0. */
    ck_assert_int_eq(tcc_apply_history_best(ctx, store, gemm, &w, TCC_SM_90A, "NVIDIA H100", NULL,
                                            &kernel, &used),
                     TCC_OK);
    ck_assert_int_eq(used, -1);
    tcc_kernel_destroy(kernel);
    ck_assert_int_eq(
        tcc_apply_history_best(ctx, store, NULL, &w, TCC_SM_90A, NULL, NULL, &kernel, &used),
        TCC_ERROR_INVALID_ARGUMENT);
    free(refused_text);
    free(good);
    free(failed);
    tcc_config_space_destroy(space);
    tcc_record_store_close(store);
    unlink(path);
    char wal[64];
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", path);
    unlink(wal);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *suite = suite_create("tune_templates");
    TCase *tc = test_case(suite, "templates", setup, teardown);
    tcase_add_test(tc, test_registry);
    tcase_add_test(tc, test_workload_keys);
    tcase_add_test(tc, test_gemm_point_zero_is_default);
    tcase_add_test(tc, test_gemm_canonical_points);
    tcase_add_test(tc, test_tutorial_point_is_tutorial);
    tcase_add_test(tc, test_apply_history_best);
    return suite;
}

TEST_MAIN(make_suite)
