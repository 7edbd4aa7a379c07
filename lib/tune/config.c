/*
 * Config spaces and configs: AutoTVM's ConfigSpace (a template run once, defining, records
 * its knobs) and ConfigEntity (a point of the space, which the template applies). A point's
 * index counts in mixed radix over the knobs' lengths, the first knob fastest, as
 * ConfigSpace.get does; a split knob's tuples are numbered in split.c. Parsing a logged
 * config is config_parse.c.
 */
#include "tune/config.h"
#include "support/context.h"
#include "support/strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tcc_workload_init_size(tcc_workload *workload, tcc_workload_kind kind, size_t size)
{
    tcc_workload defaults = {.size = sizeof defaults, .kind = kind};
    tcc_conv2d_desc_init(&defaults.conv2d);
    tcc_matmul_desc_init(&defaults.matmul);
    tci_init_struct(workload, size, &defaults, sizeof defaults, sizeof defaults);
}

/* The symbol a program built before the macro calls: the first release's size. */
void(tcc_workload_init)(tcc_workload *workload, tcc_workload_kind kind)
{
    tcc_workload_init_size(workload, kind, sizeof *workload);
}

/* ---- defining and applying knobs ----------------------------------------------------------- */

/* Records the first failure of a define in the config as well as the context, so that a
 * template that drops a define's status still fails the space or the build. */
static tcc_status config_fail(tcc_config *cfg, tcc_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static tcc_status config_fail(tcc_config *cfg, tcc_status status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    tci_vfail(cfg->ctx, status, format, args);
    va_end(args);
    if (cfg->failed == TCC_OK)
        cfg->failed = status;
    return status;
}

/* Names are printed into JSON and AutoTVM's text unescaped, so they are kept to what needs no
 * escaping in either. */
static tcc_status check_name(tcc_config *cfg, const char *what, const char *name)
{
    if (!name || !*name)
        return config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT, "%s: a knob needs a name", what);
    size_t n = strlen(name);
    if (n > TCI_MAX_KNOB_NAME)
        return config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT,
                           "%s: a knob's name has at most %d characters (got %zu)", what,
                           TCI_MAX_KNOB_NAME, n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\'' || c == '\\')
            return config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT,
                               "%s: knob names are printable ASCII without quotes or "
                               "backslashes (byte 0x%02x at %zu)",
                               what, c, i);
    }
    return TCC_OK;
}

static int find_knob(const tcc_config_space *space, const char *name)
{
    for (int i = 0; i < space->nknob; i++)
        if (strcmp(space->knobs[i].name, name) == 0)
            return i;
    return -1;
}

/* A new knob `name` at the end of the space being defined, or NULL (the failure recorded). */
static TciKnob *add_knob(tcc_config *cfg, const char *what, const char *name)
{
    tcc_config_space *space = cfg->building;
    if (find_knob(space, name) >= 0) {
        config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT, "%s: knob %s is defined twice", what, name);
        return NULL;
    }
    if (space->nknob == space->knob_cap) {
        int cap = space->knob_cap ? space->knob_cap * 2 : 8;
        TciKnob *knobs = realloc(space->knobs, sizeof *knobs * (size_t)cap);
        if (!knobs) {
            config_fail(cfg, TCC_ERROR_OUT_OF_MEMORY, "%s %s: out of memory", what, name);
            return NULL;
        }
        space->knobs = knobs;
        space->knob_cap = cap;
    }
    TciKnob *knob = &space->knobs[space->nknob];
    memset(knob, 0, sizeof *knob);
    knob->name = strdup(name);
    if (!knob->name) {
        config_fail(cfg, TCC_ERROR_OUT_OF_MEMORY, "%s %s: out of memory", what, name);
        return NULL;
    }
    space->nknob++;
    return knob;
}

/* The space's size times the new knob's length, refused past INT64_MAX. */
static tcc_status grow_size(tcc_config *cfg, const char *what, const TciKnob *knob)
{
    int64_t size;
    if (__builtin_mul_overflow(cfg->building->size, knob->length, &size))
        return config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT,
                           "%s %s: the space would have more than 2^63 points", what, knob->name);
    cfg->building->size = size;
    return TCC_OK;
}

/* The applying config's knob `name`, which must have `kind`; -1 when refused. */
static int applied_knob(tcc_config *cfg, const char *what, const char *name, tcc_knob_kind kind)
{
    int k = find_knob(cfg->space, name);
    if (k < 0) {
        config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT, "%s: the space has no knob %s", what, name);
        return -1;
    }
    if (cfg->space->knobs[k].kind != kind) {
        config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT, "%s: knob %s is not a %s in the space", what,
                    name, kind == TCC_KNOB_SPLIT ? "split" : "knob");
        return -1;
    }
    return k;
}

tcc_status tcc_define_split(tcc_config *cfg, const char *name, int64_t extent, int num_outputs,
                            int64_t *factors)
{
    if (!cfg)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (cfg->failed != TCC_OK)
        return cfg->failed;
    tcc_status status = check_name(cfg, "define_split", name);
    if (status != TCC_OK)
        return status;
    if (!factors)
        return config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT, "define_split %s: NULL factors", name);
    if (cfg->defining) {
        TciKnob *knob = add_knob(cfg, "define_split", name);
        if (!knob)
            return cfg->failed;
        status = tci_split_knob_init(cfg->ctx, knob, extent, num_outputs);
        if (status == TCC_OK)
            status = grow_size(cfg, "define_split", knob);
        if (status != TCC_OK)
            return cfg->failed = status;
        tci_split_unrank(knob, 0, factors);
        return TCC_OK;
    }
    int k = applied_knob(cfg, "define_split", name, TCC_KNOB_SPLIT);
    if (k < 0)
        return cfg->failed;
    const TciKnob *knob = &cfg->space->knobs[k];
    if (knob->extent != extent || knob->num_outputs != num_outputs)
        return config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT,
                           "define_split %s: %lld into %d outputs, but the space splits %lld "
                           "into %d",
                           name, (long long)extent, num_outputs, (long long)knob->extent,
                           knob->num_outputs);
    tci_split_unrank(knob, cfg->choices[k], factors);
    return TCC_OK;
}

static tcc_status check_values(tcc_config *cfg, const char *name, int count, const int64_t *values)
{
    if (count < 1 || count > TCI_MAX_KNOB_VALUES)
        return config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT,
                           "define_knob %s: it takes 1 to %d values (got %d)", name,
                           TCI_MAX_KNOB_VALUES, count);
    if (!values)
        return config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT, "define_knob %s: NULL values", name);
    /* A logged config names a value, not its position: two equal values could not be told
     * apart when it is read back. */
    for (int i = 0; i < count; i++)
        for (int j = 0; j < i; j++)
            if (values[i] == values[j])
                return config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT,
                                   "define_knob %s: value %lld is listed twice", name,
                                   (long long)values[i]);
    return TCC_OK;
}

tcc_status tcc_define_knob(tcc_config *cfg, const char *name, int count, const int64_t *values,
                           int64_t *value)
{
    if (!cfg)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (cfg->failed != TCC_OK)
        return cfg->failed;
    tcc_status status = check_name(cfg, "define_knob", name);
    if (status == TCC_OK)
        status = check_values(cfg, name, count, values);
    if (status != TCC_OK)
        return status;
    if (!value)
        return config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT, "define_knob %s: NULL value", name);
    if (cfg->defining) {
        TciKnob *knob = add_knob(cfg, "define_knob", name);
        if (!knob)
            return cfg->failed;
        knob->kind = TCC_KNOB_OTHER;
        knob->values = malloc(sizeof(int64_t) * (size_t)count);
        if (!knob->values)
            return config_fail(cfg, TCC_ERROR_OUT_OF_MEMORY, "define_knob %s: out of memory", name);
        memcpy(knob->values, values, sizeof(int64_t) * (size_t)count);
        knob->count = count;
        knob->length = count;
        status = grow_size(cfg, "define_knob", knob);
        if (status != TCC_OK)
            return status;
        *value = values[0];
        return TCC_OK;
    }
    int k = applied_knob(cfg, "define_knob", name, TCC_KNOB_OTHER);
    if (k < 0)
        return cfg->failed;
    const TciKnob *knob = &cfg->space->knobs[k];
    if (knob->count != count || memcmp(knob->values, values, sizeof(int64_t) * (size_t)count))
        return config_fail(cfg, TCC_ERROR_INVALID_ARGUMENT,
                           "define_knob %s: the values differ from the space's", name);
    *value = knob->values[cfg->choices[k]];
    return TCC_OK;
}

tcc_status tcc_config_reject(tcc_context *ctx, tcc_config *cfg, const char *why)
{
    if (cfg) /* as AutoTVM's InstantiationError: the measurer tells it from tcc's refusals */
        cfg->rejected = true;
    if (!why || !*why)
        why = "the template rejected the config";
    return tci_fail(ctx, TCC_ERROR_SCHEDULE, "%.*s", (int)strcspn(why, "\r\n"), why);
}

bool tcc_config_rejected(const tcc_config *cfg)
{
    return cfg && cfg->rejected;
}

bool tcc_config_is_defining(const tcc_config *cfg)
{
    return cfg && cfg->defining;
}

/* ---- spaces --------------------------------------------------------------------------------- */

/* The workload's size and kind, checked before a template reads it. */
static tcc_status check_workload(tcc_context *ctx, const tcc_template *tmpl,
                                 const tcc_workload *workload)
{
    if (!workload)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "template %s: NULL workload",
                        tmpl->name ? tmpl->name : "(unnamed)");
    tcc_status status = TCI_CHECK_SIZE(ctx, "workload", tcc_workload, workload);
    if (status != TCC_OK)
        return status;
    if (workload->kind != tmpl->kind && !tmpl->any_kind)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "template %s takes a %s workload",
                        tmpl->name ? tmpl->name : "(unnamed)",
                        tmpl->kind == TCC_WORKLOAD_CONV2D ? "conv2d" : "matmul");
    return TCC_OK;
}

tcc_status tci_check_template_size(tcc_context *ctx, const tcc_template *tmpl)
{
    return tci_check_struct_size(ctx, "template", "tcc_template", tmpl->size,
                                 TCI_TEMPLATE_FIRST_SIZE, sizeof *tmpl);
}

bool tci_template_size_known(const tcc_template *tmpl)
{
    return tmpl && tmpl->size >= TCI_TEMPLATE_FIRST_SIZE && tmpl->size <= sizeof *tmpl;
}

static tcc_status check_template(tcc_context *ctx, const tcc_template *tmpl)
{
    if (!tmpl)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "NULL template");
    /* Before any field is read: a template a program defined may be of other headers. */
    tcc_status status = tci_check_template_size(ctx, tmpl);
    if (status == TCC_OK && !tmpl->instantiate)
        status = tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "template %s: NULL instantiate",
                          tmpl->name ? tmpl->name : "(unnamed)");
    return status;
}

tcc_status tcc_config_space_create(tcc_context *ctx, const tcc_template *tmpl,
                                   const tcc_workload *workload, tcc_arch arch,
                                   tcc_config_space **out)
{
    if (!ctx)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "config_space_create: NULL out");
    *out = NULL;
    tcc_status status = check_template(ctx, tmpl);
    if (status == TCC_OK)
        status = check_workload(ctx, tmpl, workload);
    if (status != TCC_OK)
        return status;
    tcc_config_space *space = calloc(1, sizeof *space);
    if (!space)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory creating a config space");
    space->size = 1; /* no knob: one point, as AutoTVM's empty product */
    tcc_config cfg = {.ctx = ctx, .defining = true, .building = space};
    tcc_build_options options;
    tcc_build_options_init(&options);
    options.arch = arch;
    status = tmpl->instantiate(ctx, &cfg, workload, arch, &options, NULL);
    if (status == TCC_OK)
        status = cfg.failed;
    if (status != TCC_OK) {
        tcc_config_space_destroy(space);
        return status;
    }
    if (TCI_TEMPLATE_REDUNDANT_KNOBS(tmpl) && space->nknob <= 64) {
        space->tmpl = tmpl;
        space->workload = *workload;
        space->arch = arch;
        status = tcc_context_create(&space->redundancy_ctx);
        if (status != TCC_OK) {
            tcc_config_space_destroy(space);
            return tci_fail(ctx, status, "out of memory creating a config space");
        }
    }
    *out = space;
    return TCC_OK;
}

void tcc_config_space_destroy(tcc_config_space *space)
{
    if (!space)
        return;
    tcc_context_destroy(space->redundancy_ctx);
    for (int i = 0; i < space->nknob; i++)
        tci_knob_free(&space->knobs[i]);
    free(space->knobs);
    free(space);
}

int64_t tcc_config_space_size(const tcc_config_space *space)
{
    return space ? space->size : 0;
}

int tcc_config_space_knob_count(const tcc_config_space *space)
{
    return space ? space->nknob : 0;
}

static const TciKnob *knob_at(const tcc_config_space *space, int knob)
{
    return space && knob >= 0 && knob < space->nknob ? &space->knobs[knob] : NULL;
}

const char *tcc_config_space_knob_name(const tcc_config_space *space, int knob)
{
    const TciKnob *k = knob_at(space, knob);
    return k ? k->name : NULL;
}

tcc_knob_kind tcc_config_space_knob_kind(const tcc_config_space *space, int knob)
{
    const TciKnob *k = knob_at(space, knob);
    return k ? k->kind : (tcc_knob_kind)-1;
}

int64_t tcc_config_space_knob_length(const tcc_config_space *space, int knob)
{
    const TciKnob *k = knob_at(space, knob);
    return k ? k->length : 0;
}

/* "[0, 512, 1500]", as Python prints a list. */
static void print_values(StrBuf *sb, const TciKnob *knob)
{
    tci_strbuf_printf(sb, "[");
    for (int i = 0; i < knob->count; i++)
        tci_strbuf_printf(sb, "%s%lld", i ? ", " : "", (long long)knob->values[i]);
    tci_strbuf_printf(sb, "]");
}

/* ConfigSpace.__repr__: "  %2d %s: %s\n" a knob, each knob as its space's __repr__. */
char *tcc_config_space_format(const tcc_config_space *space)
{
    if (!space)
        return NULL;
    StrBuf sb;
    tci_strbuf_init(&sb);
    tci_strbuf_printf(&sb, "ConfigSpace (len=%lld, space_map=\n", (long long)space->size);
    for (int i = 0; i < space->nknob; i++) {
        const TciKnob *k = &space->knobs[i];
        tci_strbuf_printf(&sb, "  %2d %s: ", i, k->name);
        if (k->kind == TCC_KNOB_SPLIT) {
            tci_strbuf_printf(&sb, "Split(policy=factors, product=%lld, num_outputs=%d)",
                              (long long)k->extent, k->num_outputs);
        } else {
            tci_strbuf_printf(&sb, "OtherOption(");
            print_values(&sb, k);
            tci_strbuf_printf(&sb, ")");
        }
        tci_strbuf_printf(&sb, " len=%lld\n", (long long)k->length);
    }
    tci_strbuf_printf(&sb, ")");
    if (sb.failed) {
        tci_strbuf_free(&sb);
        return NULL;
    }
    return sb.data;
}

/* ---- configs -------------------------------------------------------------------------------- */

static tcc_status new_config(tcc_context *ctx, const tcc_config_space *space, tcc_config **out)
{
    tcc_config *cfg = calloc(1, sizeof *cfg);
    if (cfg)
        cfg->choices = calloc((size_t)(space->nknob ? space->nknob : 1), sizeof(int64_t));
    if (!cfg || !cfg->choices) {
        tcc_config_destroy(cfg);
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory creating a config");
    }
    cfg->ctx = ctx;
    cfg->space = space;
    *out = cfg;
    return TCC_OK;
}

/* A point's knob choices, and back: ConfigSpace.get's order, the first knob fastest. The
 * product of the lengths fits (the space's size), so no step of the index overflows. */
static void index_to_choices(const tcc_config_space *space, int64_t index, int64_t *choices)
{
    for (int i = 0; i < space->nknob; i++) {
        choices[i] = index % space->knobs[i].length;
        index /= space->knobs[i].length;
    }
}

static int64_t choices_to_index(const tcc_config_space *space, const int64_t *choices)
{
    int64_t index = 0;
    for (int i = space->nknob - 1; i >= 0; i--)
        index = index * space->knobs[i].length + choices[i];
    return index;
}

tcc_status tcc_config_create(tcc_context *ctx, const tcc_config_space *space, int64_t index,
                             tcc_config **out)
{
    if (!ctx)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!space || !out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "config_create: NULL space or out");
    *out = NULL;
    if (index < 0 || index >= space->size)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "config index %lld is outside the space (0 to %lld)", (long long)index,
                        (long long)space->size - 1);
    tcc_config *cfg = NULL;
    tcc_status status = new_config(ctx, space, &cfg);
    if (status != TCC_OK)
        return status;
    cfg->index = index;
    index_to_choices(space, index, cfg->choices);
    *out = cfg;
    return TCC_OK;
}

tcc_status tci_config_from_choices(tcc_context *ctx, const tcc_config_space *space,
                                   const int64_t *choices, tcc_config **out)
{
    tcc_config *cfg = NULL;
    tcc_status status = new_config(ctx, space, &cfg);
    if (status != TCC_OK)
        return status;
    memcpy(cfg->choices, choices, sizeof(int64_t) * (size_t)space->nknob);
    cfg->index = choices_to_index(space, choices);
    *out = cfg;
    return TCC_OK;
}

void tcc_config_destroy(tcc_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->choices);
    free(cfg);
}

int64_t tcc_config_index(const tcc_config *cfg)
{
    return cfg && !cfg->defining ? cfg->index : -1;
}

int64_t tcc_config_knob_choice(const tcc_config *cfg, int knob)
{
    if (!cfg || cfg->defining || knob < 0 || knob >= cfg->space->nknob)
        return -1;
    return cfg->choices[knob];
}

/* The entity list of a log (AutoTVM's, without ConfigEntity.to_json_dict's "sp"/"ot" tags,
 * which the records' export adds on the text: records_autotvm.c). */
char *tcc_config_format(const tcc_config *cfg)
{
    if (!cfg || cfg->defining)
        return NULL;
    StrBuf sb;
    tci_strbuf_init(&sb);
    tci_strbuf_printf(&sb, "[");
    for (int i = 0; i < cfg->space->nknob; i++) {
        const TciKnob *k = &cfg->space->knobs[i];
        tci_strbuf_printf(&sb, "%s[\"%s\", ", i ? ", " : "", k->name);
        if (k->kind == TCC_KNOB_SPLIT) {
            int64_t factors[TCI_MAX_SPLIT_OUTPUTS];
            tci_split_unrank(k, cfg->choices[i], factors);
            tci_strbuf_printf(&sb, "[-1"); /* AutoTVM logs the outermost factor as -1 */
            for (int j = 1; j < k->num_outputs; j++)
                tci_strbuf_printf(&sb, ", %lld", (long long)factors[j]);
            tci_strbuf_printf(&sb, "]]");
        } else {
            tci_strbuf_printf(&sb, "%lld]", (long long)k->values[cfg->choices[i]]);
        }
    }
    tci_strbuf_printf(&sb, "]");
    if (sb.failed) {
        tci_strbuf_free(&sb);
        return NULL;
    }
    return sb.data;
}

/* ---- features ------------------------------------------------------------------------------- */

/* AutoTVM's knob features (ConfigEntity.get_flatten_feature, XGBTuner's feature_type "knob")
 * list each split's sizes and each option's value as they are. Here a split gives the log2
 * of each factor, the outermost's real value instead of -1, and an option its position, so
 * that every feature grows with what it measures on a scale the trees split evenly. */
static int choice_features(const tcc_config_space *space, const int64_t *choices, double *features,
                           int count)
{
    int n = 0;
    for (int i = 0; i < space->nknob; i++) {
        const TciKnob *k = &space->knobs[i];
        if (k->kind == TCC_KNOB_SPLIT) {
            int64_t factors[TCI_MAX_SPLIT_OUTPUTS];
            tci_split_unrank(k, choices[i], factors);
            for (int j = 0; j < k->num_outputs; j++, n++)
                if (n < count)
                    features[n] = log2((double)factors[j]);
        } else {
            if (n < count)
                features[n] = (double)choices[i];
            n++;
        }
    }
    return n;
}

int64_t tcc_config_space_canonical(const tcc_config_space *space, int64_t index)
{
    if (!space || index < 0 || index >= space->size)
        return -1;
    if (!space->redundancy_ctx)
        return index;
    int64_t choices[64];
    index_to_choices(space, index, choices);
    tcc_config cfg = {
        .ctx = space->redundancy_ctx, .space = space, .index = index, .choices = choices};
    uint64_t redundant =
        space->tmpl->redundant_knobs(space->redundancy_ctx, &cfg, &space->workload, space->arch);
    if (!redundant || cfg.failed != TCC_OK)
        return index;
    for (int i = 0; i < space->nknob; i++)
        if ((redundant >> i) & 1)
            choices[i] = 0;
    return choices_to_index(space, choices);
}

int tcc_config_features(const tcc_config *cfg, double *features, int count)
{
    if (!cfg || cfg->defining)
        return -1;
    return choice_features(cfg->space, cfg->choices, features, features ? count : 0);
}

int tcc_config_space_features(const tcc_config_space *space, int64_t index, double *features,
                              int count)
{
    if (!space || index < 0 || index >= space->size)
        return -1;
    int64_t stack_choices[64] = {0}, *choices = stack_choices;
    if (space->nknob > 64 && !(choices = malloc(sizeof(int64_t) * (size_t)space->nknob)))
        return -1;
    index_to_choices(space, index, choices);
    int n = choice_features(space, choices, features, features ? count : 0);
    if (choices != stack_choices)
        free(choices);
    return n;
}

/* ---- applying ------------------------------------------------------------------------------- */

tcc_status tcc_config_instantiate(tcc_context *ctx, const tcc_template *tmpl, tcc_config *cfg,
                                  const tcc_workload *workload, tcc_arch arch,
                                  const tcc_build_options *options, tcc_kernel **kernel)
{
    if (!ctx)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!cfg || cfg->defining || !kernel)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "config_instantiate: NULL or defining config, or NULL kernel");
    *kernel = NULL;
    tcc_status status = check_template(ctx, tmpl);
    if (status == TCC_OK)
        status = check_workload(ctx, tmpl, workload);
    if (status != TCC_OK)
        return status;
    tcc_build_options defaults;
    if (!options) {
        tcc_build_options_init(&defaults);
        defaults.arch = arch;
        options = &defaults;
    }
    cfg->ctx = ctx; /* the defines report to the caller's context */
    cfg->failed = TCC_OK;
    cfg->rejected = false;
    status = tmpl->instantiate(ctx, cfg, workload, arch, options, kernel);
    if (status == TCC_OK && cfg->failed != TCC_OK)
        status = cfg->failed;
    if (status == TCC_OK && !*kernel)
        status = tci_fail(ctx, TCC_ERROR_SCHEDULE, "template %s built no kernel",
                          tmpl->name ? tmpl->name : "(unnamed)");
    if (status != TCC_OK && *kernel) {
        tcc_kernel_destroy(*kernel);
        *kernel = NULL;
    }
    return status;
}
