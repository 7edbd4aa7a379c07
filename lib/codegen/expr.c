/*
 * Expressions: constants, arithmetic (floor division and modulo), comparisons,
 * if_then_else, casts and vectors, and the small type helpers every part of codegen uses.
 * A scalar meeting a vector is broadcast, since vectorized bodies mix the two.
 */
#include "codegen/internal.h"

#include <string.h>

LLVMTypeRef tci_cg_i32_type(Codegen *cg)
{
    return LLVMInt32TypeInContext(cg->llctx);
}

LLVMValueRef tci_cg_i32(Codegen *cg, int64_t value)
{
    return LLVMConstInt(tci_cg_i32_type(cg), (unsigned long long)value, 1);
}

LLVMTypeRef tci_cg_scalar_type(Codegen *cg, tcc_dtype type)
{
    switch (type) {
    case TCC_BOOL:
        return LLVMInt1TypeInContext(cg->llctx);
    case TCC_INT8:
        return LLVMInt8TypeInContext(cg->llctx);
    case TCC_INT32:
        return tci_cg_i32_type(cg);
    case TCC_FLOAT16:
        return LLVMHalfTypeInContext(cg->llctx);
    case TCC_FLOAT32:
        return LLVMFloatTypeInContext(cg->llctx);
    case TCC_BFLOAT16:
        /* Conversions to bfloat16 select instructions that sm_80 introduced. */
        if (!tci_cg_ok(cg, tci_target_validate_scalar(cg->ctx, type, cg->arch)))
            return NULL;
        return LLVMBFloatTypeInContext(cg->llctx);
    case TCC_VOID:
        break;
    }
    tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: a value has no type");
    return NULL;
}

static LLVMTypeRef value_type(Codegen *cg, tcc_dtype type, int lanes)
{
    LLVMTypeRef scalar = tci_cg_scalar_type(cg, type);
    if (!scalar || lanes <= 1)
        return scalar;
    return LLVMVectorType(scalar, (unsigned)lanes);
}

LLVMValueRef tci_cg_call_intrinsic(Codegen *cg, LLVMBuilderRef builder, const char *name,
                                   LLVMTypeRef *overloads, int noverload, LLVMValueRef *args,
                                   int nargs)
{
    unsigned id;
    if (!tci_cg_ok(cg, tci_llvm_intrinsic_id(cg->ctx, name, &id)))
        return NULL;
    /* LLVM reads the overload types of an overloaded intrinsic without checking them. */
    if (LLVMIntrinsicIsOverloaded(id) != (noverload > 0)) {
        tci_cg_fail(cg, TCC_ERROR_LLVM, "codegen: %s is %soverloaded", name,
                    noverload > 0 ? "not " : "");
        return NULL;
    }
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cg->module, id, overloads, (size_t)noverload);
    /* Calls returning void must be unnamed. */
    LLVMValueRef call =
        LLVMBuildCall2(builder, LLVMGlobalGetValueType(fn), fn, args, (unsigned)nargs, "");
    if (strncmp(name, "llvm.nvvm.", strlen("llvm.nvvm.")) == 0 &&
        strncmp(name, SPECIAL_REGISTER_PREFIX, strlen(SPECIAL_REGISTER_PREFIX)) != 0)
        tci_cg_mark_convergent(cg, call);
    return call;
}

/*
 * What a thread computes through ldmatrix, mma.sync, wmma, shfl, barriers or wgmma depends on
 * the other threads of its warp (or block) running the same instruction at the same time
 * (.sync.aligned). LLVM 19 does not mark those intrinsics convergent, and a call that is not
 * may be moved or duplicated into control flow that some of the warp's threads skip. Like
 * clang for CUDA, every NVVM call but the special registers' is convergent.
 */
void tci_cg_mark_convergent(Codegen *cg, LLVMValueRef call)
{
    unsigned kind = LLVMGetEnumAttributeKindForName("convergent", strlen("convergent"));
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                             LLVMCreateEnumAttribute(cg->llctx, kind, 0));
}

/* A vector of `lanes` copies of a scalar (scalars pass through when lanes is 1). */
LLVMValueRef tci_cg_broadcast(Codegen *cg, LLVMValueRef value, int lanes)
{
    if (!value || lanes <= 1 || LLVMGetTypeKind(LLVMTypeOf(value)) == LLVMVectorTypeKind)
        return value;
    LLVMTypeRef vector = LLVMVectorType(LLVMTypeOf(value), (unsigned)lanes);
    LLVMValueRef one =
        LLVMBuildInsertElement(cg->builder, LLVMGetPoison(vector), value, tci_cg_i32(cg, 0), "");
    LLVMValueRef zeros = LLVMConstNull(LLVMVectorType(tci_cg_i32_type(cg), (unsigned)lanes));
    return LLVMBuildShuffleVector(cg->builder, one, LLVMGetPoison(vector), zeros, "");
}

int tci_cg_value_lanes(LLVMValueRef value)
{
    LLVMTypeRef type = LLVMTypeOf(value);
    if (LLVMGetTypeKind(type) != LLVMVectorTypeKind)
        return 1;
    return (int)LLVMGetVectorSize(type);
}

static LLVMValueRef gen_constant(Codegen *cg, const Expr *e)
{
    LLVMTypeRef type = tci_cg_scalar_type(cg, e->type);
    if (!type)
        return NULL;
    LLVMValueRef value;
    if (tcc_dtype_is_float(e->type))
        value = LLVMConstReal(type, e->kind == EXPR_FLOAT ? e->float_value : (double)e->int_value);
    else if (e->kind == EXPR_FLOAT)
        value = LLVMConstInt(type, (unsigned long long)(int64_t)e->float_value, 1);
    else
        value = LLVMConstInt(type, (unsigned long long)e->int_value, e->type != TCC_BOOL);
    return tci_cg_broadcast(cg, value, e->lanes);
}

/* Floor division or modulo (EXPR_DIV / EXPR_MOD): the truncating sdiv/srem corrected
 * when the remainder is nonzero and its sign differs from the divisor's. With a positive
 * constant divisor that is just "remainder < 0", which LLVM folds away when it proves the
 * dividend non-negative. */
static LLVMValueRef gen_floor_divmod(Codegen *cg, const Expr *e, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef bd = cg->builder;
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(a));
    LLVMValueRef q = LLVMBuildSDiv(bd, a, b, "");
    LLVMValueRef r = LLVMBuildSRem(bd, a, b, "");
    LLVMValueRef adjust;
    const Expr *divisor = e->bin.b;
    if (divisor->kind == EXPR_INT && divisor->int_value > 0) {
        adjust = LLVMBuildICmp(bd, LLVMIntSLT, r, zero, "");
    } else {
        LLVMValueRef nonzero = LLVMBuildICmp(bd, LLVMIntNE, r, zero, "");
        LLVMValueRef signs = LLVMBuildICmp(bd, LLVMIntSLT, LLVMBuildXor(bd, r, b, ""), zero, "");
        adjust = LLVMBuildAnd(bd, nonzero, signs, "");
    }
    if (e->kind == EXPR_MOD)
        return LLVMBuildSelect(bd, adjust, LLVMBuildNSWAdd(bd, r, b, ""), r, "");
    LLVMValueRef one = LLVMConstInt(LLVMTypeOf(q), 1, 0);
    if (LLVMGetTypeKind(LLVMTypeOf(q)) == LLVMVectorTypeKind)
        one = tci_cg_broadcast(cg, LLVMConstInt(LLVMGetElementType(LLVMTypeOf(q)), 1, 0),
                               tci_cg_value_lanes(q));
    return LLVMBuildSelect(bd, adjust, LLVMBuildNSWSub(bd, q, one, ""), q, "");
}

/* a - floor(a / b) * b, the floor modulo of floats. */
static LLVMValueRef gen_float_mod(Codegen *cg, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef type = LLVMTypeOf(a);
    LLVMValueRef quotient = LLVMBuildFDiv(cg->builder, a, b, "");
    LLVMValueRef floored =
        tci_cg_call_intrinsic(cg, cg->builder, INTRINSIC_FLOOR, &type, 1, &quotient, 1);
    if (!floored)
        return NULL;
    return LLVMBuildFSub(cg->builder, a, LLVMBuildFMul(cg->builder, floored, b, ""), "");
}

static LLVMValueRef gen_compare(Codegen *cg, ExprKind kind, tcc_dtype type, LLVMValueRef a,
                                LLVMValueRef b)
{
    LLVMBuilderRef bd = cg->builder;
    if (tcc_dtype_is_float(type)) {
        static const LLVMRealPredicate preds[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                                  LLVMRealOLE};
        return LLVMBuildFCmp(bd, preds[kind - EXPR_EQ], a, b, "");
    }
    /* bool is i1, where signed order would make true < false. */
    bool is_bool = type == TCC_BOOL;
    LLVMIntPredicate preds[] = {LLVMIntEQ, LLVMIntNE, is_bool ? LLVMIntULT : LLVMIntSLT,
                                is_bool ? LLVMIntULE : LLVMIntSLE};
    return LLVMBuildICmp(bd, preds[kind - EXPR_EQ], a, b, "");
}

static LLVMValueRef gen_min_max(Codegen *cg, ExprKind kind, tcc_dtype type, LLVMValueRef a,
                                LLVMValueRef b)
{
    LLVMBuilderRef bd = cg->builder;
    LLVMValueRef less = tcc_dtype_is_float(type) ? LLVMBuildFCmp(bd, LLVMRealOLT, a, b, "")
                                                 : LLVMBuildICmp(bd, LLVMIntSLT, a, b, "");
    return kind == EXPR_MIN ? LLVMBuildSelect(bd, less, a, b, "")
                            : LLVMBuildSelect(bd, less, b, a, "");
}

static LLVMValueRef gen_binary(Codegen *cg, const Expr *e)
{
    LLVMValueRef a = tci_cg_gen_expr(cg, e->bin.a);
    LLVMValueRef b = a ? tci_cg_gen_expr(cg, e->bin.b) : NULL;
    if (!b)
        return NULL;
    /* A scalar meeting a vector is broadcast (vectorized bodies mix the two). */
    int lanes = tci_cg_value_lanes(a) > tci_cg_value_lanes(b) ? tci_cg_value_lanes(a)
                                                              : tci_cg_value_lanes(b);
    a = tci_cg_broadcast(cg, a, lanes);
    b = tci_cg_broadcast(cg, b, lanes);
    tcc_dtype type = e->bin.a->type;
    bool fp = tcc_dtype_is_float(type);
    bool nsw = type == TCC_INT32; /* index arithmetic: the lowering checked it fits */
    LLVMBuilderRef bd = cg->builder;
    switch (e->kind) {
    case EXPR_ADD:
        return fp    ? LLVMBuildFAdd(bd, a, b, "")
               : nsw ? LLVMBuildNSWAdd(bd, a, b, "")
                     : LLVMBuildAdd(bd, a, b, "");
    case EXPR_SUB:
        return fp    ? LLVMBuildFSub(bd, a, b, "")
               : nsw ? LLVMBuildNSWSub(bd, a, b, "")
                     : LLVMBuildSub(bd, a, b, "");
    case EXPR_MUL:
        return fp    ? LLVMBuildFMul(bd, a, b, "")
               : nsw ? LLVMBuildNSWMul(bd, a, b, "")
                     : LLVMBuildMul(bd, a, b, "");
    case EXPR_DIV:
        return fp ? LLVMBuildFDiv(bd, a, b, "") : gen_floor_divmod(cg, e, a, b);
    case EXPR_MOD:
        return fp ? gen_float_mod(cg, a, b) : gen_floor_divmod(cg, e, a, b);
    case EXPR_MIN:
    case EXPR_MAX:
        return gen_min_max(cg, e->kind, type, a, b);
    case EXPR_EQ:
    case EXPR_NE:
    case EXPR_LT:
    case EXPR_LE:
        return gen_compare(cg, e->kind, type, a, b);
    case EXPR_XOR:
        return LLVMBuildXor(bd, a, b, "");
    case EXPR_AND:
        return LLVMBuildAnd(bd, a, b, "");
    case EXPR_OR:
        return LLVMBuildOr(bd, a, b, "");
    default:
        break;
    }
    tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown binary expression %d",
                (int)e->kind);
    return NULL;
}

/* The lanes of an if_then_else: a scalar side is broadcast to the other's width. */
static int select_lanes(const Expr *e)
{
    int lanes = e->lanes;
    if (e->select.then_value->lanes > lanes)
        lanes = e->select.then_value->lanes;
    if (e->select.else_value->lanes > lanes)
        lanes = e->select.else_value->lanes;
    return lanes;
}

/* if_then_else whose sides may load: only the chosen side runs, so a guarded load that
 * would be out of bounds never executes. */
static LLVMValueRef gen_select_branches(Codegen *cg, const Expr *e, LLVMValueRef cond)
{
    if (tci_cg_value_lanes(cond) > 1) {
        tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                    "a vector if_then_else guarding a load is not supported");
        return NULL;
    }
    int lanes = select_lanes(e);
    LLVMTypeRef type = value_type(cg, e->type, lanes);
    if (!type)
        return NULL;
    LLVMBasicBlockRef then_bb = LLVMAppendBasicBlockInContext(cg->llctx, cg->function, "sel.then");
    LLVMBasicBlockRef else_bb = LLVMAppendBasicBlockInContext(cg->llctx, cg->function, "sel.else");
    LLVMBasicBlockRef merge_bb = LLVMAppendBasicBlockInContext(cg->llctx, cg->function, "sel.end");
    LLVMBuildCondBr(cg->builder, cond, then_bb, else_bb);

    LLVMPositionBuilderAtEnd(cg->builder, then_bb);
    LLVMValueRef then_value =
        tci_cg_broadcast(cg, tci_cg_gen_expr(cg, e->select.then_value), lanes);
    if (!then_value)
        return NULL;
    LLVMBasicBlockRef then_end = LLVMGetInsertBlock(cg->builder);
    LLVMBuildBr(cg->builder, merge_bb);

    LLVMPositionBuilderAtEnd(cg->builder, else_bb);
    LLVMValueRef else_value =
        tci_cg_broadcast(cg, tci_cg_gen_expr(cg, e->select.else_value), lanes);
    if (!else_value)
        return NULL;
    LLVMBasicBlockRef else_end = LLVMGetInsertBlock(cg->builder);
    LLVMBuildBr(cg->builder, merge_bb);

    LLVMPositionBuilderAtEnd(cg->builder, merge_bb);
    LLVMValueRef phi = LLVMBuildPhi(cg->builder, type, "");
    LLVMValueRef values[2] = {then_value, else_value};
    LLVMBasicBlockRef blocks[2] = {then_end, else_end};
    LLVMAddIncoming(phi, values, blocks, 2);
    return phi;
}

static LLVMValueRef gen_select(Codegen *cg, const Expr *e)
{
    LLVMValueRef cond = tci_cg_gen_expr(cg, e->select.cond);
    if (!cond)
        return NULL;
    /* Both sides evaluated: only where they load nothing, or nothing the condition did not
     * (the one way a vector condition can choose, vectorize's). */
    bool loads =
        tci_expr_reads_memory(e->select.then_value) || tci_expr_reads_memory(e->select.else_value);
    if (loads && !(tci_cg_value_lanes(cond) > 1 && tci_select_sides_load_as_cond(e)))
        return gen_select_branches(cg, e, cond);
    int lanes = select_lanes(e);
    LLVMValueRef then_value =
        tci_cg_broadcast(cg, tci_cg_gen_expr(cg, e->select.then_value), lanes);
    LLVMValueRef else_value =
        then_value ? tci_cg_broadcast(cg, tci_cg_gen_expr(cg, e->select.else_value), lanes) : NULL;
    if (!else_value)
        return NULL;
    return LLVMBuildSelect(cg->builder, cond, then_value, else_value, "");
}

static LLVMValueRef gen_cast(Codegen *cg, const Expr *e)
{
    const Expr *source = e->cast.value;
    LLVMValueRef value = tci_cg_gen_expr(cg, source);
    LLVMTypeRef to = value_type(cg, e->type, value ? tci_cg_value_lanes(value) : 1);
    if (!value || !to)
        return NULL;
    tcc_dtype from_type = source->type, to_type = e->type;
    LLVMBuilderRef bd = cg->builder;
    if (from_type == to_type)
        return value;
    if (to_type == TCC_BOOL) {
        LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(value));
        return tcc_dtype_is_float(from_type) ? LLVMBuildFCmp(bd, LLVMRealUNE, value, zero, "")
                                             : LLVMBuildICmp(bd, LLVMIntNE, value, zero, "");
    }
    if (from_type == TCC_BOOL)
        return tcc_dtype_is_float(to_type) ? LLVMBuildUIToFP(bd, value, to, "")
                                           : LLVMBuildZExt(bd, value, to, "");
    if (!tcc_dtype_is_float(from_type) && !tcc_dtype_is_float(to_type))
        return (int64_t)tcc_dtype_size(to_type) > (int64_t)tcc_dtype_size(from_type)
                   ? LLVMBuildSExt(bd, value, to, "")
                   : LLVMBuildTrunc(bd, value, to, "");
    if (!tcc_dtype_is_float(from_type))
        return LLVMBuildSIToFP(bd, value, to, "");
    if (!tcc_dtype_is_float(to_type))
        return LLVMBuildFPToSI(bd, value, to, "");
    if ((int64_t)tcc_dtype_size(to_type) > (int64_t)tcc_dtype_size(from_type))
        return LLVMBuildFPExt(bd, value, to, "");
    if ((int64_t)tcc_dtype_size(to_type) < (int64_t)tcc_dtype_size(from_type))
        return LLVMBuildFPTrunc(bd, value, to, "");
    /* float16 <-> bfloat16: through float32, which holds both exactly. */
    LLVMTypeRef f32 = value_type(cg, TCC_FLOAT32, tci_cg_value_lanes(value));
    return LLVMBuildFPTrunc(bd, LLVMBuildFPExt(bd, value, f32, ""), to, "");
}

/* base, base + stride, ... as an i32 vector (a RAMP used as a value, not an index). */
static LLVMValueRef gen_ramp_value(Codegen *cg, const Expr *e)
{
    LLVMValueRef base = tci_cg_gen_expr(cg, e->ramp.base);
    if (!base)
        return NULL;
    LLVMValueRef steps[64];
    if (e->lanes > 64) {
        tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED, "vectors of %d lanes are not supported", e->lanes);
        return NULL;
    }
    for (int i = 0; i < e->lanes; i++)
        steps[i] = tci_cg_i32(cg, e->ramp.stride * i);
    return LLVMBuildNSWAdd(cg->builder, tci_cg_broadcast(cg, base, e->lanes),
                           LLVMConstVector(steps, (unsigned)e->lanes), "");
}

static LLVMValueRef gen_var(Codegen *cg, const Expr *e)
{
    return tci_cg_broadcast(cg, tci_cg_lookup_var(cg, e->var), e->lanes);
}

LLVMValueRef tci_cg_gen_expr(Codegen *cg, const Expr *e)
{
    if (cg->status != TCC_OK)
        return NULL;
    if (!e) {
        tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: missing expression");
        return NULL;
    }
    switch (e->kind) {
    case EXPR_INT:
    case EXPR_FLOAT:
        return gen_constant(cg, e);
    case EXPR_VAR:
        return gen_var(cg, e);
    case EXPR_NOT: {
        LLVMValueRef a = tci_cg_gen_expr(cg, e->bin.a);
        return a ? LLVMBuildNot(cg->builder, a, "") : NULL;
    }
    case EXPR_SELECT:
        return gen_select(cg, e);
    case EXPR_CAST:
        return gen_cast(cg, e);
    case EXPR_LOAD:
        return tci_cg_gen_load(cg, e);
    case EXPR_RAMP:
        return gen_ramp_value(cg, e);
    case EXPR_ACCESS:
    case EXPR_REDUCE:
        tci_cg_fail(
            cg, TCC_ERROR_INVALID_ARGUMENT,
            "codegen: a compute-definition expression (tensor access or reduction) survived "
            "lowering");
        return NULL;
    default:
        return gen_binary(cg, e);
    }
}
