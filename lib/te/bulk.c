/*
 * Schedule primitives of the bulk tensor copy engine (sm_90a): a shared stage filled by
 * copies through a tensor map (tcc_storage_bulk_copy), and a global stage whose inner loops
 * copy a shared tile out through one (tcc_bulk_store). Lowering builds the statements
 * (lib/lower/bulk_copy.c).
 */
#include "te/te.h"

#include <stddef.h>

/* The size of tcc_tensor_map in its first release, before `cache` (tcc/tcc.h, "ABI"). */
#define TENSOR_MAP_FIRST_SIZE offsetof(tcc_tensor_map, cache)

/* The caller's map, of any size this library knows, as this release's (what it lacks zero);
 * else a failure saying `what`. */
static tcc_status read_map(tcc_context *ctx, const char *what, const tcc_tensor_map *map,
                           tcc_tensor_map *out)
{
    *out = (tcc_tensor_map){0};
    return tci_read_struct(ctx, what, "tcc_tensor_map", map, TENSOR_MAP_FIRST_SIZE, sizeof *out,
                           out);
}

/* Why a tensor map cannot describe the tiles, or NULL. */
static const char *tensor_map_problem(const tcc_stage *stage, const tcc_tensor_map *map)
{
    bool im2col = map->mode == TCC_TENSOR_MAP_IM2COL;
    if (map->mode != TCC_TENSOR_MAP_TILED && !im2col)
        return "its mode is neither tiled nor im2col";
    if (!map->tensor || map->tensor->is_compute || map->tensor->func != stage->func)
        return "its tensor must be a placeholder of this function";
    if (map->rank < (im2col ? 3 : 1) || map->rank > TCC_TENSOR_MAP_MAX_RANK)
        return im2col ? "an im2col map has 3 to 5 dimensions" : "a map has 1 to 5 dimensions";
    for (int d = 0; d < map->rank; d++) {
        if (!map->coords[d] || map->dims[d] < 1 || (d && map->strides[d] < 1))
            return "every dimension needs a coordinate, an extent and a stride";
        if (map->element_strides[d] < 0 || map->element_strides[d] > 8)
            return "element strides are 1 to 8";
    }
    for (int d = 0; im2col && d < map->rank - 2; d++)
        if (!map->offsets[d])
            return "an im2col map needs a filter offset for every spatial dimension";
    for (int d = 0; d < (im2col ? 2 : map->rank); d++)
        if (map->box[d] < 1 ||
            map->box[d] > (d == 1 && im2col ? TCI_MAP_MAX_IM2COL_PIXELS : TCI_MAP_MAX_BOX))
            return "its box must have 1 to 256 elements a dimension (im2col: 1 to 1024 pixels)";
    if (map->tensor->type != stage->tensor->type)
        return "the tensor and the stage must have one element type";
    if (map->cache < TCC_CACHE_NORMAL || map->cache > TCC_CACHE_EVICT_LAST)
        return "its cache hint is none of normal, evict-first and evict-last";
    return NULL;
}

tcc_status tcc_storage_bulk_copy(tcc_stage *stage, const tcc_tensor_map *given)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_tensor_map copy, *map = NULL;
    if (given) {
        tcc_status status = read_map(stage->func->ctx, "storage_bulk_copy", given, &copy);
        if (status != TCC_OK)
            return status;
        map = &copy;
    }
    const char *problem = NULL;
    if (!map)
        problem = "the tensor map is NULL";
    else if (!stage->tensor->is_compute || stage->scope != TCC_SCOPE_SHARED)
        problem = "only a computed shared stage can be filled by bulk copies";
    else
        problem = tensor_map_problem(stage, map);
    if (problem)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE, "storage_bulk_copy %s: %s",
                        stage->tensor->name, problem);
    stage->bulk_copy = true;
    stage->map = *map;
    return TCC_OK;
}

tcc_status tcc_bulk_store(tcc_stage *stage, tcc_iter_var *axis, const tcc_tensor_map *given)
{
    if (!stage)
        return TCC_ERROR_INVALID_ARGUMENT;
    tcc_tensor_map copy, *map = NULL;
    if (given) {
        tcc_status status = read_map(stage->func->ctx, "bulk_store", given, &copy);
        if (status != TCC_OK)
            return status;
        map = &copy;
    }
    const Tensor *t = stage->tensor;
    const char *problem = NULL;
    if (!map)
        problem = "the tensor map is NULL";
    else if (!axis || tci_stage_leaf_index(stage, axis) < 0)
        problem = "the axis is not a loop of the stage";
    else if (!t->is_compute || stage->scope != TCC_SCOPE_GLOBAL || t->nreduce ||
             t->body->kind != EXPR_ACCESS)
        problem = "only a global stage that copies another tensor can be stored by the engine";
    else if (map->mode != TCC_TENSOR_MAP_TILED)
        problem = "a store's map is tiled";
    else if (map->tensor != (t->store_target ? t->store_target : t))
        problem = "the map's tensor must be the one the stage stores into";
    else
        problem = tensor_map_problem(stage, map);
    if (problem)
        return tci_fail(stage->func->ctx, TCC_ERROR_SCHEDULE, "bulk_store %s: %s", t->name,
                        problem);
    stage->bulk_store_at = axis;
    stage->map = *map;
    return TCC_OK;
}
