/*
 * What the CPU references share (reference.c): both read elements and apply the epilogue
 * the same way, so a convolution and a matrix product are checked alike. The references
 * themselves are public (tcc.h): tcc_conv2d_reference (conv2d.c), tcc_matmul_reference
 * (matmul.c).
 */
#ifndef TCI_REFERENCE_REFERENCE_H
#define TCI_REFERENCE_REFERENCE_H

#include "ops/ops.h"

#include <stdbool.h>

/* Checks what a reference needs besides the descriptor: the tensors struct, both operands
 * (named `operand_names`, e.g. "input and filter"), the epilogue tensors it reads, `out`
 * when count > 0, and the positions (in 0..total-1; count == total when NULL). */
tcc_status tci_validate_reference_args(tcc_context *ctx, const char *operand_names,
                                       const tcc_epilogue *epilogue,
                                       const tcc_reference_tensors *tensors,
                                       const int64_t *positions, int64_t count, int64_t total,
                                       const double *out);

/* One element of an MMA operand (input, filter, A, B) as the tensor cores read it: float16
 * and bfloat16 from their bits, float32 rounded to tf32, int8 exactly. */
double tci_reference_operand(tcc_dtype type, const void *data, int64_t offset);

/* The two operands of a reference, with what reading them fast needs. */
typedef struct ReferenceOperands {
    tcc_dtype type;
    const void *a, *b; /* input and filter, or A and B */
    float *f16;        /* the value of every float16 bit pattern (float16 operands only) */
} ReferenceOperands;

/* Sets up the operands of `type`; tci_reference_operands_free releases them. */
tcc_status tci_reference_operands_init(tcc_context *ctx, ReferenceOperands *operands,
                                       tcc_dtype type, const void *a, const void *b);
void tci_reference_operands_free(ReferenceOperands *operands);

/* sum + a[a_offset + i*a_step] * b[b_offset + i*b_step] for i = 0..count-1, added one
 * product at a time in this order (the elements read as tci_reference_operand does). */
double tci_reference_dot(const ReferenceOperands *operands, int64_t a_offset, int64_t a_step,
                         int64_t b_offset, int64_t b_step, int64_t count, double sum);
/* One element of the output type (bias, residual, previous output), as stored. */
double tci_reference_value(tcc_dtype type, const void *data, int64_t offset);

/* The epilogue of the output at flat offset `flat` of output channel (column) `channel`,
 * given the sum of its products: the prologue, alpha, bias, beta * source, relu, clamp. */
double tci_reference_epilogue(const tcc_epilogue *epilogue, tcc_dtype output_type,
                              const tcc_reference_tensors *tensors, int64_t flat, int64_t channel,
                              double products);

/* Computes out[i] = output(problem, positions ? positions[i] : i) for i < count, with up to
 * `threads` threads (<= 1: the calling thread only). The results do not depend on the
 * number of threads: every output is computed the same way by whichever thread. */
typedef double (*ReferenceOutputFn)(const void *problem, int64_t flat);
void tci_reference_run(ReferenceOutputFn output, const void *problem, const int64_t *positions,
                       int64_t count, int threads, double *out);

#endif
