/*
 * The records store's SQLite engine (records.h): one file, linked statically so that the
 * tools need only glibc. WAL mode and a busy timeout let several tuners (processes) write one
 * database at once; each write transaction is short, so a tuner killed mid-trial loses none of
 * the records it added before.
 */
#include "support/context.h"
#include "tune/records.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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

typedef struct SqliteDb {
    sqlite3 *db;
    sqlite3_stmt *insert; /* prepared by the first insert, kept until close */
} SqliteDb;

static sqlite3 *db_of(tcc_record_store *store)
{
    return store->db ? ((SqliteDb *)store->db)->db : NULL;
}

/* The database's last error, in one line naming the database and what was being done. */
static tcc_status db_fail(tcc_record_store *store, const char *what)
{
    sqlite3 *db = db_of(store);
    int code = db ? sqlite3_errcode(db) : SQLITE_NOMEM;
    tcc_status status = code == SQLITE_NOMEM ? TCC_ERROR_OUT_OF_MEMORY : TCC_ERROR_INVALID_ARGUMENT;
    return tci_fail(store->ctx, status, "records %s: %s: %s", store->name, what,
                    db ? sqlite3_errmsg(db) : "out of memory");
}

static tcc_status exec(tcc_record_store *store, const char *sql, const char *what)
{
    if (sqlite3_exec(db_of(store), sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(store, what);
    return TCC_OK;
}

static tcc_status prepare(tcc_record_store *store, const char *sql, sqlite3_stmt **stmt)
{
    if (sqlite3_prepare_v2(db_of(store), sql, -1, stmt, NULL) != SQLITE_OK)
        return db_fail(store, "preparing a statement");
    return TCC_OK;
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

/* ---- transactions --------------------------------------------------------------------- */

/* The write lock taken at once, so that two writers wait (busy timeout) rather than fail. */
static tcc_status sqlite_begin(tcc_record_store *store)
{
    return exec(store, "BEGIN IMMEDIATE", "locking the database");
}

static tcc_status sqlite_end(tcc_record_store *store, tcc_status status)
{
    if (status == TCC_OK)
        status = exec(store, "COMMIT", "committing");
    /* Also after a failed COMMIT (a full disk), which leaves the transaction open: the next
     * BEGIN would fail. */
    if (status != TCC_OK && !sqlite3_get_autocommit(db_of(store)))
        sqlite3_exec(db_of(store), "ROLLBACK", NULL, NULL, NULL);
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
                        store->name, (long long)*version, tcc_version_string(), SCHEMA_VERSION);
    return status;
}

/* Creates the table in a new database. Two tuners may open a new database at once: the
 * write lock taken first (BEGIN IMMEDIATE) makes one create it and the other find it. */
static tcc_status create_schema(tcc_record_store *store)
{
    tcc_status status = sqlite_begin(store);
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
                          store->name, (long long)tables);
    if (status == TCC_OK && version == 0)
        status = exec(store, SCHEMA, "creating the trials table");
    return sqlite_end(store, status);
}

/* Seconds on a clock that only moves forward. */
static double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* sqlite3_step, again after a pause while it answers SQLITE_BUSY, until BUSY_TIMEOUT_MS have
 * passed. The busy timeout does not cover a statement that holds a read lock and needs the
 * write lock (switching a new database to WAL while another process does the same): SQLite
 * answers SQLITE_BUSY at once there, since waiting could deadlock, and the statement must be
 * run again. */
static int step_retrying_busy(sqlite3_stmt *stmt)
{
    enum { PAUSE_MS = 10 };
    double deadline = monotonic_seconds() + BUSY_TIMEOUT_MS / 1000.0;
    int result = sqlite3_step(stmt);
    while (result == SQLITE_BUSY && monotonic_seconds() < deadline) {
        sqlite3_reset(stmt);
        sqlite3_sleep(PAUSE_MS);
        result = sqlite3_step(stmt);
    }
    return result;
}

/* WAL lets readers and one writer at a time work at once. synchronous=NORMAL syncs the WAL at
 * checkpoints only: a committed record survives the process being killed (what a tuner
 * faces), though not the machine losing power, at far less cost a record. */
static tcc_status set_journal(tcc_record_store *store)
{
    sqlite3_stmt *stmt = NULL;
    tcc_status status = prepare(store, "PRAGMA journal_mode=WAL", &stmt);
    if (status == TCC_OK) {
        int step = step_retrying_busy(stmt);
        const unsigned char *mode = step == SQLITE_ROW ? sqlite3_column_text(stmt, 0) : NULL;
        if (!mode)
            status = db_fail(store, "setting WAL mode");
        else if (strcmp((const char *)mode, "wal") != 0)
            status = tci_fail(store->ctx, TCC_ERROR_UNSUPPORTED,
                              "records %s: the database cannot be put in WAL mode (its journal "
                              "mode stays '%s')",
                              store->name, (const char *)mode);
    }
    sqlite3_finalize(stmt);
    return status == TCC_OK ? exec(store, "PRAGMA synchronous=NORMAL", "setting synchronous")
                            : status;
}

static tcc_status sqlite_open(tcc_record_store *store, const char *path)
{
    tcc_status status = TCC_OK;
    if (path && !(store->name = strdup(path)))
        status = tci_fail(store->ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    else if (!path)
        status = default_path(store->ctx, &store->name);
    if (status == TCC_OK && !store->read_only)
        status = make_parent_directories(store->ctx, store->name);
    if (status != TCC_OK)
        return status;
    SqliteDb *db = calloc(1, sizeof *db);
    if (!db)
        return tci_fail(store->ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    store->db = db;
    int flags =
        store->read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(store->name, &db->db, flags, NULL) != SQLITE_OK)
        return db_fail(store, "opening");
    sqlite3_busy_timeout(db->db, BUSY_TIMEOUT_MS);
    int64_t version = 0;
    /* Checked before WAL mode is set, so that another program's database is left as it is. */
    status = check_version(store, &version);
    if (status == TCC_OK && store->read_only && version != SCHEMA_VERSION)
        status = tci_fail(store->ctx, TCC_ERROR_INVALID_ARGUMENT,
                          "records %s: an SQLite database, but not tcc's records", store->name);
    if (store->read_only)
        return status;
    if (status == TCC_OK)
        status = set_journal(store);
    if (status == TCC_OK)
        status = create_schema(store);
    return status;
}

static void sqlite_close(tcc_record_store *store)
{
    SqliteDb *db = store->db;
    if (!db)
        return;
    sqlite3_finalize(db->insert);
    sqlite3_close(db->db);
    free(db);
    store->db = NULL;
}

/* ---- writing and reading -------------------------------------------------------------- */

static tcc_status sqlite_insert(tcc_record_store *store, const RecordRow *row)
{
    SqliteDb *db = store->db;
    tcc_status status = TCC_OK;
    if (!db->insert)
        status = prepare(store,
                         "INSERT INTO trials (template, workload_key, target, device_name, "
                         "tcc_version, config, config_index, error_no, costs, mean_cost, "
                         "all_cost, timestamp, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                         "?9, ?10, ?11, ?12, ?13)",
                         &db->insert);
    if (status != TCC_OK)
        return status;
    sqlite3_stmt *insert = db->insert;
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
    int step = sqlite3_step(insert);
    sqlite3_reset(insert); /* nothing of the row held past the call */
    return step == SQLITE_DONE ? TCC_OK : db_fail(store, "adding a record");
}

static const char *column_text(sqlite3_stmt *stmt, int column)
{
    const unsigned char *text = sqlite3_column_text(stmt, column);
    return text ? (const char *)text : "";
}

/* The current row of a SELECT of TCI_RECORD_COLUMNS (its strings valid until the next step). */
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

/* One statement is one snapshot of the database, so that records other tuners add meanwhile
 * are in it entirely or not at all. */
static tcc_status sqlite_select(tcc_record_store *store, const RecordQuery *query,
                                RecordRowVisit visit, void *user, bool *found)
{
    const char *sql = query->workload_key
                          ? "SELECT " TCI_RECORD_COLUMNS " FROM trials WHERE template = ?1 AND "
                            "workload_key = ?2 AND (?3 IS NULL OR device_name = ?3) AND "
                            "error_no = 0 ORDER BY mean_cost, id LIMIT 1"
                          : "SELECT " TCI_RECORD_COLUMNS
                            " FROM trials WHERE ?1 IS NULL OR template = ?1 "
                            "ORDER BY id";
    sqlite3_stmt *stmt = NULL;
    tcc_status status = prepare(store, sql, &stmt);
    if (status == TCC_OK) {
        sqlite3_bind_text(stmt, 1, query->template_name, -1, SQLITE_STATIC);
        if (query->workload_key) {
            sqlite3_bind_text(stmt, 2, query->workload_key, -1, SQLITE_STATIC);
            sqlite3_bind_text(stmt, 3, query->device_name, -1, SQLITE_STATIC);
        }
    }
    int step = SQLITE_DONE;
    bool more = true;
    if (found)
        *found = false;
    while (status == TCC_OK && more && (step = sqlite3_step(stmt)) == SQLITE_ROW) {
        RecordRow row;
        read_row(stmt, &row);
        if (found)
            *found = true;
        more = visit(&row, user);
    }
    /* A visitor that stopped leaves the statement on a row, which is no error. */
    if (status == TCC_OK && more && step != SQLITE_DONE)
        status = db_fail(store, "reading the records");
    sqlite3_finalize(stmt);
    return status;
}

const RecordEngine tci_records_sqlite = {
    .open = sqlite_open,
    .close = sqlite_close,
    .begin = sqlite_begin,
    .insert = sqlite_insert,
    .end = sqlite_end,
    .select = sqlite_select,
};
