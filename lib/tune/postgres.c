/*
 * PostgreSQL through libpq opened at run time (postgres.h). Only the few calls the records
 * store makes are declared here, with libpq's own signatures, so that building tcc needs no
 * libpq headers either.
 */
#include "tune/postgres.h"
#include "support/context.h"
#include "support/symbols.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct PGconn PGconn;
typedef struct PGresult PGresult;
typedef void (*PQnoticeProcessor)(void *arg, const char *message);

/* libpq-fe.h's values: ConnStatusType's CONNECTION_OK, ExecStatusType's two successes. */
enum { CONNECTION_OK = 0, PGRES_COMMAND_OK = 1, PGRES_TUPLES_OK = 2 };

typedef struct PqApi {
    PGconn *(*PQconnectdbParams)(const char *const *keywords, const char *const *values,
                                 int expand_dbname);
    int (*PQstatus)(const PGconn *conn);
    char *(*PQerrorMessage)(const PGconn *conn);
    void (*PQfinish)(PGconn *conn);
    PQnoticeProcessor (*PQsetNoticeProcessor)(PGconn *conn, PQnoticeProcessor proc, void *arg);
    PGresult *(*PQexecParams)(PGconn *conn, const char *command, int nparams,
                              const unsigned int *types, const char *const *values,
                              const int *lengths, const int *formats, int result_format);
    int (*PQresultStatus)(const PGresult *result);
    char *(*PQresultErrorMessage)(const PGresult *result);
    int (*PQntuples)(const PGresult *result);
    char *(*PQgetvalue)(const PGresult *result, int row, int column);
    int (*PQgetisnull)(const PGresult *result, int row, int column);
    void (*PQclear)(PGresult *result);
} PqApi;

#define PQ_SYMBOL(name)                                                                            \
    {                                                                                              \
#name, NULL, offsetof(PqApi, name), false                                                  \
    }
static const TciSymbol pq_symbols[] = {
    PQ_SYMBOL(PQconnectdbParams),
    PQ_SYMBOL(PQstatus),
    PQ_SYMBOL(PQerrorMessage),
    PQ_SYMBOL(PQfinish),
    PQ_SYMBOL(PQsetNoticeProcessor),
    PQ_SYMBOL(PQexecParams),
    PQ_SYMBOL(PQresultStatus),
    PQ_SYMBOL(PQresultErrorMessage),
    PQ_SYMBOL(PQntuples),
    PQ_SYMBOL(PQgetvalue),
    PQ_SYMBOL(PQgetisnull),
    PQ_SYMBOL(PQclear),
};

/* Debian's libpq5 installs the first. */
static const char DEFAULT_LIBRARY[] = "libpq.so.5";

struct PqConnection {
    tcc_context *ctx;
    void *library;
    PqApi api;
    PGconn *conn;
    const char *name; /* the caller's copy of the URL without its password */
};

/* libpq's messages end in a newline and may span lines (a hint on the second): one line. */
static void one_line(char *text)
{
    char *out = text;
    for (const char *p = text; *p; p++) {
        if (*p == '\n' || *p == '\t' || *p == '\r') {
            if (out > text && out[-1] != ' ')
                *out++ = ' ';
        } else {
            *out++ = *p;
        }
    }
    while (out > text && out[-1] == ' ')
        out--;
    *out = '\0';
}

tcc_status tci_pq_fail(PqConnection *pq, tcc_status status, const char *format, ...)
{
    char text[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    one_line(text);
    return tci_fail(pq->ctx, status, "records %s: %s", pq->name, text);
}

/* The URL without a password: "postgresql://user:secret@host/db?password=x" names itself
 * "postgresql://user@host/db?password=...". */
static char *without_password(const char *url)
{
    char *name = strdup(url);
    if (!name)
        return NULL;
    char *authority = strstr(name, "://");
    if (authority) {
        authority += 3;
        char *at = authority + strcspn(authority, "@/?"), *colon = strchr(authority, ':');
        if (*at == '@' && colon && colon < at)
            memmove(colon, at, strlen(at) + 1);
    }
    /* Room for "..." in place of a value shorter than it: the name grows by at most 3 a value. */
    size_t size = 2 * strlen(name) + 4;
    char *masked = malloc(size), *out = masked;
    for (const char *p = name; masked && *p;) {
        const char *key = strstr(p, "password=");
        if (!key) {
            out += snprintf(out, size - (size_t)(out - masked), "%s", p);
            break;
        }
        key += strlen("password=");
        out += snprintf(out, size - (size_t)(out - masked), "%.*s...", (int)(key - p), p);
        p = key + strcspn(key, "&");
    }
    free(name);
    return masked;
}

static tcc_status open_library(PqConnection *pq)
{
    const char *chosen = getenv("TCC_LIBPQ");
    const char *file = chosen && chosen[0] ? chosen : DEFAULT_LIBRARY;
    /* RTLD_NODELETE: libpq's TLS library registers handlers that outlive the connection. */
    pq->library = dlopen(file, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!pq->library)
        return tci_pq_fail(pq, TCC_ERROR_UNSUPPORTED,
                           "PostgreSQL needs libpq: cannot load %s%s (Debian: apt-get install "
                           "libpq5): %s",
                           file, file == chosen ? " (TCC_LIBPQ)" : "", dlerror());
    const char *missing = tci_resolve_symbols(tci_dlsym, pq->library, pq_symbols,
                                              sizeof pq_symbols / sizeof *pq_symbols, &pq->api);
    return missing ? tci_pq_fail(pq, TCC_ERROR_UNSUPPORTED, "%s has no symbol %s: not libpq", file,
                                 missing)
                   : TCC_OK;
}

/* libpq's message of a failed connection without the URL's password: the URL it quotes named
 * as `name`, and what follows a ':' of the user part or "password=" never shown. */
static void scrub(const char *url, const char *name, const char *message, char *out, size_t size)
{
    out[0] = '\0';
    size_t n = strlen(url), used = 0;
    for (const char *p = message; *p && used + 1 < size;) {
        if (strncmp(p, url, n) == 0) {
            used += (size_t)snprintf(out + used, size - used, "%s", name);
            p += n;
        } else {
            out[used++] = *p++;
            out[used] = '\0';
        }
    }
    /* A message quoting a part of the URL (a token it could not decode) may still hold it. */
    const char *authority = strstr(url, "://"), *at = authority ? strchr(authority, '@') : NULL;
    const char *colon = authority ? strchr(authority + 3, ':') : NULL;
    if (at && colon && colon < at && at - colon > 1) {
        char secret[256];
        snprintf(secret, sizeof secret, "%.*s", (int)(at - colon - 1), colon + 1);
        for (char *hit = strstr(out, secret); hit; hit = strstr(hit, secret))
            memset(hit, '.', strlen(secret));
    }
}

static void drop_notice(void *arg, const char *message)
{
    (void)arg, (void)message;
}

/* A server that stops answering (its host gone, no reset sent) is given up after seconds, not
 * after TCP's quarter of an hour: a connection's time limit and keepalives, which the URL may
 * set otherwise (it is read after them, and overrides them). */
static const char *const CONNECT_KEYWORDS[] = {
    "connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count", "dbname", NULL,
};

tcc_status tci_pq_connect(tcc_context *ctx, const char *url, char **name, PqConnection **out)
{
    *out = NULL;
    if (!(*name = without_password(url)))
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    PqConnection *pq = calloc(1, sizeof *pq);
    if (!pq)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "records: out of memory");
    pq->ctx = ctx;
    pq->name = *name;
    tcc_status status = open_library(pq);
    if (status == TCC_OK) {
        const char *const values[] = {"10", "10", "5", "3", url, NULL};
        pq->conn = pq->api.PQconnectdbParams(CONNECT_KEYWORDS, values, 1);
        if (!pq->conn) {
            status = tci_pq_fail(pq, TCC_ERROR_OUT_OF_MEMORY, "out of memory connecting");
        } else if (pq->api.PQstatus(pq->conn) != CONNECTION_OK) {
            char message[1024];
            scrub(url, *name, pq->api.PQerrorMessage(pq->conn), message, sizeof message);
            status = tci_pq_fail(pq, TCC_ERROR_INVALID_ARGUMENT, "cannot connect: %s", message);
        }
    }
    if (status == TCC_OK) {
        pq->api.PQsetNoticeProcessor(pq->conn, drop_notice, NULL);
        /* Doubles as text that reads back to the same bits (servers before 12 round them). */
        status = tci_pq_exec(pq, "setting extra_float_digits", "SET extra_float_digits = 3", 0,
                             NULL, NULL);
    }
    if (status != TCC_OK) {
        tci_pq_close(pq);
        return status;
    }
    *out = pq;
    return TCC_OK;
}

void tci_pq_close(PqConnection *pq)
{
    if (!pq)
        return;
    if (pq->conn)
        pq->api.PQfinish(pq->conn);
    if (pq->library)
        dlclose(pq->library);
    free(pq);
}

tcc_status tci_pq_exec(PqConnection *pq, const char *what, const char *sql, int nparam,
                       const char *const *params, PqResult **result)
{
    if (result)
        *result = NULL;
    PGresult *r = pq->api.PQexecParams(pq->conn, sql, nparam, NULL, params, NULL, NULL, 0);
    int state = r ? pq->api.PQresultStatus(r) : -1;
    if (state != PGRES_COMMAND_OK && state != PGRES_TUPLES_OK) {
        tcc_status status = tci_pq_fail(
            pq, r ? TCC_ERROR_INVALID_ARGUMENT : TCC_ERROR_OUT_OF_MEMORY, "%s: %s", what,
            r ? pq->api.PQresultErrorMessage(r) : pq->api.PQerrorMessage(pq->conn));
        pq->api.PQclear(r);
        return status;
    }
    if (result)
        *result = (PqResult *)r;
    else
        pq->api.PQclear(r);
    return TCC_OK;
}

void tci_pq_clear(PqConnection *pq, PqResult *result)
{
    if (result)
        pq->api.PQclear((PGresult *)result);
}

int tci_pq_rows(PqConnection *pq, const PqResult *result)
{
    return pq->api.PQntuples((const PGresult *)result);
}

const char *tci_pq_value(PqConnection *pq, const PqResult *result, int row, int column)
{
    const PGresult *r = (const PGresult *)result;
    return pq->api.PQgetisnull(r, row, column) ? "" : pq->api.PQgetvalue(r, row, column);
}
