/*
 * wgmma statements (sm_90a): a warpgroup's m64nNk16 product read from shared memory, the
 * store of its accumulators, and the steps of its asynchronous protocol (WgmmaSync). LLVM 19
 * has no intrinsic for any of them: each is inline PTX, built by one helper here.
 *
 * A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format") is 64 bits:
 *   bits  0-13  the tile's start address, >> 4
 *   bits 16-29  the leading-dimension byte offset, >> 4: unused by a swizzled k-major tile
 *               (its k16 slice lies within one row; 1 by convention); for an MN-major one,
 *               from one column block to the next
 *   bits 32-45  the stride-dimension byte offset, >> 4: from one group of 8 rows to the next
 *   bits 62-63  the swizzle: 1 for rows of 128 bytes, 2 for 64, 3 for 32
 * A k-major operand is k-contiguous rows (A m x k, B n x k) laid out by tci_buffer_swizzle,
 * whose layout for rows of at most 128 bytes is the one these modes name; an MN-major one (a
 * row-major B, k x n) lies in column blocks (tci_buffer_swizzle_blocks), rows of k, and is
 * read transposed. The start address is the tile's first element as laid out before the
 * swizzle: the hardware swizzles the addresses it forms, which is why the tile's rows must
 * start whole periods of the swizzle (plan_shared aligns swizzled buffers so), and why the
 * k16 slices of a k-major row are 32 bytes apart.
 *
 * The accumulators of an m64nN product: warp w of the warpgroup holds rows 16 w to 16 w + 15
 * as mma.sync's m16n8 tiles side by side (tci_cg_store_accumulators).
 */
#include "codegen/internal.h"

#include <stdio.h>
#include <string.h>

/* ---- descriptors -------------------------------------------------------------------------- */

/* The bits of a shared-memory address that the descriptor's start field (>> 4) reads. */
enum { TCI_WGMMA_ADDRESS_BITS = 18 };

static LLVMValueRef i64(Codegen *cg, uint64_t value)
{
    return LLVMConstInt(LLVMInt64TypeInContext(cg->llctx), value, false);
}

/* Whether `b` lies in column blocks: its rows run along m or n (an MN-major operand, which
 * wgmma reads transposed). */
static bool mn_major(const Buffer *b)
{
    return b->swizzle.block > 0;
}

/* The descriptor's start field: the tile's address in the block's shared memory >> 4, which
 * fits its 14 bits (shared memory is under 256 KB). Computed as the buffer's base >> 4
 * (loop-invariant) plus the tile's byte offset / 16, simplified as loop IR, so that the k16
 * slices of a step differ by constants and a step's descriptors cost an add each. Both are
 * multiples of 16: buffers are aligned (plan_shared) and a tile starts a 16-byte chunk. The
 * base keeps only its low 18 bits (TCI_WGMMA_ADDRESS_BITS): in a kernel launched in clusters
 * the shared-window address carries more above them, which would spill into the leading
 * dimension's field (an 8192^3 product with B row-major then gave wrong results). */
static LLVMValueRef start_address(Codegen *cg, const Buffer *b, Expr *index)
{
    Arena *a = cg->func->arena;
    LLVMValueRef base = tci_cg_shared_address(cg, b, tci_ir_int(a, 0));
    Expr *bytes =
        tci_ir_binary(a, EXPR_MUL, index, tci_ir_int(a, (int64_t)tcc_dtype_size(b->type)));
    Expr *chunks = tci_simplify(a, tci_ir_binary(a, EXPR_DIV, bytes, tci_ir_int(a, 16)), 0, NULL);
    LLVMValueRef offset = base ? tci_cg_gen_expr(cg, chunks) : NULL;
    if (!offset)
        return NULL;
    LLVMBuilderRef bd = cg->builder;
    LLVMTypeRef i32 = tci_cg_i32_type(cg);
    LLVMValueRef low =
        LLVMBuildAnd(bd, LLVMBuildTrunc(bd, base, i32, ""),
                     LLVMConstInt(i32, (1u << TCI_WGMMA_ADDRESS_BITS) - 1, false), "");
    LLVMValueRef base16 = LLVMBuildLShr(bd, low, LLVMConstInt(i32, 4, false), "");
    return LLVMBuildAdd(bd, base16, LLVMBuildTrunc(bd, offset, i32, ""), "");
}

/* The descriptor of the tile of `b` that starts at element `index`. A k-major tile: rows of
 * k, 8-row groups SBO apart. An MN-major one: 128-byte rows of m or n, 8 rows of k SBO apart,
 * and its column blocks LBO apart; its start is where the blocks put it. */
static LLVMValueRef descriptor(Codegen *cg, const Buffer *b, Expr *index)
{
    int64_t size = (int64_t)tcc_dtype_size(b->type);
    int64_t columns = mn_major(b) ? b->swizzle.block : b->shape[b->ndim - 1];
    int64_t row = columns * size, lbo = 16;
    uint64_t mode = row == 128 ? 1 : row == 64 ? 2 : row == 32 ? 3 : 0;
    if (!b->swizzle.bits || !mode) {
        tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                    "wgmma reads '%s' through a descriptor: it must be swizzled in rows of 32, "
                    "64 or 128 bytes",
                    b->name);
        return NULL;
    }
    if (mn_major(b)) {
        Arena *a = cg->func->arena;
        Expr *aligned, *rest;
        tci_swizzle_split(a, b, index, &aligned, &rest);
        index = tci_ir_binary(a, EXPR_ADD, tci_swizzle_block_index(a, b, rest), aligned);
        lbo = b->shape[b->ndim - 2] * row;
    }
    LLVMValueRef start = start_address(cg, b, index);
    if (!start)
        return NULL;
    LLVMBuilderRef bd = cg->builder;
    start = LLVMBuildZExt(bd, start, LLVMInt64TypeInContext(cg->llctx), "");
    uint64_t fixed = ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(8 * row >> 4) << 32) | (mode << 62);
    return LLVMBuildOr(bd, start, i64(cg, fixed), "wgmma.desc");
}

/* ---- the product -------------------------------------------------------------------------- */

/* How the instruction names the types of `input`, and the operands after scale-d: the
 * scales of A and B (1) for floating types, and the transposes of 16-bit ones. */
static const char *mma_types(const WmmaStmt *w, char *tail, size_t size)
{
    switch (w->a->type) {
    case TCC_FLOAT32:
        snprintf(tail, size, ", 1, 1");
        return "f32.tf32.tf32";
    case TCC_INT8:
        snprintf(tail, size, "%s", "");
        return "s32.s8.s8";
    default:
        snprintf(tail, size, ", 1, 1, %d, %d", mn_major(w->a), mn_major(w->b));
        return w->a->type == TCC_BFLOAT16 ? "f32.bf16.bf16" : "f32.f16.f16";
    }
}

/* Whether scale-d is a predicate set from the asm's last operand: w->accumulate is a
 * condition, not a constant. */
static bool scale_predicated(const WmmaStmt *w)
{
    return w->accumulate && w->accumulate->kind != EXPR_INT;
}

/* Scale-d, how the product treats the accumulators it reads: "1" (adds them), "0" (starts
 * from zero), or "p", the predicate (scale_predicated). */
static const char *scale_d(const WmmaStmt *w)
{
    if (scale_predicated(w))
        return "p";
    return !w->accumulate || w->accumulate->int_value ? "1" : "0";
}

/* "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {$0, ..., $63}, $64, $65, 1, 1, 1, 0, 1;"
 * and its constraints: the accumulators out and tied in, then the two descriptors, then where
 * scale-d is a predicate its operand ("{ .reg .pred p; setp.ne.b32 p, $192, 0; wgmma ... p,
 * ...; }"). An MN-major operand is transposed (16-bit types only: tf32 and int8 take neither
 * transposes nor, for int8, scales). */
static bool mma_asm(Codegen *cg, const WmmaStmt *w, int regs, char *text, size_t text_size,
                    char *constraints, size_t constraints_size)
{
    if (!tci_target_wgmma_transposes(w->a->type) && (mn_major(w->a) || mn_major(w->b)))
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "codegen: wgmma reads %s operands k-major only; '%s' lies in column "
                           "blocks",
                           tcc_dtype_name(w->a->type), mn_major(w->a) ? w->a->name : w->b->name);
    char tail[32];
    const char *types = mma_types(w, tail, sizeof tail);
    const char *out = w->c->type == TCC_INT32 ? "=r," : "=f,";
    const char *scale = scale_d(w);
    bool predicate = scale_predicated(w);
    size_t t = 0;
    if (predicate)
        t = (size_t)snprintf(text, text_size, "{ .reg .pred p; setp.ne.b32 p, $%d, 0; ",
                             2 * regs + 2);
    t += (size_t)snprintf(text + t, text_size - t, "wgmma.mma_async.sync.aligned.m%dn%dk%d.%s {",
                          w->m, w->n, w->k, types);
    size_t c = 0;
    for (int r = 0; r < regs && t < text_size && c < constraints_size; r++) {
        t += (size_t)snprintf(text + t, text_size - t, "%s$%d", r ? ", " : "", r);
        c += (size_t)snprintf(constraints + c, constraints_size - c, "%s", out);
    }
    if (t < text_size)
        t += (size_t)snprintf(text + t, text_size - t, "}, $%d, $%d, %s%s;%s", regs, regs + 1,
                              scale, tail, predicate ? " }" : "");
    if (c < constraints_size)
        c += (size_t)snprintf(constraints + c, constraints_size - c, "l,l");
    for (int r = 0; r < regs && c < constraints_size; r++)
        c += (size_t)snprintf(constraints + c, constraints_size - c, ",%d", r);
    if (predicate && c < constraints_size)
        c += (size_t)snprintf(constraints + c, constraints_size - c, ",r");
    if (t >= text_size || c >= constraints_size)
        return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: wgmma m%dn%dk%d is too wide",
                           w->m, w->n, w->k);
    return true;
}

/* The condition of a predicated scale-d as the 32-bit integer setp reads (1 where it holds). */
static LLVMValueRef scale_operand(Codegen *cg, const Expr *accumulate)
{
    if (accumulate->type != TCC_BOOL || accumulate->lanes != 1) {
        tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: wgmma's scale_d takes a condition");
        return NULL;
    }
    LLVMValueRef value = tci_cg_gen_expr(cg, accumulate);
    return value ? LLVMBuildZExt(cg->builder, value, tci_cg_i32_type(cg), "") : NULL;
}

static bool gen_mma(Codegen *cg, const WmmaStmt *w)
{
    LLVMValueRef args[3 + TCI_CG_MAX_ACC_REGS];
    int nacc = 0;
    const BufferBinding *acc = tci_cg_lookup_fragment(cg, w->c);
    if (!acc)
        return false;
    bool integer = w->c->type == TCC_INT32;
    if (acc->frag.reg != (integer ? FRAGMENT_B32 : FRAGMENT_F32))
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "codegen: wgmma accumulates in float32 or int32 registers, not those "
                           "of '%s'",
                           w->c->name);
    if (acc->frag.regs > TCI_CG_MAX_ACC_REGS)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "codegen: '%s' has %d accumulator registers; wgmma takes at most %d",
                           w->c->name, acc->frag.regs, TCI_CG_MAX_ACC_REGS);
    if (!(args[0] = descriptor(cg, w->a, w->a_index)) ||
        !(args[1] = descriptor(cg, w->b, w->b_index)))
        return false;
    int nargs = 2;
    if (!tci_cg_load_fragment(cg, w->c, w->c_index, args + nargs, &nacc))
        return false;
    nargs += nacc;
    if (scale_predicated(w) && !(args[nargs++] = scale_operand(cg, w->accumulate)))
        return false;
    char text[4096], constraints[1024];
    if (!mma_asm(cg, w, nacc, text, sizeof text, constraints, sizeof constraints))
        return false;
    LLVMTypeRef element =
                    integer ? LLVMInt32TypeInContext(cg->llctx) : LLVMFloatTypeInContext(cg->llctx),
                i64_type = LLVMInt64TypeInContext(cg->llctx);
    LLVMTypeRef params[3 + TCI_CG_MAX_ACC_REGS], fields[TCI_CG_MAX_ACC_REGS];
    params[0] = params[1] = i64_type;
    for (int r = 0; r < nacc; r++)
        params[2 + r] = fields[r] = element;
    if (nargs > 2 + nacc)
        params[2 + nacc] = tci_cg_i32_type(cg);
    LLVMTypeRef result = LLVMStructTypeInContext(cg->llctx, fields, (unsigned)nacc, false);
    LLVMValueRef out = tci_cg_call_asm(cg, result, params, args, nargs, text, constraints);
    return tci_cg_store_fragment(cg, w->fragment, w->fragment_index, out);
}

/* ---- the protocol ------------------------------------------------------------------------- */

bool tci_cg_gen_wgmma_sync(Codegen *cg, WgmmaSync op, int pending)
{
    char text[64];
    switch (op) {
    case WGMMA_FENCE:
        snprintf(text, sizeof text, "wgmma.fence.sync.aligned;");
        break;
    case WGMMA_COMMIT:
        snprintf(text, sizeof text, "wgmma.commit_group.sync.aligned;");
        break;
    case WGMMA_WAIT:
        snprintf(text, sizeof text, "wgmma.wait_group.sync.aligned %d;", pending);
        break;
    case WGMMA_PROXY_FENCE:
        snprintf(text, sizeof text, "fence.proxy.async.shared::cta;");
        break;
    default:
        return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown wgmma step %d",
                           (int)op);
    }
    if (!tci_target_arch_has_family(cg->arch, TENSOR_WGMMA))
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED, "%s needs sm_90a; the target is %s",
                           tci_wgmma_sync_name(op), tci_target_arch_label(cg->arch).text);
    /* The memory clobber keeps loads and stores of shared memory on their side of it. */
    tci_cg_call_asm(cg, LLVMVoidTypeInContext(cg->llctx), NULL, NULL, 0, text, "~{memory}");
    return true;
}

bool tci_cg_gen_wgmma(Codegen *cg, const WmmaStmt *w)
{
    switch (w->op) {
    case WMMA_MMA:
        return gen_mma(cg, w);
    case WMMA_STORE:
        return tci_cg_store_accumulators(cg, w);
    default:
        break;
    }
    return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                       "codegen: wgmma loads no fragments: it reads A and B from shared memory");
}
