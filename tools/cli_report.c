/*
 * The loop of tcc-conv and tcc-matmul once their options are parsed, and what each result
 * reports. A job (one layer, or the command line's problem) is compiled, its kernel written,
 * run and checked with --run, and reported: in text format as the tools always printed it; in
 * JSON or CSV as one record, whose keys are written here and nowhere else (README, "tcc-conv
 * as a program", shows one). Every record has every key, null where it does not apply, so
 * that a CSV's rows share one header and a reader never tests for a key.
 */
#include "cli.h"

#include <math.h>
#include <string.h>
#include <time.h>

void cli_report_init(CliReport *r, const CliTool *tool, CliFormat format)
{
    memset(r, 0, sizeof *r);
    r->tool = tool;
    r->format = format;
    cli_out_init(&r->out, format, stdout);
}

void cli_report_free(CliReport *r)
{
    cli_out_free(&r->out);
}

/* ---- the record ---------------------------------------------------------------------------- */

/* What one record says beyond the session: the job's, the outcome's. */
typedef struct Outcome {
    const CliJob *job; /* NULL: a failure before any problem */
    bool compiled;
    double compile_ms;
    const CliRunResult *run;
    CliExit code;
} Outcome;

static void write_types(CliOut *out, const CliCommon *c)
{
    cli_out_object(out, "dtype", c != NULL);
    cli_out_string(out, "input", c ? tcc_dtype_name(c->input_type) : NULL);
    cli_out_string(out, "accumulate", c ? tcc_dtype_name(c->accumulate_type) : NULL);
    cli_out_string(out, "output", c ? tcc_dtype_name(c->output_type) : NULL);
    cli_out_end(out);
}

static void write_epilogue(CliOut *out, const CliCommon *c)
{
    static const char *const prologues[] = {NULL, "set", "scale", "relu"};
    tcc_epilogue e = c ? c->epilogue : (tcc_epilogue){0};
    cli_out_object(out, "epilogue", c != NULL);
    cli_out_string(out, "prologue", (unsigned)e.prologue < 4 ? prologues[e.prologue] : "unknown");
    if (e.prologue == TCC_PROLOGUE_SET || e.prologue == TCC_PROLOGUE_SCALE)
        cli_out_double(out, "prologue_arg", e.prologue_arg);
    else
        cli_out_null(out, "prologue_arg");
    cli_out_double(out, "alpha", e.alpha);
    cli_out_bool(out, "bias", e.bias);
    cli_out_double(out, "beta", e.beta);
    cli_out_bool(out, "residual", e.residual);
    cli_out_bool(out, "relu", e.relu);
    if (e.clamp) {
        cli_out_double(out, "clamp_min", e.clamp_min);
        cli_out_double(out, "clamp_max", e.clamp_max);
    } else {
        cli_out_null(out, "clamp_min");
        cli_out_null(out, "clamp_max");
    }
    cli_out_end(out);
}

static void write_device(CliOut *out, const CliSession *s, const CliCommon *c)
{
    const tcc_device *d = s ? s->device : NULL;
    cli_out_object(out, "device", d != NULL);
    cli_out_int(out, "index", d ? c->device : 0);
    cli_out_string(out, "name", d ? tcc_device_name(d) : NULL);
    cli_out_int(out, "compute_capability", d ? tcc_device_arch(d) : 0);
    cli_out_int(out, "multiprocessors", d ? tcc_device_multiprocessors(d) : 0);
    cli_out_int(out, "driver_version", d ? tcc_device_driver_version(d) : 0);
    cli_out_end(out);
}

/* An enumerated knob, null where the library chooses. */
static void write_knob(CliOut *out, const char *key, const char *option, int value)
{
    cli_out_string(out, key, cli_knob_name(option, value));
}

/* The implicit GEMM's schedule, under the names of tcc_gemm_schedule's fields. Whole: what
 * the library chose, every field; otherwise the knobs given, null for what the library
 * completes while compiling (which the API does not return). */
static void write_gemm(CliOut *out, const CliSession *s, const CliCommon *c, bool present)
{
    tcc_gemm_schedule g = present ? s->schedule : (tcc_gemm_schedule){0};
    bool whole = present && s->schedule_whole;
    char mma[32];
    snprintf(mma, sizeof mma, "m%dn%dk%d", g.mma_m, g.mma_n, g.mma_k);
    cli_out_object(out, "gemm", present);
    cli_out_string(out, "mma", g.mma_m ? mma : NULL);
    cli_out_count(out, "mma_m", g.mma_m);
    cli_out_count(out, "mma_n", g.mma_n);
    cli_out_count(out, "mma_k", g.mma_k);
    cli_out_count(out, "block_row_warps", g.block_row_warps);
    cli_out_count(out, "block_col_warps", g.block_col_warps);
    cli_out_count(out, "warp_row_tiles", g.warp_row_tiles);
    cli_out_count(out, "warp_col_tiles", g.warp_col_tiles);
    cli_out_count(out, "num_total_passes", g.num_total_passes);
    cli_out_count(out, "num_fused_passes", g.num_fused_passes);
    if (whole || (present && c->policy_given))
        write_knob(out, "policy", "--policy", (int)g.policy);
    else
        cli_out_null(out, "policy");
    if (whole || (present && c->block_order_given))
        cli_out_bool(out, "column_major_blocks", g.column_major_blocks);
    else
        cli_out_null(out, "column_major_blocks");
    cli_out_count(out, "stages", g.stages);
    write_knob(out, "smem_layout", "--smem", (int)g.smem_layout);
    write_knob(out, "intrinsic", "--intrinsic", (int)g.intrinsic);
    cli_out_count(out, "split_k", g.split_k);
    cli_out_count(out, "wgmma_steps", g.wgmma_steps);
    write_knob(out, "copy", "--copy", (int)g.copy);
    write_knob(out, "producer", "--producer", (int)g.producer);
    write_knob(out, "store", "--store", (int)g.store);
    write_knob(out, "grid", "--grid", (int)g.grid);
    cli_out_count(out, "grid_blocks", g.grid_blocks);
    cli_out_count(out, "cluster", g.cluster);
    write_knob(out, "consumers", "--consumers", (int)g.consumers);
    cli_out_end(out);
}

static void write_schedule(CliOut *out, const CliTool *tool, const CliSession *s,
                           const CliCommon *c, bool compiled)
{
    bool tutorial = compiled && s->tutorial;
    cli_out_object(out, "schedule", compiled);
    cli_out_string(out, "kind", tutorial ? "tutorial" : "implicit_gemm");
    cli_out_bool(out, "whole", tutorial || (compiled && s->schedule_whole));
    write_gemm(out, s, c, compiled && !tutorial);
    if (tool->tutorial) {
        tcc_tutorial_conv2d_params t = tutorial ? s->tiles : (tcc_tutorial_conv2d_params){0};
        cli_out_object(out, "tutorial", tutorial);
        cli_out_int(out, "block_row_warps", t.block_row_warps);
        cli_out_int(out, "block_col_warps", t.block_col_warps);
        cli_out_int(out, "warp_row_tiles", t.warp_row_tiles);
        cli_out_int(out, "warp_col_tiles", t.warp_col_tiles);
        cli_out_int(out, "chunk", t.chunk);
        cli_out_end(out);
    }
    cli_out_end(out);
}

/* Each launch of the kernel, in order (staging copies, the product, split-K's sum). */
static void write_launches(CliOut *out, const tcc_kernel *kernel)
{
    int count = kernel ? tcc_kernel_launch_count(kernel) : 0;
    cli_out_list(out, "launches");
    for (int i = 0; i < (count ? count : 1); i++) {
        int64_t grid[3] = {0}, block[3] = {0}, cluster[3] = {0};
        bool present = i < count;
        if (present) {
            tcc_kernel_launch_grid(kernel, i, grid);
            tcc_kernel_launch_block(kernel, i, block);
            tcc_kernel_launch_cluster(kernel, i, cluster);
        }
        cli_out_item(out, i, present);
        cli_out_string(out, "name", present ? tcc_kernel_launch_name(kernel, i) : NULL);
        cli_out_dims(out, "grid", grid);
        cli_out_dims(out, "block", block);
        cli_out_dims(out, "cluster", cluster);
        cli_out_int(out, "shared_bytes", present ? tcc_kernel_launch_shared_bytes(kernel, i) : 0);
        cli_out_int(out, "dynamic_shared_bytes",
                    present ? tcc_kernel_launch_dynamic_shared_bytes(kernel, i) : 0);
        cli_out_end(out);
    }
    cli_out_end(out);
    int64_t workspace = 0;
    for (int i = 0; kernel && i < tcc_kernel_workspace_count(kernel); i++)
        workspace += tcc_kernel_workspace_bytes(kernel, i);
    if (kernel)
        cli_out_int(out, "workspace_bytes", workspace);
    else
        cli_out_null(out, "workspace_bytes");
}

static const char *check_mode(const CliCommon *c)
{
    switch (c->check) {
    case CLI_CHECK_FULL:
        return "full";
    case CLI_CHECK_SAMPLED:
        return "sampled";
    case CLI_CHECK_NONE:
        return "none";
    case CLI_CHECK_AUTO:
        break;
    }
    return "auto";
}

static void write_run(CliOut *out, const CliCommon *c, const CliRunResult *run)
{
    bool present = run && run->ran;
    CliRunResult none = {0};
    if (!present)
        run = &none;
    const tcc_check_result *r = &run->check;
    cli_out_object(out, "run", present);
    cli_out_uint(out, "seed", present ? c->seed : 0);
    cli_out_string(out, "check", present ? check_mode(c) : NULL);
    cli_out_bool(out, "checked", run->checked);
    cli_out_bool(out, "passed", run->passed);
    cli_out_int(out, "outputs", run->outputs);
    cli_out_int(out, "compared", r->compared);
    cli_out_int(out, "unwritten", r->unwritten);
    cli_out_double(out, "max_error", r->max_error);
    cli_out_double(out, "normwise_error", r->normwise_error);
    cli_out_double(out, "tolerance", r->tolerance);
    cli_out_int(out, "warmup", present ? c->warmup : 0);
    cli_out_int(out, "runs", present ? c->runs : 0);
    cli_out_double(out, "median_ms", r->median_ms);
    cli_out_double(out, "tflops", run->tflops);
    cli_out_end(out);
}

static void write_error(CliOut *out, CliExit code)
{
    tcc_status status = cli_error_status();
    cli_out_object(out, "error", code != CLI_EXIT_OK);
    cli_out_string(out, "kind", cli_exit_name(code));
    cli_out_string(out, "status", status != TCC_OK ? tcc_status_string(status) : NULL);
    cli_out_string(out, "message", cli_error_message());
    cli_out_end(out);
}

static void write_record(CliReport *r, const CliSession *s, const Outcome *o, const char *layer)
{
    CliOut *out = &r->out;
    const CliJob *job = o->job;
    const CliCommon *c = job ? job->common : NULL;
    bool opened = s && s->ctx;
    cli_out_begin(out);
    cli_out_string(out, "tool", cli_program);
    cli_out_string(out, "version", tcc_version_string());
    cli_out_string(out, "op", r->tool->op);
    cli_out_string(out, "layer", layer);
    cli_out_object(out, "shape", job != NULL);
    r->tool->write_shape(out, job ? job->target.desc : NULL);
    cli_out_end(out);
    write_types(out, c);
    write_epilogue(out, c);
    cli_out_string(out, "arch", opened && job ? tcc_arch_name(s->build.arch) : NULL);
    write_device(out, s, c);
    write_schedule(out, r->tool, s, c, o->compiled);
    write_launches(out, o->compiled ? s->kernel : NULL);
    if (o->compiled) /* to the microsecond: the clock says no more */
        cli_out_double(out, "compile_ms", round(o->compile_ms * 1e3) / 1e3);
    else
        cli_out_null(out, "compile_ms");
    if (job)
        cli_out_double(out, "flops", job->target.flops);
    else
        cli_out_null(out, "flops");
    write_run(out, c, o->run);
    cli_out_int(out, "exit_code", (int64_t)o->code);
    write_error(out, o->code);
    cli_out_finish(out);
}

/* ---- the loop ------------------------------------------------------------------------------ */

CliExit cli_report_failure(CliReport *r, CliExit code, const char *layer)
{
    if (r->format != CLI_FORMAT_TEXT) {
        Outcome o = {.code = code};
        write_record(r, NULL, &o, layer);
    }
    return code;
}

CliExit cli_usage_error(const CliTool *tool, int argc, char **argv, const char *error)
{
    cli_error("%s", error);
    CliReport r;
    cli_report_init(&r, tool, cli_format_in_argv(argc, argv));
    cli_report_failure(&r, CLI_EXIT_USAGE, NULL);
    cli_report_free(&r);
    return CLI_EXIT_USAGE;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

CliExit cli_report_job(CliReport *r, CliSession *s, const CliJob *job)
{
    const CliCommon *c = job->common;
    bool text = r->format == CLI_FORMAT_TEXT;
    cli_error_clear();
    if (text && r->announce) {
        printf("layer: %s\n", job->layer);
        fflush(stdout);
    }
    double start = now_ms();
    CliExit code = r->tool->compile(s, job->options);
    Outcome o = {.job = job, .compiled = code == CLI_EXIT_OK, .compile_ms = now_ms() - start};
    /* The kernel's text: in text format on stdout unless --run (then where --emit or -o
     * asks); in JSON and CSV, stdout is the records', so to -o only. */
    bool emit = text ? !c->run || c->emit_given : c->output_path != NULL;
    if (code == CLI_EXIT_OK && emit)
        code = cli_emit(s, c);
    CliRunResult run = {0};
    if (code == CLI_EXIT_OK && c->run)
        code = cli_run(s, c, &job->target, &run);
    o.run = &run;
    o.code = code;
    if (!text)
        write_record(r, s, &o, job->layer);
    cli_session_reset(s);
    return code;
}
