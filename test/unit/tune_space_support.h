/*
 * What the config space's tests share (test_tune_space.c, spaces and configs as AutoTVM has
 * them; test_tune_space_refusals.c, what they refuse): the test's context, refusals asserted
 * in one line, the seed tutorial's template (../shared/seeds/003) and its best config, and a
 * space made from a template. Static, so each test program has its own.
 */
#ifndef TCC_TEST_TUNE_SPACE_SUPPORT_H
#define TCC_TEST_TUNE_SPACE_SUPPORT_H

#include "ir_support.h"
#include "tcc/tune.h"

#include <check.h>
#include <string.h>

static tcc_context *test_ctx;

static inline void setup(void)
{
    test_ctx = test_context();
}

static inline void teardown(void)
{
    tcc_context_destroy(test_ctx);
    test_ctx = NULL;
}

static inline void assert_refused(tcc_status status, tcc_status expected, const char *part)
{
    ck_assert_int_eq(status, expected);
    assert_contains(tcc_last_error(test_ctx), part);
    const char *error = tcc_last_error(test_ctx);
    ck_assert_msg(*error && !strchr(error, '\n'), "not one line: \"%s\"", error);
}

/* ---- the seed's template --------------------------------------------------------------------- */

/* What the seed template read from its config the last time it applied one. */
typedef struct SeedKnobs {
    int64_t f[4], y[4], x[4], rc[3], ry[3], rx[3];
    int64_t unroll_step, unroll_explicit;
} SeedKnobs;
static SeedKnobs seed_read;

/* The knobs of the tutorial's conv2d_no_batching for N=1, 7x7, 512->512, 3x3, in its order. */
static inline tcc_status seed_template(tcc_context *ctx, tcc_config *cfg,
                                       const tcc_workload *workload, tcc_arch arch,
                                       const tcc_build_options *options, tcc_kernel **kernel)
{
    (void)ctx, (void)workload, (void)arch, (void)options, (void)kernel;
    static const int64_t steps[3] = {0, 512, 1500}, explicit[2] = {0, 1};
    SeedKnobs *r = &seed_read;
    tcc_status s = tcc_define_split(cfg, "tile_f", 512, 4, r->f);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_y", 7, 4, r->y);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_x", 7, 4, r->x);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_rc", 512, 3, r->rc);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_ry", 3, 3, r->ry);
    if (s == TCC_OK)
        s = tcc_define_split(cfg, "tile_rx", 3, 3, r->rx);
    if (s == TCC_OK)
        s = tcc_define_knob(cfg, "auto_unroll_max_step", 3, steps, &r->unroll_step);
    if (s == TCC_OK)
        s = tcc_define_knob(cfg, "unroll_explicit", 2, explicit, &r->unroll_explicit);
    if (s != TCC_OK || tcc_config_is_defining(cfg))
        return s;
    return TCC_OK; /* applying: no kernel (this test links no code generator) */
}

static const tcc_template seed = {.size = sizeof(tcc_template),
                                  .name = "seed",
                                  .summary = "the tutorial's knobs",
                                  .kind = TCC_WORKLOAD_CONV2D,
                                  .instantiate = seed_template};

static inline tcc_config_space *seed_space(void)
{
    tcc_workload w;
    tcc_workload_init(&w, TCC_WORKLOAD_CONV2D);
    tcc_config_space *space = NULL;
    ck_assert_int_eq(tcc_config_space_create(test_ctx, &seed, &w, TCC_SM_80, &space), TCC_OK);
    ck_assert_ptr_nonnull(space);
    return space;
}

/* The best config of the tutorial's log, as tcc_config_format writes it (index 4881186). */
static const char *const best =
    "[[\"tile_f\", [-1, 2, 64, 1]], [\"tile_y\", [-1, 1, 1, 7]], [\"tile_x\", [-1, 1, 7, 1]], "
    "[\"tile_rc\", [-1, 2, 2]], [\"tile_ry\", [-1, 3, 1]], [\"tile_rx\", [-1, 1, 3]], "
    "[\"auto_unroll_max_step\", 1500], [\"unroll_explicit\", 0]]";

/* A space of `tmpl` for a default workload of its kind. */
static inline tcc_status make_space(const tcc_template *tmpl, tcc_config_space **space)
{
    tcc_workload w;
    tcc_workload_init(&w, tmpl->kind);
    return tcc_config_space_create(test_ctx, tmpl, &w, TCC_SM_80, space);
}

#endif
