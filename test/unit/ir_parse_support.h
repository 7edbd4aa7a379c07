/*
 * What the loop IR parser's tests of hand-written text share (test_ir_parse.c, what the text
 * reads back into; test_ir_parse_errors.c, malformed text): the header line the printer
 * writes, a kernel of three parameters around a body, and a kernel of one statement around
 * an expression. Static, so each test program has its own.
 */
#ifndef TCC_TEST_IR_PARSE_SUPPORT_H
#define TCC_TEST_IR_PARSE_SUPPORT_H

#include "ir/ir.h"
#include "ir_support.h"

#define HEADER "// \"/\" and \"%\" are floor division and modulo\n"
/* A kernel of three parameters around `body` (statements at one level of indentation). */
#define KERNEL_OPEN                                                                                \
    HEADER "kernel k(float32 A[64], float16 H[8, 8], int32 I[16])\n"                               \
           "  grid(2, 1, 1) block(32, 4, 1)\n"                                                     \
           "{\n"
#define KERNEL(body) KERNEL_OPEN body "}\n"

/* The kernel's one statement: `A[i] = EXPR` inside `for i` inside `launch threadIdx.x`. */
static inline const char *expr_kernel(const char *expr)
{
    return tci_arena_printf(arena,
                            "%s  launch threadIdx.x in 0..32 {\n"
                            "    for i in 0..8 {\n"
                            "      A[i] = %s\n"
                            "    }\n"
                            "  }\n"
                            "}\n",
                            KERNEL_OPEN, expr);
}

#endif
