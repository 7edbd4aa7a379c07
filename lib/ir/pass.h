/*
 * What a pass is: a function from a PrimFunc to the same PrimFunc, rewritten in place (its
 * nodes are immutable and live in its arena, so a pass builds new statements and swaps
 * them in). Every pass has this one signature, so that the pipeline, --print-after and
 * tcc-opt run any of them from one table (driver/passes.c).
 */
#ifndef TCI_IR_PASS_H
#define TCI_IR_PASS_H

#include "ir/ir.h"

/* What a pass may read besides the function. */
typedef struct PassContext {
    tcc_context *ctx; /* receives the message of a failure */
    tcc_arch arch;
    int auto_unroll_max_step; /* unroll: TVM's tir.UnrollLoop auto_max_step */
    /* The scheduled function being lowered and the kernel's parameters, for schedule_ops,
     * the pass that builds the loop nest; NULL when the input is loop IR already (tcc-opt). */
    tcc_func *schedule;
    int nparam;
    tcc_tensor *const *params;
} PassContext;

typedef tcc_status (*PassFn)(const PassContext *pc, PrimFunc *func);

#endif
