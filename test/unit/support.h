/*
 * Helpers shared by the unit tests (test/unit/support.c is linked into every one). The
 * loop-IR fixture and builders are in ir_support.h, the CPU reference tests' helpers in
 * reference_support.h.
 */
#ifndef TEST_SUPPORT_H
#define TEST_SUPPORT_H

#include "tcc/tcc.h"

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Runs a suite, printing the usual Check summary; returns the process exit status
 * (EXIT_SUCCESS when every test passed). */
int test_run(Suite *suite);

/* The main of a unit test: runs the suite that make_suite() builds. */
#define TEST_MAIN(make_suite)                                                                      \
    int main(void)                                                                                 \
    {                                                                                              \
        return test_run(make_suite());                                                             \
    }

/* A new test case `name` of suite; each of its tests runs between setup and teardown
 * (checked fixtures; NULL for none). The caller adds the tests. */
TCase *test_case(Suite *suite, const char *name, void (*setup)(void), void (*teardown)(void));

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

/* What a tcc_build_options print_callback received, as capture_print (the callback, with
 * the PrintCapture as print_user) records it: the calls, the first CAPTURED_PASSES passes'
 * names, and the last loop IR (free() it). */
enum { CAPTURED_PASSES = 24 }; /* more than the pipeline has */
typedef struct PrintCapture {
    int calls;
    char passes[CAPTURED_PASSES][32];
    char *last;
} PrintCapture;

void capture_print(const char *pass, const char *loop_ir, void *user);

/* Defines the convolution of TVM's tensor-core tutorial in func, creates the schedule and
 * schedules it as the tutorial does; params gets its input, filter and output. */
void test_tutorial_conv2d(tcc_func *func, tcc_tensor *params[3]);

/* How many times `part` occurs in `text` (overlapping occurrences count). */
int occurrences(const char *text, const char *part);

/* A deterministic pseudo-random generator (splitmix64): tests are reproducible. */
uint64_t test_random(uint64_t *state);
/* A uniform integer in [0, bound). */
int64_t test_random_below(uint64_t *state, int64_t bound);

#endif
