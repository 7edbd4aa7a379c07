/*
 * What a builder thread of the measurer (tune_measure.c) does with one config: the template
 * instantiated at it, the kernel compiled to machine code where nvJitLink is there (so that the
 * runner loads it without the driver's JIT, which would otherwise run one kernel at a time in
 * the runner), and serialized for the runner. A failure is classified as AutoTVM's
 * MeasureErrorNo: what the template or tcc's validation refuses (shared memory, threads,
 * registers after ptxas) is refused, not measured.
 */
#include "tune_measure.h"

#include <stdio.h>
#include <stdlib.h>

void tune_set_result(tcc_measure_result *r, tcc_measure_error error, const char *message)
{
    r->error = error;
    r->ncost = 0;
    snprintf(r->message, sizeof r->message, "%.*s", (int)sizeof r->message - 1, message);
}

static tcc_measure_error build_error(tcc_status status)
{
    switch (status) {
    case TCC_ERROR_SCHEDULE:
    case TCC_ERROR_INVALID_ARGUMENT:
    case TCC_ERROR_UNSUPPORTED:
        return TCC_MEASURE_COMPILE_HOST;
    case TCC_ERROR_LLVM:
        return TCC_MEASURE_COMPILE_DEVICE;
    default:
        return TCC_MEASURE_UNKNOWN_ERROR;
    }
}

bool tune_build(const TuneMeasureOptions *o, const tcc_workload *workload, bool machine_code,
                tcc_context *ctx, int64_t index, TuneBuilt *built, tcc_measure_result *result)
{
    double start = tune_monotonic_s();
    tcc_config *cfg = NULL;
    tcc_kernel *kernel = NULL;
    *built = (TuneBuilt){0};
    tcc_status status = tcc_config_create(ctx, o->space, index, &cfg);
    tcc_measure_error error = TCC_MEASURE_INSTANTIATION_ERROR;
    if (status == TCC_OK) {
        tcc_build_options options;
        tcc_build_options_init(&options);
        options.arch = o->arch;
        options.machine_code = machine_code;
        status = tcc_config_instantiate(ctx, o->tmpl, cfg, workload, o->arch, &options, &kernel);
        error = tcc_config_rejected(cfg) ? TCC_MEASURE_INSTANTIATION_ERROR : build_error(status);
    }
    if (status == TCC_OK)
        status = tcc_kernel_serialize(ctx, kernel, &built->bytes, &built->size);
    built->build_s = tune_monotonic_s() - start;
    *result = (tcc_measure_result){.all_cost = built->build_s, .timestamp = tune_wall_s()};
    if (status != TCC_OK) {
        tune_set_result(result, error, tcc_last_error(ctx));
    } else if (built->build_s > o->build_timeout) {
        /* A build cannot be stopped inside LLVM: one over its time is dropped when it ends. */
        char message[128];
        snprintf(message, sizeof message, "build took %.1f s (limit %.1f s)", built->build_s,
                 o->build_timeout);
        tune_set_result(result, TCC_MEASURE_BUILD_TIMEOUT, message);
        status = TCC_ERROR_INVALID_ARGUMENT;
    }
    if (status != TCC_OK) {
        free(built->bytes);
        built->bytes = NULL;
    }
    tcc_kernel_destroy(kernel);
    tcc_config_destroy(cfg);
    return status == TCC_OK;
}

bool tune_machine_code_choose(TuneMachineCode wanted, bool *use, char *description, size_t size,
                              char *error, size_t error_size)
{
    *use = false;
    if (wanted == TUNE_MACHINE_CODE_DRIVER) {
        snprintf(description, size, "PTX, compiled by the driver's JIT in the runners");
        return true;
    }
    tcc_context *ctx = NULL;
    int major = 0, minor = 0;
    tcc_status status = tcc_context_create(&ctx);
    if (status == TCC_OK)
        status = tcc_machine_code_available(ctx, &major, &minor);
    bool ok = *use = status == TCC_OK;
    if (ok)
        snprintf(description, size, "machine code from nvJitLink %d.%d in the build threads", major,
                 minor);
    else if (wanted == TUNE_MACHINE_CODE_AUTO)
        snprintf(description, size, "PTX, compiled by the driver's JIT in the runners (%s)",
                 ctx ? tcc_last_error(ctx) : "out of memory");
    else
        snprintf(error, error_size, "--machine-code nvjitlink: %s",
                 ctx ? tcc_last_error(ctx) : "out of memory");
    tcc_context_destroy(ctx);
    return ok || wanted == TUNE_MACHINE_CODE_AUTO;
}
