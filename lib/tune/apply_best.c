/*
 * AutoTVM's apply_history_best: the fastest record of a workload built again from its config.
 * The records are scanned rather than asked for their best alone, so that a config the space
 * no longer has, or that no longer builds (a template or tcc changed since it was recorded),
 * gives way to the next fastest instead of failing the build.
 */
#include "support/context.h"
#include "tcc/tune.h"
#include "tune/config.h"

#include <stdlib.h>
#include <string.h>

typedef struct Candidate {
    double cost;
    int64_t index;
    char *config;
} Candidate;

typedef struct Scan {
    const char *key, *device;
    Candidate *list;
    int count, cap;
    bool out_of_memory;
} Scan;

/* Keeps an error-free, timed record of the workload; stops the scan when out of memory. */
static bool collect(const tcc_record *record, void *user)
{
    Scan *scan = user;
    double cost = tcc_measure_result_mean_cost(&record->result); /* 0: an error, or untimed */
    if (cost <= 0 || strcmp(record->workload_key, scan->key) != 0 ||
        (scan->device && strcmp(record->device_name, scan->device) != 0))
        return true;
    if (scan->count == scan->cap) {
        int cap = scan->cap ? scan->cap * 2 : 16;
        Candidate *list = realloc(scan->list, sizeof *list * (size_t)cap);
        if (!list) {
            scan->out_of_memory = true;
            return false;
        }
        scan->list = list;
        scan->cap = cap;
    }
    char *config = strdup(record->config);
    if (!config) {
        scan->out_of_memory = true;
        return false;
    }
    scan->list[scan->count++] = (Candidate){cost, record->config_index, config};
    return true;
}

static int by_cost(const void *a, const void *b)
{
    const Candidate *x = a, *y = b;
    return (x->cost > y->cost) - (x->cost < y->cost);
}

/* Builds the fastest candidate that the space still has and that still builds (a template or
 * tcc changed since it was recorded, or a record not measured on a GPU); *index -1 and no
 * kernel when none does. */
static tcc_status build_fastest(tcc_context *ctx, const tcc_template *tmpl,
                                const tcc_config_space *space, Scan *scan,
                                const tcc_workload *workload, tcc_arch arch,
                                const tcc_build_options *options, tcc_kernel **kernel,
                                int64_t *index)
{
    if (scan->count > 1) /* qsort takes no NULL list, even of none */
        qsort(scan->list, (size_t)scan->count, sizeof *scan->list, by_cost);
    *index = -1;
    for (int i = 0; i < scan->count && *index < 0; i++) {
        tcc_config *cfg;
        if (tcc_config_parse(ctx, space, scan->list[i].config, &cfg) != TCC_OK)
            continue;
        tcc_status status = tcc_config_instantiate(ctx, tmpl, cfg, workload, arch, options, kernel);
        if (status == TCC_OK)
            *index = tcc_config_index(cfg);
        tcc_config_destroy(cfg);
        if (status == TCC_ERROR_OUT_OF_MEMORY)
            return status;
    }
    return TCC_OK;
}

tcc_status tcc_apply_history_best(tcc_context *ctx, tcc_record_store *store,
                                  const tcc_template *tmpl, const tcc_workload *workload,
                                  tcc_arch arch, const char *device_name,
                                  const tcc_build_options *options, tcc_kernel **kernel,
                                  int64_t *record_index)
{
    if (!store || !tmpl || !workload || !kernel)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_apply_history_best: the store, template, workload or kernel is NULL");
    /* Before the template's name or the workload is read for the key. */
    tcc_status status = tci_check_template_size(ctx, tmpl);
    if (status == TCC_OK)
        status = TCI_CHECK_SIZE(ctx, "workload", tcc_workload, workload);
    if (status != TCC_OK)
        return status;
    char key[1024];
    tcc_workload_key(tmpl, workload, key, sizeof key);
    Scan scan = {.key = key, .device = device_name};
    tcc_config_space *space = NULL;
    tcc_config *cfg = NULL;
    int64_t index = -1;
    status = tcc_record_each(store, tmpl->name, collect, &scan);
    if (status == TCC_OK && scan.out_of_memory)
        status = tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "tcc_apply_history_best: out of memory");
    if (status == TCC_OK)
        status = tcc_config_space_create(ctx, tmpl, workload, arch, &space);
    if (status == TCC_OK)
        status = build_fastest(ctx, tmpl, space, &scan, workload, arch, options, kernel, &index);
    if (status == TCC_OK && index < 0)
        status = tcc_config_create(ctx, space, 0, &cfg);
    if (status == TCC_OK && index < 0)
        status = tcc_config_instantiate(ctx, tmpl, cfg, workload, arch, options, kernel);
    if (record_index)
        *record_index = status == TCC_OK ? index : -1;
    for (int i = 0; i < scan.count; i++)
        free(scan.list[i].config);
    free(scan.list);
    tcc_config_destroy(cfg);
    tcc_config_space_destroy(space);
    return status;
}
