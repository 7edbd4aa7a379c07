/*
 * mma.sync statements: the tensor-core family whose fragments each thread knows (PTX ISA
 * "Matrix Fragments for mma.m16n8k16"). A 16x16x16 tile is two m16n8k16 instructions:
 *
 *   A 16x16   4 registers: ldmatrix.x4 of its four 8x8 quarters (rows 0-7 and 8-15 of
 *             k 0-7, then of k 8-15)
 *   B 16x16   4 registers: b0 b1 of columns 0-7, then b0 b1 of columns 8-15
 *   C 16x16   the accumulators of columns 0-7, then of 8-15; a thread holds rows lane/4
 *             and lane/4 + 8, columns 2 (lane % 4) and the next
 *
 * ldmatrix reads eight rows of 16 bytes per 8x8 quarter, each row's address from one lane;
 * .trans transposes each quarter on the way, so a tile whose memory layout is the other
 * way round loads into the same registers. Fills are the WMMA generator's (registers are
 * registers); the layout of fragments in registers is the target table's row.
 */
#include "codegen/internal.h"

#include <stdio.h>

#define LDMATRIX "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16"
#define LDMATRIX_TRANS "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16"
#define LANE_ID "llvm.nvvm.read.ptx.sreg.laneid"

enum { MAX_REGS = 8 };

static LLVMValueRef lane_id(Codegen *cg)
{
    return tci_cg_call_intrinsic(cg, cg->builder, LANE_ID, NULL, 0, NULL, 0);
}

static LLVMValueRef lane_bits(Codegen *cg, LLVMValueRef lane, int divide, int modulo)
{
    LLVMValueRef x = LLVMBuildUDiv(cg->builder, lane, tci_cg_i32(cg, divide), "");
    return LLVMBuildURem(cg->builder, x, tci_cg_i32(cg, modulo), "");
}

/* row * stride + col, in elements. */
static LLVMValueRef at(Codegen *cg, LLVMValueRef row, LLVMValueRef col, int64_t stride)
{
    return LLVMBuildAdd(cg->builder, LLVMBuildMul(cg->builder, row, tci_cg_i32(cg, stride), ""),
                        col, "");
}

/* ---- ldmatrix ------------------------------------------------------------------------------ */

/* Whether the tile lies in memory the other way round from its fragment: rows of k for A
 * (column-major) and B (row-major). ldmatrix then transposes (.trans). */
static bool rows_are_k(const WmmaStmt *w)
{
    return (w->op == WMMA_LOAD_A) == w->col_major;
}

/* The row this lane gives ldmatrix, as (memory row, memory column) of the tile. Lane l
 * addresses row l % 8 of quarter l / 8; quarters go in register order. A row-major A
 * (m x k) and a column-major B (n x k in memory) load as they lie; the other two are
 * transposed (.trans). */
static LLVMValueRef ldmatrix_offset(Codegen *cg, const WmmaStmt *w, LLVMValueRef lane)
{
    bool is_a = w->op == WMMA_LOAD_A;
    LLVMValueRef i = lane_bits(cg, lane, 1, 8), j = lane_bits(cg, lane, 8, 4);
    LLVMValueRef j_low = LLVMBuildURem(cg->builder, j, tci_cg_i32(cg, 2), "");
    LLVMValueRef j_high = LLVMBuildUDiv(cg->builder, j, tci_cg_i32(cg, 2), "");
    LLVMValueRef eight = tci_cg_i32(cg, 8);
    /* A: quarter j covers m 8 (j % 2), k 8 (j / 2). B: n 8 (j / 2), k 8 (j % 2). */
    LLVMValueRef m_or_n = LLVMBuildMul(cg->builder, is_a ? j_low : j_high, eight, "");
    LLVMValueRef k = LLVMBuildMul(cg->builder, is_a ? j_high : j_low, eight, "");
    /* Memory rows are m (A row-major), k (A column-major, B row-major) or n (B column-major). */
    bool k_rows = rows_are_k(w);
    LLVMValueRef row = LLVMBuildAdd(cg->builder, i, k_rows ? k : m_or_n, "");
    return at(cg, row, k_rows ? m_or_n : k, w->stride);
}

/* o ^ (((o >> shift) & (2^bits - 1)) << base): where element offset o of `b` lives. */
static LLVMValueRef swizzle(Codegen *cg, const Buffer *b, LLVMValueRef o)
{
    const Swizzle *z = &b->swizzle;
    LLVMValueRef row = LLVMBuildAShr(cg->builder, o, tci_cg_i32(cg, z->shift), "");
    row = LLVMBuildAnd(cg->builder, row, tci_cg_i32(cg, ((int64_t)1 << z->bits) - 1), "");
    return LLVMBuildXor(cg->builder, o, LLVMBuildShl(cg->builder, row, tci_cg_i32(cg, z->base), ""),
                        "");
}

/* The row this lane gives ldmatrix: the tile's first element plus the lane's offset, swizzled
 * where the tile is (the terms that are multiples of the swizzle's period added after it, so
 * that the rest stays the same from one stage to the next). */
static LLVMValueRef ldmatrix_row(Codegen *cg, const WmmaStmt *w, const BufferBinding *memory,
                                 LLVMValueRef lane)
{
    Expr *first = w->memory_index[0], *aligned = NULL;
    if (w->memory->swizzle.bits)
        tci_swizzle_split(cg->func->arena, w->memory, first, &aligned, &first);
    LLVMValueRef index = tci_cg_gen_expr(cg, first);
    LLVMValueRef outside = aligned ? tci_cg_gen_expr(cg, aligned) : NULL;
    if (!index || (aligned && !outside))
        return NULL;
    index = LLVMBuildAdd(cg->builder, index, ldmatrix_offset(cg, w, lane), "");
    if (aligned)
        index = LLVMBuildAdd(cg->builder, swizzle(cg, w->memory, index), outside, "");
    return tci_cg_element_ptr(cg, memory, index);
}

static bool gen_ldmatrix(Codegen *cg, const WmmaStmt *w)
{
    const BufferBinding *frag = tci_cg_lookup_fragment(cg, w->fragment);
    const BufferBinding *memory = frag ? tci_cg_lookup_memory(cg, w->memory) : NULL;
    LLVMTypeRef ptr_type = memory ? LLVMPointerTypeInContext(cg->llctx, memory->addrspace) : NULL;
    LLVMValueRef lane = memory ? lane_id(cg) : NULL;
    LLVMValueRef row = lane ? ldmatrix_row(cg, w, memory, lane) : NULL;
    LLVMValueRef index = row ? tci_cg_gen_expr(cg, w->fragment_index) : NULL;
    if (!index)
        return false;
    LLVMValueRef result = tci_cg_call_intrinsic(
        cg, cg->builder, rows_are_k(w) ? LDMATRIX_TRANS : LDMATRIX, &ptr_type, 1, &row, 1);
    if (!result)
        return false;
    LLVMTypeRef reg_type = tci_cg_register_type(cg, frag->frag.reg);
    for (int r = 0; r < frag->frag.regs; r++) {
        LLVMValueRef reg = LLVMBuildExtractValue(cg->builder, result, (unsigned)r, "");
        LLVMBuildStore(cg->builder, LLVMBuildBitCast(cg->builder, reg, reg_type, ""),
                       tci_cg_fragment_reg_ptr(cg, frag, index, r));
    }
    return true;
}

/* ---- mma ----------------------------------------------------------------------------------- */

/* float16 products are named by their D and C types, bfloat16 ones by the input. */
static void mma_name(char *out, size_t size, tcc_dtype input, tcc_dtype accumulator)
{
    const char *acc = accumulator == TCC_FLOAT16 ? "f16" : "f32";
    if (input == TCC_BFLOAT16)
        snprintf(out, size, "llvm.nvvm.mma.m16n8k16.row.col.bf16");
    else
        snprintf(out, size, "llvm.nvvm.mma.m16n8k16.row.col.%s.%s", acc, acc);
}

static bool gen_mma(Codegen *cg, const WmmaStmt *w)
{
    LLVMValueRef a[MAX_REGS], b[MAX_REGS], c[MAX_REGS];
    int na = 0, nb = 0, nc = 0;
    if (!tci_cg_load_fragment(cg, w->a, w->a_index, a, &na) ||
        !tci_cg_load_fragment(cg, w->b, w->b_index, b, &nb) ||
        !tci_cg_load_fragment(cg, w->c, w->c_index, c, &nc))
        return false;
    const BufferBinding *d = tci_cg_lookup_fragment(cg, w->fragment);
    LLVMValueRef index = d ? tci_cg_gen_expr(cg, w->fragment_index) : NULL;
    if (!index)
        return false;
    if (na != 4 || nb != 4 || nc % 2 != 0 || d->frag.regs != nc)
        return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                           "codegen: mma.sync fragments of '%s' have the wrong registers",
                           w->fragment->name);
    char name[96];
    mma_name(name, sizeof name, w->a->type, w->c->type);
    int per_half = nc / 2; /* accumulator registers of one m16n8 half */
    for (int half = 0; half < 2; half++) {
        LLVMValueRef args[4 + 2 + MAX_REGS / 2];
        int nargs = 0;
        for (int r = 0; r < 4; r++)
            args[nargs++] = a[r];
        args[nargs++] = b[2 * half];
        args[nargs++] = b[2 * half + 1];
        for (int r = 0; r < per_half; r++)
            args[nargs++] = c[half * per_half + r];
        LLVMValueRef result = tci_cg_call_intrinsic(cg, cg->builder, name, NULL, 0, args, nargs);
        if (!result)
            return false;
        for (int r = 0; r < per_half; r++)
            LLVMBuildStore(cg->builder, LLVMBuildExtractValue(cg->builder, result, (unsigned)r, ""),
                           tci_cg_fragment_reg_ptr(cg, d, index, half * per_half + r));
    }
    return true;
}

/* ---- the accumulator's store ------------------------------------------------------------- */

/* The first row this thread's warp holds: 0, or for a wgmma warpgroup 16 times the warp's place
 * in it (the block's threads counted x fastest; warpgroups start at multiples of 4 warps). */
static LLVMValueRef warp_first_row(Codegen *cg, const WmmaStmt *w)
{
    if (w->family != TENSOR_WGMMA)
        return tci_cg_i32(cg, 0);
    const int64_t *block = cg->func->launch + 3;
    LLVMBuilderRef bd = cg->builder;
    LLVMValueRef z = tci_cg_thread_index(cg, TCC_THREAD_Z),
                 y = tci_cg_thread_index(cg, TCC_THREAD_Y);
    LLVMValueRef x = tci_cg_thread_index(cg, TCC_THREAD_X);
    if (!x || !y || !z)
        return NULL;
    LLVMValueRef flat = LLVMBuildAdd(bd, LLVMBuildMul(bd, z, tci_cg_i32(cg, block[1]), ""), y, "");
    flat = LLVMBuildAdd(bd, LLVMBuildMul(bd, flat, tci_cg_i32(cg, block[0]), ""), x, "");
    LLVMValueRef warp = lane_bits(cg, flat, 32, 4);
    return LLVMBuildMul(bd, warp, tci_cg_i32(cg, 16), "");
}

/* Each thread writes its pairs: rows lane/4 (+ 8) of its warp's band, columns 8 block +
 * 2 (lane % 4) and the next of each m16n8 block, one 2-element vector each when the tile is
 * row-major in memory. */
bool tci_cg_store_accumulators(Codegen *cg, const WmmaStmt *w)
{
    const BufferBinding *memory = tci_cg_lookup_memory(cg, w->memory);
    LLVMTypeRef ptr_type;
    LLVMValueRef tile = memory ? tci_cg_tile_ptr(cg, w, &ptr_type) : NULL;
    LLVMValueRef regs[TCI_CG_MAX_ACC_REGS];
    int n = 0;
    const BufferBinding *frag = tile ? tci_cg_lookup_fragment(cg, w->fragment) : NULL;
    if (!frag)
        return false;
    if (frag->frag.regs > TCI_CG_MAX_ACC_REGS)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED, "codegen: '%s' has too many registers",
                           w->fragment->name);
    if (!tci_cg_load_fragment(cg, w->fragment, w->fragment_index, regs, &n))
        return false;
    LLVMValueRef lane = lane_id(cg), first_row = warp_first_row(cg, w);
    if (!first_row)
        return false;
    LLVMValueRef group = LLVMBuildAdd(cg->builder, lane_bits(cg, lane, 4, 8), first_row, "");
    LLVMValueRef pair = lane_bits(cg, lane, 1, 4);
    LLVMValueRef pair_col = LLVMBuildMul(cg->builder, pair, tci_cg_i32(cg, 2), "");
    bool f32 = w->fragment->type != TCC_FLOAT16;
    int64_t size = (int64_t)tcc_dtype_size(w->memory->type);
    unsigned pair_align = (unsigned)(w->stride % 2 == 0 ? 2 * size : size);
    for (int block = 0; block < w->n / 8; block++)
        for (int upper = 0; upper < 2; upper++) {
            LLVMValueRef row = LLVMBuildAdd(cg->builder, group, tci_cg_i32(cg, 8 * upper), "");
            LLVMValueRef col = LLVMBuildAdd(cg->builder, pair_col, tci_cg_i32(cg, 8 * block), "");
            /* Two elements: (row, col) and (row, col + 1). */
            LLVMValueRef pair_value;
            if (f32) {
                LLVMValueRef v = LLVMGetUndef(LLVMVectorType(memory->elem, 2));
                for (int e = 0; e < 2; e++)
                    v = LLVMBuildInsertElement(cg->builder, v, regs[4 * block + 2 * upper + e],
                                               tci_cg_i32(cg, e), "");
                pair_value = v;
            } else {
                pair_value = regs[2 * block + upper];
            }
            if (!w->col_major) {
                LLVMValueRef offset = at(cg, row, col, w->stride);
                LLVMValueRef ptr =
                    LLVMBuildInBoundsGEP2(cg->builder, memory->elem, tile, &offset, 1, "");
                LLVMSetAlignment(LLVMBuildStore(cg->builder, pair_value, ptr), pair_align);
                continue;
            }
            for (int e = 0; e < 2; e++) {
                LLVMValueRef c = LLVMBuildAdd(cg->builder, col, tci_cg_i32(cg, e), "");
                LLVMValueRef offset = at(cg, c, row, w->stride);
                LLVMValueRef ptr =
                    LLVMBuildInBoundsGEP2(cg->builder, memory->elem, tile, &offset, 1, "");
                LLVMValueRef value =
                    LLVMBuildExtractElement(cg->builder, pair_value, tci_cg_i32(cg, e), "");
                LLVMSetAlignment(LLVMBuildStore(cg->builder, value, ptr), (unsigned)size);
            }
        }
    return true;
}

bool tci_cg_gen_mma_sync(Codegen *cg, const WmmaStmt *w)
{
    switch (w->op) {
    case WMMA_LOAD_A:
    case WMMA_LOAD_B:
        return gen_ldmatrix(cg, w);
    case WMMA_MMA:
        return gen_mma(cg, w);
    case WMMA_STORE:
        return tci_cg_store_accumulators(cg, w);
    case WMMA_FILL:
        break;
    }
    return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown mma.sync operation");
}

void tci_cg_mma_sync_intrinsic_names(void (*visit)(const char *name, void *user), void *user)
{
    char name[96];
    visit(LDMATRIX, user);
    visit(LDMATRIX_TRANS, user);
    visit(LANE_ID, user);
    for (int i = 0; i < tci_target_shape_count(); i++) {
        const TensorShape *s = tci_target_shape_at(i);
        for (int a = 0; s->family == TENSOR_MMA_SYNC && a < TENSOR_MAX_ACCUMULATORS &&
                        s->accumulators[a] != TCC_VOID;
             a++) {
            mma_name(name, sizeof name, s->input, s->accumulators[a]);
            visit(name, user);
        }
    }
}
