/* Constructors of the loop IR, with the constant folding every builder wants. */
#include "ir/ir.h"

#include <string.h>

Var *tci_var(Arena *arena, const char *name, int id)
{
    Var *v = tci_arena_alloc(arena, sizeof *v);
    v->name = tci_arena_strdup(arena, name);
    v->id = id;
    return v;
}

Var *tci_prim_func_new_var(PrimFunc *func, const char *name)
{
    return tci_var(func->arena, name, func->next_var_id++);
}

Var *tci_prim_func_thread_var(PrimFunc *func, tcc_thread_tag tag)
{
    if (!func->thread_var[tag])
        func->thread_var[tag] = tci_prim_func_new_var(func, tci_thread_tag_name(tag));
    return func->thread_var[tag];
}

int tci_prim_func_thread_ranges(const PrimFunc *func, VarRange ranges[3])
{
    int n = 0;
    for (int tag = TCC_THREAD_X; tag <= TCC_THREAD_Z; tag++)
        if (func->thread_var[tag])
            ranges[n++] = (VarRange){func->thread_var[tag], 0, func->launch[tag]};
    return n;
}

static Expr *new_expr(Arena *arena, ExprKind kind, tcc_dtype type)
{
    Expr *e = tci_arena_alloc(arena, sizeof *e);
    e->kind = kind;
    e->type = type;
    e->lanes = 1;
    return e;
}

Expr *tci_ir_int(Arena *arena, int64_t value)
{
    Expr *e = new_expr(arena, EXPR_INT, TCC_INT32);
    e->int_value = value;
    return e;
}

Expr *tci_ir_bool(Arena *arena, bool value)
{
    Expr *e = new_expr(arena, EXPR_INT, TCC_BOOL);
    e->int_value = value;
    return e;
}

Expr *tci_ir_float(Arena *arena, double value, tcc_dtype type)
{
    Expr *e = new_expr(arena, EXPR_FLOAT, type);
    e->float_value = value;
    return e;
}

Expr *tci_ir_var(Arena *arena, Var *var)
{
    Expr *e = new_expr(arena, EXPR_VAR, TCC_INT32);
    e->var = var;
    return e;
}

bool tci_expr_is_int(const Expr *e, int64_t value)
{
    return e && e->kind == EXPR_INT && e->int_value == value;
}

bool tci_expr_is_const(const Expr *e)
{
    return e && (e->kind == EXPR_INT || e->kind == EXPR_FLOAT);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* From the remainder, not a - floor(a / b) * b, whose product can pass int64_t (a = INT64_MIN,
 * b = 3). */
static int64_t floor_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

static bool is_comparison(ExprKind kind)
{
    return kind >= EXPR_EQ && kind <= EXPR_OR;
}

/* Folds two integer constants; returns false when the operation cannot be folded: a
 * division by 0, or a result past int64_t (left as written, as the simplifier does). */
static bool fold_ints(ExprKind kind, int64_t a, int64_t b, int64_t *out)
{
    switch (kind) {
    case EXPR_ADD:
        return !__builtin_add_overflow(a, b, out);
    case EXPR_SUB:
        return !__builtin_sub_overflow(a, b, out);
    case EXPR_MUL:
        return !__builtin_mul_overflow(a, b, out);
    case EXPR_DIV:
        if (b == 0 || (a == INT64_MIN && b == -1))
            return false;
        *out = floor_div(a, b);
        return true;
    case EXPR_MOD:
        if (b == 0 || (a == INT64_MIN && b == -1))
            return false;
        *out = floor_mod(a, b);
        return true;
    case EXPR_MIN:
        *out = a < b ? a : b;
        return true;
    case EXPR_MAX:
        *out = a > b ? a : b;
        return true;
    case EXPR_XOR:
        *out = a ^ b;
        return true;
    case EXPR_EQ:
        *out = a == b;
        return true;
    case EXPR_NE:
        *out = a != b;
        return true;
    case EXPR_LT:
        *out = a < b;
        return true;
    case EXPR_LE:
        *out = a <= b;
        return true;
    case EXPR_AND:
        *out = a && b;
        return true;
    case EXPR_OR:
        *out = a || b;
        return true;
    default:
        return false;
    }
}

/* Identities that hold for every value of the other operand. */
static Expr *fold_identity(ExprKind kind, Expr *a, Expr *b)
{
    bool integer = a->type == TCC_INT32;
    if (!integer)
        return NULL;
    switch (kind) {
    case EXPR_ADD:
        if (tci_expr_is_int(a, 0))
            return b;
        if (tci_expr_is_int(b, 0))
            return a;
        return NULL;
    case EXPR_SUB:
        return tci_expr_is_int(b, 0) ? a : NULL;
    case EXPR_MUL:
        if (tci_expr_is_int(a, 1))
            return b;
        if (tci_expr_is_int(b, 1))
            return a;
        if (tci_expr_is_int(a, 0))
            return a;
        if (tci_expr_is_int(b, 0))
            return b;
        return NULL;
    case EXPR_DIV:
        return tci_expr_is_int(b, 1) ? a : NULL;
    default:
        return NULL;
    }
}

Expr *tci_ir_binary(Arena *arena, ExprKind kind, Expr *a, Expr *b)
{
    if (a->kind == EXPR_INT && b->kind == EXPR_INT) {
        int64_t value;
        if (fold_ints(kind, a->int_value, b->int_value, &value))
            return is_comparison(kind) ? tci_ir_bool(arena, value) : tci_ir_int(arena, value);
    }
    if (kind == EXPR_AND) {
        if (tci_expr_is_int(a, 1))
            return b;
        if (tci_expr_is_int(b, 1))
            return a;
    }
    if (kind == EXPR_MOD && tci_expr_is_int(b, 1))
        return tci_ir_int(arena, 0);
    Expr *same = fold_identity(kind, a, b);
    if (same)
        return same;
    Expr *e = new_expr(arena, kind, is_comparison(kind) ? TCC_BOOL : a->type);
    e->lanes = a->lanes > b->lanes ? a->lanes : b->lanes;
    e->bin.a = a;
    e->bin.b = b;
    return e;
}

Expr *tci_ir_not(Arena *arena, Expr *a)
{
    if (a->kind == EXPR_INT)
        return tci_ir_bool(arena, !a->int_value);
    /* == and != are each other's negation for floats too (ordered ==, unordered !=); < and
     * <= swap operands, for integers only (a NaN makes both false). */
    if (a->kind == EXPR_EQ || a->kind == EXPR_NE)
        return tci_ir_binary(arena, a->kind == EXPR_EQ ? EXPR_NE : EXPR_EQ, a->bin.a, a->bin.b);
    if ((a->kind == EXPR_LT || a->kind == EXPR_LE) && !tcc_dtype_is_float(a->bin.a->type))
        return tci_ir_binary(arena, a->kind == EXPR_LT ? EXPR_LE : EXPR_LT, a->bin.b, a->bin.a);
    Expr *e = new_expr(arena, EXPR_NOT, TCC_BOOL);
    e->lanes = a->lanes;
    e->bin.a = a;
    return e;
}

int tci_select_lanes(const Expr *cond, const Expr *then_value, const Expr *else_value)
{
    /* A scalar side (or condition) meets the vector others: the select is the vector's. */
    int lanes = then_value->lanes > else_value->lanes ? then_value->lanes : else_value->lanes;
    return cond->lanes > lanes ? cond->lanes : lanes;
}

Expr *tci_ir_select(Arena *arena, Expr *cond, Expr *then_value, Expr *else_value)
{
    if (cond->kind == EXPR_INT)
        return cond->int_value ? then_value : else_value;
    Expr *e = new_expr(arena, EXPR_SELECT, then_value->type);
    e->lanes = tci_select_lanes(cond, then_value, else_value);
    e->select.cond = cond;
    e->select.then_value = then_value;
    e->select.else_value = else_value;
    return e;
}

Expr *tci_ir_cast(Arena *arena, tcc_dtype type, Expr *value)
{
    if (value->type == type)
        return value;
    if (value->kind == EXPR_FLOAT && type != TCC_INT32 && type != TCC_INT8)
        return tci_ir_float(arena, value->float_value, type);
    Expr *e = new_expr(arena, EXPR_CAST, type);
    e->lanes = value->lanes;
    e->cast.value = value;
    return e;
}

static Expr **copy_exprs(Arena *arena, int n, Expr *const *items)
{
    Expr **copy = tci_arena_alloc(arena, sizeof(Expr *) * (size_t)(n ? n : 1));
    if (n) /* no indices (`B[]`, as loop IR read from text may write) may come as NULL */
        memcpy(copy, items, sizeof(Expr *) * (size_t)n);
    return copy;
}

Expr *tci_ir_load(Arena *arena, Buffer *buffer, int nindex, Expr *const *index)
{
    Expr *e = new_expr(arena, EXPR_LOAD, buffer->type);
    e->load.buffer = buffer;
    e->load.nindex = nindex;
    e->load.index = copy_exprs(arena, nindex, index);
    if (nindex == 1)
        e->lanes = index[0]->lanes;
    return e;
}

Expr *tci_ir_ramp(Arena *arena, Expr *base, int64_t stride, int lanes)
{
    Expr *e = new_expr(arena, EXPR_RAMP, TCC_INT32);
    e->lanes = lanes;
    e->ramp.base = base;
    e->ramp.stride = stride;
    return e;
}

Buffer *tci_ir_buffer(Arena *arena, const char *name, tcc_dtype type, tcc_scope scope, int ndim,
                      const int64_t *shape)
{
    Buffer *b = tci_arena_alloc(arena, sizeof *b);
    b->name = tci_arena_strdup(arena, name);
    b->type = type;
    b->scope = scope;
    b->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        b->shape[i] = shape[i];
    tci_buffer_set_dense(b);
    b->param_index = -1;
    b->shared_offset = -1;
    return b;
}

static void set_outer_strides(Buffer *b, int dim)
{
    for (int d = dim - 1; d >= 0; d--)
        b->strides[d] = b->strides[d + 1] * b->shape[d + 1];
    b->elements = b->ndim ? b->shape[0] * b->strides[0] : 1;
}

void tci_buffer_set_dense(Buffer *b)
{
    if (b->ndim)
        b->strides[b->ndim - 1] = 1;
    set_outer_strides(b, b->ndim - 1);
}

int64_t tci_buffer_bytes(const Buffer *b)
{
    return b->elements * (int64_t)tcc_dtype_size(b->type);
}

bool tci_buffer_is_dense(const Buffer *b)
{
    int64_t stride = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
        if (b->strides[d] != stride)
            return false;
        stride *= b->shape[d];
    }
    return true;
}

void tci_buffer_align(Buffer *b, int dim, int64_t factor, int64_t offset)
{
    if (dim < 0 || dim >= b->ndim || factor < 1)
        return;
    int64_t natural = dim == b->ndim - 1 ? 1 : b->strides[dim + 1] * b->shape[dim + 1];
    b->strides[dim] = (natural + factor - 1) / factor * factor + offset;
    set_outer_strides(b, dim);
}

static int exact_log2(int64_t v)
{
    int k = 0;
    while (k < 62 && ((int64_t)1 << k) < v)
        k++;
    return v > 0 && ((int64_t)1 << k) == v ? k : -1;
}

bool tci_swizzle_takes_rows(int64_t row_bytes)
{
    return row_bytes >= 32 && exact_log2(row_bytes) >= 0;
}

bool tci_buffer_swizzle(Buffer *b)
{
    int last = b->ndim - 1;
    int64_t size = (int64_t)tcc_dtype_size(b->type);
    if (last < 0 || size > 16 || b->strides[last] != 1 ||
        (last > 0 && b->strides[last - 1] != b->shape[last]))
        return false;
    int64_t row = b->shape[last] * size; /* bytes */
    if (!tci_swizzle_takes_rows(row))
        return false;
    /* The chunks of a line permuted by the row, or by the line where rows are shorter. */
    int64_t chunks = (row < 128 ? row : 128) / 16, period = row < 128 ? 128 : row;
    b->swizzle = (Swizzle){.bits = exact_log2(chunks),
                           .base = exact_log2(16 / size),
                           .shift = exact_log2(period / size)};
    return true;
}

bool tci_buffer_swizzle_blocks(Buffer *b)
{
    int last = b->ndim - 1;
    int64_t size = (int64_t)tcc_dtype_size(b->type), block = TCI_SWIZZLE_BLOCK_BYTES / size;
    if (last < 1 || size > 16 || b->strides[last] != 1 || b->strides[last - 1] != b->shape[last] ||
        b->shape[last] % block != 0 || b->shape[last - 1] % 8 != 0)
        return false;
    /* A block's row is a 128-byte line: chunks xor-ed with the line's number mod 8. */
    b->swizzle = (Swizzle){
        .bits = 3, .base = exact_log2(16 / size), .shift = exact_log2(block), .block = (int)block};
    return true;
}

int64_t tci_swizzle_atom_bytes(const Buffer *b)
{
    if (b->swizzle.block)
        return 8 * TCI_SWIZZLE_BLOCK_BYTES;
    return ((int64_t)1 << (b->swizzle.shift + b->swizzle.bits)) * (int64_t)tcc_dtype_size(b->type);
}

int64_t tci_swizzle_period(const Buffer *b)
{
    if (b->swizzle.block)
        return b->shape[b->ndim - 1] * b->shape[b->ndim - 2];
    return (int64_t)1 << (b->swizzle.shift + b->swizzle.bits);
}

Expr *tci_swizzle_block_index(Arena *a, const Buffer *b, Expr *index)
{
    int64_t block = b->swizzle.block, cols = b->shape[b->ndim - 1], rows = b->shape[b->ndim - 2];
    if (!block)
        return index;
    /* Whole tiles (a stage's offset, folded into a constant with the rest) pass through. */
    Expr *tile = tci_ir_binary(a, EXPR_DIV, index, tci_ir_int(a, rows * cols));
    Expr *in_tile = tci_ir_binary(a, EXPR_MOD, index, tci_ir_int(a, rows * cols));
    Expr *col = tci_ir_binary(a, EXPR_MOD, in_tile, tci_ir_int(a, cols));
    Expr *row = tci_ir_binary(a, EXPR_DIV, in_tile, tci_ir_int(a, cols));
    Expr *first = tci_ir_binary(a, EXPR_MUL, tci_ir_binary(a, EXPR_DIV, col, tci_ir_int(a, block)),
                                tci_ir_int(a, rows * block));
    Expr *within = tci_ir_binary(a, EXPR_ADD, tci_ir_binary(a, EXPR_MUL, row, tci_ir_int(a, block)),
                                 tci_ir_binary(a, EXPR_MOD, col, tci_ir_int(a, block)));
    Expr *tiles = tci_ir_binary(a, EXPR_MUL, tile, tci_ir_int(a, rows * cols));
    return tci_ir_binary(a, EXPR_ADD, tiles, tci_ir_binary(a, EXPR_ADD, first, within));
}

Expr *tci_swizzle_index(Arena *a, const Buffer *b, Expr *index)
{
    const Swizzle *z = &b->swizzle;
    index = tci_swizzle_block_index(a, b, index);
    Expr *row = tci_ir_binary(a, EXPR_DIV, index, tci_ir_int(a, (int64_t)1 << z->shift));
    row = tci_ir_binary(a, EXPR_MOD, row, tci_ir_int(a, (int64_t)1 << z->bits));
    Expr *mask = tci_ir_binary(a, EXPR_MUL, row, tci_ir_int(a, (int64_t)1 << z->base));
    return tci_ir_binary(a, EXPR_XOR, index, mask);
}

static bool multiple_of(const Expr *e, int64_t period)
{
    if (e->kind == EXPR_INT)
        return e->int_value % period == 0;
    if (e->kind != EXPR_MUL)
        return false;
    const Expr *c = e->bin.b->kind == EXPR_INT ? e->bin.b : e->bin.a;
    return c->kind == EXPR_INT && c->int_value % period == 0;
}

static void add_term(Arena *a, Expr **sum, Expr *term, bool negative)
{
    if (!*sum)
        *sum = negative ? tci_ir_binary(a, EXPR_SUB, tci_ir_int(a, 0), term) : term;
    else
        *sum = tci_ir_binary(a, negative ? EXPR_SUB : EXPR_ADD, *sum, term);
}

static void split_terms(Arena *a, Expr *e, int64_t period, bool negative, Expr **aligned,
                        Expr **rest)
{
    if (e->kind == EXPR_ADD || e->kind == EXPR_SUB) {
        split_terms(a, e->bin.a, period, negative, aligned, rest);
        split_terms(a, e->bin.b, period, negative != (e->kind == EXPR_SUB), aligned, rest);
        return;
    }
    add_term(a, multiple_of(e, period) ? aligned : rest, e, negative);
}

void tci_swizzle_split(Arena *a, const Buffer *b, Expr *index, Expr **aligned, Expr **rest)
{
    *aligned = *rest = NULL;
    split_terms(a, index, tci_swizzle_period(b), false, aligned, rest);
    if (!*aligned)
        *aligned = tci_ir_int(a, 0);
    if (!*rest)
        *rest = tci_ir_int(a, 0);
}

Stmt *tci_stmt_new(Arena *arena, StmtKind kind)
{
    Stmt *s = tci_arena_alloc(arena, sizeof *s);
    s->kind = kind;
    return s;
}

Stmt *tci_stmt_seq(Arena *arena, int count, Stmt *const *items)
{
    int total = 0;
    for (int i = 0; i < count; i++)
        if (items[i])
            total += items[i]->kind == STMT_SEQ ? items[i]->seq.count : 1;
    Stmt *s = tci_stmt_new(arena, STMT_SEQ);
    s->seq.items = tci_arena_alloc(arena, sizeof(Stmt *) * (size_t)(total ? total : 1));
    for (int i = 0; i < count; i++) {
        if (!items[i])
            continue;
        if (items[i]->kind == STMT_SEQ)
            for (int j = 0; j < items[i]->seq.count; j++)
                s->seq.items[s->seq.count++] = items[i]->seq.items[j];
        else
            s->seq.items[s->seq.count++] = items[i];
    }
    if (s->seq.count == 1)
        return s->seq.items[0];
    return s;
}

Stmt *const *tci_stmt_items(Stmt *const *s, int *count)
{
    *count = (*s)->kind == STMT_SEQ ? (*s)->seq.count : 1;
    return (*s)->kind == STMT_SEQ ? (*s)->seq.items : s;
}

Stmt *tci_stmt_seq2(Arena *arena, Stmt *first, Stmt *second)
{
    if (!first)
        return second;
    if (!second)
        return first;
    Stmt *items[2] = {first, second};
    return tci_stmt_seq(arena, 2, items);
}

Stmt *tci_stmt_for(Arena *arena, Var *var, Expr *min, Expr *extent, ForKind kind, Stmt *body)
{
    Stmt *s = tci_stmt_new(arena, STMT_FOR);
    s->loop.var = var;
    s->loop.min = min;
    s->loop.extent = extent;
    s->loop.kind = kind;
    s->loop.body = body;
    return s;
}

PragmaKind tci_pragma_kind(const char *name, size_t n)
{
    static const PragmaKind kinds[] = {PRAGMA_AUTO_UNROLL_MAX_STEP, PRAGMA_UNROLL_EXPLICIT};
    for (size_t i = 0; name && i < sizeof kinds / sizeof kinds[0]; i++) {
        const char *known = tci_pragma_name(kinds[i]);
        if (strlen(known) == n && strncmp(known, name, n) == 0)
            return kinds[i];
    }
    return (PragmaKind)0;
}

const char *tci_pragma_name(PragmaKind kind)
{
    return kind == PRAGMA_AUTO_UNROLL_MAX_STEP ? "auto_unroll_max_step"
           : kind == PRAGMA_UNROLL_EXPLICIT    ? "unroll_explicit"
                                               : "unknown";
}

Stmt *tci_stmt_thread(Arena *arena, Var *var, tcc_thread_tag tag, int64_t extent, Stmt *body)
{
    Stmt *s =
        tci_stmt_for(arena, var, tci_ir_int(arena, 0), tci_ir_int(arena, extent), FOR_THREAD, body);
    s->loop.tag = tag;
    return s;
}

Stmt *tci_stmt_store(Arena *arena, Buffer *buffer, int nindex, Expr *const *index, Expr *value)
{
    Stmt *s = tci_stmt_new(arena, STMT_STORE);
    s->store.buffer = buffer;
    s->store.nindex = nindex;
    s->store.index = copy_exprs(arena, nindex, index);
    s->store.value = value;
    return s;
}

Stmt *tci_stmt_if(Arena *arena, Expr *cond, Stmt *then_body, Stmt *else_body)
{
    Stmt *s = tci_stmt_new(arena, STMT_IF);
    s->branch.cond = cond;
    s->branch.then_body = then_body;
    s->branch.else_body = else_body;
    return s;
}

Stmt *tci_stmt_allocate(Arena *arena, Buffer *buffer, Stmt *body)
{
    Stmt *s = tci_stmt_new(arena, STMT_ALLOCATE);
    s->alloc.buffer = buffer;
    s->alloc.body = body;
    return s;
}

Stmt *tci_stmt_barrier(Arena *arena)
{
    return tci_stmt_new(arena, STMT_BARRIER);
}

Stmt *tci_stmt_wmma(Arena *arena, const WmmaStmt *wmma)
{
    Stmt *s = tci_stmt_new(arena, STMT_WMMA);
    s->wmma = *wmma;
    if (wmma->nindex)
        s->wmma.memory_index = copy_exprs(arena, wmma->nindex, wmma->memory_index);
    return s;
}

Stmt *tci_stmt_copy_async(Arena *arena, Buffer *dst, Expr *dst_index, Buffer *src, Expr *src_index,
                          int bytes, Expr *predicate)
{
    Stmt *s = tci_stmt_new(arena, STMT_COPY_ASYNC);
    s->copy.dst = dst;
    s->copy.dst_index = dst_index;
    s->copy.src = src;
    s->copy.src_index = src_index;
    s->copy.bytes = bytes;
    /* A guard proved true (a pipeline's prologue, unrolled) guards nothing. */
    bool proved = predicate && predicate->kind == EXPR_INT && predicate->int_value != 0;
    s->copy.predicate = proved ? NULL : predicate;
    return s;
}

Stmt *tci_stmt_async_commit(Arena *arena)
{
    return tci_stmt_new(arena, STMT_ASYNC_COMMIT);
}

Stmt *tci_stmt_async_wait(Arena *arena, int pending)
{
    Stmt *s = tci_stmt_new(arena, STMT_ASYNC_WAIT);
    s->wait.pending = pending;
    return s;
}

Expr *tci_buffer_flat_index(Arena *a, const Buffer *b, int nindex, Expr *const *index)
{
    Expr *offset = tci_ir_int(a, 0);
    for (int d = nindex - 1; d >= 0; d--) {
        Expr *i = b->min[d] ? tci_ir_binary(a, EXPR_SUB, index[d], b->min[d]) : index[d];
        offset = tci_ir_binary(a, EXPR_ADD,
                               tci_ir_binary(a, EXPR_MUL, i, tci_ir_int(a, b->strides[d])), offset);
    }
    return offset;
}

Stmt *tci_stmt_wgmma_sync(Arena *arena, WgmmaSync op, int pending)
{
    Stmt *s = tci_stmt_new(arena, STMT_WGMMA_SYNC);
    s->wgmma_sync.op = op;
    s->wgmma_sync.pending = op == WGMMA_WAIT ? pending : 0;
    return s;
}

static bool exprs_equal(int n, Expr *const *a, Expr *const *b)
{
    for (int i = 0; i < n; i++)
        if (!tci_expr_equal(a[i], b[i]))
            return false;
    return true;
}

bool tci_expr_equal(const Expr *a, const Expr *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind || a->type != b->type || a->lanes != b->lanes)
        return false;
    switch (a->kind) {
    case EXPR_INT:
        return a->int_value == b->int_value;
    case EXPR_FLOAT:
        return a->float_value == b->float_value;
    case EXPR_VAR:
        return a->var == b->var;
    case EXPR_NOT:
        return tci_expr_equal(a->bin.a, b->bin.a);
    case EXPR_SELECT:
        return tci_expr_equal(a->select.cond, b->select.cond) &&
               tci_expr_equal(a->select.then_value, b->select.then_value) &&
               tci_expr_equal(a->select.else_value, b->select.else_value);
    case EXPR_CAST:
        return tci_expr_equal(a->cast.value, b->cast.value);
    case EXPR_LOAD:
        return a->load.buffer == b->load.buffer && a->load.nindex == b->load.nindex &&
               exprs_equal(a->load.nindex, a->load.index, b->load.index);
    case EXPR_RAMP:
        return a->ramp.stride == b->ramp.stride && tci_expr_equal(a->ramp.base, b->ramp.base);
    case EXPR_ACCESS:
        return a->access.tensor == b->access.tensor && a->access.nindex == b->access.nindex &&
               exprs_equal(a->access.nindex, a->access.index, b->access.index);
    case EXPR_REDUCE:
        return false;
    default:
        return tci_expr_equal(a->bin.a, b->bin.a) && tci_expr_equal(a->bin.b, b->bin.b);
    }
}
