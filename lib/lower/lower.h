/*
 * Lowering: from a scheduled function to a kernel in the loop IR.
 *
 * tci_lower (lower.c) is the whole pipeline, in one function that reads top to bottom:
 * the schedule-level steps (inline, bound inference, schedule_ops) build the loop IR,
 * then each pass in passes/ maps the kernel to a new kernel.
 */
#ifndef TCC_LOWER_H
#define TCC_LOWER_H

#include "te/te.h"

/* Lowers func's schedule into a kernel allocated in `arena`, running every pass of
 * tcc_pass_names() in order and calling options->print_callback after the passes
 * named by options->print_after_pass. */
tcc_status tci_lower(tcc_func *func, int nparam, tcc_tensor *const *params,
                     const tcc_build_options *options, Arena *arena, PrimFunc **out);
tcc_context *tci_func_context(tcc_func *func);

/* State shared by the schedule-level steps of one lowering. */
typedef struct Lowering {
    Func *func;
    tcc_context *ctx;
    Arena *arena; /* the kernel's */
    PrimFunc *kernel;
    int nrange; /* schedule_ops: the range of every loop of the schedule */
    VarRange *ranges;
} Lowering;

/* passes/inline.c: substitutes compute_inline stages into their readers. */
tcc_status tci_pass_inline(Lowering *lw);
/* passes/bound_infer.c: the range of every axis of every stage. */
tcc_status tci_pass_bound_infer(Lowering *lw);
/* passes/schedule_ops.c: the loop nest of the schedule, tensorized regions included. */
tcc_status tci_pass_schedule_ops(Lowering *lw);

/* Interval analysis shared by bound inference and tensorize (bound_infer.c). An
 * expression's variables are loop variables of the chain of stages from `consumer` up
 * to the root; `relaxed(var)` says which of them range over their whole loop. */
typedef struct Region {
    Expr *min[TCI_MAX_DIMS];
    int64_t extent[TCI_MAX_DIMS];
} Region;
typedef struct Relaxation {
    int count;
    Var **vars;
    int64_t *extent; /* the loop extent of each relaxed variable */
} Relaxation;
/* The value of a stage's root axis (its min plus its offset) in terms of the leaf loops. */
Expr *tci_axis_value(Lowering *lw, const Stage *stage, const IterVar *root);
/* The offset of any axis of a stage from its start, in terms of the leaf loops. */
Expr *tci_axis_offset(Lowering *lw, const Stage *stage, const IterVar *axis);
/* Index expressions of an access made in `stage`'s body, in terms of loop variables. */
tcc_status tci_access_region(Lowering *lw, const Stage *stage, int nindex, Expr *const *index,
                             const Relaxation *relax, Region *out);

/* ---- loop IR passes: kernel -> kernel ------------------------------------------------- */

tcc_status tci_pass_flatten(tcc_context *ctx, PrimFunc *kernel);
tcc_status tci_pass_simplify(tcc_context *ctx, PrimFunc *kernel);
tcc_status tci_pass_unroll(tcc_context *ctx, PrimFunc *kernel, int auto_max_step);
tcc_status tci_pass_vectorize(tcc_context *ctx, PrimFunc *kernel);
tcc_status tci_pass_thread_sync(tcc_context *ctx, PrimFunc *kernel);

#endif
