/*
 * The results of tcc-conv and tcc-matmul as JSON or CSV, from one description of a record:
 * the report (cli_report.c) says each key and value once, and this writes them either as a
 * JSON object on one line (JSON Lines: one record a line, written as soon as it is known)
 * or as a CSV row whose columns are the keys' paths ("run.median_ms").
 *
 * So that every record has the same keys (and every CSV row the same columns), a part that
 * is absent (no run, no error) is still described, with `present` false: JSON writes it as
 * null and skips what is inside; CSV leaves its columns empty. A list of objects (the
 * launches) is a JSON array; in CSV each of its columns holds the items' values joined by
 * ';', and an empty list still describes one absent item, for its columns.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_out_init(CliOut *out, CliFormat format, FILE *file)
{
    memset(out, 0, sizeof *out);
    out->format = format;
    out->file = file;
}

void cli_out_free(CliOut *out)
{
    for (int i = 0; i < out->ncolumn; i++)
        free(out->values[i]);
    out->ncolumn = 0;
}

/* ---- JSON --------------------------------------------------------------------------------- */

/* Writes `text` as a JSON string: quotes, backslashes and control characters escaped, and
 * bytes that are not UTF-8 (a file name, an option's value) replaced by U+FFFD, so that any
 * strict parser reads it. */
static void json_string(FILE *f, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    fputc('"', f);
    while (*s) {
        unsigned char c = *s;
        if (c == '"' || c == '\\') {
            fputc('\\', f), fputc(c, f), s++;
        } else if (c == '\n') {
            fputs("\\n", f), s++;
        } else if (c == '\t') {
            fputs("\\t", f), s++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c), s++;
        } else if (c < 0x80) {
            fputc(c, f), s++;
        } else {
            /* A well-formed sequence: its length from the lead byte, continuation bytes after
             * it, no overlong form, no surrogate, nothing past U+10FFFF. */
            int len = c >= 0xc2 && c <= 0xdf   ? 2
                      : c >= 0xe0 && c <= 0xef ? 3
                      : c >= 0xf0 && c <= 0xf4 ? 4
                                               : 0;
            bool ok = len > 0;
            for (int i = 1; ok && i < len; i++)
                ok = (s[i] & 0xc0) == 0x80;
            if (ok && len == 3)
                ok = !(c == 0xe0 && s[1] < 0xa0) && !(c == 0xed && s[1] >= 0xa0);
            if (ok && len == 4)
                ok = !(c == 0xf0 && s[1] < 0x90) && !(c == 0xf4 && s[1] >= 0x90);
            if (ok) {
                fwrite(s, 1, (size_t)len, f);
                s += len;
            } else {
                fputs("\\ufffd", f);
                s++;
            }
        }
    }
    fputc('"', f);
}

/* The separator and key before a JSON value; false while inside an absent part. */
static bool json_key(CliOut *out, const char *key)
{
    if (out->suppressed)
        return false;
    if (out->depth > 0 && out->count[out->depth - 1]++ > 0)
        fputc(',', out->file);
    if (key) {
        json_string(out->file, key);
        fputc(':', out->file);
    }
    return true;
}

/* ---- CSV ---------------------------------------------------------------------------------- */

/* The column of `key` under the current path: found (a list's later items append to their
 * first item's columns) or added. -1 when there are too many. The report's paths are short
 * ("schedule.tutorial.block_row_warps"); a longer one would be cut. */
static int csv_column(CliOut *out, const char *key, bool *existing)
{
    char name[CLI_OUT_NAME];
    size_t path = strlen(out->path), len = strlen(key);
    path = path < sizeof name - 1 ? path : sizeof name - 1;
    len = len < sizeof name - 1 - path ? len : sizeof name - 1 - path;
    memcpy(name, out->path, path);
    memcpy(name + path, key, len);
    name[path + len] = '\0';
    *existing = false;
    if (out->item > 0) {
        for (int i = 0; i < out->ncolumn; i++) {
            if (strcmp(out->names[i], name) == 0) {
                *existing = true;
                return i;
            }
        }
    }
    if (out->ncolumn == CLI_OUT_COLUMNS)
        return -1;
    int i = out->ncolumn++;
    memcpy(out->names[i], name, sizeof name);
    out->values[i] = NULL;
    return i;
}

/* Appends `text` (NULL: nothing) to the column of `key`. */
static void csv_value(CliOut *out, const char *key, const char *text)
{
    bool existing;
    int i = csv_column(out, key, &existing);
    if (i < 0)
        return;
    const char *old = out->values[i] ? out->values[i] : "";
    const char *add = !out->suppressed && text ? text : "";
    size_t size = strlen(old) + strlen(add) + 2;
    char *value = malloc(size);
    if (!value)
        return;
    snprintf(value, size, "%s%s%s", old, existing ? ";" : "", add);
    free(out->values[i]);
    out->values[i] = value;
}

/* One CSV field, quoted when it holds a separator, a quote or a line break (RFC 4180). */
static void csv_field(FILE *f, const char *text)
{
    if (!strpbrk(text, ",\"\r\n")) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (const char *p = text; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

static void csv_row(CliOut *out)
{
    if (!out->header_written) {
        for (int i = 0; i < out->ncolumn; i++) {
            fputs(i ? "," : "", out->file);
            csv_field(out->file, out->names[i]);
        }
        fputc('\n', out->file);
        out->header_written = true;
    }
    for (int i = 0; i < out->ncolumn; i++) {
        fputs(i ? "," : "", out->file);
        csv_field(out->file, out->values[i] ? out->values[i] : "");
    }
    fputc('\n', out->file);
    cli_out_free(out);
}

/* ---- nesting ------------------------------------------------------------------------------ */

/* Enters a part named `key` (NULL: a list's item); `list` for a list. An absent item (an
 * empty list's, for the CSV columns) writes nothing in JSON, not even null. */
static void enter(CliOut *out, const char *key, bool present, bool list)
{
    if (out->format == CLI_FORMAT_JSON && (key || present) && json_key(out, key)) {
        if (present)
            fputc(list ? '[' : '{', out->file);
        else
            fputs("null", out->file);
    }
    if (out->depth == CLI_OUT_DEPTH)
        return; /* the report nests three deep; this never happens */
    out->levels[out->depth] = (CliOutLevel){.path_length = strlen(out->path),
                                            .list = list,
                                            .was_suppressed = out->suppressed,
                                            .item = out->item};
    out->count[out->depth] = 0;
    out->depth++;
    if (!present)
        out->suppressed = true;
    if (key) {
        size_t len = strlen(out->path);
        snprintf(out->path + len, sizeof out->path - len, "%s.", key);
    }
}

void cli_out_object(CliOut *out, const char *key, bool present)
{
    enter(out, key, present, false);
}

void cli_out_list(CliOut *out, const char *key)
{
    enter(out, key, true, true);
    out->item = 0;
}

void cli_out_item(CliOut *out, int index, bool present)
{
    enter(out, NULL, present, false);
    out->item = index;
}

void cli_out_end(CliOut *out)
{
    if (out->depth <= 1)
        return;
    out->depth--;
    const CliOutLevel *level = &out->levels[out->depth];
    if (out->format == CLI_FORMAT_JSON && !out->suppressed)
        fputc(level->list ? ']' : '}', out->file);
    out->suppressed = level->was_suppressed;
    out->path[level->path_length] = '\0';
    out->item = level->item;
}

void cli_out_begin(CliOut *out)
{
    cli_out_free(out);
    out->depth = 0;
    out->path[0] = '\0';
    out->suppressed = false;
    out->item = 0;
    if (out->format == CLI_FORMAT_JSON)
        fputc('{', out->file);
    out->count[0] = 0;
    out->depth = 1;
    out->levels[0] = (CliOutLevel){0};
}

int cli_exit_after_output(const char *tool, int code)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return code;
    fprintf(stderr, "%s: error: cannot write the output: %s\n", tool,
            errno ? strerror(errno) : "write error");
    return code == CLI_EXIT_OK ? CLI_EXIT_ERROR : code;
}

void cli_out_finish(CliOut *out)
{
    if (out->format == CLI_FORMAT_JSON)
        fputs("}\n", out->file);
    else if (out->format == CLI_FORMAT_CSV)
        csv_row(out);
    out->depth = 0;
    fflush(out->file);
}

/* ---- values ------------------------------------------------------------------------------- */

/* A value already written as JSON text (a number, true, null). */
static void value(CliOut *out, const char *key, const char *json, const char *csv)
{
    if (out->format == CLI_FORMAT_JSON) {
        if (json_key(out, key))
            fputs(json, out->file);
    } else if (out->format == CLI_FORMAT_CSV) {
        csv_value(out, key, csv);
    }
}

void cli_out_int(CliOut *out, const char *key, int64_t number)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)number);
    value(out, key, text, text);
}

void cli_out_uint(CliOut *out, const char *key, uint64_t number)
{
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)number);
    value(out, key, text, text);
}

void cli_out_double(CliOut *out, const char *key, double number)
{
    char text[40];
    if (!isfinite(number)) {
        value(out, key, "null", ""); /* JSON has no NaN or infinity */
        return;
    }
    /* The shortest of 15 and 17 digits that reads back as the same double. */
    snprintf(text, sizeof text, "%.15g", number);
    if (strtod(text, NULL) != number)
        snprintf(text, sizeof text, "%.17g", number);
    value(out, key, text, text);
}

void cli_out_bool(CliOut *out, const char *key, bool flag)
{
    value(out, key, flag ? "true" : "false", flag ? "true" : "false");
}

void cli_out_null(CliOut *out, const char *key)
{
    value(out, key, "null", "");
}

void cli_out_string(CliOut *out, const char *key, const char *text)
{
    if (!text) {
        cli_out_null(out, key);
    } else if (out->format == CLI_FORMAT_JSON) {
        if (json_key(out, key))
            json_string(out->file, text);
    } else if (out->format == CLI_FORMAT_CSV) {
        csv_value(out, key, text);
    }
}

void cli_out_dims(CliOut *out, const char *key, const int64_t dims[3])
{
    char json[96], csv[96];
    snprintf(json, sizeof json, "[%lld,%lld,%lld]", (long long)dims[0], (long long)dims[1],
             (long long)dims[2]);
    snprintf(csv, sizeof csv, "%lldx%lldx%lld", (long long)dims[0], (long long)dims[1],
             (long long)dims[2]);
    value(out, key, json, csv);
}

/* An int that is 0 where the library chooses: null there. */
void cli_out_count(CliOut *out, const char *key, int64_t number)
{
    if (number)
        cli_out_int(out, key, number);
    else
        cli_out_null(out, key);
}

/* The format named on a command line that did not parse: a usage error is then reported in
 * it too. The last --format wins, as in the parser. */
CliFormat cli_format_in_argv(int argc, char **argv)
{
    CliFormat format = CLI_FORMAT_TEXT;
    for (int i = 1; i < argc; i++) {
        const char *word = argv[i], *name = NULL;
        if (strncmp(word, "--format", 8) == 0)
            word += 8;
        else if (strncmp(word, "-format", 7) == 0)
            word += 7;
        else
            continue;
        if (*word == '=')
            name = word + 1;
        else if (*word == '\0' && i + 1 < argc)
            name = argv[++i];
        if (name && strcmp(name, "json") == 0)
            format = CLI_FORMAT_JSON;
        else if (name && strcmp(name, "csv") == 0)
            format = CLI_FORMAT_CSV;
        else if (name && strcmp(name, "text") == 0)
            format = CLI_FORMAT_TEXT;
    }
    return format;
}
