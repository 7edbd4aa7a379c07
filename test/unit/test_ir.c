/*
 * The loop IR's building blocks (lib/ir/ir.c, lib/ir/visit.c, lib/support/arena.c): the
 * folding the constructors promise and nothing more, structural equality, substitution, the
 * rewriter's sharing of untouched subtrees, statement lists, and the arena.
 */
#include "ir_support.h"

#include <check.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- constructors ------------------------------------------------------------------- */

START_TEST(binary_folds_integer_constants)
{
    check_int(bin(EXPR_ADD, num(3), num(4)), TCC_INT32, 7);
    check_int(bin(EXPR_SUB, num(3), num(10)), TCC_INT32, -7);
    check_int(bin(EXPR_MUL, num(-6), num(7)), TCC_INT32, -42);
    check_int(bin(EXPR_MIN, num(2), num(-3)), TCC_INT32, -3);
    check_int(bin(EXPR_MAX, num(2), num(-3)), TCC_INT32, 2);
    /* Comparisons and logic fold to bools, not to int32 ones and zeros. */
    check_int(bin(EXPR_LT, num(2), num(3)), TCC_BOOL, 1);
    check_int(bin(EXPR_LE, num(4), num(3)), TCC_BOOL, 0);
    check_int(bin(EXPR_EQ, num(5), num(5)), TCC_BOOL, 1);
    check_int(bin(EXPR_NE, num(5), num(5)), TCC_BOOL, 0);
    check_int(bin(EXPR_OR, tci_ir_bool(arena, false), tci_ir_bool(arena, true)), TCC_BOOL, 1);
}
END_TEST

/* "/" and "%" are floor division and modulo: the quotient rounds towards -infinity and the
 * remainder takes the divisor's sign (C's / and % would give -3 and -1). */
START_TEST(binary_folds_with_floor_semantics)
{
    check_int(bin(EXPR_DIV, num(-7), num(2)), TCC_INT32, -4);
    check_int(bin(EXPR_MOD, num(-7), num(2)), TCC_INT32, 1);
    check_int(bin(EXPR_DIV, num(7), num(-2)), TCC_INT32, -4);
    check_int(bin(EXPR_MOD, num(7), num(-2)), TCC_INT32, -1);
    check_int(bin(EXPR_DIV, num(-8), num(2)), TCC_INT32, -4);
    check_int(bin(EXPR_MOD, num(-8), num(2)), TCC_INT32, 0);
    check_int(bin(EXPR_DIV, num(7), num(2)), TCC_INT32, 3);
    check_int(bin(EXPR_MOD, num(7), num(2)), TCC_INT32, 1);
}
END_TEST

START_TEST(binary_leaves_division_by_zero_unfolded)
{
    /* Folding 1 / 0 would be undefined behaviour in the compiler itself. */
    Expr *div = bin(EXPR_DIV, num(1), num(0));
    ck_assert_int_eq(div->kind, EXPR_DIV);
    Expr *mod = bin(EXPR_MOD, num(1), num(0));
    ck_assert_int_eq(mod->kind, EXPR_MOD);
}
END_TEST

START_TEST(binary_removes_integer_identities)
{
    /* The identities return the other operand itself, not a copy. */
    ck_assert_ptr_eq(bin(EXPR_ADD, x, num(0)), x);
    ck_assert_ptr_eq(bin(EXPR_ADD, num(0), x), x);
    ck_assert_ptr_eq(bin(EXPR_SUB, x, num(0)), x);
    ck_assert_ptr_eq(bin(EXPR_MUL, x, num(1)), x);
    ck_assert_ptr_eq(bin(EXPR_MUL, num(1), x), x);
    ck_assert_ptr_eq(bin(EXPR_DIV, x, num(1)), x);
    check_int(bin(EXPR_MUL, x, num(0)), TCC_INT32, 0);
    check_int(bin(EXPR_MUL, num(0), x), TCC_INT32, 0);
    check_int(bin(EXPR_MOD, x, num(1)), TCC_INT32, 0);
    /* `true && c` is c. */
    Expr *c = bin(EXPR_LT, x, y);
    ck_assert_ptr_eq(bin(EXPR_AND, tci_ir_bool(arena, true), c), c);
    ck_assert_ptr_eq(bin(EXPR_AND, c, tci_ir_bool(arena, true)), c);
}
END_TEST

START_TEST(binary_does_nothing_more)
{
    /* 0 - x, x - x, x + x and (x + 1) + 2 are the simplifier's job, not the builder's. */
    check_expr(bin(EXPR_SUB, num(0), x), "0 - x");
    check_expr(bin(EXPR_SUB, x, x), "x - x");
    check_expr(bin(EXPR_ADD, x, x), "x + x");
    check_expr(bin(EXPR_ADD, bin(EXPR_ADD, x, num(1)), num(2)), "x + 1 + 2");
    check_expr(bin(EXPR_DIV, x, x), "x / x");
    /* Float identities are not removed: x * 0 is NaN for x = inf, and -0 + 0 is +0. */
    Expr *f = tci_ir_cast(arena, TCC_FLOAT32, x);
    Expr *zero = tci_ir_float(arena, 0, TCC_FLOAT32);
    ck_assert_int_eq(bin(EXPR_MUL, f, zero)->kind, EXPR_MUL);
    ck_assert_int_eq(bin(EXPR_ADD, f, zero)->kind, EXPR_ADD);
    ck_assert_int_eq(bin(EXPR_MUL, f, tci_ir_float(arena, 1, TCC_FLOAT32))->kind, EXPR_MUL);
}
END_TEST

START_TEST(binary_result_types)
{
    Expr *f = tci_ir_cast(arena, TCC_FLOAT16, x);
    ck_assert_int_eq(bin(EXPR_ADD, x, y)->type, TCC_INT32);
    ck_assert_int_eq(bin(EXPR_MUL, f, f)->type, TCC_FLOAT16);
    ck_assert_int_eq(bin(EXPR_LT, f, f)->type, TCC_BOOL);
    ck_assert_int_eq(bin(EXPR_EQ, x, y)->type, TCC_BOOL);
    /* A vector operand makes a vector. */
    Expr *ramp = tci_ir_ramp(arena, x, 1, 8);
    ck_assert_int_eq(ramp->lanes, 8);
    ck_assert_int_eq(bin(EXPR_ADD, ramp, y)->lanes, 8);
}
END_TEST

START_TEST(unary_constructors_fold)
{
    check_int(tci_ir_not(arena, tci_ir_bool(arena, true)), TCC_BOOL, 0);
    check_int(tci_ir_not(arena, num(0)), TCC_BOOL, 1);
    /* A comparison negates into its opposite: == and != for any type, < and <= with their
     * operands swapped for integers only (a NaN makes x < y and y <= x both false). */
    check_expr(tci_ir_not(arena, bin(EXPR_LT, x, y)), "y <= x");
    check_expr(tci_ir_not(arena, bin(EXPR_LE, x, y)), "y < x");
    check_expr(tci_ir_not(arena, bin(EXPR_EQ, x, y)), "x != y");
    check_expr(tci_ir_not(arena, bin(EXPR_NE, x, y)), "x == y");
    Expr *fx = tci_ir_cast(arena, TCC_FLOAT32, x), *fy = tci_ir_cast(arena, TCC_FLOAT32, y);
    check_expr(tci_ir_not(arena, bin(EXPR_LT, fx, fy)), "!(float32(x) < float32(y))");
    check_expr(tci_ir_not(arena, bin(EXPR_EQ, fx, fy)), "float32(x) != float32(y)");
    check_expr(tci_ir_not(arena, bin(EXPR_AND, bin(EXPR_LT, x, y), bin(EXPR_LT, y, x))),
               "!(x < y && y < x)");
    /* A constant condition picks its side; only the chosen side would be evaluated. */
    ck_assert_ptr_eq(tci_ir_select(arena, tci_ir_bool(arena, true), x, y), x);
    ck_assert_ptr_eq(tci_ir_select(arena, tci_ir_bool(arena, false), x, y), y);
    check_expr(tci_ir_select(arena, bin(EXPR_LT, x, y), x, y), "if_then_else(x < y, x, y)");
    /* A cast to the value's own type is the value; a float constant changes type. */
    ck_assert_ptr_eq(tci_ir_cast(arena, TCC_INT32, x), x);
    Expr *half = tci_ir_cast(arena, TCC_FLOAT16, tci_ir_float(arena, 1.5, TCC_FLOAT32));
    ck_assert_int_eq(half->kind, EXPR_FLOAT);
    ck_assert_int_eq(half->type, TCC_FLOAT16);
    ck_assert(half->float_value == 1.5);
    /* ... but a float constant cast to an integer stays a cast (the rounding is codegen's). */
    ck_assert_int_eq(tci_ir_cast(arena, TCC_INT32, tci_ir_float(arena, 1.5, TCC_FLOAT32))->kind,
                     EXPR_CAST);
}
END_TEST

START_TEST(buffer_new_computes_elements)
{
    int64_t shape[3] = {2, 3, 4};
    Buffer *b = tci_ir_buffer(arena, "S", TCC_FLOAT16, TCC_SCOPE_SHARED, 3, shape);
    ck_assert_str_eq(b->name, "S");
    ck_assert_int_eq(b->elements, 24);
    ck_assert_int_eq(b->param_index, -1);
    ck_assert_ptr_null(b->min[0]);
    ck_assert_int_eq(b->scope, TCC_SCOPE_SHARED);
    /* The shape is copied, not referenced. */
    shape[0] = 100;
    ck_assert_int_eq(b->shape[0], 2);
}
END_TEST

/* Where element `offset` of a tile in column blocks lies, before the xor. */
static int64_t block_offset(const Buffer *b, int64_t offset)
{
    Expr *e = tci_swizzle_block_index(arena, b, tci_ir_int(arena, offset));
    ck_assert_int_eq(e->kind, EXPR_INT);
    return e->int_value;
}

/* Stages of a 16 x 128 float16 tile in blocks of 64 columns: (row r, column c) of a stage lies
 * at block c / 64, row r of it; a stage's offset passes through, even folded into a
 * constant with the element's own. */
START_TEST(swizzle_blocks_lay_columns_out_in_blocks)
{
    int64_t shape[3] = {2, 16, 128};
    Buffer *b = tci_ir_buffer(arena, "S", TCC_FLOAT16, TCC_SCOPE_SHARED, 3, shape);
    ck_assert(tci_buffer_swizzle_blocks(b));
    ck_assert_int_eq(b->swizzle.bits, 3);
    ck_assert_int_eq(b->swizzle.shift, 6);
    ck_assert_int_eq(tci_swizzle_period(b), 2048);
    ck_assert_int_eq(block_offset(b, 1), 1);
    ck_assert_int_eq(block_offset(b, 64), 1024);       /* row 0, column 64 */
    ck_assert_int_eq(block_offset(b, 128 + 65), 1089); /* row 1, column 65 */
    ck_assert_int_eq(block_offset(b, 2048 + 128 + 1), 2048 + 65);
    ck_assert_int_eq(block_offset(b, 2048 + 64), 2048 + 1024);
    /* Rows of 16 columns make no 128-byte block; 12 rows are no whole groups of 8. */
    int64_t narrow[2] = {16, 16}, short_rows[2] = {12, 128};
    ck_assert(!tci_buffer_swizzle_blocks(
        tci_ir_buffer(arena, "N", TCC_FLOAT16, TCC_SCOPE_SHARED, 2, narrow)));
    ck_assert(!tci_buffer_swizzle_blocks(
        tci_ir_buffer(arena, "R", TCC_FLOAT16, TCC_SCOPE_SHARED, 2, short_rows)));
}
END_TEST

START_TEST(load_copies_its_indices)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 16);
    Expr *index[1] = {x};
    Expr *load = tci_ir_load(arena, b, 1, index);
    index[0] = y; /* the caller's array is not kept */
    check_expr(load, "B[x]");
    /* A load at a vector index is a vector of the buffer's type. */
    Expr *ramp = tci_ir_ramp(arena, x, 1, 4);
    Expr *vector = tci_ir_load(arena, b, 1, &ramp);
    ck_assert_int_eq(vector->lanes, 4);
    ck_assert_int_eq(vector->type, TCC_FLOAT32);
}
END_TEST

/* ---- equality ----------------------------------------------------------------------- */

START_TEST(expr_equal_is_structural)
{
    ck_assert(tci_expr_equal(bin(EXPR_ADD, x, bin(EXPR_MUL, y, num(4))),
                             bin(EXPR_ADD, x, bin(EXPR_MUL, y, num(4)))));
    ck_assert(!tci_expr_equal(bin(EXPR_ADD, x, y), bin(EXPR_ADD, y, x))); /* no commutation */
    ck_assert(!tci_expr_equal(bin(EXPR_ADD, x, y), bin(EXPR_SUB, x, y)));
    ck_assert(!tci_expr_equal(num(1), num(2)));
    ck_assert(tci_expr_equal(tci_ir_float(arena, 0.5, TCC_FLOAT32),
                             tci_ir_float(arena, 0.5, TCC_FLOAT32)));
    ck_assert(tci_expr_equal(NULL, NULL));
    ck_assert(!tci_expr_equal(x, NULL));
}
END_TEST

START_TEST(expr_equal_compares_vars_by_identity_and_types)
{
    /* Two variables of the same name are different variables. */
    Var *other_x = tci_var(arena, "x", 0);
    ck_assert(!tci_expr_equal(x, tci_ir_var(arena, other_x)));
    ck_assert(tci_expr_equal(x, tci_ir_var(arena, vx)));
    /* int32 1 is not bool true, and float32 1 is not float16 1. */
    ck_assert(!tci_expr_equal(num(1), tci_ir_bool(arena, true)));
    ck_assert(
        !tci_expr_equal(tci_ir_float(arena, 1, TCC_FLOAT32), tci_ir_float(arena, 1, TCC_FLOAT16)));
    /* Loads compare buffers by identity, then indices. */
    Buffer *a = f32_buffer("A", TCC_SCOPE_GLOBAL, 8), *a2 = f32_buffer("A", TCC_SCOPE_GLOBAL, 8);
    Expr *ia[1] = {x};
    ck_assert(tci_expr_equal(tci_ir_load(arena, a, 1, ia), tci_ir_load(arena, a, 1, ia)));
    ck_assert(!tci_expr_equal(tci_ir_load(arena, a, 1, ia), tci_ir_load(arena, a2, 1, ia)));
    /* Ramps compare lanes and stride. */
    ck_assert(tci_expr_equal(tci_ir_ramp(arena, x, 1, 8), tci_ir_ramp(arena, x, 1, 8)));
    ck_assert(!tci_expr_equal(tci_ir_ramp(arena, x, 1, 8), tci_ir_ramp(arena, x, 1, 4)));
    ck_assert(!tci_expr_equal(tci_ir_ramp(arena, x, 1, 8), tci_ir_ramp(arena, x, 2, 8)));
}
END_TEST

START_TEST(expr_is_int_and_is_const)
{
    ck_assert(tci_expr_is_int(num(3), 3));
    ck_assert(!tci_expr_is_int(num(3), 4));
    ck_assert(!tci_expr_is_int(x, 0));
    ck_assert(!tci_expr_is_int(NULL, 0));
    ck_assert(tci_expr_is_const(num(3)));
    ck_assert(tci_expr_is_const(tci_ir_float(arena, 2, TCC_FLOAT32)));
    ck_assert(!tci_expr_is_const(x));
    ck_assert(!tci_expr_is_const(NULL));
}
END_TEST

/* ---- substitution ------------------------------------------------------------------- */

START_TEST(substitute_replaces_variables)
{
    Expr *e = bin(EXPR_ADD, bin(EXPR_MUL, x, num(16)), y);
    Expr *to = bin(EXPR_MUL, z, num(2));
    Expr *out = tci_expr_substitute(arena, e, 1, &vx, &to);
    check_expr(out, "z * 2 * 16 + y");
    check_expr(e, "x * 16 + y"); /* the original is untouched */
    /* Two variables at once, each replaced independently (no chaining). */
    Var *vars[2] = {vx, vy};
    Expr *map[2] = {y, x};
    check_expr(tci_expr_substitute(arena, bin(EXPR_SUB, x, y), 2, vars, map), "y - x");
}
END_TEST

START_TEST(substitute_refolds_constants)
{
    /* Rebuilt nodes go through the constructors, so substituted constants fold. */
    Expr *e = bin(EXPR_ADD, bin(EXPR_MUL, x, num(16)), num(3));
    Expr *two = num(2);
    check_int(tci_expr_substitute(arena, e, 1, &vx, &two), TCC_INT32, 35);
    Expr *zero = num(0);
    /* y + x * 4 with x = 0: the product folds to 0 and y + 0 is y itself. */
    ck_assert_ptr_eq(
        tci_expr_substitute(arena, bin(EXPR_ADD, y, bin(EXPR_MUL, x, num(4))), 1, &vx, &zero), y);
}
END_TEST

START_TEST(substitute_shares_untouched_trees)
{
    Expr *left = bin(EXPR_MUL, y, num(4));
    Expr *e = bin(EXPR_ADD, left, x);
    Expr *to = z;
    Expr *out = tci_expr_substitute(arena, e, 1, &vx, &to);
    ck_assert_ptr_ne(out, e);
    ck_assert_ptr_eq(out->bin.a, left); /* the subtree without x is the same node */
    /* Nothing to replace: the very same tree comes back. */
    ck_assert_ptr_eq(tci_expr_substitute(arena, left, 1, &vx, &to), left);
}
END_TEST

START_TEST(stmt_substitute_reaches_every_expression)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Buffer *a = f32_buffer("A", TCC_SCOPE_GLOBAL, 64);
    Expr *ia[1] = {bin(EXPR_ADD, x, y)};
    Stmt *body = store1(b, bin(EXPR_MUL, x, num(2)), tci_ir_load(arena, a, 1, ia));
    Stmt *loop = tci_stmt_for(arena, vy, num(0), x, FOR_SERIAL, body);
    Stmt *guarded = tci_stmt_if(arena, bin(EXPR_LT, x, num(8)), loop, NULL);
    Expr *to = num(3);
    check_stmt(tci_stmt_substitute(arena, guarded, 1, &vx, &to), "if (true) {\n"
                                                                 "  for y in 0..3 {\n"
                                                                 "    B[6] = A[3 + y]\n"
                                                                 "  }\n"
                                                                 "}\n");
}
END_TEST

START_TEST(uses_var_finds_variables_everywhere)
{
    Buffer *a = f32_buffer("A", TCC_SCOPE_GLOBAL, 64);
    Expr *ia[1] = {bin(EXPR_ADD, y, num(1))};
    Expr *load = tci_ir_load(arena, a, 1, ia);
    ck_assert(tci_expr_uses_var(load, vy));
    ck_assert(!tci_expr_uses_var(load, vx));
    ck_assert(tci_expr_uses_var(tci_ir_select(arena, bin(EXPR_LT, x, num(1)), z, z), vx));
    ck_assert(tci_expr_uses_var(tci_ir_cast(arena, TCC_FLOAT32, z), vz));
    ck_assert(tci_expr_uses_var(tci_ir_ramp(arena, x, 1, 4), vx));
    ck_assert(tci_expr_uses_var(tci_ir_not(arena, bin(EXPR_LT, x, y)), vy));
    ck_assert(!tci_expr_uses_var(num(1), vx));
    ck_assert(!tci_expr_uses_var(NULL, vx));
}
END_TEST

/* ---- the rewriter ------------------------------------------------------------------- */

static Expr *never_replace(Rewriter *rw, Expr *e)
{
    (void)rw;
    (void)e;
    return NULL;
}

static Stmt *never_replace_stmt(Rewriter *rw, Stmt *s)
{
    (void)rw;
    (void)s;
    return NULL;
}

/* Replaces the variable named in rw->user by 7. */
static Expr *replace_var(Rewriter *rw, Expr *e)
{
    if (e->kind == EXPR_VAR && e->var == rw->user)
        return tci_ir_int(rw->arena, 7);
    return NULL;
}

/* A statement using every kind of node, with x only in the second store. */
static Stmt *sample_stmt(Stmt **first_out, Stmt **loop_out)
{
    Buffer *a = f32_buffer("A", TCC_SCOPE_GLOBAL, 64), *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    int64_t tile = 256;
    Buffer *frag = tci_ir_buffer(arena, "F", TCC_FLOAT32, TCC_SCOPE_WMMA_ACCUMULATOR, 1, &tile);
    Expr *iy[1] = {y};
    Expr *ramp = tci_ir_ramp(arena, bin(EXPR_MUL, z, num(8)), 1, 8);
    Stmt *first = store1(b, y,
                         tci_ir_select(arena, bin(EXPR_LT, y, num(4)), tci_ir_load(arena, a, 1, iy),
                                       tci_ir_float(arena, 0, TCC_FLOAT32)));
    Stmt *vector = tci_stmt_store(arena, b, 1, &ramp, tci_ir_load(arena, a, 1, &ramp));
    Expr *memory[1] = {bin(EXPR_MUL, z, num(16))};
    Stmt *wmma = wmma_memory(wmma_op(WMMA_STORE, 16, 16, 16, frag, num(0)), b, 1, memory, 16);
    Stmt *items[4] = {first, vector, tci_stmt_barrier(arena), wmma};
    Stmt *nest = loop(vy, 8, FOR_SERIAL, tci_stmt_seq(arena, 4, items));
    Stmt *second = store1(b, x, num(1));
    Stmt *all = tci_stmt_allocate(arena, frag, seq2(nest, second));
    if (first_out)
        *first_out = first;
    if (loop_out)
        *loop_out = nest;
    return all;
}

START_TEST(rewriter_returns_the_same_tree_when_nothing_changes)
{
    Stmt *s = sample_stmt(NULL, NULL);
    Rewriter rw = {.arena = arena, .expr = never_replace, .stmt = never_replace_stmt};
    ck_assert_ptr_eq(tci_rewrite_stmt(&rw, s), s);
    Rewriter bare = {.arena = arena};
    ck_assert_ptr_eq(tci_rewrite_stmt(&bare, s), s);
    Expr *e = tci_ir_select(arena, bin(EXPR_LT, x, y), tci_ir_cast(arena, TCC_FLOAT32, x),
                            tci_ir_float(arena, 1, TCC_FLOAT32));
    ck_assert_ptr_eq(tci_rewrite_expr(&rw, e), e);
    ck_assert_ptr_null(tci_rewrite_expr(&rw, NULL));
    ck_assert_ptr_null(tci_rewrite_stmt(&rw, NULL));
}
END_TEST

START_TEST(rewriter_copies_only_the_changed_path)
{
    Stmt *first, *loop;
    Stmt *s = sample_stmt(&first, &loop);
    Rewriter rw = {.arena = arena, .expr = replace_var, .user = vx};
    Stmt *out = tci_rewrite_stmt(&rw, s);
    ck_assert_ptr_ne(out, s);
    ck_assert_int_eq(out->kind, STMT_ALLOCATE);
    Stmt *seq = out->alloc.body;
    ck_assert_int_eq(seq->kind, STMT_SEQ);
    ck_assert_int_eq(seq->seq.count, 2);
    ck_assert_ptr_eq(seq->seq.items[0], loop); /* no x inside: shared, not copied */
    check_stmt(seq->seq.items[1], "B[7] = 1\n");
    /* The original still reads x. */
    check_stmt(s->alloc.body->seq.items[1], "B[x] = 1\n");
    /* Replacing y rebuilds the loop but keeps the barrier and the wmma store. */
    Rewriter ry = {.arena = arena, .expr = replace_var, .user = vy};
    Stmt *out_y = tci_rewrite_stmt(&ry, s);
    Stmt *new_loop = out_y->alloc.body->seq.items[0];
    ck_assert_ptr_ne(new_loop, loop);
    ck_assert_ptr_eq(new_loop->loop.body->seq.items[1], loop->loop.body->seq.items[1]);
    ck_assert_ptr_eq(new_loop->loop.body->seq.items[2], loop->loop.body->seq.items[2]);
    ck_assert_ptr_eq(new_loop->loop.body->seq.items[3], loop->loop.body->seq.items[3]);
    ck_assert_ptr_ne(new_loop->loop.body->seq.items[0], first);
}
END_TEST

START_TEST(rewriter_children_skips_the_node_itself)
{
    /* tci_rewrite_expr_children does not call the callback on its argument. */
    Rewriter rw = {.arena = arena, .expr = replace_var, .user = vx};
    ck_assert_ptr_eq(tci_rewrite_expr_children(&rw, x), x);
    check_expr(tci_rewrite_expr_children(&rw, bin(EXPR_ADD, x, y)), "7 + y");
}
END_TEST

/* ---- the visitor ---------------------------------------------------------------------- */

typedef struct Counts {
    int exprs, stmts, vars, loads;
    bool skip_loads; /* do not descend into loads */
    int stop_after;  /* end the walk at this many expressions (0: never) */
} Counts;

static bool count_expr(Visitor *v, const Expr *e)
{
    Counts *c = v->user;
    c->exprs++;
    c->vars += e->kind == EXPR_VAR;
    c->loads += e->kind == EXPR_LOAD;
    if (c->stop_after && c->exprs == c->stop_after)
        v->done = true;
    return !(c->skip_loads && e->kind == EXPR_LOAD);
}

static bool count_stmt(Visitor *v, const Stmt *s)
{
    Counts *c = v->user;
    c->stmts += s->kind != STMT_SEQ;
    return true;
}

START_TEST(visitor_sees_every_node_of_a_statement)
{
    Stmt *s = sample_stmt(NULL, NULL);
    Counts c = {0};
    Visitor v = {.expr = count_expr, .stmt = count_stmt, .user = &c};
    tci_visit_stmt(&v, s);
    /* allocate, for, 2 stores, barrier, wmma, the last store */
    ck_assert_int_eq(c.stmts, 7);
    /* for: 0, 8; B[y] = select(y < 4, A[y], 0f): y, select, y < 4 (y, 4), A[y] (y), 0f;
     * B[ramp] = A[ramp]: the ramp (ramp, z * 8, z, 8), then the load and its ramp again;
     * wmma: 0, z * 16 (z, 16); B[x] = 1: x, 1 */
    ck_assert_int_eq(c.exprs, 2 + 8 + 9 + 4 + 2);
    ck_assert_int_eq(c.vars, 7);
    ck_assert_int_eq(c.loads, 2);
}
END_TEST

START_TEST(visitor_skips_children_and_stops)
{
    Stmt *s = sample_stmt(NULL, NULL);
    Counts all = {0}, skipped = {.skip_loads = true};
    Visitor v = {.expr = count_expr, .user = &all};
    tci_visit_stmt(&v, s);
    Visitor w = {.expr = count_expr, .user = &skipped};
    tci_visit_stmt(&w, s);
    /* A[y] hides y; A[ramp(z * 8, 1, 8)] hides the ramp, z * 8, z and 8. */
    ck_assert_int_eq(skipped.exprs, all.exprs - 5);
    ck_assert_int_eq(skipped.loads, 2);
    Counts early = {.stop_after = 3};
    Visitor u = {.expr = count_expr, .user = &early};
    tci_visit_stmt(&u, s);
    ck_assert_int_eq(early.exprs, 3);
    ck_assert(u.done);
    /* No expression callback: expressions are not walked at all. */
    Counts stmts_only = {0};
    Visitor t = {.stmt = count_stmt, .user = &stmts_only};
    tci_visit_stmt(&t, s);
    ck_assert_int_eq(stmts_only.stmts, 7);
    ck_assert_int_eq(stmts_only.exprs, 0);
}
END_TEST

/* ---- statement lists ---------------------------------------------------------------- */

START_TEST(seq_flattens_nested_lists)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 8);
    Stmt *s[4];
    for (int i = 0; i < 4; i++)
        s[i] = store1(b, num(i), num(i));
    Stmt *inner = tci_stmt_seq(arena, 2, &s[1]);
    ck_assert_int_eq(inner->kind, STMT_SEQ);
    Stmt *items[4] = {s[0], inner, NULL, s[3]};
    Stmt *seq = tci_stmt_seq(arena, 4, items);
    ck_assert_int_eq(seq->kind, STMT_SEQ);
    ck_assert_int_eq(seq->seq.count, 4); /* flat, NULL dropped */
    for (int i = 0; i < 4; i++)
        ck_assert_ptr_eq(seq->seq.items[i], s[i]);
}
END_TEST

START_TEST(seq_of_one_is_the_item)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 8);
    Stmt *one = store1(b, num(0), num(1));
    Stmt *items[3] = {NULL, one, NULL};
    ck_assert_ptr_eq(tci_stmt_seq(arena, 3, items), one);
    ck_assert_ptr_eq(tci_stmt_seq2(arena, NULL, one), one);
    ck_assert_ptr_eq(tci_stmt_seq2(arena, one, NULL), one);
    Stmt *empty = tci_stmt_seq(arena, 0, NULL);
    ck_assert_int_eq(empty->kind, STMT_SEQ);
    ck_assert_int_eq(empty->seq.count, 0);
    check_stmt(empty, "");
    Stmt *two = tci_stmt_seq2(arena, one, tci_stmt_seq2(arena, one, one));
    ck_assert_int_eq(two->seq.count, 3);
}
END_TEST

START_TEST(loop_and_thread_constructors)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 8);
    Stmt *body = store1(b, x, num(0));
    Stmt *loop = tci_stmt_for(arena, vx, num(2), num(6), FOR_UNROLLED, body);
    ck_assert_int_eq(loop->kind, STMT_FOR);
    ck_assert_int_eq(loop->loop.kind, FOR_UNROLLED);
    ck_assert_ptr_eq(loop->loop.body, body);
    check_stmt(loop, "unrolled for x in 2..8 {\n  B[x] = 0\n}\n");
    Var *tx = tci_var(arena, "threadIdx.x", 9);
    Stmt *thread = tci_stmt_thread(arena, tx, TCC_THREAD_X, 32, body);
    ck_assert_int_eq(thread->loop.kind, FOR_THREAD);
    ck_assert_int_eq(thread->loop.tag, TCC_THREAD_X);
    ck_assert(tci_expr_is_int(thread->loop.min, 0));
    ck_assert(tci_expr_is_int(thread->loop.extent, 32));
}
END_TEST

START_TEST(kernel_new_var_numbers_variables)
{
    PrimFunc k = {.name = "k", .arena = arena, .next_var_id = 5};
    Var *a = tci_prim_func_new_var(&k, "a");
    Var *b = tci_prim_func_new_var(&k, "a");
    ck_assert_int_eq(a->id, 5);
    ck_assert_int_eq(b->id, 6);
    ck_assert_int_eq(k.next_var_id, 7);
    ck_assert_ptr_ne(a, b);
    ck_assert_str_eq(a->name, "a");
}
END_TEST

/* ---- the arena ---------------------------------------------------------------------- */

START_TEST(arena_many_allocations_are_zeroed_aligned_and_disjoint)
{
    /* Enough to fill many 64 KiB chunks, with sizes that straddle chunk ends. */
    enum { COUNT = 20000 };
    unsigned char **blocks = calloc(COUNT, sizeof *blocks);
    size_t *sizes = calloc(COUNT, sizeof *sizes);
    ck_assert_ptr_nonnull(blocks);
    ck_assert_ptr_nonnull(sizes);
    uint64_t state = 7;
    for (int i = 0; i < COUNT; i++) {
        sizes[i] = 1 + (size_t)test_random_below(&state, 300);
        blocks[i] = tci_arena_alloc(arena, sizes[i]);
        ck_assert_ptr_nonnull(blocks[i]);
        ck_assert_uint_eq((uintptr_t)blocks[i] % alignof(max_align_t), 0);
        bool zeroed = true;
        for (size_t j = 0; j < sizes[i]; j++)
            zeroed = zeroed && blocks[i][j] == 0;
        ck_assert_msg(zeroed, "allocation %d is not zeroed", i);
        memset(blocks[i], i & 0xff, sizes[i]);
    }
    /* Every block still holds its own pattern: no two overlap. */
    for (int i = 0; i < COUNT; i++) {
        bool intact = true;
        for (size_t j = 0; j < sizes[i]; j++)
            intact = intact && blocks[i][j] == (unsigned char)(i & 0xff);
        ck_assert_msg(intact, "allocation %d was overwritten", i);
    }
    free(blocks);
    free(sizes);
}
END_TEST

START_TEST(arena_allocation_larger_than_a_chunk)
{
    size_t big = 1 << 20;
    unsigned char *p = tci_arena_alloc(arena, big);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p[0], 0);
    ck_assert_uint_eq(p[big - 1], 0);
    memset(p, 0xab, big);
    /* Small allocations after it still work (and do not land inside it). */
    unsigned char *q = tci_arena_alloc(arena, 16);
    ck_assert(q + 16 <= p || q >= p + big);
    ck_assert_uint_eq(q[0], 0);
}
END_TEST

START_TEST(arena_strdup_and_printf)
{
    char text[] = "threadIdx.x";
    char *copy = tci_arena_strdup(arena, text);
    ck_assert_str_eq(copy, "threadIdx.x");
    ck_assert_ptr_ne(copy, text);
    text[0] = 'T';
    ck_assert_str_eq(copy, "threadIdx.x");
    ck_assert_str_eq(tci_arena_strdup(arena, ""), "");
    ck_assert_str_eq(tci_arena_printf(arena, "%s.%s", "ax4", "outer"), "ax4.outer");
    ck_assert_str_eq(tci_arena_printf(arena, "%d x %lld", -3, 1LL << 40), "-3 x 1099511627776");
    /* Longer than any small buffer a naive implementation might use. */
    char *long_text = tci_arena_printf(arena, "%0500d", 7);
    ck_assert_uint_eq(strlen(long_text), 500);
    ck_assert_int_eq(long_text[499], '7');
    ck_assert_int_eq(long_text[0], '0');
    ck_assert_str_eq(tci_arena_printf(arena, "%s", ""), "");
}
END_TEST

START_TEST(arena_destroy_of_null_is_harmless)
{
    tci_arena_destroy(NULL);
    Arena *empty = tci_arena_create();
    ck_assert_ptr_nonnull(empty);
    tci_arena_destroy(empty); /* never allocated from */
}
END_TEST

START_TEST(var_copies_its_name)
{
    char name[] = "k";
    Var *v = tci_var(arena, name, 42);
    name[0] = 'q';
    ck_assert_str_eq(v->name, "k");
    ck_assert_int_eq(v->id, 42);
}
END_TEST

static Suite *ir_suite(void)
{
    Suite *suite = suite_create("ir");
    TCase *build = test_case(suite, "constructors", ir_setup_xyz, ir_teardown);
    tcase_add_test(build, binary_folds_integer_constants);
    tcase_add_test(build, binary_folds_with_floor_semantics);
    tcase_add_test(build, binary_leaves_division_by_zero_unfolded);
    tcase_add_test(build, binary_removes_integer_identities);
    tcase_add_test(build, binary_does_nothing_more);
    tcase_add_test(build, binary_result_types);
    tcase_add_test(build, unary_constructors_fold);
    tcase_add_test(build, buffer_new_computes_elements);
    tcase_add_test(build, swizzle_blocks_lay_columns_out_in_blocks);
    tcase_add_test(build, load_copies_its_indices);
    tcase_add_test(build, loop_and_thread_constructors);
    tcase_add_test(build, kernel_new_var_numbers_variables);
    tcase_add_test(build, var_copies_its_name);

    TCase *equal = test_case(suite, "equality", ir_setup_xyz, ir_teardown);
    tcase_add_test(equal, expr_equal_is_structural);
    tcase_add_test(equal, expr_equal_compares_vars_by_identity_and_types);
    tcase_add_test(equal, expr_is_int_and_is_const);

    TCase *rewrite = test_case(suite, "rewrite", ir_setup_xyz, ir_teardown);
    tcase_add_test(rewrite, substitute_replaces_variables);
    tcase_add_test(rewrite, substitute_refolds_constants);
    tcase_add_test(rewrite, substitute_shares_untouched_trees);
    tcase_add_test(rewrite, stmt_substitute_reaches_every_expression);
    tcase_add_test(rewrite, uses_var_finds_variables_everywhere);
    tcase_add_test(rewrite, rewriter_returns_the_same_tree_when_nothing_changes);
    tcase_add_test(rewrite, rewriter_copies_only_the_changed_path);
    tcase_add_test(rewrite, rewriter_children_skips_the_node_itself);
    tcase_add_test(rewrite, visitor_sees_every_node_of_a_statement);
    tcase_add_test(rewrite, visitor_skips_children_and_stops);

    TCase *seq = test_case(suite, "seq", ir_setup_xyz, ir_teardown);
    tcase_add_test(seq, seq_flattens_nested_lists);
    tcase_add_test(seq, seq_of_one_is_the_item);

    TCase *mem = test_case(suite, "arena", ir_setup_xyz, ir_teardown);
    tcase_add_test(mem, arena_many_allocations_are_zeroed_aligned_and_disjoint);
    tcase_add_test(mem, arena_allocation_larger_than_a_chunk);
    tcase_add_test(mem, arena_strdup_and_printf);
    tcase_add_test(mem, arena_destroy_of_null_is_harmless);
    return suite;
}

TEST_MAIN(ir_suite)
