/*
 * Fuzz target of the compile API (tcc/ops.h): a conv2d or matmul descriptor, a schedule and
 * an arch read from the input's bytes (fuzz_support.h), compiled to PTX by
 * tcc_conv2d_compile / tcc_matmul_compile, or TVM's tutorial convolution defined, scheduled
 * and built (tcc_build). Sizes are small, so that an input takes a compile's time (tens of
 * milliseconds) and not a large kernel's; now and then a field takes any 32-bit value, so
 * that the range checks and size products see values that overflow.
 *
 * Every input either compiles, to a kernel with PTX, or fails with a message and no kernel.
 * With TCC_FUZZ_PTXAS=/path/to/ptxas in the environment, the PTX of every kernel compiled
 * is also assembled for its arch, and a refusal of ptxas is a finding (writes the PTX to a
 * temporary file; off in CI, which has no ptxas).
 */
#include "fuzz_support.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A size: mostly small (1 to `small`), sometimes from a list of sizes with structure
 * (multiples of 16), rarely any 32-bit value, or a non-positive one. */
static int64_t fuzz_size(FuzzBytes *in, int64_t small)
{
    static const int64_t structured[] = {1, 2, 3, 8, 15, 16, 17, 32, 33, 48, 64, 96, 128};
    static const int64_t extreme[] = {0, -1, INT32_MAX, (int64_t)INT32_MAX + 1, 1 << 20, 65536};
    uint32_t choice = fuzz_u32(in, 1);
    if (choice < 160)
        return fuzz_range(in, 1, small);
    if (choice < 248)
        return fuzz_pick(in, structured, FUZZ_COUNT(structured));
    if (choice < 252)
        return fuzz_pick(in, extreme, FUZZ_COUNT(extreme));
    return (int32_t)fuzz_u32(in, 4);
}

/* An enum: its values, now and then one past them or negative. */
static int fuzz_enum(FuzzBytes *in, int count)
{
    uint32_t choice = fuzz_u32(in, 1);
    if (choice < 250)
        return (int)(choice % (uint32_t)count);
    return choice & 1 ? count : -1;
}

/* A schedule knob: 0 (chosen by the library) most often, small values, rarely anything. */
static int fuzz_knob(FuzzBytes *in, int small)
{
    uint32_t choice = fuzz_u32(in, 1);
    if (choice < 128)
        return 0;
    if (choice < 250)
        return (int)fuzz_range(in, 1, small);
    static const int64_t extreme[] = {-1, 268435456, INT_MAX, INT_MIN, 65536};
    return (int)fuzz_pick(in, extreme, FUZZ_COUNT(extreme));
}

static tcc_dtype fuzz_dtype(FuzzBytes *in)
{
    /* The common combinations most of the time, any dtype value else. */
    static const int64_t inputs[] = {TCC_FLOAT16, TCC_FLOAT16, TCC_BFLOAT16, TCC_FLOAT32, TCC_INT8};
    if (fuzz_u32(in, 1) < 200)
        return (tcc_dtype)fuzz_pick(in, inputs, FUZZ_COUNT(inputs));
    return (tcc_dtype)fuzz_enum(in, TCC_FLOAT32 + 1);
}

static void fuzz_types(FuzzBytes *in, tcc_dtype *input, tcc_dtype *acc, tcc_dtype *out)
{
    *input = fuzz_dtype(in);
    /* As the tools resolve them, unless the input says otherwise. */
    *acc = *input == TCC_INT8 ? TCC_INT32 : TCC_FLOAT32;
    *out = *acc;
    if (fuzz_u32(in, 1) >= 192)
        *acc = fuzz_dtype(in);
    if (fuzz_u32(in, 1) >= 160)
        *out = fuzz_dtype(in);
}

static tcc_epilogue fuzz_epilogue(FuzzBytes *in)
{
    tcc_epilogue e = {.alpha = 1.0};
    uint32_t flags = fuzz_u32(in, 1);
    if (flags & 1)
        e.alpha = fuzz_double(in);
    if (flags & 2)
        e.beta = fuzz_double(in);
    e.bias = flags & 4;
    e.residual = flags & 8;
    e.relu = flags & 16;
    e.clamp = flags & 32;
    if (e.clamp) {
        e.clamp_min = fuzz_double(in);
        e.clamp_max = fuzz_double(in);
    }
    if (flags & 64) {
        e.prologue = (tcc_prologue_op)fuzz_enum(in, TCC_PROLOGUE_RELU + 1);
        e.prologue_arg = fuzz_double(in);
    }
    return e;
}

static tcc_gemm_schedule fuzz_schedule(FuzzBytes *in)
{
    tcc_gemm_schedule s = {.size = sizeof(tcc_gemm_schedule)};
    if (fuzz_u32(in, 1) < 64)
        return s; /* the default schedule */
    int mma = fuzz_enum(in, tcc_mma_shape_count() + 1);
    if (mma > 0 && mma <= tcc_mma_shape_count()) {
        tcc_mma_shape shape = tcc_mma_shape_at(mma - 1);
        s.mma_m = shape.m, s.mma_n = shape.n, s.mma_k = shape.k;
    } else if (mma < 0) {
        s.mma_m = fuzz_knob(in, 64), s.mma_n = fuzz_knob(in, 64), s.mma_k = fuzz_knob(in, 32);
    }
    s.block_row_warps = fuzz_knob(in, 4);
    s.block_col_warps = fuzz_knob(in, 4);
    s.warp_row_tiles = fuzz_knob(in, 4);
    s.warp_col_tiles = fuzz_knob(in, 4);
    s.num_total_passes = fuzz_knob(in, 4);
    s.num_fused_passes = fuzz_knob(in, 4);
    s.policy = (tcc_mma_policy)fuzz_enum(in, TCC_MMA_BLOCK_ORDER + 1);
    s.column_major_blocks = fuzz_bool(in);
    s.stages = fuzz_knob(in, TCC_MAX_GEMM_STAGES);
    s.smem_layout = (tcc_smem_layout)fuzz_enum(in, TCC_SMEM_SWIZZLED + 1);
    s.intrinsic = (tcc_gemm_intrinsic)fuzz_enum(in, TCC_GEMM_WGMMA + 1);
    s.split_k = fuzz_knob(in, 8);
    s.wgmma_steps = fuzz_knob(in, 2);
    s.copy = (tcc_gemm_copy)fuzz_enum(in, TCC_GEMM_COPY_BULK + 1);
    s.producer = (tcc_gemm_producer)fuzz_enum(in, TCC_GEMM_PRODUCER_WARPGROUP + 1);
    s.store = (tcc_gemm_store)fuzz_enum(in, TCC_GEMM_STORE_BULK + 1);
    s.grid = (tcc_gemm_grid)fuzz_enum(in, TCC_GEMM_GRID_PERSISTENT + 1);
    s.grid_blocks = fuzz_knob(in, 8);
    s.cluster = fuzz_knob(in, 4);
    s.consumers = (tcc_gemm_consumers)fuzz_enum(in, TCC_GEMM_CONSUMERS_PINGPONG + 1);
    return s;
}

static tcc_conv2d_desc fuzz_conv2d(FuzzBytes *in)
{
    tcc_conv2d_desc d;
    tcc_conv2d_desc_init(&d);
    d.batch = fuzz_size(in, 4);
    d.height = fuzz_size(in, 12);
    d.width = fuzz_size(in, 12);
    d.in_channels = fuzz_size(in, 40);
    d.out_channels = fuzz_size(in, 40);
    d.kernel_h = fuzz_size(in, 4);
    d.kernel_w = fuzz_size(in, 4);
    d.stride_h = fuzz_size(in, 3);
    d.stride_w = fuzz_size(in, 3);
    d.pad_top = fuzz_size(in, 3) - 1;
    d.pad_bottom = fuzz_size(in, 3) - 1;
    d.pad_left = fuzz_size(in, 3) - 1;
    d.pad_right = fuzz_size(in, 3) - 1;
    d.dilation_h = fuzz_size(in, 3);
    d.dilation_w = fuzz_size(in, 3);
    /* Groups: 1 mostly, depthwise, or whatever comes. */
    uint32_t groups = fuzz_u32(in, 1);
    d.groups = groups < 160 ? 1 : groups < 200 ? d.in_channels : fuzz_size(in, 8);
    d.layout = (tcc_layout)fuzz_enum(in, TCC_LAYOUT_NHWCNC + 1);
    d.filter_layout = (tcc_filter_layout)fuzz_enum(in, TCC_FILTER_BLOCKED + 1);
    fuzz_types(in, &d.input_type, &d.accumulate_type, &d.output_type);
    d.epilogue = fuzz_epilogue(in);
    return d;
}

static tcc_matmul_desc fuzz_matmul(FuzzBytes *in)
{
    tcc_matmul_desc d;
    tcc_matmul_desc_init(&d);
    d.batch = fuzz_size(in, 3);
    d.m = fuzz_size(in, 80);
    d.n = fuzz_size(in, 80);
    d.k = fuzz_size(in, 80);
    d.a_col_major = fuzz_bool(in);
    d.b_col_major = fuzz_bool(in);
    fuzz_types(in, &d.input_type, &d.accumulate_type, &d.output_type);
    d.epilogue = fuzz_epilogue(in);
    return d;
}

/* Runs ptxas on `ptx` for `arch`; returns its exit status (0 when the file cannot be written:
 * not the PTX's fault). */
static int run_ptxas(const char *ptxas, const char *ptx, const char *arch, char *command,
                     size_t size)
{
    char path[] = "/tmp/tcc-fuzz-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    size_t len = strlen(ptx);
    bool written = write(fd, ptx, len) == (ssize_t)len;
    close(fd);
    snprintf(command, size, "'%s' -arch=%s '%s' -o /dev/null 2>&1", ptxas, arch, path);
    int rc = written ? system(command) : 0;
    unlink(path);
    return rc;
}

/* Whether this ptxas assembles for `arch` at all: newer toolkits drop old archs (CUDA 13 has
 * no sm_70). Asked once an arch, with a module that declares nothing. */
static bool ptxas_knows(const char *ptxas, tcc_arch arch)
{
    static signed char known[TCC_SM_90A + 1];
    if (!known[arch]) {
        char ptx[128], command[512];
        snprintf(ptx, sizeof ptx, ".version 8.0\n.target %s\n.address_size 64\n",
                 tcc_arch_name(arch));
        known[arch] =
            run_ptxas(ptxas, ptx, tcc_arch_name(arch), command, sizeof command) == 0 ? 1 : -1;
    }
    return known[arch] > 0;
}

/* TCC_FUZZ_PTXAS: assembles the kernel's PTX for its arch; a refusal traps. */
static void assemble(const tcc_kernel *kernel, tcc_arch arch)
{
    static const char *ptxas;
    static bool looked;
    if (!looked) {
        ptxas = getenv("TCC_FUZZ_PTXAS");
        looked = true;
    }
    if (!ptxas || !*ptxas || !ptxas_knows(ptxas, arch))
        return;
    char command[512];
    if (run_ptxas(ptxas, tcc_kernel_ptx(kernel), tcc_arch_name(arch), command, sizeof command)) {
        fprintf(stderr, "fuzz: ptxas refused the PTX (%s)\n%s", command, tcc_kernel_ptx(kernel));
        __builtin_trap();
    }
}

/* The kernel's invariants on success, the message's on failure. */
static void check_result(tcc_context *ctx, const char *call, tcc_status status, tcc_kernel *kernel,
                         tcc_arch arch)
{
    if (fuzz_check_status(ctx, call, status) != TCC_OK) {
        if (kernel)
            __builtin_trap(); /* a failed compile leaves no kernel */
        return;
    }
    const char *ptx = kernel ? tcc_kernel_ptx(kernel) : NULL;
    if (!ptx || !*ptx || !tcc_kernel_loop_ir(kernel)) {
        fprintf(stderr, "fuzz: %s succeeded without PTX\n", call);
        __builtin_trap();
    }
    assemble(kernel, arch);
}

static void compile_tutorial(tcc_context *ctx, FuzzBytes *in, const tcc_build_options *build)
{
    tcc_conv2d_desc d;
    tcc_tutorial_conv2d_desc(&d);
    /* The tutorial's form (NHWCnc, multiples of 16) at sizes that compile quickly. */
    d.batch = 16 * fuzz_range(in, 0, 2);
    d.height = fuzz_size(in, 8);
    d.width = fuzz_size(in, 8);
    d.in_channels = 16 * fuzz_range(in, 0, 4);
    d.out_channels = 16 * fuzz_range(in, 0, 8);
    d.kernel_h = d.kernel_w = fuzz_size(in, 3);
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = fuzz_range(in, 0, 2);
    if (fuzz_u32(in, 1) >= 224)
        d = fuzz_conv2d(in);
    tcc_tutorial_conv2d_params p;
    tcc_tutorial_conv2d_params_init(&p);
    if (fuzz_bool(in)) {
        int64_t *tiles[] = {&p.block_row_warps, &p.block_col_warps, &p.warp_row_tiles,
                            &p.warp_col_tiles, &p.chunk};
        for (size_t i = 0; i < FUZZ_COUNT(tiles); i++)
            *tiles[i] = fuzz_u32(in, 1) < 240 ? fuzz_range(in, 0, 4) : (int32_t)fuzz_u32(in, 4);
    }
    tcc_func *func = NULL;
    tcc_kernel *kernel = NULL;
    tcc_tutorial_conv2d conv;
    tcc_status status = tcc_func_create(ctx, "conv2d", &func);
    if (status == TCC_OK)
        status = tcc_tutorial_conv2d_define(func, &d, &conv);
    if (status == TCC_OK)
        status = tcc_schedule_create(func, 1, &conv.output);
    if (status == TCC_OK)
        status = tcc_tutorial_conv2d_schedule(func, &conv, &p);
    if (status == TCC_OK) {
        tcc_tensor *params[3] = {conv.input, conv.filter, conv.output};
        status = tcc_build(func, 3, params, build, &kernel);
    }
    check_result(ctx, "the tutorial's convolution", status, kernel, build->arch);
    tcc_kernel_destroy(kernel);
    tcc_func_destroy(func);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzBytes in = {data, size, 0};
    uint32_t op = fuzz_u32(&in, 1) % 5; /* conv2d, matmul, and the tutorial half as often */
    tcc_build_options build;
    tcc_build_options_init(&build);
    build.arch = tcc_arch_at((int)fuzz_range(&in, 0, tcc_arch_count() - 1));
    tcc_context *ctx = NULL;
    if (tcc_context_create(&ctx) != TCC_OK)
        return 0;
    tcc_kernel *kernel = NULL;
    tcc_gemm_schedule chosen;
    tcc_gemm_schedule_init(&chosen);
    if (op <= 1) {
        tcc_conv2d_desc d = fuzz_conv2d(&in);
        tcc_gemm_schedule s = fuzz_schedule(&in);
        fuzz_check_status(ctx, "tcc_conv2d_default_schedule",
                          tcc_conv2d_default_schedule(ctx, &d, build.arch, &chosen));
        tcc_status status = tcc_conv2d_compile(ctx, &d, &s, &build, &kernel);
        check_result(ctx, "tcc_conv2d_compile", status, kernel, build.arch);
    } else if (op <= 3) {
        tcc_matmul_desc d = fuzz_matmul(&in);
        tcc_gemm_schedule s = fuzz_schedule(&in);
        fuzz_check_status(ctx, "tcc_matmul_default_schedule",
                          tcc_matmul_default_schedule(ctx, &d, build.arch, &chosen));
        tcc_status status = tcc_matmul_compile(ctx, &d, &s, &build, &kernel);
        check_result(ctx, "tcc_matmul_compile", status, kernel, build.arch);
    } else {
        compile_tutorial(ctx, &in, &build);
    }
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
    return 0;
}
