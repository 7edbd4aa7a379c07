/*
 * Config spaces and configs (tcc/tune.h, "configs" and "config spaces"), AutoTVM's
 * ConfigSpace and ConfigEntity: the knobs a template defined, in definition order, and a
 * point of their product numbered as AutoTVM numbers it (the first knob varies fastest).
 *
 * A split knob (define_split, policy "factors") is never stored as its list of tuples: its
 * tuples are numbered in AutoTVM's order by counting (split.c), so that a split of a large
 * extent into many outputs costs its divisors, not its (possibly millions of) tuples.
 */
#ifndef TCI_TUNE_CONFIG_H
#define TCI_TUNE_CONFIG_H

#include "tcc/tune.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* tcc_template's size before redundant_knobs, the first with a size field: a program built
 * against those headers still defines templates (tcc/tcc.h, "ABI"). */
#define TCI_TEMPLATE_FIRST_SIZE offsetof(tcc_template, redundant_knobs)
/* Checks a template's size (the first one to this library's), refusing it in one line. */
tcc_status tci_check_template_size(tcc_context *ctx, const tcc_template *tmpl);
/* The same without a context. */
bool tci_template_size_known(const tcc_template *tmpl);
/* Its redundant_knobs, NULL where its size predates the field. */
#define TCI_TEMPLATE_REDUNDANT_KNOBS(tmpl)                                                         \
    ((tmpl)->size > TCI_TEMPLATE_FIRST_SIZE ? (tmpl)->redundant_knobs : NULL)

/* Limits, each refused in one line where a template passes more. */
#define TCI_MAX_SPLIT_OUTPUTS 32         /* num_outputs of one split */
#define TCI_MAX_SPLIT_EXTENT (1LL << 40) /* its extent: factorized by trial division */
#define TCI_MAX_KNOB_VALUES 4096         /* values of one define_knob */
#define TCI_MAX_KNOB_NAME 128            /* characters of a knob's name */
#define TCI_MAX_SPLIT_PRIMES 16          /* distinct primes of an extent below 2^40: at most 11 */

/* One knob of a space. */
typedef struct TciKnob {
    char *name;
    tcc_knob_kind kind;
    int64_t length; /* how many values or tuples it takes */
    /* TCC_KNOB_SPLIT */
    int64_t extent;
    int num_outputs;
    int nprime;
    int64_t primes[TCI_MAX_SPLIT_PRIMES];
    int exponents[TCI_MAX_SPLIT_PRIMES];
    int ndivisor;
    int64_t *divisors;          /* of the extent, ascending */
    unsigned char *divisor_exp; /* ndivisor rows of nprime exponents */
    /* TCC_KNOB_OTHER */
    int count;
    int64_t *values;
} TciKnob;

struct tcc_config_space {
    int nknob, knob_cap;
    TciKnob *knobs;
    int64_t size; /* the product of the knobs' lengths */
    /* What the space was defined for, for the template's redundant_knobs (NULL: it has none),
     * and the context that function reports to. */
    const tcc_template *tmpl;
    tcc_workload workload;
    tcc_arch arch;
    tcc_context *redundancy_ctx;
};

struct tcc_config {
    tcc_context *ctx;
    bool defining;
    tcc_config_space *building;    /* defining: the space the defines add to */
    const tcc_config_space *space; /* applying: the space the config is a point of */
    int64_t index;
    int64_t *choices; /* applying: per knob, its value's or tuple's position */
    /* The first define that failed: a template that ignores a status still fails. */
    tcc_status failed;
    bool rejected; /* by the template (tcc_config_reject) */
};

/* ---- splits (split.c) -------------------------------------------------------------------- */

/* Fills a split knob's extent, num_outputs, primes, divisors and length (AutoTVM's SplitSpace
 * length: the ordered factorizations of extent into num_outputs factors). The knob's arrays are
 * freed by tci_knob_free. */
tcc_status tci_split_knob_init(tcc_context *ctx, TciKnob *knob, int64_t extent, int num_outputs);
/* Tuple `choice` (0 <= choice < length) of a split knob, outermost first, real values (the
 * outer factor too, never -1). */
void tci_split_unrank(const TciKnob *knob, int64_t choice, int64_t *factors);
/* The position of a tuple (outermost first; factors[0] may be -1 for "the rest"), or -1 when
 * it is not one of the knob's. */
int64_t tci_split_rank(const TciKnob *knob, const int64_t *factors);

void tci_knob_free(TciKnob *knob);

/* ---- formats ------------------------------------------------------------------------------- */

/* The config of `choices` (one per knob of space), applying, index computed. */
tcc_status tci_config_from_choices(tcc_context *ctx, const tcc_config_space *space,
                                   const int64_t *choices, tcc_config **out);

#endif
