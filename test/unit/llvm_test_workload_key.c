/*
 * Workload keys read back (tcc_workload_from_key, lib/tune/workload_parse.c): every template's
 * key of workloads that set every field the key holds (epilogues of every kind, matmuls,
 * grouped convolutions, the seed's AutoTVM key) reads back into the workload it was written
 * from, and anything else is refused in one line.
 */
#include "support.h"
#include "tcc/tune.h"

#include <check.h>
#include <string.h>

static tcc_context *ctx;

static void setup(void)
{
    ctx = test_context();
}

static void teardown(void)
{
    tcc_context_destroy(ctx);
    ctx = NULL;
}

/* The key of `w`, read back, must give `w` again: the same key, and the same descriptor. */
static void assert_round_trip(const char *template_name, const tcc_workload *w)
{
    const tcc_template *tmpl = tcc_template_find(template_name);
    char key[2048], again[2048];
    ck_assert_int_lt(tcc_workload_key(tmpl, w, key, sizeof key), (int)sizeof key);
    tcc_workload back = {.size = sizeof back};
    ck_assert_msg(tcc_workload_from_key(ctx, tmpl, key, &back) == TCC_OK, "%s: %s", key,
                  tcc_last_error(ctx));
    ck_assert_int_eq(back.kind, w->kind);
    ck_assert_uint_eq(back.size, sizeof back);
    tcc_workload_key(tmpl, &back, again, sizeof again);
    ck_assert_str_eq(again, key);
    if (w->kind == TCC_WORKLOAD_MATMUL) {
        ck_assert_int_eq(back.matmul.k, w->matmul.k);
        ck_assert(back.matmul.b_col_major == w->matmul.b_col_major);
        ck_assert(back.matmul.epilogue.clamp_max == w->matmul.epilogue.clamp_max);
    } else {
        ck_assert_int_eq(back.conv2d.pad_right, w->conv2d.pad_right);
        ck_assert_int_eq(back.conv2d.layout, w->conv2d.layout);
        ck_assert_int_eq(back.conv2d.output_type, w->conv2d.output_type);
        ck_assert(back.conv2d.epilogue.alpha == w->conv2d.epilogue.alpha);
        ck_assert_int_eq(back.conv2d.epilogue.prologue, w->conv2d.epilogue.prologue);
    }
}

START_TEST(keys_read_back)
{
    tcc_workload w;
    tcc_workload_init(&w, TCC_WORKLOAD_CONV2D);
    tcc_conv2d_desc *d = &w.conv2d;
    d->batch = 32, d->height = 56, d->width = 28, d->in_channels = 64, d->out_channels = 128;
    d->kernel_h = 3, d->kernel_w = 5, d->stride_h = 2, d->stride_w = 1;
    d->pad_top = 1, d->pad_bottom = 0, d->pad_left = 2, d->pad_right = 3;
    d->dilation_h = 1, d->dilation_w = 2, d->groups = 4;
    d->layout = TCC_LAYOUT_NCHW, d->filter_layout = TCC_FILTER_KCRS;
    d->input_type = TCC_BFLOAT16, d->output_type = TCC_BFLOAT16;
    d->epilogue = (tcc_epilogue){.alpha = 0.1,
                                 .beta = -2.5,
                                 .bias = true,
                                 .residual = true,
                                 .relu = true,
                                 .clamp = true,
                                 .clamp_min = -1e-7,
                                 .clamp_max = 6.0,
                                 .prologue = TCC_PROLOGUE_SCALE,
                                 .prologue_arg = 1.0 / 3.0};
    assert_round_trip("gemm", &w);
    assert_round_trip("tutorial", &w);

    tcc_workload m;
    tcc_workload_init(&m, TCC_WORKLOAD_MATMUL);
    m.matmul.batch = 3, m.matmul.m = 8192, m.matmul.n = 1000, m.matmul.k = 77;
    m.matmul.a_col_major = true, m.matmul.b_col_major = true;
    m.matmul.input_type = TCC_INT8, m.matmul.accumulate_type = TCC_INT32;
    m.matmul.output_type = TCC_INT32;
    m.matmul.epilogue.clamp = true, m.matmul.epilogue.clamp_max = 127;
    assert_round_trip("gemm", &m);

    /* The seed's: AutoTVM's key, float32 NCHW/KCRS with even padding. */
    tcc_workload s;
    tcc_workload_init(&s, TCC_WORKLOAD_CONV2D);
    s.conv2d.height = s.conv2d.width = 7, s.conv2d.in_channels = s.conv2d.out_channels = 512;
    s.conv2d.kernel_h = s.conv2d.kernel_w = 3;
    s.conv2d.pad_top = s.conv2d.pad_bottom = s.conv2d.pad_left = s.conv2d.pad_right = 1;
    s.conv2d.layout = TCC_LAYOUT_NCHW, s.conv2d.filter_layout = TCC_FILTER_KCRS;
    s.conv2d.input_type = s.conv2d.accumulate_type = s.conv2d.output_type = TCC_FLOAT32;
    assert_round_trip("conv2d_no_batching", &s);
}
END_TEST

static void assert_refused(const char *template_name, const char *key, const char *part)
{
    tcc_workload w = {.size = sizeof w};
    ck_assert_int_eq(tcc_workload_from_key(ctx, tcc_template_find(template_name), key, &w),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), part);
    assert_one_line(ctx);
}

START_TEST(other_keys_refused)
{
    const char *seed = "[\"tutorial/conv2d_no_batching\", 1, 7, 7, 512, 512, 3, 3, [1, 1], "
                       "[1, 1]]";
    assert_refused("gemm", seed, "its name is not the template's");
    assert_refused("gemm", "{}", "it is no JSON array");
    assert_refused("gemm", "[\"tcc/gemm/conv2d\"", "workload key of template gemm: ");
    assert_refused("conv2d_no_batching",
                   "[\"tutorial/conv2d_no_batching\", 1, 7, 7, 512, 512, 3, 3, [1, 1], [1]]",
                   "the padding");
    assert_refused("conv2d_no_batching",
                   "[\"tutorial/conv2d_no_batching\", 1, 7, 7, 512, 512, 3, 3, [1, 1], [1, 1], 0]",
                   "more members than a key");
    assert_refused("conv2d_no_batching",
                   "[\"tutorial/conv2d_no_batching\", 1.5, 7, 7, 512, 512, 3, 3, [1, 1], [1, 1]]",
                   "the shape");
    /* Read, but written again it differs: spacing tcc does not write. */
    assert_refused("conv2d_no_batching",
                   "[\"tutorial/conv2d_no_batching\",1, 7, 7, 512, 512, 3, 3, [1, 1], [1, 1]]",
                   "written again it reads otherwise");
    tcc_workload w = {.size = sizeof w};
    ck_assert_int_eq(tcc_workload_from_key(ctx, NULL, seed, &w), TCC_ERROR_INVALID_ARGUMENT);
    /* An out whose size no release had is refused, nothing written. */
    w.size = 3;
    ck_assert_int_eq(tcc_workload_from_key(ctx, tcc_template_find("conv2d_no_batching"), seed, &w),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_uint_eq(w.size, 3);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tune_workload_key");
    TCase *tc = test_case(s, "keys", setup, teardown);
    tcase_add_test(tc, keys_read_back);
    tcase_add_test(tc, other_keys_refused);
    return s;
}

TEST_MAIN(suite)
