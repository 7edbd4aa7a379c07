/*
 * Resolving a run-time library's functions from a table (support/symbols.h).
 */
#include "support/symbols.h"

#include <dlfcn.h>
#include <string.h>

void *tci_dlsym(void *library, const char *name)
{
    return dlsym(library, name);
}

const char *tci_resolve_symbols(TciSymbolLookup lookup, void *library, const TciSymbol *table,
                                size_t count, void *api)
{
    for (size_t i = 0; i < count; i++) {
        const TciSymbol *symbol = &table[i];
        void *address = lookup(library, symbol->name);
        if (!address && symbol->fallback)
            address = lookup(library, symbol->fallback);
        if (!address && !symbol->optional)
            return symbol->name;
        /* POSIX guarantees that a data pointer can hold a function address. */
        memcpy((char *)api + symbol->offset, &address, sizeof address);
    }
    return NULL;
}
