/*
 * A growing string: the printers write into it. An allocation that fails marks it failed
 * and keeps what fit, so a printer never has to check each write.
 */
#ifndef TCI_SUPPORT_STRBUF_H
#define TCI_SUPPORT_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct StrBuf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; data holds what fit */
} StrBuf;
void tci_strbuf_init(StrBuf *sb);
void tci_strbuf_free(StrBuf *sb);
void tci_strbuf_printf(StrBuf *sb, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif
