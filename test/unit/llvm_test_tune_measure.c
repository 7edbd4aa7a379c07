/*
 * tcc-tune's measurement (tools/tune_measure.c, tune_pipeline.c, tune_runner.c,
 * tune_synthetic.c) without a GPU: the runner processes run on the fake libcuda.so.1
 * (test/lit/fake_cuda), whose kernels compute nothing, so every kernel that builds is checked
 * and found WRONG_ANSWER, which exercises the runner process, the protocol and the
 * classification end to end. Also: build errors classified, a runner that hangs killed at the time
 * limit (RUN_TIMEOUT) and one that dies restarted (RUNTIME_DEVICE) with the batch going on, several
 * runners at once, a stream of trials, the builders compiling for the runners' multiprocessors,
 * and the synthetic cost's determinism.
 *
 * This program is its own runner: main diverts to tune_runner_main on --runner, as tcc-tune.
 */
#include "support.h"
#include "tune_measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Set by test_slow_build_given_up: the config of 2 x 1 warps then takes seconds to build. */
static bool slow_builds;

/* ---- a tiny template: a 64^3 matmul whose block shape and validity are knobs ----------------- */

static tcc_status tiny_instantiate(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                                   tcc_arch arch, const tcc_build_options *options,
                                   tcc_kernel **kernel)
{
    static const int64_t warps[] = {1, 2}, modes[] = {0, 1, 2};
    int64_t rows = 1, cols = 1, mode = 0;
    tcc_status status = tcc_define_knob(cfg, "block_row_warps", 2, warps, &rows);
    if (status == TCC_OK)
        status = tcc_define_knob(cfg, "block_col_warps", 2, warps, &cols);
    /* 0 builds; 1 the template refuses; 2 a schedule tcc refuses (split_k past its range). */
    if (status == TCC_OK)
        status = tcc_define_knob(cfg, "mode", 3, modes, &mode);
    /* A knob the kernel does not read: points 12 to 23 build the kernels of 0 to 11. */
    int64_t unused = 0;
    if (status == TCC_OK)
        status = tcc_define_knob(cfg, "unused", 2, warps, &unused);
    if (status != TCC_OK || tcc_config_is_defining(cfg))
        return status;
    if (mode == 1)
        return tcc_config_reject(ctx, cfg, "mode 1 is refused");
    if (slow_builds && rows == 2 && cols == 1)
        sleep(6); /* as LLVM unrolling a huge nest: nothing the measurer can interrupt */
    tcc_gemm_schedule s;
    tcc_gemm_schedule_init(&s);
    status = tcc_matmul_default_schedule(ctx, &workload->matmul, arch, &s);
    s.block_row_warps = (int)rows;
    s.block_col_warps = (int)cols;
    s.split_k = mode == 2 ? TCC_MAX_SPLIT_K + 1 : 1;
    return status == TCC_OK ? tcc_matmul_compile(ctx, &workload->matmul, &s, options, kernel)
                            : status;
}

static const tcc_template tiny = {.size = sizeof(tcc_template),
                                  .name = "tiny",
                                  .summary = "a test template",
                                  .kind = TCC_WORKLOAD_MATMUL,
                                  .instantiate = tiny_instantiate};

/* Space index of (rows, cols, mode): the first knob fastest. */
static int64_t point(int rows_choice, int cols_choice, int mode)
{
    return rows_choice + 2 * (cols_choice + 2 * mode);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static tcc_context *ctx;
static tcc_workload workload;
static tcc_config_space *space;

static void setup(void)
{
    ctx = test_context();
    tcc_workload_init(&workload, TCC_WORKLOAD_MATMUL);
    workload.matmul.m = workload.matmul.n = workload.matmul.k = 64;
    ck_assert_msg(tcc_config_space_create(ctx, &tiny, &workload, TCC_SM_80, &space) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    ck_assert_int_eq(tcc_config_space_size(space), 24);
    /* The runners open the fake driver. */
    ck_assert_int_eq(setenv("LD_LIBRARY_PATH", TCC_FAKE_CUDA_DIR, 1), 0);
}

static void teardown(void)
{
    tcc_config_space_destroy(space);
    tcc_context_destroy(ctx);
}

static TuneMeasureOptions gpu_options(const char *faults)
{
    TuneMeasureOptions o;
    tune_measure_options_init(&o);
    o.tmpl = &tiny;
    o.workload = &workload;
    o.space = space;
    o.arch = TCC_SM_80;
    o.builders = 2;
    o.run_timeout = 5.0;
    o.inject_fault = faults ? faults : "";
    /* The tests below measure a few points over and over, each time on the runner. */
    o.measure_duplicates = true;
    return o;
}

static TuneMeasurer *create(const TuneMeasureOptions *o)
{
    char error[512] = "";
    TuneMeasurer *m = tune_measurer_create(o, error, sizeof error);
    ck_assert_msg(m != NULL, "%s", error);
    return m;
}

static void measure(TuneMeasurer *m, int count, const int64_t *indices, tcc_measure_result *results)
{
    memset(results, 0xab, sizeof *results * (size_t)count); /* every field must be written */
    ck_assert_int_eq(tune_measure_batch(m, count, indices, results), TCC_OK);
    for (int i = 0; i < count; i++) {
        ck_assert_msg(results[i].error <= TCC_MEASURE_UNKNOWN_ERROR, "trial %d: error %d", i,
                      (int)results[i].error);
        ck_assert(memchr(results[i].message, '\0', sizeof results[i].message));
    }
}

#define assert_class(result, class)                                                                \
    ck_assert_msg((result).error == (class), "%s, expected %s: %s",                                \
                  tcc_measure_error_name((result).error), tcc_measure_error_name(class),           \
                  (result).message)

/* Kernels that build run in the runner, whose fake GPU computes nothing: WRONG_ANSWER. The
 * template's refusal and tcc's are build errors that never reach it. */
START_TEST(test_fake_driver_classifies)
{
    TuneMeasureOptions o = gpu_options(NULL);
    TuneMeasurer *m = create(&o);
    ck_assert_str_eq(tune_measurer_device_name(m), "Fake GPU");
    ck_assert_int_eq(tune_measurer_arch(m), TCC_SM_90A);
    int64_t indices[] = {point(0, 0, 0), point(1, 1, 0), point(0, 1, 1), point(1, 0, 2),
                         point(1, 0, 0)};
    tcc_measure_result results[5];
    measure(m, 5, indices, results);
    assert_class(results[0], TCC_MEASURE_WRONG_ANSWER);
    assert_contains(results[0].message, "max error");
    assert_class(results[1], TCC_MEASURE_WRONG_ANSWER);
    /* The template's own refusal (tcc_config_reject), told from tcc's validation below. */
    assert_class(results[2], TCC_MEASURE_INSTANTIATION_ERROR);
    assert_contains(results[2].message, "mode 1 is refused");
    assert_class(results[3], TCC_MEASURE_COMPILE_HOST);
    assert_contains(results[3].message, "split_k");
    assert_class(results[4], TCC_MEASURE_WRONG_ANSWER);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(results[i].ncost, 0);
        ck_assert(results[i].all_cost > 0 && results[i].timestamp > 1e9);
    }
    /* A second batch on the same runner. */
    measure(m, 2, indices, results);
    assert_class(results[0], TCC_MEASURE_WRONG_ANSWER);
    ck_assert_int_eq(tune_measurer_restarts(m), 0);
    tune_measurer_destroy(m);
}
END_TEST

/* A config whose kernel was measured before (another config that differs only in a knob the
 * kernel does not read) copies that result instead of being measured again: one of this
 * batch's at the batch's end, one of an earlier batch's at once. What was refused has no
 * kernel to share; measure_duplicates measures each. */
START_TEST(test_same_kernel_measured_once)
{
    TuneMeasureOptions o = gpu_options(NULL);
    o.measure_duplicates = false;
    TuneMeasurer *m = create(&o);
    enum { TWIN = 12 }; /* the point of the same kernel, its "unused" knob 1 */
    int64_t indices[] = {point(0, 0, 0), point(1, 0, 0), point(0, 0, 0) + TWIN, point(0, 1, 1),
                         point(0, 1, 1) + TWIN};
    tcc_measure_result results[5];
    measure(m, 5, indices, results);
    int64_t expected[] = {-1, -1, point(0, 0, 0), -1, -1};
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(tune_measurer_same_as(m, i), expected[i]);
    assert_class(results[2], TCC_MEASURE_WRONG_ANSWER);
    ck_assert_str_eq(results[2].message, results[0].message);
    ck_assert(results[2].all_cost > 0 && results[2].timestamp > 1e9);
    assert_class(results[4], TCC_MEASURE_INSTANTIATION_ERROR);
    int64_t again[] = {point(1, 0, 0) + TWIN, point(1, 1, 0)};
    measure(m, 2, again, results);
    ck_assert_int_eq(tune_measurer_same_as(m, 0), point(1, 0, 0));
    ck_assert_int_eq(tune_measurer_same_as(m, 1), -1);
    assert_class(results[0], TCC_MEASURE_WRONG_ANSWER);
    ck_assert_int_eq(tune_measurer_same_as(m, 2), -1); /* past the batch */
    tune_measurer_destroy(m);
    o.measure_duplicates = true;
    m = create(&o);
    measure(m, 5, indices, results);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(tune_measurer_same_as(m, i), -1);
    assert_class(results[2], TCC_MEASURE_WRONG_ANSWER);
    tune_measurer_destroy(m);
}
END_TEST

/* Builders end in any order: where a kernel's later trial is built first and claims it, the
 * batch's end still names its first trial the measured one, and both hold that result. */
START_TEST(test_first_trial_named_measured)
{
    TuneSeen seen = {0};
    tcc_measure_result results[3] = {{.error = TCC_MEASURE_UNKNOWN_ERROR}};
    ck_assert(tune_seen_start_batch(&seen, 3));
    ck_assert(!tune_seen_copies(&seen, 2, 72, 0x5eed, results)); /* built first: claims */
    ck_assert(tune_seen_copies(&seen, 0, 70, 0x5eed, results));
    ck_assert(!tune_seen_copies(&seen, 1, 71, 0x0dd, results));
    results[2] = (tcc_measure_result){.error = TCC_MEASURE_OK, .ncost = 1, .costs = {2e-3}};
    results[1] = (tcc_measure_result){.error = TCC_MEASURE_OK, .ncost = 1, .costs = {5e-3}};
    tune_seen_end_batch(&seen, results);
    int64_t expected[] = {-1, -1, 70};
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(tune_seen_same_as(&seen, i), expected[i]);
    ck_assert_int_eq(results[0].error, TCC_MEASURE_OK);
    ck_assert(results[0].costs[0] == 2e-3);
    /* The next batch's trial of that kernel copies the config named, 70. */
    ck_assert(tune_seen_start_batch(&seen, 1));
    ck_assert(tune_seen_copies(&seen, 0, 73, 0x5eed, results));
    ck_assert_int_eq(tune_seen_same_as(&seen, 0), 70);
    ck_assert(results[0].costs[0] == 2e-3);
    tune_seen_free(&seen);
}
END_TEST

/* A runner that stops answering is killed at run_timeout (RUN_TIMEOUT) and one that exits is
 * restarted (RUNTIME_DEVICE); the trials after them are measured as before. */
START_TEST(test_hang_and_crash_cost_one_trial)
{
    TuneMeasureOptions o = gpu_options("hang:0.3,crash:0.3,seed:3");
    o.run_timeout = 1.0;
    TuneMeasurer *m = create(&o);
    int64_t indices[12];
    for (int i = 0; i < 12; i++)
        indices[i] = point(i % 2, (i / 2) % 2, 0);
    tcc_measure_result results[12];
    measure(m, 12, indices, results);
    int counts[TCC_MEASURE_UNKNOWN_ERROR + 1] = {0};
    for (int i = 0; i < 12; i++) {
        counts[results[i].error]++;
        ck_assert_msg(results[i].error == TCC_MEASURE_WRONG_ANSWER ||
                          results[i].error == TCC_MEASURE_RUN_TIMEOUT ||
                          results[i].error == TCC_MEASURE_RUNTIME_DEVICE,
                      "trial %d: %s: %s", i, tcc_measure_error_name(results[i].error),
                      results[i].message);
        if (results[i].error == TCC_MEASURE_RUNTIME_DEVICE)
            assert_contains(results[i].message, "runner died (exit status 70)");
    }
    ck_assert_int_gt(counts[TCC_MEASURE_RUN_TIMEOUT], 0);
    ck_assert_int_gt(counts[TCC_MEASURE_RUNTIME_DEVICE], 0);
    ck_assert_int_gt(counts[TCC_MEASURE_WRONG_ANSWER], 0);
    ck_assert_int_eq(tune_measurer_restarts(m),
                     counts[TCC_MEASURE_RUN_TIMEOUT] + counts[TCC_MEASURE_RUNTIME_DEVICE]);
    tune_measurer_destroy(m);
}
END_TEST

/* Injected GPU faults on the fake driver: the fault kernels load and "run" (computing
 * nothing), so they are wrong answers there; on a GPU they fault (test/gpu/tune_measure.c). */
START_TEST(test_fault_kernels_load)
{
    TuneMeasureOptions o = gpu_options("trap:0.34,oob:0.33,spin:0.33");
    TuneMeasurer *m = create(&o);
    int64_t indices[] = {0, 1, 2, 3};
    tcc_measure_result results[4];
    measure(m, 4, indices, results);
    for (int i = 0; i < 4; i++) {
        assert_class(results[i], TCC_MEASURE_WRONG_ANSWER);
        assert_contains(results[i].message, "injected fault");
    }
    tune_measurer_destroy(m);
}
END_TEST

/* A build past its time limit is given up: its trial is BUILD_TIMEOUT as soon as the limit
 * passes, the batch ends without waiting for it, and the next batch is measured while its
 * thread finishes it unused. The limit leaves an ordinary build room on a loaded machine under
 * AddressSanitizer (0.5 s did not, in CI); the slow one sleeps well past it and the batch. */
START_TEST(test_slow_build_given_up)
{
    slow_builds = true;
    TuneMeasureOptions o = gpu_options(NULL);
    o.build_timeout = 2.0;
    TuneMeasurer *m = create(&o);
    int64_t indices[2] = {point(1, 0, 0), point(0, 0, 0)};
    tcc_measure_result results[2];
    double start = now_s();
    measure(m, 2, indices, results);
    ck_assert_double_lt(now_s() - start, 5.0);
    assert_class(results[0], TCC_MEASURE_BUILD_TIMEOUT);
    assert_contains(results[0].message, "build still running after 2.0 s");
    assert_class(results[1], TCC_MEASURE_WRONG_ANSWER);
    int64_t next[1] = {point(0, 1, 0)};
    measure(m, 1, next, results);
    assert_class(results[0], TCC_MEASURE_WRONG_ANSWER);
    tune_measurer_destroy(m);
    slow_builds = false;
}
END_TEST

/* Two runners (both on the fake's one device) measure at once. */
START_TEST(test_two_runners)
{
    TuneMeasureOptions o = gpu_options("hang:0.2,seed:5");
    o.devices = "0,0";
    o.run_timeout = 1.0;
    TuneMeasurer *m = create(&o);
    int64_t indices[10];
    for (int i = 0; i < 10; i++)
        indices[i] = point(i % 2, 0, 0);
    tcc_measure_result results[10];
    measure(m, 10, indices, results);
    for (int i = 0; i < 10; i++)
        ck_assert(results[i].error == TCC_MEASURE_WRONG_ANSWER ||
                  results[i].error == TCC_MEASURE_RUN_TIMEOUT);
    tune_measurer_destroy(m);
}
END_TEST

/* A template of one point that builds the seed layer's convolution (a persistent grid on
 * sm_90a) with the options the builder gives it, and refuses the config saying what they and
 * the kernel's grid were: what the builders compile for, seen in the trial's message. */
static tcc_status grid_instantiate(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                                   tcc_arch arch, const tcc_build_options *options,
                                   tcc_kernel **kernel)
{
    (void)arch, (void)kernel;
    static const int64_t only[] = {1};
    int64_t value = 0;
    tcc_status status = tcc_define_knob(cfg, "only", 1, only, &value);
    if (status != TCC_OK || tcc_config_is_defining(cfg))
        return status;
    tcc_kernel *built = NULL;
    status = tcc_conv2d_compile(ctx, &workload->conv2d, NULL, options, &built);
    if (status != TCC_OK)
        return status;
    int64_t grid[3];
    tcc_kernel_launch_grid(built, 0, grid);
    tcc_kernel_destroy(built);
    char seen[96];
    snprintf(seen, sizeof seen, "multiprocessors %d, grid %lld", options->multiprocessors,
             (long long)grid[0]);
    return tcc_config_reject(ctx, cfg, seen);
}

static const tcc_template grid_template = {.size = sizeof(tcc_template),
                                           .name = "grid",
                                           .summary = "the builders' options, seen",
                                           .kind = TCC_WORKLOAD_CONV2D,
                                           .instantiate = grid_instantiate};

/* The trial of the grid template's one point, measured with the runners' fake GPU of
 * `multiprocessors` (NULL: the fake's own, an H100 SXM's 132); its measurer's count in *count. */
static tcc_measure_result grid_trial(const char *multiprocessors, bool synthetic, int *count)
{
    if (multiprocessors)
        ck_assert_int_eq(setenv("TCC_FAKE_CUDA_MULTIPROCESSORS", multiprocessors, 1), 0);
    else
        ck_assert_int_eq(unsetenv("TCC_FAKE_CUDA_MULTIPROCESSORS"), 0);
    tcc_workload seed;
    tcc_workload_init(&seed, TCC_WORKLOAD_CONV2D);
    tcc_conv2d_desc *d = &seed.conv2d;
    d->batch = 256, d->height = d->width = 14, d->in_channels = 256, d->out_channels = 512;
    d->kernel_h = d->kernel_w = 3;
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
    tcc_config_space *one = NULL;
    ck_assert_int_eq(tcc_config_space_create(ctx, &grid_template, &seed, TCC_SM_90A, &one), TCC_OK);
    TuneMeasureOptions o = gpu_options(NULL);
    o.tmpl = &grid_template, o.workload = &seed, o.space = one, o.arch = TCC_SM_90A;
    o.devices = "0,0"; /* the first runner's count */
    o.synthetic = synthetic;
    TuneMeasurer *m = create(&o);
    *count = tune_measurer_multiprocessors(m);
    tcc_measure_result result;
    measure(m, 1, (int64_t[]){0}, &result);
    tune_measurer_destroy(m);
    tcc_config_space_destroy(one);
    ck_assert_int_eq(unsetenv("TCC_FAKE_CUDA_MULTIPROCESSORS"), 0);
    return result;
}

/* The builders compile a persistent grid's blocks for the runners' GPU (its HELLO says how many
 * multiprocessors it has): an H100 PCIe's 114 run the seed layer's 784 tiles in 7 rounds of
 * 112 blocks, not sm_90a's 6 rounds of 131, which on it would wait for a second wave. Without
 * a GPU (synthetic) nothing is known: the target's. */
START_TEST(test_builders_compile_for_the_runners_gpu)
{
    int count = -1;
    tcc_measure_result r = grid_trial("114", false, &count);
    ck_assert_int_eq(count, 114);
    assert_class(r, TCC_MEASURE_INSTANTIATION_ERROR);
    ck_assert_str_eq(r.message, "multiprocessors 114, grid 112");
    r = grid_trial(NULL, false, &count);
    ck_assert_int_eq(count, 132);
    ck_assert_str_eq(r.message, "multiprocessors 132, grid 131");
    r = grid_trial("114", true, &count);
    ck_assert_int_eq(count, 0);
}
END_TEST

START_TEST(test_refusals)
{
    char error[512];
    TuneMeasureOptions o = gpu_options(NULL);
    o.devices = "0,x";
    ck_assert_ptr_null(tune_measurer_create(&o, error, sizeof error));
    assert_contains(error, "--devices");
    o = gpu_options("melt:0.5");
    ck_assert_ptr_null(tune_measurer_create(&o, error, sizeof error));
    assert_contains(error, "TCC_TUNE_INJECT_FAULT");
    o = gpu_options(NULL);
    o.devices = "3"; /* the fake driver has one device */
    ck_assert_ptr_null(tune_measurer_create(&o, error, sizeof error));
    assert_contains(error, "device 3");
    ck_assert(!strchr(error, '\n'));
}
END_TEST

/* The synthetic cost: the same seed gives the same results, another seed others; a share of
 * the points is invalid; the optimum is the cheapest point. */
START_TEST(test_synthetic_deterministic)
{
    TuneMeasureOptions o = gpu_options(NULL);
    o.synthetic = true;
    o.seed = 42;
    TuneMeasurer *a = create(&o), *b = create(&o);
    o.seed = 43;
    TuneMeasurer *c = create(&o);
    ck_assert_str_eq(tune_measurer_device_name(a), "synthetic");
    int64_t indices[24];
    for (int i = 0; i < 24; i++)
        indices[i] = i;
    tcc_measure_result ra[24], rb[24], rc[24];
    measure(a, 24, indices, ra);
    measure(b, 24, indices, rb);
    measure(c, 24, indices, rc);
    bool differ = false;
    int best = -1, valid = 0;
    for (int i = 0; i < 24; i++) {
        ck_assert_int_eq(ra[i].error, rb[i].error);
        ck_assert_int_eq(ra[i].ncost, rb[i].ncost);
        for (int r = 0; r < ra[i].ncost; r++)
            ck_assert(ra[i].costs[r] == rb[i].costs[r]);
        differ = differ || ra[i].error != rc[i].error ||
                 (ra[i].ncost && rc[i].ncost && ra[i].costs[0] != rc[i].costs[0]);
        if (ra[i].error == TCC_MEASURE_OK) {
            valid++;
            if (best < 0 || ra[i].costs[0] < ra[best].costs[0])
                best = i;
        } else {
            assert_class(ra[i], TCC_MEASURE_INSTANTIATION_ERROR);
        }
    }
    ck_assert(differ);
    ck_assert_int_gt(valid, 12);
    ck_assert(ra[best].costs[0] < 1.01e-4); /* the optimum costs BEST_SECONDS */
    tune_measurer_destroy(a);
    tune_measurer_destroy(b);
    tune_measurer_destroy(c);
}
END_TEST

/* A stream (a worker's jobs) of the configs `indices`, given at most three at a time, and none
 * once after the first piece while trials are in flight (no job queued just then). */
typedef struct TestStream {
    const int64_t *indices;
    int count, given, max_room;
    bool dry_once;
    int ended[32];
    tcc_measure_result results[32];
} TestStream;

static int stream_more(void *user, int room, int64_t *indices)
{
    TestStream *s = user;
    s->max_room = room > s->max_room ? room : s->max_room;
    if (s->dry_once && s->given > 0) {
        s->dry_once = false;
        return 0;
    }
    int n = s->count - s->given < room ? s->count - s->given : room;
    n = n < 3 ? n : 3;
    memcpy(indices, s->indices + s->given, (size_t)n * sizeof *indices);
    s->given += n;
    return n;
}

static void stream_ended(void *user, int slot, const tcc_measure_result *result)
{
    TestStream *s = user;
    ck_assert_int_ge(slot, 0);
    ck_assert_int_lt(slot, s->given);
    s->ended[slot]++;
    s->results[slot] = *result;
}

static void run_stream(TuneMeasurer *m, TestStream *s)
{
    TuneStream stream = {.user = s, .more = stream_more, .ended = stream_ended};
    ck_assert_int_eq(tune_measure_stream(m, &stream), TCC_OK);
    ck_assert_int_eq(s->given, s->count);
    for (int i = 0; i < s->count; i++)
        ck_assert_msg(s->ended[i] == 1, "slot %d ended %d times", i, s->ended[i]);
}

/* A stream is asked for no more than its builders and queue have room for, goes on past a
 * moment with nothing to give, tells each trial's end once, with the classes a batch gives;
 * another stream and a batch follow on the same runner. Synthetic streams cost as batches do. */
START_TEST(test_stream)
{
    TuneMeasureOptions o = gpu_options(NULL);
    TuneMeasurer *m = create(&o);
    int64_t indices[14];
    for (int i = 0; i < 12; i++)
        indices[i] = point(i % 2, (i / 2) % 2, 0);
    indices[12] = point(0, 1, 1), indices[13] = point(1, 0, 2);
    TestStream s = {.indices = indices, .count = 14, .dry_once = true};
    run_stream(m, &s);
    ck_assert_int_le(s.max_room, 2 + 2); /* two builders, and two built ahead of one runner */
    for (int i = 0; i < 12; i++)
        assert_class(s.results[i], TCC_MEASURE_WRONG_ANSWER);
    assert_class(s.results[12], TCC_MEASURE_INSTANTIATION_ERROR);
    assert_class(s.results[13], TCC_MEASURE_COMPILE_HOST);
    TestStream again = {.indices = indices + 10, .count = 4};
    run_stream(m, &again);
    assert_class(again.results[3], TCC_MEASURE_COMPILE_HOST);
    /* A stream whose last trial a builder ends (a build refused) is told of it all the same. */
    for (int i = 0; i < 20; i++) {
        TestStream refused = {.indices = indices + 13, .count = 1};
        run_stream(m, &refused);
    }
    tcc_measure_result results[2];
    measure(m, 2, indices, results);
    assert_class(results[1], TCC_MEASURE_WRONG_ANSWER);
    ck_assert_int_eq(tune_measurer_restarts(m), 0);
    tune_measurer_destroy(m);

    o.synthetic = true;
    m = create(&o);
    int64_t all[24];
    for (int i = 0; i < 24; i++)
        all[i] = i;
    TestStream synthetic = {.indices = all, .count = 24};
    run_stream(m, &synthetic);
    tcc_measure_result batch[24];
    measure(m, 24, all, batch);
    for (int i = 0; i < 24; i++) {
        ck_assert_int_eq(synthetic.results[i].error, batch[i].error);
        ck_assert(synthetic.results[i].ncost == 0 ||
                  synthetic.results[i].costs[0] == batch[i].costs[0]);
    }
    tune_measurer_destroy(m);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *suite = suite_create("tune_measure");
    TCase *tc = test_case(suite, "tune_measure", setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_fake_driver_classifies);
    tcase_add_test(tc, test_same_kernel_measured_once);
    tcase_add_test(tc, test_first_trial_named_measured);
    tcase_add_test(tc, test_hang_and_crash_cost_one_trial);
    tcase_add_test(tc, test_fault_kernels_load);
    tcase_add_test(tc, test_slow_build_given_up);
    tcase_add_test(tc, test_two_runners);
    tcase_add_test(tc, test_builders_compile_for_the_runners_gpu);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_synthetic_deterministic);
    tcase_add_test(tc, test_stream);
    return suite;
}

int main(int argc, char **argv)
{
    int runner = tune_runner_main(argc, argv);
    if (runner >= 0)
        return runner;
    return test_run(make_suite());
}
