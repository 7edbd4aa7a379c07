/*
 * Bulk tensor copies and mbarriers (sm_90a): LLVM 19 has no intrinsic for
 * cp.async.bulk.tensor, mbarrier.arrive.expect_tx or mbarrier.try_wait.parity, so each is
 * inline PTX, built by one helper here.
 *
 * A copy names its tensor map by the generic address of the kernel parameter that holds it
 * (a byval parameter marked grid_constant, which the backend addresses in place with
 * cvta.param rather than copying it to local memory), its destination and its mbarrier by
 * 32-bit .shared addresses, and its coordinates as 32-bit integers; an im2col copy adds its
 * filter offsets as 16-bit ones. The pre-pass (codegen.c) has refused both on archs without
 * the copy engine.
 */
#include "codegen/internal.h"

#include <stdio.h>
#include <string.h>

/* The .shared address of element `index` of `b`, as the 32-bit register PTX takes. */
static LLVMValueRef shared_u32(Codegen *cg, const Buffer *b, Expr *index)
{
    LLVMValueRef address = tci_cg_shared_address(cg, b, index);
    return address ? LLVMBuildTrunc(cg->builder, address, tci_cg_i32_type(cg), "") : NULL;
}

/* The address of barrier `index` of the buffer `b` (TCI_MBARRIER_WORDS words each). */
static LLVMValueRef barrier_address(Codegen *cg, const Buffer *b, Expr *index)
{
    Arena *a = cg->func->arena;
    return shared_u32(cg, b, tci_ir_binary(a, EXPR_MUL, index, tci_ir_int(a, TCI_MBARRIER_WORDS)));
}

/* A copy or store with an L2 policy other than normal: the policy made in a scope of its own
 * ("{ .reg .b64 policy; createpolicy.fractional.L2::evict_last.b64 policy, 1.0; "), and the
 * instruction then takes ".L2::cache_hint" and the policy as its last operand. */
static size_t open_cache_policy(tcc_cache_hint cache, char *text, size_t size)
{
    if (cache == TCC_CACHE_NORMAL)
        return 0;
    return (size_t)snprintf(text, size,
                            "{ .reg .b64 policy; createpolicy.fractional.L2::%s.b64 policy, 1.0; ",
                            tci_cache_hint_name(cache));
}

/* The instruction's end: ";", or with a policy ", policy; }". */
static size_t end_instruction(tcc_cache_hint cache, char *text, size_t size)
{
    return (size_t)snprintf(text, size, "%s", cache == TCC_CACHE_NORMAL ? ";" : ", policy; }");
}

static const char *cache_hint_suffix(tcc_cache_hint cache)
{
    return cache == TCC_CACHE_NORMAL ? "" : ".L2::cache_hint";
}

/* "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
 *  [$0], [$1, {$3, $4}], [$2];", im2col copies with ", {$5, $6}" of offsets; a multicast one
 * adds ".multicast::cluster" and its mask of blocks as an operand, $`mask`; an L2 policy its
 * own (open_cache_policy). */
static void copy_text(const TensorMap *map, tcc_cache_hint cache, int mask, char *text, size_t size)
{
    bool im2col = map->enc.mode == TCC_TENSOR_MAP_IM2COL;
    size_t n = open_cache_policy(cache, text, size);
    n += (size_t)snprintf(text + n, size - n,
                          "cp.async.bulk.tensor.%dd.shared::cluster.global.%s.mbarrier::"
                          "complete_tx::bytes%s%s [$0], [$1, {",
                          map->enc.rank, im2col ? "im2col" : "tile",
                          mask ? ".multicast::cluster" : "", cache_hint_suffix(cache));
    for (int d = 0; d < map->enc.rank && n < size; d++)
        n += (size_t)snprintf(text + n, size - n, "%s$%d", d ? ", " : "", 3 + d);
    if (n < size)
        n += (size_t)snprintf(text + n, size - n, "}], [$2]");
    for (int d = 0; im2col && d < map->enc.rank - 2 && n < size; d++)
        n += (size_t)snprintf(text + n, size - n, "%s$%d", d ? ", " : ", {", 3 + map->enc.rank + d);
    if (n < size)
        n += (size_t)snprintf(text + n, size - n, "%s", im2col ? "}" : "");
    if (mask && n < size)
        n += (size_t)snprintf(text + n, size - n, ", $%d", mask);
    if (n < size)
        end_instruction(cache, text + n, size - n);
}

bool tci_cg_gen_bulk_copy(Codegen *cg, const Stmt *s)
{
    const TensorMap *map = s->bulk.map;
    if (!s->bulk.barrier)
        return tci_cg_fail(cg, TCC_ERROR_SCHEDULE,
                           "a bulk copy into '%s' has no barrier: it must be in a pipelined loop",
                           s->bulk.dst->name);
    LLVMTypeRef i16 = LLVMInt16TypeInContext(cg->llctx), i32 = tci_cg_i32_type(cg);
    LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->llctx);
    LLVMValueRef args[3 + TCI_MAX_MAP_RANK + 3 + 1];
    LLVMTypeRef types[3 + TCI_MAX_MAP_RANK + 3 + 1];
    LLVMValueRef param = LLVMGetParam(cg->function, (unsigned)(cg->func->nparam + map->index));
    args[0] = shared_u32(cg, s->bulk.dst, s->bulk.dst_index);
    args[1] = LLVMBuildPtrToInt(cg->builder, param, i64, "");
    args[2] = barrier_address(cg, s->bulk.barrier, s->bulk.barrier_index);
    types[0] = i32, types[1] = i64, types[2] = i32;
    int n = 3;
    char constraints[128] = "r,l,r";
    for (int d = 0; d < map->enc.rank; d++, n++) {
        args[n] = tci_cg_gen_expr(cg, s->bulk.coords[d]);
        types[n] = i32;
        snprintf(constraints + strlen(constraints), sizeof constraints - strlen(constraints), ",r");
    }
    for (int d = 0; map->enc.mode == TCC_TENSOR_MAP_IM2COL && d < map->enc.rank - 2; d++, n++) {
        LLVMValueRef offset = tci_cg_gen_expr(cg, s->bulk.offsets[d]);
        args[n] = offset ? LLVMBuildTrunc(cg->builder, offset, i16, "") : NULL;
        types[n] = i16;
        snprintf(constraints + strlen(constraints), sizeof constraints - strlen(constraints), ",h");
    }
    int mask = 0;
    if (s->bulk.multicast > 1) {
        /* Every block of the cluster's first `multicast`: the mask's low bits. */
        args[n] = LLVMConstInt(i16, (1u << s->bulk.multicast) - 1, false);
        types[n] = i16;
        mask = n++;
        snprintf(constraints + strlen(constraints), sizeof constraints - strlen(constraints), ",h");
    }
    for (int i = 0; i < n; i++)
        if (!args[i])
            return false;
    snprintf(constraints + strlen(constraints), sizeof constraints - strlen(constraints),
             ",~{memory}");
    char text[448];
    copy_text(map, s->bulk.cache, mask, text, sizeof text);
    tci_cg_call_asm(cg, LLVMVoidTypeInContext(cg->llctx), types, args, n, text, constraints);
    return true;
}

/* "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [$1, {$2, $3}], [$0];
 *  cp.async.bulk.commit_group;": each store a bulk async-group of its own, which
 * STMT_BULK_WAIT counts. */
bool tci_cg_gen_bulk_store(Codegen *cg, const Stmt *s)
{
    const TensorMap *map = s->bulk.map;
    LLVMTypeRef i32 = tci_cg_i32_type(cg), i64 = LLVMInt64TypeInContext(cg->llctx);
    LLVMValueRef args[2 + TCI_MAX_MAP_RANK];
    LLVMTypeRef types[2 + TCI_MAX_MAP_RANK];
    LLVMValueRef param = LLVMGetParam(cg->function, (unsigned)(cg->func->nparam + map->index));
    args[0] = shared_u32(cg, s->bulk.dst, s->bulk.dst_index);
    args[1] = LLVMBuildPtrToInt(cg->builder, param, i64, "");
    types[0] = i32, types[1] = i64;
    char constraints[64] = "r,l", text[320];
    tcc_cache_hint cache = s->bulk.cache;
    int n = (int)open_cache_policy(cache, text, sizeof text);
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group%s [$1, {",
                  map->enc.rank, cache_hint_suffix(cache));
    for (int d = 0; d < map->enc.rank; d++) {
        args[2 + d] = tci_cg_gen_expr(cg, s->bulk.coords[d]);
        types[2 + d] = i32;
        strcat(constraints, ",r");
        n += snprintf(text + n, sizeof text - (size_t)n, "%s$%d", d ? ", " : "", 2 + d);
    }
    n += snprintf(text + n, sizeof text - (size_t)n, "}], [$0]");
    n += (int)end_instruction(cache, text + n, sizeof text - (size_t)n);
    snprintf(text + n, sizeof text - (size_t)n, " cp.async.bulk.commit_group;");
    strcat(constraints, ",~{memory}");
    for (int i = 0; i < 2 + map->enc.rank; i++)
        if (!args[i])
            return false;
    tci_cg_call_asm(cg, LLVMVoidTypeInContext(cg->llctx), types, args, 2 + map->enc.rank, text,
                    constraints);
    return true;
}

/* cp.async.bulk.wait_group.read N; or, with `read` false, until the stores are done. */
bool tci_cg_gen_bulk_wait(Codegen *cg, int pending, bool read)
{
    char text[64];
    snprintf(text, sizeof text, "cp.async.bulk.wait_group%s %d;", read ? ".read" : "", pending);
    tci_cg_call_asm(cg, LLVMVoidTypeInContext(cg->llctx), NULL, NULL, 0, text, "~{memory}");
    return true;
}

/* Spins on mbarrier.try_wait.parity (which itself waits a while in hardware) until the
 * barrier's phase of that parity has completed. */
static bool gen_wait(Codegen *cg, LLVMValueRef barrier, LLVMValueRef parity)
{
    LLVMTypeRef i32 = tci_cg_i32_type(cg);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(cg->llctx, cg->function, "mbar.wait");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cg->llctx, cg->function, "mbar.done");
    LLVMBuildBr(cg->builder, loop);
    LLVMPositionBuilderAtEnd(cg->builder, loop);
    LLVMValueRef args[2] = {barrier, parity};
    LLVMTypeRef types[2] = {i32, i32};
    LLVMValueRef ready =
        tci_cg_call_asm(cg, i32, types, args, 2,
                        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; "
                        "selp.u32 $0, 1, 0, p; }",
                        "=r,r,r,~{memory}");
    LLVMValueRef ok = LLVMBuildICmp(cg->builder, LLVMIntNE, ready, tci_cg_i32(cg, 0), "");
    LLVMBuildCondBr(cg->builder, ok, done, loop);
    LLVMPositionBuilderAtEnd(cg->builder, done);
    return true;
}

/* Arrives on the barrier at the same offset in each of the cluster's first `blocks` blocks
 * (its own among them): mapa gives the address in block q's shared memory. The arrive keeps
 * the default .release.cta semantics, as CUTLASS's cluster barriers do: what it announces
 * (the stage's products are done) the wgmma wait before it ensured, and .release.cluster costs
 * a memory barrier that waits for every access in flight (ERRBAR: on an H100 the seed layer
 * ran 0.43 ms with it against 0.18 without clusters). */
static bool gen_cluster_arrive(Codegen *cg, LLVMValueRef barrier, int64_t blocks)
{
    LLVMTypeRef i32 = tci_cg_i32_type(cg), types[2] = {i32, i32};
    for (int64_t q = 0; q < blocks; q++) {
        LLVMValueRef args[2] = {barrier, tci_cg_i32(cg, (int)q)};
        tci_cg_call_asm(cg, LLVMVoidTypeInContext(cg->llctx), types, args, 2,
                        "{ .reg .b32 remote; mapa.shared::cluster.u32 remote, $0, $1; "
                        "mbarrier.arrive.shared::cluster.b64 _, [remote]; }",
                        "r,r,~{memory}");
    }
    return true;
}

bool tci_cg_gen_mbarrier(Codegen *cg, const Stmt *s)
{
    LLVMValueRef barrier = barrier_address(cg, s->mbarrier.barrier, s->mbarrier.index);
    if (!barrier)
        return false;
    LLVMTypeRef i32 = tci_cg_i32_type(cg), types[2] = {i32, i32};
    LLVMValueRef args[2] = {barrier, tci_cg_i32(cg, s->mbarrier.value)};
    LLVMTypeRef void_type = LLVMVoidTypeInContext(cg->llctx);
    switch (s->mbarrier.op) {
    case MBARRIER_INIT:
        /* The fence makes the initialized barrier visible to the copy engine. */
        tci_cg_call_asm(cg, void_type, types, args, 2,
                        "mbarrier.init.shared::cta.b64 [$0], $1; "
                        "fence.mbarrier_init.release.cluster;",
                        "r,r,~{memory}");
        return true;
    case MBARRIER_EXPECT_TX:
        tci_cg_call_asm(cg, void_type, types, args, 2,
                        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}");
        return true;
    case MBARRIER_ARRIVE:
        if (s->mbarrier.value > 1)
            return gen_cluster_arrive(cg, barrier, s->mbarrier.value);
        tci_cg_call_asm(cg, void_type, types, args, 1, "mbarrier.arrive.shared::cta.b64 _, [$0];",
                        "r,~{memory}");
        return true;
    case MBARRIER_WAIT: {
        LLVMValueRef parity = tci_cg_gen_expr(cg, s->mbarrier.parity);
        return parity && gen_wait(cg, barrier, parity);
    }
    }
    return tci_cg_fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown mbarrier operation %d",
                       (int)s->mbarrier.op);
}
