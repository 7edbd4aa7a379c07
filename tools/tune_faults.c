/*
 * Fault injection for testing tcc-tune's isolation (TCC_TUNE_INJECT_FAULT): the shares of the
 * trials that run a faulting kernel instead of their own, and which trial draws which.
 */
#include "tune_measure.h"
#include "tune_runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "trap:0.1,oob:0.1,spin:0.05,seed:7": each fault's share of the trials. */
bool tune_faults_parse(const char *text, TuneFaultShares *faults, char *error, size_t error_size)
{
    *faults = (TuneFaultShares){.seed = 1};
    double total = 0;
    for (const char *at = text; at && *at;) {
        size_t length = strcspn(at, ":");
        char *end = NULL;
        double value = at[length] == ':' ? strtod(at + length + 1, &end) : -1;
        int fault = -1;
        for (int f = 1; f < TUNE_FAULT_COUNT; f++)
            if (strlen(tune_fault_names[f]) == length && !strncmp(at, tune_fault_names[f], length))
                fault = f;
        bool seed = length == 4 && !strncmp(at, "seed", 4);
        if (!end || (fault < 0 && !seed) || value < 0 || (*end && *end != ',')) {
            snprintf(error, error_size,
                     "TCC_TUNE_INJECT_FAULT: expected KIND:SHARE,... (trap, oob, spin, hang, "
                     "crash; seed:N), got '%s'",
                     text);
            return false;
        }
        if (seed)
            faults->seed = (uint64_t)value;
        else
            total += faults->share[fault] = value;
        at = *end ? end + 1 : end;
    }
    if (total > 1.0) {
        snprintf(error, error_size, "TCC_TUNE_INJECT_FAULT: the shares add up past 1");
        return false;
    }
    return true;
}

/* The fault (or none) that trial number `trial` runs, drawn from the seed. */
TuneFault tune_faults_draw(const TuneFaultShares *faults, uint64_t trial)
{
    double u = (double)(tune_mix(faults->seed ^ tune_mix(trial)) >> 11) * 0x1p-53, edge = 0;
    for (int f = 1; f < TUNE_FAULT_COUNT; f++)
        if (u < (edge += faults->share[f]))
            return (TuneFault)f;
    return TUNE_FAULT_NONE;
}
