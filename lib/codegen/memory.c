/*
 * Memory: allocations in shared memory (addrspace(3) globals, 128-byte aligned), in local
 * memory and in fragments (tensor_core.c), and loads and stores of global and shared
 * buffers. A contiguous RAMP index is one vector access, aligned as far as the index is
 * provably a multiple; any other vector index is a gather or scatter of scalars.
 */
#include "codegen/internal.h"

#include <stdio.h>
#include <string.h>

enum {
    SHARED_ALIGN = 128,
    /* plan_shared starts a swizzled tile at a whole pattern of its swizzle, at most 8 lines of
     * 128 bytes (tci_swizzle_atom_bytes): offsets from a base aligned to the largest. */
    DYNAMIC_SHARED_ALIGN = 8 * TCI_SWIZZLE_BLOCK_BYTES,
};

/* A memory (not fragment) buffer, for loads, stores and WMMA loads/stores. */
const BufferBinding *tci_cg_lookup_memory(Codegen *cg, const Buffer *buffer)
{
    const BufferBinding *binding = tci_cg_lookup_buffer(cg, buffer);
    if (binding && binding->fragment) {
        tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                    "codegen: fragment '%s' is accessed as memory; only WMMA statements may use it",
                    buffer->name);
        return NULL;
    }
    return binding;
}

LLVMValueRef tci_cg_element_ptr(Codegen *cg, const BufferBinding *binding, LLVMValueRef index)
{
    return LLVMBuildInBoundsGEP2(cg->builder, binding->elem, binding->base, &index, 1, "");
}

/* Alignment of a contiguous vector access starting at element `base`: what the index
 * provably is a multiple of, times the element size, at most 16 (buffers are allocated
 * 16-byte aligned; global parameters are assumed to be). */
static unsigned vector_align(Codegen *cg, const Buffer *buffer, Expr *base)
{
    int64_t bytes = (int64_t)tcc_dtype_size(buffer->type);
    int64_t align = bytes * tci_expr_known_divisor(cg->func->arena, base);
    if (align > 16)
        align = 16;
    return (unsigned)(align < bytes ? bytes : align);
}

/* A contiguous RAMP index (stride 1): the access is one vector load or store. */
static bool is_contiguous(const Expr *index)
{
    return index->kind == EXPR_RAMP && index->ramp.stride == 1 && index->lanes > 1;
}

static bool check_flat(Codegen *cg, const Buffer *buffer, int nindex)
{
    if (nindex == 1)
        return true;
    return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                       "codegen: access to '%s' has %d indices; flattening leaves one",
                       buffer->name, nindex);
}

LLVMValueRef tci_cg_gen_load(Codegen *cg, const Expr *e)
{
    const BufferBinding *found = tci_cg_lookup_buffer(cg, e->load.buffer);
    if (found && found->fragment)
        return tci_cg_load_accumulator(cg, found, e);
    const BufferBinding *binding = tci_cg_lookup_memory(cg, e->load.buffer);
    if (!binding || !check_flat(cg, e->load.buffer, e->load.nindex))
        return NULL;
    if (e->type != e->load.buffer->type) {
        tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: a %s load from %s '%s'",
                    tcc_dtype_name(e->type), tcc_dtype_name(e->load.buffer->type),
                    e->load.buffer->name);
        return NULL;
    }
    const Expr *index = e->load.index[0];
    LLVMTypeRef elem = binding->elem;
    unsigned elem_align = (unsigned)(int64_t)tcc_dtype_size(e->load.buffer->type);
    if (is_contiguous(index)) {
        LLVMValueRef base = tci_cg_gen_expr(cg, index->ramp.base);
        if (!base)
            return NULL;
        LLVMTypeRef vector = LLVMVectorType(elem, (unsigned)index->lanes);
        LLVMValueRef load =
            LLVMBuildLoad2(cg->builder, vector, tci_cg_element_ptr(cg, binding, base), "");
        LLVMSetAlignment(load, vector_align(cg, e->load.buffer, index->ramp.base));
        return load;
    }
    LLVMValueRef offsets = tci_cg_gen_expr(cg, index);
    if (!offsets)
        return NULL;
    if (tci_cg_value_lanes(offsets) == 1) {
        LLVMValueRef load =
            LLVMBuildLoad2(cg->builder, elem, tci_cg_element_ptr(cg, binding, offsets), "");
        LLVMSetAlignment(load, elem_align);
        return load;
    }
    /* A gather (strided RAMP or any vector index): one scalar load per lane. */
    int lanes = tci_cg_value_lanes(offsets);
    LLVMValueRef result = LLVMGetPoison(LLVMVectorType(elem, (unsigned)lanes));
    for (int i = 0; i < lanes; i++) {
        LLVMValueRef lane = tci_cg_i32(cg, i);
        LLVMValueRef offset = LLVMBuildExtractElement(cg->builder, offsets, lane, "");
        LLVMValueRef load =
            LLVMBuildLoad2(cg->builder, elem, tci_cg_element_ptr(cg, binding, offset), "");
        LLVMSetAlignment(load, elem_align);
        result = LLVMBuildInsertElement(cg->builder, result, load, lane, "");
    }
    return result;
}

static void store_aligned(Codegen *cg, LLVMValueRef value, LLVMValueRef ptr, unsigned align)
{
    LLVMValueRef store = LLVMBuildStore(cg->builder, value, ptr);
    LLVMSetAlignment(store, align);
}

bool tci_cg_gen_store(Codegen *cg, const Stmt *s)
{
    const Buffer *buffer = s->store.buffer;
    const BufferBinding *binding = tci_cg_lookup_memory(cg, buffer);
    if (!binding || !check_flat(cg, buffer, s->store.nindex))
        return false;
    if (s->store.value->type != buffer->type)
        return tci_cg_fail(
            cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: a %s value is stored into %s '%s'",
            tcc_dtype_name(s->store.value->type), tcc_dtype_name(buffer->type), buffer->name);
    const Expr *index = s->store.index[0];
    LLVMValueRef value = tci_cg_gen_expr(cg, s->store.value);
    if (!value)
        return false;
    unsigned elem_align = (unsigned)(int64_t)tcc_dtype_size(buffer->type);
    if (is_contiguous(index)) {
        LLVMValueRef base = tci_cg_gen_expr(cg, index->ramp.base);
        if (!base)
            return false;
        store_aligned(cg, tci_cg_broadcast(cg, value, index->lanes),
                      tci_cg_element_ptr(cg, binding, base),
                      vector_align(cg, buffer, index->ramp.base));
        return true;
    }
    LLVMValueRef offsets = tci_cg_gen_expr(cg, index);
    if (!offsets)
        return false;
    int lanes = tci_cg_value_lanes(offsets);
    if (lanes == 1) {
        if (tci_cg_value_lanes(value) != 1)
            return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                               "codegen: a vector is stored at a scalar index of '%s'",
                               buffer->name);
        store_aligned(cg, value, tci_cg_element_ptr(cg, binding, offsets), elem_align);
        return true;
    }
    /* A scatter: one scalar store per lane. */
    value = tci_cg_broadcast(cg, value, lanes);
    for (int i = 0; i < lanes; i++) {
        LLVMValueRef lane = tci_cg_i32(cg, i);
        LLVMValueRef offset = LLVMBuildExtractElement(cg->builder, offsets, lane, "");
        store_aligned(cg, LLVMBuildExtractElement(cg->builder, value, lane, ""),
                      tci_cg_element_ptr(cg, binding, offset), elem_align);
    }
    return true;
}

/* LLVM accepts any name, but plain ones keep the IR and PTX readable. */
void tci_cg_value_name(const Buffer *buffer, char *out, size_t size)
{
    tci_cg_symbol_name(buffer->name, out, size);
}

LLVMValueRef tci_cg_entry_alloca(Codegen *cg, LLVMTypeRef type, const char *name)
{
    LLVMValueRef slot = LLVMBuildAlloca(cg->entry_builder, type, name);
    LLVMSetAlignment(slot, 16);
    return slot;
}

/* A buffer plan_shared placed: `offset` bytes into the kernel's dynamic shared memory, one
 * `extern .shared` array (its size is given at launch), aligned to DYNAMIC_SHARED_ALIGN: offsets
 * are multiples of 128 bytes, and of a swizzled tile's pattern (tci_swizzle_atom_bytes). */
static LLVMValueRef dynamic_shared_at(Codegen *cg, int64_t offset)
{
    LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->llctx);
    if (!cg->dynamic_shared) /* another kernel of the module may have declared it */
        cg->dynamic_shared = LLVMGetNamedGlobal(cg->module, "dynamic_shared");
    if (!cg->dynamic_shared) {
        cg->dynamic_shared = LLVMAddGlobalInAddressSpace(cg->module, LLVMArrayType2(i8, 0),
                                                         "dynamic_shared", ADDRSPACE_SHARED);
        LLVMSetLinkage(cg->dynamic_shared, LLVMExternalLinkage);
        LLVMSetAlignment(cg->dynamic_shared, DYNAMIC_SHARED_ALIGN);
    }
    LLVMValueRef index = tci_cg_i32(cg, offset);
    return LLVMBuildInBoundsGEP2(cg->entry_builder, i8, cg->dynamic_shared, &index, 1, "");
}

bool tci_cg_gen_allocate(Codegen *cg, const Stmt *s)
{
    const Buffer *buffer = s->alloc.buffer;
    BufferBinding binding = {.buffer = buffer};
    char name[256];
    tci_cg_value_name(buffer, name, sizeof name);
    if (buffer->elements <= 0)
        return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: buffer '%s' has %lld elements",
                           buffer->name, (long long)buffer->elements);
    switch (buffer->scope) {
    case TCC_SCOPE_SHARED:
    case TCC_SCOPE_LOCAL: {
        binding.elem = tci_cg_scalar_type(cg, buffer->type);
        if (!binding.elem)
            return false;
        LLVMTypeRef array = LLVMArrayType2(binding.elem, (uint64_t)buffer->elements);
        if (buffer->scope == TCC_SCOPE_LOCAL) {
            binding.base = tci_cg_entry_alloca(cg, array, name);
            binding.addrspace = ADDRSPACE_GENERIC;
            break;
        }
        binding.addrspace = ADDRSPACE_SHARED;
        if (buffer->shared_offset >= 0) {
            binding.base = dynamic_shared_at(cg, buffer->shared_offset);
            break;
        }
        binding.base = LLVMAddGlobalInAddressSpace(cg->module, array, name, ADDRSPACE_SHARED);
        LLVMSetLinkage(binding.base, LLVMInternalLinkage);
        LLVMSetInitializer(binding.base, LLVMGetUndef(array));
        /* A WMMA tile must start on a multiple of its fragment's size (32 bytes for
         * f16/f32 fragments); 128 also keeps every row of a 16-wide tile aligned. */
        LLVMSetAlignment(binding.base, SHARED_ALIGN);
        break;
    }
    case TCC_SCOPE_WMMA_MATRIX_A:
    case TCC_SCOPE_WMMA_MATRIX_B:
    case TCC_SCOPE_WMMA_ACCUMULATOR:
        if (!tci_cg_alloc_fragments(cg, buffer, &binding))
            return false;
        if (!binding.base)
            return tci_cg_gen_stmt(cg, s->alloc.body);
        break;
    case TCC_SCOPE_GLOBAL:
    default:
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "cannot allocate global buffer '%s' in a kernel", buffer->name);
    }
    int mark = cg->nbuffer;
    bool ok = tci_cg_bind_buffer(cg, &binding) && tci_cg_gen_stmt(cg, s->alloc.body);
    cg->nbuffer = mark;
    return ok;
}

/* ---- cp.async ------------------------------------------------------------------------ */

/* 16-byte copies bypass L1 (.cg, the only form of that size); smaller ones cache (.ca).
 * The `.s` forms take the bytes to read: 0 reads nothing and fills with zeros. */
static void copy_async_name(int bytes, bool zero_fill, char *out, size_t size)
{
    snprintf(out, size, "llvm.nvvm.cp.async.%s.shared.global.%d%s", bytes == 16 ? "cg" : "ca",
             bytes, zero_fill ? ".s" : "");
}

void tci_cg_async_copy_intrinsic_names(void (*each)(const char *name, void *user), void *user)
{
    static const int sizes[] = {4, 8, 16};
    char name[64];
    for (int i = 0; i < 3; i++)
        for (int zero_fill = 0; zero_fill < 2; zero_fill++) {
            copy_async_name(sizes[i], zero_fill, name, sizeof name);
            each(name, user);
        }
    each(INTRINSIC_ASYNC_COMMIT, user);
    each(INTRINSIC_ASYNC_WAIT, user);
}

bool tci_cg_gen_copy_async(Codegen *cg, const Stmt *s)
{
    const BufferBinding *dst = tci_cg_lookup_memory(cg, s->copy.dst);
    const BufferBinding *src = dst ? tci_cg_lookup_memory(cg, s->copy.src) : NULL;
    if (!src)
        return false;
    if (dst->addrspace != ADDRSPACE_SHARED || src->addrspace != ADDRSPACE_GLOBAL)
        return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                           "codegen: cp.async copies global '%s' into shared '%s'",
                           s->copy.src->name, s->copy.dst->name);
    LLVMValueRef dst_index = tci_cg_gen_expr(cg, s->copy.dst_index);
    LLVMValueRef src_index = dst_index ? tci_cg_gen_expr(cg, s->copy.src_index) : NULL;
    LLVMValueRef pred =
        src_index && s->copy.predicate ? tci_cg_gen_expr(cg, s->copy.predicate) : NULL;
    if (!src_index || (s->copy.predicate && !pred))
        return false;
    LLVMValueRef args[3] = {tci_cg_element_ptr(cg, dst, dst_index),
                            tci_cg_element_ptr(cg, src, src_index), NULL};
    if (pred) {
        /* Nothing is read when the predicate is false, but the address stays one that
         * exists: the first element of the source. */
        args[1] = LLVMBuildSelect(cg->builder, pred, args[1], src->base, "");
        args[2] = LLVMBuildSelect(cg->builder, pred, tci_cg_i32(cg, s->copy.bytes),
                                  tci_cg_i32(cg, 0), "");
    }
    char name[64];
    copy_async_name(s->copy.bytes, pred != NULL, name, sizeof name);
    return tci_cg_call_intrinsic(cg, cg->builder, name, NULL, 0, args, pred ? 3 : 2) != NULL;
}

LLVMValueRef tci_cg_shared_address(Codegen *cg, const Buffer *b, Expr *index)
{
    const BufferBinding *memory = tci_cg_lookup_memory(cg, b);
    LLVMValueRef offset = memory ? tci_cg_gen_expr(cg, index) : NULL;
    if (!offset)
        return NULL;
    if (memory->addrspace != ADDRSPACE_SHARED) {
        tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED, "'%s' must be in shared memory here", b->name);
        return NULL;
    }
    LLVMValueRef ptr = tci_cg_element_ptr(cg, memory, offset);
    return LLVMBuildPtrToInt(cg->builder, ptr, LLVMInt64TypeInContext(cg->llctx), "");
}

LLVMValueRef tci_cg_call_asm(Codegen *cg, LLVMTypeRef result, LLVMTypeRef *params,
                             LLVMValueRef *args, int nargs, const char *text,
                             const char *constraints)
{
    LLVMTypeRef type = LLVMFunctionType(result, params, (unsigned)nargs, false);
    LLVMValueRef fn = LLVMGetInlineAsm(type, text, strlen(text), constraints, strlen(constraints),
                                       true, false, LLVMInlineAsmDialectATT, false);
    LLVMValueRef call = LLVMBuildCall2(cg->builder, type, fn, args, (unsigned)nargs, "");
    /* wgmma, fences, mbarrier waits, elect: warp- or warpgroup-wide (tci_cg_mark_convergent). */
    tci_cg_mark_convergent(cg, call);
    return call;
}
