/*
 * Lowering: from a scheduled function to its loop nest, the first pass of the pipeline
 * (schedule_ops, TVM's ScheduleOps with InferBound before it). Its steps, a file each:
 *
 *   schedule_ops.c  the pass: parameters, thread variables, then the steps below in order
 *   inline.c        compute_inline stages substituted into their readers
 *   bound_infer.c   the range of every axis of every stage (and the interval analysis
 *                   tensorize shares)
 *   loop_nest.c     the loop nest of each stage, stages attached at their loops
 *   tensorize.c     a loop nest replaced by one tensor-core operation
 *   bulk_copy.c     a stage filled by the bulk tensor copy engine instead of a loop nest
 */
#ifndef TCI_LOWER_LOWER_H
#define TCI_LOWER_LOWER_H

#include "ir/pass.h"
#include "te/te.h"

/* schedule_ops.c: pc->schedule's loop nest into `func` (which brings its name and arena):
 * the kernel's parameters, launch shape and body. Fails when pc->schedule is NULL. */
tcc_status tci_pass_schedule_ops(const PassContext *pc, PrimFunc *func);

/* State shared by the schedule-level steps of one lowering. */
typedef struct Lowering {
    Func *func;
    tcc_context *ctx;
    Arena *arena;   /* the kernel's */
    PrimFunc *prim; /* the function being built */
    int nrange;     /* loop_nest: the range of every loop of the schedule */
    VarRange *ranges;
} Lowering;

/* Refuses a tensor given a buffer of more than 2^31 elements (kernels index memory with
 * 32-bit offsets), naming it (schedule_ops.c). */
tcc_status tci_lower_too_large(Lowering *lw, const char *tensor);
/* inline.c: substitutes compute_inline stages into their readers. */
tcc_status tci_lower_inline(Lowering *lw);
/* bound_infer.c: the range of every axis of every stage. */
tcc_status tci_lower_bound_infer(Lowering *lw);
/* loop_nest.c: the loop nest of the schedule, tensorized regions included. */
tcc_status tci_lower_loop_nest(Lowering *lw);

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

#endif
