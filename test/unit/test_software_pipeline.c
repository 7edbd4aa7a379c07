/*
 * software_pipeline on printed loop IR, for every stage count a schedule may ask for: the
 * number of buffers, the prologue's length, the waits, the rotation of the buffers, and the
 * synchronous form where the target has no cp.async; then plan_shared's size for them.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A copy into S, then work reading it, over 10 iterations pipelined in `stages` stages. */
static char *kernel_with_stages(int stages)
{
    char *text = malloc(1024);
    ck_assert_ptr_nonnull(text);
    snprintf(text, 1024,
             "kernel k(float16 A[320], float32 B[32])\n"
             "  grid(1, 1, 1) block(32, 1, 1)\n"
             "{\n"
             "  for ko in 0..10 stages(%d) {\n"
             "    allocate S: float16 shared [32] {\n"
             "      launch threadIdx.x in 0..32 {\n"
             "        S[threadIdx.x] = A[ko * 32 + threadIdx.x]\n"
             "      }\n"
             "      launch threadIdx.x in 0..32 {\n"
             "        B[threadIdx.x] = B[threadIdx.x] + float32(S[threadIdx.x])\n"
             "      }\n"
             "    }\n"
             "  }\n"
             "}\n",
             stages);
    return text;
}

static char *pipelined(tcc_context *ctx, int stages, tcc_arch arch, const char *passes)
{
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = arch;
    char *text = kernel_with_stages(stages), *out = NULL;
    tcc_status status = tcc_loop_ir_transform(ctx, text, passes, &options, &out);
    free(text);
    ck_assert_msg(status == TCC_OK, "%s", tcc_last_error(ctx));
    return out;
}

START_TEST(every_stage_count_rotates_its_buffers)
{
    tcc_context *ctx = NULL;
    ck_assert_int_eq(tcc_context_create(&ctx), TCC_OK);
    for (int stages = 2; stages <= 5; stages++) {
        char *out = pipelined(ctx, stages, TCC_SM_80, "software_pipeline");
        char expect[128];
        snprintf(expect, sizeof expect, "allocate S: float16 shared [%d, 32] {", stages);
        assert_contains(out, expect);
        snprintf(expect, sizeof expect, "unrolled for ko.prologue in 0..%d {", stages - 1);
        assert_contains(out, expect);
        snprintf(expect, sizeof expect, "cp.async.wait_group(%d)", stages - 2);
        assert_contains(out, expect);
        /* Iteration ko issues ko + S - 1 into the stage ko - 1 read, and reads stage ko. */
        snprintf(expect, sizeof expect, "if (ko < %d) {", 10 - (stages - 1));
        assert_contains(out, expect);
        snprintf(expect, sizeof expect, "S[threadIdx.x + (ko + %d) %% %d * 32] = A[", stages - 1,
                 stages);
        assert_contains(out, expect);
        snprintf(expect, sizeof expect, "float32(S[threadIdx.x + ko %% %d * 32])", stages);
        assert_contains(out, expect);
        /* One group per prologue stage and per iteration; one barrier per iteration. */
        ck_assert_int_eq(occurrences(out, "cp.async.commit_group()"), 2);
        ck_assert_int_eq(occurrences(out, "__syncthreads()"), 2);
        assert_contains(out, "for ko in 0..10 pipelined {\n      cp.async.wait_group(");
        assert_contains(out, "cp.async.wait_group(0)\n    __syncthreads()\n");
        free(out);
    }
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(without_cp_async_copies_are_synchronous)
{
    tcc_context *ctx = NULL;
    ck_assert_int_eq(tcc_context_create(&ctx), TCC_OK);
    char *out = pipelined(ctx, 2, TCC_SM_75, "software_pipeline,inject_async_copy");
    ck_assert_ptr_null(strstr(out, "cp.async"));
    assert_contains(out, "for ko in 0..10 pipelined {\n      __syncthreads()\n");
    free(out);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(the_plan_holds_every_stage)
{
    tcc_context *ctx = NULL;
    ck_assert_int_eq(tcc_context_create(&ctx), TCC_OK);
    for (int stages = 2; stages <= 5; stages++) {
        char *out = pipelined(ctx, stages, TCC_SM_90, "software_pipeline,plan_shared,thread_sync");
        char expect[64];
        snprintf(expect, sizeof expect, "shared(%d)", stages * 64);
        assert_contains(out, expect);
        /* thread_sync adds nothing inside the pipelined loop: its one barrier stays one. */
        ck_assert_int_eq(occurrences(out, "__syncthreads()"), 2);
        free(out);
    }
    tcc_context_destroy(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("software_pipeline");
    TCase *tc = test_case(s, "stages", NULL, NULL);
    tcase_add_test(tc, every_stage_count_rotates_its_buffers);
    tcase_add_test(tc, without_cp_async_copies_are_synchronous);
    tcase_add_test(tc, the_plan_holds_every_stage);
    return s;
}

TEST_MAIN(suite)
