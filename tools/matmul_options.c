/*
 * tcc-matmul's own options (the shape and the operands' layouts) and how they resolve into
 * a matmul descriptor together with the options every tool takes (cli_options.c).
 */
#include "matmul_options.h"

#include <string.h>

#define DEFAULT_SIZE 1024

/* clang-format off */
#define F(member) offsetof(MatmulOptions, member)
#define I64(name_, member_, help_) {.name = name_, .kind = CLI_I64, .offset = F(member_), .min = 1, .help = help_}
#define FLAG(name_, member_, help_) {.name = name_, .kind = CLI_FLAG, .offset = F(member_), .help = help_}

static const CliOpt shape_rows[] = {
    CLI_HEADING_ROW("matrix product: C[b] (m x n, row-major) = A[b] (m x k) * B[b] (k x n)"),
    I64("--m", desc.m, "M: rows of A and C (default 1024)"),
    I64("--n", desc.n, "N: columns of B and C (default 1024)"),
    I64("--k", desc.k, "K: the reduction (default 1024)"),
    I64("--batch", desc.batch, "B: independent products (default 1)"),
    FLAG("--a-col-major", desc.a_col_major, "A is stored column-major (m contiguous)"),
    FLAG("--b-col-major", desc.b_col_major, "B is stored column-major (k contiguous)"),
};

static const CliOpt schedule_rows[] = {
    CLI_HEADING_ROW("schedule"),
    {.name = "--schedule", .kind = CLI_CUSTOM, .offset = F(common.schedule_kind),
     .custom = cli_set_schedule_kind,
     .help = "auto|default: the implicit-GEMM schedule (the tutorial's is tcc-conv's only)"},
};
/* clang-format on */

#define ROWS(array, base) ((CliTable){array, sizeof array / sizeof array[0], base})
#define NTABLE 8

/* The tables in the order of the help text. */
static void matmul_tables(MatmulOptions *o, CliTable tables[NTABLE])
{
    CliCommon *c = &o->common;
    tables[0] = ROWS(shape_rows, o);
    tables[1] = cli_common_table(CLI_GROUP_TYPES, c);
    tables[2] = cli_common_table(CLI_GROUP_EPILOGUE, c);
    tables[3] = ROWS(schedule_rows, o);
    tables[4] = cli_common_table(CLI_GROUP_SCHEDULE, c);
    tables[5] = cli_common_table(CLI_GROUP_OUTPUT, c);
    tables[6] = cli_common_table(CLI_GROUP_RUN, c);
    tables[7] = cli_common_table(CLI_GROUP_GENERAL, c);
}

bool matmul_parse(int argc, char **argv, MatmulOptions *o, char *error, size_t error_size)
{
    memset(o, 0, sizeof *o);
    cli_common_defaults(&o->common);
    tcc_matmul_desc_init(&o->desc);
    o->desc.m = o->desc.n = o->desc.k = DEFAULT_SIZE;
    CliTable tables[NTABLE];
    matmul_tables(o, tables);
    return cli_parse(argc, argv, tables, NTABLE, error, error_size);
}

void matmul_resolve(MatmulOptions *o)
{
    cli_resolve(&o->common);
    o->desc.input_type = o->common.input_type;
    o->desc.accumulate_type = o->common.accumulate_type;
    o->desc.output_type = o->common.output_type;
    o->desc.epilogue = o->common.epilogue;
}

int64_t matmul_outputs(const tcc_matmul_desc *d)
{
    int64_t rows, outputs;
    if (__builtin_mul_overflow(d->batch, d->m, &rows) ||
        __builtin_mul_overflow(rows, d->n, &outputs))
        return INT64_MAX;
    return outputs;
}

void matmul_usage(FILE *out)
{
    MatmulOptions o;
    memset(&o, 0, sizeof o);
    CliTable tables[NTABLE];
    matmul_tables(&o, tables);
    fputs("usage: tcc-matmul [options]\n"
          "\n"
          "Compiles a tensor-core (batched) matrix product with a fused epilogue and writes\n"
          "its loop IR, LLVM IR or PTX; with --run, runs it on the GPU, checks it against a\n"
          "CPU reference and times it. Any sizes compile; A and B may be row- or\n"
          "column-major, C is row-major. With --run, nothing is written unless --emit or -o\n"
          "asks for it.\n"
          "\n"
          "options (VALUE as --name=VALUE or --name VALUE):\n",
          out);
    cli_print_options(out, tables, NTABLE);
    cli_print_exit_codes(out, true);
}
