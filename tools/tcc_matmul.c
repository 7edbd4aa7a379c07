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

static int compile(CliSession *s, const void *options)
{
    const MatmulOptions *o = options;
    if (o->common.schedule_kind == CLI_SCHEDULE_TUTORIAL) {
        cli_error("--schedule: the tutorial's schedule is a convolution's (use tcc-conv); "
                  "tcc-matmul has auto and default");
        return 1;
    }
    if (o->common.verbose) {
        tcc_gemm_schedule chosen;
        if (tcc_matmul_default_schedule(s->ctx, &o->desc, s->build.arch, &chosen) != TCC_OK)
            return cli_library_error(s);
        cli_print_gemm_schedule(s, &o->common, &chosen);
    }
    tcc_gemm_schedule schedule = cli_gemm_schedule(s, &o->common);
    if (tcc_matmul_compile(s->ctx, &o->desc, &schedule, &s->build, &s->kernel) != TCC_OK)
        return cli_library_error(s);
    return 0;
}

int main(int argc, char **argv)
{
    MatmulOptions options;
    char error[512];
    if (!matmul_parse(argc, argv, &options, error, sizeof error)) {
        cli_error("%s", error);
        return 1;
    }
    int rc = cli_early_exit(&options.common, matmul_usage);
    if (rc >= 0)
        return rc;
    matmul_resolve(&options);
    const tcc_matmul_desc *d = &options.desc;
    CliRunTarget target = {check_matmul, d, tcc_matmul_flops(d), matmul_outputs(d)};
    CliSession session = {0};
    rc = cli_compile_and_run(&session, &options.common, compile, &options, &target);
    cli_session_close(&session);
    return rc;
}
