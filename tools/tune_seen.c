/*
 * The kernels a measurer has measured, by identity (tune_build.c's kernel_identity: what the
 * GPU runs). Configs that differ only in knobs their kernel does not read (a wgmma kernel has
 * no warp tiles, shared-memory layout or MMA pass order to honour) build the same kernel, and
 * a model-based tuner proposes such neighbours of its best point by the dozen: measuring each
 * again would spend a trial on timing noise. MetaSchedule skips a candidate whose program's
 * structural hash it has measured; tcc-tune copies the earlier result instead, so that the
 * tuner still learns what the point scores.
 *
 * An open-addressing table: a kernel is claimed by the first trial that builds it (its batch
 * and slot), and holds that trial's result once measured, where the result is the kernel's
 * own (it ran, right or wrong, or the driver refused it); one that failed for what may pass
 * (a timeout, a runner lost) is measured again when met again. A trial that builds a kernel
 * claimed in its own batch copies the result at the batch's end.
 */
#include "tune_measure.h"

#include <stdlib.h>

static TuneSeenKernel *slot_of(const TuneSeen *seen, uint64_t identity)
{
    size_t mask = (size_t)seen->capacity - 1;
    size_t at = (size_t)(identity * 0x9e3779b97f4a7c15ull) & mask;
    while (seen->kernels[at].identity && seen->kernels[at].identity != identity)
        at = (at + 1) & mask;
    return &seen->kernels[at];
}

static bool grow(TuneSeen *seen)
{
    int64_t capacity = seen->capacity ? 2 * seen->capacity : 256, old_capacity = seen->capacity;
    TuneSeenKernel *old = seen->kernels;
    seen->kernels = calloc((size_t)capacity, sizeof *seen->kernels);
    if (!seen->kernels) {
        seen->kernels = old;
        return false;
    }
    seen->capacity = capacity;
    for (int64_t i = 0; i < old_capacity; i++)
        if (old[i].identity)
            *slot_of(seen, old[i].identity) = old[i];
    free(old);
    return true;
}

static TuneSeenKernel *find(const TuneSeen *seen, uint64_t identity)
{
    if (!seen->capacity || !identity)
        return NULL;
    TuneSeenKernel *k = slot_of(seen, identity);
    return k->identity ? k : NULL;
}

/* The kernel, claimed by trial `slot` of `batch` (*claimed) unless it was measured or claimed
 * in this batch already; NULL when out of memory (the trial is then measured). */
static TuneSeenKernel *claim(TuneSeen *seen, uint64_t identity, int64_t index, uint64_t batch,
                             int slot, bool *claimed)
{
    *claimed = false;
    TuneSeenKernel *k = find(seen, identity);
    if (k && (k->measured || k->batch == batch))
        return k;
    if (!k) {
        if (2 * (seen->count + 1) > seen->capacity && !grow(seen))
            return NULL;
        k = slot_of(seen, identity);
        seen->count++;
    }
    *k = (TuneSeenKernel){.identity = identity, .index = index, .batch = batch, .slot = slot};
    *claimed = true;
    return k;
}

/* The trial's result as the earlier one of its kernel, but its own build time and timestamp. */
static void copy_result(tcc_measure_result *to, const tcc_measure_result *from)
{
    double build_s = to->all_cost, timestamp = to->timestamp;
    *to = *from;
    to->all_cost = build_s;
    to->timestamp = timestamp;
}

bool tune_seen_start_batch(TuneSeen *seen, int count)
{
    if (count > seen->trial_capacity) {
        TuneSeenTrial *trials = realloc(seen->trials, sizeof *trials * (size_t)count);
        if (!trials)
            return false;
        seen->trials = trials;
        seen->trial_capacity = count;
    }
    seen->batch++;
    seen->trial_count = count;
    for (int i = 0; i < count; i++)
        seen->trials[i] = (TuneSeenTrial){.same_as = -1, .same_slot = -1};
    return true;
}

bool tune_seen_copies(TuneSeen *seen, int slot, int64_t index, uint64_t identity,
                      tcc_measure_result *results)
{
    TuneSeenTrial *trial = &seen->trials[slot];
    trial->index = index;
    trial->identity = identity;
    bool claimed = false;
    TuneSeenKernel *k = identity ? claim(seen, identity, index, seen->batch, slot, &claimed) : NULL;
    if (!k || claimed)
        return false;
    trial->same_as = k->index;
    if (k->measured)
        copy_result(&results[slot], &k->result);
    else
        trial->same_slot = k->slot;
    return true;
}

/* The builders end in any order, and the first of a kernel's trials to be built claims it. Its
 * results now shared, the kernel's first trial in the batch is named the measured one (its
 * config the one later trials copy), so that what is recorded does not depend on that race. */
static void name_first_trials(TuneSeen *seen)
{
    for (int slot = 0; slot < seen->trial_count; slot++) {
        TuneSeenTrial *first = &seen->trials[slot];
        int claimant = first->same_slot;
        TuneSeenKernel *k = claimant > slot ? find(seen, first->identity) : NULL;
        if (!k || k->slot != claimant)
            continue;
        k->slot = slot;
        k->index = first->index;
        for (int other = slot + 1; other < seen->trial_count; other++) {
            TuneSeenTrial *trial = &seen->trials[other];
            if (other == claimant || trial->same_slot == claimant) {
                trial->same_slot = slot;
                trial->same_as = first->index;
            }
        }
        first->same_slot = -1;
        first->same_as = -1;
    }
}

void tune_seen_end_batch(TuneSeen *seen, tcc_measure_result *results)
{
    for (int slot = 0; slot < seen->trial_count; slot++) {
        const TuneSeenTrial *trial = &seen->trials[slot];
        TuneSeenKernel *k = trial->same_as < 0 ? find(seen, trial->identity) : NULL;
        if (k && k->batch == seen->batch && k->slot == slot && !k->measured) {
            tcc_measure_error e = results[slot].error;
            k->result = results[slot];
            k->measured = e == TCC_MEASURE_OK || e == TCC_MEASURE_WRONG_ANSWER ||
                          e == TCC_MEASURE_COMPILE_DEVICE;
        }
    }
    for (int slot = 0; slot < seen->trial_count; slot++)
        if (seen->trials[slot].same_slot >= 0)
            copy_result(&results[slot], &results[seen->trials[slot].same_slot]);
    name_first_trials(seen);
}

int64_t tune_seen_same_as(const TuneSeen *seen, int slot)
{
    return slot >= 0 && slot < seen->trial_count ? seen->trials[slot].same_as : -1;
}

void tune_seen_free(TuneSeen *seen)
{
    free(seen->kernels);
    free(seen->trials);
    *seen = (TuneSeen){0};
}
