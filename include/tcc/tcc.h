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
/* Parses "sm_80" etc.; returns TCC_ERROR_INVALID_ARGUMENT for unknown names. */
tcc_status tcc_arch_parse(tcc_context *ctx, const char *name, tcc_arch *out);

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
    TCC_WMMA_LOAD_A,  /* shared -> wmma.matrix_a, a copy of an m x k tile */
    TCC_WMMA_LOAD_B,  /* shared -> wmma.matrix_b, a copy of a k x n tile */
    TCC_WMMA_MMA,     /* acc += a * b over an m x n x k nest; its init becomes fill_fragment */
    TCC_WMMA_STORE,   /* wmma.accumulator -> global or shared, a copy of an m x n tile */
} tcc_intrinsic;

/* The schedule of a function whose outputs are `outputs`: one stage per tensor. */
tcc_status tcc_schedule_create(tcc_func *func, int noutput, tcc_tensor *const *outputs);
tcc_stage *tcc_stage_of(tcc_func *func, tcc_tensor *tensor);

tcc_tensor *tcc_cache_read(tcc_func *func, tcc_tensor *tensor, tcc_scope scope, int nreader,
                           tcc_tensor *const *readers);
tcc_tensor *tcc_cache_write(tcc_func *func, tcc_tensor *tensor, tcc_scope scope);

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
/* The names of the lowering passes, in pipeline order (NULL-terminated). */
const char *const *tcc_pass_names(void);

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
    TCC_LAYOUT_NHWCNC = 0, /* the tutorial's blocked layout: (N/16, H, W, C/16, 16n, 16c) */
} tcc_layout;

typedef struct tcc_conv2d_desc {
    int64_t batch, height, width, in_channels, out_channels;
    int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
    tcc_layout layout;
    tcc_dtype input_type;  /* TCC_FLOAT16 */
    tcc_dtype output_type; /* TCC_FLOAT32 */
} tcc_conv2d_desc;

/* The convolution of the TVM tensor-core tutorial: N=256, 14x14, 256->512, 3x3, s1, p1. */
void tcc_conv2d_seed_desc(tcc_conv2d_desc *desc);
int64_t tcc_conv2d_out_height(const tcc_conv2d_desc *desc);
int64_t tcc_conv2d_out_width(const tcc_conv2d_desc *desc);
double tcc_conv2d_flops(const tcc_conv2d_desc *desc);

typedef struct tcc_conv2d {
    tcc_tensor *input;  /* layout shape, input_type */
    tcc_tensor *filter; /* (R, S, C/16, K/16, 16c, 16k) */
    tcc_tensor *output; /* layout shape, output_type */
    tcc_tensor *padded; /* the zero-padded input (inlined by the schedule) */
    tcc_iter_var *reduce_rc_outer, *reduce_r, *reduce_s, *reduce_rc_inner;
} tcc_conv2d;

/* Validates the descriptor and writes the compute definition into func. */
tcc_status tcc_conv2d_define(tcc_func *func, const tcc_conv2d_desc *desc, tcc_conv2d *out);

/* The tutorial's schedule. Tile sizes are the tutorial's by default. */
typedef struct tcc_conv2d_tutorial_params {
    int64_t block_row_warps, block_col_warps, warp_row_tiles, warp_col_tiles, chunk;
} tcc_conv2d_tutorial_params;
void tcc_conv2d_tutorial_params_init(tcc_conv2d_tutorial_params *params);
tcc_status tcc_conv2d_schedule_tutorial(tcc_func *func, const tcc_conv2d *conv,
                                        const tcc_conv2d_tutorial_params *params);

/* Tensor shapes of a conv2d in its layout, for allocating and filling buffers. */
int64_t tcc_conv2d_input_elements(const tcc_conv2d_desc *desc);
int64_t tcc_conv2d_filter_elements(const tcc_conv2d_desc *desc);
int64_t tcc_conv2d_output_elements(const tcc_conv2d_desc *desc);

/* The CPU reference, in double, from the same fp16 inputs (stored as uint16_t bits).
 * Computes the outputs at the `count` flat output positions in `positions` (all if NULL),
 * using up to `threads` threads. */
tcc_status tcc_conv2d_reference(tcc_context *ctx, const tcc_conv2d_desc *desc,
                                const uint16_t *input, const uint16_t *filter,
                                const int64_t *positions, int64_t count, int threads,
                                double *out);

/* ---- half-precision helpers -------------------------------------------------------- */

uint16_t tcc_f32_to_f16(float value);
float tcc_f16_to_f32(uint16_t bits);

/* ---- runtime (CUDA Driver API, libcuda.so.1 opened at run time) -------------------- */

tcc_status tcc_device_open(tcc_context *ctx, int ordinal, tcc_device **out);
void tcc_device_close(tcc_device *device);
const char *tcc_device_name(const tcc_device *device);
/* Compute capability as major*10+minor, e.g. 90 */
int tcc_device_arch(const tcc_device *device);

typedef struct tcc_device_buffer tcc_device_buffer;
tcc_status tcc_buffer_alloc(tcc_device *device, size_t bytes, tcc_device_buffer **out);
void tcc_buffer_free(tcc_device_buffer *buffer);
tcc_status tcc_buffer_upload(tcc_device_buffer *buffer, const void *host, size_t bytes);
tcc_status tcc_buffer_download(tcc_device_buffer *buffer, void *host, size_t bytes);
/* Fills every byte with `byte` (poisoning outputs before a run). */
tcc_status tcc_buffer_fill_bytes(tcc_device_buffer *buffer, unsigned char byte);

typedef struct tcc_loaded_kernel tcc_loaded_kernel;
/* cuModuleLoadDataEx on the kernel's PTX; a rejected module's JIT log is in the error. */
tcc_status tcc_kernel_load(tcc_device *device, const tcc_kernel *kernel, tcc_loaded_kernel **out);
void tcc_loaded_kernel_destroy(tcc_loaded_kernel *loaded);
tcc_status tcc_kernel_launch(tcc_loaded_kernel *loaded, int nbuffer, tcc_device_buffer *const *buffers);
/* Warm-up launches, then `runs` timed launches with CUDA events; the median in ms. */
tcc_status tcc_kernel_time(tcc_loaded_kernel *loaded, int nbuffer, tcc_device_buffer *const *buffers,
                           int warmup, int runs, double *median_ms);

#ifdef __cplusplus
}
#endif

#endif
