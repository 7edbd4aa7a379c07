/*
 * A kernel as bytes and back (tcc_kernel_serialize / tcc_kernel_deserialize,
 * lib/driver/serialize.c): real kernels of one and several launches, with workspaces, tensor
 * maps and clusters (sm_80 and sm_90a) come back field by field; a kernel described by hand
 * (no IR, no parameter descriptions) too; truncated, corrupted, foreign and other-version
 * bytes are refused in one line; bytes whose checksum is right but whose body is mutated are
 * refused or read as a kernel, never a crash (ASan/UBSan builds run this too).
 */
#include "driver/kernel.h"
#include "support.h"

#include <stdlib.h>

static tcc_context *ctx;

static void setup(void)
{
    ctx = test_context();
}

static void teardown(void)
{
    tcc_context_destroy(ctx);
}

/* The same FNV-1a the format ends with, to forge bytes whose checksum holds. */
static uint64_t fnv1a(const unsigned char *bytes, size_t size)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ bytes[i]) * 0x100000001b3ull;
    return hash;
}

static void fix_checksum(unsigned char *bytes, size_t size)
{
    uint64_t hash = fnv1a(bytes, size - 8);
    for (int i = 0; i < 8; i++)
        bytes[size - 8 + i] = (unsigned char)(hash >> (8 * i));
}

static void assert_same_string(const char *a, const char *b)
{
    ck_assert_msg((a == NULL) == (b == NULL), "one string is NULL");
    if (a)
        ck_assert_msg(strcmp(a, b) == 0, "strings differ");
}

static void assert_same_launch(const tcc_kernel *a, const tcc_kernel *b, int i)
{
    int64_t x[3], y[3];
    assert_same_string(tcc_kernel_launch_name(a, i), tcc_kernel_launch_name(b, i));
    void (*getters[])(const tcc_kernel *, int, int64_t *) = {
        tcc_kernel_launch_grid, tcc_kernel_launch_block, tcc_kernel_launch_cluster};
    for (int g = 0; g < 3; g++) {
        getters[g](a, i, x);
        getters[g](b, i, y);
        for (int d = 0; d < 3; d++)
            ck_assert_int_eq(x[d], y[d]);
    }
    ck_assert_int_eq(a->launches[i].cluster[0], b->launches[i].cluster[0]); /* 0 stays 0 */
    ck_assert_int_eq(tcc_kernel_launch_shared_bytes(a, i), tcc_kernel_launch_shared_bytes(b, i));
    ck_assert_int_eq(tcc_kernel_launch_dynamic_shared_bytes(a, i),
                     tcc_kernel_launch_dynamic_shared_bytes(b, i));
    int maps = tcc_kernel_launch_tensor_map_count(a, i);
    ck_assert_int_eq(maps, tcc_kernel_launch_tensor_map_count(b, i));
    for (int m = 0; m < maps; m++) {
        tcc_tensor_map_encoding ea = {.size = sizeof ea}, eb = {.size = sizeof eb};
        ck_assert(tcc_kernel_launch_tensor_map(a, i, m, &ea));
        ck_assert(tcc_kernel_launch_tensor_map(b, i, m, &eb));
        ck_assert_msg(memcmp(&ea, &eb, sizeof ea) == 0, "tensor map %d of launch %d differs", m, i);
    }
}

static void assert_same_param(const tcc_kernel *a, const tcc_kernel *b, int i)
{
    tcc_kernel_param_info pa = {.size = sizeof pa}, pb = {.size = sizeof pb};
    bool has = tcc_kernel_param(a, i, &pa);
    ck_assert_int_eq(has, tcc_kernel_param(b, i, &pb));
    if (!has)
        return;
    ck_assert_str_eq(pa.name, pb.name);
    ck_assert_ptr_ne(pa.name, pb.name); /* each kernel owns its names */
    /* The same name (a static string: the same pointer only where the compiler merges the
     * literals of two files, as Release builds do and ASan builds do not). */
    ck_assert_int_eq(pa.layout == NULL, pb.layout == NULL);
    if (pa.layout)
        ck_assert_str_eq(pa.layout, pb.layout);
    ck_assert_int_eq(pa.role, pb.role);
    ck_assert_int_eq(pa.dtype, pb.dtype);
    ck_assert_int_eq(pa.rank, pb.rank);
    for (int d = 0; d < TCC_PARAM_MAX_RANK; d++)
        ck_assert_int_eq(pa.shape[d], pb.shape[d]);
    ck_assert_int_eq(pa.elements, pb.elements);
    ck_assert_int_eq(pa.bytes, pb.bytes);
    ck_assert_int_eq(pa.alignment, pb.alignment);
}

/* Every field the accessors (and the runtime) read. */
static void assert_same_kernel(const tcc_kernel *a, const tcc_kernel *b)
{
    assert_same_string(tcc_kernel_loop_ir(a), tcc_kernel_loop_ir(b));
    assert_same_string(tcc_kernel_llvm_ir(a), tcc_kernel_llvm_ir(b));
    assert_same_string(tcc_kernel_ptx(a), tcc_kernel_ptx(b));
    assert_same_string(tcc_kernel_name(a), tcc_kernel_name(b));
    ck_assert_int_eq(a->main_launch, b->main_launch);
    ck_assert_int_eq(tcc_kernel_launch_count(a), tcc_kernel_launch_count(b));
    for (int i = 0; i < tcc_kernel_launch_count(a); i++)
        assert_same_launch(a, b, i);
    ck_assert_int_eq(tcc_kernel_workspace_count(a), tcc_kernel_workspace_count(b));
    for (int i = 0; i < tcc_kernel_workspace_count(a); i++)
        ck_assert_int_eq(tcc_kernel_workspace_bytes(a, i), tcc_kernel_workspace_bytes(b, i));
    ck_assert_int_eq(tcc_kernel_param_count(a), tcc_kernel_param_count(b));
    ck_assert_int_eq(a->params == NULL, b->params == NULL);
    for (int i = 0; i < tcc_kernel_param_count(a); i++)
        assert_same_param(a, b, i);
}

/* Serializes, reads back, compares; returns the bytes (free them). */
static unsigned char *round_trip(const tcc_kernel *kernel, size_t *size)
{
    void *bytes = NULL;
    ck_assert_msg(tcc_kernel_serialize(ctx, kernel, &bytes, size) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    tcc_kernel *back = NULL;
    ck_assert_msg(tcc_kernel_deserialize(ctx, bytes, *size, &back) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    assert_same_kernel(kernel, back);
    /* And the copy serializes to the same bytes. */
    void *again = NULL;
    size_t again_size = 0;
    ck_assert_int_eq(tcc_kernel_serialize(ctx, back, &again, &again_size), TCC_OK);
    ck_assert_int_eq(again_size, *size);
    ck_assert(memcmp(again, bytes, *size) == 0);
    free(again);
    tcc_kernel_destroy(back);
    return bytes;
}

static tcc_build_options options_for(tcc_arch arch)
{
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = arch;
    return options;
}

static tcc_conv2d_desc conv3x3(int64_t batch, int64_t size, tcc_layout layout)
{
    tcc_conv2d_desc d;
    tcc_conv2d_desc_init(&d);
    d.batch = batch, d.height = d.width = size;
    d.in_channels = 128, d.out_channels = 256, d.kernel_h = d.kernel_w = 3;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.layout = layout;
    d.filter_layout = layout == TCC_LAYOUT_NCHW ? TCC_FILTER_KCRS : TCC_FILTER_KRSC;
    return d;
}

static tcc_kernel *conv(const tcc_conv2d_desc *d, const tcc_gemm_schedule *s, tcc_arch arch)
{
    tcc_build_options options = options_for(arch);
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_conv2d_compile(ctx, d, s, &options, &kernel) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    return kernel;
}

static tcc_kernel *matmul(const tcc_matmul_desc *d, const tcc_gemm_schedule *s, tcc_arch arch)
{
    tcc_build_options options = options_for(arch);
    tcc_kernel *kernel = NULL;
    ck_assert_msg(tcc_matmul_compile(ctx, d, s, &options, &kernel) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    return kernel;
}

/* A split-K product on sm_80: two launches, one workspace, a residual. */
static tcc_kernel *split_k_matmul(void)
{
    tcc_matmul_desc d;
    tcc_matmul_desc_init(&d);
    d.m = 64, d.n = 64, d.k = 512;
    d.b_col_major = true;
    d.epilogue.residual = true, d.epilogue.beta = 0.5;
    tcc_gemm_schedule s;
    tcc_gemm_schedule_init(&s);
    ck_assert_int_eq(tcc_matmul_default_schedule(ctx, &d, TCC_SM_80, &s), TCC_OK);
    s.split_k = 2;
    tcc_kernel *kernel = matmul(&d, &s, TCC_SM_80);
    ck_assert_int_eq(tcc_kernel_launch_count(kernel), 2);
    ck_assert_int_eq(tcc_kernel_workspace_count(kernel), 1);
    return kernel;
}

START_TEST(test_round_trip_matmul_sm80)
{
    tcc_matmul_desc d;
    tcc_matmul_desc_init(&d);
    d.m = 128, d.n = 96, d.k = 64, d.batch = 2;
    tcc_kernel *kernel = matmul(&d, NULL, TCC_SM_80);
    size_t size = 0;
    free(round_trip(kernel, &size));
    tcc_kernel_destroy(kernel);
    kernel = split_k_matmul();
    free(round_trip(kernel, &size));
    tcc_kernel_destroy(kernel);
}
END_TEST

/* NCHW on sm_80 and sm_90a: staging launches into workspaces before the product, whose
 * tensor maps (sm_90a) may read a workspace. */
START_TEST(test_round_trip_conv_nchw)
{
    tcc_conv2d_desc d = conv3x3(2, 9, TCC_LAYOUT_NCHW);
    d.groups = 2;
    d.epilogue.beta = 1.0;
    d.epilogue.bias = d.epilogue.relu = true;
    tcc_arch archs[] = {TCC_SM_80, TCC_SM_90A};
    for (int a = 0; a < 2; a++) {
        tcc_kernel *kernel = conv(&d, NULL, archs[a]);
        ck_assert_int_ge(tcc_kernel_launch_count(kernel), 2);
        ck_assert_int_ge(tcc_kernel_workspace_count(kernel), 1);
        size_t size = 0;
        free(round_trip(kernel, &size));
        tcc_kernel_destroy(kernel);
    }
}
END_TEST

/* sm_90a: im2col and tiled tensor maps; clusters of two blocks. */
START_TEST(test_round_trip_sm90a_maps_clusters)
{
    tcc_conv2d_desc d = conv3x3(4, 9, TCC_LAYOUT_NHWC);
    tcc_gemm_schedule one = {.size = sizeof(tcc_gemm_schedule), .split_k = 1};
    tcc_kernel *kernel = conv(&d, &one, TCC_SM_90A);
    ck_assert_int_eq(tcc_kernel_launch_tensor_map_count(kernel, 0), 2);
    size_t size = 0;
    free(round_trip(kernel, &size));
    tcc_kernel_destroy(kernel);

    d = conv3x3(4, 8, TCC_LAYOUT_NHWC);
    tcc_gemm_schedule clusters = {.size = sizeof(tcc_gemm_schedule),
                                  .mma_m = 64,
                                  .mma_n = 256,
                                  .mma_k = 16,
                                  .block_row_warps = 2,
                                  .block_col_warps = 1,
                                  .split_k = 1,
                                  .cluster = 2};
    kernel = conv(&d, &clusters, TCC_SM_90A);
    int64_t cluster[3];
    tcc_kernel_launch_cluster(kernel, 0, cluster);
    ck_assert_int_eq(cluster[1], 2);
    free(round_trip(kernel, &size));
    tcc_kernel_destroy(kernel);
}
END_TEST

/* A kernel described by hand, as the runtime's tests make them: no IR, no descriptions. */
START_TEST(test_round_trip_hand_made)
{
    tcc_kernel *kernel = calloc(1, sizeof *kernel);
    ck_assert_ptr_nonnull(kernel);
    kernel->ptx = strdup(".version 8.0\n");
    kernel->nlaunch = 1;
    kernel->launches[0] =
        (KernelLaunch){.name = strdup("k"), .grid = {1, 1, 1}, .block = {32, 1, 1}};
    kernel->nparam = 2;
    size_t size = 0;
    free(round_trip(kernel, &size));
    tcc_kernel_destroy(kernel);
}
END_TEST

static void assert_refused(const unsigned char *bytes, size_t size, const char *part)
{
    tcc_kernel *back = (tcc_kernel *)&back; /* set to NULL on refusal */
    tcc_status status = tcc_kernel_deserialize(ctx, bytes, size, &back);
    ck_assert_msg(status != TCC_OK, "%zu bytes read as a kernel", size);
    ck_assert_ptr_null(back);
    assert_one_line(ctx);
    if (part)
        assert_contains(tcc_last_error(ctx), part);
}

START_TEST(test_refuses_truncated_and_corrupted)
{
    tcc_kernel *kernel = split_k_matmul();
    size_t size = 0;
    unsigned char *bytes = round_trip(kernel, &size);
    tcc_kernel_destroy(kernel);
    /* Every prefix of the first 256 bytes and of the last 256, and a spread between. */
    for (size_t cut = 0; cut < size; cut += cut < 256 || cut > size - 256 ? 1 : 997)
        assert_refused(bytes, cut, NULL);
    assert_refused(bytes, 0, "too short");
    assert_refused(bytes, size - 1, "checksum");
    /* A flipped bit anywhere. */
    for (size_t at = 0; at < size; at += at < 64 ? 1 : 613) {
        bytes[at] ^= 0x10;
        assert_refused(bytes, size, NULL);
        bytes[at] ^= 0x10;
    }
    unsigned char *longer = malloc(size + 1);
    memcpy(longer, bytes, size);
    longer[size] = 0;
    assert_refused(longer, size + 1, "checksum");
    free(longer);
    bytes[0] = 'X';
    assert_refused(bytes, size, "no TCCK magic");
    free(bytes);
    assert_refused((const unsigned char *)"", 0, "too short");
    ck_assert_int_eq(tcc_kernel_deserialize(ctx, NULL, 4, &kernel), TCC_ERROR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_refuses_other_version)
{
    tcc_kernel *kernel = split_k_matmul();
    size_t size = 0;
    unsigned char *bytes = round_trip(kernel, &size);
    tcc_kernel_destroy(kernel);
    bytes[4] = 1; /* version 1 (before machine code), checksum made right */
    fix_checksum(bytes, size);
    tcc_kernel *back = NULL;
    ck_assert_int_eq(tcc_kernel_deserialize(ctx, bytes, size, &back), TCC_ERROR_UNSUPPORTED);
    assert_contains(tcc_last_error(ctx), "format version 1, this tcc reads version 2");
    free(bytes);
}
END_TEST

/* Fields out of range behind a right checksum: each refused, naming the field. */
START_TEST(test_refuses_bad_fields)
{
    tcc_kernel *kernel = calloc(1, sizeof *kernel);
    kernel->ptx = strdup("x");
    kernel->nlaunch = 1;
    kernel->launches[0] =
        (KernelLaunch){.name = strdup("k"), .grid = {1, 1, 1}, .block = {1, 1, 1}};
    size_t size = 0;
    unsigned char *bytes = round_trip(kernel, &size);
    tcc_kernel_destroy(kernel);
    /* magic 4, version 4, loop IR 8 (NULL), LLVM IR 8, PTX 8 + 1, nparam 4 at 33. */
    size_t nparam_at = 33, nlaunch_at = nparam_at + 8, grid_at = nlaunch_at + 8 + 8 + 1;
    struct {
        size_t at;
        unsigned char value;
        const char *part;
    } cases[] = {
        {nparam_at, 0xff, "parameter count"}, {nlaunch_at, 0, "launch count"},
        {nlaunch_at, 9, "launch count"},      {nlaunch_at + 4, 1, "main launch"},
        {grid_at, 0, "launch grid"},          {32, 0, "PTX"}, /* a NUL inside it */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char saved = bytes[cases[i].at];
        bytes[cases[i].at] = cases[i].value;
        fix_checksum(bytes, size);
        assert_refused(bytes, size, cases[i].part);
        bytes[cases[i].at] = saved;
    }
    /* A string longer than the bytes left. */
    bytes[16 + 8 + 7] = 0x7f;
    fix_checksum(bytes, size);
    assert_refused(bytes, size, "PTX");
    free(bytes);
}
END_TEST

/* Random mutations of a real kernel's bytes with the checksum made right: refused in one
 * line, or a kernel whose accessors answer (ASan sees any stray read). */
START_TEST(test_mutations_never_crash)
{
    tcc_conv2d_desc d = conv3x3(2, 9, TCC_LAYOUT_NCHW);
    tcc_kernel *kernel = conv(&d, NULL, TCC_SM_90A);
    size_t size = 0;
    unsigned char *bytes = round_trip(kernel, &size);
    tcc_kernel_destroy(kernel);
    /* The structure lies before the IR and after it: mutate the header, the tail, anywhere. */
    unsigned char *copy = malloc(size);
    uint64_t state = 12345;
    int read = 0;
    for (int trial = 0; trial < 3000; trial++) {
        memcpy(copy, bytes, size);
        for (int m = 0; m < 1 + trial % 4; m++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            size_t region = (state >> 60) % 3;
            size_t span = size < 4096 ? size : 4096;
            size_t at = (size_t)(state >> 20) % span;
            at = region == 0 ? at : region == 1 ? size - 8 - 1 - at % (size - 9) : at % (size - 8);
            copy[at] = (unsigned char)(state >> 8);
        }
        fix_checksum(copy, size);
        tcc_kernel *back = NULL;
        if (tcc_kernel_deserialize(ctx, copy, size, &back) == TCC_OK) {
            read++;
            for (int i = 0; i < tcc_kernel_launch_count(back); i++)
                ck_assert_ptr_nonnull(tcc_kernel_launch_name(back, i));
            ck_assert_ptr_nonnull(tcc_kernel_ptx(back));
            tcc_kernel_destroy(back);
        } else {
            assert_one_line(ctx);
        }
    }
    ck_assert_int_gt(read, 0); /* mutations inside the IR's text still read */
    free(copy);
    free(bytes);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *suite = suite_create("serialize");
    TCase *tc = test_case(suite, "serialize", setup, teardown);
    tcase_add_test(tc, test_round_trip_matmul_sm80);
    tcase_add_test(tc, test_round_trip_conv_nchw);
    tcase_add_test(tc, test_round_trip_sm90a_maps_clusters);
    tcase_add_test(tc, test_round_trip_hand_made);
    tcase_add_test(tc, test_refuses_truncated_and_corrupted);
    tcase_add_test(tc, test_refuses_other_version);
    tcase_add_test(tc, test_refuses_bad_fields);
    tcase_add_test(tc, test_mutations_never_crash);
    return suite;
}

TEST_MAIN(make_suite)
