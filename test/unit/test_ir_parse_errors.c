/*
 * The parser of the loop IR on malformed text: each error one line that says where
 * (line:column) and what, long names clipped, nesting bounded, and every prefix of a kernel
 * refused without reading past its end. What well-formed text reads back into:
 * test_ir_parse.c.
 */
#include "ir_parse_support.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors --------------------------------------------------------------------------- */

/* `text` is refused: no kernel, and the error is `expected`, one line. */
static void check_error(const char *text, const char *expected)
{
    PrimFunc *kernel = NULL;
    ck_assert_int_eq(tci_parse_prim_func(ctx, arena, text, &kernel), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(kernel);
    ck_assert_str_eq(tcc_last_error(ctx), expected);
    assert_one_line(ctx);
}

START_TEST(errors_say_where_and_what)
{
    check_error(KERNEL("  A[0, 1) = 0f\n"),
                "5:9: expected ']' after the indices of 'A', found ')'");
    check_error(KERNEL("  for i in 0..8 {\n    A[j] = 0f\n  }\n"), "6:7: unknown variable 'j'");
    check_error(KERNEL("  for i in 0..8 {\n  }\n  A[i] = 0f\n"), "7:5: unknown variable 'i'");
    check_error(KERNEL("  B[0] = 0f\n"), "5:3: unknown buffer 'B'");
    check_error(KERNEL("  A[0] = C[1]\n"), "5:10: unknown buffer 'C'");
    check_error(HEADER "kernel k(float17 A[4])\n", "2:10: expected a type such as 'float16' for a "
                                                   "parameter, found 'float17'");
    check_error(KERNEL("  A[0] = float16x8(1h)\n"),
                "5:20: wrong lanes: the cast to 'float16x8' needs a value of 8 lanes, found 1");
    check_error(KERNEL("  A[0] = float16x1(1h)\n"),
                "5:10: wrong lanes in the type 'float16x1': expected 2 to 65536 after the 'x'");
    check_error(KERNEL("  A[0] = broadcast(1f, 1)\n"),
                "5:24: expected the lanes of 'broadcast' from 2 to 65536, found 1");
    check_error(KERNEL("  allocate F: float32 wmma.accumulator [16, 16] {\n"
                       "    wmma.fill_fragment(F[0], 0)\n"
                       "  }\n"),
                "6:32: expected the MMA shape '// mMnNkK' after the wmma statement, found end "
                "of line");
    check_error(KERNEL("  A[0] = 0f\n") "}\n",
                "7:1: expected the end of the input after the kernel's '}', found '}'");
    check_error(KERNEL("  A[0] = 0f 1\n"), "5:13: expected a statement, found '1'");
    check_error(KERNEL("  for i in 0..8 {\n"),
                "7:1: expected '}' to close the '{' of 4:1, found end of input");
    check_error(KERNEL("  A[0] = 1.5\n"), "5:13: expected the suffix 'f', 'h' or 'bf' of the "
                                          "float literal '1.5', found end of line");
    check_error(KERNEL("  A[0] = if_then_else(1 < 2 < 3, 1f, 0f)\n"),
                "5:29: comparisons do not chain: parenthesize the left one before '<'");
    check_error(KERNEL("  for i in 0..8 {\n    for j in i..1 + 8 {\n    }\n  }\n"),
                "6:17: expected the end of the range as 'START + extent', START being what "
                "precedes '..', found '1'");
    check_error(KERNEL("  A[0] = sqrt(2f)\n"), "5:10: unknown function 'sqrt'");
    check_error(KERNEL("  A[0] = 99999999999999999999\n"),
                "5:10: an integer '99999999999999999999' does not fit in 64 bits");
    check_error(KERNEL("  A[0] == 1f\n"), "5:8: expected '=' after the indices of 'A', found '=='");
    check_error(KERNEL("  launch threadIdx.w in 0..2 {\n  }\n"),
                "5:10: expected a thread index such as 'threadIdx.x', found 'threadIdx.w'");
    check_error(KERNEL("  allocate S: float16 texture [2] {\n  }\n"),
                "5:23: expected a memory scope such as 'shared' for 'S', found 'texture'");
    check_error("", "1:1: expected 'kernel' at the start, found end of input");
    check_error(HEADER "kernel k(float32 A[4])\n  grid(1, 1) block(1, 1, 1)\n{\n}\n",
                "3:12: expected ',' between the sizes of 'grid', found ')'");
}
END_TEST

START_TEST(long_names_are_clipped_in_errors)
{
    size_t n = 5000;
    char *name = tci_arena_alloc(arena, n + 1);
    memset(name, 'x', n);
    check_error(tci_arena_printf(arena, "%s  A[0] = %s\n}\n", KERNEL_OPEN, name),
                "5:10: unknown variable 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'");
}
END_TEST

/* An expression nested far deeper than the bound: `piece` 100000 times. */
static void check_too_deep(const char *piece, const char *expected)
{
    StrBuf sb;
    tci_strbuf_init(&sb);
    for (int d = 0; d < 100000; d++)
        tci_strbuf_printf(&sb, "%s", piece);
    ck_assert(!sb.failed);
    check_error(expr_kernel(sb.data), expected);
    tci_strbuf_free(&sb);
}

START_TEST(nesting_is_bounded)
{
    /* Parentheses, and the paths with the most stack frames a level: casts, loads and
     * calls (the sanitizer build runs them too, with its larger frames). */
    check_too_deep("(", "7:10011: nesting deeper than 10000 levels");
    check_too_deep("float32(", "7:79990: nesting deeper than 10000 levels");
    check_too_deep("A[", "7:20008: nesting deeper than 10000 levels");
    check_too_deep("min(1, ", "7:69990: nesting deeper than 10000 levels");
    check_too_deep("!", "7:10011: nesting deeper than 10000 levels");
    StrBuf sb;
    tci_strbuf_init(&sb);
    tci_strbuf_printf(&sb, "%s", HEADER "kernel k()\n  grid(1, 1, 1) block(1, 1, 1)\n");
    for (int d = 0; d < 100000; d++)
        tci_strbuf_printf(&sb, "{if(true)");
    check_error(sb.data, "4:89996: nesting deeper than 10000 levels");
    tci_strbuf_free(&sb);
}
END_TEST

START_TEST(input_ends_anywhere)
{
    /* Every prefix of a kernel that uses every construct: an error, never a read past
     * the end (the sanitizer build checks), and a complete kernel only at the end. */
    const char *text =
        KERNEL("  launch threadIdx.x in 0..32 {\n"
               "    for i in 0..8 {\n"
               "      allocate F: float32 wmma.accumulator [2, 16, 16] min [0, i, 0] {\n"
               "        if (i < 4 && !false) {\n"
               "          wmma.load_matrix_a(F[0], &H[0, 0], stride 8, row_major)    // m16n16k16\n"
               "        } else {\n"
               "          A[ramp(i, 1, 2)] = float32x2(broadcast(1h, 2)) + float32(-inf)\n"
               "        }\n"
               "      }\n"
               "    }\n"
               "  }\n");
    size_t n = strlen(text);
    for (size_t cut = 0; cut < n; cut++) {
        char *prefix = strndup(text, cut);
        PrimFunc *kernel = NULL;
        tcc_status status = tci_parse_prim_func(ctx, arena, prefix, &kernel);
        /* Only the final newline may be missing. */
        ck_assert_int_eq(status, cut == n - 1 ? TCC_OK : TCC_ERROR_INVALID_ARGUMENT);
        assert_one_line(ctx);
        free(prefix);
    }
}
END_TEST

static Suite *parse_errors_suite(void)
{
    Suite *suite = suite_create("ir_parse_errors");
    TCase *errors = test_case(suite, "errors", ir_context_setup, ir_context_teardown);
    tcase_add_test(errors, errors_say_where_and_what);
    tcase_add_test(errors, long_names_are_clipped_in_errors);
    tcase_add_test(errors, nesting_is_bounded);
    tcase_add_test(errors, input_ends_anywhere);
    return suite;
}

TEST_MAIN(parse_errors_suite)
