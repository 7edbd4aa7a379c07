/*
 * The records store (tcc/tune.h, "records"): one row per trial, in SQLite (a file: the
 * default) or PostgreSQL (a server, for a URL postgresql://...), each an engine of records.h.
 * Each record is its own transaction, so a tuner killed mid-trial loses none it added before.
 * This file checks what callers hand the store and converts rows to records; export and
 * import as AutoTVM's log lines go through records_autotvm.c.
 */
#include "tune/records.h"
#include "support/context.h"
#include "tcc/tune.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *tcc_measure_error_name(tcc_measure_error error)
{
    static const char *const names[] = {
        "NO_ERROR",     "INSTANTIATION_ERROR", "COMPILE_HOST", "COMPILE_DEVICE", "RUNTIME_DEVICE",
        "WRONG_ANSWER", "BUILD_TIMEOUT",       "RUN_TIMEOUT",  "UNKNOWN_ERROR",
    };
    if ((int)error < 0 || (int)error >= (int)(sizeof names / sizeof *names))
        return "UNKNOWN_ERROR";
    return names[error];
}

/* ---- opening -------------------------------------------------------------------------- */

/* A PostgreSQL connection URI (libpq's two schemes); anything else is an SQLite file's path. */
static bool is_postgres_url(const char *location)
{
    return location && (strncmp(location, "postgresql://", 13) == 0 ||
                        strncmp(location, "postgres://", 11) == 0);
}

static tcc_status open_store(tcc_context *ctx, const char *path, bool read_only,
                             tcc_record_store **out)
{
    if (!out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_record_store_open: out is NULL");
    *out = NULL;
    if (path && !path[0])
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "records: the database's path is empty");
    tcc_record_store *store = calloc(1, sizeof *store);
    if (!store)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    store->ctx = ctx;
    store->read_only = read_only;
    store->engine = is_postgres_url(path) ? &tci_records_postgres : &tci_records_sqlite;
    tcc_status status = store->engine->open(store, path);
    if (status != TCC_OK) {
        tcc_record_store_close(store);
        return status;
    }
    *out = store;
    return TCC_OK;
}

tcc_status tcc_record_store_open(tcc_context *ctx, const char *path, tcc_record_store **out)
{
    return open_store(ctx, path, false, out);
}

void tcc_record_store_close(tcc_record_store *store)
{
    if (!store)
        return;
    store->engine->close(store);
    free(store->name);
    free(store->strings);
    free(store->job_strings);
    free(store);
}

/* ---- adding --------------------------------------------------------------------------- */

/* What tcc_record_add refuses: a size it does not know, missing texts, errors and costs no
 * trial has. */
static tcc_status check_record(tcc_context *ctx, const char *call, const tcc_record *record)
{
    if (!record)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s: record is NULL", call);
    tcc_status status = TCI_CHECK_SIZE(ctx, call, tcc_record, record);
    if (status != TCC_OK)
        return status;
    if (!record->template_name || !record->workload_key || !record->config)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "%s: a record needs its template, workload key and config", call);
    const tcc_measure_result *result = &record->result;
    if ((int)result->error < TCC_MEASURE_OK || result->error > TCC_MEASURE_UNKNOWN_ERROR)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s: error %d is no tcc_measure_error",
                        call, (int)result->error);
    int most = (int)(sizeof result->costs / sizeof *result->costs);
    if (result->ncost < 0 || result->ncost > most)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s: ncost is %d (0 to %d)", call,
                        result->ncost, most);
    for (int i = 0; i < result->ncost; i++)
        if (!isfinite(result->costs[i]) || result->costs[i] < 0)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s: cost %d is %g seconds", call, i,
                            result->costs[i]);
    if (!isfinite(result->all_cost) || !isfinite(result->timestamp))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "%s: all_cost and timestamp must be finite", call);
    if (record->config_index < 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s: config_index is %lld", call,
                        (long long)record->config_index);
    return TCC_OK;
}

/* A record whose workload key or config is not the JSON tcc writes could not be exported:
 * refused when added, rather than found when exporting. */
static tcc_status check_exportable(tcc_context *ctx, const char *call, const RecordRow *row)
{
    StrBuf line;
    char why[300];
    tci_strbuf_init(&line);
    bool ok = tci_record_line_write(&line, row, why, sizeof why);
    tci_strbuf_free(&line);
    if (!ok)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "%s: %s", call, why);
    return TCC_OK;
}

/* The row, in a transaction of its own: committed, it survives the process being killed. */
static tcc_status insert(tcc_record_store *store, const RecordRow *row)
{
    tcc_status status = store->engine->begin(store);
    if (status != TCC_OK)
        return status;
    return store->engine->end(store, store->engine->insert(store, row));
}

tcc_status tci_record_row_of(tcc_record_store *store, const char *call, const tcc_record *record,
                             RecordRowText *text, RecordRow *row)
{
    tci_strbuf_init(&text->costs);
    tcc_status status = check_record(store->ctx, call, record);
    if (status != TCC_OK)
        return status;
    const tcc_measure_result *result = &record->result;
    /* The message is a fixed array the caller may have filled to its end. */
    size_t length = strnlen(result->message, sizeof result->message);
    memcpy(text->message, result->message, length);
    text->message[length] = '\0';
    *row = (RecordRow){
        .template_name = record->template_name,
        .workload_key = record->workload_key,
        .target = record->target ? record->target : "",
        .device_name = record->device_name ? record->device_name : "",
        .tcc_version = record->tcc_version ? record->tcc_version : tcc_version_string(),
        .config = record->config,
        .message = text->message,
        .config_index = record->config_index,
        .error_no = (int)result->error,
        .all_cost = result->all_cost,
        .timestamp = result->timestamp,
        /* Not the mean's 0 for a trial with no time: that would rank it the fastest. */
        .mean_cost = result->error == TCC_MEASURE_OK && result->ncost > 0
                         ? tcc_measure_result_mean_cost(result)
                         : TCI_FAILED_COST,
    };
    tci_record_costs_text(&text->costs, result->costs, result->ncost);
    row->costs = text->costs.data;
    if (text->costs.failed)
        return tci_fail(store->ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    return check_exportable(store->ctx, call, row);
}

tcc_status tcc_record_add(tcc_record_store *store, const tcc_record *record)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    RecordRowText text;
    RecordRow row;
    tcc_status status = tci_record_row_of(store, "tcc_record_add", record, &text, &row);
    if (status == TCC_OK)
        status = insert(store, &row);
    tci_strbuf_free(&text.costs);
    return status;
}

/* ---- reading -------------------------------------------------------------------------- */

/* The costs text into result's costs (the first of them, as many as it holds). */
static tcc_status read_costs(tcc_record_store *store, const RecordRow *row,
                             tcc_measure_result *result)
{
    Arena *arena = tci_arena_create();
    char why[200] = "out of memory";
    const Json *costs = arena ? tci_json_parse(arena, row->costs, why, sizeof why) : NULL;
    tcc_status status = TCC_OK;
    if (!costs || costs->kind != JSON_ARRAY)
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "records %s: record %lld: its costs are not a JSON array (%s)",
                          store->name, (long long)row->id, costs ? "another value" : why);
    int most = (int)(sizeof result->costs / sizeof *result->costs);
    for (const Json *cost = costs ? costs->first : NULL; cost && status == TCC_OK;
         cost = cost->next) {
        if (cost->kind != JSON_NUMBER)
            status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                              "records %s: record %lld: a cost is not a number", store->name,
                              (long long)row->id);
        else if (result->ncost < most)
            result->costs[result->ncost++] = cost->number;
    }
    tci_arena_destroy(arena);
    return status;
}

tcc_status tci_record_result_of(tcc_record_store *store, const RecordRow *row,
                                tcc_measure_result *result)
{
    memset(result, 0, sizeof *result);
    result->error = (tcc_measure_error)row->error_no;
    result->all_cost = row->all_cost;
    result->timestamp = row->timestamp;
    snprintf(result->message, sizeof result->message, "%s", row->message);
    return read_costs(store, row, result);
}

/* The row as a tcc_record whose strings the store keeps until its next call. */
static tcc_status to_record(tcc_record_store *store, const RecordRow *row, tcc_record *out)
{
    const char *texts[] = {row->template_name, row->workload_key, row->target,
                           row->device_name,   row->tcc_version,  row->config};
    enum { TEXTS = sizeof texts / sizeof *texts };
    size_t size = 0;
    for (int i = 0; i < TEXTS; i++)
        size += strlen(texts[i]) + 1;
    char *strings = malloc(size), *p = strings;
    if (!strings)
        return tci_fail(store->ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    const char *copies[TEXTS];
    for (int i = 0; i < TEXTS; i++) {
        size_t n = strlen(texts[i]) + 1;
        memcpy(p, texts[i], n);
        copies[i] = p;
        p += n;
    }
    free(store->strings);
    store->strings = strings;
    memset(out, 0, sizeof *out);
    out->size = sizeof *out;
    out->template_name = copies[0];
    out->workload_key = copies[1];
    out->target = copies[2];
    out->device_name = copies[3];
    out->tcc_version = copies[4];
    out->config = copies[5];
    out->config_index = row->config_index;
    return tci_record_result_of(store, row, &out->result);
}

/* A select's rows as records for a caller's visitor. */
typedef struct RecordVisit {
    tcc_record_store *store;
    bool (*visit)(const tcc_record *record, void *user);
    void *user;
    tcc_record *out; /* tcc_record_best's */
    tcc_status status;
} RecordVisit;

static bool visit_record(const RecordRow *row, void *user)
{
    RecordVisit *v = user;
    tcc_record record;
    v->status = to_record(v->store, row, v->out ? v->out : &record);
    return v->status == TCC_OK && (!v->visit || v->visit(&record, v->user));
}

tcc_status tcc_record_best(tcc_record_store *store, const char *template_name,
                           const char *workload_key, const char *device_name, tcc_record *out)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!template_name || !workload_key || !out)
        return tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_record_best: template_name, workload_key and out are required");
    /* What the caller's out holds is checked before anything is written to it. */
    tcc_status status = TCI_CHECK_SIZE(store->ctx, "tcc_record_best: out", tcc_record, out);
    if (status != TCC_OK)
        return status;
    RecordQuery query = {template_name, workload_key, device_name};
    RecordVisit v = {.store = store, .out = out, .status = TCC_OK};
    bool found = false;
    status = store->engine->select(store, &query, visit_record, &v, &found);
    if (status == TCC_OK)
        status = v.status;
    if (status == TCC_OK && !found)
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "records %s: no record of template %s for workload %s on %s", store->name,
                          template_name, workload_key, device_name ? device_name : "any device");
    return status;
}

tcc_status tcc_record_each(tcc_record_store *store, const char *template_name,
                           bool (*visit)(const tcc_record *record, void *user), void *user)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!visit)
        return tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_record_each: visit is NULL");
    RecordQuery query = {.template_name = template_name};
    RecordVisit v = {.store = store, .visit = visit, .user = user, .status = TCC_OK};
    tcc_status status = store->engine->select(store, &query, visit_record, &v, NULL);
    return status == TCC_OK ? v.status : status;
}

/* ---- export and import ---------------------------------------------------------------- */

/* Every record, oldest first, a line each, from one snapshot of the database. */
typedef struct ExportRows {
    tcc_record_store *store;
    const char *path;
    FILE *file;
    StrBuf line;
    tcc_status status;
} ExportRows;

static bool export_row(const RecordRow *row, void *user)
{
    ExportRows *e = user;
    char why[300];
    e->line.len = 0;
    if (!tci_record_line_write(&e->line, row, why, sizeof why))
        e->status =
            tci_fail(e->store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                     "records export to %s: record %lld: %s", e->path, (long long)row->id, why);
    else if (fprintf(e->file, "%s\n", e->line.data) < 0)
        e->status = tci_fail(e->store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                             "records export: cannot write %s: %s", e->path, strerror(errno));
    return e->status == TCC_OK;
}

static tcc_status export_rows(tcc_record_store *store, const char *path, FILE *file)
{
    ExportRows e = {store, path, file, .status = TCC_OK};
    tci_strbuf_init(&e.line);
    RecordQuery all = {0};
    tcc_status status = store->engine->select(store, &all, export_row, &e, NULL);
    tci_strbuf_free(&e.line);
    return status == TCC_OK ? e.status : status;
}

tcc_status tcc_record_export(tcc_record_store *store, const char *path)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!path)
        return tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_record_export: path is NULL");
    FILE *file = fopen(path, "w");
    if (!file)
        return tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "records export: cannot open %s: %s", path, strerror(errno));
    tcc_status status = export_rows(store, path, file);
    if (fclose(file) != 0 && status == TCC_OK)
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "records export: cannot write %s: %s", path, strerror(errno));
    /* A file cut short would read as a complete export. */
    if (status != TCC_OK)
        remove(path);
    return status;
}

/* Whether a log line carries no record: blank, or a comment (AutoTVM skips '#' lines). */
static bool skipped_line(const char *line)
{
    line += strspn(line, " \t\r\n");
    return *line == '\0' || *line == '#';
}

/* One line of the file into the open transaction. */
static tcc_status import_line(tcc_record_store *store, const char *path, long number,
                              const char *line, size_t length)
{
    if (strlen(line) != length)
        return tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "records import: %s:%ld: a NUL byte in the line", path, number);
    Arena *arena = tci_arena_create();
    if (!arena)
        return tci_fail(store->ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    RecordRow row;
    char why[300];
    tcc_status status = TCC_OK;
    if (!tci_record_line_read(arena, line, &row, why, sizeof why))
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT, "records import: %s:%ld: %s",
                          path, number, why);
    else
        status = store->engine->insert(store, &row);
    tci_arena_destroy(arena);
    return status;
}

/* Every line of `file`, stopping at the first that is not a record. */
static tcc_status import_lines(tcc_record_store *store, const char *path, FILE *file,
                               int64_t *count)
{
    tcc_status status = TCC_OK;
    char *line = NULL;
    size_t capacity = 0;
    long number = 0;
    ssize_t length;
    while (status == TCC_OK && (length = getline(&line, &capacity, file)) >= 0) {
        number++;
        if (length > 0 && line[length - 1] == '\n')
            line[--length] = '\0';
        if (!skipped_line(line)) {
            status = import_line(store, path, number, line, (size_t)length);
            *count += status == TCC_OK;
        }
    }
    if (status == TCC_OK && ferror(file))
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "records import: cannot read %s: %s", path, strerror(errno));
    free(line);
    return status;
}

/* Another store's rows into this one's open transaction. */
typedef struct Migration {
    tcc_record_store *into;
    int64_t count;
    tcc_status status;
} Migration;

static bool migrate_row(const RecordRow *row, void *user)
{
    Migration *m = user;
    m->status = m->into->engine->insert(m->into, row);
    m->count += m->status == TCC_OK;
    return m->status == TCC_OK;
}

/* Every record of the SQLite database at `path` (an SQLite store's file: a migration into
 * PostgreSQL, or a merge of two files). */
static tcc_status import_database(tcc_record_store *store, const char *path, int64_t *count)
{
    struct stat from, to;
    if (store->engine == &tci_records_sqlite && stat(path, &from) == 0 &&
        stat(store->name, &to) == 0 && from.st_dev == to.st_dev && from.st_ino == to.st_ino)
        return tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "records import: %s is the database importing it", path);
    /* Read only: nothing of the file changes, not even its journal mode. */
    tcc_record_store *source = NULL;
    tcc_status status = open_store(store->ctx, path, true, &source);
    if (status != TCC_OK)
        return status;
    Migration m = {store, 0, TCC_OK};
    RecordQuery all = {0};
    status = source->engine->select(source, &all, migrate_row, &m, NULL);
    tcc_record_store_close(source);
    *count = m.count;
    return status == TCC_OK ? m.status : status;
}

/* Whether the file at `path` is an SQLite database (its header's first 16 bytes). */
static bool is_sqlite_file(FILE *file)
{
    static const char header[16] = "SQLite format 3";
    char start[16];
    bool sqlite = fread(start, 1, sizeof start, file) == sizeof start &&
                  memcmp(start, header, sizeof header) == 0;
    rewind(file);
    return sqlite;
}

tcc_status tcc_record_import(tcc_record_store *store, const char *path, int64_t *imported)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (imported)
        *imported = 0;
    if (!path)
        return tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_record_import: path is NULL");
    FILE *file = fopen(path, "r");
    if (!file)
        return tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "records import: cannot open %s: %s", path, strerror(errno));
    /* One transaction: a file with a bad line imports nothing, so that importing it again
     * once mended adds no record twice. */
    int64_t count = 0;
    bool database = is_sqlite_file(file);
    tcc_status status = store->engine->begin(store);
    if (status == TCC_OK)
        status = store->engine->end(store, database ? import_database(store, path, &count)
                                                    : import_lines(store, path, file, &count));
    fclose(file);
    if (status == TCC_OK && imported)
        *imported = count;
    return status;
}
