/*
 * tcc's base: the version, status codes, element types, archs, the context that receives errors,
 * what the target supports (archs, tensor-core shapes), and number formats (float16, bfloat16,
 * tf32). Every other header of tcc includes this one.
 */
#ifndef TCC_BASE_H
#define TCC_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tcc/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tcc_status {
    TCC_OK = 0,
    TCC_ERROR_INVALID_ARGUMENT, /* bad sizes, options or API misuse */
    TCC_ERROR_UNSUPPORTED,      /* valid, but not something tcc can compile (yet) */
    TCC_ERROR_SCHEDULE,         /* the schedule is inconsistent or exceeds device limits */
    TCC_ERROR_LLVM,             /* LLVM or ptxas (nvJitLink) rejected the code (a tcc bug) */
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
    /* sm_90 with its arch-specific instructions (wgmma, setmaxnreg): PTX for it runs on
     * compute capability 9.0 only. Ordered after sm_90, as it has all sm_90 has. */
    TCC_SM_90A = 91,
} tcc_arch;

typedef struct tcc_context tcc_context;

/* ---- version ---------------------------------------------------------------------- */

/* The version the library was built as ("MAJOR.MINOR.PATCH"; TCC_VERSION_NUMBER's 10000 * major +
 * 100 * minor + patch): compare with TCC_VERSION_STRING / TCC_VERSION_NUMBER of the headers
 * a program was compiled with. */
const char *tcc_version_string(void);
int tcc_version_number(void);

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
/* The newest arch tcc compiles for whose code runs on a device of compute capability
 * `compute_capability` (major * 10 + minor): sm_90a on 9.0 only; 0 when none does. */
tcc_arch tcc_arch_for_device(int compute_capability);

/* The launch dimensions a loop can be bound to (TVM's thread tags). */
typedef enum tcc_thread_tag {
    TCC_BLOCK_X = 0,
    TCC_BLOCK_Y,
    TCC_BLOCK_Z,
    TCC_THREAD_X,
    TCC_THREAD_Y,
    TCC_THREAD_Z,
    /* TVM's "vthread": not a launch dimension. Each axis bound to it gets a variable of its
     * own, and lowering runs its iterations one after the other inside each thread, their
     * statements interleaved and their register buffers replicated (inject_virtual_thread).
     * Several axes of a stage may be bound to it. */
    TCC_VTHREAD,
} tcc_thread_tag;

/* A tensor-core tile: m x n outputs from a reduction of k. */
typedef struct tcc_mma_shape {
    int m, n, k;
} tcc_mma_shape;
/* The tile shapes tcc can tensorize, each once whatever the input type. */
int tcc_mma_shape_count(void);
tcc_mma_shape tcc_mma_shape_at(int index);
/* Whether `shape` takes `input` elements (on some arch). */
bool tcc_mma_shape_takes(tcc_mma_shape shape, tcc_dtype input);

/* ---- half-precision helpers -------------------------------------------------------- */

uint16_t tcc_f32_to_f16(float value);
float tcc_f16_to_f32(uint16_t bits);
uint16_t tcc_f32_to_bf16(float value); /* round to nearest even */
float tcc_bf16_to_f32(uint16_t bits);
float tcc_f32_to_tf32(float value); /* keeps 10 mantissa bits: nearest, ties away (cvt.rna) */
size_t tcc_dtype_size(tcc_dtype type);
bool tcc_dtype_is_float(tcc_dtype type); /* float16, bfloat16 or float32 */

#ifdef __cplusplus
}
#endif

#endif
