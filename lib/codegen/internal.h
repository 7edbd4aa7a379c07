/*
 * What the files of the code generator share: its state and the helpers every part uses.
 *
 *   codegen.c      the entry point: the legality pre-pass, then statements and loops
 *   expr.c         expressions
 *   memory.c       buffers and address spaces: allocations, loads, stores
 *   tensor_core.c  WMMA statements: legality, fragments, intrinsic names
 *   mma_sync.c     mma.sync statements: ldmatrix, m16n8k16, per-thread accumulator stores
 *   wgmma.c        wgmma statements (inline PTX): descriptors, products, the protocol
 *   bulk_copy.c    bulk tensor copies and mbarriers (inline PTX)
 *   signature.c    the kernel function: parameters, attributes, launch bounds, its symbol
 *   llvm.c         the LLVM module pipeline: target machines, verify, default<O3>, PTX
 *
 * Every generator returns false (or NULL) after recording the first failure with
 * tci_cg_fail; callers stop at the first false.
 */
#ifndef TCI_CODEGEN_INTERNAL_H
#define TCI_CODEGEN_INTERNAL_H

#include "codegen/codegen.h"
#include "codegen/llvm.h"

#define ADDRSPACE_GENERIC 0
#define ADDRSPACE_GLOBAL 1
#define ADDRSPACE_SHARED 3

/* The intrinsics emitted by name outside tensor_core.c, named once here so that the
 * start-up check (tci_codegen_check_intrinsics) looks up exactly what is emitted. */
#define INTRINSIC_BARRIER "llvm.nvvm.barrier0"
/* blockIdx, threadIdx, laneid: read anywhere, never convergent. */
#define SPECIAL_REGISTER_PREFIX "llvm.nvvm.read.ptx.sreg."
#define INTRINSIC_TF32_ROUND "llvm.nvvm.f2tf32.rna"
#define INTRINSIC_FLOOR "llvm.floor"
#define INTRINSIC_ASYNC_COMMIT "llvm.nvvm.cp.async.commit.group"
#define INTRINSIC_ASYNC_WAIT "llvm.nvvm.cp.async.wait.group"
#define INTRINSIC_NAMED_BARRIER "llvm.nvvm.barrier.sync.cnt"
#define INTRINSIC_CLUSTER_ARRIVE "llvm.nvvm.barrier.cluster.arrive.aligned"
#define INTRINSIC_CLUSTER_WAIT "llvm.nvvm.barrier.cluster.wait.aligned"
#define INTRINSIC_SETMAXNREG_INC "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32"
#define INTRINSIC_SETMAXNREG_DEC "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32"

/* The most tensor maps a kernel takes (each a 128-byte parameter). */
enum { TCI_CG_MAX_TENSOR_MAPS = 16 };

/* The most registers one accumulator fragment has: wgmma's m64n256 in float32. */
enum { TCI_CG_MAX_ACC_REGS = 128 };

/* How a fragment buffer sits in registers: registers per fragment, elements per fragment. */
typedef struct FragLayout {
    FragmentRegister reg;
    int regs;
    int64_t tile;    /* elements of one fragment */
    const char *ptx; /* the type suffix of its intrinsics' names: "f16", "tf32", "s32" ... */
} FragLayout;

typedef struct VarBinding {
    const Var *var;
    LLVMValueRef value;
} VarBinding;

typedef struct BufferBinding {
    const Buffer *buffer;
    LLVMValueRef base;  /* pointer to the first element (or fragment) */
    LLVMTypeRef elem;   /* element type; for fragments, one fragment's register array */
    unsigned addrspace; /* of base */
    bool fragment;
    FragLayout frag;
} BufferBinding;

/* What the pre-pass learns about a fragment buffer from the WMMA statements using it. */
typedef struct FragUse {
    const Buffer *buffer;
    TensorFamily family;
    int m, n, k;
    bool layout_known, col_major; /* A and B: the layout they were loaded with */
} FragUse;

typedef struct Codegen {
    tcc_context *ctx;
    const PrimFunc *func;
    tcc_arch arch;
    tcc_status status; /* the first failure; TCC_OK while all is well */

    FragUse *frags;
    int nfrag, frag_cap;
    int64_t shared_bytes; /* static: allocations plan_shared did not place */
    /* Warpgroups move registers (setmaxnreg): the kernel then declares one block an SM, so
     * that ptxas knows the registers a thread starts with. */
    bool moves_registers;
    bool bulk_stores; /* the kernel stores tiles with the copy engine (waited for at its end) */
    LLVMValueRef dynamic_shared; /* the extern shared array placed buffers live in */

    LLVMContextRef llctx;
    LLVMModuleRef module;
    LLVMBuilderRef builder;       /* the current position in the body */
    LLVMBuilderRef entry_builder; /* allocas and special registers, at the end of entry */
    LLVMValueRef function;
    LLVMValueRef sreg[6]; /* special registers read so far, by tcc_thread_tag */

    VarBinding *vars;
    int nvar, var_cap;
    BufferBinding *buffers;
    int nbuffer, buffer_cap;
} Codegen;

/* ---- state (codegen.c) ------------------------------------------------------------------- */

/* Records the first failure; always returns false. */
bool tci_cg_fail(Codegen *cg, tcc_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* Records a failure whose message is already in the context; returns status == TCC_OK. */
bool tci_cg_ok(Codegen *cg, tcc_status status);
/* Grows *items (of `size`-byte elements) to hold at least count + 1. */
bool tci_cg_reserve(Codegen *cg, void **items, int *cap, int count, size_t size);
/* Variables and buffers are bound while in scope; callers restore cg->nvar / cg->nbuffer. */
LLVMValueRef tci_cg_lookup_var(Codegen *cg, const Var *var);
bool tci_cg_bind_buffer(Codegen *cg, const BufferBinding *binding);
const BufferBinding *tci_cg_lookup_buffer(Codegen *cg, const Buffer *buffer);
bool tci_cg_gen_stmt(Codegen *cg, const Stmt *s);
/* The value of blockIdx.x ... threadIdx.z, read once in the entry block. */
LLVMValueRef tci_cg_thread_index(Codegen *cg, tcc_thread_tag tag);

/* ---- types and small helpers (expr.c) ----------------------------------------------------- */

LLVMTypeRef tci_cg_i32_type(Codegen *cg);
LLVMValueRef tci_cg_i32(Codegen *cg, int64_t value);
/* The LLVM type of a value of `type`; NULL (failed) for bfloat16 on an arch without it. */
LLVMTypeRef tci_cg_scalar_type(Codegen *cg, tcc_dtype type);
/* A call of an intrinsic looked up by name (a name LLVM lacks fails, never an .extern). */
/* Marks a call convergent: LLVM may not make it depend on more of the control flow (the
 * .sync.aligned instructions need every thread of the warp at the same instruction). */
void tci_cg_mark_convergent(Codegen *cg, LLVMValueRef call);
LLVMValueRef tci_cg_call_intrinsic(Codegen *cg, LLVMBuilderRef builder, const char *name,
                                   LLVMTypeRef *overloads, int noverload, LLVMValueRef *args,
                                   int nargs);
/* A vector of `lanes` copies of a scalar (scalars pass through when lanes is 1). */
LLVMValueRef tci_cg_broadcast(Codegen *cg, LLVMValueRef value, int lanes);
int tci_cg_value_lanes(LLVMValueRef value);
LLVMValueRef tci_cg_gen_expr(Codegen *cg, const Expr *e);

/* ---- memory (memory.c) ------------------------------------------------------------------- */

/* A memory (not fragment) buffer, for loads, stores and WMMA loads/stores. */
const BufferBinding *tci_cg_lookup_memory(Codegen *cg, const Buffer *buffer);
LLVMValueRef tci_cg_element_ptr(Codegen *cg, const BufferBinding *binding, LLVMValueRef index);
LLVMValueRef tci_cg_entry_alloca(Codegen *cg, LLVMTypeRef type, const char *name);
/* The name of a buffer's LLVM value: its IR name with [^A-Za-z0-9_] replaced. */
void tci_cg_value_name(const Buffer *buffer, char *out, size_t size);
LLVMValueRef tci_cg_gen_load(Codegen *cg, const Expr *e);
bool tci_cg_gen_copy_async(Codegen *cg, const Stmt *s);
/* Calls the intrinsic names of cp.async and its groups (for the start-up check). */
void tci_cg_async_copy_intrinsic_names(void (*each)(const char *name, void *user), void *user);
bool tci_cg_gen_store(Codegen *cg, const Stmt *s);
/* The shared-memory address (the .shared window's, as i64) of element `index` of `b`. */
LLVMValueRef tci_cg_shared_address(Codegen *cg, const Buffer *b, Expr *index);
/* A call of inline PTX with side effects (it stays where it is, in order with the others). */
LLVMValueRef tci_cg_call_asm(Codegen *cg, LLVMTypeRef result, LLVMTypeRef *params,
                             LLVMValueRef *args, int nargs, const char *text,
                             const char *constraints);
bool tci_cg_gen_allocate(Codegen *cg, const Stmt *s);

/* ---- tensor cores (tensor_core.c) --------------------------------------------------------- */

/* Pre-pass: checks a WMMA statement against the target and notes its fragments' shapes. */
bool tci_cg_analyze_wmma(Codegen *cg, const WmmaStmt *w);
/* Binds a fragment buffer to an alloca of its registers (nothing when no WMMA uses it). */
bool tci_cg_alloc_fragments(Codegen *cg, const Buffer *buffer, BufferBinding *binding);
bool tci_cg_gen_wmma(Codegen *cg, const WmmaStmt *w);
/* Calls `visit` with the name of every tensor-core intrinsic the generator can emit. */
void tci_cg_wmma_intrinsic_names(void (*visit)(const char *name, void *user), void *user);
/* Shared with mma_sync.c: a fragment buffer's binding; its registers as values (appended
 * to args) or stored from an intrinsic's result struct; the address of a WMMA statement's
 * tile; the layout an operand fragment was loaded with. */
const BufferBinding *tci_cg_lookup_fragment(Codegen *cg, const Buffer *buffer);
LLVMTypeRef tci_cg_register_type(Codegen *cg, FragmentRegister reg);
LLVMValueRef tci_cg_fragment_reg_ptr(Codegen *cg, const BufferBinding *frag, LLVMValueRef index,
                                     int reg);
bool tci_cg_load_fragment(Codegen *cg, const Buffer *buffer, const Expr *index, LLVMValueRef *args,
                          int *nargs);
bool tci_cg_store_fragment(Codegen *cg, const Buffer *buffer, const Expr *index,
                           LLVMValueRef result);
/* A load of a fragment buffer (the epilogue from registers, TCC_WGMMA_ELEMENTS): its flat
 * index counts registers, fragment by fragment, and must be a constant (or a contiguous ramp
 * from one) once the loops that read them are unrolled; one element a register. */
LLVMValueRef tci_cg_load_accumulator(Codegen *cg, const BufferBinding *frag, const Expr *e);
LLVMValueRef tci_cg_tile_ptr(Codegen *cg, const WmmaStmt *w, LLVMTypeRef *ptr_type);
bool tci_cg_loaded_col_major(Codegen *cg, const Buffer *buffer);

/* ---- mma.sync (mma_sync.c) ------------------------------------------------------------- */

/* ldmatrix loads, two m16n8k16 per m16n16k16 mma, and per-thread accumulator stores. */
bool tci_cg_gen_mma_sync(Codegen *cg, const WmmaStmt *w);
void tci_cg_mma_sync_intrinsic_names(void (*visit)(const char *name, void *user), void *user);

/* Each thread's accumulator elements into the tile of w (mma.sync's m16n8 layout, per warp of
 * a wgmma warpgroup a band of 16 rows). */
bool tci_cg_store_accumulators(Codegen *cg, const WmmaStmt *w);

/* ---- wgmma (wgmma.c) --------------------------------------------------------------------- */

/* A warpgroup's product from two shared-memory descriptors, and its accumulators' store. */
bool tci_cg_gen_wgmma(Codegen *cg, const WmmaStmt *w);
/* One step of wgmma's protocol, as inline PTX. */
bool tci_cg_gen_wgmma_sync(Codegen *cg, WgmmaSync op, int pending);

/* ---- bulk tensor copies (bulk_copy.c) ------------------------------------------------------ */

/* cp.async.bulk.tensor completing on its mbarrier, and the mbarrier operations (inline PTX). */
bool tci_cg_gen_bulk_copy(Codegen *cg, const Stmt *s);
bool tci_cg_gen_bulk_store(Codegen *cg, const Stmt *s);
bool tci_cg_gen_bulk_wait(Codegen *cg, int pending, bool read);
bool tci_cg_gen_mbarrier(Codegen *cg, const Stmt *s);

/* ---- the kernel function (signature.c) ---------------------------------------------------- */

/* Adds the kernel function with its parameters bound, marked as a kernel with its launch
 * bounds. */
bool tci_cg_add_function(Codegen *cg);
/* Copies name into out with everything but [A-Za-z0-9_] replaced, so that the PTX symbol
 * equals the LLVM name. */
void tci_cg_symbol_name(const char *name, char *out, size_t size);

#endif
