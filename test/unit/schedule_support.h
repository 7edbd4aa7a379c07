/*
 * What the schedule primitives' tests share (test_schedule.c, their effects on the loop nest;
 * test_schedule_misuse.c, each misused): the function under test, small computes (an
 * elementwise pair, a matmul, a chain of two stages), lowering printed after a pass, and the
 * assertions on the printed loop IR and on errors. Static, so each test program has its own.
 */
#ifndef TCC_TEST_SCHEDULE_SUPPORT_H
#define TCC_TEST_SCHEDULE_SUPPORT_H

#include "ir_support.h"

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static tcc_func *func; /* in ctx (ir_support.h) */
/* The loop IR of the test's last lowering: each lowering frees the one before, and teardown
 * the last, so that tests read it without freeing it. */
static char *loop_ir;

static inline void setup(void)
{
    ctx = test_context();
    ck_assert_int_eq(tcc_func_create(ctx, "k", &func), TCC_OK);
}

static inline void teardown(void)
{
    free(loop_ir);
    loop_ir = NULL;
    tcc_func_destroy(func);
    func = NULL;
    tcc_context_destroy(ctx);
    ctx = NULL;
}

/* ---- computes --------------------------------------------------------------------------- */

static const char *const ij[2] = {"i", "j"};

static inline tcc_expr *times_two(tcc_func *f, tcc_expr *const *ax, void *user)
{
    return tcc_mul(f, tcc_access(f, user, 2, ax), tcc_float(f, 2, TCC_FLOAT32));
}

static inline tcc_expr *plus_one(tcc_func *f, tcc_expr *const *ax, void *user)
{
    return tcc_add(f, tcc_access(f, user, 2, ax), tcc_float(f, 1, TCC_FLOAT32));
}

static inline tcc_expr *copy(tcc_func *f, tcc_expr *const *ax, void *user)
{
    return tcc_access(f, user, 2, ax);
}

/* A[64, 32] -> B[i, j] = A[i, j] * 2. */
typedef struct Elementwise {
    tcc_tensor *a, *b;
    tcc_stage *stage;
    tcc_iter_var *i, *j;
} Elementwise;

static inline Elementwise elementwise(tcc_compute_fn body)
{
    Elementwise e;
    int64_t shape[2] = {64, 32};
    e.a = tcc_placeholder(func, "A", 2, shape, TCC_FLOAT32);
    e.b = tcc_compute(func, "B", 2, shape, ij, TCC_FLOAT32, body, e.a);
    ck_assert_ptr_nonnull(e.b);
    ck_assert_int_eq(tcc_schedule_create(func, 1, &e.b), TCC_OK);
    e.stage = tcc_stage_of(func, e.b);
    e.i = tcc_tensor_axis(e.b, 0);
    e.j = tcc_tensor_axis(e.b, 1);
    return e;
}

/* C[i, j] = sum_k A[i, k] * B[k, j] with A[64, 16], B[16, 32]. */
typedef struct Matmul {
    tcc_tensor *a, *b, *c;
    tcc_iter_var *k;
    tcc_stage *stage;
    tcc_iter_var *i, *j;
} Matmul;

static inline tcc_expr *matmul_body(tcc_func *f, tcc_expr *const *ax, void *user)
{
    Matmul *m = user;
    tcc_expr *k = tcc_axis(f, m->k);
    tcc_expr *ia[2] = {ax[0], k}, *ib[2] = {k, ax[1]};
    tcc_expr *a = tcc_access(f, m->a, 2, ia), *b = tcc_access(f, m->b, 2, ib);
    if (m->a->type != TCC_FLOAT32) { /* the tensor-core variant: fp16 inputs, fp32 sums */
        a = tcc_cast(f, TCC_FLOAT32, a);
        b = tcc_cast(f, TCC_FLOAT32, b);
    }
    return tcc_sum(f, tcc_mul(f, a, b), 1, &m->k);
}

static inline void matmul_define(Matmul *m, int64_t n, int64_t k, int64_t p, tcc_dtype input)
{
    int64_t sa[2] = {n, k}, sb[2] = {k, p}, sc[2] = {n, p};
    m->a = tcc_placeholder(func, "A", 2, sa, input);
    m->b = tcc_placeholder(func, "B", 2, sb, input);
    m->k = tcc_reduce_axis(func, "k", k);
    m->c = tcc_compute(func, "C", 2, sc, ij, TCC_FLOAT32, matmul_body, m);
    ck_assert_ptr_nonnull(m->c);
}

/* matmul_define, then the schedule and C's stage and axes. */
static inline void matmul_scheduled(Matmul *m, int64_t n, int64_t k, int64_t p, tcc_dtype input)
{
    matmul_define(m, n, k, p, input);
    ck_assert_int_eq(tcc_schedule_create(func, 1, &m->c), TCC_OK);
    m->stage = tcc_stage_of(func, m->c);
    m->i = tcc_tensor_axis(m->c, 0);
    m->j = tcc_tensor_axis(m->c, 1);
}

static inline void matmul(Matmul *m)
{
    matmul_scheduled(m, 64, 16, 32, TCC_FLOAT32);
}

/* ---- lowering ----------------------------------------------------------------------- */

/* Lowers the `nparam` tensors `params` printing the loop IR after `pass` into loop_ir (NULL
 * when the lowering fails or `pass` is NULL); the caller frees the kernel (lowered_free). */
static inline Lowered lower_printing(int nparam, tcc_tensor *const *params, const char *pass)
{
    PrintCapture captured = {0};
    tcc_build_options options = {.size = sizeof(tcc_build_options),
                                 .arch = TCC_SM_80,
                                 .print_after_pass = pass,
                                 .print_callback = capture_print,
                                 .print_user = &captured};
    Lowered lowering = lower(func, nparam, params, &options);
    if (lowering.status == TCC_OK)
        ck_assert_int_eq(captured.calls, 1);
    free(loop_ir);
    loop_ir = captured.last;
    return lowering;
}

/* The loop IR after `pass`; the lowering must succeed. */
static inline const char *lowered(int nparam, tcc_tensor *const *params, const char *pass)
{
    Lowered lowering = lower_printing(nparam, params, pass);
    ck_assert_msg(lowering.status == TCC_OK, "lowering failed: %s", tcc_last_error(ctx));
    lowered_free(&lowering);
    ck_assert_ptr_nonnull(loop_ir);
    return loop_ir;
}

static inline const char *lowered_elementwise(const Elementwise *e, const char *pass)
{
    tcc_tensor *params[2] = {e->a, e->b};
    return lowered(2, params, pass);
}

static inline const char *lowered_matmul(const Matmul *m, const char *pass)
{
    tcc_tensor *params[3] = {m->a, m->b, m->c};
    return lowered(3, params, pass);
}

/* The lowering's status (and error) when it must fail. */
static inline tcc_status lower_status(int nparam, tcc_tensor *const *params)
{
    Lowered lowering = lower_printing(nparam, params, NULL);
    lowered_free(&lowering);
    return lowering.status;
}

/* The two axes a split makes. */
typedef struct Split {
    tcc_iter_var *outer, *inner;
} Split;

/* Splits `axis` of `stage` by `factor`, which must succeed. */
static inline Split split(tcc_stage *stage, tcc_iter_var *axis, int64_t factor)
{
    Split s;
    ck_assert_int_eq(tcc_split(stage, axis, factor, &s.outer, &s.inner), TCC_OK);
    return s;
}

/* Fails unless `text` contains every line of `lines` consecutively (a block of the nest,
 * indentation included). */
#define assert_block(text, lines) assert_contains(text, lines)

/* Fails unless `first` occurs in text before `second`. */
static inline void assert_order(const char *text, const char *first, const char *second)
{
    const char *a = strstr(text, first), *b = strstr(text, second);
    ck_assert_msg(a && b && a < b, "expected \"%s\" before \"%s\" in:\n%s", first, second, text);
}

/* Fails unless the last error names the problem in one line. */
static inline void assert_error(tcc_status status, tcc_status expected, const char *part)
{
    ck_assert_int_eq(status, expected);
    assert_contains(tcc_last_error(ctx), part);
    assert_one_line(ctx);
}

/* ---- a chain of two stages ------------------------------------------------------------ */

/* T[i, j] = A[i, j] * 2 (not an output); B[i, j] = T[i, j] + 1. */
typedef struct Chain {
    tcc_tensor *a, *t, *b;
    tcc_stage *st, *sb;
} Chain;

static inline Chain chain(void)
{
    Chain c;
    int64_t shape[2] = {64, 32};
    static const char *const txy[2] = {"x", "y"};
    c.a = tcc_placeholder(func, "A", 2, shape, TCC_FLOAT32);
    c.t = tcc_compute(func, "T", 2, shape, txy, TCC_FLOAT32, times_two, c.a);
    c.b = tcc_compute(func, "B", 2, shape, ij, TCC_FLOAT32, plus_one, c.t);
    ck_assert_ptr_nonnull(c.b);
    ck_assert_int_eq(tcc_schedule_create(func, 1, &c.b), TCC_OK);
    c.st = tcc_stage_of(func, c.t);
    c.sb = tcc_stage_of(func, c.b);
    return c;
}

static inline const char *lowered_chain(const Chain *c, const char *pass)
{
    tcc_tensor *params[2] = {c->a, c->b};
    return lowered(2, params, pass);
}

#endif
