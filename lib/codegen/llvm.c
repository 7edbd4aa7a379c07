#include "codegen/llvm.h"

#include "codegen/codegen.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVPTX_TRIPLE "nvptx64-nvidia-cuda"

/* Target machines are made per arch, on first use, in the order of the target table. */
enum { MAX_ARCHS = 16 };

struct LlvmState {
    LLVMContextRef context;
    LLVMTargetMachineRef machines[MAX_ARCHS]; /* indexed like the target table's archs */
};

static int arch_slot(tcc_arch arch)
{
    for (int i = 0; i < tci_target_arch_count() && i < MAX_ARCHS; i++)
        if (tci_target_arch_at(i)->arch == arch)
            return i;
    return -1;
}

/* LLVM's target registry is process-wide; registering once under pthread_once keeps two
 * contexts created from two threads from racing on it. */
static pthread_once_t nvptx_once = PTHREAD_ONCE_INIT;

static void init_nvptx(void)
{
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
}

static tcc_status get_state(tcc_context *ctx, LlvmState **out)
{
    if (!ctx->llvm) {
        LlvmState *state = calloc(1, sizeof *state);
        if (!state)
            return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory creating the LLVM state");
        pthread_once(&nvptx_once, init_nvptx);
        /* Start-up: an intrinsic name this LLVM lacks is found here, not in some kernel. */
        tcc_status status = tci_codegen_check_intrinsics(ctx);
        if (status != TCC_OK) {
            free(state);
            return status;
        }
        state->context = LLVMContextCreate();
        ctx->llvm = state;
        /* The core library frees the state through this pointer, so it links without
         * LLVM. */
        ctx->llvm_destroy = tci_llvm_state_destroy;
    }
    *out = ctx->llvm;
    return TCC_OK;
}

tcc_status tci_llvm_context(tcc_context *ctx, LLVMContextRef *out)
{
    LlvmState *state = NULL;
    tcc_status status = get_state(ctx, &state);
    if (status != TCC_OK)
        return status;
    *out = state->context;
    return TCC_OK;
}

/* Copies the first line of an LLVM message into the context's error, so errors stay on
 * one line; then frees the message. */
static tcc_status fail_llvm_message(tcc_context *ctx, const char *what, char *message,
                                    void (*dispose)(char *))
{
    const char *text = message ? message : "unknown error";
    size_t len = strcspn(text, "\n");
    tcc_status status = tci_fail(ctx, TCC_ERROR_LLVM, "%s: %.*s", what, (int)len, text);
    if (message)
        dispose(message);
    return status;
}

tcc_status tci_llvm_target_machine(tcc_context *ctx, tcc_arch arch, LLVMTargetMachineRef *out)
{
    int slot = arch_slot(arch);
    if (slot < 0)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED, "no NVPTX target for arch %d", (int)arch);
    LlvmState *state = NULL;
    tcc_status status = get_state(ctx, &state);
    if (status != TCC_OK)
        return status;
    if (!state->machines[slot]) {
        LLVMTargetRef target = NULL;
        char *message = NULL;
        if (LLVMGetTargetFromTriple(NVPTX_TRIPLE, &target, &message))
            return fail_llvm_message(ctx, "cannot find the NVPTX target", message,
                                     LLVMDisposeMessage);
        if (message)
            LLVMDisposeMessage(message);
        const TargetArch *row = tci_target_arch_at(slot);
        char features[16]; /* the PTX ISA as LLVM names it: "+ptx70" */
        snprintf(features, sizeof features, "+ptx%d", row->ptx_isa);
        state->machines[slot] = LLVMCreateTargetMachine(target, NVPTX_TRIPLE, row->name, features,
                                                        LLVMCodeGenLevelAggressive,
                                                        LLVMRelocDefault, LLVMCodeModelDefault);
        if (!state->machines[slot])
            return tci_fail(ctx, TCC_ERROR_LLVM, "cannot create the NVPTX target machine for %s",
                            row->name);
    }
    *out = state->machines[slot];
    return TCC_OK;
}

tcc_status tci_llvm_prepare_module(tcc_context *ctx, LLVMModuleRef module, tcc_arch arch)
{
    LLVMTargetMachineRef machine = NULL;
    tcc_status status = tci_llvm_target_machine(ctx, arch, &machine);
    if (status != TCC_OK)
        return status;
    LLVMSetTarget(module, NVPTX_TRIPLE);
    LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(machine);
    LLVMSetModuleDataLayout(module, layout);
    LLVMDisposeTargetData(layout);
    return TCC_OK;
}

tcc_status tci_llvm_verify(tcc_context *ctx, LLVMModuleRef module)
{
    char *message = NULL;
    if (LLVMVerifyModule(module, LLVMReturnStatusAction, &message))
        return fail_llvm_message(ctx, "LLVM rejected the generated module", message,
                                 LLVMDisposeMessage);
    if (message)
        LLVMDisposeMessage(message);
    return TCC_OK;
}

tcc_status tci_llvm_optimize(tcc_context *ctx, LLVMModuleRef module, tcc_arch arch)
{
    LLVMTargetMachineRef machine = NULL;
    tcc_status status = tci_llvm_target_machine(ctx, arch, &machine);
    if (status != TCC_OK)
        return status;
    LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
    LLVMErrorRef error = LLVMRunPasses(module, "default<O3>", machine, options);
    LLVMDisposePassBuilderOptions(options);
    if (error)
        return fail_llvm_message(ctx, "default<O3> failed", LLVMGetErrorMessage(error),
                                 LLVMDisposeErrorMessage);
    return TCC_OK;
}

/* A malloc'd NUL-terminated copy of `len` bytes. */
static char *copy_text(const char *data, size_t len)
{
    char *text = malloc(len + 1);
    if (!text)
        return NULL;
    memcpy(text, data, len);
    text[len] = '\0';
    return text;
}

tcc_status tci_llvm_emit_ptx(tcc_context *ctx, LLVMModuleRef module, tcc_arch arch, char **ptx)
{
    *ptx = NULL;
    LLVMTargetMachineRef machine = NULL;
    tcc_status status = tci_llvm_target_machine(ctx, arch, &machine);
    if (status != TCC_OK)
        return status;
    char *message = NULL;
    LLVMMemoryBufferRef buffer = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(machine, module, LLVMAssemblyFile, &message, &buffer))
        return fail_llvm_message(ctx, "PTX emission failed", message, LLVMDisposeMessage);
    if (message)
        LLVMDisposeMessage(message);
    *ptx = copy_text(LLVMGetBufferStart(buffer), LLVMGetBufferSize(buffer));
    LLVMDisposeMemoryBuffer(buffer);
    if (!*ptx)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory copying the PTX");
    return TCC_OK;
}

tcc_status tci_llvm_print_module(tcc_context *ctx, LLVMModuleRef module, char **text)
{
    char *printed = LLVMPrintModuleToString(module);
    *text = printed ? copy_text(printed, strlen(printed)) : NULL;
    if (printed)
        LLVMDisposeMessage(printed);
    if (!*text)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory printing the LLVM IR");
    return TCC_OK;
}

void tci_llvm_state_destroy(LlvmState *state)
{
    if (!state)
        return;
    for (int i = 0; i < MAX_ARCHS; i++)
        if (state->machines[i])
            LLVMDisposeTargetMachine(state->machines[i]);
    if (state->context)
        LLVMContextDispose(state->context);
    free(state);
}

tcc_status tci_llvm_intrinsic_id(tcc_context *ctx, const char *name, unsigned *id)
{
    *id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!*id)
        return tci_fail(ctx, TCC_ERROR_LLVM, "LLVM has no intrinsic %s", name);
    return TCC_OK;
}
