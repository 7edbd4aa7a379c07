/*
 * Split knobs: AutoTVM's SplitSpace with policy "factors", numbered by counting, and
 * SplitEntity.apply on a stage.
 *
 * AutoTVM enumerates a split of P into N outputs depth first: the innermost factor in its
 * slowest loop, then the next one out, each over the divisors of P ascending, keeping the
 * tuples whose inner factors' product divides P; the outermost is the rest (printed -1). So
 * the tuples are in lexicographic order of (f[N-1], f[N-2], ..., f[1]). How many tuples
 * complete a prefix depends only on the prime exponents left: with r_i of prime p_i left and
 * k factors still to choose, prod_i C(r_i + k, k). Counting skips whole subtrees, so a tuple
 * is found from its position (and back) in N * divisors steps without listing the space.
 */
#include "support/context.h"
#include "te/te.h"
#include "tune/config.h"

#include <stdlib.h>
#include <string.h>

/* ---- counting ---------------------------------------------------------------------------- */

static int64_t gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* C(a + k, a), or -1 past INT64_MAX. Each step's c * (k + i) / i is exact; dividing i's
 * common part out of c first keeps the product from overflowing while the result fits. */
static int64_t binomial(int a, int k)
{
    int64_t c = 1;
    for (int64_t i = 1; i <= a; i++) {
        int64_t g = gcd(c, i);
        int64_t step = (k + i) / (i / g), next;
        if (__builtin_mul_overflow(c / g, step, &next))
            return -1;
        c = next;
    }
    return c;
}

/* The tuples of k factors whose product divides the part with exponents r left: -1 past
 * INT64_MAX. */
static int64_t completions(const TciKnob *knob, const int *r, int k)
{
    int64_t total = 1;
    for (int i = 0; i < knob->nprime; i++) {
        int64_t c = binomial(r[i], k);
        if (c < 0 || __builtin_mul_overflow(total, c, &total))
            return -1;
    }
    return total;
}

/* ---- the extent's primes and divisors ----------------------------------------------------- */

static void factorize(TciKnob *knob, int64_t n)
{
    knob->nprime = 0;
    for (int64_t p = 2; p * p <= n; p += p == 2 ? 1 : 2) {
        if (n % p)
            continue;
        int e = 0;
        while (n % p == 0) {
            n /= p;
            e++;
        }
        knob->primes[knob->nprime] = p;
        knob->exponents[knob->nprime++] = e;
    }
    if (n > 1) {
        knob->primes[knob->nprime] = n;
        knob->exponents[knob->nprime++] = 1;
    }
}

typedef struct Divisor {
    int64_t value;
    unsigned char exp[TCI_MAX_SPLIT_PRIMES];
} Divisor;

static int divisor_order(const void *a, const void *b)
{
    int64_t x = ((const Divisor *)a)->value, y = ((const Divisor *)b)->value;
    return (x > y) - (x < y);
}

/* Every divisor with its exponents, ascending: the order AutoTVM's get_factors gives. */
static tcc_status list_divisors(tcc_context *ctx, TciKnob *knob)
{
    int n = 1;
    for (int i = 0; i < knob->nprime; i++)
        n *= knob->exponents[i] + 1; /* below 2^40: at most 6720 divisors */
    Divisor *all = calloc((size_t)n, sizeof *all);
    knob->divisors = malloc(sizeof(int64_t) * (size_t)n);
    knob->divisor_exp = malloc((size_t)n * (size_t)(knob->nprime ? knob->nprime : 1));
    if (!all || !knob->divisors || !knob->divisor_exp) {
        free(all);
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory listing the divisors of %lld",
                        (long long)knob->extent);
    }
    all[0].value = 1;
    int count = 1;
    for (int i = 0; i < knob->nprime; i++) {
        int before = count;
        int64_t power = 1;
        for (int e = 1; e <= knob->exponents[i]; e++) {
            power *= knob->primes[i];
            for (int j = 0; j < before; j++) {
                all[count] = all[j];
                all[count].value *= power;
                all[count].exp[i] = (unsigned char)e;
                count++;
            }
        }
    }
    qsort(all, (size_t)count, sizeof *all, divisor_order);
    for (int j = 0; j < count; j++) {
        knob->divisors[j] = all[j].value;
        memcpy(&knob->divisor_exp[j * knob->nprime], all[j].exp, (size_t)knob->nprime);
    }
    knob->ndivisor = count;
    free(all);
    return TCC_OK;
}

tcc_status tci_split_knob_init(tcc_context *ctx, TciKnob *knob, int64_t extent, int num_outputs)
{
    if (extent < 1 || extent > TCI_MAX_SPLIT_EXTENT)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "define_split %s: the extent must be 1 to 2^40 (got %lld)", knob->name,
                        (long long)extent);
    if (num_outputs < 1 || num_outputs > TCI_MAX_SPLIT_OUTPUTS)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "define_split %s: num_outputs must be 1 to %d (got %d)", knob->name,
                        TCI_MAX_SPLIT_OUTPUTS, num_outputs);
    knob->kind = TCC_KNOB_SPLIT;
    knob->extent = extent;
    knob->num_outputs = num_outputs;
    factorize(knob, extent);
    tcc_status status = list_divisors(ctx, knob);
    if (status != TCC_OK)
        return status;
    knob->length = completions(knob, knob->exponents, num_outputs - 1);
    if (knob->length < 0)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "define_split %s: splitting %lld into %d factors has more than 2^63 "
                        "tuples",
                        knob->name, (long long)extent, num_outputs);
    return TCC_OK;
}

/* ---- position <-> tuple ------------------------------------------------------------------- */

/* Whether divisor d fits in what is left (r), and then r - d in left. */
static bool take(const TciKnob *knob, int d, const int *r, int *left)
{
    const unsigned char *e = &knob->divisor_exp[d * knob->nprime];
    for (int i = 0; i < knob->nprime; i++) {
        if (e[i] > r[i])
            return false;
        left[i] = r[i] - e[i];
    }
    return true;
}

static int64_t remaining_product(const TciKnob *knob, const int *r)
{
    int64_t v = 1;
    for (int i = 0; i < knob->nprime; i++)
        for (int e = 0; e < r[i]; e++)
            v *= knob->primes[i];
    return v;
}

void tci_split_unrank(const TciKnob *knob, int64_t choice, int64_t *factors)
{
    int r[TCI_MAX_SPLIT_PRIMES], left[TCI_MAX_SPLIT_PRIMES];
    memcpy(r, knob->exponents, sizeof r);
    for (int j = knob->num_outputs - 1; j >= 1; j--) {
        for (int d = 0; d < knob->ndivisor; d++) {
            if (!take(knob, d, r, left))
                continue;
            int64_t c = completions(knob, left, j - 1);
            if (choice < c) {
                factors[j] = knob->divisors[d];
                memcpy(r, left, sizeof r);
                break;
            }
            choice -= c;
        }
    }
    factors[0] = remaining_product(knob, r);
}

static int divisor_index(const TciKnob *knob, int64_t value)
{
    int lo = 0, hi = knob->ndivisor - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (knob->divisors[mid] == value)
            return mid;
        if (knob->divisors[mid] < value)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int64_t tci_split_rank(const TciKnob *knob, const int64_t *factors)
{
    int r[TCI_MAX_SPLIT_PRIMES], left[TCI_MAX_SPLIT_PRIMES];
    memcpy(r, knob->exponents, sizeof r);
    int64_t choice = 0;
    for (int j = knob->num_outputs - 1; j >= 1; j--) {
        int at = divisor_index(knob, factors[j]);
        if (at < 0 || !take(knob, at, r, left))
            return -1;
        for (int d = 0; d < at; d++) /* the subtrees of the smaller divisors come first */
            if (take(knob, d, r, left))
                choice += completions(knob, left, j - 1);
        take(knob, at, r, r);
    }
    if (factors[0] != -1 && factors[0] != remaining_product(knob, r))
        return -1;
    return choice;
}

void tci_knob_free(TciKnob *knob)
{
    free(knob->name);
    free(knob->divisors);
    free(knob->divisor_exp);
    free(knob->values);
    memset(knob, 0, sizeof *knob);
}

/* ---- SplitEntity.apply -------------------------------------------------------------------- */

/* As AutoTVM applies [f0, f1, ..., fN-1]: split the axis by f1 * ... * fN-1 (outer f0), its
 * inner part by f2 * ... * fN-1, and so on, so the axes are named as TVM names them
 * (f.outer, f.inner.outer, ..., f.inner.inner.inner). factors[0] is not read (-1 or the real
 * outer factor); the outer extents come from the axis. */
tcc_status tcc_split_by_factors(tcc_stage *stage, tcc_iter_var *axis, int num_outputs,
                                const int64_t *factors, tcc_iter_var **parts)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_context *ctx = stage->func->ctx;
    if (!axis || !factors || !parts)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "split_by_factors: NULL axis, factors or parts");
    if (num_outputs < 1 || num_outputs > TCI_MAX_SPLIT_OUTPUTS)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "split_by_factors of %s: num_outputs must be 1 to %d (got %d)",
                        axis->var->name, TCI_MAX_SPLIT_OUTPUTS, num_outputs);
    int64_t inner[TCI_MAX_SPLIT_OUTPUTS + 1];
    inner[num_outputs] = 1;
    for (int i = num_outputs - 1; i >= 1; i--) {
        if (factors[i] < 1)
            return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                            "split_by_factors of %s: factor %d must be at least 1 (got %lld)",
                            axis->var->name, i, (long long)factors[i]);
        if (__builtin_mul_overflow(inner[i + 1], factors[i], &inner[i]))
            return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                            "split_by_factors of %s: the factors' product overflows",
                            axis->var->name);
    }
    for (int i = 1; i < num_outputs; i++) {
        tcc_status status = tcc_split(stage, axis, inner[i], &parts[i - 1], &axis);
        if (status != TCC_OK)
            return status;
    }
    parts[num_outputs - 1] = axis;
    return TCC_OK;
}
