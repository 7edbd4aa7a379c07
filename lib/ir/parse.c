/*
 * The parser of the loop IR: reads back what print.c writes.
 *
 * The grammar is the printer's: a header comment, `kernel NAME(params)`, the launch
 * shape, then one statement a line. Blanks, newlines and `//` comments are skipped
 * between tokens, except the comment that ends every wmma statement (`// m16n16k16`):
 * it carries the MMA shape, so it is syntax, read on its own line.
 *
 * Nodes are built as written, never through ir.c's constructors, which fold constants
 * and identities: `x + 0` must read back as an addition for the text to print again.
 * Names are resolved as they are read: a variable by the innermost loop that binds it,
 * a buffer by the innermost allocation, else the parameters.
 *
 * Errors unwind with longjmp to tci_parse_prim_func, as running out of memory does in
 * lowering: every node is in the arena, so unwinding loses nothing and leaks nothing.
 */
#include "ir/ir.h"
#include "support/context.h"

#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    /* Blocks and expressions nest by recursion; 10000 levels take about 3 MB of stack
     * (6 MB with the sanitizers), so hostile input ends in an error, not a crash. */
    MAX_DEPTH = 10000,
    MAX_LANES = 1 << 16,
    MAX_MMA_SIZE = 1 << 16,
    QUOTE_MAX = 40,         /* the longest piece of input an error message quotes */
    JUMP_OUT_OF_MEMORY = 1, /* what the arena passes to longjmp */
    JUMP_SYNTAX = 2,
};

/* Names in scope: a stack searched from the top, so the innermost binding wins. */
typedef struct Binding {
    const char *name;
    size_t length;
    void *value; /* Var * or Buffer * */
} Binding;

typedef struct Scope {
    Binding *items;
    int count, cap;
} Scope;

typedef struct Parser {
    tcc_context *ctx;
    Arena *arena;
    const char *text; /* the whole input, to turn positions into line:column */
    const char *pos;  /* the next character to read */
    jmp_buf *on_error;
    PrimFunc *kernel;
    Scope vars, buffers;
    int depth;
    int next_id; /* of named variables; nameless ones (`_v7`) keep their number */
} Parser;

/* ---- characters and errors ------------------------------------------------------------ */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || is_digit(c);
}

/* Names carry dots (`Conv.wmma.accumulator`), but a dot ends the name unless a name
 * character follows, so `n..n + 8` is a name, "..", a name. */
static size_t name_length(const char *s)
{
    if (!is_name_char(s[0]) || is_digit(s[0]))
        return 0;
    size_t n = 1;
    while (is_name_char(s[n]) || (s[n] == '.' && is_name_char(s[n + 1])))
        n++;
    return n;
}

/* The digits of a %g number, without its sign: `12`, `0.5`, `1e-05`, `1.5e+10`. */
static size_t number_length(const char *s)
{
    size_t n = 0;
    while (is_digit(s[n]))
        n++;
    if (n && s[n] == '.' && is_digit(s[n + 1]))
        for (n++; is_digit(s[n]); n++)
            ;
    if (!n || (s[n] != 'e' && s[n] != 'E'))
        return n;
    size_t sign = s[n + 1] == '+' || s[n + 1] == '-'; /* s[n + 1] is at most the NUL */
    if (is_digit(s[n + 1 + sign]))
        for (n += 1 + sign; is_digit(s[n]); n++)
            ;
    return n;
}

static bool word_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && strncmp(s, word, n) == 0;
}

/* The length of a name quoted in a message, as "'%.*s'". */
static int clip(size_t n)
{
    return n > QUOTE_MAX ? QUOTE_MAX : (int)n;
}

static void *alloc(Parser *p, size_t bytes)
{
    return tci_arena_alloc(p->arena, bytes); /* longjmps when out of memory */
}

static char *vformat(Parser *p, const char *format, va_list args)
{
    va_list copy;
    va_copy(copy, args);
    int n = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    char *text = alloc(p, n > 0 ? (size_t)n + 1 : 1);
    if (n > 0)
        vsnprintf(text, (size_t)n + 1, format, args);
    return text;
}

static char *strf(Parser *p, const char *format, ...) __attribute__((format(printf, 2, 3)));
static char *strf(Parser *p, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *text = vformat(p, format, args);
    va_end(args);
    return text;
}

/* The token at `at` (a name, a number or a symbol), quoted and clipped so that the
 * message stays one short line. */
static const char *describe(Parser *p, const char *at)
{
    if (!*at)
        return "end of input";
    if (*at == '\n' || *at == '\r')
        return "end of line";
    size_t n = name_length(at);
    if (!n)
        n = number_length(at + (*at == '-')) + (*at == '-');
    static const char *const pairs[] = {"..", "<=", "==", "!=", "&&", "||", "//"};
    for (size_t i = 0; n <= 1 && i < sizeof pairs / sizeof pairs[0]; i++)
        n = strncmp(at, pairs[i], 2) == 0 ? 2 : n;
    if (!n && (*at <= ' ' || *at >= 127))
        return strf(p, "character 0x%02x", (unsigned char)*at);
    if (n > QUOTE_MAX)
        return strf(p, "'%.*s...'", (int)QUOTE_MAX, at);
    return strf(p, "'%.*s'", n ? (int)n : 1, at);
}

static void line_column(const Parser *p, const char *at, size_t *line, size_t *column)
{
    *line = *column = 1;
    for (const char *c = p->text; c < at; c++) {
        *column = *c == '\n' ? 1 : *column + 1;
        *line += *c == '\n';
    }
}

/* Records "LINE:COL: message" for the position `at` and unwinds to tci_parse_prim_func. */
static _Noreturn void fail_at(Parser *p, const char *at, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static _Noreturn void fail_at(Parser *p, const char *at, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *message = vformat(p, format, args);
    va_end(args);
    size_t line, column;
    line_column(p, at, &line, &column);
    tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT, "%zu:%zu: %s", line, column, message);
    longjmp(*p->on_error, JUMP_SYNTAX);
}

static void enter(Parser *p)
{
    if (++p->depth > MAX_DEPTH)
        fail_at(p, p->pos, "nesting deeper than %d levels", MAX_DEPTH);
}

/* ---- tokens --------------------------------------------------------------------------- */

/* The start of the next token, after blanks and comments. */
static const char *peek(Parser *p)
{
    for (;;) {
        if (*p->pos == ' ' || *p->pos == '\t' || *p->pos == '\n' || *p->pos == '\r')
            p->pos++;
        else if (p->pos[0] == '/' && p->pos[1] == '/')
            p->pos += strcspn(p->pos, "\n");
        else
            return p->pos;
    }
}

/* Reads `token` if it comes next: a keyword (a whole name) or a symbol. */
static bool accept(Parser *p, const char *token)
{
    const char *at = peek(p);
    size_t n = name_length(token) ? name_length(at) : strlen(token);
    if (n != strlen(token) || strncmp(at, token, n) != 0)
        return false;
    p->pos += n;
    return true;
}

/* "expected 'TOKEN' CONTEXT, found ...", the context formatted only on failure. */
static void expect(Parser *p, const char *token, const char *context, ...)
    __attribute__((format(printf, 3, 4)));
static void expect(Parser *p, const char *token, const char *context, ...)
{
    if (accept(p, token))
        return;
    va_list args;
    va_start(args, context);
    const char *where = vformat(p, context, args);
    va_end(args);
    fail_at(p, p->pos, "expected '%s' %s, found %s", token, where, describe(p, peek(p)));
}

/* A name, copied into the arena. */
static const char *expect_name(Parser *p, const char *what)
{
    const char *at = peek(p);
    size_t n = name_length(at);
    if (!n)
        fail_at(p, at, "expected %s, found %s", what, describe(p, at));
    char *name = alloc(p, n + 1);
    memcpy(name, at, n);
    p->pos += n;
    return name;
}

/* A decimal int64, with an optional '-' right before its digits. */
static int64_t expect_int(Parser *p, const char *what)
{
    const char *start = peek(p), *s = start + (*start == '-');
    if (!is_digit(*s))
        fail_at(p, start, "expected %s, found %s", what, describe(p, start));
    uint64_t limit = (uint64_t)INT64_MAX + (*start == '-'), value = 0;
    for (; is_digit(*s); s++) {
        unsigned digit = (unsigned)(*s - '0');
        if (value > (limit - digit) / 10)
            fail_at(p, start, "%s %s does not fit in 64 bits", what, describe(p, start));
        value = value * 10 + digit;
    }
    p->pos = s;
    if (*start != '-')
        return (int64_t)value;
    return value == limit ? INT64_MIN : -(int64_t)value;
}

static int64_t expect_count(Parser *p, const char *what, int64_t min, int64_t max)
{
    const char *at = peek(p);
    int64_t value = expect_int(p, what);
    if (value < min || value > max)
        fail_at(p, at, "expected %s from %lld to %lld, found %lld", what, (long long)min,
                (long long)max, (long long)value);
    return value;
}

/* ---- names ---------------------------------------------------------------------------- */

static void *grow(Parser *p, void *items, int count, int *cap, size_t size)
{
    if (count < *cap)
        return items;
    if (*cap > INT_MAX / 2)
        fail_at(p, p->pos, "more than %d items in one list", INT_MAX / 2);
    *cap = *cap ? 2 * *cap : 8;
    void *bigger = alloc(p, size * (size_t)*cap);
    if (count)
        memcpy(bigger, items, size * (size_t)count);
    return bigger;
}

static void bind(Parser *p, Scope *scope, const char *name, void *value)
{
    scope->items = grow(p, scope->items, scope->count, &scope->cap, sizeof(Binding));
    scope->items[scope->count++] = (Binding){name, strlen(name), value};
}

static void *lookup(const Scope *scope, const char *name, size_t n)
{
    for (int i = scope->count - 1; i >= 0; i--)
        if (scope->items[i].length == n && strncmp(scope->items[i].name, name, n) == 0)
            return scope->items[i].value;
    return NULL;
}

/* `NAME[` (the name at `at`, the '[' read): a load, a store, a fragment or a tile. */
static Buffer *expect_access(Parser *p, const char *what)
{
    const char *at = peek(p);
    size_t n = name_length(at);
    if (!n || at[n] != '[')
        fail_at(p, at, "expected %s, found %s", what, describe(p, at));
    Buffer *b = lookup(&p->buffers, at, n);
    if (!b)
        fail_at(p, at, "unknown buffer %s", describe(p, at));
    p->pos = at + n + 1;
    return b;
}

/* A new variable. The printer shows a nameless one as `_v<id>`: it reads back as that. */
static Var *new_var(Parser *p, const char *name)
{
    Var *v = alloc(p, sizeof *v);
    char *end = NULL;
    long id =
        name[0] == '_' && name[1] == 'v' && is_digit(name[2]) ? strtol(name + 2, &end, 10) : -1;
    bool nameless = id >= 0 && id < INT_MAX && !*end && (name[2] != '0' || !name[3]);
    v->name = nameless ? NULL : name;
    v->id = nameless ? (int)id : p->next_id++;
    if (v->id >= p->kernel->next_var_id)
        p->kernel->next_var_id = v->id + 1;
    return v;
}

static bool type_named(const char *s, size_t n, tcc_dtype *type)
{
    for (int t = TCC_VOID; t <= TCC_FLOAT32; t++)
        if (word_is(s, n, tcc_dtype_name((tcc_dtype)t)))
            return *type = (tcc_dtype)t, true;
    return false;
}

static tcc_dtype expect_type(Parser *p, const char *context)
{
    const char *at = peek(p);
    tcc_dtype type;
    if (!type_named(at, name_length(at), &type))
        fail_at(p, at, "expected a type such as 'float16' %s, found %s", context, describe(p, at));
    p->pos += name_length(at);
    return type;
}

/* `[16, 14]`: the dimensions of a parameter or an allocation. */
static void expect_shape(Parser *p, Buffer *b)
{
    expect(p, "[", "before the shape of '%.*s'", clip(strlen(b->name)), b->name);
    b->elements = 1;
    while (!accept(p, "]")) {
        if (b->ndim && !accept(p, ","))
            fail_at(p, p->pos, "expected ']' after the shape of %s, found %s", describe(p, b->name),
                    describe(p, peek(p)));
        if (b->ndim == TCI_MAX_DIMS)
            fail_at(p, p->pos, "%s has more than %d dimensions", describe(p, b->name),
                    TCI_MAX_DIMS);
        const char *at = peek(p);
        int64_t size = expect_count(p, "a dimension", 0, INT64_MAX);
        if (__builtin_mul_overflow(b->elements, size, &b->elements))
            fail_at(p, at, "%s has more than 2^63 elements", describe(p, b->name));
        b->shape[b->ndim++] = size;
    }
}

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

static Expr *parse_expr(Parser *p);

static Expr *new_expr(Parser *p, ExprKind kind, tcc_dtype type, int lanes)
{
    Expr *e = alloc(p, sizeof *e);
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

static Expr *new_int(Parser *p, int64_t value, tcc_dtype type)
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
static double read_double(Parser *p, const char *start, const char *end)
{
    char *copy = alloc(p, (size_t)(end - start) + 1);
    memcpy(copy, start, (size_t)(end - start));
    return strtod(copy, NULL);
}

/* `12`, `-3` (int32), `0.5f` (float32), `1e-05h` (float16), `2bf` (bfloat16). */
static Expr *parse_number(Parser *p)
{
    const char *start = p->pos, *digits = start + (*start == '-');
    const char *end = digits + number_length(digits);
    size_t suffix = *end == 'f' || *end == 'h' ? 1 : end[0] == 'b' && end[1] == 'f' ? 2 : 0;
    if (suffix && !is_name_char(end[suffix])) {
        double value = read_double(p, start, end);
        if (!isfinite(value))
            fail_at(p, start, "the float literal %s is out of range", describe(p, start));
        p->pos = end + suffix;
        return new_float(p, value,
                         *end == 'f'   ? TCC_FLOAT32
                         : *end == 'h' ? TCC_FLOAT16
                                       : TCC_BFLOAT16);
    }
    for (const char *c = digits; c < end; c++)
        if (!is_digit(*c))
            fail_at(p, end,
                    "expected the suffix 'f', 'h' or 'bf' of the float literal %s, found %s",
                    describe(p, start), describe(p, end));
    return new_int(p, expect_int(p, "an integer"), TCC_INT32);
}

/* `float16(x)`, `float16x8(x)`, or a non-finite constant: `float32(inf)`. */
static Expr *parse_cast(Parser *p, const char *name, size_t n, tcc_dtype type)
{
    const char *x = name + strlen(tcc_dtype_name(type)), *at = peek(p);
    long lanes = 1;
    if (x < name + n) {
        char *end = NULL;
        lanes = is_digit(x[1]) && x[1] != '0' ? strtol(x + 1, &end, 10) : 0;
        if (lanes < 2 || lanes > MAX_LANES || end != name + n)
            fail_at(p, name, "wrong lanes in the type %s: expected 2 to %d after the 'x'",
                    describe(p, name), MAX_LANES);
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
    e->cast.value = parse_expr(p);
    if (e->cast.value->lanes != lanes) /* tci_ir_cast keeps the lanes of its value */
        fail_at(p, at, "wrong lanes: the cast to %s needs a value of %ld lanes, found %d",
                describe(p, name), lanes, e->cast.value->lanes);
    expect(p, ")", "after the value of the cast to '%.*s'", clip(n), name);
    return e;
}

/* `, ` between the arguments of a call, or `)` after the last. */
static void next_argument(Parser *p, const char *function, bool last)
{
    expect(p, last ? ")" : ",", "%s the arguments of '%s'", last ? "after" : "between", function);
}

static Expr *parse_select(Parser *p)
{
    Expr *cond = parse_expr(p);
    next_argument(p, "if_then_else", false);
    Expr *then_value = parse_expr(p);
    next_argument(p, "if_then_else", false);
    Expr *e = new_expr(p, EXPR_SELECT, then_value->type, then_value->lanes); /* as tci_ir_select */
    e->select.cond = cond;
    e->select.then_value = then_value;
    e->select.else_value = parse_expr(p);
    next_argument(p, "if_then_else", true);
    return e;
}

static Expr *parse_ramp(Parser *p)
{
    Expr *e = new_expr(p, EXPR_RAMP, TCC_INT32, 1);
    e->ramp.base = parse_expr(p);
    next_argument(p, "ramp", false);
    e->ramp.stride = expect_int(p, "the stride of 'ramp'");
    next_argument(p, "ramp", false);
    e->lanes = (int)expect_count(p, "the lanes of 'ramp'", 1, MAX_LANES);
    next_argument(p, "ramp", true);
    return e;
}

/* `broadcast(leaf, lanes)`: the printer's spelling of a constant or a variable of more
 * than one lane, so the leaf itself gets the lanes. */
static Expr *parse_broadcast(Parser *p)
{
    const char *at = peek(p);
    Expr *leaf = parse_expr(p);
    if ((leaf->kind != EXPR_INT && leaf->kind != EXPR_FLOAT && leaf->kind != EXPR_VAR) ||
        leaf->lanes != 1)
        fail_at(p, at, "expected a constant or a variable in 'broadcast', found %s",
                describe(p, at));
    next_argument(p, "broadcast", false);
    leaf->lanes = (int)expect_count(p, "the lanes of 'broadcast'", 2, MAX_LANES);
    next_argument(p, "broadcast", true);
    return leaf;
}

/* After `NAME(`: a call, or a cast when NAME is a type. */
static Expr *parse_call(Parser *p, const char *name, size_t n)
{
    if (word_is(name, n, "min") || word_is(name, n, "max")) {
        const char *function = name[1] == 'i' ? "min" : "max";
        Expr *a = parse_expr(p);
        next_argument(p, function, false);
        Expr *b = parse_expr(p);
        next_argument(p, function, true);
        return new_binary(p, name[1] == 'i' ? EXPR_MIN : EXPR_MAX, a, b);
    }
    if (word_is(name, n, "if_then_else"))
        return parse_select(p);
    if (word_is(name, n, "ramp"))
        return parse_ramp(p);
    if (word_is(name, n, "broadcast"))
        return parse_broadcast(p);
    tcc_dtype type; /* no type name has an 'x': the first one starts the lanes */
    if (type_named(name, memchr(name, 'x', n) ? strcspn(name, "x") : n, &type))
        return parse_cast(p, name, n, type);
    fail_at(p, name, "unknown function %s", describe(p, name));
}

/* The indices after `NAME[`, to the ']'. */
static Expr **parse_indices(Parser *p, const char *name, int *count)
{
    Expr **items = NULL;
    int n = 0, cap = 0;
    while (!accept(p, "]")) {
        if (n && !accept(p, ","))
            fail_at(p, p->pos, "expected ']' after the indices of %s, found %s", describe(p, name),
                    describe(p, peek(p)));
        items = grow(p, items, n, &cap, sizeof *items);
        items[n++] = parse_expr(p);
    }
    *count = n;
    return items;
}

/* Literals, names, calls, loads and parentheses. A '-' right before a digit is part of
 * a literal (`x * -1`): the IR has no negation. Calls and loads take their '(' or '['
 * right after the name, as printed. */
static Expr *parse_primary(Parser *p)
{
    const char *at = peek(p);
    if (is_digit(*at) || (*at == '-' && is_digit(at[1])))
        return parse_number(p);
    if (accept(p, "(")) {
        Expr *e = parse_expr(p);
        expect(p, ")", "to close the parenthesized expression");
        return e;
    }
    size_t n = name_length(at);
    if (n && at[n] == '[') {
        Buffer *b = expect_access(p, "a load");
        Expr *e = new_expr(p, EXPR_LOAD, b->type, 1);
        e->load.buffer = b;
        e->load.index = parse_indices(p, at, &e->load.nindex);
        e->lanes = e->load.nindex == 1 ? e->load.index[0]->lanes : 1; /* as tci_ir_load */
        return e;
    }
    if (!n)
        fail_at(p, at, "expected an expression, found %s", describe(p, at));
    p->pos = at + n + (at[n] == '(');
    if (at[n] == '(')
        return parse_call(p, at, n);
    if (word_is(at, n, "true") || word_is(at, n, "false"))
        return new_int(p, *at == 't', TCC_BOOL);
    Var *var = lookup(&p->vars, at, n);
    if (!var)
        fail_at(p, at, "unknown variable %s", describe(p, at));
    Expr *e = new_expr(p, EXPR_VAR, TCC_INT32, 1);
    e->var = var;
    return e;
}

static Expr *parse_unary(Parser *p)
{
    if (!accept(p, "!"))
        return parse_primary(p);
    enter(p);
    Expr *e = new_expr(p, EXPR_NOT, TCC_BOOL, 1); /* one lane, as tci_ir_not */
    e->bin.a = parse_unary(p);
    p->depth--;
    return e;
}

/* Precedence climbing; operators of one level associate to the left, and comparisons do
 * not chain (the printer parenthesizes `(a < b) == c`). */
static Expr *parse_binary(Parser *p, int min_prec)
{
    enter(p);
    Expr *left = parse_unary(p);
    for (bool compared = false;;) {
        const char *at = peek(p);
        size_t op = 0, nops = sizeof binary_ops / sizeof binary_ops[0];
        while (op < nops && strncmp(at, binary_ops[op].symbol, strlen(binary_ops[op].symbol)))
            op++;
        if (op == nops || binary_ops[op].prec < min_prec)
            break;
        if (binary_ops[op].prec == PREC_CMP && compared)
            fail_at(p, at, "comparisons do not chain: parenthesize the left one before %s",
                    describe(p, at));
        compared = binary_ops[op].prec == PREC_CMP;
        p->pos += strlen(binary_ops[op].symbol);
        Expr *right = parse_binary(p, binary_ops[op].prec + 1);
        left = new_binary(p, binary_ops[op].kind, left, right);
    }
    p->depth--;
    return left;
}

static Expr *parse_expr(Parser *p)
{
    return parse_binary(p, PREC_OR);
}

/* ---- statements ----------------------------------------------------------------------- */

static Stmt *parse_stmt(Parser *p);

static Stmt *new_stmt(Parser *p, StmtKind kind)
{
    Stmt *s = alloc(p, sizeof *s);
    s->kind = kind;
    return s;
}

/* `{`, statements, `}`: NULL when empty, the statement alone, or a sequence. */
static Stmt *parse_body(Parser *p, const char *context)
{
    const char *open = peek(p);
    expect(p, "{", "%s", context);
    enter(p);
    Stmt **items = NULL;
    int n = 0, cap = 0;
    while (!accept(p, "}")) {
        if (!*p->pos) {
            size_t line, column;
            line_column(p, open, &line, &column);
            fail_at(p, p->pos, "expected '}' to close the '{' of %zu:%zu, found end of input", line,
                    column);
        }
        items = grow(p, items, n, &cap, sizeof *items);
        items[n++] = parse_stmt(p);
    }
    p->depth--;
    if (n <= 1)
        return n ? items[0] : NULL;
    Stmt *s = new_stmt(p, STMT_SEQ);
    s->seq.count = n;
    s->seq.items = items;
    return s;
}

/* `min..end`, where the printer shows end = min + extent: folded when both are
 * constants, and `+ -5` as `- 5`. Reading `end` back gives the extent. */
static void parse_range(Parser *p, Expr **min, Expr **extent)
{
    Expr *m = *min = parse_expr(p);
    expect(p, "..", "between the start and the end of the range");
    const char *at = peek(p);
    Expr *end = parse_expr(p), *b = end->bin.b;
    int64_t difference;
    if (m->kind == EXPR_INT && m->int_value == 0)
        *extent = end;
    else if (m->kind == EXPR_INT && end->kind == EXPR_INT &&
             !__builtin_sub_overflow(end->int_value, m->int_value, &difference))
        *extent = new_int(p, difference, TCC_INT32);
    else if (end->kind == EXPR_ADD && tci_expr_equal(end->bin.a, m))
        *extent = b;
    else if (end->kind == EXPR_SUB && b->kind == EXPR_INT && b->type == TCC_INT32 &&
             b->int_value > 0 && tci_expr_equal(end->bin.a, m))
        *extent = new_int(p, -b->int_value, TCC_INT32);
    else
        fail_at(p, at,
                "expected the end of the range as 'START + extent', START being what "
                "precedes '..', found %s",
                describe(p, at));
}

/* The range and body of a loop whose variable is `var`, bound in the body only. */
static Stmt *parse_loop(Parser *p, Stmt *s, Var *var, const char *name)
{
    parse_range(p, &s->loop.min, &s->loop.extent);
    s->loop.var = var ? var : new_var(p, name);
    int depth = p->vars.count;
    bind(p, &p->vars, name, s->loop.var);
    s->loop.body = parse_body(p, "after the range of the loop");
    p->vars.count = depth;
    return s;
}

/* `[unrolled |vectorized ]for v in min..end {` */
static Stmt *parse_for(Parser *p, ForKind kind)
{
    Stmt *s = new_stmt(p, STMT_FOR);
    s->loop.kind = kind;
    const char *name = expect_name(p, "a loop variable");
    expect(p, "in", "after the loop variable '%.*s'", clip(strlen(name)), name);
    return parse_loop(p, s, NULL, name);
}

/* `launch threadIdx.x in 0..32 {` uses the kernel's one variable of that index, as
 * lowering does; `launch v = threadIdx.x in ...` binds a variable of its own. */
static Stmt *parse_launch(Parser *p)
{
    Stmt *s = new_stmt(p, STMT_FOR);
    s->loop.kind = FOR_THREAD;
    const char *name_at = peek(p);
    const char *name = expect_name(p, "a thread index such as 'threadIdx.x'");
    bool renamed = accept(p, "=");
    const char *at = renamed ? peek(p) : name_at;
    size_t n = name_length(at);
    int tag = TCC_BLOCK_X;
    while (tag <= TCC_THREAD_Z && !word_is(at, n, tci_thread_tag_name((tcc_thread_tag)tag)))
        tag++;
    if (tag > TCC_THREAD_Z)
        fail_at(p, at, "expected a thread index such as 'threadIdx.x', found %s", describe(p, at));
    p->pos = at + n;
    s->loop.tag = (tcc_thread_tag)tag;
    expect(p, "in", "after the thread index");
    Var **shared = &p->kernel->thread_var[tag], *var = NULL;
    if (!renamed && *shared && (*shared)->name && strcmp((*shared)->name, name) == 0)
        var = *shared;
    else if (!*shared)
        var = *shared = new_var(p, name);
    return parse_loop(p, s, var, name);
}

static Stmt *parse_if(Parser *p)
{
    Stmt *s = new_stmt(p, STMT_IF);
    expect(p, "(", "before the condition of 'if'");
    s->branch.cond = parse_expr(p);
    expect(p, ")", "after the condition of 'if'");
    s->branch.then_body = parse_body(p, "after the condition of 'if'");
    const char *at = peek(p);
    if (word_is(at, name_length(at), "else") && at[4] != '[') { /* `else[0] = ` is a store */
        p->pos += 4;
        s->branch.else_body = parse_body(p, "after 'else'");
        if (!s->branch.else_body) /* `else {}` prints only for a body that is not NULL */
            s->branch.else_body = new_stmt(p, STMT_SEQ);
    }
    return s;
}

/* `allocate NAME: float16 shared [8, 16] min [r, 0] {` */
static Stmt *parse_allocate(Parser *p)
{
    Buffer *b = alloc(p, sizeof *b);
    b->name = expect_name(p, "the name of the allocation");
    b->param_index = -1;
    expect(p, ":", "after the name of the allocation '%.*s'", clip(strlen(b->name)), b->name);
    b->type = expect_type(p, "for the allocation");
    const char *at = peek(p);
    size_t n = name_length(at);
    int scope = TCC_SCOPE_GLOBAL;
    while (scope <= TCC_SCOPE_WMMA_ACCUMULATOR && !word_is(at, n, tci_scope_name((tcc_scope)scope)))
        scope++;
    if (scope > TCC_SCOPE_WMMA_ACCUMULATOR)
        fail_at(p, at, "expected a memory scope such as 'shared' for %s, found %s",
                describe(p, b->name), describe(p, at));
    b->scope = (tcc_scope)scope;
    p->pos = at + n;
    expect_shape(p, b);
    if (accept(p, "min")) {
        expect(p, "[", "after 'min'");
        at = p->pos;
        int count;
        Expr **min = parse_indices(p, b->name, &count);
        if (count != b->ndim)
            fail_at(p, at, "expected %d region starts for %s, found %d", b->ndim,
                    describe(p, b->name), count);
        /* The printer shows a NULL start as `0` and the list when one start is not NULL:
         * zeros are NULL unless all are, and then they must stay, to print the list. */
        bool zero[TCI_MAX_DIMS], all_zero = true;
        for (int i = 0; i < count; i++) {
            zero[i] = min[i]->kind == EXPR_INT && min[i]->type == TCC_INT32 && !min[i]->int_value;
            all_zero = all_zero && zero[i];
        }
        for (int i = 0; i < count; i++)
            b->min[i] = zero[i] && !all_zero ? NULL : min[i];
    }
    Stmt *s = new_stmt(p, STMT_ALLOCATE);
    s->alloc.buffer = b;
    int depth = p->buffers.count;
    bind(p, &p->buffers, b->name, b);
    s->alloc.body = parse_body(p, "after the allocation");
    p->buffers.count = depth;
    return s;
}

static Stmt *parse_store(Parser *p)
{
    const char *name = peek(p);
    Stmt *s = new_stmt(p, STMT_STORE);
    s->store.buffer = expect_access(p, "a store");
    s->store.index = parse_indices(p, name, &s->store.nindex);
    const char *at = peek(p);
    if (at[0] != '=' || at[1] == '=')
        fail_at(p, at, "expected '=' after the indices of %s, found %s", describe(p, name),
                describe(p, at));
    p->pos++;
    s->store.value = parse_expr(p);
    return s;
}

/* ---- wmma ----------------------------------------------------------------------------- */

/* `F[index]`: one fragment of a fragment buffer. */
static void parse_fragment(Parser *p, Buffer **buffer, Expr **index)
{
    const char *name = peek(p);
    *buffer = expect_access(p, "a fragment such as 'F[0]'");
    *index = parse_expr(p);
    expect(p, "]", "after the fragment index of '%.*s'", clip(name_length(name)), name);
}

/* `&M[i, j]`: the first element of a tile in memory. */
static void parse_tile(Parser *p, WmmaStmt *w)
{
    expect(p, "&", "before the memory tile");
    const char *name = peek(p);
    w->memory = expect_access(p, "a memory tile such as '&A[0, 0]'");
    w->memory_index = parse_indices(p, name, &w->nindex);
}

/* `, stride 16, row_major)` */
static void parse_layout(Parser *p, WmmaStmt *w)
{
    expect(p, ",", "before the stride");
    expect(p, "stride", "after the memory tile and the fragment");
    w->stride = expect_int(p, "the stride");
    expect(p, ",", "after the stride");
    w->col_major = accept(p, "col_major");
    if (!w->col_major)
        expect(p, "row_major", "or 'col_major' after the stride");
    expect(p, ")", "after the layout");
}

/* The fill value, printed by put_number: no suffix; `inf`, `-inf` or `nan` when not
 * finite. */
static double parse_fill_value(Parser *p)
{
    const char *start = peek(p), *s = start + (*start == '-');
    size_t n = number_length(s);
    if (!n && (strncmp(s, "inf", 3) == 0 || strncmp(s, "nan", 3) == 0) && !is_name_char(s[3]))
        n = 3;
    if (!n)
        fail_at(p, start, "expected the fill value, found %s", describe(p, start));
    p->pos = s + n;
    return read_double(p, start, s + n);
}

/* `    // m16n16k16` ends the line of every wmma statement: read character by character,
 * as peek would skip it for a comment. */
static void parse_mma_shape(Parser *p, WmmaStmt *w)
{
    const char *s = p->pos + strspn(p->pos, " \t");
    if (strncmp(s, "//", 2) != 0)
        fail_at(p, s, "expected the MMA shape '// mMnNkK' after the wmma statement, found %s",
                describe(p, s));
    s += 2 + strspn(s + 2, " \t");
    int *sizes[3] = {&w->m, &w->n, &w->k};
    for (int i = 0; i < 3; i++) {
        if (*s != "mnk"[i] || !is_digit(s[1]))
            fail_at(p, s, "expected the MMA shape as '// m16n16k16', found %s", describe(p, s));
        for (s++; is_digit(*s); s++)
            if ((*sizes[i] = *sizes[i] * 10 + (*s - '0')) > MAX_MMA_SIZE)
                fail_at(p, s, "the MMA shape is larger than %d", MAX_MMA_SIZE);
    }
    s += strspn(s, " \t");
    if (*s && *s != '\n' && *s != '\r')
        fail_at(p, s, "expected the end of the line after the MMA shape, found %s", describe(p, s));
    p->pos = s;
}

static Stmt *parse_wmma(Parser *p, WmmaOp op, const char *name)
{
    Stmt *s = new_stmt(p, STMT_WMMA);
    WmmaStmt *w = &s->wmma;
    w->op = op;
    expect(p, "(", "after '%s'", name);
    if (op == WMMA_STORE) {
        parse_tile(p, w);
        expect(p, ",", "after the memory tile");
    }
    parse_fragment(p, &w->fragment, &w->fragment_index);
    if (op == WMMA_FILL) {
        expect(p, ",", "before the fill value");
        w->fill_value = parse_fill_value(p);
        expect(p, ")", "after the fill value");
    } else if (op == WMMA_MMA) {
        Buffer **operand[3] = {&w->a, &w->b, &w->c};
        Expr **index[3] = {&w->a_index, &w->b_index, &w->c_index};
        for (int i = 0; i < 3; i++) {
            expect(p, ",", "between the fragments of '%s'", name);
            parse_fragment(p, operand[i], index[i]);
        }
        expect(p, ")", "after the fragments of '%s'", name);
    } else {
        if (op != WMMA_STORE) {
            expect(p, ",", "after the fragment");
            parse_tile(p, w);
        }
        parse_layout(p, w);
    }
    parse_mma_shape(p, w);
    return s;
}

/* A statement starts with a keyword, or is a store: a name right before '[' (so a
 * buffer may be called `for`). */
static Stmt *parse_stmt(Parser *p)
{
    static const char *const wmma[] = {"wmma.fill_fragment", "wmma.load_matrix_a",
                                       "wmma.load_matrix_b", "wmma.mma_sync", "wmma.store_matrix"};
    static const WmmaOp ops[] = {WMMA_FILL, WMMA_LOAD_A, WMMA_LOAD_B, WMMA_MMA, WMMA_STORE};
    const char *at = peek(p);
    size_t n = name_length(at);
    if (n && at[n] == '[')
        return parse_store(p);
    p->pos += n;
    if (word_is(at, n, "for"))
        return parse_for(p, FOR_SERIAL);
    if (word_is(at, n, "unrolled") || word_is(at, n, "vectorized")) {
        expect(p, "for", "after '%.*s'", (int)n, at);
        return parse_for(p, *at == 'u' ? FOR_UNROLLED : FOR_VECTORIZED);
    }
    if (word_is(at, n, "launch"))
        return parse_launch(p);
    if (word_is(at, n, "if"))
        return parse_if(p);
    if (word_is(at, n, "allocate"))
        return parse_allocate(p);
    if (word_is(at, n, "__syncthreads")) {
        expect(p, "(", "after '__syncthreads'");
        expect(p, ")", "after '__syncthreads('");
        return new_stmt(p, STMT_BARRIER);
    }
    for (int i = 0; i < 5; i++)
        if (word_is(at, n, wmma[i]))
            return parse_wmma(p, ops[i], wmma[i]);
    fail_at(p, at, "expected a statement, found %s", describe(p, at));
}

/* ---- kernels -------------------------------------------------------------------------- */

/* `float16 A[16, 14]`: a global buffer, its position the launch argument's. */
static Buffer *parse_param(Parser *p, int index)
{
    Buffer *b = alloc(p, sizeof *b);
    b->type = expect_type(p, "for a parameter");
    b->scope = TCC_SCOPE_GLOBAL;
    b->param_index = index;
    b->name = expect_name(p, "the name of a parameter");
    expect_shape(p, b);
    bind(p, &p->buffers, b->name, b);
    return b;
}

static void parse_launch_shape(Parser *p, const char *word, int64_t *sizes)
{
    expect(p, word, "after the %s", *word == 'g' ? "parameters" : "grid");
    expect(p, "(", "after '%s'", word);
    for (int d = 0; d < 3; d++) {
        if (d)
            expect(p, ",", "between the sizes of '%s'", word);
        sizes[d] = expect_int(p, "a size");
    }
    expect(p, ")", "after the sizes of '%s'", word);
}

static PrimFunc *parse_kernel(Parser *p)
{
    PrimFunc *k = p->kernel = alloc(p, sizeof *k);
    k->arena = p->arena;
    expect(p, "kernel", "at the start");
    k->name = expect_name(p, "the kernel's name");
    expect(p, "(", "after the kernel's name");
    int cap = 0;
    while (!accept(p, ")")) {
        if (k->nparam && !accept(p, ","))
            fail_at(p, p->pos, "expected ')' after the parameters, found %s", describe(p, peek(p)));
        k->params = grow(p, k->params, k->nparam, &cap, sizeof *k->params);
        k->params[k->nparam] = parse_param(p, k->nparam);
        k->nparam++;
    }
    if (!k->params)
        k->params = alloc(p, sizeof *k->params);
    parse_launch_shape(p, "grid", k->launch);
    parse_launch_shape(p, "block", k->launch + 3);
    k->body = parse_body(p, "before the kernel's body");
    if (*peek(p))
        fail_at(p, p->pos, "expected the end of the input after the kernel's '}', found %s",
                describe(p, peek(p)));
    return k;
}

tcc_status tci_parse_prim_func(tcc_context *ctx, Arena *arena, const char *text, PrimFunc **out)
{
    if (!arena || !text || !out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "parse: no arena, text or output");
    *out = NULL;
    jmp_buf recovery;
    Parser p = {.ctx = ctx, .arena = arena, .text = text, .pos = text, .on_error = &recovery};
    switch (setjmp(recovery)) {
    case 0:
        break;
    case JUMP_SYNTAX:
        tci_arena_set_recovery(arena, NULL);
        return TCC_ERROR_INVALID_ARGUMENT; /* fail_at recorded the message */
    default:
        tci_arena_set_recovery(arena, NULL);
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory while parsing the loop IR");
    }
    tci_arena_set_recovery(arena, &recovery);
    PrimFunc *kernel = parse_kernel(&p);
    tci_arena_set_recovery(arena, NULL);
    *out = kernel;
    return TCC_OK;
}
