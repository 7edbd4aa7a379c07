/*
 * tcc/tune.h: tuning, AutoTVM's way, in C.
 *
 *   templates      a C function that builds a kernel for a workload and reads its knobs from a
 *                  tcc_config (define_split, define_knob); run with a defining config it
 *                  yields the space, with an applying one it builds one point of it
 *   config spaces  the knobs a template defined, their lengths and product (AutoTVM's
 *                  ConfigSpace); a point is an index into it (ConfigEntity)
 *   tuners         random, grid, genetic and the model-based one (gradient-boosted trees
 *                  through XGBoost, opened at run time), proposing batches of indices
 *   records        one row per measured trial in an SQLite database; export and import as
 *                  JSON lines in AutoTVM's log layout; the best record of a workload applied
 *
 * The measurement itself (compile pool, child-process runner) is the tcc-tune tool's
 * (tools/tune_*.c); what it measures and the errors it tells apart are here.
 */
#ifndef TCC_TUNE_H
#define TCC_TUNE_H

#include "tcc/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- workloads -------------------------------------------------------------------- */

typedef enum tcc_workload_kind {
    TCC_WORKLOAD_CONV2D = 0,
    TCC_WORKLOAD_MATMUL,
} tcc_workload_kind;

/* What a template builds a kernel for: a convolution or a matrix product, as the compile
 * calls take them (their size fields set by their _init functions). */
typedef struct tcc_workload {
    size_t size; /* sizeof(tcc_workload): set by tcc_workload_init (tcc/tcc.h, "ABI") */
    tcc_workload_kind kind;
    tcc_conv2d_desc conv2d; /* for TCC_WORKLOAD_CONV2D */
    tcc_matmul_desc matmul; /* for TCC_WORKLOAD_MATMUL */
} tcc_workload;

/* The size set, the kind, and both descriptors initialized (tcc_conv2d_desc_init, ...). */
void tcc_workload_init_size(tcc_workload *workload, tcc_workload_kind kind, size_t size);
/* Also a macro over tcc_workload_init_size with its sizeof (tcc/tcc.h, "ABI"). */
void tcc_workload_init(tcc_workload *workload, tcc_workload_kind kind);
#define tcc_workload_init(workload, kind)                                                          \
    tcc_workload_init_size((workload), (kind), sizeof(tcc_workload))

/* ---- configs: what a template reads its knobs from -------------------------------- */

typedef struct tcc_config tcc_config;

/* A split of `extent` into `num_outputs` factors (AutoTVM's define_split, policy "factors":
 * every ordered tuple of divisors whose product is `extent`; the outermost printed as -1).
 * Defining, it records the knob and gives the space's first tuple; applying, the config's.
 * `factors` receives num_outputs values, outermost first. */
tcc_status tcc_define_split(tcc_config *cfg, const char *name, int64_t extent, int num_outputs,
                            int64_t *factors);
/* A knob taking one of `count` values (define_knob): the config's value in *value. */
tcc_status tcc_define_knob(tcc_config *cfg, const char *name, int count, const int64_t *values,
                           int64_t *value);
/* AutoTVM's cfg["tile_f"].apply(s, op, axis): splits `axis` by the factors given, innermost
 * first, into `num_outputs` axes (outermost first) in parts[]. */
tcc_status tcc_split_by_factors(tcc_stage *stage, tcc_iter_var *axis, int num_outputs,
                                const int64_t *factors, tcc_iter_var **parts);
/* A template refusing the config it is applying (an InstantiationError): returns
 * TCC_ERROR_SCHEDULE with `why` as the context's error. */
tcc_status tcc_config_reject(tcc_context *ctx, tcc_config *cfg, const char *why);
/* Whether the template refused the config (tcc_config_reject), as opposed to tcc refusing
 * the kernel it asked for: AutoTVM's INSTANTIATION_ERROR against COMPILE_HOST. */
bool tcc_config_rejected(const tcc_config *cfg);
/* Whether the config is defining the space (the template should not build). */
bool tcc_config_is_defining(const tcc_config *cfg);

/* ---- templates -------------------------------------------------------------------- */

/* A tunable template. `instantiate` defines its knobs through `cfg` and, when the config is
 * applying (not defining), builds the kernel for `arch` into *kernel. A config the template
 * cannot build is refused with a status and a message, no kernel. A program may define its
 * own (with designated initializers, so that fields added later stay zero). */
typedef struct tcc_template {
    size_t size;         /* sizeof(tcc_template), set by whoever defines it (tcc/tcc.h, "ABI") */
    const char *name;    /* "conv2d_no_batching", "gemm", "tutorial" */
    const char *summary; /* one line for --help */
    tcc_workload_kind kind;
    tcc_status (*instantiate)(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                              tcc_arch arch, const tcc_build_options *options, tcc_kernel **kernel);
    bool any_kind; /* takes a workload of either kind, not only `kind` (gemm) */
    /* Optional (NULL: each point builds a kernel of its own): the knobs (bit i: the i-th
     * defined) that the applying config `cfg` could set to their first value and build the
     * same kernel: those its kernel does not read (a wgmma kernel has no warp tiles) and those
     * whose value is what the first one ("chosen") would choose. The tuners propose one point
     * of each such set (tcc_config_space_canonical), so that no trial is spent on a kernel
     * measured before. Called for many points (a model ranks thousands a plan): decide from
     * the knobs, do not build; 0 where unsure. */
    uint64_t (*redundant_knobs)(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                                tcc_arch arch);
} tcc_template;

int tcc_template_count(void);
const tcc_template *tcc_template_at(int index);
/* NULL when no built-in template has that name. */
const tcc_template *tcc_template_find(const char *name);

/* The workload as AutoTVM keys it: a JSON array of the template's name and arguments
 * ('["tutorial/conv2d_no_batching", 1, 7, 7, 512, 512, 3, 3, [1, 1], [1, 1]]' for the seed's
 * template, so that its AutoTVM logs import). Returns the length written (snprintf's rules);
 * -1, writing "", when the template's or the workload's size is not one this library knows
 * (the call has no context to say so in: tcc_config_space_create does). */
int tcc_workload_key(const tcc_template *tmpl, const tcc_workload *workload, char *buf,
                     size_t size);
/* Its inverse: the workload `key` names, into *out, whose size the caller set (tcc/tcc.h,
 * "ABI"). A key that is not one this tcc writes for the template, exactly, is refused with a
 * line saying why (TCC_ERROR_INVALID_ARGUMENT), so that a key is never read as another
 * workload. */
tcc_status tcc_workload_from_key(tcc_context *ctx, const tcc_template *tmpl, const char *key,
                                 tcc_workload *out);

/* ---- config spaces ---------------------------------------------------------------- */

typedef struct tcc_config_space tcc_config_space;

typedef enum tcc_knob_kind {
    TCC_KNOB_SPLIT = 0, /* Split(policy=factors, product=P, num_outputs=N) */
    TCC_KNOB_OTHER,     /* OtherOption([v0, v1, ...]) */
} tcc_knob_kind;

/* Runs the template once, defining: the space of its knobs for the workload and arch. */
tcc_status tcc_config_space_create(tcc_context *ctx, const tcc_template *tmpl,
                                   const tcc_workload *workload, tcc_arch arch,
                                   tcc_config_space **out);
void tcc_config_space_destroy(tcc_config_space *space);
/* The number of points: the product of the knobs' lengths. */
int64_t tcc_config_space_size(const tcc_config_space *space);
int tcc_config_space_knob_count(const tcc_config_space *space);
const char *tcc_config_space_knob_name(const tcc_config_space *space, int knob);
tcc_knob_kind tcc_config_space_knob_kind(const tcc_config_space *space, int knob);
int64_t tcc_config_space_knob_length(const tcc_config_space *space, int knob);
/* The space as AutoTVM prints it ("ConfigSpace (len=10454400, space_map=\n   0 tile_f:
 * Split(policy=factors, product=512, num_outputs=4) len=220\n ...)"), malloc'd; NULL when out
 * of memory. */
char *tcc_config_space_format(const tcc_config_space *space);

/* Point `index` of the space, applying; AutoTVM's order (the first knob varies fastest). */
tcc_status tcc_config_create(tcc_context *ctx, const tcc_config_space *space, int64_t index,
                             tcc_config **out);
void tcc_config_destroy(tcc_config *cfg);
int64_t tcc_config_index(const tcc_config *cfg);
/* Which value each knob takes (its position in the knob's list of values or tuples). */
int64_t tcc_config_knob_choice(const tcc_config *cfg, int knob);
/* The config as AutoTVM logs it: '[["tile_f", [-1, 2, 64, 1]], ..., ["unroll_explicit", 0]]',
 * malloc'd. */
char *tcc_config_format(const tcc_config *cfg);
/* The point of `space` a logged config names (as tcc_config_format writes it). */
tcc_status tcc_config_parse(tcc_context *ctx, const tcc_config_space *space, const char *text,
                            tcc_config **out);
/* Numeric features of a config for a cost model: per split, the log2 of each factor; per
 * other knob, its value's position. Writes at most `count`; returns how many there are. */
int tcc_config_features(const tcc_config *cfg, double *features, int count);

/* The point that builds the kernel of point `index` with the fewest knobs set: `index` with
 * the knobs its template calls redundant there (tcc_template.redundant_knobs) at their first
 * value; `index` itself for a template without that function, -1 for an index outside the
 * space. Not safe to call on one space from two threads at once (it keeps a context of its
 * own for the template). */
int64_t tcc_config_space_canonical(const tcc_config_space *space, int64_t index);

/* The features of point `index` without making its config (a tuner ranks many). */
int tcc_config_space_features(const tcc_config_space *space, int64_t index, double *features,
                              int count);

/* Builds the config's point of the template (the template applying it). */
tcc_status tcc_config_instantiate(tcc_context *ctx, const tcc_template *tmpl, tcc_config *cfg,
                                  const tcc_workload *workload, tcc_arch arch,
                                  const tcc_build_options *options, tcc_kernel **kernel);

/* ---- measurement results ---------------------------------------------------------- */

/* What went wrong in a trial, numbered as AutoTVM's MeasureErrorNo. */
typedef enum tcc_measure_error {
    TCC_MEASURE_OK = 0,
    TCC_MEASURE_INSTANTIATION_ERROR = 1, /* the template refused the config */
    TCC_MEASURE_COMPILE_HOST = 2,        /* tcc refused the schedule (validation) */
    TCC_MEASURE_COMPILE_DEVICE = 3,      /* LLVM or ptxas failed, or the driver refused it */
    TCC_MEASURE_RUNTIME_DEVICE = 4,      /* the launch failed or the kernel faulted */
    TCC_MEASURE_WRONG_ANSWER = 5,        /* outputs differ from the CPU reference */
    TCC_MEASURE_BUILD_TIMEOUT = 6,
    TCC_MEASURE_RUN_TIMEOUT = 7,
    TCC_MEASURE_UNKNOWN_ERROR = 8,
} tcc_measure_error;

/* "NO_ERROR", "INSTANTIATION_ERROR", ... as AutoTVM names them. */
const char *tcc_measure_error_name(tcc_measure_error error);

typedef struct tcc_measure_result {
    tcc_measure_error error;
    int ncost;       /* repeats timed (0 on error) */
    double costs[8]; /* seconds a run, as AutoTVM's costs */
    double all_cost; /* seconds the trial took, compile included */
    double timestamp;
    char message[256]; /* the error, one line */
} tcc_measure_result;

/* The mean of the result's costs in seconds: 0 when it has none or an error (and when ncost
 * is past costs[]), so that 0 means "no time to rank by" wherever results are compared. */
double tcc_measure_result_mean_cost(const tcc_measure_result *result);

/* ---- tuners ----------------------------------------------------------------------- */

typedef struct tcc_tuner tcc_tuner;

typedef enum tcc_tuner_kind {
    TCC_TUNER_RANDOM = 0,
    TCC_TUNER_GRID,
    TCC_TUNER_GENETIC,
    TCC_TUNER_XGB, /* gradient-boosted trees (rank:pairwise) over the configs' features */
} tcc_tuner_kind;

const char *tcc_tuner_kind_name(tcc_tuner_kind kind);
tcc_status tcc_tuner_kind_parse(tcc_context *ctx, const char *name, tcc_tuner_kind *out);

/* A tuner of `space` (which must outlive it). The XGB tuner opens libxgboost.so at run time
 * and refuses in one line where it is missing. */
tcc_status tcc_tuner_create(tcc_context *ctx, tcc_tuner_kind kind, const tcc_config_space *space,
                            uint64_t seed, tcc_tuner **out);
void tcc_tuner_destroy(tcc_tuner *tuner);
/* Whether points remain that the tuner has not proposed. */
bool tcc_tuner_has_next(const tcc_tuner *tuner);
/* Up to `count` indices not proposed before; *proposed says how many. */
tcc_status tcc_tuner_next_batch(tcc_tuner *tuner, int count, int64_t *indices, int *proposed);
/* The results of measured points (from this tuner or, to warm start, earlier records):
 * a higher `score` is better (GFLOP/s; 0 for a failed trial). */
tcc_status tcc_tuner_update(tcc_tuner *tuner, int count, const int64_t *indices,
                            const double *scores);

/* Transfer learning (AutoTVM's load_history over other workloads' records): results of points
 * of this space measured on other workloads, groups[i] naming the workload of each (any
 * number: a point is ranked only against those of its group). The model-based tuner trains on
 * them beside this workload's own results, so that even its first plan is the model's; the
 * other kinds ignore them. Nothing is marked visited. */
tcc_status tcc_tuner_transfer(tcc_tuner *tuner, int count, const int64_t *indices,
                              const double *scores, const int64_t *groups);

/* ---- records ---------------------------------------------------------------------- */

typedef struct tcc_record_store tcc_record_store;

/* One trial, as stored. Strings are the caller's while adding; the store's while reading
 * (valid until the next call on the store). */
typedef struct tcc_record {
    size_t size; /* sizeof(tcc_record): set by the caller, adding or asking for the best, and by
                    the store in the records it hands tcc_record_each (tcc/tcc.h, "ABI") */
    const char *template_name;
    const char *workload_key; /* tcc_workload_key */
    const char *target;       /* "cuda -arch=sm_90a" */
    const char *device_name;  /* "NVIDIA H200" */
    const char *tcc_version;  /* tcc_version_string() */
    const char *config;       /* tcc_config_format */
    int64_t config_index;
    tcc_measure_result result;
} tcc_record;

/* Opens (creating it and its directories) the SQLite database at `path`, in WAL mode; NULL
 * for the default, $XDG_CACHE_HOME/tcc/records.db (~/.cache/tcc/records.db). A `path` that
 * starts with postgresql:// or postgres:// is a PostgreSQL server's connection URI instead
 * (libpq's: postgresql://user:password@host:port/database?options), reached through libpq,
 * which is opened at run time (libpq.so.5, or the file $TCC_LIBPQ names): the same records,
 * in tables tcc_trials, tcc_jobs and tcc_schema that opening the database creates where they
 * are missing.
 * Errors name the URL without its password. A visitor of tcc_record_each must not use the
 * store it walks. */
tcc_status tcc_record_store_open(tcc_context *ctx, const char *path, tcc_record_store **out);
void tcc_record_store_close(tcc_record_store *store);
tcc_status tcc_record_add(tcc_record_store *store, const tcc_record *record);
/* The fastest error-free record of the template and workload on that device (any device
 * when NULL); TCC_ERROR_INVALID_ARGUMENT with "no record" when there is none. out->size is
 * set by the caller before the call (a size unknown here is refused, *out left as it was). */
tcc_status tcc_record_best(tcc_record_store *store, const char *template_name,
                           const char *workload_key, const char *device_name, tcc_record *out);
/* Calls `visit` on every record of the template (any when NULL), oldest first, while it
 * returns true: false stops the walk, and tcc_record_each returns TCC_OK (a visitor that
 * failed says so through `user`). */
tcc_status tcc_record_each(tcc_record_store *store, const char *template_name,
                           bool (*visit)(const tcc_record *record, void *user), void *user);
/* JSON lines in AutoTVM's log layout ({"input": [target, workload, [], {"config": ...}],
 * "result": [costs, error_no, all_cost, timestamp], "version": ..., "tvm_version": ...}). */
tcc_status tcc_record_export(tcc_record_store *store, const char *path);
/* Reads such a file (tcc's own exports, or an AutoTVM log), or every record of another store's
 * SQLite file (a migration into PostgreSQL, or a merge), all in one transaction: *imported
 * says how many. */
tcc_status tcc_record_import(tcc_record_store *store, const char *path, int64_t *imported);

/* ---- jobs: trials measured by workers on other hosts (a PostgreSQL store) ---------- */

/* A trial for a worker (tcc-tune --worker) to measure: the config `config_index` (its text
 * `config`, tcc_config_format's) of the template's space for the workload `workload_key`,
 * compiled for `target`, on a GPU named `device_name` ("" for any); `run` names the tuning run
 * that wants it and `options` the measuring settings it asks for (text kept as given). The
 * strings are the caller's when enqueuing, the store's when claimed (until its next call). */
typedef struct tcc_job {
    size_t size; /* sizeof(tcc_job): set by the caller (tcc/tcc.h, "ABI") */
    int64_t id;  /* the store's, once enqueued */
    const char *run, *template_name, *workload_key, *target, *device_name, *config, *options;
    int64_t config_index;
} tcc_job;

/* Every call refuses a store that holds no jobs (an SQLite file: one host measures its own
 * trials), in one line. */
/* Adds `count` jobs, queued, in one transaction; ids[i] receives each one's id. */
tcc_status tcc_job_enqueue(tcc_record_store *store, int count, const tcc_job *jobs, int64_t *ids);
/* Claims up to `max` queued jobs for `worker` (a name unique among the workers) whose target
 * is `target` and whose device is `device_name` or any, those of `prefer_workload_key` first
 * (may be NULL), the oldest first: *count of them into jobs[] (whose sizes the caller set).
 * Two workers never claim one job (SELECT ... FOR UPDATE SKIP LOCKED). */
tcc_status tcc_job_claim(tcc_record_store *store, const char *worker, const char *target,
                         const char *device_name, const char *prefer_workload_key, int max,
                         tcc_job *jobs, int *count);
/* The worker is alive: the heartbeat of every job it runs is now. */
tcc_status tcc_job_heartbeat(tcc_record_store *store, const char *worker);
/* The jobs the worker runs, queued again for any worker: those it will not finish (it lost
 * the server while measuring them, or it is stopping). */
tcc_status tcc_job_release(tcc_record_store *store, const char *worker);
/* The job done: `record` added and the job marked done in one transaction, if `worker` still
 * runs it. *kept is false where it does not (it was queued again when the worker seemed dead,
 * and another may measure it): the record is then not added, so a job has one record. */
tcc_status tcc_job_finish(tcc_record_store *store, const char *worker, int64_t id,
                          const tcc_record *record, bool *kept);
/* Of the jobs ids[], which are done (done[i]), and the results of those (results[i]). */
tcc_status tcc_job_results(tcc_record_store *store, int count, const int64_t *ids, bool *done,
                           tcc_measure_result *results);
/* Jobs whose worker has said nothing for grace_s seconds: queued again (*requeued of them), or,
 * once `max_attempts` workers stopped answering on one, done with a RUNTIME_DEVICE record
 * saying so (*failed), so that a job that kills its workers is not tried for ever. */
tcc_status tcc_job_requeue_stale(tcc_record_store *store, double grace_s, int max_attempts,
                                 int64_t *requeued, int64_t *failed);
/* The run's jobs still queued, removed (the run stopped). */
tcc_status tcc_job_cancel(tcc_record_store *store, const char *run);

/* ---- applying the best ------------------------------------------------------------ */

/* AutoTVM's apply_history_best: builds the fastest error-free record of the template for the
 * workload on the device named (any device when NULL), or, where there is none, the
 * template's point 0 (for the gemm template: the default schedule, every knob chosen by the
 * library). *record_index receives the config index of the record used, -1 for none (may be
 * NULL). A record whose config the space no longer has, or that no longer builds (the template
 * or tcc changed since), gives way to the next fastest. */
tcc_status tcc_apply_history_best(tcc_context *ctx, tcc_record_store *store,
                                  const tcc_template *tmpl, const tcc_workload *workload,
                                  tcc_arch arch, const char *device_name,
                                  const tcc_build_options *options, tcc_kernel **kernel,
                                  int64_t *record_index);

#ifdef __cplusplus
}
#endif

#endif
