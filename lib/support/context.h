/*
 * The context: per-user state (the last error, the LLVM state). No global mutable
 * state exists anywhere in tcc; everything lives in a context or a function.
 */
#ifndef TCI_SUPPORT_CONTEXT_H
#define TCI_SUPPORT_CONTEXT_H

#include "tcc/base.h"

#include <stdarg.h>

typedef struct LlvmState LlvmState; /* target.c */

struct tcc_context {
    char error[1024];
    LlvmState *llvm; /* created on the first build */
    /* Set with llvm by the code generator, so the core library links without LLVM. */
    void (*llvm_destroy)(LlvmState *state);
};

/* Records a one-line message and returns status, so callers can write
 * `return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "...", ...);`. */
tcc_status tci_fail(tcc_context *ctx, tcc_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
tcc_status tci_vfail(tcc_context *ctx, tcc_status status, const char *format, va_list args);

#endif
