/*
 * The arithmetic simplifier (lib/ir/simplify.c): linear forms with like terms merged,
 * floor division and modulo by constants removed where variable ranges allow,
 * comparisons decided from ranges, and the statement-level walk that supplies the
 * ranges of enclosing loops. A randomized check at the end compares values before and
 * after simplification over whole ranges.
 */
#include "ir_support.h"

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Fails unless e, simplified with `ranges`, prints as `expected`. */
static void check_simplify(Expr *e, int nrange, const VarRange *ranges, const char *expected)
{
    char *text = expr_text(tci_simplify(arena, e, nrange, ranges));
    ck_assert_msg(strcmp(text, expected) == 0, "simplified to \"%s\", expected \"%s\"", text,
                  expected);
    free(text);
}

static void check_plain(Expr *e, const char *expected)
{
    check_simplify(e, 0, NULL, expected);
}

/* ---- linear arithmetic -------------------------------------------------------------- */

START_TEST(like_terms_cancel)
{
    /* Bound inference's ((x*8 + y*2 + z) - x*8): the x terms cancel. */
    check_plain(sub(add(add(mul(x, 8), mul(y, 2)), z), mul(x, 8)), "y * 2 + z");
    check_plain(sub(x, x), "0");
    check_plain(add(x, x), "x * 2");
    check_plain(sub(add(x, mul(y, 3)), add(mul(y, 3), x)), "0");
    check_plain(add(mul(x, 3), mul(x, -3)), "0");
    check_plain(sub(mul(x, 2), mul(x, 5)), "x * -3");
}
END_TEST

START_TEST(constants_fold)
{
    check_plain(add(add(x, num(3)), num(4)), "x + 7");
    check_plain(sub(add(x, num(3)), num(3)), "x");
    check_plain(sub(num(5), sub(num(2), x)), "x + 3");
    check_plain(mul(add(x, num(1)), 2), "x * 2 + 2");
    check_plain(mul(sub(x, num(4)), 3), "x * 3 - 12");
    check_plain(bin(EXPR_MUL, num(4), add(y, num(-1))), "y * 4 - 4");
    check_plain(add(num(2), num(3)), "5");
}
END_TEST

START_TEST(terms_keep_a_stable_order)
{
    /* The sum lists terms in order of first appearance; a negative one is subtracted. */
    check_plain(add(sub(z, mul(y, 2)), x), "z - y * 2 + x");
    check_plain(sub(num(1), x), "x * -1 + 1");
}
END_TEST

START_TEST(non_linear_products_stay_atoms)
{
    check_plain(bin(EXPR_MUL, x, y), "x * y");
    /* Like atoms still merge: x*y + x*y. */
    check_plain(add(bin(EXPR_MUL, x, y), bin(EXPR_MUL, x, y)), "x * y * 2");
    /* The factors of a product are simplified. */
    check_plain(bin(EXPR_MUL, add(x, sub(y, y)), z), "x * z");
}
END_TEST

/* ---- division and modulo ------------------------------------------------------------ */

START_TEST(div_mod_drop_with_ranges)
{
    /* (x*16 + y) / 16 is x and % 16 is y once y is known to lie in [0, 16). */
    VarRange r[1] = {{vy, 0, 16}};
    Expr *e = add(mul(x, 16), y);
    check_simplify(div_(e, 16), 1, r, "x");
    check_simplify(mod(e, 16), 1, r, "y");
    /* Three levels, as bound inference writes the tutorial's tile offsets. */
    VarRange r3[2] = {{vy, 0, 4}, {vz, 0, 16}};
    Expr *e3 = add(add(mul(x, 64), mul(y, 16)), z);
    check_simplify(div_(e3, 16), 2, r3, "x * 4 + y");
    check_simplify(mod(div_(e3, 16), 4), 2, r3, "y");
    check_simplify(mod(e3, 64), 2, r3, "y * 16 + z");
}
END_TEST

START_TEST(div_mod_stay_without_ranges)
{
    Expr *e = add(mul(x, 16), y);
    check_plain(div_(e, 16), "x + y / 16");
    check_plain(mod(e, 16), "y % 16");
    /* A range reaching 16 is not enough. */
    VarRange r[1] = {{vy, 0, 17}};
    check_simplify(div_(e, 16), 1, r, "x + y / 16");
    check_simplify(mod(e, 16), 1, r, "y % 16");
    /* Nor is a range starting below 0. */
    VarRange neg[1] = {{vy, -1, 16}};
    check_simplify(div_(e, 16), 1, neg, "x + y / 16");
}
END_TEST

START_TEST(div_mod_of_multiples)
{
    check_plain(div_(mul(x, 32), 16), "x * 2");
    check_plain(mod(mul(x, 32), 16), "0");
    check_plain(div_(add(mul(x, 16), num(35)), 16), "x + 2");
    check_plain(mod(add(mul(x, 16), num(35)), 16), "3");
    /* The coefficient not divisible by 16 stays inside the division. */
    check_plain(div_(add(mul(x, 16), mul(y, 8)), 16), "x + y * 8 / 16");
}
END_TEST

START_TEST(div_mod_pairs_merge)
{
    /* (x/c)*c + x%c is x for every x: fuse's axis values recombine. */
    check_plain(add(mul(div_(x, 16), 16), mod(x, 16)), "x");
    check_plain(add(mod(x, 14), mul(div_(x, 14), 14)), "x");
    /* Scaled pairs: k*c*(x/c) + k*(x%c) is k*x. */
    check_plain(add(mul(div_(x, 4), 8), mul(mod(x, 4), 2)), "x * 2");
    /* The seed's blockIdx.z / 14 * 57344 + blockIdx.z % 14 * 4096 is blockIdx.z * 4096. */
    check_plain(add(mul(div_(x, 14), 57344), mul(mod(x, 14), 4096)), "x * 4096");
    /* Of a compound expression. */
    Expr *e = add(y, mul(z, 3));
    check_plain(add(mul(div_(e, 8), 8), mod(e, 8)), "y + z * 3");
    /* Mismatched scales do not merge. */
    check_plain(add(mul(div_(x, 16), 8), mod(x, 16)), "x / 16 * 8 + x % 16");
}
END_TEST

START_TEST(floor_semantics_for_negative_constants)
{
    /* -7 / 2 is -4 and -7 % 2 is 1 (floor), in folded and linear forms alike. */
    check_plain(div_(num(-7), 2), "-4");
    check_plain(mod(num(-7), 2), "1");
    check_plain(div_(sub(mul(x, 2), num(7)), 2), "x - 4");
    check_plain(mod(sub(mul(x, 2), num(7)), 2), "1");
    check_plain(div_(sub(mul(x, 4), num(1)), 4), "x - 1");
    check_plain(mod(sub(mul(x, 4), num(1)), 4), "3");
    /* Ranges of negative values: y in [-4, -1] gives y / 4 = -1. */
    VarRange r[1] = {{vy, -4, 4}};
    check_simplify(div_(y, 4), 1, r, "-1");
    check_simplify(div_(add(y, num(4)), 4), 1, r, "0");
    check_simplify(mod(y, 4), 1, r, "y % 4");
    /* y + 4 lies in [0, 4) as a whole, so (y + 4) % 4 is y + 4. */
    check_simplify(mod(add(y, num(4)), 4), 1, r, "y + 4");
    /* y in [-2, 1]: y / 4 is -1 or 0, so it stays. */
    VarRange r2[1] = {{vy, -2, 4}};
    check_simplify(div_(y, 4), 1, r2, "y / 4");
}
END_TEST

START_TEST(division_by_non_constants_is_kept)
{
    check_plain(bin(EXPR_DIV, add(x, num(0)), y), "x / y");
    check_plain(bin(EXPR_MOD, add(x, x), y), "x * 2 % y");
    /* By zero or a negative constant: kept, never folded or divided. */
    check_plain(bin(EXPR_DIV, x, num(0)), "x / 0");
    check_plain(bin(EXPR_DIV, x, num(-2)), "x / -2");
}
END_TEST

START_TEST(variables_with_one_value_become_constants)
{
    VarRange r[2] = {{vx, 5, 1}, {vy, 0, 4}};
    check_simplify(add(x, num(1)), 2, r, "6");
    check_simplify(div_(add(mul(x, 4), y), 4), 2, r, "5");
    check_simplify(add(x, y), 2, r, "x + y"); /* y still varies */
}
END_TEST

/* ---- comparisons and logic ------------------------------------------------------------ */

static void check_bool(Expr *e, int nrange, const VarRange *ranges, bool value)
{
    check_int(tci_simplify(arena, e, nrange, ranges), TCC_BOOL, value);
}

START_TEST(comparisons_decided_from_ranges)
{
    VarRange r[2] = {{vx, 0, 16}, {vy, 0, 16}};
    check_bool(bin(EXPR_LT, x, num(16)), 2, r, true);
    check_bool(bin(EXPR_LT, x, num(0)), 2, r, false);
    check_bool(bin(EXPR_LE, x, num(15)), 2, r, true);
    check_bool(bin(EXPR_LE, num(16), x), 2, r, false);
    check_bool(bin(EXPR_LT, add(x, y), num(31)), 2, r, true);
    check_bool(bin(EXPR_EQ, x, num(20)), 2, r, false);
    check_bool(bin(EXPR_NE, x, num(-1)), 2, r, true);
    check_bool(bin(EXPR_LE, num(0), x), 2, r, true);
    /* Through division: (x*16 + y) / 16 < 16 for x, y in [0, 16). */
    check_bool(bin(EXPR_LT, div_(add(mul(x, 16), y), 16), num(16)), 2, r, true);
    /* Undecided: kept. */
    check_simplify(bin(EXPR_LE, x, num(14)), 2, r, "x <= 14");
    check_simplify(bin(EXPR_LT, x, y), 2, r, "x < y");
    /* x == x holds without ranges. */
    check_bool(bin(EXPR_EQ, add(x, y), add(y, x)), 0, NULL, true);
    VarRange one[1] = {{vx, 5, 1}};
    check_bool(bin(EXPR_EQ, x, num(5)), 1, one, true);
    check_bool(bin(EXPR_NE, x, num(5)), 1, one, false);
}
END_TEST

START_TEST(constant_moves_to_the_right_of_comparisons)
{
    /* x + 3 < 10 reads as x < 7 (the split guards: i.outer * 10 + i.inner < 64 stay). */
    check_plain(bin(EXPR_LT, add(x, num(3)), num(10)), "x < 7");
    check_plain(bin(EXPR_LE, sub(x, num(3)), num(10)), "x <= 13");
    check_plain(bin(EXPR_EQ, add(mul(x, 2), num(1)), num(9)), "x * 2 == 8");
    check_plain(bin(EXPR_NE, add(add(x, y), num(5)), num(0)), "x + y != -5");
    /* Only a constant right side takes it; a constant left side stays. */
    check_plain(bin(EXPR_LT, add(x, num(3)), y), "x + 3 < y");
    check_plain(bin(EXPR_LE, num(1), add(x, num(2))), "1 <= x + 2");
}
END_TEST

START_TEST(and_or_fold)
{
    VarRange r[1] = {{vx, 0, 16}};
    Expr *known_true = bin(EXPR_LT, x, num(16));
    Expr *known_false = bin(EXPR_LT, x, num(0));
    Expr *unknown = bin(EXPR_LT, y, num(5));
    check_simplify(bin(EXPR_AND, known_true, unknown), 1, r, "y < 5");
    check_simplify(bin(EXPR_AND, unknown, known_true), 1, r, "y < 5");
    check_bool(bin(EXPR_AND, known_false, unknown), 1, r, false);
    check_bool(bin(EXPR_AND, unknown, known_false), 1, r, false);
    check_bool(bin(EXPR_OR, known_true, unknown), 1, r, true);
    check_bool(bin(EXPR_OR, unknown, known_true), 1, r, true);
    check_simplify(bin(EXPR_OR, known_false, unknown), 1, r, "y < 5");
    check_simplify(bin(EXPR_OR, unknown, known_false), 1, r, "y < 5");
    check_simplify(bin(EXPR_AND, unknown, bin(EXPR_LT, z, num(2))), 1, r, "y < 5 && z < 2");
    /* Not and select fold once their operand is decided. */
    check_bool(tci_ir_not(arena, known_false), 1, r, true);
    check_simplify(tci_ir_select(arena, known_true, y, z), 1, r, "y");
    check_simplify(tci_ir_select(arena, known_false, y, z), 1, r, "z");
}
END_TEST

START_TEST(simplify_reaches_inside_other_nodes)
{
    /* Loads, casts and selects are atoms whose insides are simplified too. */
    Buffer *b = buffer1("B", TCC_FLOAT16, TCC_SCOPE_GLOBAL, 64);
    Expr *index[1] = {sub(add(x, y), x)};
    Expr *load = tci_ir_load(arena, b, 1, index);
    check_plain(tci_ir_cast(arena, TCC_FLOAT32, load), "float32(B[y])");
    /* The same load twice is one atom with coefficient 2 (index arithmetic only). */
    Expr *int_load = load1(buffer1("I", TCC_INT32, TCC_SCOPE_GLOBAL, 8), y);
    check_plain(add(int_load, int_load), "I[y] * 2");
    /* Float arithmetic is left alone (it is not exact). */
    Expr *f = tci_ir_cast(arena, TCC_FLOAT32, load);
    check_plain(bin(EXPR_SUB, bin(EXPR_ADD, f, tci_ir_float(arena, 1, TCC_FLOAT32)),
                    tci_ir_float(arena, 1, TCC_FLOAT32)),
                "float32(B[y]) + 1f - 1f");
}
END_TEST

START_TEST(simplify_of_null_and_leaves)
{
    ck_assert_ptr_null(tci_simplify(arena, NULL, 0, NULL));
    /* Something already simple comes back as it is. */
    ck_assert_ptr_eq(tci_simplify(arena, x, 0, NULL), x);
    check_plain(num(42), "42");
}
END_TEST

/* ---- statements ----------------------------------------------------------------------- */

START_TEST(stmt_uses_ranges_of_enclosing_loops)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 256);
    Expr *index = div_(add(mul(x, 16), y), 16);
    Stmt *store = store1(b, index, num(0));
    Stmt *inner = loop(vy, 16, FOR_SERIAL, store);
    Stmt *outer = tci_stmt_for(arena, vx, num(0), mul(num(4), 4), FOR_SERIAL, inner);
    check_stmt(tci_simplify_stmt(arena, outer), "for x in 0..16 {\n"
                                                "  for y in 0..16 {\n"
                                                "    B[x] = 0\n"
                                                "  }\n"
                                                "}\n");
    /* Outside the y loop, y has no range: the division stays. */
    check_stmt(tci_simplify_stmt(arena, store), "B[x + y / 16] = 0\n");
}
END_TEST

START_TEST(stmt_ranges_follow_loop_min)
{
    /* for y in 16..32: y / 16 is 1 and y < 32 always holds. */
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 256);
    Expr *index = add(div_(y, 16), div_(sub(y, num(16)), 16));
    Stmt *store = store1(b, index, num(0));
    Stmt *guarded = tci_stmt_if(arena, bin(EXPR_LT, y, num(32)), store, NULL);
    Stmt *nest = tci_stmt_for(arena, vy, num(16), num(16), FOR_SERIAL, guarded);
    check_stmt(tci_simplify_stmt(arena, nest), "for y in 16..32 {\n  B[1] = 0\n}\n");
    /* y - 16 lies in [0, 16) here, so (y - 16) % 16 is y - 16. */
    Expr *rem = mod(sub(y, num(16)), 16);
    Stmt *nest2 = tci_stmt_for(arena, vy, num(16), num(16), FOR_SERIAL, store1(b, rem, num(0)));
    check_stmt(tci_simplify_stmt(arena, nest2), "for y in 16..32 {\n  B[y - 16] = 0\n}\n");
}
END_TEST

START_TEST(stmt_thread_loops_give_ranges_too)
{
    /* A launch gives its variable the range [0, extent): the guard goes. */
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 256);
    Var *tx = tci_var(arena, "threadIdx.x", 3);
    Expr *cond = bin(EXPR_LT, tci_ir_var(arena, tx), num(32));
    Stmt *guarded = tci_stmt_if(arena, cond, store1(b, tci_ir_var(arena, tx), num(1)), NULL);
    Stmt *thread = tci_stmt_thread(arena, tx, TCC_THREAD_X, 32, guarded);
    check_stmt(tci_simplify_stmt(arena, thread),
               "launch threadIdx.x in 0..32 {\n  B[threadIdx.x] = 1\n}\n");
}
END_TEST

START_TEST(stmt_decided_branches_are_replaced)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 16);
    Stmt *then_body = store1(b, num(0), num(10));
    Stmt *else_body = store1(b, num(1), num(20));
    Stmt *taken = tci_stmt_if(arena, bin(EXPR_LT, x, num(16)), then_body, else_body);
    Stmt *nest = loop(vx, 16, FOR_SERIAL, taken);
    check_stmt(tci_simplify_stmt(arena, nest), "for x in 0..16 {\n  B[0] = 10\n}\n");
    Stmt *not_taken = tci_stmt_if(arena, bin(EXPR_LT, num(16), x), then_body, else_body);
    nest = loop(vx, 16, FOR_SERIAL, not_taken);
    check_stmt(tci_simplify_stmt(arena, nest), "for x in 0..16 {\n  B[1] = 20\n}\n");
    /* A false guard without an else leaves an empty body. */
    Stmt *dropped = tci_stmt_if(arena, bin(EXPR_LE, num(16), x), then_body, NULL);
    nest = loop(vx, 16, FOR_SERIAL, dropped);
    check_stmt(tci_simplify_stmt(arena, nest), "for x in 0..16 {\n}\n");
    /* An undecided guard stays, with its condition simplified. */
    Stmt *kept = tci_stmt_if(arena, bin(EXPR_LT, add(x, num(8)), num(16)), then_body, NULL);
    nest = loop(vx, 16, FOR_SERIAL, kept);
    check_stmt(tci_simplify_stmt(arena, nest),
               "for x in 0..16 {\n  if (x < 8) {\n    B[0] = 10\n  }\n}\n");
}
END_TEST

START_TEST(stmt_simplifies_wmma_indices)
{
    Buffer *frag = f32_buffer("F", TCC_SCOPE_WMMA_ACCUMULATOR, 256 * 8);
    Buffer *mem = f32_buffer("C", TCC_SCOPE_GLOBAL, 4096);
    Expr *memory[1] = {sub(add(mul(x, 256), num(16)), num(16))};
    WmmaStmt w = wmma_op(WMMA_STORE, 16, 16, 16, frag, div_(add(mul(x, 16), y), 16));
    Stmt *inner = loop(vy, 16, FOR_SERIAL, wmma_memory(w, mem, 1, memory, 16));
    check_stmt(tci_simplify_stmt(arena, inner),
               "for y in 0..16 {\n"
               "  wmma.store_matrix(&C[x * 256], F[x], stride 16, row_major)    // m16n16k16\n"
               "}\n");
}
END_TEST

/* ---- known divisors ------------------------------------------------------------------- */

START_TEST(known_divisor_is_the_power_of_two_dividing_every_term)
{
    ck_assert_int_eq(tci_expr_known_divisor(arena, add(mul(x, 8), num(16))), 8);
    ck_assert_int_eq(tci_expr_known_divisor(arena, mul(x, 12)), 4);
    ck_assert_int_eq(tci_expr_known_divisor(arena, add(mul(x, 8), num(4))), 4);
    ck_assert_int_eq(tci_expr_known_divisor(arena, add(x, num(1))), 1);
    ck_assert_int_eq(tci_expr_known_divisor(arena, x), 1);
    ck_assert_int_eq(tci_expr_known_divisor(arena, mul(x, 3)), 1);
    ck_assert_int_eq(tci_expr_known_divisor(arena, mul(x, -8)), 8);
    ck_assert_int_eq(tci_expr_known_divisor(arena, num(48)), 16);
    ck_assert_int_eq(tci_expr_known_divisor(arena, add(mul(x, 256), mul(y, 4096))), 256);
    /* The seed's vectorized W.shared index: threadIdx.x * 8 + ... multiples of 8. */
    ck_assert_int_eq(tci_expr_known_divisor(arena, add(add(mul(x, 4096), mul(y, 2048)), mul(z, 8))),
                     8);
    /* Cancelled terms do not count. */
    ck_assert_int_eq(tci_expr_known_divisor(arena, add(sub(x, x), num(64))), 64);
}
END_TEST

START_TEST(known_divisor_of_zero_is_capped)
{
    /* 0 is divisible by everything: the cap, 2^30. */
    ck_assert_int_eq(tci_expr_known_divisor(arena, num(0)), (int64_t)1 << 30);
    ck_assert_int_eq(tci_expr_known_divisor(arena, sub(mul(x, 8), mul(x, 8))), (int64_t)1 << 30);
    ck_assert_int_eq(tci_expr_known_divisor(arena, num((int64_t)1 << 40)), (int64_t)1 << 30);
}
END_TEST

/* ---- randomized: simplification never changes a value -------------------------------- */

static Var *rand_vars[3];
static int64_t rand_values[3];

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* The value of an integer expression; *bad when it divides by zero. */
static int64_t eval(const Expr *e, bool *bad)
{
    switch (e->kind) {
    case EXPR_INT:
        return e->int_value;
    case EXPR_VAR:
        for (int i = 0; i < 3; i++)
            if (rand_vars[i] == e->var)
                return rand_values[i];
        ck_abort_msg("unknown variable %s", e->var->name);
        return 0;
    case EXPR_ADD:
        return eval(e->bin.a, bad) + eval(e->bin.b, bad);
    case EXPR_SUB:
        return eval(e->bin.a, bad) - eval(e->bin.b, bad);
    case EXPR_MUL:
        return eval(e->bin.a, bad) * eval(e->bin.b, bad);
    case EXPR_DIV:
    case EXPR_MOD: {
        int64_t a = eval(e->bin.a, bad), b = eval(e->bin.b, bad);
        if (b == 0) {
            *bad = true;
            return 0;
        }
        return e->kind == EXPR_DIV ? floor_div(a, b) : a - floor_div(a, b) * b;
    }
    case EXPR_EQ:
        return eval(e->bin.a, bad) == eval(e->bin.b, bad);
    case EXPR_NE:
        return eval(e->bin.a, bad) != eval(e->bin.b, bad);
    case EXPR_LT:
        return eval(e->bin.a, bad) < eval(e->bin.b, bad);
    case EXPR_LE:
        return eval(e->bin.a, bad) <= eval(e->bin.b, bad);
    case EXPR_AND:
        return eval(e->bin.a, bad) && eval(e->bin.b, bad);
    case EXPR_OR:
        return eval(e->bin.a, bad) || eval(e->bin.b, bad);
    case EXPR_NOT:
        return !eval(e->bin.a, bad);
    case EXPR_SELECT:
        return eval(e->select.cond, bad) ? eval(e->select.then_value, bad)
                                         : eval(e->select.else_value, bad);
    default:
        ck_abort_msg("unexpected expression kind %d", (int)e->kind);
        return 0;
    }
}

static Expr *random_int_expr(uint64_t *state, int depth)
{
    if (depth == 0 || test_random_below(state, 4) == 0) {
        if (test_random_below(state, 2))
            return tci_ir_var(arena, rand_vars[test_random_below(state, 3)]);
        return num(test_random_below(state, 41) - 20);
    }
    static const ExprKind kinds[] = {EXPR_ADD, EXPR_SUB, EXPR_MUL, EXPR_DIV, EXPR_MOD};
    ExprKind kind = kinds[test_random_below(state, 5)];
    Expr *a = random_int_expr(state, depth - 1);
    /* Mostly constant multipliers and divisors, as index arithmetic has. */
    Expr *b;
    if (kind == EXPR_MUL && test_random_below(state, 4))
        b = num(test_random_below(state, 17) - 8);
    else if ((kind == EXPR_DIV || kind == EXPR_MOD) && test_random_below(state, 4))
        b = num(1 + test_random_below(state, 16));
    else
        b = random_int_expr(state, depth - 1);
    return bin(kind, a, b);
}

static Expr *random_bool_expr(uint64_t *state, int depth)
{
    static const ExprKind cmp[] = {EXPR_LT, EXPR_LE, EXPR_EQ, EXPR_NE};
    if (depth > 0 && test_random_below(state, 3) == 0)
        return bin(test_random_below(state, 2) ? EXPR_AND : EXPR_OR,
                   random_bool_expr(state, depth - 1), random_bool_expr(state, depth - 1));
    return bin(cmp[test_random_below(state, 4)], random_int_expr(state, 2),
               random_int_expr(state, 2));
}

START_TEST(random_expressions_keep_their_values)
{
    uint64_t state = 20240611;
    for (int trial = 0; trial < 3000; trial++) {
        Arena *saved = arena;
        arena = tci_arena_create();
        rand_vars[0] = vx;
        rand_vars[1] = vy;
        rand_vars[2] = vz;
        VarRange ranges[3];
        for (int i = 0; i < 3; i++)
            ranges[i] = (VarRange){rand_vars[i], test_random_below(&state, 9) - 4,
                                   1 + test_random_below(&state, 6)};
        Expr *e = test_random_below(&state, 3) == 0 ? random_bool_expr(&state, 2)
                                                    : random_int_expr(&state, 4);
        int nrange = (int)test_random_below(&state, 2) * 3;
        Expr *s = tci_simplify(arena, e, nrange, ranges);
        for (rand_values[0] = ranges[0].min; rand_values[0] < ranges[0].min + ranges[0].extent;
             rand_values[0]++)
            for (rand_values[1] = ranges[1].min; rand_values[1] < ranges[1].min + ranges[1].extent;
                 rand_values[1]++)
                for (rand_values[2] = ranges[2].min;
                     rand_values[2] < ranges[2].min + ranges[2].extent; rand_values[2]++) {
                    bool bad = false;
                    int64_t before = eval(e, &bad);
                    if (bad)
                        continue; /* the original divides by zero: anything goes */
                    int64_t after = eval(s, &bad);
                    if (bad || before != after) {
                        char *te = expr_text(e), *ts = expr_text(s);
                        ck_abort_msg("trial %d: %s -> %s at x=%lld y=%lld z=%lld: %lld vs %lld%s",
                                     trial, te, ts, (long long)rand_values[0],
                                     (long long)rand_values[1], (long long)rand_values[2],
                                     (long long)before, (long long)after,
                                     bad ? " (divides by zero)" : "");
                    }
                }
        tci_arena_destroy(arena);
        arena = saved;
    }
}
END_TEST

START_TEST(aligned_lane_groups_divide_like_their_first_lane)
{
    /* 8*y + z with z in [0, 8): a group of 8 lanes starting at a multiple of 8. Dividing
     * by a multiple of 8 sees only y; the remainder keeps z; a bound that is a multiple
     * of 8 compares the group as a whole. */
    VarRange r[1] = {{vz, 0, 8}};
    Expr *group = add(mul(y, 8), z);
    check_simplify(div_(group, 256), 1, r, "y / 32");
    check_simplify(mod(group, 256), 1, r, "y % 32 * 8 + z");
    check_simplify(bin(EXPR_LT, group, num(24)), 1, r, "y < 3");
    /* z reaching past the group (z in [0, 9)) proves nothing: all stay as written. */
    VarRange wide[1] = {{vz, 0, 9}};
    check_simplify(div_(group, 256), 1, wide, "(y * 8 + z) / 256");
    check_simplify(bin(EXPR_LT, group, num(24)), 1, wide, "y * 8 + z < 24");
    /* Nor does a bound that is not a multiple of the group. */
    check_simplify(bin(EXPR_LT, group, num(27)), 1, r, "y * 8 + z < 27");
}
END_TEST

static Suite *simplify_suite(void)
{
    Suite *suite = suite_create("simplify");
    TCase *linear = test_case(suite, "linear", ir_setup_xyz, ir_teardown);
    tcase_add_test(linear, like_terms_cancel);
    tcase_add_test(linear, aligned_lane_groups_divide_like_their_first_lane);
    tcase_add_test(linear, constants_fold);
    tcase_add_test(linear, terms_keep_a_stable_order);
    tcase_add_test(linear, non_linear_products_stay_atoms);
    tcase_add_test(linear, variables_with_one_value_become_constants);
    tcase_add_test(linear, simplify_reaches_inside_other_nodes);
    tcase_add_test(linear, simplify_of_null_and_leaves);

    TCase *divmod = test_case(suite, "div_mod", ir_setup_xyz, ir_teardown);
    tcase_add_test(divmod, div_mod_drop_with_ranges);
    tcase_add_test(divmod, div_mod_stay_without_ranges);
    tcase_add_test(divmod, div_mod_of_multiples);
    tcase_add_test(divmod, div_mod_pairs_merge);
    tcase_add_test(divmod, floor_semantics_for_negative_constants);
    tcase_add_test(divmod, division_by_non_constants_is_kept);

    TCase *logic = test_case(suite, "logic", ir_setup_xyz, ir_teardown);
    tcase_add_test(logic, comparisons_decided_from_ranges);
    tcase_add_test(logic, constant_moves_to_the_right_of_comparisons);
    tcase_add_test(logic, and_or_fold);

    TCase *stmt = test_case(suite, "stmt", ir_setup_xyz, ir_teardown);
    tcase_add_test(stmt, stmt_uses_ranges_of_enclosing_loops);
    tcase_add_test(stmt, stmt_ranges_follow_loop_min);
    tcase_add_test(stmt, stmt_thread_loops_give_ranges_too);
    tcase_add_test(stmt, stmt_decided_branches_are_replaced);
    tcase_add_test(stmt, stmt_simplifies_wmma_indices);

    TCase *divisor = test_case(suite, "known_divisor", ir_setup_xyz, ir_teardown);
    tcase_add_test(divisor, known_divisor_is_the_power_of_two_dividing_every_term);
    tcase_add_test(divisor, known_divisor_of_zero_is_capped);

    TCase *random = test_case(suite, "random", ir_setup_xyz, ir_teardown);
    tcase_set_timeout(random, 60);
    tcase_add_test(random, random_expressions_keep_their_values);
    return suite;
}

TEST_MAIN(simplify_suite)
