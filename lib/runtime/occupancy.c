/*
 * How many blocks of a persistent grid the device runs at once when they run in clusters
 * (tcc_device_persistent_blocks). A cluster stays inside one GPC, so where a GPC's
 * multiprocessors are not a multiple of the cluster some stay idle, and the driver alone
 * knows the GPCs: it counts the clusters that fit (cuOccupancyMaxActiveClusters) for a
 * function and a launch, here a probe that, like a persistent grid's blocks, takes a whole
 * multiprocessor's shared memory.
 */
#include "runtime/internal.h"

#include <stdint.h>

/* An empty kernel: its launches' dynamic shared memory is what makes a block hold a
 * multiprocessor. */
static const char PROBE_PTX[] = ".version 7.8\n"
                                ".target sm_90\n"
                                ".address_size 64\n"
                                ".visible .entry tcc_cluster_probe()\n"
                                "{\n"
                                "\tret;\n"
                                "}\n";
enum { PROBE_THREADS = 128 };

/* The clusters of `cluster` probe blocks, each with the most shared memory a block may have,
 * that run at once. */
static tcc_status count_clusters(tcc_device *device, CUfunction probe, int cluster, int *clusters)
{
    const CudaDriver *cu = &device->cu;
    int shared = device->limits.shared_per_block;
    CUresult result =
        cu->cuFuncSetAttribute(probe, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared);
    if (result != CUDA_SUCCESS)
        return tci_cuda_fail(device, result, "cuFuncSetAttribute", " (the cluster probe)");
    CUlaunchAttribute dimension = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
    dimension.value.clusterDim.x = (unsigned int)cluster;
    dimension.value.clusterDim.y = 1;
    dimension.value.clusterDim.z = 1;
    CUlaunchConfig config = {(unsigned int)(cluster * device->multiprocessors),
                             1,
                             1,
                             PROBE_THREADS,
                             1,
                             1,
                             (unsigned int)shared,
                             NULL,
                             &dimension,
                             1};
    result = cu->cuOccupancyMaxActiveClusters(clusters, probe, &config);
    if (result != CUDA_SUCCESS)
        return tci_cuda_fail(device, result, "cuOccupancyMaxActiveClusters",
                             " (clusters of the cluster probe)");
    return TCC_OK;
}

tcc_status tcc_device_persistent_blocks(tcc_device *device, int cluster, int *blocks)
{
    if (!device || !blocks)
        return tci_fail(device ? device->ctx : NULL, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_device_persistent_blocks: device or blocks is NULL");
    if (cluster < 1 || cluster > TCC_MAX_CLUSTER_BLOCKS)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_device_persistent_blocks: a cluster's blocks must be 1 to %d, not %d",
                        TCC_MAX_CLUSTER_BLOCKS, cluster);
    if (cluster == 1) {
        *blocks = device->multiprocessors;
        return TCC_OK;
    }
    if (device->arch < 90)
        return tci_fail(device->ctx, TCC_ERROR_UNSUPPORTED,
                        "clusters of blocks need compute capability 9.0; %s has %d.%d",
                        device->name, device->arch / 10, device->arch % 10);
    if (!device->cu.cuOccupancyMaxActiveClusters) {
        char version[32];
        tci_cuda_version_text(device->driver_version, version, sizeof version);
        return tci_fail(device->ctx, TCC_ERROR_UNSUPPORTED,
                        "clusters of blocks: the driver (CUDA %s) lacks "
                        "cuOccupancyMaxActiveClusters (CUDA 12.0): update the driver",
                        version);
    }
    tcc_status status = tci_bind_context(device);
    if (status != TCC_OK)
        return status;
    CUmodule module = NULL;
    CUfunction probe = NULL;
    CUresult result = device->cu.cuModuleLoadDataEx(&module, PROBE_PTX, 0, NULL, NULL);
    if (result != CUDA_SUCCESS)
        return tci_cuda_fail(device, result, "cuModuleLoadDataEx", " (the cluster probe)");
    result = device->cu.cuModuleGetFunction(&probe, module, "tcc_cluster_probe");
    int clusters = 0;
    status = result == CUDA_SUCCESS
                 ? count_clusters(device, probe, cluster, &clusters)
                 : tci_cuda_fail(device, result, "cuModuleGetFunction", " (the cluster probe)");
    device->cu.cuModuleUnload(module);
    if (status == TCC_OK && clusters < 1)
        return tci_fail(device->ctx, TCC_ERROR_UNSUPPORTED,
                        "no cluster of %d blocks, each with a multiprocessor's shared memory, fits "
                        "on %s",
                        cluster, device->name);
    /* Never more than the multiprocessors, whatever the driver counts. */
    if (status == TCC_OK)
        *blocks = clusters * cluster < device->multiprocessors ? clusters * cluster
                                                               : device->multiprocessors;
    return status;
}
