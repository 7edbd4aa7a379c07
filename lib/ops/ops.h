/*
 * What the operators share: the limits of their descriptors, and the validation of the
 * element types and the fused epilogue, so that conv2d and matmul accept exactly the same
 * types and epilogues (ops/epilogue.c).
 */
#ifndef TCI_OPS_OPS_H
#define TCI_OPS_OPS_H

#include "support/context.h"
#include "tcc/ops.h"

#include <stdbool.h>
#include <stdint.h>

/* The n and c (k) blocks of the NHWCnc layout and of the blocked filter. */
#define TCI_LAYOUT_BLOCK 16

/* Every tensor must be indexable with 32-bit offsets: at most this many elements. */
#define TCI_MAX_TENSOR_ELEMENTS INT32_MAX

/* The epilogue a descriptor starts with: alpha 1, nothing else. */
tcc_epilogue tci_default_epilogue(void);
/* A conv2d's layouts by name, as errors and tcc_kernel_param (tcc/runtime.h) spell them:
 * "NHWC", "NCHW", "NHWCnc"; "KRSC", "KCRS", "blocked"; "unknown" for other values. */
const char *tci_conv2d_layout_name(tcc_layout layout);
const char *tci_conv2d_filter_layout_name(tcc_filter_layout layout);

/* Checks what a descriptor computes element by element, the same for every operator:
 *   the types: an input type and an accumulator the target's tensor cores offer
 *     (target/target.h); a float accumulator gives float32, float16 or bfloat16 outputs, an
 *     int32 one int32 or float32. Unknown dtype values are TCC_ERROR_INVALID_ARGUMENT,
 *     known but unsupported combinations TCC_ERROR_UNSUPPORTED;
 *   the epilogue: a known prologue op, alpha, beta and prologue_arg numbers (not NaN or
 *     infinite), clamp bounds not NaN and clamp_min <= clamp_max when clamping; integers in
 *     int32 for an int32 output. */
tcc_status tci_validate_elementwise(tcc_context *ctx, tcc_dtype input_type,
                                    tcc_dtype accumulate_type, tcc_dtype output_type,
                                    const tcc_epilogue *epilogue);

/* Whether the epilogue reads the residual tensor / the output's previous contents. */
bool tci_epilogue_reads_residual(const tcc_epilogue *epilogue);
bool tci_epilogue_reads_previous(const tcc_epilogue *epilogue);

#endif
