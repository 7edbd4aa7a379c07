/*
 * The parser of the loop IR: reads back what print.c writes. This file holds statements,
 * tensor-core statements and the kernel; parse_expr.c expressions; parse_tokens.c tokens,
 * names and errors.
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
#include "ir/parse.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- statements ----------------------------------------------------------------------- */

static Stmt *parse_stmt(Parser *p);

static Stmt *new_stmt(Parser *p, StmtKind kind)
{
    Stmt *s = tci_parse_alloc(p, sizeof *s);
    s->kind = kind;
    return s;
}

/* `{`, statements, `}`: the statement alone, or a sequence (of none when empty, as the
 * compiler's own constructors make it: passes take an empty sequence, not a NULL body). */
static Stmt *parse_body(Parser *p, const char *context)
{
    const char *open = tci_parse_peek(p);
    tci_parse_expect(p, "{", "%s", context);
    tci_parse_enter(p);
    Stmt **items = NULL;
    int n = 0, cap = 0;
    while (!tci_parse_accept(p, "}")) {
        if (!*p->pos) {
            size_t line, column;
            tci_parse_line_column(p, open, &line, &column);
            tci_parse_fail_at(p, p->pos,
                              "expected '}' to close the '{' of %zu:%zu, found end of input", line,
                              column);
        }
        items = tci_parse_grow(p, items, n, &cap, sizeof *items);
        items[n++] = parse_stmt(p);
    }
    p->depth--;
    if (n == 1)
        return items[0];
    Stmt *s = new_stmt(p, STMT_SEQ);
    s->seq.count = n;
    s->seq.items = items;
    return s;
}

/* `min..end`, where the printer shows end = min + extent: folded when both are
 * constants, and `+ -5` as `- 5`. Reading `end` back gives the extent. */
static void parse_range(Parser *p, Expr **min, Expr **extent)
{
    Expr *m = *min = tci_parse_expr(p);
    tci_parse_expect(p, "..", "between the start and the end of the range");
    const char *at = tci_parse_peek(p);
    Expr *end = tci_parse_expr(p), *b = end->bin.b;
    int64_t difference;
    if (m->kind == EXPR_INT && m->int_value == 0)
        *extent = end;
    else if (m->kind == EXPR_INT && end->kind == EXPR_INT &&
             !__builtin_sub_overflow(end->int_value, m->int_value, &difference))
        *extent = tci_parse_new_int(p, difference, TCC_INT32);
    else if (end->kind == EXPR_ADD && tci_expr_equal(end->bin.a, m))
        *extent = b;
    else if (end->kind == EXPR_SUB && b->kind == EXPR_INT && b->type == TCC_INT32 &&
             b->int_value > 0 && tci_expr_equal(end->bin.a, m))
        *extent = tci_parse_new_int(p, -b->int_value, TCC_INT32);
    else
        tci_parse_fail_at(p, at,
                          "expected the end of the range as 'START + extent', START being what "
                          "precedes '..', found %s",
                          tci_parse_describe(p, at));
}

/* The range and body of a loop whose variable is `var`, bound in the body only. */
static Stmt *parse_loop(Parser *p, Stmt *s, Var *var, const char *name)
{
    const char *at = tci_parse_peek(p);
    parse_range(p, &s->loop.min, &s->loop.extent);
    /* Loop counters are int32: passes multiply a constant extent by others (unroll). */
    const Expr *extent = s->loop.extent;
    if (extent->kind == EXPR_INT &&
        (extent->int_value > INT32_MAX || extent->int_value < INT32_MIN))
        tci_parse_fail_at(p, at, "the loop's extent %lld does not fit its int32 counter",
                          (long long)extent->int_value);
    if (tci_parse_accept(p, "stages")) {
        tci_parse_expect(p, "(", "after 'stages'");
        s->loop.stages = (int)tci_parse_expect_count(p, "the pipeline's stages", 2, 8);
        tci_parse_expect(p, ")", "after the pipeline's stages");
    }
    s->loop.pipelined = tci_parse_accept(p, "pipelined");
    if (tci_parse_accept(p, "in_flight")) {
        tci_parse_expect(p, "(", "after 'in_flight'");
        s->loop.in_flight = (int)tci_parse_expect_count(p, "the iterations in flight", 1, 6);
        tci_parse_expect(p, ")", "after the iterations in flight");
    }
    s->loop.warp_specialized = tci_parse_accept(p, "warp_specialized");
    s->loop.producer = tci_parse_accept(p, "producer");
    if (tci_parse_accept(p, "persistent")) {
        tci_parse_expect(p, "(", "after 'persistent'");
        s->loop.persistent = tci_parse_expect_count(p, "the persistent blocks", 1, INT32_MAX);
        tci_parse_expect(p, ")", "after the persistent blocks");
    }
    if (tci_parse_accept(p, "turns")) {
        tci_parse_expect(p, "(", "after 'turns'");
        s->loop.turns = (int)tci_parse_expect_count(p, "the consumers taking turns", 2,
                                                    TCC_MAX_PINGPONG_CONSUMERS);
        tci_parse_expect(p, ")", "after the consumers taking turns");
    }
    if (tci_parse_accept(p, "tile_steps")) {
        tci_parse_expect(p, "(", "after 'tile_steps'");
        s->loop.tile_steps = tci_parse_expect_count(p, "a tile's iterations", 1, INT32_MAX);
        tci_parse_expect(p, ")", "after a tile's iterations");
    }
    while (tci_parse_accept(p, "pragma")) {
        tci_parse_expect(p, "(", "after 'pragma'");
        const char *at_name = tci_parse_peek(p);
        size_t n = tci_parse_name_length(at_name);
        PragmaKind kind = tci_pragma_kind(at_name, n);
        if (!kind)
            tci_parse_fail_at(p, at_name,
                              "expected a pragma (auto_unroll_max_step, unroll_explicit), found %s",
                              tci_parse_describe(p, at_name));
        p->pos = at_name + n;
        tci_parse_expect(p, "=", "after the pragma's name");
        if (kind == PRAGMA_AUTO_UNROLL_MAX_STEP)
            s->loop.auto_unroll_max_step =
                tci_parse_expect_count(p, "the pragma's steps", 0, INT32_MAX);
        else
            s->loop.unroll_explicit = tci_parse_expect_count(p, "0 or 1", 0, 1) == 1;
        s->loop.pragmas |= (unsigned)kind;
        tci_parse_expect(p, ")", "after the pragma's value");
    }
    s->loop.llvm_unroll = tci_parse_accept(p, "llvm_unroll");
    s->loop.var = var ? var : tci_parse_new_var(p, name);
    int depth = p->vars.count;
    tci_parse_bind(p, &p->vars, name, s->loop.var);
    s->loop.body = parse_body(p, "after the range of the loop");
    p->vars.count = depth;
    return s;
}

/* `[unrolled |vectorized ]for v in min..end {` */
static Stmt *parse_for(Parser *p, ForKind kind)
{
    Stmt *s = new_stmt(p, STMT_FOR);
    s->loop.kind = kind;
    const char *name = tci_parse_expect_name(p, "a loop variable");
    tci_parse_expect(p, "in", "after the loop variable '%.*s'", tci_parse_clip(strlen(name)), name);
    return parse_loop(p, s, NULL, name);
}

/* `launch threadIdx.x in 0..32 {` uses the kernel's one variable of that index, as
 * lowering does; `launch v = threadIdx.x in ...` binds a variable of its own. */
static Stmt *parse_launch(Parser *p)
{
    Stmt *s = new_stmt(p, STMT_FOR);
    s->loop.kind = FOR_THREAD;
    const char *name_at = tci_parse_peek(p);
    const char *name = tci_parse_expect_name(p, "a thread index such as 'threadIdx.x'");
    bool renamed = tci_parse_accept(p, "=");
    const char *at = renamed ? tci_parse_peek(p) : name_at;
    size_t n = tci_parse_name_length(at);
    int tag = TCC_BLOCK_X;
    while (tag <= TCC_VTHREAD &&
           !tci_parse_word_is(at, n, tci_thread_tag_name((tcc_thread_tag)tag)))
        tag++;
    if (tag > TCC_VTHREAD)
        tci_parse_fail_at(p, at, "expected a thread index such as 'threadIdx.x', found %s",
                          tci_parse_describe(p, at));
    p->pos = at + n;
    s->loop.tag = (tcc_thread_tag)tag;
    tci_parse_expect(p, "in", "after the thread index");
    /* A virtual thread is no launch dimension: each loop has a variable of its own. */
    if (tag == TCC_VTHREAD)
        return parse_loop(p, s, NULL, name);
    Var **shared = &p->func->thread_var[tag], *var = NULL;
    if (!renamed && *shared && (*shared)->name && strcmp((*shared)->name, name) == 0)
        var = *shared;
    else if (!*shared)
        var = *shared = tci_parse_new_var(p, name);
    return parse_loop(p, s, var, name);
}

static Stmt *parse_if(Parser *p)
{
    Stmt *s = new_stmt(p, STMT_IF);
    tci_parse_expect(p, "(", "before the condition of 'if'");
    s->branch.cond = tci_parse_expr(p);
    tci_parse_expect(p, ")", "after the condition of 'if'");
    s->branch.then_body = parse_body(p, "after the condition of 'if'");
    const char *at = tci_parse_peek(p);
    if (tci_parse_word_is(at, tci_parse_name_length(at), "else") &&
        at[4] != '[') { /* `else[0] = ` is a store */
        p->pos += 4;
        s->branch.else_body = parse_body(p, "after 'else'");
        if (!s->branch.else_body) /* `else {}` prints only for a body that is not NULL */
            s->branch.else_body = new_stmt(p, STMT_SEQ);
    }
    return s;
}

/* `strides [2560, 40, 1]`: a padded buffer's strides, each dimension at least as far apart
 * as the next one spans. */
/* `swizzled`, or `swizzled blocks N` (column blocks of N elements, 128 bytes), after which
 * the buffer is laid out so; `ring R` after the blocks marks an output tile for store_ring. */
static void parse_swizzle(Parser *p, Buffer *b, const char *at)
{
    bool shared = b->scope == TCC_SCOPE_SHARED;
    if (tci_parse_accept(p, "blocks")) {
        int64_t block = tci_parse_expect_count(p, "the columns of a block", 1, 1024);
        if (!shared || block * (int64_t)tcc_dtype_size(b->type) != TCI_SWIZZLE_BLOCK_BYTES ||
            !tci_buffer_swizzle_blocks(b))
            tci_parse_fail_at(p, at,
                              "%s cannot lie in swizzled blocks of %lld columns: only shared "
                              "tiles of 128-byte blocks, rows a multiple of 8, dense, can",
                              tci_parse_describe(p, b->name), (long long)block);
        if (tci_parse_accept(p, "ring"))
            b->swizzle.ring =
                (int)tci_parse_expect_count(p, "the ring's blocks", 1, TCI_STORE_RING_BLOCKS);
        return;
    }
    if (!shared || !tci_buffer_swizzle(b))
        tci_parse_fail_at(p, at,
                          "%s cannot be swizzled: only shared rows of a power of two of at "
                          "least 32 bytes, dense, can",
                          tci_parse_describe(p, b->name));
}

static void parse_strides(Parser *p, Buffer *b)
{
    Buffer strides = {.name = b->name};
    const char *at = tci_parse_peek(p);
    tci_parse_expect_shape(p, &strides);
    if (strides.ndim != b->ndim)
        tci_parse_fail_at(p, at, "expected %d strides for %s, found %d", b->ndim,
                          tci_parse_describe(p, b->name), strides.ndim);
    for (int d = b->ndim - 1; d >= 0; d--) {
        int64_t least = d == b->ndim - 1 ? 1 : strides.shape[d + 1] * b->shape[d + 1];
        if (strides.shape[d] < least)
            tci_parse_fail_at(p, at, "stride %d of %s is %lld, less than the %lld it must span", d,
                              tci_parse_describe(p, b->name), (long long)strides.shape[d],
                              (long long)least);
        b->strides[d] = strides.shape[d];
    }
    b->elements = b->ndim ? b->shape[0] * b->strides[0] : 1;
}

/* `allocate NAME: float16 shared [8, 16] min [r, 0] {` */
static Stmt *parse_allocate(Parser *p)
{
    Buffer *b = tci_parse_alloc(p, sizeof *b);
    b->name = tci_parse_expect_name(p, "the name of the allocation");
    b->param_index = -1;
    tci_parse_expect(p, ":", "after the name of the allocation '%.*s'",
                     tci_parse_clip(strlen(b->name)), b->name);
    b->type = tci_parse_expect_type(p, "for the allocation");
    const char *at = tci_parse_peek(p);
    size_t n = tci_parse_name_length(at);
    int scope = TCC_SCOPE_GLOBAL;
    while (scope <= TCC_SCOPE_WMMA_ACCUMULATOR &&
           !tci_parse_word_is(at, n, tci_scope_name((tcc_scope)scope)))
        scope++;
    if (scope > TCC_SCOPE_WMMA_ACCUMULATOR)
        tci_parse_fail_at(p, at, "expected a memory scope such as 'shared' for %s, found %s",
                          tci_parse_describe(p, b->name), tci_parse_describe(p, at));
    b->scope = (tcc_scope)scope;
    p->pos = at + n;
    tci_parse_expect_shape(p, b);
    b->shared_offset = -1;
    if (tci_parse_accept(p, "strides"))
        parse_strides(p, b);
    at = p->pos;
    if (tci_parse_accept(p, "swizzled"))
        parse_swizzle(p, b, at);
    if (tci_parse_accept(p, "offset")) {
        if (b->scope != TCC_SCOPE_SHARED)
            tci_parse_fail_at(p, p->pos, "only a shared buffer has an offset, not %s",
                              tci_parse_describe(p, b->name));
        b->shared_offset = tci_parse_expect_count(p, "a byte offset", 0, INT32_MAX);
    }
    if (tci_parse_accept(p, "min")) {
        tci_parse_expect(p, "[", "after 'min'");
        at = p->pos;
        int count;
        Expr **min = tci_parse_indices(p, b->name, &count);
        if (count != b->ndim)
            tci_parse_fail_at(p, at, "expected %d region starts for %s, found %d", b->ndim,
                              tci_parse_describe(p, b->name), count);
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
    tci_parse_bind(p, &p->buffers, b->name, b);
    s->alloc.body = parse_body(p, "after the allocation");
    p->buffers.count = depth;
    return s;
}

static Stmt *parse_store(Parser *p)
{
    const char *name = tci_parse_peek(p);
    Stmt *s = new_stmt(p, STMT_STORE);
    s->store.buffer = tci_parse_expect_access(p, "a store");
    s->store.index = tci_parse_indices(p, name, &s->store.nindex);
    const char *at = tci_parse_peek(p);
    if (at[0] != '=' || at[1] == '=')
        tci_parse_fail_at(p, at, "expected '=' after the indices of %s, found %s",
                          tci_parse_describe(p, name), tci_parse_describe(p, at));
    p->pos++;
    s->store.value = tci_parse_expr(p);
    return s;
}

/* `wgmma.fence()`, `wgmma.wait_group(1)` ... */
static Stmt *parse_wgmma_sync(Parser *p, WgmmaSync op)
{
    const char *name = tci_wgmma_sync_name(op);
    Stmt *s = new_stmt(p, STMT_WGMMA_SYNC);
    s->wgmma_sync.op = op;
    tci_parse_expect(p, "(", "after '%s'", name);
    if (op == WGMMA_WAIT)
        s->wgmma_sync.pending = (int)tci_parse_expect_count(p, "the groups left pending", 0, 8);
    tci_parse_expect(p, ")", "after '%s('", name);
    return s;
}

/* ---- wmma ----------------------------------------------------------------------------- */

/* `F[index]`: one fragment of a fragment buffer. */
static void parse_fragment(Parser *p, Buffer **buffer, Expr **index)
{
    const char *name = tci_parse_peek(p);
    *buffer = tci_parse_expect_access(p, "a fragment such as 'F[0]'");
    *index = tci_parse_expr(p);
    tci_parse_expect(p, "]", "after the fragment index of '%.*s'",
                     tci_parse_clip(tci_parse_name_length(name)), name);
}

/* `&M[i, j]`: the first element of a tile in memory. */
static void parse_tile(Parser *p, WmmaStmt *w)
{
    tci_parse_expect(p, "&", "before the memory tile");
    const char *name = tci_parse_peek(p);
    w->memory = tci_parse_expect_access(p, "a memory tile such as '&A[0, 0]'");
    w->memory_index = tci_parse_indices(p, name, &w->nindex);
}

/* `, stride 16, row_major)` */
static void parse_layout(Parser *p, WmmaStmt *w)
{
    tci_parse_expect(p, ",", "before the stride");
    tci_parse_expect(p, "stride", "after the memory tile and the fragment");
    w->stride = tci_parse_expect_int(p, "the stride");
    tci_parse_expect(p, ",", "after the stride");
    w->col_major = tci_parse_accept(p, "col_major");
    if (!w->col_major)
        tci_parse_expect(p, "row_major", "or 'col_major' after the stride");
    tci_parse_expect(p, ")", "after the layout");
}

/* The fill value, printed by put_number: no suffix; `inf`, `-inf` or `nan` when not
 * finite. */
static double parse_fill_value(Parser *p)
{
    const char *start = tci_parse_peek(p), *s = start + (*start == '-');
    size_t n = tci_parse_number_length(s);
    if (!n && (strncmp(s, "inf", 3) == 0 || strncmp(s, "nan", 3) == 0) &&
        !tci_parse_is_name_char(s[3]))
        n = 3;
    if (!n)
        tci_parse_fail_at(p, start, "expected the fill value, found %s",
                          tci_parse_describe(p, start));
    p->pos = s + n;
    return tci_parse_read_double(p, start, s + n);
}

/* `    // m16n16k16` ends the line of every wmma statement: read character by character,
 * as peek would skip it for a comment. */
static void parse_mma_shape(Parser *p, WmmaStmt *w)
{
    const char *s = p->pos + strspn(p->pos, " \t");
    if (strncmp(s, "//", 2) != 0)
        tci_parse_fail_at(p, s,
                          "expected the MMA shape '// mMnNkK' after the wmma statement, found %s",
                          tci_parse_describe(p, s));
    s += 2 + strspn(s + 2, " \t");
    int *sizes[3] = {&w->m, &w->n, &w->k};
    for (int i = 0; i < 3; i++) {
        if (*s != "mnk"[i] || !tci_parse_is_digit(s[1]))
            tci_parse_fail_at(p, s, "expected the MMA shape as '// m16n16k16', found %s",
                              tci_parse_describe(p, s));
        for (s++; tci_parse_is_digit(*s); s++)
            if ((*sizes[i] = *sizes[i] * 10 + (*s - '0')) > MAX_MMA_SIZE)
                tci_parse_fail_at(p, s, "the MMA shape is larger than %d", MAX_MMA_SIZE);
    }
    s += strspn(s, " \t");
    if (*s && *s != '\n' && *s != '\r')
        tci_parse_fail_at(p, s, "expected the end of the line after the MMA shape, found %s",
                          tci_parse_describe(p, s));
    p->pos = s;
}

static Stmt *parse_wmma(Parser *p, TensorFamily family, WmmaOp op, const char *name)
{
    Stmt *s = new_stmt(p, STMT_WMMA);
    WmmaStmt *w = &s->wmma;
    w->op = op;
    w->family = family;
    tci_parse_expect(p, "(", "after '%s'", name);
    if (op == WMMA_STORE) {
        parse_tile(p, w);
        tci_parse_expect(p, ",", "after the memory tile");
    }
    parse_fragment(p, &w->fragment, &w->fragment_index);
    if (op == WMMA_FILL) {
        tci_parse_expect(p, ",", "before the fill value");
        w->fill_value = parse_fill_value(p);
        tci_parse_expect(p, ")", "after the fill value");
    } else if (op == WMMA_MMA) {
        Buffer **operand[3] = {&w->a, &w->b, &w->c};
        Expr **index[3] = {&w->a_index, &w->b_index, &w->c_index};
        for (int i = 0; i < 3; i++) {
            tci_parse_expect(p, ",", "between the fragments of '%s'", name);
            parse_fragment(p, operand[i], index[i]);
        }
        if (family == TENSOR_WGMMA && tci_parse_accept(p, ",")) {
            tci_parse_expect(p, "scale_d", "after the fragments of '%s'", name);
            tci_parse_expect(p, "(", "after 'scale_d'");
            w->accumulate = tci_parse_expr(p);
            tci_parse_expect(p, ")", "after the condition of 'scale_d'");
        }
        tci_parse_expect(p, ")", "after the fragments of '%s'", name);
    } else {
        if (op != WMMA_STORE) {
            tci_parse_expect(p, ",", "after the fragment");
            parse_tile(p, w);
        }
        parse_layout(p, w);
    }
    parse_mma_shape(p, w);
    return s;
}

/* `&A.shared[i]`: one flat index. */
void tci_parse_address(Parser *p, const char *what, Buffer **buffer, Expr **index)
{
    tci_parse_expect(p, "&", "before %s", what);
    tci_parse_element(p, what, buffer, index);
}

void tci_parse_element(Parser *p, const char *what, Buffer **buffer, Expr **index)
{
    const char *name = tci_parse_peek(p);
    *buffer = tci_parse_expect_access(p, what);
    const char *at = tci_parse_peek(p);
    int count;
    Expr **indices = tci_parse_indices(p, name, &count);
    if (count != 1)
        tci_parse_fail_at(p, at, "expected one (flat) index for %s, found %d", what, count);
    *index = indices[0];
}

/* `cp.async(&A.shared[i], &input[j], 16 bytes[, zero unless COND])` */
static Stmt *parse_copy_async(Parser *p)
{
    Stmt *s = new_stmt(p, STMT_COPY_ASYNC);
    tci_parse_expect(p, "(", "after 'cp.async'");
    tci_parse_address(p, "the shared destination", &s->copy.dst, &s->copy.dst_index);
    tci_parse_expect(p, ",", "after the destination");
    tci_parse_address(p, "the global source", &s->copy.src, &s->copy.src_index);
    tci_parse_expect(p, ",", "after the source");
    const char *at = tci_parse_peek(p);
    s->copy.bytes = (int)tci_parse_expect_count(p, "the bytes copied", 4, 16);
    if (s->copy.bytes != 4 && s->copy.bytes != 8 && s->copy.bytes != 16)
        tci_parse_fail_at(p, at, "cp.async copies 4, 8 or 16 bytes, not %d", s->copy.bytes);
    tci_parse_expect(p, "bytes", "after the size of the copy");
    if (tci_parse_accept(p, ",")) {
        tci_parse_expect(p, "zero", "after ', '");
        tci_parse_expect(p, "unless", "after 'zero'");
        s->copy.predicate = tci_parse_expr(p);
    }
    tci_parse_expect(p, ")", "after the copy");
    return s;
}

/* A statement starts with a keyword, or is a store: a name right before '[' (so a
 * buffer may be called `for`). */
static Stmt *parse_stmt(Parser *p)
{
    const char *at = tci_parse_peek(p);
    size_t n = tci_parse_name_length(at);
    if (n && at[n] == '[')
        return parse_store(p);
    p->pos += n;
    if (tci_parse_word_is(at, n, "for"))
        return parse_for(p, FOR_SERIAL);
    if (tci_parse_word_is(at, n, "unrolled") || tci_parse_word_is(at, n, "vectorized")) {
        tci_parse_expect(p, "for", "after '%.*s'", (int)n, at);
        return parse_for(p, *at == 'u' ? FOR_UNROLLED : FOR_VECTORIZED);
    }
    if (tci_parse_word_is(at, n, "launch"))
        return parse_launch(p);
    if (tci_parse_word_is(at, n, "if"))
        return parse_if(p);
    if (tci_parse_word_is(at, n, "allocate"))
        return parse_allocate(p);
    if (tci_parse_word_is(at, n, "__syncthreads")) {
        tci_parse_expect(p, "(", "after '__syncthreads'");
        tci_parse_expect(p, ")", "after '__syncthreads('");
        return new_stmt(p, STMT_BARRIER);
    }
    if (tci_parse_word_is(at, n, "cluster_sync")) {
        tci_parse_expect(p, "(", "after 'cluster_sync'");
        tci_parse_expect(p, ")", "after 'cluster_sync('");
        return tci_stmt_cluster_barrier(p->arena);
    }
    if (tci_parse_word_is(at, n, "barrier.sync") || tci_parse_word_is(at, n, "barrier.arrive"))
        return tci_parse_named_barrier(p, at[n - 1] == 'e');
    if (tci_parse_word_is(at, n, "setmaxnreg.inc") || tci_parse_word_is(at, n, "setmaxnreg.dec"))
        return tci_parse_setmaxnreg(p, at[n - 3] == 'i');
    if (tci_parse_word_is(at, n, "cp.async"))
        return parse_copy_async(p);
    if (tci_parse_word_is(at, n, "cp.async.commit_group")) {
        tci_parse_expect(p, "(", "after 'cp.async.commit_group'");
        tci_parse_expect(p, ")", "after 'cp.async.commit_group('");
        return new_stmt(p, STMT_ASYNC_COMMIT);
    }
    if (tci_parse_word_is(at, n, "cp.async.wait_group")) {
        Stmt *s = new_stmt(p, STMT_ASYNC_WAIT);
        tci_parse_expect(p, "(", "after 'cp.async.wait_group'");
        s->wait.pending = (int)tci_parse_expect_count(p, "the groups left pending", 0, 8);
        tci_parse_expect(p, ")", "after the groups left pending");
        return s;
    }
    if (tci_parse_word_is(at, n, "bulk_copy"))
        return tci_parse_bulk_copy(p);
    if (tci_parse_word_is(at, n, "bulk_store"))
        return tci_parse_bulk_store(p);
    if (tci_parse_word_is(at, n, "bulk_wait_read"))
        return tci_parse_bulk_wait(p);
    for (int op = MBARRIER_INIT; op <= MBARRIER_ARRIVE; op++)
        if (tci_parse_word_is(at, n, tci_mbarrier_op_name((MbarrierOp)op)))
            return tci_parse_mbarrier(p, (MbarrierOp)op);
    for (int op = WGMMA_FENCE; op <= WGMMA_PROXY_FENCE; op++)
        if (tci_parse_word_is(at, n, tci_wgmma_sync_name((WgmmaSync)op)))
            return parse_wgmma_sync(p, (WgmmaSync)op);
    for (int family = TENSOR_WMMA; family <= TENSOR_WGMMA; family++)
        for (int op = WMMA_FILL; op <= WMMA_STORE; op++) {
            const char *name = tci_wmma_op_name((TensorFamily)family, (WmmaOp)op);
            if (name && tci_parse_word_is(at, n, name))
                return parse_wmma(p, (TensorFamily)family, (WmmaOp)op, name);
        }
    tci_parse_fail_at(p, at, "expected a statement, found %s", tci_parse_describe(p, at));
}

/* ---- kernels -------------------------------------------------------------------------- */

/* `float16 A[16, 14]`: a global buffer, its position the launch argument's. */
static Buffer *parse_param(Parser *p, int index)
{
    Buffer *b = tci_parse_alloc(p, sizeof *b);
    b->type = tci_parse_expect_type(p, "for a parameter");
    b->scope = TCC_SCOPE_GLOBAL;
    b->param_index = index;
    b->shared_offset = -1;
    b->name = tci_parse_expect_name(p, "the name of a parameter");
    tci_parse_expect_shape(p, b);
    tci_parse_bind(p, &p->buffers, b->name, b);
    return b;
}

static void parse_launch_shape(Parser *p, const char *word, int64_t *sizes)
{
    tci_parse_expect(p, word, "after the %s", *word == 'g' ? "parameters" : "grid");
    tci_parse_expect(p, "(", "after '%s'", word);
    for (int d = 0; d < 3; d++) {
        if (d)
            tci_parse_expect(p, ",", "between the sizes of '%s'", word);
        /* A launch of no blocks or threads is none: passes divide by these sizes. */
        sizes[d] = tci_parse_expect_count(p, "a size", 1, INT32_MAX);
    }
    tci_parse_expect(p, ")", "after the sizes of '%s'", word);
}

static PrimFunc *parse_kernel(Parser *p)
{
    PrimFunc *k = p->func = tci_parse_alloc(p, sizeof *k);
    k->arena = p->arena;
    tci_parse_expect(p, "kernel", "at the start");
    k->name = tci_parse_expect_name(p, "the kernel's name");
    tci_parse_expect(p, "(", "after the kernel's name");
    int cap = 0;
    while (!tci_parse_accept(p, ")")) {
        if (k->nparam && !tci_parse_accept(p, ","))
            tci_parse_fail_at(p, p->pos, "expected ')' after the parameters, found %s",
                              tci_parse_describe(p, tci_parse_peek(p)));
        k->params = tci_parse_grow(p, k->params, k->nparam, &cap, sizeof *k->params);
        k->params[k->nparam] = parse_param(p, k->nparam);
        k->nparam++;
    }
    if (!k->params)
        k->params = tci_parse_alloc(p, sizeof *k->params);
    parse_launch_shape(p, "grid", k->launch);
    if (tci_parse_word_is(tci_parse_peek(p), tci_parse_name_length(tci_parse_peek(p)), "cluster"))
        parse_launch_shape(p, "cluster", k->cluster);
    parse_launch_shape(p, "block", k->launch + 3);
    if (tci_parse_accept(p, "shared")) {
        tci_parse_expect(p, "(", "after 'shared'");
        k->shared_bytes = tci_parse_expect_count(p, "the bytes of shared memory", 1, INT32_MAX);
        tci_parse_expect(p, ")", "after the bytes of shared memory");
    }
    tci_parse_tensor_maps(p);
    k->body = parse_body(p, "before the kernel's body");
    if (*tci_parse_peek(p))
        tci_parse_fail_at(p, p->pos,
                          "expected the end of the input after the kernel's '}', found %s",
                          tci_parse_describe(p, tci_parse_peek(p)));
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
