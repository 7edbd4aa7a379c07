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
/* inject_virtual_thread.c: loops bound to vthread go (TVM's InjectVirtualThread): each
 * statement that depends on the virtual thread is replicated per virtual thread as deep in the
 * nest as it can be, and register buffers that depend on it get a slice per virtual thread.
 * Assumes flattened accesses and constant extents; refuses tensor-core and asynchronous
 * statements inside a virtual thread. */
tcc_status tci_pass_inject_virtual_thread(const PassContext *pc, PrimFunc *func);
/* vectorize.c: loops marked vectorized whose bodies copy contiguous runs become vector
 * accesses; anything else stays a scalar loop. Assumes flattened accesses. */
tcc_status tci_pass_vectorize(const PassContext *pc, PrimFunc *func);
/* persistent_grid.c: a pipelined loop marked persistent(P) runs the block's tiles on P blocks,
 * carrying on from one tile into the next: one loop over every step of every tile of the
 * block, the statements around it at each tile's first and last step. Assumes flattened
 * accesses, launches, allocations and sequences around the loop, bulk copies first in it and
 * no shared memory beside it; refuses any other. With turns(T) (ping-pong), the rounds come in
 * whole turns and the loop says its tile_steps. */
tcc_status tci_pass_persistent_grid(const PassContext *pc, PrimFunc *func);
/* fold_grid.c: a grid of more blocks along blockIdx.y or .z than the device launches runs
 * along blockIdx.x, each block's indices recovered from its number (x fastest). Assumes the
 * block launches enclose every use of their indices; refuses clusters along y or z. */
tcc_status tci_pass_fold_grid(const PassContext *pc, PrimFunc *func);
/* software_pipeline.c: a loop marked stages(S) gets S buffers of each shared allocation of
 * its body, a prologue issuing the copies of its first S - 1 iterations, and a steady state
 * that waits for iteration k's copies, issues those of k + S - 1 and computes k; with cp.async
 * groups where the target has them, mbarriers for bulk copies, and a producer loop of its own
 * for a warp_specialized loop; with turns(T), each consumer's tile releases its own stages
 * and waits its turn at named barriers. Assumes flattened accesses and a body that
 * allocates, copies, then reads; refuses any other. */
tcc_status tci_pass_software_pipeline(const PassContext *pc, PrimFunc *func);
/* inject_async_copy.c: the copies a cp.async group commits (stores to shared memory, of 4, 8
 * or 16 bytes, of global loads, zero where a condition fails) become cp.async. Assumes
 * flattened, vectorized accesses; leaves any other store as it is. */
tcc_status tci_pass_inject_async_copy(const PassContext *pc, PrimFunc *func);
/* unroll.c: loops marked unrolled, and innermost constant loops of at most
 * pc->auto_unroll_max_step steps, replaced by copies of their body. Assumes nothing. */
tcc_status tci_pass_unroll(const PassContext *pc, PrimFunc *func);
/* prefetch_fragments.c: in a pipelined loop of several groups of tensor-core passes, each
 * group's fragments load before the previous group's products, and the next step's first
 * before the last group's (fragments in two or three slots). Assumes unrolled groups; leaves
 * a loop of any other shape as it is. */
tcc_status tci_pass_prefetch_fragments(const PassContext *pc, PrimFunc *func);
/* swizzle_shared.c: accesses to swizzled shared tiles go where their elements live (an
 * xor of the index); ldmatrix's lanes are left to codegen. Assumes flattened accesses,
 * vectors of at most 16 bytes, and fragments loaded from swizzled tiles only by ldmatrix;
 * refuses any other. */
tcc_status tci_pass_swizzle_shared(const PassContext *pc, PrimFunc *func);
/* store_ring.c: an output tile marked a ring (Swizzle.ring) keeps that many column blocks,
 * written and stored one block at a time, each waiting for the copy engine to have read its
 * slot. Assumes swizzle_shared ran (the tile in blocks) and plan_shared runs after it; a
 * marked tile whose accesses are not the lowering's write-then-store sequence is unmarked. */
tcc_status tci_pass_store_ring(const PassContext *pc, PrimFunc *func);
/* thread_sync.c: __syncthreads() between conflicting accesses to shared memory. Assumes
 * every barrier it needs can be placed where all of the block's threads reach it, and
 * refuses the function otherwise. */
tcc_status tci_pass_thread_sync(const PassContext *pc, PrimFunc *func);
/* plan_shared.c: every shared allocation gets a byte offset in the kernel's dynamic shared
 * memory; allocations never live at once share bytes (the C tile reuses the stages of A and
 * B). Assumes thread_sync runs after it (it orders accesses to overlapping buffers). */
tcc_status tci_pass_plan_shared(const PassContext *pc, PrimFunc *func);
/* wgmma_zero_init.c: a fill of wgmma accumulators with zeros that products follow at once
 * becomes the first product's scale-d (it starts from zero where the fill ran). Assumes
 * unrolled products; leaves any other fill as it is. */
tcc_status tci_pass_wgmma_zero_init(const PassContext *pc, PrimFunc *func);
/* wgmma_sync.c: wgmma's fences, commits and waits, and a proxy fence before every barrier,
 * waits, around the wgmma products. Assumes the barriers are placed (after thread_sync). */
tcc_status tci_pass_wgmma_sync(const PassContext *pc, PrimFunc *func);
/* warp_specialize.c: the producer loop of a warp-specialized pipeline goes to a warpgroup
 * added to the block; the rest of the kernel's code to the others (the consumers), whose
 * block barriers become a named barrier of theirs; setmaxnreg moves registers to them.
 * Assumes it runs last (barriers placed, shared memory laid out), the consumer warpgroups
 * along threadIdx.y or .z, and the producer loop under thread launches and allocations only;
 * refuses any other. With turns(T), T consumers each run the one-warpgroup block on every T-th
 * tile. A function without a producer loop is left as it is. */
tcc_status tci_pass_warp_specialize(const PassContext *pc, PrimFunc *func);

#endif
