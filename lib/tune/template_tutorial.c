/*
 * The tensor-core tutorial's schedule (seeds 000-002) as a template: its five tile sizes are
 * knobs with the values TVM's tensor-core conv2d templates give them (topi's
 * conv2d_nhwc_tensorcore: warps 1, 2 or 4 a side, warp tiles 1, 2 or 4, chunk 1 to 8). Shapes
 * a point cannot tile are refused by the schedule itself (tcc_tutorial_conv2d_schedule).
 */
#include "tune/templates.h"

#include "support/context.h"

static tcc_status define_tiles(tcc_config *cfg, tcc_tutorial_conv2d_params *p)
{
    static const int64_t sides[] = {1, 2, 4}, chunks[] = {1, 2, 4, 8};
    struct {
        const char *name;
        int count;
        const int64_t *values;
        int64_t *field;
    } knobs[] = {
        {"block_row_warps", 3, sides, &p->block_row_warps},
        {"block_col_warps", 3, sides, &p->block_col_warps},
        {"warp_row_tiles", 3, sides, &p->warp_row_tiles},
        {"warp_col_tiles", 3, sides, &p->warp_col_tiles},
        {"chunk", 4, chunks, &p->chunk},
    };
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
        tcc_status status =
            tcc_define_knob(cfg, knobs[i].name, knobs[i].count, knobs[i].values, knobs[i].field);
        if (status != TCC_OK)
            return status;
    }
    return TCC_OK;
}

static tcc_status build_tiles(tcc_func *func, const tcc_workload *w,
                              const tcc_tutorial_conv2d_params *p, const tcc_build_options *options,
                              tcc_kernel **kernel)
{
    tcc_tutorial_conv2d conv;
    tcc_status status = tcc_tutorial_conv2d_define(func, &w->conv2d, &conv);
    if (status == TCC_OK)
        status = tcc_schedule_create(func, 1, &conv.output);
    if (status == TCC_OK)
        status = tcc_tutorial_conv2d_schedule(func, &conv, p);
    tcc_tensor *params[3] = {conv.input, conv.filter, conv.output};
    if (status == TCC_OK)
        status = tcc_build(func, 3, params, options, kernel);
    return status;
}

tcc_status tci_template_tutorial(tcc_context *ctx, tcc_config *cfg, const tcc_workload *w,
                                 tcc_arch arch, const tcc_build_options *options,
                                 tcc_kernel **kernel)
{
    if (!w || w->kind != TCC_WORKLOAD_CONV2D)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "template tutorial: the workload must be a conv2d");
    tcc_tutorial_conv2d_params p;
    tcc_tutorial_conv2d_params_init(&p);
    tcc_status status = define_tiles(cfg, &p);
    if (status != TCC_OK || tcc_config_is_defining(cfg))
        return status;
    tcc_build_options build;
    tcc_build_options_init(&build);
    if (options)
        build = *options;
    build.arch = arch;
    tcc_func *func;
    status = tcc_func_create(ctx, "conv2d", &func);
    if (status != TCC_OK)
        return status;
    status = build_tiles(func, w, &p, &build, kernel);
    tcc_func_destroy(func);
    return status;
}
