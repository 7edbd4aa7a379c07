/*
 * The options tcc-conv and tcc-matmul both take: element types, the fused epilogue, the
 * implicit-GEMM schedule knobs, what to emit, and how to run. One table per group, so
 * each tool places its own rows (shape, layouts, --schedule) between them.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- setters -------------------------------------------------------------------------- */

typedef struct NamedValue {
    const char *name;
    int value;
} NamedValue;

/* What goes before name i of a list of `count`: "a, b or c". */
static const char *list_separator(size_t i, size_t count)
{
    if (i == 0)
        return "";
    return i + 1 == count ? " or " : ", ";
}

/* Looks `text` up in names[0..count); the message lists the names. */
static bool set_named(const CliOpt *opt, const char *text, const NamedValue *names, size_t count,
                      const char *what, int *out, char *err, size_t n)
{
    char list[160] = "";
    for (size_t i = 0; i < count; i++) {
        if (strcmp(text, names[i].name) == 0) {
            *out = names[i].value;
            return true;
        }
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", list_separator(i, count), names[i].name);
    }
    return cli_fail(err, n, "%s: unknown %s '%s' (expected %s)", opt->name, what, text, list);
}

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

static bool set_dtype(const CliOpt *opt, const char *value, const NamedValue *names, size_t count,
                      void *base, char *err, size_t n)
{
    int type;
    if (!set_named(opt, value, names, count, "type", &type, err, n))
        return false;
    *(tcc_dtype *)cli_field(base, opt->offset) = (tcc_dtype)type;
    return true;
}

/* The --dtype names; tf32 means float32 tensors, read by the tensor cores as tf32. */
#define INPUT_TYPES                                                                                \
    {                                                                                              \
        {"f16", TCC_FLOAT16}, {"bf16", TCC_BFLOAT16}, {"tf32", TCC_FLOAT32},                       \
        {                                                                                          \
            "s8", TCC_INT8                                                                         \
        }                                                                                          \
    }

static bool set_input_type(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    static const NamedValue names[] = INPUT_TYPES;
    return set_dtype(opt, value, names, COUNT(names), base, err, n);
}

static bool set_accumulate_type(const CliOpt *opt, const char *value, void *base, char *err,
                                size_t n)
{
    static const NamedValue names[] = {
        {"f32", TCC_FLOAT32}, {"f16", TCC_FLOAT16}, {"s32", TCC_INT32}};
    return set_dtype(opt, value, names, COUNT(names), base, err, n);
}

static bool set_output_type(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    static const NamedValue names[] = {
        {"f32", TCC_FLOAT32}, {"f16", TCC_FLOAT16}, {"bf16", TCC_BFLOAT16}, {"s32", TCC_INT32}};
    return set_dtype(opt, value, names, COUNT(names), base, err, n);
}

static bool set_beta(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    CliCommon *c = base;
    c->beta_given = true;
    return cli_parse_double(opt->name, value, &c->epilogue.beta, err, n);
}

static bool set_clamp(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    CliCommon *c = base;
    const char *comma = strchr(value, ',');
    char low[64];
    size_t len = comma ? (size_t)(comma - value) : 0;
    if (!comma || len >= sizeof low)
        return cli_fail(err, n, "%s: expected LO,HI, got '%s'", opt->name, value);
    memcpy(low, value, len);
    low[len] = '\0';
    if (!cli_parse_double(opt->name, low, &c->epilogue.clamp_min, err, n) ||
        !cli_parse_double(opt->name, comma + 1, &c->epilogue.clamp_max, err, n))
        return false;
    c->epilogue.clamp = true;
    return true;
}

static bool set_prologue(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    tcc_epilogue *e = &((CliCommon *)base)->epilogue;
    if (strcmp(value, "relu") == 0) {
        e->prologue = TCC_PROLOGUE_RELU;
        return true;
    }
    const char *arg = strchr(value, ':');
    size_t len = arg ? (size_t)(arg - value) : strlen(value);
    if (len == 3 && strncmp(value, "set", 3) == 0)
        e->prologue = TCC_PROLOGUE_SET;
    else if (len == 5 && strncmp(value, "scale", 5) == 0)
        e->prologue = TCC_PROLOGUE_SCALE;
    else
        return cli_fail(err, n, "%s: unknown prologue '%s' (expected set:X, scale:X or relu)",
                        opt->name, value);
    if (!arg)
        return cli_fail(err, n, "%s: '%.*s' needs a value: %.*s:X", opt->name, (int)len, value,
                        (int)len, value);
    return cli_parse_double(opt->name, arg + 1, &e->prologue_arg, err, n);
}

bool cli_set_schedule_kind(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    static const NamedValue names[] = {{"auto", CLI_SCHEDULE_AUTO},
                                       {"tutorial", CLI_SCHEDULE_TUTORIAL},
                                       {"default", CLI_SCHEDULE_DEFAULT}};
    int kind;
    if (!set_named(opt, value, names, COUNT(names), "schedule", &kind, err, n))
        return false;
    *(CliScheduleKind *)cli_field(base, opt->offset) = (CliScheduleKind)kind;
    return true;
}

/* "m16n16k16" for a shape. */
static void shape_name(tcc_mma_shape shape, char *out, size_t size)
{
    snprintf(out, size, "m%dn%dk%d", shape.m, shape.n, shape.k);
}

/* The MMA shapes are the library's (tcc_mma_shape_at); the tool only spells them. */
static bool set_mma(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    tcc_gemm_schedule *s = &((CliCommon *)base)->schedule;
    char list[160] = "", name[32];
    int count = tcc_mma_shape_count();
    for (int i = 0; i < count; i++) {
        tcc_mma_shape shape = tcc_mma_shape_at(i);
        shape_name(shape, name, sizeof name);
        if (strcmp(value, name) == 0) {
            s->mma_m = shape.m, s->mma_n = shape.n, s->mma_k = shape.k;
            return true;
        }
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", list_separator((size_t)i, (size_t)count),
                 name);
    }
    return cli_fail(err, n, "%s: unknown MMA shape '%s' (expected %s)", opt->name, value, list);
}

/* "m16n16k16|...: the MMA shape (m16n16k8: tf32)": a shape that takes one input type only
 * is noted with that type's --dtype name. */
static void describe_mma(char *out, size_t size)
{
    static const NamedValue inputs[] = INPUT_TYPES;
    char notes[128] = "", name[32];
    out[0] = '\0';
    for (int i = 0; i < tcc_mma_shape_count(); i++) {
        tcc_mma_shape shape = tcc_mma_shape_at(i);
        shape_name(shape, name, sizeof name);
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", i ? "|" : "", name);
        int takes = 0;
        const char *only = NULL;
        for (size_t t = 0; t < COUNT(inputs); t++)
            if (tcc_mma_shape_takes(shape, (tcc_dtype)inputs[t].value))
                takes++, only = inputs[t].name;
        len = strlen(notes);
        if (takes == 1)
            snprintf(notes + len, sizeof notes - len, "%s%s: %s", len ? ", " : "", name, only);
    }
    size_t len = strlen(out);
    snprintf(out + len, size - len, ": the MMA shape%s%s%s", *notes ? " (" : "", notes,
             *notes ? ")" : "");
}

/* What --arch takes for "the selected device's arch". */
#define NATIVE_ARCH "native"

bool cli_arch_is_native(const CliCommon *c)
{
    return c->arch_name && strcmp(c->arch_name, NATIVE_ARCH) == 0;
}

/* "sm_70|...|sm_90|native (default sm_80)", from the library's archs and defaults. */
void cli_describe_arch(char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < tcc_arch_count(); i++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", i ? "|" : "", tcc_arch_name(tcc_arch_at(i)));
    }
    tcc_build_options defaults;
    tcc_build_options_init(&defaults);
    size_t len = strlen(out);
    snprintf(out + len, size - len, "|" NATIVE_ARCH " (default %s; native: the GPU's)",
             tcc_arch_name(defaults.arch));
}

static const NamedValue policy_names[] = {{"pass", TCC_MMA_PASS_ORDER},
                                          {"block", TCC_MMA_BLOCK_ORDER}};

static bool set_policy(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    CliCommon *c = base;
    int policy;
    if (!set_named(opt, value, policy_names, COUNT(policy_names), "policy", &policy, err, n))
        return false;
    c->schedule.policy = (tcc_mma_policy)policy;
    c->policy_given = true;
    return true;
}

static bool set_block_order(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    static const NamedValue names[] = {{"row", 0}, {"col", 1}};
    CliCommon *c = base;
    int column;
    if (!set_named(opt, value, names, COUNT(names), "block order", &column, err, n))
        return false;
    c->schedule.column_major_blocks = column != 0;
    c->block_order_given = true;
    return true;
}

/* The schedule's enumerated knobs: each option's names for the values of its field. */
typedef struct EnumKnob {
    const char *option, *what;
    const NamedValue *names;
    size_t count;
} EnumKnob;

static const NamedValue smem_names[] = {
    {"dense", TCC_SMEM_DENSE}, {"padded", TCC_SMEM_PADDED}, {"swizzled", TCC_SMEM_SWIZZLED}};
static const NamedValue intrinsic_names[] = {
    {"wmma", TCC_GEMM_WMMA}, {"mma_sync", TCC_GEMM_MMA_SYNC}, {"wgmma", TCC_GEMM_WGMMA}};
static const NamedValue copy_names[] = {{"threads", TCC_GEMM_COPY_THREADS},
                                        {"bulk", TCC_GEMM_COPY_BULK}};
static const NamedValue producer_names[] = {{"none", TCC_GEMM_PRODUCER_NONE},
                                            {"warpgroup", TCC_GEMM_PRODUCER_WARPGROUP}};
static const NamedValue store_names[] = {{"shared", TCC_GEMM_STORE_SHARED},
                                         {"registers", TCC_GEMM_STORE_REGISTERS},
                                         {"bulk", TCC_GEMM_STORE_BULK}};
static const NamedValue grid_names[] = {{"tiles", TCC_GEMM_GRID_TILES},
                                        {"persistent", TCC_GEMM_GRID_PERSISTENT}};
static const NamedValue consumers_names[] = {{"cooperative", TCC_GEMM_CONSUMERS_COOPERATIVE},
                                             {"pingpong", TCC_GEMM_CONSUMERS_PINGPONG}};

#define ENUM_KNOB(option_, what_, names_)                                                          \
    {                                                                                              \
        option_, what_, names_, COUNT(names_)                                                      \
    }
static const EnumKnob enum_knobs[] = {
    ENUM_KNOB("--smem", "shared-memory layout", smem_names),
    ENUM_KNOB("--intrinsic", "intrinsic", intrinsic_names),
    ENUM_KNOB("--copy", "copy", copy_names),
    ENUM_KNOB("--producer", "producer", producer_names),
    ENUM_KNOB("--store", "store", store_names),
    ENUM_KNOB("--grid", "grid", grid_names),
    ENUM_KNOB("--consumers", "consumers", consumers_names),
};

/* set_enum stores through an int: each knob's enum must be one. */
_Static_assert(sizeof(tcc_smem_layout) == sizeof(int) &&
                   sizeof(tcc_gemm_intrinsic) == sizeof(int) &&
                   sizeof(tcc_gemm_copy) == sizeof(int) &&
                   sizeof(tcc_gemm_producer) == sizeof(int) &&
                   sizeof(tcc_gemm_store) == sizeof(int) && sizeof(tcc_gemm_grid) == sizeof(int) &&
                   sizeof(tcc_gemm_consumers) == sizeof(int),
               "the schedule's enumerated knobs are int-sized");

const char *cli_knob_name(const char *option, int value)
{
    const NamedValue *names = policy_names;
    size_t count = strcmp(option, "--policy") == 0 ? COUNT(policy_names) : 0;
    for (size_t i = 0; i < COUNT(enum_knobs) && !count; i++)
        if (strcmp(enum_knobs[i].option, option) == 0)
            names = enum_knobs[i].names, count = enum_knobs[i].count;
    for (size_t i = 0; i < count; i++)
        if (names[i].value == value)
            return names[i].name;
    return NULL;
}

/* An enumerated knob: the value of the name given, into the row's field (an enum). */
static bool set_enum(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    for (size_t i = 0; i < COUNT(enum_knobs); i++) {
        const EnumKnob *knob = &enum_knobs[i];
        int chosen = 0;
        if (strcmp(knob->option, opt->name) != 0)
            continue;
        if (!set_named(opt, value, knob->names, knob->count, knob->what, &chosen, err, n))
            return false;
        *(int *)cli_field(base, opt->offset) = chosen;
        return true;
    }
    return cli_fail(err, n, "%s: no names for its values", opt->name);
}

static bool set_emit(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    CliCommon *c = base;
    static const struct {
        const char *name;
        CliEmit emit;
    } kinds[] = {{"loops", CLI_EMIT_LOOPS},
                 {"llvm", CLI_EMIT_LLVM},
                 {"ptx", CLI_EMIT_PTX},
                 {"cubin", CLI_EMIT_CUBIN}};
    for (size_t i = 0; i < COUNT(kinds); i++) {
        if (strcmp(value, kinds[i].name) == 0) {
            c->emit = kinds[i].emit;
            c->emit_given = true;
            return true;
        }
    }
    return cli_fail(err, n, "%s: unknown kind '%s' (expected loops, llvm, ptx or cubin)", opt->name,
                    value);
}

static bool set_format(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    static const NamedValue names[] = {
        {"text", CLI_FORMAT_TEXT}, {"json", CLI_FORMAT_JSON}, {"csv", CLI_FORMAT_CSV}};
    int format;
    if (!set_named(opt, value, names, COUNT(names), "format", &format, err, n))
        return false;
    ((CliCommon *)base)->format = (CliFormat)format;
    return true;
}

static bool set_output(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    CliCommon *c = base;
    if (!*value)
        return cli_fail(err, n, "%s: expected a file name", opt->name);
    c->output_path = value;
    c->emit_given = true;
    return true;
}

static bool set_check(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    CliCommon *c = base;
    if (strcmp(value, "full") == 0)
        c->check = CLI_CHECK_FULL;
    else if (strcmp(value, "sampled") == 0)
        c->check = CLI_CHECK_SAMPLED;
    else if (strcmp(value, "none") == 0)
        c->check = CLI_CHECK_NONE;
    else
        return cli_fail(err, n, "%s: unknown mode '%s' (expected full, sampled or none)", opt->name,
                        value);
    return true;
}

static bool set_seed(const CliOpt *opt, const char *value, void *base, char *err, size_t n)
{
    CliCommon *c = base;
    char *end = NULL;
    errno = 0;
    unsigned long long seed = strtoull(value, &end, 10);
    if (!(*value >= '0' && *value <= '9') || *end != '\0' || errno == ERANGE)
        return cli_fail(err, n, "%s: expected an unsigned 64-bit integer, got '%s'", opt->name,
                        value);
    c->seed = seed;
    c->seed_given = true;
    return true;
}

/* ---- the tables ------------------------------------------------------------------------- */

/* One row per option reads better than what clang-format would make of these. */
/* clang-format off */
#define F(member) offsetof(CliCommon, member)
#define INT(name_, member_, min_, help_) {.name = name_, .kind = CLI_INT, .offset = F(member_), .min = min_, .help = help_}
#define I64(name_, member_, min_, help_) {.name = name_, .kind = CLI_I64, .offset = F(member_), .min = min_, .help = help_}
#define INT_PAIR(name_, m1_, m2_, sep_, help_) {.name = name_, .kind = CLI_INT_PAIR, .offset = F(m1_), .offset2 = F(m2_), .min = 1, .separator = sep_, .help = help_}
#define DOUBLE(name_, member_, help_) {.name = name_, .kind = CLI_DOUBLE, .offset = F(member_), .help = help_}
#define FLAG(name_, member_, help_) {.name = name_, .kind = CLI_FLAG, .offset = F(member_), .help = help_}
#define STRING(name_, member_, help_) {.name = name_, .kind = CLI_STRING, .offset = F(member_), .help = help_}
#define CUSTOM(name_, member_, fn_, help_) {.name = name_, .kind = CLI_CUSTOM, .offset = F(member_), .custom = fn_, .help = help_}

static const CliOpt type_rows[] = {
    CLI_HEADING_ROW("element types"),
    CUSTOM("--dtype", input_type, set_input_type,
           "f16|bf16|tf32|s8: inputs (default f16; tf32: float32 on tf32 tensor cores)"),
    CUSTOM("--acc", accumulate_type, set_accumulate_type,
           "f32|f16|s32: accumulation (default f32; s32 for s8)"),
    CUSTOM("--out", output_type, set_output_type,
           "f32|f16|bf16|s32: output (default: the accumulation type)"),
};

static const CliOpt epilogue_rows[] = {
    CLI_HEADING_ROW("fused epilogue: acc = prologue + products; out = clamp(relu(alpha*acc + "
                    "bias + beta*source))"),
    CUSTOM("--prologue", epilogue, set_prologue,
           "set:X|scale:X|relu: the accumulator starts at X, X*out or max(out, 0)"),
    DOUBLE("--alpha", epilogue.alpha, "X: scales the products (default 1)"),
    FLAG("--bias", epilogue.bias, "add a bias per output channel (matmul: per column)"),
    CUSTOM("--beta", epilogue, set_beta, "X: adds X times the output's previous contents"),
    FLAG("--residual", epilogue.residual,
         "beta applies to a residual tensor shaped like the output (beta 1 unless given)"),
    FLAG("--relu", epilogue.relu, "max(v, 0)"),
    CUSTOM("--clamp", epilogue, set_clamp, "LO,HI: clamp to [LO, HI]"),
};

static const CliOpt schedule_rows[] = {
    CLI_HEADING_ROW("implicit-GEMM schedule (what is not given is chosen from the shape)"),
    {.name = "--mma", .kind = CLI_CUSTOM, .offset = F(schedule), .custom = set_mma, .describe = describe_mma},
    INT_PAIR("--block-warps", schedule.block_row_warps, schedule.block_col_warps, 'x',
             "RxC: warps of a block"),
    INT_PAIR("--warp-tiles", schedule.warp_row_tiles, schedule.warp_col_tiles, 'x',
             "RxC: MMA tiles of a warp"),
    INT("--passes", schedule.num_total_passes, 1, "N: MMA passes per shared-memory step"),
    INT("--fused-passes", schedule.num_fused_passes, 1,
        "N: passes whose fragments load at once (divides --passes)"),
    CUSTOM("--policy", schedule, set_policy, "pass|block: Accera's pass order or block order"),
    CUSTOM("--block-order", schedule, set_block_order,
           "row|col: blockIdx.x walks columns (row) or rows (col) of tiles"),
    INT("--stages", schedule.stages, 1,
        "N: shared-memory buffers the copies rotate through (1: none; 2-8: a pipeline of copies)"),
    CUSTOM("--smem", schedule.smem_layout, set_enum, "dense|padded|swizzled: shared tiles as they are, rows padded by 16 bytes, or 16-byte chunks permuted by row (mma_sync, wgmma)"),
    CUSTOM("--intrinsic", schedule.intrinsic, set_enum,
           "wmma|mma_sync|wgmma: the tensor-core instructions (mma_sync: ldmatrix + mma.sync, "
           "sm_80; wgmma: warpgroups from shared memory, sm_90a)"),
    INT("--wgmma-steps", schedule.wgmma_steps, 1,
        "N: k steps whose wgmma products run at once (1: each waits for its own; 2: one runs "
        "across the barrier)"),
    CUSTOM("--copy", schedule.copy, set_enum,
           "threads|bulk: tiles copied by every thread (cp.async), or by the bulk tensor copy "
           "engine through tensor maps (wgmma, sm_90a)"),
    CUSTOM("--producer", schedule.producer, set_enum,
           "none|warpgroup: bulk copies issued by a thread that also computes, or by a warpgroup "
           "of their own that gives its registers to the others (warp specialization, sm_90a)"),
    CUSTOM("--store", schedule.store, set_enum,
           "shared|registers|bulk: accumulators staged through a C tile in shared memory, or "
           "stored by each thread from its registers, the epilogue applied on the way (wgmma), "
           "or so written into an output tile in shared memory that the bulk tensor copy "
           "engine stores (bulk copies, NHWC, pointwise NCHW or row-major outputs)"),
    CUSTOM("--grid", schedule.grid, set_enum,
           "tiles|persistent: a block a tile, or a block a multiprocessor running every "
           "--grid-blocks-th tile, its pipeline carried from tile to tile (bulk copies, "
           "--store registers or bulk)"),
    INT("--grid-blocks", schedule.grid_blocks, 1,
        "N: a persistent grid's blocks (default: with --run or --arch native the device's "
        "multiprocessors, or with --cluster those its clusters fill at once; else the "
        "target's)"),
    CUSTOM("--consumers", schedule.consumers, set_enum,
           "cooperative|pingpong: the consumer warpgroups of a producer warpgroup compute each "
           "tile together, or take the tiles in turns, each a tile of the block's size, one "
           "storing while the other multiplies (--producer warpgroup, --grid persistent)"),
    INT("--cluster", schedule.cluster, 1,
        "N: blocks along m run as a thread-block cluster sharing their B tiles, each block "
        "copying a slice into all (bulk copies, sm_90a; 1: none)"),
    INT("--split-k", schedule.split_k, 1,
        "N: slices of the reduction, summed by a second kernel in a fixed order (1: none)"),
    FLAG("--tuned", tuned,
         "the fastest config tcc-tune recorded for this workload (on this GPU with --run) of "
         "the gemm template, else the default schedule; stderr says which"),
    STRING("--db", db,
           "FILE|URL: the records of --tuned, an SQLite file (default "
           "$XDG_CACHE_HOME/tcc/records.db) or a PostgreSQL server's postgresql://... URL"),
};

static const CliOpt output_rows[] = {
    CLI_HEADING_ROW("output"),
    CUSTOM("--emit", emit, set_emit,
           "loops|llvm|ptx|cubin: what to write (default ptx; cubin: the PTX compiled to "
           "machine code by nvJitLink, binary, to -o or a pipe; TCC_NVJITLINK=FILE names the "
           "library)"),
    CUSTOM("-o", output_path, set_output, "FILE: write it to FILE (default stdout)"),
    STRING("--print-after", print_after, "PASS|all: print the loop IR after PASS to stderr"),
    FLAG("--list-passes", list_passes, "list the lowering passes and exit"),
    {.name = "--arch", .kind = CLI_STRING, .offset = F(arch_name), .describe = cli_describe_arch},
    CUSTOM("--format", format, set_format,
           "text|json|csv: stdout holds the kernel's text or --run's lines (text, the default), "
           "or a result a line (json: one JSON object a line; csv: a header, then a row a "
           "result); the kernel's text then goes to -o only"),
};

static const CliOpt run_rows[] = {
    CLI_HEADING_ROW("running"),
    FLAG("--run", run, "run, check and time the kernel on the GPU (arch: the GPU's)"),
    INT("--device", device, 0, "N: the GPU of --run and --arch native (default 0)"),
    INT("--runs", runs, 1, "N: timed launches (default 50)"),
    INT("--warmup", warmup, 0, "N: untimed launches first (default 10)"),
    CUSTOM("--check", check, set_check, "full|sampled|none (default: full up to 1M outputs)"),
    I64("--samples", samples, 0, "N: outputs compared with the CPU reference (0: all)"),
    CUSTOM("--seed", seed, set_seed, "N: seed of the random inputs (default from the clock)"),
    INT("--threads", threads, 1, "N: CPU threads of the reference (default: all)"),
};

static const CliOpt general_rows[] = {
    CLI_HEADING_ROW("general"),
    FLAG("--verbose", verbose, "print the chosen schedule on stderr"),
    FLAG("--help", help, "print this help and exit"),
    FLAG("--version", version, "print the version and exit"),
};
/* clang-format on */

CliTable cli_common_table(CliGroup group, CliCommon *common)
{
    switch (group) {
    case CLI_GROUP_TYPES:
        return (CliTable){type_rows, COUNT(type_rows), common};
    case CLI_GROUP_EPILOGUE:
        return (CliTable){epilogue_rows, COUNT(epilogue_rows), common};
    case CLI_GROUP_SCHEDULE:
        return (CliTable){schedule_rows, COUNT(schedule_rows), common};
    case CLI_GROUP_OUTPUT:
        return (CliTable){output_rows, COUNT(output_rows), common};
    case CLI_GROUP_RUN:
        return (CliTable){run_rows, COUNT(run_rows), common};
    case CLI_GROUP_GENERAL:
        break;
    }
    return (CliTable){general_rows, COUNT(general_rows), common};
}

/* ---- defaults ------------------------------------------------------------------------- */

void cli_common_defaults(CliCommon *c)
{
    memset(c, 0, sizeof *c);
    c->input_type = TCC_FLOAT16;
    c->accumulate_type = c->output_type = TCC_VOID;
    c->epilogue = (tcc_epilogue){.alpha = 1.0};
    c->schedule_kind = CLI_SCHEDULE_AUTO;
    c->emit = CLI_EMIT_PTX;
    c->runs = 50;
    c->warmup = 10;
    c->check = CLI_CHECK_AUTO;
    c->samples = -1;
}

static uint64_t seed_from_clock(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

void cli_resolve(CliCommon *c)
{
    if (c->accumulate_type == TCC_VOID)
        c->accumulate_type = c->input_type == TCC_INT8 ? TCC_INT32 : TCC_FLOAT32;
    if (c->output_type == TCC_VOID)
        c->output_type = c->accumulate_type;
    /* A residual is added whole unless --beta says otherwise. */
    if (c->epilogue.residual && !c->beta_given)
        c->epilogue.beta = 1.0;
    if (!c->seed_given)
        c->seed = seed_from_clock();
}

bool cli_check_common(const CliCommon *c, char *error, size_t error_size)
{
    bool to_stdout = !c->output_path || strcmp(c->output_path, "-") == 0;
    if (c->format != CLI_FORMAT_TEXT && c->emit_given && to_stdout)
        return cli_fail(error, error_size,
                        "--format %s writes its records to stdout: write the kernel's text to a "
                        "file with -o FILE",
                        c->format == CLI_FORMAT_JSON ? "json" : "csv");
    return true;
}

bool cli_gemm_knobs_given(const CliCommon *c)
{
    const tcc_gemm_schedule *s = &c->schedule;
    return s->mma_m || s->block_row_warps || s->warp_row_tiles || s->num_total_passes ||
           s->num_fused_passes || c->policy_given || c->block_order_given || s->stages ||
           s->smem_layout || s->intrinsic || s->split_k || s->wgmma_steps || s->copy ||
           s->producer || s->store || s->grid || s->grid_blocks || s->cluster || s->consumers;
}

int64_t cli_samples(const CliCommon *c, int64_t outputs)
{
    if (c->samples >= 0)
        return c->samples;
    switch (c->check) {
    case CLI_CHECK_FULL:
        return 0;
    case CLI_CHECK_SAMPLED:
        return CLI_SAMPLES;
    case CLI_CHECK_NONE:
        return 1; /* the launch still runs once; its unwritten outputs still count */
    case CLI_CHECK_AUTO:
        break;
    }
    return outputs <= CLI_FULL_CHECK_LIMIT ? 0 : CLI_SAMPLES;
}
