/*
 * tcc-conv2d-no-batching-test: the seed's AutoTVM template (conv2d_no_batching, tcc/tune.h)
 * on the tutorial's layer (N=1, 7x7, 512->512, 3x3, stride 1, pad 1, float32 NCHW), built
 * for the device's arch with the tutorial's best config and a few others, each run on GPU 0
 * and checked with tcc_conv2d_check against the double-precision CPU reference (every
 * output), then timed (the tutorial measured 0.568 ms for its best config on its GPU).
 *
 * usage: tcc-conv2d-no-batching-test [--seed S]
 * exit status: 0 passed, 1 a failure, 77 no driver or no device (ctest's skip).
 */
#include <tcc/tcc.h>
#include <tcc/tune.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_SKIP 77

static const char *const configs[] = {
    /* the tutorial's best (its log's line 1) */
    "[[\"tile_f\", [-1, 2, 64, 1]], [\"tile_y\", [-1, 1, 1, 7]], [\"tile_x\", [-1, 1, 7, 1]], "
    "[\"tile_rc\", [-1, 2, 2]], [\"tile_ry\", [-1, 3, 1]], [\"tile_rx\", [-1, 1, 3]], "
    "[\"auto_unroll_max_step\", 1500], [\"unroll_explicit\", 0]]",
    /* the same, unrolled in the loop IR */
    "[[\"tile_f\", [-1, 2, 64, 1]], [\"tile_y\", [-1, 1, 1, 7]], [\"tile_x\", [-1, 1, 7, 1]], "
    "[\"tile_rc\", [-1, 2, 2]], [\"tile_ry\", [-1, 3, 1]], [\"tile_rx\", [-1, 1, 3]], "
    "[\"auto_unroll_max_step\", 512], [\"unroll_explicit\", 1]]",
    /* virtual threads along f, y and x; ragged cooperative fetches */
    "[[\"tile_f\", [-1, 2, 16, 2]], [\"tile_y\", [-1, 7, 1, 1]], [\"tile_x\", [-1, 7, 1, 1]], "
    "[\"tile_rc\", [-1, 4, 2]], [\"tile_ry\", [-1, 1, 3]], [\"tile_rx\", [-1, 3, 1]], "
    "[\"auto_unroll_max_step\", 1500], [\"unroll_explicit\", 1]]",
    /* the tutorial's trials 3 and 19 (220 and 15.7 GFLOP/s there), no unrolling in the first */
    "[[\"tile_f\", [-1, 4, 32, 1]], [\"tile_y\", [-1, 1, 1, 7]], [\"tile_x\", [-1, 1, 1, 1]], "
    "[\"tile_rc\", [-1, 1, 16]], [\"tile_ry\", [-1, 1, 1]], [\"tile_rx\", [-1, 1, 1]], "
    "[\"auto_unroll_max_step\", 0], [\"unroll_explicit\", 0]]",
    "[[\"tile_f\", [-1, 8, 64, 1]], [\"tile_y\", [-1, 1, 1, 7]], [\"tile_x\", [-1, 1, 1, 7]], "
    "[\"tile_rc\", [-1, 2, 2]], [\"tile_ry\", [-1, 1, 1]], [\"tile_rx\", [-1, 3, 1]], "
    "[\"auto_unroll_max_step\", 1500], [\"unroll_explicit\", 0]]",
};

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

/* Builds, checks and times one config; false on any failure (printed). */
static bool run_config(tcc_context *ctx, tcc_device *device, const tcc_template *tmpl,
                       const tcc_config_space *space, const tcc_workload *w, tcc_arch arch,
                       const char *text, uint64_t seed)
{
    tcc_config *cfg = NULL;
    tcc_kernel *kernel = NULL;
    bool ok = false;
    if (tcc_config_parse(ctx, space, text, &cfg) != TCC_OK ||
        tcc_config_instantiate(ctx, tmpl, cfg, w, arch, NULL, &kernel) != TCC_OK) {
        printf("FAIL: %s\n  build: %s\n", text, tcc_last_error(ctx));
        tcc_config_destroy(cfg);
        return false;
    }
    tcc_check_options options;
    tcc_check_options_init(&options);
    options.seed = seed;
    options.warmup = 10;
    options.runs = 100;
    tcc_check_result result;
    memset(&result, 0, sizeof result);
    result.size = sizeof result;
    tcc_status status = tcc_conv2d_check(device, kernel, &w->conv2d, &options, &result);
    if (status != TCC_OK) {
        printf("FAIL: %s (index %lld)\n  run: %s\n", text, (long long)tcc_config_index(cfg),
               tcc_last_error(ctx));
    } else {
        double gflops = tcc_conv2d_flops(&w->conv2d) / (result.median_ms * 1e6);
        printf("%s: index %lld, max error %.3g (tolerance %.3g), %lld compared, %lld "
               "unwritten, %.4f ms (%.1f GFLOP/s)\n",
               result.passed ? "ok" : "FAIL", (long long)tcc_config_index(cfg), result.max_error,
               result.tolerance, (long long)result.compared, (long long)result.unwritten,
               result.median_ms, gflops);
        ok = result.passed;
    }
    tcc_kernel_destroy(kernel);
    tcc_config_destroy(cfg);
    return ok;
}

int main(int argc, char **argv)
{
    uint64_t seed = 20261127;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[++i], NULL, 10);
    tcc_context *ctx = NULL;
    tcc_device *device = NULL;
    if (tcc_context_create(&ctx) != TCC_OK)
        return 1;
    if (tcc_device_open(ctx, 0, &device) != TCC_OK) {
        printf("SKIP: %s\n", tcc_last_error(ctx));
        tcc_context_destroy(ctx);
        return EXIT_SKIP;
    }
    tcc_arch arch = tcc_arch_for_device(tcc_device_arch(device));
    const tcc_template *tmpl = tcc_template_find("conv2d_no_batching");
    tcc_workload w;
    tutorial_layer(&w);
    tcc_config_space *space = NULL;
    int failures = 0;
    if (!arch || !tmpl || tcc_config_space_create(ctx, tmpl, &w, arch, &space) != TCC_OK) {
        printf("FAIL: no arch, template or space: %s\n", tcc_last_error(ctx));
        failures++;
    } else {
        printf("device: %s, %s; seed %llu\n", tcc_device_name(device), tcc_arch_name(arch),
               (unsigned long long)seed);
        for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
            failures += !run_config(ctx, device, tmpl, space, &w, arch, configs[i], seed);
    }
    tcc_config_space_destroy(space);
    tcc_device_close(device);
    tcc_context_destroy(ctx);
    printf("%s (seed %llu)\n", failures ? "FAILED" : "passed", (unsigned long long)seed);
    return failures ? 1 : 0;
}
