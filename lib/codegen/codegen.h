/*
 * Code generation: a lowered PrimFunc (ir.h) -> one LLVM module with one kernel function
 * -> default<O3> -> PTX. The only place that translates loop IR into LLVM IR.
 */
#ifndef TCC_CODEGEN_CODEGEN_H
#define TCC_CODEGEN_CODEGEN_H

#include "ir/ir.h"
#include "support/context.h"

/* Checks that arch can run the kernel (tensor-core shapes and types, bf16) and that it
 * fits the device limits (48 KB of static shared memory, 1024 threads per block), then
 * builds, verifies, optimizes and emits it. On success *llvm_ir (the optimized module)
 * and *ptx (NUL-terminated) are malloc'd for the caller, and *shared_bytes is the
 * static shared memory the kernel allocates. On failure the outputs are NULL / 0. */
tcc_status tci_codegen(tcc_context *ctx, const PrimFunc *kernel, tcc_arch arch, char **llvm_ir,
                       char **ptx, int64_t *shared_bytes);

/* The kernel's symbol in the module and the PTX: name with every character outside
 * [A-Za-z0-9_] replaced by '_' (malloc'd; NULL when out of memory). */
char *tci_codegen_symbol(const char *name);

#endif
