/*
 * Code generation: a lowered PrimFunc (ir/ir.h) -> a kernel function of an LLVM module.
 * The only place that translates loop IR into LLVM IR; the driver (driver/pipeline.c)
 * then verifies, optimizes and emits it (codegen/llvm.h).
 */
#ifndef TCI_CODEGEN_CODEGEN_H
#define TCI_CODEGEN_CODEGEN_H

#include "ir/ir.h"
#include "support/context.h"

#include <llvm-c/Core.h>

/* A new, empty module in the context's LLVM context, the caller's to dispose (before the
 * tcc context is destroyed); the first tci_codegen into it sets it up for `arch`. */
tcc_status tci_codegen_module(tcc_context *ctx, const char *name, tcc_arch arch,
                              LLVMModuleRef *module);

/* Checks that arch can run the function (tensor-core shapes and types, bfloat16, the
 * device's launch and static shared memory limits), then translates it into a kernel of
 * `module` (several kernels may share one module, and its dynamic shared memory array).
 * *shared_bytes is the static shared memory the function allocates. */
tcc_status tci_codegen(tcc_context *ctx, const PrimFunc *func, tcc_arch arch, LLVMModuleRef module,
                       int64_t *shared_bytes);

/* The kernel's symbol in the module and the PTX: name with every character outside
 * [A-Za-z0-9_] replaced by '_' (malloc'd; NULL when out of memory). */
char *tci_codegen_symbol(const char *name);

/* Looks up every intrinsic the generator can emit (tensor-core operations of every row of
 * the target table, special registers, barriers): a misspelled name would otherwise become
 * a call to an undefined .extern .func. Runs when a context first creates its LLVM state. */
tcc_status tci_codegen_check_intrinsics(tcc_context *ctx);

#endif
