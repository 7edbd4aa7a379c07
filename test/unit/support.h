/*
 * Helpers shared by the unit tests (test/unit/support.c is linked into every one).
 */
#ifndef TEST_SUPPORT_H
#define TEST_SUPPORT_H

#include "tcc/tcc.h"

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Runs a suite, printing the usual Check summary; returns the process exit status
 * (EXIT_SUCCESS when every test passed), so `main` can `return test_run(suite());`. */
int test_run(Suite *suite);

/* A fresh context; the test fails if it cannot be made. */
tcc_context *test_context(void);

/* Fails the test unless `text` contains `part`, printing both. */
#define assert_contains(text, part)                                                                \
    do {                                                                                           \
        const char *text_ = (text), *part_ = (part);                                               \
        ck_assert_msg(text_ &&strstr(text_, part_), "expected \"%s\" in \"%s\"", part_,            \
                      text_ ? text_ : "(null)");                                                   \
    } while (0)

/* Fails the test unless the last error of ctx is one line (no newline, not empty). */
#define assert_one_line(ctx)                                                                       \
    do {                                                                                           \
        const char *error_ = tcc_last_error(ctx);                                                  \
        ck_assert_msg(*error_ && !strchr(error_, '\n'), "not one line: \"%s\"", error_);           \
    } while (0)

/* A deterministic pseudo-random generator (splitmix64): tests are reproducible. */
uint64_t test_random(uint64_t *state);
/* A uniform integer in [0, bound). */
int64_t test_random_below(uint64_t *state, int64_t bound);

/* An element as the tensor cores read it (operands: float32 rounded to tf32) or as stored
 * (the epilogue's tensors), written independently of the library's readers. */
double test_element(tcc_dtype type, const void *data, int64_t i, bool operand);
/* The epilogue as tcc.h defines it, for output offset o of output channel (column)
 * `channel`; bias, residual and previous may be NULL when it does not read them. */
double test_naive_epilogue(const tcc_epilogue *e, tcc_dtype type, const void *bias,
                           const void *residual, const void *previous, int64_t o, int64_t channel,
                           double sum);

#endif
