/*
 * Fuzz target of tcc-opt's loop-IR reader (lib/ir/parse*.c) and of the passes on what it
 * reads, through tcc_loop_ir_transform as tcc-opt calls it. The input is loop IR text; a
 * first line "// passes: A,B" names the passes to run (the lit tests' .tir files turned into
 * seeds by make_corpus.py carry their RUN line's passes so).
 *
 * Besides no crash, leak or hang, it asserts what the lit tests assume of every kernel
 * (round_trip.py): a failure has a message, and what is printed reads back and prints the
 * same.
 */
#include "fuzz_support.h"

#include <stdlib.h>
#include <string.h>

/* The passes named by a first line "// passes: A,B", copied into `passes`, or NULL. */
static const char *passes_line(const char *text, char *passes, size_t size)
{
    static const char prefix[] = "// passes:";
    if (strncmp(text, prefix, sizeof prefix - 1) != 0)
        return NULL;
    const char *start = text + sizeof prefix - 1;
    while (*start == ' ')
        start++;
    size_t len = strcspn(start, "\n");
    if (len >= size)
        return NULL;
    memcpy(passes, start, len);
    passes[len] = '\0';
    return passes;
}

/* Reads `printed` back with no passes: it must read and print as itself. */
static void check_round_trip(const char *printed)
{
    tcc_context *ctx = NULL;
    if (tcc_context_create(&ctx) != TCC_OK)
        return;
    char *again = NULL;
    tcc_status status = tcc_loop_ir_transform(ctx, printed, NULL, NULL, &again);
    if (status != TCC_OK) {
        fprintf(stderr, "fuzz: printed loop IR does not read back: %s\n%s", tcc_last_error(ctx),
                printed);
        __builtin_trap();
    }
    if (strcmp(again, printed) != 0) {
        fprintf(stderr, "fuzz: loop IR prints differently when read back:\n%s\n---\n%s", printed,
                again);
        __builtin_trap();
    }
    free(again);
    tcc_context_destroy(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char buffer[256];
    const char *passes = passes_line(text, buffer, sizeof buffer);
    tcc_context *ctx = NULL;
    if (tcc_context_create(&ctx) == TCC_OK) {
        char *out = NULL;
        tcc_status status = tcc_loop_ir_transform(ctx, text, passes, NULL, &out);
        fuzz_check_status(ctx, "tcc_loop_ir_transform", status);
        if (status == TCC_OK)
            check_round_trip(out);
        else if (out)
            __builtin_trap(); /* a failure leaves no result */
        free(out);
        tcc_context_destroy(ctx);
    }
    free(text);
    return 0;
}
