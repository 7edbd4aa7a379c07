/*
 * tcc-conv: compile the tensor-core conv2d of TVM's tutorial (or one of another shape)
 * to loop IR, LLVM IR or PTX, and with --run, run, check and time it on a GPU.
 *
 * This file only parses, calls the public API (tcc.h) and prints. The flow:
 *   context -> func -> conv2d_define -> schedule_create -> schedule_tutorial -> build
 *   -> emit, and with --run: device -> conv_run.c.
 */
#include "conv_options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef TCC_VERSION
#define TCC_VERSION "0.1.0-dev"
#endif

void tcc_cli_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("tcc-conv: error: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

/* Everything a compilation holds, so that one function frees it on every path. */
typedef struct Session {
    tcc_context *ctx;
    tcc_func *func;
    tcc_kernel *kernel;
    tcc_device *device;
} Session;

static void session_free(Session *s)
{
    tcc_kernel_destroy(s->kernel);
    tcc_func_destroy(s->func);
    tcc_device_close(s->device);
    tcc_context_destroy(s->ctx);
}

static int lib_error(const Session *s, const char *prefix)
{
    tcc_cli_error("%s%s", prefix, tcc_last_error(s->ctx));
    return 1;
}

static bool is_known_pass(const char *name)
{
    if (strcmp(name, "all") == 0)
        return true;
    for (const char *const *pass = tcc_pass_names(); pass && *pass; pass++)
        if (strcmp(*pass, name) == 0)
            return true;
    return false;
}

static void list_passes(void)
{
    for (const char *const *pass = tcc_pass_names(); pass && *pass; pass++)
        puts(*pass);
}

/* --print-after: the loop IR after a pass, on stderr, so it never mixes with -o's text. */
static void print_after(const char *pass_name, const char *loop_ir, void *user)
{
    (void)user;
    size_t len = strlen(loop_ir);
    fprintf(stderr, "// ---- after %s ----\n%s%s", pass_name, loop_ir,
            len && loop_ir[len - 1] == '\n' ? "" : "\n");
}

static uint64_t seed_from_clock(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* The newest arch tcc supports that the device can run: its own, or the one below it. */
static int device_arch(const Session *s, tcc_arch *arch)
{
    static const tcc_arch supported[] = {TCC_SM_90, TCC_SM_89, TCC_SM_86,
                                         TCC_SM_80, TCC_SM_75, TCC_SM_70};
    int have = tcc_device_arch(s->device);
    for (size_t i = 0; i < sizeof supported / sizeof supported[0]; i++) {
        if ((int)supported[i] <= have) {
            *arch = supported[i];
            return 0;
        }
    }
    tcc_cli_error("%s is sm_%d; tcc needs sm_70 or newer (tensor cores)",
                  tcc_device_name(s->device), have);
    return 1;
}

/* The arch to build for: --arch, else the device's with --run, else the default. */
static int choose_arch(Session *s, const ConvOptions *o, tcc_build_options *build)
{
    if (o->arch_name && tcc_arch_parse(s->ctx, o->arch_name, &build->arch) != TCC_OK)
        return lib_error(s, "--arch: ");
    if (o->run && tcc_device_open(s->ctx, 0, &s->device) != TCC_OK)
        return lib_error(s, "");
    if (o->run && !o->arch_name)
        return device_arch(s, &build->arch);
    return 0;
}

static int build(Session *s, const ConvOptions *o)
{
    tcc_build_options options;
    tcc_build_options_init(&options);
    if (choose_arch(s, o, &options) != 0)
        return 1;
    options.print_after_pass = o->print_after;
    options.print_callback = print_after;

    tcc_conv2d conv;
    if (tcc_func_create(s->ctx, "conv2d", &s->func) != TCC_OK ||
        tcc_conv2d_define(s->func, &o->desc, &conv) != TCC_OK ||
        tcc_schedule_create(s->func, 1, &conv.output) != TCC_OK ||
        tcc_conv2d_schedule_tutorial(s->func, &conv, &o->tiles) != TCC_OK)
        return lib_error(s, "");
    tcc_tensor *params[3] = {conv.input, conv.filter, conv.output};
    if (tcc_build(s->func, 3, params, &options, &s->kernel) != TCC_OK)
        return lib_error(s, "");
    return 0;
}

static const char *emitted_text(const tcc_kernel *kernel, ConvEmit emit)
{
    switch (emit) {
    case CONV_EMIT_LOOPS:
        return tcc_kernel_loop_ir(kernel);
    case CONV_EMIT_LLVM:
        return tcc_kernel_llvm_ir(kernel);
    case CONV_EMIT_PTX:
        return tcc_kernel_ptx(kernel);
    }
    return NULL;
}

static int emit(const Session *s, const ConvOptions *o)
{
    const char *text = emitted_text(s->kernel, o->emit);
    if (!text) {
        tcc_cli_error("the kernel has no text of the requested kind");
        return 1;
    }
    bool to_stdout = !o->output_path || strcmp(o->output_path, "-") == 0;
    const char *path = to_stdout ? "<stdout>" : o->output_path;
    FILE *out = to_stdout ? stdout : fopen(path, "w");
    if (!out) {
        tcc_cli_error("-o: cannot open '%s': %s", path, strerror(errno));
        return 1;
    }
    bool ok = fputs(text, out) >= 0;
    ok = (to_stdout ? fflush(out) == 0 : fclose(out) == 0) && ok;
    if (!ok) {
        tcc_cli_error("cannot write '%s': %s", path, strerror(errno));
        return 1;
    }
    return 0;
}

static int compile_and_run(Session *s, const ConvOptions *o)
{
    if (tcc_context_create(&s->ctx) != TCC_OK) {
        tcc_cli_error("out of memory creating a context");
        return 1;
    }
    if (build(s, o) != 0)
        return 1;
    /* With --run the results are the output; the kernel's text only when asked for. */
    if ((!o->run || o->emit_given) && emit(s, o) != 0)
        return 1;
    return o->run ? tcc_cli_run(s->ctx, s->device, s->kernel, o) : 0;
}

int main(int argc, char **argv)
{
    ConvOptions options;
    char error[512];
    if (!tcc_cli_parse(argc, argv, &options, error, sizeof error)) {
        tcc_cli_error("%s", error);
        return 1;
    }
    if (options.help) {
        tcc_cli_usage(stdout);
        return 0;
    }
    if (options.version) {
        printf("tcc-conv %s\n", TCC_VERSION);
        return 0;
    }
    if (options.list_passes) {
        list_passes();
        return 0;
    }
    if (options.print_after && !is_known_pass(options.print_after)) {
        tcc_cli_error("--print-after: unknown pass '%s' (see --list-passes)", options.print_after);
        return 1;
    }
    if (!options.seed_given)
        options.seed = seed_from_clock();
    if (!options.threads) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        options.threads = cpus > 0 ? (int)cpus : 1;
    }
    Session session = {0};
    int rc = compile_and_run(&session, &options);
    session_free(&session);
    return rc;
}
