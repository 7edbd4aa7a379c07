/*
 * matmul: C[b] = A[b] * B[b], a first-class operator on the implicit-GEMM machinery (one
 * group per batch entry). A is m x k, row-major or column-major; B is k x n, likewise;
 * C is row-major m x n. The descriptor's defaults and validation, then its GEMM.
 */
#include "ops/gemm.h"
#include "ops/ops.h"

/* ---- the descriptor ---------------------------------------------------------------------- */

void tcc_matmul_desc_init_size(tcc_matmul_desc *desc, size_t size)
{
    tcc_matmul_desc defaults = {
        .size = sizeof(tcc_matmul_desc),
        .batch = 1,
        .m = 1,
        .n = 1,
        .k = 1,
        .input_type = TCC_FLOAT16,
        .accumulate_type = TCC_FLOAT32,
        .output_type = TCC_FLOAT32,
        .epilogue = tci_default_epilogue(),
    };
    tci_init_struct(desc, size, &defaults, sizeof defaults, sizeof defaults);
}

/* The symbol a program built before the macro calls: the first release's size. */
void(tcc_matmul_desc_init)(tcc_matmul_desc *desc)
{
    tcc_matmul_desc_init_size(desc, sizeof *desc);
}

double tcc_matmul_flops(const tcc_matmul_desc *desc)
{
    if (!TCI_KNOWN_SIZE(tcc_matmul_desc, desc))
        return 0.0;
    return 2.0 * (double)desc->batch * (double)desc->m * (double)desc->n * (double)desc->k;
}

static tcc_status validate_size(tcc_context *ctx, const char *name, int64_t value)
{
    if (value < 1 || value > INT32_MAX)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s must be in 1..%d (got %lld)", name,
                        INT32_MAX, (long long)value);
    return TCC_OK;
}

/* Every operand must be indexable with 32-bit offsets; the factors are in 1..INT32_MAX,
 * so the product of three is checked for int64 overflow first. */
static tcc_status validate_count(tcc_context *ctx, const char *tensor, int64_t batch, int64_t rows,
                                 int64_t columns)
{
    int64_t matrix, count;
    if (__builtin_mul_overflow(rows, columns, &matrix) ||
        __builtin_mul_overflow(batch, matrix, &count) || count > TCI_MAX_TENSOR_ELEMENTS)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "%s has too many elements for 32-bit indexing (at most %d)", tensor,
                        TCI_MAX_TENSOR_ELEMENTS);
    return TCC_OK;
}

static tcc_status validate_sizes(tcc_context *ctx, const tcc_matmul_desc *desc)
{
    tcc_status status = validate_size(ctx, "batch", desc->batch);
    if (status == TCC_OK)
        status = validate_size(ctx, "m", desc->m);
    if (status == TCC_OK)
        status = validate_size(ctx, "n", desc->n);
    if (status == TCC_OK)
        status = validate_size(ctx, "k", desc->k);
    if (status == TCC_OK)
        status = validate_count(ctx, "A (batch*m*k)", desc->batch, desc->m, desc->k);
    if (status == TCC_OK)
        status = validate_count(ctx, "B (batch*k*n)", desc->batch, desc->k, desc->n);
    if (status == TCC_OK)
        status = validate_count(ctx, "C (batch*m*n)", desc->batch, desc->m, desc->n);
    return status;
}

tcc_status tcc_matmul_validate(tcc_context *ctx, const tcc_matmul_desc *desc)
{
    if (!desc)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "the matmul descriptor is NULL");
    tcc_status status = TCI_CHECK_SIZE(ctx, "matmul", tcc_matmul_desc, desc);
    if (status == TCC_OK)
        status = validate_sizes(ctx, desc);
    if (status == TCC_OK)
        status = tci_validate_elementwise(ctx, desc->input_type, desc->accumulate_type,
                                          desc->output_type, &desc->epilogue);
    return status;
}

/* ---- its implicit GEMM ------------------------------------------------------------------- */

typedef struct MatmulOp {
    GemmOperator gemm;
    tcc_matmul_desc d;
} MatmulOp;

/* Element (row, col) of a matrix stored row-major or, if col_major, transposed. */
static tcc_expr *element(tcc_func *f, tcc_tensor *t, tcc_expr *batch, tcc_expr *row, tcc_expr *col,
                         bool col_major)
{
    tcc_expr *index[3] = {batch, col_major ? col : row, col_major ? row : col};
    return tcc_access(f, t, 3, index);
}

static tcc_expr *a_element(tcc_func *f, tcc_expr *g, tcc_expr *m, tcc_expr *k, void *user)
{
    const MatmulOp *op = user;
    return element(f, op->gemm.a_source, g, m, k, op->d.a_col_major);
}

static tcc_expr *b_element(tcc_func *f, tcc_expr *g, tcc_expr *k, tcc_expr *n, void *user)
{
    const MatmulOp *op = user;
    return element(f, op->gemm.b_source, g, k, n, op->d.b_col_major);
}

/* A and B as stored: [batch, rows, columns] in the operand's own axis order. */
static bool a_tensor_map(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                         tcc_tensor_map *map, void *user)
{
    tcc_tensor *t = ((const MatmulOp *)user)->gemm.a_source;
    return tci_gemm_dense_map(f, t, t->shape, axes, tile, map);
}

static bool b_tensor_map(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                         tcc_tensor_map *map, void *user)
{
    tcc_tensor *t = ((const MatmulOp *)user)->gemm.b_source;
    return tci_gemm_dense_map(f, t, t->shape, axes, tile, map);
}

static bool out_tensor_map(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                           tcc_tensor_map *map, void *user)
{
    tcc_tensor *t = ((const MatmulOp *)user)->gemm.output;
    return tci_gemm_dense_map(f, t, t->shape, axes, tile, map);
}

static void output_index(tcc_func *f, tcc_expr *g, tcc_expr *m, tcc_expr *n, tcc_expr **index,
                         void *user)
{
    (void)f;
    (void)user;
    index[0] = g, index[1] = m, index[2] = n;
}

/* The GEMM of a matrix product, with its placeholders, in the function's arena. */
tcc_status tci_matmul_gemm(tcc_func *f, const void *desc, GemmOperator **out)
{
    const tcc_matmul_desc *d = desc;
    tcc_status status = tcc_matmul_validate(f->ctx, d);
    if (status != TCC_OK)
        return status;
    MatmulOp *op = tci_arena_alloc(f->arena, sizeof *op);
    *op = (MatmulOp){.d = *d};
    GemmOperator *g = &op->gemm;
    *g = (GemmOperator){.groups = d->batch,
                        .m = d->m,
                        .n = d->n,
                        .k = d->k,
                        .input_type = d->input_type,
                        .accumulate_type = d->accumulate_type,
                        .output_type = d->output_type,
                        .epilogue = d->epilogue,
                        .a_element = a_element,
                        .b_element = b_element,
                        .output_index = output_index,
                        .a_tensor_map = a_tensor_map,
                        .b_tensor_map = b_tensor_map,
                        .out_tensor_map = out_tensor_map,
                        .a_col_major = d->a_col_major,
                        .b_col_major = d->b_col_major,
                        .a_name = "A",
                        .b_name = "B",
                        .output_name = "C",
                        .a_layout = d->a_col_major ? "col_major" : "row_major",
                        .b_layout = d->b_col_major ? "col_major" : "row_major",
                        .output_layout = "row_major",
                        .op = op};
    const int64_t a_shape[3] = {d->batch, d->a_col_major ? d->k : d->m,
                                d->a_col_major ? d->m : d->k};
    const int64_t b_shape[3] = {d->batch, d->b_col_major ? d->n : d->k,
                                d->b_col_major ? d->k : d->n};
    const int64_t c_shape[3] = {d->batch, d->m, d->n};
    g->a_source = tcc_placeholder(f, "a", 3, a_shape, d->input_type);
    g->b_source = tcc_placeholder(f, "b", 3, b_shape, d->input_type);
    g->output = tcc_placeholder(f, "c", 3, c_shape, d->output_type);
    *out = g;
    return g->output ? TCC_OK : tci_func_status(f);
}
