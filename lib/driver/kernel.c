/* The accessors of a built kernel (struct tcc_kernel, kernel.h). */
#include "driver/kernel.h"

#include <stdlib.h>

void tcc_kernel_destroy(tcc_kernel *kernel)
{
    if (!kernel)
        return;
    free(kernel->name);
    free(kernel->loop_ir);
    free(kernel->llvm_ir);
    free(kernel->ptx);
    free(kernel);
}

const char *tcc_kernel_name(const tcc_kernel *kernel)
{
    return kernel ? kernel->name : NULL;
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

void tcc_kernel_grid(const tcc_kernel *kernel, int64_t grid[3])
{
    for (int i = 0; i < 3; i++)
        grid[i] = kernel ? kernel->grid[i] : 0;
}

void tcc_kernel_block(const tcc_kernel *kernel, int64_t block[3])
{
    for (int i = 0; i < 3; i++)
        block[i] = kernel ? kernel->block[i] : 0;
}

int64_t tcc_kernel_shared_bytes(const tcc_kernel *kernel)
{
    return kernel ? kernel->shared_bytes : 0;
}

int64_t tcc_kernel_dynamic_shared_bytes(const tcc_kernel *kernel)
{
    return kernel ? kernel->dynamic_shared_bytes : 0;
}
