/*
 * The records store's PostgreSQL engine (records.h), for a URL postgresql://...: the trials
 * table of the SQLite engine, as tcc_trials beside a tcc_schema table of its version (prefixed,
 * as the database may hold other programs' tables), on a server that many tuners and hosts
 * share. Each statement is libpq's (postgres.c); floats travel as text of 17 digits, which
 * reads back to the same double.
 */
#include "support/context.h"
#include "tune/postgres.h"
#include "tune/records.h"

#include <stdio.h>
#include <stdlib.h>

/* The version of the tables; a database of another version is refused, not migrated. */
enum { SCHEMA_VERSION = 1 };
/* Rows fetched at a time while walking the records: a walk of any length in bounded memory. */
enum { FETCH_ROWS = 512 };
/* The advisory lock that makes one of two tuners opening a new database at once create the
 * tables, and the other find them ("tcc-rec" in ASCII). */
#define SCHEMA_LOCK "32760374913820003"

static const char *const SCHEMA[] = {
    "CREATE TABLE IF NOT EXISTS tcc_schema (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tcc_trials (id BIGSERIAL PRIMARY KEY, template TEXT NOT NULL, "
    "workload_key TEXT NOT NULL, target TEXT NOT NULL, device_name TEXT NOT NULL, "
    "tcc_version TEXT NOT NULL, config TEXT NOT NULL, config_index BIGINT NOT NULL, "
    "error_no INTEGER NOT NULL, costs TEXT NOT NULL, mean_cost DOUBLE PRECISION NOT NULL, "
    "all_cost DOUBLE PRECISION NOT NULL, timestamp DOUBLE PRECISION NOT NULL, "
    "message TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS tcc_trials_workload ON tcc_trials (template, workload_key, "
    "device_name)",
    /* Trials for workers to measure (jobs.c): queued, then running on `worker` (heartbeat:
     * when it last said it is alive), then done with the record it added. */
    "CREATE TABLE IF NOT EXISTS tcc_jobs (id BIGSERIAL PRIMARY KEY, run TEXT NOT NULL, "
    "template TEXT NOT NULL, workload_key TEXT NOT NULL, target TEXT NOT NULL, "
    "device_name TEXT NOT NULL, config TEXT NOT NULL, config_index BIGINT NOT NULL, "
    "options TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'queued', worker TEXT, "
    "heartbeat TIMESTAMPTZ, attempts INTEGER NOT NULL DEFAULT 0, record_id BIGINT)",
    "CREATE INDEX IF NOT EXISTS tcc_jobs_queue ON tcc_jobs (state, target, device_name, id)",
    "CREATE INDEX IF NOT EXISTS tcc_jobs_worker ON tcc_jobs (worker, state)",
};

static tcc_status exec(tcc_record_store *store, const char *what, const char *sql)
{
    return tci_pq_exec(store->db, what, sql, 0, NULL, NULL);
}

/* ---- opening -------------------------------------------------------------------------- */

/* The first value of a statement's first row ("" when it has none). */
static tcc_status query_text(tcc_record_store *store, const char *what, const char *sql, char *out,
                             size_t size)
{
    PqResult *result = NULL;
    tcc_status status = tci_pq_exec(store->db, what, sql, 0, NULL, &result);
    out[0] = '\0';
    if (status == TCC_OK && tci_pq_rows(store->db, result) > 0)
        snprintf(out, size, "%s", tci_pq_value(store->db, result, 0, 0));
    tci_pq_clear(store->db, result);
    return status;
}

/* The version the database's tcc_schema holds, 0 where there is none yet. */
static tcc_status schema_version(tcc_record_store *store, long *version)
{
    char text[32];
    *version = 0;
    tcc_status status =
        query_text(store, "reading the schema version",
                   "SELECT to_regclass('tcc_schema') IS NOT NULL", text, sizeof text);
    if (status == TCC_OK && text[0] == 't')
        status = query_text(store, "reading the schema version", "SELECT version FROM tcc_schema",
                            text, sizeof text);
    if (status == TCC_OK && text[0] != 'f')
        *version = strtol(text, NULL, 10);
    if (status == TCC_OK && *version != 0 && *version != SCHEMA_VERSION)
        status = tci_pq_fail(store->db, TCC_ERROR_UNSUPPORTED,
                             "the database has tcc's tables of schema version %ld; this tcc (%s) "
                             "reads version %d only",
                             *version, tcc_version_string(), SCHEMA_VERSION);
    return status;
}

/* Creates the tables that are missing (all of a new database; those a later tcc of the same
 * version added, such as the jobs) in one transaction under the advisory lock, and refuses tables
 * of another version. */
static tcc_status create_schema(tcc_record_store *store)
{
    tcc_status status = exec(store, "beginning", "BEGIN");
    if (status != TCC_OK)
        return status;
    status = exec(store, "locking the schema", "SELECT pg_advisory_xact_lock(" SCHEMA_LOCK ")");
    long version = 0;
    if (status == TCC_OK)
        status = schema_version(store, &version);
    for (size_t i = 0; i < sizeof SCHEMA / sizeof *SCHEMA && status == TCC_OK; i++)
        status = exec(store, "creating the tables", SCHEMA[i]);
    char text[16];
    snprintf(text, sizeof text, "%d", SCHEMA_VERSION);
    const char *params[] = {text};
    if (status == TCC_OK && version == 0)
        status =
            tci_pq_exec(store->db, "creating the tables",
                        "INSERT INTO tcc_schema (version) VALUES ($1::integer)", 1, params, NULL);
    return tci_records_postgres.end(store, status);
}

static tcc_status postgres_open(tcc_record_store *store, const char *url)
{
    PqConnection *pq = NULL;
    tcc_status status = tci_pq_connect(store->ctx, url, &store->name, &pq);
    store->db = pq;
    return status == TCC_OK ? create_schema(store) : status;
}

static void postgres_close(tcc_record_store *store)
{
    tci_pq_close(store->db);
    store->db = NULL;
}

/* ---- transactions --------------------------------------------------------------------- */

static tcc_status postgres_begin(tcc_record_store *store)
{
    return exec(store, "beginning", "BEGIN");
}

static tcc_status postgres_end(tcc_record_store *store, tcc_status status)
{
    if (status == TCC_OK)
        return exec(store, "committing", "COMMIT");
    /* A failed statement leaves the transaction aborted until it is rolled back. */
    exec(store, "rolling back", "ROLLBACK");
    return status;
}

/* ---- writing and reading -------------------------------------------------------------- */

tcc_status tci_records_postgres_insert(tcc_record_store *store, const RecordRow *row, int64_t *id)
{
    char index[24], error[16], mean[32], all[32], timestamp[32];
    snprintf(index, sizeof index, "%lld", (long long)row->config_index);
    snprintf(error, sizeof error, "%d", row->error_no);
    snprintf(mean, sizeof mean, "%.17g", row->mean_cost);
    snprintf(all, sizeof all, "%.17g", row->all_cost);
    snprintf(timestamp, sizeof timestamp, "%.17g", row->timestamp);
    const char *params[] = {row->template_name,
                            row->workload_key,
                            row->target,
                            row->device_name,
                            row->tcc_version,
                            row->config,
                            index,
                            error,
                            row->costs,
                            mean,
                            all,
                            timestamp,
                            row->message};
    PqResult *result = NULL;
    tcc_status status = tci_pq_exec(
        store->db, "adding a record",
        "INSERT INTO tcc_trials (template, workload_key, target, device_name, tcc_version, "
        "config, config_index, error_no, costs, mean_cost, all_cost, timestamp, message) VALUES "
        "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id",
        (int)(sizeof params / sizeof *params), params, &result);
    if (status == TCC_OK && id)
        *id = strtoll(tci_pq_value(store->db, result, 0, 0), NULL, 10);
    tci_pq_clear(store->db, result);
    return status;
}

static tcc_status postgres_insert(tcc_record_store *store, const RecordRow *row)
{
    return tci_records_postgres_insert(store, row, NULL);
}

/* A row of a SELECT of TCI_RECORD_COLUMNS first (its strings valid until the result is
 * cleared). */
void tci_records_postgres_read_row(PqConnection *pq, const PqResult *result, int i, RecordRow *row)
{
    const char *text[TCI_RECORD_COLUMN_COUNT];
    for (int c = 0; c < TCI_RECORD_COLUMN_COUNT; c++)
        text[c] = tci_pq_value(pq, result, i, c);
    row->id = strtoll(text[0], NULL, 10);
    row->template_name = text[1];
    row->workload_key = text[2];
    row->target = text[3];
    row->device_name = text[4];
    row->tcc_version = text[5];
    row->config = text[6];
    row->config_index = strtoll(text[7], NULL, 10);
    row->error_no = (int)strtol(text[8], NULL, 10);
    row->costs = text[9];
    row->mean_cost = strtod(text[10], NULL);
    row->all_cost = strtod(text[11], NULL);
    row->timestamp = strtod(text[12], NULL);
    row->message = text[13];
}

/* Visits a result's rows; false once the visitor stopped. */
static bool visit_rows(tcc_record_store *store, const PqResult *result, RecordRowVisit visit,
                       void *user, bool *found)
{
    int rows = tci_pq_rows(store->db, result);
    for (int i = 0; i < rows; i++) {
        RecordRow row;
        tci_records_postgres_read_row(store->db, result, i, &row);
        if (found)
            *found = true;
        if (!visit(&row, user))
            return false;
    }
    return true;
}

static tcc_status select_best(tcc_record_store *store, const RecordQuery *query,
                              RecordRowVisit visit, void *user, bool *found)
{
    const char *params[] = {query->template_name, query->workload_key, query->device_name};
    PqResult *result = NULL;
    tcc_status status = tci_pq_exec(
        store->db, "finding the best record",
        "SELECT " TCI_RECORD_COLUMNS
        " FROM tcc_trials WHERE template = $1 AND workload_key = $2 AND "
        "($3::text IS NULL OR device_name = $3::text) AND error_no = 0 ORDER BY mean_cost, id "
        "LIMIT 1",
        3, params, &result);
    if (status == TCC_OK)
        visit_rows(store, result, visit, user, found);
    tci_pq_clear(store->db, result);
    return status;
}

/* Every row of the template through a cursor, FETCH_ROWS at a time, in one read-only
 * transaction of repeatable reads: one snapshot, as the SQLite engine's one statement. */
static tcc_status select_all(tcc_record_store *store, const RecordQuery *query,
                             RecordRowVisit visit, void *user, bool *found)
{
    tcc_status status = exec(store, "beginning", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    if (status != TCC_OK)
        return status;
    const char *params[] = {query->template_name};
    status = tci_pq_exec(store->db, "reading the records",
                         "DECLARE tcc_rows NO SCROLL CURSOR FOR SELECT " TCI_RECORD_COLUMNS
                         " FROM tcc_trials WHERE $1::text IS NULL OR template = $1::text "
                         "ORDER BY id",
                         1, params, NULL);
    bool more = true;
    int rows = FETCH_ROWS;
    while (status == TCC_OK && more && rows == FETCH_ROWS) {
        PqResult *result = NULL;
        char fetch[48];
        snprintf(fetch, sizeof fetch, "FETCH %d FROM tcc_rows", FETCH_ROWS);
        status = tci_pq_exec(store->db, "reading the records", fetch, 0, NULL, &result);
        if (status == TCC_OK) {
            rows = tci_pq_rows(store->db, result);
            more = visit_rows(store, result, visit, user, found);
        }
        tci_pq_clear(store->db, result);
    }
    /* Nothing was written: ending it either way closes the cursor. */
    tcc_status ended = exec(store, "ending the read", status == TCC_OK ? "COMMIT" : "ROLLBACK");
    return status == TCC_OK ? ended : status;
}

static tcc_status postgres_select(tcc_record_store *store, const RecordQuery *query,
                                  RecordRowVisit visit, void *user, bool *found)
{
    if (found)
        *found = false;
    return query->workload_key ? select_best(store, query, visit, user, found)
                               : select_all(store, query, visit, user, found);
}

const RecordEngine tci_records_postgres = {
    .open = postgres_open,
    .close = postgres_close,
    .begin = postgres_begin,
    .insert = postgres_insert,
    .end = postgres_end,
    .select = postgres_select,
};
