/*
 * What the records store's files share: records.c is the store's API over an engine, SQLite
 * (records_sqlite.c, a file) or PostgreSQL (records_postgres.c, a server); records_json.c
 * reads and writes JSON (the texts a row holds: the workload key, the config, the costs);
 * records_autotvm.c converts a row to and from a line of AutoTVM's log.
 */
#ifndef TCI_TUNE_RECORDS_H
#define TCI_TUNE_RECORDS_H

#include "support/arena.h"
#include "support/strbuf.h"
#include "tcc/tune.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- JSON: a strict reader into a tree, a writer in Python's json.dumps layout ---- */

typedef enum JsonKind {
    JSON_NULL = 0,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT,
} JsonKind;

typedef struct Json Json;
struct Json {
    JsonKind kind;
    /* A number: its token as written (so that integers are written back as they were read),
     * and its value; a string: its decoded UTF-8 (no NUL inside). */
    const char *text;
    double number;
    int count;       /* an array's or object's members */
    Json *first;     /* its first member */
    Json *next;      /* the next member of the array or object this is in */
    const char *key; /* this member's key, in an object */
};

/* Parses `text`, one JSON value with nothing after it but white space, into `arena`. NULL
 * with a one-line reason in error[] when it is no such value or memory ran out. */
Json *tci_json_parse(Arena *arena, const char *text, char *error, size_t error_size);
/* An object's member named `key`; NULL when there is none (or `object` is no object). */
const Json *tci_json_member(const Json *object, const char *key);
/* Whether `value` is an integer number (no fraction or exponent) that fits in int64_t. */
bool tci_json_int(const Json *value, int64_t *out);
/* Writes `value` as Python's json.dumps does (", " and ": " between members). */
void tci_json_write(StrBuf *sb, const Json *value);
void tci_json_write_string(StrBuf *sb, const char *text);
/* A finite double as Python's repr writes it: the shortest text that reads back the same
 * ("0.000506", "1606247193.9", "1000000000.0", "1e-07"). */
void tci_json_write_double(StrBuf *sb, double value);

/* ---- a trial as a row of the store, and as a line of an AutoTVM log ---------------- */

/* AutoTVM's cost of a failed trial (its log writes costs (1e9,) for one). */
#define TCI_FAILED_COST 1e9

/* The trials table's columns in RecordRow's order (each engine's read_row), how many. */
#define TCI_RECORD_COLUMNS                                                                         \
    "id, template, workload_key, target, device_name, tcc_version, config, config_index, "         \
    "error_no, costs, mean_cost, all_cost, timestamp, message"
enum { TCI_RECORD_COLUMN_COUNT = 14 };

/* One row of the trials table; the strings are not owned. */
typedef struct RecordRow {
    int64_t id; /* its rowid (0 for a row not yet stored) */
    const char *template_name, *workload_key, *target, *device_name, *tcc_version;
    const char *config; /* tcc_config_format's text */
    const char *costs;  /* a JSON array of seconds: "[0.000506, 0.000507]" */
    const char *message;
    int64_t config_index;
    int error_no; /* tcc_measure_error */
    double mean_cost, all_cost, timestamp;
} RecordRow;

/* ---- the store and the engines it runs on ------------------------------------------ */

typedef struct RecordEngine RecordEngine;

struct tcc_record_store {
    tcc_context *ctx; /* receives the store's errors */
    const RecordEngine *engine;
    void *db;   /* the engine's connection */
    char *name; /* the file's path, or the URL without its password: what errors name */
    /* The strings of the last record read (tcc_record's), the store's until its next call. */
    char *strings;
    char *job_strings; /* those of the last jobs claimed, likewise (jobs.c) */
    bool read_only;    /* opened to read another store's records (an import): nothing written */
};

/* Which rows a select yields. */
typedef struct RecordQuery {
    const char *template_name; /* NULL: every template's */
    /* NULL: every row of the template, oldest first, as one snapshot. Else only the fastest
     * error-free row of this workload of the template on device_name (any when NULL). */
    const char *workload_key;
    const char *device_name;
} RecordQuery;

/* Called on each row a select yields (its strings valid during the call): false stops. */
typedef bool (*RecordRowVisit)(const RecordRow *row, void *user);

/* An engine: every failure is one line through tci_fail naming store->name. */
struct RecordEngine {
    /* Connects to `location` (a path, or a URL), creating the schema in a new database, and
     * sets store->db; a database of another schema version is refused. */
    tcc_status (*open)(tcc_record_store *store, const char *location);
    void (*close)(tcc_record_store *store);
    /* A write transaction: the rows inserted until end are all kept (status TCC_OK, and the
     * commit succeeded: end returns its failure) or none (any other status, returned). */
    tcc_status (*begin)(tcc_record_store *store);
    tcc_status (*insert)(tcc_record_store *store, const RecordRow *row);
    tcc_status (*end)(tcc_record_store *store, tcc_status status);
    /* The query's rows, in order; *found says whether there was one (may be NULL). The visitor
     * must not use the store. */
    tcc_status (*select)(tcc_record_store *store, const RecordQuery *query, RecordRowVisit visit,
                         void *user, bool *found);
};

extern const RecordEngine tci_records_sqlite;
extern const RecordEngine tci_records_postgres;

/* The PostgreSQL engine's insert, which also gives the new row's id (NULL: not wanted), and
 * its reading of a result's row i whose first columns are TCI_RECORD_COLUMNS: jobs.c's. */
struct PqConnection;
struct PqResult;
tcc_status tci_records_postgres_insert(tcc_record_store *store, const RecordRow *row, int64_t *id);
void tci_records_postgres_read_row(struct PqConnection *pq, const struct PqResult *result, int i,
                                   RecordRow *row);

/* What a row made of a tcc_record points into. */
typedef struct RecordRowText {
    StrBuf costs;
    char message[sizeof((tcc_measure_result *)0)->message + 1];
} RecordRowText;

/* A caller's record as a row, checked as tcc_record_add checks it (one line through the
 * store's context, naming `call`, where it is refused); text->costs is the caller's to free,
 * either way. */
tcc_status tci_record_row_of(tcc_record_store *store, const char *call, const tcc_record *record,
                             RecordRowText *text, RecordRow *row);
/* A row's result: its error, costs (a costs text that is no JSON array of numbers is refused),
 * times and message. */
tcc_status tci_record_result_of(tcc_record_store *store, const RecordRow *row,
                                tcc_measure_result *result);

/* The costs text of `count` seconds: "[0.000506, 0.000507]". */
void tci_record_costs_text(StrBuf *sb, const double *costs, int count);
/* The mean of `count` seconds (0 for none): tcc_measure_result_mean_cost's, and an imported
 * line's, whose costs may be more than a tcc_measure_result holds. The trials table's
 * mean_cost, which the best record's ORDER BY reads, is TCI_FAILED_COST instead for a trial
 * with an error or none timed, so that it sorts after every timed one rather than first. */
double tci_costs_mean(const double *costs, int count);
/* Writes `row` as one line of AutoTVM's log (no newline): false with a one-line reason
 * when its workload key or config is not the JSON that tcc writes. */
bool tci_record_line_write(StrBuf *sb, const RecordRow *row, char *error, size_t error_size);
/* Reads one line of a log (tcc's export or AutoTVM's) into `row`, its strings in `arena`:
 * false with a one-line reason when it is not such a line. */
bool tci_record_line_read(Arena *arena, const char *line, RecordRow *row, char *error,
                          size_t error_size);

#endif
