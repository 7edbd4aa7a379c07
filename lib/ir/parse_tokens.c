/*
 * The loop-IR parser's tokens, names in scope and errors (parse.h). Blanks, newlines and
 * `//` comments are skipped between tokens; a name may carry dots (`Conv.shared`).
 */
#include "ir/parse.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- characters and errors ------------------------------------------------------------ */

bool tci_parse_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

bool tci_parse_is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || tci_parse_is_digit(c);
}

/* Names carry dots (`Conv.wmma.accumulator`), but a dot ends the name unless a name
 * character follows, so `n..n + 8` is a name, "..", a name. */
size_t tci_parse_name_length(const char *s)
{
    if (!tci_parse_is_name_char(s[0]) || tci_parse_is_digit(s[0]))
        return 0;
    size_t n = 1;
    while (tci_parse_is_name_char(s[n]) || (s[n] == '.' && tci_parse_is_name_char(s[n + 1])))
        n++;
    return n;
}

/* The digits of a %g number, without its sign: `12`, `0.5`, `1e-05`, `1.5e+10`. */
size_t tci_parse_number_length(const char *s)
{
    size_t n = 0;
    while (tci_parse_is_digit(s[n]))
        n++;
    if (n && s[n] == '.' && tci_parse_is_digit(s[n + 1]))
        for (n++; tci_parse_is_digit(s[n]); n++)
            ;
    if (!n || (s[n] != 'e' && s[n] != 'E'))
        return n;
    size_t sign = s[n + 1] == '+' || s[n + 1] == '-'; /* s[n + 1] is at most the NUL */
    if (tci_parse_is_digit(s[n + 1 + sign]))
        for (n += 1 + sign; tci_parse_is_digit(s[n]); n++)
            ;
    return n;
}

bool tci_parse_word_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && strncmp(s, word, n) == 0;
}

/* The length of a name quoted in a message, as "'%.*s'". */
int tci_parse_clip(size_t n)
{
    return n > QUOTE_MAX ? QUOTE_MAX : (int)n;
}

void *tci_parse_alloc(Parser *p, size_t bytes)
{
    return tci_arena_alloc(p->arena, bytes); /* longjmps when out of memory */
}

static char *vformat(Parser *p, const char *format, va_list args)
{
    va_list copy;
    va_copy(copy, args);
    int n = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    char *text = tci_parse_alloc(p, n > 0 ? (size_t)n + 1 : 1);
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
const char *tci_parse_describe(Parser *p, const char *at)
{
    if (!*at)
        return "end of input";
    if (*at == '\n' || *at == '\r')
        return "end of line";
    size_t n = tci_parse_name_length(at);
    if (!n)
        n = tci_parse_number_length(at + (*at == '-')) + (*at == '-');
    static const char *const pairs[] = {"..", "<=", "==", "!=", "&&", "||", "//"};
    for (size_t i = 0; n <= 1 && i < sizeof pairs / sizeof pairs[0]; i++)
        n = strncmp(at, pairs[i], 2) == 0 ? 2 : n;
    if (!n && (*at <= ' ' || *at >= 127))
        return strf(p, "character 0x%02x", (unsigned char)*at);
    if (n > QUOTE_MAX)
        return strf(p, "'%.*s...'", (int)QUOTE_MAX, at);
    return strf(p, "'%.*s'", n ? (int)n : 1, at);
}

void tci_parse_line_column(const Parser *p, const char *at, size_t *line, size_t *column)
{
    *line = *column = 1;
    for (const char *c = p->text; c < at; c++) {
        *column = *c == '\n' ? 1 : *column + 1;
        *line += *c == '\n';
    }
}

/* Records "LINE:COL: message" for the position `at` and unwinds to tci_parse_prim_func. */
_Noreturn void tci_parse_fail_at(Parser *p, const char *at, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *message = vformat(p, format, args);
    va_end(args);
    size_t line, column;
    tci_parse_line_column(p, at, &line, &column);
    tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT, "%zu:%zu: %s", line, column, message);
    longjmp(*p->on_error, JUMP_SYNTAX);
}

void tci_parse_enter(Parser *p)
{
    if (++p->depth > MAX_DEPTH)
        tci_parse_fail_at(p, p->pos, "nesting deeper than %d levels", MAX_DEPTH);
}

/* ---- tokens --------------------------------------------------------------------------- */

/* The start of the next token, after blanks and comments. */
const char *tci_parse_peek(Parser *p)
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
bool tci_parse_accept(Parser *p, const char *token)
{
    const char *at = tci_parse_peek(p);
    size_t n = tci_parse_name_length(token) ? tci_parse_name_length(at) : strlen(token);
    if (n != strlen(token) || strncmp(at, token, n) != 0)
        return false;
    p->pos += n;
    return true;
}

/* "expected 'TOKEN' CONTEXT, found ...", the context formatted only on failure. */
void tci_parse_expect(Parser *p, const char *token, const char *context, ...)
{
    if (tci_parse_accept(p, token))
        return;
    va_list args;
    va_start(args, context);
    const char *where = vformat(p, context, args);
    va_end(args);
    tci_parse_fail_at(p, p->pos, "expected '%s' %s, found %s", token, where,
                      tci_parse_describe(p, tci_parse_peek(p)));
}

/* A name, copied into the arena. */
const char *tci_parse_expect_name(Parser *p, const char *what)
{
    const char *at = tci_parse_peek(p);
    size_t n = tci_parse_name_length(at);
    if (!n)
        tci_parse_fail_at(p, at, "expected %s, found %s", what, tci_parse_describe(p, at));
    char *name = tci_parse_alloc(p, n + 1);
    memcpy(name, at, n);
    p->pos += n;
    return name;
}

/* A decimal int64, with an optional '-' right before its digits. */
int64_t tci_parse_expect_int(Parser *p, const char *what)
{
    const char *start = tci_parse_peek(p), *s = start + (*start == '-');
    if (!tci_parse_is_digit(*s))
        tci_parse_fail_at(p, start, "expected %s, found %s", what, tci_parse_describe(p, start));
    uint64_t limit = (uint64_t)INT64_MAX + (*start == '-'), value = 0;
    for (; tci_parse_is_digit(*s); s++) {
        unsigned digit = (unsigned)(*s - '0');
        if (value > (limit - digit) / 10)
            tci_parse_fail_at(p, start, "%s %s does not fit in 64 bits", what,
                              tci_parse_describe(p, start));
        value = value * 10 + digit;
    }
    p->pos = s;
    if (*start != '-')
        return (int64_t)value;
    return value == limit ? INT64_MIN : -(int64_t)value;
}

int64_t tci_parse_expect_count(Parser *p, const char *what, int64_t min, int64_t max)
{
    const char *at = tci_parse_peek(p);
    int64_t value = tci_parse_expect_int(p, what);
    if (value < min || value > max)
        tci_parse_fail_at(p, at, "expected %s from %lld to %lld, found %lld", what, (long long)min,
                          (long long)max, (long long)value);
    return value;
}

/* ---- names ---------------------------------------------------------------------------- */

void *tci_parse_grow(Parser *p, void *items, int count, int *cap, size_t size)
{
    if (count < *cap)
        return items;
    if (*cap > INT_MAX / 2)
        tci_parse_fail_at(p, p->pos, "more than %d items in one list", INT_MAX / 2);
    *cap = *cap ? 2 * *cap : 8;
    void *bigger = tci_parse_alloc(p, size * (size_t)*cap);
    if (count)
        memcpy(bigger, items, size * (size_t)count);
    return bigger;
}

void tci_parse_bind(Parser *p, Scope *scope, const char *name, void *value)
{
    scope->items = tci_parse_grow(p, scope->items, scope->count, &scope->cap, sizeof(Binding));
    scope->items[scope->count++] = (Binding){name, strlen(name), value};
}

void *tci_parse_lookup(const Scope *scope, const char *name, size_t n)
{
    for (int i = scope->count - 1; i >= 0; i--)
        if (scope->items[i].length == n && strncmp(scope->items[i].name, name, n) == 0)
            return scope->items[i].value;
    return NULL;
}

/* `NAME[` (the name at `at`, the '[' read): a load, a store, a fragment or a tile. */
Buffer *tci_parse_expect_access(Parser *p, const char *what)
{
    const char *at = tci_parse_peek(p);
    size_t n = tci_parse_name_length(at);
    if (!n || at[n] != '[')
        tci_parse_fail_at(p, at, "expected %s, found %s", what, tci_parse_describe(p, at));
    Buffer *b = tci_parse_lookup(&p->buffers, at, n);
    if (!b)
        tci_parse_fail_at(p, at, "unknown buffer %s", tci_parse_describe(p, at));
    p->pos = at + n + 1;
    return b;
}

/* A new variable. The printer shows a nameless one as `_v<id>`: it reads back as that. */
Var *tci_parse_new_var(Parser *p, const char *name)
{
    Var *v = tci_parse_alloc(p, sizeof *v);
    char *end = NULL;
    long id = name[0] == '_' && name[1] == 'v' && tci_parse_is_digit(name[2])
                  ? strtol(name + 2, &end, 10)
                  : -1;
    bool nameless = id >= 0 && id < INT_MAX && !*end && (name[2] != '0' || !name[3]);
    v->name = nameless ? NULL : name;
    v->id = nameless ? (int)id : p->next_id++;
    if (v->id >= p->func->next_var_id)
        p->func->next_var_id = v->id + 1;
    return v;
}

bool tci_parse_type_named(const char *s, size_t n, tcc_dtype *type)
{
    for (int t = TCC_VOID; t <= TCC_FLOAT32; t++)
        if (tci_parse_word_is(s, n, tcc_dtype_name((tcc_dtype)t)))
            return *type = (tcc_dtype)t, true;
    return false;
}

tcc_dtype tci_parse_expect_type(Parser *p, const char *context)
{
    const char *at = tci_parse_peek(p);
    tcc_dtype type;
    if (!tci_parse_type_named(at, tci_parse_name_length(at), &type))
        tci_parse_fail_at(p, at, "expected a type such as 'float16' %s, found %s", context,
                          tci_parse_describe(p, at));
    p->pos += tci_parse_name_length(at);
    return type;
}

/* `[16, 14]`: the dimensions of a parameter or an allocation. */
void tci_parse_expect_shape(Parser *p, Buffer *b)
{
    tci_parse_expect(p, "[", "before the shape of '%.*s'", tci_parse_clip(strlen(b->name)),
                     b->name);
    /* The product of the sizes with each 0 taken as 1: the strides multiply every dimension
     * inside the outermost, so an empty buffer's may overflow even when its elements (0) do
     * not. */
    int64_t span = 1;
    while (!tci_parse_accept(p, "]")) {
        if (b->ndim && !tci_parse_accept(p, ","))
            tci_parse_fail_at(p, p->pos, "expected ']' after the shape of %s, found %s",
                              tci_parse_describe(p, b->name),
                              tci_parse_describe(p, tci_parse_peek(p)));
        if (b->ndim == TCI_MAX_DIMS)
            tci_parse_fail_at(p, p->pos, "%s has more than %d dimensions",
                              tci_parse_describe(p, b->name), TCI_MAX_DIMS);
        const char *at = tci_parse_peek(p);
        int64_t size = tci_parse_expect_count(p, "a dimension", 0, INT64_MAX);
        if (__builtin_mul_overflow(span, size ? size : 1, &span))
            tci_parse_fail_at(p, at, "%s has more than 2^63 elements",
                              tci_parse_describe(p, b->name));
        b->shape[b->ndim++] = size;
    }
    tci_buffer_set_dense(b);
}
