/*
 * Fuzz target of a tool's command line, built once a tool (FUZZ_TOOL_CONV, FUZZ_TOOL_MATMUL
 * or FUZZ_TOOL_OPT): the input, one argument a line, is parsed by the tool's own parser
 * (tools/), then taken through what the tool does before it compiles: the early exits, the
 * resolution of defaults, the tool's own checks, the problem's size (flops, outputs), the
 * context and --arch, and the library's checks of the descriptor and the schedule (validation,
 * the default schedule, the knobs given completed and checked; for tcc-conv's tutorial
 * schedule, the schedule applied). It stops short of lowering and code generation, which
 * fuzz_compile covers, so that each input takes microseconds; it never opens a device (--run
 * and --arch native are dropped), never reads a file (--layers-file is parsed, not read) and
 * never writes one (-o is parsed, not opened).
 *
 * Every failure must come with a message: a parse error with an empty one, or a library call
 * that fails with an empty tcc_last_error, traps.
 */
#include "fuzz_support.h"

#include "ops/gemm.h"

#include <stdlib.h>
#include <string.h>

#if defined(FUZZ_TOOL_CONV)
#include "conv_options.h"
const char cli_program[] = "tcc-conv";
#elif defined(FUZZ_TOOL_MATMUL)
#include "matmul_options.h"
const char cli_program[] = "tcc-matmul";
#elif defined(FUZZ_TOOL_OPT)
#include "opt_options.h"
const char cli_program[] = "tcc-opt";
#else
#error "define FUZZ_TOOL_CONV, FUZZ_TOOL_MATMUL or FUZZ_TOOL_OPT"
#endif

/* --help, --version and --list-passes, which print and stop; the help text is printed to
 * /dev/null (it has buffers of its own to fill). Otherwise cli_early_exit's checks (the
 * --print-after pass). Returns whether the tool would stop here. */
static bool early_exit(const CliCommon *common, void (*usage)(FILE *out))
{
    if (common->help) {
        usage(fuzz_null_stream());
        return true;
    }
    if (common->version || common->list_passes)
        return true;
    return cli_early_exit(common, usage) >= 0;
}

#if !defined(FUZZ_TOOL_OPT)
/* The session as the tool opens it, without a device: the context and --arch (--arch native
 * would open one: the default arch instead). */
static bool open_session(CliSession *s, CliCommon *common)
{
    common->run = false;
    if (cli_arch_is_native(common))
        common->arch_name = NULL;
    return cli_session_open(s, common) == CLI_EXIT_OK;
}

/* The default schedule and the knobs given, completed and checked as compiling would. */
static void plan_gemm(CliSession *s, const CliCommon *common, GemmMaker make, const void *desc)
{
    tcc_gemm_schedule chosen;
    tcc_gemm_schedule_init(&chosen);
    tcc_status status = make == tci_conv2d_gemm
                            ? tcc_conv2d_default_schedule(s->ctx, desc, s->build.arch, &chosen)
                            : tcc_matmul_default_schedule(s->ctx, desc, s->build.arch, &chosen);
    fuzz_check_status(s->ctx, "the default schedule", status);
    tcc_gemm_schedule given = cli_gemm_schedule(common);
    GemmPlan plan;
    fuzz_check_status(
        s->ctx, "tci_gemm_plan",
        tci_gemm_plan(s->ctx, make, desc, s->build.arch, s->build.multiprocessors, &given, &plan));
}
#endif

#if defined(FUZZ_TOOL_CONV)
/* What tcc_conv.c's build_tutorial does before tcc_build: define and schedule. */
static void schedule_tutorial(CliSession *s, const ConvOptions *o)
{
    tcc_tutorial_conv2d conv;
    tcc_status status = conv_schedule_tutorial(s->ctx, o, &s->func, &conv);
    fuzz_check_status(s->ctx, "the tutorial's schedule", status);
}

static void run_tool(int argc, char **argv)
{
    ConvOptions o;
    char error[512];
    if (!conv_parse(argc, argv, &o, error, sizeof error)) {
        fuzz_require_message("conv_parse", error);
        return;
    }
    if (early_exit(&o.common, conv_usage))
        return;
    if (o.list_layers) {
        conv_list_layers(fuzz_null_stream());
        return;
    }
    if (!conv_check_options(&o, error, sizeof error)) {
        fuzz_require_message("conv_check_options", error);
        return;
    }
    if (!conv_resolve(&o, error, sizeof error)) {
        fuzz_require_message("conv_resolve", error);
        return;
    }
    const tcc_conv2d_desc *d = &o.desc;
    /* What main computes for --run before any check of the descriptor. */
    volatile double flops = tcc_conv2d_flops(d);
    volatile int64_t outputs = tcc_conv2d_output_elements(d);
    (void)flops, (void)outputs;
    CliSession s = {0};
    int kind = open_session(&s, &o.common) ? conv_schedule_kind(&o) : -1;
    if (kind >= 0) {
        bool symmetric = d->pad_top == d->pad_bottom && d->pad_left == d->pad_right;
        fuzz_check_status(s.ctx, "tcc_conv2d_validate", tcc_conv2d_validate(s.ctx, d));
        if (kind == CLI_SCHEDULE_TUTORIAL || (kind == CLI_SCHEDULE_AUTO && symmetric))
            schedule_tutorial(&s, &o);
        if (kind != CLI_SCHEDULE_TUTORIAL)
            plan_gemm(&s, &o.common, tci_conv2d_gemm, d);
    }
    cli_session_close(&s);
}

#elif defined(FUZZ_TOOL_MATMUL)
static void run_tool(int argc, char **argv)
{
    MatmulOptions o;
    char error[512];
    if (!matmul_parse(argc, argv, &o, error, sizeof error)) {
        fuzz_require_message("matmul_parse", error);
        return;
    }
    if (early_exit(&o.common, matmul_usage))
        return;
    if (!cli_check_common(&o.common, error, sizeof error)) {
        fuzz_require_message("cli_check_common", error);
        return;
    }
    matmul_resolve(&o);
    const tcc_matmul_desc *d = &o.desc;
    volatile double flops = tcc_matmul_flops(d);
    volatile int64_t outputs = matmul_outputs(d);
    (void)flops, (void)outputs;
    CliSession s = {0};
    if (open_session(&s, &o.common) && o.common.schedule_kind != CLI_SCHEDULE_TUTORIAL) {
        fuzz_check_status(s.ctx, "tcc_matmul_validate", tcc_matmul_validate(s.ctx, d));
        plan_gemm(&s, &o.common, tci_matmul_gemm, d);
    }
    cli_session_close(&s);
}

#else
static void run_tool(int argc, char **argv)
{
    OptOptions o;
    char error[512];
    if (!opt_parse(argc, argv, &o, error, sizeof error)) {
        fuzz_require_message("opt_parse", error);
        return;
    }
    if (early_exit(&o.common, opt_usage))
        return;
    /* What transform() does before it reads the input: the context and --arch. */
    tcc_context *ctx = NULL;
    if (tcc_context_create(&ctx) != TCC_OK)
        return;
    tcc_arch arch;
    if (o.common.arch_name && !cli_arch_is_native(&o.common)) /* native opens a device */
        fuzz_check_status(ctx, "tcc_arch_parse", tcc_arch_parse(ctx, o.common.arch_name, &arch));
    /* The passes on an empty function, so that their names are checked as the tool checks
     * them (fuzz_loop_ir reads the loop IR itself). */
    static const char empty[] = "kernel k(float32 A[1])\n  grid(1, 1, 1) block(1, 1, 1)\n{\n}\n";
    char *out = NULL;
    tcc_build_options build;
    tcc_build_options_init(&build);
    build.auto_unroll_max_step = o.auto_unroll_max_step;
    fuzz_check_status(ctx, "tcc_loop_ir_transform",
                      tcc_loop_ir_transform(ctx, empty, o.passes, &build, &out));
    free(out);
    tcc_context_destroy(ctx);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzArgv args;
    if (!fuzz_split_argv(data, size, cli_program, &args))
        return 0;
    run_tool(args.argc, args.argv);
    fuzz_free_argv(&args);
    return 0;
}
