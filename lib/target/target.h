/*
 * The target: what each GPU architecture tcc compiles for supports, written once, as TVM's
 * target kinds do. Three tables in target.c:
 *
 *   archs            the archs tcc compiles for, the PTX ISA each needs, its memory limits
 *   tensor shapes    each tensor-core operation tcc can emit: the intrinsic family, the tile
 *                    shape m x n x k, the input type, the accumulators it takes, the first
 *                    arch that has it, and how its fragments sit in registers
 *   device limits    what every one of those archs shares: threads, block and grid sizes,
 *                    static shared memory, registers
 *
 * The command line, tensorize, the default schedule, validation, lowering's launch check and
 * codegen all ask here; codegen adds only how each operation is spelled in LLVM. A new
 * intrinsic (mma.sync, wgmma) or arch is a row here, not an edit in four places.
 */
#ifndef TCI_TARGET_TARGET_H
#define TCI_TARGET_TARGET_H

#include "support/context.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- archs ------------------------------------------------------------------------------- */

typedef struct TargetArch {
    tcc_arch arch;
    const char *name; /* "sm_80": the CPU of the NVPTX target machine and the PTX .target */
    /* The lowest PTX ISA version (x10: 70 is 7.0) that has the arch and every instruction
     * tcc may emit for it. */
    int ptx_isa;
    int64_t max_shared_per_block; /* bytes, dynamic shared memory opted in included */
    int64_t shared_per_sm;        /* bytes */
    int max_threads_per_sm;
    /* The multiprocessors of the arch's data-center part (V100, T4, A100, A10, L40S, H100 SXM
     * and H200): a persistent grid's blocks unless the schedule says. */
    int multiprocessors;
    int64_t l2_bytes; /* the L2 cache of that part */
    bool async_copy;  /* cp.async from global to shared memory, with commit and wait groups */
    bool wgmma;       /* warpgroup products from shared memory (sm_90a's wgmma.mma_async) */
    /* The bulk tensor copy engine (cp.async.bulk.tensor) with its mbarriers: an sm_90
     * feature, emitted only for sm_90a, whose PTX ISA (8.0) has every form tcc uses. */
    bool bulk_copy;
    /* Warpgroups raise and lower their registers (setmaxnreg, for warp specialization): sm_90a
     * only. */
    bool setmaxnreg;
    /* Thread-block clusters (barrier.cluster, mapa, a cluster's shared memory): sm_90. */
    bool clusters;
} TargetArch;

/* The row of `arch`, or NULL when tcc does not compile for it. */
const TargetArch *tci_target_arch(tcc_arch arch);
/* How messages name an arch: "sm_90a", or "sm_61" for one tcc does not compile for. */
typedef struct ArchLabel {
    char text[16];
} ArchLabel;
ArchLabel tci_target_arch_label(tcc_arch arch);
/* The oldest arch tcc compiles for that is `min_arch` or newer (0 when none is): what to
 * ask for when the ISA's first arch with something is one tcc does not target (sm_72). */
int tci_target_first_arch_from(int min_arch);
/* The archs tcc compiles for, oldest first. */
int tci_target_arch_count(void);
const TargetArch *tci_target_arch_at(int index);

/* ---- device limits ----------------------------------------------------------------------- */

typedef struct DeviceLimits {
    int warp_size;
    int warpgroup_size; /* threads of a warpgroup (wgmma, sm_90a): four warps */
    int64_t threads_per_block;
    int64_t block_dim[3];         /* threadIdx.x, .y, .z */
    int64_t grid_dim[3];          /* blockIdx.x, .y, .z */
    int64_t static_shared_bytes;  /* per block, without opting in to dynamic shared memory */
    int64_t registers_per_block;  /* 32-bit registers */
    int64_t registers_per_thread; /* 32-bit registers */
    /* A warp's registers are allocated this many at a time: a warp of r registers a thread
     * holds r * warp_size rounded up to it (the occupancy calculator's allocation unit). */
    int64_t register_allocation_unit;
} DeviceLimits;

/* The limits of every arch of the table (sm_70 to sm_90 share them). */
extern const DeviceLimits tci_device_limits;

/* The registers a block of `threads` holds at `registers` a thread, as the hardware allocates
 * them: whole warps, each warp's registers rounded up to the allocation unit. What the driver
 * compares with the registers a block may have. */
int64_t tci_target_block_registers(int64_t threads, int registers);

/* "blockIdx.x" ... "threadIdx.z": how the loop IR, the LLVM IR and messages name a launch
 * dimension. */
const char *tci_thread_tag_name(tcc_thread_tag tag);

/* Refuses a launch (grid x, y, z then block x, y, z) the device cannot run: each size at
 * least 1, the block's threads and each dimension within the limits. */
tcc_status tci_target_validate_launch(tcc_context *ctx, const int64_t launch[6]);
/* Whether a grid of more blocks along blockIdx.y or .z than the device allows runs folded
 * onto blockIdx.x (fold_grid): true, with `folded` the launch it becomes (Gx * Gy * Gz blocks
 * along x, the threads as they were), when it exceeds y's or z's limit but its blocks fit x's.
 * False for a grid within the limits, or one too large to fold. */
bool tci_target_fold_launch(const int64_t launch[6], int64_t folded[6]);

/* ---- tensor-core operations -------------------------------------------------------------- */

/* The instruction families: WMMA (opaque fragments, loads and stores of whole tiles),
 * mma.sync (fragments whose registers each thread knows: ldmatrix loads them, and a tile
 * of m16n16k16 is two m16n8k16 instructions) and wgmma (a warpgroup of four warps multiplies
 * A and B straight from shared memory, asynchronously, into accumulators laid out as
 * mma.sync's, one m16 row band per warp). */
typedef enum TensorFamily {
    TENSOR_WMMA,
    TENSOR_MMA_SYNC,
    TENSOR_WGMMA,
} TensorFamily;

/* How one register of a fragment holds its elements. */
typedef enum FragmentRegister {
    FRAGMENT_F16X2, /* two float16 */
    FRAGMENT_F32,   /* one float32 */
    FRAGMENT_B32,   /* 32 bits of packed bfloat16, tf32 or int8 elements, or one int32 */
} FragmentRegister;

enum { TENSOR_MAX_ACCUMULATORS = 2 };

/* One tile shape of one family with one input type. */
typedef struct TensorShape {
    TensorFamily family;
    int m, n, k;
    tcc_dtype input; /* the element type in memory; float32 is read by the tensor cores as tf32 */
    /* The first arch with this operation, as the PTX ISA says (int8 WMMA is sm_72's, though
     * the first arch tcc targets past sm_70 is sm_75). */
    int min_arch;
    tcc_dtype accumulators[TENSOR_MAX_ACCUMULATORS]; /* TCC_VOID ends the list */
    FragmentRegister reg;                            /* of the A and B fragments */
    int a_regs, b_regs;                              /* registers per thread */
} TensorShape;

/* An accumulator (C and D fragments): the register of every shape; a thread holds
 * m * n / tci_target_family_threads elements of it (tci_target_accumulator_regs). */
typedef struct TensorAccumulator {
    tcc_dtype type;
    FragmentRegister reg;
    int elements_per_reg;
} TensorAccumulator;

int tci_target_shape_count(void);
const TensorShape *tci_target_shape_at(int index);
/* The row for shape m x n x k and `input` (of any family, WMMA first), or NULL. */
const TensorShape *tci_target_shape(int m, int n, int k, tcc_dtype input);
/* The same, of one family. */
const TensorShape *tci_target_family_shape(TensorFamily family, int m, int n, int k,
                                           tcc_dtype input);
/* wgmma's k for `input` (16 for 16-bit types, 8 for tf32, 32 for int8: 32 bytes of k), or 0
 * where wgmma does not take it. */
int tci_target_wgmma_k(tcc_dtype input);
/* Whether wgmma reads an operand of `input` transposed from shared memory (MN-major, rows
 * along m or n): float16 and bfloat16 only (the PTX ISA's imm-trans-a/b); tf32's and int8's
 * operands must be k-major. */
bool tci_target_wgmma_transposes(tcc_dtype input);
/* "WMMA", "mma.sync", "wgmma": how messages name a family. */
const char *tci_target_family_name(TensorFamily family);
/* The threads that issue one operation together: a warp, or a warpgroup for wgmma. */
int tci_target_family_threads(TensorFamily family);
/* Whether `arch` has the operations of `family` (wgmma is sm_90a's alone). */
bool tci_target_arch_has_family(tcc_arch arch, TensorFamily family);
/* The first arch with any operation of `family`. */
int tci_target_family_min_arch(TensorFamily family);
/* Whether any input type has the shape m x n x k. */
bool tci_target_shape_exists(int m, int n, int k);
bool tci_target_shape_takes(const TensorShape *shape, tcc_dtype accumulator);
/* The accumulator of `type`, or NULL when no operation produces it. */
const TensorAccumulator *tci_target_accumulator(tcc_dtype type);
/* Registers a thread holds of an m x n accumulator of `acc` in `family`. */
int tci_target_accumulator_regs(const TensorAccumulator *acc, TensorFamily family, int m, int n);
/* Where the accumulator element a thread holds in register `reg` lies, for the families
 * whose accumulators are mma.sync's m16n8 tiles side by side (mma.sync; wgmma, one band of 16
 * rows a warp): lane l of the warp holds it at row l / 4 + *row, column 2 (l % 4) + *col of
 * its warp's band. One element a register (float32 or int32 accumulators). The epilogue from
 * registers (tensorize) places elements by it; codegen's stores of whole tiles
 * (tci_cg_store_accumulators) walk the same layout. */
void tci_target_accumulator_element(int reg, int *row, int *col);
/* The first arch with an m x n x k operation accumulating in `type`; 0 when there is none. */
int tci_target_accumulator_min_arch(int m, int n, int k, tcc_dtype type);

/* "m16n16k16"; `out` holds at least 32 bytes. */
const char *tci_target_shape_name(int m, int n, int k, char *out, size_t size);
/* Writes the distinct shape names (of every input type when `input` is TCC_VOID) as a list,
 * `last` (" or ", " and ") before the final one: "a, b or c". */
void tci_target_shape_names(tcc_dtype input, const char *last, char *out, size_t size);

/* ---- validation against the tables ------------------------------------------------------- */

/* The element types of a tensor-core product: an input type some operation takes, and an
 * accumulator that operation offers for it (messages name the descriptor fields
 * input_type and accumulate_type). */
tcc_status tci_target_validate_types(tcc_context *ctx, tcc_dtype input, tcc_dtype accumulate);
/* That `arch` has tensor cores for `input` at all (some shape of it). */
tcc_status tci_target_validate_input(tcc_context *ctx, tcc_dtype input, tcc_arch arch);
/* That the shape m x n x k exists for `input`. */
tcc_status tci_target_validate_shape(tcc_context *ctx, tcc_dtype input, int m, int n, int k);
/* That `arch` can hold values of `type` (bfloat16 conversions need sm_80). */
tcc_status tci_target_validate_scalar(tcc_context *ctx, tcc_dtype type, tcc_arch arch);

#endif
