/*
 * --run: check the kernel against the CPU reference and time it, through the library's
 * tcc_conv2d_check / tcc_matmul_check, and print what came out (in text format; the report
 * writes JSON and CSV). The seed, the device and the launch are printed first, so that a run
 * that dies can still be replayed.
 */
#include "cli.h"

#include <string.h>

static void print_launch(const CliSession *s)
{
    int64_t grid[3], block[3];
    tcc_kernel_grid(s->kernel, grid);
    tcc_kernel_block(s->kernel, block);
    printf("device: %s (sm_%d)\n", tcc_device_name(s->device), tcc_device_arch(s->device));
    printf("launch: grid(%lld, %lld, %lld) block(%lld, %lld, %lld), %lld bytes of shared memory\n",
           (long long)grid[0], (long long)grid[1], (long long)grid[2], (long long)block[0],
           (long long)block[1], (long long)block[2], (long long)tcc_kernel_shared_bytes(s->kernel));
    /* Several launches (split-K, staged operands): each, in order, and the scratch memory. */
    int count = tcc_kernel_launch_count(s->kernel);
    if (count < 2)
        return;
    int64_t workspace = 0;
    for (int i = 0; i < tcc_kernel_workspace_count(s->kernel); i++)
        workspace += tcc_kernel_workspace_bytes(s->kernel, i);
    printf("launches:");
    for (int i = 0; i < count; i++)
        printf("%s %s", i ? "," : "", tcc_kernel_launch_name(s->kernel, i));
    printf("; %lld bytes of workspace\n", (long long)workspace);
}

/* Prints the comparison in text format and says whether it passed; a failure is a one-line
 * error in every format. */
static bool judge(const CliCommon *c, const CliRunResult *run)
{
    const tcc_check_result *result = &run->check;
    bool text = c->format == CLI_FORMAT_TEXT;
    if (!run->checked) {
        if (text)
            printf("check: skipped (--check none); %lld of %lld outputs unwritten\n",
                   (long long)result->unwritten, (long long)run->outputs);
    } else {
        if (text)
            printf("max relative error: %.3g (tolerance %g; normwise %.3g; %lld outputs "
                   "compared, %lld unwritten)\n",
                   result->max_error, result->tolerance, result->normwise_error,
                   (long long)result->compared, (long long)result->unwritten);
        if (result->unwritten == 0 && !(result->max_error <= result->tolerance)) {
            cli_error("check failed: max relative error %.3g exceeds the tolerance %g",
                      result->max_error, result->tolerance);
            return false;
        }
    }
    if (result->unwritten > 0) {
        cli_error("check failed: %lld of %lld outputs not written", (long long)result->unwritten,
                  (long long)run->outputs);
        return false;
    }
    return true;
}

CliExit cli_run(const CliSession *s, const CliCommon *c, const CliRunTarget *target,
                CliRunResult *run)
{
    memset(run, 0, sizeof *run);
    run->outputs = target->outputs;
    if (c->format == CLI_FORMAT_TEXT) {
        printf("seed: %llu\n", (unsigned long long)c->seed);
        print_launch(s);
        fflush(stdout); /* out before the run, which may die */
    }
    tcc_check_options options = {
        .size = sizeof options,
        .seed = c->seed,
        .samples = cli_samples(c, target->outputs),
        .threads = c->threads, /* 0: the library takes every processor */
        .warmup = c->warmup,
        .runs = c->runs,
    };
    run->check.size = sizeof run->check;
    tcc_status status = target->check(s->device, s->kernel, target->desc, &options, &run->check);
    if (status != TCC_OK)
        return cli_library_error(s, status);
    run->ran = true;
    run->checked = !(c->check == CLI_CHECK_NONE && c->samples < 0);
    run->passed = judge(c, run);
    double ms = run->check.median_ms;
    run->tflops = ms > 0.0 ? target->flops / (ms * 1e-3) / 1e12 : 0.0;
    if (c->format == CLI_FORMAT_TEXT)
        printf("time: %.4f ms (median of %d runs), %.1f TFLOP/s\n", ms, c->runs, run->tflops);
    return run->passed ? CLI_EXIT_OK : CLI_EXIT_CHECK_FAILED;
}
