/*
 * fold_grid: a grid of more blocks along blockIdx.y or blockIdx.z than the device launches
 * (65,535: a matrix product of four million rows, a batch of 70,000) runs along blockIdx.x,
 * whose limit is 2^31 - 1. The launch becomes Gx * Gy * Gz blocks along x, and each block
 * recovers the indices it had from its number b:
 *
 *   launch blockIdx.z in 0..Gz {              launch blockIdx.x in 0..Gx * Gy * Gz {
 *     launch blockIdx.y in 0..Gy {     ->       body[x := b % Gx, y := b / Gx % Gy,
 *       launch blockIdx.x in 0..Gx {                 z := b / (Gx * Gy)]
 *         body                                }
 *
 * x fastest, as the hardware numbers a grid's blocks, so the blocks run in the order they
 * did and a schedule's block order (its L2 reuse) is kept. A cluster along blockIdx.x stays
 * one: its C blocks divide Gx, so they are consecutive numbers that share y and z. A grid
 * within the limits is left as it is (so is a persistent one, one dimension already).
 *
 * Runs after persistent_grid. Assumes the block launches enclose every use of their indices
 * (schedule_ops puts them outermost); refuses clusters along y or z, which would no longer
 * be clusters of the launch.
 */
#include "passes/passes.h"

#include "target/target.h"

typedef struct Fold {
    Var *block_var[3];
} Fold;

/* The body of every block launch, its index noted; anything else rebuilt as it was. */
static Stmt *strip_block_launch(Rewriter *rw, Stmt *s)
{
    if (s->kind != STMT_FOR || s->loop.kind != FOR_THREAD || s->loop.tag > TCC_BLOCK_Z)
        return NULL;
    Fold *fold = rw->user;
    fold->block_var[s->loop.tag] = s->loop.var;
    return tci_rewrite_stmt(rw, s->loop.body);
}

static Expr *binary(Arena *arena, ExprKind kind, Expr *a, int64_t b)
{
    return tci_ir_binary(arena, kind, a, tci_ir_int(arena, b));
}

tcc_status tci_pass_fold_grid(const PassContext *pc, PrimFunc *func)
{
    int64_t folded[6];
    if (!tci_target_fold_launch(func->launch, folded))
        return TCC_OK;
    int axis = tci_cluster_axis(func);
    if (axis > 0)
        return tci_fail(pc->ctx, TCC_ERROR_SCHEDULE,
                        "fold_grid: the %lld blocks along %s exceed the device's %lld, and "
                        "clusters along it cannot be folded onto blockIdx.x",
                        (long long)func->launch[axis], tci_thread_tag_name((tcc_thread_tag)axis),
                        (long long)tci_device_limits.grid_dim[axis]);
    Arena *arena = func->arena;
    Fold fold = {{NULL}};
    Rewriter rw = {.arena = arena, .stmt = strip_block_launch, .user = &fold};
    Stmt *body = tci_rewrite_stmt(&rw, func->body);

    Var *block = tci_prim_func_new_var(func, tci_thread_tag_name(TCC_BLOCK_X));
    Var *vars[3];
    Expr *map[3];
    int n = 0;
    int64_t below = 1;
    for (int d = 0; d < 3; d++) {
        Expr *index = tci_ir_var(arena, block);
        if (below > 1)
            index = binary(arena, EXPR_DIV, index, below);
        if (d < 2)
            index = binary(arena, EXPR_MOD, index, func->launch[d]);
        if (fold.block_var[d] && tci_stmt_allocates_region_of(body, fold.block_var[d]))
            return tci_fail(pc->ctx, TCC_ERROR_SCHEDULE,
                            "fold_grid: a buffer's region starts at %s, which folding would "
                            "replace",
                            fold.block_var[d]->name);
        if (fold.block_var[d]) {
            vars[n] = fold.block_var[d];
            map[n++] = index;
        }
        below *= func->launch[d];
    }
    body = tci_stmt_substitute(arena, body, n, vars, map);
    func->body = tci_stmt_thread(arena, block, TCC_BLOCK_X, folded[0], body);
    for (int d = 0; d < 3; d++) {
        func->thread_var[d] = d == 0 ? block : NULL;
        func->launch[d] = folded[d];
    }
    return TCC_OK;
}
