/*
 * The implicit GEMM as a template: every field of tcc_gemm_schedule is a knob, each list
 * starting with 0 ("chosen": the library's choice given the others), so that point 0 of the
 * space is the default schedule and every point names only what it fixes. Values the target
 * cannot run (wgmma before sm_90a, mma.sync before sm_80, shapes the input type has no
 * instruction for) are left out of the lists; combinations that do not fit together (too
 * much shared memory, passes that do not divide) are refused by tcc's own validation, which
 * the measurer records as COMPILE_HOST without running anything.
 *
 * Many points build one kernel: a knob the kernel's intrinsic does not have, or one whose
 * value is what "chosen" chooses. gemm_redundant_knobs names them, so that the tuners
 * propose each kernel once (tcc_config_space_canonical).
 */
#include "tune/templates.h"

#include "driver/driver.h"
#include "ops/gemm.h"
#include "support/context.h"

#include <stddef.h>
#include <string.h>

enum { MAX_VALUES = 16 };

typedef struct Values {
    int count;
    int64_t v[MAX_VALUES];
} Values;

static Values values_of(int count, const int64_t *v)
{
    Values out = {0};
    for (int i = 0; i < count && i < MAX_VALUES; i++)
        out.v[out.count++] = v[i];
    return out;
}

#define VALUES(...)                                                                                \
    values_of(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__})

static tcc_dtype input_type(const tcc_workload *w)
{
    return w->kind == TCC_WORKLOAD_MATMUL ? w->matmul.input_type : w->conv2d.input_type;
}

/* 0, then each tile shape of the family (wgmma's m64nNk16, or the warp-level ones) that some
 * instruction takes for the input type (its position + 1 in tcc_mma_shape_at's list). */
static Values mma_shapes(tcc_dtype input, bool warpgroup)
{
    Values out = {.count = 1};
    for (int i = 0; i < tcc_mma_shape_count() && out.count < MAX_VALUES; i++) {
        tcc_mma_shape shape = tcc_mma_shape_at(i);
        if (tcc_mma_shape_takes(shape, input) && (shape.m == 64) == warpgroup)
            out.v[out.count++] = i + 1;
    }
    return out;
}

static Values intrinsics(tcc_arch arch)
{
    if (arch >= TCC_SM_90A)
        return VALUES(TCC_GEMM_INTRINSIC_AUTO, TCC_GEMM_WMMA, TCC_GEMM_MMA_SYNC, TCC_GEMM_WGMMA);
    if (arch >= TCC_SM_80)
        return VALUES(TCC_GEMM_INTRINSIC_AUTO, TCC_GEMM_WMMA, TCC_GEMM_MMA_SYNC);
    return VALUES(TCC_GEMM_INTRINSIC_AUTO, TCC_GEMM_WMMA);
}

typedef struct Knobs {
    tcc_config *cfg;
    tcc_status status;
    int defined; /* knobs defined so far */
} Knobs;

/* Defines (or reads) one knob; the first failure is kept. */
static int knob(Knobs *k, const char *name, Values values)
{
    int64_t value = 0;
    if (k->status == TCC_OK)
        k->status = tcc_define_knob(k->cfg, name, values.count, values.v, &value);
    k->defined++;
    return (int)value;
}

/* Every knob, defined in one order whatever the arch takes, so that the space is the same list
 * of knobs on every target but those sm_90a adds. */
typedef struct GemmKnobs {
    int intrinsic, mma_shape, wgmma_shape;
    int block_row_warps, block_col_warps, warp_row_tiles, warp_col_tiles;
    int passes, fused, policy, column_major, stages, smem, split_k;
    int wgmma_steps, copy, producer, store, grid, cluster, consumers;
} GemmKnobs;

/* Each knob's field, in the order define_knobs defines them (a knob's bit in
 * gemm_redundant_knobs). */
static const size_t knob_fields[] = {
    offsetof(GemmKnobs, intrinsic),
    offsetof(GemmKnobs, mma_shape),
    offsetof(GemmKnobs, block_row_warps),
    offsetof(GemmKnobs, block_col_warps),
    offsetof(GemmKnobs, warp_row_tiles),
    offsetof(GemmKnobs, warp_col_tiles),
    offsetof(GemmKnobs, passes),
    offsetof(GemmKnobs, fused),
    offsetof(GemmKnobs, policy),
    offsetof(GemmKnobs, column_major),
    offsetof(GemmKnobs, stages),
    offsetof(GemmKnobs, smem),
    offsetof(GemmKnobs, split_k),
    offsetof(GemmKnobs, wgmma_shape),
    offsetof(GemmKnobs, wgmma_steps),
    offsetof(GemmKnobs, copy),
    offsetof(GemmKnobs, producer),
    offsetof(GemmKnobs, store),
    offsetof(GemmKnobs, grid),
    offsetof(GemmKnobs, cluster),
    offsetof(GemmKnobs, consumers),
};
enum { KNOB_COUNT = sizeof knob_fields / sizeof knob_fields[0] };

static int *knob_field(GemmKnobs *g, int knob)
{
    return (int *)((char *)g + knob_fields[knob]);
}

static GemmKnobs define_knobs(Knobs *k, const tcc_workload *w, tcc_arch arch)
{
    GemmKnobs g = {0};
    tcc_dtype input = input_type(w);
    g.intrinsic = knob(k, "intrinsic", intrinsics(arch));
    g.mma_shape = knob(k, "mma_shape", mma_shapes(input, false));
    g.block_row_warps = knob(k, "block_row_warps", VALUES(0, 1, 2, 4));
    g.block_col_warps = knob(k, "block_col_warps", VALUES(0, 1, 2, 4));
    g.warp_row_tiles = knob(k, "warp_row_tiles", VALUES(0, 1, 2, 4));
    g.warp_col_tiles = knob(k, "warp_col_tiles", VALUES(0, 1, 2, 4));
    g.passes = knob(k, "num_total_passes", VALUES(0, 1, 2, 4));
    g.fused = knob(k, "num_fused_passes", VALUES(0, 1, 2, 4));
    g.policy = knob(k, "policy", VALUES(TCC_MMA_PASS_ORDER, TCC_MMA_BLOCK_ORDER));
    g.column_major = knob(k, "column_major_blocks", VALUES(0, 1));
    g.stages = knob(k, "stages", VALUES(0, 1, 2, 3, 4, 6));
    g.smem = knob(k, "smem_layout", VALUES(TCC_SMEM_AUTO, TCC_SMEM_PADDED, TCC_SMEM_SWIZZLED));
    g.split_k = knob(k, "split_k", VALUES(0, 1, 2, 4, 8));
    if (arch >= TCC_SM_90A) {
        /* What only wgmma's kernels have: a knob elsewhere would only repeat points. */
        g.wgmma_shape = knob(k, "wgmma_shape", mma_shapes(input, true));
        g.wgmma_steps = knob(k, "wgmma_steps", VALUES(0, 1, 2));
        g.copy =
            knob(k, "copy", VALUES(TCC_GEMM_COPY_AUTO, TCC_GEMM_COPY_THREADS, TCC_GEMM_COPY_BULK));
        g.producer = knob(
            k, "producer",
            VALUES(TCC_GEMM_PRODUCER_AUTO, TCC_GEMM_PRODUCER_NONE, TCC_GEMM_PRODUCER_WARPGROUP));
        g.store = knob(k, "store",
                       VALUES(TCC_GEMM_STORE_AUTO, TCC_GEMM_STORE_SHARED, TCC_GEMM_STORE_REGISTERS,
                              TCC_GEMM_STORE_BULK));
        g.grid = knob(k, "grid",
                      VALUES(TCC_GEMM_GRID_AUTO, TCC_GEMM_GRID_TILES, TCC_GEMM_GRID_PERSISTENT));
        g.cluster = knob(k, "cluster", VALUES(0, 1, 2));
        g.consumers = knob(k, "consumers",
                           VALUES(TCC_GEMM_CONSUMERS_AUTO, TCC_GEMM_CONSUMERS_COOPERATIVE,
                                  TCC_GEMM_CONSUMERS_PINGPONG));
    }
    return g;
}

static void set_shape(tcc_gemm_schedule *s, int position)
{
    if (position <= 0)
        return;
    tcc_mma_shape m = tcc_mma_shape_at(position - 1);
    s->mma_m = m.m, s->mma_n = m.n, s->mma_k = m.k;
}

/* The knobs as a schedule. Knobs that the kernel's intrinsic does not have are left to the
 * library (0), so that a point differs from another only in what its kernel has: wgmma's
 * kernels take a warpgroup's shape, no warp tiles and swizzled tiles; the others no copy,
 * producer, store, grid or cluster choice. Which intrinsic "chosen" means is the default
 * schedule's. */
static tcc_gemm_schedule schedule_of(const GemmKnobs *g, tcc_gemm_intrinsic chosen)
{
    tcc_gemm_schedule s;
    tcc_gemm_schedule_init(&s);
    tcc_gemm_intrinsic intrinsic = g->intrinsic ? (tcc_gemm_intrinsic)g->intrinsic : chosen;
    bool wgmma = intrinsic == TCC_GEMM_WGMMA;
    s.intrinsic = (tcc_gemm_intrinsic)g->intrinsic;
    s.block_row_warps = g->block_row_warps;
    s.block_col_warps = g->block_col_warps;
    s.num_total_passes = g->passes;
    /* Fused passes that do not divide the passes are the library's choice instead. */
    s.num_fused_passes = g->passes && g->fused && g->passes % g->fused ? 0 : g->fused;
    s.policy = (tcc_mma_policy)g->policy;
    s.column_major_blocks = g->column_major;
    s.stages = g->stages;
    s.split_k = g->split_k;
    if (!wgmma) {
        set_shape(&s, g->mma_shape);
        s.warp_row_tiles = g->warp_row_tiles;
        s.warp_col_tiles = g->warp_col_tiles;
        s.smem_layout = (tcc_smem_layout)g->smem;
        return s;
    }
    set_shape(&s, g->wgmma_shape);
    s.wgmma_steps = g->wgmma_steps == 2 && g->stages && g->stages < 3 ? 1 : g->wgmma_steps;
    s.copy = (tcc_gemm_copy)g->copy;
    s.producer = (tcc_gemm_producer)g->producer;
    s.store = (tcc_gemm_store)g->store;
    s.grid = (tcc_gemm_grid)g->grid;
    s.cluster = g->cluster;
    s.consumers = (tcc_gemm_consumers)g->consumers;
    return s;
}

/* The schedule the library completes `given` to for the workload (NULL: the default) on a GPU
 * of `multiprocessors` (0: the target's). */
static tcc_status complete(tcc_context *ctx, const tcc_workload *w, tcc_arch arch,
                           int multiprocessors, const tcc_gemm_schedule *given,
                           tcc_gemm_schedule *out)
{
    bool matmul = w->kind == TCC_WORKLOAD_MATMUL;
    GemmPlan plan;
    tcc_status status = tci_gemm_plan(ctx, matmul ? tci_matmul_gemm : tci_conv2d_gemm,
                                      matmul ? (const void *)&w->matmul : (const void *)&w->conv2d,
                                      arch, multiprocessors, given, &plan);
    if (status == TCC_OK)
        *out = plan.schedule;
    return status;
}

/* Every field the library completes, as numbers (bool and enum fields have no common size). */
enum { SCHEDULE_FIELDS = 23 };
static void schedule_fields(const tcc_gemm_schedule *s, int out[SCHEDULE_FIELDS])
{
    int fields[SCHEDULE_FIELDS] = {s->mma_m,
                                   s->mma_n,
                                   s->mma_k,
                                   s->block_row_warps,
                                   s->block_col_warps,
                                   s->warp_row_tiles,
                                   s->warp_col_tiles,
                                   s->num_total_passes,
                                   s->num_fused_passes,
                                   (int)s->policy,
                                   s->column_major_blocks,
                                   s->stages,
                                   (int)s->smem_layout,
                                   (int)s->intrinsic,
                                   s->split_k,
                                   s->wgmma_steps,
                                   (int)s->copy,
                                   (int)s->producer,
                                   (int)s->store,
                                   (int)s->grid,
                                   s->grid_blocks,
                                   s->cluster,
                                   (int)s->consumers};
    memcpy(out, fields, sizeof fields);
}

static bool same_schedule(const tcc_gemm_schedule *a, const tcc_gemm_schedule *b)
{
    int x[SCHEDULE_FIELDS], y[SCHEDULE_FIELDS];
    schedule_fields(a, x);
    schedule_fields(b, y);
    return memcmp(x, y, sizeof x) == 0;
}

/* The knobs that can go to their first value (0: "chosen") with the schedule the library
 * completes unchanged, together: a knob the kernel's intrinsic does not have, or one
 * set to what would be chosen. Settings that differ only in what the library then reads the
 * same (the MMA order of a wgmma kernel) are not seen here; the measurer measures their one
 * kernel once all the same. The schedules are completed for the target's multiprocessors:
 * the space is made for an arch, not a GPU (tcc_config_space_create), so on a part with fewer
 * a knob set to what the target's count would choose (the grid, the store) may be called
 * redundant where the GPU's count chooses otherwise. */
uint64_t tci_template_gemm_redundant_knobs(tcc_context *ctx, tcc_config *cfg, const tcc_workload *w,
                                           tcc_arch arch)
{
    Knobs k = {cfg, TCC_OK, 0};
    GemmKnobs g = define_knobs(&k, w, arch);
    tcc_gemm_schedule chosen, full, trial;
    tcc_gemm_schedule_init(&chosen);
    if (k.status != TCC_OK || complete(ctx, w, arch, 0, NULL, &chosen) != TCC_OK)
        return 0;
    tcc_gemm_schedule given = schedule_of(&g, chosen.intrinsic);
    if (complete(ctx, w, arch, 0, &given, &full) != TCC_OK)
        return 0;
    uint64_t redundant = 0;
    /* Until none moves: one knob may go only once another has (passes, then fused ones). */
    for (bool moved = true; moved;) {
        moved = false;
        for (int i = 0; i < KNOB_COUNT && i < k.defined; i++) {
            int *field = knob_field(&g, i), value = *field;
            if (!value)
                continue;
            *field = 0;
            given = schedule_of(&g, chosen.intrinsic);
            if (complete(ctx, w, arch, 0, &given, &trial) == TCC_OK &&
                same_schedule(&trial, &full)) {
                redundant |= 1ull << i;
                moved = true;
            } else {
                *field = value;
            }
        }
    }
    return redundant;
}

tcc_status tci_template_gemm(tcc_context *ctx, tcc_config *cfg, const tcc_workload *w,
                             tcc_arch arch, const tcc_build_options *options, tcc_kernel **kernel)
{
    if (!w || (w->kind != TCC_WORKLOAD_CONV2D && w->kind != TCC_WORKLOAD_MATMUL))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "template gemm: the workload must be a conv2d or a matmul");
    Knobs k = {cfg, TCC_OK, 0};
    GemmKnobs g = define_knobs(&k, w, arch);
    if (k.status != TCC_OK || tcc_config_is_defining(cfg))
        return k.status;
    bool matmul = w->kind == TCC_WORKLOAD_MATMUL;
    /* The caller's options read as far as their size reaches (an older caller's are shorter). */
    tcc_build_options build;
    tcc_status status = tci_build_options(ctx, options, &build);
    if (status != TCC_OK)
        return status;
    build.arch = arch;
    tcc_gemm_schedule chosen;
    tcc_gemm_schedule_init(&chosen);
    status = complete(ctx, w, arch, build.multiprocessors, NULL, &chosen);
    if (status != TCC_OK)
        return status;
    tcc_gemm_schedule s = schedule_of(&g, chosen.intrinsic);
    return matmul ? tcc_matmul_compile(ctx, &w->matmul, &s, &build, kernel)
                  : tcc_conv2d_compile(ctx, &w->conv2d, &s, &build, kernel);
}
