#include "codegen/llvm.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NVPTX_TRIPLE "nvptx64-nvidia-cuda"

/* One row per supported arch: the lowest PTX ISA version that has the arch and every
 * intrinsic codegen may select for it. sm_70 takes 6.1 rather than 6.0 because the
 * m32n8k16 and m8n32k16 WMMA shapes arrived in 6.1; sm_89 and sm_90 need 7.8. */
static const struct ArchInfo {
    tcc_arch arch;
    const char *cpu;
    const char *ptx;
} arch_table[] = {
    {TCC_SM_70, "sm_70", "+ptx61"}, {TCC_SM_75, "sm_75", "+ptx63"}, {TCC_SM_80, "sm_80", "+ptx70"},
    {TCC_SM_86, "sm_86", "+ptx71"}, {TCC_SM_89, "sm_89", "+ptx78"}, {TCC_SM_90, "sm_90", "+ptx78"},
};

#define NARCH ((int)(sizeof arch_table / sizeof arch_table[0]))

struct LlvmState {
    LLVMContextRef context;
    LLVMTargetMachineRef machines[NARCH]; /* indexed like arch_table */
};

static int arch_slot(tcc_arch arch)
{
    for (int i = 0; i < NARCH; i++)
        if (arch_table[i].arch == arch)
            return i;
    return -1;
}

const char *tci_llvm_cpu_name(tcc_arch arch)
{
    int slot = arch_slot(arch);
    return slot < 0 ? NULL : arch_table[slot].cpu;
}

const char *tci_llvm_ptx_feature(tcc_arch arch)
{
    int slot = arch_slot(arch);
    return slot < 0 ? NULL : arch_table[slot].ptx;
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
        state->machines[slot] = LLVMCreateTargetMachine(
            target, NVPTX_TRIPLE, arch_table[slot].cpu, arch_table[slot].ptx,
            LLVMCodeGenLevelAggressive, LLVMRelocDefault, LLVMCodeModelDefault);
        if (!state->machines[slot])
            return tci_fail(ctx, TCC_ERROR_LLVM, "cannot create the NVPTX target machine for %s",
                            arch_table[slot].cpu);
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
    for (int i = 0; i < NARCH; i++)
        if (state->machines[i])
            LLVMDisposeTargetMachine(state->machines[i]);
    if (state->context)
        LLVMContextDispose(state->context);
    free(state);
}
