/*
 * --tuned: tcc-tune's records applied (AutoTVM's apply_history_best through the library's
 * tcc_apply_history_best), for tcc-conv and tcc-matmul alike.
 */
#include "cli.h"

static void print_choice(const CliCommon *c, const tcc_template *gemm, const tcc_workload *workload,
                         const char *device, int64_t index)
{
    if (c->verbose) {
        char key[1024];
        tcc_workload_key(gemm, workload, key, sizeof key);
        fprintf(stderr, "schedule: tuned: workload %s\n", key);
    }
    if (index >= 0)
        fprintf(stderr,
                "schedule: tuned: config %lld of the gemm template, the fastest recorded%s%s\n",
                (long long)index, device ? " on " : "", device ? device : "");
    else
        fprintf(stderr, "schedule: no tuned record of this workload%s%s: the default schedule\n",
                device ? " on " : "", device ? device : "");
}

CliExit cli_compile_tuned(CliSession *s, const CliCommon *c, const tcc_workload *workload)
{
    if (cli_gemm_knobs_given(c)) {
        cli_error("--tuned takes the schedule from the records: give it without --mma, "
                  "--block-warps and the other schedule knobs");
        return CLI_EXIT_USAGE;
    }
    tcc_record_store *store;
    tcc_status status = tcc_record_store_open(s->ctx, c->db, &store);
    if (status != TCC_OK)
        return cli_library_error(s, status);
    const tcc_template *gemm = tcc_template_find("gemm");
    const char *device = s->device ? tcc_device_name(s->device) : NULL;
    int64_t index = -1;
    /* Which config is used is known once it builds, but the line saying so goes before the
     * loop IR that --print-after writes on the way: that build is made once quietly first. */
    tcc_build_options quiet = s->build;
    quiet.print_after_pass = NULL;
    status = tcc_apply_history_best(s->ctx, store, gemm, workload, s->build.arch, device, &quiet,
                                    &s->kernel, &index);
    if (status == TCC_OK)
        print_choice(c, gemm, workload, device, index);
    if (status == TCC_OK && s->build.print_after_pass) {
        tcc_kernel_destroy(s->kernel);
        s->kernel = NULL;
        status = tcc_apply_history_best(s->ctx, store, gemm, workload, s->build.arch, device,
                                        &s->build, &s->kernel, NULL);
    }
    tcc_record_store_close(store);
    return status == TCC_OK ? CLI_EXIT_OK : cli_library_error(s, status);
}
