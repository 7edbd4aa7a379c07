#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int test_run(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

TCase *test_case(Suite *suite, const char *name, void (*setup)(void), void (*teardown)(void))
{
    TCase *tc = tcase_create(name);
    if (setup || teardown)
        tcase_add_checked_fixture(tc, setup, teardown);
    suite_add_tcase(suite, tc);
    return tc;
}

tcc_context *test_context(void)
{
    tcc_context *ctx = NULL;
    ck_assert_int_eq(tcc_context_create(&ctx), TCC_OK);
    ck_assert_ptr_nonnull(ctx);
    return ctx;
}

void capture_print(const char *pass, const char *loop_ir, void *user)
{
    PrintCapture *capture = user;
    if (capture->calls < CAPTURED_PASSES)
        snprintf(capture->passes[capture->calls], sizeof capture->passes[0], "%s", pass);
    capture->calls++;
    free(capture->last);
    capture->last = strdup(loop_ir);
}

void test_tutorial_conv2d(tcc_func *func, tcc_tensor *params[3])
{
    tcc_conv2d_desc desc;
    tcc_tutorial_conv2d_desc(&desc);
    tcc_tutorial_conv2d conv;
    ck_assert_int_eq(tcc_tutorial_conv2d_define(func, &desc, &conv), TCC_OK);
    ck_assert_int_eq(tcc_schedule_create(func, 1, &conv.output), TCC_OK);
    ck_assert_int_eq(tcc_tutorial_conv2d_schedule(func, &conv, NULL), TCC_OK);
    params[0] = conv.input;
    params[1] = conv.filter;
    params[2] = conv.output;
}

int occurrences(const char *text, const char *part)
{
    int n = 0;
    for (const char *p = strstr(text, part); p; p = strstr(p + 1, part))
        n++;
    return n;
}

uint64_t test_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int64_t test_random_below(uint64_t *state, int64_t bound)
{
    return bound <= 0 ? 0 : (int64_t)(test_random(state) % (uint64_t)bound);
}
