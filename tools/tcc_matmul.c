/*
 * tcc-matmul: compile a tensor-core (batched) matrix product to loop IR, LLVM IR or PTX,
 * and with --run, run, check and time it on a GPU.
 *
 * This file only calls the public API (tcc.h) and prints. The flow:
 *   options (matmul_options.c) -> context, device, arch (cli_session.c)
 *   -> matmul_compile (the implicit GEMM, default or tuned schedule)
 *   -> emit, and with --run: tcc_matmul_check (cli_compile_and_run, cli_run.c).
 */
#include "matmul_options.h"

const char cli_program[] = "tcc-matmul";

static tcc_status check_matmul(tcc_device *device, const tcc_kernel *kernel, const void *desc,
                               const tcc_check_options *options, tcc_check_result *result)
{
    return tcc_matmul_check(device, kernel, desc, options, result);
}

static CliExit compile(CliSession *s, const void *options)
{
    const MatmulOptions *o = options;
    if (o->common.schedule_kind == CLI_SCHEDULE_TUTORIAL) {
        cli_error("--schedule: the tutorial's schedule is a convolution's (use tcc-conv); "
                  "tcc-matmul has auto and default");
        return CLI_EXIT_USAGE;
    }
    if (o->common.tuned) {
        tcc_workload workload;
        tcc_workload_init(&workload, TCC_WORKLOAD_MATMUL);
        workload.matmul = o->desc;
        return cli_compile_tuned(s, &o->common, &workload);
    }
    tcc_gemm_schedule chosen;
    tcc_gemm_schedule_init(&chosen);
    tcc_status status = TCC_OK;
    /* The whole default schedule for the report when no knob is given; for --verbose. */
    if (!cli_gemm_knobs_given(&o->common) || o->common.verbose)
        status = tcc_matmul_default_schedule(s->ctx, &o->desc, s->build.arch, &chosen);
    if (status != TCC_OK)
        return cli_library_error(s, status);
    cli_record_gemm_schedule(s, &o->common, &chosen);
    tcc_gemm_schedule schedule = cli_gemm_schedule(&o->common);
    status = tcc_matmul_compile(s->ctx, &o->desc, &schedule, &s->build, &s->kernel);
    return status == TCC_OK ? CLI_EXIT_OK : cli_library_error(s, status);
}

/* The "shape" of a record: the descriptor's fields under their names. */
static void write_shape(CliOut *out, const void *desc)
{
    static const tcc_matmul_desc none;
    const tcc_matmul_desc *d = desc ? desc : &none;
    cli_out_int(out, "batch", d->batch);
    cli_out_int(out, "m", d->m);
    cli_out_int(out, "n", d->n);
    cli_out_int(out, "k", d->k);
    cli_out_bool(out, "a_col_major", d->a_col_major);
    cli_out_bool(out, "b_col_major", d->b_col_major);
}

static const CliTool tool = {"matmul", compile, write_shape, false};

static int tool_main(int argc, char **argv)
{
    MatmulOptions options;
    char error[512];
    if (!matmul_parse(argc, argv, &options, error, sizeof error))
        return cli_usage_error(&tool, argc, argv, error);
    CliReport report;
    cli_report_init(&report, &tool, options.common.format);
    int rc = cli_early_exit(&options.common, matmul_usage);
    if (rc > 0)
        return cli_report_failure(&report, (CliExit)rc, NULL);
    if (rc == 0)
        return 0;
    if (!cli_check_common(&options.common, error, sizeof error))
        return cli_usage_error(&tool, argc, argv, error);
    matmul_resolve(&options);
    const tcc_matmul_desc *d = &options.desc;
    CliJob job = {
        NULL, &options, &options.common, {check_matmul, d, tcc_matmul_flops(d), matmul_outputs(d)}};
    CliSession session = {0};
    CliExit code = cli_session_open(&session, &options.common);
    if (code != CLI_EXIT_OK)
        cli_report_failure(&report, code, NULL);
    else
        code = cli_report_job(&report, &session, &job);
    cli_session_close(&session);
    cli_report_free(&report);
    return code;
}

int main(int argc, char **argv)
{
    return cli_exit_after_output("tcc-matmul", tool_main(argc, argv));
}
