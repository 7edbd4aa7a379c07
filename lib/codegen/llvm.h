/*
 * The LLVM side of a context: one LLVM context and one NVPTX target machine per arch,
 * created on first use, and the three steps every module goes through: verify,
 * optimize (default<O3>) and emit PTX. Only lib/codegen/ includes LLVM headers.
 */
#ifndef TCI_CODEGEN_LLVM_H
#define TCI_CODEGEN_LLVM_H

#include "support/context.h"
#include "target/target.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

/* The LLVM context of ctx (created on the first call). Modules made in it must be
 * disposed before the tcc context is destroyed. */
tcc_status tci_llvm_context(tcc_context *ctx, LLVMContextRef *out);

/* The target machine for arch (created on the first call for that arch). */
tcc_status tci_llvm_target_machine(tcc_context *ctx, tcc_arch arch, LLVMTargetMachineRef *out);

/* Sets the triple and the data layout of arch's target machine on module. */
tcc_status tci_llvm_prepare_module(tcc_context *ctx, LLVMModuleRef module, tcc_arch arch);

/* LLVMVerifyModule without aborting: a broken module becomes TCC_ERROR_LLVM. */
tcc_status tci_llvm_verify(tcc_context *ctx, LLVMModuleRef module);

/* Runs "default<O3>" with the target machine of arch (so NVPTX's own passes run). */
tcc_status tci_llvm_optimize(tcc_context *ctx, LLVMModuleRef module, tcc_arch arch);

/* Emits PTX text: *ptx is malloc'd and NUL-terminated (caller frees). */
tcc_status tci_llvm_emit_ptx(tcc_context *ctx, LLVMModuleRef module, tcc_arch arch, char **ptx);

/* The module's textual LLVM IR, malloc'd (caller frees). */
tcc_status tci_llvm_print_module(tcc_context *ctx, LLVMModuleRef module, char **text);

/* The ID of the intrinsic `name` (its base name, for overloaded ones); TCC_ERROR_LLVM "LLVM
 * has no intrinsic NAME" when LLVM does not know it. */
tcc_status tci_llvm_intrinsic_id(tcc_context *ctx, const char *name, unsigned *id);

void tci_llvm_state_destroy(LlvmState *state);

#endif
