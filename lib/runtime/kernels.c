/*
 * Kernels on a device: loading a built kernel's module (its machine code where it has some,
 * else its PTX through the driver's JIT; every launch's entry point, checked against what the
 * device and the driver allow (limits.c), its shared memory opt-in, its workspaces) and timing
 * it; launch.c launches it. A kernel of several launches runs them in order on one stream,
 * each with the caller's buffers and then the workspaces.
 */
#include "runtime/internal.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading ----------------------------------------------------------------------------- */

/* Copies a JIT log into `out` on one line: newlines become "; ", trailing blanks go. */
static void flatten_log(const char *log, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = log; *p && n + 3 < size; p++) {
        if (*p == '\n' || *p == '\r') {
            while (p[1] == '\n' || p[1] == '\r')
                p++;
            if (p[1] == '\0')
                break;
            out[n++] = ';';
            out[n++] = ' ';
        } else {
            out[n++] = *p;
        }
    }
    while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t' || out[n - 1] == ';'))
        n--;
    out[n] = '\0';
}

/* A launch dimension must be a positive 32-bit value (the driver checks the real limits). */
static tcc_status launch_dims(tcc_context *ctx, const char *what, const int64_t in[3],
                              unsigned int out[3])
{
    for (int i = 0; i < 3; i++) {
        if (in[i] < 1 || in[i] > (int64_t)UINT_MAX)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "tcc_kernel_load: %s dimension %d is %lld (must be in 1..%u)", what, i,
                            (long long)in[i], UINT_MAX);
        out[i] = (unsigned int)in[i];
    }
    return TCC_OK;
}

/* Reads launch `index` of a built kernel: its name and launch shape. */
static tcc_status describe_launch(tcc_device *device, const tcc_kernel *kernel, int index,
                                  LoadedLaunch *launch)
{
    int64_t grid[3], block[3], cluster[3];
    const char *name = tcc_kernel_launch_name(kernel, index);
    if (!name || !*name)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_kernel_load: unnamed kernel");
    if (strlen(name) >= sizeof launch->name)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_load: kernel name '%.40s...' is too long", name);
    strcpy(launch->name, name);
    tcc_kernel_launch_grid(kernel, index, grid);
    tcc_kernel_launch_block(kernel, index, block);
    tcc_kernel_launch_cluster(kernel, index, cluster);
    tcc_status status = launch_dims(device->ctx, "grid", grid, launch->grid);
    if (status == TCC_OK)
        status = launch_dims(device->ctx, "block", block, launch->block);
    if (status == TCC_OK)
        status = launch_dims(device->ctx, "cluster", cluster, launch->cluster);
    launch->dynamic_shared = (unsigned int)tcc_kernel_launch_dynamic_shared_bytes(kernel, index);
    int maps = tcc_kernel_launch_tensor_map_count(kernel, index);
    if (maps < 0 || maps > TCI_MAX_LAUNCH_MAPS)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_load: kernel '%s' takes %d tensor maps (at most %d)", name,
                        maps, TCI_MAX_LAUNCH_MAPS);
    launch->ntensor_map = maps;
    for (int i = 0; i < maps; i++) {
        launch->tensor_maps[i].size = sizeof launch->tensor_maps[i];
        tcc_kernel_launch_tensor_map(kernel, index, i, &launch->tensor_maps[i]);
    }
    return status;
}

/* ptxas's messages (CUDA 12-13) for what undoes a kernel's asynchrony. */
static const char *const undone_asynchrony[] = {
    "instructions are serialized", /* wgmma.mma_async serialized: a call inside the pipeline */
    "C7517", /* a warpgroup wait injected: the accumulators were read before a wait */
    "C7508", /* setmaxnreg ignored: no register count at entry */
};

const char *tci_jit_log_refusal(const char *log, char *out, size_t size)
{
    for (size_t i = 0; log && i < sizeof undone_asynchrony / sizeof undone_asynchrony[0]; i++) {
        const char *hit = strstr(log, undone_asynchrony[i]);
        if (!hit)
            continue;
        const char *start = hit, *end = hit;
        while (start > log && start[-1] != '\n')
            start--;
        while (*end && *end != '\n')
            end++;
        snprintf(out, size, "%.*s", (int)(end - start), start);
        return out;
    }
    return NULL;
}

/* cuModuleLoadDataEx of the PTX with the JIT logs captured (verbose, so that its warnings are
 * there): a rejected module says why, and one whose asynchrony the JIT undid is refused. */
static tcc_status jit_module(tcc_device *device, const char *ptx, tcc_loaded_kernel *loaded)
{
    char info_log[8192] = "", error_log[4096] = "";
    CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                              CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                              CU_JIT_LOG_VERBOSE};
    void *values[] = {info_log, (void *)(uintptr_t)sizeof info_log, error_log,
                      (void *)(uintptr_t)sizeof error_log, (void *)(uintptr_t)1};
    CUresult result = device->cu.cuModuleLoadDataEx(
        &loaded->module, ptx, (unsigned int)(sizeof options / sizeof options[0]), options, values);
    char line[600];
    info_log[sizeof info_log - 1] = '\0';
    if (result == CUDA_SUCCESS && tci_jit_log_refusal(info_log, line, sizeof line)) {
        device->cu.cuModuleUnload(loaded->module);
        loaded->module = NULL;
        return tci_fail(device->ctx, TCC_ERROR_UNSUPPORTED,
                        "kernel '%s': the JIT undid its asynchrony, so it would run slower than "
                        "built: %s",
                        loaded->launches[loaded->main_launch].name, line);
    }
    if (result == CUDA_SUCCESS)
        return TCC_OK;
    loaded->module = NULL;
    error_log[sizeof error_log - 1] = info_log[sizeof info_log - 1] = '\0';
    char text[512], log[900], detail[300];
    tci_cuda_describe(device, result, text, sizeof text);
    /* Older drivers say INVALID_PTX with ptxas's "Unsupported .version" line. */
    if (result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || strstr(error_log, "Unsupported .version"))
        return tci_fail_ptx_version(device, ptx, loaded->launches[loaded->main_launch].name, text);
    flatten_log(*error_log ? error_log : info_log, log, sizeof log);
    snprintf(detail, sizeof detail, " for kernel '%s'", loaded->launches[loaded->main_launch].name);
    return tci_fail(device->ctx, TCC_ERROR_CUDA, "cuModuleLoadDataEx failed%s: %s: %s", detail,
                    text, *log ? log : "the JIT log is empty");
}

/* Whether the driver refused a cubin for what it was built for or by, not for being broken:
 * another arch, or a toolkit newer than the driver. The PTX then loads in its place. */
static bool machine_code_mismatch(CUresult result)
{
    return result == CUDA_ERROR_NO_BINARY_FOR_GPU || result == CUDA_ERROR_INVALID_IMAGE ||
           result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || result == CUDA_ERROR_INVALID_PTX;
}

/* The kernel's machine code where it has some (tcc_kernel_compile_machine_code: no JIT here),
 * else, or where the driver cannot take it, its PTX. */
static tcc_status load_module(tcc_device *device, const tcc_kernel *kernel,
                              tcc_loaded_kernel *loaded)
{
    size_t size = 0;
    const void *cubin = tcc_kernel_machine_code(kernel, &size);
    if (cubin) {
        CUresult result = device->cu.cuModuleLoadDataEx(&loaded->module, cubin, 0, NULL, NULL);
        if (result == CUDA_SUCCESS)
            return TCC_OK;
        loaded->module = NULL;
        if (!machine_code_mismatch(result)) {
            char detail[320];
            snprintf(detail, sizeof detail, " for the machine code of kernel '%s' (%zu bytes)",
                     loaded->launches[loaded->main_launch].name, size);
            return tci_cuda_fail(device, result, "cuModuleLoadDataEx", detail);
        }
    }
    return jit_module(device, tcc_kernel_ptx(kernel), loaded);
}

static tcc_status find_function(tcc_device *device, CUmodule module, LoadedLaunch *launch)
{
    CUresult result = device->cu.cuModuleGetFunction(&launch->function, module, launch->name);
    if (result == CUDA_SUCCESS)
        return TCC_OK;
    char detail[300];
    snprintf(detail, sizeof detail, " for kernel '%s'", launch->name);
    return tci_cuda_fail(device, result, "cuModuleGetFunction", detail);
}

/* Shared memory past the default 48 KB is there only when the kernel opts in (up to what the
 * device allows a block, which tci_check_launch has checked). */
static tcc_status allow_shared_memory(tcc_device *device, LoadedLaunch *launch)
{
    if (launch->dynamic_shared == 0)
        return TCC_OK;
    CUresult result = device->cu.cuFuncSetAttribute(launch->function,
                                                    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                    (int)launch->dynamic_shared);
    if (result == CUDA_SUCCESS)
        return TCC_OK;
    char detail[320];
    snprintf(detail, sizeof detail, " for kernel '%s' (%u bytes of dynamic shared memory)",
             launch->name, launch->dynamic_shared);
    return tci_cuda_fail(device, result, "cuFuncSetAttribute", detail);
}

/* The caller's parameters as the checks of their addresses name them (launch.c). */
static tcc_status describe_params(tcc_device *device, const tcc_kernel *kernel,
                                  tcc_loaded_kernel *loaded)
{
    int count = tcc_kernel_param_count(kernel);
    if (count < 0)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_kernel_load: %d parameters",
                        count);
    loaded->params = calloc(count > 0 ? (size_t)count : 1, sizeof *loaded->params);
    if (!loaded->params)
        return tci_fail(device->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory loading a kernel");
    loaded->nparam = count;
    for (int i = 0; i < count; i++) {
        tcc_kernel_param_info info = {.size = sizeof info};
        LoadedParam *p = &loaded->params[i];
        p->alignment = TCI_PARAM_ALIGNMENT; /* a kernel described by hand: what codegen assumes */
        if (tcc_kernel_param(kernel, i, &info)) {
            snprintf(p->name, sizeof p->name, "%s", info.name);
            p->alignment = info.alignment;
        }
    }
    return TCC_OK;
}

/* Every launch of the kernel: described, found in the module, allowed its shared memory. */
static tcc_status load_launches(tcc_device *device, const tcc_kernel *kernel,
                                tcc_loaded_kernel *loaded)
{
    int count = tcc_kernel_launch_count(kernel);
    if (count < 1 || count > TCI_MAX_LAUNCHES)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_load: %d launches (must be 1 to %d)", count, TCI_MAX_LAUNCHES);
    tcc_status status = TCC_OK;
    for (int i = 0; i < count && status == TCC_OK; i++)
        status = describe_launch(device, kernel, i, &loaded->launches[i]);
    loaded->nlaunch = count;
    bool main_ok = kernel->main_launch >= 0 && kernel->main_launch < count;
    loaded->main_launch = main_ok ? kernel->main_launch : 0;
    if (status == TCC_OK)
        status = describe_params(device, kernel, loaded);
    if (status == TCC_OK)
        status = tci_check_loadable(device, tcc_kernel_ptx(kernel), loaded);
    if (status == TCC_OK)
        status = tci_bind_context(device);
    if (status == TCC_OK)
        status = load_module(device, kernel, loaded);
    for (int i = 0; i < count && status == TCC_OK; i++) {
        status = find_function(device, loaded->module, &loaded->launches[i]);
        if (status == TCC_OK)
            status = tci_check_launch(device, &loaded->launches[i]);
        if (status == TCC_OK)
            status = allow_shared_memory(device, &loaded->launches[i]);
    }
    return status;
}

/* The kernel's scratch memory, allocated once and kept for every launch. Filled with 0xFF bytes
 * (a NaN in every float type, -1 in the integer ones), so that a kernel that reads scratch it
 * never wrote gives a wrong answer every time, not only where the allocation held leftovers
 * (a fresh process's memory reads as zeros, and zeros are right for a split-K slice left out). */
static tcc_status allocate_workspaces(tcc_device *device, const tcc_kernel *kernel,
                                      tcc_loaded_kernel *loaded)
{
    int count = tcc_kernel_workspace_count(kernel);
    if (count < 0 || count > TCI_MAX_WORKSPACES)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_load: %d workspaces (at most %d)", count, TCI_MAX_WORKSPACES);
    for (int i = 0; i < count; i++) {
        int64_t bytes = tcc_kernel_workspace_bytes(kernel, i);
        tcc_status status = tcc_device_buffer_alloc(device, (size_t)(bytes > 0 ? bytes : 1),
                                                    &loaded->workspaces[i]);
        if (status != TCC_OK)
            return status;
        loaded->nworkspace = i + 1;
        status = tcc_device_buffer_fill_bytes(loaded->workspaces[i], 0xFF);
        if (status != TCC_OK)
            return status;
    }
    return TCC_OK;
}

tcc_status tcc_kernel_load(tcc_device *device, const tcc_kernel *kernel, tcc_loaded_kernel **out)
{
    if (!device || !kernel || !out)
        return tci_fail(device ? device->ctx : NULL, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_load: device, kernel or out is NULL");
    *out = NULL;
    const char *ptx = tcc_kernel_ptx(kernel);
    if (!ptx || !*ptx)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_kernel_load: no PTX");
    tcc_loaded_kernel *loaded = calloc(1, sizeof *loaded);
    if (!loaded)
        return tci_fail(device->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory loading a kernel");
    loaded->device = device;
    tcc_status status = load_launches(device, kernel, loaded);
    if (status == TCC_OK)
        status = allocate_workspaces(device, kernel, loaded);
    if (status != TCC_OK) {
        tcc_loaded_kernel_destroy(loaded);
        return status;
    }
    *out = loaded;
    return TCC_OK;
}

void tcc_loaded_kernel_destroy(tcc_loaded_kernel *loaded)
{
    if (!loaded)
        return;
    for (int i = 0; i < loaded->nworkspace; i++)
        tcc_device_buffer_free(loaded->workspaces[i]);
    if (loaded->module && tci_bind_context(loaded->device) == TCC_OK)
        loaded->device->cu.cuModuleUnload(loaded->module);
    free(loaded->params);
    free(loaded);
}

/* ---- timing ------------------------------------------------------------------------------ */

/* `runs` pairs of events: start[i] and end[i] bracket run i. */
typedef struct EventPairs {
    CUevent *start, *end;
    int count;
} EventPairs;

static void destroy_events(tcc_device *device, EventPairs *events)
{
    for (int i = 0; i < events->count; i++) {
        if (events->start && events->start[i])
            device->cu.cuEventDestroy(events->start[i]);
        if (events->end && events->end[i])
            device->cu.cuEventDestroy(events->end[i]);
    }
    free(events->start);
    free(events->end);
}

static tcc_status create_events(tcc_device *device, int runs, EventPairs *events)
{
    events->count = runs;
    events->start = calloc((size_t)runs, sizeof *events->start);
    events->end = calloc((size_t)runs, sizeof *events->end);
    if (!events->start || !events->end)
        return tci_fail(device->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory timing a kernel");
    for (int i = 0; i < runs; i++) {
        CUDA_CHECK(device, cuEventCreate, (&events->start[i], CU_EVENT_DEFAULT));
        CUDA_CHECK(device, cuEventCreate, (&events->end[i], CU_EVENT_DEFAULT));
    }
    return TCC_OK;
}

/* Issues every timed launch back to back, then waits once: no host gap inside a bracket. */
static tcc_status timed_runs(tcc_loaded_kernel *loaded, const LaunchArgs *args,
                             const EventPairs *events, double *times)
{
    tcc_device *device = loaded->device;
    for (int i = 0; i < events->count; i++) {
        CUDA_CHECK(device, cuEventRecord, (events->start[i], NULL));
        tcc_status status = tci_launch_enqueue(loaded, args, NULL);
        if (status != TCC_OK)
            return status;
        CUDA_CHECK(device, cuEventRecord, (events->end[i], NULL));
    }
    tcc_status status = tci_launch_synchronize(loaded);
    if (status != TCC_OK)
        return status;
    for (int i = 0; i < events->count; i++) {
        float ms = 0.0f;
        CUDA_CHECK(device, cuEventSynchronize, (events->end[i]));
        CUDA_CHECK(device, cuEventElapsedTime, (&ms, events->start[i], events->end[i]));
        times[i] = ms;
    }
    return TCC_OK;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of `count` values; sorts them. */
static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    if (count % 2)
        return values[count / 2];
    return 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

static tcc_status warm_up(tcc_loaded_kernel *loaded, const LaunchArgs *args, int warmup)
{
    for (int i = 0; i < warmup; i++) {
        tcc_status status = tci_launch_enqueue(loaded, args, NULL);
        if (status != TCC_OK)
            return status;
    }
    return tci_launch_synchronize(loaded);
}

tcc_status tcc_kernel_time(tcc_loaded_kernel *loaded, int nbuffer,
                           tcc_device_buffer *const *buffers, int warmup, int runs,
                           double *median_ms)
{
    if (!loaded)
        return tci_fail(NULL, TCC_ERROR_INVALID_ARGUMENT, "tcc_kernel_time: kernel is NULL");
    tcc_device *device = loaded->device;
    if (warmup < 0 || runs < 1 || !median_ms)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_time: needs warmup >= 0, runs >= 1 and a result pointer "
                        "(got warmup %d, runs %d)",
                        warmup, runs);
    LaunchArgs args;
    tcc_status status = tci_launch_args_for_buffers(loaded, nbuffer, buffers, &args);
    if (status != TCC_OK)
        return status;
    EventPairs events = {0};
    double *times = calloc((size_t)runs, sizeof *times);
    status = times
                 ? tci_bind_context(device)
                 : tci_fail(device->ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory timing a kernel");
    if (status == TCC_OK)
        status = warm_up(loaded, &args, warmup);
    if (status == TCC_OK)
        status = create_events(device, runs, &events);
    if (status == TCC_OK)
        status = timed_runs(loaded, &args, &events, times);
    if (status == TCC_OK)
        *median_ms = median(times, runs);
    destroy_events(device, &events);
    free(times);
    tci_launch_args_free(&args);
    return status;
}
