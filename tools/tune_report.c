/*
 * tcc-tune's reports: the history of trials and what is printed from it.
 */
#include "tune_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double tune_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void tune_history_init(TuneHistory *h, double flops)
{
    memset(h, 0, sizeof *h);
    h->flops = flops;
    h->best_trial = -1;
    h->start = tune_now();
}

void tune_history_free(TuneHistory *h)
{
    for (int64_t i = 0; i < h->count; i++)
        free(h->trials[i].config);
    free(h->trials);
    memset(h, 0, sizeof *h);
}

double tune_history_gflops(const TuneHistory *h, const tcc_measure_result *result)
{
    double cost = tcc_measure_result_mean_cost(result);
    return cost > 0 ? h->flops / cost * 1e-9 : 0;
}

bool tune_history_add(TuneHistory *h, int64_t index, const char *config,
                      const tcc_measure_result *result)
{
    if (h->count == h->cap) {
        int64_t cap = h->cap ? h->cap * 2 : 256;
        TuneTrial *trials = realloc(h->trials, sizeof *trials * (size_t)cap);
        if (!trials)
            return false;
        h->trials = trials;
        h->cap = cap;
    }
    char *copy = strdup(config ? config : "[]");
    if (!copy)
        return false;
    TuneTrial *t = &h->trials[h->count];
    *t = (TuneTrial){index, copy, *result, tune_history_gflops(h, result)};
    if ((unsigned)result->error <= TCC_MEASURE_UNKNOWN_ERROR)
        h->errors[result->error]++;
    if (t->gflops > h->best_gflops) {
        h->best_gflops = t->gflops;
        h->best_trial = h->count;
    }
    h->count++;
    return true;
}

/* tcc's config text '[["tile_f", [-1, 2, 64, 1]], ["unroll_explicit", 0]]' as AutoTVM prints
 * its entity: "[('tile_f', [-1, 2, 64, 1]), ('unroll_explicit', 0)]". */
static void print_entity(FILE *out, const char *config)
{
    int depth = 0;
    bool in_name = false;
    for (const char *p = config; *p; p++) {
        if (*p == '"') {
            fputc('\'', out);
            in_name = !in_name;
        } else if (in_name) {
            fputc(*p, out);
        } else if (*p == '[') {
            fputc(++depth == 2 ? '(' : '[', out);
        } else if (*p == ']') {
            fputc(depth-- == 2 ? ')' : ']', out);
        } else {
            fputc(*p, out);
        }
    }
}

void tune_print_trial(FILE *out, const TuneHistory *h, int64_t number)
{
    const TuneTrial *t = &h->trials[number - 1];
    double best = 0;
    for (int64_t i = 0; i < number; i++)
        best = h->trials[i].gflops > best ? h->trials[i].gflops : best;
    const tcc_measure_result *r = &t->result;
    fprintf(out, "No: %lld\tGFLOPS: %.2f/%.2f\tresult: MeasureResult(costs=(", (long long)number,
            t->gflops, best);
    if (r->error == TCC_MEASURE_OK) {
        /* As Python prints a tuple: (a,) for one, (a, b, c) for more. */
        for (int i = 0; i < r->ncost; i++)
            fprintf(out, "%s%.10g%s", i ? ", " : "", r->costs[i], r->ncost == 1 ? "," : "");
    } else {
        fprintf(out, "%s('%s'),", tcc_measure_error_name(r->error), r->message);
    }
    fprintf(out, "), error_no=%d, all_cost=%.6g, timestamp=%.7f)\t", (int)r->error, r->all_cost,
            r->timestamp);
    print_entity(out, t->config);
    fprintf(out, ",None,%lld\n", (long long)t->index);
}

static void format_duration(double seconds, char *buf, size_t size)
{
    long s = seconds > 0 && seconds < 1e9 ? (long)(seconds + 0.5) : 0;
    if (s >= 3600)
        snprintf(buf, size, "%ldh%02ldm", s / 3600, s / 60 % 60);
    else
        snprintf(buf, size, "%ldm%02lds", s / 60, s % 60);
}

void tune_print_progress(FILE *out, const TuneHistory *h, int64_t n_trial, bool bar)
{
    double elapsed = tune_now() - h->start;
    double rate = elapsed > 0 ? (double)h->count / elapsed : 0;
    int64_t failed = h->count - h->errors[TCC_MEASURE_OK];
    char eta[32], spent[32];
    format_duration(rate > 0 ? (double)(n_trial - h->count) / rate : 0, eta, sizeof eta);
    format_duration(elapsed, spent, sizeof spent);
    if (!bar) {
        fprintf(out,
                "trials %lld/%lld  best %.2f GFLOP/s  errors %lld  refused %lld  duplicates %lld  "
                "%.1f trials/s  %s  ETA %s\n",
                (long long)h->count, (long long)n_trial, h->best_gflops, (long long)failed,
                (long long)h->refused, (long long)h->duplicates, rate, spent, eta);
        return;
    }
    enum { WIDTH = 30 };
    int filled = n_trial > 0 ? (int)(WIDTH * h->count / n_trial) : WIDTH;
    fputc('\r', out);
    fputc('[', out);
    for (int i = 0; i < WIDTH; i++)
        fputc(i < filled ? '#' : '.', out);
    fprintf(out, "] %lld/%lld  best %.2f GFLOP/s  errors %lld  refused %lld  %.1f/s  ETA %s \033[K",
            (long long)h->count, (long long)n_trial, h->best_gflops, (long long)failed,
            (long long)h->refused, rate, eta);
    if (h->count >= n_trial)
        fputc('\n', out);
    fflush(out);
}

static int by_gflops(const void *a, const void *b)
{
    const TuneTrial *x = *(const TuneTrial *const *)a, *y = *(const TuneTrial *const *)b;
    return (x->gflops < y->gflops) - (x->gflops > y->gflops);
}

void tune_print_top(FILE *out, const TuneHistory *h, int top)
{
    const TuneTrial **order = malloc(sizeof *order * (size_t)(h->count ? h->count : 1));
    if (!order)
        return;
    int64_t valid = 0;
    for (int64_t i = 0; i < h->count; i++)
        if (h->trials[i].gflops > 0)
            order[valid++] = &h->trials[i];
    qsort(order, (size_t)valid, sizeof *order, by_gflops);
    fprintf(out, "%4s  %10s  %10s  %12s  %s\n", "rank", "ms", "GFLOP/s", "index", "config");
    for (int64_t i = 0; i < valid && i < top; i++)
        fprintf(out, "%4lld  %10.4f  %10.2f  %12lld  %s\n", (long long)i + 1,
                tcc_measure_result_mean_cost(&order[i]->result) * 1e3, order[i]->gflops,
                (long long)order[i]->index, order[i]->config);
    if (!valid)
        fputs("(no config ran without error)\n", out);
    free(order);
}
