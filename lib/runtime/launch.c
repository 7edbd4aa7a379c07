/*
 * Launching a loaded kernel: each launch's parameters (the caller's device addresses, then the
 * workspaces, then the launch's tensor maps encoded for those addresses), enqueued in order on
 * one stream. Two ways in:
 *   tcc_kernel_launch         tcc buffers on the legacy default stream, then a
 *                             synchronization (the checks, tcc-conv --run);
 *   tcc_kernel_launch_async   the caller's addresses and stream (PyTorch's tensors, an
 *                             engine's memory), checked first, and no synchronization; the
 *                             device's primary context is made current for the call and the
 *                             caller's current context is current again after it.
 * The driver copies a launch's arguments (the tensor maps too, passed by value) when it is
 * enqueued, so nothing on the host outlives the call.
 */
#include "runtime/internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

_Static_assert(sizeof(tcc_device_ptr) == sizeof(CUdeviceptr), "a tcc_device_ptr is a CUdeviceptr");

/* ---- arguments ----------------------------------------------------------------------------- */

void tci_launch_args_free(LaunchArgs *args)
{
    free(args->pointers);
    for (int k = 0; k < TCI_MAX_LAUNCHES; k++)
        free(args->params[k]);
    free(args->maps);
    *args = (LaunchArgs){0};
}

/* Room for `nparam` addresses of the caller's, which the caller of this fills in, followed by
 * the loaded kernel's workspaces. */
static tcc_status alloc_args(tcc_loaded_kernel *loaded, int nparam, LaunchArgs *args)
{
    *args = (LaunchArgs){0};
    size_t count = (size_t)nparam + (size_t)loaded->nworkspace;
    size_t maps = (size_t)loaded->nlaunch * TCI_MAX_LAUNCH_MAPS;
    args->pointers = calloc(count ? count : 1, sizeof *args->pointers);
    args->maps = aligned_alloc(64, maps * sizeof *args->maps);
    bool ok = args->pointers && args->maps;
    for (int k = 0; k < loaded->nlaunch && ok; k++)
        ok = (args->params[k] = calloc(count + TCI_MAX_LAUNCH_MAPS, sizeof(void *))) != NULL;
    if (!ok) {
        tci_launch_args_free(args);
        return tci_fail(loaded->device->ctx, TCC_ERROR_OUT_OF_MEMORY,
                        "out of memory launching a kernel");
    }
    for (int i = 0; i < loaded->nworkspace; i++)
        args->pointers[nparam + i] = loaded->workspaces[i]->pointer;
    return TCC_OK;
}

/* Points each launch's parameters at the addresses and encodes its tensor maps for them;
 * frees the arguments on failure. */
static tcc_status encode_args(tcc_loaded_kernel *loaded, int nparam, LaunchArgs *args)
{
    size_t count = (size_t)nparam + (size_t)loaded->nworkspace;
    tcc_status status = TCC_OK;
    for (int k = 0; k < loaded->nlaunch && status == TCC_OK; k++) {
        const LoadedLaunch *l = &loaded->launches[k];
        CUtensorMap *launch_maps = args->maps + (size_t)k * TCI_MAX_LAUNCH_MAPS;
        for (size_t i = 0; i < count; i++)
            args->params[k][i] = &args->pointers[i];
        for (int m = 0; m < l->ntensor_map; m++)
            args->params[k][count + (size_t)m] = &launch_maps[m];
        status = tci_encode_tensor_maps(loaded->device, l, args->pointers, (int)count, launch_maps);
    }
    if (status != TCC_OK)
        tci_launch_args_free(args);
    return status;
}

static tcc_status check_buffers(tcc_loaded_kernel *loaded, int nbuffer,
                                tcc_device_buffer *const *buffers)
{
    tcc_context *ctx = loaded->device->ctx;
    const char *name = loaded->launches[loaded->main_launch].name;
    if (nbuffer < 0 || (nbuffer > 0 && !buffers))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "kernel '%s': bad buffer list (%d)", name,
                        nbuffer);
    /* One buffer short would hand a workspace to the kernel in the output's place. */
    if (loaded->nworkspace > 0 && nbuffer != loaded->nparam)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "kernel '%s' takes %d buffers (its workspaces follow them), not %d", name,
                        loaded->nparam, nbuffer);
    for (int i = 0; i < nbuffer; i++) {
        if (!buffers[i] || buffers[i]->device != loaded->device)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "kernel '%s': buffer %d is NULL or belongs to another device", name, i);
    }
    return TCC_OK;
}

tcc_status tci_launch_args_for_buffers(tcc_loaded_kernel *loaded, int nbuffer,
                                       tcc_device_buffer *const *buffers, LaunchArgs *args)
{
    *args = (LaunchArgs){0};
    tcc_status status = check_buffers(loaded, nbuffer, buffers);
    if (status == TCC_OK) /* the tensor-map encoders want a current context */
        status = tci_bind_context(loaded->device);
    if (status == TCC_OK)
        status = alloc_args(loaded, nbuffer, args);
    if (status != TCC_OK)
        return status;
    for (int i = 0; i < nbuffer; i++)
        args->pointers[i] = buffers[i]->pointer;
    return encode_args(loaded, nbuffer, args);
}

/* ---- enqueuing ----------------------------------------------------------------------------- */

/* One launch of `l` on `stream`: through cuLaunchKernelEx with the cluster dimension where
 * its blocks run in clusters, else cuLaunchKernel. */
static CUresult launch_entry(const CudaDriver *cu, const LoadedLaunch *l, void **params,
                             CUstream stream)
{
    const unsigned int *g = l->grid, *b = l->block, *c = l->cluster;
    if (c[0] * c[1] * c[2] == 1)
        return cu->cuLaunchKernel(l->function, g[0], g[1], g[2], b[0], b[1], b[2],
                                  l->dynamic_shared, stream, params, NULL);
    CUlaunchAttribute cluster = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
    cluster.value.clusterDim.x = c[0];
    cluster.value.clusterDim.y = c[1];
    cluster.value.clusterDim.z = c[2];
    CUlaunchConfig config = {g[0],   g[1],     g[2], b[0], b[1], b[2], l->dynamic_shared,
                             stream, &cluster, 1};
    return cu->cuLaunchKernelEx(&config, l->function, params, NULL);
}

tcc_status tci_launch_enqueue(tcc_loaded_kernel *loaded, const LaunchArgs *args, CUstream stream)
{
    for (int i = 0; i < loaded->nlaunch; i++) {
        const LoadedLaunch *l = &loaded->launches[i];
        tcc_status status = tci_check_entries(loaded->device, l); /* checked at load too */
        if (status != TCC_OK)
            return status;
        CUresult result = launch_entry(&loaded->device->cu, l, args->params[i], stream);
        if (result != CUDA_SUCCESS) {
            const unsigned int *g = l->grid, *b = l->block, *c = l->cluster;
            bool clustered = c[0] * c[1] * c[2] > 1;
            char detail[400], cluster[64] = "";
            if (clustered)
                snprintf(cluster, sizeof cluster, ", cluster %ux%ux%u", c[0], c[1], c[2]);
            snprintf(detail, sizeof detail, " for kernel '%s' (grid %ux%ux%u, block %ux%ux%u%s)",
                     l->name, g[0], g[1], g[2], b[0], b[1], b[2], cluster);
            return tci_cuda_fail(loaded->device, result,
                                 clustered ? "cuLaunchKernelEx" : "cuLaunchKernel", detail);
        }
    }
    return TCC_OK;
}

tcc_status tci_launch_synchronize(tcc_loaded_kernel *loaded)
{
    CUresult result = loaded->device->cu.cuCtxSynchronize();
    if (result == CUDA_SUCCESS)
        return TCC_OK;
    char detail[300];
    snprintf(detail, sizeof detail, " after kernel '%s'",
             loaded->launches[loaded->main_launch].name);
    return tci_cuda_fail(loaded->device, result, "cuCtxSynchronize", detail);
}

tcc_status tcc_kernel_launch(tcc_loaded_kernel *loaded, int nbuffer,
                             tcc_device_buffer *const *buffers)
{
    if (!loaded)
        return tci_fail(NULL, TCC_ERROR_INVALID_ARGUMENT, "tcc_kernel_launch: kernel is NULL");
    LaunchArgs args;
    tcc_status status = tci_launch_args_for_buffers(loaded, nbuffer, buffers, &args);
    if (status != TCC_OK)
        return status;
    status = tci_launch_enqueue(loaded, &args, NULL);
    if (status == TCC_OK)
        status = tci_launch_synchronize(loaded);
    tci_launch_args_free(&args);
    return status;
}

/* ---- the caller's addresses and stream ------------------------------------------------------ */

#define ASYNC "tcc_kernel_launch_async"

/* A NULL or misaligned address of `what` ("parameter 2 (bias)", "workspace 0"). */
static tcc_status check_address(const tcc_loaded_kernel *loaded, const char *what,
                                CUdeviceptr address, int alignment)
{
    tcc_context *ctx = loaded->device->ctx;
    const char *kernel = loaded->launches[loaded->main_launch].name;
    if (address == 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, ASYNC ": kernel '%s': %s is NULL", kernel,
                        what);
    if (alignment > 1 && address % (CUdeviceptr)alignment != 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        ASYNC ": kernel '%s': %s at 0x%llx is not %d-byte aligned (the kernel "
                              "needs its address a multiple of %d)",
                        kernel, what, (unsigned long long)address, alignment, alignment);
    return TCC_OK;
}

static tcc_status check_addresses(const tcc_loaded_kernel *loaded, int nparam,
                                  const tcc_device_ptr *params, int nworkspace,
                                  const tcc_device_ptr *workspaces)
{
    tcc_context *ctx = loaded->device->ctx;
    const char *kernel = loaded->launches[loaded->main_launch].name;
    if (nparam != loaded->nparam || (nparam > 0 && !params))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        ASYNC ": kernel '%s' takes %d parameters (tcc_kernel_param_count), %s %d",
                        kernel, loaded->nparam, params || nparam == 0 ? "not" : "and no list of",
                        nparam);
    for (int i = 0; i < nparam; i++) {
        const LoadedParam *p = &loaded->params[i];
        char what[96];
        if (*p->name)
            snprintf(what, sizeof what, "parameter %d (%s)", i, p->name);
        else
            snprintf(what, sizeof what, "parameter %d", i);
        tcc_status status = check_address(loaded, what, params[i], p->alignment);
        if (status != TCC_OK)
            return status;
    }
    if (nworkspace == 0 && !workspaces)
        return TCC_OK; /* the loaded kernel's own */
    if (nworkspace != loaded->nworkspace || (nworkspace > 0 && !workspaces))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        ASYNC ": kernel '%s' takes %d workspaces (tcc_kernel_workspace_count), %s "
                              "%d",
                        kernel, loaded->nworkspace, workspaces ? "not" : "and no list of",
                        nworkspace);
    for (int i = 0; i < nworkspace; i++) {
        char what[32];
        snprintf(what, sizeof what, "workspace %d", i);
        tcc_status status = check_address(loaded, what, workspaces[i], TCI_PARAM_ALIGNMENT);
        if (status != TCC_OK)
            return status;
    }
    return TCC_OK;
}

/* A stream of another context (another device's, a context the caller created) would launch
 * the module where it is not loaded: the driver's error would not say why. NULL and the
 * special handles (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) are the current context's, which
 * is the device's by now. */
static tcc_status check_stream(const tcc_loaded_kernel *loaded, CUstream stream)
{
    tcc_device *device = loaded->device;
    const char *kernel = loaded->launches[loaded->main_launch].name;
    if (!stream || !device->cu.cuStreamGetCtx)
        return TCC_OK;
    CUcontext owner = NULL;
    CUresult result = device->cu.cuStreamGetCtx(stream, &owner);
    if (result != CUDA_SUCCESS) {
        char detail[320];
        snprintf(detail, sizeof detail, " for the stream given to kernel '%s'", kernel);
        return tci_cuda_fail(device, result, "cuStreamGetCtx", detail);
    }
    if (owner != device->context)
        return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        ASYNC ": kernel '%s': the stream belongs to another CUDA context than the "
                              "primary context of %s, where the kernel is loaded",
                        kernel, device->name);
    return TCC_OK;
}

/* Makes `previous` current again where the call changed it; its failure is the call's unless
 * the call failed first. */
static tcc_status restore_context(tcc_device *device, CUcontext previous, tcc_status status)
{
    if (previous == device->context)
        return status;
    CUresult result = device->cu.cuCtxSetCurrent(previous);
    if (result != CUDA_SUCCESS && status == TCC_OK)
        return tci_cuda_fail(device, result, "cuCtxSetCurrent", " restoring the caller's context");
    return status;
}

/* The arguments for the caller's addresses, and its workspaces or the loaded kernel's. */
static tcc_status callers_args(tcc_loaded_kernel *loaded, int nparam, const tcc_device_ptr *params,
                               int nworkspace, const tcc_device_ptr *workspaces, LaunchArgs *args)
{
    tcc_status status = alloc_args(loaded, nparam, args);
    if (status != TCC_OK)
        return status;
    for (int i = 0; i < nparam; i++)
        args->pointers[i] = params[i];
    for (int i = 0; i < nworkspace; i++)
        args->pointers[nparam + i] = workspaces[i];
    return encode_args(loaded, nparam, args);
}

tcc_status tcc_kernel_launch_async_with_workspaces(tcc_loaded_kernel *loaded, int nparam,
                                                   const tcc_device_ptr *params, int nworkspace,
                                                   const tcc_device_ptr *workspaces, void *stream)
{
    if (!loaded)
        return tci_fail(NULL, TCC_ERROR_INVALID_ARGUMENT, ASYNC ": kernel is NULL");
    tcc_device *device = loaded->device;
    tcc_status status = check_addresses(loaded, nparam, params, nworkspace, workspaces);
    if (status != TCC_OK)
        return status;
    CUcontext previous = NULL;
    CUresult result = device->cu.cuCtxGetCurrent(&previous);
    if (result != CUDA_SUCCESS)
        return tci_cuda_fail(device, result, "cuCtxGetCurrent", "");
    if (previous != device->context)
        status = tci_bind_context(device);
    if (status == TCC_OK)
        status = check_stream(loaded, (CUstream)stream);
    /* The tensor-map encoders want a current context too (CUDA_ERROR_INVALID_CONTEXT). */
    LaunchArgs args = {0};
    if (status == TCC_OK)
        status = callers_args(loaded, nparam, params, nworkspace, workspaces, &args);
    if (status == TCC_OK)
        status = tci_launch_enqueue(loaded, &args, (CUstream)stream);
    tci_launch_args_free(&args);
    return restore_context(device, previous, status);
}

tcc_status tcc_kernel_launch_async(tcc_loaded_kernel *loaded, int nparam,
                                   const tcc_device_ptr *params, void *stream)
{
    return tcc_kernel_launch_async_with_workspaces(loaded, nparam, params, 0, NULL, stream);
}
