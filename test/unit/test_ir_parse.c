/*
 * The parser of the loop IR on hand-written text: every construct the printer writes reads
 * back into IR that prints the same text, with the types, lanes and bindings the
 * constructors would give. Malformed text: test_ir_parse_errors.c; the text after every
 * pass of real kernels: test_ir_parse_kernels.c.
 */
#include "ir_parse_support.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers -------------------------------------------------------------------------- */

static PrimFunc *parse(const char *text)
{
    PrimFunc *kernel = NULL;
    tcc_status status = tci_parse_prim_func(ctx, arena, text, &kernel);
    ck_assert_msg(status == TCC_OK, "%s\nin:\n%s", tcc_last_error(ctx), text);
    ck_assert_ptr_nonnull(kernel);
    return kernel;
}

/* prim_func_text(parse(text)) == expected, byte for byte. */
static void check_prints(const char *text, const char *expected)
{
    char *printed = prim_func_text(parse(text));
    size_t at = 0;
    while (printed[at] && printed[at] == expected[at])
        at++;
    /* From the line before the first difference: the texts may be long. */
    size_t from = at;
    for (int lines = 0; from > 0 && lines < 2; from--)
        lines += printed[from - 1] == '\n';
    ck_assert_msg(printed[at] == expected[at], "at byte %zu, got:\n%.500s\nexpected:\n%.500s", at,
                  printed + from, expected + from);
    free(printed);
}

static void check_round_trip(const char *text)
{
    check_prints(text, text);
}

/* The stored value of expr_kernel's statement. */
static const Expr *parse_expr_of(const char *expr)
{
    return parse(expr_kernel(expr))->body->loop.body->loop.body->store.value;
}

/* ---- every construct reads back as printed ---------------------------------------------- */

START_TEST(kernel_header_and_parameters)
{
    check_round_trip(HEADER "kernel conv2d(float16 A[16, 14, 14, 16, 16, 16], bfloat16 B[3], "
                            "int8 C[1, 2, 3, 4, 5, 6, 7, 8], bool D[], int32 E[0])\n"
                            "  grid(2, 4, 196) block(32, 4, 2)\n"
                            "{\n"
                            "}\n");
    check_round_trip(HEADER "kernel empty()\n  grid(1, 1, 1) block(1, 1, 1)\n{\n}\n");
}
END_TEST

START_TEST(loops_and_ranges)
{
    check_round_trip(KERNEL("  for i in 0..8 {\n"
                            "    unrolled for j in 4..12 {\n"
                            "      vectorized for k in i * 2..i * 2 + j {\n"
                            "        for l in k..k - 3 {\n"
                            "          A[l] = 1f\n"
                            "        }\n"
                            "        for l in I[k]..I[k] + (k - 1) {\n"
                            "        }\n"
                            "      }\n"
                            "    }\n"
                            "    for m in 2..2 + I[i] {\n"
                            "      A[m] = A[i]\n"
                            "    }\n"
                            "    for m in -4..-2 {\n"
                            "    }\n"
                            "    for m in 0..i - 1 {\n"
                            "    }\n"
                            "  }\n"));
}
END_TEST

START_TEST(launches)
{
    check_round_trip(KERNEL("  launch blockIdx.x in 0..2 {\n"
                            "    launch threadIdx.x in 0..32 {\n"
                            "      launch tx = threadIdx.y in 1..5 {\n"
                            "        A[blockIdx.x * 32 + threadIdx.x + tx] = 0f\n"
                            "      }\n"
                            "    }\n"
                            "    launch threadIdx.x in 0..16 {\n"
                            "      launch threadIdx.y = threadIdx.z in 0..blockIdx.x + 1 {\n"
                            "        A[threadIdx.y] = 0f\n"
                            "      }\n"
                            "    }\n"
                            "  }\n"));
}
END_TEST

START_TEST(branches_and_barriers)
{
    check_round_trip(KERNEL("  for i in 0..8 {\n"
                            "    if (i < 4) {\n"
                            "      A[i] = 1f\n"
                            "    }\n"
                            "    if (i % 2 == 0) {\n"
                            "      A[i] = 2f\n"
                            "    } else {\n"
                            "      A[i] = 3f\n"
                            "      __syncthreads()\n"
                            "    }\n"
                            "    if ((i < 4) == (i <= 2)) {\n"
                            "    } else {\n"
                            "    }\n"
                            "  }\n"
                            "  __syncthreads()\n"));
}
END_TEST

START_TEST(allocations)
{
    check_round_trip(KERNEL("  for i in 0..8 {\n"
                            "    allocate S: float16 shared [2, 8] min [i, 0] {\n"
                            "      allocate R: float32 local [4] {\n"
                            "        allocate Z: int32 shared [2, 2] min [0, 0] {\n"
                            "          S[i, 0] = H[i, 0]\n"
                            "          R[i % 4] = A[i]\n"
                            "          Z[0, 1] = I[i]\n"
                            "        }\n"
                            "      }\n"
                            "      allocate T: bfloat16 global [] {\n"
                            "      }\n"
                            "    }\n"
                            "  }\n"));
}
END_TEST

START_TEST(wmma_statements)
{
    check_round_trip(
        KERNEL("  allocate F: float32 wmma.accumulator [2, 16, 16] {\n"
               "    allocate FA: float16 wmma.matrix_a [1, 16, 16] {\n"
               "      allocate FB: float16 wmma.matrix_b [1, 16, 16] {\n"
               "        wmma.fill_fragment(F[0], 0)    // m16n16k16\n"
               "        wmma.fill_fragment(F[1], -1.5)    // m16n16k16\n"
               "        wmma.fill_fragment(F[1], 1e-05)    // m8n32k16\n"
               "        wmma.fill_fragment(F[0], -inf)    // m16n16k16\n"
               "        wmma.fill_fragment(F[0], nan)    // m16n16k16\n"
               "        wmma.load_matrix_a(FA[0], &H[0, 0], stride 8, row_major)    "
               "// m16n16k16\n"
               "        wmma.load_matrix_b(FB[I[0]], &H[0], stride 16, col_major)    "
               "// m32n8k16\n"
               "        wmma.mma_sync(F[1], FA[0], FB[0], F[0])    // m16n16k16\n"
               "        wmma.store_matrix(&A[I[1] * 16], F[1], stride 64, row_major)    "
               "// m16n16k8\n"
               "      }\n"
               "    }\n"
               "  }\n"));
}
END_TEST

START_TEST(expressions)
{
    static const char *const exprs[] = {
        "i + 1",
        "i - 5",
        "i - -5",
        "i * -1",
        "-3 * i",
        "i + 2 * 3",
        "(i + 2) * 3",
        "i - (2 - threadIdx.x)",
        "i - 2 - threadIdx.x",
        "i / 4 % 2",
        "i / (4 % 2)",
        "i + -9223372036854775808",
        "9223372036854775807",
        "i + 0",
        "i * 1",
        "if_then_else(i < 4 && threadIdx.x <= 3 || !(i == 2), 1f, 2f)",
        "if_then_else((i < 4) == (i != 3), A[i], A[0])",
        "if_then_else(!!(i < 1) && (true || false), 1h, 2h)",
        "if_then_else(!true || false, min(i, 3) + max(-1, i), I[0])",
        "float32(H[i, threadIdx.x])",
        "float32(float16(i))",
        "float32(A[i])",
        "int8(bfloat16(i))",
        "1e-05f + 0.1f - -0.5f * 0h / 2bf",
        "1e+10f",
        "-0f",
        "float32(inf)",
        "float32(-inf)",
        "float16(nan)",
        "float32x8(broadcast(i, 8))",
        "broadcast(1.5f, 8) * A[ramp(i, 2, 8)]",
        "broadcast(-1, 4) + broadcast(float32(inf), 4)",
        "if_then_else(broadcast(true, 2), ramp(i, -1, 2), ramp(0, 0, 2))",
        "A[i * 8 + (threadIdx.x - 1)] + H[i, i] * H[0, 1]",
    };
    for (size_t e = 0; e < sizeof exprs / sizeof exprs[0]; e++)
        check_round_trip(expr_kernel(exprs[e]));
}
END_TEST

START_TEST(comments_and_blank_lines)
{
    check_prints("\n// a comment before the header\n" HEADER "kernel k(float32 A[64])\n"
                 "  grid(1, 1, 1) block(1, 1, 1)\n"
                 "{\n"
                 "\n"
                 "  // why this loop\n"
                 "  for i in 0..8 {\n"
                 "      // indented differently\n"
                 "\n"
                 "    A[i] = 1f\n"
                 "  }\n"
                 "}\n"
                 "// the end\n",
                 HEADER "kernel k(float32 A[64])\n"
                        "  grid(1, 1, 1) block(1, 1, 1)\n"
                        "{\n"
                        "  for i in 0..8 {\n"
                        "    A[i] = 1f\n"
                        "  }\n"
                        "}\n");
}
END_TEST

START_TEST(long_names_and_deep_nesting_work)
{
    /* A 100000-character variable name, and expressions and loops 1000 levels deep. */
    size_t n = 100000;
    char *name = tci_arena_alloc(arena, n + 1);
    memset(name, 'v', n);
    char *text = tci_arena_printf(arena, "%s  for %s in 0..2 {\n    A[%s] = 1f\n  }\n}\n",
                                  KERNEL_OPEN, name, name);
    check_round_trip(text);
    StrBuf sb;
    tci_strbuf_init(&sb);
    tci_strbuf_printf(&sb, "i");
    for (int d = 0; d < 999; d++)
        tci_strbuf_printf(&sb, " - (i");
    tci_strbuf_printf(&sb, " - i");
    for (int d = 0; d < 999; d++)
        tci_strbuf_printf(&sb, ")");
    check_round_trip(expr_kernel(sb.data));
    tci_strbuf_free(&sb);
    tci_strbuf_init(&sb);
    tci_strbuf_printf(&sb, "%s",
                      HEADER "kernel k(float32 A[64])\n  grid(1, 1, 1) block(1, 1, 1)\n{\n");
    for (int d = 0; d < 1000; d++)
        tci_strbuf_printf(&sb, "%*sfor i in 0..2 {\n", 2 * (d + 1), "");
    for (int d = 999; d >= 0; d--)
        tci_strbuf_printf(&sb, "%*s}\n", 2 * (d + 1), "");
    tci_strbuf_printf(&sb, "}\n");
    ck_assert(!sb.failed);
    check_round_trip(sb.data);
    tci_strbuf_free(&sb);
}
END_TEST

/* ---- the structure printing cannot show -------------------------------------------------- */

START_TEST(minus_a_constant_is_a_subtraction)
{
    const Expr *e = parse_expr_of("i - 5");
    ck_assert_int_eq(e->kind, EXPR_SUB);
    ck_assert_int_eq(e->bin.b->kind, EXPR_INT);
    ck_assert_int_eq(e->bin.b->int_value, 5);
    e = parse_expr_of("i - -5");
    ck_assert_int_eq(e->kind, EXPR_SUB);
    ck_assert_int_eq(e->bin.b->int_value, -5);
    e = parse_expr_of("i * -1");
    ck_assert_int_eq(e->kind, EXPR_MUL);
    ck_assert_int_eq(e->bin.b->int_value, -1);
}
END_TEST

START_TEST(nothing_is_folded)
{
    const Expr *e = parse_expr_of("i + 0");
    ck_assert_int_eq(e->kind, EXPR_ADD);
    e = parse_expr_of("2 * 3");
    ck_assert_int_eq(e->kind, EXPR_MUL);
    e = parse_expr_of("float32(A[i])");
    ck_assert_int_eq(e->kind, EXPR_CAST);
    ck_assert_int_eq(e->cast.value->kind, EXPR_LOAD);
}
END_TEST

START_TEST(types_and_lanes_follow_the_constructors)
{
    const Expr *e = parse_expr_of("A[i] * 2f");
    ck_assert_int_eq(e->type, TCC_FLOAT32);
    ck_assert_int_eq(e->bin.b->kind, EXPR_FLOAT);
    ck_assert(e->bin.b->float_value == 2.0);
    e = parse_expr_of("if_then_else(i < 4 && true, 1h, 2bf)");
    ck_assert_int_eq(e->kind, EXPR_SELECT);
    ck_assert_int_eq(e->type, TCC_FLOAT16);
    ck_assert_int_eq(e->select.cond->type, TCC_BOOL);
    ck_assert_int_eq(e->select.cond->bin.a->type, TCC_BOOL);
    ck_assert_int_eq(e->select.cond->bin.b->kind, EXPR_INT);
    ck_assert_int_eq(e->select.cond->bin.b->type, TCC_BOOL);
    ck_assert_int_eq(e->select.else_value->type, TCC_BFLOAT16);
    e = parse_expr_of("broadcast(1.5f, 8) * A[ramp(i, 2, 8)]");
    ck_assert_int_eq(e->lanes, 8);
    ck_assert_int_eq(e->bin.a->kind, EXPR_FLOAT);
    ck_assert_int_eq(e->bin.a->lanes, 8);
    ck_assert_int_eq(e->bin.b->kind, EXPR_LOAD);
    ck_assert_int_eq(e->bin.b->lanes, 8);
    ck_assert_int_eq(e->bin.b->load.index[0]->kind, EXPR_RAMP);
    ck_assert_int_eq(e->bin.b->load.index[0]->type, TCC_INT32);
    ck_assert_int_eq(e->bin.b->load.index[0]->ramp.stride, 2);
    e = parse_expr_of("float16x4(broadcast(i, 4))");
    ck_assert_int_eq(e->kind, EXPR_CAST);
    ck_assert_int_eq(e->type, TCC_FLOAT16);
    ck_assert_int_eq(e->lanes, 4);
    ck_assert_int_eq(e->cast.value->kind, EXPR_VAR);
    ck_assert_int_eq(e->cast.value->lanes, 4);
    e = parse_expr_of("H[i, 0] + float16(-inf)");
    ck_assert_int_eq(e->type, TCC_FLOAT16);
    ck_assert_int_eq(e->lanes, 1);
    ck_assert(isinf(e->bin.b->float_value) && e->bin.b->float_value < 0);
    e = parse_expr_of("!(i < 2)");
    ck_assert_int_eq(e->kind, EXPR_NOT);
    ck_assert_int_eq(e->type, TCC_BOOL);
    e = parse_expr_of("min(I[i], 3)");
    ck_assert_int_eq(e->kind, EXPR_MIN);
    ck_assert_int_eq(e->type, TCC_INT32);
}
END_TEST

START_TEST(uses_point_to_the_innermost_binding)
{
    PrimFunc *k = parse(KERNEL("  for i in 0..2 {\n"
                               "    A[i] = 0f\n"
                               "    for i in 0..3 {\n"
                               "      A[i] = 1f\n"
                               "    }\n"
                               "  }\n"));
    const Stmt *outer = k->body, *first = outer->loop.body->seq.items[0];
    const Stmt *inner = outer->loop.body->seq.items[1];
    ck_assert_ptr_ne(outer->loop.var, inner->loop.var);
    ck_assert_ptr_eq(first->store.index[0]->var, outer->loop.var);
    ck_assert_ptr_eq(inner->loop.body->store.index[0]->var, inner->loop.var);
    ck_assert_str_eq(inner->loop.var->name, "i");
    ck_assert_int_ne(outer->loop.var->id, inner->loop.var->id);
    ck_assert_int_gt(k->next_var_id, outer->loop.var->id);
    ck_assert_int_gt(k->next_var_id, inner->loop.var->id);
}
END_TEST

START_TEST(ranges_give_min_and_extent)
{
    PrimFunc *k = parse(KERNEL("  for i in 4..12 {\n"
                               "    for j in i..i + 8 {\n"
                               "      for l in j..j - 3 {\n"
                               "      }\n"
                               "    }\n"
                               "  }\n"));
    const Stmt *i = k->body, *j = i->loop.body, *l = j->loop.body;
    ck_assert(tci_expr_is_int(i->loop.min, 4));
    ck_assert(tci_expr_is_int(i->loop.extent, 8));
    ck_assert_int_eq(j->loop.min->kind, EXPR_VAR);
    ck_assert_ptr_eq(j->loop.min->var, i->loop.var);
    ck_assert(tci_expr_is_int(j->loop.extent, 8));
    ck_assert(tci_expr_is_int(l->loop.extent, -3));
    /* { } is an empty sequence, as the compiler's constructors make it (not NULL). */
    ck_assert_int_eq(l->loop.body->kind, STMT_SEQ);
    ck_assert_int_eq(l->loop.body->seq.count, 0);
    ck_assert_int_eq(i->loop.kind, FOR_SERIAL);
}
END_TEST

START_TEST(parameters_and_allocations)
{
    PrimFunc *k = parse(KERNEL("  allocate A: float16 shared [2, 8] min [0, I[0]] {\n"
                               "    A[0, 1] = H[0, 0]\n"
                               "  }\n"
                               "  allocate Z: int32 local [2] min [0] {\n"
                               "  }\n"));
    ck_assert_int_eq(k->nparam, 3);
    for (int p = 0; p < 3; p++) {
        ck_assert_int_eq(k->params[p]->param_index, p);
        ck_assert_int_eq(k->params[p]->scope, TCC_SCOPE_GLOBAL);
    }
    ck_assert_str_eq(k->params[1]->name, "H");
    ck_assert_int_eq(k->params[1]->type, TCC_FLOAT16);
    ck_assert_int_eq(k->params[1]->ndim, 2);
    ck_assert_int_eq(k->params[1]->elements, 64);
    ck_assert_int_eq(k->params[2]->type, TCC_INT32);
    static const int64_t launch[6] = {2, 1, 1, 32, 4, 1};
    for (int d = 0; d < 6; d++)
        ck_assert_int_eq(k->launch[d], launch[d]);
    /* The allocation shadows the parameter A in its body. */
    const Stmt *alloc = k->body->seq.items[0];
    const Buffer *s = alloc->alloc.buffer;
    ck_assert_int_eq(s->scope, TCC_SCOPE_SHARED);
    ck_assert_int_eq(s->param_index, -1);
    ck_assert_int_eq(s->elements, 16);
    ck_assert_ptr_null(s->min[0]);
    ck_assert_int_eq(s->min[1]->kind, EXPR_LOAD);
    ck_assert_ptr_eq(alloc->alloc.body->store.buffer, s);
    ck_assert_ptr_eq(alloc->alloc.body->store.value->load.buffer, k->params[1]);
    /* A zero start alone is kept, or the list would not print. */
    const Buffer *z = k->body->seq.items[1]->alloc.buffer;
    ck_assert(tci_expr_is_int(z->min[0], 0));
}
END_TEST

START_TEST(thread_variables)
{
    PrimFunc *k = parse(KERNEL("  launch threadIdx.x in 0..32 {\n"
                               "    A[threadIdx.x] = 0f\n"
                               "  }\n"
                               "  launch threadIdx.x in 8..16 {\n"
                               "    launch ty = threadIdx.y in 0..4 {\n"
                               "      A[threadIdx.x + ty] = 0f\n"
                               "    }\n"
                               "  }\n"));
    const Stmt *first = k->body->seq.items[0], *second = k->body->seq.items[1];
    const Stmt *ty = second->loop.body;
    Var *tx = k->thread_var[TCC_THREAD_X];
    ck_assert_ptr_nonnull(tx);
    ck_assert_str_eq(tx->name, "threadIdx.x");
    /* Every launch of an index shares the kernel's variable, as lowering makes them. */
    ck_assert_ptr_eq(first->loop.var, tx);
    ck_assert_ptr_eq(second->loop.var, tx);
    ck_assert_ptr_eq(first->loop.body->store.index[0]->var, tx);
    ck_assert_int_eq(first->loop.kind, FOR_THREAD);
    ck_assert_int_eq(first->loop.tag, TCC_THREAD_X);
    ck_assert(tci_expr_is_int(second->loop.min, 8));
    ck_assert(tci_expr_is_int(second->loop.extent, 8));
    ck_assert_int_eq(ty->loop.tag, TCC_THREAD_Y);
    ck_assert_str_eq(ty->loop.var->name, "ty");
    ck_assert_ptr_eq(k->thread_var[TCC_THREAD_Y], ty->loop.var);
    ck_assert_ptr_eq(ty->loop.body->store.index[0]->bin.b->var, ty->loop.var);
    ck_assert_ptr_null(k->thread_var[TCC_BLOCK_X]);
}
END_TEST

START_TEST(nameless_variables_keep_their_number)
{
    PrimFunc *k = parse(KERNEL("  for _v7 in 0..2 {\n"
                               "    A[_v7] = 0f\n"
                               "  }\n"));
    ck_assert_ptr_null(k->body->loop.var->name);
    ck_assert_int_eq(k->body->loop.var->id, 7);
    ck_assert_int_eq(k->next_var_id, 8);
}
END_TEST

START_TEST(wmma_fields)
{
    PrimFunc *k = parse(KERNEL("  allocate F: float32 wmma.accumulator [2, 16, 16] {\n"
                               "    wmma.fill_fragment(F[1], -2.5)    // m32n8k16\n"
                               "    wmma.load_matrix_b(F[0], &H[1, 2], stride 8, col_major)    "
                               "// m16n16k16\n"
                               "    wmma.mma_sync(F[1], F[0], F[0], F[1])    // m16n16k8\n"
                               "  }\n"));
    const Stmt *body = k->body->alloc.body;
    const Buffer *f = k->body->alloc.buffer;
    const WmmaStmt *fill = &body->seq.items[0]->wmma, *load = &body->seq.items[1]->wmma;
    const WmmaStmt *mma = &body->seq.items[2]->wmma;
    ck_assert_int_eq(fill->op, WMMA_FILL);
    ck_assert(fill->fill_value == -2.5);
    ck_assert_int_eq(fill->m, 32);
    ck_assert_int_eq(fill->n, 8);
    ck_assert_int_eq(fill->k, 16);
    ck_assert_ptr_eq(fill->fragment, f);
    ck_assert(tci_expr_is_int(fill->fragment_index, 1));
    ck_assert_int_eq(load->op, WMMA_LOAD_B);
    ck_assert_ptr_eq(load->memory, k->params[1]);
    ck_assert_int_eq(load->nindex, 2);
    ck_assert(tci_expr_is_int(load->memory_index[1], 2));
    ck_assert_int_eq(load->stride, 8);
    ck_assert(load->col_major);
    ck_assert_int_eq(mma->op, WMMA_MMA);
    ck_assert_ptr_eq(mma->c, f);
    ck_assert(tci_expr_is_int(mma->c_index, 1));
    ck_assert_int_eq(mma->k, 8);
}
END_TEST

static Suite *parse_suite(void)
{
    Suite *suite = suite_create("ir_parse");
    TCase *constructs = test_case(suite, "constructs", ir_context_setup, ir_context_teardown);
    tcase_add_test(constructs, kernel_header_and_parameters);
    tcase_add_test(constructs, loops_and_ranges);
    tcase_add_test(constructs, launches);
    tcase_add_test(constructs, branches_and_barriers);
    tcase_add_test(constructs, allocations);
    tcase_add_test(constructs, wmma_statements);
    tcase_add_test(constructs, expressions);
    tcase_add_test(constructs, comments_and_blank_lines);
    tcase_add_test(constructs, long_names_and_deep_nesting_work);

    TCase *structure = test_case(suite, "structure", ir_context_setup, ir_context_teardown);
    tcase_add_test(structure, minus_a_constant_is_a_subtraction);
    tcase_add_test(structure, nothing_is_folded);
    tcase_add_test(structure, types_and_lanes_follow_the_constructors);
    tcase_add_test(structure, uses_point_to_the_innermost_binding);
    tcase_add_test(structure, ranges_give_min_and_extent);
    tcase_add_test(structure, parameters_and_allocations);
    tcase_add_test(structure, thread_variables);
    tcase_add_test(structure, nameless_variables_keep_their_number);
    tcase_add_test(structure, wmma_fields);
    return suite;
}

TEST_MAIN(parse_suite)
