#include "support.h"

#include <stdlib.h>

int tcc_test_run(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

tcc_context *tcc_test_context(void)
{
    tcc_context *ctx = NULL;
    ck_assert_int_eq(tcc_context_create(&ctx), TCC_OK);
    ck_assert_ptr_nonnull(ctx);
    return ctx;
}

uint64_t tcc_test_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int64_t tcc_test_random_below(uint64_t *state, int64_t bound)
{
    return bound <= 0 ? 0 : (int64_t)(tcc_test_random(state) % (uint64_t)bound);
}
