/*
 * The implicit GEMM every convolution and matrix product becomes.
 *
 * Per group g (a convolution's group, a batched product's batch entry, a pointwise NCHW
 * convolution's image):
 *   A[g, m, k]  the operand rows (a convolution's im2col, never stored: inlined into
 *               the shared-memory copy, which is zero where a tile passes M or K; the
 *               element itself is zero in the padding; a pointwise NCHW convolution's
 *               filter); A[g, k, m] when column-major
 *   B[g, k, n]  the operand columns (a convolution's filter; a pointwise NCHW
 *               convolution's image, channels x pixels); B[g, n, k] when column-major
 *   C[g, m, n]  = sum over k of A * B, on the tensor cores
 *   Out         the epilogue over (g, m, n), stored into the operator's output tensor at
 *               the index the operator maps (g, m, n) to, guarded at ragged edges.
 * An operator supplies the element and index functions; gemm.c does the rest.
 */
#ifndef TCI_OPS_GEMM_H
#define TCI_OPS_GEMM_H

#include "driver/kernel.h"
#include "target/target.h"
#include "tcc/ops.h"
#include "te/te.h"

/* An operand that a kernel of its own first copies into a workspace in the order the
 * product reads fastest (an NCHW input into NHWC): to[i0, i1, ...] = from[i_perm[0], ...],
 * zero where `to` is wider than `from` (3 channels padded to 8). */
enum { TCI_MAX_STAGED = 2 };
typedef struct StagedOperand {
    tcc_tensor *from; /* the caller's tensor, a kernel parameter */
    tcc_tensor *to;   /* a workspace placeholder, what the product reads */
    int perm[TCI_MAX_DIMS];
} StagedOperand;

/* What the epilogue's bias (one value an output channel) runs along. */
typedef enum GemmBias {
    TCI_BIAS_PER_COLUMN,       /* n values shared by every group (a batch) */
    TCI_BIAS_PER_GROUP_COLUMN, /* groups * n values (a grouped convolution's channels) */
    TCI_BIAS_PER_ROW           /* m values shared by every group (channels along m) */
} GemmBias;

typedef struct GemmOperator {
    int64_t groups, m, n, k; /* per group */
    tcc_dtype input_type, accumulate_type, output_type;
    tcc_epilogue epilogue;
    tcc_tensor *a_source, *b_source; /* the placeholders the elements read */
    tcc_tensor *output;              /* the placeholder Out stores into */
    /* The caller's operand tensors, the kernels' first parameters: a_source and b_source
     * unless those are staged copies. */
    tcc_tensor *a_param, *b_param;
    int nstaged;
    StagedOperand staged[TCI_MAX_STAGED];
    /* A[g, m, k] and B[g, k, n], called for in-range (m, k) and (k, n) only. */
    tcc_expr *(*a_element)(tcc_func *f, tcc_expr *g, tcc_expr *m, tcc_expr *k, void *op);
    tcc_expr *(*b_element)(tcc_func *f, tcc_expr *g, tcc_expr *k, tcc_expr *n, void *op);
    /* The output index of (g, m, n), one expression per dimension of `output`. */
    void (*output_index)(tcc_func *f, tcc_expr *g, tcc_expr *m, tcc_expr *n, tcc_expr **index,
                         void *op);
    /* Consecutive m are adjacent in memory (an NCHW output whose rows m are pixels). */
    bool output_contiguous_in_m;
    /* How the operand tiles lie in shared memory, following the source tensors so that
     * the copies read consecutive addresses: A column-major is k x m (m contiguous), B
     * column-major is n x k (k contiguous, a KRSC filter's own order). */
    bool a_col_major, b_col_major;
    /* The tensor map of A's (B's) tiles for the bulk copy engine, or false where the
     * operand's memory cannot be described so (a gather, a layout, a misaligned row). `tile`
     * is the shared tile's extent along A's (B's) own axes (g, m, k), `axes` those axes'
     * expressions; with NULL axes (and map) it only answers whether. NULL: never. */
    bool (*a_tensor_map)(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                         tcc_tensor_map *map, void *op);
    bool (*b_tensor_map)(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                         tcc_tensor_map *map, void *op);
    /* The tensor map of the output's tiles (the schedule's store = bulk), as above along
     * Out's axes (g, m, n); false where the output's rows do not run along n. */
    bool (*out_tensor_map)(tcc_func *f, tcc_expr *const *axes, const int64_t *tile,
                           tcc_tensor_map *map, void *op);
    GemmBias bias;
    /* The caller passes B before A (a pointwise convolution's input, its B, comes first,
     * as every convolution's does). */
    bool b_param_first;
    /* How tcc_kernel_param names the caller's operands and output and their layouts
     * (static strings; the bias is "bias", a "vector"; the residual "residual", laid out as
     * the output). */
    const char *a_name, *b_name, *output_name;
    const char *a_layout, *b_layout, *output_layout;
    void *op; /* passed to the functions above */
} GemmOperator;

/* Split-K: the reduction cut into `splits` slices of `slice` (a multiple of the block's
 * k step), each computed by its own blocks into a workspace of the accumulation type
 *   Partial[s * groups + g, m, n] = sum over k in slice s of A * B
 * that a second kernel sums in the order s = 0, 1, ... (the result does not depend on
 * timing) before the epilogue. splits = 1 is the plain product. */
typedef struct GemmSplit {
    int64_t splits, slice;
} GemmSplit;

typedef struct Gemm {
    tcc_tensor *a, *b, *c, *out;
    tcc_tensor *bias, *residual; /* placeholders, when the epilogue reads them */
    tcc_tensor *partial;         /* split-K's workspace placeholder, else NULL */
    tcc_iter_var *reduce;
    int nparam;
    /* a_param and b_param (b_param first where the operator says), [bias], [residual],
     * output, then the workspaces: [staged...], [partial] */
    tcc_tensor *params[7 + TCI_MAX_STAGED];
    /* The caller's parameters (those before the workspaces) as tcc_kernel_param describes
     * them; plain values and static strings, valid after the function is gone. */
    int nlabel;
    tcc_kernel_param_info labels[5];
} Gemm;

/* A tiled map of `t` read as a dense row-major view[0] x view[1] x view[2] whose axes are the
 * operand's (g, row, column); false where its rows are not a multiple of 16 bytes (gemm.c). */
bool tci_gemm_dense_map(tcc_func *f, tcc_tensor *t, const int64_t *view, tcc_expr *const *axes,
                        const int64_t *tile, tcc_tensor_map *map);
/* The extents of the shared tiles of A and B along their own axes (gemm_tiles.c). */
void tci_gemm_operand_tiles(const GemmOperator *op, const tcc_gemm_schedule *s, int64_t a[3],
                            int64_t b[3]);

/* Defines A, B, C and the epilogue into op->output; fills gemm. With split.splits > 1,
 * C runs over (s * groups + g, m, n) and Out stores it into the partial workspace. */
tcc_status tci_gemm_define(tcc_func *func, const GemmOperator *op, GemmSplit split, Gemm *gemm);
/* Split-K's second kernel: C[g, m, n] sums the partial workspace over the slices, in
 * order; Out is the epilogue into op->output. The same parameters as the first. */
tcc_status tci_gemm_define_reduce(tcc_func *func, const GemmOperator *op, GemmSplit split,
                                  Gemm *gemm);
/* Kernel `index` of the operands' staging: Out copies op->staged[index] into its
 * workspace. The same parameters as the product. */
tcc_status tci_gemm_define_staging(tcc_func *func, const GemmOperator *op, GemmSplit split,
                                   int index, Gemm *gemm);
/* The slices of a schedule (its split_k and k step) for op's reduction. */
GemmSplit tci_gemm_split(const GemmOperator *op, const tcc_gemm_schedule *schedule);

/* Fills the zero fields of `schedule` for this product on `arch`, and checks the rest. */
tcc_status tci_gemm_complete_schedule(tcc_context *ctx, const GemmOperator *op, tcc_arch arch,
                                      tcc_gemm_schedule *schedule);

/* Applies a complete schedule (see tcc_gemm_schedule in tcc.h). */
tcc_status tci_gemm_schedule_apply(tcc_func *func, const GemmOperator *op, const Gemm *gemm,
                                   const tcc_gemm_schedule *schedule, tcc_cache_hint operand_cache);
/* Schedules split-K's reduction kernel, or a staging kernel: the outputs spread over
 * blocks of threads, consecutive threads on consecutive addresses of the output. */
tcc_status tci_gemm_schedule_elementwise(tcc_func *func, const GemmOperator *op, const Gemm *gemm);

/* An operator's GEMM: validates its descriptor and, in `func`'s arena, makes the
 * operator with its placeholders. */
typedef tcc_status (*GemmMaker)(tcc_func *func, const void *desc, GemmOperator **out);
tcc_status tci_conv2d_gemm(tcc_func *func, const void *desc, GemmOperator **out);
/* A convolution's tensors in their layouts (conv2d_gemm.c; conv2d_pointwise.c reads them too):
 * the element of an activation (input or output) at (n, y, x, channel), or with `index_out`
 * its index written there instead (NULL returned); the filter's element at (output channel,
 * r, s, input channel of the group); the shapes (their rank returned). */
tcc_expr *tci_conv2d_activation(tcc_func *f, tcc_tensor *t, tcc_layout layout, tcc_expr *n,
                                tcc_expr *y, tcc_expr *x, tcc_expr *channel, tcc_expr **index_out);
tcc_expr *tci_conv2d_filter(tcc_func *f, tcc_tensor *t, tcc_filter_layout layout, tcc_expr *ko,
                            tcc_expr *r, tcc_expr *s, tcc_expr *c);
int tci_conv2d_activation_shape(tcc_layout layout, int64_t n, int64_t h, int64_t w, int64_t c,
                                int64_t *shape);
int tci_conv2d_filter_shape(const tcc_conv2d_desc *d, tcc_filter_layout layout, int64_t cg,
                            int64_t *shape);
/* Whether a convolution is a pointwise NCHW one that runs as a product per image, and that
 * product's operator (conv2d_pointwise.c); tci_conv2d_gemm makes it where it applies. */
bool tci_conv2d_pointwise(const tcc_conv2d_desc *desc);
tcc_status tci_conv2d_pointwise_gemm(tcc_func *func, const tcc_conv2d_desc *desc,
                                     GemmOperator **out);
tcc_status tci_matmul_gemm(tcc_func *func, const void *desc, GemmOperator **out);

/* The L2 policy of the bulk copies of A and B: evict-last where both operands fit in the
 * target's L2 together, since every tile reads them again (0.3-0.9% on the seed layer, an H100;
 * bench/NOTES.md, twelfth session), else normal (8192^3 gained nothing). */
tcc_cache_hint tci_gemm_operand_cache(const GemmOperator *op, tcc_arch arch);

/* What an operator's compile function knows before it builds: the schedule (`given`,
 * NULL for none, with its zero fields chosen from the shape and checked against the
 * target; a zero grid_blocks is `multiprocessors` where that is not 0, the GPU's of
 * tcc_build_options, else the target's), the copies' L2 policy and the kernels it makes. */
typedef struct GemmPlan {
    tcc_gemm_schedule schedule;
    tcc_cache_hint operand_cache; /* tci_gemm_operand_cache */
    int nstaged;
    char staged_names[TCI_MAX_STAGED][64]; /* of the staged workspaces */
} GemmPlan;
tcc_status tci_gemm_plan(tcc_context *ctx, GemmMaker make, const void *desc, tcc_arch arch,
                         int multiprocessors, const tcc_gemm_schedule *given, GemmPlan *out);

#endif
