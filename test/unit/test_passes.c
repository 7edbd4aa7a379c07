/*
 * The lowering passes, one at a time on hand-built loop IR (flatten, simplify, vectorize,
 * unroll, thread_sync), then the whole pipeline: the pass list, --print-after through the
 * callback, and the tutorial's convolution end to end.
 */
#include "driver/driver.h"
#include "ir_support.h"

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static Var *vi, *vj, *vr, *tx;
static Expr *i, *j, *r, *t;

/* x (the shared one), i, j, r and threadIdx.x, numbered 0 to 4. */
static void setup(void)
{
    ir_context_setup();
    x = ir_var("x", 0, &vx);
    i = ir_var("i", 1, &vi);
    j = ir_var("j", 2, &vj);
    r = ir_var("r", 3, &vr);
    t = ir_var("threadIdx.x", 4, &tx);
}

static void teardown(void)
{
    ir_context_teardown();
}

/* Runs one pass of the table on k, as the pipeline does (auto_unroll_max_step is unroll's). */
static tcc_status run_pass(const char *name, PrimFunc *k, int auto_unroll_max_step)
{
    const Pass *pass = tci_find_pass(name);
    ck_assert_ptr_nonnull(pass);
    PassContext pc = tci_pass_context(ctx, NULL);
    pc.auto_unroll_max_step = auto_unroll_max_step;
    return tci_run_pass(&pc, pass, k);
}

/* ---- building IR ---------------------------------------------------------------------- */

static Buffer *buffer(const char *name, tcc_dtype type, tcc_scope scope, int ndim,
                      const int64_t *shape)
{
    return tci_ir_buffer(arena, name, type, scope, ndim, shape);
}

/* A kernel of `body` (in the test's arena) launching `threads` threads in x. */
static PrimFunc *kernel_of(Stmt *body, int64_t threads)
{
    PrimFunc *k = ir_kernel("test", 0, NULL);
    if (threads > 1)
        ir_launch(k, TCC_THREAD_X, threads, tx);
    k->body = body;
    return k;
}

/* The kernel of `body` (one thread) after the pass `name`, which must succeed. */
static PrimFunc *after_pass(const char *name, Stmt *body, int auto_unroll_max_step)
{
    PrimFunc *k = kernel_of(body, 1);
    ck_assert_int_eq(run_pass(name, k, auto_unroll_max_step), TCC_OK);
    return k;
}

/* ---- flatten ------------------------------------------------------------------------ */

START_TEST(flatten_makes_row_major_offsets)
{
    int64_t shape[3] = {2, 3, 4};
    Buffer *g = buffer("G", TCC_FLOAT32, TCC_SCOPE_GLOBAL, 3, shape);
    Buffer *h = buffer("H", TCC_FLOAT32, TCC_SCOPE_GLOBAL, 3, shape);
    Expr *index[3] = {x, i, j};
    Stmt *s = tci_stmt_store(arena, h, 3, index, tci_ir_load(arena, g, 3, index));
    PrimFunc *k = after_pass("flatten", s, 0);
    /* Strides are the products of the later dimensions: 3*4 and 4. The sum nests to the
     * right (inner dimensions first); simplify flattens it later. */
    check_stmt(k->body, "H[x * 12 + (i * 4 + j)] = G[x * 12 + (i * 4 + j)]\n");
    ck_assert_int_eq(k->body->store.nindex, 1);
}
END_TEST

START_TEST(flatten_subtracts_region_mins)
{
    /* S holds rows [r, r + 2) of an 8-wide tensor: index (r + i, j) is offset i*8 + j,
     * written as (r + i - r) * 8 + j until the simplify pass. */
    int64_t shape[2] = {2, 8}, gshape[2] = {4, 8};
    Buffer *s_buf = buffer("S", TCC_FLOAT32, TCC_SCOPE_SHARED, 2, shape);
    s_buf->min[0] = r;
    Buffer *g = buffer("G", TCC_FLOAT32, TCC_SCOPE_GLOBAL, 2, gshape);
    Expr *index[2] = {add(r, i), j};
    Stmt *copy = tci_stmt_store(arena, s_buf, 2, index, tci_ir_load(arena, g, 2, index));
    Stmt *body =
        tci_stmt_allocate(arena, s_buf, loop(vi, 2, FOR_SERIAL, loop(vj, 8, FOR_SERIAL, copy)));
    PrimFunc *k = kernel_of(body, 1);
    check_stmt(k->body, "allocate S: float32 shared [2, 8] min [r, 0] {\n"
                        "  for i in 0..2 {\n"
                        "    for j in 0..8 {\n"
                        "      S[r + i, j] = G[r + i, j]\n"
                        "    }\n"
                        "  }\n"
                        "}\n");
    ck_assert_int_eq(run_pass("flatten", k, 0), TCC_OK);
    /* The allocation's region start has done its work and is no longer printed. */
    check_stmt(k->body, "allocate S: float32 shared [2, 8] {\n"
                        "  for i in 0..2 {\n"
                        "    for j in 0..8 {\n"
                        "      S[(r + i - r) * 8 + j] = G[(r + i) * 8 + j]\n"
                        "    }\n"
                        "  }\n"
                        "}\n");
    ck_assert_ptr_null(s_buf->min[0]);
    /* simplify then cancels r. */
    ck_assert_int_eq(run_pass("simplify", k, 0), TCC_OK);
    char *text = stmt_text(k->body, 0);
    assert_contains(text, "S[i * 8 + j] = G[r * 8 + i * 8 + j]");
    free(text);
}
END_TEST

START_TEST(flatten_wmma_memory_index)
{
    int64_t shape[2] = {64, 32}, tile[3] = {2, 16, 16};
    Buffer *g = buffer("C", TCC_FLOAT32, TCC_SCOPE_GLOBAL, 2, shape);
    Buffer *frag = buffer("F", TCC_FLOAT32, TCC_SCOPE_WMMA_ACCUMULATOR, 3, tile);
    Expr *memory[2] = {mul(x, 16), mul(i, 16)};
    PrimFunc *k =
        kernel_of(wmma_memory(wmma_op(WMMA_STORE, 16, 16, 16, frag, x), g, 2, memory, 32), 1);
    ck_assert_int_eq(run_pass("flatten", k, 0), TCC_OK);
    check_stmt(k->body,
               "wmma.store_matrix(&C[x * 16 * 32 + i * 16], F[x], stride 32, row_major)    "
               "// m16n16k16\n");
    ck_assert_int_eq(k->body->wmma.nindex, 1);
}
END_TEST

START_TEST(flatten_leaves_flat_kernels_alone)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Stmt *body = loop(vi, 64, FOR_SERIAL, store1(b, i, load1(b, add(i, num(1)))));
    PrimFunc *k = after_pass("flatten", body, 0);
    ck_assert_ptr_eq(k->body, body); /* nothing to do: the same tree */
}
END_TEST

/* ---- simplify ----------------------------------------------------------------------- */

START_TEST(simplify_removes_unit_loops)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Buffer *a = f32_buffer("A", TCC_SCOPE_GLOBAL, 64);
    Expr *index = add(mul(i, 8), j);
    Stmt *body =
        loop(vi, 1, FOR_SERIAL, loop(vj, 8, FOR_SERIAL, store1(b, index, load1(a, index))));
    PrimFunc *k = after_pass("simplify", body, 0);
    check_stmt(k->body, "for j in 0..8 {\n  B[j] = A[j]\n}\n");
}
END_TEST

START_TEST(simplify_unit_loop_takes_its_min)
{
    /* for i in 3..4 runs once with i = 3. */
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Stmt *body = tci_stmt_for(arena, vi, num(3), num(1), FOR_SERIAL, store1(b, mul(i, 2), num(0)));
    PrimFunc *k = after_pass("simplify", body, 0);
    check_stmt(k->body, "B[6] = 0\n");
}
END_TEST

START_TEST(simplify_keeps_thread_loops_of_one)
{
    /* A launch of one thread still binds its variable: it is not a loop to remove. */
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Stmt *body = tci_stmt_thread(arena, tx, TCC_THREAD_X, 1, store1(b, t, num(0)));
    PrimFunc *k = after_pass("simplify", body, 0);
    check_stmt(k->body, "launch threadIdx.x in 0..1 {\n  B[threadIdx.x] = 0\n}\n");
}
END_TEST

START_TEST(simplify_folds_arithmetic_with_loop_ranges)
{
    /* Extents fold to constants first, so a loop that becomes 0..1 goes too. */
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 256);
    Expr *index =
        add(bin(EXPR_DIV, add(mul(x, 16), j), num(16)), bin(EXPR_MOD, add(mul(x, 16), j), num(16)));
    Stmt *inner = loop(vj, 16, FOR_SERIAL, store1(b, index, num(0)));
    Stmt *unit = tci_stmt_for(arena, vi, num(0), add(bin(EXPR_SUB, x, x), num(1)), FOR_SERIAL,
                              store1(b, add(i, x), num(1)));
    PrimFunc *k = after_pass("simplify", seq2(inner, unit), 0);
    check_stmt(k->body, "for j in 0..16 {\n  B[x + j] = 0\n}\nB[x] = 1\n");
}
END_TEST

/* ---- vectorize ---------------------------------------------------------------------- */

/* for x in 0..8 { vectorized for j in 0..8 { B[x * 8 + j] = A[x * 8 + j] } } after the
 * vectorize pass; with a guard, the value is if_then_else(guard, A[x * 8 + j], 0f). */
static PrimFunc *vectorized_rows(Expr *guard)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Buffer *a = f32_buffer("A", TCC_SCOPE_GLOBAL, 64);
    Expr *index = add(mul(x, 8), j);
    Expr *value = load1(a, index);
    if (guard)
        value = tci_ir_select(arena, guard, value, tci_ir_float(arena, 0, TCC_FLOAT32));
    Stmt *body = loop(vj, 8, FOR_VECTORIZED, store1(b, index, value));
    return after_pass("vectorize", loop(vx, 8, FOR_SERIAL, body), 0);
}

START_TEST(vectorize_contiguous_store_becomes_ramp)
{
    PrimFunc *k = vectorized_rows(NULL);
    check_stmt(k->body, "for x in 0..8 {\n  B[ramp(x * 8, 1, 8)] = A[ramp(x * 8, 1, 8)]\n}\n");
    const Stmt *store = k->body->loop.body;
    ck_assert_int_eq(store->kind, STMT_STORE);
    ck_assert_int_eq(store->store.value->lanes, 8);
}
END_TEST

START_TEST(vectorize_through_a_cast)
{
    /* The tutorial's W.shared copy is a plain copy; a widening copy vectorizes as well. */
    int64_t size = 64;
    Buffer *h = buffer("H", TCC_FLOAT16, TCC_SCOPE_SHARED, 1, &size);
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Expr *index = add(j, mul(x, 8));
    Stmt *body = loop(vj, 8, FOR_VECTORIZED,
                      store1(b, index, tci_ir_cast(arena, TCC_FLOAT32, load1(h, index))));
    PrimFunc *k = after_pass("vectorize", body, 0);
    check_stmt(k->body, "B[ramp(x * 8, 1, 8)] = float32x8(H[ramp(x * 8, 1, 8)])\n");
}
END_TEST

START_TEST(vectorize_non_contiguous_stays_scalar)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Buffer *a = f32_buffer("A", TCC_SCOPE_GLOBAL, 64);
    /* A strided store. */
    Stmt *strided = loop(vj, 8, FOR_VECTORIZED, store1(b, mul(j, 2), load1(a, mul(j, 2))));
    /* A contiguous store of a strided load. */
    Stmt *gather = loop(vj, 8, FOR_VECTORIZED, store1(b, j, load1(a, mul(j, 8))));
    /* The lane itself as a value. */
    Stmt *lane = loop(vj, 8, FOR_VECTORIZED, store1(b, j, tci_ir_cast(arena, TCC_FLOAT32, j)));
    /* A loop not starting at 0. */
    Stmt *offset =
        tci_stmt_for(arena, vj, num(4), num(8), FOR_VECTORIZED, store1(b, j, load1(a, j)));
    Stmt *items[4] = {strided, gather, lane, offset};
    PrimFunc *k = after_pass("vectorize", tci_stmt_seq(arena, 4, items), 0);
    /* Each stays a loop, now an ordinary one: a vector is a speed-up, never a change. */
    check_stmt(k->body, "for j in 0..8 {\n  B[j * 2] = A[j * 2]\n}\n"
                        "for j in 0..8 {\n  B[j] = A[j * 8]\n}\n"
                        "for j in 0..8 {\n  B[j] = float32(j)\n}\n"
                        "for j in 4..12 {\n  B[j] = A[j]\n}\n");
}
END_TEST

START_TEST(vectorize_arithmetic_lane_by_lane)
{
    /* Arithmetic on loaded lanes is vector arithmetic; the constant stays a scalar, which the
     * code generator broadcasts. */
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Buffer *a = f32_buffer("A", TCC_SCOPE_GLOBAL, 64);
    Stmt *scaled =
        loop(vj, 8, FOR_VECTORIZED,
             store1(b, j, bin(EXPR_MUL, load1(a, j), tci_ir_float(arena, 2, TCC_FLOAT32))));
    PrimFunc *k = after_pass("vectorize", scaled, 0);
    check_stmt(k->body, "B[ramp(0, 1, 8)] = A[ramp(0, 1, 8)] * 2f\n");
}
END_TEST

START_TEST(vectorize_select_with_a_shared_condition)
{
    /* The range test is the same for the 8 lanes (it reads x only): the whole vector is
     * loaded or zero, and the scalar zero is broadcast by the code generator. */
    PrimFunc *k = vectorized_rows(bin(EXPR_LT, x, num(5)));
    check_stmt(k->body, "for x in 0..8 {\n"
                        "  B[ramp(x * 8, 1, 8)] = if_then_else(x < 5, A[ramp(x * 8, 1, 8)], 0f)\n"
                        "}\n");
}
END_TEST

START_TEST(vectorize_select_whose_condition_differs_between_lanes_stays_scalar)
{
    /* The guard reads j, through x * 8 + j. */
    PrimFunc *k = vectorized_rows(bin(EXPR_LT, add(mul(x, 8), j), num(61)));
    char *text = stmt_text(k->body, 0);
    ck_assert_ptr_null(strstr(text, "ramp("));
    ck_assert_ptr_nonnull(strstr(text, "for j in 0..8 {"));
    free(text);
}
END_TEST

START_TEST(vectorize_ignores_other_loops)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Stmt *body = loop(vj, 8, FOR_SERIAL, store1(b, j, num(0)));
    PrimFunc *k = after_pass("vectorize", body, 0);
    ck_assert_ptr_eq(k->body, body);
}
END_TEST

/* ---- unroll ------------------------------------------------------------------------- */

START_TEST(unroll_auto_replicates_loops_within_the_step_budget)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Stmt *small = loop(vi, 4, FOR_SERIAL, store1(b, i, num(1)));
    Stmt *big = loop(vj, 32, FOR_SERIAL, store1(b, j, num(2)));
    PrimFunc *k = after_pass("unroll", seq2(small, big), 16);
    check_stmt(k->body, "B[0] = 1\nB[1] = 1\nB[2] = 1\nB[3] = 1\n"
                        "for j in 0..32 {\n  B[j] = 2\n}\n");
}
END_TEST

START_TEST(unroll_auto_counts_the_steps_of_nests)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    /* 4 x 4 = 16 steps: both loops go. */
    Stmt *square =
        loop(vi, 4, FOR_SERIAL, loop(vj, 4, FOR_SERIAL, store1(b, add(mul(i, 4), j), num(0))));
    PrimFunc *k = after_pass("unroll", square, 16);
    char *text = stmt_text(k->body, 0);
    ck_assert_int_eq(occurrences(text, "B["), 16);
    ck_assert_int_eq(occurrences(text, "for "), 0);
    assert_contains(text, "B[15] = 0\n");
    free(text);
    /* 4 x 8 = 32 steps: the inner 8 go, the outer loop stays. */
    Stmt *wide =
        loop(vi, 4, FOR_SERIAL, loop(vj, 8, FOR_SERIAL, store1(b, add(mul(i, 8), j), num(0))));
    k = after_pass("unroll", wide, 16);
    text = stmt_text(k->body, 0);
    ck_assert_int_eq(occurrences(text, "for i in 0..4 {"), 1);
    ck_assert_int_eq(occurrences(text, "B["), 8);
    assert_contains(text, "  B[i * 8 + 7] = 0\n");
    free(text);
}
END_TEST

START_TEST(unroll_max_step_zero_unrolls_nothing_automatically)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    Stmt *body = loop(vi, 2, FOR_SERIAL, store1(b, i, num(1)));
    PrimFunc *k = after_pass("unroll", body, 0);
    check_stmt(k->body, "for i in 0..2 {\n  B[i] = 1\n}\n");
}
END_TEST

START_TEST(unroll_explicit_loops_always)
{
    /* FOR_UNROLLED is unrolled whatever the budget, even with a loop kept inside it. */
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 256);
    Stmt *inner = loop(vj, 32, FOR_SERIAL, store1(b, add(mul(i, 32), j), num(0)));
    Stmt *body = tci_stmt_for(arena, vi, num(2), num(3), FOR_UNROLLED, inner);
    PrimFunc *k = after_pass("unroll", body, 0);
    check_stmt(k->body, "for j in 0..32 {\n  B[j + 64] = 0\n}\n"
                        "for j in 0..32 {\n  B[j + 96] = 0\n}\n"
                        "for j in 0..32 {\n  B[j + 128] = 0\n}\n");
}
END_TEST

START_TEST(unroll_keeps_loops_it_cannot_count)
{
    Buffer *b = f32_buffer("B", TCC_SCOPE_GLOBAL, 64);
    /* A marked loop of unknown extent becomes an ordinary loop. */
    Stmt *unknown = tci_stmt_for(arena, vi, num(0), x, FOR_UNROLLED, store1(b, i, num(0)));
    /* Thread and vectorized loops are never replicated, nor anything around them. */
    Stmt *thread = loop(vj, 2, FOR_SERIAL,
                        tci_stmt_thread(arena, tx, TCC_THREAD_X, 4, store1(b, add(t, j), num(0))));
    PrimFunc *k = kernel_of(seq2(unknown, thread), 4);
    ck_assert_int_eq(run_pass("unroll", k, 64), TCC_OK);
    ck_assert_int_eq(k->body->kind, STMT_SEQ);
    const Stmt *kept = k->body->seq.items[0];
    ck_assert_int_eq(kept->kind, STMT_FOR);
    ck_assert_ptr_eq(kept->loop.extent, x);
    /* It is no longer marked unrolled: the pass has decided. */
    ck_assert_int_eq(kept->loop.kind, FOR_SERIAL);
    check_stmt(k->body->seq.items[1], "for j in 0..2 {\n"
                                      "  launch threadIdx.x in 0..4 {\n"
                                      "    B[threadIdx.x + j] = 0\n"
                                      "  }\n"
                                      "}\n");
}
END_TEST

/* ---- thread_sync -------------------------------------------------------------------- */

/* launch threadIdx.x in 0..32 { body } inside an allocation of S. */
static PrimFunc *threaded(Buffer *shared, Stmt *body)
{
    return kernel_of(
        tci_stmt_allocate(arena, shared, tci_stmt_thread(arena, tx, TCC_THREAD_X, 32, body)), 32);
}

/* S (shared, one element per thread), and G and H (global, `global` elements each). */
typedef struct Memory {
    Buffer *s, *g, *h;
} Memory;

static Memory memory(int64_t global)
{
    Memory m = {f32_buffer("S", TCC_SCOPE_SHARED, 32), f32_buffer("G", TCC_SCOPE_GLOBAL, global),
                f32_buffer("H", TCC_SCOPE_GLOBAL, global)};
    return m;
}

/* threaded(shared, body) after thread_sync, which must succeed. */
static PrimFunc *synced(Buffer *shared, Stmt *body)
{
    PrimFunc *k = threaded(shared, body);
    ck_assert_int_eq(run_pass("thread_sync", k, 0), TCC_OK);
    return k;
}

/* How many barriers k's body has. */
static int barriers(const PrimFunc *k)
{
    char *text = stmt_text(k->body, 0);
    int n = occurrences(text, "__syncthreads()");
    free(text);
    return n;
}

static Expr *mirror(void)
{
    return bin(EXPR_SUB, num(31), t); /* another thread's element */
}

START_TEST(thread_sync_barrier_before_read_after_write)
{
    Memory m = memory(32);
    PrimFunc *k =
        synced(m.s, seq2(store1(m.s, t, load1(m.g, t)), store1(m.h, t, load1(m.s, mirror()))));
    check_stmt(k->body, "allocate S: float32 shared [32] {\n"
                        "  launch threadIdx.x in 0..32 {\n"
                        "    S[threadIdx.x] = G[threadIdx.x]\n"
                        "    __syncthreads()\n"
                        "    H[threadIdx.x] = S[31 - threadIdx.x]\n"
                        "  }\n"
                        "}\n");
}
END_TEST

START_TEST(thread_sync_barrier_before_write_after_read)
{
    /* Within a list: a read, then a write the other threads must not see early. */
    Buffer *s = f32_buffer("S", TCC_SCOPE_SHARED, 32);
    Buffer *h = f32_buffer("H", TCC_SCOPE_GLOBAL, 32);
    PrimFunc *k = synced(s, seq2(store1(h, t, load1(s, mirror())), store1(s, t, num(0))));
    char *text = stmt_text(k->body, 0);
    ck_assert_int_eq(occurrences(text, "__syncthreads()"), 1);
    ck_assert_ptr_nonnull(strstr(text, "H[threadIdx.x] = S[31 - threadIdx.x]\n    __syncthreads()\n"
                                       "    S[threadIdx.x] = 0\n"));
    free(text);
}
END_TEST

START_TEST(thread_sync_barrier_across_loop_iterations)
{
    /* Each iteration writes S, then reads it: a barrier between, and one at the top of the
     * body, so the next iteration's write waits for this one's reads (the tutorial's kh loop). */
    Memory m = memory(128);
    Expr *global = add(mul(i, 32), t);
    Stmt *body =
        seq2(store1(m.s, t, load1(m.g, global)), store1(m.h, global, load1(m.s, mirror())));
    PrimFunc *k = synced(m.s, loop(vi, 4, FOR_SERIAL, body));
    check_stmt(k->body, "allocate S: float32 shared [32] {\n"
                        "  launch threadIdx.x in 0..32 {\n"
                        "    for i in 0..4 {\n"
                        "      __syncthreads()\n"
                        "      S[threadIdx.x] = G[i * 32 + threadIdx.x]\n"
                        "      __syncthreads()\n"
                        "      H[i * 32 + threadIdx.x] = S[31 - threadIdx.x]\n"
                        "    }\n"
                        "  }\n"
                        "}\n");
}
END_TEST

START_TEST(thread_sync_none_for_write_after_write)
{
    Buffer *s = f32_buffer("S", TCC_SCOPE_SHARED, 32);
    Stmt *twice = seq2(store1(s, t, num(1)), store1(s, t, num(2)));
    Stmt *repeated = loop(vi, 4, FOR_SERIAL, store1(s, t, i));
    PrimFunc *k = synced(s, seq2(twice, repeated));
    ck_assert_int_eq(barriers(k), 0);
}
END_TEST

START_TEST(thread_sync_none_for_local_or_global_memory)
{
    /* Only shared memory is visible to other threads of the block. */
    Buffer *l = f32_buffer("L", TCC_SCOPE_LOCAL, 32);
    Buffer *g = f32_buffer("G", TCC_SCOPE_GLOBAL, 32);
    Buffer *h = f32_buffer("H", TCC_SCOPE_GLOBAL, 32);
    Stmt *local = seq2(store1(l, t, num(1)), store1(h, t, load1(l, mirror())));
    Stmt *global = seq2(store1(g, t, num(1)), store1(h, t, load1(g, mirror())));
    PrimFunc *k = synced(l, seq2(local, global));
    ck_assert_int_eq(barriers(k), 0);
}
END_TEST

START_TEST(thread_sync_wmma_shared_accesses)
{
    /* A fragment load reads shared memory a plain store wrote. */
    Buffer *s = f32_buffer("S", TCC_SCOPE_SHARED, 256);
    Buffer *frag = buffer1("F", TCC_FLOAT16, TCC_SCOPE_WMMA_MATRIX_A, 256);
    Expr *zero = num(0);
    Stmt *load = wmma_memory(wmma_op(WMMA_LOAD_A, 16, 16, 16, frag, zero), s, 1, &zero, 16);
    Stmt *fill = loop(vi, 8, FOR_SERIAL, store1(s, add(mul(i, 32), t), num(0)));
    PrimFunc *k = synced(s, seq2(fill, load));
    char *text = stmt_text(k->body, 0);
    ck_assert_int_eq(occurrences(text, "__syncthreads()"), 1);
    ck_assert_ptr_nonnull(strstr(text, "  }\n    __syncthreads()\n    wmma.load_matrix_a("));
    free(text);
}
END_TEST

START_TEST(thread_sync_barrier_stays_out_of_guarded_code)
{
    /* Only threads 0..15 read, but every thread must reach the barrier: it goes in front
     * of the if, not inside it. */
    Memory m = memory(32);
    Stmt *read = store1(m.h, t, load1(m.s, add(t, num(16))));
    Stmt *guarded = tci_stmt_if(arena, bin(EXPR_LT, t, num(16)), read, NULL);
    PrimFunc *k = synced(m.s, seq2(store1(m.s, t, load1(m.g, t)), guarded));
    check_stmt(k->body, "allocate S: float32 shared [32] {\n"
                        "  launch threadIdx.x in 0..32 {\n"
                        "    S[threadIdx.x] = G[threadIdx.x]\n"
                        "    __syncthreads()\n"
                        "    if (threadIdx.x < 16) {\n"
                        "      H[threadIdx.x] = S[threadIdx.x + 16]\n"
                        "    }\n"
                        "  }\n"
                        "}\n");
}
END_TEST

START_TEST(thread_sync_guarded_write_then_read)
{
    /* Threads 0..15 write and then read each other's elements inside one guard. */
    Memory m = memory(32);
    Stmt *inside =
        seq2(store1(m.s, t, load1(m.g, t)), store1(m.h, t, load1(m.s, bin(EXPR_SUB, num(15), t))));
    Stmt *guarded = tci_stmt_if(arena, bin(EXPR_LT, t, num(16)), inside, NULL);
    PrimFunc *k = threaded(m.s, guarded);
    /* Threads 16..31 would never reach a barrier inside the if: refused, never placed. */
    ck_assert_int_eq(run_pass("thread_sync", k, 0), TCC_ERROR_SCHEDULE);
    assert_contains(tcc_last_error(ctx), "only some threads run");
    ck_assert_int_eq(barriers(k), 0);
    /* The same inside a launch of 16 threads in a block of 32 (two stages bound threadIdx.x
     * with different extents): codegen guards the launch with threadIdx.x < 16. */
    PrimFunc *partial = kernel_of(
        tci_stmt_allocate(arena, m.s, tci_stmt_thread(arena, tx, TCC_THREAD_X, 16, inside)), 32);
    ck_assert_int_eq(run_pass("thread_sync", partial, 0), TCC_ERROR_SCHEDULE);
    ck_assert_int_eq(barriers(partial), 0);
}
END_TEST

/* ---- the pipeline ------------------------------------------------------------------- */

START_TEST(pass_names_in_pipeline_order)
{
    static const char *const expected[] = {
        "schedule_ops",      "flatten",         "simplify",           "inject_virtual_thread",
        "vectorize",         "persistent_grid", "fold_grid",          "software_pipeline",
        "inject_async_copy", "unroll",          "prefetch_fragments", "swizzle_shared",
        "store_ring",        "plan_shared",     "thread_sync",        "wgmma_zero_init",
        "wgmma_sync",        "warp_specialize"};
    enum { COUNT = sizeof expected / sizeof expected[0] };
    ck_assert_int_eq(tcc_pass_count(), COUNT);
    for (int p = 0; p < COUNT; p++) {
        ck_assert_str_eq(tcc_pass_name(p), expected[p]);
        ck_assert_int_eq(tcc_pass_index(expected[p]), p);
        ck_assert_ptr_nonnull(tcc_pass_summary(p));
    }
    ck_assert_ptr_null(tcc_pass_name(COUNT));
    ck_assert_int_eq(tcc_pass_index("inline"), -1);
}
END_TEST

/* B[i, j] = A[i, j] * 2 over 8 x 4, no schedule: the smallest function to lower. */
static tcc_tensor *small_a;

static tcc_expr *twice(tcc_func *f, tcc_expr *const *ax, void *user)
{
    (void)user;
    return tcc_mul(f, tcc_access(f, small_a, 2, ax), tcc_float(f, 2, TCC_FLOAT32));
}

/* The small function, its axes named `names` (NULL: after the tensor); params gets A, B. */
static tcc_func *small_func(const char *const *names, tcc_tensor *params[2])
{
    tcc_func *func;
    ck_assert_int_eq(tcc_func_create(ctx, "small", &func), TCC_OK);
    int64_t shape[2] = {8, 4};
    small_a = tcc_placeholder(func, "A", 2, shape, TCC_FLOAT32);
    tcc_tensor *b = tcc_compute(func, "B", 2, shape, names, TCC_FLOAT32, twice, NULL);
    ck_assert_int_eq(tcc_schedule_create(func, 1, &b), TCC_OK);
    params[0] = small_a;
    params[1] = b;
    return func;
}

/* Lowers the small function printing after `pass`; returns the lowering status. */
static tcc_status lower_small(const char *pass, PrintCapture *printed)
{
    static const char *const names[2] = {"i", "j"};
    tcc_tensor *params[2];
    tcc_func *func = small_func(names, params);
    tcc_build_options options = {.size = sizeof options,
                                 .print_after_pass = pass,
                                 .print_callback = capture_print,
                                 .print_user = printed};
    Lowered lowered = lower(func, 2, params, &options);
    lowered_free(&lowered);
    tcc_func_destroy(func);
    return lowered.status;
}

START_TEST(print_after_fires_once_for_a_named_pass)
{
    for (int p = 0; p < tcc_pass_count(); p++) {
        PrintCapture printed = {0};
        ck_assert_int_eq(lower_small(tcc_pass_name(p), &printed), TCC_OK);
        ck_assert_int_eq(printed.calls, 1);
        ck_assert_str_eq(printed.passes[0], tcc_pass_name(p));
        assert_contains(printed.last, "kernel small(float32 A[8, 4], float32 B[8, 4])");
        free(printed.last);
    }
}
END_TEST

START_TEST(print_after_shows_that_pass_s_output)
{
    PrintCapture before = {0}, after = {0};
    ck_assert_int_eq(lower_small("schedule_ops", &before), TCC_OK);
    ck_assert_int_eq(lower_small("flatten", &after), TCC_OK);
    assert_contains(before.last, "B[i, j] = A[i, j] * 2f");
    assert_contains(after.last, "B[i * 4 + j] = A[i * 4 + j] * 2f");
    free(before.last);
    free(after.last);
}
END_TEST

START_TEST(print_after_all_fires_once_per_pass)
{
    PrintCapture printed = {0};
    ck_assert_int_eq(lower_small("all", &printed), TCC_OK);
    ck_assert_int_eq(printed.calls, tcc_pass_count());
    for (int p = 0; p < tcc_pass_count(); p++)
        ck_assert_str_eq(printed.passes[p], tcc_pass_name(p));
    free(printed.last);
}
END_TEST

START_TEST(print_after_unknown_pass_is_an_error)
{
    PrintCapture printed = {0};
    ck_assert_int_eq(lower_small("inline", &printed), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(printed.calls, 0);
    assert_contains(tcc_last_error(ctx), "unknown pass 'inline'");
    assert_one_line(ctx);
}
END_TEST

START_TEST(print_after_without_callback_is_quiet)
{
    tcc_tensor *params[2];
    tcc_func *func = small_func(NULL, params);
    tcc_build_options options = {.size = sizeof(tcc_build_options), .print_after_pass = "all"};
    Lowered lowered = lower(func, 2, params, &options);
    ck_assert_int_eq(lowered.status, TCC_OK);
    ck_assert_ptr_nonnull(lowered.kernel);
    /* No axis names given: they are named after the tensor, <name>.i0, <name>.i1. */
    char *text = prim_func_text(lowered.kernel);
    assert_contains(text, ".i0 in 0..8 {");
    free(text);
    lowered_free(&lowered);
    tcc_func_destroy(func);
}
END_TEST

/* ---- the tutorial's convolution, end to end ---------------------------------------------- */

/* The tutorial's convolution lowered with auto_unroll_max_step 16, for every test of the
 * "tutorial" case (tutorial_setup and tutorial_teardown are its fixture). */
static struct {
    tcc_func *func;
    tcc_tensor *params[3];
    Lowered lowered;
    PrimFunc *kernel;
    char *text;
} tut;

static const tcc_build_options tutorial_options = {
    .size = sizeof(tcc_build_options), .arch = TCC_SM_80, .auto_unroll_max_step = 16};

static void tutorial_setup(void)
{
    setup();
    ck_assert_int_eq(tcc_func_create(ctx, "conv2d", &tut.func), TCC_OK);
    test_tutorial_conv2d(tut.func, tut.params);
    tut.lowered = lower(tut.func, 3, tut.params, &tutorial_options);
    ck_assert_msg(tut.lowered.status == TCC_OK, "%s", tcc_last_error(ctx));
    tut.kernel = tut.lowered.kernel;
    tut.text = prim_func_text(tut.kernel);
}

static void tutorial_teardown(void)
{
    free(tut.text);
    lowered_free(&tut.lowered);
    tcc_func_destroy(tut.func);
    teardown();
}

static void collect_allocations(const Stmt *s, const Buffer **out, int *n)
{
    if (!s)
        return;
    switch (s->kind) {
    case STMT_SEQ:
        for (int k = 0; k < s->seq.count; k++)
            collect_allocations(s->seq.items[k], out, n);
        return;
    case STMT_FOR:
        collect_allocations(s->loop.body, out, n);
        return;
    case STMT_IF:
        collect_allocations(s->branch.then_body, out, n);
        collect_allocations(s->branch.else_body, out, n);
        return;
    case STMT_ALLOCATE:
        if (*n < 16)
            out[(*n)++] = s->alloc.buffer;
        collect_allocations(s->alloc.body, out, n);
        return;
    default:
        return;
    }
}

static const Stmt *find_loop(const Stmt *s, const char *name)
{
    if (!s)
        return NULL;
    switch (s->kind) {
    case STMT_SEQ:
        for (int k = 0; k < s->seq.count; k++) {
            const Stmt *found = find_loop(s->seq.items[k], name);
            if (found)
                return found;
        }
        return NULL;
    case STMT_FOR:
        if (strcmp(s->loop.var->name, name) == 0)
            return s;
        return find_loop(s->loop.body, name);
    case STMT_IF:
        return find_loop(s->branch.then_body, name);
    case STMT_ALLOCATE:
        return find_loop(s->alloc.body, name);
    default:
        return NULL;
    }
}

static int count_kind(const Stmt *s, StmtKind kind)
{
    if (!s)
        return 0;
    int n = s->kind == kind;
    switch (s->kind) {
    case STMT_SEQ:
        for (int k = 0; k < s->seq.count; k++)
            n += count_kind(s->seq.items[k], kind);
        return n;
    case STMT_FOR:
        return n + count_kind(s->loop.body, kind);
    case STMT_IF:
        return n + count_kind(s->branch.then_body, kind) + count_kind(s->branch.else_body, kind);
    case STMT_ALLOCATE:
        return n + count_kind(s->alloc.body, kind);
    default:
        return n;
    }
}

START_TEST(tutorial_allocations_are_the_tutorial_s)
{
    /* The accumulator per warp, the two shared tiles, and the two fragment groups. */
    assert_contains(tut.text, "allocate Conv.wmma.accumulator: float32 wmma.accumulator "
                              "[2, 1, 1, 4, 16, 16] {");
    /* Both live at once: plan_shared puts them side by side. */
    assert_contains(tut.text,
                    "allocate Apad.shared: float16 shared [8, 1, 3, 2, 16, 16] offset 24576 {");
    assert_contains(tut.text, "allocate W.shared: float16 shared [1, 3, 2, 8, 16, 16] offset 0 {");
    assert_contains(tut.text, "allocate Apad.shared.wmma.matrix_a: float16 wmma.matrix_a "
                              "[2, 1, 1, 1, 16, 16] {");
    assert_contains(tut.text, "allocate W.shared.wmma.matrix_b: float16 wmma.matrix_b "
                              "[1, 1, 1, 4, 16, 16] {");
    ck_assert_int_eq(occurrences(tut.text, "allocate "), 5);
    const Buffer *allocs[16];
    int n = 0;
    collect_allocations(tut.kernel->body, allocs, &n);
    ck_assert_int_eq(n, 5);
    int shared = 0;
    for (int k = 0; k < n; k++) {
        if (allocs[k]->scope != TCC_SCOPE_SHARED)
            continue;
        shared++;
        ck_assert_int_eq(allocs[k]->elements, 12288); /* 24 KiB of halves each */
        for (int d = 0; d < allocs[k]->ndim; d++)
            ck_assert_ptr_null(allocs[k]->min[d]); /* flattened: offsets start at 0 */
    }
    ck_assert_int_eq(shared, 2);
}
END_TEST

START_TEST(tutorial_launch_shape)
{
    assert_contains(tut.text, "  grid(2, 4, 196) block(32, 4, 2) shared(49152)\n");
    ck_assert_int_eq(tut.kernel->shared_bytes, 49152);
    static const int64_t launch[6] = {2, 4, 196, 32, 4, 2};
    for (int d = 0; d < 6; d++)
        ck_assert_int_eq(tut.kernel->launch[d], launch[d]);
    assert_contains(tut.text, "kernel conv2d(float16 A[16, 14, 14, 16, 16, 16], float16 "
                              "W[3, 3, 16, 32, 16, 16], float32 Conv[16, 14, 14, 32, 16, 16])");
}
END_TEST

START_TEST(tutorial_two_barriers_per_kh_iteration)
{
    ck_assert_int_eq(count_kind(tut.kernel->body, STMT_BARRIER), 2);
    const Stmt *kh = find_loop(tut.kernel->body, "kh");
    ck_assert_ptr_nonnull(kh);
    ck_assert(tci_expr_is_int(kh->loop.extent, 3));
    /* Both inside the kh body: one before the shared copies overwrite what the previous
     * iteration's fragment loads read, one between the copies and the loads. */
    ck_assert_int_eq(count_kind(kh->loop.body, STMT_BARRIER), 2);
    ck_assert_int_eq(kh->loop.body->kind, STMT_SEQ);
    ck_assert_int_eq(kh->loop.body->seq.items[0]->kind, STMT_BARRIER);
    const Stmt *inner = find_loop(kh->loop.body, "ic.inner");
    ck_assert_ptr_nonnull(inner);
    ck_assert_int_eq(count_kind(inner, STMT_BARRIER), 0);
}
END_TEST

START_TEST(tutorial_tensor_core_operations)
{
    ck_assert_int_eq(occurrences(tut.text, "wmma.fill_fragment("), 8);
    ck_assert_int_eq(occurrences(tut.text, "wmma.load_matrix_a("), 2);
    ck_assert_int_eq(occurrences(tut.text, "wmma.load_matrix_b("), 4);
    ck_assert_int_eq(occurrences(tut.text, "wmma.mma_sync("), 8);
    ck_assert_int_eq(occurrences(tut.text, "wmma.store_matrix("), 8);
    ck_assert_int_eq(occurrences(tut.text, "// m16n16k16"), 30);
    /* Unrolled: every fragment index is a constant. */
    assert_contains(tut.text, "wmma.mma_sync(Conv.wmma.accumulator[7], "
                              "Apad.shared.wmma.matrix_a[1], W.shared.wmma.matrix_b[3], "
                              "Conv.wmma.accumulator[7])");
    ck_assert_int_eq(count_kind(tut.kernel->body, STMT_WMMA), 30);
}
END_TEST

START_TEST(tutorial_filter_copy_is_vectorized)
{
    /* Each lane copies 8 contiguous halves (16 bytes) of the filter tile. */
    assert_contains(tut.text, "W.shared[ramp(");
    assert_contains(tut.text, "threadIdx.x * 8, 1, 8)] = W[ramp(");
    ck_assert_int_eq(occurrences(tut.text, ", 1, 8)]"), 2);
    ck_assert_int_eq(occurrences(tut.text, "vectorized for"), 0);
    /* The padded input copy is not vectorized (its threadIdx.x is innermost). */
    assert_contains(tut.text, "Apad.shared[threadIdx.y * 3072 + threadIdx.z * 1536 + ax2 * "
                              "512 + ax3 * 256 + ax4.ax5.fused.outer * 32 + threadIdx.x] = "
                              "if_then_else(");
}
END_TEST

START_TEST(tutorial_lowers_the_same_twice)
{
    /* Lowering leaves nothing behind on the schedule that changes the next lowering. */
    tcc_build_options options = {.size = sizeof(tcc_build_options), .auto_unroll_max_step = 16};
    tcc_tensor *params[3] = {tut.func->tensors[0], tut.func->tensors[1], NULL};
    for (int k = 0; k < tut.func->ntensor; k++)
        if (strcmp(tut.func->tensors[k]->name, "Conv") == 0)
            params[2] = tut.func->tensors[k];
    ck_assert_ptr_nonnull(params[2]);
    Lowered again = lower(tut.func, 3, params, &options);
    ck_assert_int_eq(again.status, TCC_OK);
    char *text = prim_func_text(again.kernel);
    ck_assert_str_eq(text, tut.text);
    free(text);
    lowered_free(&again);
}
END_TEST

static Suite *passes_suite(void)
{
    Suite *suite = suite_create("passes");
    TCase *flatten = test_case(suite, "flatten", setup, teardown);
    tcase_add_test(flatten, flatten_makes_row_major_offsets);
    tcase_add_test(flatten, flatten_subtracts_region_mins);
    tcase_add_test(flatten, flatten_wmma_memory_index);
    tcase_add_test(flatten, flatten_leaves_flat_kernels_alone);

    TCase *simplify = test_case(suite, "simplify", setup, teardown);
    tcase_add_test(simplify, simplify_removes_unit_loops);
    tcase_add_test(simplify, simplify_unit_loop_takes_its_min);
    tcase_add_test(simplify, simplify_keeps_thread_loops_of_one);
    tcase_add_test(simplify, simplify_folds_arithmetic_with_loop_ranges);

    TCase *vectorize = test_case(suite, "vectorize", setup, teardown);
    tcase_add_test(vectorize, vectorize_contiguous_store_becomes_ramp);
    tcase_add_test(vectorize, vectorize_through_a_cast);
    tcase_add_test(vectorize, vectorize_non_contiguous_stays_scalar);
    tcase_add_test(vectorize, vectorize_arithmetic_lane_by_lane);
    tcase_add_test(vectorize, vectorize_ignores_other_loops);
    tcase_add_test(vectorize, vectorize_select_with_a_shared_condition);
    tcase_add_test(vectorize, vectorize_select_whose_condition_differs_between_lanes_stays_scalar);

    TCase *unroll = test_case(suite, "unroll", setup, teardown);
    tcase_add_test(unroll, unroll_auto_replicates_loops_within_the_step_budget);
    tcase_add_test(unroll, unroll_auto_counts_the_steps_of_nests);
    tcase_add_test(unroll, unroll_max_step_zero_unrolls_nothing_automatically);
    tcase_add_test(unroll, unroll_explicit_loops_always);
    tcase_add_test(unroll, unroll_keeps_loops_it_cannot_count);

    TCase *sync = test_case(suite, "thread_sync", setup, teardown);
    tcase_add_test(sync, thread_sync_barrier_before_read_after_write);
    tcase_add_test(sync, thread_sync_barrier_before_write_after_read);
    tcase_add_test(sync, thread_sync_barrier_across_loop_iterations);
    tcase_add_test(sync, thread_sync_none_for_write_after_write);
    tcase_add_test(sync, thread_sync_none_for_local_or_global_memory);
    tcase_add_test(sync, thread_sync_wmma_shared_accesses);
    tcase_add_test(sync, thread_sync_barrier_stays_out_of_guarded_code);
    tcase_add_test(sync, thread_sync_guarded_write_then_read);

    TCase *pipeline = test_case(suite, "pipeline", setup, teardown);
    tcase_add_test(pipeline, pass_names_in_pipeline_order);
    tcase_add_test(pipeline, print_after_fires_once_for_a_named_pass);
    tcase_add_test(pipeline, print_after_shows_that_pass_s_output);
    tcase_add_test(pipeline, print_after_all_fires_once_per_pass);
    tcase_add_test(pipeline, print_after_unknown_pass_is_an_error);
    tcase_add_test(pipeline, print_after_without_callback_is_quiet);

    TCase *tutorial = test_case(suite, "tutorial", tutorial_setup, tutorial_teardown);
    tcase_set_timeout(tutorial, 60);
    tcase_add_test(tutorial, tutorial_allocations_are_the_tutorial_s);
    tcase_add_test(tutorial, tutorial_launch_shape);
    tcase_add_test(tutorial, tutorial_two_barriers_per_kh_iteration);
    tcase_add_test(tutorial, tutorial_tensor_core_operations);
    tcase_add_test(tutorial, tutorial_filter_copy_is_vectorized);
    tcase_add_test(tutorial, tutorial_lowers_the_same_twice);
    return suite;
}

TEST_MAIN(passes_suite)
