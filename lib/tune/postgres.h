/*
 * PostgreSQL through libpq, opened at run time like libcuda (libpq.so.5, or the file
 * $TCC_LIBPQ names), so that tcc builds and runs without it and says so when a URL needs it:
 * a connection, statements with text parameters, and their failures as one line naming the
 * server by its URL without the password. The records store's PostgreSQL engine
 * (records_postgres.c) runs on it.
 */
#ifndef TCI_TUNE_POSTGRES_H
#define TCI_TUNE_POSTGRES_H

#include "tcc/base.h"

#include <stdbool.h>

typedef struct PqConnection PqConnection;
/* A statement's result rows (opaque: libpq's PGresult). */
typedef struct PqResult PqResult;

/* Opens libpq and connects to `url`; *name receives the URL without its password (malloc'd,
 * for messages; the caller frees it), set even when the connection fails. The server's notices
 * are dropped (the library prints nothing), and floats are sent in full precision. */
tcc_status tci_pq_connect(tcc_context *ctx, const char *url, char **name, PqConnection **out);
void tci_pq_close(PqConnection *pq);

/* Runs `sql` with `nparam` text parameters ($1...; NULL is SQL's NULL). *result (when not NULL)
 * receives its rows, to be freed with tci_pq_clear; a failure is one line: "records NAME:
 * WHAT: the server's message". */
tcc_status tci_pq_exec(PqConnection *pq, const char *what, const char *sql, int nparam,
                       const char *const *params, PqResult **result);
void tci_pq_clear(PqConnection *pq, PqResult *result);
int tci_pq_rows(PqConnection *pq, const PqResult *result);
/* The text of a column of a row ("" for NULL), valid until tci_pq_clear. */
const char *tci_pq_value(PqConnection *pq, const PqResult *result, int row, int column);
/* A failure of the connection's: "records NAME: " and the formatted text. */
tcc_status tci_pq_fail(PqConnection *pq, tcc_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

#endif
