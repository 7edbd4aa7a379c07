/*
 * The printer's exact text: lit tests match it with FileCheck and people read it, so
 * every construct's spelling is pinned down here.
 */
#include "ir_support.h"
#include "te/te.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static Var *vi, *vj, *vk;
static Expr *i, *j, *k;

static void setup(void)
{
    ir_setup();
    i = ir_var("i", 0, &vi);
    j = ir_var("j", 1, &vj);
    k = ir_var("k", 2, &vk);
}

/* ---- helpers ------------------------------------------------------------------------ */

static Buffer *buffer(const char *name, tcc_dtype type, tcc_scope scope, int ndim, int64_t d0,
                      int64_t d1)
{
    int64_t shape[2] = {d0, d1};
    return tci_ir_buffer(arena, name, type, scope, ndim, shape);
}

static Expr *load2(Buffer *b, Expr *row, Expr *column)
{
    Expr *index[2] = {row, column};
    return tci_ir_load(arena, b, 2, index);
}

/* ---- StrBuf and names --------------------------------------------------------------- */

START_TEST(strbuf_grows_and_stays_terminated)
{
    StrBuf sb;
    tci_strbuf_init(&sb);
    ck_assert_str_eq(sb.data, "");
    for (int n = 0; n < 1000; n++)
        tci_strbuf_printf(&sb, "%d,", n % 10);
    ck_assert_uint_eq(sb.len, 2000);
    ck_assert_uint_eq(strlen(sb.data), 2000);
    ck_assert(strncmp(sb.data, "0,1,2,", 6) == 0);
    tci_strbuf_free(&sb);
    ck_assert_ptr_null(sb.data);
}
END_TEST

START_TEST(strbuf_stops_after_failure)
{
    StrBuf sb;
    tci_strbuf_init(&sb);
    tci_strbuf_printf(&sb, "kept");
    sb.failed = true; /* as after a failed realloc */
    tci_strbuf_printf(&sb, " dropped");
    ck_assert_str_eq(sb.data, "kept");
    ck_assert_uint_eq(sb.len, 4);
    tci_strbuf_free(&sb);
}
END_TEST

START_TEST(scope_and_tag_names)
{
    ck_assert_str_eq(tci_scope_name(TCC_SCOPE_GLOBAL), "global");
    ck_assert_str_eq(tci_scope_name(TCC_SCOPE_SHARED), "shared");
    ck_assert_str_eq(tci_scope_name(TCC_SCOPE_LOCAL), "local");
    ck_assert_str_eq(tci_scope_name(TCC_SCOPE_WMMA_MATRIX_A), "wmma.matrix_a");
    ck_assert_str_eq(tci_scope_name(TCC_SCOPE_WMMA_MATRIX_B), "wmma.matrix_b");
    ck_assert_str_eq(tci_scope_name(TCC_SCOPE_WMMA_ACCUMULATOR), "wmma.accumulator");
    ck_assert_str_eq(tci_thread_tag_name(TCC_BLOCK_X), "blockIdx.x");
    ck_assert_str_eq(tci_thread_tag_name(TCC_BLOCK_Y), "blockIdx.y");
    ck_assert_str_eq(tci_thread_tag_name(TCC_BLOCK_Z), "blockIdx.z");
    ck_assert_str_eq(tci_thread_tag_name(TCC_THREAD_X), "threadIdx.x");
    ck_assert_str_eq(tci_thread_tag_name(TCC_THREAD_Y), "threadIdx.y");
    ck_assert_str_eq(tci_thread_tag_name(TCC_THREAD_Z), "threadIdx.z");
}
END_TEST

/* ---- expressions -------------------------------------------------------------------- */

START_TEST(precedence_and_parentheses)
{
    check_expr(bin(EXPR_ADD, i, bin(EXPR_MUL, j, num(4))), "i + j * 4");
    check_expr(bin(EXPR_MUL, bin(EXPR_ADD, i, j), num(4)), "(i + j) * 4");
    check_expr(bin(EXPR_SUB, bin(EXPR_SUB, i, j), k), "i - j - k");
    check_expr(bin(EXPR_SUB, i, bin(EXPR_SUB, j, k)), "i - (j - k)");
    check_expr(bin(EXPR_ADD, i, bin(EXPR_ADD, j, k)), "i + (j + k)");
    check_expr(bin(EXPR_MUL, bin(EXPR_MUL, i, j), k), "i * j * k");
    Expr *lt = bin(EXPR_LT, bin(EXPR_ADD, i, num(1)), num(15));
    Expr *le = bin(EXPR_LE, num(1), j);
    check_expr(lt, "i + 1 < 15");
    check_expr(bin(EXPR_AND, le, lt), "1 <= j && i + 1 < 15");
    check_expr(bin(EXPR_OR, bin(EXPR_AND, le, lt), bin(EXPR_EQ, k, num(0))),
               "1 <= j && i + 1 < 15 || k == 0");
    check_expr(bin(EXPR_AND, bin(EXPR_OR, le, lt), bin(EXPR_NE, k, num(0))),
               "(1 <= j || i + 1 < 15) && k != 0");
    check_expr(bin(EXPR_EQ, bin(EXPR_LT, i, j), bin(EXPR_LT, j, k)), "(i < j) == (j < k)");
    check_expr(tci_ir_not(arena, bin(EXPR_OR, le, lt)), "!(1 <= j || i + 1 < 15)");
    check_expr(tci_ir_not(arena, i), "!i");
    check_expr(bin(EXPR_MIN, bin(EXPR_ADD, i, j), num(3)), "min(i + j, 3)");
    check_expr(bin(EXPR_MAX, i, num(0)), "max(i, 0)");
    check_expr(bin(EXPR_MUL, bin(EXPR_MIN, i, j), num(2)), "min(i, j) * 2");
}
END_TEST

START_TEST(floor_division_and_modulo)
{
    check_expr(bin(EXPR_DIV, i, num(14)), "i / 14");
    check_expr(bin(EXPR_MOD, i, num(14)), "i % 14");
    check_expr(bin(EXPR_ADD, bin(EXPR_DIV, i, num(14)), k), "i / 14 + k");
    check_expr(bin(EXPR_DIV, bin(EXPR_ADD, i, j), num(2)), "(i + j) / 2");
    check_expr(bin(EXPR_DIV, i, bin(EXPR_MUL, j, num(2))), "i / (j * 2)");
    check_expr(bin(EXPR_MUL, bin(EXPR_DIV, i, num(4)), num(4)), "i / 4 * 4");
    check_expr(bin(EXPR_MOD, bin(EXPR_MUL, i, num(4)), num(16)), "i * 4 % 16");
    check_expr(bin(EXPR_MOD, i, bin(EXPR_MOD, j, num(3))), "i % (j % 3)");
}
END_TEST

START_TEST(integer_and_bool_constants)
{
    check_expr(num(0), "0");
    check_expr(num(-7), "-7");
    check_expr(num(12845056), "12845056");
    check_expr(tci_ir_bool(arena, true), "true");
    check_expr(tci_ir_bool(arena, false), "false");
    /* Adding a negative constant reads as a subtraction, as TVM prints it. */
    check_expr(bin(EXPR_ADD, i, num(-61440)), "i - 61440");
    check_expr(bin(EXPR_SUB, i, num(-1)), "i - -1");
    check_expr(bin(EXPR_MUL, i, num(-1)), "i * -1");
}
END_TEST

START_TEST(float_constants)
{
    check_expr(tci_ir_float(arena, 0.0, TCC_FLOAT32), "0f");
    check_expr(tci_ir_float(arena, 1.5, TCC_FLOAT32), "1.5f");
    check_expr(tci_ir_float(arena, 0.1, TCC_FLOAT32), "0.1f");
    check_expr(tci_ir_float(arena, -2.25, TCC_FLOAT32), "-2.25f");
    check_expr(tci_ir_float(arena, 1e-3, TCC_FLOAT32), "0.001f");
    check_expr(tci_ir_float(arena, 65504.0, TCC_FLOAT16), "65504h");
    check_expr(tci_ir_float(arena, 0.0, TCC_FLOAT16), "0h");
    check_expr(tci_ir_float(arena, 1.0, TCC_BFLOAT16), "1bf");
    /* Full precision when the short form would name another number. */
    check_expr(tci_ir_float(arena, 0.1 + 0.2, TCC_FLOAT32), "0.30000000000000004f");
}
END_TEST

START_TEST(casts_selects_and_loads)
{
    Buffer *a = buffer("A", TCC_FLOAT16, TCC_SCOPE_GLOBAL, 2, 16, 16);
    Expr *ai = load2(a, i, bin(EXPR_ADD, j, num(1)));
    check_expr(ai, "A[i, j + 1]");
    check_expr(tci_ir_cast(arena, TCC_FLOAT32, ai), "float32(A[i, j + 1])");
    check_expr(tci_ir_cast(arena, TCC_FLOAT32, bin(EXPR_ADD, ai, ai)),
               "float32(A[i, j + 1] + A[i, j + 1])");
    check_expr(
        bin(EXPR_MUL, tci_ir_cast(arena, TCC_FLOAT32, ai), tci_ir_cast(arena, TCC_FLOAT32, ai)),
        "float32(A[i, j + 1]) * float32(A[i, j + 1])");
    check_expr(tci_ir_cast(arena, TCC_INT32, tci_ir_float(arena, 2.5, TCC_FLOAT32)), "int32(2.5f)");
    Expr *cond = bin(EXPR_AND, bin(EXPR_LE, num(1), bin(EXPR_ADD, bin(EXPR_DIV, i, num(14)), k)),
                     bin(EXPR_LT, bin(EXPR_ADD, bin(EXPR_DIV, i, num(14)), k), num(15)));
    check_expr(tci_ir_select(arena, cond, ai, tci_ir_float(arena, 0, TCC_FLOAT16)),
               "if_then_else(1 <= i / 14 + k && i / 14 + k < 15, A[i, j + 1], 0h)");
    Buffer *flat = buffer("B", TCC_FLOAT16, TCC_SCOPE_SHARED, 1, 256, 0);
    Expr *index = bin(EXPR_MUL, i, num(16));
    check_expr(tci_ir_load(arena, flat, 1, &index), "B[i * 16]");
}
END_TEST

START_TEST(ramps_and_vectors)
{
    Expr *ramp = tci_ir_ramp(arena, bin(EXPR_MUL, i, num(8)), 1, 8);
    check_expr(ramp, "ramp(i * 8, 1, 8)");
    Buffer *w = buffer("W", TCC_FLOAT16, TCC_SCOPE_GLOBAL, 1, 1024, 0);
    Expr *vload = tci_ir_load(arena, w, 1, &ramp);
    ck_assert_int_eq(vload->lanes, 8);
    check_expr(vload, "W[ramp(i * 8, 1, 8)]");
    check_expr(tci_ir_cast(arena, TCC_FLOAT32, vload), "float32x8(W[ramp(i * 8, 1, 8)])");
    Buffer *ws = buffer("W.shared", TCC_FLOAT16, TCC_SCOPE_SHARED, 1, 1024, 0);
    Expr *shifted = tci_ir_ramp(arena, bin(EXPR_ADD, bin(EXPR_MUL, i, num(8)), num(512)), 2, 4);
    check_stmt_at(tci_stmt_store(arena, ws, 1, &shifted, vload), 0,
                  "W.shared[ramp(i * 8 + 512, 2, 4)] = W[ramp(i * 8, 1, 8)]\n");
}
END_TEST

START_TEST(null_and_nameless_nodes_still_print)
{
    check_expr(NULL, "<null>");
    check_expr(tci_ir_var(arena, tci_var(arena, "", 3)), "");
    Var nameless = {.name = NULL, .id = 9};
    check_expr(tci_ir_var(arena, &nameless), "_v9");
    check_stmt_at(NULL, 3, "");
}
END_TEST

/* ---- statements --------------------------------------------------------------------- */

START_TEST(store_barrier_and_if)
{
    Buffer *c = buffer("C", TCC_FLOAT32, TCC_SCOPE_LOCAL, 2, 4, 4);
    Expr *index[2] = {i, j};
    Stmt *store = tci_stmt_store(arena, c, 2, index, tci_ir_float(arena, 0, TCC_FLOAT32));
    check_stmt_at(store, 0, "C[i, j] = 0f\n");
    check_stmt_at(store, 2, "    C[i, j] = 0f\n");
    check_stmt_at(tci_stmt_barrier(arena), 1, "  __syncthreads()\n");

    Stmt *then_only = tci_stmt_if(arena, bin(EXPR_LT, i, num(3)), store, NULL);
    check_stmt_at(then_only, 1,
                  "  if (i < 3) {\n"
                  "    C[i, j] = 0f\n"
                  "  }\n");
    Stmt *other = store1(c, k, tci_ir_float(arena, 1, TCC_FLOAT32));
    Stmt *both = tci_stmt_if(arena, bin(EXPR_LT, i, num(3)), store, other);
    check_stmt_at(both, 0,
                  "if (i < 3) {\n"
                  "  C[i, j] = 0f\n"
                  "} else {\n"
                  "  C[k] = 1f\n"
                  "}\n");
    Stmt *seq = tci_stmt_seq2(arena, tci_stmt_barrier(arena), store);
    check_stmt_at(seq, 1,
                  "  __syncthreads()\n"
                  "  C[i, j] = 0f\n");
}
END_TEST

START_TEST(loops_and_indentation)
{
    Buffer *c = buffer("C", TCC_FLOAT32, TCC_SCOPE_GLOBAL, 2, 16, 16);
    Expr *index[2] = {i, j};
    Stmt *store = tci_stmt_store(arena, c, 2, index, tci_ir_cast(arena, TCC_FLOAT32, k));
    Stmt *inner = tci_stmt_for(arena, vj, num(0), num(16), FOR_VECTORIZED, store);
    Stmt *middle = tci_stmt_for(arena, vi, num(0), num(2), FOR_UNROLLED, inner);
    Stmt *outer = tci_stmt_for(arena, vk, num(0), num(8), FOR_SERIAL,
                               tci_stmt_seq2(arena, middle, tci_stmt_barrier(arena)));
    check_stmt_at(outer, 1,
                  "  for k in 0..8 {\n"
                  "    unrolled for i in 0..2 {\n"
                  "      vectorized for j in 0..16 {\n"
                  "        C[i, j] = float32(k)\n"
                  "      }\n"
                  "    }\n"
                  "    __syncthreads()\n"
                  "  }\n");
    /* A loop that does not start at 0 shows its end, folded when constant. */
    check_stmt_at(tci_stmt_for(arena, vi, num(2), num(8), FOR_SERIAL, store), 0,
                  "for i in 2..10 {\n  C[i, j] = float32(k)\n}\n");
    check_stmt_at(tci_stmt_for(arena, vi, bin(EXPR_MUL, k, num(4)), num(4), FOR_SERIAL, store), 0,
                  "for i in k * 4..k * 4 + 4 {\n  C[i, j] = float32(k)\n}\n");
    check_stmt_at(tci_stmt_for(arena, vi, num(0), bin(EXPR_SUB, k, num(1)), FOR_SERIAL, store), 0,
                  "for i in 0..k - 1 {\n  C[i, j] = float32(k)\n}\n");
    check_stmt_at(tci_stmt_for(arena, vi, num(0), num(4), FOR_SERIAL, NULL), 0,
                  "for i in 0..4 {\n}\n");
}
END_TEST

START_TEST(thread_launches)
{
    Var *bz = tci_var(arena, "bz", 5);
    Var *tag_named = tci_var(arena, "threadIdx.x", 6);
    Stmt *body = tci_stmt_barrier(arena);
    Stmt *tx = tci_stmt_thread(arena, tag_named, TCC_THREAD_X, 32, body);
    check_stmt_at(tci_stmt_thread(arena, bz, TCC_BLOCK_Z, 196, tx), 1,
                  "  launch bz = blockIdx.z in 0..196 {\n"
                  "    launch threadIdx.x in 0..32 {\n"
                  "      __syncthreads()\n"
                  "    }\n"
                  "  }\n");
}
END_TEST

START_TEST(allocations)
{
    int64_t shape[6] = {2, 1, 1, 4, 16, 16};
    Buffer *acc = tci_ir_buffer(arena, "Conv.wmma.accumulator", TCC_FLOAT32,
                                TCC_SCOPE_WMMA_ACCUMULATOR, 6, shape);
    Stmt *body = store1(acc, i, tci_ir_float(arena, 0, TCC_FLOAT32));
    check_stmt_at(
        tci_stmt_allocate(arena, acc, body), 1,
        "  allocate Conv.wmma.accumulator: float32 wmma.accumulator [2, 1, 1, 4, 16, 16] {\n"
        "    Conv.wmma.accumulator[i] = 0f\n"
        "  }\n");
    Buffer *shared = buffer("Apad.shared", TCC_FLOAT16, TCC_SCOPE_SHARED, 2, 3, 16);
    shared->min[0] = bin(EXPR_SUB, k, num(1));
    check_stmt_at(tci_stmt_allocate(arena, shared, tci_stmt_barrier(arena)), 0,
                  "allocate Apad.shared: float16 shared [3, 16] min [k - 1, 0] {\n"
                  "  __syncthreads()\n"
                  "}\n");
}
END_TEST

START_TEST(wmma_operations)
{
    Buffer *acc =
        buffer("Conv.wmma.accumulator", TCC_FLOAT32, TCC_SCOPE_WMMA_ACCUMULATOR, 1, 2048, 0);
    Buffer *fa =
        buffer("Apad.shared.wmma.matrix_a", TCC_FLOAT16, TCC_SCOPE_WMMA_MATRIX_A, 1, 512, 0);
    Buffer *fb = buffer("W.shared.wmma.matrix_b", TCC_FLOAT16, TCC_SCOPE_WMMA_MATRIX_B, 1, 1024, 0);
    Buffer *sa = buffer("Apad.shared", TCC_FLOAT16, TCC_SCOPE_SHARED, 2, 48, 256);
    Buffer *out = buffer("Conv", TCC_FLOAT32, TCC_SCOPE_GLOBAL, 1, 1 << 20, 0);

    WmmaStmt fill = wmma_op(WMMA_FILL, 16, 16, 16, acc, bin(EXPR_ADD, bin(EXPR_MUL, i, num(4)), j));
    check_stmt_at(tci_stmt_wmma(arena, &fill), 1,
                  "  wmma.fill_fragment(Conv.wmma.accumulator[i * 4 + j], 0)    // m16n16k16\n");

    Expr *tile[2] = {bin(EXPR_MUL, i, num(16)), num(0)};
    WmmaStmt load_a = wmma_op(WMMA_LOAD_A, 16, 16, 16, fa, i);
    check_stmt_at(wmma_memory(load_a, sa, 2, tile, 16), 0,
                  "wmma.load_matrix_a(Apad.shared.wmma.matrix_a[i], &Apad.shared[i * 16, 0], "
                  "stride 16, row_major)    // m16n16k16\n");

    WmmaStmt load_b = wmma_op(WMMA_LOAD_B, 32, 8, 16, fb, j);
    load_b.col_major = true;
    check_stmt_at(wmma_memory(load_b, sa, 2, tile, 16), 0,
                  "wmma.load_matrix_b(W.shared.wmma.matrix_b[j], &Apad.shared[i * 16, 0], "
                  "stride 16, col_major)    // m32n8k16\n");

    Expr *ci = bin(EXPR_ADD, bin(EXPR_MUL, i, num(4)), j);
    check_stmt_at(wmma_mma(16, 16, 16, acc, ci, fa, i, fb, j), 0,
                  "wmma.mma_sync(Conv.wmma.accumulator[i * 4 + j], "
                  "Apad.shared.wmma.matrix_a[i], W.shared.wmma.matrix_b[j], "
                  "Conv.wmma.accumulator[i * 4 + j])    // m16n16k16\n");

    Expr *offset = bin(EXPR_ADD, bin(EXPR_MUL, k, num(8192)), bin(EXPR_MUL, j, num(256)));
    check_stmt_at(wmma_memory(wmma_op(WMMA_STORE, 16, 16, 16, acc, ci), out, 1, &offset, 16), 0,
                  "wmma.store_matrix(&Conv[k * 8192 + j * 256], Conv.wmma.accumulator[i * 4 + j], "
                  "stride 16, row_major)    // m16n16k16\n");
}
END_TEST

/* ---- a whole kernel ----------------------------------------------------------------- */

START_TEST(kernel_header_and_body)
{
    int64_t a_shape[6] = {16, 14, 14, 16, 16, 16};
    int64_t w_shape[6] = {3, 3, 16, 32, 16, 16};
    int64_t c_shape[6] = {16, 14, 14, 32, 16, 16};
    Buffer *params[3] = {
        tci_ir_buffer(arena, "A", TCC_FLOAT16, TCC_SCOPE_GLOBAL, 6, a_shape),
        tci_ir_buffer(arena, "W", TCC_FLOAT16, TCC_SCOPE_GLOBAL, 6, w_shape),
        tci_ir_buffer(arena, "Conv", TCC_FLOAT32, TCC_SCOPE_GLOBAL, 6, c_shape),
    };
    Var *bz = tci_var(arena, "blockIdx.z", 3);
    Expr *index = bin(EXPR_MUL, tci_ir_var(arena, bz), num(16));
    Stmt *store =
        tci_stmt_store(arena, params[2], 1, &index, tci_ir_float(arena, 0.0, TCC_FLOAT32));
    PrimFunc kernel = {
        .name = "conv2d",
        .arena = arena,
        .nparam = 3,
        .params = params,
        .launch = {2, 4, 196, 32, 4, 2},
        .body = tci_stmt_thread(arena, bz, TCC_BLOCK_Z, 196, store),
    };
    char *text = prim_func_text(&kernel);
    ck_assert_str_eq(text,
                     "// \"/\" and \"%\" are floor division and modulo\n"
                     "kernel conv2d(float16 A[16, 14, 14, 16, 16, 16], "
                     "float16 W[3, 3, 16, 32, 16, 16], float32 Conv[16, 14, 14, 32, 16, 16])\n"
                     "  grid(2, 4, 196) block(32, 4, 2)\n"
                     "{\n"
                     "  launch blockIdx.z in 0..196 {\n"
                     "    Conv[blockIdx.z * 16] = 0f\n"
                     "  }\n"
                     "}\n");
    free(text);
}
END_TEST

/* ---- compute definitions (tensors come from the public API) ------------------------- */

START_TEST(tensor_access_and_reduce)
{
    tcc_context *ctx = test_context();
    tcc_func *func = NULL;
    ck_assert_int_eq(tcc_func_create(ctx, "f", &func), TCC_OK);
    int64_t shape[2] = {16, 16};
    tcc_tensor *a = tcc_placeholder(func, "A", 2, shape, TCC_FLOAT16);
    tcc_iter_var *rk = tcc_reduce_axis(func, "rk", 16);
    tcc_iter_var *rc = tcc_reduce_axis(func, "rc.inner", 4);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(rk);
    ck_assert_ptr_nonnull(rc);
    Expr *index[2] = {i, bin(EXPR_ADD, j, k)};
    Expr *access = tci_ir_access(arena, a, 2, index);
    check_expr(access, "A(i, j + k)");
    Expr *cast = tci_ir_cast(arena, TCC_FLOAT32, access);
    IterVar *axes[2] = {rk, rc};
    check_expr(tci_ir_reduce(arena, bin(EXPR_MUL, cast, cast), 2, axes),
               "sum(float32(A(i, j + k)) * float32(A(i, j + k)), axis=[rk, rc.inner])");
    check_expr(tci_ir_reduce(arena, cast, 1, axes), "sum(float32(A(i, j + k)), axis=[rk])");
    tcc_func_destroy(func);
    tcc_context_destroy(ctx);
}
END_TEST

static Suite *ir_print_suite(void)
{
    Suite *s = suite_create("ir_print");
    TCase *tc = test_case(s, "printer", setup, ir_teardown);
    tcase_add_test(tc, strbuf_grows_and_stays_terminated);
    tcase_add_test(tc, strbuf_stops_after_failure);
    tcase_add_test(tc, scope_and_tag_names);
    tcase_add_test(tc, precedence_and_parentheses);
    tcase_add_test(tc, floor_division_and_modulo);
    tcase_add_test(tc, integer_and_bool_constants);
    tcase_add_test(tc, float_constants);
    tcase_add_test(tc, casts_selects_and_loads);
    tcase_add_test(tc, ramps_and_vectors);
    tcase_add_test(tc, null_and_nameless_nodes_still_print);
    tcase_add_test(tc, store_barrier_and_if);
    tcase_add_test(tc, loops_and_indentation);
    tcase_add_test(tc, thread_launches);
    tcase_add_test(tc, allocations);
    tcase_add_test(tc, wmma_operations);
    tcase_add_test(tc, kernel_header_and_body);
    tcase_add_test(tc, tensor_access_and_reduce);
    return s;
}

TEST_MAIN(ir_print_suite)
