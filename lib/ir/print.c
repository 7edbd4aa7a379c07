/*
 * The printer of the loop IR. Its text is what `tcc-conv --emit=loops` and `--print-after=PASS`
 * show and what the lit tests match with FileCheck, so it is line-oriented (one statement a
 * line, two spaces of indentation a level) and deterministic (nothing depends on addresses).
 * Expressions are infix with the fewest parentheses the precedence allows:
 *
 *   ||  <  &&  <  == != < <=  <  + -  <  * / %  <  !  <  atoms (calls, loads, names)
 *
 * Binary operators associate to the left, so a right operand of equal precedence keeps its
 * parentheses: the text shows the tree as it is. One cosmetic rewrite: `a + -5` as `a - 5`.
 */
#include "ir/ir.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(StrBuf *sb, const char *text)
{
    tci_strbuf_printf(sb, "%s", text);
}

static void put_indent(StrBuf *sb, int indent)
{
    tci_strbuf_printf(sb, "%*s", 2 * (indent > 0 ? indent : 0), "");
}

/* ---- names -------------------------------------------------------------------------- */

const char *tci_scope_name(tcc_scope scope)
{
    switch (scope) {
    case TCC_SCOPE_GLOBAL:
        return "global";
    case TCC_SCOPE_SHARED:
        return "shared";
    case TCC_SCOPE_LOCAL:
        return "local";
    case TCC_SCOPE_WMMA_MATRIX_A:
        return "wmma.matrix_a";
    case TCC_SCOPE_WMMA_MATRIX_B:
        return "wmma.matrix_b";
    case TCC_SCOPE_WMMA_ACCUMULATOR:
        return "wmma.accumulator";
    }
    return "unknown";
}

/* "float16", or "float16x8" for a vector of 8. */
static void put_type(StrBuf *sb, tcc_dtype type, int lanes)
{
    put(sb, tcc_dtype_name(type));
    if (lanes > 1)
        tci_strbuf_printf(sb, "x%d", lanes);
}

static void put_var(StrBuf *sb, const Var *var)
{
    if (!var)
        put(sb, "<null var>");
    else if (var->name)
        put(sb, var->name);
    else
        tci_strbuf_printf(sb, "_v%d", var->id); /* a nameless variable still prints */
}

static void put_buffer_name(StrBuf *sb, const Buffer *buffer)
{
    put(sb, buffer && buffer->name ? buffer->name : "<null buffer>");
}

/* The shortest %g text that reads back as the same value, so 0.1 prints as "0.1" and
 * not "0.10000000000000001", yet no two different constants print alike. */
static void put_number(StrBuf *sb, double value)
{
    char text[64];
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, value);
        if (strtod(text, NULL) == value)
            break;
    }
    put(sb, text);
}

static const char *float_suffix(tcc_dtype type)
{
    return type == TCC_FLOAT32 ? "f" : type == TCC_FLOAT16 ? "h" : type == TCC_BFLOAT16 ? "bf" : "";
}

static void put_float(StrBuf *sb, double value, tcc_dtype type)
{
    if (!isfinite(value)) {
        /* "inff" would be unreadable: spell non-finite values as a conversion. */
        put(sb, tcc_dtype_name(type));
        put(sb, isnan(value) ? "(nan)" : value > 0 ? "(inf)" : "(-inf)");
        return;
    }
    put_number(sb, value);
    put(sb, float_suffix(type));
}

/* ---- expressions -------------------------------------------------------------------- */

enum {
    PREC_OR = 1,
    PREC_AND,
    PREC_CMP,
    PREC_ADD,
    PREC_MUL,
    PREC_UNARY,
    PREC_ATOM,
};

static const char *binary_operator(ExprKind kind)
{
    switch (kind) {
    case EXPR_ADD:
        return "+";
    case EXPR_SUB:
        return "-";
    case EXPR_MUL:
        return "*";
    case EXPR_DIV:
        return "/";
    case EXPR_MOD:
        return "%";
    case EXPR_EQ:
        return "==";
    case EXPR_NE:
        return "!=";
    case EXPR_LT:
        return "<";
    case EXPR_LE:
        return "<=";
    case EXPR_AND:
        return "&&";
    case EXPR_OR:
        return "||";
    default:
        return NULL;
    }
}

static int precedence(const Expr *e)
{
    if (!e)
        return PREC_ATOM;
    switch (e->kind) {
    case EXPR_OR:
        return PREC_OR;
    case EXPR_AND:
        return PREC_AND;
    case EXPR_EQ:
    case EXPR_NE:
    case EXPR_LT:
    case EXPR_LE:
        return PREC_CMP;
    case EXPR_ADD:
    case EXPR_SUB:
        return PREC_ADD;
    case EXPR_MUL:
    case EXPR_DIV:
    case EXPR_MOD:
        return PREC_MUL;
    case EXPR_NOT:
        return PREC_UNARY;
    default:
        return PREC_ATOM;
    }
}

static void print_operand(StrBuf *sb, const Expr *e, bool parens)
{
    if (parens)
        put(sb, "(");
    tci_print_expr(sb, e);
    if (parens)
        put(sb, ")");
}

static void print_list(StrBuf *sb, int n, Expr *const *items)
{
    for (int i = 0; i < n; i++) {
        if (i)
            put(sb, ", ");
        tci_print_expr(sb, items ? items[i] : NULL);
    }
}

static void print_binary(StrBuf *sb, const Expr *e)
{
    int prec = precedence(e);
    const Expr *a = e->bin.a, *b = e->bin.b;
    /* Comparisons do not chain: `(a < b) == c` keeps its parentheses on the left too. */
    bool left_parens = prec == PREC_CMP ? precedence(a) <= prec : precedence(a) < prec;
    print_operand(sb, a, left_parens);
    if (e->kind == EXPR_ADD && b && b->kind == EXPR_INT && b->type == TCC_INT32 &&
        b->int_value < 0 && b->int_value != INT64_MIN) {
        tci_strbuf_printf(sb, " - %lld", -(long long)b->int_value);
        return;
    }
    tci_strbuf_printf(sb, " %s ", binary_operator(e->kind));
    print_operand(sb, b, precedence(b) <= prec);
}

static void print_call2(StrBuf *sb, const char *name, const Expr *a, const Expr *b)
{
    tci_strbuf_printf(sb, "%s(", name);
    tci_print_expr(sb, a);
    put(sb, ", ");
    tci_print_expr(sb, b);
    put(sb, ")");
}

static void print_scalar_leaf(StrBuf *sb, const Expr *e)
{
    switch (e->kind) {
    case EXPR_INT:
        if (e->type == TCC_BOOL)
            put(sb, e->int_value ? "true" : "false");
        else
            tci_strbuf_printf(sb, "%lld", (long long)e->int_value);
        break;
    case EXPR_FLOAT:
        put_float(sb, e->float_value, e->type);
        break;
    default:
        put_var(sb, e->var);
        break;
    }
}

/* Constants and variables; a vector of one value (lanes > 1) shows as broadcast(v, n). */
static void print_leaf(StrBuf *sb, const Expr *e)
{
    if (e->lanes > 1)
        put(sb, "broadcast(");
    print_scalar_leaf(sb, e);
    if (e->lanes > 1)
        tci_strbuf_printf(sb, ", %d)", e->lanes);
}

static void print_select(StrBuf *sb, const Expr *e)
{
    put(sb, "if_then_else(");
    tci_print_expr(sb, e->select.cond);
    put(sb, ", ");
    tci_print_expr(sb, e->select.then_value);
    put(sb, ", ");
    tci_print_expr(sb, e->select.else_value);
    put(sb, ")");
}

static void print_reduce(StrBuf *sb, const Expr *e)
{
    put(sb, "sum(");
    tci_print_expr(sb, e->reduce.source);
    put(sb, ", axis=[");
    for (int i = 0; i < e->reduce.naxis; i++) {
        if (i)
            put(sb, ", ");
        /* Compute definitions name their axes through te's public accessors. */
        const char *name = e->reduce.axis ? tcc_iter_var_name(e->reduce.axis[i]) : NULL;
        put(sb, name ? name : "<null var>");
    }
    put(sb, "])");
}

void tci_print_expr(StrBuf *sb, const Expr *e)
{
    if (!e) {
        put(sb, "<null>");
        return;
    }
    switch (e->kind) {
    case EXPR_INT:
    case EXPR_FLOAT:
    case EXPR_VAR:
        print_leaf(sb, e);
        return;
    case EXPR_MIN:
        print_call2(sb, "min", e->bin.a, e->bin.b);
        return;
    case EXPR_MAX:
        print_call2(sb, "max", e->bin.a, e->bin.b);
        return;
    case EXPR_XOR:
        print_call2(sb, "xor", e->bin.a, e->bin.b);
        return;
    case EXPR_NOT:
        put(sb, "!");
        print_operand(sb, e->bin.a, precedence(e->bin.a) < PREC_UNARY);
        return;
    case EXPR_SELECT:
        print_select(sb, e);
        return;
    case EXPR_CAST:
        put_type(sb, e->type, e->lanes);
        print_operand(sb, e->cast.value, true);
        return;
    case EXPR_LOAD:
        put_buffer_name(sb, e->load.buffer);
        put(sb, "[");
        print_list(sb, e->load.nindex, e->load.index);
        put(sb, "]");
        return;
    case EXPR_RAMP:
        put(sb, "ramp(");
        tci_print_expr(sb, e->ramp.base);
        tci_strbuf_printf(sb, ", %lld, %d)", (long long)e->ramp.stride, e->lanes);
        return;
    case EXPR_ACCESS:
        put(sb, e->access.tensor ? tcc_tensor_name(e->access.tensor) : "<null tensor>");
        put(sb, "(");
        print_list(sb, e->access.nindex, e->access.index);
        put(sb, ")");
        return;
    case EXPR_REDUCE:
        print_reduce(sb, e);
        return;
    default:
        if (binary_operator(e->kind))
            print_binary(sb, e);
        else
            tci_strbuf_printf(sb, "<unknown expr %d>", (int)e->kind);
        return;
    }
}

/* ---- statements --------------------------------------------------------------------- */

static void print_shape(StrBuf *sb, int ndim, const int64_t *shape)
{
    put(sb, "[");
    for (int i = 0; i < ndim; i++)
        tci_strbuf_printf(sb, "%s%lld", i ? ", " : "", (long long)shape[i]);
    put(sb, "]");
}

/* `min..end`, end = min + extent: folded when both are constants, as tci_ir_binary
 * would. The sum is built on the stack so that printing never allocates IR. */
static void print_range(StrBuf *sb, const Expr *min, const Expr *extent)
{
    bool min_int = min && min->kind == EXPR_INT;
    bool extent_int = extent && extent->kind == EXPR_INT;
    tci_print_expr(sb, min);
    put(sb, "..");
    if (min_int && min->int_value == 0) {
        tci_print_expr(sb, extent);
        return;
    }
    if (min_int && extent_int) {
        tci_strbuf_printf(sb, "%lld", (long long)(min->int_value + extent->int_value));
        return;
    }
    Expr end = {.kind = EXPR_ADD, .type = TCC_INT32, .lanes = 1};
    end.bin.a = (Expr *)min;
    end.bin.b = (Expr *)extent;
    tci_print_expr(sb, &end);
}

/* "{" ends the current line; the body follows one level deeper; "}" closes it. */
static void print_block(StrBuf *sb, const Stmt *body, int indent)
{
    put(sb, " {\n");
    tci_print_stmt(sb, body, indent + 1);
    put_indent(sb, indent);
    put(sb, "}");
}

static void print_for(StrBuf *sb, const Stmt *s, int indent)
{
    switch (s->loop.kind) {
    case FOR_THREAD:
        put(sb, "launch ");
        /* TVM names thread variables after their tag; then the name says it all. */
        if (!s->loop.var || !s->loop.var->name ||
            strcmp(s->loop.var->name, tci_thread_tag_name(s->loop.tag)) != 0) {
            put_var(sb, s->loop.var);
            put(sb, " = ");
        }
        put(sb, tci_thread_tag_name(s->loop.tag));
        break;
    case FOR_UNROLLED:
        put(sb, "unrolled for ");
        put_var(sb, s->loop.var);
        break;
    case FOR_VECTORIZED:
        put(sb, "vectorized for ");
        put_var(sb, s->loop.var);
        break;
    default:
        put(sb, "for ");
        put_var(sb, s->loop.var);
        break;
    }
    put(sb, " in ");
    print_range(sb, s->loop.min, s->loop.extent);
    if (s->loop.stages)
        tci_strbuf_printf(sb, " stages(%d)", s->loop.stages);
    if (s->loop.pipelined)
        put(sb, " pipelined");
    if (s->loop.in_flight)
        tci_strbuf_printf(sb, " in_flight(%d)", s->loop.in_flight);
    put(sb, s->loop.warp_specialized ? " warp_specialized" : "");
    put(sb, s->loop.producer ? " producer" : "");
    if (s->loop.persistent)
        tci_strbuf_printf(sb, " persistent(%lld)", (long long)s->loop.persistent);
    if (s->loop.turns)
        tci_strbuf_printf(sb, " turns(%d)", s->loop.turns);
    if (s->loop.tile_steps)
        tci_strbuf_printf(sb, " tile_steps(%lld)", (long long)s->loop.tile_steps);
    if (s->loop.pragmas & PRAGMA_AUTO_UNROLL_MAX_STEP)
        tci_strbuf_printf(sb, " pragma(auto_unroll_max_step=%lld)",
                          (long long)s->loop.auto_unroll_max_step);
    if (s->loop.pragmas & PRAGMA_UNROLL_EXPLICIT)
        tci_strbuf_printf(sb, " pragma(unroll_explicit=%d)", s->loop.unroll_explicit ? 1 : 0);
    put(sb, s->loop.llvm_unroll ? " llvm_unroll" : "");
    print_block(sb, s->loop.body, indent);
}

static void print_store(StrBuf *sb, const Stmt *s)
{
    put_buffer_name(sb, s->store.buffer);
    put(sb, "[");
    print_list(sb, s->store.nindex, s->store.index);
    put(sb, "] = ");
    tci_print_expr(sb, s->store.value);
}

static void print_if(StrBuf *sb, const Stmt *s, int indent)
{
    put(sb, "if (");
    tci_print_expr(sb, s->branch.cond);
    put(sb, ")");
    print_block(sb, s->branch.then_body, indent);
    if (s->branch.else_body) {
        put(sb, " else");
        print_block(sb, s->branch.else_body, indent);
    }
}

static void print_allocate(StrBuf *sb, const Stmt *s, int indent)
{
    const Buffer *b = s->alloc.buffer;
    put(sb, "allocate ");
    put_buffer_name(sb, b);
    if (b) {
        tci_strbuf_printf(sb, ": %s %s ", tcc_dtype_name(b->type), tci_scope_name(b->scope));
        print_shape(sb, b->ndim, b->shape);
        if (!tci_buffer_is_dense(b)) {
            put(sb, " strides ");
            print_shape(sb, b->ndim, b->strides);
        }
        if (b->swizzle.bits)
            put(sb, " swizzled");
        if (b->swizzle.block)
            tci_strbuf_printf(sb, " blocks %d", b->swizzle.block);
        if (b->swizzle.ring) /* store_ring's mark */
            tci_strbuf_printf(sb, " ring %d", b->swizzle.ring);
        if (b->shared_offset >= 0)
            tci_strbuf_printf(sb, " offset %lld", (long long)b->shared_offset);
        bool any_min = false;
        for (int i = 0; i < b->ndim; i++)
            any_min = any_min || b->min[i];
        if (any_min) {
            /* The realized region does not start at 0: show where each dimension does. */
            put(sb, " min [");
            for (int i = 0; i < b->ndim; i++) {
                if (i)
                    put(sb, ", ");
                if (b->min[i])
                    tci_print_expr(sb, b->min[i]);
                else
                    put(sb, "0");
            }
            put(sb, "]");
        }
    }
    print_block(sb, s->alloc.body, indent);
}

/* `&A.shared[i]`: the address of an element. */
static void print_fragment(StrBuf *sb, const Buffer *buffer, const Expr *index)
{
    put_buffer_name(sb, buffer);
    put(sb, "[");
    tci_print_expr(sb, index);
    put(sb, "]");
}

static void print_tile(StrBuf *sb, const WmmaStmt *w)
{
    put(sb, "&");
    put_buffer_name(sb, w->memory);
    put(sb, "[");
    print_list(sb, w->nindex, w->memory_index);
    put(sb, "]");
}

static void print_layout(StrBuf *sb, const WmmaStmt *w)
{
    tci_strbuf_printf(sb, ", stride %lld, %s)", (long long)w->stride,
                      w->col_major ? "col_major" : "row_major");
}

const char *tci_wmma_op_name(TensorFamily family, WmmaOp op)
{
    static const char *const wmma[] = {"wmma.fill_fragment", "wmma.load_matrix_a",
                                       "wmma.load_matrix_b", "wmma.mma_sync", "wmma.store_matrix"};
    static const char *const mma_sync[] = {"mma.fill_fragment", "ldmatrix.a", "ldmatrix.b",
                                           "mma.sync", "mma.store_matrix"};
    /* wgmma reads its operands from shared memory: it loads no fragments. */
    static const char *const wgmma[] = {"wgmma.fill_fragment", NULL, NULL, "wgmma.mma_async",
                                        "wgmma.store_matrix"};
    if ((int)op < WMMA_FILL || op > WMMA_STORE)
        return NULL;
    return family == TENSOR_WGMMA ? wgmma[op] : family == TENSOR_MMA_SYNC ? mma_sync[op] : wmma[op];
}

const char *tci_wgmma_sync_name(WgmmaSync op)
{
    static const char *const names[] = {"wgmma.fence", "wgmma.commit_group", "wgmma.wait_group",
                                        "fence.proxy.async"};
    return (int)op >= WGMMA_FENCE && op <= WGMMA_PROXY_FENCE ? names[op] : NULL;
}

static void put_op(StrBuf *sb, const WmmaStmt *w)
{
    put(sb, tci_wmma_op_name(w->family, w->op));
    put(sb, "(");
}

static void print_wmma(StrBuf *sb, const WmmaStmt *w)
{
    switch (w->op) {
    case WMMA_FILL:
        put_op(sb, w);
        print_fragment(sb, w->fragment, w->fragment_index);
        put(sb, ", ");
        put_number(sb, w->fill_value);
        put(sb, ")");
        break;
    case WMMA_LOAD_A:
    case WMMA_LOAD_B:
        put_op(sb, w);
        print_fragment(sb, w->fragment, w->fragment_index);
        put(sb, ", ");
        print_tile(sb, w);
        print_layout(sb, w);
        break;
    case WMMA_MMA:
        put_op(sb, w);
        print_fragment(sb, w->fragment, w->fragment_index);
        put(sb, ", ");
        print_fragment(sb, w->a, w->a_index);
        put(sb, ", ");
        print_fragment(sb, w->b, w->b_index);
        put(sb, ", ");
        print_fragment(sb, w->c, w->c_index);
        if (w->accumulate) { /* `scale_d(cond)`: c added where cond holds, else zero */
            put(sb, ", scale_d(");
            tci_print_expr(sb, w->accumulate);
            put(sb, ")");
        }
        put(sb, ")");
        break;
    case WMMA_STORE:
        put_op(sb, w);
        print_tile(sb, w);
        put(sb, ", ");
        print_fragment(sb, w->fragment, w->fragment_index);
        print_layout(sb, w);
        break;
    default:
        tci_strbuf_printf(sb, "wmma.<unknown op %d>()", (int)w->op);
        break;
    }
    /* Every op shows the fragment shape: the same buffer could serve two shapes. */
    tci_strbuf_printf(sb, "    // m%dn%dk%d", w->m, w->n, w->k);
}

void tci_print_stmt(StrBuf *sb, const Stmt *s, int indent)
{
    if (!s)
        return;
    if (s->kind == STMT_SEQ) {
        for (int i = 0; i < s->seq.count; i++)
            tci_print_stmt(sb, s->seq.items[i], indent);
        return;
    }
    put_indent(sb, indent);
    switch (s->kind) {
    case STMT_FOR:
        print_for(sb, s, indent);
        break;
    case STMT_STORE:
        print_store(sb, s);
        break;
    case STMT_IF:
        print_if(sb, s, indent);
        break;
    case STMT_ALLOCATE:
        print_allocate(sb, s, indent);
        break;
    case STMT_BARRIER:
        tci_print_barrier(sb, s);
        break;
    case STMT_SETMAXNREG:
        tci_print_setmaxnreg(sb, s);
        break;
    case STMT_WMMA:
        print_wmma(sb, &s->wmma);
        break;
    case STMT_COPY_ASYNC:
        tci_print_copy_async(sb, s);
        break;
    case STMT_BULK_COPY:
    case STMT_BULK_STORE:
    case STMT_BULK_WAIT:
        tci_print_bulk(sb, s);
        break;
    case STMT_MBARRIER:
        tci_print_mbarrier(sb, s);
        break;
    case STMT_ASYNC_COMMIT:
        put(sb, "cp.async.commit_group()");
        break;
    case STMT_ASYNC_WAIT:
        tci_strbuf_printf(sb, "cp.async.wait_group(%d)", s->wait.pending);
        break;
    case STMT_WGMMA_SYNC:
        put(sb, tci_wgmma_sync_name(s->wgmma_sync.op));
        if (s->wgmma_sync.op == WGMMA_WAIT)
            tci_strbuf_printf(sb, "(%d)", s->wgmma_sync.pending);
        else
            put(sb, "()");
        break;
    default:
        tci_strbuf_printf(sb, "<unknown stmt %d>", (int)s->kind);
        break;
    }
    put(sb, "\n");
}

/* ---- kernels ------------------------------------------------------------------------ */

static void print_param(StrBuf *sb, const Buffer *b)
{
    if (!b) {
        put(sb, "<null buffer>");
        return;
    }
    tci_strbuf_printf(sb, "%s ", tcc_dtype_name(b->type));
    put_buffer_name(sb, b);
    print_shape(sb, b->ndim, b->shape);
}

void tci_print_prim_func(StrBuf *sb, const PrimFunc *func)
{
    if (!func) {
        put(sb, "<null kernel>\n");
        return;
    }
    put(sb, "// \"/\" and \"%\" are floor division and modulo\n");
    tci_strbuf_printf(sb, "kernel %s(", func->name ? func->name : "<unnamed>");
    for (int i = 0; i < func->nparam; i++) {
        if (i)
            put(sb, ", ");
        print_param(sb, func->params ? func->params[i] : NULL);
    }
    const int64_t *l = func->launch;
    tci_strbuf_printf(sb, ")\n  grid(%lld, %lld, %lld)", (long long)l[0], (long long)l[1],
                      (long long)l[2]);
    if (tci_cluster_blocks(func) > 1)
        tci_strbuf_printf(sb, " cluster(%lld, %lld, %lld)", (long long)tci_cluster_dim(func, 0),
                          (long long)tci_cluster_dim(func, 1), (long long)tci_cluster_dim(func, 2));
    tci_strbuf_printf(sb, " block(%lld, %lld, %lld)", (long long)l[3], (long long)l[4],
                      (long long)l[5]);
    if (func->shared_bytes)
        tci_strbuf_printf(sb, " shared(%lld)", (long long)func->shared_bytes);
    put(sb, "\n");
    tci_print_tensor_maps(sb, func);
    put(sb, "{\n");
    tci_print_stmt(sb, func->body, 1);
    put(sb, "}\n");
}

char *tci_prim_func_text(const PrimFunc *func)
{
    StrBuf sb;
    tci_strbuf_init(&sb);
    tci_print_prim_func(&sb, func);
    if (sb.failed)
        tci_strbuf_free(&sb); /* leaves data NULL */
    return sb.data;
}
