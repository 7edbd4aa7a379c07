/*
 * The driver: the pipeline, its table of passes, and what it hands the caller.
 *
 *   passes.c    the pass table, running it (tci_lower), and --print-after
 *   pipeline.c  the pipeline, one function: define, schedule, lower, codegen, verify,
 *               default<O3>, PTX (linked with LLVM)
 *   opt.c       tcc-opt's pipeline: parse loop IR, run the passes named, print
 *   kernel.h    the built kernel (tcc_kernel) the pipeline returns
 */
#ifndef TCI_DRIVER_DRIVER_H
#define TCI_DRIVER_DRIVER_H

#include "driver/kernel.h"
#include "ir/pass.h"
#include "te/te.h"

/* ---- the pass table (passes.c) -------------------------------------------------------- */

typedef struct Pass {
    const char *name;
    PassFn run;
    const char *summary; /* one line, for --list-passes */
} Pass;

/* The pass named `name`, or NULL. */
const Pass *tci_find_pass(const char *name);

/* The size of tcc_build_options in its first release, before machine_code: what a caller
 * built against those headers passes, which the library still takes (tcc/tcc.h, "ABI"); the
 * fields added since (machine_code, multiprocessors) keep their defaults for such a caller. */
#define TCI_BUILD_OPTIONS_FIRST_SIZE offsetof(tcc_build_options, machine_code)
/* Refuses, in one line saying `what`, a tcc_build_options whose size this library does not
 * know: it knows the first release's to its own. */
tcc_status tci_check_build_options_size(tcc_context *ctx, const char *what,
                                        const tcc_build_options *options);
/* `options`, or the defaults when it is NULL, into *out (the fields past an older caller's
 * size defaulted), its arch checked against the target table and its multiprocessors not
 * negative (before anything else: the build is the slow part). */
tcc_status tci_build_options(tcc_context *ctx, const tcc_build_options *options,
                             tcc_build_options *out);
/* The PassContext of a build with `options` (NULL: the defaults) on `ctx`. */
PassContext tci_pass_context(tcc_context *ctx, const tcc_build_options *options);
/* Runs one pass; an allocation failure inside it (the arena's recovery) becomes
 * TCC_ERROR_OUT_OF_MEMORY. */
tcc_status tci_run_pass(const PassContext *pc, const Pass *pass, PrimFunc *func);
/* Calls options->print_callback with the loop IR when options->print_after_pass names
 * `pass` (or is "all"). */
void tci_print_after(const tcc_build_options *options, const char *pass, const PrimFunc *func);
/* Refuses a print_after_pass that names no pass (nor "all"). */
tcc_status tci_validate_print_after(tcc_context *ctx, const tcc_build_options *options);

/* Lowering: every pass of the table in order, from schedule_ops on, each followed by
 * tci_print_after. Lowers `func`'s schedule into a PrimFunc allocated in `arena`; the
 * kernel's parameters are `params`. */
tcc_status tci_lower(tcc_func *func, int nparam, tcc_tensor *const *params,
                     const tcc_build_options *options, Arena *arena, PrimFunc **out);

/* ---- the pipeline (pipeline.c) -------------------------------------------------------- */

/* What the pipeline compiles besides a tcc_func: how to define and schedule it. Both are
 * NULL for tcc_build, whose caller defined and scheduled the function itself.
 *
 * A program may be several kernels (split-K: the product, then the reduction of its
 * partial sums), launched in that order with the same parameters; kernel 0 is defined in
 * the caller's function, each later one in a function of its own, named names[k]. The
 * last nworkspace parameters are workspaces: scratch tensors the runtime allocates. */
typedef struct Program {
    /* Makes kernel k's compute definition in `func` and names the kernel's parameters
     * (inputs, outputs, then workspaces, in launch order), which live as long as `func`. */
    tcc_status (*define)(void *program, int k, tcc_func *func, tcc_arch arch, int *nparam,
                         tcc_tensor *const **params);
    /* Schedules kernel k's definition for `arch`. */
    tcc_status (*schedule)(void *program, int k, tcc_func *func, tcc_arch arch);
    void *program;
    int nkernel;     /* 0 counts as 1 */
    int main_kernel; /* the one tcc_kernel_name and tcc_kernel_grid describe */
    const char *names[TCI_MAX_LAUNCHES];
    int nworkspace;
} Program;

/* The whole compiler: `program` (NULL: none) defines and schedules `func`, then the
 * pipeline lowers, generates, optimizes and emits it into a new tcc_kernel. `nparam` and
 * `params` are the kernel's parameters when `program` does not define them. */
tcc_status tci_compile(tcc_func *func, const Program *program, int nparam,
                       tcc_tensor *const *params, const tcc_build_options *options,
                       tcc_kernel **out);

/* ---- tcc-opt (opt.c) ------------------------------------------------------------------ */
/* See tcc_loop_ir_transform (tcc.h). */

#endif
