/*
 * The lowering pipeline as a whole: the pass list in pipeline order, --print-after through
 * the callback (one pass, every pass, an unknown one, no callback), and the tutorial's
 * convolution lowered end to end. The passes one at a time: test_passes.c.
 */
#include "driver/driver.h"
#include "ir_support.h"

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pipeline ------------------------------------------------------------------- */

START_TEST(pass_names_in_pipeline_order)
{
    static const char *const expected[] = {
        "schedule_ops",      "flatten",         "simplify",           "inject_virtual_thread",
        "vectorize",         "persistent_grid", "fold_grid",          "software_pipeline",
        "inject_async_copy", "unroll",          "prefetch_fragments", "swizzle_shared",
        "store_ring",        "plan_shared",     "thread_sync",        "wgmma_zero_init",
        "wgmma_sync",        "warp_specialize"};
    enum { COUNT = sizeof expected / sizeof expected[0] };
    ck_assert_int_eq(tcc_pass_count(), COUNT);
    for (int p = 0; p < COUNT; p++) {
        ck_assert_str_eq(tcc_pass_name(p), expected[p]);
        ck_assert_int_eq(tcc_pass_index(expected[p]), p);
        ck_assert_ptr_nonnull(tcc_pass_summary(p));
    }
    ck_assert_ptr_null(tcc_pass_name(COUNT));
    ck_assert_int_eq(tcc_pass_index("inline"), -1);
}
END_TEST

/* B[i, j] = A[i, j] * 2 over 8 x 4, no schedule: the smallest function to lower. */
static tcc_tensor *small_a;

static tcc_expr *twice(tcc_func *f, tcc_expr *const *ax, void *user)
{
    (void)user;
    return tcc_mul(f, tcc_access(f, small_a, 2, ax), tcc_float(f, 2, TCC_FLOAT32));
}

/* The small function, its axes named `names` (NULL: after the tensor); params gets A, B. */
static tcc_func *small_func(const char *const *names, tcc_tensor *params[2])
{
    tcc_func *func;
    ck_assert_int_eq(tcc_func_create(ctx, "small", &func), TCC_OK);
    int64_t shape[2] = {8, 4};
    small_a = tcc_placeholder(func, "A", 2, shape, TCC_FLOAT32);
    tcc_tensor *b = tcc_compute(func, "B", 2, shape, names, TCC_FLOAT32, twice, NULL);
    ck_assert_int_eq(tcc_schedule_create(func, 1, &b), TCC_OK);
    params[0] = small_a;
    params[1] = b;
    return func;
}

/* Lowers the small function printing after `pass`; returns the lowering status. */
static tcc_status lower_small(const char *pass, PrintCapture *printed)
{
    static const char *const names[2] = {"i", "j"};
    tcc_tensor *params[2];
    tcc_func *func = small_func(names, params);
    tcc_build_options options = {.size = sizeof options,
                                 .print_after_pass = pass,
                                 .print_callback = capture_print,
                                 .print_user = printed};
    Lowered lowered = lower(func, 2, params, &options);
    lowered_free(&lowered);
    tcc_func_destroy(func);
    return lowered.status;
}

START_TEST(print_after_fires_once_for_a_named_pass)
{
    for (int p = 0; p < tcc_pass_count(); p++) {
        PrintCapture printed = {0};
        ck_assert_int_eq(lower_small(tcc_pass_name(p), &printed), TCC_OK);
        ck_assert_int_eq(printed.calls, 1);
        ck_assert_str_eq(printed.passes[0], tcc_pass_name(p));
        assert_contains(printed.last, "kernel small(float32 A[8, 4], float32 B[8, 4])");
        free(printed.last);
    }
}
END_TEST

START_TEST(print_after_shows_that_pass_s_output)
{
    PrintCapture before = {0}, after = {0};
    ck_assert_int_eq(lower_small("schedule_ops", &before), TCC_OK);
    ck_assert_int_eq(lower_small("flatten", &after), TCC_OK);
    assert_contains(before.last, "B[i, j] = A[i, j] * 2f");
    assert_contains(after.last, "B[i * 4 + j] = A[i * 4 + j] * 2f");
    free(before.last);
    free(after.last);
}
END_TEST

START_TEST(print_after_all_fires_once_per_pass)
{
    PrintCapture printed = {0};
    ck_assert_int_eq(lower_small("all", &printed), TCC_OK);
    ck_assert_int_eq(printed.calls, tcc_pass_count());
    for (int p = 0; p < tcc_pass_count(); p++)
        ck_assert_str_eq(printed.passes[p], tcc_pass_name(p));
    free(printed.last);
}
END_TEST

START_TEST(print_after_unknown_pass_is_an_error)
{
    PrintCapture printed = {0};
    ck_assert_int_eq(lower_small("inline", &printed), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(printed.calls, 0);
    assert_contains(tcc_last_error(ctx), "unknown pass 'inline'");
    assert_one_line(ctx);
}
END_TEST

START_TEST(print_after_without_callback_is_quiet)
{
    tcc_tensor *params[2];
    tcc_func *func = small_func(NULL, params);
    tcc_build_options options = {.size = sizeof(tcc_build_options), .print_after_pass = "all"};
    Lowered lowered = lower(func, 2, params, &options);
    ck_assert_int_eq(lowered.status, TCC_OK);
    ck_assert_ptr_nonnull(lowered.kernel);
    /* No axis names given: they are named after the tensor, <name>.i0, <name>.i1. */
    char *text = prim_func_text(lowered.kernel);
    assert_contains(text, ".i0 in 0..8 {");
    free(text);
    lowered_free(&lowered);
    tcc_func_destroy(func);
}
END_TEST

/* ---- the tutorial's convolution, end to end ---------------------------------------------- */

/* The tutorial's convolution lowered with auto_unroll_max_step 16, for every test of the
 * "tutorial" case (tutorial_setup and tutorial_teardown are its fixture). */
static struct {
    tcc_func *func;
    tcc_tensor *params[3];
    Lowered lowered;
    PrimFunc *kernel;
    char *text;
} tut;

static const tcc_build_options tutorial_options = {
    .size = sizeof(tcc_build_options), .arch = TCC_SM_80, .auto_unroll_max_step = 16};

static void tutorial_setup(void)
{
    ir_context_setup();
    ck_assert_int_eq(tcc_func_create(ctx, "conv2d", &tut.func), TCC_OK);
    test_tutorial_conv2d(tut.func, tut.params);
    tut.lowered = lower(tut.func, 3, tut.params, &tutorial_options);
    ck_assert_msg(tut.lowered.status == TCC_OK, "%s", tcc_last_error(ctx));
    tut.kernel = tut.lowered.kernel;
    tut.text = prim_func_text(tut.kernel);
}

static void tutorial_teardown(void)
{
    free(tut.text);
    lowered_free(&tut.lowered);
    tcc_func_destroy(tut.func);
    ir_context_teardown();
}

static void collect_allocations(const Stmt *s, const Buffer **out, int *n)
{
    if (!s)
        return;
    switch (s->kind) {
    case STMT_SEQ:
        for (int k = 0; k < s->seq.count; k++)
            collect_allocations(s->seq.items[k], out, n);
        return;
    case STMT_FOR:
        collect_allocations(s->loop.body, out, n);
        return;
    case STMT_IF:
        collect_allocations(s->branch.then_body, out, n);
        collect_allocations(s->branch.else_body, out, n);
        return;
    case STMT_ALLOCATE:
        if (*n < 16)
            out[(*n)++] = s->alloc.buffer;
        collect_allocations(s->alloc.body, out, n);
        return;
    default:
        return;
    }
}

static const Stmt *find_loop(const Stmt *s, const char *name)
{
    if (!s)
        return NULL;
    switch (s->kind) {
    case STMT_SEQ:
        for (int k = 0; k < s->seq.count; k++) {
            const Stmt *found = find_loop(s->seq.items[k], name);
            if (found)
                return found;
        }
        return NULL;
    case STMT_FOR:
        if (strcmp(s->loop.var->name, name) == 0)
            return s;
        return find_loop(s->loop.body, name);
    case STMT_IF:
        return find_loop(s->branch.then_body, name);
    case STMT_ALLOCATE:
        return find_loop(s->alloc.body, name);
    default:
        return NULL;
    }
}

static int count_kind(const Stmt *s, StmtKind kind)
{
    if (!s)
        return 0;
    int n = s->kind == kind;
    switch (s->kind) {
    case STMT_SEQ:
        for (int k = 0; k < s->seq.count; k++)
            n += count_kind(s->seq.items[k], kind);
        return n;
    case STMT_FOR:
        return n + count_kind(s->loop.body, kind);
    case STMT_IF:
        return n + count_kind(s->branch.then_body, kind) + count_kind(s->branch.else_body, kind);
    case STMT_ALLOCATE:
        return n + count_kind(s->alloc.body, kind);
    default:
        return n;
    }
}

START_TEST(tutorial_allocations_are_the_tutorial_s)
{
    /* The accumulator per warp, the two shared tiles, and the two fragment groups. */
    assert_contains(tut.text, "allocate Conv.wmma.accumulator: float32 wmma.accumulator "
                              "[2, 1, 1, 4, 16, 16] {");
    /* Both live at once: plan_shared puts them side by side. */
    assert_contains(tut.text,
                    "allocate Apad.shared: float16 shared [8, 1, 3, 2, 16, 16] offset 24576 {");
    assert_contains(tut.text, "allocate W.shared: float16 shared [1, 3, 2, 8, 16, 16] offset 0 {");
    assert_contains(tut.text, "allocate Apad.shared.wmma.matrix_a: float16 wmma.matrix_a "
                              "[2, 1, 1, 1, 16, 16] {");
    assert_contains(tut.text, "allocate W.shared.wmma.matrix_b: float16 wmma.matrix_b "
                              "[1, 1, 1, 4, 16, 16] {");
    ck_assert_int_eq(occurrences(tut.text, "allocate "), 5);
    const Buffer *allocs[16];
    int n = 0;
    collect_allocations(tut.kernel->body, allocs, &n);
    ck_assert_int_eq(n, 5);
    int shared = 0;
    for (int k = 0; k < n; k++) {
        if (allocs[k]->scope != TCC_SCOPE_SHARED)
            continue;
        shared++;
        ck_assert_int_eq(allocs[k]->elements, 12288); /* 24 KiB of halves each */
        for (int d = 0; d < allocs[k]->ndim; d++)
            ck_assert_ptr_null(allocs[k]->min[d]); /* flattened: offsets start at 0 */
    }
    ck_assert_int_eq(shared, 2);
}
END_TEST

START_TEST(tutorial_launch_shape)
{
    assert_contains(tut.text, "  grid(2, 4, 196) block(32, 4, 2) shared(49152)\n");
    ck_assert_int_eq(tut.kernel->shared_bytes, 49152);
    static const int64_t launch[6] = {2, 4, 196, 32, 4, 2};
    for (int d = 0; d < 6; d++)
        ck_assert_int_eq(tut.kernel->launch[d], launch[d]);
    assert_contains(tut.text, "kernel conv2d(float16 A[16, 14, 14, 16, 16, 16], float16 "
                              "W[3, 3, 16, 32, 16, 16], float32 Conv[16, 14, 14, 32, 16, 16])");
}
END_TEST

START_TEST(tutorial_two_barriers_per_kh_iteration)
{
    ck_assert_int_eq(count_kind(tut.kernel->body, STMT_BARRIER), 2);
    const Stmt *kh = find_loop(tut.kernel->body, "kh");
    ck_assert_ptr_nonnull(kh);
    ck_assert(tci_expr_is_int(kh->loop.extent, 3));
    /* Both inside the kh body: one before the shared copies overwrite what the previous
     * iteration's fragment loads read, one between the copies and the loads. */
    ck_assert_int_eq(count_kind(kh->loop.body, STMT_BARRIER), 2);
    ck_assert_int_eq(kh->loop.body->kind, STMT_SEQ);
    ck_assert_int_eq(kh->loop.body->seq.items[0]->kind, STMT_BARRIER);
    const Stmt *inner = find_loop(kh->loop.body, "ic.inner");
    ck_assert_ptr_nonnull(inner);
    ck_assert_int_eq(count_kind(inner, STMT_BARRIER), 0);
}
END_TEST

START_TEST(tutorial_tensor_core_operations)
{
    ck_assert_int_eq(occurrences(tut.text, "wmma.fill_fragment("), 8);
    ck_assert_int_eq(occurrences(tut.text, "wmma.load_matrix_a("), 2);
    ck_assert_int_eq(occurrences(tut.text, "wmma.load_matrix_b("), 4);
    ck_assert_int_eq(occurrences(tut.text, "wmma.mma_sync("), 8);
    ck_assert_int_eq(occurrences(tut.text, "wmma.store_matrix("), 8);
    ck_assert_int_eq(occurrences(tut.text, "// m16n16k16"), 30);
    /* Unrolled: every fragment index is a constant. */
    assert_contains(tut.text, "wmma.mma_sync(Conv.wmma.accumulator[7], "
                              "Apad.shared.wmma.matrix_a[1], W.shared.wmma.matrix_b[3], "
                              "Conv.wmma.accumulator[7])");
    ck_assert_int_eq(count_kind(tut.kernel->body, STMT_WMMA), 30);
}
END_TEST

START_TEST(tutorial_filter_copy_is_vectorized)
{
    /* Each lane copies 8 contiguous halves (16 bytes) of the filter tile. */
    assert_contains(tut.text, "W.shared[ramp(");
    assert_contains(tut.text, "threadIdx.x * 8, 1, 8)] = W[ramp(");
    ck_assert_int_eq(occurrences(tut.text, ", 1, 8)]"), 2);
    ck_assert_int_eq(occurrences(tut.text, "vectorized for"), 0);
    /* The padded input copy is not vectorized (its threadIdx.x is innermost). */
    assert_contains(tut.text, "Apad.shared[threadIdx.y * 3072 + threadIdx.z * 1536 + ax2 * "
                              "512 + ax3 * 256 + ax4.ax5.fused.outer * 32 + threadIdx.x] = "
                              "if_then_else(");
}
END_TEST

START_TEST(tutorial_lowers_the_same_twice)
{
    /* Lowering leaves nothing behind on the schedule that changes the next lowering. */
    tcc_build_options options = {.size = sizeof(tcc_build_options), .auto_unroll_max_step = 16};
    tcc_tensor *params[3] = {tut.func->tensors[0], tut.func->tensors[1], NULL};
    for (int k = 0; k < tut.func->ntensor; k++)
        if (strcmp(tut.func->tensors[k]->name, "Conv") == 0)
            params[2] = tut.func->tensors[k];
    ck_assert_ptr_nonnull(params[2]);
    Lowered again = lower(tut.func, 3, params, &options);
    ck_assert_int_eq(again.status, TCC_OK);
    char *text = prim_func_text(again.kernel);
    ck_assert_str_eq(text, tut.text);
    free(text);
    lowered_free(&again);
}
END_TEST

static Suite *passes_pipeline_suite(void)
{
    Suite *suite = suite_create("passes_pipeline");
    TCase *pipeline = test_case(suite, "pipeline", ir_context_setup, ir_context_teardown);
    tcase_add_test(pipeline, pass_names_in_pipeline_order);
    tcase_add_test(pipeline, print_after_fires_once_for_a_named_pass);
    tcase_add_test(pipeline, print_after_shows_that_pass_s_output);
    tcase_add_test(pipeline, print_after_all_fires_once_per_pass);
    tcase_add_test(pipeline, print_after_unknown_pass_is_an_error);
    tcase_add_test(pipeline, print_after_without_callback_is_quiet);

    TCase *tutorial = test_case(suite, "tutorial", tutorial_setup, tutorial_teardown);
    tcase_set_timeout(tutorial, 60);
    tcase_add_test(tutorial, tutorial_allocations_are_the_tutorial_s);
    tcase_add_test(tutorial, tutorial_launch_shape);
    tcase_add_test(tutorial, tutorial_two_barriers_per_kh_iteration);
    tcase_add_test(tutorial, tutorial_tensor_core_operations);
    tcase_add_test(tutorial, tutorial_filter_copy_is_vectorized);
    tcase_add_test(tutorial, tutorial_lowers_the_same_twice);
    return suite;
}

TEST_MAIN(passes_pipeline_suite)
