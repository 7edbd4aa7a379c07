/*
 * What a kernel built for sm_90a records for its launcher and emits for the copy engine: the
 * tensor maps (im2col for the input, tiled for the filter), clusters and their multicast
 * slices, and the L2 policies of bulk copies and stores.
 */
#include "codegen_support.h"

static tcc_conv2d_desc conv3x3(int64_t batch, int64_t size, int64_t stride)
{
    tcc_conv2d_desc desc;
    tcc_conv2d_desc_init(&desc);
    desc.batch = batch, desc.height = desc.width = size, desc.in_channels = 128;
    desc.out_channels = 256, desc.kernel_h = desc.kernel_w = 3;
    desc.pad_top = desc.pad_bottom = desc.pad_left = desc.pad_right = 1;
    desc.stride_h = desc.stride_w = stride;
    return desc;
}

static tcc_build_options sm90a_options(void)
{
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = TCC_SM_90A;
    return options;
}

/* A convolution built for sm_90a records the tensor maps its launcher encodes: an im2col map
 * of the NHWC input (channels, w, h, n; the padding as the window's first and last starts)
 * and a tiled map of the KRSC filter (one row of R*S*C per output channel). */
START_TEST(test_records_tensor_maps)
{
    tcc_conv2d_desc desc = conv3x3(4, 9, 2);
    tcc_build_options options = sm90a_options();
    tcc_kernel *kernel = NULL;
    tcc_gemm_schedule one_launch = {.size = sizeof(tcc_gemm_schedule), .split_k = 1};
    ck_assert_int_eq(tcc_conv2d_compile(ctx, &desc, &one_launch, &options, &kernel), TCC_OK);
    ck_assert_int_eq(tcc_kernel_launch_count(kernel), 1);
    int main = 0;
    ck_assert_int_eq(tcc_kernel_launch_tensor_map_count(kernel, main), 2);
    tcc_tensor_map_encoding a = {.size = sizeof a}, b = {.size = sizeof b};
    ck_assert(tcc_kernel_launch_tensor_map(kernel, main, 0, &a));
    ck_assert(tcc_kernel_launch_tensor_map(kernel, main, 1, &b));
    ck_assert(!tcc_kernel_launch_tensor_map(kernel, main, 2, &b));
    ck_assert_int_eq(a.mode, TCC_TENSOR_MAP_IM2COL);
    ck_assert_int_eq(a.param, 0);
    ck_assert_int_eq(a.rank, 4);
    const int64_t a_dims[4] = {128, 9, 9, 4}, a_strides[4] = {2, 256, 2304, 20736};
    for (int d = 0; d < 4; d++) {
        ck_assert_int_eq(a.dims[d], a_dims[d]);
        ck_assert_int_eq(a.strides[d], a_strides[d]);
    }
    ck_assert_int_eq(a.box[0], 64);
    ck_assert_int_eq(a.element_strides[1], 2);
    ck_assert_int_eq(a.lower_corner[0], -1);
    ck_assert_int_eq(a.upper_corner[1], -1);
    ck_assert_int_eq(a.swizzle_bytes, 128);
    ck_assert_int_eq(b.mode, TCC_TENSOR_MAP_TILED);
    ck_assert_int_eq(b.param, 1);
    ck_assert_int_eq(b.dims[0], 9 * 128);
    ck_assert_int_eq(b.dims[1], 256);
    ck_assert_int_eq(b.strides[1], 9 * 128 * 2);
    ck_assert_int_eq(b.box[0], 64);
    tcc_kernel_destroy(kernel);
    /* Threads' copies record none. */
    tcc_gemm_schedule schedule = {
        .size = sizeof(tcc_gemm_schedule), .split_k = 1, .copy = TCC_GEMM_COPY_THREADS};
    ck_assert_int_eq(tcc_conv2d_compile(ctx, &desc, &schedule, &options, &kernel), TCC_OK);
    ck_assert_int_eq(
        tcc_kernel_launch_tensor_map_count(kernel, tcc_kernel_launch_count(kernel) - 1), 0);
    tcc_kernel_destroy(kernel);
}
END_TEST

/* `text` with `, evict_first` before the `)` that ends each bulk store (the first `])` after
 * `bulk_store(` on its line: its shared source's), in a string of its own. */
static char *hint_stores(const char *text)
{
    size_t n = strlen(text);
    char *out = malloc(n * 2 + 1), *o = out;
    ck_assert_ptr_nonnull(out);
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        end = end ? end + 1 : line + strlen(line);
        const char *close = strstr(line, "bulk_store(");
        close = close && close < end ? strstr(close, "])") : NULL;
        if (close && close < end) {
            memcpy(o, line, (size_t)(close + 1 - line)), o += close + 1 - line;
            o += sprintf(o, ", evict_first");
            line = close + 1;
        }
        memcpy(o, line, (size_t)(end - line)), o += end - line;
        line = end;
    }
    *o = '\0';
    return out;
}

/* The L2 policies of bulk copies: a convolution whose operands fit in sm_90a's L2 copies them
 * evict-last (createpolicy and .L2::cache_hint); its loop IR with its bulk stores marked
 * evict_first reads back and stores so. */
START_TEST(test_cache_hints)
{
    tcc_conv2d_desc desc = conv3x3(256, 14, 1); /* enough tiles for a persistent grid */
    desc.output_type = TCC_FLOAT16;
    tcc_build_options options = sm90a_options();
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_conv2d_compile(ctx, &desc, NULL, &options, &kernel) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    const char *loops = tcc_kernel_loop_ir(kernel);
    ck_assert_ptr_nonnull(strstr(loops, "bulk_store("));
    ck_assert_ptr_nonnull(strstr(loops, ", evict_last)"));
    ck_assert_ptr_null(strstr(loops, "evict_first"));
    char *hinted = hint_stores(loops);
    tcc_kernel_destroy(kernel);
    PrimFunc *func = NULL;
    ck_assert_msg(tci_parse_prim_func(ctx, arena, hinted, &func) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    free(hinted);
    Output out = generate(ctx, func, TCC_SM_90A);
    ck_assert_msg(out.status == TCC_OK, "%s", tcc_last_error(ctx));
    ck_assert_ptr_nonnull(strstr(out.llvm_ir, "createpolicy.fractional.L2::evict_last.b64 policy, "
                                              "1.0; cp.async.bulk.tensor.4d.shared::cluster"));
    ck_assert_ptr_nonnull(strstr(out.llvm_ir, "createpolicy.fractional.L2::evict_first.b64 "
                                              "policy, 1.0; cp.async.bulk.tensor.3d.global."
                                              "shared::cta.tile.bulk_group.L2::cache_hint [$1, "));
    ck_assert_ptr_nonnull(strstr(out.llvm_ir, "], [$0], policy; } cp.async.bulk.commit_group;"));
    ck_assert_ptr_nonnull(strstr(out.ptx, ".L2::cache_hint"));
    output_free(&out);
}
END_TEST

/* Clusters of two blocks along m: the launch records them, and the filter's map fetches half
 * its tile (each block's share of the multicast). */
START_TEST(test_records_clusters)
{
    tcc_conv2d_desc desc = conv3x3(4, 8, 1);
    tcc_build_options options = sm90a_options();
    tcc_kernel *kernel = NULL;
    tcc_gemm_schedule schedule = {.size = sizeof(tcc_gemm_schedule),
                                  .mma_m = 64,
                                  .mma_n = 256,
                                  .mma_k = 16,
                                  .block_row_warps = 2,
                                  .block_col_warps = 1,
                                  .split_k = 1,
                                  .cluster = 2};
    ck_assert_int_eq(tcc_conv2d_compile(ctx, &desc, &schedule, &options, &kernel), TCC_OK);
    int64_t grid[3], cluster[3];
    tcc_kernel_launch_grid(kernel, 0, grid);
    tcc_kernel_launch_cluster(kernel, 0, cluster);
    ck_assert_int_eq(grid[1], 2); /* 256 output pixels in blocks of 128 */
    ck_assert_int_eq(cluster[0], 1);
    ck_assert_int_eq(cluster[1], 2);
    ck_assert_int_eq(cluster[2], 1);
    tcc_tensor_map_encoding b = {.size = sizeof b};
    ck_assert(tcc_kernel_launch_tensor_map(kernel, 0, 1, &b));
    ck_assert_int_eq(b.box[1], 128); /* half of a block's 256 filter rows */
    tcc_kernel_destroy(kernel);
    tcc_gemm_schedule none = {.size = sizeof(tcc_gemm_schedule), .split_k = 1};
    ck_assert_int_eq(tcc_conv2d_compile(ctx, &desc, &none, &options, &kernel), TCC_OK);
    tcc_kernel_launch_cluster(kernel, 0, cluster);
    ck_assert_int_eq(cluster[0] * cluster[1] * cluster[2], 1);
    tcc_kernel_launch_cluster(NULL, 0, cluster);
    ck_assert_int_eq(cluster[0], 0);
    tcc_kernel_destroy(kernel);
}
END_TEST

static Suite *sm90a_suite(void)
{
    Suite *suite = suite_create("sm90a");
    TCase *tc = test_case(suite, "sm90a", ir_context_setup, ir_context_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_records_tensor_maps);
    tcase_add_test(tc, test_records_clusters);
    tcase_add_test(tc, test_cache_hints);
    return suite;
}

TEST_MAIN(sm90a_suite)
