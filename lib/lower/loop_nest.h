/* Shared by schedule_ops.c (the loop nest) and tensorize.c (the tensor-core regions). */
#ifndef TCI_LOWER_LOOP_NEST_H
#define TCI_LOWER_LOOP_NEST_H

#include "lower/lower.h"

/* The loop nest that produces `stage`, with the stages computed inside it. */
tcc_status tci_build_stage(Lowering *lw, const Stage *stage, Stmt **out);

/* The bulk copies that fill a stage marked tcc_storage_bulk_copy (bulk_copy.c). */
tcc_status tci_build_bulk_copy(Lowering *lw, const Stage *stage, Stmt **out);

/* The bulk stores that replace leaf `at` of a stage marked tcc_bulk_store and the loops inside
 * it, after a barrier, from the block's first thread; in a persistent grid, each warpgroup's
 * block of the tile from its own first thread, after its own barrier (bulk_copy.c). */
tcc_status tci_build_bulk_store(Lowering *lw, const Stage *stage, int at, Stmt **out);
/* Whether `stage` is the shared tile a bulk store reads; what goes before its writes (`src`
 * the stage): the issuing threads wait until their last stores have read the tile, then the
 * writers meet at their barrier. */
bool tci_bulk_store_source(const Lowering *lw, const Stage *stage);
Stmt *tci_bulk_store_wait(Lowering *lw, const Stage *src);

/* Replaces leaf `at` of `stage` and the loops inside it by a tensor-core operation;
 * `init` selects the initialization of a reduction (fill_fragment) over the update. */
tcc_status tci_tensorize_stage(Lowering *lw, const Stage *stage, int at, bool init, Stmt **out);

/* Replaces leaf `at` of `stage` and the loop inside it, an m x n nest around `body` that
 * reads a wgmma accumulator element by element, by each thread's loop over the accumulator
 * registers it holds (TCC_WGMMA_ELEMENTS). */
tcc_status tci_tensorize_elements(Lowering *lw, const Stage *stage, int at, Stmt *body, Stmt **out);

#endif
