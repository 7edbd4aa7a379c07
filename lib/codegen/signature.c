/*
 * The kernel function: one pointer parameter per global buffer (noalias: distinct tensors
 * never overlap), then one per tensor map (by value, grid_constant), the PTX kernel calling
 * convention and its launch bounds, in the forms
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
    if (cg->moves_registers) {
        LLVMMetadataRef one_block[3] = {fn, md_string(cg, "minctasm"), md_i32(cg, 1)};
        add_annotation(cg, one_block, 3);
    }
    char text[64];
    snprintf(text, sizeof text, "%lld,%lld,%lld", (long long)block[0], (long long)block[1],
             (long long)block[2]);
    LLVMAttributeRef maxntid = LLVMCreateStringAttribute(
        cg->llctx, "nvvm.maxntid", (unsigned)strlen("nvvm.maxntid"), text, (unsigned)strlen(text));
    LLVMAddAttributeAtIndex(cg->function, LLVMAttributeFunctionIndex, maxntid);
}

/* The tensor maps after the buffers: 128-byte CUtensorMaps passed by value, 64-byte aligned,
 * and grid_constant, so that the copies address the parameter itself (cvta.param), as the
 * copy engine requires, instead of a copy in local memory. */
static bool add_tensor_map_params(Codegen *cg)
{
    const PrimFunc *k = cg->func;
    if (!k->ntensor_map)
        return true;
    if (k->ntensor_map > TCI_CG_MAX_TENSOR_MAPS)
        return tci_cg_fail(cg, TCC_ERROR_SCHEDULE, "kernel %s takes %d tensor maps; at most %d",
                           k->name, k->ntensor_map, TCI_CG_MAX_TENSOR_MAPS);
    LLVMTypeRef map_type = LLVMArrayType2(LLVMInt8TypeInContext(cg->llctx), 128);
    unsigned byval = LLVMGetEnumAttributeKindForName("byval", strlen("byval"));
    unsigned align = LLVMGetEnumAttributeKindForName("align", strlen("align"));
    LLVMMetadataRef indices[TCI_CG_MAX_TENSOR_MAPS];
    int n = 0;
    for (int i = 0; i < k->ntensor_map; i++, n++) {
        unsigned at = (unsigned)(k->nparam + i) + 1; /* attribute index: parameters from 1 */
        LLVMAddAttributeAtIndex(cg->function, at,
                                LLVMCreateTypeAttribute(cg->llctx, byval, map_type));
        LLVMAddAttributeAtIndex(cg->function, at, LLVMCreateEnumAttribute(cg->llctx, align, 64));
        char pname[32];
        snprintf(pname, sizeof pname, "tensor_map%d", i);
        LLVMSetValueName2(LLVMGetParam(cg->function, at - 1), pname, strlen(pname));
        indices[n] = md_i32(cg, at);
    }
    LLVMMetadataRef grid_constant[3] = {LLVMValueAsMetadata(cg->function),
                                        md_string(cg, "grid_constant"),
                                        LLVMMDNodeInContext2(cg->llctx, indices, (size_t)n)};
    add_annotation(cg, grid_constant, 3);
    return true;
}

bool tci_cg_add_function(Codegen *cg)
{
    const PrimFunc *k = cg->func;
    LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->llctx, ADDRSPACE_GLOBAL);
    int count = k->nparam + k->ntensor_map;
    LLVMTypeRef *params = calloc(count > 0 ? (size_t)count : 1, sizeof *params);
    if (!params)
        return tci_cg_fail(cg, TCC_ERROR_OUT_OF_MEMORY, "out of memory in codegen");
    for (int i = 0; i < k->nparam; i++)
        params[i] = ptr;
    for (int i = k->nparam; i < count; i++)
        params[i] = LLVMPointerTypeInContext(cg->llctx, ADDRSPACE_GENERIC);
    LLVMTypeRef type =
        LLVMFunctionType(LLVMVoidTypeInContext(cg->llctx), params, (unsigned)count, 0);
    free(params);
    char name[256];
    tci_cg_symbol_name(k->name, name, sizeof name);
    cg->function = LLVMAddFunction(cg->module, name, type);
    mark_kernel(cg);
    if (!add_tensor_map_params(cg))
        return false;
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
