/*
 * A program that uses tensorcc as another project would (test/install/run.sh builds it
 * through find_package, pkg-config and add_subdirectory): it checks that the library it runs
 * with is the version of the headers it was compiled with, compiles a small conv2d through
 * the public API and prints the first lines of its PTX. Any failure: a message, exit 1.
 */
#include <stdio.h>
#include <string.h>
#include <tcc/tcc.h>

/* Prints the first `count` lines of `text`. `unused` is never read on purpose: under -Wextra
 * it is a warning. The add_subdirectory consumer compiles this with its own (default) flags,
 * so a build that breaks here means tcc's -Wall -Wextra -Werror leaked into it. */
static void print_lines(const char *text, int count, int unused)
{
    for (int line = 0; line < count && *text != '\0'; line++) {
        const char *end = strchr(text, '\n');
        int length = end ? (int)(end - text) : (int)strlen(text);
        printf("  %.*s\n", length, text);
        text += length + (end != NULL);
    }
}

int main(void)
{
    if (strcmp(tcc_version_string(), TCC_VERSION_STRING) != 0 ||
        tcc_version_number() != TCC_VERSION_NUMBER) {
        fprintf(stderr, "consumer: headers %s (%d), library %s (%d)\n", TCC_VERSION_STRING,
                TCC_VERSION_NUMBER, tcc_version_string(), tcc_version_number());
        return 1;
    }
    printf("tensorcc %s\n", tcc_version_string());

    tcc_context *ctx = NULL;
    if (tcc_context_create(&ctx) != TCC_OK) {
        fprintf(stderr, "consumer: tcc_context_create failed\n");
        return 1;
    }
    tcc_conv2d_desc desc;
    tcc_conv2d_desc_init(&desc); /* NHWC, KRSC, fp16 -> fp32 */
    desc.batch = 1;
    desc.height = desc.width = 14;
    desc.in_channels = desc.out_channels = 32;
    desc.kernel_h = desc.kernel_w = 3;
    desc.pad_top = desc.pad_bottom = desc.pad_left = desc.pad_right = 1;
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = TCC_SM_80;

    tcc_kernel *kernel = NULL;
    int status = 1;
    if (tcc_conv2d_compile(ctx, &desc, NULL, &options, &kernel) != TCC_OK) {
        fprintf(stderr, "consumer: %s\n", tcc_last_error(ctx));
    } else if (strstr(tcc_kernel_ptx(kernel), ".target sm_80") == NULL ||
               strstr(tcc_kernel_ptx(kernel), ".entry") == NULL) {
        fprintf(stderr, "consumer: the PTX has no sm_80 .entry\n");
    } else {
        printf("%s: %zu bytes of PTX\n", tcc_kernel_name(kernel), strlen(tcc_kernel_ptx(kernel)));
        print_lines(tcc_kernel_ptx(kernel), 12, 0);
        status = 0;
    }
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
    return status;
}
