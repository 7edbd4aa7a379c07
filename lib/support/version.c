/*
 * The version the library was built as (tcc/version.h, generated from project(... VERSION)),
 * so a program can compare it with the headers it was compiled against.
 */
#include "tcc/base.h"

const char *tcc_version_string(void)
{
    return TCC_VERSION_STRING;
}

int tcc_version_number(void)
{
    return TCC_VERSION_NUMBER;
}
