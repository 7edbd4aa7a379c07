/*
 * The tools' exit statuses (tools/cli_exit.h): every library status maps to the status the
 * tools' --help documents, a failed check is 4 (which lit cannot provoke without a GPU that
 * computes wrong results), and of several layers' statuses the worst wins. The header is
 * inline and needs only tcc/base.h, so this test includes it rather than linking the tools.
 */
#include "support.h"

#include "../../tools/cli_exit.h"

START_TEST(test_status_mapping)
{
    /* What each status means for a script: tcc-conv --help's table. */
    ck_assert_int_eq(cli_exit_for_status(TCC_OK, false), 0);
    ck_assert_int_eq(cli_exit_for_status(TCC_ERROR_INVALID_ARGUMENT, false), 2);
    ck_assert_int_eq(cli_exit_for_status(TCC_ERROR_UNSUPPORTED, false), 3);
    ck_assert_int_eq(cli_exit_for_status(TCC_ERROR_SCHEDULE, false), 3);
    ck_assert_int_eq(cli_exit_for_status(TCC_ERROR_LLVM, false), 1);
    ck_assert_int_eq(cli_exit_for_status(TCC_ERROR_OUT_OF_MEMORY, false), 1);
    /* The driver: no GPU when opening the device, an error once it is open. */
    ck_assert_int_eq(cli_exit_for_status(TCC_ERROR_CUDA, true), 5);
    ck_assert_int_eq(cli_exit_for_status(TCC_ERROR_CUDA, false), 1);
    /* Opening the device changes nothing else. */
    ck_assert_int_eq(cli_exit_for_status(TCC_ERROR_UNSUPPORTED, true), 3);
    ck_assert_int_eq(cli_exit_for_status(TCC_ERROR_INVALID_ARGUMENT, true), 2);
    /* A value that is no status is an error, not success. */
    ck_assert_int_eq(cli_exit_for_status((tcc_status)99, false), 1);
}
END_TEST

START_TEST(test_codes_and_names)
{
    ck_assert_int_eq(CLI_EXIT_OK, 0);
    ck_assert_int_eq(CLI_EXIT_ERROR, 1);
    ck_assert_int_eq(CLI_EXIT_USAGE, 2);
    ck_assert_int_eq(CLI_EXIT_UNSUPPORTED, 3);
    ck_assert_int_eq(CLI_EXIT_CHECK_FAILED, 4);
    ck_assert_int_eq(CLI_EXIT_NO_GPU, 5);
    /* The names of the records' error.kind. */
    ck_assert_str_eq(cli_exit_name(CLI_EXIT_OK), "ok");
    ck_assert_str_eq(cli_exit_name(CLI_EXIT_ERROR), "error");
    ck_assert_str_eq(cli_exit_name(CLI_EXIT_USAGE), "usage");
    ck_assert_str_eq(cli_exit_name(CLI_EXIT_UNSUPPORTED), "unsupported");
    ck_assert_str_eq(cli_exit_name(CLI_EXIT_CHECK_FAILED), "check_failed");
    ck_assert_str_eq(cli_exit_name(CLI_EXIT_NO_GPU), "no_gpu");
    ck_assert_str_eq(cli_exit_name((CliExit)42), "error");
}
END_TEST

START_TEST(test_worst_of_several)
{
    /* --help: "the worst of theirs: 4, then 5, 1, 2, 3", then success. */
    static const CliExit order[] = {CLI_EXIT_CHECK_FAILED, CLI_EXIT_NO_GPU,      CLI_EXIT_ERROR,
                                    CLI_EXIT_USAGE,        CLI_EXIT_UNSUPPORTED, CLI_EXIT_OK};
    int n = (int)(sizeof order / sizeof order[0]);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            CliExit worse = order[i < j ? i : j];
            ck_assert_int_eq(cli_exit_worse(order[i], order[j]), worse);
        }
    }
    /* A layer's failed check is not hidden by a later layer's error, nor an error by a
     * later success. */
    CliExit worst = CLI_EXIT_OK;
    static const CliExit layers[] = {CLI_EXIT_OK, CLI_EXIT_CHECK_FAILED, CLI_EXIT_ERROR,
                                     CLI_EXIT_OK};
    for (int i = 0; i < 4; i++)
        worst = cli_exit_worse(worst, layers[i]);
    ck_assert_int_eq(worst, CLI_EXIT_CHECK_FAILED);
}
END_TEST

static Suite *cli_exit_suite(void)
{
    Suite *suite = suite_create("cli_exit");
    TCase *codes = test_case(suite, "codes", NULL, NULL);
    tcase_add_test(codes, test_status_mapping);
    tcase_add_test(codes, test_codes_and_names);
    tcase_add_test(codes, test_worst_of_several);
    return suite;
}

TEST_MAIN(cli_exit_suite)
