/*
 * tcc-matrix: a randomized test matrix of tcc's convolutions and matrix products on the GPU.
 *
 * Each configuration is drawn from its own stream, derived from the seed and its index, so
 * `--seed S --only K` replays configuration K alone, exactly as it ran in the whole matrix.
 * A configuration is compiled (tcc_conv2d_compile / tcc_matmul_compile), run once on random
 * inputs and compared in full with the double-precision CPU reference (tcc_*_check).
 *
 * What is drawn (the items 1-5):
 *   conv2d (75%): N 1-4, H/W 1-20, C/K 1-72, R/S in {1,2,3,5,7}, stride 1-3, pads 0-3 per
 *     side, dilation 1-3, groups 1/2/3/depthwise; NHWC or NCHW with a KRSC or KCRS filter,
 *     or NHWCnc (N = 16, C and K multiples of 16, groups 1) with the blocked filter
 *   matmul (25%): m, n, k 1-150, batch 1-3, A and B row- or column-major
 *   one in six (not blocked) shaped for bulk copies: 64 or 128 NHWC channels, KRSC; k a
 *     multiple of 64, rows whole 16-byte units; half of them with a producer warpgroup, a
 *     quarter in clusters of two blocks along m (m = 256);
 *     half of the wgmma schedules store from registers, half of those (with bulk copies) in
 *     a persistent grid of 1 to 3 blocks or one a multiprocessor (the default for float32
 *     outputs)
 *   types: f16->f32->f32 (most), f16 accumulation, f16 and bf16 outputs, bf16, tf32, s8->s32
 *     (on sm_90a wgmma for all but f16 accumulation, where the operands are k-major)
 *   schedule: the default, or an MMA shape valid for the types, or random warps, warp tiles,
 *     passes, fused passes, policy and block order (a schedule the library refuses for its
 *     size is drawn again: "redrawn", not a failure)
 *   epilogue: random subsets of bias, alpha, beta (residual or previous output), ReLU,
 *     clamp and a prologue (set, scale, ReLU)
 *
 * usage: tcc-matrix [--seed S] [--count N] [--only K] [--verbose] [--compile-only [--arch A]]
 * exit status: 0 all passed, 1 a failure, 2 bad arguments, 77 no GPU (ctest's skip).
 */
#include "matrix_draw.h"

#include <tcc/tcc.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_COUNT 240
#define MAX_REDRAWS 8 /* schedules refused for their size before falling back to the default */
#define EXIT_SKIP 77

/* ---- descriptions ------------------------------------------------------------------------- */

typedef struct Text {
    char buf[1024];
    size_t len;
} Text;

static void put(Text *t, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void put(Text *t, const char *format, ...)
{
    if (t->len >= sizeof t->buf - 1)
        return;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, format, args);
    va_end(args);
    if (n > 0)
        t->len += (size_t)n < sizeof t->buf - t->len ? (size_t)n : sizeof t->buf - 1 - t->len;
}

/* How the configuration lines name the types (float32 inputs run as tf32). */
static const char *short_type(tcc_dtype type, bool as_input)
{
    static const char *const names[] = {
        [TCC_FLOAT16] = "f16", [TCC_BFLOAT16] = "bf16", [TCC_FLOAT32] = "f32",
        [TCC_INT8] = "s8",     [TCC_INT32] = "s32",
    };
    if (type == TCC_FLOAT32 && as_input)
        return "tf32";
    bool known = (int)type >= 0 && (size_t)type < sizeof names / sizeof names[0] && names[type];
    return known ? names[type] : "?";
}

static void put_conv(Text *t, const tcc_conv2d_desc *d)
{
    static const char *const layouts[] = {"NHWC", "NCHW", "NHWCnc"};
    static const char *const filters[] = {"KRSC", "KCRS", "blocked"};
    put(t, "conv N%lld H%lld W%lld C%lld K%lld R%lld S%lld stride%lld,%lld", (long long)d->batch,
        (long long)d->height, (long long)d->width, (long long)d->in_channels,
        (long long)d->out_channels, (long long)d->kernel_h, (long long)d->kernel_w,
        (long long)d->stride_h, (long long)d->stride_w);
    put(t, " pad%lld,%lld,%lld,%lld dil%lld,%lld g%lld %s/%s", (long long)d->pad_top,
        (long long)d->pad_bottom, (long long)d->pad_left, (long long)d->pad_right,
        (long long)d->dilation_h, (long long)d->dilation_w, (long long)d->groups,
        layouts[d->layout], filters[d->filter_layout]);
}

static void put_matmul(Text *t, const tcc_matmul_desc *d)
{
    put(t, "matmul batch%lld m%lld n%lld k%lld A:%s B:%s", (long long)d->batch, (long long)d->m,
        (long long)d->n, (long long)d->k, d->a_col_major ? "col" : "row",
        d->b_col_major ? "col" : "row");
}

static void put_types(Text *t, tcc_dtype in, tcc_dtype acc, tcc_dtype out)
{
    put(t, " %s->%s->%s", short_type(in, true), short_type(acc, false), short_type(out, false));
}

/* Knobs as set; 0 is the library's choice. */
static void put_schedule(Text *t, const Config *c)
{
    if (!c->scheduled) {
        put(t, " sched=default");
        return;
    }
    const tcc_gemm_schedule *s = &c->schedule;
    put(t, " mma%dx%dx%d", s->mma_m, s->mma_n, s->mma_k);
    if (s->producer == TCC_GEMM_PRODUCER_WARPGROUP)
        put(t, " producer=warpgroup");
    if (s->store == TCC_GEMM_STORE_REGISTERS || s->store == TCC_GEMM_STORE_BULK)
        put(t, s->store == TCC_GEMM_STORE_BULK ? " store=bulk" : " store=registers");
    if (s->grid == TCC_GEMM_GRID_PERSISTENT)
        put(t, " grid=persistent:%d", s->grid_blocks);
    if (s->cluster > 1)
        put(t, " cluster=%d", s->cluster);
    if (s->consumers == TCC_GEMM_CONSUMERS_PINGPONG)
        put(t, " consumers=pingpong warp-tiles=%dx1", s->warp_row_tiles);
    if (!s->block_row_warps && !s->block_col_warps && !s->warp_row_tiles && !s->warp_col_tiles &&
        !s->num_total_passes)
        return;
    put(t, " warps%dx%d tiles%dx%d passes%d/%d %s %s", s->block_row_warps, s->block_col_warps,
        s->warp_row_tiles, s->warp_col_tiles, s->num_total_passes, s->num_fused_passes,
        s->policy == TCC_MMA_BLOCK_ORDER ? "block-order" : "pass-order",
        s->column_major_blocks ? "col-blocks" : "row-blocks");
    static const char *const layouts[] = {"auto", "dense", "padded", "swizzled"};
    static const char *const intrinsics[] = {"auto", "wmma", "mma_sync", "wgmma"};
    put(t, " stages%d smem=%s intrinsic=%s split-k%d", s->stages, layouts[s->smem_layout],
        intrinsics[s->intrinsic], s->split_k);
    if (s->intrinsic == TCC_GEMM_WGMMA)
        put(t, " wgmma-steps%d copy=%s", s->wgmma_steps,
            s->copy == TCC_GEMM_COPY_THREADS ? "threads" : "auto");
}

static void put_epilogue(Text *t, const tcc_epilogue *e)
{
    static const char *const prologues[] = {"", "set", "scale", "relu"};
    size_t start = t->len;
    put(t, " epi{");
    if (e->bias)
        put(t, " bias");
    if (e->alpha != 1.0)
        put(t, " alpha=%g", e->alpha);
    if (e->beta != 0.0)
        put(t, " beta=%g*%s", e->beta, e->residual ? "residual" : "previous");
    if (e->relu)
        put(t, " relu");
    if (e->clamp)
        put(t, " clamp[%g,%g]", e->clamp_min, e->clamp_max);
    if (e->prologue != TCC_PROLOGUE_NONE)
        put(t, " prologue=%s(%g)", prologues[e->prologue], e->prologue_arg);
    if (t->len == start + 5) { /* nothing but " epi{" */
        t->len = start;
        t->buf[start] = '\0';
        return;
    }
    put(t, " }");
}

static Text describe(const Config *c)
{
    Text t = {.len = 0};
    t.buf[0] = '\0';
    if (c->matmul) {
        put_matmul(&t, &c->mm);
        put_types(&t, c->mm.input_type, c->mm.accumulate_type, c->mm.output_type);
        put_epilogue(&t, &c->mm.epilogue);
    } else {
        put_conv(&t, &c->conv);
        put_types(&t, c->conv.input_type, c->conv.accumulate_type, c->conv.output_type);
        put_epilogue(&t, &c->conv.epilogue);
    }
    put_schedule(&t, c);
    return t;
}

/* ---- running ------------------------------------------------------------------------------ */

typedef struct Args {
    uint64_t seed;
    int count, only; /* only < 0: every configuration */
    bool verbose, compile_only;
    const char *arch_name;
} Args;

typedef struct Totals {
    int passed, failed, skipped, redrawn;
} Totals;

typedef struct Runner {
    tcc_context *ctx;
    tcc_device *device; /* NULL with --compile-only, or once a reopen failed */
    tcc_arch arch;
    const Args *args;
    Totals totals;
    int failures[64]; /* the first failed indices, for the replay hints */
    int nfailure;
} Runner;

static const char *status_name(tcc_status status)
{
    static const char *const names[] = {
        "ok", "invalid argument", "unsupported", "schedule", "llvm", "cuda", "out of memory"};
    return status >= TCC_OK && status <= TCC_ERROR_OUT_OF_MEMORY ? names[status] : "unknown";
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Knobs of sm_90a alone: wgmma, and the bulk copy engine with what builds on it (a producer
 * warpgroup, a persistent grid, clusters, ping-pong consumers, stores from wgmma's registers
 * or through the engine). */
static bool needs_sm90a(const tcc_gemm_schedule *s)
{
    return s->intrinsic == TCC_GEMM_WGMMA || s->copy == TCC_GEMM_COPY_BULK ||
           s->producer == TCC_GEMM_PRODUCER_WARPGROUP || s->store == TCC_GEMM_STORE_BULK ||
           s->store == TCC_GEMM_STORE_REGISTERS || s->grid == TCC_GEMM_GRID_PERSISTENT ||
           s->cluster > 1 || s->consumers == TCC_GEMM_CONSUMERS_PINGPONG;
}

/* What the device's tensor cores or copy engines lack is skipped, not failed. */
static bool arch_supports(tcc_arch arch, const Config *c)
{
    tcc_dtype input = input_type(c);
    tcc_dtype output = c->matmul ? c->mm.output_type : c->conv.output_type;
    bool mma_sync = c->scheduled && c->schedule.intrinsic == TCC_GEMM_MMA_SYNC;
    if (c->scheduled && needs_sm90a(&c->schedule))
        return arch == TCC_SM_90A;
    if (input == TCC_BFLOAT16 || input == TCC_FLOAT32 || output == TCC_BFLOAT16 || mma_sync)
        return arch >= TCC_SM_80;
    if (input == TCC_INT8)
        return arch >= TCC_SM_75;
    return true;
}

static tcc_status compile_once(Runner *run, const Config *c, tcc_kernel **kernel)
{
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = run->arch;
    const tcc_gemm_schedule *s = c->scheduled ? &c->schedule : NULL;
    if (c->matmul)
        return tcc_matmul_compile(run->ctx, &c->mm, s, &options, kernel);
    return tcc_conv2d_compile(run->ctx, &c->conv, s, &options, kernel);
}

/* A drawn schedule the library refuses for its size (threads, shared memory) is drawn
 * again from the configuration's stream; after MAX_REDRAWS, the default schedule. The
 * default itself being refused is a failure like any other. */
static tcc_status compile_config(Runner *run, Config *c, tcc_kernel **kernel)
{
    for (int attempt = 0;; attempt++) {
        *kernel = NULL;
        tcc_status status = compile_once(run, c, kernel);
        if (status != TCC_ERROR_SCHEDULE || !c->scheduled)
            return status;
        run->totals.redrawn++;
        if (run->args->verbose)
            printf("[%d]   redrawn: %s\n", c->index, tcc_last_error(run->ctx));
        if (attempt + 1 >= MAX_REDRAWS) {
            c->scheduled = false;
            continue;
        }
        tcc_gemm_schedule shape = c->schedule;
        draw_knobs(&c->rng, input_type(c), &c->schedule);
        c->schedule.mma_m = shape.mma_m, c->schedule.mma_n = shape.mma_n;
        c->schedule.mma_k = shape.mma_k;
        /* A redraw keeps to what the device runs (mma.sync needs sm_80). */
        if (!arch_supports(run->arch, c))
            c->schedule.intrinsic = TCC_GEMM_INTRINSIC_AUTO;
    }
}

static tcc_status check_config(Runner *run, const Config *c, const tcc_kernel *kernel,
                               tcc_check_result *result)
{
    tcc_check_options options = {.size = sizeof options,
                                 .seed = c->data_seed,
                                 .samples = 0,
                                 .threads = 0,
                                 .warmup = 0,
                                 .runs = 0};
    memset(result, 0, sizeof *result);
    result->size = sizeof *result;
    if (c->matmul)
        return tcc_matmul_check(run->device, kernel, &c->mm, &options, result);
    return tcc_conv2d_check(run->device, kernel, &c->conv, &options, result);
}

static void record_failure(Runner *run, int index)
{
    run->totals.failed++;
    if (run->nfailure < (int)(sizeof run->failures / sizeof run->failures[0]))
        run->failures[run->nfailure++] = index;
}

/* A driver error can leave the context unusable (an illegal address is sticky): close the
 * device and open it again, so that one bad kernel does not fail every later one. */
static void reopen_device(Runner *run)
{
    tcc_device_close(run->device);
    run->device = NULL;
    if (tcc_device_open(run->ctx, 0, &run->device) != TCC_OK) {
        printf("error: cannot reopen the device after a driver error: %s\n",
               tcc_last_error(run->ctx));
        run->device = NULL;
    }
}

static void print_kernel(const Config *c, const tcc_kernel *kernel, double seconds)
{
    int64_t grid[3], block[3];
    tcc_kernel_grid(kernel, grid);
    tcc_kernel_block(kernel, block);
    printf("[%d]   kernel %s: grid(%lld,%lld,%lld) block(%lld,%lld,%lld) %lld B shared, "
           "compiled in %.2f s\n",
           c->index, tcc_kernel_name(kernel), (long long)grid[0], (long long)grid[1],
           (long long)grid[2], (long long)block[0], (long long)block[1], (long long)block[2],
           (long long)tcc_kernel_shared_bytes(kernel), seconds);
}

/* Runs and checks a compiled kernel; prints the configuration's line. */
static void run_kernel(Runner *run, const Config *c, const tcc_kernel *kernel, const char *text)
{
    if (!run->device) {
        printf("[%d] FAIL %s err=- tol=- error: no device (a reopen failed)\n", c->index, text);
        record_failure(run, c->index);
        return;
    }
    tcc_check_result result;
    double start = seconds_now();
    tcc_status status = check_config(run, c, kernel, &result);
    if (status != TCC_OK) {
        printf("[%d] FAIL %s err=- tol=- check: %s: %s\n", c->index, text, status_name(status),
               tcc_last_error(run->ctx));
        record_failure(run, c->index);
        if (status == TCC_ERROR_CUDA)
            reopen_device(run);
        return;
    }
    bool passed = result.passed && result.unwritten == 0;
    printf("[%d] %s %s err=%.3g tol=%.3g", c->index, passed ? "PASS" : "FAIL", text,
           result.max_error, result.tolerance);
    if (result.unwritten)
        printf(" unwritten=%lld", (long long)result.unwritten);
    if (run->args->verbose)
        printf(" normwise=%.3g compared=%lld (%.2f s)", result.normwise_error,
               (long long)result.compared, seconds_now() - start);
    printf("\n");
    if (passed)
        run->totals.passed++;
    else
        record_failure(run, c->index);
}

static void run_config(Runner *run, int index)
{
    Config c = draw_config(run->args->seed, index);
    Text text = describe(&c);
    if (!arch_supports(run->arch, &c)) {
        printf("[%d] SKIP %s (needs a newer GPU than %s)\n", index, text.buf,
               tcc_arch_name(run->arch));
        run->totals.skipped++;
        return;
    }
    if (run->args->verbose)
        printf("[%d]   start %s\n", index, text.buf);
    fflush(stdout); /* a crash below still shows which configuration it was */
    tcc_kernel *kernel = NULL;
    double start = seconds_now();
    tcc_status status = compile_config(run, &c, &kernel);
    text = describe(&c); /* the schedule may have been redrawn */
    if (status != TCC_OK) {
        printf("[%d] FAIL %s err=- tol=- compile: %s: %s\n", index, text.buf, status_name(status),
               tcc_last_error(run->ctx));
        record_failure(run, index);
    } else if (run->args->compile_only) {
        printf("[%d] PASS %s (compiled only)\n", index, text.buf);
        run->totals.passed++;
    } else {
        if (run->args->verbose)
            print_kernel(&c, kernel, seconds_now() - start);
        run_kernel(run, &c, kernel, text.buf);
    }
    tcc_kernel_destroy(kernel);
    fflush(stdout);
}

/* ---- arguments and the device --------------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tcc-matrix [--seed S] [--count N] [--only K] [--verbose]\n"
            "                  [--compile-only [--arch sm_XX]]\n"
            "  --seed S        seed of the draw (default: from the clock; always printed)\n"
            "  --count N       configurations to draw (default %d)\n"
            "  --only K        run configuration K alone (replays it with the same seed)\n"
            "  --verbose       print each kernel's launch shape, redraws and timings\n"
            "  --compile-only  compile without a GPU (for --arch, default sm_90)\n"
            "exit status: 0 all passed, 1 a failure, 2 bad arguments, 77 no GPU\n",
            DEFAULT_COUNT);
}

static bool parse_number(const char *name, const char *text, unsigned long long max,
                         unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text ? text : "", &end, 10);
    if (!text || !(*text >= '0' && *text <= '9') || *end != '\0' || errno == ERANGE ||
        value > max) {
        fprintf(stderr, "tcc-matrix: %s needs a number up to %llu, got '%s'\n", name, max,
                text ? text : "");
        return false;
    }
    *out = value;
    return true;
}

static uint64_t clock_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    Rng r = {(uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec};
    return next_u64(&r) % 1000000000000ull; /* short enough to copy from a log */
}

/* The value of `--name value` or `--name=value`; advances *i past it. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t len = strlen(name);
    if (strncmp(argv[*i], name, len) == 0 && argv[*i][len] == '=')
        return argv[*i] + len + 1;
    return *i + 1 < argc ? argv[++*i] : NULL;
}

static bool option_is(const char *arg, const char *name)
{
    size_t len = strlen(name);
    return strncmp(arg, name, len) == 0 && (arg[len] == '\0' || arg[len] == '=');
}

/* One `--name N` option into *out (a seed, count or index). */
static bool numeric_option(int argc, char **argv, int *i, const char *name, unsigned long long max,
                           unsigned long long *out)
{
    return parse_number(name, option_value(argc, argv, i, name), max, out);
}

/* Parses one argument at argv[*i]; false on a bad one. */
static bool parse_arg(int argc, char **argv, int *i, Args *a, bool *seeded)
{
    const char *arg = argv[*i];
    unsigned long long v = 0;
    bool ok = true;
    if (option_is(arg, "--seed")) {
        ok = numeric_option(argc, argv, i, "--seed", UINT64_MAX, &v);
        a->seed = v;
        *seeded = true;
    } else if (option_is(arg, "--count")) {
        ok = numeric_option(argc, argv, i, "--count", 1000000, &v);
        a->count = (int)v;
    } else if (option_is(arg, "--only")) {
        ok = numeric_option(argc, argv, i, "--only", 1000000, &v);
        a->only = (int)v;
    } else if (option_is(arg, "--arch")) {
        a->arch_name = option_value(argc, argv, i, "--arch");
        ok = a->arch_name != NULL;
    } else if (strcmp(arg, "--verbose") == 0 || strcmp(arg, "-v") == 0) {
        a->verbose = true;
    } else if (strcmp(arg, "--compile-only") == 0) {
        a->compile_only = true;
    } else {
        fprintf(stderr, "tcc-matrix: unknown argument '%s'\n", arg);
        ok = false;
    }
    return ok;
}

/* Returns an exit status (0 after --help, 2 for bad arguments), or -1 to go on. */
static int parse_args(int argc, char **argv, Args *a)
{
    *a = (Args){.count = DEFAULT_COUNT, .only = -1, .arch_name = "sm_90"};
    bool seeded = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (!parse_arg(argc, argv, &i, a, &seeded)) {
            usage(stderr);
            return 2;
        }
    }
    if (!seeded)
        a->seed = clock_seed();
    return -1;
}

/* The newest architecture tcc targets that the device runs (sm_90a on compute capability 9.0). */
static bool device_arch(int cc, tcc_arch *out)
{
    *out = tcc_arch_for_device(cc);
    return *out != 0;
}

/* No driver, or a driver without a device, is a skip; any other failure is an error. */
static bool no_gpu(tcc_status status, const char *message)
{
    return status == TCC_ERROR_CUDA &&
           (strstr(message, "cannot load") || strstr(message, "CUDA_ERROR_NO_DEVICE") ||
            strstr(message, "no CUDA-capable device"));
}

/* Opens GPU 0 (unless compiling only) and picks the arch; returns an exit status, or -1. */
static int open_runner(Runner *run)
{
    if (run->args->compile_only) {
        if (tcc_arch_parse(run->ctx, run->args->arch_name, &run->arch) != TCC_OK) {
            fprintf(stderr, "tcc-matrix: %s\n", tcc_last_error(run->ctx));
            return 2;
        }
        printf("compile only, for %s\n", tcc_arch_name(run->arch));
        return -1;
    }
    tcc_status status = tcc_device_open(run->ctx, 0, &run->device);
    if (status != TCC_OK) {
        const char *message = tcc_last_error(run->ctx);
        bool skip = no_gpu(status, message);
        printf("%s: %s\n", skip ? "SKIP: no GPU" : "error: cannot open GPU 0", message);
        return skip ? EXIT_SKIP : 1;
    }
    int cc = tcc_device_arch(run->device);
    if (!device_arch(cc, &run->arch)) {
        printf("SKIP: no GPU with tensor cores (%s is sm_%d)\n", tcc_device_name(run->device), cc);
        return EXIT_SKIP;
    }
    printf("device: %s (sm_%d), compiling for %s\n", tcc_device_name(run->device), cc,
           tcc_arch_name(run->arch));
    return -1;
}

static int summarize(const Runner *run)
{
    const Totals *t = &run->totals;
    printf("%d passed, %d failed\n", t->passed, t->failed);
    printf("%d skipped, %d schedules redrawn\n", t->skipped, t->redrawn);
    for (int i = 0; i < run->nfailure; i++)
        printf("replay: tcc-matrix --seed %llu --only %d --verbose\n",
               (unsigned long long)run->args->seed, run->failures[i]);
    printf("seed: %llu\n", (unsigned long long)run->args->seed);
    return t->failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    Args args;
    int status = parse_args(argc, argv, &args);
    if (status >= 0)
        return status;
    printf("seed: %llu\n", (unsigned long long)args.seed);
    fflush(stdout);
    Runner run = {.args = &args};
    if (tcc_context_create(&run.ctx) != TCC_OK) {
        printf("error: cannot create a tcc context\n");
        return 1;
    }
    status = open_runner(&run);
    if (status < 0) {
        int first = args.only >= 0 ? args.only : 0;
        int last = args.only >= 0 ? args.only + 1 : args.count;
        for (int k = first; k < last; k++)
            run_config(&run, k);
        status = summarize(&run);
    }
    tcc_device_close(run.device);
    tcc_context_destroy(run.ctx);
    return status;
}
