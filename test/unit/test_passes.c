/*
 * The lowering passes, one at a time on hand-built loop IR: flatten, simplify, vectorize,
 * unroll and thread_sync. The whole pipeline (the pass list, --print-after, the tutorial's
 * convolution end to end): test_passes_pipeline.c.
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
    return suite;
}

TEST_MAIN(passes_suite)
