/*
 * tcc-conv: compile a tensor-core conv2d to loop IR, LLVM IR or PTX, and with --run, run,
 * check and time it on a GPU.
 *
 * This file only chooses the schedule, calls the public API (tcc.h) and prints. The flow:
 *   options (conv_options.c) -> context, device, arch (cli_session.c)
 *   -> the tutorial's schedule: func -> tutorial_conv2d_define -> schedule_create
 *      -> tutorial_conv2d_schedule -> build
 *      or any convolution: conv2d_compile (the implicit GEMM, default or tuned schedule)
 *   -> emit, and with --run: tcc_conv2d_check (cli_compile_and_run, cli_run.c).
 */
#include "conv_options.h"

const char cli_program[] = "tcc-conv";

static tcc_status check_conv(tcc_device *device, const tcc_kernel *kernel, const void *desc,
                             const tcc_check_options *options, tcc_check_result *result)
{
    return tcc_conv2d_check(device, kernel, desc, options, result);
}

/* The tutorial's schedule. *inapplicable tells a convolution it cannot take (the library's
 * TCC_ERROR_UNSUPPORTED: not its form, or its tiles do not divide the shape) from a
 * failure. */
static tcc_status build_tutorial(CliSession *s, const ConvOptions *o, bool *inapplicable)
{
    tcc_tutorial_conv2d conv;
    tcc_status status = conv_schedule_tutorial(s->ctx, o, &s->func, &conv);
    *inapplicable = status == TCC_ERROR_UNSUPPORTED;
    if (status != TCC_OK)
        return status;
    if (o->common.verbose)
        fprintf(stderr,
                "schedule: tutorial: block-warps=%lldx%lld warp-tiles=%lldx%lld chunk=%lld\n",
                (long long)o->tiles.block_row_warps, (long long)o->tiles.block_col_warps,
                (long long)o->tiles.warp_row_tiles, (long long)o->tiles.warp_col_tiles,
                (long long)o->tiles.chunk);
    tcc_tensor *params[3] = {conv.input, conv.filter, conv.output};
    return tcc_build(s->func, 3, params, &s->build, &s->kernel);
}

/* The implicit GEMM, with the knobs given and the library's choices for the rest. */
static int build_default(CliSession *s, const ConvOptions *o)
{
    if (o->common.verbose) {
        tcc_gemm_schedule chosen;
        if (tcc_conv2d_default_schedule(s->ctx, &o->desc, s->build.arch, &chosen) != TCC_OK)
            return cli_library_error(s);
        cli_print_gemm_schedule(s, &o->common, &chosen);
    }
    tcc_gemm_schedule schedule = cli_gemm_schedule(s, &o->common);
    if (tcc_conv2d_compile(s->ctx, &o->desc, &schedule, &s->build, &s->kernel) != TCC_OK)
        return cli_library_error(s);
    return 0;
}

/* The tutorial pads each side of an axis alike. */
static bool symmetric_pads(const tcc_conv2d_desc *d)
{
    return d->pad_top == d->pad_bottom && d->pad_left == d->pad_right;
}

static int compile(CliSession *s, const void *options)
{
    const ConvOptions *o = options;
    int kind = conv_schedule_kind(o);
    if (kind < 0)
        return 1;
    if (kind == CLI_SCHEDULE_TUTORIAL || (kind == CLI_SCHEDULE_AUTO && symmetric_pads(&o->desc))) {
        bool inapplicable = false;
        if (build_tutorial(s, o, &inapplicable) == TCC_OK)
            return 0;
        if (kind == CLI_SCHEDULE_TUTORIAL || !inapplicable)
            return cli_library_error(s);
        /* auto: the convolution is not one the tutorial's schedule takes. */
        if (o->common.verbose)
            fprintf(stderr, "schedule: not the tutorial's: %s\n", tcc_last_error(s->ctx));
        tcc_func_destroy(s->func);
        s->func = NULL;
    }
    return build_default(s, o);
}

int main(int argc, char **argv)
{
    ConvOptions options;
    char error[512];
    if (!conv_parse(argc, argv, &options, error, sizeof error)) {
        cli_error("%s", error);
        return 1;
    }
    int rc = cli_early_exit(&options.common, conv_usage);
    if (rc >= 0)
        return rc;
    if (options.list_layers) {
        conv_list_layers(stdout);
        return 0;
    }
    if (!conv_resolve(&options, error, sizeof error)) {
        cli_error("%s", error);
        return 1;
    }
    const tcc_conv2d_desc *d = &options.desc;
    CliRunTarget target = {check_conv, d, tcc_conv2d_flops(d), tcc_conv2d_output_elements(d)};
    CliSession session = {0};
    rc = cli_compile_and_run(&session, &options.common, compile, &options, &target);
    cli_session_close(&session);
    return rc;
}
