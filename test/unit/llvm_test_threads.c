/*
 * Thread safety, as tcc/tcc.h states it: separate contexts compile at once on several
 * threads (conv2d and matmul, sm_80 and sm_90a, chosen and given schedules) and each gets
 * the PTX that the same compile gives on one thread; a context may move from one thread to
 * another; a built tcc_kernel, which keeps no pointer to its context, is read by several
 * threads at once after its context is gone (and loaded on each thread's own device when a
 * GPU is present); CPU references, which run threads of their own, run several at once.
 * test/run_all.sh runs this under ThreadSanitizer (TCC_SANITIZE=thread), where any race
 * in tcc's own code fails it.
 */
#include "support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the kernels ------------------------------------------------------------------------- */

/* One compile: an operator, its types (the descriptor's float16 -> float32 unless given), a
 * schedule (NULL: chosen) and an arch. Small shapes, so that the test stays quick under
 * ThreadSanitizer. */
typedef struct Job {
    const char *name;
    bool conv; /* else matmul */
    tcc_arch arch;
    tcc_dtype input, output;
    bool b_col_major, bias, relu;
    const tcc_gemm_schedule *schedule;
} Job;

static const tcc_gemm_schedule wmma_2x2 = {.size = sizeof(tcc_gemm_schedule),
                                           .mma_m = 16,
                                           .mma_n = 16,
                                           .mma_k = 16,
                                           .block_row_warps = 2,
                                           .block_col_warps = 2,
                                           .warp_row_tiles = 2,
                                           .warp_col_tiles = 2,
                                           .stages = 2,
                                           .intrinsic = TCC_GEMM_WMMA,
                                           .split_k = 1};
static const tcc_gemm_schedule wgmma_64x128 = {.size = sizeof(tcc_gemm_schedule),
                                               .mma_m = 64,
                                               .mma_n = 128,
                                               .mma_k = 16,
                                               .block_row_warps = 1,
                                               .block_col_warps = 1,
                                               .stages = 3,
                                               .split_k = 1};

static const Job jobs[] = {
    {.name = "conv2d sm_80", .conv = true, .arch = TCC_SM_80},
    {.name = "conv2d sm_90a", .conv = true, .arch = TCC_SM_90A},
    {.name = "conv2d bfloat16, bias, relu, sm_80",
     .conv = true,
     .arch = TCC_SM_80,
     .input = TCC_BFLOAT16,
     .output = TCC_FLOAT32,
     .bias = true,
     .relu = true},
    {.name = "matmul sm_80", .arch = TCC_SM_80},
    {.name = "matmul float16 out, sm_90a",
     .arch = TCC_SM_90A,
     .input = TCC_FLOAT16,
     .output = TCC_FLOAT16},
    {.name = "matmul int8, sm_90a",
     .arch = TCC_SM_90A,
     .input = TCC_INT8,
     .output = TCC_INT32,
     .b_col_major = true},
    {.name = "matmul WMMA 2x2 warps, bias, sm_80",
     .arch = TCC_SM_80,
     .bias = true,
     .schedule = &wmma_2x2},
    {.name = "conv2d wgmma 64x128, relu, sm_90a",
     .conv = true,
     .arch = TCC_SM_90A,
     .relu = true,
     .schedule = &wgmma_64x128},
};
enum { NJOB = sizeof jobs / sizeof jobs[0] };

/* What a compile gave: its status and error, or copies of its loop IR and PTX. */
typedef struct Result {
    tcc_status status;
    char error[256];
    char *loop_ir, *ptx;
} Result;

static void result_free(Result *result)
{
    free(result->loop_ir);
    free(result->ptx);
    memset(result, 0, sizeof *result);
}

/* Compiles job into *kernel on ctx (touching nothing shared: the descriptors are built here). */
static tcc_status compile_job(tcc_context *ctx, const Job *job, tcc_kernel **kernel)
{
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = job->arch;
    tcc_epilogue *epilogue;
    if (job->conv) {
        tcc_conv2d_desc desc;
        tcc_conv2d_desc_init(&desc);
        desc.batch = 2, desc.height = desc.width = 8, desc.in_channels = 64;
        desc.out_channels = 128, desc.kernel_h = desc.kernel_w = 3;
        desc.pad_top = desc.pad_bottom = desc.pad_left = desc.pad_right = 1;
        if (job->input != TCC_VOID)
            desc.input_type = job->input, desc.output_type = job->output;
        epilogue = &desc.epilogue;
        epilogue->bias = job->bias, epilogue->relu = job->relu;
        return tcc_conv2d_compile(ctx, &desc, job->schedule, &options, kernel);
    }
    tcc_matmul_desc desc;
    tcc_matmul_desc_init(&desc);
    desc.m = 256, desc.n = 128, desc.k = 128, desc.b_col_major = job->b_col_major;
    if (job->input != TCC_VOID)
        desc.input_type = job->input, desc.output_type = job->output;
    if (job->input == TCC_INT8)
        desc.accumulate_type = TCC_INT32;
    epilogue = &desc.epilogue;
    epilogue->bias = job->bias, epilogue->relu = job->relu;
    return tcc_matmul_compile(ctx, &desc, job->schedule, &options, kernel);
}

static Result compile_result(tcc_context *ctx, const Job *job)
{
    Result result = {0};
    tcc_kernel *kernel = NULL;
    result.status = compile_job(ctx, job, &kernel);
    snprintf(result.error, sizeof result.error, "%s", tcc_last_error(ctx));
    if (result.status == TCC_OK) {
        result.loop_ir = strdup(tcc_kernel_loop_ir(kernel));
        result.ptx = strdup(tcc_kernel_ptx(kernel));
    }
    tcc_kernel_destroy(kernel);
    return result;
}

/* Every job compiled on one thread, one context for all: what the threads must match. An
 * unchecked fixture, computed once in the process that forks each test. */
static Result serial[NJOB];

static void compile_serially(void)
{
    tcc_context *ctx = test_context();
    for (int j = 0; j < NJOB; j++) {
        serial[j] = compile_result(ctx, &jobs[j]);
        ck_assert_msg(serial[j].status == TCC_OK, "%s: %s", jobs[j].name, serial[j].error);
        const char *target = jobs[j].arch == TCC_SM_90A ? ".target sm_90a" : ".target sm_80";
        ck_assert_msg(strstr(serial[j].ptx, target) && strstr(serial[j].ptx, ".entry"),
                      "%s: its PTX lacks %s or an entry", jobs[j].name, target);
    }
    tcc_context_destroy(ctx);
}

static void free_serial_results(void)
{
    for (int j = 0; j < NJOB; j++)
        result_free(&serial[j]);
}

/* "" when got matches want, else what differs (static text: the caller reports it). */
static const char *compare(const Result *got, const Result *want)
{
    if (got->status != TCC_OK)
        return "the compile failed";
    if (strcmp(got->loop_ir, want->loop_ir) != 0)
        return "its loop IR differs from the single-threaded compile's";
    if (strcmp(got->ptx, want->ptx) != 0)
        return "its PTX differs from the single-threaded compile's";
    return "";
}

/* ---- separate contexts at once ---------------------------------------------------------- */

enum { NTHREAD = 8, ROUNDS = 2 };

typedef struct Worker {
    int index;
    pthread_barrier_t *start;
    char failure[512]; /* "" when every compile matched */
} Worker;

/* Its own context. Thread i compiles job i, then job i + 3: every job runs at once with all
 * the others, then again beside a different mix. */
static void *compile_worker(void *arg)
{
    Worker *w = arg;
    tcc_context *ctx = NULL;
    pthread_barrier_wait(w->start); /* all threads start compiling together */
    if (tcc_context_create(&ctx) != TCC_OK) {
        snprintf(w->failure, sizeof w->failure, "thread %d: no context", w->index);
        return NULL;
    }
    for (int round = 0; round < ROUNDS && !w->failure[0]; round++) {
        int j = (w->index + round * 3) % NJOB;
        Result got = compile_result(ctx, &jobs[j]);
        const char *why = compare(&got, &serial[j]);
        if (*why)
            snprintf(w->failure, sizeof w->failure, "thread %d, %s: %s (%s)", w->index,
                     jobs[j].name, why, got.error);
        result_free(&got);
    }
    tcc_context_destroy(ctx);
    return NULL;
}

START_TEST(test_separate_contexts_at_once)
{
    pthread_barrier_t start;
    ck_assert_int_eq(pthread_barrier_init(&start, NULL, NTHREAD), 0);
    Worker workers[NTHREAD];
    pthread_t threads[NTHREAD];
    for (int i = 0; i < NTHREAD; i++) {
        workers[i] = (Worker){.index = i, .start = &start};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, compile_worker, &workers[i]), 0);
    }
    for (int i = 0; i < NTHREAD; i++)
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < NTHREAD; i++)
        ck_assert_msg(!workers[i].failure[0], "%s", workers[i].failure);
}
END_TEST

/* ---- one context, one thread at a time -------------------------------------------------- */

typedef struct Handover {
    tcc_context *ctx;
    const Job *job;
    Result result;
} Handover;

static void *compile_handed_over(void *arg)
{
    Handover *h = arg;
    h->result = compile_result(h->ctx, h->job);
    return NULL;
}

/* A context created on this thread (its LLVM state made by a first compile on another) is
 * used by a second thread after the first has finished: pthread_join orders the two. */
START_TEST(test_context_moves_between_threads)
{
    Handover h = {.ctx = test_context()};
    for (int j = 0; j < NJOB; j += 3) {
        h.job = &jobs[j];
        pthread_t thread;
        ck_assert_int_eq(pthread_create(&thread, NULL, compile_handed_over, &h), 0);
        ck_assert_int_eq(pthread_join(thread, NULL), 0);
        const char *why = compare(&h.result, &serial[j]);
        ck_assert_msg(!*why, "%s: %s (%s)", jobs[j].name, why, h.result.error);
        result_free(&h.result);
    }
    tcc_context_destroy(h.ctx);
}
END_TEST

/* ---- a kernel shared read-only ---------------------------------------------------------- */

typedef struct Reader {
    int index;
    pthread_barrier_t *start;
    const tcc_kernel *const *kernels; /* [NJOB], shared by every reader */
    char failure[512];
} Reader;

/* Reads every accessor of every shared kernel and, where a GPU is present, loads each on a
 * device of its own context: tcc_kernel_load reads the kernel and writes only the device. */
static void *read_shared(void *arg)
{
    Reader *r = arg;
    pthread_barrier_wait(r->start);
    tcc_context *ctx = NULL;
    tcc_device *device = NULL;
    if (tcc_context_create(&ctx) == TCC_OK && tcc_device_open(ctx, 0, &device) != TCC_OK)
        device = NULL; /* no GPU: the accessors only */
    for (int j = 0; j < NJOB && !r->failure[0]; j++) {
        const tcc_kernel *kernel = r->kernels[j];
        int64_t grid[3], block[3];
        tcc_kernel_grid(kernel, grid);
        tcc_kernel_block(kernel, block);
        if (strcmp(tcc_kernel_ptx(kernel), serial[j].ptx) != 0 ||
            strcmp(tcc_kernel_loop_ir(kernel), serial[j].loop_ir) != 0 ||
            !tcc_kernel_name(kernel) || grid[0] < 1 || block[0] < 1)
            snprintf(r->failure, sizeof r->failure, "reader %d, %s: the shared kernel changed",
                     r->index, jobs[j].name);
        tcc_arch arch = jobs[j].arch;
        if (!device || tcc_arch_for_device(tcc_device_arch(device)) < arch)
            continue;
        tcc_loaded_kernel *loaded = NULL;
        if (tcc_kernel_load(device, kernel, &loaded) != TCC_OK)
            snprintf(r->failure, sizeof r->failure, "reader %d, %s: %s", r->index, jobs[j].name,
                     tcc_last_error(ctx));
        tcc_loaded_kernel_destroy(loaded);
    }
    tcc_device_close(device);
    tcc_context_destroy(ctx);
    return NULL;
}

START_TEST(test_kernel_shared_read_only)
{
    tcc_context *ctx = test_context();
    tcc_kernel *kernels[NJOB];
    for (int j = 0; j < NJOB; j++)
        ck_assert_int_eq(compile_job(ctx, &jobs[j], &kernels[j]), TCC_OK);
    tcc_context_destroy(ctx); /* the kernels outlive their context */

    enum { NREADER = 4 };
    pthread_barrier_t start;
    ck_assert_int_eq(pthread_barrier_init(&start, NULL, NREADER), 0);
    Reader readers[NREADER];
    pthread_t threads[NREADER];
    for (int i = 0; i < NREADER; i++) {
        readers[i] =
            (Reader){.index = i, .start = &start, .kernels = (const tcc_kernel *const *)kernels};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, read_shared, &readers[i]), 0);
    }
    for (int i = 0; i < NREADER; i++)
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < NREADER; i++)
        ck_assert_msg(!readers[i].failure[0], "%s", readers[i].failure);
    for (int j = 0; j < NJOB; j++)
        tcc_kernel_destroy(kernels[j]);
}
END_TEST

/* ---- CPU references at once -------------------------------------------------------------- */

/* The references run on threads of their own (tcc_matmul_reference's `threads`): several
 * at once, each splitting its outputs over three threads, must give the one-thread result. */
enum { REF_M = 48, REF_N = 40, REF_K = 32 };

typedef struct Reference {
    const tcc_matmul_desc *desc;
    const tcc_reference_tensors *tensors;
    const double *want;
    bool matched;
} Reference;

static void *reference_worker(void *arg)
{
    Reference *r = arg;
    double out[REF_M * REF_N];
    tcc_context *ctx = NULL;
    r->matched =
        tcc_context_create(&ctx) == TCC_OK &&
        tcc_matmul_reference(ctx, r->desc, r->tensors, NULL, REF_M * REF_N, 3, out) == TCC_OK &&
        memcmp(out, r->want, sizeof out) == 0;
    tcc_context_destroy(ctx);
    return NULL;
}

START_TEST(test_references_at_once)
{
    tcc_matmul_desc desc;
    tcc_matmul_desc_init(&desc);
    desc.m = REF_M, desc.n = REF_N, desc.k = REF_K;
    static uint16_t a[REF_M * REF_K], b[REF_K * REF_N];
    for (int i = 0; i < REF_M * REF_K; i++)
        a[i] = tcc_f32_to_f16((float)(i % 7) - 3.0f);
    for (int i = 0; i < REF_K * REF_N; i++)
        b[i] = tcc_f32_to_f16((float)(i % 5) * 0.5f);
    tcc_reference_tensors tensors = {
        .size = sizeof(tcc_reference_tensors), .input = a, .filter = b};
    static double want[REF_M * REF_N];
    tcc_context *ctx = test_context();
    ck_assert_int_eq(tcc_matmul_reference(ctx, &desc, &tensors, NULL, REF_M * REF_N, 1, want),
                     TCC_OK);
    tcc_context_destroy(ctx);

    enum { NREF = 4 };
    Reference refs[NREF];
    pthread_t threads[NREF];
    for (int i = 0; i < NREF; i++) {
        refs[i] = (Reference){.desc = &desc, .tensors = &tensors, .want = want};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, reference_worker, &refs[i]), 0);
    }
    for (int i = 0; i < NREF; i++) {
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        ck_assert_msg(refs[i].matched, "reference %d differs from the one-thread result", i);
    }
}
END_TEST

static Suite *threads_suite(void)
{
    Suite *suite = suite_create("threads");
    TCase *tc = test_case(suite, "threads", NULL, NULL);
    tcase_add_unchecked_fixture(tc, compile_serially, free_serial_results);
    /* Under ThreadSanitizer in a Debug build, on two busy cores. */
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_separate_contexts_at_once);
    tcase_add_test(tc, test_context_moves_between_threads);
    tcase_add_test(tc, test_kernel_shared_read_only);
    tcase_add_test(tc, test_references_at_once);
    return suite;
}

TEST_MAIN(threads_suite)
