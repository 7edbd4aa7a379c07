/*
 * The CPU reference matrix product.
 *
 * C[b, i, j] = sum over l of A[b, i, l] * B[b, l, j], for b < batch, i < m, j < n, l < k,
 * then the epilogue (bias[j]). The element offsets, which the code generator must match:
 *
 *   A  (b, i, l)   row-major ((b*m + i)*k + l)    a_col_major ((b*k + l)*m + i)
 *   B  (b, l, j)   row-major ((b*k + l)*n + j)    b_col_major ((b*n + j)*k + l)
 *   C  (b, i, j)   always    ((b*m + i)*n + j)
 *
 * As for the convolution, elements are read raw (float32 rounded to tf32 first) and the
 * result is computed in double, at sampled positions split over threads.
 */
#include "reference/reference.h"

/* A validated descriptor, as the index arithmetic uses it. */
typedef struct Matmul {
    const tcc_matmul_desc *desc;
    const tcc_reference_tensors *tensors;
    ReferenceOperands operands; /* A and B */
    int64_t a_row, a_step;      /* A[b, i, l] = a[b*m*k + i*a_row + l*a_step] */
    int64_t b_column, b_step;   /* B[b, l, j] = b[b*k*n + j*b_column + l*b_step] */
} Matmul;

static double matmul_output(const void *problem, int64_t flat)
{
    const Matmul *mm = problem;
    const tcc_matmul_desc *d = mm->desc;
    int64_t j = flat % d->n, i = flat / d->n % d->m, b = flat / (d->n * d->m);
    int64_t a = b * d->m * d->k + i * mm->a_row;
    int64_t bb = b * d->k * d->n + j * mm->b_column;
    double sum = tci_reference_dot(&mm->operands, a, mm->a_step, bb, mm->b_step, d->k, 0.0);
    return tci_reference_epilogue(&d->epilogue, d->output_type, mm->tensors, flat, j, sum);
}

tcc_status tcc_matmul_reference(tcc_context *ctx, const tcc_matmul_desc *desc,
                                const tcc_reference_tensors *tensors, const int64_t *positions,
                                int64_t count, int threads, double *out)
{
    tcc_status status = tcc_matmul_validate(ctx, desc);
    if (status == TCC_OK)
        status = tci_validate_reference_args(ctx, "A and B (tensors.input and tensors.filter)",
                                             &desc->epilogue, tensors, positions, count,
                                             desc->batch * desc->m * desc->n, out);
    if (status != TCC_OK)
        return status;
    Matmul mm = {
        .desc = desc,
        .tensors = tensors,
        .a_row = desc->a_col_major ? 1 : desc->k,
        .a_step = desc->a_col_major ? desc->m : 1,
        .b_column = desc->b_col_major ? desc->k : 1,
        .b_step = desc->b_col_major ? 1 : desc->n,
    };
    status = tci_reference_operands_init(ctx, &mm.operands, desc->input_type, tensors->input,
                                         tensors->filter);
    if (status != TCC_OK)
        return status;
    tci_reference_run(matmul_output, &mm, positions, count, threads, out);
    tci_reference_operands_free(&mm.operands);
    return TCC_OK;
}
