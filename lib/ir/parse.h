/*
 * What the three files of the loop-IR parser share (parse.c, parse_expr.c,
 * parse_tokens.c): its state, and the token, name and error helpers. Errors and running out
 * of memory unwind with longjmp to tci_parse_prim_func.
 */
#ifndef TCI_IR_PARSE_H
#define TCI_IR_PARSE_H

#include "ir/ir.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    PrimFunc *func;
    Scope vars, buffers;
    int depth;
    int next_id; /* of named variables; nameless ones (`_v7`) keep their number */
} Parser;

/* ---- tokens and errors (parse_tokens.c) ------------------------------------------------ */

bool tci_parse_is_digit(char c);
bool tci_parse_is_name_char(char c);
/* Names carry dots (`Conv.wmma.accumulator`), but a dot ends the name unless a name
 * character follows, so `n..n + 8` is a name, "..", a name. */
size_t tci_parse_name_length(const char *s);
/* The digits of a %g number, without its sign: `12`, `0.5`, `1e-05`, `1.5e+10`. */
size_t tci_parse_number_length(const char *s);
bool tci_parse_word_is(const char *s, size_t n, const char *word);
/* The length of a name quoted in a message, as "'%.*s'". */
int tci_parse_clip(size_t n);
/* Arena memory (an allocation failure unwinds). */
void *tci_parse_alloc(Parser *p, size_t bytes);
/* The token at `at` (a name, a number or a symbol), quoted and clipped so that the
 * message stays one short line. */
const char *tci_parse_describe(Parser *p, const char *at);
void tci_parse_line_column(const Parser *p, const char *at, size_t *line, size_t *column);
/* Records "LINE:COL: message" for the position `at` and unwinds to tci_parse_prim_func. */
_Noreturn void tci_parse_fail_at(Parser *p, const char *at, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* One level deeper, failing past MAX_DEPTH; callers decrement p->depth on the way out. */
void tci_parse_enter(Parser *p);
/* The start of the next token, after blanks and comments. */
const char *tci_parse_peek(Parser *p);
/* Reads `token` if it comes next: a keyword (a whole name) or a symbol. */
bool tci_parse_accept(Parser *p, const char *token);
/* "expected 'TOKEN' CONTEXT, found ...", the context formatted only on failure. */
void tci_parse_expect(Parser *p, const char *token, const char *context, ...)
    __attribute__((format(printf, 3, 4)));
/* A name, copied into the arena. */
const char *tci_parse_expect_name(Parser *p, const char *what);
/* A decimal int64, with an optional '-' right before its digits. */
int64_t tci_parse_expect_int(Parser *p, const char *what);
/* An int in min..max. */
int64_t tci_parse_expect_count(Parser *p, const char *what, int64_t min, int64_t max);
bool tci_parse_type_named(const char *s, size_t n, tcc_dtype *type);
tcc_dtype tci_parse_expect_type(Parser *p, const char *context);
/* `[16, 14]`: the dimensions of a parameter or an allocation. */
void tci_parse_expect_shape(Parser *p, Buffer *b);

/* ---- names in scope (parse_tokens.c) -------------------------------------------------- */

void *tci_parse_grow(Parser *p, void *items, int count, int *cap, size_t size);
void tci_parse_bind(Parser *p, Scope *scope, const char *name, void *value);
void *tci_parse_lookup(const Scope *scope, const char *name, size_t n);
/* `NAME[` (the name at the next token, the '[' read): a load, a store, a fragment or a
 * tile. */
Buffer *tci_parse_expect_access(Parser *p, const char *what);
/* A new variable. The printer shows a nameless one as `_v<id>`: it reads back as that. */
Var *tci_parse_new_var(Parser *p, const char *name);

/* ---- expressions (parse_expr.c) -------------------------------------------------------- */

Expr *tci_parse_expr(Parser *p);
/* The indices after `NAME[`, to the ']'. */
Expr **tci_parse_indices(Parser *p, const char *name, int *count);
Expr *tci_parse_new_int(Parser *p, int64_t value, tcc_dtype type);
/* strtod on a copy of [start, end): on the input it could read on (`0x1p3`). */
double tci_parse_read_double(Parser *p, const char *start, const char *end);

/* ---- statements (parse.c) ---------------------------------------------------------------- */

/* `&A.shared[i]`: one flat index. */
void tci_parse_address(Parser *p, const char *what, Buffer **buffer, Expr **index);
/* `A.shared[i]`: the same without the '&'. */
void tci_parse_element(Parser *p, const char *what, Buffer **buffer, Expr **index);

/* ---- bulk copies (parse_bulk.c) -------------------------------------------------------- */

/* The `tensor_mapN: ...` lines after the launch shape, added to p->func. */
void tci_parse_tensor_maps(Parser *p);
/* After `bulk_copy` or an mbarrier operation's name. */
Stmt *tci_parse_bulk_copy(Parser *p);
Stmt *tci_parse_bulk_store(Parser *p);
Stmt *tci_parse_bulk_wait(Parser *p);
Stmt *tci_parse_mbarrier(Parser *p, MbarrierOp op);
/* After `barrier.sync`, `setmaxnreg.inc` or `setmaxnreg.dec`. */
Stmt *tci_parse_named_barrier(Parser *p, bool arrive);
Stmt *tci_parse_setmaxnreg(Parser *p, bool increase);

#endif
