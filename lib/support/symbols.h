/*
 * The functions of a library opened at run time (libcuda, libnvJitLink, libxgboost), resolved
 * into a struct of function pointers from a table of their names and places, so that tcc
 * builds and runs without them and each says in one line what is missing.
 */
#ifndef TCI_SUPPORT_SYMBOLS_H
#define TCI_SUPPORT_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct TciSymbol {
    const char *name;
    const char *fallback; /* tried where `name` is missing (an older library), or NULL */
    size_t offset;        /* of the function pointer in the struct being filled */
    bool optional;        /* left NULL where missing, instead of refused */
} TciSymbol;

/* How a name is looked up: dlsym (tci_dlsym), or a test's table. */
typedef void *(*TciSymbolLookup)(void *library, const char *name);

void *tci_dlsym(void *library, const char *name);

/* Fills the struct at `api` from `library`, in the table's order. Returns the name of the
 * first required symbol missing (the pointers before it are filled), or NULL when none is. */
const char *tci_resolve_symbols(TciSymbolLookup lookup, void *library, const TciSymbol *table,
                                size_t count, void *api);

#endif
