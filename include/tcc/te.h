/*
 * Tensor expressions and schedules (TVM's te): a tcc_func holds tensors (placeholders and
 * computes), their axes and expressions, and the schedule made of TVM's primitives on them.
 * tcc_build lowers, generates and emits it as a tcc_kernel: loop IR, LLVM IR and PTX.
 */
#ifndef TCC_TE_H
#define TCC_TE_H

#include "tcc/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tcc_func tcc_func;
typedef struct tcc_tensor tcc_tensor;
typedef struct tcc_iter_var tcc_iter_var;
typedef struct tcc_expr tcc_expr;
typedef struct tcc_stage tcc_stage;
typedef struct tcc_kernel tcc_kernel;

/* ---- compute definition ------------------------------------------------------------ */

/* A function holds tensors, axes, expressions and the schedule; all freed together. */
tcc_status tcc_func_create(tcc_context *ctx, const char *name, tcc_func **out);
void tcc_func_destroy(tcc_func *func);

tcc_tensor *tcc_placeholder(tcc_func *func, const char *name, int ndim, const int64_t *shape,
                            tcc_dtype type);
tcc_iter_var *tcc_reduce_axis(tcc_func *func, const char *name, int64_t extent);

/* Body of a compute: called once with one expression per output axis. `axis_names`
 * names the output axes for printing (NULL: i0, i1, ...). */
typedef tcc_expr *(*tcc_compute_fn)(tcc_func *func, tcc_expr *const *axes, void *user);
tcc_tensor *tcc_compute(tcc_func *func, const char *name, int ndim, const int64_t *shape,
                        const char *const *axis_names, tcc_dtype type, tcc_compute_fn body,
                        void *user);

/* A compute whose values are stored into `target` (a placeholder: it becomes a kernel
 * parameter) at the index `target_index` gives for its axes, instead of into a tensor of
 * its own. An epilogue walks the (group, row, column) domain of a matrix product this way
 * and writes an NHWC or NCHW output; its body may read `target` (the previous contents).
 * Nothing may read the compute itself. It has the type of `target`. */
typedef void (*tcc_index_fn)(tcc_func *func, tcc_expr *const *axes, tcc_expr **target_index,
                             void *user);
tcc_tensor *tcc_compute_into(tcc_func *func, const char *name, int ndim, const int64_t *shape,
                             const char *const *axis_names, tcc_compute_fn body, tcc_tensor *target,
                             tcc_index_fn target_index, void *user);

tcc_expr *tcc_int(tcc_func *func, int64_t value);
tcc_expr *tcc_float(tcc_func *func, double value, tcc_dtype type);
tcc_expr *tcc_axis(tcc_func *func, tcc_iter_var *axis);
tcc_expr *tcc_add(tcc_func *func, tcc_expr *a, tcc_expr *b);
tcc_expr *tcc_sub(tcc_func *func, tcc_expr *a, tcc_expr *b);
tcc_expr *tcc_mul(tcc_func *func, tcc_expr *a, tcc_expr *b);
tcc_expr *tcc_div(tcc_func *func, tcc_expr *a, tcc_expr *b); /* floor division */
tcc_expr *tcc_mod(tcc_func *func, tcc_expr *a, tcc_expr *b); /* floor modulo */
tcc_expr *tcc_lt(tcc_func *func, tcc_expr *a, tcc_expr *b);
tcc_expr *tcc_le(tcc_func *func, tcc_expr *a, tcc_expr *b);
tcc_expr *tcc_and(tcc_func *func, tcc_expr *a, tcc_expr *b);
/* if_then_else: only the chosen side is evaluated, so a guarded load may be out of range. */
tcc_expr *tcc_select(tcc_func *func, tcc_expr *cond, tcc_expr *then_value, tcc_expr *else_value);
tcc_expr *tcc_cast(tcc_func *func, tcc_dtype type, tcc_expr *value);
tcc_expr *tcc_access(tcc_func *func, tcc_tensor *tensor, int nindex, tcc_expr *const *index);
tcc_expr *tcc_sum(tcc_func *func, tcc_expr *source, int naxis, tcc_iter_var *const *axes);

/* Output axis i of a compute tensor (its stage's root axis). */
tcc_iter_var *tcc_tensor_axis(tcc_tensor *tensor, int i);
/* Reduction axis i of a compute tensor. */
tcc_iter_var *tcc_tensor_reduce_axis(tcc_tensor *tensor, int i);
const char *tcc_tensor_name(const tcc_tensor *tensor);
/* The name an axis prints with ("ic.outer"). */
const char *tcc_iter_var_name(const tcc_iter_var *axis);

/* ---- schedule ---------------------------------------------------------------------- */

typedef enum tcc_scope {
    TCC_SCOPE_GLOBAL = 0,
    TCC_SCOPE_SHARED,
    TCC_SCOPE_LOCAL,
    TCC_SCOPE_WMMA_MATRIX_A,
    TCC_SCOPE_WMMA_MATRIX_B,
    TCC_SCOPE_WMMA_ACCUMULATOR,
} tcc_scope;

/* The tensor-core operations tensorize can map a loop nest onto. */
typedef enum tcc_intrinsic {
    TCC_WMMA_LOAD_A, /* shared -> wmma.matrix_a, a copy of an m x k tile */
    TCC_WMMA_LOAD_B, /* shared -> wmma.matrix_b, a copy of a k x n tile */
    TCC_WMMA_MMA,    /* acc += a * b over an m x n x k nest; its init becomes fill_fragment */
    TCC_WMMA_STORE,  /* wmma.accumulator -> global or shared, a copy of an m x n tile */
    /* The same four as mma.sync (sm_80; float16 and bfloat16, m16n16k16): fragments load
     * from shared memory with ldmatrix, an MMA is two m16n8k16, and each thread stores the
     * accumulator elements it holds. */
    TCC_MMA_SYNC_LOAD_A,
    TCC_MMA_SYNC_LOAD_B,
    TCC_MMA_SYNC_MMA,
    TCC_MMA_SYNC_STORE,
    /* wgmma (sm_90a; float16 and bfloat16 into float32, m64nNk16): a warpgroup of 128
     * threads multiplies A and B read straight from shared memory (no fragment loads): an
     * m x k (n x k) tile there, k contiguous, in swizzled rows of 32, 64 or 128 bytes
     * (tcc_storage_swizzle), or k x m (k x n) in column blocks (tcc_storage_swizzle_blocks),
     * read transposed; each thread stores the accumulators it holds. */
    TCC_WGMMA_MMA,
    TCC_WGMMA_STORE,
    /* The epilogue from registers: an m x n nest that reads a wgmma accumulator tile element
     * by element (any element-wise work, stored anywhere) becomes, in each thread, a loop over
     * the accumulators it holds, at the rows and columns the instruction's layout gives them:
     * no tile staged in memory, no barrier. */
    TCC_WGMMA_ELEMENTS,
} tcc_intrinsic;

/* The schedule of a function whose outputs are `outputs`: one stage per tensor. */
tcc_status tcc_schedule_create(tcc_func *func, int noutput, tcc_tensor *const *outputs);
tcc_stage *tcc_stage_of(tcc_func *func, tcc_tensor *tensor);

tcc_tensor *tcc_cache_read(tcc_func *func, tcc_tensor *tensor, tcc_scope scope, int nreader,
                           tcc_tensor *const *readers);
tcc_tensor *tcc_cache_write(tcc_func *func, tcc_tensor *tensor, tcc_scope scope);

/* Where the tensor of a stage computed inside another lives (TVM's set_scope). */
tcc_status tcc_set_scope(tcc_stage *stage, tcc_scope scope);
tcc_status tcc_split(tcc_stage *stage, tcc_iter_var *axis, int64_t factor, tcc_iter_var **outer,
                     tcc_iter_var **inner);
tcc_status tcc_split_nparts(tcc_stage *stage, tcc_iter_var *axis, int64_t nparts,
                            tcc_iter_var **outer, tcc_iter_var **inner);
tcc_status tcc_fuse(tcc_stage *stage, tcc_iter_var *outer, tcc_iter_var *inner,
                    tcc_iter_var **fused);
tcc_status tcc_reorder(tcc_stage *stage, int naxis, tcc_iter_var *const *order);
tcc_status tcc_bind(tcc_stage *stage, tcc_iter_var *axis, tcc_thread_tag tag);
tcc_status tcc_compute_at(tcc_stage *stage, tcc_stage *parent, tcc_iter_var *axis);
tcc_status tcc_compute_inline(tcc_stage *stage);
tcc_status tcc_vectorize(tcc_stage *stage, tcc_iter_var *axis);
tcc_status tcc_unroll(tcc_stage *stage, tcc_iter_var *axis);
/* TVM's pragma on the loop nest under `axis` (a loop of the stage; TVM's templates give it at
 * the kernel's outermost loop): "auto_unroll_max_step" (value >= 0: every loop inside whose
 * steps, the statements its iterations run unrolled, are at most `value` is unrolled, as TVM's
 * UnrollLoop with auto_max_step; in place of tcc_build_options' auto_unroll_max_step there)
 * and "unroll_explicit" (1: such loops are copied in the loop IR; 0: they stay loops that LLVM
 * unrolls fully). Any other name is refused. */
tcc_status tcc_pragma(tcc_stage *stage, tcc_iter_var *axis, const char *name, int64_t value);
/* Software pipelining (TVM's double_buffer, generalized; TIR's software_pipeline_stage):
 * the stages attached at `axis`, a serial loop, get `stages` buffers each, so that the
 * copies of iteration i + stages - 1 run while iteration i computes (cp.async where the
 * target has it). 2 is double buffering. */
#define TCC_MAX_PIPELINE_STAGES 8
tcc_status tcc_pipeline(tcc_stage *stage, tcc_iter_var *axis, int stages);
/* The same, for work whose reads of a stage are still in flight for `in_flight` more
 * iterations (wgmma's products, waited for a step late so that they run across the
 * barrier): the copies run that many iterations less far ahead, into the stage the work of
 * iteration i - in_flight - 1 read. 0 is tcc_pipeline; at most stages - 2. */
tcc_status tcc_pipeline_in_flight(tcc_stage *stage, tcc_iter_var *axis, int stages, int in_flight);
/* Warp specialization (CUTLASS's TMA warp-specialized kernels): the bulk copies of the
 * pipeline at `axis` (tcc_pipeline, its stages filled by tcc_storage_bulk_copy) are issued by
 * a warpgroup added to the block for them, the producer, which runs ahead of the others as
 * far as the stages allow and gives them most of its registers (setmaxnreg). The others, the
 * consumers, then only wait for stages and compute; they synchronize among themselves with a
 * named barrier. sm_90a; the consumer warpgroups must lie along one thread axis. */
tcc_status tcc_warp_specialize(tcc_stage *stage, tcc_iter_var *axis);
/* A persistent grid (CUTLASS's persistent tile scheduler): the kernel runs on `blocks` blocks
 * (one an SM; fewer where the tiles are fewer, or where fewer spread the rounds evenly), block b
 * computing the tiles the launch's blocks b, b + blocks, b + 2 blocks ... would have, in the order
 * of their linear index (blockIdx.x fastest). The pipeline at `axis` (tcc_pipeline) runs on from
 * one tile into the next: the next tile's first copies fly while this one's epilogue runs. The
 * statements around the pipelined loop inside the block (its accumulators' fill before, the
 * epilogue after) run at its first and last iteration of each tile, so they must not share memory
 * with the stages (store from registers, sm_90a's bulk copies whose reads past a tensor's edges are
 * zeros). */
tcc_status tcc_persistent(tcc_stage *stage, tcc_iter_var *axis, int64_t blocks);
/* Ping-pong (CUTLASS's warp-specialized ping-pong kernels): the persistent, warp-specialized
 * pipeline at `axis` (tcc_persistent, tcc_warp_specialize) runs `consumers` consumer
 * warpgroups that take the block's tiles in turns, each computing whole tiles of its own,
 * so that one's epilogue and waits run under another's products. The block the schedule
 * describes, one warpgroup, is what each consumer computes; the producer fills the stages for
 * each consumer's tile in turn. 2 to TCC_MAX_PINGPONG_CONSUMERS. */
#define TCC_MAX_PINGPONG_CONSUMERS 4
tcc_status tcc_pingpong(tcc_stage *stage, tcc_iter_var *axis, int consumers);
/* Thread-block clusters (sm_90): the blocks along `axis` (bound to a block index) run in
 * clusters of `blocks` neighbours, which the GPU schedules together and whose shared memories
 * are one another's. A stage filled by bulk copies whose tile is the same for every block of a
 * cluster (it does not depend on `axis`: the filter's tile for blocks along the output pixels)
 * is then fetched once for the cluster: each block copies a slice of it and the copy engine
 * writes the slice into every block's stage (multicast), so the cluster reads each such tile
 * from L2 once instead of `blocks` times. `blocks` divides the axis's extent (the build
 * refuses it otherwise); 1 to TCC_MAX_CLUSTER_BLOCKS (1: none); one axis of a stage. */
tcc_status tcc_cluster(tcc_stage *stage, tcc_iter_var *axis, int blocks);
#define TCC_MAX_CLUSTER_BLOCKS 8 /* the portable cluster size */
/* TVM's storage_align: pads the buffer of a stage so that the stride of its dimension
 * `axis` (one of the tensor's own axes) is a multiple of `factor` plus `offset`, e.g.
 * (32, 8) keeps the rows of a 32-wide float16 tile 80 bytes apart, on different banks. */
tcc_status tcc_storage_align(tcc_stage *stage, tcc_iter_var *axis, int64_t factor, int64_t offset);
/* Lays a shared stage out XOR-swizzled instead of padded (CUTLASS's Swizzle<3, 3, 3> for
 * rows of 64 float16): the 16-byte chunks of each 128-byte line permuted by the row, so that
 * ldmatrix and 16-byte copies meet no bank conflicts and every row starts a line. Its rows
 * (the last dimension) must be dense and a power of two of at least 32 bytes; tensor-core
 * loads from it must be ldmatrix (TCC_MMA_SYNC_*), whose lanes address rows one by one, or
 * wgmma (TCC_WGMMA_MMA), whose descriptors name the swizzle of rows of at most 128 bytes. */
tcc_status tcc_storage_swizzle(tcc_stage *stage);
/* Lays a shared stage out in column blocks: its rows x cols tile (the last two dimensions)
 * as tiles of rows x 128 bytes, one after the other, each swizzled on its 128-byte rows (rows
 * a multiple of 8): wgmma's layout for an operand whose rows run along m or n, a row-major B
 * (k x n) or a column-major A (k x m), which it reads transposed. */
tcc_status tcc_storage_swizzle_blocks(tcc_stage *stage);
/* Fills a shared stage with the bulk tensor copy engine (sm_90's TMA, cp.async.bulk.tensor)
 * instead of a loop nest spread over the threads: one thread copies each tile, the copies
 * complete on an mbarrier, and the hardware writes the tile swizzled as the stage is laid
 * out (rows of 128 bytes, tcc_storage_swizzle; or 128-byte column blocks, one copy each,
 * tcc_storage_swizzle_blocks). The map says where the tile lies in a placeholder: a tiled
 * box, or an im2col box of pixels (a convolution's A). Elements past the tensor's edges read
 * as zero. The stage must be computed at a loop that tcc_pipeline marks. */
typedef enum tcc_tensor_map_mode {
    TCC_TENSOR_MAP_TILED,
    TCC_TENSOR_MAP_IM2COL
} tcc_tensor_map_mode;
#define TCC_TENSOR_MAP_MAX_RANK 5
/* How long the L2 cache keeps the lines a bulk copy reads or a bulk store writes
 * (createpolicy, PTX's .L2::cache_hint): as any (normal), among the first evicted (a stream
 * read or written once), or among the last (an operand every tile reads again). */
typedef enum tcc_cache_hint {
    TCC_CACHE_NORMAL = 0,
    TCC_CACHE_EVICT_FIRST,
    TCC_CACHE_EVICT_LAST
} tcc_cache_hint;
typedef struct tcc_tensor_map {
    size_t size; /* sizeof(tcc_tensor_map) (tcc/tcc.h, "ABI") */
    tcc_tensor_map_mode mode;
    tcc_tensor *tensor; /* the placeholder the tiles come from (a kernel parameter) */
    int rank;           /* dimensions, innermost first: tiled 1..5, im2col 3..5 */
    int64_t dims[TCC_TENSOR_MAP_MAX_RANK];
    int64_t strides[TCC_TENSOR_MAP_MAX_RANK]; /* elements between indices of dims 1..rank-1 */
    /* Tiled: the whole tile's extent along each dimension (dimension 0 may span several
     * column blocks). Im2col: box[0] channels of each pixel, box[1] pixels. */
    int64_t box[TCC_TENSOR_MAP_MAX_RANK];
    /* Im2col: the convolution's strides (dims 1..rank-2), the first and last window start
     * of each spatial dimension relative to the tensor (-pad, pad - (R - 1) * dilation),
     * innermost first. Zero strides read as 1. */
    int element_strides[TCC_TENSOR_MAP_MAX_RANK];
    int lower_corner[3], upper_corner[3];
    /* The tile's first element, as expressions of the stage's own axes (tcc_axis of
     * tcc_tensor_axis(stage tensor, i)), which lowering evaluates at the tile's start;
     * im2col: also the filter offsets, innermost first. */
    tcc_expr *coords[TCC_TENSOR_MAP_MAX_RANK];
    tcc_expr *offsets[3];
    tcc_cache_hint cache; /* added after the first release: a map of that size has none */
} tcc_tensor_map;
tcc_status tcc_storage_bulk_copy(tcc_stage *stage, const tcc_tensor_map *map);
/* The loops of a global stage from `axis` in, which copy a shared tile into the map's tensor
 * (a stage made by tcc_cache_write(..., TCC_SCOPE_SHARED) of its output), become bulk tensor
 * stores through `map` (tiled; coordinates over the stage's own axes, evaluated at the tile's
 * start): the thread that issues them waits until the previous tile's stores have read the
 * shared tile before the block writes it again, and the kernel waits for them before it
 * ends. In a persistent grid (tcc_persistent) whose warpgroups write the tile from their
 * accumulators (TCC_WGMMA_ELEMENTS), each warpgroup does so for its own block of the tile,
 * after a barrier of its own. The shared tile lies as the map's box
 * (tcc_storage_swizzle_blocks). sm_90a. */
tcc_status tcc_bulk_store(tcc_stage *stage, tcc_iter_var *axis, const tcc_tensor_map *map);
/* What a launcher encodes into one tensor-map parameter of a built kernel, from the device
 * address of the kernel's parameter `param` (cuTensorMapEncodeTiled, or
 * cuTensorMapEncodeIm2col): dimensions innermost first, strides in bytes, one copy's box, the
 * shared tile's swizzle (32, 64 or 128 bytes), zero fill out of bounds. */
typedef struct tcc_tensor_map_encoding {
    size_t size; /* sizeof(tcc_tensor_map_encoding), set by the caller (tcc/tcc.h, "ABI") */
    tcc_tensor_map_mode mode;
    int param;
    tcc_dtype type;
    int rank;
    int64_t dims[TCC_TENSOR_MAP_MAX_RANK];
    int64_t strides[TCC_TENSOR_MAP_MAX_RANK]; /* strides[0] is the element size */
    int64_t box[TCC_TENSOR_MAP_MAX_RANK];     /* im2col: channels, pixels */
    int element_strides[TCC_TENSOR_MAP_MAX_RANK];
    int lower_corner[3], upper_corner[3];
    int swizzle_bytes;
} tcc_tensor_map_encoding;
/* Replace the loops from `axis` inwards by a tensor-core operation of shape m x n x k. */
tcc_status tcc_tensorize(tcc_stage *stage, tcc_iter_var *axis, tcc_intrinsic intrinsic, int m,
                         int n, int k);
/* The same, for a tile stored column-major: a load of A whose loops are k then m (k x m
 * in memory, m contiguous), a load of B whose loops are n then k, a store of n then m. */
tcc_status tcc_tensorize_layout(tcc_stage *stage, tcc_iter_var *axis, tcc_intrinsic intrinsic,
                                int m, int n, int k, bool col_major);

/* ---- build ------------------------------------------------------------------------- */

typedef struct tcc_build_options {
    size_t size;   /* sizeof(tcc_build_options): set by tcc_build_options_init (tcc/tcc.h, "ABI") */
    tcc_arch arch; /* default TCC_SM_80 */
    int auto_unroll_max_step;     /* TVM's tir.UnrollLoop auto_max_step; default 16 */
    const char *print_after_pass; /* pass name, or "all"; NULL for none */
    /* Receives the loop IR after a pass named by print_after_pass. */
    void (*print_callback)(const char *pass_name, const char *loop_ir, void *user);
    void *print_user;
    /* Also compile the PTX to machine code with nvJitLink (tcc_kernel_compile_machine_code),
     * so that loading the kernel needs no JIT; default false. Added after the first release:
     * a caller built against older headers passes a size without it, read as false. */
    bool machine_code;
    /* machine_code's struct ended in 7 bytes of padding; a size that reached only them would
     * leave a caller of those headers misread. Never read. */
    char reserved[7];
    /* The GPU's multiprocessors (tcc_device_multiprocessors; in clusters,
     * tcc_device_persistent_blocks), which a persistent grid's blocks number where the
     * operator's schedule leaves grid_blocks to the library (0), and which its choices of grid
     * and store weigh the tiles against; 0 (the default): the target's (132 for sm_90a, an
     * H100 SXM's or an H200's); negative is refused. Added after machine_code: a caller built
     * against older headers passes a size without it, read as 0. */
    int multiprocessors;
} tcc_build_options;

void tcc_build_options_init_size(tcc_build_options *options, size_t size);
/* Also a macro over tcc_build_options_init_size with its sizeof (tcc/tcc.h, "ABI"). */
void tcc_build_options_init(tcc_build_options *options);
#define tcc_build_options_init(options)                                                            \
    tcc_build_options_init_size((options), sizeof(tcc_build_options))
/* The lowering passes, in pipeline order: their number, each one's name and a one-line
 * summary (NULL out of range), and the index of a name (-1 when no pass has it). */
int tcc_pass_count(void);
const char *tcc_pass_name(int index);
const char *tcc_pass_summary(int index);
int tcc_pass_index(const char *name);

/* Lowers the schedule, generates LLVM IR, optimizes it and emits PTX. The kernel's
 * parameters are `params`, in order (inputs and outputs, all global tensors). */
tcc_status tcc_build(tcc_func *func, int nparam, tcc_tensor *const *params,
                     const tcc_build_options *options, tcc_kernel **out);
void tcc_kernel_destroy(tcc_kernel *kernel);
/* A kernel as bytes and back (to cache it on disk, or hand it to another process): every
 * field of it, PTX and launches included, in a versioned format that needs no LLVM to read.
 * The bytes are malloc'd (free them with free()). A buffer that is not such bytes, or of
 * another version of the format, is refused in one line. */
tcc_status tcc_kernel_serialize(tcc_context *ctx, const tcc_kernel *kernel, void **bytes,
                                size_t *size);
tcc_status tcc_kernel_deserialize(tcc_context *ctx, const void *bytes, size_t size,
                                  tcc_kernel **out);

/* A kernel is one or more launches, run in order on one stream, each taking the same
 * parameters followed by the kernel's workspaces (device scratch memory that
 * tcc_kernel_load allocates): copies that stage an NCHW or few-channel operand
 * channels-last, the product, and split-K's reduction of the product's partial sums in a
 * fixed order. The accessors without an index describe the main launch (the product). */
const char *tcc_kernel_name(const tcc_kernel *kernel);
const char *tcc_kernel_loop_ir(const tcc_kernel *kernel); /* after the last lowering pass */
const char *tcc_kernel_llvm_ir(const tcc_kernel *kernel); /* after default<O3> */
const char *tcc_kernel_ptx(const tcc_kernel *kernel);     /* NUL-terminated */
void tcc_kernel_grid(const tcc_kernel *kernel, int64_t grid[3]);
void tcc_kernel_block(const tcc_kernel *kernel, int64_t block[3]);
/* Shared memory a block uses, static and dynamic; and the dynamic part alone, which a
 * launch passes (cuLaunchKernel's sharedMemBytes) and which past 48 KB needs
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (tcc_kernel_load sets both). */
int64_t tcc_kernel_shared_bytes(const tcc_kernel *kernel);
int64_t tcc_kernel_dynamic_shared_bytes(const tcc_kernel *kernel);
int tcc_kernel_launch_count(const tcc_kernel *kernel);
const char *tcc_kernel_launch_name(const tcc_kernel *kernel, int index);
void tcc_kernel_launch_grid(const tcc_kernel *kernel, int index, int64_t grid[3]);
void tcc_kernel_launch_block(const tcc_kernel *kernel, int index, int64_t block[3]);
/* Blocks of a thread-block cluster along x, y, z (1, 1, 1: none): a launch with clusters
 * passes them as CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION (cuLaunchKernelEx). */
void tcc_kernel_launch_cluster(const tcc_kernel *kernel, int index, int64_t cluster[3]);
int64_t tcc_kernel_launch_shared_bytes(const tcc_kernel *kernel, int index);
int64_t tcc_kernel_launch_dynamic_shared_bytes(const tcc_kernel *kernel, int index);
/* The tensor maps a launch takes after its buffers and workspaces (bulk tensor copies),
 * which the launcher encodes from the buffers' device addresses: their number, and map
 * `map` into *out, whose size the caller sets (false, *out untouched, out of range or for a
 * size this library does not know). */
int tcc_kernel_launch_tensor_map_count(const tcc_kernel *kernel, int index);
bool tcc_kernel_launch_tensor_map(const tcc_kernel *kernel, int index, int map,
                                  tcc_tensor_map_encoding *out);
int tcc_kernel_workspace_count(const tcc_kernel *kernel);
int64_t tcc_kernel_workspace_bytes(const tcc_kernel *kernel, int index);

/* ---- machine code (nvJitLink) ------------------------------------------------------ */

/* Compiles the kernel's PTX for the arch of its .target line into machine code (an ELF
 * cubin) with NVIDIA's nvJitLink library, opened at run time: libnvJitLink.so.13, else
 * libnvJitLink.so.12, or the file named by the environment variable TCC_NVJITLINK. The kernel
 * keeps the cubin, which tcc_kernel_load then loads without the driver's JIT (falling back to
 * the PTX where the driver cannot take the cubin), and what ptxas reported of each launch:
 * registers a thread and bytes spilled. Safe to call from several threads at once on separate
 * contexts and kernels. Fails with TCC_ERROR_CUDA when the library cannot be opened,
 * TCC_ERROR_LLVM when ptxas rejects the PTX (device code failed to compile),
 * TCC_ERROR_SCHEDULE for a launch whose block cannot hold its threads' registers, and
 * TCC_ERROR_UNSUPPORTED where ptxas undid the kernel's asynchrony (wgmma serialized), as
 * tcc_kernel_load would; the kernel is then left without machine code. */
tcc_status tcc_kernel_compile_machine_code(tcc_context *ctx, tcc_kernel *kernel);
/* The kernel's machine code and its size in bytes; NULL and 0 when it has none. */
const void *tcc_kernel_machine_code(const tcc_kernel *kernel, size_t *size);
/* Registers a thread of launch `index` uses, and the bytes it spills to local memory (stores
 * and loads); -1 when the kernel has no machine code or no such launch. */
int tcc_kernel_launch_registers(const tcc_kernel *kernel, int index);
int64_t tcc_kernel_launch_spill_bytes(const tcc_kernel *kernel, int index);
/* Opens nvJitLink (as tcc_kernel_compile_machine_code does) and says its version, so that a
 * tool can say which it uses; TCC_ERROR_CUDA, with the library named, when it cannot. */
tcc_status tcc_machine_code_available(tcc_context *ctx, int *major, int *minor);

/* ---- loop IR as text (tcc-opt) ----------------------------------------------------- */

/* Parses `text`, loop IR in the printer's syntax (what --emit=loops and --print-after
 * print), runs the passes named in `passes` ("flatten,simplify"; NULL or "" for none) in
 * that order, and sets *out to the result's text, malloc'd (release it with free()).
 * `options` (NULL: the defaults) give auto_unroll_max_step and print_after_pass with its
 * callback. Malformed text fails with TCC_ERROR_INVALID_ARGUMENT and a message
 * "LINE:COLUMN: what was expected"; schedule_ops cannot run, having no schedule to read. */
tcc_status tcc_loop_ir_transform(tcc_context *ctx, const char *text, const char *passes,
                                 const tcc_build_options *options, char **out);

#ifdef __cplusplus
}
#endif

#endif
