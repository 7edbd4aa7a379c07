/*
 * The arithmetic simplifier.
 *
 * Integer expressions are put in a canonical linear form, constant + sum of coef * atom,
 * where an atom is anything that is not a sum or a product by a constant (a variable, a
 * division, a modulo, a load, ...). Like terms merge, so the index arithmetic that bound
 * inference produces ((bx*8 + ty*2 + i) - bx*8) cancels. Division and modulo by a
 * positive constant c split the form into c*Q + R and use floor((c*Q + R)/c) = Q +
 * floor(R/c), which drops to Q when the ranges of the variables put R in [0, c).
 */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

typedef struct Term {
    Expr *atom;
    int64_t coef;
} Term;

typedef struct Linear {
    int64_t constant;
    int count, cap;
    Term *terms;
} Linear;

typedef struct Simplifier {
    Arena *arena;
    int nrange;
    const VarRange *ranges;
    /* Set when a sum or product of the linear forms leaves int64_t (literals near its limits,
     * as a fuzzer writes them): the expression being simplified is then left as written. */
    bool overflow;
} Simplifier;

/* Checked arithmetic of coefficients and bounds: the wrapped result, and the overflow noted. */
static int64_t add(Simplifier *s, int64_t a, int64_t b)
{
    int64_t r;
    s->overflow |= __builtin_add_overflow(a, b, &r);
    return r;
}

static int64_t mul(Simplifier *s, int64_t a, int64_t b)
{
    int64_t r;
    s->overflow |= __builtin_mul_overflow(a, b, &r);
    return r;
}

static Expr *simplify(Simplifier *s, Expr *e);

static void linear_add_term(Simplifier *s, Linear *l, Expr *atom, int64_t coef)
{
    if (coef == 0)
        return;
    for (int i = 0; i < l->count; i++) {
        if (tci_expr_equal(l->terms[i].atom, atom)) {
            l->terms[i].coef = add(s, l->terms[i].coef, coef);
            return;
        }
    }
    if (l->count == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        Term *terms = tci_arena_alloc(s->arena, sizeof(Term) * (size_t)cap);
        if (l->count)
            memcpy(terms, l->terms, sizeof(Term) * (size_t)l->count);
        l->terms = terms;
        l->cap = cap;
    }
    l->terms[l->count++] = (Term){atom, coef};
}

static void linear_add(Simplifier *s, Linear *dst, const Linear *src, int64_t scale)
{
    dst->constant = add(s, dst->constant, mul(s, src->constant, scale));
    for (int i = 0; i < src->count; i++)
        linear_add_term(s, dst, src->terms[i].atom, mul(s, src->terms[i].coef, scale));
}

static bool linear_is_const(const Linear *l)
{
    for (int i = 0; i < l->count; i++)
        if (l->terms[i].coef != 0)
            return false;
    return true;
}

/* Inclusive bounds of an atom, when the ranges determine them. */
static bool atom_bounds(Simplifier *s, const Expr *atom, int64_t *lo, int64_t *hi);

static bool linear_bounds(Simplifier *s, const Linear *l, int64_t *lo, int64_t *hi)
{
    int64_t low = l->constant, high = l->constant;
    for (int i = 0; i < l->count; i++) {
        int64_t c = l->terms[i].coef, alo, ahi;
        if (c == 0)
            continue;
        if (!atom_bounds(s, l->terms[i].atom, &alo, &ahi))
            return false;
        low = add(s, low, mul(s, c, c > 0 ? alo : ahi));
        high = add(s, high, mul(s, c, c > 0 ? ahi : alo));
    }
    *lo = low;
    *hi = high;
    return true;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static void linear_of(Simplifier *s, Expr *e, Linear *out);

static bool atom_bounds(Simplifier *s, const Expr *atom, int64_t *lo, int64_t *hi)
{
    if (atom->kind == EXPR_VAR) {
        for (int i = 0; i < s->nrange; i++) {
            if (s->ranges[i].var == atom->var) {
                *lo = s->ranges[i].min;
                *hi = add(s, s->ranges[i].min, s->ranges[i].extent - 1);
                return true;
            }
        }
        return false;
    }
    if ((atom->kind == EXPR_DIV || atom->kind == EXPR_MOD) && atom->bin.b->kind == EXPR_INT &&
        atom->bin.b->int_value > 0) {
        int64_t c = atom->bin.b->int_value;
        Linear num = {0};
        linear_of(s, atom->bin.a, &num);
        int64_t nlo, nhi;
        bool known = linear_bounds(s, &num, &nlo, &nhi);
        if (atom->kind == EXPR_MOD) {
            *lo = 0;
            *hi = c - 1;
            if (known && nlo >= 0 && nhi < c) {
                *lo = nlo;
                *hi = nhi;
            }
            return true;
        }
        if (!known)
            return false;
        *lo = floor_div(nlo, c);
        *hi = floor_div(nhi, c);
        return true;
    }
    if (atom->kind == EXPR_XOR) {
        /* Of two non-negative values below 2^k, the xor is too (a swizzled column). */
        Linear x = {0}, y = {0};
        linear_of(s, atom->bin.a, &x);
        linear_of(s, atom->bin.b, &y);
        int64_t xlo, xhi, ylo, yhi;
        if (!linear_bounds(s, &x, &xlo, &xhi) || !linear_bounds(s, &y, &ylo, &yhi) || xlo < 0 ||
            ylo < 0)
            return false;
        int64_t below = 1;
        while (below <= xhi || below <= yhi)
            below *= 2;
        *lo = 0;
        *hi = below - 1;
        return true;
    }
    return false;
}

static Expr *linear_to_expr(Simplifier *s, const Linear *l)
{
    Arena *a = s->arena;
    Expr *sum = NULL;
    for (int i = 0; i < l->count; i++) {
        int64_t c = l->terms[i].coef;
        if (c == 0)
            continue;
        Expr *atom = l->terms[i].atom;
        if (!sum) {
            sum = c == 1 ? atom : tci_ir_binary(a, EXPR_MUL, atom, tci_ir_int(a, c));
        } else {
            int64_t m = c < 0 ? mul(s, c, -1) : c;
            Expr *term = m == 1 ? atom : tci_ir_binary(a, EXPR_MUL, atom, tci_ir_int(a, m));
            sum = tci_ir_binary(a, c < 0 ? EXPR_SUB : EXPR_ADD, sum, term);
        }
    }
    if (!sum)
        return tci_ir_int(a, l->constant);
    if (l->constant > 0)
        return tci_ir_binary(a, EXPR_ADD, sum, tci_ir_int(a, l->constant));
    if (l->constant < 0)
        return tci_ir_binary(a, EXPR_SUB, sum, tci_ir_int(a, mul(s, l->constant, -1)));
    return sum;
}

/* Splits l = c*quotient + rest, moving the terms whose coefficients c divides. */
static void split_by(Simplifier *s, const Linear *l, int64_t c, Linear *quotient, Linear *rest)
{
    rest->constant = l->constant;
    for (int i = 0; i < l->count; i++) {
        const Term *t = &l->terms[i];
        if (t->coef % c == 0)
            linear_add_term(s, quotient, t->atom, t->coef / c);
        else
            linear_add_term(s, rest, t->atom, t->coef);
    }
    /* Keep the constant's multiple of c in the quotient, the remainder in [0, c). */
    int64_t q = floor_div(rest->constant, c);
    quotient->constant = add(s, quotient->constant, q);
    rest->constant = add(s, rest->constant, mul(s, q, -c));
}

static int64_t gcd(Simplifier *s, int64_t a, int64_t b)
{
    a = a < 0 ? mul(s, a, -1) : a;
    b = b < 0 ? mul(s, b, -1) : b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* l = g*S + R where R is one term of l whose values lie in [0, g) and g divides every
 * other coefficient, the constant and `modulus` (0: any): an aligned group of lanes
 * (8*y + v with v in [0, 8)) divides and compares like its first lane. */
static bool split_small_term(Simplifier *s, const Linear *l, int64_t modulus, int64_t *g_out,
                             Linear *big, Linear *small)
{
    for (int i = 0; i < l->count; i++) {
        if (l->terms[i].coef == 0)
            continue;
        int64_t g = modulus ? modulus : 0;
        g = gcd(s, g, l->constant);
        for (int j = 0; j < l->count; j++)
            if (j != i)
                g = gcd(s, g, l->terms[j].coef);
        int64_t lo, hi;
        Linear r = {0};
        linear_add_term(s, &r, l->terms[i].atom, l->terms[i].coef);
        if (g <= 1 || !linear_bounds(s, &r, &lo, &hi) || lo < 0 || hi >= g)
            continue;
        *big = (Linear){0};
        big->constant = l->constant / g;
        for (int j = 0; j < l->count; j++)
            if (j != i)
                linear_add_term(s, big, l->terms[j].atom, l->terms[j].coef / g);
        *small = r;
        *g_out = g;
        return true;
    }
    return false;
}

/* floor(l / c) or l mod c for a positive constant c, as a linear form. */
static void divide_linear(Simplifier *s, const Linear *l, int64_t c, bool modulo, Linear *out)
{
    int64_t lo, hi;
    if (linear_bounds(s, l, &lo, &hi) && lo >= 0 && hi < c) {
        if (modulo) /* l is in [0, c) as a whole, whatever its constant */
            linear_add(s, out, l, 1);
        return;
    }
    int64_t g;
    Linear big, small;
    if (c > 1 && split_small_term(s, l, c, &g, &big, &small) && g < c) {
        /* floor((g*y + r) / c) = floor(y / (c/g)); (g*y + r) % c = g*(y % (c/g)) + r */
        if (!modulo) {
            divide_linear(s, &big, c / g, false, out);
            return;
        }
        Linear inner = {0};
        divide_linear(s, &big, c / g, true, &inner);
        linear_add(s, out, &inner, g);
        linear_add(s, out, &small, 1);
        return;
    }
    Linear quotient = {0}, rest = {0};
    split_by(s, l, c, &quotient, &rest);
    bool rest_in_range = linear_bounds(s, &rest, &lo, &hi) && lo >= 0 && hi < c;
    if (modulo) {
        if (rest_in_range) {
            linear_add(s, out, &rest, 1);
            return;
        }
        if (linear_is_const(&rest)) {
            out->constant = add(s, out->constant, rest.constant % c);
            return;
        }
        Expr *atom =
            tci_ir_binary(s->arena, EXPR_MOD, linear_to_expr(s, &rest), tci_ir_int(s->arena, c));
        linear_add_term(s, out, atom, 1);
        return;
    }
    linear_add(s, out, &quotient, 1);
    if (rest_in_range)
        return;
    if (linear_is_const(&rest)) {
        out->constant = add(s, out->constant, floor_div(rest.constant, c));
        return;
    }
    Expr *numerator = linear_to_expr(s, &rest);
    /* floor(floor(x / a) / c) = floor(x / (a * c)) for positive a and c: keep one form. */
    if (numerator->kind == EXPR_DIV && numerator->bin.b->kind == EXPR_INT &&
        numerator->bin.b->int_value > 0) {
        int64_t a = numerator->bin.b->int_value;
        numerator = numerator->bin.a;
        c = mul(s, c, a);
    }
    Expr *atom = tci_ir_binary(s->arena, EXPR_DIV, numerator, tci_ir_int(s->arena, c));
    linear_add_term(s, out, atom, 1);
}

/* xor(x, y) with y in [0, 2^k) changes x's low k bits only, so the multiples of 2^k in x pass
 * through it: xor(A + B, y) = A + xor(B, y), A the terms of x (and the part of its constant)
 * that are multiples of 2^k. A swizzled tile's accesses (offset ^ row * 8) so differ by
 * constants outside the xor, which address arithmetic folds into its instructions. */
static bool xor_split(Simplifier *s, Expr *e, Linear *out)
{
    Expr *y = simplify(s, e->bin.b);
    Linear ly = {0}, x = {0}, rest = {0};
    linear_of(s, y, &ly);
    int64_t lo, hi, p = 1;
    if (!linear_bounds(s, &ly, &lo, &hi) || lo < 0 || hi >= ((int64_t)1 << 30))
        return false;
    while (p <= hi)
        p *= 2;
    linear_of(s, e->bin.a, &x);
    int64_t aligned = mul(s, floor_div(x.constant, p), p);
    out->constant = add(s, out->constant, aligned);
    rest.constant = x.constant - aligned;
    for (int i = 0; i < x.count; i++)
        linear_add_term(s, x.terms[i].coef % p == 0 ? out : &rest, x.terms[i].atom,
                        x.terms[i].coef);
    if (linear_is_const(&rest) && rest.constant == 0) /* xor(0, y) = y */
        linear_add(s, out, &ly, 1);
    else
        linear_add_term(s, out, tci_ir_binary(s->arena, EXPR_XOR, linear_to_expr(s, &rest), y), 1);
    return true;
}

static void linear_of(Simplifier *s, Expr *e, Linear *out)
{
    switch (e->kind) {
    case EXPR_INT:
        out->constant = add(s, out->constant, e->int_value);
        return;
    case EXPR_ADD:
    case EXPR_SUB: {
        Linear b = {0};
        linear_of(s, e->bin.a, out);
        linear_of(s, e->bin.b, &b);
        linear_add(s, out, &b, e->kind == EXPR_ADD ? 1 : -1);
        return;
    }
    case EXPR_MUL: {
        Linear a = {0}, b = {0};
        linear_of(s, e->bin.a, &a);
        linear_of(s, e->bin.b, &b);
        if (linear_is_const(&b)) {
            linear_add(s, out, &a, b.constant);
            return;
        }
        if (linear_is_const(&a)) {
            linear_add(s, out, &b, a.constant);
            return;
        }
        Expr *atom =
            tci_ir_binary(s->arena, EXPR_MUL, linear_to_expr(s, &a), linear_to_expr(s, &b));
        linear_add_term(s, out, atom, 1);
        return;
    }
    case EXPR_DIV:
    case EXPR_MOD: {
        Linear num = {0}, den = {0};
        linear_of(s, e->bin.a, &num);
        linear_of(s, e->bin.b, &den);
        if (linear_is_const(&den) && den.constant > 0) {
            divide_linear(s, &num, den.constant, e->kind == EXPR_MOD, out);
            return;
        }
        Expr *atom =
            tci_ir_binary(s->arena, e->kind, linear_to_expr(s, &num), linear_to_expr(s, &den));
        linear_add_term(s, out, atom, 1);
        return;
    }
    case EXPR_XOR:
        if (e->type == TCC_INT32 && e->lanes == 1 && xor_split(s, e, out))
            return;
        linear_add_term(
            s, out, tci_ir_binary(s->arena, EXPR_XOR, simplify(s, e->bin.a), simplify(s, e->bin.b)),
            1);
        return;
    default:
        linear_add_term(s, out, simplify(s, e), 1);
        return;
    }
}

/* Whether d is floor(y / c): d = y / c itself, or d = x / (c1 * c) with y = x / c1
 * (nested divisions are kept flattened, see divide_linear). */
static bool is_div_of(Simplifier *s, const Expr *d, const Expr *y, int64_t c)
{
    if (d->kind != EXPR_DIV || d->bin.b->kind != EXPR_INT)
        return false;
    if (d->bin.b->int_value == c && tci_expr_equal(d->bin.a, y))
        return true;
    return y->kind == EXPR_DIV && y->bin.b->kind == EXPR_INT &&
           d->bin.b->int_value == mul(s, y->bin.b->int_value, c) &&
           tci_expr_equal(d->bin.a, y->bin.a);
}

/* k*c*(y/c) + k*(y%c) is k*y: merge such pairs back into y, repeatedly, so that a fused
 * index ((x/(P*Q))*P*Q + ((x/Q)%P)*Q + x%Q) folds back to x. */
static void merge_div_mod(Simplifier *s, Linear *l)
{
    for (bool merged = true; merged;) {
        merged = false;
        for (int j = 0; j < l->count && !merged; j++) {
            Expr *m = l->terms[j].atom;
            int64_t k = l->terms[j].coef;
            if (m->kind != EXPR_MOD || m->bin.b->kind != EXPR_INT || k == 0)
                continue;
            int64_t c = m->bin.b->int_value;
            for (int i = 0; i < l->count; i++) {
                if (l->terms[i].coef != mul(s, k, c) ||
                    !is_div_of(s, l->terms[i].atom, m->bin.a, c))
                    continue;
                l->terms[i].coef = 0;
                l->terms[j].coef = 0;
                Linear y = {0};
                linear_of(s, m->bin.a, &y);
                linear_add(s, l, &y, k);
                merged = true;
                break;
            }
        }
    }
}

static Expr *simplify_int(Simplifier *s, Expr *e)
{
    Linear l = {0};
    linear_of(s, e, &l);
    merge_div_mod(s, &l);
    int64_t lo, hi;
    if (linear_bounds(s, &l, &lo, &hi) && lo == hi)
        return tci_ir_int(s->arena, lo);
    return linear_to_expr(s, &l);
}

/* x + c < k reads better as x < k - c: the constant moves to a constant right side. */
static int64_t constant_term(Simplifier *s, Expr *x, Expr *y)
{
    if (x->type != TCC_INT32 || y->kind != EXPR_INT)
        return 0;
    Linear l = {0};
    linear_of(s, x, &l);
    return linear_is_const(&l) ? 0 : l.constant;
}

static Expr *move_constant(Simplifier *s, Expr *x, Expr *y)
{
    int64_t c = constant_term(s, x, y);
    if (c == 0)
        return x;
    Linear l = {0};
    linear_of(s, x, &l);
    l.constant = 0;
    return linear_to_expr(s, &l);
}

static Expr *move_constant_rhs(Simplifier *s, Expr *x, Expr *y)
{
    int64_t c = constant_term(s, x, y);
    return c == 0 ? y : tci_ir_int(s->arena, add(s, y->int_value, mul(s, c, -1)));
}

/* a < b, a <= b, a == b, a != b decided from the bounds of a - b where possible. */
static Expr *simplify_compare(Simplifier *s, Expr *e)
{
    Arena *a = s->arena;
    Expr *x = simplify(s, e->bin.a), *y = simplify(s, e->bin.b);
    if (x->type == TCC_INT32 && x->lanes == 1) {
        Linear diff = {0}, other = {0};
        linear_of(s, x, &diff);
        linear_of(s, y, &other);
        linear_add(s, &diff, &other, -1);
        int64_t lo, hi, g;
        Linear big, small;
        /* g*y + r < 0 with r in [0, g) is y < 0: the lanes of an aligned group agree. */
        if (e->kind == EXPR_LT && split_small_term(s, &diff, 0, &g, &big, &small)) {
            diff = big;
            x = linear_to_expr(s, &big);
            y = tci_ir_int(a, 0);
        }
        if (linear_bounds(s, &diff, &lo, &hi)) {
            switch (e->kind) {
            case EXPR_LT:
                if (hi < 0)
                    return tci_ir_bool(a, true);
                if (lo >= 0)
                    return tci_ir_bool(a, false);
                break;
            case EXPR_LE:
                if (hi <= 0)
                    return tci_ir_bool(a, true);
                if (lo > 0)
                    return tci_ir_bool(a, false);
                break;
            case EXPR_EQ:
                if (lo == 0 && hi == 0)
                    return tci_ir_bool(a, true);
                if (lo > 0 || hi < 0)
                    return tci_ir_bool(a, false);
                break;
            case EXPR_NE:
                if (lo == 0 && hi == 0)
                    return tci_ir_bool(a, false);
                if (lo > 0 || hi < 0)
                    return tci_ir_bool(a, true);
                break;
            default:
                break;
            }
        }
    }
    return tci_ir_binary(a, e->kind, move_constant(s, x, y), move_constant_rhs(s, x, y));
}

static Expr *simplify_logic(Simplifier *s, Expr *e)
{
    Arena *a = s->arena;
    Expr *x = simplify(s, e->bin.a);
    Expr *y = simplify(s, e->bin.b);
    if (e->kind == EXPR_AND) {
        if (tci_expr_is_int(x, 0) || tci_expr_is_int(y, 0))
            return tci_ir_bool(a, false);
    } else if (tci_expr_is_int(x, 1) || tci_expr_is_int(y, 1)) {
        return tci_ir_bool(a, true);
    } else if (tci_expr_is_int(x, 0)) {
        return y;
    } else if (tci_expr_is_int(y, 0)) {
        return x;
    }
    return tci_ir_binary(a, e->kind, x, y);
}

/* `fold(s, e)`, or NULL (e's children simplified, e kept) where its arithmetic overflowed. */
static Expr *fold_checked(Simplifier *s, Expr *(*fold)(Simplifier *, Expr *), Expr *e)
{
    bool outer = s->overflow;
    s->overflow = false;
    Expr *folded = fold(s, e);
    bool overflowed = s->overflow;
    s->overflow = outer;
    return overflowed ? NULL : folded;
}

static Expr *simplify_rewrite(Rewriter *rw, Expr *e)
{
    Simplifier *s = rw->user;
    switch (e->kind) {
    case EXPR_LT:
    case EXPR_LE:
    case EXPR_EQ:
    case EXPR_NE:
        return fold_checked(s, simplify_compare, e);
    case EXPR_AND:
    case EXPR_OR:
        return simplify_logic(s, e);
    case EXPR_ADD:
    case EXPR_SUB:
    case EXPR_MUL:
    case EXPR_DIV:
    case EXPR_MOD:
    case EXPR_XOR:
        if (e->type == TCC_INT32 && e->lanes == 1)
            return fold_checked(s, simplify_int, e);
        return NULL;
    default:
        return NULL;
    }
}

static Expr *simplify(Simplifier *s, Expr *e)
{
    Rewriter rw = {.arena = s->arena, .expr = simplify_rewrite, .user = s};
    return tci_rewrite_expr(&rw, e);
}

Expr *tci_simplify(Arena *arena, Expr *e, int nrange, const VarRange *ranges)
{
    if (!e)
        return NULL;
    Simplifier s = {arena, nrange, ranges, false};
    return simplify(&s, e);
}

/* ---- statements: simplify with the ranges of the enclosing loops ---------------------- */

typedef struct StmtSimplifier {
    Arena *arena;
    VarRange *ranges;
    int nrange, cap;
} StmtSimplifier;

static Stmt *simplify_stmt(StmtSimplifier *ss, Stmt *s);

static Expr *simplify_in_scope(Rewriter *rw, Expr *e)
{
    StmtSimplifier *ss = rw->user;
    return tci_simplify(ss->arena, e, ss->nrange, ss->ranges);
}

static Stmt *simplify_loop(StmtSimplifier *ss, Stmt *s)
{
    Expr *min = tci_simplify(ss->arena, s->loop.min, ss->nrange, ss->ranges);
    Expr *extent = tci_simplify(ss->arena, s->loop.extent, ss->nrange, ss->ranges);
    /* A range the loop's int32 counter can run: an extent folded from arithmetic may be
     * anything (0 - 9223372036854775807 - 1), and its bounds would overflow. */
    bool known = min->kind == EXPR_INT && extent->kind == EXPR_INT && ss->nrange < ss->cap &&
                 extent->int_value >= 1 && extent->int_value <= INT32_MAX &&
                 min->int_value >= INT32_MIN && min->int_value <= INT32_MAX;
    if (known)
        ss->ranges[ss->nrange++] = (VarRange){s->loop.var, min->int_value, extent->int_value};
    Stmt *body = simplify_stmt(ss, s->loop.body);
    if (known)
        ss->nrange--;
    Stmt *copy = tci_arena_alloc(ss->arena, sizeof *copy);
    *copy = *s;
    copy->loop.min = min;
    copy->loop.extent = extent;
    copy->loop.body = body;
    return copy;
}

static Stmt *simplify_stmt_rewrite(Rewriter *rw, Stmt *s)
{
    StmtSimplifier *ss = rw->user;
    if (s->kind == STMT_FOR)
        return simplify_loop(ss, s);
    if (s->kind == STMT_IF) {
        Expr *cond = tci_simplify(ss->arena, s->branch.cond, ss->nrange, ss->ranges);
        if (cond->kind == EXPR_INT)
            return cond->int_value       ? simplify_stmt(ss, s->branch.then_body)
                   : s->branch.else_body ? simplify_stmt(ss, s->branch.else_body)
                                         : tci_stmt_seq(ss->arena, 0, NULL);
    }
    return NULL;
}

static Stmt *simplify_stmt(StmtSimplifier *ss, Stmt *s)
{
    Rewriter rw = {
        .arena = ss->arena, .expr = simplify_in_scope, .stmt = simplify_stmt_rewrite, .user = ss};
    return tci_rewrite_stmt(&rw, s);
}

Stmt *tci_simplify_stmt(Arena *arena, Stmt *s)
{
    enum { MAX_NEST = 256 };
    VarRange ranges[MAX_NEST];
    StmtSimplifier ss = {arena, ranges, 0, MAX_NEST};
    return simplify_stmt(&ss, s);
}

/* ---- divisibility ---------------------------------------------------------------------- */

int64_t tci_expr_known_divisor(Arena *arena, Expr *e)
{
    Simplifier s = {arena, 0, NULL, false};
    Linear l = {0};
    linear_of(&s, e, &l);
    int64_t g = l.constant;
    for (int i = 0; i < l.count; i++) {
        /* A swizzle's xor keeps what both of its sides are multiples of (as a power of 2). */
        const Expr *atom = l.terms[i].atom;
        int64_t of_atom = 1;
        if (atom->kind == EXPR_XOR) {
            int64_t x = tci_expr_known_divisor(arena, atom->bin.a);
            int64_t y = tci_expr_known_divisor(arena, atom->bin.b);
            of_atom = x < y ? x : y;
        }
        g = gcd(&s, g, mul(&s, l.terms[i].coef, of_atom));
    }
    int64_t p = 1;
    if (s.overflow)
        return 1; /* nothing proven */
    if (g == 0)
        return (int64_t)1 << 30;
    while (p < ((int64_t)1 << 30) && g % (p * 2) == 0)
        p *= 2;
    return p;
}
