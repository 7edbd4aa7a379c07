/*
 * Reading a config back: the entity list tcc_config_format writes, '[["tile_f", [-1, 2, 64,
 * 1]], ..., ["unroll_explicit", 0]]'. So that AutoTVM's own logs and printouts read too, an
 * entry may carry its log's type tag (["tile_f", "sp", [-1, 2, 64, 1]]), the outermost factor
 * may be -1 or its real value, and Python's tuples and quotes are taken as JSON's lists and
 * quotes ("[('tile_f', [-1, 2, 64, 1]), ...]", as the tutorial prints a config).
 */
#include "support/context.h"
#include "tune/config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct Parser {
    tcc_context *ctx;
    const tcc_config_space *space;
    const char *text;
    const char *at;
    int64_t *choices; /* per knob; -1 until given */
} Parser;

static tcc_status parse_error(Parser *p, const char *expected)
{
    return tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT, "config: expected %s at offset %td",
                    expected, p->at - p->text);
}

static void skip_space(Parser *p)
{
    while (isspace((unsigned char)*p->at))
        p->at++;
}

/* Consumes `c` ('[' also as '(', ']' also as ')': Python's tuples) after any space. */
static bool accept(Parser *p, char c)
{
    skip_space(p);
    char alt = c == '[' ? '(' : c == ']' ? ')' : c;
    if (*p->at != c && *p->at != alt)
        return false;
    p->at++;
    return true;
}

static bool peek(Parser *p, char c)
{
    skip_space(p);
    return *p->at == c || (c == '[' && *p->at == '(') || (c == '"' && *p->at == '\'');
}

/* A quoted name (double or single quotes, no escapes: knob names have none) into buf. */
static tcc_status parse_string(Parser *p, char *buf, size_t size)
{
    skip_space(p);
    char quote = *p->at;
    if (quote != '"' && quote != '\'')
        return parse_error(p, "a quoted name");
    const char *start = ++p->at;
    while (*p->at && *p->at != quote && *p->at != '\\')
        p->at++;
    if (*p->at != quote)
        return parse_error(p, "a closing quote without escapes");
    size_t n = (size_t)(p->at - start);
    p->at++;
    if (n >= size)
        return tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "config: a name of %zu characters at offset %td is too long", n,
                        start - p->text);
    memcpy(buf, start, n);
    buf[n] = '\0';
    return TCC_OK;
}

static tcc_status parse_int(Parser *p, int64_t *out)
{
    skip_space(p);
    bool negative = *p->at == '-';
    const char *digits = p->at + negative;
    if (!isdigit((unsigned char)*digits))
        return parse_error(p, "an integer");
    int64_t v = 0;
    for (p->at = digits; isdigit((unsigned char)*p->at); p->at++) {
        int d = *p->at - '0';
        /* accumulate negatively so that INT64_MIN reads too */
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, d, &v))
            return tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "config: the integer at offset %td does not fit 64 bits",
                            digits - p->text);
    }
    if (!negative && v == INT64_MIN)
        return tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "config: the integer at offset %td does not fit 64 bits", digits - p->text);
    *out = negative ? v : -v;
    return TCC_OK;
}

/* "[-1, 2, 64, 1]" for split knob k: its tuple's position. */
static tcc_status parse_split(Parser *p, int k, const char *name)
{
    const TciKnob *knob = &p->space->knobs[k];
    int64_t factors[TCI_MAX_SPLIT_OUTPUTS];
    if (!accept(p, '['))
        return parse_error(p, "a list of split factors");
    int n = 0;
    do {
        int64_t v;
        tcc_status status = parse_int(p, &v);
        if (status != TCC_OK)
            return status;
        if (n < TCI_MAX_SPLIT_OUTPUTS)
            factors[n] = v;
        n++;
    } while (accept(p, ','));
    if (!accept(p, ']'))
        return parse_error(p, "',' or ']' in a list of split factors");
    if (n != knob->num_outputs)
        return tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "config: knob %s takes %d factors (got %d)", name, knob->num_outputs, n);
    int64_t choice = tci_split_rank(knob, factors);
    if (choice < 0)
        return tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "config: knob %s: the factors are not a split of %lld into %d", name,
                        (long long)knob->extent, knob->num_outputs);
    p->choices[k] = choice;
    return TCC_OK;
}

static tcc_status parse_option(Parser *p, int k, const char *name)
{
    const TciKnob *knob = &p->space->knobs[k];
    int64_t v;
    tcc_status status = parse_int(p, &v);
    if (status != TCC_OK)
        return status;
    for (int i = 0; i < knob->count; i++) {
        if (knob->values[i] == v) {
            p->choices[k] = i;
            return TCC_OK;
        }
    }
    return tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT,
                    "config: knob %s: %lld is not one of its %d values", name, (long long)v,
                    knob->count);
}

/* ["name", value] or ["name", "sp"|"ot", value]. */
static tcc_status parse_entry(Parser *p)
{
    char name[TCI_MAX_KNOB_NAME + 1], tag[8];
    if (!accept(p, '['))
        return parse_error(p, "'[' opening a knob");
    tcc_status status = parse_string(p, name, sizeof name);
    if (status != TCC_OK)
        return status;
    int k = -1;
    for (int i = 0; i < p->space->nknob && k < 0; i++)
        if (strcmp(p->space->knobs[i].name, name) == 0)
            k = i;
    if (k < 0)
        return tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT, "config: the space has no knob %s",
                        name);
    if (p->choices[k] >= 0)
        return tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT, "config: knob %s is given twice", name);
    bool split = p->space->knobs[k].kind == TCC_KNOB_SPLIT;
    if (!accept(p, ','))
        return parse_error(p, "',' after a knob's name");
    if (peek(p, '"')) {
        if ((status = parse_string(p, tag, sizeof tag)) != TCC_OK)
            return status;
        if (strcmp(tag, split ? "sp" : "ot") != 0)
            return tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "config: knob %s is a %s, tagged '%s' (expected '%s')", name,
                            split ? "split" : "knob", tag, split ? "sp" : "ot");
        if (!accept(p, ','))
            return parse_error(p, "',' after a knob's tag");
    }
    status = split ? parse_split(p, k, name) : parse_option(p, k, name);
    if (status != TCC_OK)
        return status;
    if (!accept(p, ']'))
        return parse_error(p, "']' closing a knob");
    return TCC_OK;
}

static tcc_status parse_entries(Parser *p)
{
    if (!accept(p, '['))
        return parse_error(p, "'[' opening the list of knobs");
    int given = 0;
    if (!accept(p, ']')) {
        do {
            tcc_status status = parse_entry(p);
            if (status != TCC_OK)
                return status;
            given++;
        } while (accept(p, ','));
        if (!accept(p, ']'))
            return parse_error(p, "',' or ']' in the list of knobs");
    }
    skip_space(p);
    if (*p->at)
        return parse_error(p, "the end after the list of knobs");
    if (given != p->space->nknob) {
        int missing = 0;
        while (p->choices[missing] >= 0)
            missing++;
        return tci_fail(p->ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "config: %d knobs given, the space has %d (%s missing)", given,
                        p->space->nknob, p->space->knobs[missing].name);
    }
    return TCC_OK;
}

tcc_status tcc_config_parse(tcc_context *ctx, const tcc_config_space *space, const char *text,
                            tcc_config **out)
{
    if (!ctx)
        return TCC_ERROR_INVALID_ARGUMENT;
    if (!space || !text || !out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "config_parse: NULL space, text or out");
    *out = NULL;
    Parser p = {.ctx = ctx, .space = space, .text = text, .at = text};
    p.choices = malloc(sizeof(int64_t) * (size_t)(space->nknob ? space->nknob : 1));
    if (!p.choices)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory parsing a config");
    for (int i = 0; i < space->nknob; i++)
        p.choices[i] = -1;
    tcc_status status = parse_entries(&p);
    if (status == TCC_OK)
        status = tci_config_from_choices(ctx, space, p.choices, out);
    free(p.choices);
    return status;
}
