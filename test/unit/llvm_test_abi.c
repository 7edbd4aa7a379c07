/*
 * The ABI rule of tcc/tcc.h: a struct that may grow carries its size, set by its _init
 * function (or by the caller to sizeof), and every call that reads or writes one refuses a
 * size it does not know in one line, before reading a field; the calls without a context
 * answer 0 or false. Also the versions the library and its headers say.
 */
#include "support.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The size a caller built against larger (newer) headers would pass. */
#define NEWER(type) (sizeof(type) + 8)

START_TEST(test_versions_agree)
{
    ck_assert_str_eq(tcc_version_string(), TCC_VERSION_STRING);
    ck_assert_int_eq(tcc_version_number(), TCC_VERSION_NUMBER);
    ck_assert_int_eq(TCC_VERSION_NUMBER,
                     TCC_VERSION_MAJOR * 10000 + TCC_VERSION_MINOR * 100 + TCC_VERSION_PATCH);
}
END_TEST

START_TEST(test_inits_set_sizes)
{
    tcc_conv2d_desc conv;
    tcc_conv2d_desc_init(&conv);
    ck_assert_uint_eq(conv.size, sizeof conv);
    tcc_matmul_desc matmul;
    tcc_matmul_desc_init(&matmul);
    ck_assert_uint_eq(matmul.size, sizeof matmul);
    tcc_gemm_schedule schedule;
    memset(&schedule, 0xff, sizeof schedule);
    tcc_gemm_schedule_init(&schedule);
    ck_assert_uint_eq(schedule.size, sizeof schedule);
    ck_assert_int_eq(schedule.stages, 0); /* every knob chosen */
    tcc_build_options options;
    tcc_build_options_init(&options);
    ck_assert_uint_eq(options.size, sizeof options);
    tcc_check_options check;
    tcc_check_options_init(&check);
    ck_assert_uint_eq(check.size, sizeof check);
    ck_assert_int_eq(check.runs, 0);
}
END_TEST

/* A program built against the first release's headers calls the function tcc_build_options_init
 * (the macro of that name is newer): it writes that release's size, not past it. The sized
 * call writes as far as its size reaches; a size no release had gets only the size field
 * (every call then refuses it), and NULL or a size too small for the field nothing. */
START_TEST(test_inits_write_the_callers_size)
{
    enum { FIRST = offsetof(tcc_build_options, machine_code) };
    unsigned char bytes[sizeof(tcc_build_options) + 16];
    tcc_build_options *options = (tcc_build_options *)bytes;
    memset(bytes, 0xab, sizeof bytes);
    (tcc_build_options_init)(options);
    ck_assert_uint_eq(options->size, FIRST);
    ck_assert_int_eq(options->arch, TCC_SM_80);
    for (size_t i = FIRST; i < sizeof bytes; i++)
        ck_assert_uint_eq(bytes[i], 0xab);
    memset(bytes, 0xab, sizeof bytes);
    tcc_build_options_init(options);
    ck_assert_uint_eq(options->size, sizeof *options);
    ck_assert(!options->machine_code);
    ck_assert_uint_eq(bytes[sizeof *options], 0xab);
    memset(bytes, 0xab, sizeof bytes);
    tcc_build_options_init_size(options, sizeof *options + 8);
    ck_assert_uint_eq(options->size, sizeof *options + 8);
    for (size_t i = sizeof options->size; i < sizeof bytes; i++)
        ck_assert_uint_eq(bytes[i], 0xab);
    tcc_build_options_init_size(NULL, sizeof *options);
    tcc_build_options_init_size(options, 4);
    ck_assert_uint_eq(options->size, sizeof *options + 8);
    /* A workload's descriptors are initialized with it, whichever call. */
    tcc_workload workload;
    memset(&workload, 0xab, sizeof workload);
    (tcc_workload_init)(&workload, TCC_WORKLOAD_MATMUL);
    ck_assert_uint_eq(workload.size, sizeof workload);
    ck_assert_uint_eq(workload.matmul.size, sizeof workload.matmul);
    ck_assert_int_eq(workload.conv2d.groups, 1);
}
END_TEST

/* Compiling a small product with one struct's size changed by `edit`; the kernel kept in
 * *out when out is not NULL. */
static tcc_status compile_keeping(tcc_context *ctx,
                                  void (*edit)(tcc_matmul_desc *, tcc_gemm_schedule *,
                                               tcc_build_options *),
                                  tcc_kernel **out)
{
    tcc_matmul_desc desc;
    tcc_matmul_desc_init(&desc);
    desc.m = desc.n = desc.k = 64;
    tcc_gemm_schedule schedule;
    tcc_gemm_schedule_init(&schedule);
    tcc_build_options options;
    tcc_build_options_init(&options);
    edit(&desc, &schedule, &options);
    tcc_kernel *kernel = NULL;
    tcc_status status = tcc_matmul_compile(ctx, &desc, &schedule, &options, &kernel);
    if (out)
        *out = kernel;
    else
        tcc_kernel_destroy(kernel);
    return status;
}

static tcc_status compile_with(tcc_context *ctx,
                               void (*edit)(tcc_matmul_desc *, tcc_gemm_schedule *,
                                            tcc_build_options *))
{
    return compile_keeping(ctx, edit, NULL);
}

static void desc_unset(tcc_matmul_desc *d, tcc_gemm_schedule *s, tcc_build_options *o)
{
    (void)s, (void)o;
    d->size = 0;
}

static void schedule_newer(tcc_matmul_desc *d, tcc_gemm_schedule *s, tcc_build_options *o)
{
    (void)d, (void)o;
    s->size = NEWER(tcc_gemm_schedule);
}

/* Older than the first release of tcc_build_options: no headers had that size. */
static void options_older(tcc_matmul_desc *d, tcc_gemm_schedule *s, tcc_build_options *o)
{
    (void)d, (void)s;
    o->size = offsetof(tcc_build_options, machine_code) - 8;
}

/* The first release's size, before machine_code: taken, and what lies past it (here a
 * machine_code of true, which such a caller does not have) is not read. */
static void options_first_release(tcc_matmul_desc *d, tcc_gemm_schedule *s, tcc_build_options *o)
{
    (void)d, (void)s;
    o->size = offsetof(tcc_build_options, machine_code);
    o->machine_code = true;
}

static void nothing(tcc_matmul_desc *d, tcc_gemm_schedule *s, tcc_build_options *o)
{
    (void)d, (void)s, (void)o;
}

START_TEST(test_compile_refuses_unknown_sizes)
{
    tcc_context *ctx = test_context();
    ck_assert_int_eq(compile_with(ctx, nothing), TCC_OK);
    ck_assert_int_eq(compile_with(ctx, desc_unset), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(tcc_last_error(ctx),
                     "matmul: tcc_matmul_desc.size is 0: set it with the struct's _init function "
                     "or to sizeof(tcc_matmul_desc)");
    ck_assert_int_eq(compile_with(ctx, schedule_newer), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "schedule: tcc_gemm_schedule.size is");
    assert_contains(tcc_last_error(ctx), "the caller was built against other headers");
    ck_assert_int_eq(compile_with(ctx, options_older), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "build options: tcc_build_options.size is");
    tcc_kernel *kernel = NULL;
    ck_assert_int_eq(compile_keeping(ctx, options_first_release, &kernel), TCC_OK);
    ck_assert_ptr_null(tcc_kernel_machine_code(kernel, NULL)); /* the default, false */
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_outputs_need_their_size)
{
    tcc_context *ctx = test_context();
    tcc_conv2d_desc desc;
    tcc_conv2d_desc_init(&desc);
    desc.in_channels = desc.out_channels = 16;
    tcc_gemm_schedule chosen = {0};
    ck_assert_int_eq(tcc_conv2d_default_schedule(ctx, &desc, TCC_SM_80, &chosen),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "tcc_gemm_schedule.size is 0");
    tcc_gemm_schedule_init(&chosen);
    ck_assert_int_eq(tcc_conv2d_default_schedule(ctx, &desc, TCC_SM_80, &chosen), TCC_OK);
    ck_assert_uint_eq(chosen.size, sizeof chosen); /* what compile takes back as it is */
    ck_assert_int_gt(chosen.stages, 0);

    tcc_kernel *kernel = NULL;
    ck_assert_int_eq(tcc_conv2d_compile(ctx, &desc, &chosen, NULL, &kernel), TCC_OK);
    tcc_kernel_param_info info = {.size = 0, .rank = -1};
    ck_assert(!tcc_kernel_param(kernel, 0, &info));
    ck_assert_int_eq(info.rank, -1); /* untouched */
    info.size = NEWER(tcc_kernel_param_info);
    ck_assert(!tcc_kernel_param(kernel, 0, &info));
    info.size = sizeof info;
    ck_assert(tcc_kernel_param(kernel, 0, &info));
    ck_assert_str_eq(info.name, "input");
    ck_assert_uint_eq(info.size, sizeof info);
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_calls_without_context_answer_zero)
{
    tcc_conv2d_desc conv;
    tcc_conv2d_desc_init(&conv);
    conv.height = conv.width = 8;
    ck_assert_int_eq(tcc_conv2d_out_height(&conv), 8);
    ck_assert(tcc_conv2d_flops(&conv) > 0.0);
    conv.size = NEWER(tcc_conv2d_desc);
    ck_assert_int_eq(tcc_conv2d_out_height(&conv), 0);
    ck_assert_int_eq(tcc_conv2d_output_elements(&conv), 0);
    ck_assert(tcc_conv2d_flops(&conv) == 0.0);
    tcc_matmul_desc matmul;
    tcc_matmul_desc_init(&matmul);
    matmul.size = 0;
    ck_assert(tcc_matmul_flops(&matmul) == 0.0);
}
END_TEST

START_TEST(test_reference_checks_its_tensors)
{
    tcc_context *ctx = test_context();
    tcc_matmul_desc desc;
    tcc_matmul_desc_init(&desc);
    uint16_t one = tcc_f32_to_f16(1.0f);
    tcc_reference_tensors tensors = {.input = &one, .filter = &one};
    double out;
    ck_assert_int_eq(tcc_matmul_reference(ctx, &desc, &tensors, NULL, 1, 1, &out),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "tcc_reference_tensors.size is 0");
    tensors.size = sizeof tensors;
    ck_assert_int_eq(tcc_matmul_reference(ctx, &desc, &tensors, NULL, 1, 1, &out), TCC_OK);
    ck_assert(out == 1.0);
    tcc_context_destroy(ctx);
}
END_TEST

/* A template a program defines, of no knobs (only its size matters here). */
static tcc_status no_knobs(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                           tcc_arch arch, const tcc_build_options *options, tcc_kernel **kernel)
{
    (void)ctx, (void)cfg, (void)workload, (void)arch, (void)options, (void)kernel;
    return TCC_OK;
}

#define TEMPLATE_SIZE_0                                                                            \
    "template: tcc_template.size is 0: set it with the struct's _init function or to "             \
    "sizeof(tcc_template)"

START_TEST(test_templates_need_their_size)
{
    tcc_context *ctx = test_context();
    tcc_template tmpl = {
        .size = sizeof tmpl, .name = "mine", .kind = TCC_WORKLOAD_MATMUL, .instantiate = no_knobs};
    tcc_workload workload;
    tcc_workload_init(&workload, TCC_WORKLOAD_MATMUL);
    tcc_config_space *space = NULL;
    ck_assert_int_eq(tcc_config_space_create(ctx, &tmpl, &workload, TCC_SM_80, &space), TCC_OK);
    tcc_config *cfg = NULL;
    ck_assert_int_eq(tcc_config_create(ctx, space, 0, &cfg), TCC_OK);
    char key[256];
    ck_assert_int_gt(tcc_workload_key(&tmpl, &workload, key, sizeof key), 0);

    tmpl.size = 0;
    tcc_config_space *refused = NULL;
    ck_assert_int_eq(tcc_config_space_create(ctx, &tmpl, &workload, TCC_SM_80, &refused),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(tcc_last_error(ctx), TEMPLATE_SIZE_0);
    ck_assert_ptr_null(refused);
    tcc_kernel *kernel = NULL;
    ck_assert_int_eq(tcc_config_instantiate(ctx, &tmpl, cfg, &workload, TCC_SM_80, NULL, &kernel),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(tcc_last_error(ctx), TEMPLATE_SIZE_0);
    ck_assert_ptr_null(kernel);
    /* No context to say it in: no key, rather than one every such template would share. */
    ck_assert_int_eq(tcc_workload_key(&tmpl, &workload, key, sizeof key), -1);
    ck_assert_str_eq(key, "");
    tmpl.size = NEWER(tcc_template);
    ck_assert_int_eq(tcc_config_space_create(ctx, &tmpl, &workload, TCC_SM_80, &refused),
                     TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "template: tcc_template.size is");
    assert_contains(tcc_last_error(ctx), "the caller was built against other headers");
    /* The first size with the field, before redundant_knobs: taken, and that field unread. */
    tmpl.size = offsetof(tcc_template, redundant_knobs);
    tmpl.redundant_knobs = (uint64_t(*)(tcc_context *, tcc_config *, const tcc_workload *,
                                        tcc_arch))1; /* never called */
    ck_assert_int_eq(tcc_config_space_create(ctx, &tmpl, &workload, TCC_SM_80, &refused), TCC_OK);
    ck_assert_int_eq(tcc_config_space_canonical(refused, 0), 0);
    ck_assert_int_gt(tcc_workload_key(&tmpl, &workload, key, sizeof key), 0);
    tcc_config_space_destroy(refused);
    tmpl.redundant_knobs = NULL;
    tmpl.size = sizeof tmpl;
    workload.size = 0;
    ck_assert_int_eq(tcc_workload_key(&tmpl, &workload, key, sizeof key), -1);
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
    tcc_context_destroy(ctx);
}
END_TEST

START_TEST(test_records_need_their_size)
{
    tcc_context *ctx = test_context();
    char dir[] = "/tmp/tcc-abi-XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/records.db", dir);
    tcc_record_store *store = NULL;
    ck_assert_msg(tcc_record_store_open(ctx, path, &store) == TCC_OK, "%s", tcc_last_error(ctx));

    tcc_record record = {.template_name = "mine",
                         .workload_key = "[\"mine\", 1]",
                         .config = "[[\"k\", 1]]",
                         .result = {.ncost = 1, .costs = {1e-3}}};
    ck_assert_int_eq(tcc_record_add(store, &record), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(tcc_last_error(ctx),
                     "tcc_record_add: tcc_record.size is 0: set it with the struct's _init "
                     "function or to sizeof(tcc_record)");
    record.size = NEWER(tcc_record);
    ck_assert_int_eq(tcc_record_add(store, &record), TCC_ERROR_INVALID_ARGUMENT);
    assert_contains(tcc_last_error(ctx), "the caller was built against other headers");
    record.size = sizeof record;
    ck_assert_msg(tcc_record_add(store, &record) == TCC_OK, "%s", tcc_last_error(ctx));

    /* What the library fills: refused, and left as it was, unless its size is known. */
    tcc_record best = {.size = 0, .config_index = -7};
    ck_assert_int_eq(tcc_record_best(store, "mine", record.workload_key, NULL, &best),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(tcc_last_error(ctx),
                     "tcc_record_best: out: tcc_record.size is 0: set it with the struct's _init "
                     "function or to sizeof(tcc_record)");
    assert_one_line(ctx);
    ck_assert_int_eq(best.config_index, -7);
    best.size = NEWER(tcc_record);
    ck_assert_int_eq(tcc_record_best(store, "mine", record.workload_key, NULL, &best),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(best.config_index, -7);
    best.size = sizeof best;
    ck_assert_msg(tcc_record_best(store, "mine", record.workload_key, NULL, &best) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    ck_assert_uint_eq(best.size, sizeof best);
    ck_assert_int_eq(best.config_index, 0);

    /* apply_history_best reads the template before anything else. */
    tcc_template tmpl = {.name = "mine", .kind = TCC_WORKLOAD_MATMUL, .instantiate = no_knobs};
    tcc_workload workload;
    tcc_workload_init(&workload, TCC_WORKLOAD_MATMUL);
    tcc_kernel *kernel = NULL;
    ck_assert_int_eq(
        tcc_apply_history_best(ctx, store, &tmpl, &workload, TCC_SM_80, NULL, NULL, &kernel, NULL),
        TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(tcc_last_error(ctx), TEMPLATE_SIZE_0);
    ck_assert_ptr_null(kernel);

    tcc_record_store_close(store);
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char file[80];
        snprintf(file, sizeof file, "%s%s", path, suffixes[i]);
        remove(file);
    }
    ck_assert_int_eq(rmdir(dir), 0);
    tcc_context_destroy(ctx);
}
END_TEST

static Suite *abi_suite(void)
{
    Suite *suite = suite_create("abi");
    TCase *sizes = test_case(suite, "sizes", NULL, NULL);
    tcase_add_test(sizes, test_versions_agree);
    tcase_add_test(sizes, test_inits_set_sizes);
    tcase_add_test(sizes, test_inits_write_the_callers_size);
    tcase_add_test(sizes, test_compile_refuses_unknown_sizes);
    tcase_add_test(sizes, test_outputs_need_their_size);
    tcase_add_test(sizes, test_calls_without_context_answer_zero);
    tcase_add_test(sizes, test_reference_checks_its_tensors);
    tcase_add_test(sizes, test_templates_need_their_size);
    tcase_add_test(sizes, test_records_need_their_size);
    return suite;
}

TEST_MAIN(abi_suite)
