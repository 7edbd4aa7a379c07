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

/* The ABI rule of tcc/tcc.h: a public struct that may grow starts with `size_t size`, which
 * the caller sets (its _init function does) to the sizeof it was compiled with. Every call
 * that reads or writes such a struct checks that size first: this library knows the sizes
 * from `oldest` (the struct's first release) to `current` (its sizeof here) and refuses any
 * other in one line, so a caller built against other headers gets an error instead of fields
 * read at the wrong offsets. `what` says where (the operator, "schedule", "build options",
 * the call). When a struct first grows, its checks take the older sizes too, and what the
 * library fills is copied out only as far as the caller's size reaches. */
tcc_status tci_check_struct_size(tcc_context *ctx, const char *what, const char *type, size_t given,
                                 size_t oldest, size_t current);
/* A struct's _init_size: the defaults (`defaults`, of the current size) written over the first
 * `size` bytes of `out` where `size` is one this library knows (`oldest` to `current`), else
 * only the size field, so that every call taking the struct refuses it in one line. Nothing
 * for NULL or a size too small to hold the field. */
void tci_init_struct(void *out, size_t size, const void *defaults, size_t oldest, size_t current);
/* A caller's struct `given` read into `out` (of the current size, holding the defaults): its
 * size checked as tci_check_struct_size does, then its first `size` bytes copied over the
 * defaults (a caller built against older headers keeps the defaults of what it lacks), and
 * out's size set to `current`. */
tcc_status tci_read_struct(tcc_context *ctx, const char *what, const char *type, const void *given,
                           size_t oldest, size_t current, void *out);
/* Whether a struct's size is one this library knows (calls that take no context). */
#define TCI_KNOWN_SIZE(type, pointer) ((pointer) && (pointer)->size == sizeof(type))
/* The check for a struct of this release, whose first and current sizes are the same. */
#define TCI_CHECK_SIZE(ctx, what, type, pointer)                                                   \
    tci_check_struct_size((ctx), (what), #type, (pointer)->size, sizeof(type), sizeof(type))

#endif
