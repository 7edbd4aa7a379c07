/*
 * The exit status of tcc-conv, tcc-matmul and tcc-opt: what a script branches on. Each tool's
 * --help lists them (cli_print_exit_codes); cli_exit_for_status is the one place a library
 * status becomes one. Inline and free of the rest of tools/ so that a unit test
 * (test/unit/test_cli_exit.c) can check the mapping without linking the tools.
 */
#ifndef TOOLS_CLI_EXIT_H
#define TOOLS_CLI_EXIT_H

#include "tcc/base.h"

#include <stdbool.h>

typedef enum CliExit {
    CLI_EXIT_OK = 0,
    /* Anything else: writing the output failed, out of memory, LLVM refused the module (a
     * tcc bug), the driver failed after the device opened. */
    CLI_EXIT_ERROR = 1,
    /* The command line or its input is wrong: an unknown option, a bad value, an option that
     * contradicts another, a file that cannot be read or is malformed, a problem the library
     * calls invalid (TCC_ERROR_INVALID_ARGUMENT), --device naming no device. */
    CLI_EXIT_USAGE = 2,
    /* Valid, but not something tcc compiles (TCC_ERROR_UNSUPPORTED), or a schedule that is
     * inconsistent or exceeds the target's or the device's limits (TCC_ERROR_SCHEDULE). */
    CLI_EXIT_UNSUPPORTED = 3,
    /* --run: the kernel's results are wrong (beyond the tolerance, or outputs not written). */
    CLI_EXIT_CHECK_FAILED = 4,
    /* --run or --arch native without a GPU: no driver, or it finds no device. */
    CLI_EXIT_NO_GPU = 5,
} CliExit;

#define CLI_EXIT_COUNT 6

/* The exit status for a library call that failed with `status`. A TCC_ERROR_CUDA is "no GPU"
 * when it came from opening the device (`opening_device`), and an error otherwise. */
static inline CliExit cli_exit_for_status(tcc_status status, bool opening_device)
{
    switch (status) {
    case TCC_OK:
        return CLI_EXIT_OK;
    case TCC_ERROR_INVALID_ARGUMENT:
        return CLI_EXIT_USAGE;
    case TCC_ERROR_UNSUPPORTED:
    case TCC_ERROR_SCHEDULE:
        return CLI_EXIT_UNSUPPORTED;
    case TCC_ERROR_CUDA:
        return opening_device ? CLI_EXIT_NO_GPU : CLI_EXIT_ERROR;
    case TCC_ERROR_LLVM:
    case TCC_ERROR_OUT_OF_MEMORY:
        break;
    }
    return CLI_EXIT_ERROR;
}

/* The name of an exit status in the JSON and CSV output ("error.kind"). */
static inline const char *cli_exit_name(CliExit code)
{
    static const char *const names[CLI_EXIT_COUNT] = {"ok",          "error",        "usage",
                                                      "unsupported", "check_failed", "no_gpu"};
    return (unsigned)code < CLI_EXIT_COUNT ? names[code] : "error";
}

/* Of two results (the layers of --layers-file), the one the tool exits with: wrong results
 * first, then no GPU, an error, a bad input, an unsupported problem, success. */
static inline CliExit cli_exit_worse(CliExit a, CliExit b)
{
    /* rank[code]: higher is worse */
    static const int rank[CLI_EXIT_COUNT] = {
        [CLI_EXIT_OK] = 0,    [CLI_EXIT_UNSUPPORTED] = 1, [CLI_EXIT_USAGE] = 2,
        [CLI_EXIT_ERROR] = 3, [CLI_EXIT_NO_GPU] = 4,      [CLI_EXIT_CHECK_FAILED] = 5,
    };
    int ra = (unsigned)a < CLI_EXIT_COUNT ? rank[a] : rank[CLI_EXIT_ERROR];
    int rb = (unsigned)b < CLI_EXIT_COUNT ? rank[b] : rank[CLI_EXIT_ERROR];
    return ra >= rb ? a : b;
}

#endif
