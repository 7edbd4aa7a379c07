/*
 * tcc_loop_ir_transform, the public side of tcc-opt: loop IR text in, the passes named,
 * loop IR text out; errors as one line, with the line and column for malformed text.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

static const char *const kernel_text = "// \"/\" and \"%\" are floor division and modulo\n"
                                       "kernel k(float32 A[8, 4])\n"
                                       "  grid(1, 1, 1) block(1, 1, 1)\n"
                                       "{\n"
                                       "  for i in 0..8 {\n"
                                       "    for j in 0..1 {\n"
                                       "      A[i, j] = 1f\n"
                                       "    }\n"
                                       "  }\n"
                                       "}\n";

START_TEST(no_passes_prints_what_it_read)
{
    tcc_context *ctx = test_context();
    char *out = NULL;
    ck_assert_int_eq(tcc_loop_ir_transform(ctx, kernel_text, NULL, NULL, &out), TCC_OK);
    ck_assert_str_eq(out, kernel_text);
    free(out);
    ck_assert_int_eq(tcc_loop_ir_transform(ctx, kernel_text, "", NULL, &out), TCC_OK);
    ck_assert_str_eq(out, kernel_text);
    free(out);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(passes_run_in_the_order_named)
{
    tcc_context *ctx = test_context();
    char *out = NULL;
    ck_assert_int_eq(tcc_loop_ir_transform(ctx, kernel_text, "flatten,simplify", NULL, &out),
                     TCC_OK);
    assert_contains(out, "  for i in 0..8 {\n    A[i * 4] = 1f\n  }\n");
    free(out);
    tcc_context_destroy(ctx);
}
END_TEST

typedef struct Seen {
    int calls;
    char last[32];
} Seen;

static void on_print(const char *pass, const char *loop_ir, void *user)
{
    Seen *seen = user;
    ck_assert_ptr_nonnull(strstr(loop_ir, "kernel k("));
    seen->calls++;
    strncpy(seen->last, pass, sizeof seen->last - 1);
}

START_TEST(print_after_sees_each_pass)
{
    tcc_context *ctx = test_context();
    tcc_build_options options;
    tcc_build_options_init(&options);
    Seen seen = {0};
    options.print_after_pass = "all";
    options.print_callback = on_print;
    options.print_user = &seen;
    char *out = NULL;
    ck_assert_int_eq(tcc_loop_ir_transform(ctx, kernel_text, "flatten,unroll", &options, &out),
                     TCC_OK);
    ck_assert_int_eq(seen.calls, 2);
    ck_assert_str_eq(seen.last, "unroll");
    free(out);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(errors_are_one_line)
{
    tcc_context *ctx = test_context();
    char *out = NULL;
    ck_assert_int_eq(tcc_loop_ir_transform(ctx, kernel_text, "flatten,nope", NULL, &out),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(tcc_last_error(ctx), "unknown pass 'nope' (see --list-passes)");
    ck_assert_ptr_null(out);
    ck_assert_int_eq(tcc_loop_ir_transform(ctx, kernel_text, "schedule_ops", NULL, &out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_one_line(ctx);
    ck_assert_int_eq(tcc_loop_ir_transform(ctx, "kernel k(\n  float32 A[4)", NULL, NULL, &out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "2:14: expected ']'");
    assert_one_line(ctx);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(tcc_loop_ir_transform(ctx, NULL, NULL, NULL, &out),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_loop_ir_transform(ctx, kernel_text, NULL, NULL, NULL),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tcc_loop_ir_transform(NULL, kernel_text, NULL, NULL, &out),
                     TCC_ERROR_INVALID_ARGUMENT);
    tcc_context_destroy(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("loop_ir");
    TCase *tc = test_case(s, "transform", NULL, NULL);
    tcase_add_test(tc, no_passes_prints_what_it_read);
    tcase_add_test(tc, passes_run_in_the_order_named);
    tcase_add_test(tc, print_after_sees_each_pass);
    tcase_add_test(tc, errors_are_one_line);
    return s;
}

TEST_MAIN(suite)
