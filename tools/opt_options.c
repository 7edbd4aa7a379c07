/*
 * tcc-opt's options: its table, the help text and the parse, which main (tcc_opt.c) and the
 * fuzz target of the command line (test/fuzz) share.
 */
#include "opt_options.h"

#include <string.h>

/* clang-format off */
#define F(member) offsetof(OptOptions, member)
static const CliOpt rows[] = {
    {.name = "", .kind = CLI_STRING, .offset = F(input)},
    CLI_HEADING_ROW("passes"),
    {.name = "--passes", .kind = CLI_STRING, .offset = F(passes),
     .help = "A,B,...: the passes to run, in this order (default: none; -passes works too)"},
    {.name = "--auto-unroll-max-step", .kind = CLI_INT, .offset = F(auto_unroll_max_step),
     .help = "N: unroll's budget for loops not marked unrolled (default 16)"},
    {.name = "--arch", .kind = CLI_STRING, .offset = F(common.arch_name),
     .describe = cli_describe_arch},
    {.name = "--list-passes", .kind = CLI_FLAG, .offset = F(common.list_passes),
     .help = "list the passes and exit"},
    CLI_HEADING_ROW("output"),
    {.name = "-o", .kind = CLI_STRING, .offset = F(common.output_path),
     .help = "FILE: write the loop IR to FILE (default stdout)"},
    {.name = "--print-after", .kind = CLI_STRING, .offset = F(common.print_after),
     .help = "PASS|all: print the loop IR after PASS to stderr"},
    CLI_HEADING_ROW("general"),
    {.name = "--help", .kind = CLI_FLAG, .offset = F(common.help), .help = "print this help and exit"},
    {.name = "--version", .kind = CLI_FLAG, .offset = F(common.version),
     .help = "print the version and exit"},
};
#undef F
/* clang-format on */

void opt_usage(FILE *out)
{
    fprintf(out, "usage: tcc-opt [options] [FILE]\n\n"
                 "Reads loop IR (as tcc-conv --emit=loops prints it) from FILE or standard\n"
                 "input, runs the passes named, in order, and prints the result. A malformed\n"
                 "input is one error naming FILE:LINE:COLUMN.\n\n"
                 "options (VALUE as --name=VALUE or --name VALUE):\n");
    CliTable table = {rows, sizeof rows / sizeof rows[0], NULL};
    cli_print_options(out, &table, 1);
    cli_print_exit_codes(out, false);
}

bool opt_parse(int argc, char **argv, OptOptions *o, char *error, size_t error_size)
{
    memset(o, 0, sizeof *o);
    cli_common_defaults(&o->common);
    o->auto_unroll_max_step = 16;
    CliTable table = {rows, sizeof rows / sizeof rows[0], o};
    return cli_parse(argc, argv, &table, 1, error, error_size);
}
