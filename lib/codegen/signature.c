/*
 * The kernel function: one pointer parameter per global buffer (noalias: distinct tensors
 * never overlap), the PTX kernel calling convention and its launch bounds, in the forms
 * LLVM 19 reads (nvvm.annotations) and those LLVM 21+ reads ("nvvm.maxntid").
 */
#include "codegen/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies name into out with everything but [A-Za-z0-9_] replaced, so the PTX symbol
 * equals the LLVM name (the backend would mangle '.' into "_$_"). */
void tci_cg_symbol_name(const char *name, char *out, size_t size)
{
    size_t n = 0;
    if (!name || !*name)
        name = "kernel";
    if (name[0] >= '0' && name[0] <= '9')
        out[n++] = '_';
    for (; *name && n + 1 < size; name++) {
        char c = *name;
        bool ok =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
}

char *tci_codegen_symbol(const char *name)
{
    char buffer[256];
    tci_cg_symbol_name(name, buffer, sizeof buffer);
    return strdup(buffer);
}

static void add_annotation(Codegen *cg, LLVMMetadataRef *ops, unsigned count)
{
    LLVMMetadataRef node = LLVMMDNodeInContext2(cg->llctx, ops, count);
    LLVMAddNamedMetadataOperand(cg->module, "nvvm.annotations",
                                LLVMMetadataAsValue(cg->llctx, node));
}

static LLVMMetadataRef md_string(Codegen *cg, const char *text)
{
    return LLVMMDStringInContext2(cg->llctx, text, strlen(text));
}

static LLVMMetadataRef md_i32(Codegen *cg, int64_t value)
{
    return LLVMValueAsMetadata(tci_cg_i32(cg, value));
}

/* Kernel-ness and launch bounds, in both the forms LLVM 19 reads (nvvm.annotations) and
 * the ones LLVM 21+ reads (calling convention, "nvvm.maxntid"). */
static void mark_kernel(Codegen *cg)
{
    const int64_t *block = cg->func->launch + 3;
    LLVMSetFunctionCallConv(cg->function, LLVMPTXKernelCallConv);
    LLVMMetadataRef fn = LLVMValueAsMetadata(cg->function);
    LLVMMetadataRef kernel[3] = {fn, md_string(cg, "kernel"), md_i32(cg, 1)};
    add_annotation(cg, kernel, 3);
    LLVMMetadataRef bounds[7] = {fn,
                                 md_string(cg, "maxntidx"),
                                 md_i32(cg, block[0]),
                                 md_string(cg, "maxntidy"),
                                 md_i32(cg, block[1]),
                                 md_string(cg, "maxntidz"),
                                 md_i32(cg, block[2])};
    add_annotation(cg, bounds, 7);
    char text[64];
    snprintf(text, sizeof text, "%lld,%lld,%lld", (long long)block[0], (long long)block[1],
             (long long)block[2]);
    LLVMAttributeRef maxntid = LLVMCreateStringAttribute(
        cg->llctx, "nvvm.maxntid", (unsigned)strlen("nvvm.maxntid"), text, (unsigned)strlen(text));
    LLVMAddAttributeAtIndex(cg->function, LLVMAttributeFunctionIndex, maxntid);
}

bool tci_cg_add_function(Codegen *cg)
{
    const PrimFunc *k = cg->func;
    LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->llctx, ADDRSPACE_GLOBAL);
    LLVMTypeRef *params = calloc(k->nparam > 0 ? (size_t)k->nparam : 1, sizeof *params);
    if (!params)
        return tci_cg_fail(cg, TCC_ERROR_OUT_OF_MEMORY, "out of memory in codegen");
    for (int i = 0; i < k->nparam; i++)
        params[i] = ptr;
    LLVMTypeRef type =
        LLVMFunctionType(LLVMVoidTypeInContext(cg->llctx), params, (unsigned)k->nparam, 0);
    free(params);
    char name[256];
    tci_cg_symbol_name(k->name, name, sizeof name);
    cg->function = LLVMAddFunction(cg->module, name, type);
    mark_kernel(cg);
    unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", strlen("noalias"));
    for (int i = 0; i < k->nparam; i++) {
        const Buffer *buffer = k->params[i];
        if (buffer->scope != TCC_SCOPE_GLOBAL)
            return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                               "codegen: parameter '%s' is not global", buffer->name);
        LLVMValueRef param = LLVMGetParam(cg->function, (unsigned)i);
        /* Distinct tensors never overlap: lets LLVM use the read-only cache for inputs. */
        LLVMAddAttributeAtIndex(cg->function, (unsigned)i + 1,
                                LLVMCreateEnumAttribute(cg->llctx, noalias, 0));
        char pname[256];
        tci_cg_value_name(buffer, pname, sizeof pname);
        LLVMSetValueName2(param, pname, strlen(pname));
        BufferBinding binding = {.buffer = buffer, .base = param, .addrspace = ADDRSPACE_GLOBAL};
        binding.elem = tci_cg_scalar_type(cg, buffer->type);
        if (!binding.elem || !tci_cg_bind_buffer(cg, &binding))
            return false;
    }
    return true;
}
