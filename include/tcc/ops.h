/*
 * Operators: conv2d and batched matmul, each a descriptor (shapes, layouts, types, a fused
 * epilogue) compiled as an implicit GEMM with a schedule chosen from the shape or given, and
 * checked against a CPU reference computed in double. Also the TVM tutorial's own
 * convolution and schedule.
 */
#ifndef TCC_OPS_H
#define TCC_OPS_H

#include "tcc/te.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- operators --------------------------------------------------------------------- */

typedef enum tcc_layout {
    TCC_LAYOUT_NHWC = 0, /* the default: PyTorch's channels_last, cuDNN's NHWC */
    TCC_LAYOUT_NCHW,
    TCC_LAYOUT_NHWCNC, /* the tutorial's blocked layout: (N/16, H, W, C/16, 16n, 16c) */
} tcc_layout;

typedef enum tcc_filter_layout {
    TCC_FILTER_KRSC = 0, /* (K, R, S, C/groups): with NHWC */
    TCC_FILTER_KCRS,     /* (K, C/groups, R, S): PyTorch's */
    TCC_FILTER_BLOCKED,  /* the tutorial's (R, S, C/16, K/16, 16c, 16k) */
} tcc_filter_layout;

/* Accera's prologue: what the accumulator holds before the products are added. */
typedef enum tcc_prologue_op {
    TCC_PROLOGUE_NONE = 0, /* 0 */
    TCC_PROLOGUE_SET,      /* prologue_arg */
    TCC_PROLOGUE_SCALE,    /* prologue_arg * the output's previous contents */
    TCC_PROLOGUE_RELU,     /* max(the output's previous contents, 0) */
} tcc_prologue_op;

/* Element-wise work fused into the kernel, applied in this order:
 *   acc = prologue + sum of products           (in the accumulation type)
 *   v   = alpha * acc + bias[channel] + beta * source
 *   v   = relu(v) if relu;  v = clamp(v, clamp_min, clamp_max) if clamp
 *   out = v cast to the output type
 * `source` is the residual tensor (a kernel parameter shaped like the output) if
 * `residual`, otherwise the output's previous contents; with beta == 0 neither is read
 * (nor is the residual a parameter). For an int32 output the arithmetic is int32. */
typedef struct tcc_epilogue {
    double alpha, beta;
    bool bias, residual, relu, clamp;
    double clamp_min, clamp_max;
    tcc_prologue_op prologue;
    double prologue_arg;
} tcc_epilogue;

typedef struct tcc_conv2d_desc {
    size_t size; /* sizeof(tcc_conv2d_desc): set by tcc_conv2d_desc_init (tcc/tcc.h, "ABI") */
    int64_t batch, height, width, in_channels, out_channels;
    int64_t kernel_h, kernel_w, stride_h, stride_w;
    int64_t pad_top, pad_bottom, pad_left, pad_right;
    int64_t dilation_h, dilation_w;
    int64_t groups;    /* divides both channel counts; groups == in_channels is depthwise */
    tcc_layout layout; /* of the input and the output */
    tcc_filter_layout filter_layout;
    tcc_dtype input_type;      /* float16, bfloat16, float32 (as tf32), int8 */
    tcc_dtype accumulate_type; /* float32; float16 for float16 inputs; int32 for int8 */
    tcc_dtype output_type;
    tcc_epilogue epilogue;
} tcc_conv2d_desc;

/* A 1x1, stride-1 convolution of 1x1x1x1, NHWC/KRSC, float16 -> float32, alpha 1; the size
 * set. */
void tcc_conv2d_desc_init_size(tcc_conv2d_desc *desc, size_t size);
/* Also a macro over tcc_conv2d_desc_init_size with its sizeof (tcc/tcc.h, "ABI"). */
void tcc_conv2d_desc_init(tcc_conv2d_desc *desc);
#define tcc_conv2d_desc_init(desc) tcc_conv2d_desc_init_size((desc), sizeof(tcc_conv2d_desc))
/* The output's size and the FLOPs; 0 for NULL or a size this library does not know. */
int64_t tcc_conv2d_out_height(const tcc_conv2d_desc *desc);
int64_t tcc_conv2d_out_width(const tcc_conv2d_desc *desc);
double tcc_conv2d_flops(const tcc_conv2d_desc *desc);

typedef struct tcc_matmul_desc {
    size_t size;   /* sizeof(tcc_matmul_desc): set by tcc_matmul_desc_init (tcc/tcc.h, "ABI") */
    int64_t batch; /* independent products of the same shape; 1 for one */
    int64_t m, n, k;
    bool a_col_major; /* A is m x k: row-major (k contiguous) unless column-major */
    bool b_col_major; /* B is k x n: row-major (n contiguous) unless column-major */
    tcc_dtype input_type, accumulate_type, output_type;
    tcc_epilogue epilogue; /* the bias has n values */
} tcc_matmul_desc;

/* 1x1x1, row-major, float16 -> float32, alpha 1; the size set. C is always row-major m x n.
 * tcc_matmul_flops: 0 for NULL or a size this library does not know. */
void tcc_matmul_desc_init_size(tcc_matmul_desc *desc, size_t size);
/* Also a macro over tcc_matmul_desc_init_size with its sizeof (tcc/tcc.h, "ABI"). */
void tcc_matmul_desc_init(tcc_matmul_desc *desc);
#define tcc_matmul_desc_init(desc) tcc_matmul_desc_init_size((desc), sizeof(tcc_matmul_desc))
double tcc_matmul_flops(const tcc_matmul_desc *desc);

/* Accera's MMA scheduling policy: the order of the passes and the MMA tiles of a warp. */
typedef enum tcc_mma_policy {
    TCC_MMA_PASS_ORDER = 0, /* for each group of fused passes, every tile of the warp */
    TCC_MMA_BLOCK_ORDER,    /* for each tile of the warp, every pass */
} tcc_mma_policy;

/* The implicit-GEMM schedule of any convolution or matrix product: a block of
 * block_row_warps x block_col_warps warps, each computing warp_row_tiles x
 * warp_col_tiles MMA tiles of mma_m x mma_n; the reduction advances num_total_passes
 * MMA passes (of mma_k) per shared-memory step, loading the fragments of
 * num_fused_passes passes at a time. Zero fields are chosen from the shape and types. */
/* How the shared-memory tiles of A and B (and C) lie: dense rows share banks when a row is
 * a multiple of 128 bytes; padding each row by 16 bytes spreads them over the banks;
 * swizzling (tcc_storage_swizzle) permutes the 16-byte chunks of each row instead, keeping
 * rows on 128-byte lines (mma_sync and wgmma, whose operands along m or n lie in swizzled
 * column blocks; C stays padded). */
typedef enum tcc_smem_layout {
    TCC_SMEM_AUTO = 0, /* chosen: swizzled where mma_sync or wgmma reads rows that allow it,
                          else padded */
    TCC_SMEM_DENSE,
    TCC_SMEM_PADDED,
    TCC_SMEM_SWIZZLED,
} tcc_smem_layout;

/* The tensor-core instructions of the product. */
typedef enum tcc_gemm_intrinsic {
    TCC_GEMM_INTRINSIC_AUTO = 0, /* wgmma, else mma.sync, where the target and type have it,
                                    else WMMA */
    TCC_GEMM_WMMA,
    TCC_GEMM_MMA_SYNC, /* ldmatrix + mma.sync m16n8k16: sm_80, float16 and bfloat16, m16n16k16 */
    /* wgmma.mma_async (sm_90a; float16 and bfloat16 into float32; m64n64k16, m64n128k16,
     * m64n256k16): warpgroups of 128 threads multiply tiles of A and B straight from swizzled
     * shared memory (an operand along m or n in column blocks, read transposed). The block's
     * "warps" are then warpgroups, each one MMA tile (warp_row_tiles = warp_col_tiles = 1). */
    TCC_GEMM_WGMMA,
} tcc_gemm_intrinsic;

/* How the tiles of A and B reach shared memory. */
typedef enum tcc_gemm_copy {
    /* Chosen: bulk where the target and both operands allow it (a reduction of one 128-byte
     * step in two 64-byte steps, so that the engine can take it, where the output has two
     * bytes). */
    TCC_GEMM_COPY_AUTO = 0,
    TCC_GEMM_COPY_THREADS, /* every thread copies 16 bytes at a time (cp.async on sm_80+) */
    /* The bulk tensor copy engine (sm_90a, wgmma only): one thread copies each tile, through a
     * tensor map (im2col for a convolution's channels-last input) that the launcher encodes;
     * the copies complete on mbarriers. Dense row-major operands whose rows are a multiple of
     * 16 bytes, a convolution's channels per group a multiple of the k step. */
    TCC_GEMM_COPY_BULK,
} tcc_gemm_copy;

/* Who issues the bulk copies. */
typedef enum tcc_gemm_producer {
    /* Chosen: a warpgroup where the copy engine stores a persistent grid's outputs
     * (TCC_GEMM_STORE_BULK) or a persistent grid runs a reduction of 4096 or more (with
     * clusters of two: the 8192^3 product 5% faster on an H100), else none. */
    TCC_GEMM_PRODUCER_AUTO = 0,
    TCC_GEMM_PRODUCER_NONE, /* one of the threads that compute, between its products */
    /* Warp specialization (tcc_warp_specialize): a warpgroup added to the block issues them,
     * running ahead as far as the stages allow, and gives its registers to the warpgroups
     * that compute (setmaxnreg). Bulk copies; the block's warpgroups in one row or column. */
    TCC_GEMM_PRODUCER_WARPGROUP,
} tcc_gemm_producer;

/* How the accumulators reach the output. */
typedef enum tcc_gemm_store {
    /* Chosen: in a persistent grid (which needs the epilogue out of the stages' way), the
     * copy engine's stores where the output tile fits beside the stages with a producer
     * warpgroup (a ring of two column blocks; float16, bfloat16, float32 or int32), else
     * registers; shared in a block a tile. On an H100 the seed layer ran 0.1661 ms through the
     * engine against 0.1760 from registers with float32 output. */
    TCC_GEMM_STORE_AUTO = 0,
    /* Each warp stores its accumulator tiles into a C tile in shared memory; after a barrier
     * every thread applies the epilogue to 16 bytes at a time of it and stores them. */
    TCC_GEMM_STORE_SHARED,
    /* Each thread applies the epilogue to the accumulators it holds and stores them straight
     * to the output, two adjacent columns at a time (tcc_tensorize with TCC_WGMMA_ELEMENTS):
     * no C tile, no barrier. wgmma, float32 accumulators and registers to spare. */
    TCC_GEMM_STORE_REGISTERS,
    /* Each thread applies the epilogue to the accumulators it holds and writes them into an
     * output tile in shared memory, beside the stages; the bulk tensor copy engine stores
     * it (tcc_bulk_store), while the block goes on with its next tile in a persistent grid.
     * As registers, plus bulk copies and an output the engine can address (rows along n:
     * NHWC, a pointwise NCHW convolution's, a row-major matrix), no split-K. */
    TCC_GEMM_STORE_BULK,
} tcc_gemm_store;

/* How the blocks cover the output's tiles. */
typedef enum tcc_gemm_grid {
    /* Chosen: persistent where it can be (wgmma's bulk copies), a multiprocessor holds one
     * block, the tiles outnumber the multiprocessors and the outputs go out through the copy
     * engine or from registers as 8-byte pairs (float32 outputs, rows along n); else a block
     * a tile. */
    TCC_GEMM_GRID_AUTO = 0,
    TCC_GEMM_GRID_TILES, /* a block a tile, as many as there are tiles */
    /* A persistent grid (tcc_persistent): a block a multiprocessor (grid_blocks), each running
     * every grid_blocks-th tile, its pipeline carried on from one tile into the next, so that
     * the next tile's first copies fly while this one stores. Bulk copies and the epilogue
     * from registers (or through the copy engine's output tile). */
    TCC_GEMM_GRID_PERSISTENT,
} tcc_gemm_grid;

/* How a producer warpgroup's consumer warpgroups share the tiles (CUTLASS's two kinds of
 * warp-specialized kernels). */
typedef enum tcc_gemm_consumers {
    TCC_GEMM_CONSUMERS_AUTO = 0, /* chosen: cooperative (see the schedule's field) */
    /* The block's warpgroups compute each tile together, each its rows or columns. */
    TCC_GEMM_CONSUMERS_COOPERATIVE,
    /* Ping-pong (tcc_pingpong): two consumer warpgroups take the block's tiles in turns, each
     * computing whole tiles of its own (the block of the schedule, one warpgroup: its warp
     * tiles may be 2x1, two m64 tiles), so that one's epilogue and waits run under the
     * other's products. A producer warpgroup, a persistent grid, stores from registers. */
    TCC_GEMM_CONSUMERS_PINGPONG,
} tcc_gemm_consumers;

typedef struct tcc_gemm_schedule {
    size_t size; /* sizeof(tcc_gemm_schedule): set by tcc_gemm_schedule_init (tcc/tcc.h, "ABI") */
    int mma_m, mma_n, mma_k; /* m16n16k16, m32n8k16, m8n32k16; m16n16k8 for tf32; m64nNk16
                                for wgmma (N 64, 128 or 256) */
    int block_row_warps, block_col_warps;
    int warp_row_tiles, warp_col_tiles;
    int num_total_passes, num_fused_passes;
    tcc_mma_policy policy;
    bool column_major_blocks; /* blockIdx.x walks the rows of tiles instead of the columns */
    /* Shared-memory buffers the tiles of A and B rotate through (tcc_pipeline): 1 copies
     * and computes in turn; 2 to TCC_MAX_GEMM_STAGES overlap the copies of later steps
     * (cp.async on sm_80 and newer) with the products of this one. */
    int stages;
    tcc_smem_layout smem_layout;
    tcc_gemm_intrinsic intrinsic;
    /* Split-K: the reduction cut into this many slices, each computed by its own blocks
     * into a workspace that a second launch sums in a fixed order (deterministic) before
     * the epilogue; for products with few output tiles and a deep reduction (batch 1,
     * 7x7 maps). 1: none; 0: chosen from the shape; at most TCC_MAX_SPLIT_K. */
    int split_k;
    /* wgmma: k steps whose products run at once. 1: each step waits for its products before
     * the barrier that lets its tiles be overwritten; 2: one step's products run on across
     * it (the copies then run a step less far ahead; 3 stages or more); 0: chosen. */
    int wgmma_steps;
    tcc_gemm_copy copy;
    tcc_gemm_producer producer;
    tcc_gemm_store store;
    tcc_gemm_grid grid;
    /* A persistent grid's blocks: 0 for the build options' multiprocessors where they are
     * given (tcc_build_options.multiprocessors), else the target's (132 for sm_90a, an H100
     * SXM's or an H200's; fewer run when there are fewer tiles). A kernel for another part
     * should say its own (tcc_device_multiprocessors; in clusters of more than two blocks,
     * tcc_device_persistent_blocks), here or in the build options: more blocks than it holds
     * at once run in two waves. */
    int grid_blocks;
    /* Thread-block clusters (tcc_cluster): blocks along m that run as one cluster and share
     * their tiles of B, each fetching a slice for all of them (bulk copies, sm_90a; with a
     * producer warpgroup, a persistent grid). 1: none; 2 to TCC_MAX_CLUSTER_BLOCKS dividing the
     * blocks along m; 0: chosen (two with the producer warpgroup of a deep product, which
     * ran the 8192^3 product 5% faster on an H100, where B does not fit in the L2; else none:
     * the seed layer ran 6% slower, convolutions as deep, whose filter the L2 holds, 2%). */
    int cluster;
    /* How a producer warpgroup's consumers share the tiles (ping-pong is the tuner's knob:
     * on an H100 its best, 128x128 tiles a consumer in 6 stages, ran the seed layer 0.2016 ms
     * against 0.1810 cooperative, the 8192^3 product 1.98 ms in clusters against 1.67). */
    tcc_gemm_consumers consumers;
} tcc_gemm_schedule;

/* Every field zero (chosen from the shape), and the size set. */
void tcc_gemm_schedule_init_size(tcc_gemm_schedule *schedule, size_t size);
/* Also a macro over tcc_gemm_schedule_init_size with its sizeof (tcc/tcc.h, "ABI"). */
void tcc_gemm_schedule_init(tcc_gemm_schedule *schedule);
#define tcc_gemm_schedule_init(schedule)                                                           \
    tcc_gemm_schedule_init_size((schedule), sizeof(tcc_gemm_schedule))

#define TCC_MAX_GEMM_STAGES 8
#define TCC_MAX_SPLIT_K 32

/* Kernel parameters, in order: conv2d: input, filter, [bias], [residual], output;
 * matmul: A, B, [bias], [residual], C. `schedule` may be NULL (chosen from the shape). */
tcc_status tcc_conv2d_compile(tcc_context *ctx, const tcc_conv2d_desc *desc,
                              const tcc_gemm_schedule *schedule, const tcc_build_options *options,
                              tcc_kernel **out);
tcc_status tcc_matmul_compile(tcc_context *ctx, const tcc_matmul_desc *desc,
                              const tcc_gemm_schedule *schedule, const tcc_build_options *options,
                              tcc_kernel **out);
/* The schedule the compile functions choose when given none (for printing and tuning). */
tcc_status tcc_conv2d_default_schedule(tcc_context *ctx, const tcc_conv2d_desc *desc, tcc_arch arch,
                                       tcc_gemm_schedule *out);
tcc_status tcc_matmul_default_schedule(tcc_context *ctx, const tcc_matmul_desc *desc, tcc_arch arch,
                                       tcc_gemm_schedule *out);

/* Element counts of a conv2d's tensors in its layouts (the descriptor must be valid; 0 for a
 * size this library does not know). */
int64_t tcc_conv2d_input_elements(const tcc_conv2d_desc *desc);
int64_t tcc_conv2d_filter_elements(const tcc_conv2d_desc *desc);
int64_t tcc_conv2d_output_elements(const tcc_conv2d_desc *desc);
/* Validation, before anything is built: sizes >= 1 (pads >= 0) and a non-empty output;
 * groups dividing both channel counts; NHWCnc with the blocked filter only, batch and
 * channels multiples of 16 and no groups; supported types (float16 -> float32 or
 * float16, bfloat16 -> float32, float32 as tf32 -> float32, int8 -> int32; outputs
 * float32/float16/bfloat16, or int32 for int32, whose epilogue constants must then be
 * integers); finite alpha, beta, prologue_arg; clamp_min <= clamp_max; every tensor
 * under 2^31 elements. The target's support for the types is checked when compiling. */
tcc_status tcc_conv2d_validate(tcc_context *ctx, const tcc_conv2d_desc *desc);
tcc_status tcc_matmul_validate(tcc_context *ctx, const tcc_matmul_desc *desc);

/* The tensors a CPU reference reads, as raw elements of the descriptor's types and
 * layouts (float16 and bfloat16 as their bits, float32 as float, int8, int32). bias,
 * residual and previous_output may be NULL when the epilogue does not read them. */
typedef struct tcc_reference_tensors {
    size_t size;                /* sizeof(tcc_reference_tensors) (tcc/tcc.h, "ABI") */
    const void *input, *filter; /* matmul: A in input, B in filter */
    const void *bias, *residual, *previous_output;
} tcc_reference_tensors;

/* CPU references, computed in double from the same inputs (float32 inputs are first
 * rounded to tf32, as the tensor cores read them), epilogue included, before the final
 * cast to the output type. Outputs are computed at the `count` flat output offsets in
 * `positions` (all of them if positions is NULL), with up to `threads` threads. */
tcc_status tcc_conv2d_reference(tcc_context *ctx, const tcc_conv2d_desc *desc,
                                const tcc_reference_tensors *tensors, const int64_t *positions,
                                int64_t count, int threads, double *out);
tcc_status tcc_matmul_reference(tcc_context *ctx, const tcc_matmul_desc *desc,
                                const tcc_reference_tensors *tensors, const int64_t *positions,
                                int64_t count, int threads, double *out);

/* ---- the convolution of TVM's tensor-core tutorial ------------------------------------ */

/* Its shape and layouts, its compute definition (6-D blocked tensors) and its schedule,
 * primitive by primitive, as the tutorial writes them: for tcc_build. */
/* The convolution of the TVM tensor-core tutorial: N=256, 14x14, 256->512, 3x3, s1, p1,
 * in the tutorial's NHWCnc and blocked filter layouts. */
void tcc_tutorial_conv2d_desc(tcc_conv2d_desc *desc);

typedef struct tcc_tutorial_conv2d {
    tcc_tensor *input;  /* layout shape, input_type */
    tcc_tensor *filter; /* (R, S, C/16, K/16, 16c, 16k) */
    tcc_tensor *output; /* layout shape, output_type */
    tcc_tensor *padded; /* the zero-padded input (inlined by the schedule) */
    tcc_iter_var *reduce_rc_outer, *reduce_r, *reduce_s, *reduce_rc_inner;
} tcc_tutorial_conv2d;

/* The tutorial's compute definition (6-D blocked tensors), for its schedule below:
 * NHWCnc, blocked filter, float16 -> float32, groups 1, dilation 1, no epilogue. */
tcc_status tcc_tutorial_conv2d_define(tcc_func *func, const tcc_conv2d_desc *desc,
                                      tcc_tutorial_conv2d *out);

/* The tutorial's schedule. Tile sizes are the tutorial's by default. */
typedef struct tcc_tutorial_conv2d_params {
    int64_t block_row_warps, block_col_warps, warp_row_tiles, warp_col_tiles, chunk;
} tcc_tutorial_conv2d_params;
void tcc_tutorial_conv2d_params_init(tcc_tutorial_conv2d_params *params);
tcc_status tcc_tutorial_conv2d_schedule(tcc_func *func, const tcc_tutorial_conv2d *conv,
                                        const tcc_tutorial_conv2d_params *params);

#ifdef __cplusplus
}
#endif

#endif
