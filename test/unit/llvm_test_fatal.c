/*
 * LLVM never takes the process down (issue 10): a fatal error inside code generation
 * ("Cannot select" for an intrinsic the arch lacks) becomes a build error of the context,
 * which then compiles the next kernel; and every tensor-core intrinsic, copy and producer
 * fed to every arch either compiles (ptxas accepting the PTX, where a CUDA toolkit is
 * installed) or is refused with a message before LLVM sees it, never through LLVM's fatal
 * path.
 */
#include "codegen/llvm.h"
#include "support.h"
#include "target/target.h"

#include "tcc/ops.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAKS_EXPECTED_BEGIN() __lsan_disable()
#define LEAKS_EXPECTED_END() __lsan_enable()
#else
#define LEAKS_EXPECTED_BEGIN() ((void)0)
#define LEAKS_EXPECTED_END() ((void)0)
#endif

#define PTXAS "/usr/local/cuda/bin/ptxas"

/* A 128^3 product of `input` with the default schedule of `arch`; the kernel or NULL. */
static tcc_status compile_matmul(tcc_context *ctx, tcc_arch arch, const tcc_gemm_schedule *schedule,
                                 tcc_dtype input, tcc_kernel **out)
{
    tcc_matmul_desc desc;
    tcc_matmul_desc_init(&desc);
    desc.m = desc.n = desc.k = 128;
    desc.input_type = input;
    desc.accumulate_type = desc.output_type = input == TCC_INT8 ? TCC_INT32 : TCC_FLOAT32;
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = arch;
    return tcc_matmul_compile(ctx, &desc, schedule, &options, out);
}

/* A module calling cp.async.commit_group, which sm_70 cannot select: LLVM's instruction
 * selector reports a fatal error, which would exit the process. */
static LLVMModuleRef unselectable_module(LLVMContextRef llvm)
{
    LLVMModuleRef module = LLVMModuleCreateWithNameInContext("unselectable", llvm);
    LLVMTypeRef void_type = LLVMVoidTypeInContext(llvm);
    LLVMTypeRef fn_type = LLVMFunctionType(void_type, NULL, 0, 0);
    LLVMValueRef commit = LLVMAddFunction(module, "llvm.nvvm.cp.async.commit.group", fn_type);
    LLVMValueRef kernel = LLVMAddFunction(module, "k", fn_type);
    LLVMBuilderRef builder = LLVMCreateBuilderInContext(llvm);
    LLVMPositionBuilderAtEnd(builder, LLVMAppendBasicBlockInContext(llvm, kernel, "entry"));
    LLVMBuildCall2(builder, fn_type, commit, NULL, 0, "");
    LLVMBuildRetVoid(builder);
    LLVMDisposeBuilder(builder);
    return module;
}

START_TEST(fatal_error_is_a_build_error)
{
    tcc_context *ctx = test_context();
    /* What LLVM held when it gave up is abandoned, by design: not a leak of tcc's. */
    LEAKS_EXPECTED_BEGIN();
    LLVMContextRef llvm = NULL;
    ck_assert_int_eq(tci_llvm_context(ctx, &llvm), TCC_OK);
    LLVMModuleRef module = unselectable_module(llvm);
    ck_assert_int_eq(tci_llvm_prepare_module(ctx, module, TCC_SM_70), TCC_OK);
    char *ptx = NULL;
    tcc_status status = tci_llvm_emit_ptx(ctx, module, TCC_SM_70, &ptx);
    LLVMDisposeModule(module);
    LEAKS_EXPECTED_END();
    ck_assert_int_eq(status, TCC_ERROR_LLVM);
    ck_assert_ptr_null(ptx);
    const char *message = tcc_last_error(ctx);
    assert_contains(message, "PTX emission: LLVM fatal error: Cannot select");
    ck_assert_ptr_null(strchr(message, '\n'));

    /* The context builds the next kernel, in a fresh LLVM state. */
    tcc_kernel *kernel = NULL;
    ck_assert_int_eq(compile_matmul(ctx, TCC_SM_80, NULL, TCC_FLOAT16, &kernel), TCC_OK);
    assert_contains(tcc_kernel_ptx(kernel), "mma.sync");
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
}
END_TEST

/* ptxas accepts `ptx` for `arch` (true where no toolkit is installed, or ptxas does not know
 * the arch: CUDA 13 dropped sm_70). */
static bool ptxas_accepts(const char *ptx, const TargetArch *arch)
{
    if (access(PTXAS, X_OK) != 0 || arch->arch == TCC_SM_70)
        return true;
    char path[] = "/tmp/tcc-fatal-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *file = fdopen(fd, "w");
    ck_assert_ptr_nonnull(file);
    fputs(ptx, file);
    fclose(file);
    char command[256];
    snprintf(command, sizeof command, PTXAS " -arch=%s -o /dev/null %s 2>&1", arch->name, path);
    int rc = system(command);
    unlink(path);
    return rc == 0;
}

/* One schedule fed to `arch`: it compiles and ptxas accepts it, or it is refused with one
 * line before LLVM sees it. Counts which. */
static void feed(tcc_context *ctx, const TargetArch *arch, const tcc_gemm_schedule *schedule,
                 tcc_dtype input, int counts[2])
{
    tcc_kernel *kernel = NULL;
    tcc_status status = compile_matmul(ctx, arch->arch, schedule, input, &kernel);
    const char *message = tcc_last_error(ctx);
    if (status == TCC_OK) {
        ck_assert_msg(ptxas_accepts(tcc_kernel_ptx(kernel), arch),
                      "ptxas refused %s: intrinsic %d, input %d, copy %d, producer %d", arch->name,
                      schedule->intrinsic, input, schedule->copy, schedule->producer);
        tcc_kernel_destroy(kernel);
        counts[0]++;
        return;
    }
    ck_assert_msg(message[0] != '\0' && !strchr(message, '\n'), "%s: status %d without one line",
                  arch->name, status);
    ck_assert_msg(status != TCC_ERROR_LLVM, "%s: LLVM refused: %s", arch->name, message);
    counts[1]++;
}

START_TEST(every_intrinsic_on_every_arch)
{
    static const tcc_gemm_intrinsic intrinsics[] = {TCC_GEMM_WMMA, TCC_GEMM_MMA_SYNC,
                                                    TCC_GEMM_WGMMA};
    static const tcc_dtype inputs[] = {TCC_FLOAT16, TCC_BFLOAT16, TCC_FLOAT32, TCC_INT8};
    int counts[2] = {0, 0}; /* compiled, refused */
    tcc_context *ctx = test_context();
    for (int a = 0; a < tci_target_arch_count(); a++) {
        const TargetArch *arch = tci_target_arch_at(a);
        tcc_gemm_schedule schedule;
        for (size_t i = 0; i < sizeof intrinsics / sizeof *intrinsics; i++)
            for (size_t t = 0; t < sizeof inputs / sizeof *inputs; t++) {
                tcc_gemm_schedule_init(&schedule);
                schedule.intrinsic = intrinsics[i];
                feed(ctx, arch, &schedule, inputs[t], counts);
            }
        /* The bulk tensor copy, its mbarriers, and a producer warpgroup with setmaxnreg. */
        memset(&schedule, 0, sizeof schedule);
        schedule.copy = TCC_GEMM_COPY_BULK;
        feed(ctx, arch, &schedule, TCC_FLOAT16, counts);
        schedule.producer = TCC_GEMM_PRODUCER_WARPGROUP;
        feed(ctx, arch, &schedule, TCC_FLOAT16, counts);
    }
    tcc_context_destroy(ctx);
    /* Both outcomes occur: the matrix is not vacuous. */
    ck_assert_int_gt(counts[0], 0);
    ck_assert_int_gt(counts[1], 0);
}
END_TEST

static Suite *fatal_suite(void)
{
    Suite *s = suite_create("llvm_fatal");
    TCase *tc = test_case(s, "fatal", NULL, NULL);
    tcase_add_test(tc, fatal_error_is_a_build_error);
    tcase_add_test(tc, every_intrinsic_on_every_arch);
    return s;
}

TEST_MAIN(fatal_suite)
