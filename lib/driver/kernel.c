/* The accessors of a built kernel (struct tcc_kernel, kernel.h). */
#include "driver/kernel.h"

#include <stdlib.h>

void tcc_kernel_destroy(tcc_kernel *kernel)
{
    if (!kernel)
        return;
    for (int i = 0; i < kernel->nlaunch; i++)
        free(kernel->launches[i].name);
    free(kernel->loop_ir);
    free(kernel->llvm_ir);
    free(kernel->ptx);
    free(kernel);
}

/* Launch `index`, or NULL when there is none. */
static const KernelLaunch *launch_at(const tcc_kernel *kernel, int index)
{
    if (!kernel || index < 0 || index >= kernel->nlaunch)
        return NULL;
    return &kernel->launches[index];
}

static const KernelLaunch *main_launch(const tcc_kernel *kernel)
{
    return kernel ? launch_at(kernel, kernel->main_launch) : NULL;
}

const char *tcc_kernel_loop_ir(const tcc_kernel *kernel)
{
    return kernel ? kernel->loop_ir : NULL;
}

const char *tcc_kernel_llvm_ir(const tcc_kernel *kernel)
{
    return kernel ? kernel->llvm_ir : NULL;
}

const char *tcc_kernel_ptx(const tcc_kernel *kernel)
{
    return kernel ? kernel->ptx : NULL;
}

int tcc_kernel_launch_count(const tcc_kernel *kernel)
{
    return kernel ? kernel->nlaunch : 0;
}

const char *tcc_kernel_launch_name(const tcc_kernel *kernel, int index)
{
    const KernelLaunch *l = launch_at(kernel, index);
    return l ? l->name : NULL;
}

void tcc_kernel_launch_grid(const tcc_kernel *kernel, int index, int64_t grid[3])
{
    const KernelLaunch *l = launch_at(kernel, index);
    for (int i = 0; i < 3; i++)
        grid[i] = l ? l->grid[i] : 0;
}

void tcc_kernel_launch_block(const tcc_kernel *kernel, int index, int64_t block[3])
{
    const KernelLaunch *l = launch_at(kernel, index);
    for (int i = 0; i < 3; i++)
        block[i] = l ? l->block[i] : 0;
}

void tcc_kernel_launch_cluster(const tcc_kernel *kernel, int index, int64_t cluster[3])
{
    const KernelLaunch *l = launch_at(kernel, index);
    for (int i = 0; i < 3; i++) /* 0, as in a kernel described by hand: no cluster */
        cluster[i] = !l ? 0 : l->cluster[i] > 1 ? l->cluster[i] : 1;
}

int64_t tcc_kernel_launch_shared_bytes(const tcc_kernel *kernel, int index)
{
    const KernelLaunch *l = launch_at(kernel, index);
    return l ? l->shared_bytes : 0;
}

int64_t tcc_kernel_launch_dynamic_shared_bytes(const tcc_kernel *kernel, int index)
{
    const KernelLaunch *l = launch_at(kernel, index);
    return l ? l->dynamic_shared_bytes : 0;
}

int tcc_kernel_launch_tensor_map_count(const tcc_kernel *kernel, int index)
{
    const KernelLaunch *l = launch_at(kernel, index);
    return l ? l->ntensor_map : 0;
}

bool tcc_kernel_launch_tensor_map(const tcc_kernel *kernel, int index, int map,
                                  tcc_tensor_map_encoding *out)
{
    const KernelLaunch *l = launch_at(kernel, index);
    if (!l || !out || map < 0 || map >= l->ntensor_map)
        return false;
    *out = l->tensor_maps[map];
    return true;
}

int tcc_kernel_workspace_count(const tcc_kernel *kernel)
{
    return kernel ? kernel->nworkspace : 0;
}

int64_t tcc_kernel_workspace_bytes(const tcc_kernel *kernel, int index)
{
    if (!kernel || index < 0 || index >= kernel->nworkspace)
        return 0;
    return kernel->workspace_bytes[index];
}

/* ---- the main launch ---------------------------------------------------------------------- */

const char *tcc_kernel_name(const tcc_kernel *kernel)
{
    const KernelLaunch *l = main_launch(kernel);
    return l ? l->name : NULL;
}

void tcc_kernel_grid(const tcc_kernel *kernel, int64_t grid[3])
{
    tcc_kernel_launch_grid(kernel, kernel ? kernel->main_launch : -1, grid);
}

void tcc_kernel_block(const tcc_kernel *kernel, int64_t block[3])
{
    tcc_kernel_launch_block(kernel, kernel ? kernel->main_launch : -1, block);
}

int64_t tcc_kernel_shared_bytes(const tcc_kernel *kernel)
{
    return tcc_kernel_launch_shared_bytes(kernel, kernel ? kernel->main_launch : -1);
}

int64_t tcc_kernel_dynamic_shared_bytes(const tcc_kernel *kernel)
{
    return tcc_kernel_launch_dynamic_shared_bytes(kernel, kernel ? kernel->main_launch : -1);
}
