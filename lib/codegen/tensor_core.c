/*
 * Tensor-core (WMMA) statements: their legality against the target table, the registers of
 * their fragments, and the llvm.nvvm.wmma.* calls.
 *
 * A fragment buffer holds whole fragments; each fragment is an array of registers in an
 * entry-block alloca (SROA turns them into registers once indices are constant). The
 * pre-pass learns each fragment's shape and load layout from the statements using it, so
 * that an mma names the layouts its operands were loaded with.
 */
#include "codegen/internal.h"

#include <stdio.h>
#include <string.h>

#define MAX_FRAGMENT_REGS 8

/* ---- legality and fragment uses (the pre-pass) ----------------------------------------- */

static FragUse *find_frag(Codegen *cg, const Buffer *buffer)
{
    for (int i = 0; i < cg->nfrag; i++)
        if (cg->frags[i].buffer == buffer)
            return &cg->frags[i];
    return NULL;
}

static const char *shape_name(const WmmaStmt *w, char *out, size_t size)
{
    return tci_target_shape_name(w->m, w->n, w->k, out, size);
}

/* Records that a WMMA statement of w's shape uses `buffer` as a fragment of `scope`,
 * loaded with `col_major` when `sets_layout`. */
static bool note_frag(Codegen *cg, const WmmaStmt *w, const Buffer *buffer, tcc_scope scope,
                      bool sets_layout, bool col_major)
{
    char shape[32];
    if (!buffer || buffer->scope != scope)
        return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                           "codegen: WMMA %s operand '%s' is not a %s fragment",
                           shape_name(w, shape, sizeof shape), buffer ? buffer->name : "(null)",
                           tci_scope_name(scope));
    FragUse *use = find_frag(cg, buffer);
    if (!use) {
        if (!tci_cg_reserve(cg, (void **)&cg->frags, &cg->frag_cap, cg->nfrag, sizeof *cg->frags))
            return false;
        use = &cg->frags[cg->nfrag++];
        *use = (FragUse){buffer, w->family, w->m, w->n, w->k, false, false};
    }
    if (use->family != w->family)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED, "fragment '%s' is used by both %s and %s",
                           buffer->name, tci_target_family_name(use->family),
                           tci_target_family_name(w->family));
    if (use->m != w->m || use->n != w->n || use->k != w->k)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "fragment '%s' is used with two WMMA shapes (m%dn%dk%d and %s)",
                           buffer->name, use->m, use->n, use->k,
                           shape_name(w, shape, sizeof shape));
    if (sets_layout) {
        if (use->layout_known && use->col_major != col_major)
            return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                               "fragment '%s' is loaded both row-major and column-major",
                               buffer->name);
        use->layout_known = true;
        use->col_major = col_major;
    }
    return true;
}

/* `operands` names what needs min_arch ("float16 inputs", "a float32 accumulator"); the
 * message names the first arch tcc targets that has it. */
static bool check_arch(Codegen *cg, const WmmaStmt *w, const char *operands, int min_arch)
{
    char shape[32];
    const char *family = tci_target_family_name(w->family);
    if (w->family == TENSOR_WGMMA && !tci_target_arch_has_family(cg->arch, w->family))
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "tensor cores (wgmma) need sm_90a; the target is %s",
                           tci_target_arch_label(cg->arch).text);
    int first = tci_target_first_arch_from(tci_target_family_min_arch(w->family));
    if ((int)cg->arch < first)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "tensor cores (%s) need sm_%d or newer; the target is %s", family, first,
                           tci_target_arch_label(cg->arch).text);
    int needed = tci_target_first_arch_from(min_arch);
    if ((int)cg->arch < needed)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "%s %s with %s needs sm_%d or newer; the target is %s", family,
                           shape_name(w, shape, sizeof shape), operands, needed,
                           tci_target_arch_label(cg->arch).text);
    return true;
}

static bool check_input(Codegen *cg, const WmmaStmt *w, tcc_dtype type, const TensorShape **out)
{
    char shape[32], operands[64];
    const TensorShape *in = tci_target_family_shape(w->family, w->m, w->n, w->k, type);
    if (!in)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED, "%s %s with %s inputs is not supported",
                           tci_target_family_name(w->family), shape_name(w, shape, sizeof shape),
                           tcc_dtype_name(type));
    if (out)
        *out = in;
    snprintf(operands, sizeof operands, "%s inputs", tcc_dtype_name(type));
    return check_arch(cg, w, operands, in->min_arch);
}

static bool check_acc(Codegen *cg, const WmmaStmt *w, tcc_dtype type)
{
    char shape[32], operands[64];
    int min_arch = tci_target_accumulator_min_arch(w->m, w->n, w->k, type);
    if (!tci_target_accumulator(type) || min_arch == 0)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "WMMA %s with a %s accumulator is not supported",
                           shape_name(w, shape, sizeof shape), tcc_dtype_name(type));
    snprintf(operands, sizeof operands, "a %s accumulator", tcc_dtype_name(type));
    return check_arch(cg, w, operands, min_arch);
}

static bool check_memory(Codegen *cg, const WmmaStmt *w)
{
    if (!w->memory || w->memory->scope == TCC_SCOPE_WMMA_MATRIX_A ||
        w->memory->scope == TCC_SCOPE_WMMA_MATRIX_B ||
        w->memory->scope == TCC_SCOPE_WMMA_ACCUMULATOR)
        return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                           "codegen: a WMMA load/store has no memory");
    if (w->nindex != 1)
        return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                           "codegen: WMMA access to '%s' has %d indices; flattening leaves one",
                           w->memory->name, w->nindex);
    if (w->family == TENSOR_MMA_SYNC && w->op != WMMA_STORE && w->memory->scope != TCC_SCOPE_SHARED)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "mma.sync loads fragments from shared memory (ldmatrix), not from '%s'",
                           w->memory->name);
    if (w->memory->type != w->fragment->type)
        return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                           "codegen: WMMA copies between %s memory '%s' and a %s fragment",
                           tcc_dtype_name(w->memory->type), w->memory->name,
                           tcc_dtype_name(w->fragment->type));
    return true;
}

bool tci_cg_analyze_wmma(Codegen *cg, const WmmaStmt *w)
{
    char shape[32];
    switch (w->op) {
    case WMMA_FILL: {
        if (!w->fragment)
            break;
        if (w->fragment->scope == TCC_SCOPE_WMMA_ACCUMULATOR)
            return check_acc(cg, w, w->fragment->type) &&
                   note_frag(cg, w, w->fragment, w->fragment->scope, false, false);
        return check_input(cg, w, w->fragment->type, NULL) &&
               note_frag(cg, w, w->fragment, w->fragment->scope, false, false);
    }
    case WMMA_LOAD_A:
    case WMMA_LOAD_B: {
        tcc_scope scope = w->op == WMMA_LOAD_A ? TCC_SCOPE_WMMA_MATRIX_A : TCC_SCOPE_WMMA_MATRIX_B;
        return note_frag(cg, w, w->fragment, scope, true, w->col_major) &&
               check_input(cg, w, w->fragment->type, NULL) && check_memory(cg, w);
    }
    case WMMA_MMA: {
        const TensorShape *in = NULL;
        bool in_memory = tci_wmma_operands_in_memory(w);
        if (in_memory && (w->a->scope != TCC_SCOPE_SHARED || w->b->scope != TCC_SCOPE_SHARED))
            return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                               "wgmma reads A and B from shared memory, not '%s' and '%s'",
                               w->a->name, w->b->name);
        if ((!in_memory && (!note_frag(cg, w, w->a, TCC_SCOPE_WMMA_MATRIX_A, false, false) ||
                            !note_frag(cg, w, w->b, TCC_SCOPE_WMMA_MATRIX_B, false, false))) ||
            !note_frag(cg, w, w->c, TCC_SCOPE_WMMA_ACCUMULATOR, false, false) ||
            !note_frag(cg, w, w->fragment, TCC_SCOPE_WMMA_ACCUMULATOR, false, false) ||
            !check_input(cg, w, w->a->type, &in))
            return false;
        if (w->b->type != w->a->type || w->c->type != w->fragment->type ||
            !tci_target_shape_takes(in, w->c->type))
            return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                               "WMMA %s mma of %s x %s + %s -> %s is not supported",
                               shape_name(w, shape, sizeof shape), tcc_dtype_name(w->a->type),
                               tcc_dtype_name(w->b->type), tcc_dtype_name(w->c->type),
                               tcc_dtype_name(w->fragment->type));
        return check_acc(cg, w, w->c->type);
    }
    case WMMA_STORE:
        return note_frag(cg, w, w->fragment, TCC_SCOPE_WMMA_ACCUMULATOR, false, false) &&
               check_acc(cg, w, w->fragment->type) && check_memory(cg, w);
    }
    return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: malformed WMMA statement");
}

/* ---- types ------------------------------------------------------------------------------ */

/* The type suffix of a fragment's intrinsics: A and B fragments of float32 are tf32. */
static const char *ptx_type(tcc_dtype type, bool operand)
{
    switch (type) {
    case TCC_FLOAT16:
        return "f16";
    case TCC_BFLOAT16:
        return "bf16";
    case TCC_FLOAT32:
        return operand ? "tf32" : "f32";
    case TCC_INT8:
        return "s8";
    case TCC_INT32:
        return "s32";
    default:
        return "?";
    }
}

/* The LLVM type of one fragment register. */
LLVMTypeRef tci_cg_register_type(Codegen *cg, FragmentRegister reg)
{
    switch (reg) {
    case FRAGMENT_F16X2:
        return LLVMVectorType(LLVMHalfTypeInContext(cg->llctx), 2);
    case FRAGMENT_F32:
        return LLVMFloatTypeInContext(cg->llctx);
    case FRAGMENT_B32:
        return tci_cg_i32_type(cg);
    }
    return NULL;
}

/* ---- intrinsic names: built in one place, to emit them and to list them ---------------- */

static const char *layout_name(bool col_major)
{
    return col_major ? "col" : "row";
}

static void load_name(char *out, size_t size, int m, int n, int k, bool is_a, bool col_major,
                      const char *ptx)
{
    snprintf(out, size, "llvm.nvvm.wmma.m%dn%dk%d.load.%s.%s.stride.%s", m, n, k, is_a ? "a" : "b",
             layout_name(col_major), ptx);
}

static void store_name(char *out, size_t size, int m, int n, int k, bool col_major, const char *ptx)
{
    snprintf(out, size, "llvm.nvvm.wmma.m%dn%dk%d.store.d.%s.stride.%s", m, n, k,
             layout_name(col_major), ptx);
}

/* float16 mmas are named by their D and C types (the same here), the others by the input. */
static void mma_name(char *out, size_t size, int m, int n, int k, bool a_col_major,
                     bool b_col_major, tcc_dtype input, tcc_dtype accumulator)
{
    char types[32];
    if (input == TCC_FLOAT16)
        snprintf(types, sizeof types, "%s.%s", ptx_type(accumulator, false),
                 ptx_type(accumulator, false));
    else
        snprintf(types, sizeof types, "%s", ptx_type(input, true));
    snprintf(out, size, "llvm.nvvm.wmma.m%dn%dk%d.mma.%s.%s.%s", m, n, k, layout_name(a_col_major),
             layout_name(b_col_major), types);
}

/* ---- fragments and the statements --------------------------------------------------------- */

/* The register layout of a fragment buffer, from the WMMA statements that use it. */
static bool frag_layout(Codegen *cg, const Buffer *buffer, const FragUse *use, FragLayout *out)
{
    if (buffer->scope == TCC_SCOPE_WMMA_ACCUMULATOR) {
        const TensorAccumulator *acc = tci_target_accumulator(buffer->type);
        if (!acc || !tci_target_accumulator_min_arch(use->m, use->n, use->k, buffer->type))
            return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED, "unsupported accumulator '%s'",
                               buffer->name);
        *out = (FragLayout){acc->reg, tci_target_accumulator_regs(acc, use->family, use->m, use->n),
                            (int64_t)use->m * use->n, ptx_type(buffer->type, false)};
        return true;
    }
    const TensorShape *in =
        tci_target_family_shape(use->family, use->m, use->n, use->k, buffer->type);
    if (!in)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED, "unsupported fragment '%s'", buffer->name);
    bool is_a = buffer->scope == TCC_SCOPE_WMMA_MATRIX_A;
    *out = (FragLayout){in->reg, is_a ? in->a_regs : in->b_regs,
                        (int64_t)(is_a ? use->m : use->n) * use->k, ptx_type(buffer->type, true)};
    return true;
}

bool tci_cg_alloc_fragments(Codegen *cg, const Buffer *buffer, BufferBinding *binding)
{
    const FragUse *use = find_frag(cg, buffer);
    if (!use)
        return true; /* no WMMA statement touches it: nothing to allocate */
    if (!frag_layout(cg, buffer, use, &binding->frag))
        return false;
    int64_t tile = binding->frag.tile;
    if (buffer->elements % tile != 0)
        return tci_cg_fail(
            cg, TCC_ERROR_SCHEDULE,
            "fragment buffer '%s' holds %lld elements, not a whole number of %lld-element "
            "tiles",
            buffer->name, (long long)buffer->elements, (long long)tile);
    char name[256];
    tci_cg_value_name(buffer, name, sizeof name);
    binding->fragment = true;
    binding->elem =
        LLVMArrayType2(tci_cg_register_type(cg, binding->frag.reg), (uint64_t)binding->frag.regs);
    binding->base = tci_cg_entry_alloca(
        cg, LLVMArrayType2(binding->elem, (uint64_t)(buffer->elements / tile)), name);
    binding->addrspace = ADDRSPACE_GENERIC;
    return true;
}

const BufferBinding *tci_cg_lookup_fragment(Codegen *cg, const Buffer *buffer)
{
    const BufferBinding *binding = tci_cg_lookup_buffer(cg, buffer);
    if (binding && !binding->fragment) {
        tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: '%s' is not a fragment",
                    buffer->name);
        return NULL;
    }
    return binding;
}

/* Pointer to register `reg` of fragment `index`. */
LLVMValueRef tci_cg_fragment_reg_ptr(Codegen *cg, const BufferBinding *frag, LLVMValueRef index,
                                     int reg)
{
    LLVMValueRef indices[3] = {tci_cg_i32(cg, 0), index, tci_cg_i32(cg, reg)};
    int64_t count = frag->buffer->elements / frag->frag.tile;
    LLVMTypeRef array = LLVMArrayType2(frag->elem, (uint64_t)count);
    return LLVMBuildInBoundsGEP2(cg->builder, array, frag->base, indices, 3, "");
}

/* Appends the registers of fragment `index_expr` of `buffer` to args. */
bool tci_cg_load_fragment(Codegen *cg, const Buffer *buffer, const Expr *index_expr,
                          LLVMValueRef *args, int *nargs)
{
    const BufferBinding *frag = tci_cg_lookup_fragment(cg, buffer);
    LLVMValueRef index = frag ? tci_cg_gen_expr(cg, index_expr) : NULL;
    if (!index)
        return false;
    LLVMTypeRef type = tci_cg_register_type(cg, frag->frag.reg);
    for (int r = 0; r < frag->frag.regs; r++) {
        LLVMValueRef reg =
            LLVMBuildLoad2(cg->builder, type, tci_cg_fragment_reg_ptr(cg, frag, index, r), "");
        args[(*nargs)++] = reg;
    }
    return true;
}

LLVMValueRef tci_cg_load_accumulator(Codegen *cg, const BufferBinding *frag, const Expr *e)
{
    const Expr *index = e->load.nindex == 1 ? e->load.index[0] : NULL;
    int lanes = index ? index->lanes : 0;
    const Expr *first =
        index && index->kind == EXPR_RAMP && index->ramp.stride == 1 ? index->ramp.base : index;
    if (!first || first->kind != EXPR_INT || (lanes > 1 && index->kind != EXPR_RAMP)) {
        tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                    "codegen: fragment '%s' is read at a register that is not a constant "
                    "(the loop over its registers must be unrolled)",
                    e->load.buffer->name);
        return NULL;
    }
    if (frag->frag.reg == FRAGMENT_F16X2 || e->type != e->load.buffer->type) {
        tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                    "codegen: fragment '%s' is read element by element: it must hold one "
                    "float32 or int32 element a register",
                    e->load.buffer->name);
        return NULL;
    }
    int64_t count = frag->buffer->elements / frag->frag.tile;
    int64_t reg = first->int_value;
    if (reg < 0 || reg + lanes > count * frag->frag.regs) {
        tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                    "codegen: register %lld of fragment '%s' is out of range", (long long)reg,
                    e->load.buffer->name);
        return NULL;
    }
    LLVMTypeRef type = tci_cg_register_type(cg, frag->frag.reg);
    LLVMValueRef value = lanes > 1 ? LLVMGetPoison(LLVMVectorType(type, (unsigned)lanes)) : NULL;
    for (int i = 0; i < lanes; i++, reg++) {
        LLVMValueRef ptr = tci_cg_fragment_reg_ptr(cg, frag, tci_cg_i32(cg, reg / frag->frag.regs),
                                                   (int)(reg % frag->frag.regs));
        LLVMValueRef element = LLVMBuildLoad2(cg->builder, type, ptr, "");
        if (lanes == 1)
            return element;
        value = LLVMBuildInsertElement(cg->builder, value, element, tci_cg_i32(cg, i), "");
    }
    return value;
}

/* Stores an intrinsic's result (a struct of registers, or the one register itself) into
 * fragment `index_expr` of `buffer`. */
/* A tf32 register loaded from float32 memory holds all 23 bits of its mantissa, and the
 * tensor cores would ignore the low 13: round it to nearest instead (cvt.rna.tf32.f32),
 * as the reference and CUTLASS do. */
static LLVMValueRef round_tf32(Codegen *cg, LLVMValueRef reg)
{
    LLVMValueRef value = LLVMBuildBitCast(cg->builder, reg, LLVMFloatTypeInContext(cg->llctx), "");
    return tci_cg_call_intrinsic(cg, cg->builder, INTRINSIC_TF32_ROUND, NULL, 0, &value, 1);
}

bool tci_cg_store_fragment(Codegen *cg, const Buffer *buffer, const Expr *index_expr,
                           LLVMValueRef result)
{
    const BufferBinding *frag = tci_cg_lookup_fragment(cg, buffer);
    LLVMValueRef index = frag && result ? tci_cg_gen_expr(cg, index_expr) : NULL;
    if (!index)
        return false;
    bool tf32 = strcmp(frag->frag.ptx, "tf32") == 0;
    for (int r = 0; r < frag->frag.regs; r++) {
        LLVMValueRef reg = frag->frag.regs == 1
                               ? result
                               : LLVMBuildExtractValue(cg->builder, result, (unsigned)r, "");
        if (tf32 && !(reg = round_tf32(cg, reg)))
            return false;
        LLVMBuildStore(cg->builder, reg, tci_cg_fragment_reg_ptr(cg, frag, index, r));
    }
    return true;
}

static LLVMValueRef fill_register(Codegen *cg, FragmentRegister reg, double value)
{
    switch (reg) {
    case FRAGMENT_F16X2: {
        LLVMValueRef half = LLVMConstReal(LLVMHalfTypeInContext(cg->llctx), value);
        LLVMValueRef both[2] = {half, half};
        return LLVMConstVector(both, 2);
    }
    case FRAGMENT_F32:
        return LLVMConstReal(LLVMFloatTypeInContext(cg->llctx), value);
    case FRAGMENT_B32:
        return tci_cg_i32(cg, (int64_t)value);
    }
    return NULL;
}

static bool gen_wmma_fill(Codegen *cg, const WmmaStmt *w)
{
    const BufferBinding *frag = tci_cg_lookup_fragment(cg, w->fragment);
    LLVMValueRef index = frag ? tci_cg_gen_expr(cg, w->fragment_index) : NULL;
    if (!index)
        return false;
    /* Packed registers (bf16, tf32, s8 inputs) hold several elements: only zero, whose
     * bits are the same in any packing, can be written as one i32. */
    bool packed = frag->frag.reg == FRAGMENT_B32 && w->fragment->type != TCC_INT32;
    if (packed && w->fill_value != 0.0)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "filling %s fragment '%s' with %g is not supported",
                           tcc_dtype_name(w->fragment->type), w->fragment->name, w->fill_value);
    LLVMValueRef value = fill_register(cg, frag->frag.reg, w->fill_value);
    for (int r = 0; r < frag->frag.regs; r++)
        LLVMBuildStore(cg->builder, value, tci_cg_fragment_reg_ptr(cg, frag, index, r));
    return true;
}

/* buffer + memory_index elements, and the pointer type the intrinsic is overloaded on. */
LLVMValueRef tci_cg_tile_ptr(Codegen *cg, const WmmaStmt *w, LLVMTypeRef *ptr_type)
{
    const BufferBinding *memory = tci_cg_lookup_memory(cg, w->memory);
    LLVMValueRef offset = memory ? tci_cg_gen_expr(cg, w->memory_index[0]) : NULL;
    if (!offset)
        return NULL;
    *ptr_type = LLVMPointerTypeInContext(cg->llctx, memory->addrspace);
    return tci_cg_element_ptr(cg, memory, offset);
}

static bool gen_wmma_load(Codegen *cg, const WmmaStmt *w)
{
    const BufferBinding *frag = tci_cg_lookup_fragment(cg, w->fragment);
    LLVMTypeRef ptr_type = NULL;
    LLVMValueRef args[2];
    if (!frag || !(args[0] = tci_cg_tile_ptr(cg, w, &ptr_type)))
        return false;
    args[1] = tci_cg_i32(cg, w->stride);
    char name[128];
    load_name(name, sizeof name, w->m, w->n, w->k, w->op == WMMA_LOAD_A, w->col_major,
              frag->frag.ptx);
    LLVMValueRef result = tci_cg_call_intrinsic(cg, cg->builder, name, &ptr_type, 1, args, 2);
    return tci_cg_store_fragment(cg, w->fragment, w->fragment_index, result);
}

static bool gen_wmma_store(Codegen *cg, const WmmaStmt *w)
{
    const BufferBinding *frag = tci_cg_lookup_fragment(cg, w->fragment);
    LLVMTypeRef ptr_type = NULL;
    LLVMValueRef args[MAX_FRAGMENT_REGS + 2];
    int nargs = 1;
    if (!frag || !(args[0] = tci_cg_tile_ptr(cg, w, &ptr_type)) ||
        !tci_cg_load_fragment(cg, w->fragment, w->fragment_index, args, &nargs))
        return false;
    args[nargs++] = tci_cg_i32(cg, w->stride);
    char name[128];
    store_name(name, sizeof name, w->m, w->n, w->k, w->col_major, frag->frag.ptx);
    return tci_cg_call_intrinsic(cg, cg->builder, name, &ptr_type, 1, args, nargs) != NULL;
}

/* The layout an A or B fragment was loaded with (row-major when no load says). */
bool tci_cg_loaded_col_major(Codegen *cg, const Buffer *buffer)
{
    const FragUse *use = find_frag(cg, buffer);
    return use && use->layout_known && use->col_major;
}

static bool gen_wmma_mma(Codegen *cg, const WmmaStmt *w)
{
    LLVMValueRef args[3 * MAX_FRAGMENT_REGS];
    int nargs = 0;
    if (!tci_cg_load_fragment(cg, w->a, w->a_index, args, &nargs) ||
        !tci_cg_load_fragment(cg, w->b, w->b_index, args, &nargs) ||
        !tci_cg_load_fragment(cg, w->c, w->c_index, args, &nargs))
        return false;
    char name[128];
    mma_name(name, sizeof name, w->m, w->n, w->k, tci_cg_loaded_col_major(cg, w->a),
             tci_cg_loaded_col_major(cg, w->b), w->a->type, w->c->type);
    LLVMValueRef result = tci_cg_call_intrinsic(cg, cg->builder, name, NULL, 0, args, nargs);
    return tci_cg_store_fragment(cg, w->fragment, w->fragment_index, result);
}

bool tci_cg_gen_wmma(Codegen *cg, const WmmaStmt *w)
{
    if (w->family == TENSOR_MMA_SYNC && w->op != WMMA_FILL)
        return tci_cg_gen_mma_sync(cg, w);
    if (w->family == TENSOR_WGMMA && w->op != WMMA_FILL)
        return tci_cg_gen_wgmma(cg, w);
    switch (w->op) {
    case WMMA_FILL:
        return gen_wmma_fill(cg, w);
    case WMMA_LOAD_A:
    case WMMA_LOAD_B:
        return gen_wmma_load(cg, w);
    case WMMA_MMA:
        return gen_wmma_mma(cg, w);
    case WMMA_STORE:
        return gen_wmma_store(cg, w);
    }
    return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown WMMA operation");
}

/* Every operand, layout and accumulator of every shape in the target table. */
void tci_cg_wmma_intrinsic_names(void (*visit)(const char *name, void *user), void *user)
{
    char name[128];
    for (int i = 0; i < tci_target_shape_count(); i++) {
        const TensorShape *s = tci_target_shape_at(i);
        if (s->family != TENSOR_WMMA)
            continue;
        const tcc_dtype *accumulators = s->accumulators;
        for (int col = 0; col < 2; col++) {
            for (int is_a = 0; is_a < 2; is_a++) {
                load_name(name, sizeof name, s->m, s->n, s->k, is_a, col, ptx_type(s->input, true));
                visit(name, user);
            }
            for (int a = 0; a < TENSOR_MAX_ACCUMULATORS && accumulators[a] != TCC_VOID; a++) {
                store_name(name, sizeof name, s->m, s->n, s->k, col,
                           ptx_type(accumulators[a], false));
                visit(name, user);
            }
        }
        for (int layouts = 0; layouts < 4; layouts++)
            for (int a = 0; a < TENSOR_MAX_ACCUMULATORS && accumulators[a] != TCC_VOID; a++) {
                mma_name(name, sizeof name, s->m, s->n, s->k, layouts & 1, layouts & 2, s->input,
                         accumulators[a]);
                visit(name, user);
            }
    }
}
