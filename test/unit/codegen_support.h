/*
 * What the code generator's tests share (llvm_test_codegen.c, llvm_test_sm90a.c): a kernel
 * generated as the pipeline does (codegen, verify, default<O3>, the LLVM IR's text and the
 * PTX), and ptxas's verdict on the PTX where a CUDA toolkit is installed. Static, so each
 * test program has its own.
 */
#ifndef TCC_TEST_CODEGEN_SUPPORT_H
#define TCC_TEST_CODEGEN_SUPPORT_H

#include "codegen/codegen.h"
#include "codegen/llvm.h"
#include "ir_support.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PTXAS "/usr/local/cuda/bin/ptxas"

/* ---- checking the output ------------------------------------------------------------------ */

typedef struct Output {
    tcc_status status;
    char *llvm_ir, *ptx;
    int64_t shared_bytes;
} Output;

/* Codegen, then the pipeline's steps after it (driver/pipeline.c): verify, default<O3>,
 * verify, the LLVM IR's text and the PTX. */
static inline Output generate(tcc_context *ctx, const PrimFunc *kernel, tcc_arch arch)
{
    Output out = {TCC_OK, NULL, NULL, 0};
    LLVMModuleRef module = NULL;
    out.status = tci_codegen_module(ctx, kernel->name, arch, &module);
    if (out.status == TCC_OK)
        out.status = tci_codegen(ctx, kernel, arch, module, &out.shared_bytes);
    if (out.status == TCC_OK)
        out.status = tci_llvm_verify(ctx, module);
    if (out.status == TCC_OK)
        out.status = tci_llvm_optimize(ctx, module, arch);
    if (out.status == TCC_OK)
        out.status = tci_llvm_verify(ctx, module);
    if (out.status == TCC_OK)
        out.status = tci_llvm_print_module(ctx, module, &out.llvm_ir);
    if (out.status == TCC_OK)
        out.status = tci_llvm_emit_ptx(ctx, module, arch, &out.ptx);
    if (module)
        LLVMDisposeModule(module);
    if (out.status != TCC_OK) {
        free(out.llvm_ir);
        free(out.ptx);
        out.llvm_ir = out.ptx = NULL;
    }
    return out;
}

static inline void output_free(Output *out)
{
    free(out->llvm_ir);
    free(out->ptx);
}

/* generate() in the test's context, which must succeed. */
static inline Output generated(const PrimFunc *kernel, tcc_arch arch)
{
    Output out = generate(ctx, kernel, arch);
    ck_assert_msg(out.status == TCC_OK, "%s", tcc_last_error(ctx));
    return out;
}

/* `text` contains "i32 <value>" not followed by another digit. */
static inline bool contains_i32(const char *text, int value)
{
    char needle[32];
    int len = snprintf(needle, sizeof needle, "i32 %d", value);
    for (const char *p = text; (p = strstr(p, needle)); p++)
        if (p[len] < '0' || p[len] > '9')
            return true;
    return false;
}

/* ptxas lists the archs it accepts in its help; CUDA 13 dropped sm_70. */
static inline bool ptxas_knows(tcc_arch arch)
{
    char command[256];
    snprintf(command, sizeof command, PTXAS " --help 2>/dev/null | grep -q \"'%s'\"",
             tcc_arch_name(arch));
    return system(command) == 0;
}

/* Assembles the PTX with ptxas, for `arch` or the oldest newer arch ptxas still knows
 * (PTX for sm_XY compiles for any sm_MN with MN >= XY). Skipped without a CUDA toolkit. */
static inline void check_ptxas(const char *ptx, tcc_arch arch)
{
    if (access(PTXAS, X_OK) != 0)
        return;
    const char *target = NULL;
    for (int i = 0; i < tcc_arch_count() && !target; i++)
        if (tcc_arch_at(i) >= arch && ptxas_knows(tcc_arch_at(i)))
            target = tcc_arch_name(tcc_arch_at(i));
    if (!target)
        return;
    char path[] = "/tmp/tcc_codegen_test_XXXXXX.ptx";
    int fd = mkstemps(path, 4);
    ck_assert_int_ge(fd, 0);
    size_t len = strlen(ptx);
    ck_assert_int_eq(write(fd, ptx, len), (ssize_t)len);
    close(fd);
    char command[512];
    snprintf(command, sizeof command, PTXAS " -arch=%s %s -o /dev/null", target, path);
    int rc = system(command);
    if (rc != 0)
        fprintf(stderr, "ptxas rejected the PTX for %s:\n%s\n", tcc_arch_name(arch), ptx);
    unlink(path);
    ck_assert_msg(rc == 0, "ptxas -arch=%s rejected the PTX emitted for %s", target,
                  tcc_arch_name(arch));
}

#endif
