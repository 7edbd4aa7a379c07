/*
 * Helpers of the CPU reference tests (test_conv2d_reference.c, test_matmul_reference.c):
 * random operands, one interface to either operator's calls, the checks both make of a
 * reference, and naive arithmetic written independently of the library. Like support.c,
 * test/unit/reference_support.c is linked into every unit test.
 */
#ifndef TEST_REFERENCE_SUPPORT_H
#define TEST_REFERENCE_SUPPORT_H

#include "support.h"

/* ---- operands ------------------------------------------------------------------------------ */

/* `count` pseudo-random elements of `type` (free() them). Floats are multiples of 1/4 in
 * [-2, 2], so that every product and sum is exact in double and any summation order gives
 * the same bits; `raw` float32 values use all 23 mantissa bits instead (tf32 rounding
 * matters). int8 uses its whole range, int32 a small one. */
void *test_random_tensor(tcc_dtype type, int64_t count, uint64_t *state, bool raw);

/* The tensors a reference reads, owned, and the same pointers as the reference takes them.
 * For a matmul, `input` is A and `filter` is B. */
typedef struct TestOperands {
    void *input, *filter, *bias, *residual, *previous;
    tcc_reference_tensors tensors;
} TestOperands;

/* How many elements each operand has: the two inputs (of input_type), and the bias (one
 * per output channel) and the output-sized residual and previous output (of output_type). */
typedef struct TestOperandSizes {
    tcc_dtype input_type, output_type;
    int64_t input, filter, channels, output;
} TestOperandSizes;

/* Every operand, random from `seed` (`raw` as for test_random_tensor, inputs only: the
 * epilogue's tensors are always exact). */
TestOperands test_random_operands(const TestOperandSizes *sizes, uint64_t seed, bool raw);
/* Only input and filter (NULL entries stay NULL); the caller fills them. */
TestOperands test_operands(void *input, void *filter);
void test_free_operands(TestOperands *operands);

/* ---- the operators' calls, and checks of a reference ---------------------------------- */

/* One operator's descriptor calls (conv2d or matmul) with the descriptor as `const void *`,
 * so that one helper checks either. TEST_OP defines one from the operator's functions. */
typedef struct TestOp {
    tcc_status (*validate)(tcc_context *ctx, const void *desc);
    tcc_status (*reference)(tcc_context *ctx, const void *desc,
                            const tcc_reference_tensors *tensors, const int64_t *positions,
                            int64_t count, int threads, double *out);
    int64_t (*outputs)(const void *desc); /* how many outputs the reference computes */
} TestOp;

/* Defines the TestOp `name` for descriptors of `desc_type`: wrappers that only convert the
 * descriptor pointer back (calling the functions through other pointer types would be
 * undefined behaviour). */
#define TEST_OP(name, desc_type, validate_fn, reference_fn, outputs_fn)                            \
    static tcc_status name##_validate(tcc_context *ctx, const void *desc)                          \
    {                                                                                              \
        return validate_fn(ctx, (const desc_type *)desc);                                          \
    }                                                                                              \
    static tcc_status name##_reference(                                                            \
        tcc_context *ctx, const void *desc, const tcc_reference_tensors *tensors,                  \
        const int64_t *positions, int64_t count, int threads, double *out)                         \
    {                                                                                              \
        return reference_fn(ctx, (const desc_type *)desc, tensors, positions, count, threads,      \
                            out);                                                                  \
    }                                                                                              \
    static int64_t name##_outputs(const void *desc)                                                \
    {                                                                                              \
        return outputs_fn((const desc_type *)desc);                                                \
    }                                                                                              \
    static const TestOp name = {name##_validate, name##_reference, name##_outputs}

/* Defines `static void name(desc_type *d) { statement; }`: one change to a descriptor, for
 * the tables of bad descriptors and of shapes. */
#define TEST_SPOIL(desc_type, name, statement)                                                     \
    static void name(desc_type *d)                                                                 \
    {                                                                                              \
        statement;                                                                                 \
    }

/* A type combination of the value tests: input, accumulation and output types, and whether
 * float32 values use full mantissas (see test_random_tensor). */
typedef struct TestTypes {
    tcc_dtype input, accumulate, output;
    bool raw;
} TestTypes;

/* Every output of the reference on desc with `threads` threads (free() it); it must succeed. */
double *test_reference_all(const TestOp *op, const void *desc, const tcc_reference_tensors *t,
                           int threads);

/* Fails unless the reference (one thread) gives `expected` at every output: exactly, unless
 * `raw` (float32 with full mantissas: sums round, so allow for the summation order). `what`
 * names the case in the message. */
void assert_reference_equals(const TestOp *op, const void *desc, const tcc_reference_tensors *t,
                             const double *expected, bool raw, const char *what);

/* Fails unless the reference with each of the `n` thread counts gives `one` (the outputs of
 * one thread) bit for bit: each output is computed the same way by whichever thread. */
void assert_threads_agree(const TestOp *op, const void *desc, const tcc_reference_tensors *t,
                          const double *one, const int *thread_counts, int n);

/* Fails unless the reference at the `count` output offsets `positions`, with `threads`
 * threads, gives what `full` (every output) holds there. */
void assert_sampled_agree(const TestOp *op, const void *desc, const tcc_reference_tensors *t,
                          const double *full, const int64_t *positions, int count, int threads);

/* Fails unless desc validates with `status` (not TCC_OK), its one-line message containing
 * `message`, and the reference refuses it the same way before touching any data. */
void assert_refused(tcc_context *ctx, const TestOp *op, const void *desc, tcc_status status,
                    const char *message);

/* Fails unless a descriptor's types and epilogue are the defaults both *_desc_init give:
 * float16 inputs accumulated in float32 into float32, and the identity epilogue. */
void assert_default_types(tcc_dtype input, tcc_dtype accumulate, tcc_dtype output,
                          const tcc_epilogue *epilogue);

/* ---- independent naive arithmetic ------------------------------------------------------ */

/* An element as the tensor cores read it (operands: float32 rounded to tf32) or as stored
 * (the epilogue's tensors), written independently of the library's readers. */
double test_element(tcc_dtype type, const void *data, int64_t i, bool operand);
/* The epilogue as tcc.h defines it, for output offset o of output channel (column)
 * `channel`; bias, residual and previous may be NULL when it does not read them. */
double test_naive_epilogue(const tcc_epilogue *e, tcc_dtype type, const void *bias,
                           const void *residual, const void *previous, int64_t o, int64_t channel,
                           double sum);

#endif
