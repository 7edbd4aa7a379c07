/*
 * Compute definitions and schedules (TVM's "tensor expression" layer).
 *
 * A tcc_func holds tensors (placeholders and computes), the axes they are defined
 * over, and once tcc_schedule_create has run, one stage per tensor. Schedule
 * primitives edit the stages: they add split/fuse relations between axes, reorder the
 * leaf axes, and record where a stage is computed (its attach point). The lowering in
 * passes/ reads all of this and produces the loop IR.
 */
#ifndef TCI_TE_TE_H
#define TCI_TE_TE_H

#include "ir/ir.h"
#include "support/context.h"

typedef struct tcc_stage Stage;
typedef struct tcc_func Func;

/* An axis of a stage: a root axis (an output or reduction axis of the tensor) or one
 * made by split or fuse. Its range is known only after bound inference. */
struct tcc_iter_var {
    Var *var;
    bool reduce;
    int64_t dom_extent; /* root axes: extent of the compute domain */
    Stage *stage;       /* set when the axis belongs to a stage */
    /* schedule annotations */
    ForKind for_kind; /* FOR_SERIAL, FOR_UNROLLED or FOR_VECTORIZED */
    bool bound;
    tcc_thread_tag tag;
    bool tensorized;
    tcc_intrinsic intrinsic; /* the WMMA operation; `family` says how it is spelled */
    TensorFamily family;
    int mma_m, mma_n, mma_k;
    bool col_major;         /* the tile in memory is column-major */
    int pipeline_stages;    /* tcc_pipeline: buffers of the stages attached here, 0 for none */
    int pipeline_in_flight; /* tcc_pipeline_in_flight: iterations the work's reads outlive */
    bool warp_specialized;  /* tcc_warp_specialize: the copies issued by a warpgroup of their own */
    int64_t persistent_blocks; /* tcc_persistent: the blocks of a persistent grid, 0 for none */
    int pingpong_consumers;    /* tcc_pingpong: consumer warpgroups taking turns, 0 for none */
    int cluster_blocks;        /* tcc_cluster: blocks of a thread-block cluster along it, 0 */
    /* tcc_pragma: the pragmas given (PragmaKind bits) and their values, which lowering
     * puts on the axis's loop. */
    unsigned pragmas;
    int64_t auto_unroll_max_step;
    bool unroll_explicit;
    /* set by lowering: the axis takes values min + [0, extent) (min is 0 except for
     * root axes of attached stages); loop_var is the variable of its loop (the kernel's
     * thread variable when bound). */
    Expr *min;
    int64_t extent;
    Var *loop_var;
};

struct tcc_tensor {
    Func *func;
    const char *name;
    bool is_compute;
    tcc_dtype type;
    int ndim;
    int64_t shape[TCI_MAX_DIMS];
    IterVar *axis[TCI_MAX_DIMS]; /* compute: one per output dimension */
    int nreduce;
    IterVar *reduce_axis[TCI_MAX_DIMS];
    Expr *body; /* compute: the value; EXPR_REDUCE at the top for reductions */
    Stage *stage;
    /* tcc_compute_into: stored into store_target at store_index (over this tensor's axes) */
    Tensor *store_target;
    Expr *store_index[TCI_MAX_DIMS];
    /* set by lowering */
    Expr *lowered_body; /* body with inlined tensors substituted */
    Buffer *buffer;     /* where the tensor is stored; NULL when inlined */
};

typedef enum RelationKind { REL_SPLIT, REL_FUSE } RelationKind;

typedef struct Relation {
    RelationKind kind;
    IterVar *parent, *outer, *inner; /* split: parent -> outer, inner */
    IterVar *fused;                  /* fuse: outer, inner -> fused */
    int64_t factor, nparts;          /* split: one of them is set, the other 0 */
} Relation;

typedef enum AttachKind { ATTACH_ROOT, ATTACH_INLINE, ATTACH_AT } AttachKind;

struct tcc_stage {
    Func *func;
    Tensor *tensor;
    tcc_scope scope;
    bool is_output;
    AttachKind attach;
    Stage *attach_stage;
    IterVar *attach_axis;
    int nleaf, leaf_cap;
    IterVar **leaf;
    int nrel, rel_cap;
    Relation *rel;
    /* tcc_storage_align, by dimension of the tensor: factor 0 leaves it dense. */
    int64_t align_factor[TCI_MAX_DIMS], align_offset[TCI_MAX_DIMS];
    bool swizzle;           /* tcc_storage_swizzle */
    bool swizzle_blocks;    /* tcc_storage_swizzle_blocks */
    bool bulk_copy;         /* tcc_storage_bulk_copy, with its map */
    IterVar *bulk_store_at; /* tcc_bulk_store: its loops from here in, with its map */
    tcc_tensor_map map;
};

struct tcc_func {
    tcc_context *ctx;
    Arena *arena;
    const char *name;
    int next_var_id;
    int ntensor, tensor_cap;
    Tensor **tensors; /* in definition order, which is a topological order */
    bool scheduled;
    int nstage, stage_cap;
    Stage **stages;    /* topological order: producers before consumers */
    bool failed;       /* a builder returned NULL; the message is in ctx */
    tcc_status status; /* the status of that first failure */
};

/* Returns the status of a schedule call that failed (for schedules written as a
 * sequence of primitives). */
#define TRY(call)                                                                                  \
    do {                                                                                           \
        tcc_status status_ = (call);                                                               \
        if (status_ != TCC_OK)                                                                     \
            return status_;                                                                        \
    } while (0)

/* te.c */
IterVar *tci_iter_var_new(Func *func, const char *name, int64_t extent, bool reduce);
Expr *tci_ir_access(Arena *arena, Tensor *tensor, int nindex, Expr *const *index);
Expr *tci_ir_reduce(Arena *arena, Expr *source, int naxis, IterVar *const *axis);
/* The elements of a shape, or -1 past INT32_MAX: kernels index memory with 32-bit offsets,
 * so a placeholder (at creation) and every tensor lowering gives a buffer must fit. */
int64_t tci_indexable_elements(int ndim, const int64_t *shape);
Tensor *tci_tensor_new(Func *func, const char *name, bool is_compute, int ndim,
                       const int64_t *shape, tcc_dtype type);
/* Appends to an arena-backed growable array of pointers. */
void tci_push(Arena *arena, void ***items, int *count, int *cap, void *item);
/* Records an error on the function and returns NULL (for builders). */
void *tci_func_fail(Func *func, tcc_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* The status of the first failed builder call (its message is already in the context). */
tcc_status tci_func_status(const Func *func);
tcc_context *tci_func_context(tcc_func *func);

/* schedule.c */
Stage *tci_stage_new(Func *func, Tensor *tensor);
int tci_stage_leaf_index(const Stage *stage, const IterVar *axis);
/* The stages that read `tensor`, directly. */
int tci_stage_readers(Func *func, const Tensor *tensor, Stage **out, int max);
bool tci_expr_reads(const Expr *e, const Tensor *tensor);

#endif
