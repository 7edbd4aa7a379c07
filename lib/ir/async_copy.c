/*
 * The loop IR's asynchronous copies: cp.async's, and those of the bulk tensor copy engine
 * (sm_90) with their tensor maps and the mbarriers they complete on; and what warp
 * specialization adds, barriers of part of the block and setmaxnreg (ir.h says what each
 * is): constructors and printing.
 */
#include "ir/ir.h"

#include <string.h>

Stmt *tci_stmt_bulk_copy(Arena *arena, Buffer *dst, Expr *dst_index, const TensorMap *map,
                         Expr *const *coords, Expr *const *offsets, Buffer *barrier,
                         Expr *barrier_index)
{
    Stmt *s = tci_stmt_new(arena, STMT_BULK_COPY);
    s->bulk.dst = dst;
    s->bulk.dst_index = dst_index;
    s->bulk.map = map;
    for (int d = 0; d < map->enc.rank; d++)
        s->bulk.coords[d] = coords[d];
    for (int d = 0; map->enc.mode == TCC_TENSOR_MAP_IM2COL && d < map->enc.rank - 2; d++)
        s->bulk.offsets[d] = offsets[d];
    s->bulk.barrier = barrier;
    s->bulk.barrier_index = barrier_index;
    return s;
}

Stmt *tci_stmt_bulk_store(Arena *arena, Buffer *src, Expr *src_index, const TensorMap *map,
                          Expr *const *coords)
{
    Stmt *s = tci_stmt_bulk_copy(arena, src, src_index, map, coords, NULL, NULL, NULL);
    s->kind = STMT_BULK_STORE;
    return s;
}

Stmt *tci_stmt_bulk_wait(Arena *arena, int pending)
{
    Stmt *s = tci_stmt_new(arena, STMT_BULK_WAIT);
    s->wait.pending = pending;
    return s;
}

Expr *tci_first_thread(Arena *arena, const PrimFunc *func)
{
    Expr *cond = tci_ir_bool(arena, true);
    for (int tag = TCC_THREAD_X; tag <= TCC_THREAD_Z; tag++) {
        Var *v = func->thread_var[tag];
        if (v)
            cond = tci_ir_binary(
                arena, EXPR_AND, cond,
                tci_ir_binary(arena, EXPR_EQ, tci_ir_var(arena, v), tci_ir_int(arena, 0)));
    }
    return cond;
}

Stmt *tci_stmt_mbarrier(Arena *arena, MbarrierOp op, Buffer *barrier, Expr *index, int64_t value,
                        Expr *parity)
{
    Stmt *s = tci_stmt_new(arena, STMT_MBARRIER);
    s->mbarrier.op = op;
    s->mbarrier.barrier = barrier;
    s->mbarrier.index = index;
    s->mbarrier.value = op != MBARRIER_WAIT ? value : 0;
    s->mbarrier.parity = op == MBARRIER_WAIT ? parity : NULL;
    return s;
}

Stmt *tci_stmt_named_barrier(Arena *arena, int id, int threads)
{
    Stmt *s = tci_stmt_barrier(arena);
    s->barrier.id = id;
    s->barrier.threads = threads;
    return s;
}

Stmt *tci_stmt_barrier_arrive(Arena *arena, int id, int threads)
{
    Stmt *s = tci_stmt_named_barrier(arena, id, threads);
    s->barrier.arrive = true;
    return s;
}

Stmt *tci_stmt_cluster_barrier(Arena *arena)
{
    Stmt *s = tci_stmt_barrier(arena);
    s->barrier.cluster = true;
    return s;
}

Stmt *tci_stmt_setmaxnreg(Arena *arena, bool increase, int registers)
{
    Stmt *s = tci_stmt_new(arena, STMT_SETMAXNREG);
    s->setmaxnreg.increase = increase;
    s->setmaxnreg.registers = registers;
    return s;
}

int tci_store_ring(int64_t blocks, int64_t writer_cols)
{
    return writer_cols == 1 && blocks > TCI_STORE_RING_BLOCKS ? TCI_STORE_RING_BLOCKS : 0;
}

int64_t tci_tensor_map_copy_bytes(const TensorMap *map)
{
    int64_t elements = 1;
    if (map->enc.mode == TCC_TENSOR_MAP_IM2COL)
        elements = map->enc.box[0] * map->enc.box[1];
    else
        for (int d = 0; d < map->enc.rank; d++)
            elements *= map->enc.box[d];
    return elements * (int64_t)tcc_dtype_size(map->enc.type);
}

TensorMap *tci_prim_func_add_tensor_map(PrimFunc *func, const TensorMap *map)
{
    TensorMap **grown =
        tci_arena_alloc(func->arena, sizeof *grown * (size_t)(func->ntensor_map + 1));
    TensorMap *copy = tci_arena_alloc(func->arena, sizeof *copy);
    if (!grown || !copy)
        return NULL;
    if (func->ntensor_map)
        memcpy(grown, func->tensor_maps, sizeof *grown * (size_t)func->ntensor_map);
    *copy = *map;
    copy->index = func->ntensor_map;
    grown[func->ntensor_map++] = copy;
    func->tensor_maps = grown;
    return copy;
}

/* ---- printing ---------------------------------------------------------------------------- */

static void print_element(StrBuf *sb, const Buffer *b, const Expr *index)
{
    tci_strbuf_printf(sb, "%s[", b ? b->name : "<null buffer>");
    tci_print_expr(sb, index);
    tci_strbuf_printf(sb, "]");
}

/* cp.async(&A.shared[i], &input[j], 16 bytes[, zero unless COND]) */
void tci_print_copy_async(StrBuf *sb, const Stmt *s)
{
    tci_strbuf_printf(sb, "cp.async(&");
    print_element(sb, s->copy.dst, s->copy.dst_index);
    tci_strbuf_printf(sb, ", &");
    print_element(sb, s->copy.src, s->copy.src_index);
    tci_strbuf_printf(sb, ", %d bytes", s->copy.bytes);
    if (s->copy.predicate) {
        tci_strbuf_printf(sb, ", zero unless ");
        tci_print_expr(sb, s->copy.predicate);
    }
    tci_strbuf_printf(sb, ")");
}

static void print_list(StrBuf *sb, int n, Expr *const *items)
{
    tci_strbuf_printf(sb, "{");
    for (int i = 0; i < n; i++) {
        if (i)
            tci_strbuf_printf(sb, ", ");
        tci_print_expr(sb, items[i]);
    }
    tci_strbuf_printf(sb, "}");
}

/* bulk_copy(&A.shared[0], tensor_map0{k, m}, barrier loop.full[s]); im2col copies add their
 * filter offsets: tensor_map0{c, w, h, n} offsets {s, r}; a cluster's `, multicast 2` and an
 * L2 policy's `, evict_last` follow. */
void tci_print_bulk(StrBuf *sb, const Stmt *s)
{
    if (s->kind == STMT_BULK_WAIT) {
        tci_strbuf_printf(sb, "bulk_wait_read(%d)", s->wait.pending);
        return;
    }
    const TensorMap *map = s->bulk.map;
    bool store = s->kind == STMT_BULK_STORE;
    tci_strbuf_printf(sb, store ? "bulk_store(tensor_map%d" : "bulk_copy(&", map->index);
    if (!store) {
        print_element(sb, s->bulk.dst, s->bulk.dst_index);
        tci_strbuf_printf(sb, ", tensor_map%d", map->index);
    }
    print_list(sb, map->enc.rank, s->bulk.coords);
    if (store) {
        tci_strbuf_printf(sb, ", &");
        print_element(sb, s->bulk.dst, s->bulk.dst_index);
    }
    if (map->enc.mode == TCC_TENSOR_MAP_IM2COL) {
        tci_strbuf_printf(sb, " offsets ");
        print_list(sb, map->enc.rank - 2, s->bulk.offsets);
    }
    if (s->bulk.barrier) {
        tci_strbuf_printf(sb, ", barrier ");
        print_element(sb, s->bulk.barrier, s->bulk.barrier_index);
    }
    if (s->bulk.multicast > 1)
        tci_strbuf_printf(sb, ", multicast %d", s->bulk.multicast);
    if (s->bulk.cache != TCC_CACHE_NORMAL)
        tci_strbuf_printf(sb, ", %s", tci_cache_hint_name(s->bulk.cache));
    tci_strbuf_printf(sb, ")    // %lld bytes", (long long)tci_tensor_map_copy_bytes(map));
}

const char *tci_cache_hint_name(tcc_cache_hint hint)
{
    static const char *const names[] = {"evict_normal", "evict_first", "evict_last"};
    return hint >= TCC_CACHE_NORMAL && hint <= TCC_CACHE_EVICT_LAST ? names[hint]
                                                                    : "evict_<unknown>";
}

const char *tci_mbarrier_op_name(MbarrierOp op)
{
    static const char *const names[] = {"mbarrier.init", "mbarrier.expect_tx", "mbarrier.wait",
                                        "mbarrier.arrive"};
    return op >= MBARRIER_INIT && op <= MBARRIER_ARRIVE ? names[op] : "mbarrier.<unknown>";
}

void tci_print_mbarrier(StrBuf *sb, const Stmt *s)
{
    tci_strbuf_printf(sb, "%s(&", tci_mbarrier_op_name(s->mbarrier.op));
    print_element(sb, s->mbarrier.barrier, s->mbarrier.index);
    if (s->mbarrier.op == MBARRIER_WAIT) {
        tci_strbuf_printf(sb, ", parity ");
        tci_print_expr(sb, s->mbarrier.parity);
    } else if (s->mbarrier.op != MBARRIER_ARRIVE) {
        tci_strbuf_printf(sb, ", %lld", (long long)s->mbarrier.value);
    } else if (s->mbarrier.value > 1) {
        tci_strbuf_printf(sb, ", blocks %lld", (long long)s->mbarrier.value);
    }
    tci_strbuf_printf(sb, ")");
}

/* `__syncthreads()`, `barrier.sync(1, 256)` or `barrier.arrive(2, 256)` for part of the block,
 * or `cluster_sync()`. */
void tci_print_barrier(StrBuf *sb, const Stmt *s)
{
    if (s->barrier.cluster)
        tci_strbuf_printf(sb, "cluster_sync()");
    else if (s->barrier.threads)
        tci_strbuf_printf(sb, "barrier.%s(%d, %d)", s->barrier.arrive ? "arrive" : "sync",
                          s->barrier.id, s->barrier.threads);
    else
        tci_strbuf_printf(sb, "__syncthreads()");
}

/* `setmaxnreg.inc(232)`, `setmaxnreg.dec(40)` */
void tci_print_setmaxnreg(StrBuf *sb, const Stmt *s)
{
    tci_strbuf_printf(sb, "setmaxnreg.%s(%d)", s->setmaxnreg.increase ? "inc" : "dec",
                      s->setmaxnreg.registers);
}

static void print_ints(StrBuf *sb, const char *name, int n, const int64_t *values)
{
    tci_strbuf_printf(sb, " %s [", name);
    for (int i = 0; i < n; i++)
        tci_strbuf_printf(sb, "%s%lld", i ? ", " : "", (long long)values[i]);
    tci_strbuf_printf(sb, "]");
}

/* "  tensor_map0: input im2col dims [...] strides [...] box [...] ...", one line a map. */
void tci_print_tensor_maps(StrBuf *sb, const PrimFunc *func)
{
    for (int i = 0; i < func->ntensor_map; i++) {
        const TensorMap *m = func->tensor_maps[i];
        bool im2col = m->enc.mode == TCC_TENSOR_MAP_IM2COL;
        tci_strbuf_printf(sb, "  tensor_map%d: %s %s", i, m->tensor ? m->tensor->name : "?",
                          im2col ? "im2col" : "tiled");
        print_ints(sb, "dims", m->enc.rank, m->enc.dims);
        print_ints(sb, "strides", m->enc.rank - 1, m->enc.strides + 1);
        print_ints(sb, im2col ? "channels, pixels" : "box", im2col ? 2 : m->enc.rank, m->enc.box);
        if (im2col) {
            int64_t lower[3], upper[3], steps[3];
            for (int d = 0; d < m->enc.rank - 2; d++) {
                lower[d] = m->enc.lower_corner[d];
                upper[d] = m->enc.upper_corner[d];
                steps[d] = m->enc.element_strides[d + 1];
            }
            print_ints(sb, "lower", m->enc.rank - 2, lower);
            print_ints(sb, "upper", m->enc.rank - 2, upper);
            print_ints(sb, "steps", m->enc.rank - 2, steps);
        }
        tci_strbuf_printf(sb, " swizzle %d\n", m->enc.swizzle_bytes);
    }
}
