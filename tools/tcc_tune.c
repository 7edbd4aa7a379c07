/*
 * tcc-tune: AutoTVM's tuning loop for one workload.
 *
 *   options (tune_options.c) -> template, workload, its config space
 *   -> records (an SQLite file) and a tuner, warm-started from this workload's earlier records
 *      (the model-based one also learning from other workloads' records: transfer)
 *   -> until --n-trial, the space's end or --early-stopping: the tuner proposes a batch, the
 *      measurer (tune_measure.c: builder threads, a runner process per GPU; or the synthetic
 *      cost) measures it, each trial is recorded and fed back, progress is printed
 *   -> the fastest configs, and the tuning curve (--plot).
 */
#include "tune_jobs.h"
#include "tune_measure.h"
#include "tune_options.h"
#include "tune_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char cli_program[] = "tcc-tune";

/* Configs validation may refuse (or that build a kernel measured before) for each trial asked
 * for before tcc-tune stops. */
enum { MAX_REFUSED_PER_TRIAL = 50 };

typedef struct Tuning {
    const TuneOptions *options;
    const tcc_template *tmpl;
    tcc_workload workload;
    tcc_context *ctx;
    tcc_config_space *space;
    tcc_record_store *store;
    tcc_tuner *tuner;
    TuneMeasurer *measurer; /* NULL where the workers measure (--measure workers): */
    TuneRemote remote;      /* their jobs, in the store */
    tcc_arch arch;
    char key[1024];
    char target[64];
    const char *device_name;
    TuneHistory history; /* the trials measured, and how many configs were refused */
} Tuning;

static CliExit library_error(const Tuning *t, tcc_status status)
{
    cli_error("%s", tcc_last_error(t->ctx));
    return cli_exit_for_status(status, false);
}

static void list_templates(void)
{
    for (int i = 0; i < tcc_template_count(); i++)
        printf("%-20s %s\n", tcc_template_at(i)->name, tcc_template_at(i)->summary);
}

/* The arch: --arch, else the measuring GPU's (the runners report it), else sm_90a (the
 * synthetic cost, which runs nothing, and --print-space without --arch). */
static CliExit resolve_arch(Tuning *t)
{
    const char *name = t->options->conv.common.arch_name;
    if (t->options->workers && (!name || strcmp(name, "native") == 0)) {
        cli_error("--measure workers: give --arch, the arch the workers' GPUs run");
        return CLI_EXIT_USAGE;
    }
    if (name && strcmp(name, "native") != 0) {
        tcc_status status = tcc_arch_parse(t->ctx, name, &t->arch);
        return status == TCC_OK ? CLI_EXIT_OK : library_error(t, status);
    }
    t->arch = t->measurer ? tune_measurer_arch(t->measurer) : TCC_SM_90A;
    return CLI_EXIT_OK;
}

static CliExit open_records(Tuning *t)
{
    tcc_status status = tcc_record_store_open(t->ctx, t->options->db, &t->store);
    return status == TCC_OK ? CLI_EXIT_OK : library_error(t, status);
}

/* --import / --export: the records alone. */
static CliExit transfer_records(Tuning *t)
{
    CliExit rc = open_records(t);
    if (rc != CLI_EXIT_OK)
        return rc;
    tcc_status status;
    if (t->options->import_path) {
        int64_t imported = 0;
        status = tcc_record_import(t->store, t->options->import_path, &imported);
        if (status == TCC_OK)
            fprintf(stderr, "tcc-tune: imported %lld records from %s\n", (long long)imported,
                    t->options->import_path);
    } else {
        status = tcc_record_export(t->store, t->options->export_path);
    }
    return status == TCC_OK ? CLI_EXIT_OK : library_error(t, status);
}

/* Points of this space with their scores: this workload's earlier trials (warm start), or
 * other workloads' (transfer), each with the number of its workload. */
typedef struct Results {
    int64_t *indices, *groups;
    double *scores;
    int count, cap;
} Results;

static bool results_add(Results *r, int64_t index, double score, int64_t group)
{
    if (r->count == r->cap) {
        int cap = r->cap ? 2 * r->cap : 256;
        int64_t *indices = realloc(r->indices, sizeof *indices * (size_t)cap);
        if (indices)
            r->indices = indices;
        int64_t *groups = realloc(r->groups, sizeof *groups * (size_t)cap);
        if (groups)
            r->groups = groups;
        double *scores = realloc(r->scores, sizeof *scores * (size_t)cap);
        if (scores)
            r->scores = scores;
        if (!indices || !groups || !scores)
            return false;
        r->cap = cap;
    }
    r->indices[r->count] = index;
    r->groups[r->count] = group;
    r->scores[r->count++] = score;
    return true;
}

static void results_free(Results *r)
{
    free(r->indices);
    free(r->groups);
    free(r->scores);
}

typedef struct Earlier {
    Tuning *t;
    Results same, other;
    char **keys; /* the other workloads' keys, a group each */
    int key_count;
    bool has_point_zero, out_of_memory;
} Earlier;

/* The group of another workload's key, added when new; -1 when out of memory. */
static int64_t group_of(Earlier *e, const char *key)
{
    for (int i = 0; i < e->key_count; i++)
        if (strcmp(e->keys[i], key) == 0)
            return i;
    char **keys = realloc(e->keys, sizeof *keys * ((size_t)e->key_count + 1));
    if (!keys)
        return -1;
    e->keys = keys;
    if (!(keys[e->key_count] = strdup(key)))
        return -1;
    return e->key_count++;
}

/* An earlier record of this template on this device: a point of this workload the tuner need
 * not measure again, or one of another workload the model may learn from. Out of memory, the
 * scan stops: what it gathered would be used for nothing. */
static bool earlier_record(const tcc_record *r, void *user)
{
    Earlier *e = user;
    Tuning *t = e->t;
    bool same = strcmp(r->workload_key, t->key) == 0;
    bool device = !t->device_name[0] || strcmp(r->device_name, t->device_name) == 0;
    if (!device || strcmp(r->target, t->target) != 0 ||
        (!same && (t->options->no_transfer || t->options->tuner != TCC_TUNER_XGB)))
        return true;
    /* The index from the config's text: a record of a template whose knobs changed since names
     * another point, or none, of this space. */
    tcc_config *cfg;
    if (tcc_config_parse(t->ctx, t->space, r->config, &cfg) != TCC_OK)
        return true;
    int64_t index = tcc_config_index(cfg);
    tcc_config_destroy(cfg);
    double cost = tcc_measure_result_mean_cost(&r->result);
    if (same) {
        e->has_point_zero |= index == 0;
        e->out_of_memory |=
            !results_add(&e->same, index, cost > 0 ? t->history.flops / cost * 1e-9 : 0, 0);
        return !e->out_of_memory;
    }
    /* Another workload's scores rank only among themselves: 1 / cost is scale enough. */
    int64_t group = group_of(e, r->workload_key);
    e->out_of_memory |= group < 0 || !results_add(&e->other, index, cost > 0 ? 1 / cost : 0, group);
    return !e->out_of_memory;
}

static CliExit learn_from_earlier(Tuning *t, bool *has_point_zero)
{
    Earlier e = {.t = t};
    tcc_status status = tcc_record_each(t->store, t->tmpl->name, earlier_record, &e);
    if (status == TCC_OK && e.same.count)
        status = tcc_tuner_update(t->tuner, e.same.count, e.same.indices, e.same.scores);
    if (status == TCC_OK && e.other.count)
        status = tcc_tuner_transfer(t->tuner, e.other.count, e.other.indices, e.other.scores,
                                    e.other.groups);
    if (status == TCC_OK && e.same.count)
        fprintf(stderr,
                "tcc-tune: %d earlier trials of this workload on %s warm-start the %s tuner\n",
                e.same.count, t->device_name, tcc_tuner_kind_name(t->options->tuner));
    if (status == TCC_OK && e.other.count)
        fprintf(stderr, "tcc-tune: the model also learns from %d trials of %d other workload%s\n",
                e.other.count, e.key_count, e.key_count == 1 ? "" : "s");
    results_free(&e.same);
    results_free(&e.other);
    for (int i = 0; i < e.key_count; i++)
        free(e.keys[i]);
    free(e.keys);
    *has_point_zero = e.has_point_zero;
    if (status == TCC_OK && e.out_of_memory) {
        cli_error("out of memory reading earlier records");
        return CLI_EXIT_ERROR;
    }
    return status == TCC_OK ? CLI_EXIT_OK : library_error(t, status);
}

/* A config the template or tcc's validation refused (too much shared memory, passes that do
 * not divide): nothing ran, so it costs no trial; the tuner learns it scores 0 all the same. */
static bool refused(const tcc_measure_result *result)
{
    return result->error == TCC_MEASURE_INSTANTIATION_ERROR ||
           result->error == TCC_MEASURE_COMPILE_HOST;
}

/* Recorded in the store; a trial of the history unless refused, or `beyond` the run's trials
 * (the last batch's surplus: measured, so kept, but not one of the run's). *score: its GFLOP/s. */
static CliExit record_trial(Tuning *t, int64_t index, const tcc_measure_result *result, bool beyond,
                            double *score)
{
    tcc_config *cfg;
    tcc_status status = tcc_config_create(t->ctx, t->space, index, &cfg);
    if (status != TCC_OK)
        return library_error(t, status);
    char *text = tcc_config_format(cfg);
    tcc_config_destroy(cfg);
    tcc_record record = {.size = sizeof record,
                         .template_name = t->tmpl->name,
                         .workload_key = t->key,
                         .target = t->target,
                         .device_name = t->device_name,
                         .tcc_version = tcc_version_string(),
                         .config = text ? text : "[]",
                         .config_index = index,
                         .result = *result};
    if (t->measurer) /* the workers add theirs, as they finish each job */
        status = tcc_record_add(t->store, &record);
    bool added = status == TCC_OK && text &&
                 (refused(result) || beyond || tune_history_add(&t->history, index, text, result));
    free(text);
    if (status != TCC_OK)
        return library_error(t, status);
    if (!added) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    *score = 0;
    if (beyond && !refused(result)) {
        *score = tune_history_gflops(&t->history, result);
        return CLI_EXIT_OK;
    }
    if (refused(result)) {
        t->history.refused++;
        return CLI_EXIT_OK;
    }
    *score = t->history.trials[t->history.count - 1].gflops;
    if (t->options->conv.common.verbose)
        tune_print_trial(stdout, &t->history, t->history.count);
    return CLI_EXIT_OK;
}

/* A batch the tuner proposed: its configs and, where workers measure, their jobs' ids. */
typedef struct Batch {
    int count;
    int64_t *indices, *ids;
} Batch;

static void batch_free(Batch *b)
{
    free(b->indices);
    free(b->ids);
    *b = (Batch){0};
}

/* Queued for the workers (nothing to do where this process measures). */
static bool enqueue(Tuning *t, Batch *b)
{
    if (t->measurer || b->count == 0)
        return true;
    if (!(b->ids = malloc(sizeof *b->ids * (size_t)b->count))) {
        cli_error("out of memory");
        return false;
    }
    if (tune_remote_enqueue(&t->remote, b->count, b->indices, b->ids))
        return true;
    cli_error("%s", t->remote.error);
    return false;
}

/* The batch queued (enqueue) measured here, or its jobs waited for; false once it said why not. */
static bool measure(Tuning *t, const Batch *b, tcc_measure_result *results)
{
    if (!t->measurer) {
        if (tune_remote_wait(&t->remote, b->count, b->ids, results))
            return true;
        cli_error("%s", t->remote.error);
        return false;
    }
    if (tune_measure_batch(t->measurer, b->count, b->indices, results) == TCC_OK)
        return true;
    cli_error("%s", tune_measurer_error(t->measurer));
    return false;
}

/* The gemm template's point 0 is the default schedule: measured first (unless recorded
 * before), so that what tuning finds is never slower than what tcc builds untuned. */
static CliExit measure_default(Tuning *t)
{
    int64_t index = 0;
    Batch b = {.count = 1, .indices = &index};
    tcc_measure_result result;
    double score;
    bool measured = enqueue(t, &b) && measure(t, &b, &result);
    free(b.ids);
    if (!measured)
        return CLI_EXIT_ERROR;
    CliExit rc = record_trial(t, index, &result, false, &score);
    if (rc != CLI_EXIT_OK)
        return rc;
    tcc_status status = tcc_tuner_update(t->tuner, 1, &index, &score);
    return status == TCC_OK ? CLI_EXIT_OK : library_error(t, status);
}

/* Of the configs measured so far, the share that were trials: refused ones and those whose
 * kernel was measured before are not. */
static double trial_share(const Tuning *t)
{
    const TuneHistory *h = &t->history;
    int64_t configs = h->count + h->refused + h->duplicates;
    double share = configs > 0 ? (double)h->count / (double)configs : 1.0;
    return share > 1.0 / MAX_REFUSED_PER_TRIAL ? share : 1.0 / MAX_REFUSED_PER_TRIAL;
}

/* The next batch proposed and queued for the workers: up to --batch configs, as many as are
 * expected to make the trials left, counting `in_flight` configs proposed but not measured
 * yet. Proposing only as many configs as trials are left would end a run where most configs
 * are refused in many small batches, each as long as a build. None where no trial is left, or
 * the tuner has nothing more to propose. */
static CliExit propose(Tuning *t, int64_t n_trial, int64_t in_flight, Batch *b)
{
    double share = trial_share(t);
    double left = (double)(n_trial - t->history.count) - (double)in_flight * share;
    double wanted = left > 0 ? ceil(left / share) : 0;
    int count = wanted < t->options->batch ? (int)wanted : t->options->batch;
    batch_free(b);
    if (count <= 0)
        return CLI_EXIT_OK;
    if (!(b->indices = malloc(sizeof *b->indices * (size_t)count))) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    tcc_status status = tcc_tuner_next_batch(t->tuner, count, b->indices, &b->count);
    if (status != TCC_OK)
        return library_error(t, status);
    return enqueue(t, b) ? CLI_EXIT_OK : CLI_EXIT_ERROR;
}

/* A batch measured, recorded and fed back to the tuner; its trials past the n_trial-th are
 * recorded, not counted. */
static CliExit complete(Tuning *t, const Batch *b, int64_t n_trial)
{
    tcc_measure_result *results = calloc((size_t)b->count, sizeof *results);
    double *scores = malloc(sizeof *scores * (size_t)b->count);
    CliExit rc = !results || !scores ? CLI_EXIT_ERROR : CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK)
        cli_error("out of memory");
    if (rc == CLI_EXIT_OK && !measure(t, b, results))
        rc = CLI_EXIT_ERROR;
    for (int i = 0; rc == CLI_EXIT_OK && i < b->count; i++) {
        if (!t->measurer || tune_measurer_same_as(t->measurer, i) < 0) {
            rc = record_trial(t, b->indices[i], &results[i], t->history.count >= n_trial,
                              &scores[i]);
        } else {
            t->history.duplicates++;
            scores[i] = tune_history_gflops(&t->history, &results[i]);
        }
    }
    tcc_status status;
    if (rc == CLI_EXIT_OK &&
        (status = tcc_tuner_update(t->tuner, b->count, b->indices, scores)) != TCC_OK)
        rc = library_error(t, status);
    free(results);
    free(scores);
    return rc;
}

static bool stopped_early(const Tuning *t)
{
    int64_t patience = t->options->early_stopping;
    return patience > 0 && t->history.best_trial >= 0 &&
           t->history.count - 1 - t->history.best_trial >= patience;
}

/* Refused configs and those whose kernel was measured before cost no trial, but a space that
 * is nearly all of them must not keep the tuner proposing for ever. */
static bool refusing_too_many(const Tuning *t, int64_t n_trial)
{
    return t->history.refused + t->history.duplicates > MAX_REFUSED_PER_TRIAL * n_trial;
}

static CliExit tune_loop(Tuning *t)
{
    const TuneOptions *o = t->options;
    int64_t size = tcc_config_space_size(t->space);
    int64_t n_trial = o->n_trial < size ? o->n_trial : size;
    bool bar = o->progress_given ? o->progress : isatty(STDERR_FILENO);
    fprintf(stderr, "tcc-tune: %s on %s (%s), %s tuner, up to %lld of %lld configs; %s\n",
            t->tmpl->name, t->device_name[0] ? t->device_name : "any GPU", t->target,
            tcc_tuner_kind_name(o->tuner), (long long)n_trial, (long long)size,
            t->measurer ? tune_measurer_machine_code(t->measurer)
                        : "measured by the workers of the store's jobs (run ...)");
    Batch now = {0}, next = {0};
    CliExit rc = CLI_EXIT_OK;
    while (rc == CLI_EXIT_OK && t->history.count < n_trial && !stopped_early(t) &&
           !refusing_too_many(t, n_trial)) {
        if (now.count == 0 && ((rc = propose(t, n_trial, 0, &now)) != CLI_EXIT_OK || !now.count))
            break; /* nothing left to try */
        /* Workers measure the next batch while the last jobs of this one finish and the tuner
         * learns from it, so that none waits for the coordinator: the tuner proposes it
         * without this batch's results. Its jobs still queued when the run ends are removed. */
        if (!t->measurer)
            rc = propose(t, n_trial, now.count, &next);
        if (rc == CLI_EXIT_OK)
            rc = complete(t, &now, n_trial);
        batch_free(&now);
        now = next, next = (Batch){0};
        tune_print_progress(stderr, &t->history, n_trial, bar);
    }
    batch_free(&now);
    batch_free(&next);
    if (bar && t->history.count < n_trial)
        fputc('\n', stderr);
    if (stopped_early(t))
        fprintf(stderr, "tcc-tune: stopped early: %lld trials without a faster config\n",
                (long long)o->early_stopping);
    if (refusing_too_many(t, n_trial))
        fprintf(stderr,
                "tcc-tune: stopped: %lld configs refused or building a kernel measured before, "
                "%d for each trial\n",
                (long long)(t->history.refused + t->history.duplicates), MAX_REFUSED_PER_TRIAL);
    return rc;
}

static CliExit report(Tuning *t)
{
    const TuneOptions *o = t->options;
    double elapsed = tune_now() - t->history.start;
    printf("%s %s: %lld trials in %.1f s (%.1f trials/s), %lld ran without error\n", t->tmpl->name,
           t->key, (long long)t->history.count, elapsed,
           elapsed > 0 ? (double)t->history.count / elapsed : 0.0,
           (long long)t->history.errors[TCC_MEASURE_OK]);
    if (t->history.refused)
        printf("  %lld configs refused by validation (recorded, not trials)\n",
               (long long)t->history.refused);
    if (t->history.duplicates)
        printf("  %lld configs built a kernel measured before (its result reused, not trials)\n",
               (long long)t->history.duplicates);
    for (int e = 1; e <= TCC_MEASURE_UNKNOWN_ERROR; e++)
        if (t->history.errors[e])
            printf("  %-20s %lld\n", tcc_measure_error_name((tcc_measure_error)e),
                   (long long)t->history.errors[e]);
    tune_print_top(stdout, &t->history, o->top);
    char error[512], title[256];
    snprintf(title, sizeof title, "tcc-tune: %s, %s on %s", t->tmpl->name,
             tcc_tuner_kind_name(o->tuner), t->device_name);
    if (o->plot && !tune_write_plot(o->plot, &t->history, title, o->default_gflops,
                                    o->reference_gflops, o->reference_name, error, sizeof error)) {
        cli_error("%s", error);
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

static void measure_options(const Tuning *t, TuneMeasureOptions *m)
{
    const TuneOptions *o = t->options;
    tune_measure_options_init(m);
    m->tmpl = t->tmpl;
    m->workload = &t->workload;
    m->devices = o->devices;
    m->builders = o->builders;
    m->machine_code = o->machine_code;
    m->build_timeout = o->build_timeout;
    m->run_timeout = o->run_timeout;
    m->repeat = o->repeat;
    m->min_repeat_ms = o->min_repeat_ms;
    m->synthetic = o->synthetic;
    m->seed = o->seed;
}

static CliExit start_measuring(Tuning *t)
{
    const TuneOptions *o = t->options;
    TuneMeasureOptions m;
    measure_options(t, &m);
    if (o->workers) {
        tune_remote_init(&t->remote, &m);
        t->device_name = o->device_name ? o->device_name : ""; /* any GPU */
        return CLI_EXIT_OK;
    }
    char error[512];
    t->measurer = tune_measurer_create(&m, error, sizeof error);
    if (!t->measurer) {
        cli_error("%s", error);
        return o->synthetic ? CLI_EXIT_ERROR : CLI_EXIT_NO_GPU;
    }
    t->device_name = tune_measurer_device_name(t->measurer);
    return CLI_EXIT_OK;
}

static CliExit tune(Tuning *t)
{
    const TuneOptions *o = t->options;
    CliExit rc = CLI_EXIT_OK;
    if (o->import_path || o->export_path)
        return transfer_records(t);
    /* The runners first: the space depends on the arch, which may be their GPU's. */
    if (!o->print_space)
        rc = start_measuring(t);
    if (rc == CLI_EXIT_OK)
        rc = resolve_arch(t);
    if (rc != CLI_EXIT_OK)
        return rc;
    tcc_status status = tcc_config_space_create(t->ctx, t->tmpl, &t->workload, t->arch, &t->space);
    if (status != TCC_OK)
        return library_error(t, status);
    if (o->print_space) {
        char *text = tcc_config_space_format(t->space);
        bool formatted = text != NULL;
        if (formatted)
            printf("%s\n", text);
        free(text);
        return formatted ? CLI_EXIT_OK : CLI_EXIT_ERROR;
    }
    if (t->measurer && !tune_measurer_set_space(t->measurer, t->space, t->arch)) {
        cli_error("%s", tune_measurer_error(t->measurer));
        return CLI_EXIT_ERROR;
    }
    if (tcc_workload_key(t->tmpl, &t->workload, t->key, sizeof t->key) >= (int)sizeof t->key) {
        cli_error("the workload's key is longer than %zu bytes", sizeof t->key);
        return CLI_EXIT_ERROR;
    }
    tune_target_format(t->arch, t->target, sizeof t->target);
    rc = open_records(t);
    TuneRemote *r = &t->remote;
    r->store = t->store, r->ctx = t->ctx, r->space = t->space, r->template_name = t->tmpl->name;
    r->workload_key = t->key, r->target = t->target, r->device_name = t->device_name;
    r->grace = o->worker_grace, r->deadline = o->worker_deadline;
    /* A store that holds no jobs (an SQLite file) refuses this first call, before anything. */
    if (rc == CLI_EXIT_OK && o->workers && (status = tcc_job_cancel(t->store, r->run)) != TCC_OK)
        rc = library_error(t, status);
    if (rc == CLI_EXIT_OK &&
        (status = tcc_tuner_create(t->ctx, o->tuner, t->space, o->seed, &t->tuner)) != TCC_OK)
        rc = library_error(t, status);
    bool has_point_zero = false;
    if (rc == CLI_EXIT_OK)
        rc = learn_from_earlier(t, &has_point_zero);
    if (rc == CLI_EXIT_OK && !has_point_zero && !o->skip_default &&
        strcmp(t->tmpl->name, "gemm") == 0)
        rc = measure_default(t);
    if (rc == CLI_EXIT_OK)
        rc = tune_loop(t);
    if (!t->measurer && t->store)
        tune_remote_cancel(r);
    if (rc == CLI_EXIT_OK)
        rc = report(t);
    return rc;
}

static int tool_main(int argc, char **argv)
{
    int runner = tune_runner_main(argc, argv);
    if (runner >= 0)
        return runner;
    TuneOptions options;
    char error[512];
    if (!tune_parse(argc, argv, &options, error, sizeof error)) {
        cli_error("%s", error);
        return CLI_EXIT_USAGE;
    }
    int early = cli_early_exit(&options.conv.common, tune_usage); /* --help, --version */
    if (early >= 0)
        return early;
    if (options.list_templates) {
        list_templates();
        return CLI_EXIT_OK;
    }
    if (!options.seed_given)
        options.seed = (uint64_t)time(NULL);
    Tuning t = {.options = &options, .device_name = "synthetic"};
    if (!tune_resolve(&options, &t.tmpl, &t.workload, error, sizeof error)) {
        cli_error("%s", error);
        return CLI_EXIT_USAGE;
    }
    if (options.worker)
        return tune_worker(&options, t.tmpl, &t.workload);
    tune_history_init(&t.history, tcc_conv2d_flops(&t.workload.conv2d));
    if (tcc_context_create(&t.ctx) != TCC_OK) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    CliExit rc = tune(&t);
    tune_history_free(&t.history);
    tune_measurer_destroy(t.measurer);
    tcc_tuner_destroy(t.tuner);
    tcc_record_store_close(t.store);
    tcc_config_space_destroy(t.space);
    tcc_context_destroy(t.ctx);
    return rc;
}

int main(int argc, char **argv)
{
    return cli_exit_after_output("tcc-tune", tool_main(argc, argv));
}
