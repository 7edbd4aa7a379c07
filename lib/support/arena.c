/* A bump allocator: every IR node of a function lives here and dies with it. */
#include "support/arena.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Chunk {
    struct Chunk *next;
    size_t used, size;
    max_align_t data[];
} Chunk;

struct Arena {
    Chunk *head;
    jmp_buf *on_out_of_memory;
};

enum { CHUNK_BYTES = 64 * 1024 };

Arena *tci_arena_create(void)
{
    return calloc(1, sizeof(Arena));
}

void tci_arena_destroy(Arena *arena)
{
    if (!arena)
        return;
    for (Chunk *c = arena->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(arena);
}

void *tci_arena_alloc(Arena *arena, size_t bytes)
{
    const size_t align = sizeof(max_align_t);
    bytes = (bytes + align - 1) / align * align;
    Chunk *c = arena->head;
    if (!c || c->used + bytes > c->size) {
        size_t size = bytes > CHUNK_BYTES ? bytes : CHUNK_BYTES;
        c = malloc(sizeof(Chunk) + size);
        if (!c) {
            /* Lowering runs under a recovery point (tci_arena_set_recovery): every node
             * is in the arena, so unwinding to it loses nothing and leaks nothing. */
            if (arena->on_out_of_memory)
                longjmp(*arena->on_out_of_memory, 1);
            return NULL;
        }
        c->used = 0;
        c->size = size;
        c->next = arena->head;
        arena->head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += bytes;
    memset(p, 0, bytes);
    return p;
}

char *tci_arena_strdup(Arena *arena, const char *text)
{
    size_t n = strlen(text) + 1;
    char *copy = tci_arena_alloc(arena, n);
    if (copy)
        memcpy(copy, text, n);
    return copy;
}

char *tci_arena_printf(Arena *arena, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (n < 0)
        return NULL;
    char *text = tci_arena_alloc(arena, (size_t)n + 1);
    if (!text)
        return NULL;
    va_start(args, format);
    vsnprintf(text, (size_t)n + 1, format, args);
    va_end(args);
    return text;
}

void tci_arena_set_recovery(Arena *arena, jmp_buf *recovery)
{
    arena->on_out_of_memory = recovery;
}
