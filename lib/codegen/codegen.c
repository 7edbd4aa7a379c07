/*
 * Loop IR -> LLVM IR.
 *
 * The kernel arrives fully lowered: every memory access has one element offset,
 * unrolled loops are replicated and vectorized loops are RAMP-indexed accesses. The
 * translation is a plain recursive walk: variables and buffers are bound on stacks
 * while in scope, loops become counted loops with a phi, thread loops read special
 * registers, and tensor-core statements become llvm.nvvm.wmma.* calls on fragments
 * kept in entry-block allocas (SROA turns them into registers once indices are
 * constant).
 *
 * Everything the NVPTX backend would abort on (an intrinsic or type the sm lacks) is
 * refused before the module reaches the backend: tensor-core shapes, types and device
 * limits in analyze_kernel, before any LLVM object exists; bfloat16 in scalar_type.
 */
#include "codegen/codegen.h"

#include "codegen/llvm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHARED_LIMIT_BYTES 49152 /* static shared memory; more needs dynamic allocation */
#define THREADS_LIMIT 1024
#define ADDRSPACE_GENERIC 0
#define ADDRSPACE_GLOBAL 1
#define ADDRSPACE_SHARED 3
#define MAX_FRAGMENT_REGS 8

/* ---- tensor-core tables ---------------------------------------------------------------- */

/* The LLVM type of one fragment register. */
typedef enum RegKind {
    REG_HALF2, /* <2 x half> */
    REG_FLOAT,
    REG_INT32, /* packed bf16 / tf32 / s8 elements, or s32 */
} RegKind;

/* A and B fragments of one shape and element type (IntrinsicsNVVM.td, WMMA_REGS). */
typedef struct WmmaInput {
    int m, n, k;
    tcc_dtype type;  /* element type in memory (tf32 is read from float32) */
    const char *ptx; /* type suffix of the intrinsic names */
    RegKind reg;
    int a_regs, b_regs;
    tcc_arch min_arch;
    tcc_dtype acc[2]; /* accumulator types the mma takes with these inputs; TCC_VOID ends */
} WmmaInput;

static const WmmaInput wmma_inputs[] = {
    {16, 16, 16, TCC_FLOAT16, "f16", REG_HALF2, 8, 8, TCC_SM_70, {TCC_FLOAT32, TCC_FLOAT16}},
    {32, 8, 16, TCC_FLOAT16, "f16", REG_HALF2, 8, 8, TCC_SM_70, {TCC_FLOAT32, TCC_FLOAT16}},
    {8, 32, 16, TCC_FLOAT16, "f16", REG_HALF2, 8, 8, TCC_SM_70, {TCC_FLOAT32, TCC_FLOAT16}},
    {16, 16, 16, TCC_BFLOAT16, "bf16", REG_INT32, 4, 4, TCC_SM_80, {TCC_FLOAT32}},
    {32, 8, 16, TCC_BFLOAT16, "bf16", REG_INT32, 8, 2, TCC_SM_80, {TCC_FLOAT32}},
    {8, 32, 16, TCC_BFLOAT16, "bf16", REG_INT32, 2, 8, TCC_SM_80, {TCC_FLOAT32}},
    {16, 16, 8, TCC_FLOAT32, "tf32", REG_INT32, 4, 4, TCC_SM_80, {TCC_FLOAT32}},
    /* Integer WMMA exists from sm_72; sm_75 is the first tcc arch that has it. */
    {16, 16, 16, TCC_INT8, "s8", REG_INT32, 2, 2, TCC_SM_75, {TCC_INT32}},
    {32, 8, 16, TCC_INT8, "s8", REG_INT32, 4, 1, TCC_SM_75, {TCC_INT32}},
    {8, 32, 16, TCC_INT8, "s8", REG_INT32, 1, 4, TCC_SM_75, {TCC_INT32}},
};

/* C and D fragments: the same registers for every shape. */
typedef struct WmmaAcc {
    tcc_dtype type;
    const char *ptx;
    RegKind reg;
    int regs;
} WmmaAcc;

static const WmmaAcc wmma_accs[] = {
    {TCC_FLOAT32, "f32", REG_FLOAT, 8},
    {TCC_FLOAT16, "f16", REG_HALF2, 4},
    {TCC_INT32, "s32", REG_INT32, 8},
};

#define COUNT(array) ((int)(sizeof(array) / sizeof((array)[0])))

static const WmmaInput *find_input(int m, int n, int k, tcc_dtype type)
{
    for (int i = 0; i < COUNT(wmma_inputs); i++) {
        const WmmaInput *in = &wmma_inputs[i];
        if (in->m == m && in->n == n && in->k == k && in->type == type)
            return in;
    }
    return NULL;
}

static bool input_takes_acc(const WmmaInput *in, tcc_dtype acc)
{
    for (int i = 0; i < COUNT(in->acc) && in->acc[i] != TCC_VOID; i++)
        if (in->acc[i] == acc)
            return true;
    return false;
}

/* The accumulator of type `type` for shape m x n x k, and the lowest arch that has any
 * mma of that shape producing it. */
static const WmmaAcc *find_acc(int m, int n, int k, tcc_dtype type, tcc_arch *min_arch)
{
    const WmmaAcc *acc = NULL;
    for (int i = 0; i < COUNT(wmma_accs); i++)
        if (wmma_accs[i].type == type)
            acc = &wmma_accs[i];
    bool found = false;
    for (int i = 0; acc && i < COUNT(wmma_inputs); i++) {
        const WmmaInput *in = &wmma_inputs[i];
        if (in->m == m && in->n == n && in->k == k && input_takes_acc(in, type) &&
            (!found || in->min_arch < *min_arch)) {
            *min_arch = in->min_arch;
            found = true;
        }
    }
    return found ? acc : NULL;
}

/* How a fragment buffer is laid out: registers per fragment, elements per fragment. */
typedef struct FragLayout {
    RegKind reg;
    int regs;
    int64_t tile; /* elements of one fragment */
    const char *ptx;
} FragLayout;

/* ---- code generator state -------------------------------------------------------------- */

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
    int m, n, k;
    bool layout_known, col_major; /* A and B: the layout they were loaded with */
} FragUse;

typedef struct Codegen {
    tcc_context *ctx;
    const PrimFunc *kernel;
    tcc_arch arch;
    tcc_status status; /* the first failure; TCC_OK while all is well */

    FragUse *frags;
    int nfrag, frag_cap;
    int64_t shared_bytes;

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

__attribute__((format(printf, 3, 4))) static bool fail(Codegen *cg, tcc_status status,
                                                       const char *format, ...)
{
    if (cg->status == TCC_OK) {
        va_list args;
        va_start(args, format);
        cg->status = tci_vfail(cg->ctx, status, format, args);
        va_end(args);
    }
    return false;
}

/* Grows *items (of `size`-byte elements) to hold at least count + 1. */
static bool reserve(Codegen *cg, void **items, int *cap, int count, size_t size)
{
    if (count < *cap)
        return true;
    int new_cap = *cap ? *cap * 2 : 16;
    void *grown = realloc(*items, (size_t)new_cap * size);
    if (!grown)
        return fail(cg, TCC_ERROR_OUT_OF_MEMORY, "out of memory in codegen");
    *items = grown;
    *cap = new_cap;
    return true;
}

static bool bind_var(Codegen *cg, const Var *var, LLVMValueRef value)
{
    if (!reserve(cg, (void **)&cg->vars, &cg->var_cap, cg->nvar, sizeof *cg->vars))
        return false;
    cg->vars[cg->nvar++] = (VarBinding){var, value};
    return true;
}

static LLVMValueRef lookup_var(Codegen *cg, const Var *var)
{
    for (int i = cg->nvar - 1; i >= 0; i--)
        if (cg->vars[i].var == var)
            return cg->vars[i].value;
    fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: variable '%s' is used outside its loop",
         var->name ? var->name : "?");
    return NULL;
}

static bool bind_buffer(Codegen *cg, const BufferBinding *binding)
{
    if (!reserve(cg, (void **)&cg->buffers, &cg->buffer_cap, cg->nbuffer, sizeof *cg->buffers))
        return false;
    cg->buffers[cg->nbuffer++] = *binding;
    return true;
}

static const BufferBinding *lookup_buffer(Codegen *cg, const Buffer *buffer)
{
    for (int i = cg->nbuffer - 1; i >= 0; i--)
        if (cg->buffers[i].buffer == buffer)
            return &cg->buffers[i];
    fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: buffer '%s' is used outside its allocation",
         buffer->name ? buffer->name : "?");
    return NULL;
}

/* A memory (not fragment) buffer, for loads, stores and WMMA loads/stores. */
static const BufferBinding *lookup_memory(Codegen *cg, const Buffer *buffer)
{
    const BufferBinding *binding = lookup_buffer(cg, buffer);
    if (binding && binding->fragment) {
        fail(cg, TCC_ERROR_INVALID_ARGUMENT,
             "codegen: fragment '%s' is accessed as memory; only WMMA statements may use it",
             buffer->name);
        return NULL;
    }
    return binding;
}

/* ---- types ------------------------------------------------------------------------------ */

static bool is_float(tcc_dtype type)
{
    return type == TCC_FLOAT16 || type == TCC_BFLOAT16 || type == TCC_FLOAT32;
}

static int64_t dtype_bytes(tcc_dtype type)
{
    return (int64_t)tcc_dtype_size(type);
}

static LLVMTypeRef i32_type(Codegen *cg)
{
    return LLVMInt32TypeInContext(cg->llctx);
}

static LLVMValueRef i32_const(Codegen *cg, int64_t value)
{
    return LLVMConstInt(i32_type(cg), (unsigned long long)value, 1);
}

static LLVMTypeRef scalar_type(Codegen *cg, tcc_dtype type)
{
    switch (type) {
    case TCC_BOOL:
        return LLVMInt1TypeInContext(cg->llctx);
    case TCC_INT8:
        return LLVMInt8TypeInContext(cg->llctx);
    case TCC_INT32:
        return i32_type(cg);
    case TCC_FLOAT16:
        return LLVMHalfTypeInContext(cg->llctx);
    case TCC_FLOAT32:
        return LLVMFloatTypeInContext(cg->llctx);
    case TCC_BFLOAT16:
        /* Conversions to bfloat16 select instructions that sm_80 introduced. */
        if (cg->arch < TCC_SM_80) {
            fail(cg, TCC_ERROR_UNSUPPORTED, "bfloat16 needs sm_80 or newer; the target is sm_%d",
                 (int)cg->arch);
            return NULL;
        }
        return LLVMBFloatTypeInContext(cg->llctx);
    case TCC_VOID:
        break;
    }
    fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: a value has no type");
    return NULL;
}

static LLVMTypeRef value_type(Codegen *cg, tcc_dtype type, int lanes)
{
    LLVMTypeRef scalar = scalar_type(cg, type);
    if (!scalar || lanes <= 1)
        return scalar;
    return LLVMVectorType(scalar, (unsigned)lanes);
}

static LLVMTypeRef reg_type(Codegen *cg, RegKind reg)
{
    switch (reg) {
    case REG_HALF2:
        return LLVMVectorType(LLVMHalfTypeInContext(cg->llctx), 2);
    case REG_FLOAT:
        return LLVMFloatTypeInContext(cg->llctx);
    case REG_INT32:
        return i32_type(cg);
    }
    return NULL;
}

/* ---- small LLVM helpers ----------------------------------------------------------------- */

static LLVMValueRef call_intrinsic(Codegen *cg, LLVMBuilderRef builder, const char *name,
                                   LLVMTypeRef *overloads, int noverload, LLVMValueRef *args,
                                   int nargs)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) {
        fail(cg, TCC_ERROR_LLVM, "LLVM has no intrinsic %s", name);
        return NULL;
    }
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cg->module, id, overloads, (size_t)noverload);
    /* Calls returning void must be unnamed. */
    return LLVMBuildCall2(builder, LLVMGlobalGetValueType(fn), fn, args, (unsigned)nargs, "");
}

/* A vector of `lanes` copies of a scalar (scalars pass through when lanes is 1). */
static LLVMValueRef broadcast(Codegen *cg, LLVMValueRef value, int lanes)
{
    if (!value || lanes <= 1 || LLVMGetTypeKind(LLVMTypeOf(value)) == LLVMVectorTypeKind)
        return value;
    LLVMTypeRef vector = LLVMVectorType(LLVMTypeOf(value), (unsigned)lanes);
    LLVMValueRef one =
        LLVMBuildInsertElement(cg->builder, LLVMGetPoison(vector), value, i32_const(cg, 0), "");
    LLVMValueRef zeros = LLVMConstNull(LLVMVectorType(i32_type(cg), (unsigned)lanes));
    return LLVMBuildShuffleVector(cg->builder, one, LLVMGetPoison(vector), zeros, "");
}

static int value_lanes(LLVMValueRef value)
{
    LLVMTypeRef type = LLVMTypeOf(value);
    if (LLVMGetTypeKind(type) != LLVMVectorTypeKind)
        return 1;
    return (int)LLVMGetVectorSize(type);
}

/* Copies name into out with everything but [A-Za-z0-9_] replaced, so the PTX symbol
 * equals the LLVM name (the backend would mangle '.' into "_$_"). */
static void symbol_name(const char *name, char *out, size_t size)
{
    size_t n = 0;
    if (!name || !*name)
        name = "kernel";
    if (name[0] >= '0' && name[0] <= '9')
        out[n++] = '_';
    for (; *name && n + 1 < size; name++) {
        char c = *name;
        bool ok =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
}

char *tci_codegen_symbol(const char *name)
{
    char buffer[256];
    symbol_name(name, buffer, sizeof buffer);
    return strdup(buffer);
}

/* ---- pre-pass: what the kernel needs from the arch and the device ------------------------ */

static FragUse *find_frag(Codegen *cg, const Buffer *buffer)
{
    for (int i = 0; i < cg->nfrag; i++)
        if (cg->frags[i].buffer == buffer)
            return &cg->frags[i];
    return NULL;
}

static const char *shape_name(const WmmaStmt *w, char *out, size_t size)
{
    snprintf(out, size, "m%dn%dk%d", w->m, w->n, w->k);
    return out;
}

/* Records that a WMMA statement of w's shape uses `buffer` as a fragment of `scope`,
 * loaded with `col_major` when `sets_layout`. */
static bool note_frag(Codegen *cg, const WmmaStmt *w, const Buffer *buffer, tcc_scope scope,
                      bool sets_layout, bool col_major)
{
    char shape[32];
    if (!buffer || buffer->scope != scope)
        return fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                    "codegen: WMMA %s operand '%s' is not a %s fragment",
                    shape_name(w, shape, sizeof shape), buffer ? buffer->name : "(null)",
                    tci_scope_name(scope));
    FragUse *use = find_frag(cg, buffer);
    if (!use) {
        if (!reserve(cg, (void **)&cg->frags, &cg->frag_cap, cg->nfrag, sizeof *cg->frags))
            return false;
        use = &cg->frags[cg->nfrag++];
        *use = (FragUse){buffer, w->m, w->n, w->k, false, false};
    }
    if (use->m != w->m || use->n != w->n || use->k != w->k)
        return fail(cg, TCC_ERROR_UNSUPPORTED,
                    "fragment '%s' is used with two WMMA shapes (m%dn%dk%d and %s)", buffer->name,
                    use->m, use->n, use->k, shape_name(w, shape, sizeof shape));
    if (sets_layout) {
        if (use->layout_known && use->col_major != col_major)
            return fail(cg, TCC_ERROR_UNSUPPORTED,
                        "fragment '%s' is loaded both row-major and column-major", buffer->name);
        use->layout_known = true;
        use->col_major = col_major;
    }
    return true;
}

/* `operands` names what needs min_arch ("float16 inputs", "a float32 accumulator"). */
static bool check_arch(Codegen *cg, const WmmaStmt *w, const char *operands, tcc_arch min_arch)
{
    char shape[32];
    if (cg->arch < TCC_SM_70)
        return fail(cg, TCC_ERROR_UNSUPPORTED,
                    "tensor cores (WMMA) need sm_70 or newer; the target is sm_%d", (int)cg->arch);
    if (cg->arch < min_arch)
        return fail(cg, TCC_ERROR_UNSUPPORTED,
                    "WMMA %s with %s needs sm_%d or newer; the target is sm_%d",
                    shape_name(w, shape, sizeof shape), operands, (int)min_arch, (int)cg->arch);
    return true;
}

static bool check_input(Codegen *cg, const WmmaStmt *w, tcc_dtype type, const WmmaInput **out)
{
    char shape[32], operands[64];
    const WmmaInput *in = find_input(w->m, w->n, w->k, type);
    if (!in)
        return fail(cg, TCC_ERROR_UNSUPPORTED, "WMMA %s with %s inputs is not supported",
                    shape_name(w, shape, sizeof shape), tcc_dtype_name(type));
    if (out)
        *out = in;
    snprintf(operands, sizeof operands, "%s inputs", tcc_dtype_name(type));
    return check_arch(cg, w, operands, in->min_arch);
}

static bool check_acc(Codegen *cg, const WmmaStmt *w, tcc_dtype type)
{
    char shape[32], operands[64];
    tcc_arch min_arch = TCC_SM_70;
    if (!find_acc(w->m, w->n, w->k, type, &min_arch))
        return fail(cg, TCC_ERROR_UNSUPPORTED, "WMMA %s with a %s accumulator is not supported",
                    shape_name(w, shape, sizeof shape), tcc_dtype_name(type));
    snprintf(operands, sizeof operands, "a %s accumulator", tcc_dtype_name(type));
    return check_arch(cg, w, operands, min_arch);
}

static bool check_memory(Codegen *cg, const WmmaStmt *w)
{
    if (!w->memory || w->memory->scope == TCC_SCOPE_WMMA_MATRIX_A ||
        w->memory->scope == TCC_SCOPE_WMMA_MATRIX_B ||
        w->memory->scope == TCC_SCOPE_WMMA_ACCUMULATOR)
        return fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: a WMMA load/store has no memory");
    if (w->nindex != 1)
        return fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                    "codegen: WMMA access to '%s' has %d indices; flattening leaves one",
                    w->memory->name, w->nindex);
    if (w->memory->type != w->fragment->type)
        return fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                    "codegen: WMMA copies between %s memory '%s' and a %s fragment",
                    tcc_dtype_name(w->memory->type), w->memory->name,
                    tcc_dtype_name(w->fragment->type));
    return true;
}

static bool analyze_wmma(Codegen *cg, const WmmaStmt *w)
{
    char shape[32];
    switch (w->op) {
    case WMMA_FILL: {
        if (!w->fragment)
            break;
        if (w->fragment->scope == TCC_SCOPE_WMMA_ACCUMULATOR)
            return check_acc(cg, w, w->fragment->type) &&
                   note_frag(cg, w, w->fragment, w->fragment->scope, false, false);
        return check_input(cg, w, w->fragment->type, NULL) &&
               note_frag(cg, w, w->fragment, w->fragment->scope, false, false);
    }
    case WMMA_LOAD_A:
    case WMMA_LOAD_B: {
        tcc_scope scope = w->op == WMMA_LOAD_A ? TCC_SCOPE_WMMA_MATRIX_A : TCC_SCOPE_WMMA_MATRIX_B;
        return note_frag(cg, w, w->fragment, scope, true, w->col_major) &&
               check_input(cg, w, w->fragment->type, NULL) && check_memory(cg, w);
    }
    case WMMA_MMA: {
        const WmmaInput *in = NULL;
        if (!note_frag(cg, w, w->a, TCC_SCOPE_WMMA_MATRIX_A, false, false) ||
            !note_frag(cg, w, w->b, TCC_SCOPE_WMMA_MATRIX_B, false, false) ||
            !note_frag(cg, w, w->c, TCC_SCOPE_WMMA_ACCUMULATOR, false, false) ||
            !note_frag(cg, w, w->fragment, TCC_SCOPE_WMMA_ACCUMULATOR, false, false) ||
            !check_input(cg, w, w->a->type, &in))
            return false;
        if (w->b->type != w->a->type || w->c->type != w->fragment->type ||
            !input_takes_acc(in, w->c->type))
            return fail(cg, TCC_ERROR_UNSUPPORTED,
                        "WMMA %s mma of %s x %s + %s -> %s is not supported",
                        shape_name(w, shape, sizeof shape), tcc_dtype_name(w->a->type),
                        tcc_dtype_name(w->b->type), tcc_dtype_name(w->c->type),
                        tcc_dtype_name(w->fragment->type));
        return check_acc(cg, w, w->c->type);
    }
    case WMMA_STORE:
        return note_frag(cg, w, w->fragment, TCC_SCOPE_WMMA_ACCUMULATOR, false, false) &&
               check_acc(cg, w, w->fragment->type) && check_memory(cg, w);
    }
    return fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: malformed WMMA statement");
}

static bool analyze_stmt(Codegen *cg, const Stmt *s)
{
    if (!s)
        return true;
    switch (s->kind) {
    case STMT_SEQ:
        for (int i = 0; i < s->seq.count; i++)
            if (!analyze_stmt(cg, s->seq.items[i]))
                return false;
        return true;
    case STMT_FOR:
        return analyze_stmt(cg, s->loop.body);
    case STMT_IF:
        return analyze_stmt(cg, s->branch.then_body) && analyze_stmt(cg, s->branch.else_body);
    case STMT_ALLOCATE:
        if (s->alloc.buffer->scope == TCC_SCOPE_SHARED)
            cg->shared_bytes += s->alloc.buffer->elements * dtype_bytes(s->alloc.buffer->type);
        return analyze_stmt(cg, s->alloc.body);
    case STMT_WMMA:
        return analyze_wmma(cg, &s->wmma);
    case STMT_STORE:
    case STMT_BARRIER:
        return true;
    }
    return fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown statement kind %d", (int)s->kind);
}

/* Device limits that would make the launch fail (or the PTX be rejected) later. */
static bool check_launch(Codegen *cg)
{
    const int64_t *launch = cg->kernel->launch;
    static const int64_t block_limit[3] = {1024, 1024, 64};
    static const int64_t grid_limit[3] = {2147483647, 65535, 65535};
    for (int i = 0; i < 6; i++)
        if (launch[i] < 1)
            return fail(cg, TCC_ERROR_SCHEDULE, "launch size %s is %lld; it must be at least 1",
                        tci_thread_tag_name((tcc_thread_tag)i), (long long)launch[i]);
    int64_t threads = launch[3] * launch[4] * launch[5];
    if (threads > THREADS_LIMIT)
        return fail(cg, TCC_ERROR_SCHEDULE,
                    "schedule needs %lld threads per block (%lld x %lld x %lld); the limit is %d",
                    (long long)threads, (long long)launch[3], (long long)launch[4],
                    (long long)launch[5], THREADS_LIMIT);
    for (int i = 0; i < 3; i++) {
        if (launch[3 + i] > block_limit[i])
            return fail(cg, TCC_ERROR_SCHEDULE, "schedule needs %s = %lld; the limit is %lld",
                        tci_thread_tag_name((tcc_thread_tag)(3 + i)), (long long)launch[3 + i],
                        (long long)block_limit[i]);
        if (launch[i] > grid_limit[i])
            return fail(cg, TCC_ERROR_SCHEDULE, "schedule needs %s = %lld; the limit is %lld",
                        tci_thread_tag_name((tcc_thread_tag)i), (long long)launch[i],
                        (long long)grid_limit[i]);
    }
    return true;
}

static bool analyze_kernel(Codegen *cg)
{
    if (!check_launch(cg) || !analyze_stmt(cg, cg->kernel->body))
        return false;
    if (cg->shared_bytes > SHARED_LIMIT_BYTES)
        return fail(cg, TCC_ERROR_SCHEDULE,
                    "schedule needs %lld bytes of shared memory; the limit for static shared "
                    "memory is %d",
                    (long long)cg->shared_bytes, SHARED_LIMIT_BYTES);
    return true;
}

/* ---- expressions ------------------------------------------------------------------------ */

static LLVMValueRef gen_expr(Codegen *cg, const Expr *e);

static bool contains_load(const Expr *e)
{
    if (!e)
        return false;
    switch (e->kind) {
    case EXPR_INT:
    case EXPR_FLOAT:
    case EXPR_VAR:
        return false;
    case EXPR_LOAD:
    case EXPR_ACCESS:
    case EXPR_REDUCE:
        return true;
    case EXPR_SELECT:
        return contains_load(e->select.cond) || contains_load(e->select.then_value) ||
               contains_load(e->select.else_value);
    case EXPR_CAST:
        return contains_load(e->cast.value);
    case EXPR_RAMP:
        return contains_load(e->ramp.base);
    default:
        return contains_load(e->bin.a) || contains_load(e->bin.b);
    }
}

static LLVMValueRef gen_constant(Codegen *cg, const Expr *e)
{
    LLVMTypeRef type = scalar_type(cg, e->type);
    if (!type)
        return NULL;
    LLVMValueRef value;
    if (is_float(e->type))
        value = LLVMConstReal(type, e->kind == EXPR_FLOAT ? e->float_value : (double)e->int_value);
    else if (e->kind == EXPR_FLOAT)
        value = LLVMConstInt(type, (unsigned long long)(int64_t)e->float_value, 1);
    else
        value = LLVMConstInt(type, (unsigned long long)e->int_value, e->type != TCC_BOOL);
    return broadcast(cg, value, e->lanes);
}

/* Floor division or modulo (EXPR_DIV / EXPR_MOD): the truncating sdiv/srem corrected
 * when the remainder is nonzero and its sign differs from the divisor's. With a positive
 * constant divisor that is just "remainder < 0", which LLVM folds away when it proves the
 * dividend non-negative. */
static LLVMValueRef gen_floor_divmod(Codegen *cg, const Expr *e, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef bd = cg->builder;
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(a));
    LLVMValueRef q = LLVMBuildSDiv(bd, a, b, "");
    LLVMValueRef r = LLVMBuildSRem(bd, a, b, "");
    LLVMValueRef adjust;
    const Expr *divisor = e->bin.b;
    if (divisor->kind == EXPR_INT && divisor->int_value > 0) {
        adjust = LLVMBuildICmp(bd, LLVMIntSLT, r, zero, "");
    } else {
        LLVMValueRef nonzero = LLVMBuildICmp(bd, LLVMIntNE, r, zero, "");
        LLVMValueRef signs = LLVMBuildICmp(bd, LLVMIntSLT, LLVMBuildXor(bd, r, b, ""), zero, "");
        adjust = LLVMBuildAnd(bd, nonzero, signs, "");
    }
    if (e->kind == EXPR_MOD)
        return LLVMBuildSelect(bd, adjust, LLVMBuildNSWAdd(bd, r, b, ""), r, "");
    LLVMValueRef one = LLVMConstInt(LLVMTypeOf(q), 1, 0);
    if (LLVMGetTypeKind(LLVMTypeOf(q)) == LLVMVectorTypeKind)
        one = broadcast(cg, LLVMConstInt(LLVMGetElementType(LLVMTypeOf(q)), 1, 0), value_lanes(q));
    return LLVMBuildSelect(bd, adjust, LLVMBuildNSWSub(bd, q, one, ""), q, "");
}

/* a - floor(a / b) * b, the floor modulo of floats. */
static LLVMValueRef gen_float_mod(Codegen *cg, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef type = LLVMTypeOf(a);
    LLVMValueRef quotient = LLVMBuildFDiv(cg->builder, a, b, "");
    LLVMValueRef floored = call_intrinsic(cg, cg->builder, "llvm.floor", &type, 1, &quotient, 1);
    if (!floored)
        return NULL;
    return LLVMBuildFSub(cg->builder, a, LLVMBuildFMul(cg->builder, floored, b, ""), "");
}

static LLVMValueRef gen_compare(Codegen *cg, ExprKind kind, tcc_dtype type, LLVMValueRef a,
                                LLVMValueRef b)
{
    LLVMBuilderRef bd = cg->builder;
    if (is_float(type)) {
        static const LLVMRealPredicate preds[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                                  LLVMRealOLE};
        return LLVMBuildFCmp(bd, preds[kind - EXPR_EQ], a, b, "");
    }
    /* bool is i1, where signed order would make true < false. */
    bool is_bool = type == TCC_BOOL;
    LLVMIntPredicate preds[] = {LLVMIntEQ, LLVMIntNE, is_bool ? LLVMIntULT : LLVMIntSLT,
                                is_bool ? LLVMIntULE : LLVMIntSLE};
    return LLVMBuildICmp(bd, preds[kind - EXPR_EQ], a, b, "");
}

static LLVMValueRef gen_min_max(Codegen *cg, ExprKind kind, tcc_dtype type, LLVMValueRef a,
                                LLVMValueRef b)
{
    LLVMBuilderRef bd = cg->builder;
    LLVMValueRef less = is_float(type) ? LLVMBuildFCmp(bd, LLVMRealOLT, a, b, "")
                                       : LLVMBuildICmp(bd, LLVMIntSLT, a, b, "");
    return kind == EXPR_MIN ? LLVMBuildSelect(bd, less, a, b, "")
                            : LLVMBuildSelect(bd, less, b, a, "");
}

static LLVMValueRef gen_binary(Codegen *cg, const Expr *e)
{
    LLVMValueRef a = gen_expr(cg, e->bin.a);
    LLVMValueRef b = a ? gen_expr(cg, e->bin.b) : NULL;
    if (!b)
        return NULL;
    /* A scalar meeting a vector is broadcast (vectorized bodies mix the two). */
    int lanes = value_lanes(a) > value_lanes(b) ? value_lanes(a) : value_lanes(b);
    a = broadcast(cg, a, lanes);
    b = broadcast(cg, b, lanes);
    tcc_dtype type = e->bin.a->type;
    bool fp = is_float(type);
    bool nsw = type == TCC_INT32; /* index arithmetic: the lowering checked it fits */
    LLVMBuilderRef bd = cg->builder;
    switch (e->kind) {
    case EXPR_ADD:
        return fp    ? LLVMBuildFAdd(bd, a, b, "")
               : nsw ? LLVMBuildNSWAdd(bd, a, b, "")
                     : LLVMBuildAdd(bd, a, b, "");
    case EXPR_SUB:
        return fp    ? LLVMBuildFSub(bd, a, b, "")
               : nsw ? LLVMBuildNSWSub(bd, a, b, "")
                     : LLVMBuildSub(bd, a, b, "");
    case EXPR_MUL:
        return fp    ? LLVMBuildFMul(bd, a, b, "")
               : nsw ? LLVMBuildNSWMul(bd, a, b, "")
                     : LLVMBuildMul(bd, a, b, "");
    case EXPR_DIV:
        return fp ? LLVMBuildFDiv(bd, a, b, "") : gen_floor_divmod(cg, e, a, b);
    case EXPR_MOD:
        return fp ? gen_float_mod(cg, a, b) : gen_floor_divmod(cg, e, a, b);
    case EXPR_MIN:
    case EXPR_MAX:
        return gen_min_max(cg, e->kind, type, a, b);
    case EXPR_EQ:
    case EXPR_NE:
    case EXPR_LT:
    case EXPR_LE:
        return gen_compare(cg, e->kind, type, a, b);
    case EXPR_AND:
        return LLVMBuildAnd(bd, a, b, "");
    case EXPR_OR:
        return LLVMBuildOr(bd, a, b, "");
    default:
        break;
    }
    fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown binary expression %d", (int)e->kind);
    return NULL;
}

/* The lanes of an if_then_else: a scalar side is broadcast to the other's width. */
static int select_lanes(const Expr *e)
{
    int lanes = e->lanes;
    if (e->select.then_value->lanes > lanes)
        lanes = e->select.then_value->lanes;
    if (e->select.else_value->lanes > lanes)
        lanes = e->select.else_value->lanes;
    return lanes;
}

/* if_then_else whose sides may load: only the chosen side runs, so a guarded load that
 * would be out of bounds never executes. */
static LLVMValueRef gen_select_branches(Codegen *cg, const Expr *e, LLVMValueRef cond)
{
    if (value_lanes(cond) > 1) {
        fail(cg, TCC_ERROR_UNSUPPORTED, "a vector if_then_else guarding a load is not supported");
        return NULL;
    }
    int lanes = select_lanes(e);
    LLVMTypeRef type = value_type(cg, e->type, lanes);
    if (!type)
        return NULL;
    LLVMBasicBlockRef then_bb = LLVMAppendBasicBlockInContext(cg->llctx, cg->function, "sel.then");
    LLVMBasicBlockRef else_bb = LLVMAppendBasicBlockInContext(cg->llctx, cg->function, "sel.else");
    LLVMBasicBlockRef merge_bb = LLVMAppendBasicBlockInContext(cg->llctx, cg->function, "sel.end");
    LLVMBuildCondBr(cg->builder, cond, then_bb, else_bb);

    LLVMPositionBuilderAtEnd(cg->builder, then_bb);
    LLVMValueRef then_value = broadcast(cg, gen_expr(cg, e->select.then_value), lanes);
    if (!then_value)
        return NULL;
    LLVMBasicBlockRef then_end = LLVMGetInsertBlock(cg->builder);
    LLVMBuildBr(cg->builder, merge_bb);

    LLVMPositionBuilderAtEnd(cg->builder, else_bb);
    LLVMValueRef else_value = broadcast(cg, gen_expr(cg, e->select.else_value), lanes);
    if (!else_value)
        return NULL;
    LLVMBasicBlockRef else_end = LLVMGetInsertBlock(cg->builder);
    LLVMBuildBr(cg->builder, merge_bb);

    LLVMPositionBuilderAtEnd(cg->builder, merge_bb);
    LLVMValueRef phi = LLVMBuildPhi(cg->builder, type, "");
    LLVMValueRef values[2] = {then_value, else_value};
    LLVMBasicBlockRef blocks[2] = {then_end, else_end};
    LLVMAddIncoming(phi, values, blocks, 2);
    return phi;
}

static LLVMValueRef gen_select(Codegen *cg, const Expr *e)
{
    LLVMValueRef cond = gen_expr(cg, e->select.cond);
    if (!cond)
        return NULL;
    if (contains_load(e->select.then_value) || contains_load(e->select.else_value))
        return gen_select_branches(cg, e, cond);
    int lanes = select_lanes(e);
    LLVMValueRef then_value = broadcast(cg, gen_expr(cg, e->select.then_value), lanes);
    LLVMValueRef else_value =
        then_value ? broadcast(cg, gen_expr(cg, e->select.else_value), lanes) : NULL;
    if (!else_value)
        return NULL;
    return LLVMBuildSelect(cg->builder, cond, then_value, else_value, "");
}

static LLVMValueRef gen_cast(Codegen *cg, const Expr *e)
{
    const Expr *source = e->cast.value;
    LLVMValueRef value = gen_expr(cg, source);
    LLVMTypeRef to = value_type(cg, e->type, value ? value_lanes(value) : 1);
    if (!value || !to)
        return NULL;
    tcc_dtype from_type = source->type, to_type = e->type;
    LLVMBuilderRef bd = cg->builder;
    if (from_type == to_type)
        return value;
    if (to_type == TCC_BOOL) {
        LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(value));
        return is_float(from_type) ? LLVMBuildFCmp(bd, LLVMRealUNE, value, zero, "")
                                   : LLVMBuildICmp(bd, LLVMIntNE, value, zero, "");
    }
    if (from_type == TCC_BOOL)
        return is_float(to_type) ? LLVMBuildUIToFP(bd, value, to, "")
                                 : LLVMBuildZExt(bd, value, to, "");
    if (!is_float(from_type) && !is_float(to_type))
        return dtype_bytes(to_type) > dtype_bytes(from_type) ? LLVMBuildSExt(bd, value, to, "")
                                                             : LLVMBuildTrunc(bd, value, to, "");
    if (!is_float(from_type))
        return LLVMBuildSIToFP(bd, value, to, "");
    if (!is_float(to_type))
        return LLVMBuildFPToSI(bd, value, to, "");
    if (dtype_bytes(to_type) > dtype_bytes(from_type))
        return LLVMBuildFPExt(bd, value, to, "");
    if (dtype_bytes(to_type) < dtype_bytes(from_type))
        return LLVMBuildFPTrunc(bd, value, to, "");
    /* float16 <-> bfloat16: through float32, which holds both exactly. */
    LLVMTypeRef f32 = value_type(cg, TCC_FLOAT32, value_lanes(value));
    return LLVMBuildFPTrunc(bd, LLVMBuildFPExt(bd, value, f32, ""), to, "");
}

/* base, base + stride, ... as an i32 vector (a RAMP used as a value, not an index). */
static LLVMValueRef gen_ramp_value(Codegen *cg, const Expr *e)
{
    LLVMValueRef base = gen_expr(cg, e->ramp.base);
    if (!base)
        return NULL;
    LLVMValueRef steps[64];
    if (e->lanes > 64) {
        fail(cg, TCC_ERROR_UNSUPPORTED, "vectors of %d lanes are not supported", e->lanes);
        return NULL;
    }
    for (int i = 0; i < e->lanes; i++)
        steps[i] = i32_const(cg, e->ramp.stride * i);
    return LLVMBuildNSWAdd(cg->builder, broadcast(cg, base, e->lanes),
                           LLVMConstVector(steps, (unsigned)e->lanes), "");
}

static LLVMValueRef element_ptr(Codegen *cg, const BufferBinding *binding, LLVMValueRef index)
{
    return LLVMBuildInBoundsGEP2(cg->builder, binding->elem, binding->base, &index, 1, "");
}

/* Alignment of a contiguous vector access starting at element `base`: what the index
 * provably is a multiple of, times the element size, at most 16 (buffers are allocated
 * 16-byte aligned; global parameters are assumed to be). */
static unsigned vector_align(Codegen *cg, const Buffer *buffer, Expr *base)
{
    int64_t bytes = dtype_bytes(buffer->type);
    int64_t align = bytes * tci_expr_known_divisor(cg->kernel->arena, base);
    if (align > 16)
        align = 16;
    return (unsigned)(align < bytes ? bytes : align);
}

/* A contiguous RAMP index (stride 1): the access is one vector load or store. */
static bool is_contiguous(const Expr *index)
{
    return index->kind == EXPR_RAMP && index->ramp.stride == 1 && index->lanes > 1;
}

static bool check_flat(Codegen *cg, const Buffer *buffer, int nindex)
{
    if (nindex == 1)
        return true;
    return fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                "codegen: access to '%s' has %d indices; flattening leaves one", buffer->name,
                nindex);
}

static LLVMValueRef gen_load(Codegen *cg, const Expr *e)
{
    const BufferBinding *binding = lookup_memory(cg, e->load.buffer);
    if (!binding || !check_flat(cg, e->load.buffer, e->load.nindex))
        return NULL;
    if (e->type != e->load.buffer->type) {
        fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: a %s load from %s '%s'",
             tcc_dtype_name(e->type), tcc_dtype_name(e->load.buffer->type), e->load.buffer->name);
        return NULL;
    }
    const Expr *index = e->load.index[0];
    LLVMTypeRef elem = binding->elem;
    unsigned elem_align = (unsigned)dtype_bytes(e->load.buffer->type);
    if (is_contiguous(index)) {
        LLVMValueRef base = gen_expr(cg, index->ramp.base);
        if (!base)
            return NULL;
        LLVMTypeRef vector = LLVMVectorType(elem, (unsigned)index->lanes);
        LLVMValueRef load = LLVMBuildLoad2(cg->builder, vector, element_ptr(cg, binding, base), "");
        LLVMSetAlignment(load, vector_align(cg, e->load.buffer, index->ramp.base));
        return load;
    }
    LLVMValueRef offsets = gen_expr(cg, index);
    if (!offsets)
        return NULL;
    if (value_lanes(offsets) == 1) {
        LLVMValueRef load =
            LLVMBuildLoad2(cg->builder, elem, element_ptr(cg, binding, offsets), "");
        LLVMSetAlignment(load, elem_align);
        return load;
    }
    /* A gather (strided RAMP or any vector index): one scalar load per lane. */
    int lanes = value_lanes(offsets);
    LLVMValueRef result = LLVMGetPoison(LLVMVectorType(elem, (unsigned)lanes));
    for (int i = 0; i < lanes; i++) {
        LLVMValueRef lane = i32_const(cg, i);
        LLVMValueRef offset = LLVMBuildExtractElement(cg->builder, offsets, lane, "");
        LLVMValueRef load = LLVMBuildLoad2(cg->builder, elem, element_ptr(cg, binding, offset), "");
        LLVMSetAlignment(load, elem_align);
        result = LLVMBuildInsertElement(cg->builder, result, load, lane, "");
    }
    return result;
}

static LLVMValueRef gen_var(Codegen *cg, const Expr *e)
{
    return broadcast(cg, lookup_var(cg, e->var), e->lanes);
}

static LLVMValueRef gen_expr(Codegen *cg, const Expr *e)
{
    if (cg->status != TCC_OK)
        return NULL;
    if (!e) {
        fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: missing expression");
        return NULL;
    }
    switch (e->kind) {
    case EXPR_INT:
    case EXPR_FLOAT:
        return gen_constant(cg, e);
    case EXPR_VAR:
        return gen_var(cg, e);
    case EXPR_NOT: {
        LLVMValueRef a = gen_expr(cg, e->bin.a);
        return a ? LLVMBuildNot(cg->builder, a, "") : NULL;
    }
    case EXPR_SELECT:
        return gen_select(cg, e);
    case EXPR_CAST:
        return gen_cast(cg, e);
    case EXPR_LOAD:
        return gen_load(cg, e);
    case EXPR_RAMP:
        return gen_ramp_value(cg, e);
    case EXPR_ACCESS:
    case EXPR_REDUCE:
        fail(cg, TCC_ERROR_INVALID_ARGUMENT,
             "codegen: a compute-definition expression (tensor access or reduction) survived "
             "lowering");
        return NULL;
    default:
        return gen_binary(cg, e);
    }
}

/* ---- statements ------------------------------------------------------------------------- */

static bool gen_stmt(Codegen *cg, const Stmt *s);

static LLVMBasicBlockRef append_block(Codegen *cg, const char *name)
{
    return LLVMAppendBasicBlockInContext(cg->llctx, cg->function, name);
}

/* A counted loop var in [min, min + extent): header with a phi, body, latch. */
static bool gen_serial_loop(Codegen *cg, const Stmt *s)
{
    const Expr *extent_expr = s->loop.extent;
    if (extent_expr->kind == EXPR_INT && extent_expr->int_value <= 0)
        return true;
    LLVMValueRef min = gen_expr(cg, s->loop.min);
    if (!min)
        return false;
    if (extent_expr->kind == EXPR_INT && extent_expr->int_value == 1) {
        int mark = cg->nvar;
        bool ok = bind_var(cg, s->loop.var, min) && gen_stmt(cg, s->loop.body);
        cg->nvar = mark;
        return ok;
    }
    LLVMValueRef extent = gen_expr(cg, extent_expr);
    if (!extent)
        return false;
    LLVMValueRef end = LLVMBuildNSWAdd(cg->builder, min, extent, "");
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->builder);
    LLVMBasicBlockRef header = append_block(cg, "for.header");
    LLVMBasicBlockRef body = append_block(cg, "for.body");
    LLVMBasicBlockRef exit = append_block(cg, "for.end");
    LLVMBuildBr(cg->builder, header);

    LLVMPositionBuilderAtEnd(cg->builder, header);
    LLVMValueRef counter = LLVMBuildPhi(cg->builder, i32_type(cg), s->loop.var->name);
    LLVMBuildCondBr(cg->builder, LLVMBuildICmp(cg->builder, LLVMIntSLT, counter, end, ""), body,
                    exit);

    LLVMPositionBuilderAtEnd(cg->builder, body);
    int mark = cg->nvar;
    bool ok = bind_var(cg, s->loop.var, counter) && gen_stmt(cg, s->loop.body);
    cg->nvar = mark;
    if (!ok)
        return false;
    LLVMValueRef next = LLVMBuildNSWAdd(cg->builder, counter, i32_const(cg, 1), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(cg->builder);
    LLVMBuildBr(cg->builder, header);
    LLVMValueRef incoming[2] = {min, next};
    LLVMBasicBlockRef blocks[2] = {pre, latch};
    LLVMAddIncoming(counter, incoming, blocks, 2);

    LLVMPositionBuilderAtEnd(cg->builder, exit);
    return true;
}

/* The special register of a thread tag, read once in the entry block. */
static LLVMValueRef special_register(Codegen *cg, tcc_thread_tag tag)
{
    static const char *const names[6] = {
        "llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
        "llvm.nvvm.read.ptx.sreg.ctaid.z", "llvm.nvvm.read.ptx.sreg.tid.x",
        "llvm.nvvm.read.ptx.sreg.tid.y",   "llvm.nvvm.read.ptx.sreg.tid.z",
    };
    if ((int)tag < 0 || (int)tag >= 6) {
        fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown thread tag %d", (int)tag);
        return NULL;
    }
    if (!cg->sreg[tag]) {
        cg->sreg[tag] = call_intrinsic(cg, cg->entry_builder, names[tag], NULL, 0, NULL, 0);
        if (cg->sreg[tag])
            LLVMSetValueName2(cg->sreg[tag], tci_thread_tag_name(tag),
                              strlen(tci_thread_tag_name(tag)));
    }
    return cg->sreg[tag];
}

/* A loop bound to a block or thread index: var = min + index, and when the loop is
 * shorter than the launch, the surplus threads skip the body. */
static bool gen_thread_loop(Codegen *cg, const Stmt *s)
{
    tcc_thread_tag tag = s->loop.tag;
    LLVMValueRef index = special_register(cg, tag);
    if (!index)
        return false;
    int64_t launch = cg->kernel->launch[tag];
    const Expr *extent = s->loop.extent;
    if (extent->kind == EXPR_INT && extent->int_value > launch)
        return fail(cg, TCC_ERROR_SCHEDULE,
                    "loop '%s' bound to %s has extent %lld but the launch has only %lld",
                    s->loop.var->name, tci_thread_tag_name(tag), (long long)extent->int_value,
                    (long long)launch);
    LLVMValueRef value = index;
    if (!tci_expr_is_int(s->loop.min, 0)) {
        LLVMValueRef min = gen_expr(cg, s->loop.min);
        if (!min)
            return false;
        value = LLVMBuildNSWAdd(cg->builder, index, min, "");
    }
    LLVMBasicBlockRef exit = NULL;
    if (!(extent->kind == EXPR_INT && extent->int_value == launch)) {
        LLVMValueRef bound = gen_expr(cg, extent);
        if (!bound)
            return false;
        LLVMBasicBlockRef body = append_block(cg, "thread.body");
        exit = append_block(cg, "thread.end");
        LLVMBuildCondBr(cg->builder, LLVMBuildICmp(cg->builder, LLVMIntSLT, index, bound, ""), body,
                        exit);
        LLVMPositionBuilderAtEnd(cg->builder, body);
    }
    int mark = cg->nvar;
    bool ok = bind_var(cg, s->loop.var, value) && gen_stmt(cg, s->loop.body);
    cg->nvar = mark;
    if (!ok)
        return false;
    if (exit) {
        LLVMBuildBr(cg->builder, exit);
        LLVMPositionBuilderAtEnd(cg->builder, exit);
    }
    return true;
}

static void store_aligned(Codegen *cg, LLVMValueRef value, LLVMValueRef ptr, unsigned align)
{
    LLVMValueRef store = LLVMBuildStore(cg->builder, value, ptr);
    LLVMSetAlignment(store, align);
}

static bool gen_store(Codegen *cg, const Stmt *s)
{
    const Buffer *buffer = s->store.buffer;
    const BufferBinding *binding = lookup_memory(cg, buffer);
    if (!binding || !check_flat(cg, buffer, s->store.nindex))
        return false;
    if (s->store.value->type != buffer->type)
        return fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: a %s value is stored into %s '%s'",
                    tcc_dtype_name(s->store.value->type), tcc_dtype_name(buffer->type),
                    buffer->name);
    const Expr *index = s->store.index[0];
    LLVMValueRef value = gen_expr(cg, s->store.value);
    if (!value)
        return false;
    unsigned elem_align = (unsigned)dtype_bytes(buffer->type);
    if (is_contiguous(index)) {
        LLVMValueRef base = gen_expr(cg, index->ramp.base);
        if (!base)
            return false;
        store_aligned(cg, broadcast(cg, value, index->lanes), element_ptr(cg, binding, base),
                      vector_align(cg, buffer, index->ramp.base));
        return true;
    }
    LLVMValueRef offsets = gen_expr(cg, index);
    if (!offsets)
        return false;
    int lanes = value_lanes(offsets);
    if (lanes == 1) {
        if (value_lanes(value) != 1)
            return fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                        "codegen: a vector is stored at a scalar index of '%s'", buffer->name);
        store_aligned(cg, value, element_ptr(cg, binding, offsets), elem_align);
        return true;
    }
    /* A scatter: one scalar store per lane. */
    value = broadcast(cg, value, lanes);
    for (int i = 0; i < lanes; i++) {
        LLVMValueRef lane = i32_const(cg, i);
        LLVMValueRef offset = LLVMBuildExtractElement(cg->builder, offsets, lane, "");
        store_aligned(cg, LLVMBuildExtractElement(cg->builder, value, lane, ""),
                      element_ptr(cg, binding, offset), elem_align);
    }
    return true;
}

static bool gen_if(Codegen *cg, const Stmt *s)
{
    LLVMValueRef cond = gen_expr(cg, s->branch.cond);
    if (!cond)
        return false;
    if (value_lanes(cond) != 1)
        return fail(cg, TCC_ERROR_INVALID_ARGUMENT,
                    "codegen: an if statement has a vector condition");
    LLVMBasicBlockRef then_bb = append_block(cg, "if.then");
    LLVMBasicBlockRef else_bb = s->branch.else_body ? append_block(cg, "if.else") : NULL;
    LLVMBasicBlockRef merge = append_block(cg, "if.end");
    LLVMBuildCondBr(cg->builder, cond, then_bb, else_bb ? else_bb : merge);
    LLVMPositionBuilderAtEnd(cg->builder, then_bb);
    if (!gen_stmt(cg, s->branch.then_body))
        return false;
    LLVMBuildBr(cg->builder, merge);
    if (else_bb) {
        LLVMPositionBuilderAtEnd(cg->builder, else_bb);
        if (!gen_stmt(cg, s->branch.else_body))
            return false;
        LLVMBuildBr(cg->builder, merge);
    }
    LLVMPositionBuilderAtEnd(cg->builder, merge);
    return true;
}

/* LLVM accepts any name, but plain ones keep the IR and PTX readable. */
static void value_name(const Buffer *buffer, char *out, size_t size)
{
    symbol_name(buffer->name, out, size);
}

static LLVMValueRef entry_alloca(Codegen *cg, LLVMTypeRef type, const char *name)
{
    LLVMValueRef slot = LLVMBuildAlloca(cg->entry_builder, type, name);
    LLVMSetAlignment(slot, 16);
    return slot;
}

/* The register layout of a fragment buffer, from the WMMA statements that use it. */
static bool frag_layout(Codegen *cg, const Buffer *buffer, const FragUse *use, FragLayout *out)
{
    tcc_arch min_arch;
    if (buffer->scope == TCC_SCOPE_WMMA_ACCUMULATOR) {
        const WmmaAcc *acc = find_acc(use->m, use->n, use->k, buffer->type, &min_arch);
        if (!acc)
            return fail(cg, TCC_ERROR_UNSUPPORTED, "unsupported accumulator '%s'", buffer->name);
        *out = (FragLayout){acc->reg, acc->regs, (int64_t)use->m * use->n, acc->ptx};
        return true;
    }
    const WmmaInput *in = find_input(use->m, use->n, use->k, buffer->type);
    if (!in)
        return fail(cg, TCC_ERROR_UNSUPPORTED, "unsupported fragment '%s'", buffer->name);
    bool is_a = buffer->scope == TCC_SCOPE_WMMA_MATRIX_A;
    *out = (FragLayout){in->reg, is_a ? in->a_regs : in->b_regs,
                        (int64_t)(is_a ? use->m : use->n) * use->k, in->ptx};
    return true;
}

static bool alloc_fragments(Codegen *cg, const Buffer *buffer, BufferBinding *binding)
{
    const FragUse *use = find_frag(cg, buffer);
    if (!use)
        return true; /* no WMMA statement touches it: nothing to allocate */
    if (!frag_layout(cg, buffer, use, &binding->frag))
        return false;
    int64_t tile = binding->frag.tile;
    if (buffer->elements % tile != 0)
        return fail(cg, TCC_ERROR_SCHEDULE,
                    "fragment buffer '%s' holds %lld elements, not a whole number of %lld-element "
                    "tiles",
                    buffer->name, (long long)buffer->elements, (long long)tile);
    char name[256];
    value_name(buffer, name, sizeof name);
    binding->fragment = true;
    binding->elem = LLVMArrayType2(reg_type(cg, binding->frag.reg), (uint64_t)binding->frag.regs);
    binding->base =
        entry_alloca(cg, LLVMArrayType2(binding->elem, (uint64_t)(buffer->elements / tile)), name);
    binding->addrspace = ADDRSPACE_GENERIC;
    return true;
}

static bool gen_allocate(Codegen *cg, const Stmt *s)
{
    const Buffer *buffer = s->alloc.buffer;
    BufferBinding binding = {.buffer = buffer};
    char name[256];
    value_name(buffer, name, sizeof name);
    if (buffer->elements <= 0)
        return fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: buffer '%s' has %lld elements",
                    buffer->name, (long long)buffer->elements);
    switch (buffer->scope) {
    case TCC_SCOPE_SHARED:
    case TCC_SCOPE_LOCAL: {
        binding.elem = scalar_type(cg, buffer->type);
        if (!binding.elem)
            return false;
        LLVMTypeRef array = LLVMArrayType2(binding.elem, (uint64_t)buffer->elements);
        if (buffer->scope == TCC_SCOPE_LOCAL) {
            binding.base = entry_alloca(cg, array, name);
            binding.addrspace = ADDRSPACE_GENERIC;
            break;
        }
        binding.base = LLVMAddGlobalInAddressSpace(cg->module, array, name, ADDRSPACE_SHARED);
        LLVMSetLinkage(binding.base, LLVMInternalLinkage);
        LLVMSetInitializer(binding.base, LLVMGetUndef(array));
        /* A WMMA tile must start on a multiple of its fragment's size (32 bytes for
         * f16/f32 fragments); 128 also keeps every row of a 16-wide tile aligned. */
        LLVMSetAlignment(binding.base, 128);
        binding.addrspace = ADDRSPACE_SHARED;
        break;
    }
    case TCC_SCOPE_WMMA_MATRIX_A:
    case TCC_SCOPE_WMMA_MATRIX_B:
    case TCC_SCOPE_WMMA_ACCUMULATOR:
        if (!alloc_fragments(cg, buffer, &binding))
            return false;
        if (!binding.base)
            return gen_stmt(cg, s->alloc.body);
        break;
    case TCC_SCOPE_GLOBAL:
    default:
        return fail(cg, TCC_ERROR_UNSUPPORTED, "cannot allocate global buffer '%s' in a kernel",
                    buffer->name);
    }
    int mark = cg->nbuffer;
    bool ok = bind_buffer(cg, &binding) && gen_stmt(cg, s->alloc.body);
    cg->nbuffer = mark;
    return ok;
}

/* ---- tensor-core statements --------------------------------------------------------------- */

static const BufferBinding *lookup_fragment(Codegen *cg, const Buffer *buffer)
{
    const BufferBinding *binding = lookup_buffer(cg, buffer);
    if (binding && !binding->fragment) {
        fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: '%s' is not a fragment", buffer->name);
        return NULL;
    }
    return binding;
}

/* Pointer to register `reg` of fragment `index`. */
static LLVMValueRef reg_ptr(Codegen *cg, const BufferBinding *frag, LLVMValueRef index, int reg)
{
    LLVMValueRef indices[3] = {i32_const(cg, 0), index, i32_const(cg, reg)};
    int64_t count = frag->buffer->elements / frag->frag.tile;
    LLVMTypeRef array = LLVMArrayType2(frag->elem, (uint64_t)count);
    return LLVMBuildInBoundsGEP2(cg->builder, array, frag->base, indices, 3, "");
}

/* Appends the registers of fragment `index_expr` of `buffer` to args. */
static bool load_regs(Codegen *cg, const Buffer *buffer, const Expr *index_expr, LLVMValueRef *args,
                      int *nargs)
{
    const BufferBinding *frag = lookup_fragment(cg, buffer);
    LLVMValueRef index = frag ? gen_expr(cg, index_expr) : NULL;
    if (!index)
        return false;
    LLVMTypeRef type = reg_type(cg, frag->frag.reg);
    for (int r = 0; r < frag->frag.regs; r++) {
        LLVMValueRef reg = LLVMBuildLoad2(cg->builder, type, reg_ptr(cg, frag, index, r), "");
        args[(*nargs)++] = reg;
    }
    return true;
}

/* Stores an intrinsic's result (a struct of registers, or the one register itself) into
 * fragment `index_expr` of `buffer`. */
/* A tf32 register loaded from float32 memory holds all 23 bits of its mantissa, and the
 * tensor cores would ignore the low 13: round it to nearest instead (cvt.rna.tf32.f32),
 * as the reference and CUTLASS do. */
static LLVMValueRef round_tf32(Codegen *cg, LLVMValueRef reg)
{
    LLVMValueRef value = LLVMBuildBitCast(cg->builder, reg, LLVMFloatTypeInContext(cg->llctx), "");
    return call_intrinsic(cg, cg->builder, "llvm.nvvm.f2tf32.rna", NULL, 0, &value, 1);
}

static bool store_regs(Codegen *cg, const Buffer *buffer, const Expr *index_expr,
                       LLVMValueRef result)
{
    const BufferBinding *frag = lookup_fragment(cg, buffer);
    LLVMValueRef index = frag && result ? gen_expr(cg, index_expr) : NULL;
    if (!index)
        return false;
    bool tf32 = strcmp(frag->frag.ptx, "tf32") == 0;
    for (int r = 0; r < frag->frag.regs; r++) {
        LLVMValueRef reg = frag->frag.regs == 1
                               ? result
                               : LLVMBuildExtractValue(cg->builder, result, (unsigned)r, "");
        if (tf32 && !(reg = round_tf32(cg, reg)))
            return false;
        LLVMBuildStore(cg->builder, reg, reg_ptr(cg, frag, index, r));
    }
    return true;
}

static LLVMValueRef fill_register(Codegen *cg, RegKind reg, double value)
{
    switch (reg) {
    case REG_HALF2: {
        LLVMValueRef half = LLVMConstReal(LLVMHalfTypeInContext(cg->llctx), value);
        LLVMValueRef both[2] = {half, half};
        return LLVMConstVector(both, 2);
    }
    case REG_FLOAT:
        return LLVMConstReal(LLVMFloatTypeInContext(cg->llctx), value);
    case REG_INT32:
        return i32_const(cg, (int64_t)value);
    }
    return NULL;
}

static bool gen_wmma_fill(Codegen *cg, const WmmaStmt *w)
{
    const BufferBinding *frag = lookup_fragment(cg, w->fragment);
    LLVMValueRef index = frag ? gen_expr(cg, w->fragment_index) : NULL;
    if (!index)
        return false;
    /* Packed registers (bf16, tf32, s8 inputs) hold several elements: only zero, whose
     * bits are the same in any packing, can be written as one i32. */
    bool packed = frag->frag.reg == REG_INT32 && w->fragment->type != TCC_INT32;
    if (packed && w->fill_value != 0.0)
        return fail(cg, TCC_ERROR_UNSUPPORTED, "filling %s fragment '%s' with %g is not supported",
                    tcc_dtype_name(w->fragment->type), w->fragment->name, w->fill_value);
    LLVMValueRef value = fill_register(cg, frag->frag.reg, w->fill_value);
    for (int r = 0; r < frag->frag.regs; r++)
        LLVMBuildStore(cg->builder, value, reg_ptr(cg, frag, index, r));
    return true;
}

/* buffer + memory_index elements, and the pointer type the intrinsic is overloaded on. */
static LLVMValueRef tile_ptr(Codegen *cg, const WmmaStmt *w, LLVMTypeRef *ptr_type)
{
    const BufferBinding *memory = lookup_memory(cg, w->memory);
    LLVMValueRef offset = memory ? gen_expr(cg, w->memory_index[0]) : NULL;
    if (!offset)
        return NULL;
    *ptr_type = LLVMPointerTypeInContext(cg->llctx, memory->addrspace);
    return element_ptr(cg, memory, offset);
}

static bool gen_wmma_load(Codegen *cg, const WmmaStmt *w)
{
    const BufferBinding *frag = lookup_fragment(cg, w->fragment);
    LLVMTypeRef ptr_type = NULL;
    LLVMValueRef args[2];
    if (!frag || !(args[0] = tile_ptr(cg, w, &ptr_type)))
        return false;
    args[1] = i32_const(cg, w->stride);
    char name[128];
    snprintf(name, sizeof name, "llvm.nvvm.wmma.m%dn%dk%d.load.%s.%s.stride.%s", w->m, w->n, w->k,
             w->op == WMMA_LOAD_A ? "a" : "b", w->col_major ? "col" : "row", frag->frag.ptx);
    LLVMValueRef result = call_intrinsic(cg, cg->builder, name, &ptr_type, 1, args, 2);
    return store_regs(cg, w->fragment, w->fragment_index, result);
}

static bool gen_wmma_store(Codegen *cg, const WmmaStmt *w)
{
    const BufferBinding *frag = lookup_fragment(cg, w->fragment);
    LLVMTypeRef ptr_type = NULL;
    LLVMValueRef args[MAX_FRAGMENT_REGS + 2];
    int nargs = 1;
    if (!frag || !(args[0] = tile_ptr(cg, w, &ptr_type)) ||
        !load_regs(cg, w->fragment, w->fragment_index, args, &nargs))
        return false;
    args[nargs++] = i32_const(cg, w->stride);
    char name[128];
    snprintf(name, sizeof name, "llvm.nvvm.wmma.m%dn%dk%d.store.d.%s.stride.%s", w->m, w->n, w->k,
             w->col_major ? "col" : "row", frag->frag.ptx);
    return call_intrinsic(cg, cg->builder, name, &ptr_type, 1, args, nargs) != NULL;
}

static const char *frag_layout_name(Codegen *cg, const Buffer *buffer)
{
    const FragUse *use = find_frag(cg, buffer);
    return use && use->layout_known && use->col_major ? "col" : "row";
}

static bool gen_wmma_mma(Codegen *cg, const WmmaStmt *w)
{
    LLVMValueRef args[3 * MAX_FRAGMENT_REGS];
    int nargs = 0;
    if (!load_regs(cg, w->a, w->a_index, args, &nargs) ||
        !load_regs(cg, w->b, w->b_index, args, &nargs) ||
        !load_regs(cg, w->c, w->c_index, args, &nargs))
        return false;
    /* f16 mmas are named by their D and C types, the others by the input type. */
    const WmmaInput *in = find_input(w->m, w->n, w->k, w->a->type);
    const BufferBinding *c = lookup_fragment(cg, w->c);
    const BufferBinding *d = lookup_fragment(cg, w->fragment);
    if (!in || !c || !d)
        return false;
    char types[32];
    if (in->type == TCC_FLOAT16)
        snprintf(types, sizeof types, "%s.%s", d->frag.ptx, c->frag.ptx);
    else
        snprintf(types, sizeof types, "%s", in->ptx);
    char name[128];
    snprintf(name, sizeof name, "llvm.nvvm.wmma.m%dn%dk%d.mma.%s.%s.%s", w->m, w->n, w->k,
             frag_layout_name(cg, w->a), frag_layout_name(cg, w->b), types);
    LLVMValueRef result = call_intrinsic(cg, cg->builder, name, NULL, 0, args, nargs);
    return store_regs(cg, w->fragment, w->fragment_index, result);
}

static bool gen_wmma(Codegen *cg, const WmmaStmt *w)
{
    switch (w->op) {
    case WMMA_FILL:
        return gen_wmma_fill(cg, w);
    case WMMA_LOAD_A:
    case WMMA_LOAD_B:
        return gen_wmma_load(cg, w);
    case WMMA_MMA:
        return gen_wmma_mma(cg, w);
    case WMMA_STORE:
        return gen_wmma_store(cg, w);
    }
    return fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown WMMA operation");
}

static bool gen_stmt(Codegen *cg, const Stmt *s)
{
    if (cg->status != TCC_OK)
        return false;
    if (!s)
        return true;
    switch (s->kind) {
    case STMT_SEQ:
        for (int i = 0; i < s->seq.count; i++)
            if (!gen_stmt(cg, s->seq.items[i]))
                return false;
        return true;
    case STMT_FOR:
        return s->loop.kind == FOR_THREAD ? gen_thread_loop(cg, s) : gen_serial_loop(cg, s);
    case STMT_STORE:
        return gen_store(cg, s);
    case STMT_IF:
        return gen_if(cg, s);
    case STMT_ALLOCATE:
        return gen_allocate(cg, s);
    case STMT_BARRIER:
        return call_intrinsic(cg, cg->builder, "llvm.nvvm.barrier0", NULL, 0, NULL, 0) != NULL;
    case STMT_WMMA:
        return gen_wmma(cg, &s->wmma);
    }
    return fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: unknown statement kind %d", (int)s->kind);
}

/* ---- the kernel function ------------------------------------------------------------------- */

static void add_annotation(Codegen *cg, LLVMMetadataRef *ops, unsigned count)
{
    LLVMMetadataRef node = LLVMMDNodeInContext2(cg->llctx, ops, count);
    LLVMAddNamedMetadataOperand(cg->module, "nvvm.annotations",
                                LLVMMetadataAsValue(cg->llctx, node));
}

static LLVMMetadataRef md_string(Codegen *cg, const char *text)
{
    return LLVMMDStringInContext2(cg->llctx, text, strlen(text));
}

static LLVMMetadataRef md_i32(Codegen *cg, int64_t value)
{
    return LLVMValueAsMetadata(i32_const(cg, value));
}

/* Kernel-ness and launch bounds, in both the forms LLVM 19 reads (nvvm.annotations) and
 * the ones LLVM 21+ reads (calling convention, "nvvm.maxntid"). */
static void mark_kernel(Codegen *cg)
{
    const int64_t *block = cg->kernel->launch + 3;
    LLVMSetFunctionCallConv(cg->function, LLVMPTXKernelCallConv);
    LLVMMetadataRef fn = LLVMValueAsMetadata(cg->function);
    LLVMMetadataRef kernel[3] = {fn, md_string(cg, "kernel"), md_i32(cg, 1)};
    add_annotation(cg, kernel, 3);
    LLVMMetadataRef bounds[7] = {fn,
                                 md_string(cg, "maxntidx"),
                                 md_i32(cg, block[0]),
                                 md_string(cg, "maxntidy"),
                                 md_i32(cg, block[1]),
                                 md_string(cg, "maxntidz"),
                                 md_i32(cg, block[2])};
    add_annotation(cg, bounds, 7);
    char text[64];
    snprintf(text, sizeof text, "%lld,%lld,%lld", (long long)block[0], (long long)block[1],
             (long long)block[2]);
    LLVMAttributeRef maxntid = LLVMCreateStringAttribute(
        cg->llctx, "nvvm.maxntid", (unsigned)strlen("nvvm.maxntid"), text, (unsigned)strlen(text));
    LLVMAddAttributeAtIndex(cg->function, LLVMAttributeFunctionIndex, maxntid);
}

static bool add_function(Codegen *cg)
{
    const PrimFunc *k = cg->kernel;
    LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->llctx, ADDRSPACE_GLOBAL);
    LLVMTypeRef *params = calloc(k->nparam > 0 ? (size_t)k->nparam : 1, sizeof *params);
    if (!params)
        return fail(cg, TCC_ERROR_OUT_OF_MEMORY, "out of memory in codegen");
    for (int i = 0; i < k->nparam; i++)
        params[i] = ptr;
    LLVMTypeRef type =
        LLVMFunctionType(LLVMVoidTypeInContext(cg->llctx), params, (unsigned)k->nparam, 0);
    free(params);
    char name[256];
    symbol_name(k->name, name, sizeof name);
    cg->function = LLVMAddFunction(cg->module, name, type);
    mark_kernel(cg);
    unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", strlen("noalias"));
    for (int i = 0; i < k->nparam; i++) {
        const Buffer *buffer = k->params[i];
        if (buffer->scope != TCC_SCOPE_GLOBAL)
            return fail(cg, TCC_ERROR_INVALID_ARGUMENT, "codegen: parameter '%s' is not global",
                        buffer->name);
        LLVMValueRef param = LLVMGetParam(cg->function, (unsigned)i);
        /* Distinct tensors never overlap: lets LLVM use the read-only cache for inputs. */
        LLVMAddAttributeAtIndex(cg->function, (unsigned)i + 1,
                                LLVMCreateEnumAttribute(cg->llctx, noalias, 0));
        char pname[256];
        value_name(buffer, pname, sizeof pname);
        LLVMSetValueName2(param, pname, strlen(pname));
        BufferBinding binding = {.buffer = buffer, .base = param, .addrspace = ADDRSPACE_GLOBAL};
        binding.elem = scalar_type(cg, buffer->type);
        if (!binding.elem || !bind_buffer(cg, &binding))
            return false;
    }
    return true;
}

/* Entry block (allocas, special registers) then the body; entry branches to the body
 * once everything is generated, so allocas can be appended to it at any time. */
static bool gen_function(Codegen *cg)
{
    if (!add_function(cg))
        return false;
    LLVMBasicBlockRef entry = append_block(cg, "entry");
    LLVMBasicBlockRef body = append_block(cg, "body");
    LLVMPositionBuilderAtEnd(cg->entry_builder, entry);
    LLVMPositionBuilderAtEnd(cg->builder, body);
    if (!gen_stmt(cg, cg->kernel->body))
        return false;
    LLVMBuildRetVoid(cg->builder);
    LLVMBuildBr(cg->entry_builder, body);
    return true;
}

static void codegen_free(Codegen *cg)
{
    if (cg->builder)
        LLVMDisposeBuilder(cg->builder);
    if (cg->entry_builder)
        LLVMDisposeBuilder(cg->entry_builder);
    if (cg->module)
        LLVMDisposeModule(cg->module);
    free(cg->vars);
    free(cg->buffers);
    free(cg->frags);
}

/* Module -> verified -> O3 -> text and PTX. */
static tcc_status finish_module(Codegen *cg, char **llvm_ir, char **ptx)
{
    tcc_status status = tci_llvm_verify(cg->ctx, cg->module);
    if (status == TCC_OK)
        status = tci_llvm_optimize(cg->ctx, cg->module, cg->arch);
    /* O3 must leave a valid module too; a failure here is an LLVM (or tcc) bug. */
    if (status == TCC_OK)
        status = tci_llvm_verify(cg->ctx, cg->module);
    if (status == TCC_OK)
        status = tci_llvm_print_module(cg->ctx, cg->module, llvm_ir);
    if (status == TCC_OK)
        status = tci_llvm_emit_ptx(cg->ctx, cg->module, cg->arch, ptx);
    return status;
}

tcc_status tci_codegen(tcc_context *ctx, const PrimFunc *kernel, tcc_arch arch, char **llvm_ir,
                       char **ptx, int64_t *shared_bytes)
{
    *llvm_ir = NULL;
    *ptx = NULL;
    *shared_bytes = 0;
    if (!kernel)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "codegen: no kernel");
    Codegen cg = {.ctx = ctx, .kernel = kernel, .arch = arch, .status = TCC_OK};
    tcc_status status = TCC_OK;
    if (!analyze_kernel(&cg))
        status = cg.status;
    if (status == TCC_OK)
        status = tci_llvm_context(ctx, &cg.llctx);
    if (status == TCC_OK) {
        cg.module =
            LLVMModuleCreateWithNameInContext(kernel->name ? kernel->name : "kernel", cg.llctx);
        cg.builder = LLVMCreateBuilderInContext(cg.llctx);
        cg.entry_builder = LLVMCreateBuilderInContext(cg.llctx);
        status = tci_llvm_prepare_module(ctx, cg.module, arch);
    }
    if (status == TCC_OK && !gen_function(&cg))
        status = cg.status != TCC_OK ? cg.status
                                     : tci_fail(ctx, TCC_ERROR_LLVM, "codegen failed silently");
    if (status == TCC_OK)
        status = finish_module(&cg, llvm_ir, ptx);
    if (status == TCC_OK) {
        *shared_bytes = cg.shared_bytes;
    } else {
        free(*llvm_ir);
        free(*ptx);
        *llvm_ir = NULL;
        *ptx = NULL;
    }
    codegen_free(&cg);
    return status;
}
