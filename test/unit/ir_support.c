#include "ir_support.h"

#include <stdlib.h>
#include <string.h>

/* ---- the fixture ------------------------------------------------------------------------ */

_Thread_local Arena *arena;
Var *vx, *vy, *vz;
Expr *x, *y, *z;

void ir_setup(void)
{
    arena = tci_arena_create();
    ck_assert_ptr_nonnull(arena);
}

void ir_setup_xyz(void)
{
    ir_setup();
    x = ir_var("x", 0, &vx);
    y = ir_var("y", 1, &vy);
    z = ir_var("z", 2, &vz);
}

void ir_teardown(void)
{
    tci_arena_destroy(arena);
    arena = NULL;
}

tcc_context *ctx;

void ir_context_setup(void)
{
    ctx = test_context();
    ir_setup();
}

void ir_context_teardown(void)
{
    ir_teardown();
    tcc_context_destroy(ctx);
    ctx = NULL;
}

Expr *ir_var(const char *name, int id, Var **var)
{
    *var = tci_var(arena, name, id);
    return tci_ir_var(arena, *var);
}

/* ---- expressions -------------------------------------------------------------------------- */

Expr *num(int64_t value)
{
    return tci_ir_int(arena, value);
}

Expr *bin(ExprKind kind, Expr *a, Expr *b)
{
    return tci_ir_binary(arena, kind, a, b);
}

Expr *add(Expr *a, Expr *b)
{
    return bin(EXPR_ADD, a, b);
}

Expr *sub(Expr *a, Expr *b)
{
    return bin(EXPR_SUB, a, b);
}

Expr *mul(Expr *a, int64_t c)
{
    return bin(EXPR_MUL, a, num(c));
}

Expr *div_(Expr *a, int64_t c)
{
    return bin(EXPR_DIV, a, num(c));
}

Expr *mod(Expr *a, int64_t c)
{
    return bin(EXPR_MOD, a, num(c));
}

/* ---- buffers and statements ----------------------------------------------------------------- */

Buffer *buffer1(const char *name, tcc_dtype type, tcc_scope scope, int64_t size)
{
    return tci_ir_buffer(arena, name, type, scope, 1, &size);
}

Buffer *f32_buffer(const char *name, tcc_scope scope, int64_t size)
{
    return buffer1(name, TCC_FLOAT32, scope, size);
}

Expr *load1(Buffer *b, Expr *index)
{
    return tci_ir_load(arena, b, 1, &index);
}

Stmt *store1(Buffer *b, Expr *index, Expr *value)
{
    return tci_stmt_store(arena, b, 1, &index, value);
}

Stmt *loop(Var *var, int64_t extent, ForKind kind, Stmt *body)
{
    return tci_stmt_for(arena, var, num(0), num(extent), kind, body);
}

Stmt *seq2(Stmt *a, Stmt *b)
{
    return tci_stmt_seq2(arena, a, b);
}

WmmaStmt wmma_op(WmmaOp op, int m, int n, int k, Buffer *fragment, Expr *fragment_index)
{
    return (WmmaStmt){
        .op = op, .m = m, .n = n, .k = k, .fragment = fragment, .fragment_index = fragment_index};
}

Stmt *wmma_mma(int m, int n, int k, Buffer *acc, Expr *acc_index, Buffer *a, Expr *a_index,
               Buffer *b, Expr *b_index)
{
    WmmaStmt w = wmma_op(WMMA_MMA, m, n, k, acc, acc_index);
    w.a = a;
    w.a_index = a_index;
    w.b = b;
    w.b_index = b_index;
    w.c = w.fragment; /* accumulates into itself */
    w.c_index = w.fragment_index;
    return tci_stmt_wmma(arena, &w);
}

Stmt *wmma_memory(WmmaStmt w, Buffer *memory, int nindex, Expr **memory_index, int64_t stride)
{
    w.memory = memory;
    w.nindex = nindex;
    w.memory_index = memory_index;
    w.stride = stride;
    return tci_stmt_wmma(arena, &w); /* copies the indices into the arena */
}

/* ---- kernels ------------------------------------------------------------------------------ */

PrimFunc *ir_kernel(const char *name, int nparam, Buffer *const *params)
{
    PrimFunc *k = tci_arena_alloc(arena, sizeof *k);
    k->name = name;
    k->arena = arena;
    k->nparam = nparam;
    k->params = tci_arena_alloc(arena, sizeof(Buffer *) * (size_t)(nparam ? nparam : 1));
    for (int i = 0; i < nparam; i++) {
        k->params[i] = params[i];
        params[i]->param_index = i;
    }
    for (int d = 0; d < 6; d++)
        k->launch[d] = 1;
    k->next_var_id = 100;
    return k;
}

Var *ir_launch(PrimFunc *k, tcc_thread_tag tag, int64_t extent, Var *var)
{
    k->launch[tag] = extent;
    k->thread_var[tag] = var;
    return var;
}

/* ---- lowering ----------------------------------------------------------------------------- */

Lowered lower(tcc_func *func, int nparam, tcc_tensor *const *params,
              const tcc_build_options *options)
{
    Lowered lowered = {.arena = tci_arena_create()};
    ck_assert_ptr_nonnull(lowered.arena);
    lowered.status = tci_lower(func, nparam, params, options, lowered.arena, &lowered.kernel);
    return lowered;
}

void lowered_free(Lowered *lowered)
{
    tci_arena_destroy(lowered->arena);
}

/* ---- printing ------------------------------------------------------------------------------ */

/* The text printed into sb, which the caller frees; the printing must not have failed. */
static char *printed(StrBuf *sb)
{
    ck_assert(!sb->failed);
    return sb->data;
}

char *expr_text(const Expr *e)
{
    StrBuf sb;
    tci_strbuf_init(&sb);
    tci_print_expr(&sb, e);
    return printed(&sb);
}

char *stmt_text(const Stmt *s, int indent)
{
    StrBuf sb;
    tci_strbuf_init(&sb);
    tci_print_stmt(&sb, s, indent);
    return printed(&sb);
}

char *prim_func_text(const PrimFunc *k)
{
    char *text = tci_prim_func_text(k);
    ck_assert_ptr_nonnull(text); /* the printing did not fail */
    return text;
}

void check_expr(const Expr *e, const char *expected)
{
    char *text = expr_text(e);
    ck_assert_str_eq(text, expected);
    free(text);
}

void check_stmt_at(const Stmt *s, int indent, const char *expected)
{
    /* Statements span lines: both texts are printed whole, one below the other. */
    char *text = stmt_text(s, indent);
    ck_assert_msg(strcmp(text, expected) == 0, "got:\n%s\nexpected:\n%s", text, expected);
    free(text);
}

void check_stmt(const Stmt *s, const char *expected)
{
    check_stmt_at(s, 0, expected);
}

void check_int(const Expr *e, tcc_dtype type, int64_t value)
{
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->kind, EXPR_INT);
    ck_assert_int_eq(e->type, type);
    ck_assert_int_eq(e->int_value, value);
}
