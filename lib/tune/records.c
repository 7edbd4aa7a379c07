/*
 * The records store (tcc/tune.h, "records"): one row per trial in an SQLite database, linked
 * statically so that the tools need only glibc. WAL mode and a busy timeout let several
 * tuners (processes) write one database at once; each record is its own transaction, so a
 * tuner killed mid-trial loses none it added before. Export and import as AutoTVM's log
 * lines are records_autotvm.c's.
 */
#include "tune/records.h"
#include "support/context.h"
#include "tcc/tune.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The layout of the trials table; a database of another version is refused, not migrated. */
enum { SCHEMA_VERSION = 1 };
/* How long a writer waits for another's transaction: records are small, so a wait this long
 * means something is stuck, not busy. */
enum { BUSY_TIMEOUT_MS = 30000 };

static const char SCHEMA[] =
    "CREATE TABLE trials ("
    "id INTEGER PRIMARY KEY AUTOINCREMENT, template TEXT NOT NULL, workload_key TEXT NOT NULL, "
    "target TEXT NOT NULL, device_name TEXT NOT NULL, tcc_version TEXT NOT NULL, "
    "config TEXT NOT NULL, config_index INTEGER NOT NULL, error_no INTEGER NOT NULL, "
    "costs TEXT NOT NULL, mean_cost REAL NOT NULL, all_cost REAL NOT NULL, "
    "timestamp REAL NOT NULL, message TEXT NOT NULL);"
    "CREATE INDEX trials_workload ON trials (template, workload_key, device_name);"
    "PRAGMA user_version = 1;";

/* The columns in RecordRow's order (read_row). */
#define COLUMNS                                                                                    \
    "id, template, workload_key, target, device_name, tcc_version, config, config_index, "         \
    "error_no, costs, mean_cost, all_cost, timestamp, message"

struct tcc_record_store {
    tcc_context *ctx; /* receives the store's errors */
    sqlite3 *db;
    char *path;
    /* The strings of the last record read (tcc_record's), the store's until its next call. */
    char *strings;
};

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

/* ---- SQLite helpers ------------------------------------------------------------------- */

/* The database's last error, in one line naming the database and what was being done. */
static tcc_status db_fail(tcc_record_store *store, const char *what)
{
    int code = sqlite3_errcode(store->db);
    tcc_status status = code == SQLITE_NOMEM ? TCC_ERROR_OUT_OF_MEMORY : TCC_ERROR_INVALID_ARGUMENT;
    return tci_fail(store->ctx, status, "records %s: %s: %s", store->path, what,
                    store->db ? sqlite3_errmsg(store->db) : "out of memory");
}

static tcc_status exec(tcc_record_store *store, const char *sql, const char *what)
{
    if (sqlite3_exec(store->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(store, what);
    return TCC_OK;
}

static tcc_status prepare(tcc_record_store *store, const char *sql, sqlite3_stmt **stmt)
{
    if (sqlite3_prepare_v2(store->db, sql, -1, stmt, NULL) != SQLITE_OK)
        return db_fail(store, "preparing a statement");
    return TCC_OK;
}

/* Ends the transaction that BEGIN IMMEDIATE started: committed when `status` is TCC_OK,
 * else rolled back (keeping the error that caused it). */
static tcc_status end_transaction(tcc_record_store *store, tcc_status status)
{
    if (status == TCC_OK)
        status = exec(store, "COMMIT", "committing");
    /* Also after a failed COMMIT (a full disk), which leaves the transaction open: the next
     * BEGIN would fail. */
    if (status != TCC_OK && !sqlite3_get_autocommit(store->db))
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
    return status;
}

/* One integer a statement yields (a PRAGMA's value, a count). */
static tcc_status query_int(tcc_record_store *store, const char *sql, int64_t *out)
{
    sqlite3_stmt *stmt = NULL;
    tcc_status status = prepare(store, sql, &stmt);
    if (status == TCC_OK) {
        if (sqlite3_step(stmt) == SQLITE_ROW)
            *out = sqlite3_column_int64(stmt, 0);
        else
            status = db_fail(store, "reading the schema");
    }
    sqlite3_finalize(stmt);
    return status;
}

/* ---- opening -------------------------------------------------------------------------- */

static char *join_path(const char *directory, const char *rest)
{
    size_t size = strlen(directory) + strlen(rest) + 1;
    char *path = malloc(size);
    if (path)
        snprintf(path, size, "%s%s", directory, rest);
    return path;
}

/* $XDG_CACHE_HOME/tcc/records.db, else ~/.cache/tcc/records.db. */
static tcc_status default_path(tcc_context *ctx, char **out)
{
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    /* The XDG base directory specification: a relative XDG_CACHE_HOME is to be ignored. */
    if (cache && cache[0] == '/')
        *out = join_path(cache, "/tcc/records.db");
    else if (home && home[0])
        *out = join_path(home, "/.cache/tcc/records.db");
    else
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "records: neither XDG_CACHE_HOME nor HOME is set: give the database's "
                        "path");
    return *out ? TCC_OK : tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
}

/* mkdir -p of the directories above `path`. */
static tcc_status make_parent_directories(tcc_context *ctx, const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    tcc_status status = TCC_OK;
    for (char *p = copy + 1; *p && status == TCC_OK; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        struct stat info;
        if (mkdir(copy, 0777) != 0 && errno != EEXIST &&
            !(stat(copy, &info) == 0 && S_ISDIR(info.st_mode)))
            status = tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                              "records: cannot create the directory %s: %s", copy, strerror(errno));
        *p = '/';
    }
    free(copy);
    return status;
}

/* A database this tcc can read: schema version 0 (new) or SCHEMA_VERSION. */
static tcc_status check_version(tcc_record_store *store, int64_t *version)
{
    tcc_status status = query_int(store, "PRAGMA user_version", version);
    if (status == TCC_OK && *version != 0 && *version != SCHEMA_VERSION)
        return tci_fail(store->ctx, TCC_ERROR_UNSUPPORTED,
                        "records %s: the database has schema version %lld; this tcc (%s) reads "
                        "version %d only",
                        store->path, (long long)*version, tcc_version_string(), SCHEMA_VERSION);
    return status;
}

/* Creates the table in a new database. Two tuners may open a new database at once: the
 * write lock taken first (BEGIN IMMEDIATE) makes one create it and the other find it. */
static tcc_status create_schema(tcc_record_store *store)
{
    tcc_status status = exec(store, "BEGIN IMMEDIATE", "locking the database");
    if (status != TCC_OK)
        return status;
    int64_t version = 0, tables = 0;
    status = check_version(store, &version);
    if (status == TCC_OK && version == 0)
        status = query_int(store, "SELECT count(*) FROM sqlite_master", &tables);
    if (status == TCC_OK && version == 0 && tables > 0)
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "records %s: an SQLite database, but not tcc's records (its schema "
                          "has %lld other entries)",
                          store->path, (long long)tables);
    if (status == TCC_OK && version == 0)
        status = exec(store, SCHEMA, "creating the trials table");
    return end_transaction(store, status);
}

/* WAL lets readers and one writer at a time work at once. synchronous=NORMAL syncs the WAL at
 * checkpoints only: a committed record survives the process being killed (what a tuner
 * faces), though not the machine losing power, at far less cost a record. */
static tcc_status set_journal(tcc_record_store *store)
{
    sqlite3_stmt *stmt = NULL;
    tcc_status status = prepare(store, "PRAGMA journal_mode=WAL", &stmt);
    if (status == TCC_OK) {
        const unsigned char *mode =
            sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_text(stmt, 0) : NULL;
        if (!mode)
            status = db_fail(store, "setting WAL mode");
        else if (strcmp((const char *)mode, "wal") != 0)
            status = tci_fail(store->ctx, TCC_ERROR_UNSUPPORTED,
                              "records %s: the database cannot be put in WAL mode (its journal "
                              "mode stays '%s')",
                              store->path, (const char *)mode);
    }
    sqlite3_finalize(stmt);
    return status == TCC_OK ? exec(store, "PRAGMA synchronous=NORMAL", "setting synchronous")
                            : status;
}

static tcc_status open_database(tcc_record_store *store)
{
    if (sqlite3_open_v2(store->path, &store->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        NULL) != SQLITE_OK)
        return db_fail(store, "opening");
    sqlite3_busy_timeout(store->db, BUSY_TIMEOUT_MS);
    int64_t version = 0;
    /* Checked before WAL mode is set, so that another program's database is left as it is. */
    tcc_status status = check_version(store, &version);
    if (status == TCC_OK)
        status = set_journal(store);
    if (status == TCC_OK)
        status = create_schema(store);
    return status;
}

tcc_status tcc_record_store_open(tcc_context *ctx, const char *path, tcc_record_store **out)
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
    tcc_status status = TCC_OK;
    if (path && !(store->path = strdup(path)))
        status = tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    else if (!path)
        status = default_path(ctx, &store->path);
    if (status == TCC_OK)
        status = make_parent_directories(ctx, store->path);
    if (status == TCC_OK)
        status = open_database(store);
    if (status != TCC_OK) {
        tcc_record_store_close(store);
        return status;
    }
    *out = store;
    return TCC_OK;
}

void tcc_record_store_close(tcc_record_store *store)
{
    if (!store)
        return;
    sqlite3_close(store->db);
    free(store->path);
    free(store->strings);
    free(store);
}

/* ---- adding --------------------------------------------------------------------------- */

static tcc_status insert_row(tcc_record_store *store, sqlite3_stmt *insert, const RecordRow *row)
{
    const char *texts[] = {row->template_name, row->workload_key, row->target,
                           row->device_name,   row->tcc_version,  row->config};
    sqlite3_reset(insert);
    for (int i = 0; i < 6; i++)
        sqlite3_bind_text(insert, i + 1, texts[i], -1, SQLITE_STATIC);
    sqlite3_bind_int64(insert, 7, row->config_index);
    sqlite3_bind_int(insert, 8, row->error_no);
    sqlite3_bind_text(insert, 9, row->costs, -1, SQLITE_STATIC);
    sqlite3_bind_double(insert, 10, row->mean_cost);
    sqlite3_bind_double(insert, 11, row->all_cost);
    sqlite3_bind_double(insert, 12, row->timestamp);
    sqlite3_bind_text(insert, 13, row->message, -1, SQLITE_STATIC);
    if (sqlite3_step(insert) != SQLITE_DONE)
        return db_fail(store, "adding a record");
    return TCC_OK;
}

static tcc_status prepare_insert(tcc_record_store *store, sqlite3_stmt **insert)
{
    return prepare(store,
                   "INSERT INTO trials (template, workload_key, target, device_name, "
                   "tcc_version, config, config_index, error_no, costs, mean_cost, all_cost, "
                   "timestamp, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                   "?12, ?13)",
                   insert);
}

/* What tcc_record_add refuses: a size it does not know, missing texts, errors and costs no
 * trial has. */
static tcc_status check_record(tcc_context *ctx, const tcc_record *record)
{
    if (!record)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_record_add: record is NULL");
    tcc_status status = TCI_CHECK_SIZE(ctx, "tcc_record_add", tcc_record, record);
    if (status != TCC_OK)
        return status;
    if (!record->template_name || !record->workload_key || !record->config)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_record_add: a record needs its template, workload key and config");
    const tcc_measure_result *result = &record->result;
    if ((int)result->error < TCC_MEASURE_OK || result->error > TCC_MEASURE_UNKNOWN_ERROR)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_record_add: error %d is no tcc_measure_error", (int)result->error);
    int most = (int)(sizeof result->costs / sizeof *result->costs);
    if (result->ncost < 0 || result->ncost > most)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_record_add: ncost is %d (0 to %d)",
                        result->ncost, most);
    for (int i = 0; i < result->ncost; i++)
        if (!isfinite(result->costs[i]) || result->costs[i] < 0)
            return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "tcc_record_add: cost %d is %g seconds", i, result->costs[i]);
    if (!isfinite(result->all_cost) || !isfinite(result->timestamp))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_record_add: all_cost and timestamp must be finite");
    if (record->config_index < 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_record_add: config_index is %lld",
                        (long long)record->config_index);
    return TCC_OK;
}

/* A record whose workload key or config is not the JSON tcc writes could not be exported:
 * refused when added, rather than found when exporting. */
static tcc_status check_exportable(tcc_context *ctx, const RecordRow *row)
{
    StrBuf line;
    char why[300];
    tci_strbuf_init(&line);
    bool ok = tci_record_line_write(&line, row, why, sizeof why);
    tci_strbuf_free(&line);
    if (!ok)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_record_add: %s", why);
    return TCC_OK;
}

/* The row, in a transaction of its own: committed, it survives the process being killed. */
static tcc_status insert(tcc_record_store *store, const RecordRow *row)
{
    tcc_status status = exec(store, "BEGIN IMMEDIATE", "locking the database");
    if (status != TCC_OK)
        return status;
    sqlite3_stmt *insert = NULL;
    status = prepare_insert(store, &insert);
    if (status == TCC_OK)
        status = insert_row(store, insert, row);
    sqlite3_finalize(insert);
    return end_transaction(store, status);
}

tcc_status tcc_record_add(tcc_record_store *store, const tcc_record *record)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_status status = check_record(store->ctx, record);
    if (status != TCC_OK)
        return status;
    const tcc_measure_result *result = &record->result;
    /* The message is a fixed array the caller may have filled to its end. */
    char message[sizeof result->message + 1];
    size_t length = strnlen(result->message, sizeof result->message);
    memcpy(message, result->message, length);
    message[length] = '\0';
    StrBuf costs;
    tci_strbuf_init(&costs);
    RecordRow row = {
        .template_name = record->template_name,
        .workload_key = record->workload_key,
        .target = record->target ? record->target : "",
        .device_name = record->device_name ? record->device_name : "",
        .tcc_version = record->tcc_version ? record->tcc_version : tcc_version_string(),
        .config = record->config,
        .message = message,
        .config_index = record->config_index,
        .error_no = (int)result->error,
        .all_cost = result->all_cost,
        .timestamp = result->timestamp,
        /* Not the mean's 0 for a trial with no time: that would rank it the fastest. */
        .mean_cost = result->error == TCC_MEASURE_OK && result->ncost > 0
                         ? tcc_measure_result_mean_cost(result)
                         : TCI_FAILED_COST,
    };
    tci_record_costs_text(&costs, result->costs, result->ncost);
    row.costs = costs.data;
    if (costs.failed)
        status = tci_fail(store->ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    else
        status = check_exportable(store->ctx, &row);
    if (status == TCC_OK)
        status = insert(store, &row);
    tci_strbuf_free(&costs);
    return status;
}

/* ---- reading -------------------------------------------------------------------------- */

static const char *column_text(sqlite3_stmt *stmt, int column)
{
    const unsigned char *text = sqlite3_column_text(stmt, column);
    return text ? (const char *)text : "";
}

/* The current row of a SELECT of COLUMNS (its strings valid until the next step). */
static void read_row(sqlite3_stmt *stmt, RecordRow *row)
{
    row->id = sqlite3_column_int64(stmt, 0);
    row->template_name = column_text(stmt, 1);
    row->workload_key = column_text(stmt, 2);
    row->target = column_text(stmt, 3);
    row->device_name = column_text(stmt, 4);
    row->tcc_version = column_text(stmt, 5);
    row->config = column_text(stmt, 6);
    row->config_index = sqlite3_column_int64(stmt, 7);
    row->error_no = sqlite3_column_int(stmt, 8);
    row->costs = column_text(stmt, 9);
    row->mean_cost = sqlite3_column_double(stmt, 10);
    row->all_cost = sqlite3_column_double(stmt, 11);
    row->timestamp = sqlite3_column_double(stmt, 12);
    row->message = column_text(stmt, 13);
}

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
                          store->path, (long long)row->id, costs ? "another value" : why);
    int most = (int)(sizeof result->costs / sizeof *result->costs);
    for (const Json *cost = costs ? costs->first : NULL; cost && status == TCC_OK;
         cost = cost->next) {
        if (cost->kind != JSON_NUMBER)
            status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                              "records %s: record %lld: a cost is not a number", store->path,
                              (long long)row->id);
        else if (result->ncost < most)
            result->costs[result->ncost++] = cost->number;
    }
    tci_arena_destroy(arena);
    return status;
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
    out->result.error = (tcc_measure_error)row->error_no;
    out->result.all_cost = row->all_cost;
    out->result.timestamp = row->timestamp;
    snprintf(out->result.message, sizeof out->result.message, "%s", row->message);
    return read_costs(store, row, &out->result);
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
    sqlite3_stmt *stmt = NULL;
    status = prepare(store,
                     "SELECT " COLUMNS " FROM trials WHERE template = ?1 AND "
                     "workload_key = ?2 AND (?3 IS NULL OR device_name = ?3) AND "
                     "error_no = 0 ORDER BY mean_cost, id LIMIT 1",
                     &stmt);
    if (status == TCC_OK) {
        sqlite3_bind_text(stmt, 1, template_name, -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 2, workload_key, -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 3, device_name, -1, SQLITE_STATIC);
        int step = sqlite3_step(stmt);
        RecordRow row;
        if (step == SQLITE_ROW) {
            read_row(stmt, &row);
            status = to_record(store, &row, out);
        } else if (step == SQLITE_DONE) {
            status =
                tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                         "records %s: no record of template %s for workload %s on %s", store->path,
                         template_name, workload_key, device_name ? device_name : "any device");
        } else {
            status = db_fail(store, "finding the best record");
        }
    }
    sqlite3_finalize(stmt);
    return status;
}

tcc_status tcc_record_each(tcc_record_store *store, const char *template_name,
                           bool (*visit)(const tcc_record *record, void *user), void *user)
{
    if (!store)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!visit)
        return tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT, "tcc_record_each: visit is NULL");
    sqlite3_stmt *stmt = NULL;
    tcc_status status = prepare(
        store, "SELECT " COLUMNS " FROM trials WHERE ?1 IS NULL OR template = ?1 ORDER BY id",
        &stmt);
    if (status == TCC_OK)
        sqlite3_bind_text(stmt, 1, template_name, -1, SQLITE_STATIC);
    int step = SQLITE_DONE;
    bool more = true;
    while (status == TCC_OK && more && (step = sqlite3_step(stmt)) == SQLITE_ROW) {
        RecordRow row;
        tcc_record record;
        read_row(stmt, &row);
        status = to_record(store, &row, &record);
        if (status == TCC_OK)
            more = visit(&record, user);
    }
    /* A visitor that stopped leaves the statement on a row, which is no error. */
    if (status == TCC_OK && more && step != SQLITE_DONE)
        status = db_fail(store, "reading the records");
    sqlite3_finalize(stmt);
    return status;
}

/* ---- export and import ---------------------------------------------------------------- */

/* Every record, oldest first, a line each; the statement is one snapshot of the database, so
 * records other tuners add meanwhile are in it entirely or not at all. */
static tcc_status export_rows(tcc_record_store *store, const char *path, FILE *file)
{
    sqlite3_stmt *stmt = NULL;
    tcc_status status = prepare(store, "SELECT " COLUMNS " FROM trials ORDER BY id", &stmt);
    StrBuf line;
    tci_strbuf_init(&line);
    int step = SQLITE_DONE;
    while (status == TCC_OK && (step = sqlite3_step(stmt)) == SQLITE_ROW) {
        RecordRow row;
        char why[300];
        read_row(stmt, &row);
        line.len = 0;
        if (!tci_record_line_write(&line, &row, why, sizeof why))
            status =
                tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                         "records export to %s: record %lld: %s", path, (long long)row.id, why);
        else if (fprintf(file, "%s\n", line.data) < 0)
            status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                              "records export: cannot write %s: %s", path, strerror(errno));
    }
    if (status == TCC_OK && step != SQLITE_DONE)
        status = db_fail(store, "reading the records");
    tci_strbuf_free(&line);
    sqlite3_finalize(stmt);
    return status;
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
static tcc_status import_line(tcc_record_store *store, sqlite3_stmt *insert, const char *path,
                              long number, const char *line, size_t length)
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
        status = insert_row(store, insert, &row);
    tci_arena_destroy(arena);
    return status;
}

/* Every line of `file`, stopping at the first that is not a record. */
static tcc_status import_lines(tcc_record_store *store, const char *path, FILE *file,
                               int64_t *count)
{
    sqlite3_stmt *insert = NULL;
    tcc_status status = prepare_insert(store, &insert);
    char *line = NULL;
    size_t capacity = 0;
    long number = 0;
    ssize_t length;
    while (status == TCC_OK && (length = getline(&line, &capacity, file)) >= 0) {
        number++;
        if (length > 0 && line[length - 1] == '\n')
            line[--length] = '\0';
        if (!skipped_line(line)) {
            status = import_line(store, insert, path, number, line, (size_t)length);
            *count += status == TCC_OK;
        }
    }
    if (status == TCC_OK && ferror(file))
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "records import: cannot read %s: %s", path, strerror(errno));
    free(line);
    sqlite3_finalize(insert);
    return status;
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
    tcc_status status = exec(store, "BEGIN IMMEDIATE", "locking the database");
    if (status == TCC_OK)
        status = end_transaction(store, import_lines(store, path, file, &count));
    fclose(file);
    if (status == TCC_OK && imported)
        *imported = count;
    return status;
}
