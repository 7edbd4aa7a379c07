/*
 * Machine code at build time: a kernel's PTX compiled into a cubin by NVIDIA's nvJitLink
 * library (the driver's JIT, ptxas, as a library that needs neither a GPU nor a driver), so
 * that loading it (kernels.c) is a copy instead of a compile. The tuner's builder threads do
 * this in parallel, where the driver's JIT ran serially in the one process that measures.
 *
 * libnvJitLink is opened at run time with dlopen, as libcuda.so.1 is, so that tcc builds and
 * runs without the CUDA toolkit: the file named by TCC_NVJITLINK, else libnvJitLink.so.13,
 * else libnvJitLink.so.12. It is opened once a process (pthread_once, as LLVM's setup is), and
 * what that found is read-only afterwards; each compilation has a handle of its own.
 *
 * ptxas's verbose log says each entry point's registers and spills, which the kernel keeps: a
 * block that cannot hold its threads' registers is refused here, in one line, instead of at
 * the first launch, and so is a kernel whose asynchrony ptxas undid (tci_jit_log_refusal).
 */
#include "runtime/internal.h"
#include "support/symbols.h"
#include "target/target.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the library --------------------------------------------------------------------------- */

/* nvJitLink.h's types and values (CUDA 12-13), declared here so that the build needs no
 * toolkit. The plain names below are exported by libnvJitLink.so.12 and .13 alike (the header
 * maps them to versioned aliases). */
typedef struct NvJitLinkState *NvJitLinkHandle;
typedef int NvJitLinkResult;
enum { NVJITLINK_SUCCESS = 0, NVJITLINK_INPUT_PTX = 2 };

typedef struct NvJitLink {
    NvJitLinkResult (*create)(NvJitLinkHandle *handle, uint32_t noption, const char **options);
    NvJitLinkResult (*destroy)(NvJitLinkHandle *handle);
    NvJitLinkResult (*add_data)(NvJitLinkHandle handle, int input_type, const void *data,
                                size_t size, const char *name);
    NvJitLinkResult (*complete)(NvJitLinkHandle handle);
    NvJitLinkResult (*cubin_size)(NvJitLinkHandle handle, size_t *size);
    NvJitLinkResult (*cubin)(NvJitLinkHandle handle, void *cubin);
    NvJitLinkResult (*error_log_size)(NvJitLinkHandle handle, size_t *size);
    NvJitLinkResult (*error_log)(NvJitLinkHandle handle, char *log);
    NvJitLinkResult (*info_log_size)(NvJitLinkHandle handle, size_t *size);
    NvJitLinkResult (*info_log)(NvJitLinkHandle handle, char *log);
    /* Missing from the first CUDA 12 releases: then the version is not known (0.0). */
    NvJitLinkResult (*version)(unsigned int *major, unsigned int *minor);
} NvJitLink;

#define NVJITLINK_SYMBOL(field, name, optional)                                                    \
    {                                                                                              \
        name, NULL, offsetof(NvJitLink, field), optional                                           \
    }
static const TciSymbol nvjitlink_symbols[] = {
    NVJITLINK_SYMBOL(create, "nvJitLinkCreate", false),
    NVJITLINK_SYMBOL(destroy, "nvJitLinkDestroy", false),
    NVJITLINK_SYMBOL(add_data, "nvJitLinkAddData", false),
    NVJITLINK_SYMBOL(complete, "nvJitLinkComplete", false),
    NVJITLINK_SYMBOL(cubin_size, "nvJitLinkGetLinkedCubinSize", false),
    NVJITLINK_SYMBOL(cubin, "nvJitLinkGetLinkedCubin", false),
    NVJITLINK_SYMBOL(error_log_size, "nvJitLinkGetErrorLogSize", false),
    NVJITLINK_SYMBOL(error_log, "nvJitLinkGetErrorLog", false),
    NVJITLINK_SYMBOL(info_log_size, "nvJitLinkGetInfoLogSize", false),
    NVJITLINK_SYMBOL(info_log, "nvJitLinkGetInfoLog", false),
    NVJITLINK_SYMBOL(version, "nvJitLinkVersion", true),
};

/* What opening the library found, set once (open_once) and only read afterwards. */
static struct {
    pthread_once_t once;
    bool opened;
    NvJitLink api;
    unsigned int major, minor;
    char why[512]; /* the one-line error when not opened */
} library = {.once = PTHREAD_ONCE_INIT};

static const char *const default_names[] = {"libnvJitLink.so.13", "libnvJitLink.so.12"};

/* The file named by TCC_NVJITLINK, else the first of the default names that loads. */
static void *open_file(void)
{
    const char *chosen = getenv("TCC_NVJITLINK");
    if (chosen && *chosen) {
        void *handle = dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char *why = dlerror();
            snprintf(library.why, sizeof library.why,
                     "cannot load nvJitLink from TCC_NVJITLINK=%s (%s): point TCC_NVJITLINK at "
                     "libnvJitLink.so.13 or .so.12 of a CUDA toolkit",
                     chosen, why ? why : "unknown dlopen error");
        }
        return handle;
    }
    for (size_t i = 0; i < sizeof default_names / sizeof default_names[0]; i++) {
        void *handle = dlopen(default_names[i], RTLD_NOW | RTLD_LOCAL);
        if (handle)
            return handle;
    }
    snprintf(library.why, sizeof library.why,
             "cannot load nvJitLink (libnvJitLink.so.13 or libnvJitLink.so.12), which compiles "
             "PTX to machine code: add its folder (a CUDA toolkit's lib64) to LD_LIBRARY_PATH or "
             "name the file in TCC_NVJITLINK");
    return NULL;
}

static void open_once(void)
{
    void *handle = open_file();
    if (!handle)
        return;
    const char *missing =
        tci_resolve_symbols(tci_dlsym, handle, nvjitlink_symbols,
                            sizeof nvjitlink_symbols / sizeof nvjitlink_symbols[0], &library.api);
    if (missing) {
        snprintf(library.why, sizeof library.why,
                 "the nvJitLink library loaded has no symbol %s: it needs CUDA 12.0 or newer",
                 missing);
        dlclose(handle);
        return;
    }
    if (!library.api.version || library.api.version(&library.major, &library.minor) != 0)
        library.major = library.minor = 0;
    library.opened = true; /* kept open for the process, as the JIT is */
}

/* The library's entry points, or the one-line error why there are none. */
static tcc_status open_library(tcc_context *ctx, const NvJitLink **api)
{
    pthread_once(&library.once, open_once);
    *api = &library.api;
    return library.opened ? TCC_OK : tci_fail(ctx, TCC_ERROR_CUDA, "%s", library.why);
}

tcc_status tcc_machine_code_available(tcc_context *ctx, int *major, int *minor)
{
    const NvJitLink *api;
    tcc_status status = open_library(ctx, &api);
    if (major)
        *major = status == TCC_OK ? (int)library.major : 0;
    if (minor)
        *minor = status == TCC_OK ? (int)library.minor : 0;
    return status;
}

/* ---- one compilation ------------------------------------------------------------------------ */

/* nvJitLinkResult's names, for messages (nvJitLink.h's order). */
static const char *result_name(NvJitLinkResult result)
{
    static const char *const names[] = {
        "NVJITLINK_SUCCESS",
        "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
        "NVJITLINK_ERROR_MISSING_ARCH",
        "NVJITLINK_ERROR_INVALID_INPUT",
        "NVJITLINK_ERROR_PTX_COMPILE",
        "NVJITLINK_ERROR_NVVM_COMPILE",
        "NVJITLINK_ERROR_INTERNAL",
        "NVJITLINK_ERROR_THREADPOOL",
        "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
        "NVJITLINK_ERROR_FINALIZE",
        "NVJITLINK_ERROR_NULL_INPUT",
        "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
        "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
        "NVJITLINK_ERROR_ARCH_MISMATCH",
        "NVJITLINK_ERROR_OUTDATED_LIBRARY",
        "NVJITLINK_ERROR_MISSING_FATBIN",
        "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
        "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
        "NVJITLINK_ERROR_LTO_NOT_ENABLED",
    };
    bool known = result >= 0 && (size_t)result < sizeof names / sizeof names[0];
    return known ? names[result] : "an unknown nvJitLink error";
}

/* One compilation: its handle, its logs (malloc'd, NUL-terminated; NULL until read). */
typedef struct Compilation {
    const NvJitLink *api;
    NvJitLinkHandle handle;
    char *info_log, *error_log;
} Compilation;

/* A log of the handle, or NULL when it cannot be read. */
static char *read_log(const Compilation *c, NvJitLinkResult (*size_of)(NvJitLinkHandle, size_t *),
                      NvJitLinkResult (*read)(NvJitLinkHandle, char *))
{
    size_t size = 0;
    if (size_of(c->handle, &size) != NVJITLINK_SUCCESS)
        return NULL;
    char *log = calloc(size + 1, 1);
    if (log && read(c->handle, log) != NVJITLINK_SUCCESS)
        log[0] = '\0';
    return log;
}

static void read_logs(Compilation *c)
{
    if (!c->info_log)
        c->info_log = read_log(c, c->api->info_log_size, c->api->info_log);
    if (!c->error_log)
        c->error_log = read_log(c, c->api->error_log_size, c->api->error_log);
}

/* A failed step: ptxas's first line of error (or nvJitLink's result) and TCC_ERROR_LLVM, the
 * status of device code that did not compile. */
static tcc_status fail_step(tcc_context *ctx, Compilation *c, NvJitLinkResult result,
                            const char *step, const char *kernel, const char *arch)
{
    read_logs(c);
    const char *log = c->error_log && *c->error_log ? c->error_log : "";
    int length = (int)strcspn(log, "\n");
    return tci_fail(ctx, TCC_ERROR_LLVM, "nvJitLink (%s) failed for kernel '%s' on %s: %s%s%.*s",
                    step, kernel, arch, result_name(result), length ? ": " : "", length, log);
}

/* The arch of the PTX's ".target sm_NN[a|f]" line as nvJitLink's option: the one source of
 * truth for what the kernel was built for. */
static bool arch_option(const char *ptx, char *option, size_t size)
{
    int target = 0;
    char suffix = '\0';
    if (!tci_ptx_target(ptx, &target, &suffix))
        return false;
    snprintf(option, size, "-arch=sm_%d%.1s", target, suffix ? &suffix : "");
    return true;
}

/* ---- what ptxas said of each entry point ----------------------------------------------------- */

/* The line after `line`, or NULL at the end. */
static const char *next_line(const char *line)
{
    const char *end = strchr(line, '\n');
    return end ? end + 1 : NULL;
}

/* Where `text` is in `line` (before its newline), or NULL. */
static const char *in_line(const char *line, const char *text)
{
    const char *at = strstr(line, text), *end = strchr(line, '\n');
    return at && (!end || at < end) ? at : NULL;
}

/* Whether `line` says "Function properties for NAME" of the entry point `name`: ptxas's form
 * (NAME to the end of the line) or nvJitLink's ('NAME':). */
static bool properties_of(const char *line, const char *name)
{
    static const char marker[] = "Function properties for ";
    const char *at = in_line(line, marker);
    if (!at)
        return false;
    at += sizeof marker - 1;
    size_t n = strlen(name);
    if (*at == '\'')
        return strncmp(at + 1, name, n) == 0 && at[1 + n] == '\'';
    return strncmp(at, name, n) == 0 && (at[n] == '\n' || at[n] == '\r' || at[n] == '\0');
}

/* Reads the registers and spills of entry point `name` from the verbose log: the lines after
 * each "Function properties" of it, up to the next entry's. ptxas's say
 *   ptxas info    : Function properties for conv2d
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 96 registers, used 1 barriers, 376 bytes cmem[0]
 * and nvJitLink's own summary "used 96 registers, ..." after "Function properties for
 * 'conv2d':". What the log does not say stays -1. */
static void parse_launch(const char *log, const char *name, KernelLaunch *launch)
{
    launch->registers = -1;
    launch->spill_store_bytes = launch->spill_load_bytes = -1;
    for (const char *line = log; line && *line; line = next_line(line)) {
        if (!properties_of(line, name))
            continue;
        for (const char *l = next_line(line); l && *l; l = next_line(l)) {
            if (in_line(l, "Function properties for ") || in_line(l, "Compiling entry function"))
                break;
            const char *frame = in_line(l, "bytes stack frame,");
            long long stores = 0, loads = 0;
            if (frame && sscanf(frame,
                                "bytes stack frame, %lld bytes spill stores, %lld bytes "
                                "spill loads",
                                &stores, &loads) == 2) {
                launch->spill_store_bytes = stores;
                launch->spill_load_bytes = loads;
            }
            const char *used = in_line(l, "Used ");
            used = used ? used : in_line(l, "used ");
            int registers = 0, matched = 0; /* %n: the whole phrase, not "used 1 barriers" */
            if (used && launch->registers < 0 &&
                sscanf(used + 5, "%d registers%n", &registers, &matched) == 1 && matched > 0)
                launch->registers = registers;
        }
    }
}

/* ---- the kernel ------------------------------------------------------------------------------ */

/* The registers of each launch, read from the log and checked against what a block holds. */
static tcc_status take_properties(tcc_context *ctx, const char *log, tcc_kernel *kernel)
{
    for (int i = 0; i < kernel->nlaunch; i++) {
        KernelLaunch *launch = &kernel->launches[i];
        parse_launch(log ? log : "", launch->name ? launch->name : "", launch);
        int64_t threads = 0;
        bool past_device = __builtin_mul_overflow(launch->block[0], launch->block[1], &threads) ||
                           __builtin_mul_overflow(threads, launch->block[2], &threads) ||
                           threads > tci_device_limits.threads_per_block;
        /* Registers not reported, or a block no device runs (which loading refuses): the
         * runtime's checks against the device say what is wrong. */
        if (launch->registers < 0 || past_device)
            continue;
        int64_t needed = tci_target_block_registers(threads, launch->registers);
        if (needed > tci_device_limits.registers_per_block)
            return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                            "kernel '%s' cannot launch: its block of %lld threads at %d registers "
                            "a thread needs %lld registers, and a block has %lld",
                            launch->name, (long long)threads, launch->registers, (long long)needed,
                            (long long)tci_device_limits.registers_per_block);
    }
    return TCC_OK;
}

/* Creates the handle, compiles the PTX, and copies the cubin into *cubin (malloc'd). */
static tcc_status compile(tcc_context *ctx, Compilation *c, const char *ptx, const char *kernel,
                          const char *arch, unsigned char **cubin, size_t *size)
{
    const char *options[] = {arch, "-verbose"};
    const char *arch_name = arch + strlen("-arch=");
    NvJitLinkResult result = c->api->create(&c->handle, 2, options);
    if (result != NVJITLINK_SUCCESS) {
        c->handle = NULL;
        return fail_step(ctx, c, result, "nvJitLinkCreate", kernel, arch_name);
    }
    /* The PTX is compiled as it is added: a ptxas error is this call's. */
    result = c->api->add_data(c->handle, NVJITLINK_INPUT_PTX, ptx, strlen(ptx) + 1, kernel);
    if (result != NVJITLINK_SUCCESS)
        return fail_step(ctx, c, result, "nvJitLinkAddData", kernel, arch_name);
    result = c->api->complete(c->handle);
    if (result != NVJITLINK_SUCCESS)
        return fail_step(ctx, c, result, "nvJitLinkComplete", kernel, arch_name);
    result = c->api->cubin_size(c->handle, size);
    if (result != NVJITLINK_SUCCESS)
        return fail_step(ctx, c, result, "nvJitLinkGetLinkedCubinSize", kernel, arch_name);
    *cubin = malloc(*size > 0 ? *size : 1);
    if (!*cubin)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory for machine code");
    result = c->api->cubin(c->handle, *cubin);
    if (result != NVJITLINK_SUCCESS)
        return fail_step(ctx, c, result, "nvJitLinkGetLinkedCubin", kernel, arch_name);
    read_logs(c);
    return TCC_OK;
}

tcc_status tcc_kernel_compile_machine_code(tcc_context *ctx, tcc_kernel *kernel)
{
    const char *ptx = tcc_kernel_ptx(kernel);
    if (!kernel || !ptx || !*ptx || kernel->nlaunch < 1)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_kernel_compile_machine_code: %s",
                        kernel ? "the kernel has no PTX" : "kernel is NULL");
    const char *name = tcc_kernel_name(kernel) ? tcc_kernel_name(kernel) : "kernel";
    char arch[32];
    if (!arch_option(ptx, arch, sizeof arch))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "kernel '%s': its PTX has no .target sm_NN line to compile for", name);
    Compilation c = {0};
    unsigned char *cubin = NULL;
    size_t size = 0;
    tcc_status status = open_library(ctx, &c.api);
    if (status == TCC_OK)
        status = compile(ctx, &c, ptx, name, arch, &cubin, &size);
    char line[600];
    /* ptxas's warnings are in the info log; a refusal is looked for in both. */
    const char *undone = NULL;
    if (status == TCC_OK)
        undone = tci_jit_log_refusal(c.info_log, line, sizeof line);
    if (status == TCC_OK && !undone)
        undone = tci_jit_log_refusal(c.error_log, line, sizeof line);
    if (undone)
        status = tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                          "kernel '%s': ptxas undid its asynchrony, so it would run slower than "
                          "built: %s",
                          name, line);
    if (status == TCC_OK)
        status = take_properties(ctx, c.info_log, kernel);
    if (c.handle)
        c.api->destroy(&c.handle);
    free(c.info_log);
    free(c.error_log);
    free(kernel->machine_code); /* a failure leaves the kernel without machine code */
    kernel->machine_code = status == TCC_OK ? cubin : NULL;
    kernel->machine_code_size = status == TCC_OK ? size : 0;
    if (status != TCC_OK)
        free(cubin);
    return status;
}
