/*
 * The loop-IR parser's part for the bulk tensor copy engine and warp specialization: the
 * kernel's tensor maps (one line each after the launch shape), bulk copies, mbarrier
 * operations, named barriers and setmaxnreg, read back as async_copy.c prints them.
 */
#include "ir/parse.h"

#include <stdlib.h>
#include <string.h>

/* `[a, b, c]` of exactly n integers. */
static void parse_ints(Parser *p, const char *what, int n, int64_t *out)
{
    tci_parse_expect(p, "[", "before the %s", what);
    for (int i = 0; i < n; i++) {
        if (i)
            tci_parse_expect(p, ",", "between the %s", what);
        out[i] = tci_parse_expect_int(p, what);
    }
    tci_parse_expect(p, "]", "after %d %s", n, what);
}

static void parse_small_ints(Parser *p, const char *what, int n, int *out)
{
    int64_t values[TCI_MAX_MAP_RANK];
    parse_ints(p, what, n, values);
    for (int i = 0; i < n; i++)
        out[i] = (int)values[i];
}

/* `tensor_mapN` naming the function's map N. */
static TensorMap *expect_map_name(Parser *p)
{
    const char *at = tci_parse_peek(p);
    const char *name = tci_parse_expect_name(p, "a tensor map");
    const size_t prefix = strlen("tensor_map");
    int index = -1;
    if (strncmp(name, "tensor_map", prefix) == 0 && tci_parse_is_digit(name[prefix]))
        index = (int)strtol(name + prefix, NULL, 10);
    if (index < 0 || index >= p->func->ntensor_map)
        tci_parse_fail_at(p, at, "expected one of the kernel's %d tensor maps, found %s",
                          p->func->ntensor_map, tci_parse_describe(p, at));
    return p->func->tensor_maps[index];
}

/* `tensor_map0: input im2col dims [...] strides [...] channels, pixels [...] lower [...]
 * upper [...] steps [...] swizzle 128` or `tensor_map1: b tiled dims [...] strides [...]
 * box [...] swizzle 128`. */
static void parse_tensor_map(Parser *p)
{
    const char *at = tci_parse_peek(p);
    tci_parse_expect_name(p, "a tensor map");
    tci_parse_expect(p, ":", "after the tensor map's name");
    TensorMap m = {0};
    const char *name = tci_parse_peek(p);
    m.tensor = tci_parse_lookup(&p->buffers, name, tci_parse_name_length(name));
    tci_parse_expect_name(p, "the tensor of a map");
    if (!m.tensor || m.tensor->scope != TCC_SCOPE_GLOBAL)
        tci_parse_fail_at(p, name, "a tensor map reads a parameter; %s is none",
                          tci_parse_describe(p, name));
    tcc_tensor_map_encoding *e = &m.enc;
    e->param = m.tensor->param_index;
    e->type = m.tensor->type;
    bool im2col = tci_parse_accept(p, "im2col");
    if (!im2col)
        tci_parse_expect(p, "tiled", "or 'im2col' after the tensor of a map");
    e->mode = im2col ? TCC_TENSOR_MAP_IM2COL : TCC_TENSOR_MAP_TILED;
    tci_parse_expect(p, "dims", "in a tensor map");
    const char *dims_at = tci_parse_peek(p);
    int64_t dims[TCI_MAX_MAP_RANK + 1];
    int rank = 0;
    tci_parse_expect(p, "[", "before the dimensions");
    while (!tci_parse_accept(p, "]")) {
        if (rank == TCI_MAX_MAP_RANK)
            tci_parse_fail_at(p, dims_at, "a tensor map has at most %d dimensions",
                              TCI_MAX_MAP_RANK);
        if (rank)
            tci_parse_expect(p, ",", "between the dimensions");
        dims[rank++] = tci_parse_expect_int(p, "a dimension");
    }
    if (rank < (im2col ? 3 : 1))
        tci_parse_fail_at(p, dims_at, "a tensor map of this mode has more dimensions");
    e->rank = rank;
    memcpy(e->dims, dims, sizeof(int64_t) * (size_t)rank);
    e->strides[0] = (int64_t)tcc_dtype_size(e->type);
    tci_parse_expect(p, "strides", "after the dimensions");
    parse_ints(p, "strides", rank - 1, e->strides + 1);
    for (int d = 0; d < rank; d++)
        e->element_strides[d] = 1;
    if (im2col) {
        tci_parse_expect(p, "channels", "after the strides");
        tci_parse_expect(p, ",", "after 'channels'");
        tci_parse_expect(p, "pixels", "after 'channels,'");
        parse_ints(p, "channels and pixels", 2, e->box);
        tci_parse_expect(p, "lower", "after the pixels");
        parse_small_ints(p, "lower corners", rank - 2, e->lower_corner);
        tci_parse_expect(p, "upper", "after the lower corners");
        parse_small_ints(p, "upper corners", rank - 2, e->upper_corner);
        tci_parse_expect(p, "steps", "after the upper corners");
        parse_small_ints(p, "steps", rank - 2, e->element_strides + 1);
    } else {
        tci_parse_expect(p, "box", "after the strides");
        parse_ints(p, "box", rank, e->box);
    }
    tci_parse_expect(p, "swizzle", "after the box");
    e->swizzle_bytes = (int)tci_parse_expect_count(p, "the swizzle's bytes", 32, 128);
    if (!tci_prim_func_add_tensor_map(p->func, &m))
        tci_parse_fail_at(p, at, "out of memory reading a tensor map");
}

void tci_parse_tensor_maps(Parser *p)
{
    while (strncmp(tci_parse_peek(p), "tensor_map", strlen("tensor_map")) == 0)
        parse_tensor_map(p);
}

/* `{e0, e1, ...}` of exactly n expressions. */
static void parse_list(Parser *p, const char *what, int n, Expr **out)
{
    tci_parse_expect(p, "{", "before the %s", what);
    for (int i = 0; i < n; i++) {
        if (i)
            tci_parse_expect(p, ",", "between the %s", what);
        out[i] = tci_parse_expr(p);
    }
    tci_parse_expect(p, "}", "after %d %s", n, what);
}

/* An L2 policy after `, `: `evict_first` or `evict_last` (`evict_normal`, the default, is
 * never written); else a failure naming what `expected` lists. */
static tcc_cache_hint expect_cache_hint(Parser *p, const char *expected)
{
    for (tcc_cache_hint h = TCC_CACHE_EVICT_FIRST; h <= TCC_CACHE_EVICT_LAST; h++)
        if (tci_parse_accept(p, tci_cache_hint_name(h)))
            return h;
    const char *at = tci_parse_peek(p);
    tci_parse_fail_at(p, at, "expected %s after ', ', found %s", expected,
                      tci_parse_describe(p, at));
}

/* `bulk_copy(&A.shared[0], tensor_map0{c, w, h, n} offsets {s, r}, barrier full[0])`, then
 * `, multicast 2` for a copy into every block of the cluster and `, evict_last` for an L2
 * policy, each where it applies */
Stmt *tci_parse_bulk_copy(Parser *p)
{
    Buffer *dst, *barrier = NULL;
    Expr *dst_index, *barrier_index = NULL, *coords[TCI_MAX_MAP_RANK], *offsets[3] = {0};
    tci_parse_expect(p, "(", "after 'bulk_copy'");
    tci_parse_address(p, "the shared destination", &dst, &dst_index);
    tci_parse_expect(p, ",", "after the destination");
    const TensorMap *map = expect_map_name(p);
    parse_list(p, "coordinates", map->enc.rank, coords);
    if (map->enc.mode == TCC_TENSOR_MAP_IM2COL) {
        tci_parse_expect(p, "offsets", "after an im2col copy's coordinates");
        parse_list(p, "offsets", map->enc.rank - 2, offsets);
    }
    int multicast = 0;
    tcc_cache_hint cache = TCC_CACHE_NORMAL;
    /* What may still follow a `, `, in this order. */
    const char *expected = "'barrier', 'multicast', 'evict_first' or 'evict_last'";
    bool more = tci_parse_accept(p, ",");
    if (more && tci_parse_accept(p, "barrier")) {
        tci_parse_element(p, "the copy's barrier", &barrier, &barrier_index);
        more = tci_parse_accept(p, ",");
        expected = "'multicast', 'evict_first' or 'evict_last'";
    }
    if (more && tci_parse_accept(p, "multicast")) {
        multicast = (int)tci_parse_expect_count(p, "the blocks a copy multicasts to", 2,
                                                TCI_MAX_CLUSTER_BLOCKS);
        more = tci_parse_accept(p, ",");
        expected = "'evict_first' or 'evict_last'";
    }
    if (more)
        cache = expect_cache_hint(p, expected);
    tci_parse_expect(p, ")", "after the copy");
    Stmt *s =
        tci_stmt_bulk_copy(p->arena, dst, dst_index, map, coords, offsets, barrier, barrier_index);
    s->bulk.multicast = multicast;
    s->bulk.cache = cache;
    return s;
}

/* `bulk_store(tensor_map2{n, m, g}, &Out.shared[0])`, `, evict_first` for an L2 policy */
Stmt *tci_parse_bulk_store(Parser *p)
{
    Buffer *src;
    Expr *src_index, *coords[TCI_MAX_MAP_RANK];
    tci_parse_expect(p, "(", "after 'bulk_store'");
    const TensorMap *map = expect_map_name(p);
    parse_list(p, "coordinates", map->enc.rank, coords);
    tci_parse_expect(p, ",", "after the store's coordinates");
    tci_parse_address(p, "the shared source", &src, &src_index);
    tcc_cache_hint cache = TCC_CACHE_NORMAL;
    if (tci_parse_accept(p, ","))
        cache = expect_cache_hint(p, "'evict_first' or 'evict_last'");
    tci_parse_expect(p, ")", "after the store");
    Stmt *s = tci_stmt_bulk_store(p->arena, src, src_index, map, coords);
    s->bulk.cache = cache;
    return s;
}

/* `bulk_wait_read(0)` */
Stmt *tci_parse_bulk_wait(Parser *p)
{
    tci_parse_expect(p, "(", "after 'bulk_wait_read'");
    int pending = (int)tci_parse_expect_count(p, "the store groups left pending", 0, 8);
    tci_parse_expect(p, ")", "after the groups left pending");
    return tci_stmt_bulk_wait(p->arena, pending);
}

/* `mbarrier.init(&full[0], 1)`, `mbarrier.wait(&full[k % 4], parity k / 4 % 2)`,
 * `mbarrier.arrive(&empty[k % 4], blocks 2)` */
Stmt *tci_parse_mbarrier(Parser *p, MbarrierOp op)
{
    const char *name = tci_mbarrier_op_name(op);
    Buffer *barrier;
    Expr *index, *parity = NULL;
    int64_t value = 0;
    tci_parse_expect(p, "(", "after '%s'", name);
    tci_parse_address(p, "the barrier", &barrier, &index);
    if (op == MBARRIER_ARRIVE) {
        if (tci_parse_accept(p, ",")) {
            tci_parse_expect(p, "blocks", "after the barrier");
            value = tci_parse_expect_count(p, "the cluster's blocks to arrive at", 2,
                                           TCI_MAX_CLUSTER_BLOCKS);
        }
        tci_parse_expect(p, ")", "after '%s'", name);
        return tci_stmt_mbarrier(p->arena, op, barrier, index, value, NULL);
    }
    tci_parse_expect(p, ",", "after the barrier");
    if (op == MBARRIER_WAIT) {
        tci_parse_expect(p, "parity", "after the barrier");
        parity = tci_parse_expr(p);
    } else {
        value = tci_parse_expect_count(p, op == MBARRIER_INIT ? "the arrivals" : "the bytes", 1,
                                       INT32_MAX);
    }
    tci_parse_expect(p, ")", "after '%s'", name);
    return tci_stmt_mbarrier(p->arena, op, barrier, index, value, parity);
}

/* A count from min to max that is a multiple of `step`, then `)`. */
static int expect_multiple(Parser *p, const char *what, int min, int max, int step)
{
    const char *at = p->pos;
    int value = (int)tci_parse_expect_count(p, what, min, max);
    if (value % step)
        tci_parse_fail_at(p, at, "expected %s as a multiple of %d, found %d", what, step, value);
    tci_parse_expect(p, ")", "after %s", what);
    return value;
}

/* `barrier.sync(1, 256)`, `barrier.arrive(2, 256)`: named barriers 1 to 15 (0 is
 * __syncthreads), whole warps. */
Stmt *tci_parse_named_barrier(Parser *p, bool arrive)
{
    tci_parse_expect(p, "(", arrive ? "after 'barrier.arrive'" : "after 'barrier.sync'");
    int id = (int)tci_parse_expect_count(p, "the barrier's number", 1, TCI_BARRIER_LAST);
    tci_parse_expect(p, ",", "after the barrier's number");
    int threads = expect_multiple(p, "the barrier's threads", 32, 1024, 32);
    return arrive ? tci_stmt_barrier_arrive(p->arena, id, threads)
                  : tci_stmt_named_barrier(p->arena, id, threads);
}

/* `setmaxnreg.inc(232)`: 24 to 256 registers, a multiple of 8. */
Stmt *tci_parse_setmaxnreg(Parser *p, bool increase)
{
    tci_parse_expect(p, "(", "after 'setmaxnreg'");
    int registers = expect_multiple(p, "setmaxnreg's registers", 24, 256, 8);
    return tci_stmt_setmaxnreg(p->arena, increase, registers);
}
