/*
 * tcc-tune's measurement on a GPU (tools/tune_measure.c): a few matmul configs built by the
 * builder threads, checked against the CPU reference and timed in the runner processes; then
 * the same under injected faults (a kernel that traps, one that reads an unmapped address, one
 * that spins forever): every trial must come back with its class (RUNTIME_DEVICE for the
 * faults, RUN_TIMEOUT for the spin) and the good trials must still be measured.
 *
 *   usage: tcc-tune-measure-test [DEVICES]    (DEVICES as tcc-tune's --devices, default 0)
 *
 * Exit status 0 when every expectation holds, 1 otherwise, 77 without a GPU (skipped).
 */
#include "tune_measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A 2048^3 fp16 matmul whose block shape is the knob. */
static tcc_status instantiate(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                              tcc_arch arch, const tcc_build_options *options, tcc_kernel **kernel)
{
    static const int64_t warps[] = {1, 2};
    int64_t rows = 1, cols = 1;
    tcc_status status = tcc_define_knob(cfg, "block_row_warps", 2, warps, &rows);
    if (status == TCC_OK)
        status = tcc_define_knob(cfg, "block_col_warps", 2, warps, &cols);
    if (status != TCC_OK || tcc_config_is_defining(cfg))
        return status;
    (void)arch;          /* options->arch */
    tcc_gemm_schedule s; /* mma.sync (any arch from sm_80), the rest chosen to fit the block */
    tcc_gemm_schedule_init(&s);
    s.intrinsic = TCC_GEMM_MMA_SYNC;
    s.block_row_warps = (int)rows;
    s.block_col_warps = (int)cols;
    return tcc_matmul_compile(ctx, &workload->matmul, &s, options, kernel);
}

static const tcc_template block_shape = {.size = sizeof(tcc_template),
                                         .name = "block_shape",
                                         .summary = "matmul block shapes (a test)",
                                         .kind = TCC_WORKLOAD_MATMUL,
                                         .instantiate = instantiate};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL: " __VA_ARGS__);                                                          \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static void print_result(int64_t index, const tcc_measure_result *r, double flops)
{
    double best = 0;
    for (int i = 0; i < r->ncost; i++)
        best = best == 0 || r->costs[i] < best ? r->costs[i] : best;
    printf("  config %lld: %-20s %8.1f GFLOP/s  all %.3f s  %s\n", (long long)index,
           tcc_measure_error_name(r->error), best > 0 ? flops / best * 1e-9 : 0.0, r->all_cost,
           r->message);
}

typedef struct Setup {
    tcc_workload workload;
    tcc_config_space *space;
    tcc_arch arch;
    const char *devices;
} Setup;

static TuneMeasurer *create(const Setup *s, const char *faults, double run_timeout)
{
    TuneMeasureOptions o;
    tune_measure_options_init(&o);
    o.tmpl = &block_shape;
    o.workload = &s->workload;
    o.space = s->space;
    o.arch = s->arch;
    o.devices = s->devices;
    o.run_timeout = run_timeout;
    o.inject_fault = faults;
    /* Every trial runs on the GPU, although the space is measured round after round: the
     * throughput and the faults are those of real trials. */
    o.measure_duplicates = true;
    char error[512];
    TuneMeasurer *m = tune_measurer_create(&o, error, sizeof error);
    if (!m)
        printf("FAIL: measurer: %s\n", error);
    return m;
}

/* Every config of the space, `rounds` times: all must be measured without error. */
static void measure_real(const Setup *s, int rounds)
{
    TuneMeasurer *m = create(s, "", 10.0);
    if (!m) {
        failures++;
        return;
    }
    int n = (int)tcc_config_space_size(s->space) * rounds;
    int64_t *indices = malloc(sizeof *indices * (size_t)n);
    tcc_measure_result *results = calloc((size_t)n, sizeof *results);
    for (int i = 0; i < n; i++)
        indices[i] = i % tcc_config_space_size(s->space);
    double start = now_s();
    tcc_status status = tune_measure_batch(m, n, indices, results);
    double elapsed = now_s() - start;
    EXPECT(status == TCC_OK, "batch: %s", tune_measurer_error(m));
    printf("real: %d trials on %s in %.2f s (%.1f trials/s)\n", n, tune_measurer_device_name(m),
           elapsed, n / elapsed);
    for (int i = 0; i < n; i++) {
        if (i < (int)tcc_config_space_size(s->space))
            print_result(indices[i], &results[i], tcc_matmul_flops(&s->workload.matmul));
        EXPECT(results[i].error == TCC_MEASURE_OK && results[i].ncost == 3 &&
                   results[i].costs[0] > 0,
               "trial %d: %s: %s", i, tcc_measure_error_name(results[i].error), results[i].message);
    }
    free(indices);
    free(results);
    tune_measurer_destroy(m);
}

/* Faults injected into a third of the trials each... the rest measured as before. */
static void measure_faults(const Setup *s)
{
    TuneMeasurer *m = create(s, "trap:0.2,oob:0.2,spin:0.2,seed:11", 3.0);
    if (!m) {
        failures++;
        return;
    }
    enum { N = 20 };
    int64_t indices[N];
    tcc_measure_result results[N];
    for (int i = 0; i < N; i++)
        indices[i] = i % tcc_config_space_size(s->space);
    double start = now_s();
    tcc_status status = tune_measure_batch(m, N, indices, results);
    EXPECT(status == TCC_OK, "batch: %s", tune_measurer_error(m));
    int counts[TCC_MEASURE_UNKNOWN_ERROR + 1] = {0};
    for (int i = 0; i < N; i++) {
        print_result(indices[i], &results[i], tcc_matmul_flops(&s->workload.matmul));
        counts[results[i].error]++;
        bool injected = strstr(results[i].message, "injected fault") != NULL;
        EXPECT(results[i].error == TCC_MEASURE_OK ||
                   (results[i].error == TCC_MEASURE_RUNTIME_DEVICE && injected) ||
                   results[i].error == TCC_MEASURE_RUN_TIMEOUT,
               "trial %d: %s: %s", i, tcc_measure_error_name(results[i].error), results[i].message);
        if (results[i].error == TCC_MEASURE_OK)
            EXPECT(results[i].ncost == 3 && results[i].costs[0] > 0, "trial %d: no costs", i);
    }
    printf("faults: %d trials in %.2f s: %d ok, %d runtime device (trap, oob), %d run timeout "
           "(spin); %d runners restarted\n",
           N, now_s() - start, counts[0], counts[TCC_MEASURE_RUNTIME_DEVICE],
           counts[TCC_MEASURE_RUN_TIMEOUT], tune_measurer_restarts(m));
    EXPECT(counts[TCC_MEASURE_OK] > 0, "no good trial measured");
    EXPECT(counts[TCC_MEASURE_RUNTIME_DEVICE] > 0, "no fault recorded");
    EXPECT(counts[TCC_MEASURE_RUN_TIMEOUT] > 0, "no spin recorded");
    tune_measurer_destroy(m);
}

static int run(const char *devices)
{
    tcc_context *ctx = NULL;
    tcc_device *device = NULL;
    int count = 0;
    if (tcc_context_create(&ctx) != TCC_OK)
        return 1;
    if (tcc_device_count(ctx, &count) != TCC_OK || count == 0 ||
        tcc_device_open(ctx, 0, &device) != TCC_OK) {
        printf("SKIP: no GPU: %s\n", tcc_last_error(ctx));
        tcc_context_destroy(ctx);
        return 77;
    }
    /* The parent never keeps a CUDA context: it only asked for the arch. */
    Setup s = {.arch = tcc_arch_for_device(tcc_device_arch(device)), .devices = devices};
    tcc_device_close(device);
    tcc_workload_init(&s.workload, TCC_WORKLOAD_MATMUL);
    s.workload.matmul.m = s.workload.matmul.n = s.workload.matmul.k = 2048;
    if (tcc_config_space_create(ctx, &block_shape, &s.workload, s.arch, &s.space) != TCC_OK) {
        printf("FAIL: space: %s\n", tcc_last_error(ctx));
        tcc_context_destroy(ctx);
        return 1;
    }
    measure_real(&s, 4);
    measure_faults(&s);
    tcc_config_space_destroy(s.space);
    tcc_context_destroy(ctx);
    printf("%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    int runner = tune_runner_main(argc, argv);
    if (runner >= 0)
        return runner;
    return run(argc > 1 ? argv[1] : "0");
}
