/*
 * tcc-interop-test: conv2d and matmul kernels launched on memory and a stream of the
 * program's own, as PyTorch or an inference engine would launch them
 * (tcc_kernel_launch_async), checked against the CPU reference.
 *
 * The program opens libcuda.so.1 itself, retains the device's primary context (as the CUDA
 * runtime does), allocates every parameter with cuMemAlloc at an address 16 bytes past
 * a 256-byte boundary or more (the alignment tcc_kernel_param promises is enough), creates a
 * non-blocking stream, and on that stream alone uploads fresh random inputs, poisons the
 * output (or uploads its previous contents where the kernel reads them), launches, and
 * downloads, then synchronizes the stream once: nothing orders the launch but the stream.
 * Each case learns its tensors from tcc_kernel_param (names, shapes, bytes), half of them
 * with no context current on the thread (which must stay so) and half with the primary one;
 * the kernels with workspaces (staged NCHW operands, split-K) take the program's own in
 * half the cases. Also refused, on the real driver: a misaligned address and a stream of
 * another context.
 *
 * usage: tcc-interop-test [--seed S]
 * exit status: 0 passed, 1 a failure, 77 no driver or no device (ctest's skip).
 */
#include <tcc/tcc.h>

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_SKIP 77

/* ---- the driver, opened here as a program outside tcc opens it ------------------------------ */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;

enum { CU_STREAM_NON_BLOCKING = 1 };

typedef struct Driver {
    void *library;
    CUresult (*cuInit)(unsigned int flags);
    CUresult (*cuDeviceGetCount)(int *count);
    CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
    CUresult (*cuCtxSetCurrent)(CUcontext context);
    CUresult (*cuCtxGetCurrent)(CUcontext *context);
    CUresult (*cuCtxCreate)(CUcontext *context, unsigned int flags, CUdevice device);
    CUresult (*cuCtxDestroy)(CUcontext context);
    CUresult (*cuMemAlloc)(CUdeviceptr *pointer, size_t bytes);
    CUresult (*cuMemFree)(CUdeviceptr pointer);
    CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
    CUresult (*cuMemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
    CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t count, CUstream s);
    CUresult (*cuStreamCreate)(CUstream *stream, unsigned int flags);
    CUresult (*cuStreamDestroy)(CUstream stream);
    CUresult (*cuStreamSynchronize)(CUstream stream);
} Driver;

static int failures;

static void fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    printf("FAIL: ");
    vprintf(format, args);
    printf("\n");
    va_end(args);
    failures++;
}

/* A driver call that must succeed; a failure is the test's. */
static bool ok(CUresult result, const char *call)
{
    if (result == 0)
        return true;
    fail("%s returned CUDA error %d", call, result);
    return false;
}

#define CALL(d, fn, args) ok((d)->fn args, #fn)

static bool open_driver(Driver *d)
{
    d->library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d->library)
        return false;
    const struct {
        const char *name;
        void *field;
        bool optional;
    } symbols[] = {
        {"cuInit", &d->cuInit, false},
        {"cuDeviceGetCount", &d->cuDeviceGetCount, false},
        {"cuDeviceGet", &d->cuDeviceGet, false},
        {"cuDevicePrimaryCtxRetain", &d->cuDevicePrimaryCtxRetain, false},
        {"cuDevicePrimaryCtxRelease_v2", &d->cuDevicePrimaryCtxRelease, false},
        {"cuCtxSetCurrent", &d->cuCtxSetCurrent, false},
        {"cuCtxGetCurrent", &d->cuCtxGetCurrent, false},
        {"cuCtxCreate_v2", &d->cuCtxCreate, true},
        {"cuCtxDestroy_v2", &d->cuCtxDestroy, true},
        {"cuMemAlloc_v2", &d->cuMemAlloc, false},
        {"cuMemFree_v2", &d->cuMemFree, false},
        {"cuMemcpyHtoDAsync_v2", &d->cuMemcpyHtoDAsync, false},
        {"cuMemcpyDtoHAsync_v2", &d->cuMemcpyDtoHAsync, false},
        {"cuMemsetD8Async", &d->cuMemsetD8Async, false},
        {"cuStreamCreate", &d->cuStreamCreate, false},
        {"cuStreamDestroy_v2", &d->cuStreamDestroy, false},
        {"cuStreamSynchronize", &d->cuStreamSynchronize, false},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        void *address = dlsym(d->library, symbols[i].name);
        if (!address && !symbols[i].optional) {
            fail("libcuda.so.1 has no %s", symbols[i].name);
            return false;
        }
        memcpy(symbols[i].field, &address, sizeof address); /* POSIX: dlsym's data pointer */
    }
    return true;
}

/* ---- random tensors ---------------------------------------------------------------------------
 */

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void store(void *data, tcc_dtype type, int64_t i, double value)
{
    switch (type) {
    case TCC_FLOAT16:
        ((uint16_t *)data)[i] = tcc_f32_to_f16((float)value);
        break;
    case TCC_BFLOAT16:
        ((uint16_t *)data)[i] = tcc_f32_to_bf16((float)value);
        break;
    case TCC_FLOAT32:
        ((float *)data)[i] = (float)value;
        break;
    case TCC_INT8:
        ((int8_t *)data)[i] = (int8_t)value;
        break;
    default:
        ((int32_t *)data)[i] = (int32_t)value;
        break;
    }
}

static double load(const void *data, tcc_dtype type, int64_t i)
{
    switch (type) {
    case TCC_FLOAT16:
        return tcc_f16_to_f32(((const uint16_t *)data)[i]);
    case TCC_BFLOAT16:
        return tcc_bf16_to_f32(((const uint16_t *)data)[i]);
    case TCC_FLOAT32:
        return ((const float *)data)[i];
    case TCC_INT8:
        return ((const int8_t *)data)[i];
    default:
        return ((const int32_t *)data)[i];
    }
}

/* Values in [-1, 1] in steps of 1/64 (exact in every type). */
static void fill_random(void *data, const tcc_kernel_param_info *p, uint64_t *state)
{
    for (int64_t i = 0; i < p->elements; i++)
        store(data, p->dtype, i, (double)((int64_t)(next_random(state) % 129) - 64) / 64.0);
}

/* ---- the cases --------------------------------------------------------------------------------
 */

typedef struct Case {
    const char *name;
    bool is_matmul;
    tcc_conv2d_desc conv;
    tcc_matmul_desc matmul;
    int split_k;          /* 0: the default schedule */
    size_t offset;        /* of every address past its allocation's (256-byte aligned) start */
    bool own_workspaces;  /* tcc_kernel_launch_async_with_workspaces, the program's own */
    bool context_current; /* the primary context current when launching, else none */
} Case;

static int make_cases(Case *cases)
{
    int n = 0;
    Case *c = &cases[n++];
    *c = (Case){.name = "conv2d NHWC 64->128 3x3, bias, residual", .offset = 48};
    tcc_conv2d_desc_init(&c->conv);
    c->conv.batch = 2, c->conv.height = c->conv.width = 14;
    c->conv.in_channels = 64, c->conv.out_channels = 128;
    c->conv.kernel_h = c->conv.kernel_w = 3;
    c->conv.pad_top = c->conv.pad_bottom = c->conv.pad_left = c->conv.pad_right = 1;
    c->conv.epilogue.bias = c->conv.epilogue.residual = true;
    c->conv.epilogue.beta = 0.5;

    c = &cases[n++];
    *c = (Case){.name = "conv2d NCHW/KCRS groups 2 (staged), beta reads the float16 output",
                .offset = 16,
                .own_workspaces = true,
                .context_current = true};
    tcc_conv2d_desc_init(&c->conv);
    c->conv.batch = 3, c->conv.height = 9, c->conv.width = 11;
    c->conv.in_channels = 32, c->conv.out_channels = 48, c->conv.groups = 2;
    c->conv.kernel_h = c->conv.kernel_w = 3, c->conv.stride_h = c->conv.stride_w = 2;
    c->conv.pad_top = c->conv.pad_left = 1;
    c->conv.layout = TCC_LAYOUT_NCHW, c->conv.filter_layout = TCC_FILTER_KCRS;
    c->conv.output_type = TCC_FLOAT16;
    c->conv.epilogue.beta = 1.0;

    c = &cases[n++];
    *c = (Case){.name = "conv2d NCHW/KCRS (staged), the loaded kernel's workspaces", .offset = 32};
    c->conv = cases[1].conv;
    c->conv.epilogue.beta = 0.0;
    c->conv.epilogue.bias = true;

    c = &cases[n++];
    *c = (Case){.name = "matmul batch 2, A column-major, bias",
                .is_matmul = true,
                .offset = 80,
                .context_current = true};
    tcc_matmul_desc_init(&c->matmul);
    c->matmul.batch = 2, c->matmul.m = 96, c->matmul.n = 80, c->matmul.k = 72;
    c->matmul.a_col_major = true;
    c->matmul.epilogue.bias = true;

    c = &cases[n++];
    *c = (Case){.name = "matmul 256x256x128 (bulk copies where the arch has them)",
                .is_matmul = true,
                .offset = 16};
    tcc_matmul_desc_init(&c->matmul);
    c->matmul.m = c->matmul.n = 256, c->matmul.k = 128;

    c = &cases[n++];
    *c = (Case){.name = "matmul bfloat16 split-K 2, B column-major, the program's workspace",
                .is_matmul = true,
                .split_k = 2,
                .offset = 64,
                .own_workspaces = true};
    tcc_matmul_desc_init(&c->matmul);
    c->matmul.m = 64, c->matmul.n = 48, c->matmul.k = 1024;
    c->matmul.b_col_major = true;
    c->matmul.input_type = TCC_BFLOAT16;
    return n;
}

/* ---- one case ---------------------------------------------------------------------------------
 */

enum { MAX_PARAMS = 5, MAX_WORKSPACES = 4 };

typedef struct Tensors {
    int count, nworkspace;
    tcc_kernel_param_info info[MAX_PARAMS];
    void *host[MAX_PARAMS];
    CUdeviceptr allocation[MAX_PARAMS + MAX_WORKSPACES];
    tcc_device_ptr address[MAX_PARAMS], workspace[MAX_WORKSPACES];
} Tensors;

static tcc_status compile(tcc_context *ctx, const Case *c, tcc_arch arch, tcc_kernel **out)
{
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = arch;
    tcc_gemm_schedule schedule, *given = NULL;
    tcc_gemm_schedule_init(&schedule);
    if (c->split_k) {
        tcc_status status = tcc_matmul_default_schedule(ctx, &c->matmul, arch, &schedule);
        if (status != TCC_OK)
            return status;
        schedule.split_k = c->split_k;
        given = &schedule;
    }
    return c->is_matmul ? tcc_matmul_compile(ctx, &c->matmul, given, &options, out)
                        : tcc_conv2d_compile(ctx, &c->conv, given, &options, out);
}

static bool allocate(const Driver *d, size_t bytes, size_t offset, CUdeviceptr *allocation,
                     tcc_device_ptr *address)
{
    if (!CALL(d, cuMemAlloc, (allocation, bytes + offset)))
        return false;
    *address = *allocation + offset;
    return true;
}

/* The parameters as the kernel describes them, allocated and (on the stream) filled. */
static bool prepare(const Driver *d, const Case *c, const tcc_kernel *kernel, CUstream stream,
                    uint64_t *random, Tensors *t)
{
    t->count = tcc_kernel_param_count(kernel);
    t->nworkspace = c->own_workspaces ? tcc_kernel_workspace_count(kernel) : 0;
    if (t->count > MAX_PARAMS || t->nworkspace > MAX_WORKSPACES) {
        fail("%s: more parameters or workspaces than the test holds", c->name);
        return false;
    }
    for (int i = 0; i < t->count; i++) {
        tcc_kernel_param_info *p = &t->info[i];
        p->size = sizeof *p;
        if (!tcc_kernel_param(kernel, i, p) || p->alignment > 16 || c->offset % 16 != 0) {
            fail("%s: a parameter's description", c->name);
            return false;
        }
        t->host[i] = malloc((size_t)p->bytes);
        if (!t->host[i] ||
            !allocate(d, (size_t)p->bytes, c->offset, &t->allocation[i], &t->address[i]))
            return false;
        if (p->role == TCC_PARAM_OUTPUT) { /* poisoned: every byte 0xff, a NaN in each type */
            if (!CALL(d, cuMemsetD8Async, (t->address[i], 0xff, (size_t)p->bytes, stream)))
                return false;
            continue;
        }
        fill_random(t->host[i], p, random);
        if (!CALL(d, cuMemcpyHtoDAsync, (t->address[i], t->host[i], (size_t)p->bytes, stream)))
            return false;
    }
    for (int i = 0; i < t->nworkspace; i++) {
        size_t bytes = (size_t)tcc_kernel_workspace_bytes(kernel, i);
        if (!allocate(d, bytes, c->offset, &t->allocation[MAX_PARAMS + i], &t->workspace[i]))
            return false;
    }
    return true;
}

static void release(const Driver *d, Tensors *t)
{
    for (int i = 0; i < MAX_PARAMS + MAX_WORKSPACES; i++)
        if (t->allocation[i])
            d->cuMemFree(t->allocation[i]);
    for (int i = 0; i < MAX_PARAMS; i++)
        free(t->host[i]);
}

/* The host copy of the parameter called `name` (NULL where the kernel has none). */
static const void *named(const Tensors *t, const char *name, int *index)
{
    for (int i = 0; i < t->count; i++) {
        if (strcmp(t->info[i].name, name) == 0) {
            if (index)
                *index = i;
            return t->host[i];
        }
    }
    return NULL;
}

/* The output downloaded into out's host copy (its previous contents kept for the reference)
 * against the CPU reference. */
static bool compare(tcc_context *ctx, const Case *c, const Tensors *t, const void *got)
{
    int out = -1;
    named(t, c->is_matmul ? "C" : "output", &out);
    if (out < 0) {
        fail("%s: no output parameter", c->name);
        return false;
    }
    const tcc_kernel_param_info *p = &t->info[out];
    tcc_reference_tensors tensors = {.size = sizeof(tcc_reference_tensors),
                                     .input = named(t, c->is_matmul ? "A" : "input", NULL),
                                     .filter = named(t, c->is_matmul ? "B" : "filter", NULL),
                                     .bias = named(t, "bias", NULL),
                                     .residual = named(t, "residual", NULL),
                                     .previous_output =
                                         p->role == TCC_PARAM_INPUT_OUTPUT ? t->host[out] : NULL};
    double *ref = malloc(sizeof(double) * (size_t)p->elements);
    tcc_status status =
        !ref           ? TCC_ERROR_OUT_OF_MEMORY
        : c->is_matmul ? tcc_matmul_reference(ctx, &c->matmul, &tensors, NULL, p->elements, 0, ref)
                       : tcc_conv2d_reference(ctx, &c->conv, &tensors, NULL, p->elements, 0, ref);
    if (status != TCC_OK) {
        free(ref);
        fail("reference: %s", tcc_last_error(ctx));
        return false;
    }
    double scale = 0.0, error = 0.0;
    int64_t unwritten = 0;
    for (int64_t i = 0; i < p->elements; i++) {
        double value = load(got, p->dtype, i);
        unwritten += isnan(value);
        scale = fmax(scale, fabs(ref[i]));
        error = isnan(value) ? error : fmax(error, fabs(value - ref[i]));
    }
    free(ref);
    tcc_dtype input = c->is_matmul ? c->matmul.input_type : c->conv.input_type;
    tcc_dtype accumulate = c->is_matmul ? c->matmul.accumulate_type : c->conv.accumulate_type;
    double tolerance = tcc_check_tolerance(input, accumulate, p->dtype);
    double relative = scale > 0.0 ? error / scale : error;
    bool passed = unwritten == 0 && relative <= tolerance;
    printf("%s: %s: %lld outputs, max error %.3g (tolerance %.3g), %lld unwritten\n",
           passed ? "PASS" : "FAIL", c->name, (long long)p->elements, relative, tolerance,
           (long long)unwritten);
    failures += !passed;
    return passed;
}

/* Launches with no context current or with the primary one, which must be current again. */
static tcc_status launch(const Driver *d, CUcontext primary, const Case *c,
                         tcc_loaded_kernel *loaded, const Tensors *t, CUstream stream)
{
    CUcontext before = c->context_current ? primary : NULL, after = NULL;
    if (!CALL(d, cuCtxSetCurrent, (before)))
        return TCC_ERROR_CUDA;
    tcc_status status = c->own_workspaces
                            ? tcc_kernel_launch_async_with_workspaces(
                                  loaded, t->count, t->address, t->nworkspace, t->workspace, stream)
                            : tcc_kernel_launch_async(loaded, t->count, t->address, stream);
    if (CALL(d, cuCtxGetCurrent, (&after)) && after != before)
        fail("%s: the context current before the launch is not current after it", c->name);
    d->cuCtxSetCurrent(primary);
    return status;
}

static void run_case(const Driver *d, CUcontext primary, tcc_device *device, const Case *c,
                     CUstream stream, uint64_t *random)
{
    tcc_context *ctx = tcc_device_context(device);
    tcc_kernel *kernel = NULL;
    tcc_loaded_kernel *loaded = NULL;
    Tensors t = {0};
    void *got = NULL;
    tcc_arch arch = tcc_arch_for_device(tcc_device_arch(device));
    tcc_status status = compile(ctx, c, arch, &kernel);
    if (status == TCC_OK)
        status = tcc_kernel_load(device, kernel, &loaded);
    if (status != TCC_OK) {
        fail("%s", tcc_last_error(ctx));
        goto done;
    }
    if (!prepare(d, c, kernel, stream, random, &t))
        goto done;
    status = launch(d, primary, c, loaded, &t, stream);
    if (status != TCC_OK) {
        fail("launch: %s", tcc_last_error(ctx));
        goto done;
    }
    const tcc_kernel_param_info *out = &t.info[t.count - 1];
    got = malloc((size_t)out->bytes);
    if (got &&
        CALL(d, cuMemcpyDtoHAsync, (got, t.address[t.count - 1], (size_t)out->bytes, stream)) &&
        CALL(d, cuStreamSynchronize, (stream)))
        compare(ctx, c, &t, got);
done:
    free(got);
    release(d, &t);
    tcc_loaded_kernel_destroy(loaded);
    tcc_kernel_destroy(kernel);
}

/* The refusals, on the real driver: a misaligned address and another context's stream. */
static void run_refusals(const Driver *d, CUdevice ordinal, tcc_device *device, CUstream stream)
{
    tcc_context *ctx = tcc_device_context(device);
    Case cases[8];
    make_cases(cases);
    tcc_kernel *kernel = NULL;
    tcc_loaded_kernel *loaded = NULL;
    tcc_arch arch = tcc_arch_for_device(tcc_device_arch(device));
    if (compile(ctx, &cases[3], arch, &kernel) != TCC_OK ||
        tcc_kernel_load(device, kernel, &loaded) != TCC_OK) {
        fail("%s", tcc_last_error(ctx));
        tcc_kernel_destroy(kernel);
        return;
    }
    tcc_device_ptr addresses[MAX_PARAMS] = {0};
    int count = tcc_kernel_param_count(kernel);
    CUdeviceptr block = 0;
    if (count <= MAX_PARAMS && CALL(d, cuMemAlloc, (&block, 1 << 20))) {
        for (int i = 0; i < count; i++)
            addresses[i] = block + 256 * (tcc_device_ptr)i;
        addresses[1] += 8;
        if (tcc_kernel_launch_async(loaded, count, addresses, stream) !=
                TCC_ERROR_INVALID_ARGUMENT ||
            !strstr(tcc_last_error(ctx), "parameter 1 (B) at 0x"))
            fail("misaligned B: %s", tcc_last_error(ctx));
        else
            printf("PASS: refused: %s\n", tcc_last_error(ctx));
        addresses[1] -= 8;
        CUcontext other = NULL;
        CUstream foreign = NULL;
        if (d->cuCtxCreate && d->cuCtxDestroy && CALL(d, cuCtxCreate, (&other, 0, ordinal))) {
            if (CALL(d, cuStreamCreate, (&foreign, CU_STREAM_NON_BLOCKING))) {
                if (tcc_kernel_launch_async(loaded, count, addresses, foreign) !=
                        TCC_ERROR_INVALID_ARGUMENT ||
                    !strstr(tcc_last_error(ctx), "the stream belongs to another CUDA context"))
                    fail("another context's stream: %s", tcc_last_error(ctx));
                else
                    printf("PASS: refused: %s\n", tcc_last_error(ctx));
                d->cuStreamDestroy(foreign);
            }
            d->cuCtxDestroy(other);
        } else if (!d->cuCtxCreate || !d->cuCtxDestroy) {
            printf("SKIP: another context's stream (libcuda.so.1 has no cuCtxCreate_v2)\n");
        }
        d->cuMemFree(block);
    }
    tcc_loaded_kernel_destroy(loaded);
    tcc_kernel_destroy(kernel);
}

int main(int argc, char **argv)
{
    uint64_t seed = 20251125;
    if (argc == 3 && strcmp(argv[1], "--seed") == 0)
        seed = strtoull(argv[2], NULL, 0);
    else if (argc != 1) {
        fprintf(stderr, "usage: %s [--seed S]\n", argv[0]);
        return 2;
    }
    Driver d = {0};
    int devices = 0;
    if (!open_driver(&d) || d.cuInit(0) != 0 || d.cuDeviceGetCount(&devices) != 0 || devices < 1) {
        printf("SKIP: no NVIDIA driver or device\n");
        return failures ? 1 : EXIT_SKIP;
    }
    printf("seed %llu\n", (unsigned long long)seed);
    tcc_context *ctx = NULL;
    tcc_device *device = NULL;
    CUdevice ordinal = 0;
    CUcontext primary = NULL;
    CUstream stream = NULL;
    if (tcc_context_create(&ctx) != TCC_OK || tcc_device_open(ctx, 0, &device) != TCC_OK) {
        printf("FAIL: %s\n", ctx ? tcc_last_error(ctx) : "no context");
        tcc_context_destroy(ctx);
        return 1;
    }
    printf("device: %s (compute capability %d), CUDA %d\n", tcc_device_name(device),
           tcc_device_arch(device), tcc_device_driver_version(device));
    if (CALL(&d, cuDeviceGet, (&ordinal, 0)) &&
        CALL(&d, cuDevicePrimaryCtxRetain, (&primary, ordinal)) &&
        CALL(&d, cuCtxSetCurrent, (primary)) &&
        CALL(&d, cuStreamCreate, (&stream, CU_STREAM_NON_BLOCKING))) {
        Case cases[8];
        int count = make_cases(cases);
        uint64_t random = seed;
        for (int i = 0; i < count; i++)
            run_case(&d, primary, device, &cases[i], stream, &random);
        run_refusals(&d, ordinal, device, stream);
        d.cuStreamDestroy(stream);
    }
    if (primary)
        d.cuDevicePrimaryCtxRelease(ordinal);
    tcc_device_close(device);
    tcc_context_destroy(ctx);
    printf("%s (seed %llu)\n", failures ? "FAILED" : "passed", (unsigned long long)seed);
    return failures ? 1 : 0;
}
