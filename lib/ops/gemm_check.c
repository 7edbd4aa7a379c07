/*
 * The implicit GEMM's schedule checked: the knobs given and chosen (gemm_choose.c) against the
 * product, its types and the target arch, one line for what a schedule cannot be.
 */
#include "ops/gemm_tiles.h"

/* What wgmma needs of a schedule (tcc_gemm_intrinsic): sm_90a, one of its shapes, one MMA
 * tile a warpgroup, and swizzled operand tiles: k steps of 32, 64 or 128 bytes (its
 * descriptors' swizzle modes). */
static tcc_status check_wgmma(tcc_context *ctx, const GemmOperator *op, tcc_arch arch,
                              const tcc_gemm_schedule *s)
{
    char shape[32];
    const TensorShape *row =
        tci_target_family_shape(TENSOR_WGMMA, s->mma_m, s->mma_n, s->mma_k, op->input_type);
    if (!tci_target_arch_has_family(arch, TENSOR_WGMMA))
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "schedule: wgmma needs sm_90a; the target is %s",
                        tci_target_arch_label(arch).text);
    if (!row || !tci_target_shape_takes(row, op->accumulate_type))
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "schedule: wgmma has no %s for %s inputs and %s accumulation",
                        tci_target_shape_name(s->mma_m, s->mma_n, s->mma_k, shape, sizeof shape),
                        tcc_dtype_name(op->input_type), tcc_dtype_name(op->accumulate_type));
    if (!tci_gemm_operands_readable(op))
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "schedule: wgmma reads %s operands k-major only: A row-major and B "
                        "column-major",
                        tcc_dtype_name(op->input_type));
    if (s->wgmma_steps < 1 || s->wgmma_steps > 2 || (s->wgmma_steps == 2 && s->stages < 3))
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule: wgmma_steps must be 1, or 2 with 3 stages or more; not %d with "
                        "%d stages",
                        s->wgmma_steps, s->stages);
    if (!tci_gemm_wgmma_tiles_possible(op, s))
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule: under wgmma a warpgroup's tiles lie along m (warp tiles Nx1) "
                        "and their accumulators take at most 128 registers a thread; not %dx%d "
                        "of %s",
                        s->warp_row_tiles, s->warp_col_tiles,
                        tci_target_shape_name(s->mma_m, s->mma_n, s->mma_k, shape, sizeof shape));
    /* A k-major tile's rows are the k step; an MN-major one lies in 128-byte column blocks. */
    int64_t size = (int64_t)tcc_dtype_size(op->input_type);
    int64_t k_row = (int64_t)s->num_total_passes * s->mma_k * size;
    if (s->smem_layout != TCC_SMEM_SWIZZLED || !tci_swizzle_takes_rows(k_row) || k_row > 128)
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule: wgmma needs swizzled tiles whose k step is 32, 64 or 128 "
                        "bytes; it is %lld bytes%s",
                        (long long)k_row,
                        s->smem_layout != TCC_SMEM_SWIZZLED ? ", not swizzled" : "");
    return TCC_OK;
}

/* Warps, tiles and passes between `least` and 64. */
static tcc_status check_knobs(tcc_context *ctx, const tcc_gemm_schedule *s, int least)
{
    const int knobs[6] = {s->block_row_warps, s->block_col_warps,  s->warp_row_tiles,
                          s->warp_col_tiles,  s->num_total_passes, s->num_fused_passes};
    for (int i = 0; i < 6; i++)
        if (knobs[i] < least || knobs[i] > 64)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "schedule: warps, tiles and passes must be between 1 and 64");
    return TCC_OK;
}

/* The numbers given, 0 (not given: chosen) or in range, before choosing the rest multiplies
 * and sums them; what is chosen is checked against the others after. */
static tcc_status check_given(tcc_context *ctx, const tcc_gemm_schedule *s)
{
    tcc_status status = check_knobs(ctx, s, 0);
    if (status != TCC_OK)
        return status;
    const struct {
        const char *name;
        int value, most;
    } given[] = {
        {"mma_m", s->mma_m, 256},
        {"mma_n", s->mma_n, 256},
        {"mma_k", s->mma_k, 256},
        {"stages", s->stages, TCC_MAX_GEMM_STAGES},
        {"split_k", s->split_k, TCC_MAX_SPLIT_K},
        {"wgmma_steps", s->wgmma_steps, 2},
        {"a persistent grid's blocks", s->grid_blocks, (int)tci_device_limits.grid_dim[0]},
        {"a cluster's blocks", s->cluster, TCC_MAX_CLUSTER_BLOCKS},
    };
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
        if (given[i].value < 0 || given[i].value > given[i].most)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "schedule: %s must be 1 to %d (or 0: chosen), not %d", given[i].name,
                            given[i].most, given[i].value);
    return TCC_OK;
}

tcc_status tci_gemm_complete_schedule(tcc_context *ctx, const GemmOperator *op, tcc_arch arch,
                                      tcc_gemm_schedule *s)
{
    tcc_status status = check_given(ctx, s);
    if (status != TCC_OK)
        return status;
    tci_gemm_choose_defaults(op, arch, s);
    status = tci_target_validate_shape(ctx, op->input_type, s->mma_m, s->mma_n, s->mma_k);
    if (status == TCC_OK)
        status = check_knobs(ctx, s, 1);
    if (status != TCC_OK)
        return status;
    if (s->num_total_passes % s->num_fused_passes != 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "schedule: num_fused_passes (%d) must divide num_total_passes (%d)",
                        s->num_fused_passes, s->num_total_passes);
    if ((int)s->policy < TCC_MMA_PASS_ORDER || s->policy > TCC_MMA_BLOCK_ORDER)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: unknown MMA policy");
    if (s->stages < 1 || s->stages > TCC_MAX_GEMM_STAGES)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: stages must be 1 to %d, not %d",
                        TCC_MAX_GEMM_STAGES, s->stages);
    if ((int)s->smem_layout < TCC_SMEM_DENSE || s->smem_layout > TCC_SMEM_SWIZZLED)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: unknown shared-memory layout");
    if (s->smem_layout == TCC_SMEM_SWIZZLED) {
        int64_t a_row, b_row;
        bool rows = tci_gemm_operands_swizzle(op, s, &a_row, &b_row);
        if (s->intrinsic == TCC_GEMM_WMMA)
            return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                            "schedule: swizzled tiles are read by ldmatrix or wgmma: they need the "
                            "mma_sync or wgmma intrinsic, not WMMA");
        if (!rows)
            return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                            "schedule: swizzled tiles need rows of a power of two of at least 32 "
                            "bytes; A's are %lld and B's %lld",
                            (long long)a_row, (long long)b_row);
    }
    if ((int)s->intrinsic < TCC_GEMM_WMMA || s->intrinsic > TCC_GEMM_WGMMA)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: unknown intrinsic");
    if (s->intrinsic != TCC_GEMM_WGMMA && s->wgmma_steps)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "schedule: wgmma_steps applies to the wgmma intrinsic only");
    if (s->intrinsic == TCC_GEMM_WGMMA) {
        tcc_status status = check_wgmma(ctx, op, arch, s);
        if (status != TCC_OK)
            return status;
    }
    if ((int)s->copy < TCC_GEMM_COPY_THREADS || s->copy > TCC_GEMM_COPY_BULK)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: unknown copy %d", (int)s->copy);
    if (s->copy == TCC_GEMM_COPY_BULK && !tci_target_arch(arch)->bulk_copy)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                        "schedule: bulk tensor copies need sm_90a; the target is %s",
                        tci_target_arch_label(arch).text);
    if (s->copy == TCC_GEMM_COPY_BULK && !tci_gemm_bulk_possible(op, arch, s))
        return tci_fail(
            ctx, TCC_ERROR_SCHEDULE,
            "schedule: bulk copies need wgmma, 2 stages and 2 k steps or more, k steps "
            "of 64 or 128 bytes and operands the copy engine can address (dense rows of a "
            "multiple of 16 bytes; a channels-last input, a KRSC filter, channels a "
            "multiple of the k step)");
    if ((int)s->producer < TCC_GEMM_PRODUCER_NONE || s->producer > TCC_GEMM_PRODUCER_WARPGROUP)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: unknown producer %d",
                        (int)s->producer);
    if (s->producer == TCC_GEMM_PRODUCER_WARPGROUP && !tci_gemm_producer_possible(arch, s))
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule: a producer warpgroup needs bulk copies (sm_90a) and the "
                        "block's warpgroups in one row or column, with room for one more");
    if ((int)s->store < TCC_GEMM_STORE_SHARED || s->store > TCC_GEMM_STORE_BULK)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: unknown store %d",
                        (int)s->store);
    if (s->store == TCC_GEMM_STORE_REGISTERS && !tci_gemm_registers_possible(op, s))
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule: storing from registers needs wgmma, 32-bit accumulators and "
                        "32 registers a thread to spare beside them");
    if (s->store == TCC_GEMM_STORE_BULK && !tci_gemm_bulk_store_possible(op, s))
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule: storing by the copy engine needs what storing from registers "
                        "needs, bulk copies, cooperative consumers, no split-K, and an output "
                        "whose rows run along n (NHWC, pointwise NCHW, a row-major matrix) in "
                        "multiples of 16 bytes, the block's in multiples of 128");
    if ((int)s->grid < TCC_GEMM_GRID_TILES || s->grid > TCC_GEMM_GRID_PERSISTENT)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: unknown grid %d", (int)s->grid);
    if (s->grid == TCC_GEMM_GRID_PERSISTENT && !tci_gemm_persistent_possible(s))
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule: a persistent grid needs bulk copies (sm_90a) and the epilogue "
                        "from registers (store registers or bulk)");
    if (s->grid == TCC_GEMM_GRID_PERSISTENT &&
        (s->grid_blocks < 1 || s->grid_blocks > tci_device_limits.grid_dim[0]))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "schedule: a persistent grid's blocks must be 1 to %lld, not %d",
                        (long long)tci_device_limits.grid_dim[0], s->grid_blocks);
    if ((int)s->consumers < TCC_GEMM_CONSUMERS_COOPERATIVE ||
        s->consumers > TCC_GEMM_CONSUMERS_PINGPONG)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "schedule: unknown consumers %d",
                        (int)s->consumers);
    if (s->consumers == TCC_GEMM_CONSUMERS_PINGPONG && !tci_gemm_pingpong_possible(s))
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule: ping-pong consumers need a producer warpgroup, a persistent "
                        "grid and a block of one warpgroup (block warps 1x1)");
    if (s->cluster < 1 || s->cluster > TCC_MAX_CLUSTER_BLOCKS)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "schedule: a cluster's blocks must be 1 to %d, not %d",
                        TCC_MAX_CLUSTER_BLOCKS, s->cluster);
    if (s->cluster > 1 && !tci_gemm_cluster_possible(op, arch, s, s->cluster))
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule: clusters of %d blocks need bulk copies (sm_90a), a persistent "
                        "grid with a producer warpgroup, and the %lld blocks along m a multiple "
                        "of it",
                        s->cluster, (long long)tci_ceil_div(op->m, tci_gemm_tiles(s).bm));
    char shape[32];
    if (s->intrinsic == TCC_GEMM_WMMA &&
        !tci_target_family_shape(TENSOR_WMMA, s->mma_m, s->mma_n, s->mma_k, op->input_type))
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED, "schedule: WMMA has no %s for %s inputs",
                        tci_target_shape_name(s->mma_m, s->mma_n, s->mma_k, shape, sizeof shape),
                        tcc_dtype_name(op->input_type));
    if (s->split_k < 1 || s->split_k > TCC_MAX_SPLIT_K)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "schedule: split_k must be 1 to %d, not %d", TCC_MAX_SPLIT_K, s->split_k);
    if (s->intrinsic == TCC_GEMM_MMA_SYNC) {
        const TensorShape *row = tci_gemm_mma_sync_row(op, s);
        char shape[32];
        if (!row)
            return tci_fail(
                ctx, TCC_ERROR_UNSUPPORTED,
                "schedule: mma.sync has no %s for %s inputs and %s accumulation",
                tci_target_shape_name(s->mma_m, s->mma_n, s->mma_k, shape, sizeof shape),
                tcc_dtype_name(op->input_type), tcc_dtype_name(op->accumulate_type));
        if ((int)arch < row->min_arch)
            return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                            "schedule: mma.sync needs sm_%d or newer; the target is %s",
                            row->min_arch, tci_target_arch_label(arch).text);
    }
    Tiles t = tci_gemm_tiles(s);
    const DeviceLimits *limits = &tci_device_limits;
    if (t.threads > limits->threads_per_block)
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule needs %lld threads per block (%d x %d warps); the limit is %lld",
                        (long long)t.threads, s->block_row_warps, s->block_col_warps,
                        (long long)limits->threads_per_block);
    int64_t bytes = tci_gemm_shared_bytes(op, t, s);
    const TargetArch *target = tci_target_arch(arch);
    if (bytes > target->max_shared_per_block)
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule needs %lld bytes of shared memory (a %lldx%lld block, k step "
                        "%lld, %d stages); %s allows %lld a block",
                        (long long)bytes, (long long)t.bm, (long long)t.bn, (long long)t.bk,
                        s->stages, target->name, (long long)target->max_shared_per_block);
    /* The slices there really are: whole k steps each, so a shallow product has fewer. */
    s->split_k = (int)tci_gemm_split(op, s).splits;
    return TCC_OK;
}
