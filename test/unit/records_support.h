/*
 * What the records store's tests share (test_tune_records.c, the store and the processes that
 * write it; test_tune_logs.c, AutoTVM's log lines): a fresh directory a test, the seed
 * tutorial's record, opening a store, adding to it and walking it. Static, so each test
 * program has its own.
 */
#ifndef TCC_TEST_RECORDS_SUPPORT_H
#define TCC_TEST_RECORDS_SUPPORT_H

#include "support.h"
#include "tcc/tune.h"
#include "tune/records.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

static tcc_context *ctx;
static char dir[64];

static inline void setup(void)
{
    ctx = test_context();
    snprintf(dir, sizeof dir, "/tmp/tcc-records-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static inline int remove_entry(const char *path, const struct stat *info, int flag, struct FTW *ftw)
{
    (void)info, (void)flag, (void)ftw;
    return remove(path);
}

static inline void teardown(void)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    tcc_context_destroy(ctx);
}

/* dir/name, in a static buffer of four (a test names a few files at once). */
static const char *in_dir(const char *name)
{
    static char paths[4][128];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, sizeof paths[0], "%s/%s", dir, name);
    return path;
}

static const char *const seed_key =
    "[\"tutorial/conv2d_no_batching\", 1, 7, 7, 512, 512, 3, 3, [1, 1], [1, 1]]";
static const char *const seed_config =
    "[[\"tile_f\", [-1, 2, 64, 1]], [\"tile_y\", [-1, 1, 1, 7]], [\"tile_x\", [-1, 1, 7, 1]], "
    "[\"tile_rc\", [-1, 2, 2]], [\"tile_ry\", [-1, 3, 1]], [\"tile_rx\", [-1, 1, 3]], "
    "[\"auto_unroll_max_step\", 1500], [\"unroll_explicit\", 0]]";

/* A record of the seed's template: config `index`, one cost of `seconds`. */
static inline tcc_record make_record(int64_t index, double seconds, const char *device)
{
    tcc_record record = {.size = sizeof record};
    record.template_name = "conv2d_no_batching";
    record.workload_key = seed_key;
    record.target = "cuda -arch=sm_90a";
    record.device_name = device;
    record.tcc_version = "0.1.0";
    record.config = seed_config;
    record.config_index = index;
    record.result.ncost = 2;
    record.result.costs[0] = seconds;
    record.result.costs[1] = seconds;
    record.result.all_cost = 0.05;
    record.result.timestamp = 1700000000.25 + (double)index;
    return record;
}

static tcc_record_store *open_store(const char *path)
{
    tcc_record_store *store = NULL;
    ck_assert_msg(tcc_record_store_open(ctx, path, &store) == TCC_OK, "%s", tcc_last_error(ctx));
    return store;
}

static inline void add(tcc_record_store *store, const tcc_record *record)
{
    ck_assert_msg(tcc_record_add(store, record) == TCC_OK, "%s", tcc_last_error(ctx));
}

/* What tcc_record_each saw: the config indices, in order. */
typedef struct Seen {
    int count;
    int64_t indices[1024];
} Seen;

static inline bool collect(const tcc_record *record, void *user)
{
    Seen *seen = user;
    ck_assert_uint_eq(record->size, sizeof *record); /* the store's records carry their size */
    if (seen->count < 1024)
        seen->indices[seen->count] = record->config_index;
    seen->count++;
    return true;
}

static inline Seen each(tcc_record_store *store, const char *template_name)
{
    Seen seen = {0};
    ck_assert_msg(tcc_record_each(store, template_name, collect, &seen) == TCC_OK, "%s",
                  tcc_last_error(ctx));
    return seen;
}

#endif
