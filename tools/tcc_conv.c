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
    s->tutorial = true;
    s->tiles = o->tiles;
    tcc_tensor *params[3] = {conv.input, conv.filter, conv.output};
    return tcc_build(s->func, 3, params, &s->build, &s->kernel);
}

/* The implicit GEMM, with the knobs given and the library's choices for the rest. */
static CliExit build_default(CliSession *s, const ConvOptions *o)
{
    tcc_gemm_schedule chosen;
    tcc_gemm_schedule_init(&chosen);
    tcc_status status = TCC_OK;
    /* The whole default schedule for the report when no knob is given; for --verbose. */
    if (!cli_gemm_knobs_given(&o->common) || o->common.verbose)
        status = tcc_conv2d_default_schedule(s->ctx, &o->desc, s->build.arch, &chosen);
    if (status != TCC_OK)
        return cli_library_error(s, status);
    cli_record_gemm_schedule(s, &o->common, &chosen);
    tcc_gemm_schedule schedule = cli_gemm_schedule(&o->common);
    status = tcc_conv2d_compile(s->ctx, &o->desc, &schedule, &s->build, &s->kernel);
    return status == TCC_OK ? CLI_EXIT_OK : cli_library_error(s, status);
}

/* The tutorial pads each side of an axis alike. */
static bool symmetric_pads(const tcc_conv2d_desc *d)
{
    return d->pad_top == d->pad_bottom && d->pad_left == d->pad_right;
}

static CliExit compile(CliSession *s, const void *options)
{
    const ConvOptions *o = options;
    int kind = conv_schedule_kind(o);
    if (kind < 0)
        return CLI_EXIT_USAGE;
    if (o->common.tuned) {
        tcc_workload workload;
        tcc_workload_init(&workload, TCC_WORKLOAD_CONV2D);
        workload.conv2d = o->desc;
        return cli_compile_tuned(s, &o->common, &workload);
    }
    if (kind == CLI_SCHEDULE_TUTORIAL || (kind == CLI_SCHEDULE_AUTO && symmetric_pads(&o->desc))) {
        bool inapplicable = false;
        tcc_status status = build_tutorial(s, o, &inapplicable);
        if (status == TCC_OK)
            return CLI_EXIT_OK;
        if (kind == CLI_SCHEDULE_TUTORIAL || !inapplicable)
            return cli_library_error(s, status);
        /* auto: the convolution is not one the tutorial's schedule takes. */
        if (o->common.verbose)
            fprintf(stderr, "schedule: not the tutorial's: %s\n", tcc_last_error(s->ctx));
        cli_session_reset(s);
    }
    return build_default(s, o);
}

/* The "shape" of a record: the descriptor's fields under their names. */
static void write_shape(CliOut *out, const void *desc)
{
    static const tcc_conv2d_desc none;
    const tcc_conv2d_desc *d = desc ? desc : &none;
    cli_out_int(out, "batch", d->batch);
    cli_out_int(out, "height", d->height);
    cli_out_int(out, "width", d->width);
    cli_out_int(out, "in_channels", d->in_channels);
    cli_out_int(out, "out_channels", d->out_channels);
    cli_out_int(out, "kernel_h", d->kernel_h);
    cli_out_int(out, "kernel_w", d->kernel_w);
    cli_out_int(out, "stride_h", d->stride_h);
    cli_out_int(out, "stride_w", d->stride_w);
    cli_out_int(out, "pad_top", d->pad_top);
    cli_out_int(out, "pad_bottom", d->pad_bottom);
    cli_out_int(out, "pad_left", d->pad_left);
    cli_out_int(out, "pad_right", d->pad_right);
    cli_out_int(out, "dilation_h", d->dilation_h);
    cli_out_int(out, "dilation_w", d->dilation_w);
    cli_out_int(out, "groups", d->groups);
    cli_out_int(out, "out_height", desc ? tcc_conv2d_out_height(d) : 0);
    cli_out_int(out, "out_width", desc ? tcc_conv2d_out_width(d) : 0);
    cli_out_string(out, "layout", conv_layout_name(d->layout));
    cli_out_string(out, "filter_layout", conv_filter_layout_name(d->filter_layout));
}

static const CliTool tool = {"conv2d", compile, write_shape, true};

/* One layer (NULL: the command line's convolution, or --layer's): options resolved on a copy,
 * so that each layer starts from what was given. */
static CliExit run_layer(CliReport *report, CliSession *session, const ConvOptions *given,
                         const ConvLayer *layer)
{
    ConvOptions options = *given;
    char error[512];
    if (layer)
        conv_resolve_layer(&options, layer);
    else if (!conv_resolve(&options, error, sizeof error)) {
        cli_error("%s", error);
        return cli_report_failure(report, CLI_EXIT_USAGE, options.layer);
    }
    const tcc_conv2d_desc *d = &options.desc;
    CliJob job = {layer ? layer->name : options.layer,
                  &options,
                  &options.common,
                  {check_conv, d, tcc_conv2d_flops(d), tcc_conv2d_output_elements(d)}};
    return cli_report_job(report, session, &job);
}

static int tool_main(int argc, char **argv)
{
    ConvOptions options;
    char error[512];
    if (!conv_parse(argc, argv, &options, error, sizeof error))
        return cli_usage_error(&tool, argc, argv, error);
    CliReport report;
    cli_report_init(&report, &tool, options.common.format);
    int rc = cli_early_exit(&options.common, conv_usage);
    if (rc > 0)
        return cli_report_failure(&report, (CliExit)rc, NULL);
    if (rc == 0)
        return 0;
    if (options.list_layers) {
        conv_list_layers(stdout);
        return 0;
    }
    if (!conv_check_options(&options, error, sizeof error))
        return cli_usage_error(&tool, argc, argv, error);
    ConvLayerList list = {0};
    if (options.layers_file && !conv_read_layers(options.layers_file, &list, error, sizeof error))
        return cli_usage_error(&tool, argc, argv, error);
    /* An unknown --layer is a usage error whether or not a GPU is there. */
    ConvOptions resolved = options;
    if (!list.count && !conv_resolve(&resolved, error, sizeof error))
        return cli_usage_error(&tool, argc, argv, error);
    report.announce = list.count > 0;
    CliSession session = {0};
    CliExit worst = cli_session_open(&session, &options.common);
    if (worst != CLI_EXIT_OK) {
        cli_report_failure(&report, worst, NULL);
    } else if (!list.count) {
        worst = run_layer(&report, &session, &options, NULL);
    } else {
        for (int i = 0; i < list.count; i++)
            worst = cli_exit_worse(worst, run_layer(&report, &session, &options, &list.layers[i]));
    }
    cli_session_close(&session);
    conv_free_layers(&list);
    cli_report_free(&report);
    return worst;
}

int main(int argc, char **argv)
{
    return cli_exit_after_output("tcc-conv", tool_main(argc, argv));
}
