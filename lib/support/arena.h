/*
 * The arena: every node of a function's IR and every lowering's kernel is allocated here and
 * freed at once with it, so nothing is freed one node at a time.
 */
#ifndef TCI_SUPPORT_ARENA_H
#define TCI_SUPPORT_ARENA_H

#include <setjmp.h>
#include <stddef.h>

typedef struct Arena Arena;

Arena *tci_arena_create(void);
void tci_arena_destroy(Arena *arena);
/* Zeroed memory; NULL only when the system is out of memory. */
void *tci_arena_alloc(Arena *arena, size_t bytes);
/* While set, an allocation failure longjmps to `recovery` instead of returning NULL. */
void tci_arena_set_recovery(Arena *arena, jmp_buf *recovery);
char *tci_arena_strdup(Arena *arena, const char *text);
char *tci_arena_printf(Arena *arena, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif
