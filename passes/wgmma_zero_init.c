/*
 * wgmma_zero_init: a fill of wgmma accumulators with zeros that the warpgroup's products
 * follow at once becomes those products' scale-d (WmmaStmt.accumulate): the first product on
 * each filled fragment starts from zero where the fill would have run, and adds where it
 * would not, so the fill goes.
 *
 *   if (k % 36 == 0) {                          wgmma.mma_async(C[0], A[..], B[..], C[0],
 *     wgmma.fill_fragment(C[0], 0)      ->                      scale_d(k % 36 != 0))
 *   }                                           wgmma.mma_async(C[0], A[..], B[..], C[0])
 *   wgmma.mma_async(C[0], A[..], B[..], C[0])   ...
 *   wgmma.mma_async(C[0], A[..], B[..], C[0])
 *
 * A persistent loop fills at each tile's first step: the fill is a register move an
 * accumulator (CS2R, 64 a warp for m64n256), all of them before the tile's first product can
 * issue, while the tensor cores wait (on an H100 the seed layer ran 0.1618 ms against 0.1622
 * with the fill, 8192^3 1.527 against 1.532). CUTLASS and cuDNN start a tile's products so.
 *
 * Only products that come right after the fill, in the same sequence, take it over, and only
 * where every filled fragment has one (the fill of a fragment that something else reads
 * first stays). Runs after unroll (the step's products are a sequence) and before wgmma_sync.
 */
#include "passes/passes.h"

enum { MAX_FILLS = 16 };

typedef struct Fills {
    const WmmaStmt *fill[MAX_FILLS];
    int count;
} Fills;

static bool is_zero_fill(const Stmt *s)
{
    return s->kind == STMT_WMMA && s->wmma.family == TENSOR_WGMMA && s->wmma.op == WMMA_FILL &&
           s->wmma.fill_value == 0.0;
}

/* The fills of `body` when it is nothing but wgmma fills of zeros (one, or a sequence). */
static bool zero_fills(Stmt *body, Fills *out)
{
    int count;
    Stmt *const *items = tci_stmt_items(&body, &count);
    if (count == 0 || count > MAX_FILLS)
        return false;
    for (int i = 0; i < count; i++) {
        if (!is_zero_fill(items[i]))
            return false;
        out->fill[i] = &items[i]->wmma;
    }
    out->count = count;
    return true;
}

/* The fill of `fills` that `product` reads and writes, or -1. */
static int filled_operand(const Fills *fills, const WmmaStmt *product)
{
    for (int f = 0; f < fills->count; f++) {
        const WmmaStmt *fill = fills->fill[f];
        if (product->c == fill->fragment && product->fragment == fill->fragment &&
            tci_expr_equal(product->c_index, fill->fragment_index) &&
            tci_expr_equal(product->fragment_index, fill->fragment_index))
            return f;
    }
    return -1;
}

/* Where item `at` fills accumulators (under `cond`, NULL: always) that the products after it
 * all start on: those products become scale-d products, their indices in `first`. */
static bool take_over(Arena *a, Stmt **items, int count, int at, const Fills *fills, Expr *cond)
{
    int first[MAX_FILLS];
    int found = 0;
    for (int f = 0; f < fills->count; f++)
        first[f] = -1;
    for (int i = at + 1; i < count && found < fills->count; i++) {
        const Stmt *s = items[i];
        if (s->kind != STMT_WMMA || !tci_wmma_operands_in_memory(&s->wmma))
            break;
        int f = filled_operand(fills, &s->wmma);
        if (f < 0 || s->wmma.accumulate)
            break;
        if (first[f] < 0) {
            first[f] = i;
            found++;
        }
    }
    if (found < fills->count)
        return false;
    Expr *accumulate = cond ? tci_ir_not(a, cond) : tci_ir_bool(a, false);
    for (int f = 0; f < fills->count; f++) {
        Stmt *product = tci_stmt_new(a, STMT_WMMA);
        product->wmma = items[first[f]]->wmma;
        product->wmma.accumulate = accumulate;
        items[first[f]] = product;
    }
    items[at] = tci_stmt_new(a, STMT_SEQ); /* the fill goes */
    return true;
}

static Stmt *zero_init(Rewriter *rw, Stmt *s)
{
    if (s->kind != STMT_SEQ)
        return NULL;
    Stmt *seq = tci_rewrite_stmt_children(rw, s);
    Stmt **items = tci_arena_alloc(rw->arena, sizeof(Stmt *) * (size_t)seq->seq.count);
    for (int i = 0; i < seq->seq.count; i++)
        items[i] = seq->seq.items[i];
    bool changed = false;
    for (int i = 0; i < seq->seq.count; i++) {
        Stmt *item = items[i];
        bool branch = item->kind == STMT_IF && !item->branch.else_body;
        Fills fills;
        if (!zero_fills(branch ? item->branch.then_body : item, &fills))
            continue;
        changed |= take_over(rw->arena, items, seq->seq.count, i, &fills,
                             branch ? item->branch.cond : NULL);
    }
    return changed ? tci_stmt_seq(rw->arena, seq->seq.count, items) : seq;
}

tcc_status tci_pass_wgmma_zero_init(const PassContext *pc, PrimFunc *func)
{
    (void)pc;
    Rewriter rw = {.arena = func->arena, .stmt = zero_init};
    func->body = tci_rewrite_stmt(&rw, func->body);
    return TCC_OK;
}
