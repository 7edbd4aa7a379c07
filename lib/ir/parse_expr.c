/*
 * The loop-IR parser's expressions: precedence climbing over the printer's operators, its
 * calls (if_then_else, min, max, ramp, broadcast, casts) and loads. Nodes get the types and
 * lanes the constructors in ir.c give, without their folding.
 */
#include "ir/parse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- expressions ---------------------------------------------------------------------- */

enum { PREC_OR = 1, PREC_AND, PREC_CMP, PREC_ADD, PREC_MUL };

static const struct {
    const char *symbol;
    ExprKind kind;
    int prec;
} binary_ops[] = {
    {"||", EXPR_OR, PREC_OR},  {"&&", EXPR_AND, PREC_AND}, {"==", EXPR_EQ, PREC_CMP},
    {"!=", EXPR_NE, PREC_CMP}, {"<=", EXPR_LE, PREC_CMP},  {"<", EXPR_LT, PREC_CMP},
    {"+", EXPR_ADD, PREC_ADD}, {"-", EXPR_SUB, PREC_ADD},  {"*", EXPR_MUL, PREC_MUL},
    {"/", EXPR_DIV, PREC_MUL}, {"%", EXPR_MOD, PREC_MUL},
};

static Expr *new_expr(Parser *p, ExprKind kind, tcc_dtype type, int lanes)
{
    Expr *e = tci_parse_alloc(p, sizeof *e);
    e->kind = kind;
    e->type = type;
    e->lanes = lanes;
    return e;
}

/* The type and lanes tci_ir_binary gives: bool for comparisons, else the type of `a`. */
static Expr *new_binary(Parser *p, ExprKind kind, Expr *a, Expr *b)
{
    bool boolean = kind >= EXPR_EQ && kind <= EXPR_OR;
    int lanes = a->lanes > b->lanes ? a->lanes : b->lanes;
    Expr *e = new_expr(p, kind, boolean ? TCC_BOOL : a->type, lanes);
    e->bin.a = a;
    e->bin.b = b;
    return e;
}

Expr *tci_parse_new_int(Parser *p, int64_t value, tcc_dtype type)
{
    Expr *e = new_expr(p, EXPR_INT, type, 1);
    e->int_value = value;
    return e;
}

static Expr *new_float(Parser *p, double value, tcc_dtype type)
{
    Expr *e = new_expr(p, EXPR_FLOAT, type, 1);
    e->float_value = value;
    return e;
}

/* strtod on a copy of [start, end): on the input it could read on (`0x1p3`). */
double tci_parse_read_double(Parser *p, const char *start, const char *end)
{
    char *copy = tci_parse_alloc(p, (size_t)(end - start) + 1);
    memcpy(copy, start, (size_t)(end - start));
    return strtod(copy, NULL);
}

/* `12`, `-3` (int32), `0.5f` (float32), `1e-05h` (float16), `2bf` (bfloat16). */
static Expr *parse_number(Parser *p)
{
    const char *start = p->pos, *digits = start + (*start == '-');
    const char *end = digits + tci_parse_number_length(digits);
    size_t suffix = *end == 'f' || *end == 'h' ? 1 : end[0] == 'b' && end[1] == 'f' ? 2 : 0;
    if (suffix && !tci_parse_is_name_char(end[suffix])) {
        double value = tci_parse_read_double(p, start, end);
        if (!isfinite(value))
            tci_parse_fail_at(p, start, "the float literal %s is out of range",
                              tci_parse_describe(p, start));
        p->pos = end + suffix;
        return new_float(p, value,
                         *end == 'f'   ? TCC_FLOAT32
                         : *end == 'h' ? TCC_FLOAT16
                                       : TCC_BFLOAT16);
    }
    for (const char *c = digits; c < end; c++)
        if (!tci_parse_is_digit(*c))
            tci_parse_fail_at(
                p, end, "expected the suffix 'f', 'h' or 'bf' of the float literal %s, found %s",
                tci_parse_describe(p, start), tci_parse_describe(p, end));
    return tci_parse_new_int(p, tci_parse_expect_int(p, "an integer"), TCC_INT32);
}

/* `float16(x)`, `float16x8(x)`, or a non-finite constant: `float32(inf)`. */
static Expr *parse_cast(Parser *p, const char *name, size_t n, tcc_dtype type)
{
    const char *x = name + strlen(tcc_dtype_name(type)), *at = tci_parse_peek(p);
    long lanes = 1;
    if (x < name + n) {
        char *end = NULL;
        lanes = tci_parse_is_digit(x[1]) && x[1] != '0' ? strtol(x + 1, &end, 10) : 0;
        if (lanes < 2 || lanes > MAX_LANES || end != name + n)
            tci_parse_fail_at(p, name, "wrong lanes in the type %s: expected 2 to %d after the 'x'",
                              tci_parse_describe(p, name), MAX_LANES);
    }
    static const char *const special[] = {"inf", "-inf", "nan"};
    for (int i = 0; i < 3 && lanes == 1 && type >= TCC_FLOAT16; i++) {
        size_t length = strlen(special[i]);
        if (strncmp(at, special[i], length) == 0 && at[length] == ')') {
            p->pos = at + length + 1;
            return new_float(p, i == 2 ? NAN : i == 1 ? -INFINITY : INFINITY, type);
        }
    }
    Expr *e = new_expr(p, EXPR_CAST, type, (int)lanes);
    e->cast.value = tci_parse_expr(p);
    if (e->cast.value->lanes != lanes) /* tci_ir_cast keeps the lanes of its value */
        tci_parse_fail_at(p, at, "wrong lanes: the cast to %s needs a value of %ld lanes, found %d",
                          tci_parse_describe(p, name), lanes, e->cast.value->lanes);
    tci_parse_expect(p, ")", "after the value of the cast to '%.*s'", tci_parse_clip(n), name);
    return e;
}

/* `, ` between the arguments of a call, or `)` after the last. */
static void next_argument(Parser *p, const char *function, bool last)
{
    tci_parse_expect(p, last ? ")" : ",", "%s the arguments of '%s'", last ? "after" : "between",
                     function);
}

static Expr *parse_select(Parser *p)
{
    Expr *cond = tci_parse_expr(p);
    next_argument(p, "if_then_else", false);
    Expr *then_value = tci_parse_expr(p);
    next_argument(p, "if_then_else", false);
    Expr *e = new_expr(p, EXPR_SELECT, then_value->type, then_value->lanes);
    e->select.cond = cond;
    e->select.then_value = then_value;
    e->select.else_value = tci_parse_expr(p);
    next_argument(p, "if_then_else", true);
    e->lanes = tci_select_lanes(cond, then_value, e->select.else_value);
    return e;
}

static Expr *parse_ramp(Parser *p)
{
    Expr *e = new_expr(p, EXPR_RAMP, TCC_INT32, 1);
    e->ramp.base = tci_parse_expr(p);
    next_argument(p, "ramp", false);
    e->ramp.stride = tci_parse_expect_int(p, "the stride of 'ramp'");
    next_argument(p, "ramp", false);
    e->lanes = (int)tci_parse_expect_count(p, "the lanes of 'ramp'", 1, MAX_LANES);
    next_argument(p, "ramp", true);
    return e;
}

/* `broadcast(leaf, lanes)`: the printer's spelling of a constant or a variable of more
 * than one lane, so the leaf itself gets the lanes. */
static Expr *parse_broadcast(Parser *p)
{
    const char *at = tci_parse_peek(p);
    Expr *leaf = tci_parse_expr(p);
    if ((leaf->kind != EXPR_INT && leaf->kind != EXPR_FLOAT && leaf->kind != EXPR_VAR) ||
        leaf->lanes != 1)
        tci_parse_fail_at(p, at, "expected a constant or a variable in 'broadcast', found %s",
                          tci_parse_describe(p, at));
    next_argument(p, "broadcast", false);
    leaf->lanes = (int)tci_parse_expect_count(p, "the lanes of 'broadcast'", 2, MAX_LANES);
    next_argument(p, "broadcast", true);
    return leaf;
}

/* After `NAME(`: a call, or a cast when NAME is a type. */
static Expr *parse_call(Parser *p, const char *name, size_t n)
{
    static const struct {
        const char *name;
        ExprKind kind;
    } calls[] = {{"min", EXPR_MIN}, {"max", EXPR_MAX}, {"xor", EXPR_XOR}};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (tci_parse_word_is(name, n, calls[i].name)) {
            Expr *a = tci_parse_expr(p);
            next_argument(p, calls[i].name, false);
            Expr *b = tci_parse_expr(p);
            next_argument(p, calls[i].name, true);
            return new_binary(p, calls[i].kind, a, b);
        }
    if (tci_parse_word_is(name, n, "if_then_else"))
        return parse_select(p);
    if (tci_parse_word_is(name, n, "ramp"))
        return parse_ramp(p);
    if (tci_parse_word_is(name, n, "broadcast"))
        return parse_broadcast(p);
    tcc_dtype type; /* no type name has an 'x': the first one starts the lanes */
    if (tci_parse_type_named(name, memchr(name, 'x', n) ? strcspn(name, "x") : n, &type))
        return parse_cast(p, name, n, type);
    tci_parse_fail_at(p, name, "unknown function %s", tci_parse_describe(p, name));
}

/* The indices after `NAME[`, to the ']'. */
Expr **tci_parse_indices(Parser *p, const char *name, int *count)
{
    Expr **items = NULL;
    int n = 0, cap = 0;
    const char *start = p->pos; /* `name` may not point into the text (a buffer's name) */
    while (!tci_parse_accept(p, "]")) {
        if (n && !tci_parse_accept(p, ","))
            tci_parse_fail_at(p, p->pos, "expected ']' after the indices of %s, found %s",
                              tci_parse_describe(p, name),
                              tci_parse_describe(p, tci_parse_peek(p)));
        items = tci_parse_grow(p, items, n, &cap, sizeof *items);
        items[n++] = tci_parse_expr(p);
    }
    /* Every buffer has a dimension at least, and the passes read an access's first index. */
    if (n == 0)
        tci_parse_fail_at(p, start, "%s needs an index", tci_parse_describe(p, name));
    *count = n;
    return items;
}

/* Literals, names, calls, loads and parentheses. A '-' right before a digit is part of
 * a literal (`x * -1`): the IR has no negation. Calls and loads take their '(' or '['
 * right after the name, as printed. */
/* A thread index named outside its launch loops (the thread that issues a pipeline's bulk
 * copies): the kernel's one variable for it, which the launch loops then share. */
static Var *thread_index(Parser *p, const char *at, size_t n)
{
    for (int tag = TCC_BLOCK_X; tag <= TCC_THREAD_Z; tag++)
        if (tci_parse_word_is(at, n, tci_thread_tag_name((tcc_thread_tag)tag))) {
            Var **shared = &p->func->thread_var[tag];
            if (!*shared)
                *shared = tci_parse_new_var(p, tci_thread_tag_name((tcc_thread_tag)tag));
            return *shared;
        }
    return NULL;
}

static Expr *parse_primary(Parser *p)
{
    const char *at = tci_parse_peek(p);
    if (tci_parse_is_digit(*at) || (*at == '-' && tci_parse_is_digit(at[1])))
        return parse_number(p);
    if (tci_parse_accept(p, "(")) {
        Expr *e = tci_parse_expr(p);
        tci_parse_expect(p, ")", "to close the parenthesized expression");
        return e;
    }
    size_t n = tci_parse_name_length(at);
    if (n && at[n] == '[') {
        Buffer *b = tci_parse_expect_access(p, "a load");
        Expr *e = new_expr(p, EXPR_LOAD, b->type, 1);
        e->load.buffer = b;
        e->load.index = tci_parse_indices(p, at, &e->load.nindex);
        e->lanes = e->load.nindex == 1 ? e->load.index[0]->lanes : 1; /* as tci_ir_load */
        return e;
    }
    if (!n)
        tci_parse_fail_at(p, at, "expected an expression, found %s", tci_parse_describe(p, at));
    p->pos = at + n + (at[n] == '(');
    if (at[n] == '(')
        return parse_call(p, at, n);
    if (tci_parse_word_is(at, n, "true") || tci_parse_word_is(at, n, "false"))
        return tci_parse_new_int(p, *at == 't', TCC_BOOL);
    Var *var = tci_parse_lookup(&p->vars, at, n);
    if (!var)
        var = thread_index(p, at, n);
    if (!var)
        tci_parse_fail_at(p, at, "unknown variable %s", tci_parse_describe(p, at));
    Expr *e = new_expr(p, EXPR_VAR, TCC_INT32, 1);
    e->var = var;
    return e;
}

static Expr *parse_unary(Parser *p)
{
    if (!tci_parse_accept(p, "!"))
        return parse_primary(p);
    tci_parse_enter(p);
    Expr *e = new_expr(p, EXPR_NOT, TCC_BOOL, 1);
    e->bin.a = parse_unary(p);
    e->lanes = e->bin.a->lanes; /* as tci_ir_not */
    p->depth--;
    return e;
}

/* Precedence climbing; operators of one level associate to the left, and comparisons do
 * not chain (the printer parenthesizes `(a < b) == c`). */
static Expr *parse_binary(Parser *p, int min_prec)
{
    tci_parse_enter(p);
    Expr *left = parse_unary(p);
    for (bool compared = false;;) {
        const char *at = tci_parse_peek(p);
        size_t op = 0, nops = sizeof binary_ops / sizeof binary_ops[0];
        while (op < nops && strncmp(at, binary_ops[op].symbol, strlen(binary_ops[op].symbol)))
            op++;
        if (op == nops || binary_ops[op].prec < min_prec)
            break;
        if (binary_ops[op].prec == PREC_CMP && compared)
            tci_parse_fail_at(p, at,
                              "comparisons do not chain: parenthesize the left one before %s",
                              tci_parse_describe(p, at));
        compared = binary_ops[op].prec == PREC_CMP;
        p->pos += strlen(binary_ops[op].symbol);
        Expr *right = parse_binary(p, binary_ops[op].prec + 1);
        left = new_binary(p, binary_ops[op].kind, left, right);
    }
    p->depth--;
    return left;
}

Expr *tci_parse_expr(Parser *p)
{
    return parse_binary(p, PREC_OR);
}
