#include "support/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tcc_status tcc_context_create(tcc_context **out)
{
    if (!out) /* no context to take a message */
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return TCC_ERROR_OUT_OF_MEMORY;
    *out = ctx;
    return TCC_OK;
}

void tcc_context_destroy(tcc_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->llvm && ctx->llvm_destroy)
        ctx->llvm_destroy(ctx->llvm);
    free(ctx);
}

const char *tcc_last_error(const tcc_context *ctx)
{
    return ctx ? ctx->error : "no context";
}

tcc_status tci_vfail(tcc_context *ctx, tcc_status status, const char *format, va_list args)
{
    if (ctx)
        vsnprintf(ctx->error, sizeof ctx->error, format, args);
    return status;
}

tcc_status tci_fail(tcc_context *ctx, tcc_status status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    tci_vfail(ctx, status, format, args);
    va_end(args);
    return status;
}

tcc_status tci_check_struct_size(tcc_context *ctx, const char *what, const char *type, size_t given,
                                 size_t oldest, size_t current)
{
    if (given >= oldest && given <= current)
        return TCC_OK;
    if (given == 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "%s: %s.size is 0: set it with the struct's _init function or to "
                        "sizeof(%s)",
                        what, type, type);
    return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                    "%s: %s.size is %zu, which tensorcc %s does not know (%zu..%zu): the caller "
                    "was built against other headers",
                    what, type, given, tcc_version_string(), oldest, current);
}

void tci_init_struct(void *out, size_t size, const void *defaults, size_t oldest, size_t current)
{
    if (!out || size < sizeof(size_t))
        return;
    if (size >= oldest && size <= current)
        memcpy(out, defaults, size);
    memcpy(out, &size, sizeof size);
}

tcc_status tci_read_struct(tcc_context *ctx, const char *what, const char *type, const void *given,
                           size_t oldest, size_t current, void *out)
{
    size_t size;
    memcpy(&size, given, sizeof size);
    tcc_status status = tci_check_struct_size(ctx, what, type, size, oldest, current);
    if (status != TCC_OK)
        return status;
    memcpy(out, given, size);
    memcpy(out, &current, sizeof current);
    return TCC_OK;
}

const char *tcc_dtype_name(tcc_dtype type)
{
    switch (type) {
    case TCC_VOID:
        return "void";
    case TCC_BOOL:
        return "bool";
    case TCC_INT8:
        return "int8";
    case TCC_INT32:
        return "int32";
    case TCC_FLOAT16:
        return "float16";
    case TCC_BFLOAT16:
        return "bfloat16";
    case TCC_FLOAT32:
        return "float32";
    }
    return "unknown";
}
