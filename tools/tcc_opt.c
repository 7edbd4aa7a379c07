/*
 * tcc-opt: runs lowering passes on loop IR written as text, as LLVM's opt runs passes on
 * LLVM IR, so that one pass can be tested on its own:
 *
 *   tcc-opt -passes=flatten,simplify < in.tir | FileCheck in.tir
 *
 * The input is what tcc-conv --emit=loops and --print-after print; the output is the same
 * syntax. This file only parses options, reads and writes files, and calls the public API
 * (tcc_loop_ir_transform, tcc.h).
 */
#include "opt_options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char cli_program[] = "tcc-opt";

/* The whole input as a NUL-terminated string (malloc'd), or NULL after printing why (*rc:
 * the exit status). */
static char *read_input(const char *path, CliExit *rc)
{
    bool is_stdin = !path || strcmp(path, "-") == 0;
    FILE *in = is_stdin ? stdin : fopen(path, "rb");
    *rc = CLI_EXIT_USAGE;
    if (!in) {
        cli_error("cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t size = 0, cap = 1 << 16;
    char *text = malloc(cap);
    while (text) {
        size += fread(text + size, 1, cap - size - 1, in);
        if (size + 1 < cap) /* a short read: the end of the file, or an error */
            break;
        char *grown = realloc(text, cap *= 2);
        if (!grown)
            free(text);
        text = grown;
    }
    bool failed = !text || ferror(in) || memchr(text, '\0', size);
    if (!is_stdin)
        fclose(in);
    if (failed) {
        cli_error("cannot read '%s': %s", is_stdin ? "<stdin>" : path,
                  !text ? "out of memory" : "a read error or a NUL byte in the text");
        *rc = !text ? CLI_EXIT_ERROR : CLI_EXIT_USAGE;
        free(text);
        return NULL;
    }
    text[size] = '\0';
    return text;
}

static void print_after(const char *pass_name, const char *loop_ir, void *user)
{
    (void)user;
    fprintf(stderr, "// ---- after %s ----\n%s", pass_name, loop_ir);
}

/* --arch: a name, or native (device 0's). */
static CliExit target_arch(tcc_context *ctx, const CliCommon *c, tcc_arch *arch)
{
    if (cli_arch_is_native(c))
        return cli_arch_of_device(ctx, 0, arch);
    if (c->arch_name && tcc_arch_parse(ctx, c->arch_name, arch) != TCC_OK) {
        cli_error("%s", tcc_last_error(ctx));
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

static CliExit transform(const OptOptions *o, const char *text)
{
    tcc_context *ctx = NULL;
    if (tcc_context_create(&ctx) != TCC_OK) {
        cli_error("out of memory creating a context");
        return CLI_EXIT_ERROR;
    }
    tcc_build_options build;
    tcc_build_options_init(&build);
    build.auto_unroll_max_step = o->auto_unroll_max_step;
    CliExit rc = target_arch(ctx, &o->common, &build.arch);
    if (rc != CLI_EXIT_OK) {
        tcc_context_destroy(ctx);
        return rc;
    }
    build.print_after_pass = o->common.print_after;
    build.print_callback = print_after;
    char *result = NULL;
    tcc_status status = tcc_loop_ir_transform(ctx, text, o->passes, &build, &result);
    if (status != TCC_OK) {
        const char *error = tcc_last_error(ctx);
        /* Syntax errors start with LINE:COLUMN; they are the input's. */
        bool positioned = *error >= '0' && *error <= '9';
        if (positioned)
            cli_error("%s:%s", o->input && strcmp(o->input, "-") ? o->input : "<stdin>", error);
        else
            cli_error("%s", error);
        rc = cli_exit_for_status(status, false);
    } else {
        rc = cli_write_text(o->common.output_path, result);
    }
    free(result);
    tcc_context_destroy(ctx);
    return rc;
}

static int tool_main(int argc, char **argv)
{
    OptOptions o;
    char error[512];
    if (!opt_parse(argc, argv, &o, error, sizeof error)) {
        cli_error("%s", error);
        return CLI_EXIT_USAGE;
    }
    int rc = cli_early_exit(&o.common, opt_usage);
    if (rc >= 0)
        return rc;
    CliExit code;
    char *text = read_input(o.input, &code);
    if (!text)
        return code;
    code = transform(&o, text);
    free(text);
    return code;
}

int main(int argc, char **argv)
{
    return cli_exit_after_output("tcc-opt", tool_main(argc, argv));
}
