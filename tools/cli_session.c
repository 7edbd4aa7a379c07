/*
 * The steps of tcc-conv and tcc-matmul around the library calls: one-line errors, the
 * options that end the tool early, the context, device and arch of a compilation, writing
 * the kernel's text, and printing the schedule.
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#ifndef TCC_VERSION
#define TCC_VERSION "0.1.0-dev"
#endif

void cli_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "%s: error: ", cli_program);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

static bool is_known_pass(const char *name)
{
    return strcmp(name, "all") == 0 || tcc_pass_index(name) >= 0;
}

int cli_early_exit(const CliCommon *c, void (*usage)(FILE *out))
{
    if (c->help) {
        usage(stdout);
        return 0;
    }
    if (c->version) {
        printf("%s %s\n", cli_program, TCC_VERSION);
        return 0;
    }
    if (c->list_passes) {
        for (int i = 0; i < tcc_pass_count(); i++)
            printf("%-14s %s\n", tcc_pass_name(i), tcc_pass_summary(i));
        return 0;
    }
    if (c->print_after && !is_known_pass(c->print_after)) {
        cli_error("--print-after: unknown pass '%s' (see --list-passes)", c->print_after);
        return 1;
    }
    return -1;
}

int cli_library_error(const CliSession *s)
{
    cli_error("%s", tcc_last_error(s->ctx));
    return 1;
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
static int device_arch(const CliSession *s, tcc_arch *arch)
{
    int have = tcc_device_arch(s->device);
    *arch = tcc_arch_for_device(have);
    if (*arch)
        return 0;
    cli_error("%s is sm_%d; tcc needs sm_70 or newer (tensor cores)", tcc_device_name(s->device),
              have);
    return 1;
}

int cli_session_open(CliSession *s, const CliCommon *c)
{
    if (tcc_context_create(&s->ctx) != TCC_OK) {
        cli_error("out of memory creating a context");
        return 1;
    }
    tcc_build_options_init(&s->build);
    s->build.print_after_pass = c->print_after;
    s->build.print_callback = print_after;
    /* The arch: --arch, else the device's with --run, else the default. */
    if (c->arch_name && tcc_arch_parse(s->ctx, c->arch_name, &s->build.arch) != TCC_OK) {
        cli_error("--arch: %s", tcc_last_error(s->ctx));
        return 1;
    }
    if (c->run && tcc_device_open(s->ctx, 0, &s->device) != TCC_OK)
        return cli_library_error(s);
    if (c->run && !c->arch_name)
        return device_arch(s, &s->build.arch);
    return 0;
}

void cli_session_close(CliSession *s)
{
    tcc_kernel_destroy(s->kernel);
    tcc_func_destroy(s->func);
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
    }
    return NULL;
}

int cli_emit(const CliSession *s, const CliCommon *c)
{
    const char *text = emitted_text(s->kernel, c->emit);
    if (!text) {
        cli_error("the kernel has no text of the requested kind");
        return 1;
    }
    return cli_write_text(c->output_path, text);
}

int cli_write_text(const char *path, const char *text)
{
    bool to_stdout = !path || strcmp(path, "-") == 0;
    if (to_stdout)
        path = "<stdout>";
    FILE *out = to_stdout ? stdout : fopen(path, "w");
    if (!out) {
        cli_error("-o: cannot open '%s': %s", path, strerror(errno));
        return 1;
    }
    bool ok = fputs(text, out) >= 0;
    ok = (to_stdout ? fflush(out) == 0 : fclose(out) == 0) && ok;
    if (!ok) {
        cli_error("cannot write '%s': %s", path, strerror(errno));
        return 1;
    }
    return 0;
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

tcc_gemm_schedule cli_gemm_schedule(const CliSession *s, const CliCommon *c)
{
    tcc_gemm_schedule schedule = c->schedule;
    if (s->device && !schedule.grid_blocks)
        schedule.grid_blocks = tcc_device_multiprocessors(s->device);
    return schedule;
}

void cli_print_gemm_schedule(const CliSession *session, const CliCommon *c,
                             const tcc_gemm_schedule *chosen)
{
    /* Without knobs the schedule is the library's default, every field known (a persistent
     * grid's blocks the device's, as cli_gemm_schedule compiles it). With some, the library
     * completes the others for the knobs given, which this cannot see: they print as
     * "auto". */
    tcc_gemm_schedule shown = *chosen;
    int blocks = cli_gemm_schedule(session, c).grid_blocks;
    if (shown.grid == TCC_GEMM_GRID_PERSISTENT && blocks)
        shown.grid_blocks = blocks;
    const tcc_gemm_schedule *s = cli_gemm_knobs_given(c) ? &c->schedule : &shown;
    fputs("schedule: implicit GEMM:", stderr);
    if (s->mma_m)
        fprintf(stderr, " mma=m%dn%dk%d", s->mma_m, s->mma_n, s->mma_k);
    else
        fputs(" mma=auto", stderr);
    print_pair("block-warps", s->block_row_warps, s->block_col_warps);
    print_pair("warp-tiles", s->warp_row_tiles, s->warp_col_tiles);
    print_count("passes", s->num_total_passes);
    print_count("fused-passes", s->num_fused_passes);
    fprintf(stderr, " policy=%s block-order=%s",
            s->policy == TCC_MMA_BLOCK_ORDER ? "block" : "pass",
            s->column_major_blocks ? "col" : "row");
    print_count("stages", s->stages);
    fprintf(stderr, " intrinsic=%s",
            s->intrinsic == TCC_GEMM_WMMA       ? "wmma"
            : s->intrinsic == TCC_GEMM_MMA_SYNC ? "mma_sync"
            : s->intrinsic == TCC_GEMM_WGMMA    ? "wgmma"
                                                : "auto");
    fprintf(stderr, " smem=%s",
            s->smem_layout == TCC_SMEM_DENSE      ? "dense"
            : s->smem_layout == TCC_SMEM_PADDED   ? "padded"
            : s->smem_layout == TCC_SMEM_SWIZZLED ? "swizzled"
                                                  : "auto");
    print_count("split-k", s->split_k);
    if (s->intrinsic == TCC_GEMM_WGMMA)
        print_count("wgmma-steps", s->wgmma_steps);
    fprintf(stderr, " copy=%s",
            s->copy == TCC_GEMM_COPY_BULK      ? "bulk"
            : s->copy == TCC_GEMM_COPY_THREADS ? "threads"
                                               : "auto");
    fprintf(stderr, " producer=%s",
            s->producer == TCC_GEMM_PRODUCER_WARPGROUP ? "warpgroup"
            : s->producer == TCC_GEMM_PRODUCER_NONE    ? "none"
                                                       : "auto");
    fprintf(stderr, " store=%s",
            s->store == TCC_GEMM_STORE_REGISTERS ? "registers"
            : s->store == TCC_GEMM_STORE_SHARED  ? "shared"
                                                 : "auto");
    fprintf(stderr, " grid=%s",
            s->grid == TCC_GEMM_GRID_PERSISTENT ? "persistent"
            : s->grid == TCC_GEMM_GRID_TILES    ? "tiles"
                                                : "auto");
    if (s->grid == TCC_GEMM_GRID_PERSISTENT)
        print_count("grid-blocks", s->grid_blocks);
    if (s->cluster > 1)
        print_count("cluster", s->cluster);
    fputc('\n', stderr);
}
