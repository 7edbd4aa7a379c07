/* The accessors of a built kernel (struct tcc_kernel, kernel.h), and the description of its
 * parameters. */
#include "driver/kernel.h"
#include "te/te.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(TCC_PARAM_MAX_RANK == TCI_MAX_DIMS, "a parameter has a tensor's rank");

static void free_params(tcc_kernel_param_info *params, int count)
{
    for (int i = 0; params && i < count; i++)
        free((char *)params[i].name); /* the kernel's own copies (describe_params) */
    free(params);
}

void tcc_kernel_destroy(tcc_kernel *kernel)
{
    if (!kernel)
        return;
    free_params(kernel->params, kernel->nparam);
    for (int i = 0; i < kernel->nlaunch; i++)
        free(kernel->launches[i].name);
    free(kernel->loop_ir);
    free(kernel->llvm_ir);
    free(kernel->ptx);
    free(kernel->machine_code);
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
    if (!l || !TCI_KNOWN_SIZE(tcc_tensor_map_encoding, out) || map < 0 || map >= l->ntensor_map)
        return false;
    *out = l->tensor_maps[map];
    out->size = sizeof *out;
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

/* ---- machine code (compiled by runtime/machine_code.c) -------------------------------------- */

const void *tcc_kernel_machine_code(const tcc_kernel *kernel, size_t *size)
{
    bool present = kernel && kernel->machine_code;
    if (size)
        *size = present ? kernel->machine_code_size : 0;
    return present ? kernel->machine_code : NULL;
}

int tcc_kernel_launch_registers(const tcc_kernel *kernel, int index)
{
    const KernelLaunch *l = launch_at(kernel, index);
    return l && kernel->machine_code ? l->registers : -1;
}

int64_t tcc_kernel_launch_spill_bytes(const tcc_kernel *kernel, int index)
{
    const KernelLaunch *l = launch_at(kernel, index);
    /* Either count unknown (-1: the log did not say) leaves the sum unknown, not -2. */
    if (!l || !kernel->machine_code || l->spill_store_bytes < 0 || l->spill_load_bytes < 0)
        return -1;
    return l->spill_store_bytes + l->spill_load_bytes;
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

/* ---- the parameters ------------------------------------------------------------------------ */

tcc_kernel_param_info tci_param_info(const tcc_tensor *tensor, const char *name, const char *layout,
                                     tcc_param_role role)
{
    tcc_kernel_param_info info = {
        .name = name, .role = role, .layout = layout, .alignment = TCI_PARAM_ALIGNMENT};
    if (!tensor)
        return info;
    info.dtype = tensor->type;
    info.rank = tensor->ndim;
    info.elements = 1;
    /* A placeholder holds at most INT32_MAX elements (tci_indexable_elements): no overflow. */
    for (int d = 0; d < tensor->ndim; d++) {
        info.shape[d] = tensor->shape[d];
        info.elements *= tensor->shape[d];
    }
    info.bytes = info.elements * (int64_t)tcc_dtype_size(tensor->type);
    return info;
}

tcc_status tci_kernel_describe_params(tcc_context *ctx, tcc_kernel *kernel, int count,
                                      const tcc_kernel_param_info *params)
{
    if (count != kernel->nparam || (count > 0 && !params))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "%d parameter descriptions for a kernel of %d parameters", count,
                        kernel->nparam);
    tcc_kernel_param_info *copy = calloc(count > 0 ? (size_t)count : 1, sizeof *copy);
    bool ok = copy != NULL;
    for (int i = 0; i < count && ok; i++) {
        copy[i] = params[i];
        copy[i].name = strdup(params[i].name ? params[i].name : "");
        ok = copy[i].name != NULL;
    }
    if (!ok) {
        free_params(copy, count);
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory describing a kernel");
    }
    free_params(kernel->params, kernel->nparam);
    kernel->params = copy;
    return TCC_OK;
}

/* How a kernel of `func` uses `tensor`: written where it is a compute or a compute stores
 * into it (tcc_compute_into); then also read where a compute reads a placeholder it writes
 * (the previous contents), not merely a compute's own values. */
static tcc_param_role tensor_role(const tcc_func *func, const tcc_tensor *tensor)
{
    bool written = tensor->is_compute, read = false;
    for (int i = 0; i < func->ntensor; i++) {
        const tcc_tensor *t = func->tensors[i];
        if (!t->is_compute || t == tensor)
            continue;
        written = written || t->store_target == tensor;
        read = read || (t->body && tci_expr_reads(t->body, tensor));
    }
    if (!written)
        return TCC_PARAM_INPUT;
    return read && !tensor->is_compute ? TCC_PARAM_INPUT_OUTPUT : TCC_PARAM_OUTPUT;
}

tcc_status tci_kernel_describe_tensors(tcc_context *ctx, tcc_kernel *kernel, tcc_func *func,
                                       int nparam, tcc_tensor *const *params)
{
    tcc_kernel_param_info *infos = calloc(nparam > 0 ? (size_t)nparam : 1, sizeof *infos);
    if (!infos)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory describing a kernel");
    for (int i = 0; i < nparam; i++)
        infos[i] =
            tci_param_info(params[i], params[i]->name, "row_major", tensor_role(func, params[i]));
    tcc_status status = tci_kernel_describe_params(ctx, kernel, nparam, infos);
    free(infos);
    return status;
}

int tcc_kernel_param_count(const tcc_kernel *kernel)
{
    return kernel ? kernel->nparam : 0;
}

bool tcc_kernel_param(const tcc_kernel *kernel, int index, tcc_kernel_param_info *out)
{
    if (!kernel || !kernel->params || !TCI_KNOWN_SIZE(tcc_kernel_param_info, out) || index < 0 ||
        index >= kernel->nparam)
        return false;
    *out = kernel->params[index];
    out->size = sizeof *out;
    return true;
}

const char *tcc_param_role_name(tcc_param_role role)
{
    switch (role) {
    case TCC_PARAM_INPUT:
        return "input";
    case TCC_PARAM_OUTPUT:
        return "output";
    case TCC_PARAM_INPUT_OUTPUT:
        return "input_output";
    }
    return "unknown";
}
