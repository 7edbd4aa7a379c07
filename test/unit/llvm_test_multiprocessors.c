/*
 * tcc_build_options.multiprocessors: the GPU's multiprocessors, which a persistent grid's blocks
 * number where the schedule leaves grid_blocks to the library (an H100 PCIe's 114 rather than
 * sm_90a's 132), through the operators, the gemm template (tcc-tune's builders) and
 * tcc_apply_history_best (--tuned). A grid_blocks given wins over it; a caller of the first
 * release's size, which has no such field, gets the target's; a negative count is refused.
 */
#include "support.h"

#include "tcc/tune.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static tcc_context *ctx;

static void setup(void)
{
    ctx = test_context();
}

static void teardown(void)
{
    tcc_context_destroy(ctx);
}

/* The seed layer (tcc-conv --layer seed_tutorial --layout nhwc): 784 tiles of 128 x 256 in a
 * persistent grid on sm_90a, 6 rounds of 131 blocks for 132 multiprocessors. */
static tcc_conv2d_desc seed_layer(void)
{
    tcc_conv2d_desc desc;
    tcc_conv2d_desc_init(&desc);
    desc.batch = 256, desc.height = desc.width = 14;
    desc.in_channels = 256, desc.out_channels = 512;
    desc.kernel_h = desc.kernel_w = 3;
    desc.pad_top = desc.pad_bottom = desc.pad_left = desc.pad_right = 1;
    return desc;
}

static tcc_build_options sm90a(int multiprocessors)
{
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = TCC_SM_90A;
    options.multiprocessors = multiprocessors;
    return options;
}

/* The blocks of a kernel's one launch, checked against its loop IR's grid and launch. */
static int64_t persistent_blocks(const tcc_kernel *kernel)
{
    ck_assert_int_eq(tcc_kernel_launch_count(kernel), 1);
    int64_t grid[3];
    tcc_kernel_launch_grid(kernel, 0, grid);
    ck_assert_int_eq(grid[1], 1);
    ck_assert_int_eq(grid[2], 1);
    char line[64];
    snprintf(line, sizeof line, "grid(%lld, 1, 1)", (long long)grid[0]);
    ck_assert_msg(strstr(tcc_kernel_loop_ir(kernel), line), "no %s in the loop IR", line);
    snprintf(line, sizeof line, "launch blockIdx.x in 0..%lld {", (long long)grid[0]);
    ck_assert_msg(strstr(tcc_kernel_loop_ir(kernel), line), "no %s in the loop IR", line);
    return grid[0];
}

static int64_t seed_blocks(const tcc_gemm_schedule *schedule, const tcc_build_options *options)
{
    tcc_conv2d_desc desc = seed_layer();
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_conv2d_compile(ctx, &desc, schedule, options, &kernel) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    int64_t blocks = persistent_blocks(kernel);
    tcc_kernel_destroy(kernel);
    return blocks;
}

/* 114 multiprocessors: the seed layer's 784 tiles in 7 rounds of 112 blocks (where 132 run 6
 * of 131), the schedule's grid_blocks left 0 or given as a schedule with no field set; 8192^3's
 * 2048 tiles in 18 rounds of 114 (16 of 128 for 132), in clusters of two. */
START_TEST(test_options_number_the_blocks)
{
    tcc_build_options target = sm90a(0), pcie = sm90a(114);
    ck_assert_int_eq(seed_blocks(NULL, &target), 131);
    ck_assert_int_eq(seed_blocks(NULL, &pcie), 112);
    tcc_gemm_schedule schedule;
    tcc_gemm_schedule_init(&schedule);
    ck_assert_int_eq(seed_blocks(&schedule, &pcie), 112);

    tcc_kernel *kernel = NULL;
    tcc_matmul_desc matmul;
    tcc_matmul_desc_init(&matmul);
    matmul.m = matmul.n = matmul.k = 8192;
    ck_assert_int_eq(tcc_matmul_compile(ctx, &matmul, NULL, &target, &kernel), TCC_OK);
    ck_assert_int_eq(persistent_blocks(kernel), 128);
    tcc_kernel_destroy(kernel);
    ck_assert_int_eq(tcc_matmul_compile(ctx, &matmul, NULL, &pcie, &kernel), TCC_OK);
    ck_assert_int_eq(persistent_blocks(kernel), 114);
    int64_t cluster[3];
    tcc_kernel_launch_cluster(kernel, 0, cluster);
    ck_assert_int_eq(cluster[0], 2);
    tcc_kernel_destroy(kernel);
}
END_TEST

/* A grid_blocks the schedule gives wins over the options' (100: 8 rounds of 98), and over the
 * target's. */
START_TEST(test_schedule_blocks_win)
{
    tcc_gemm_schedule schedule;
    tcc_gemm_schedule_init(&schedule);
    schedule.grid_blocks = 100;
    tcc_build_options target = sm90a(0), pcie = sm90a(114), more = sm90a(140);
    ck_assert_int_eq(seed_blocks(&schedule, &pcie), 98);
    ck_assert_int_eq(seed_blocks(&schedule, &more), 98);
    ck_assert_int_eq(seed_blocks(&schedule, &target), 98);
    /* More than the target's: 6 rounds of 131 all the same, 5 of 157 with 160. */
    ck_assert_int_eq(seed_blocks(NULL, &more), 131);
    tcc_build_options wide = sm90a(160);
    ck_assert_int_eq(seed_blocks(NULL, &wide), 157);
}
END_TEST

enum { FIRST_SIZE = offsetof(tcc_build_options, machine_code) };

/* The options of a caller built against the first release's headers, whose struct ends before
 * machine_code: exactly that long (malloc'd, so that the sanitizers see a read past it). */
static tcc_build_options *first_release_options(void)
{
    unsigned char *bytes = malloc(FIRST_SIZE);
    ck_assert_ptr_nonnull(bytes);
    tcc_build_options_init_size((tcc_build_options *)bytes, FIRST_SIZE);
    size_t size = 0;
    memcpy(&size, bytes + offsetof(tcc_build_options, size), sizeof size);
    ck_assert_uint_eq(size, FIRST_SIZE);
    tcc_arch arch = TCC_SM_90A; /* fields written through bytes: the struct is longer */
    memcpy(bytes + offsetof(tcc_build_options, arch), &arch, sizeof arch);
    return (tcc_build_options *)bytes;
}

/* What lies past the first release's size (a count of 114 here) is not read, so its persistent
 * grid is the target's; nor is a struct of that size read past its end. */
START_TEST(test_first_release_size_reads_zero)
{
    tcc_build_options poisoned = sm90a(114);
    poisoned.size = FIRST_SIZE;
    ck_assert_int_eq(seed_blocks(NULL, &poisoned), 131);
    tcc_build_options *old = first_release_options();
    ck_assert_int_eq(seed_blocks(NULL, old), 131);
    free(old);
    /* machine_code's headers: the struct ended at the reserved bytes, which a caller that
     * filled it by hand may leave as anything. */
    tcc_build_options by_hand = sm90a(114);
    memset(by_hand.reserved, 0x72, sizeof by_hand.reserved);
    by_hand.size = offsetof(tcc_build_options, multiprocessors);
    ck_assert_int_eq(seed_blocks(NULL, &by_hand), 131);
}
END_TEST

START_TEST(test_negative_refused)
{
    tcc_build_options negative = sm90a(-1);
    tcc_conv2d_desc desc = seed_layer();
    tcc_kernel *kernel = NULL;
    ck_assert_int_eq(tcc_conv2d_compile(ctx, &desc, NULL, &negative, &kernel),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(kernel);
    ck_assert_str_eq(tcc_last_error(ctx),
                     "build options: multiprocessors must be 0 (the target's) or more, not -1");
    assert_one_line(ctx);
}
END_TEST

static tcc_workload seed_workload(void)
{
    tcc_workload w;
    tcc_workload_init(&w, TCC_WORKLOAD_CONV2D);
    w.conv2d = seed_layer();
    return w;
}

/* The gemm template (what tcc-tune's builders instantiate) built at its point 0, the default
 * schedule, with `options`: the status, and the persistent grid's blocks in *blocks. */
static tcc_status template_build(const tcc_build_options *options, int64_t *blocks)
{
    const tcc_template *gemm = tcc_template_find("gemm");
    tcc_workload w = seed_workload();
    tcc_config_space *space = NULL;
    tcc_config *cfg = NULL;
    tcc_kernel *kernel = NULL;
    ck_assert_int_eq(tcc_config_space_create(ctx, gemm, &w, TCC_SM_90A, &space), TCC_OK);
    ck_assert_int_eq(tcc_config_create(ctx, space, 0, &cfg), TCC_OK);
    tcc_status status = tcc_config_instantiate(ctx, gemm, cfg, &w, TCC_SM_90A, options, &kernel);
    *blocks = status == TCC_OK ? persistent_blocks(kernel) : -1;
    tcc_kernel_destroy(kernel);
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
    return status;
}

static int64_t template_blocks(const tcc_build_options *options)
{
    int64_t blocks = -1;
    ck_assert_msg(template_build(options, &blocks) == TCC_OK, "%s", tcc_last_error(ctx));
    return blocks;
}

/* The template compiles for the options' count, reads a caller's options only as far as their
 * size (it once copied the whole struct: past the end of a first-release caller's), and
 * refuses a negative count as the operators do. */
START_TEST(test_template_takes_the_count)
{
    tcc_build_options pcie = sm90a(114);
    ck_assert_int_eq(template_blocks(&pcie), 112);
    ck_assert_int_eq(template_blocks(NULL), 131);
    tcc_build_options poisoned = sm90a(114);
    poisoned.size = FIRST_SIZE;
    ck_assert_int_eq(template_blocks(&poisoned), 131);
    tcc_build_options *old = first_release_options();
    ck_assert_int_eq(template_blocks(old), 131);
    free(old);
    tcc_build_options negative = sm90a(-3);
    int64_t blocks = 0;
    ck_assert_int_eq(template_build(&negative, &blocks), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(blocks, -1);
    ck_assert_str_eq(tcc_last_error(ctx),
                     "build options: multiprocessors must be 0 (the target's) or more, not -3");
}
END_TEST

/* tcc_apply_history_best (--tuned) builds the default schedule where no record is, for the
 * options' count. */
START_TEST(test_apply_history_best_takes_the_count)
{
    char dir[] = "/tmp/tcc-multiprocessors-XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/records.db", dir);
    tcc_record_store *store = NULL;
    ck_assert_msg(tcc_record_store_open(ctx, path, &store) == TCC_OK, "%s", tcc_last_error(ctx));
    const tcc_template *gemm = tcc_template_find("gemm");
    tcc_workload w = seed_workload();
    tcc_build_options pcie = sm90a(114);
    tcc_kernel *kernel = NULL;
    int64_t used = 7;
    ck_assert_msg(tcc_apply_history_best(ctx, store, gemm, &w, TCC_SM_90A, "NVIDIA H100 PCIe",
                                         &pcie, &kernel, &used) == TCC_OK,
                  "%s", tcc_last_error(ctx));
    ck_assert_int_eq(used, -1);
    ck_assert_int_eq(persistent_blocks(kernel), 112);
    tcc_kernel_destroy(kernel);
    tcc_record_store_close(store);
    unlink(path);
    rmdir(dir);
}
END_TEST

static Suite *multiprocessors_suite(void)
{
    Suite *suite = suite_create("multiprocessors");
    TCase *tc = test_case(suite, "multiprocessors", setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_options_number_the_blocks);
    tcase_add_test(tc, test_schedule_blocks_win);
    tcase_add_test(tc, test_first_release_size_reads_zero);
    tcase_add_test(tc, test_negative_refused);
    tcase_add_test(tc, test_template_takes_the_count);
    tcase_add_test(tc, test_apply_history_best_takes_the_count);
    return suite;
}

TEST_MAIN(multiprocessors_suite)
