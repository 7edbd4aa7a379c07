/*
 * The loop-IR passes, one a file, in the order the pipeline runs them (driver/passes.c holds
 * the table). Each comment says what the pass does and what it assumes of its input.
 */
#ifndef TCI_PASSES_PASSES_H
#define TCI_PASSES_PASSES_H

#include "ir/pass.h"

/* flatten.c: multi-dimensional accesses become element offsets. Assumes every buffer's
 * shape and region start (min) are those the accesses were made against. */
tcc_status tci_pass_flatten(const PassContext *pc, PrimFunc *func);
/* simplify.c: arithmetic simplified with the ranges of the enclosing loops; loops of one
 * iteration replaced by their body. Assumes nothing. */
tcc_status tci_pass_simplify(const PassContext *pc, PrimFunc *func);
/* vectorize.c: loops marked vectorized whose bodies copy contiguous runs become vector
 * accesses; anything else stays a scalar loop. Assumes flattened accesses. */
tcc_status tci_pass_vectorize(const PassContext *pc, PrimFunc *func);
/* unroll.c: loops marked unrolled, and innermost constant loops of at most
 * pc->auto_unroll_max_step steps, replaced by copies of their body. Assumes nothing. */
tcc_status tci_pass_unroll(const PassContext *pc, PrimFunc *func);
/* thread_sync.c: __syncthreads() between conflicting accesses to shared memory. Assumes
 * every barrier it needs can be placed where all of the block's threads reach it, and
 * refuses the function otherwise. */
tcc_status tci_pass_thread_sync(const PassContext *pc, PrimFunc *func);

#endif
