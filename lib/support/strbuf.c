/* The growing string (strbuf.h). */
#include "support/strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { STRBUF_INITIAL = 256 };

void tci_strbuf_init(StrBuf *sb)
{
    /* Allocate now so that `data` is a valid (empty) string even if nothing is printed. */
    sb->len = 0;
    sb->failed = false;
    sb->data = malloc(STRBUF_INITIAL);
    sb->cap = sb->data ? STRBUF_INITIAL : 0;
    if (sb->data)
        sb->data[0] = '\0';
    else
        sb->failed = true;
}

void tci_strbuf_free(StrBuf *sb)
{
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
}

/* Makes room for `need` bytes in all (terminator included); false (and failed) if not. */
static bool strbuf_reserve(StrBuf *sb, size_t need)
{
    if (need <= sb->cap)
        return true;
    size_t cap = sb->cap ? sb->cap : STRBUF_INITIAL;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            sb->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *data = realloc(sb->data, cap);
    if (!data) {
        sb->failed = true; /* the old block (what fit so far) stays valid */
        return false;
    }
    sb->data = data;
    sb->cap = cap;
    return true;
}

void tci_strbuf_printf(StrBuf *sb, const char *format, ...)
{
    if (sb->failed)
        return;
    va_list args, copy;
    va_start(args, format);
    va_copy(copy, args);
    int n = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    if (n < 0) {
        sb->failed = true;
    } else if (strbuf_reserve(sb, sb->len + (size_t)n + 1)) {
        vsnprintf(sb->data + sb->len, (size_t)n + 1, format, args);
        sb->len += (size_t)n;
    }
    va_end(args);
}
