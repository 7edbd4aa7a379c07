/*
 * The loop IR: expressions, statements, buffers and the PrimFunc, the loop IR of one
 * kernel (TVM's name; the built artifact is the public tcc_kernel).
 *
 * One header defines the whole IR (as QBE's all.h does). Compute definitions use the
 * same expressions (with EXPR_ACCESS and EXPR_REDUCE on tensors); schedule_ops lowers
 * them into statements over buffers, and every pass (ir/pass.h) maps a PrimFunc to a
 * PrimFunc. Nodes are immutable once built and live in the arena of their function, so
 * sharing subtrees is fine and nothing is freed one node at a time.
 */
#ifndef TCI_IR_IR_H
#define TCI_IR_IR_H

#include "support/arena.h"
#include "support/context.h"
#include "support/strbuf.h"
#include "target/target.h"
#include "tcc/te.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TCI_MAX_DIMS 8

typedef struct Var Var;
typedef struct tcc_expr Expr;
typedef struct Stmt Stmt;
typedef struct Buffer Buffer;
typedef struct PrimFunc PrimFunc;
typedef struct tcc_tensor Tensor;
typedef struct tcc_iter_var IterVar;

/* ---- variables and expressions -------------------------------------------------------- */

/* An integer (int32) variable: a loop counter, a thread index or a compute axis.
 * Variables are compared by identity; the name is only for printing. */
struct Var {
    const char *name;
    int id;
};

typedef enum ExprKind {
    EXPR_INT,   /* int_value, of type TCC_INT32 or TCC_BOOL */
    EXPR_FLOAT, /* float_value, of a floating type */
    EXPR_VAR,
    EXPR_ADD,
    EXPR_SUB,
    EXPR_MUL,
    EXPR_DIV, /* floor division */
    EXPR_MOD, /* floor modulo */
    EXPR_MIN,
    EXPR_MAX,
    EXPR_XOR, /* bitwise exclusive or of integers: shared-memory swizzles */
    EXPR_EQ,
    EXPR_NE,
    EXPR_LT,
    EXPR_LE,
    EXPR_AND,
    EXPR_OR,
    EXPR_NOT,    /* bin.a */
    EXPR_SELECT, /* if_then_else: only the chosen side is evaluated */
    EXPR_CAST,
    EXPR_LOAD,   /* buffer[index...]: several indices before flattening, one after */
    EXPR_RAMP,   /* base, base + stride, ... (lanes values): a vector index */
    EXPR_ACCESS, /* compute definitions only: tensor(index...) */
    EXPR_REDUCE, /* compute definitions only: sum of source over axes */
} ExprKind;

struct tcc_expr {
    ExprKind kind;
    tcc_dtype type;
    int lanes; /* 1 for scalars; > 1 for vectors made by the vectorize pass */
    union {
        int64_t int_value;
        double float_value;
        Var *var;
        struct {
            Expr *a, *b;
        } bin;
        struct {
            Expr *cond, *then_value, *else_value;
        } select;
        struct {
            Expr *value;
        } cast;
        struct {
            Buffer *buffer;
            int nindex;
            Expr **index;
        } load;
        struct {
            Expr *base;
            int64_t stride;
        } ramp;
        struct {
            Tensor *tensor;
            int nindex;
            Expr **index;
        } access;
        struct {
            Expr *source;
            int naxis;
            IterVar **axis;
        } reduce;
    };
};

/* ---- buffers ------------------------------------------------------------------------ */

/* Memory a kernel reads or writes: a global parameter, or an allocation in shared
 * memory, registers or tensor-core fragments. Before flattening, accesses carry one
 * index per dimension and `min` gives the first index of each dimension (the region
 * the schedule realized); flattening turns them into one element offset. */
/* A shared tile laid out XOR-swizzled, as CUTLASS's Swizzle<bits, base, shift>: element
 * offset o lives at o ^ (((o >> shift) & (2^bits - 1)) << base). The 16-byte chunks of each
 * 128-byte line are permuted by the row (or the line, for rows shorter than a line), so that
 * the eight rows one ldmatrix reads, and the chunks one 16-byte copy writes, fall in eight
 * different banks without padding: every row starts a line, as in global memory. */
/* A tile can also lie in column blocks (`block` > 0): its rows x cols elements (the last two
 * dimensions) stored as cols / block tiles of rows x block, one after the other, each
 * swizzled as above on its rows of TCI_SWIZZLE_BLOCK_BYTES (128-byte lines): wgmma's layout
 * for an operand whose rows run along m or n (a row-major B, k x n), which wgmma reads
 * transposed; tensorize reads an operand so exactly when its tile lies in blocks. */
enum { TCI_SWIZZLE_BLOCK_BYTES = 128 };
typedef struct Swizzle {
    int bits; /* 0: not swizzled */
    int base, shift;
    int block; /* 0: rows as they are */
    /* > 0: an output tile in column blocks that the copy engine stores a block at a time,
     * which store_ring makes a ring of this many blocks (tci_store_ring). */
    int ring;
} Swizzle;

/* The column blocks that an output tile of `blocks` column blocks keeps in shared memory when
 * the copy engine stores it a block at a time, its writers `writer_cols` side by side along
 * its columns: TCI_STORE_RING_BLOCKS (a block written while the one before is stored) where
 * one writer spans the columns and the tile has more blocks, else 0 (the whole tile). */
enum { TCI_STORE_RING_BLOCKS = 2 };
int tci_store_ring(int64_t blocks, int64_t writer_cols);

struct Buffer {
    const char *name;
    tcc_dtype type;
    tcc_scope scope;
    int ndim;
    int64_t shape[TCI_MAX_DIMS];
    Expr *min[TCI_MAX_DIMS]; /* NULL means 0 */
    /* Elements between consecutive indices of each dimension: row-major and dense unless
     * the schedule padded a dimension (tcc_storage_align) to keep banks apart. */
    int64_t strides[TCI_MAX_DIMS];
    int64_t elements;      /* elements the buffer spans: shape[0] * strides[0] */
    int param_index;       /* position among the kernel's parameters, or -1 */
    int64_t shared_offset; /* shared scope: byte offset in the kernel's dynamic shared
                              memory once plan_shared placed it, else -1 */
    Swizzle swizzle;
};

/* ---- statements --------------------------------------------------------------------- */

typedef enum StmtKind {
    STMT_SEQ,
    STMT_FOR,
    STMT_STORE,
    STMT_IF,
    STMT_ALLOCATE,     /* buffer lives for the body */
    STMT_BARRIER,      /* __syncthreads() */
    STMT_WMMA,         /* one warp-wide tensor-core operation */
    STMT_COPY_ASYNC,   /* cp.async: a 4-, 8- or 16-byte copy from global to shared memory */
    STMT_ASYNC_COMMIT, /* cp.async.commit_group: the copies issued so far form a group */
    STMT_ASYNC_WAIT,   /* cp.async.wait_group: wait until at most `pending` groups are in flight */
    STMT_WGMMA_SYNC,   /* one step of wgmma's protocol (WgmmaSync) */
    STMT_BULK_COPY,    /* cp.async.bulk.tensor: a tile from global to shared memory (TensorMap) */
    STMT_BULK_STORE,   /* cp.async.bulk.tensor: shared to global memory (bulk.dst: the source) */
    STMT_BULK_WAIT,    /* cp.async.bulk.wait_group.read: the bulk stores have read their tiles */
    STMT_MBARRIER,     /* one operation on a shared-memory barrier (MbarrierOp) */
    STMT_SETMAXNREG,   /* setmaxnreg: a warpgroup's registers a thread raised or lowered */
} StmtKind;

/* A tensor map (CUtensorMap): how the bulk tensor copy engine (sm_90) finds the tiles of a
 * global tensor. The kernel takes one per map as a parameter after its buffers, which the
 * launcher encodes from the tensor's device address and `enc`. A box spans at most
 * TCI_MAP_MAX_BOX elements a dimension (an im2col box: TCI_MAP_MAX_IM2COL_PIXELS pixels). */
enum {
    TCI_MAX_MAP_RANK = TCC_TENSOR_MAP_MAX_RANK,
    TCI_MAP_MAX_BOX = 256,
    TCI_MAP_MAX_IM2COL_PIXELS = 1024
};
typedef struct TensorMap {
    tcc_tensor_map_encoding enc; /* enc.param: the tensor's position among the parameters */
    Buffer *tensor;              /* the global parameter the tiles come from */
    int index;                   /* among the function's maps */
} TensorMap;

/* The operations on an mbarrier (a 64-bit object in shared memory) that a pipeline of bulk
 * copies uses: a thread initializes it for `count` arrivals; the thread that issues a stage's
 * copies arrives announcing the bytes they will deliver (expect_tx); the copies complete
 * those bytes; every thread that reads the stage waits until the phase of parity `parity`
 * has completed; once done reading it, each warp arrives on the stage's `empty` barrier, which the
 * issuing thread waits for before it refills the stage. */
typedef enum MbarrierOp {
    MBARRIER_INIT,      /* mbarrier.init(count) */
    MBARRIER_EXPECT_TX, /* mbarrier.arrive.expect_tx(bytes) */
    MBARRIER_WAIT,      /* mbarrier.try_wait.parity until it succeeds */
    MBARRIER_ARRIVE,    /* mbarrier.arrive */
} MbarrierOp;

/* wgmma's products run asynchronously, reading their operands from shared memory through
 * the async proxy: a warpgroup fences its registers before the products (fence), closes them
 * into a group (commit), and waits for groups before it reads the accumulators or lets the
 * tiles be overwritten (wait); the copies that filled the tiles were writes of the generic
 * proxy, which a proxy fence makes visible to the async one. */
typedef enum WgmmaSync {
    WGMMA_FENCE,       /* wgmma.fence */
    WGMMA_COMMIT,      /* wgmma.commit_group */
    WGMMA_WAIT,        /* wgmma.wait_group(pending) */
    WGMMA_PROXY_FENCE, /* fence.proxy.async.shared::cta */
} WgmmaSync;

typedef enum ForKind {
    FOR_SERIAL,
    FOR_UNROLLED,   /* the unroll pass replicates the body */
    FOR_VECTORIZED, /* the vectorize pass turns the body into one vector access */
    FOR_THREAD,     /* var is a block or thread index (tag); extent is its launch size */
} ForKind;

typedef enum WmmaOp {
    WMMA_FILL,   /* fragment[fragment_index] = fill_value */
    WMMA_LOAD_A, /* fragment[fragment_index] = memory tile at memory_index (row stride) */
    WMMA_LOAD_B,
    WMMA_MMA,   /* fragment[fragment_index] = a[a_index] * b[b_index] + c[c_index] */
    WMMA_STORE, /* memory tile at memory_index = fragment[fragment_index] */
} WmmaOp;

typedef struct WmmaStmt {
    WmmaOp op;
    TensorFamily family; /* WMMA or mma.sync: how codegen spells the operation */
    int m, n, k;
    Buffer *fragment; /* the destination (FILL, LOAD, MMA) or the source (STORE) */
    Expr *fragment_index;
    Buffer *a, *b, *c; /* MMA operands; c is the accumulator read */
    Expr *a_index, *b_index, *c_index;
    /* wgmma: where it holds the product adds c, where not it starts from zero (PTX's scale-d;
     * NULL: always adds). wgmma_zero_init sets it in place of a fill of zeros. */
    Expr *accumulate;
    Buffer *memory; /* LOAD/STORE: global or shared */
    int nindex;
    Expr **memory_index; /* first element of the tile (one per dim until flattened) */
    int64_t stride;      /* elements between rows of the tile in memory */
    bool col_major;
    double fill_value;
} WmmaStmt;

/* Whether a tensor-core statement's a and b are memory (wgmma's shared-memory operands, at
 * flat element offsets a_index and b_index) rather than fragments. */
static inline bool tci_wmma_operands_in_memory(const WmmaStmt *w)
{
    return w->family == TENSOR_WGMMA && w->op == WMMA_MMA;
}

struct Stmt {
    StmtKind kind;
    union {
        struct {
            int count;
            Stmt **items;
        } seq;
        struct {
            Var *var;
            Expr *min;
            Expr *extent;
            ForKind kind;
            tcc_thread_tag tag; /* FOR_THREAD only */
            /* Software pipelining: stages > 0 asks software_pipeline to overlap the copies
             * of later iterations with this one's work; the loop it makes is `pipelined`,
             * synchronized by its own barriers, which thread_sync leaves alone. */
            int stages;
            int in_flight; /* the work's reads of a stage outlive it this many iterations */
            bool pipelined;
            /* Warp specialization: `warp_specialized` asks software_pipeline for a loop of
             * its own that issues the bulk copies (`producer`), which warp_specialize gives
             * to a warpgroup added to the block. */
            bool warp_specialized;
            bool producer;
            /* A persistent grid: > 0 asks persistent_grid to run the block's tiles on `persistent`
             * blocks, this loop carrying on from one tile into the next. */
            int64_t persistent;
            /* Ping-pong (CUTLASS's): > 1 asks for `turns` consumer warpgroups of a persistent,
             * warp-specialized loop that take the block's tiles in turns, each computing whole
             * tiles of its own; persistent_grid sets `tile_steps`, the iterations of a tile. */
            int turns;
            int64_t tile_steps;
            /* tcc_pragma on the nest under this loop (TVM's pragma_auto_unroll_max_step and
             * pragma_unroll_explicit, read by unroll): `pragmas` has a bit a pragma given
             * (PragmaKind), its value beside it. */
            unsigned pragmas;
            int64_t auto_unroll_max_step;
            bool unroll_explicit;
            /* unroll's mark under unroll_explicit 0: the loop stays, and LLVM unrolls it
             * fully (llvm.loop.unroll.full), as nvcc does TVM's `#pragma unroll`. */
            bool llvm_unroll;
            Stmt *body;
        } loop;
        struct {
            Buffer *buffer;
            int nindex;
            Expr **index;
            Expr *value;
        } store;
        struct {
            Expr *cond;
            Stmt *then_body;
            Stmt *else_body; /* may be NULL */
        } branch;
        struct {
            Buffer *buffer;
            Stmt *body;
        } alloc;
        WmmaStmt wmma;
        struct {
            Buffer *dst, *src;           /* shared, global */
            Expr *dst_index, *src_index; /* element offsets (flat) */
            int bytes;                   /* 4, 8 or 16 */
            Expr *predicate; /* NULL, or: when false, nothing is read and zeros are written */
        } copy;
        struct {
            int pending;
        } wait;
        struct {
            WgmmaSync op;
            int pending; /* WGMMA_WAIT: groups left in flight */
        } wgmma_sync;
        struct {
            Buffer *dst;     /* shared */
            Expr *dst_index; /* flat element offset of the tile's first element */
            const TensorMap *map;
            Expr *coords[TCI_MAX_MAP_RANK]; /* the box's first element, map->rank of them */
            Expr *offsets[3];               /* im2col: the filter offsets, rank - 2 of them */
            Buffer *barrier;                /* NULL until software_pipeline gives it one */
            Expr *barrier_index;
            /* > 1: the first `multicast` blocks of the thread-block cluster each receive the
             * box at dst and complete its bytes on their own barrier at barrier_index
             * (multicast::cluster); 0: the issuing block only. */
            int multicast;
            tcc_cache_hint cache; /* the L2 policy of the lines it moves */
        } bulk;
        struct {
            MbarrierOp op;
            Buffer *barrier; /* shared, TCI_MBARRIER_WORDS int32 words a barrier */
            Expr *index;     /* which barrier of the buffer */
            /* INIT: arrivals; EXPECT_TX: bytes; ARRIVE: > 1 arrives on the barrier at the same
             * offset in each of the cluster's first `value` blocks (mapa), 0 on its own */
            int64_t value;
            Expr *parity; /* WAIT */
        } mbarrier;
        struct {
            int id;      /* 0: __syncthreads() (TciBarrierId) */
            int threads; /* threads that meet there (a multiple of 32); 0: the whole block */
            /* bar.arrive: counts the threads at a named barrier without waiting there (the
             * others of `threads` wait with bar.sync): one group's signal to another */
            bool arrive;
            /* barrier.cluster: every thread of every block of the thread-block cluster, which
             * also makes mbarriers initialized before it visible to the others */
            bool cluster;
        } barrier;
        struct {
            bool increase;
            int registers; /* per thread: 24 to 256, a multiple of 8 */
        } setmaxnreg;
    };
};

/* A cluster's blocks at most (a multicast mask's bits). */
enum { TCI_MAX_CLUSTER_BLOCKS = TCC_MAX_CLUSTER_BLOCKS };
/* An mbarrier is 8 bytes: two int32 words of a shared buffer. */
enum { TCI_MBARRIER_WORDS = 2 };

/* The pragmas a loop can carry (tcc_pragma), a bit each in loop.pragmas. */
typedef enum PragmaKind {
    PRAGMA_AUTO_UNROLL_MAX_STEP = 1,
    PRAGMA_UNROLL_EXPLICIT = 2,
} PragmaKind;
/* The pragma named by the n bytes at `name` ("auto_unroll_max_step"), or 0 for none. */
PragmaKind tci_pragma_kind(const char *name, size_t n);
const char *tci_pragma_name(PragmaKind kind);

/* ---- functions ---------------------------------------------------------------------- */

/* The loop IR of one kernel: what the passes transform and codegen translates. */
struct PrimFunc {
    const char *name;
    Arena *arena; /* owns every node of the function (not owned by it) */
    int nparam;
    Buffer **params;    /* global tensors, in launch-argument order */
    Var *thread_var[6]; /* indexed by tcc_thread_tag; NULL if unused */
    int64_t launch[6];  /* grid x,y,z then block x,y,z; 1 where unused */
    /* Thread-block clusters (tcc_cluster): blocks of a cluster along grid x, y, z, each
     * dividing the launch's; 0 or 1 where the grid is not clustered. */
    int64_t cluster[3];
    Stmt *body;
    int next_var_id;
    int64_t shared_bytes; /* dynamic shared memory plan_shared laid out; 0 before */
    int ntensor_map;
    TensorMap **tensor_maps; /* parameters after params, in this order */
};

/* The blocks of `func`'s thread-block clusters along grid dimension d: 1 where not clustered. */
static inline int64_t tci_cluster_dim(const PrimFunc *func, int d)
{
    return func->cluster[d] > 1 ? func->cluster[d] : 1;
}

/* The grid dimension `func`'s clusters lie along (the first, where lowering refused more than
 * one), or -1 without clusters. */
static inline int tci_cluster_axis(const PrimFunc *func)
{
    for (int d = 0; d < 3; d++)
        if (func->cluster[d] > 1)
            return d;
    return -1;
}

/* The blocks of one thread-block cluster of `func`: 1 without clusters. */
static inline int64_t tci_cluster_blocks(const PrimFunc *func)
{
    return tci_cluster_dim(func, 0) * tci_cluster_dim(func, 1) * tci_cluster_dim(func, 2);
}

/* ---- constructors (ir.c) ------------------------------------------------------------ */

Var *tci_var(Arena *arena, const char *name, int id);
Var *tci_prim_func_new_var(PrimFunc *func, const char *name);
/* The kernel's variable of thread index `tag` (thread_var), made where no code read it yet. */
Var *tci_prim_func_thread_var(PrimFunc *func, tcc_thread_tag tag);

Expr *tci_ir_int(Arena *arena, int64_t value);
Expr *tci_ir_bool(Arena *arena, bool value);
Expr *tci_ir_float(Arena *arena, double value, tcc_dtype type);
Expr *tci_ir_var(Arena *arena, Var *var);
/* Arithmetic and comparisons; the result type is taken from `a` (bool for comparisons).
 * Constants are folded and x+0, x*1, x*0 removed, nothing more: see simplify.c. */
Expr *tci_ir_binary(Arena *arena, ExprKind kind, Expr *a, Expr *b);
Expr *tci_ir_not(Arena *arena, Expr *a);
Expr *tci_ir_select(Arena *arena, Expr *cond, Expr *then_value, Expr *else_value);
/* The lanes of an if_then_else: the widest of its condition and sides (the parser's too). */
int tci_select_lanes(const Expr *cond, const Expr *then_value, const Expr *else_value);
Expr *tci_ir_cast(Arena *arena, tcc_dtype type, Expr *value);
Expr *tci_ir_load(Arena *arena, Buffer *buffer, int nindex, Expr *const *index);
Expr *tci_ir_ramp(Arena *arena, Expr *base, int64_t stride, int lanes);
Expr *tci_ir_access(Arena *arena, Tensor *tensor, int nindex, Expr *const *index);
Expr *tci_ir_reduce(Arena *arena, Expr *source, int naxis, IterVar *const *axis);

Buffer *tci_ir_buffer(Arena *arena, const char *name, tcc_dtype type, tcc_scope scope, int ndim,
                      const int64_t *shape);

Stmt *tci_stmt_seq(Arena *arena, int count, Stmt *const *items); /* flattens nested seqs */
Stmt *tci_stmt_seq2(Arena *arena, Stmt *first, Stmt *second);    /* either may be NULL */
/* The statements of *s in order: a seq's items, or *s alone. */
Stmt *const *tci_stmt_items(Stmt *const *s, int *count);
/* A statement of `kind`, every field zero, for the constructors to fill. */
Stmt *tci_stmt_new(Arena *arena, StmtKind kind);
Stmt *tci_stmt_for(Arena *arena, Var *var, Expr *min, Expr *extent, ForKind kind, Stmt *body);
Stmt *tci_stmt_thread(Arena *arena, Var *var, tcc_thread_tag tag, int64_t extent, Stmt *body);
Stmt *tci_stmt_store(Arena *arena, Buffer *buffer, int nindex, Expr *const *index, Expr *value);
Stmt *tci_stmt_if(Arena *arena, Expr *cond, Stmt *then_body, Stmt *else_body);
Stmt *tci_stmt_allocate(Arena *arena, Buffer *buffer, Stmt *body);
Stmt *tci_stmt_barrier(Arena *arena);
/* bar.sync id, threads: a barrier of named `id` (1 to 15) for `threads` of the block. */
Stmt *tci_stmt_named_barrier(Arena *arena, int id, int threads);
/* The named barriers of tcc's kernels (bar.sync's ids, 16 a block). */
typedef enum TciBarrierId {
    TCI_BARRIER_BLOCK = 0,     /* __syncthreads() */
    TCI_BARRIER_CONSUMERS = 1, /* a producer warpgroup's consumers (warp_specialize) */
    /* Consumers taking turns at tiles: TCI_BARRIER_TURNS + g is where consumer g waits for
     * the one before it to have started its last step (software_pipeline). */
    TCI_BARRIER_TURNS = 2,
    /* The warpgroups that write a tile the copy engine stores, each storing its own block:
     * TCI_BARRIER_WRITERS + w is where warpgroup w's threads meet (lower/bulk_copy.c). */
    TCI_BARRIER_WRITERS = 4,
    TCI_BARRIER_LAST = 15,
} TciBarrierId;
/* bar.arrive at named barrier `id` of `threads` threads: signals without waiting. */
Stmt *tci_stmt_barrier_arrive(Arena *arena, int id, int threads);
/* barrier.cluster: every thread of every block of the thread-block cluster. */
Stmt *tci_stmt_cluster_barrier(Arena *arena);
Stmt *tci_stmt_setmaxnreg(Arena *arena, bool increase, int registers);
Stmt *tci_stmt_wmma(Arena *arena, const WmmaStmt *wmma);
Stmt *tci_stmt_copy_async(Arena *arena, Buffer *dst, Expr *dst_index, Buffer *src, Expr *src_index,
                          int bytes, Expr *predicate);
Stmt *tci_stmt_async_commit(Arena *arena);
Stmt *tci_stmt_async_wait(Arena *arena, int pending);
/* `pending` counts only for WGMMA_WAIT. */
Stmt *tci_stmt_wgmma_sync(Arena *arena, WgmmaSync op, int pending);
/* coords: map->rank of them; offsets: rank - 2 for im2col maps, else none. */
Stmt *tci_stmt_bulk_copy(Arena *arena, Buffer *dst, Expr *dst_index, const TensorMap *map,
                         Expr *const *coords, Expr *const *offsets, Buffer *barrier,
                         Expr *barrier_index);
/* The tile at src[src_index] stored into the map's box at coords (STMT_BULK_STORE), closed
 * into a bulk async-group of its own; STMT_BULK_WAIT (`wait`) waits until this thread's stores
 * have read their shared tiles, but for the last `pending` groups. */
Stmt *tci_stmt_bulk_store(Arena *arena, Buffer *src, Expr *src_index, const TensorMap *map,
                          Expr *const *coords);
Stmt *tci_stmt_bulk_wait(Arena *arena, int pending);
Stmt *tci_stmt_mbarrier(Arena *arena, MbarrierOp op, Buffer *barrier, Expr *index, int64_t value,
                        Expr *parity);
/* Thread (0, 0, 0) of the block, over the thread indices the function has: the one that
 * issues bulk copies and stores and initializes barriers. */
Expr *tci_first_thread(Arena *arena, const PrimFunc *func);
/* Bytes one bulk copy of the map delivers. */
int64_t tci_tensor_map_copy_bytes(const TensorMap *map);
/* Registers a tensor map with the function (a parameter of its kernel); NULL when full. */
TensorMap *tci_prim_func_add_tensor_map(PrimFunc *func, const TensorMap *map);
/* Pads dimension `dim` of a buffer so that its stride is a multiple of `factor` plus
 * `offset` (TVM's storage_align), recomputing the strides of the outer dimensions. */
void tci_buffer_align(Buffer *buffer, int dim, int64_t factor, int64_t offset);
/* Whether rows of `row_bytes` can be swizzled: a power of two of at least 32 bytes. */
bool tci_swizzle_takes_rows(int64_t row_bytes);
/* Lays the buffer out swizzled (see Swizzle); false, leaving it as it was, unless its rows
 * (the last dimension) are dense and tci_swizzle_takes_rows. */
bool tci_buffer_swizzle(Buffer *buffer);
/* Lays the buffer out in swizzled column blocks of 128 bytes (see Swizzle); false, leaving
 * it as it was, unless its rows are dense and a whole number of blocks, and its last two
 * dimensions have at least 2 and a multiple of 8 rows. */
bool tci_buffer_swizzle_blocks(Buffer *buffer);
/* Bytes of the pattern a swizzled tile repeats, which its start must be a multiple of for
 * hardware that swizzles addresses itself (wgmma's descriptors): 8 rows of a block. */
int64_t tci_swizzle_atom_bytes(const Buffer *buffer);
/* Elements after which a swizzle repeats: offsets a multiple of it apart swizzle alike (the
 * whole tile for column blocks). */
int64_t tci_swizzle_period(const Buffer *buffer);
/* Where element offset `index` (a scalar) of a swizzled buffer lives. */
Expr *tci_swizzle_index(Arena *arena, const Buffer *buffer, Expr *index);
/* Where element offset `index` lies once in column blocks (whole tiles before it pass
 * through), before the swizzle's xor: index itself when the buffer has none. */
Expr *tci_swizzle_block_index(Arena *arena, const Buffer *buffer, Expr *index);
/* index = *aligned + *rest, *aligned the terms of its sum that are multiples of the buffer's
 * swizzle period (a stage's offset, say): swizzle(index) = swizzle(*rest) + *aligned. */
void tci_swizzle_split(Arena *arena, const Buffer *buffer, Expr *index, Expr **aligned,
                       Expr **rest);
/* The element offset of index[0 .. nindex) in `b`: the sum of (index[d] - min[d]) * strides[d]
 * (what flatten makes of every access). */
Expr *tci_buffer_flat_index(Arena *arena, const Buffer *b, int nindex, Expr *const *index);
/* Strides and span of a dense row-major buffer (after its shape was set). */
void tci_buffer_set_dense(Buffer *buffer);
bool tci_buffer_is_dense(const Buffer *buffer);
/* Bytes the buffer spans (its elements, padding included). */
int64_t tci_buffer_bytes(const Buffer *buffer);

bool tci_expr_is_int(const Expr *e, int64_t value);
bool tci_expr_is_const(const Expr *e);
/* Structural equality (variables by identity). */
bool tci_expr_equal(const Expr *a, const Expr *b);

/* ---- utilities (visit.c) ------------------------------------------------------------- */

/* Replace variables: map[i] is the replacement of vars[i]. */
Expr *tci_expr_substitute(Arena *arena, Expr *e, int n, Var *const *vars, Expr *const *map);
Stmt *tci_stmt_substitute(Arena *arena, Stmt *s, int n, Var *const *vars, Expr *const *map);
bool tci_expr_uses_var(const Expr *e, const Var *var);
/* Whether `e` itself reads memory (a load, an access or a reduction), and whether `e` or any
 * expression inside it does. */
bool tci_expr_is_memory_read(const Expr *e);
bool tci_expr_reads_memory(const Expr *e);
/* Whether every load on the sides of an if_then_else is also one its condition makes (as
 * relu's `x < 0 ? 0 : x` with x a load): evaluating both sides then reads nothing the
 * condition did not, and a select of whole vectors may stand for it. */
bool tci_select_sides_load_as_cond(const Expr *select);
/* Whether `body` allocates a buffer whose region starts at an index made of `var`. Buffers are
 * shared between the statements that name them, so substituting a value for the variable
 * cannot reach their region starts: a pass that would (unrolling, removing a loop of one
 * iteration) leaves such a loop as it is. The compiler never builds one (regions start at
 * block-level indices); loop IR read from text can. */
bool tci_stmt_allocates_region_of(const Stmt *body, const Var *var);

/* A generic rewriter: the callbacks return a replacement or NULL to recurse. */
typedef struct Rewriter {
    Arena *arena;
    Expr *(*expr)(struct Rewriter *rw, Expr *e);
    Stmt *(*stmt)(struct Rewriter *rw, Stmt *s);
    void *user;
} Rewriter;
Expr *tci_rewrite_expr(Rewriter *rw, Expr *e);
Stmt *tci_rewrite_stmt(Rewriter *rw, Stmt *s);
/* A read-only walk, beside the rewriter: `expr` is called on every expression and `stmt` on
 * every statement (a statement's expressions included: indices, values, conditions, loop
 * bounds, region starts, tensor-core operands), parents before children; a callback returns
 * false to skip the node's children, and sets `done` to end the whole walk. Either callback
 * may be NULL. */
typedef struct Visitor {
    bool (*expr)(struct Visitor *v, const Expr *e);
    bool (*stmt)(struct Visitor *v, const Stmt *s);
    void *user;
    bool done;
} Visitor;
void tci_visit_expr(Visitor *v, const Expr *e);
void tci_visit_stmt(Visitor *v, const Stmt *s);
/* Rebuild an expression's / statement's children through the rewriter (no callback on
 * the node itself): for callbacks that handle a node and want the default for children. */
Expr *tci_rewrite_expr_children(Rewriter *rw, Expr *e);
Stmt *tci_rewrite_stmt_children(Rewriter *rw, Stmt *s);

/* ---- simplifier (simplify.c) -------------------------------------------------------- */

/* Canonical integer arithmetic: sums of products folded, like terms merged, and div/mod
 * by constants removed where the ranges of the variables prove them redundant. */
typedef struct VarRange {
    const Var *var;
    int64_t min, extent;
} VarRange;
Expr *tci_simplify(Arena *arena, Expr *e, int nrange, const VarRange *ranges);
/* The ranges of the kernel's thread indices that its code reads (0 to the launch's size),
 * for tci_simplify; returns how many (at most 3). */
int tci_prim_func_thread_ranges(const PrimFunc *func, VarRange ranges[3]);
/* Simplify every expression of a statement, using the ranges of the enclosing loops. */
Stmt *tci_simplify_stmt(Arena *arena, Stmt *s);
/* The largest power of two (at most 1<<30) that provably divides e, given that the
 * variables are arbitrary integers. */
int64_t tci_expr_known_divisor(Arena *arena, Expr *e);

/* ---- printer (print.c) -------------------------------------------------------------- */

const char *tci_scope_name(tcc_scope scope);
void tci_print_expr(StrBuf *sb, const Expr *e);
void tci_print_stmt(StrBuf *sb, const Stmt *s, int indent);
void tci_print_prim_func(StrBuf *sb, const PrimFunc *func);
/* Asynchronous copies, mbarriers, barriers, setmaxnreg and the function's tensor maps
 * (async_copy.c). */
void tci_print_copy_async(StrBuf *sb, const Stmt *s);
void tci_print_barrier(StrBuf *sb, const Stmt *s);
void tci_print_setmaxnreg(StrBuf *sb, const Stmt *s);
/* bulk_copy, bulk_store and bulk_wait_read statements. */
void tci_print_bulk(StrBuf *sb, const Stmt *s);
void tci_print_mbarrier(StrBuf *sb, const Stmt *s);
/* "mbarrier.init", "mbarrier.expect_tx", "mbarrier.wait". */
const char *tci_mbarrier_op_name(MbarrierOp op);
const char *tci_cache_hint_name(tcc_cache_hint hint); /* "evict_last" */
void tci_print_tensor_maps(StrBuf *sb, const PrimFunc *func);
/* How a tensor-core statement prints: "wmma.load_matrix_a", "ldmatrix.a" ...; NULL for an
 * unknown op. */
const char *tci_wmma_op_name(TensorFamily family, WmmaOp op);
/* "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "fence.proxy.async"; NULL for an
 * unknown step. */
const char *tci_wgmma_sync_name(WgmmaSync op);
/* The printed function as a malloc'd string (free() it); NULL when out of memory. */
char *tci_prim_func_text(const PrimFunc *func);

/* ---- parser (parse.c) --------------------------------------------------------------- */

/* Reads back what tci_print_prim_func prints: every node goes into `arena`, built as
 * written (nothing folded), so printing *out gives the text again. On a syntax error,
 * an unknown name or a wrong type or lane count, returns TCC_ERROR_INVALID_ARGUMENT
 * with one line "LINE:COL: expected ..., found ..." in the context. It sets, then clears,
 * the arena's recovery point (tci_arena_set_recovery). */
tcc_status tci_parse_prim_func(tcc_context *ctx, Arena *arena, const char *text, PrimFunc **out);

#endif
