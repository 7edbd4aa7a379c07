/*
 * Helpers shared by the unit tests (test/unit/support.c is linked into every one).
 */
#ifndef TCC_TEST_SUPPORT_H
#define TCC_TEST_SUPPORT_H

#include "tcc/tcc.h"

#include <check.h>
#include <stdint.h>
#include <string.h>

/* Runs a suite, printing the usual Check summary; returns the process exit status
 * (EXIT_SUCCESS when every test passed), so `main` can `return tcc_test_run(suite());`. */
int tcc_test_run(Suite *suite);

/* A fresh context; the test fails if it cannot be made. */
tcc_context *tcc_test_context(void);

/* Fails the test unless `text` contains `part`, printing both. */
#define tcc_assert_contains(text, part)                                                            \
    do {                                                                                           \
        const char *text_ = (text), *part_ = (part);                                               \
        ck_assert_msg(text_ &&strstr(text_, part_), "expected \"%s\" in \"%s\"", part_,            \
                      text_ ? text_ : "(null)");                                                   \
    } while (0)

/* Fails the test unless the last error of ctx is one line (no newline, not empty). */
#define tcc_assert_one_line(ctx)                                                                   \
    do {                                                                                           \
        const char *error_ = tcc_last_error(ctx);                                                  \
        ck_assert_msg(*error_ && !strchr(error_, '\n'), "not one line: \"%s\"", error_);           \
    } while (0)

/* A deterministic pseudo-random generator (splitmix64): tests are reproducible. */
uint64_t tcc_test_random(uint64_t *state);
/* A uniform integer in [0, bound). */
int64_t tcc_test_random_below(uint64_t *state, int64_t bound);

#endif
