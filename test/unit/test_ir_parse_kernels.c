/*
 * The parser of the loop IR on real kernels: the text printed after every pass of the
 * tutorial's convolution and of implicit GEMM convolutions and matrix products reads back
 * into IR that prints the same text. Hand-written text: test_ir_parse.c and
 * test_ir_parse_errors.c.
 */
#include "driver/driver.h"
#include "ir/ir.h"
#include "ir_support.h"
#include "ops/gemm.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- real kernels: the text after every pass reads back ----------------------------------- */

typedef struct Texts {
    int count;
    char pass[CAPTURED_PASSES][32];
    char *text[CAPTURED_PASSES];
} Texts;

static void collect(const char *pass, const char *loop_ir, void *user)
{
    Texts *t = user;
    ck_assert_int_lt(t->count, CAPTURED_PASSES);
    snprintf(t->pass[t->count], sizeof t->pass[0], "%s", pass);
    t->text[t->count++] = strdup(loop_ir);
}

/* Lowers func printing after every pass, and checks prim_func_text(parse(text)) == text for each.
 */
static void check_passes_round_trip(tcc_func *func, int nparam, tcc_tensor *const *params)
{
    Texts texts = {0};
    tcc_build_options options;
    memset(&options, 0, sizeof options);
    options.arch = TCC_SM_80;
    options.auto_unroll_max_step = 16;
    options.print_after_pass = "all";
    options.print_callback = collect;
    options.print_user = &texts;
    Lowered lowered = lower(func, nparam, params, &options);
    ck_assert_msg(lowered.status == TCC_OK, "%s", tcc_last_error(ctx));
    ck_assert_int_eq(texts.count, tcc_pass_count());
    for (int p = 0; p < texts.count; p++) {
        PrimFunc *parsed = NULL;
        ck_assert_msg(tci_parse_prim_func(ctx, arena, texts.text[p], &parsed) == TCC_OK,
                      "after %s: %s", texts.pass[p], tcc_last_error(ctx));
        char *printed = prim_func_text(parsed);
        ck_assert_msg(strcmp(printed, texts.text[p]) == 0, "after %s: got\n%s\nexpected\n%s",
                      texts.pass[p], printed, texts.text[p]);
        ck_assert_int_eq(parsed->nparam, nparam);
        free(printed);
        free(texts.text[p]);
    }
    lowered_free(&lowered);
}

START_TEST(tutorial_convolution_round_trips_after_every_pass)
{
    tcc_func *func;
    ck_assert_int_eq(tcc_func_create(ctx, "conv2d", &func), TCC_OK);
    tcc_tensor *params[3];
    test_tutorial_conv2d(func, params);
    check_passes_round_trip(func, 3, params);
    tcc_func_destroy(func);
}
END_TEST

static void check_gemm_round_trips(GemmMaker make, const void *desc)
{
    tcc_func *func;
    ck_assert_int_eq(tcc_func_create(ctx, "gemm", &func), TCC_OK);
    /* compile.c's steps: that file also builds, which needs LLVM. */
    GemmOperator *op;
    Gemm gemm;
    tcc_gemm_schedule schedule = {.size = sizeof(tcc_gemm_schedule)};
    ck_assert_msg(make(func, desc, &op) == TCC_OK, "%s", tcc_last_error(ctx));
    ck_assert_msg(tci_gemm_complete_schedule(ctx, op, TCC_SM_80, &schedule) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    ck_assert_int_eq(tci_gemm_define(func, op, tci_gemm_split(op, &schedule), &gemm), TCC_OK);
    ck_assert_int_eq(tcc_schedule_create(func, 1, &gemm.out), TCC_OK);
    ck_assert_int_eq(
        tci_gemm_schedule_apply(func, op, &gemm, &schedule, tci_gemm_operand_cache(op, TCC_SM_80)),
        TCC_OK);
    check_passes_round_trip(func, gemm.nparam, gemm.params);
    tcc_func_destroy(func);
}

START_TEST(implicit_gemm_convolutions_round_trip_after_every_pass)
{
    tcc_conv2d_desc desc;
    tcc_conv2d_desc_init(&desc);
    desc.batch = 2, desc.height = desc.width = 14, desc.in_channels = 32;
    desc.out_channels = 64, desc.kernel_h = desc.kernel_w = 3;
    desc.pad_top = desc.pad_bottom = desc.pad_left = desc.pad_right = 1;
    desc.epilogue.bias = desc.epilogue.relu = true;
    check_gemm_round_trips(tci_conv2d_gemm, &desc);
    /* NCHW, strided, dilated, grouped, bfloat16 with a clamp: guards at every edge. */
    tcc_conv2d_desc_init(&desc);
    desc.batch = 3, desc.height = 17, desc.width = 11, desc.in_channels = 12;
    desc.out_channels = 20, desc.kernel_h = 3, desc.kernel_w = 2, desc.groups = 2;
    desc.stride_h = 2, desc.dilation_w = 2, desc.pad_top = 1, desc.pad_left = 2;
    desc.layout = TCC_LAYOUT_NCHW, desc.filter_layout = TCC_FILTER_KCRS;
    desc.input_type = TCC_BFLOAT16, desc.output_type = TCC_BFLOAT16;
    desc.epilogue.clamp = true, desc.epilogue.clamp_min = -1.5, desc.epilogue.clamp_max = 6;
    check_gemm_round_trips(tci_conv2d_gemm, &desc);
}
END_TEST

START_TEST(implicit_gemm_matmuls_round_trip_after_every_pass)
{
    tcc_matmul_desc desc;
    tcc_matmul_desc_init(&desc);
    desc.batch = 3, desc.m = 100, desc.n = 72, desc.k = 40, desc.a_col_major = true;
    desc.accumulate_type = desc.output_type = TCC_FLOAT16;
    desc.epilogue.alpha = 0.5, desc.epilogue.beta = 1, desc.epilogue.residual = true;
    check_gemm_round_trips(tci_matmul_gemm, &desc);
    tcc_matmul_desc_init(&desc);
    desc.m = 64, desc.n = 32, desc.k = 48, desc.b_col_major = true;
    desc.input_type = TCC_FLOAT32; /* tf32: m16n16k8 */
    desc.epilogue.prologue = TCC_PROLOGUE_SCALE, desc.epilogue.prologue_arg = 0.25;
    check_gemm_round_trips(tci_matmul_gemm, &desc);
    tcc_matmul_desc_init(&desc);
    desc.m = 48, desc.n = 48, desc.k = 64;
    desc.input_type = TCC_INT8, desc.accumulate_type = desc.output_type = TCC_INT32;
    check_gemm_round_trips(tci_matmul_gemm, &desc);
}
END_TEST

static Suite *parse_kernels_suite(void)
{
    Suite *suite = suite_create("ir_parse_kernels");
    TCase *kernels = test_case(suite, "kernels", ir_context_setup, ir_context_teardown);
    tcase_set_timeout(kernels, 60);
    tcase_add_test(kernels, tutorial_convolution_round_trips_after_every_pass);
    tcase_add_test(kernels, implicit_gemm_convolutions_round_trip_after_every_pass);
    tcase_add_test(kernels, implicit_gemm_matmuls_round_trip_after_every_pass);
    return suite;
}

TEST_MAIN(parse_kernels_suite)
