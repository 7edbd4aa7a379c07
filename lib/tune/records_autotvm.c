/*
 * A trial as one line of AutoTVM's log (python/tvm/autotvm/record.py's encode, version 0.2):
 *
 *   {"input": [target, task name, [args...], {kwargs}],
 *    "config": {"index": N, "code_hash": null, "entity": [[knob, "sp"|"ot", value], ...]},
 *    "result": [[seconds...] (or [1e9] for a failed trial), error_no, all_cost, timestamp],
 *    "version": 0.2, "tvm_version": "...", "tcc": {template, device_name, tcc_version, message}}
 *
 * tcc keeps the workload key as one array (the task's name, then its arguments) and the
 * config as [[knob, value], ...] without AutoTVM's tags: both are converted here, on the JSON
 * text, so that export and import need no config space. A split's value is an array ("sp"),
 * any other knob's a scalar ("ot"). The "tcc" member, which AutoTVM ignores, carries what its
 * line has no place for, so that tcc's exports read back exactly; an AutoTVM log has none.
 */
#include "tcc/tune.h"
#include "tune/records.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What this writer puts in "tvm_version": the line was written by tcc, not by a TVM. */
#define EXPORT_TVM_VERSION "tcc-" TCC_VERSION_STRING

static bool line_fail(char *error, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static bool line_fail(char *error, size_t size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error, size, format, args);
    va_end(args);
    return false;
}

void tci_record_costs_text(StrBuf *sb, const double *costs, int count)
{
    tci_strbuf_printf(sb, "[");
    for (int i = 0; i < count; i++) {
        tci_strbuf_printf(sb, i ? ", " : "");
        tci_json_write_double(sb, costs[i]);
    }
    tci_strbuf_printf(sb, "]");
}

double tci_costs_mean(const double *costs, int count)
{
    double sum = 0;
    for (int i = 0; i < count; i++)
        sum += costs[i];
    return count > 0 ? sum / count : 0;
}

double tcc_measure_result_mean_cost(const tcc_measure_result *r)
{
    int most = (int)(sizeof r->costs / sizeof *r->costs);
    if (!r || r->error != TCC_MEASURE_OK || r->ncost < 1 || r->ncost > most)
        return 0;
    return tci_costs_mean(r->costs, r->ncost);
}

/* ---- writing a line ------------------------------------------------------------------- */

static bool is_pair(const Json *item)
{
    return item->kind == JSON_ARRAY && item->count == 2 && item->first->kind == JSON_STRING;
}

static bool all_numbers(const Json *array)
{
    for (const Json *m = array->first; m; m = m->next)
        if (m->kind != JSON_NUMBER)
            return false;
    return true;
}

/* tcc's config text as AutoTVM's entity list: [["tile_f", "sp", [-1, 2, 64, 1]], ...]. */
static bool write_entity(StrBuf *sb, const Json *config, char *error, size_t size)
{
    if (config->kind != JSON_ARRAY)
        return line_fail(error, size, "its config is not a JSON array of [knob, value] pairs");
    tci_strbuf_printf(sb, "[");
    for (const Json *knob = config->first; knob; knob = knob->next) {
        if (!is_pair(knob))
            return line_fail(error, size, "its config is not a JSON array of [knob, value] pairs");
        const Json *value = knob->first->next;
        bool split = value->kind == JSON_ARRAY;
        if ((split && !all_numbers(value)) || value->kind == JSON_OBJECT)
            return line_fail(error, size, "its config's knob \"%s\" is neither a split nor a value",
                             knob->first->text);
        tci_strbuf_printf(sb, "%s[", knob == config->first ? "" : ", ");
        tci_json_write_string(sb, knob->first->text);
        tci_strbuf_printf(sb, ", \"%s\", ", split ? "sp" : "ot");
        tci_json_write(sb, value);
        tci_strbuf_printf(sb, "]");
    }
    tci_strbuf_printf(sb, "]");
    return true;
}

/* "input": the target, then the workload key split into the task's name and its args. */
static bool write_input(StrBuf *sb, const RecordRow *row, const Json *key, char *error, size_t size)
{
    if (key->kind != JSON_ARRAY || !key->first || key->first->kind != JSON_STRING)
        return line_fail(error, size,
                         "its workload key is not a JSON array starting with the task's name");
    tci_strbuf_printf(sb, "\"input\": [");
    tci_json_write_string(sb, row->target);
    tci_strbuf_printf(sb, ", ");
    tci_json_write_string(sb, key->first->text);
    tci_strbuf_printf(sb, ", [");
    for (const Json *arg = key->first->next; arg; arg = arg->next) {
        tci_strbuf_printf(sb, arg == key->first->next ? "" : ", ");
        tci_json_write(sb, arg);
    }
    tci_strbuf_printf(sb, "], {}]");
    return true;
}

/* "result": a failed trial's costs are AutoTVM's placeholder, as its encode writes them. */
static bool write_result(StrBuf *sb, const RecordRow *row, const Json *costs, char *error,
                         size_t size)
{
    if (costs->kind != JSON_ARRAY || !all_numbers(costs))
        return line_fail(error, size, "its costs are not a JSON array of numbers");
    tci_strbuf_printf(sb, "\"result\": [[");
    if (row->error_no != TCC_MEASURE_OK) {
        tci_json_write_double(sb, TCI_FAILED_COST);
    } else {
        for (const Json *cost = costs->first; cost; cost = cost->next) {
            tci_strbuf_printf(sb, cost == costs->first ? "" : ", ");
            tci_json_write_double(sb, cost->number);
        }
    }
    tci_strbuf_printf(sb, "], %d, ", row->error_no);
    tci_json_write_double(sb, row->all_cost);
    tci_strbuf_printf(sb, ", ");
    tci_json_write_double(sb, row->timestamp);
    tci_strbuf_printf(sb, "]");
    return true;
}

static void write_extra(StrBuf *sb, const RecordRow *row)
{
    const char *names[] = {"template", "device_name", "tcc_version", "message"};
    const char *values[] = {row->template_name, row->device_name, row->tcc_version, row->message};
    tci_strbuf_printf(sb, "\"tcc\": {");
    for (int i = 0; i < 4; i++) {
        tci_strbuf_printf(sb, "%s\"%s\": ", i ? ", " : "", names[i]);
        tci_json_write_string(sb, values[i]);
    }
    tci_strbuf_printf(sb, "}");
}

/* Parses one of the row's JSON texts; `what` names it in the error. */
static const Json *parse_text(Arena *arena, const char *text, const char *what, char *error,
                              size_t size)
{
    char why[200];
    const Json *value = tci_json_parse(arena, text, why, sizeof why);
    if (!value)
        line_fail(error, size, "its %s is not JSON (%s)", what, why);
    return value;
}

static bool write_line(StrBuf *sb, Arena *arena, const RecordRow *row, char *error, size_t size)
{
    const Json *key = parse_text(arena, row->workload_key, "workload key", error, size);
    const Json *config = key ? parse_text(arena, row->config, "config", error, size) : NULL;
    const Json *costs = config ? parse_text(arena, row->costs, "costs", error, size) : NULL;
    if (!costs)
        return false;
    tci_strbuf_printf(sb, "{");
    if (!write_input(sb, row, key, error, size))
        return false;
    tci_strbuf_printf(sb, ", \"config\": {\"index\": %lld, \"code_hash\": null, \"entity\": ",
                      (long long)row->config_index);
    if (!write_entity(sb, config, error, size))
        return false;
    tci_strbuf_printf(sb, "}, ");
    if (!write_result(sb, row, costs, error, size))
        return false;
    tci_strbuf_printf(sb, ", \"version\": 0.2, \"tvm_version\": \"%s\", ", EXPORT_TVM_VERSION);
    write_extra(sb, row);
    tci_strbuf_printf(sb, "}");
    return true;
}

bool tci_record_line_write(StrBuf *sb, const RecordRow *row, char *error, size_t error_size)
{
    Arena *arena = tci_arena_create();
    if (!arena)
        return line_fail(error, error_size, "out of memory");
    bool ok = write_line(sb, arena, row, error, error_size);
    tci_arena_destroy(arena);
    if (ok && sb->failed)
        return line_fail(error, error_size, "out of memory");
    return ok;
}

/* ---- reading a line ------------------------------------------------------------------- */

typedef struct LineReader {
    Arena *arena;
    char *error;
    size_t size;
} LineReader;

/* The text of sb in the arena (NULL, reported, when memory ran out). */
static const char *keep(LineReader *r, StrBuf *sb)
{
    const char *text = sb->failed ? NULL : tci_arena_strdup(r->arena, sb->data);
    tci_strbuf_free(sb);
    if (!text)
        line_fail(r->error, r->size, "out of memory");
    return text;
}

static const Json *member_of(LineReader *r, const Json *object, const char *key, JsonKind kind,
                             const char *what)
{
    const Json *value = tci_json_member(object, key);
    if (!value || value->kind != kind) {
        line_fail(r->error, r->size, "\"%s\" is %s, not %s", key,
                  value ? "of another kind" : "missing", what);
        return NULL;
    }
    return value;
}

/* "input": [target, task name, args, kwargs] into the target, template and workload key. */
static bool read_input(LineReader *r, const Json *root, const char *template_name, RecordRow *row)
{
    const Json *input = member_of(r, root, "input", JSON_ARRAY, "an array");
    if (!input)
        return false;
    const Json *target = input->first, *name = target ? target->next : NULL;
    const Json *args = name ? name->next : NULL, *kwargs = args ? args->next : NULL;
    if (input->count != 4 || target->kind != JSON_STRING || name->kind != JSON_STRING ||
        args->kind != JSON_ARRAY || kwargs->kind != JSON_OBJECT)
        return line_fail(r->error, r->size,
                         "\"input\" is not [target, task name, [args], {kwargs}]");
    StrBuf key;
    tci_strbuf_init(&key);
    tci_strbuf_printf(&key, "[");
    tci_json_write_string(&key, name->text);
    for (const Json *arg = args->first; arg; arg = arg->next) {
        tci_strbuf_printf(&key, ", ");
        tci_json_write(&key, arg);
    }
    tci_strbuf_printf(&key, "]");
    row->target = target->text;
    /* AutoTVM's task names carry a prefix ("tutorial/conv2d_no_batching"); tcc's
     * templates are named without it. */
    const char *slash = strrchr(name->text, '/');
    row->template_name = template_name ? template_name : slash ? slash + 1 : name->text;
    return (row->workload_key = keep(r, &key)) != NULL;
}

/* One [knob, tag, value] of "entity", appended to tcc's config text. */
static bool read_knob(LineReader *r, const Json *item, StrBuf *config)
{
    const Json *name = item->kind == JSON_ARRAY && item->count == 3 ? item->first : NULL;
    if (!name || name->kind != JSON_STRING || name->next->kind != JSON_STRING)
        return line_fail(r->error, r->size, "an \"entity\" item is not [knob, tag, value]");
    const char *tag = name->next->text;
    const Json *value = name->next->next;
    bool split = strcmp(tag, "sp") == 0, other = strcmp(tag, "ot") == 0;
    if (!split && !other)
        return line_fail(r->error, r->size,
                         "knob \"%s\" is of kind \"%s\"; tcc's templates have splits (\"sp\") "
                         "and other options (\"ot\") only",
                         name->text, tag);
    if (split ? value->kind != JSON_ARRAY || !all_numbers(value)
              : value->kind == JSON_ARRAY || value->kind == JSON_OBJECT)
        return line_fail(r->error, r->size, "knob \"%s\" (\"%s\") has a value of another kind",
                         name->text, tag);
    tci_strbuf_printf(config, "[");
    tci_json_write_string(config, name->text);
    tci_strbuf_printf(config, ", ");
    tci_json_write(config, value);
    tci_strbuf_printf(config, "]");
    return true;
}

/* "config": {"index", "code_hash", "entity"} into the index and tcc's config text. */
static bool read_config(LineReader *r, const Json *root, RecordRow *row)
{
    const Json *config = member_of(r, root, "config", JSON_OBJECT, "an object");
    const Json *entity = config ? member_of(r, config, "entity", JSON_ARRAY, "an array") : NULL;
    if (!entity)
        return false;
    if (!tci_json_int(tci_json_member(config, "index"), &row->config_index) ||
        row->config_index < 0)
        return line_fail(r->error, r->size, "the config's \"index\" is not an integer >= 0");
    StrBuf text;
    tci_strbuf_init(&text);
    tci_strbuf_printf(&text, "[");
    for (const Json *item = entity->first; item; item = item->next) {
        tci_strbuf_printf(&text, item == entity->first ? "" : ", ");
        if (!read_knob(r, item, &text)) {
            tci_strbuf_free(&text);
            return false;
        }
    }
    tci_strbuf_printf(&text, "]");
    return (row->config = keep(r, &text)) != NULL;
}

/* A failed trial's costs are a placeholder (or, in some TVMs, its exceptions): not kept. */
static bool read_costs(LineReader *r, const Json *costs, RecordRow *row)
{
    int count = row->error_no == TCC_MEASURE_OK ? costs->count : 0;
    double *seconds = tci_arena_alloc(r->arena, sizeof(double) * (size_t)(count + 1));
    if (!seconds)
        return line_fail(r->error, r->size, "out of memory");
    int i = 0;
    for (const Json *cost = costs->first; cost && i < count; cost = cost->next, i++) {
        if (cost->kind != JSON_NUMBER || cost->number < 0)
            return line_fail(r->error, r->size, "a cost is not a number of seconds");
        seconds[i] = cost->number;
    }
    StrBuf text;
    tci_strbuf_init(&text);
    tci_record_costs_text(&text, seconds, count);
    /* As tcc_record_add stores it: none timed sorts after every timed trial. */
    row->mean_cost = count > 0 ? tci_costs_mean(seconds, count) : TCI_FAILED_COST;
    return (row->costs = keep(r, &text)) != NULL;
}

/* "result": [costs, error_no, all_cost, timestamp]. */
static bool read_result(LineReader *r, const Json *root, RecordRow *row)
{
    const Json *result = member_of(r, root, "result", JSON_ARRAY, "an array");
    if (!result)
        return false;
    const Json *costs = result->first, *error_no = costs ? costs->next : NULL;
    const Json *all_cost = error_no ? error_no->next : NULL;
    const Json *timestamp = all_cost ? all_cost->next : NULL;
    int64_t error = -1;
    if (result->count != 4 || costs->kind != JSON_ARRAY || all_cost->kind != JSON_NUMBER ||
        timestamp->kind != JSON_NUMBER)
        return line_fail(r->error, r->size,
                         "\"result\" is not [[costs], error_no, all_cost, timestamp]");
    if (!tci_json_int(error_no, &error) || error < TCC_MEASURE_OK ||
        error > TCC_MEASURE_UNKNOWN_ERROR)
        return line_fail(r->error, r->size, "the error_no %s is not one of AutoTVM's (0 to 8)",
                         error_no->kind == JSON_NUMBER ? error_no->text : "given");
    if (!isfinite(all_cost->number) || !isfinite(timestamp->number))
        return line_fail(r->error, r->size, "all_cost and timestamp must be finite numbers");
    row->error_no = (int)error;
    row->all_cost = all_cost->number;
    row->timestamp = timestamp->number;
    return read_costs(r, costs, row);
}

/* The "tcc" member of tcc's own exports; "" for what an AutoTVM log does not say. */
static bool read_extra(LineReader *r, const Json *root, RecordRow *row, const char **template_name)
{
    const char *names[] = {"template", "device_name", "tcc_version", "message"};
    const char **fields[] = {template_name, &row->device_name, &row->tcc_version, &row->message};
    const Json *extra = tci_json_member(root, "tcc");
    if (extra && extra->kind != JSON_OBJECT)
        return line_fail(r->error, r->size, "\"tcc\" is not an object");
    for (int i = 0; i < 4; i++) {
        const Json *value = tci_json_member(extra, names[i]);
        if (value && value->kind != JSON_STRING)
            return line_fail(r->error, r->size, "\"tcc\"'s \"%s\" is not a string", names[i]);
        *fields[i] = value ? value->text : i == 0 ? NULL : "";
    }
    return true;
}

bool tci_record_line_read(Arena *arena, const char *line, RecordRow *row, char *error,
                          size_t error_size)
{
    LineReader r = {arena, error, error_size};
    memset(row, 0, sizeof *row);
    char why[200];
    const Json *root = tci_json_parse(arena, line, why, sizeof why);
    if (!root)
        return line_fail(error, error_size, "not JSON: %s", why);
    if (root->kind != JSON_OBJECT)
        return line_fail(error, error_size, "not a JSON object");
    if (!tci_json_member(root, "input") && tci_json_member(root, "v"))
        return line_fail(error, error_size,
                         "a line of AutoTVM's log version 0.1, which tcc does not read (0.2 only)");
    const char *template_name = NULL;
    return read_extra(&r, root, row, &template_name) && read_input(&r, root, template_name, row) &&
           read_config(&r, root, row) && read_result(&r, root, row);
}
