/*
 * tcc: a tensor-core compiler.
 *
 * The public C API. Everything an embedding compiler needs is declared here:
 *
 *   tcc_context   owns the LLVM context and the error message of the last failed call.
 *   tcc_func      a compute definition and its schedule; every tensor, axis and
 *                 expression made for it lives (and dies) with it.
 *   tcc_kernel    the result of a build: loop IR text, LLVM IR text, PTX, launch shape.
 *   tcc_device    a GPU opened through the CUDA Driver API (libcuda.so.1, loaded at run time).
 *
 * Every call that can fail returns a tcc_status; on failure tcc_last_error(ctx) says why
 * in one line. The library never prints, exits or aborts. Handles are not shared between
 * contexts; two contexts may be used from two threads at once.
 */
#ifndef TCC_TCC_H
#define TCC_TCC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tcc_status {
    TCC_OK = 0,
    TCC_ERROR_INVALID_ARGUMENT, /* bad sizes, options or API misuse */
    TCC_ERROR_UNSUPPORTED,      /* valid, but not something tcc can compile (yet) */
    TCC_ERROR_SCHEDULE,         /* the schedule is inconsistent or exceeds device limits */
    TCC_ERROR_LLVM,             /* LLVM rejected the module (a tcc bug) */
    TCC_ERROR_CUDA,             /* the driver failed or is missing */
    TCC_ERROR_OUT_OF_MEMORY,
} tcc_status;

typedef enum tcc_dtype {
    TCC_VOID = 0,
    TCC_BOOL,
    TCC_INT8,
    TCC_INT32,
    TCC_FLOAT16,
    TCC_BFLOAT16,
    TCC_FLOAT32,
} tcc_dtype;

typedef enum tcc_arch {
    TCC_SM_70 = 70,
    TCC_SM_75 = 75,
    TCC_SM_80 = 80,
    TCC_SM_86 = 86,
    TCC_SM_89 = 89,
    TCC_SM_90 = 90,
} tcc_arch;

typedef struct tcc_context tcc_context;
typedef struct tcc_func tcc_func;
typedef struct tcc_tensor tcc_tensor;
typedef struct tcc_iter_var tcc_iter_var;
typedef struct tcc_expr tcc_expr;
typedef struct tcc_stage tcc_stage;
typedef struct tcc_kernel tcc_kernel;
typedef struct tcc_device tcc_device;

/* ---- context and errors ------------------------------------------------------------ */

tcc_status tcc_context_create(tcc_context **out);
void tcc_context_destroy(tcc_context *ctx);
/* The message of the last failed call on this context ("" if none). */
const char *tcc_last_error(const tcc_context *ctx);

const char *tcc_dtype_name(tcc_dtype type);

/* ---- targets: what tcc compiles for (the target table, lib/target/) ----------------- */

/* The archs tcc compiles for, oldest first. */
int tcc_arch_count(void);
tcc_arch tcc_arch_at(int index);
/* "sm_80"; NULL for an arch tcc does not compile for. */
const char *tcc_arch_name(tcc_arch arch);
/* Parses "sm_80" etc.; returns TCC_ERROR_INVALID_ARGUMENT for unknown names. */
tcc_status tcc_arch_parse(tcc_context *ctx, const char *name, tcc_arch *out);

/* A tensor-core tile: m x n outputs from a reduction of k. */
typedef struct tcc_mma_shape {
    int m, n, k;
} tcc_mma_shape;
/* The tile shapes tcc can tensorize, each once whatever the input type. */
int tcc_mma_shape_count(void);
tcc_mma_shape tcc_mma_shape_at(int index);
/* Whether `shape` takes `input` elements (on some arch). */
bool tcc_mma_shape_takes(tcc_mma_shape shape, tcc_dtype input);

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

/* ---- schedule ---------------------------------------------------------------------- */

typedef enum tcc_scope {
    TCC_SCOPE_GLOBAL = 0,
    TCC_SCOPE_SHARED,
    TCC_SCOPE_LOCAL,
    TCC_SCOPE_WMMA_MATRIX_A,
    TCC_SCOPE_WMMA_MATRIX_B,
    TCC_SCOPE_WMMA_ACCUMULATOR,
} tcc_scope;

typedef enum tcc_thread_tag {
    TCC_BLOCK_X = 0,
    TCC_BLOCK_Y,
    TCC_BLOCK_Z,
    TCC_THREAD_X,
    TCC_THREAD_Y,
    TCC_THREAD_Z,
} tcc_thread_tag;

/* The tensor-core operations tensorize can map a loop nest onto. */
typedef enum tcc_intrinsic {
    TCC_WMMA_LOAD_A, /* shared -> wmma.matrix_a, a copy of an m x k tile */
    TCC_WMMA_LOAD_B, /* shared -> wmma.matrix_b, a copy of a k x n tile */
    TCC_WMMA_MMA,    /* acc += a * b over an m x n x k nest; its init becomes fill_fragment */
    TCC_WMMA_STORE,  /* wmma.accumulator -> global or shared, a copy of an m x n tile */
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
/* Replace the loops from `axis` inwards by a tensor-core operation of shape m x n x k. */
tcc_status tcc_tensorize(tcc_stage *stage, tcc_iter_var *axis, tcc_intrinsic intrinsic, int m,
                         int n, int k);
/* The same, for a tile stored column-major: a load of A whose loops are k then m (k x m
 * in memory, m contiguous), a load of B whose loops are n then k, a store of n then m. */
tcc_status tcc_tensorize_layout(tcc_stage *stage, tcc_iter_var *axis, tcc_intrinsic intrinsic,
                                int m, int n, int k, bool col_major);

/* ---- build ------------------------------------------------------------------------- */

typedef struct tcc_build_options {
    tcc_arch arch;                /* default TCC_SM_80 */
    int auto_unroll_max_step;     /* TVM's tir.UnrollLoop auto_max_step; default 16 */
    const char *print_after_pass; /* pass name, or "all"; NULL for none */
    /* Receives the loop IR after a pass named by print_after_pass. */
    void (*print_callback)(const char *pass_name, const char *loop_ir, void *user);
    void *print_user;
} tcc_build_options;

void tcc_build_options_init(tcc_build_options *options);
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

const char *tcc_kernel_name(const tcc_kernel *kernel);
const char *tcc_kernel_loop_ir(const tcc_kernel *kernel); /* after the last lowering pass */
const char *tcc_kernel_llvm_ir(const tcc_kernel *kernel); /* after default<O3> */
const char *tcc_kernel_ptx(const tcc_kernel *kernel);     /* NUL-terminated */
void tcc_kernel_grid(const tcc_kernel *kernel, int64_t grid[3]);
void tcc_kernel_block(const tcc_kernel *kernel, int64_t block[3]);
int64_t tcc_kernel_shared_bytes(const tcc_kernel *kernel);

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

/* A 1x1, stride-1 convolution of 1x1x1x1, NHWC/KRSC, float16 -> float32, alpha 1. */
void tcc_conv2d_desc_init(tcc_conv2d_desc *desc);
/* The convolution of the TVM tensor-core tutorial: N=256, 14x14, 256->512, 3x3, s1, p1,
 * in the tutorial's NHWCnc and blocked filter layouts. */
void tcc_tutorial_conv2d_desc(tcc_conv2d_desc *desc);
int64_t tcc_conv2d_out_height(const tcc_conv2d_desc *desc);
int64_t tcc_conv2d_out_width(const tcc_conv2d_desc *desc);
double tcc_conv2d_flops(const tcc_conv2d_desc *desc);

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

typedef struct tcc_matmul_desc {
    int64_t batch; /* independent products of the same shape; 1 for one */
    int64_t m, n, k;
    bool a_col_major; /* A is m x k: row-major (k contiguous) unless column-major */
    bool b_col_major; /* B is k x n: row-major (n contiguous) unless column-major */
    tcc_dtype input_type, accumulate_type, output_type;
    tcc_epilogue epilogue; /* the bias has n values */
} tcc_matmul_desc;

/* 1x1x1, row-major, float16 -> float32, alpha 1. C is always row-major m x n. */
void tcc_matmul_desc_init(tcc_matmul_desc *desc);
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
typedef struct tcc_gemm_schedule {
    int mma_m, mma_n, mma_k; /* m16n16k16, m32n8k16, m8n32k16; m16n16k8 for tf32 */
    int block_row_warps, block_col_warps;
    int warp_row_tiles, warp_col_tiles;
    int num_total_passes, num_fused_passes;
    tcc_mma_policy policy;
    bool column_major_blocks; /* blockIdx.x walks the rows of tiles instead of the columns */
} tcc_gemm_schedule;

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

/* Element counts of a conv2d's tensors in its layouts (the descriptor must be valid). */
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

/* ---- half-precision helpers -------------------------------------------------------- */

uint16_t tcc_f32_to_f16(float value);
float tcc_f16_to_f32(uint16_t bits);
uint16_t tcc_f32_to_bf16(float value); /* round to nearest even */
float tcc_bf16_to_f32(uint16_t bits);
float tcc_f32_to_tf32(float value); /* keeps 10 mantissa bits: nearest, ties away (cvt.rna) */
size_t tcc_dtype_size(tcc_dtype type);

/* ---- runtime (CUDA Driver API, libcuda.so.1 opened at run time) -------------------- */

tcc_status tcc_device_open(tcc_context *ctx, int ordinal, tcc_device **out);
void tcc_device_close(tcc_device *device);
const char *tcc_device_name(const tcc_device *device);
/* The context that receives the errors of this device, its buffers and kernels. */
tcc_context *tcc_device_context(const tcc_device *device);
/* Compute capability as major*10+minor, e.g. 90 */
int tcc_device_arch(const tcc_device *device);

typedef struct tcc_device_buffer tcc_device_buffer;
tcc_status tcc_device_buffer_alloc(tcc_device *device, size_t bytes, tcc_device_buffer **out);
void tcc_device_buffer_free(tcc_device_buffer *buffer);
tcc_status tcc_device_buffer_upload(tcc_device_buffer *buffer, const void *host, size_t bytes);
tcc_status tcc_device_buffer_download(tcc_device_buffer *buffer, void *host, size_t bytes);
/* Fills every byte with `byte` (poisoning outputs before a run). */
tcc_status tcc_device_buffer_fill_bytes(tcc_device_buffer *buffer, unsigned char byte);

typedef struct tcc_loaded_kernel tcc_loaded_kernel;
/* cuModuleLoadDataEx on the kernel's PTX; a rejected module's JIT log is in the error. */
tcc_status tcc_kernel_load(tcc_device *device, const tcc_kernel *kernel, tcc_loaded_kernel **out);
void tcc_loaded_kernel_destroy(tcc_loaded_kernel *loaded);
tcc_status tcc_kernel_launch(tcc_loaded_kernel *loaded, int nbuffer,
                             tcc_device_buffer *const *buffers);
/* Warm-up launches, then `runs` timed launches with CUDA events; the median in ms. */
tcc_status tcc_kernel_time(tcc_loaded_kernel *loaded, int nbuffer,
                           tcc_device_buffer *const *buffers, int warmup, int runs,
                           double *median_ms);

/* ---- checking and timing a kernel on a device (what tcc-conv --run does) ------------- */

typedef struct tcc_check_options {
    uint64_t seed;    /* of the random inputs; print it so a failure can be replayed */
    int64_t samples;  /* outputs compared with the reference; 0 = all of them */
    int threads;      /* of the CPU reference; 0 = all processors */
    int warmup, runs; /* timing: runs = 0 skips it */
} tcc_check_options;

typedef struct tcc_check_result {
    double max_error;      /* max |got - ref| / max |ref| over the compared outputs, where
                              ref is taken before ReLU and clamp (which shrink outputs but
                              never errors) */
    double normwise_error; /* ||got - ref|| / ||ref|| */
    double tolerance;      /* what the types allow (tcc_check_tolerance) */
    int64_t compared;      /* outputs compared */
    int64_t unwritten;     /* outputs that still hold the poison written before the run */
    bool passed;           /* unwritten == 0 and max_error <= tolerance */
    double median_ms;      /* when timed */
} tcc_check_result;

/* The largest max_error the types allow: 1e-3 for float16/bfloat16 inputs accumulated and
 * stored in float32, looser for float16 accumulation, bfloat16 or float16 outputs and tf32,
 * 0 for int8 into int32. */
double tcc_check_tolerance(tcc_dtype input, tcc_dtype accumulate, tcc_dtype output);

/* Fills the kernel's inputs (and bias, residual, previous output) with fresh random
 * values, poisons the output unless the epilogue reads it, runs the kernel once, compares
 * with the CPU reference, then times it. A failed comparison is not an error: read
 * result->passed. The kernel must come from tcc_conv2d_compile / tcc_matmul_compile (or
 * the tutorial's schedule for conv2d) with the same descriptor. */
tcc_status tcc_conv2d_check(tcc_device *device, const tcc_kernel *kernel,
                            const tcc_conv2d_desc *desc, const tcc_check_options *options,
                            tcc_check_result *result);
tcc_status tcc_matmul_check(tcc_device *device, const tcc_kernel *kernel,
                            const tcc_matmul_desc *desc, const tcc_check_options *options,
                            tcc_check_result *result);

#ifdef __cplusplus
}
#endif

#endif
