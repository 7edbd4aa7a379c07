/*
 * The records' JSON (records.h): a minimal, strict reader (objects, arrays, strings with
 * escapes, numbers, true/false/null; nothing JSON does not allow) and a writer in the layout
 * Python's json.dumps gives AutoTVM's logs, so that what tcc writes reads the same in both.
 */
#include "tune/records.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper nesting than any log has is refused, so that a hostile line cannot exhaust the
 * stack of this recursive reader. */
enum { JSON_MAX_DEPTH = 64 };

typedef struct Reader {
    const char *start, *p;
    Arena *arena;
    char *error;
    size_t error_size;
    int depth;
} Reader;

static Json *read_value(Reader *r);

/* Records the first error only: later ones are its consequences. */
static Json *reader_fail(Reader *r, const char *format, ...) __attribute__((format(printf, 2, 3)));
static Json *reader_fail(Reader *r, const char *format, ...)
{
    if (r->error[0])
        return NULL;
    int n = snprintf(r->error, r->error_size, "column %d: ", (int)(r->p - r->start) + 1);
    if (n < 0 || (size_t)n >= r->error_size)
        return NULL;
    va_list args;
    va_start(args, format);
    vsnprintf(r->error + n, r->error_size - (size_t)n, format, args);
    va_end(args);
    return NULL;
}

static Json *out_of_memory(Reader *r)
{
    return reader_fail(r, "out of memory");
}

static void skip_space(Reader *r)
{
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
        r->p++;
}

static Json *new_value(Reader *r, JsonKind kind)
{
    Json *value = tci_arena_alloc(r->arena, sizeof *value);
    if (!value)
        return out_of_memory(r);
    value->kind = kind;
    return value;
}

static Json *read_literal(Reader *r, const char *word, JsonKind kind)
{
    size_t n = strlen(word);
    if (strncmp(r->p, word, n) != 0)
        return reader_fail(r, "expected '%s'", word);
    r->p += n;
    return new_value(r, kind);
}

static size_t digits(const char *p)
{
    size_t n = 0;
    while (p[n] >= '0' && p[n] <= '9')
        n++;
    return n;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static Json *read_number(Reader *r)
{
    const char *p = r->p;
    if (*p == '-')
        p++;
    size_t n = digits(p);
    if (n == 0 || (p[0] == '0' && n > 1)) {
        r->p = p;
        return reader_fail(r, n ? "a number with a leading zero" : "expected a digit");
    }
    p += n;
    if (*p == '.') {
        if (!(n = digits(++p))) {
            r->p = p;
            return reader_fail(r, "expected a digit after '.'");
        }
        p += n;
    }
    if (*p == 'e' || *p == 'E') {
        p += (p[1] == '+' || p[1] == '-') ? 2 : 1;
        if (!(n = digits(p))) {
            r->p = p;
            return reader_fail(r, "expected a digit in the exponent");
        }
        p += n;
    }
    Json *value = new_value(r, JSON_NUMBER);
    char *text = value ? tci_arena_alloc(r->arena, (size_t)(p - r->p) + 1) : NULL;
    if (!text)
        return out_of_memory(r);
    memcpy(text, r->p, (size_t)(p - r->p));
    value->text = text;
    value->number = strtod(text, NULL);
    if (!isfinite(value->number))
        return reader_fail(r, "the number %s is out of range", text);
    r->p = p;
    return value;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The four hex digits after "\u" at r->p; -1 (reported) when they are not. */
static long read_hex4(Reader *r)
{
    long code = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(r->p[i]);
        if (d < 0) {
            reader_fail(r, "expected four hex digits after \\u");
            return -1;
        }
        code = code * 16 + d;
    }
    r->p += 4;
    return code;
}

static char *put_utf8(char *out, long code)
{
    if (code < 0x80) {
        *out++ = (char)code;
    } else if (code < 0x800) {
        *out++ = (char)(0xc0 | (code >> 6));
        *out++ = (char)(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
        *out++ = (char)(0xe0 | (code >> 12));
        *out++ = (char)(0x80 | ((code >> 6) & 0x3f));
        *out++ = (char)(0x80 | (code & 0x3f));
    } else {
        *out++ = (char)(0xf0 | (code >> 18));
        *out++ = (char)(0x80 | ((code >> 12) & 0x3f));
        *out++ = (char)(0x80 | ((code >> 6) & 0x3f));
        *out++ = (char)(0x80 | (code & 0x3f));
    }
    return out;
}

/* A \uXXXX escape (r->p after the 'u'), a surrogate pair joined: the code point, or -1. */
static long read_unicode_escape(Reader *r)
{
    long code = read_hex4(r);
    if (code < 0)
        return -1;
    if (code >= 0xdc00 && code <= 0xdfff) {
        reader_fail(r, "a lone low surrogate \\u%04lx", code);
        return -1;
    }
    if (code >= 0xd800 && code <= 0xdbff) {
        if (r->p[0] != '\\' || r->p[1] != 'u') {
            reader_fail(r, "a high surrogate \\u%04lx without its low one", code);
            return -1;
        }
        r->p += 2;
        long low = read_hex4(r);
        if (low < 0)
            return -1;
        if (low < 0xdc00 || low > 0xdfff) {
            reader_fail(r, "a high surrogate \\u%04lx without its low one", code);
            return -1;
        }
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
    }
    if (code == 0) {
        reader_fail(r, "\\u0000 in a string");
        return -1;
    }
    return code;
}

/* One escape (r->p after the backslash) written at *out; false when it is not one. */
static bool read_escape(Reader *r, char **out)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    char c = *r->p;
    const char *known = c ? strchr(from, c) : NULL;
    if (known) {
        r->p++;
        *(*out)++ = to[known - from];
        return true;
    }
    if (c != 'u') {
        reader_fail(r, "an unknown escape");
        return false;
    }
    r->p++;
    long code = read_unicode_escape(r);
    if (code < 0)
        return false;
    *out = put_utf8(*out, code);
    return true;
}

/* A string at r->p (its opening quote), decoded into the arena. */
static const char *read_string_text(Reader *r)
{
    /* Decoded, a string is never longer than as written (an escape's UTF-8 is at most as
     * long as the escape). */
    const char *end = r->p + 1;
    while (*end && *end != '"')
        end += (end[0] == '\\' && end[1]) ? 2 : 1;
    char *text = tci_arena_alloc(r->arena, (size_t)(end - r->p) + 1);
    if (!text) {
        out_of_memory(r);
        return NULL;
    }
    char *out = text;
    r->p++;
    for (;;) {
        unsigned char c = (unsigned char)*r->p;
        if (c == '"')
            break;
        if (c == '\0') {
            reader_fail(r, "a string without its closing quote");
            return NULL;
        }
        if (c < 0x20) {
            reader_fail(r, "a control character in a string");
            return NULL;
        }
        if (c == '\\') {
            r->p++;
            if (!read_escape(r, &out))
                return NULL;
        } else {
            *out++ = (char)c;
            r->p++;
        }
    }
    r->p++;
    *out = '\0';
    return text;
}

static Json *read_string(Reader *r)
{
    Json *value = new_value(r, JSON_STRING);
    if (value && !(value->text = read_string_text(r)))
        return NULL;
    return value;
}

/* Appends `member` to `parent`'s list (kept with its last member in *last). */
static void append(Json *parent, Json **last, Json *member)
{
    if (*last)
        (*last)->next = member;
    else
        parent->first = member;
    *last = member;
    parent->count++;
}

static bool has_key(const Json *object, const char *key)
{
    return tci_json_member(object, key) != NULL;
}

/* An object's member (r->p at its key), appended. */
static bool read_member(Reader *r, Json *object, Json **last)
{
    if (*r->p != '"')
        return reader_fail(r, "expected a key (a string)"), false;
    const char *key_at = r->p;
    const char *key = read_string_text(r);
    if (!key)
        return false;
    if (has_key(object, key)) {
        r->p = key_at;
        return reader_fail(r, "the key \"%s\" twice", key), false;
    }
    skip_space(r);
    if (*r->p != ':')
        return reader_fail(r, "expected ':'"), false;
    r->p++;
    Json *member = read_value(r);
    if (!member)
        return false;
    member->key = key;
    append(object, last, member);
    return true;
}

/* An array or an object (r->p at its opening bracket). */
static Json *read_container(Reader *r, JsonKind kind)
{
    char close = kind == JSON_ARRAY ? ']' : '}';
    if (++r->depth > JSON_MAX_DEPTH)
        return reader_fail(r, "nested deeper than %d", JSON_MAX_DEPTH);
    Json *container = new_value(r, kind), *last = NULL;
    if (!container)
        return NULL;
    r->p++;
    skip_space(r);
    if (*r->p == close) {
        r->p++;
        r->depth--;
        return container;
    }
    for (;;) {
        if (kind == JSON_OBJECT) {
            if (!read_member(r, container, &last))
                return NULL;
        } else {
            Json *item = read_value(r);
            if (!item)
                return NULL;
            append(container, &last, item);
        }
        skip_space(r);
        if (*r->p == close)
            break;
        if (*r->p != ',')
            return reader_fail(r, "expected ',' or '%c'", close);
        r->p++;
        skip_space(r);
    }
    r->p++;
    r->depth--;
    return container;
}

static Json *read_value(Reader *r)
{
    skip_space(r);
    char c = *r->p;
    switch (c) {
    case '{':
        return read_container(r, JSON_OBJECT);
    case '[':
        return read_container(r, JSON_ARRAY);
    case '"':
        return read_string(r);
    case 't':
        return read_literal(r, "true", JSON_TRUE);
    case 'f':
        return read_literal(r, "false", JSON_FALSE);
    case 'n':
        return read_literal(r, "null", JSON_NULL);
    case '\0':
        return reader_fail(r, "unexpected end of text");
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return read_number(r);
        if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
            return reader_fail(r, "unexpected byte 0x%02x", (unsigned char)c);
        return reader_fail(r, "unexpected '%c'", c);
    }
}

Json *tci_json_parse(Arena *arena, const char *text, char *error, size_t error_size)
{
    Reader r = {text, text, arena, error, error_size, 0};
    error[0] = '\0';
    Json *value = read_value(&r);
    if (!value)
        return NULL;
    skip_space(&r);
    if (*r.p)
        return reader_fail(&r, "text after the value");
    return value;
}

const Json *tci_json_member(const Json *object, const char *key)
{
    if (!object || object->kind != JSON_OBJECT)
        return NULL;
    for (const Json *m = object->first; m; m = m->next)
        if (strcmp(m->key, key) == 0)
            return m;
    return NULL;
}

bool tci_json_int(const Json *value, int64_t *out)
{
    if (!value || value->kind != JSON_NUMBER || strpbrk(value->text, ".eE"))
        return false;
    errno = 0;
    long long parsed = strtoll(value->text, NULL, 10);
    if (errno)
        return false;
    *out = parsed;
    return true;
}

/* ---- writing ------------------------------------------------------------------------ */

void tci_json_write_string(StrBuf *sb, const char *text)
{
    tci_strbuf_printf(sb, "\"");
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        const char *escape = NULL;
        switch (*p) {
        case '"':
            escape = "\\\"";
            break;
        case '\\':
            escape = "\\\\";
            break;
        case '\n':
            escape = "\\n";
            break;
        case '\r':
            escape = "\\r";
            break;
        case '\t':
            escape = "\\t";
            break;
        case '\b':
            escape = "\\b";
            break;
        case '\f':
            escape = "\\f";
            break;
        }
        if (escape)
            tci_strbuf_printf(sb, "%s", escape);
        else if (*p < 0x20)
            tci_strbuf_printf(sb, "\\u%04x", *p);
        else
            tci_strbuf_printf(sb, "%c", *p);
    }
    tci_strbuf_printf(sb, "\"");
}

void tci_json_write_double(StrBuf *sb, double value)
{
    /* The fewest significant digits that read back as `value`, then Python's float repr:
     * positional from 1e-4 up to 1e16 (with ".0" when integral), else an exponent. */
    char text[64];
    int precision = 1;
    for (; precision < 17; precision++) {
        snprintf(text, sizeof text, "%.*e", precision - 1, value);
        if (strtod(text, NULL) == value)
            break;
    }
    snprintf(text, sizeof text, "%.*e", precision - 1, value);
    int exponent = atoi(strchr(text, 'e') + 1);
    if (exponent < -4 || exponent >= 16) {
        tci_strbuf_printf(sb, "%s", text);
        return;
    }
    int decimals = precision - 1 - exponent;
    snprintf(text, sizeof text, "%.*f", decimals > 0 ? decimals : 0, value);
    tci_strbuf_printf(sb, "%s%s", text, strchr(text, '.') ? "" : ".0");
}

void tci_json_write(StrBuf *sb, const Json *value)
{
    switch (value->kind) {
    case JSON_NULL:
        tci_strbuf_printf(sb, "null");
        return;
    case JSON_FALSE:
        tci_strbuf_printf(sb, "false");
        return;
    case JSON_TRUE:
        tci_strbuf_printf(sb, "true");
        return;
    case JSON_NUMBER:
        tci_strbuf_printf(sb, "%s", value->text);
        return;
    case JSON_STRING:
        tci_json_write_string(sb, value->text);
        return;
    case JSON_ARRAY:
    case JSON_OBJECT:
        break;
    }
    bool object = value->kind == JSON_OBJECT;
    tci_strbuf_printf(sb, object ? "{" : "[");
    for (const Json *m = value->first; m; m = m->next) {
        if (m != value->first)
            tci_strbuf_printf(sb, ", ");
        if (object) {
            tci_json_write_string(sb, m->key);
            tci_strbuf_printf(sb, ": ");
        }
        tci_json_write(sb, m);
    }
    tci_strbuf_printf(sb, object ? "}" : "]");
}
