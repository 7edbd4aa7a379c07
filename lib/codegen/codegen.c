/*
 * Loop IR -> LLVM IR: the entry point, the legality pre-pass, and statements.
 *
 * The function arrives fully lowered: every memory access has one element offset,
 * unrolled loops are replicated and vectorized loops are RAMP-indexed accesses. The
 * translation is a plain recursive walk: variables and buffers are bound on stacks while in
 * scope, loops become counted loops with a phi, thread loops read special registers, and
 * the other statements go to expr.c, memory.c and tensor_core.c.
 *
 * Everything the NVPTX backend would abort on (an intrinsic or type the sm lacks) is refused
 * before the module reaches the backend: tensor-core shapes, types and device limits in the
 * pre-pass, before any LLVM object exists; bfloat16 when a value of it is typed.
 */
#include "codegen/internal.h"

#include <llvm-c/DebugInfo.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const special_register_names[6] = {
    "llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
    "llvm.nvvm.read.ptx.sreg.ctaid.z", "llvm.nvvm.read.ptx.sreg.tid.x",
    "llvm.nvvm.read.ptx.sreg.tid.y",   "llvm.nvvm.read.ptx.sreg.tid.z",
};

/* ---- state ------------------------------------------------------------------------------- */

bool tci_cg_fail(Codegen *cg, tcc_status status, const char *format, ...)
{
    if (cg->status == TCC_OK) {
        va_list args;
        va_start(args, format);
        cg->status = tci_vfail(cg->ctx, status, format, args);
        va_end(args);
    }
    return false;
}

/* Grows *items (of `size`-byte elements) to hold at least count + 1. */
bool tci_cg_ok(Codegen *cg, tcc_status status)
{
    if (status != TCC_OK && cg->status == TCC_OK)
        cg->status = status;
    return status == TCC_OK;
}

bool tci_cg_reserve(Codegen *cg, void **items, int *cap, int count, size_t size)
{
    if (count < *cap)
        return true;
    int new_cap = *cap ? *cap * 2 : 16;
    void *grown = realloc(*items, (size_t)new_cap * size);
    if (!grown)
        return tci_cg_fail(cg, TCC_ERROR_OUT_OF_MEMORY, "out of memory in codegen");
    *items = grown;
    *cap = new_cap;
    return true;
}

static bool bind_var(Codegen *cg, const Var *var, LLVMValueRef value)
{
    if (!tci_cg_reserve(cg, (void **)&cg->vars, &cg->var_cap, cg->nvar, sizeof *cg->vars))
        return false;
    cg->vars[cg->nvar++] = (VarBinding){var, value};
    return true;
}

LLVMValueRef tci_cg_lookup_var(Codegen *cg, const Var *var)
{
    for (int i = cg->nvar - 1; i >= 0; i--)
        if (cg->vars[i].var == var)
            return cg->vars[i].value;
    /* A thread index is defined everywhere, inside its launch loops or not (the thread
     * that issues a pipeline's bulk copies is named outside some of them). */
    for (int tag = 0; tag < 6; tag++)
        if (var && cg->func->thread_var[tag] == var)
            return tci_cg_thread_index(cg, (tcc_thread_tag)tag);
    tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: variable '%s' is used outside its loop",
                var->name ? var->name : "?");
    return NULL;
}

bool tci_cg_bind_buffer(Codegen *cg, const BufferBinding *binding)
{
    if (!tci_cg_reserve(cg, (void **)&cg->buffers, &cg->buffer_cap, cg->nbuffer,
                        sizeof *cg->buffers))
        return false;
    cg->buffers[cg->nbuffer++] = *binding;
    return true;
}

const BufferBinding *tci_cg_lookup_buffer(Codegen *cg, const Buffer *buffer)
{
    for (int i = cg->nbuffer - 1; i >= 0; i--)
        if (cg->buffers[i].buffer == buffer)
            return &cg->buffers[i];
    tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                "codegen: buffer '%s' is used outside its allocation",
                buffer->name ? buffer->name : "?");
    return NULL;
}

static LLVMBasicBlockRef append_block(Codegen *cg, const char *name)
{
    return LLVMAppendBasicBlockInContext(cg->llctx, cg->function, name);
}

/* What a statement needs: static shared memory, and tensor-core operations the target has. */
static bool analyze_stmt(Visitor *v, const Stmt *s)
{
    Codegen *cg = v->user;
    const Buffer *buffer = s->kind == STMT_ALLOCATE ? s->alloc.buffer : NULL;
    if (buffer && buffer->scope == TCC_SCOPE_SHARED && buffer->shared_offset < 0)
        cg->shared_bytes += tci_buffer_bytes(buffer);
    if (s->kind == STMT_WMMA && !tci_cg_analyze_wmma(cg, &s->wmma))
        v->done = true;
    bool async =
        s->kind == STMT_COPY_ASYNC || s->kind == STMT_ASYNC_COMMIT || s->kind == STMT_ASYNC_WAIT;
    bool bulk = s->kind == STMT_BULK_COPY || s->kind == STMT_MBARRIER ||
                s->kind == STMT_BULK_STORE || s->kind == STMT_BULK_WAIT;
    cg->bulk_stores = cg->bulk_stores || s->kind == STMT_BULK_STORE;
    if (s->kind == STMT_BARRIER && s->barrier.cluster && !tci_target_arch(cg->arch)->clusters) {
        tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED, "thread-block clusters need sm_90; the target is %s",
                    tci_target_arch(cg->arch)->name);
        v->done = true;
    }
    if (bulk && !tci_target_arch(cg->arch)->bulk_copy) {
        tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                    "bulk tensor copies and mbarriers need sm_90a; the target is %s",
                    tci_target_arch(cg->arch)->name);
        v->done = true;
    }
    if (s->kind == STMT_SETMAXNREG && !tci_target_arch(cg->arch)->setmaxnreg) {
        tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED, "setmaxnreg needs sm_90a; the target is %s",
                    tci_target_arch(cg->arch)->name);
        v->done = true;
    }
    cg->moves_registers = cg->moves_registers || s->kind == STMT_SETMAXNREG;
    if (async && !tci_target_arch(cg->arch)->async_copy) {
        tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED, "cp.async needs sm_80 or newer; the target is %s",
                    tci_target_arch(cg->arch)->name);
        v->done = true;
    }
    return true;
}

/* Everything the NVPTX backend would abort on, or the driver refuse at launch, is refused
 * here, before any LLVM object exists. */
static bool analyze_func(Codegen *cg)
{
    if (!tci_cg_ok(cg, tci_target_validate_launch(cg->ctx, cg->func->launch)))
        return false;
    if (tci_cluster_blocks(cg->func) > 1 && !tci_target_arch(cg->arch)->clusters)
        return tci_cg_fail(cg, TCC_ERROR_UNSUPPORTED,
                           "thread-block clusters need sm_90; the target is %s",
                           tci_target_arch(cg->arch)->name);
    Visitor v = {.stmt = analyze_stmt, .user = cg};
    tci_visit_stmt(&v, cg->func->body);
    if (cg->status != TCC_OK)
        return false;
    int64_t limit = tci_device_limits.static_shared_bytes;
    if (cg->shared_bytes > limit)
        return tci_cg_fail(cg, TCC_ERROR_SCHEDULE,
                           "schedule needs %lld bytes of shared memory; the limit for static "
                           "shared memory is %lld",
                           (long long)cg->shared_bytes, (long long)limit);
    const TargetArch *target = tci_target_arch(cg->arch);
    int64_t total = cg->shared_bytes + cg->func->shared_bytes;
    if (total > target->max_shared_per_block)
        return tci_cg_fail(cg, TCC_ERROR_SCHEDULE,
                           "schedule needs %lld bytes of shared memory; %s allows %lld a block",
                           (long long)total, target->name, (long long)target->max_shared_per_block);
    return true;
}

/* Asks LLVM to unroll the loop whose back edge is `branch` fully: its own !llvm.loop node
 * (distinct, first operand itself) with llvm.loop.unroll.full, as clang makes of
 * `#pragma unroll` (unroll's mark of a loop under pragma unroll_explicit 0). */
static void mark_unroll_full(Codegen *cg, LLVMValueRef branch)
{
    LLVMContextRef c = cg->llctx;
    LLVMMetadataRef self = LLVMTemporaryMDNode(c, NULL, 0);
    LLVMMetadataRef full = LLVMMDStringInContext2(c, "llvm.loop.unroll.full", 21);
    LLVMMetadataRef hint = LLVMMDNodeInContext2(c, &full, 1);
    LLVMMetadataRef ops[2] = {self, hint};
    LLVMMetadataRef loop = LLVMMDNodeInContext2(c, ops, 2);
    LLVMMetadataReplaceAllUsesWith(self, loop);
    unsigned kind = LLVMGetMDKindIDInContext(c, "llvm.loop", 9);
    LLVMSetMetadata(branch, kind, LLVMMetadataAsValue(c, loop));
}

/* A counted loop var in [min, min + extent): header with a phi, body, latch. */
static bool gen_serial_loop(Codegen *cg, const Stmt *s)
{
    const Expr *extent_expr = s->loop.extent;
    if (extent_expr->kind == EXPR_INT && extent_expr->int_value <= 0)
        return true;
    LLVMValueRef min = tci_cg_gen_expr(cg, s->loop.min);
    if (!min)
        return false;
    if (extent_expr->kind == EXPR_INT && extent_expr->int_value == 1) {
        int mark = cg->nvar;
        bool ok = bind_var(cg, s->loop.var, min) && tci_cg_gen_stmt(cg, s->loop.body);
        cg->nvar = mark;
        return ok;
    }
    LLVMValueRef extent = tci_cg_gen_expr(cg, extent_expr);
    if (!extent)
        return false;
    LLVMValueRef end = LLVMBuildNSWAdd(cg->builder, min, extent, "");
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->builder);
    LLVMBasicBlockRef header = append_block(cg, "for.header");
    LLVMBasicBlockRef body = append_block(cg, "for.body");
    LLVMBasicBlockRef exit = append_block(cg, "for.end");
    LLVMBuildBr(cg->builder, header);

    LLVMPositionBuilderAtEnd(cg->builder, header);
    LLVMValueRef counter = LLVMBuildPhi(cg->builder, tci_cg_i32_type(cg), s->loop.var->name);
    LLVMBuildCondBr(cg->builder, LLVMBuildICmp(cg->builder, LLVMIntSLT, counter, end, ""), body,
                    exit);

    LLVMPositionBuilderAtEnd(cg->builder, body);
    int mark = cg->nvar;
    bool ok = bind_var(cg, s->loop.var, counter) && tci_cg_gen_stmt(cg, s->loop.body);
    cg->nvar = mark;
    if (!ok)
        return false;
    LLVMValueRef next = LLVMBuildNSWAdd(cg->builder, counter, tci_cg_i32(cg, 1), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(cg->builder);
    LLVMValueRef back = LLVMBuildBr(cg->builder, header);
    if (s->loop.llvm_unroll)
        mark_unroll_full(cg, back);
    LLVMValueRef incoming[2] = {min, next};
    LLVMBasicBlockRef blocks[2] = {pre, latch};
    LLVMAddIncoming(counter, incoming, blocks, 2);

    LLVMPositionBuilderAtEnd(cg->builder, exit);
    return true;
}

/* The special register of a thread tag, read once in the entry block. */
LLVMValueRef tci_cg_thread_index(Codegen *cg, tcc_thread_tag tag)
{
    if ((int)tag < 0 || (int)tag >= 6) {
        tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown thread tag %d", (int)tag);
        return NULL;
    }
    if (!cg->sreg[tag]) {
        cg->sreg[tag] = tci_cg_call_intrinsic(cg, cg->entry_builder, special_register_names[tag],
                                              NULL, 0, NULL, 0);
        if (cg->sreg[tag])
            LLVMSetValueName2(cg->sreg[tag], tci_thread_tag_name(tag),
                              strlen(tci_thread_tag_name(tag)));
    }
    return cg->sreg[tag];
}

/* A loop bound to a block or thread index: var = min + index, and when the loop is
 * shorter than the launch, the surplus threads skip the body. */
static bool gen_thread_loop(Codegen *cg, const Stmt *s)
{
    tcc_thread_tag tag = s->loop.tag;
    if (tag == TCC_VTHREAD)
        return tci_cg_fail(cg, TCC_ERROR_SCHEDULE,
                           "codegen: virtual thread '%s' left (inject_virtual_thread removes them)",
                           s->loop.var->name);
    LLVMValueRef index = tci_cg_thread_index(cg, tag);
    if (!index)
        return false;
    int64_t launch = cg->func->launch[tag];
    const Expr *extent = s->loop.extent;
    if (extent->kind == EXPR_INT && extent->int_value > launch)
        return tci_cg_fail(cg, TCC_ERROR_SCHEDULE,
                           "loop '%s' bound to %s has extent %lld but the launch has only %lld",
                           s->loop.var->name, tci_thread_tag_name(tag),
                           (long long)extent->int_value, (long long)launch);
    LLVMValueRef value = index;
    if (!tci_expr_is_int(s->loop.min, 0)) {
        LLVMValueRef min = tci_cg_gen_expr(cg, s->loop.min);
        if (!min)
            return false;
        value = LLVMBuildNSWAdd(cg->builder, index, min, "");
    }
    LLVMBasicBlockRef exit = NULL;
    if (!(extent->kind == EXPR_INT && extent->int_value == launch)) {
        LLVMValueRef bound = tci_cg_gen_expr(cg, extent);
        if (!bound)
            return false;
        LLVMBasicBlockRef body = append_block(cg, "thread.body");
        exit = append_block(cg, "thread.end");
        LLVMBuildCondBr(cg->builder, LLVMBuildICmp(cg->builder, LLVMIntSLT, index, bound, ""), body,
                        exit);
        LLVMPositionBuilderAtEnd(cg->builder, body);
    }
    int mark = cg->nvar;
    bool ok = bind_var(cg, s->loop.var, value) && tci_cg_gen_stmt(cg, s->loop.body);
    cg->nvar = mark;
    if (!ok)
        return false;
    if (exit) {
        LLVMBuildBr(cg->builder, exit);
        LLVMPositionBuilderAtEnd(cg->builder, exit);
    }
    return true;
}

/* __syncthreads(), bar.sync id, threads for part of the block, or the cluster's barrier
 * (arrive with release semantics, wait with acquire: mbarriers initialized before it are
 * then the other blocks' to use). */
static bool gen_barrier(Codegen *cg, const Stmt *s)
{
    if (s->barrier.cluster)
        return tci_cg_call_intrinsic(cg, cg->builder, INTRINSIC_CLUSTER_ARRIVE, NULL, 0, NULL, 0) &&
               tci_cg_call_intrinsic(cg, cg->builder, INTRINSIC_CLUSTER_WAIT, NULL, 0, NULL, 0);
    if (!s->barrier.threads)
        return tci_cg_call_intrinsic(cg, cg->builder, INTRINSIC_BARRIER, NULL, 0, NULL, 0) != NULL;
    LLVMValueRef args[2] = {tci_cg_i32(cg, s->barrier.id), tci_cg_i32(cg, s->barrier.threads)};
    if (s->barrier.arrive) { /* LLVM 19 has no intrinsic for bar.arrive */
        LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->llctx), params[2] = {i32, i32};
        return tci_cg_call_asm(cg, LLVMVoidTypeInContext(cg->llctx), params, args, 2,
                               "bar.arrive $0, $1;", "r,r,~{memory}") != NULL;
    }
    return tci_cg_call_intrinsic(cg, cg->builder, INTRINSIC_NAMED_BARRIER, NULL, 0, args, 2) !=
           NULL;
}

static bool gen_if(Codegen *cg, const Stmt *s)
{
    LLVMValueRef cond = tci_cg_gen_expr(cg, s->branch.cond);
    if (!cond)
        return false;
    if (tci_cg_value_lanes(cond) != 1)
        return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                           "codegen: an if statement has a vector condition");
    LLVMBasicBlockRef then_bb = append_block(cg, "if.then");
    LLVMBasicBlockRef else_bb = s->branch.else_body ? append_block(cg, "if.else") : NULL;
    LLVMBasicBlockRef merge = append_block(cg, "if.end");
    LLVMBuildCondBr(cg->builder, cond, then_bb, else_bb ? else_bb : merge);
    LLVMPositionBuilderAtEnd(cg->builder, then_bb);
    if (!tci_cg_gen_stmt(cg, s->branch.then_body))
        return false;
    LLVMBuildBr(cg->builder, merge);
    if (else_bb) {
        LLVMPositionBuilderAtEnd(cg->builder, else_bb);
        if (!tci_cg_gen_stmt(cg, s->branch.else_body))
            return false;
        LLVMBuildBr(cg->builder, merge);
    }
    LLVMPositionBuilderAtEnd(cg->builder, merge);
    return true;
}

bool tci_cg_gen_stmt(Codegen *cg, const Stmt *s)
{
    if (cg->status != TCC_OK)
        return false;
    if (!s)
        return true;
    switch (s->kind) {
    case STMT_SEQ:
        for (int i = 0; i < s->seq.count; i++)
            if (!tci_cg_gen_stmt(cg, s->seq.items[i]))
                return false;
        return true;
    case STMT_FOR:
        return s->loop.kind == FOR_THREAD ? gen_thread_loop(cg, s) : gen_serial_loop(cg, s);
    case STMT_STORE:
        return tci_cg_gen_store(cg, s);
    case STMT_IF:
        return gen_if(cg, s);
    case STMT_ALLOCATE:
        return tci_cg_gen_allocate(cg, s);
    case STMT_BARRIER:
        return gen_barrier(cg, s);
    case STMT_SETMAXNREG: {
        LLVMValueRef registers = tci_cg_i32(cg, s->setmaxnreg.registers);
        const char *name =
            s->setmaxnreg.increase ? INTRINSIC_SETMAXNREG_INC : INTRINSIC_SETMAXNREG_DEC;
        return tci_cg_call_intrinsic(cg, cg->builder, name, NULL, 0, &registers, 1) != NULL;
    }
    case STMT_WMMA:
        return tci_cg_gen_wmma(cg, &s->wmma);
    case STMT_COPY_ASYNC:
        return tci_cg_gen_copy_async(cg, s);
    case STMT_ASYNC_COMMIT:
        return tci_cg_call_intrinsic(cg, cg->builder, INTRINSIC_ASYNC_COMMIT, NULL, 0, NULL, 0) !=
               NULL;
    case STMT_ASYNC_WAIT: {
        LLVMValueRef pending = tci_cg_i32(cg, s->wait.pending);
        return tci_cg_call_intrinsic(cg, cg->builder, INTRINSIC_ASYNC_WAIT, NULL, 0, &pending, 1) !=
               NULL;
    }
    case STMT_WGMMA_SYNC:
        return tci_cg_gen_wgmma_sync(cg, s->wgmma_sync.op, s->wgmma_sync.pending);
    case STMT_BULK_COPY:
        return tci_cg_gen_bulk_copy(cg, s);
    case STMT_BULK_STORE:
        return tci_cg_gen_bulk_store(cg, s);
    case STMT_BULK_WAIT:
        return tci_cg_gen_bulk_wait(cg, s->wait.pending, true);
    case STMT_MBARRIER:
        return tci_cg_gen_mbarrier(cg, s);
    }
    return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown statement kind %d",
                       (int)s->kind);
}

/* Entry block (allocas, special registers) then the body; entry branches to the body
 * once everything is generated, so allocas can be appended to it at any time. */
static bool gen_function(Codegen *cg)
{
    if (!tci_cg_add_function(cg))
        return false;
    LLVMBasicBlockRef entry = append_block(cg, "entry");
    LLVMBasicBlockRef body = append_block(cg, "body");
    LLVMPositionBuilderAtEnd(cg->entry_builder, entry);
    LLVMPositionBuilderAtEnd(cg->builder, body);
    if (!tci_cg_gen_stmt(cg, cg->func->body))
        return false;
    /* The block's shared memory must outlive the bulk stores that read it; and they are
     * done before the kernel is. */
    if (cg->bulk_stores && !tci_cg_gen_bulk_wait(cg, 0, false))
        return false;
    LLVMBuildRetVoid(cg->builder);
    LLVMBuildBr(cg->entry_builder, body);
    return true;
}

static void codegen_free(Codegen *cg)
{
    if (cg->builder)
        LLVMDisposeBuilder(cg->builder);
    if (cg->entry_builder)
        LLVMDisposeBuilder(cg->entry_builder);
    free(cg->vars);
    free(cg->buffers);
    free(cg->frags);
}

tcc_status tci_codegen_module(tcc_context *ctx, const char *name, tcc_arch arch,
                              LLVMModuleRef *module)
{
    *module = NULL;
    LLVMContextRef llctx;
    tcc_status status = tci_llvm_context(ctx, &llctx);
    if (status != TCC_OK)
        return status;
    (void)arch; /* the first kernel generated into it prepares it, once checked */
    *module = LLVMModuleCreateWithNameInContext(name ? name : "kernel", llctx);
    return TCC_OK;
}

tcc_status tci_codegen(tcc_context *ctx, const PrimFunc *func, tcc_arch arch, LLVMModuleRef module,
                       int64_t *shared_bytes)
{
    *shared_bytes = 0;
    if (!func || !module)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "codegen: no function or module");
    Codegen cg = {.ctx = ctx, .func = func, .arch = arch, .status = TCC_OK, .module = module};
    tcc_status status = TCC_OK;
    if (!analyze_func(&cg))
        status = cg.status;
    if (status == TCC_OK && !*LLVMGetTarget(module))
        status = tci_llvm_prepare_module(ctx, module, arch);
    if (status == TCC_OK) {
        cg.llctx = LLVMGetModuleContext(module);
        cg.builder = LLVMCreateBuilderInContext(cg.llctx);
        cg.entry_builder = LLVMCreateBuilderInContext(cg.llctx);
    }
    if (status == TCC_OK && !gen_function(&cg))
        status = cg.status != TCC_OK ? cg.status
                                     : tci_fail(ctx, TCC_ERROR_LLVM, "codegen failed silently");
    if (status == TCC_OK)
        *shared_bytes = cg.shared_bytes;
    codegen_free(&cg);
    return status;
}

/* ---- the intrinsics it can emit ------------------------------------------------------------ */

typedef struct NameCheck {
    tcc_context *ctx;
    tcc_status status;
} NameCheck;

static void check_name(const char *name, void *user)
{
    NameCheck *check = user;
    if (check->status == TCC_OK) {
        unsigned id;
        check->status = tci_llvm_intrinsic_id(check->ctx, name, &id);
    }
}

tcc_status tci_codegen_check_intrinsics(tcc_context *ctx)
{
    NameCheck check = {ctx, TCC_OK};
    for (int i = 0; i < 6; i++)
        check_name(special_register_names[i], &check);
    check_name(INTRINSIC_BARRIER, &check);
    check_name(INTRINSIC_NAMED_BARRIER, &check);
    check_name(INTRINSIC_CLUSTER_ARRIVE, &check);
    check_name(INTRINSIC_CLUSTER_WAIT, &check);
    check_name(INTRINSIC_SETMAXNREG_INC, &check);
    check_name(INTRINSIC_SETMAXNREG_DEC, &check);
    check_name(INTRINSIC_TF32_ROUND, &check);
    check_name(INTRINSIC_FLOOR, &check);
    tci_cg_async_copy_intrinsic_names(check_name, &check);
    tci_cg_wmma_intrinsic_names(check_name, &check);
    tci_cg_mma_sync_intrinsic_names(check_name, &check);
    return check.status;
}
