#include "codegen/llvm.h"

#include "codegen/codegen.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <pthread.h>
#include <setjmp.h>
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

/*
 * LLVM's fatal errors ("Cannot select: intrinsic ...") call a handler and then exit the
 * process, which would take an embedder down with a build. Everything tcc knows to reach
 * one is refused before codegen (the target table); for the rest, the handler jumps back to
 * the guarded call on the same thread (run_guarded), which fails the build with LLVM's
 * reason. What LLVM held on the abandoned frames is leaked, and the context's LLVM state is
 * dropped unfreed (it may be mid-update) for a fresh one at the next build. A fatal error
 * outside a guarded call still exits, as LLVM would.
 */
typedef struct FatalGuard {
    jmp_buf *recover; /* the guarded call in progress on this thread; NULL outside one */
    char reason[256];
} FatalGuard;

static _Thread_local FatalGuard fatal_guard;

static void on_llvm_fatal_error(const char *reason)
{
    if (!fatal_guard.recover)
        return;
    snprintf(fatal_guard.reason, sizeof fatal_guard.reason, "%.*s", (int)strcspn(reason, "\n"),
             reason);
    longjmp(*fatal_guard.recover, 1);
}

/* LLVM's target registry and its fatal-error handler are process-wide; setting them up once
 * under pthread_once keeps two contexts created from two threads from racing on them. */
static pthread_once_t nvptx_once = PTHREAD_ONCE_INIT;

static void init_nvptx(void)
{
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInstallFatalErrorHandler(on_llvm_fatal_error);
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

/* One LLVM step that may end in a fatal error: its inputs, and what it returns. */
typedef struct LlvmStep {
    LLVMTargetMachineRef machine;
    LLVMModuleRef module;
    LLVMErrorRef error;         /* optimize */
    char *message;              /* emit */
    LLVMMemoryBufferRef buffer; /* emit */
    LLVMBool failed;            /* emit */
} LlvmStep;

static void run_optimize(LlvmStep *step)
{
    LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
    step->error = LLVMRunPasses(step->module, "default<O3>", step->machine, options);
    LLVMDisposePassBuilderOptions(options);
}

static void run_emit(LlvmStep *step)
{
    step->failed = LLVMTargetMachineEmitToMemoryBuffer(
        step->machine, step->module, LLVMAssemblyFile, &step->message, &step->buffer);
}

/* Runs `run(step)`; a fatal error inside it fails the build instead of exiting (see
 * FatalGuard), dropping the context's LLVM state. */
static tcc_status run_guarded(tcc_context *ctx, const char *what, void (*run)(LlvmStep *),
                              LlvmStep *step)
{
    jmp_buf recover;
    jmp_buf *outer = fatal_guard.recover;
    if (setjmp(recover)) {
        fatal_guard.recover = outer;
        ctx->llvm = NULL; /* leaked on purpose: LLVM left it mid-operation */
        return tci_fail(ctx, TCC_ERROR_LLVM, "%s: LLVM fatal error: %s", what, fatal_guard.reason);
    }
    fatal_guard.recover = &recover;
    run(step);
    fatal_guard.recover = outer;
    return TCC_OK;
}

tcc_status tci_llvm_optimize(tcc_context *ctx, LLVMModuleRef module, tcc_arch arch)
{
    LlvmStep step = {.module = module};
    tcc_status status = tci_llvm_target_machine(ctx, arch, &step.machine);
    if (status != TCC_OK || (status = run_guarded(ctx, "default<O3>", run_optimize, &step)))
        return status;
    if (step.error)
        return fail_llvm_message(ctx, "default<O3> failed", LLVMGetErrorMessage(step.error),
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
    LlvmStep step = {.module = module};
    tcc_status status = tci_llvm_target_machine(ctx, arch, &step.machine);
    if (status != TCC_OK || (status = run_guarded(ctx, "PTX emission", run_emit, &step)))
        return status;
    if (step.failed)
        return fail_llvm_message(ctx, "PTX emission failed", step.message, LLVMDisposeMessage);
    if (step.message)
        LLVMDisposeMessage(step.message);
    *ptx = copy_text(LLVMGetBufferStart(step.buffer), LLVMGetBufferSize(step.buffer));
    LLVMDisposeMemoryBuffer(step.buffer);
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
