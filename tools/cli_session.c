/*
 * The steps of tcc-conv and tcc-matmul around the library calls: one-line errors, the
 * options that end the tool early, the context, device and arch of a compilation, writing
 * the kernel's text, and printing the schedule.
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

/* The last error, for the record of --format json|csv: every error path prints through
 * cli_error, so the message is the one on stderr. */
static char error_message[1024];
static tcc_status error_status;

void cli_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error_message, sizeof error_message, format, args);
    va_end(args);
    error_status = TCC_OK;
    fprintf(stderr, "%s: error: %s\n", cli_program, error_message);
}

const char *cli_error_message(void)
{
    return error_message;
}

tcc_status cli_error_status(void)
{
    return error_status;
}

void cli_error_clear(void)
{
    error_message[0] = '\0';
    error_status = TCC_OK;
}

static bool is_known_pass(const char *name)
{
    return strcmp(name, "all") == 0 || tcc_pass_index(name) >= 0;
}

int cli_early_exit(const CliCommon *c, void (*usage)(FILE *out))
{
    if (c->help) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (c->version) {
        printf("%s (tensorcc) %s\n", cli_program, tcc_version_string());
        return CLI_EXIT_OK;
    }
    if (c->list_passes) {
        for (int i = 0; i < tcc_pass_count(); i++)
            printf("%-14s %s\n", tcc_pass_name(i), tcc_pass_summary(i));
        return CLI_EXIT_OK;
    }
    if (c->print_after && !is_known_pass(c->print_after)) {
        cli_error("--print-after: unknown pass '%s' (see --list-passes)", c->print_after);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

CliExit cli_library_error(const CliSession *s, tcc_status status)
{
    cli_error("%s", tcc_last_error(s->ctx));
    error_status = status;
    return cli_exit_for_status(status, false);
}

/* --print-after: the loop IR after a pass, on stderr, so it never mixes with -o's text. */
static void print_after(const char *pass_name, const char *loop_ir, void *user)
{
    (void)user;
    size_t len = strlen(loop_ir);
    fprintf(stderr, "// ---- after %s ----\n%s%s", pass_name, loop_ir,
            len && loop_ir[len - 1] == '\n' ? "" : "\n");
}

/* The newest arch tcc supports that the device can run (sm_90a on an H100/H200). */
static CliExit device_arch(const CliSession *s, tcc_arch *arch)
{
    int have = tcc_device_arch(s->device);
    *arch = tcc_arch_for_device(have);
    if (*arch)
        return CLI_EXIT_OK;
    cli_error("%s is sm_%d; tcc needs sm_70 or newer (tensor cores)", tcc_device_name(s->device),
              have);
    return CLI_EXIT_UNSUPPORTED;
}

/* Opens the GPU of --device. Without a driver or a device: no GPU; a --device past the last
 * device of a machine that has some: a usage error naming how many there are. */
static CliExit open_device(CliSession *s, int ordinal)
{
    tcc_status status = tcc_device_open(s->ctx, ordinal, &s->device);
    if (status == TCC_OK)
        return CLI_EXIT_OK;
    char why[512];
    snprintf(why, sizeof why, "%s", tcc_last_error(s->ctx));
    /* Past the last device of a machine that has some (a device that is there but failed to
     * open, say busy in exclusive mode, keeps its own error). */
    int count = 0;
    if (status == TCC_ERROR_CUDA && tcc_device_count(s->ctx, &count) != TCC_OK)
        count = 0;
    if (count > 0 && ordinal >= count) {
        cli_error("--device %d: no such GPU: this machine has %d (0 to %d): %s", ordinal, count,
                  count - 1, why);
        error_status = status;
        return CLI_EXIT_USAGE;
    }
    cli_error("%s", why);
    error_status = status;
    return cli_exit_for_status(status, true);
}

CliExit cli_arch_of_device(tcc_context *ctx, int ordinal, tcc_arch *arch)
{
    CliSession s = {.ctx = ctx};
    CliExit rc = open_device(&s, ordinal);
    if (rc == CLI_EXIT_OK)
        rc = device_arch(&s, arch);
    tcc_device_close(s.device);
    return rc;
}

CliExit cli_session_open(CliSession *s, const CliCommon *c)
{
    if (tcc_context_create(&s->ctx) != TCC_OK) {
        cli_error("out of memory creating a context");
        return CLI_EXIT_ERROR;
    }
    tcc_build_options_init(&s->build);
    s->build.print_after_pass = c->print_after;
    s->build.print_callback = print_after;
    s->build.machine_code = c->emit == CLI_EMIT_CUBIN;
    /* The arch: --arch, else the device's with --run, else the default. */
    bool native = cli_arch_is_native(c);
    if (c->arch_name && !native && tcc_arch_parse(s->ctx, c->arch_name, &s->build.arch) != TCC_OK) {
        cli_error("--arch: %s", tcc_last_error(s->ctx));
        return CLI_EXIT_USAGE;
    }
    if (c->run || native) {
        CliExit rc = open_device(s, c->device);
        if (rc != CLI_EXIT_OK)
            return rc;
        /* A persistent grid's blocks (unless --grid-blocks) one a multiprocessor of this GPU
         * rather than of the target's largest part: the operators', and --tuned's. In
         * clusters of --cluster blocks, those that fill at once (an H100 SXM's 132 hold 30
         * clusters of 4); where the device has no clusters, the compile says so. */
        s->build.multiprocessors = tcc_device_multiprocessors(s->device);
        if (c->schedule.cluster > 1 && !c->schedule.grid_blocks) {
            int in_clusters = 0;
            tcc_status status =
                tcc_device_persistent_blocks(s->device, c->schedule.cluster, &in_clusters);
            if (status == TCC_OK)
                s->build.multiprocessors = in_clusters;
            else if (status != TCC_ERROR_UNSUPPORTED)
                return cli_library_error(s, status);
        }
    }
    if (native || (c->run && !c->arch_name))
        return device_arch(s, &s->build.arch);
    return CLI_EXIT_OK;
}

void cli_session_reset(CliSession *s)
{
    tcc_kernel_destroy(s->kernel);
    tcc_func_destroy(s->func);
    s->kernel = NULL;
    s->func = NULL;
    s->tutorial = false;
    s->schedule_whole = false;
    memset(&s->tiles, 0, sizeof s->tiles);
    memset(&s->schedule, 0, sizeof s->schedule);
}

void cli_session_close(CliSession *s)
{
    cli_session_reset(s);
    tcc_device_close(s->device);
    tcc_context_destroy(s->ctx);
    *s = (CliSession){0};
}

static const char *emitted_text(const tcc_kernel *kernel, CliEmit emit)
{
    switch (emit) {
    case CLI_EMIT_LOOPS:
        return tcc_kernel_loop_ir(kernel);
    case CLI_EMIT_LLVM:
        return tcc_kernel_llvm_ir(kernel);
    case CLI_EMIT_PTX:
        return tcc_kernel_ptx(kernel);
    case CLI_EMIT_CUBIN:
        break;
    }
    return NULL;
}

/* Machine code, as bytes: to -o's file or to stdout, which must not be a terminal. */
static CliExit write_bytes(const char *path, const void *bytes, size_t size)
{
    bool to_stdout = !path || strcmp(path, "-") == 0;
    if (to_stdout && isatty(fileno(stdout))) {
        cli_error("--emit=cubin writes binary machine code: give -o FILE or redirect stdout");
        return CLI_EXIT_USAGE;
    }
    if (to_stdout)
        path = "<stdout>";
    FILE *out = to_stdout ? stdout : fopen(path, "wb");
    if (!out) {
        cli_error("-o: cannot open '%s': %s", path, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    bool ok = fwrite(bytes, 1, size, out) == size;
    ok = (to_stdout ? fflush(out) == 0 : fclose(out) == 0) && ok;
    if (!ok) {
        cli_error("cannot write '%s': %s", path, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

/* --verbose: what ptxas made of each launch, on stderr. */
static void print_machine_code(const CliSession *s, size_t size)
{
    const tcc_kernel *kernel = s->kernel;
    int major = 0, minor = 0;
    tcc_machine_code_available(s->ctx, &major, &minor); /* opened: the kernel has its code */
    fprintf(stderr, "machine code: %zu bytes (nvJitLink %d.%d)", size, major, minor);
    for (int i = 0; i < tcc_kernel_launch_count(kernel); i++)
        fprintf(stderr, "; %s: %d registers, %lld bytes spilled", tcc_kernel_launch_name(kernel, i),
                tcc_kernel_launch_registers(kernel, i),
                (long long)tcc_kernel_launch_spill_bytes(kernel, i));
    fputc('\n', stderr);
}

CliExit cli_emit(const CliSession *s, const CliCommon *c)
{
    if (c->emit == CLI_EMIT_CUBIN) {
        size_t size = 0;
        const void *bytes = tcc_kernel_machine_code(s->kernel, &size);
        if (!bytes) {
            cli_error("the kernel has no machine code");
            return CLI_EXIT_ERROR;
        }
        if (c->verbose)
            print_machine_code(s, size);
        return write_bytes(c->output_path, bytes, size);
    }
    const char *text = emitted_text(s->kernel, c->emit);
    if (!text) {
        cli_error("the kernel has no text of the requested kind");
        return CLI_EXIT_ERROR;
    }
    return cli_write_text(c->output_path, text);
}

CliExit cli_write_text(const char *path, const char *text)
{
    bool to_stdout = !path || strcmp(path, "-") == 0;
    if (to_stdout)
        path = "<stdout>";
    FILE *out = to_stdout ? stdout : fopen(path, "w");
    if (!out) {
        cli_error("-o: cannot open '%s': %s", path, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    bool ok = fputs(text, out) >= 0;
    ok = (to_stdout ? fflush(out) == 0 : fclose(out) == 0) && ok;
    if (!ok) {
        cli_error("cannot write '%s': %s", path, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

/* "RxC", or "auto" where the library chooses (a zero field). */
static void print_pair(const char *name, int rows, int cols)
{
    if (rows && cols)
        fprintf(stderr, " %s=%dx%d", name, rows, cols);
    else
        fprintf(stderr, " %s=auto", name);
}

static void print_count(const char *name, int value)
{
    if (value)
        fprintf(stderr, " %s=%d", name, value);
    else
        fprintf(stderr, " %s=auto", name);
}

/* An enumerated knob by its option's name for the value; "auto" for 0. */
static void print_knob(const char *name, const char *option, int value)
{
    const char *spelled = cli_knob_name(option, value);
    fprintf(stderr, " %s=%s", name, spelled ? spelled : "auto");
}

tcc_gemm_schedule cli_gemm_schedule(const CliCommon *c)
{
    tcc_gemm_schedule schedule = c->schedule;
    schedule.size = sizeof schedule; /* the options hold the knobs alone */
    return schedule;
}

/* --verbose: the schedule on stderr, "auto" for the fields the library chooses. */
static void print_gemm_schedule(const tcc_gemm_schedule *s)
{
    fputs("schedule: implicit GEMM:", stderr);
    if (s->mma_m)
        fprintf(stderr, " mma=m%dn%dk%d", s->mma_m, s->mma_n, s->mma_k);
    else
        fputs(" mma=auto", stderr);
    print_pair("block-warps", s->block_row_warps, s->block_col_warps);
    print_pair("warp-tiles", s->warp_row_tiles, s->warp_col_tiles);
    print_count("passes", s->num_total_passes);
    print_count("fused-passes", s->num_fused_passes);
    fprintf(stderr, " policy=%s block-order=%s", cli_knob_name("--policy", (int)s->policy),
            s->column_major_blocks ? "col" : "row");
    print_count("stages", s->stages);
    print_knob("intrinsic", "--intrinsic", (int)s->intrinsic);
    print_knob("smem", "--smem", (int)s->smem_layout);
    print_count("split-k", s->split_k);
    if (s->intrinsic == TCC_GEMM_WGMMA)
        print_count("wgmma-steps", s->wgmma_steps);
    print_knob("copy", "--copy", (int)s->copy);
    print_knob("producer", "--producer", (int)s->producer);
    print_knob("store", "--store", (int)s->store);
    print_knob("grid", "--grid", (int)s->grid);
    if (s->grid == TCC_GEMM_GRID_PERSISTENT)
        print_count("grid-blocks", s->grid_blocks);
    if (s->cluster > 1)
        print_count("cluster", s->cluster);
    if (s->producer == TCC_GEMM_PRODUCER_WARPGROUP)
        print_knob("consumers", "--consumers", (int)s->consumers);
    fputc('\n', stderr);
}

void cli_record_gemm_schedule(CliSession *session, const CliCommon *c,
                              const tcc_gemm_schedule *chosen)
{
    /* Without knobs the schedule is the library's default, every field known (a persistent
     * grid's blocks the device's, as the build options compile it: cli_session_open). With
     * some, the library completes the others for the knobs given, which the API does not
     * return: they stay 0 ("auto"). */
    bool knobs = cli_gemm_knobs_given(c);
    tcc_gemm_schedule shown = knobs ? c->schedule : *chosen;
    int blocks = c->schedule.grid_blocks ? c->schedule.grid_blocks : session->build.multiprocessors;
    if (shown.grid == TCC_GEMM_GRID_PERSISTENT && blocks)
        shown.grid_blocks = blocks;
    session->schedule = shown;
    session->schedule_whole = !knobs;
    if (c->verbose)
        print_gemm_schedule(&shown);
}
