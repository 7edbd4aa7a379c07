/*
 * What a device and its driver allow a kernel, checked when it loads, before anything is
 * asked of the driver that it would refuse with a bare CUDA_ERROR_INVALID_VALUE at the first
 * launch: the PTX's arch, the driver's optional entry points (clusters, tensor maps), and each
 * launch's block, grid, threads for the function's registers, shared memory and clusters
 * against the device's attributes. Each refusal is one line naming the limit (in words and
 * as the driver's attribute) and the value, so that a caller can tell what to change.
 *
 * The driver's PTX version is explained here too: a module newer than the driver is refused
 * by cuModuleLoadDataEx, and the error names both versions.
 */
#include "runtime/internal.h"
#include "target/target.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- the device's limits ----------------------------------------------------------------- */

tcc_status tci_query_limits(tcc_device *device)
{
    QueriedLimits *l = &device->limits;
    const struct {
        int *value;
        int attribute;
    } reads[] = {
        {&l->threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
        {&l->block[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X},
        {&l->block[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + 1},
        {&l->block[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + 2},
        {&l->grid[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X},
        {&l->grid[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + 1},
        {&l->grid[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + 2},
        {&l->registers_per_block, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
        {&l->shared_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
    };
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++)
        CUDA_CHECK(device, cuDeviceGetAttribute,
                   (reads[i].value, reads[i].attribute, device->device));
    return TCC_OK;
}

/* ---- the PTX's directives ---------------------------------------------------------------- */

/* What follows `name` (".version", ".target") where it starts a line of the PTX, or NULL.
 * Both come before the first entry, so the scan stops early. */
static const char *directive(const char *ptx, const char *name)
{
    size_t n = strlen(name);
    for (const char *line = ptx; line && *line;) {
        while (*line == ' ' || *line == '\t')
            line++;
        if (strncmp(line, name, n) == 0 && (line[n] == ' ' || line[n] == '\t'))
            return line + n;
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return NULL;
}

/* The PTX ISA version of ".version 8.0" as 80; 0 when there is none. */
static int ptx_version(const char *ptx)
{
    const char *at = directive(ptx, ".version");
    int major = 0, minor = 0;
    if (!at || sscanf(at, " %d.%d", &major, &minor) != 2 || major < 1 || minor < 0 || minor > 9)
        return 0;
    return major * 10 + minor;
}

/* The newest PTX ISA a driver loads, from its CUDA version (the PTX ISA's release notes): 0
 * for a driver newer than this table, whose limit is not known here. */
static int driver_ptx_isa(int driver_version)
{
    static const int table[][2] = {
        {10000, 63}, {10010, 64}, {10020, 65}, {11000, 70}, {11010, 71}, {11020, 72},
        {11030, 73}, {11040, 74}, {11050, 75}, {11060, 76}, {11070, 77}, {11080, 78},
        {12000, 80}, {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84}, {12050, 85},
        {12060, 85}, {12070, 86}, {12080, 87}, {12090, 88}, {13000, 90},
    };
    size_t count = sizeof table / sizeof table[0];
    if (driver_version < table[0][0] || driver_version > table[count - 1][0])
        return 0;
    int isa = 0;
    for (size_t i = 0; i < count && table[i][0] <= driver_version; i++)
        isa = table[i][1];
    return isa;
}

tcc_status tci_fail_ptx_version(tcc_device *device, const char *ptx, const char *kernel,
                                const char *driver_text)
{
    char version[32];
    tci_cuda_version_text(device->driver_version, version, sizeof version);
    int isa = driver_ptx_isa(device->driver_version), needed = ptx_version(ptx);
    if (needed && isa)
        return tci_fail(device->ctx, TCC_ERROR_CUDA,
                        "kernel '%s' is PTX ISA %d.%d, and the NVIDIA driver (CUDA %s) loads PTX "
                        "ISA up to %d.%d: update the driver (cuModuleLoadDataEx failed: %s)",
                        kernel, needed / 10, needed % 10, version, isa / 10, isa % 10, driver_text);
    if (needed)
        return tci_fail(device->ctx, TCC_ERROR_CUDA,
                        "kernel '%s' is PTX ISA %d.%d, newer than the NVIDIA driver (CUDA %s) "
                        "loads: update the driver (cuModuleLoadDataEx failed: %s)",
                        kernel, needed / 10, needed % 10, version, driver_text);
    return tci_fail(device->ctx, TCC_ERROR_CUDA,
                    "kernel '%s': the NVIDIA driver (CUDA %s) cannot load its PTX version "
                    "(cuModuleLoadDataEx failed: %s)",
                    kernel, version, driver_text);
}

/* ---- before the module loads ------------------------------------------------------------- */

bool tci_ptx_target(const char *ptx, int *target, char *suffix)
{
    const char *at = directive(ptx, ".target");
    int length = 0;
    *target = 0;
    *suffix = '\0';
    if (!at || sscanf(at, " sm_%d%n", target, &length) != 1 || *target <= 0)
        return false;
    *suffix = at[length] == 'a' || at[length] == 'f' ? at[length] : '\0';
    return true;
}

/* Refuses PTX whose ".target sm_NN[a|f]" the device cannot run: an arch-specific target
 * ("a": sm_90a) runs on its own compute capability only, a family target ("f") on its major
 * version from its minor on, any other on its own and newer ones (the driver JIT-compiles
 * it). The driver would say CUDA_ERROR_NO_BINARY_FOR_GPU or INVALID_PTX without naming
 * either arch. */
static tcc_status check_target(tcc_device *device, const char *ptx, const char *kernel)
{
    int target = 0;
    char suffix = '\0';
    if (!tci_ptx_target(ptx, &target, &suffix))
        return TCC_OK; /* no target to check: the driver decides */
    int arch = device->arch;
    bool runs = suffix == 'a'   ? arch == target
                : suffix == 'f' ? arch / 10 == target / 10 && arch >= target
                                : arch >= target;
    if (runs)
        return TCC_OK;
    const char *rule = suffix == 'a'   ? "only"
                       : suffix == 'f' ? "and later minor versions"
                                       : "or newer";
    tcc_arch own = tcc_arch_for_device(arch);
    return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                    "kernel '%s' is built for sm_%d%.1s, which runs on compute capability %d.%d "
                    "%s, and %s is %d.%d: build it for %s",
                    kernel, target, suffix ? &suffix : "", target / 10, target % 10, rule,
                    device->name, arch / 10, arch % 10,
                    tcc_arch_name(own) ? tcc_arch_name(own) : "this device");
}

/* A driver entry point that `kernel` needs and the driver lacks (it came after it). */
static tcc_status fail_missing_entry(tcc_device *device, const char *kernel, const char *entry,
                                     const char *use)
{
    char version[32];
    tci_cuda_version_text(device->driver_version, version, sizeof version);
    return tci_fail(device->ctx, TCC_ERROR_CUDA,
                    "kernel '%s' needs the driver entry point %s (for %s), which the NVIDIA "
                    "driver (CUDA %s) lacks: it needs a driver for CUDA 12.0 or newer",
                    kernel, entry, use, version);
}

tcc_status tci_check_entries(tcc_device *device, const LoadedLaunch *launch)
{
    const unsigned int *c = launch->cluster;
    if (c[0] * c[1] * c[2] > 1 && !device->cu.cuLaunchKernelEx)
        return fail_missing_entry(device, launch->name, "cuLaunchKernelEx",
                                  "its thread-block clusters");
    for (int i = 0; i < launch->ntensor_map; i++) {
        bool im2col = launch->tensor_maps[i].mode == TCC_TENSOR_MAP_IM2COL;
        if (im2col && !device->cu.cuTensorMapEncodeIm2col)
            return fail_missing_entry(device, launch->name, "cuTensorMapEncodeIm2col",
                                      "its im2col tensor maps");
        if (!im2col && !device->cu.cuTensorMapEncodeTiled)
            return fail_missing_entry(device, launch->name, "cuTensorMapEncodeTiled",
                                      "its tensor maps");
    }
    return TCC_OK;
}

tcc_status tci_check_loadable(tcc_device *device, const char *ptx, const tcc_loaded_kernel *loaded)
{
    tcc_status status = check_target(device, ptx, loaded->launches[loaded->main_launch].name);
    for (int i = 0; i < loaded->nlaunch && status == TCC_OK; i++)
        status = tci_check_entries(device, &loaded->launches[i]);
    return status;
}

/* ---- each launch, once its function is found ---------------------------------------------- */

static tcc_status function_attribute(tcc_device *device, const LoadedLaunch *launch, int attribute,
                                     int *value)
{
    CUresult result = device->cu.cuFuncGetAttribute(value, attribute, launch->function);
    if (result == CUDA_SUCCESS)
        return TCC_OK;
    char detail[320];
    snprintf(detail, sizeof detail, " for kernel '%s' (attribute %d)", launch->name, attribute);
    return tci_cuda_fail(device, result, "cuFuncGetAttribute", detail);
}

/* Threads: the device's bound, then the function's (its .maxntid, or what its registers
 * leave room for). */
static tcc_status check_threads(tcc_device *device, const LoadedLaunch *launch)
{
    const QueriedLimits *lim = &device->limits;
    const unsigned int *b = launch->block;
    const char *name = launch->name;
    for (int d = 0; d < 3; d++) {
        if (b[d] > (unsigned int)lim->block[d])
            return tci_fail(device->ctx, TCC_ERROR_SCHEDULE,
                            "kernel '%s' cannot launch on %s: its block is %ux%ux%u threads, and "
                            "the device allows %d along %c (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_%c)",
                            name, device->name, b[0], b[1], b[2], lim->block[d], "xyz"[d],
                            "XYZ"[d]);
    }
    uint64_t threads = (uint64_t)b[0] * b[1] * b[2];
    if (threads > (uint64_t)lim->threads_per_block)
        return tci_fail(device->ctx, TCC_ERROR_SCHEDULE,
                        "kernel '%s' cannot launch on %s: its block of %llu threads exceeds the "
                        "device's %d (CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)",
                        name, device->name, (unsigned long long)threads, lim->threads_per_block);
    int most = 0, registers = 0;
    tcc_status status =
        function_attribute(device, launch, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &most);
    if (status == TCC_OK)
        status = function_attribute(device, launch, CU_FUNC_ATTRIBUTE_NUM_REGS, &registers);
    if (status != TCC_OK || threads <= (uint64_t)most)
        return status;
    /* Counted as the hardware allocates them, so that the explanation matches the driver's. */
    uint64_t needed = (uint64_t)tci_target_block_registers((int64_t)threads, registers);
    if (needed > (uint64_t)lim->registers_per_block)
        return tci_fail(device->ctx, TCC_ERROR_SCHEDULE,
                        "kernel '%s' cannot launch on %s: its block of %llu threads at %d "
                        "registers a thread needs %llu registers, and the device has %d a block "
                        "(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK; at most %d threads of this "
                        "kernel fit)",
                        name, device->name, (unsigned long long)threads, registers,
                        (unsigned long long)needed, lim->registers_per_block, most);
    return tci_fail(device->ctx, TCC_ERROR_SCHEDULE,
                    "kernel '%s' cannot launch on %s: its block of %llu threads exceeds the %d "
                    "the compiled kernel takes (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, from its "
                    ".maxntid; %d registers a thread)",
                    name, device->name, (unsigned long long)threads, most, registers);
}

static tcc_status check_grid(tcc_device *device, const LoadedLaunch *launch)
{
    const unsigned int *g = launch->grid, *c = launch->cluster;
    for (int d = 0; d < 3; d++) {
        if (g[d] > (unsigned int)device->limits.grid[d])
            return tci_fail(device->ctx, TCC_ERROR_SCHEDULE,
                            "kernel '%s' cannot launch on %s: its grid is %ux%ux%u blocks, and "
                            "the device allows %d along %c (CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_%c)",
                            launch->name, device->name, g[0], g[1], g[2], device->limits.grid[d],
                            "xyz"[d], "XYZ"[d]);
    }
    uint64_t cluster = (uint64_t)c[0] * c[1] * c[2];
    if (cluster <= 1)
        return TCC_OK;
    if (device->arch < 90)
        return tci_fail(device->ctx, TCC_ERROR_SCHEDULE,
                        "kernel '%s' cannot launch on %s: it runs in clusters of %ux%ux%u "
                        "blocks, which need compute capability 9.0 or newer, and the device is "
                        "%d.%d",
                        launch->name, device->name, c[0], c[1], c[2], device->arch / 10,
                        device->arch % 10);
    if (cluster > TCC_MAX_CLUSTER_BLOCKS)
        return tci_fail(device->ctx, TCC_ERROR_SCHEDULE,
                        "kernel '%s' cannot launch on %s: its clusters of %llu blocks exceed the "
                        "portable cluster size, %d",
                        launch->name, device->name, (unsigned long long)cluster,
                        TCC_MAX_CLUSTER_BLOCKS);
    for (int d = 0; d < 3; d++) {
        if (g[d] % c[d])
            return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "kernel '%s': its grid of %ux%ux%u blocks is not a whole number of "
                            "its %ux%ux%u clusters along %c",
                            launch->name, g[0], g[1], g[2], c[0], c[1], c[2], "xyz"[d]);
    }
    return TCC_OK;
}

/* Static shared memory (the function's) and dynamic (the launch's) against what a block may
 * opt into. */
static tcc_status check_shared(tcc_device *device, const LoadedLaunch *launch)
{
    int fixed = 0;
    tcc_status status =
        function_attribute(device, launch, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &fixed);
    if (status != TCC_OK)
        return status;
    long long total = (long long)fixed + launch->dynamic_shared;
    if (total > device->limits.shared_per_block)
        return tci_fail(device->ctx, TCC_ERROR_SCHEDULE,
                        "kernel '%s' cannot launch on %s: it needs %lld bytes of shared memory a "
                        "block (%d static, %u dynamic), and the device allows %d "
                        "(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)",
                        launch->name, device->name, total, fixed, launch->dynamic_shared,
                        device->limits.shared_per_block);
    return TCC_OK;
}

tcc_status tci_check_launch(tcc_device *device, const LoadedLaunch *launch)
{
    tcc_status status = check_threads(device, launch);
    if (status == TCC_OK)
        status = check_grid(device, launch);
    if (status == TCC_OK)
        status = check_shared(device, launch);
    return status;
}
