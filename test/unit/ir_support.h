/*
 * The loop-IR fixture and builders of the unit tests that build IR by hand (test_ir.c,
 * test_ir_print.c, test_simplify.c, test_passes.c, llvm_test_codegen.c), and lowering a
 * function to loop IR (test_passes.c, test_schedule.c). Like support.c,
 * test/unit/ir_support.c is linked into every unit test.
 */
#ifndef TEST_IR_SUPPORT_H
#define TEST_IR_SUPPORT_H

#include "driver/driver.h"
#include "ir/ir.h"
#include "support.h"

/* ---- the fixture ------------------------------------------------------------------------ */

/* The arena every builder below allocates in: ir_setup makes it, ir_teardown frees it. One
 * per thread, so that threads can build kernels at the same time (llvm_test_codegen.c). */
extern _Thread_local Arena *arena;

/* The variables x, y and z (ids 0, 1 and 2) and their expressions, made by ir_setup_xyz. */
extern Var *vx, *vy, *vz;
extern Expr *x, *y, *z;

void ir_setup(void);
/* ir_setup, then x, y and z. */
void ir_setup_xyz(void);
void ir_teardown(void);

/* The context of the tests whose fixture is ir_context_setup (ir_setup and a new context)
 * and ir_context_teardown. */
extern tcc_context *ctx;
void ir_context_setup(void);
void ir_context_teardown(void);

/* A new variable `name` numbered `id`, stored in *var; returns its expression. */
Expr *ir_var(const char *name, int id, Var **var);

/* ---- expressions -------------------------------------------------------------------------- */

/* An int32 constant. */
Expr *num(int64_t value);
/* The constructors' binary node (which folds constants and removes identities). */
Expr *bin(ExprKind kind, Expr *a, Expr *b);
Expr *add(Expr *a, Expr *b);
Expr *sub(Expr *a, Expr *b);
/* a * c, a / c and a % c by a constant, as index arithmetic has them ("div" is stdlib's). */
Expr *mul(Expr *a, int64_t c);
Expr *div_(Expr *a, int64_t c);
Expr *mod(Expr *a, int64_t c);

/* ---- buffers and statements ----------------------------------------------------------------- */

/* A one-dimensional buffer of `size` elements. */
Buffer *buffer1(const char *name, tcc_dtype type, tcc_scope scope, int64_t size);
/* The same of float32, the tests' usual element type. */
Buffer *f32_buffer(const char *name, tcc_scope scope, int64_t size);
/* b[index] and b[index] = value for a one-dimensional b. */
Expr *load1(Buffer *b, Expr *index);
Stmt *store1(Buffer *b, Expr *index, Expr *value);
/* for var in 0..extent { body } */
Stmt *loop(Var *var, int64_t extent, ForKind kind, Stmt *body);
Stmt *seq2(Stmt *a, Stmt *b);

/* The WMMA operation `op` on the m x n x k tile fragment[fragment_index]; the caller adds
 * what else it reads (a and b for an mma, a fill value) before tci_stmt_wmma. */
WmmaStmt wmma_op(WmmaOp op, int m, int n, int k, Buffer *fragment, Expr *fragment_index);
/* acc[acc_index] += a[a_index] x b[b_index] on m x n x k tiles. */
Stmt *wmma_mma(int m, int n, int k, Buffer *acc, Expr *acc_index, Buffer *a, Expr *a_index,
               Buffer *b, Expr *b_index);
/* w as a load from or store to `memory` at its `nindex` indices `memory_index`, rows
 * `stride` elements apart (row-major unless w says col_major). */
Stmt *wmma_memory(WmmaStmt w, Buffer *memory, int nindex, Expr **memory_index, int64_t stride);

/* ---- kernels ------------------------------------------------------------------------------ */

/* A kernel `name` of the `nparam` buffers `params` (numbered in that order), launching one
 * thread in one block until the caller binds more; no body yet. New variables are numbered
 * from 100, above any test's own. */
PrimFunc *ir_kernel(const char *name, int nparam, Buffer *const *params);
/* Binds `var` to the launch dimension `tag` of k, `extent` wide; returns var. */
Var *ir_launch(PrimFunc *k, tcc_thread_tag tag, int64_t extent, Var *var);

/* ---- lowering ----------------------------------------------------------------------------- */

/* What tci_lower made of a function: its status, and the kernel in an arena of its own. */
typedef struct Lowered {
    tcc_status status;
    PrimFunc *kernel; /* NULL unless status is TCC_OK */
    Arena *arena;     /* lowered_free frees it, and the kernel with it */
} Lowered;

/* Lowers the `nparam` tensors `params` of func with `options` (NULL as tci_lower takes it). */
Lowered lower(tcc_func *func, int nparam, tcc_tensor *const *params,
              const tcc_build_options *options);
void lowered_free(Lowered *lowered);

/* ---- printing ------------------------------------------------------------------------------ */

/* The printer's text of e, s (at `indent`) and k; free() it. */
char *expr_text(const Expr *e);
char *stmt_text(const Stmt *s, int indent);
char *prim_func_text(const PrimFunc *k);

/* Fail unless e, s (at indent 0, or at `indent`) print as `expected`. */
void check_expr(const Expr *e, const char *expected);
void check_stmt(const Stmt *s, const char *expected);
void check_stmt_at(const Stmt *s, int indent, const char *expected);
/* Fails unless e is the integer constant `value` of `type`. */
void check_int(const Expr *e, tcc_dtype type, int64_t value);

#endif
