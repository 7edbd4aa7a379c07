/*
 * Internal helpers of the operator descriptors and of the CPU references.
 *
 * conv2d_reference.c defines them; matmul_reference.c and the conv2d compute definition
 * share them, so that both operators accept exactly the same types and epilogues and the
 * two references read elements and apply the epilogue the same way. The descriptor
 * functions, the validation and the references themselves are public (tcc.h).
 */
#ifndef TCC_CONV2D_H
#define TCC_CONV2D_H

#include "tcc/tcc.h"

#include <stdbool.h>

/* Every tensor must be indexable with 32-bit offsets: at most this many elements. */
#define TCI_MAX_TENSOR_ELEMENTS INT32_MAX

/* Checks the element types of a convolution or matrix product: float16 inputs accumulate
 * in float32 or float16, bfloat16 and float32 (tf32) inputs in float32, int8 inputs in
 * int32; a float accumulator gives float32, float16 or bfloat16 outputs, an int32 one
 * int32 or float32. Unknown dtype values are TCC_ERROR_INVALID_ARGUMENT, known but
 * unsupported combinations TCC_ERROR_UNSUPPORTED. */
tcc_status tci_validate_mma_types(tcc_context *ctx, tcc_dtype input_type, tcc_dtype accumulate_type,
                                  tcc_dtype output_type);

/* Checks an epilogue: a known prologue op, alpha, beta and prologue_arg numbers (not NaN or
 * infinite), clamp bounds not NaN and clamp_min <= clamp_max when clamping. */
tcc_status tci_validate_epilogue(tcc_context *ctx, const tcc_epilogue *epilogue, tcc_dtype output);

/* Whether the epilogue reads the residual tensor / the output's previous contents. */
bool tci_epilogue_reads_residual(const tcc_epilogue *epilogue);
bool tci_epilogue_reads_previous(const tcc_epilogue *epilogue);

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
