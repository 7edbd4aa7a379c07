/*
 * What a builder thread of the measurer (tune_pipeline.c) does with one config: the template
 * instantiated at it (a persistent grid's blocks one a multiprocessor of the runners' GPU), the
 * kernel compiled to machine code where nvJitLink is there (so that the runner loads it without
 * the driver's JIT, which would otherwise run one kernel at a time in the runner), and
 * serialized for the runner. A failure is classified as AutoTVM's MeasureErrorNo: what the
 * template or tcc's validation refuses (shared memory, threads, registers after ptxas) is
 * refused, not measured. A kernel built is named by its identity (kernel_identity), so that the
 * measurer measures each distinct kernel once.
 */
#include "tune_measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tune_set_result(tcc_measure_result *r, tcc_measure_error error, const char *message)
{
    r->error = error;
    r->ncost = 0;
    snprintf(r->message, sizeof r->message, "%.*s", (int)sizeof r->message - 1, message);
}

/* FNV-1a, continued from `hash`. */
static uint64_t hash_bytes(uint64_t hash, const void *bytes, size_t size)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ p[i]) * 0x100000001b3ull;
    return hash;
}

static uint64_t hash_i64s(uint64_t hash, const int64_t *values, int count)
{
    for (int i = 0; i < count; i++)
        hash = hash_bytes(hash, &values[i], sizeof values[i]);
    return hash;
}

static uint64_t hash_string(uint64_t hash, const char *text)
{
    return text ? hash_bytes(hash, text, strlen(text) + 1) : hash_bytes(hash, "", 1);
}

static uint64_t hash_tensor_map(uint64_t hash, const tcc_tensor_map_encoding *map)
{
    int64_t fields[] = {(int64_t)map->mode, map->param, (int64_t)map->type, map->rank,
                        map->swizzle_bytes};
    hash = hash_i64s(hash, fields, (int)(sizeof fields / sizeof fields[0]));
    hash = hash_i64s(hash, map->dims, TCC_TENSOR_MAP_MAX_RANK);
    hash = hash_i64s(hash, map->strides, TCC_TENSOR_MAP_MAX_RANK);
    hash = hash_i64s(hash, map->box, TCC_TENSOR_MAP_MAX_RANK);
    for (int i = 0; i < TCC_TENSOR_MAP_MAX_RANK; i++)
        hash = hash_i64s(hash, &(int64_t){map->element_strides[i]}, 1);
    for (int i = 0; i < 3; i++) {
        hash = hash_i64s(hash, &(int64_t){map->lower_corner[i]}, 1);
        hash = hash_i64s(hash, &(int64_t){map->upper_corner[i]}, 1);
    }
    return hash;
}

/* What the GPU runs, as one number: the PTX, and each launch's name, geometry, shared memory
 * and tensor maps, and the workspaces. Configs that differ only in knobs their kernel does not
 * read (a wgmma kernel's warp tiles) have the same identity. Never 0 (the measurer's "none"). */
static uint64_t kernel_identity(const tcc_kernel *kernel)
{
    uint64_t hash = hash_string(0xcbf29ce484222325ull, tcc_kernel_ptx(kernel));
    int launches = tcc_kernel_launch_count(kernel);
    for (int l = 0; l < launches; l++) {
        int64_t geometry[11];
        tcc_kernel_launch_grid(kernel, l, geometry);
        tcc_kernel_launch_block(kernel, l, geometry + 3);
        tcc_kernel_launch_cluster(kernel, l, geometry + 6);
        geometry[9] = tcc_kernel_launch_shared_bytes(kernel, l);
        geometry[10] = tcc_kernel_launch_dynamic_shared_bytes(kernel, l);
        hash = hash_string(hash, tcc_kernel_launch_name(kernel, l));
        hash = hash_i64s(hash, geometry, 11);
        int maps = tcc_kernel_launch_tensor_map_count(kernel, l);
        for (int i = 0; i < maps; i++) {
            tcc_tensor_map_encoding map = {.size = sizeof map};
            if (tcc_kernel_launch_tensor_map(kernel, l, i, &map))
                hash = hash_tensor_map(hash, &map);
        }
    }
    for (int w = 0; w < tcc_kernel_workspace_count(kernel); w++)
        hash = hash_i64s(hash, &(int64_t){tcc_kernel_workspace_bytes(kernel, w)}, 1);
    return hash ? hash : 1;
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
                int multiprocessors, tcc_context *ctx, int64_t index, TuneBuilt *built,
                tcc_measure_result *result)
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
        /* The runners' GPU's: a persistent grid of the target's 132 blocks on an H100 PCIe's
         * 114 multiprocessors would run 18 of them in a second round. */
        options.multiprocessors = multiprocessors;
        status = tcc_config_instantiate(ctx, o->tmpl, cfg, workload, o->arch, &options, &kernel);
        error = tcc_config_rejected(cfg) ? TCC_MEASURE_INSTANTIATION_ERROR : build_error(status);
    }
    if (status == TCC_OK) {
        built->identity = kernel_identity(kernel);
        status = tcc_kernel_serialize(ctx, kernel, &built->bytes, &built->size);
    }
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
