/*
 * --plot: the tuning curve as a standalone SVG (no plotting library on the GPU hosts): the best
 * GFLOP/s found after each trial, and dashed lines for the default schedule and a reference
 * (cuDNN) where they are given.
 */
#include "tune_report.h"

#include <errno.h>
#include <math.h>
#include <string.h>

enum { WIDTH = 760, HEIGHT = 440, LEFT = 70, RIGHT = 170, TOP = 40, BOTTOM = 50 };

typedef struct Frame {
    double trials, gflops; /* the axes' ends */
} Frame;

static double nice_ceiling(double value)
{
    if (value <= 0)
        return 1;
    double step = pow(10, floor(log10(value)));
    for (double m = 1; m <= 10; m += m < 2 ? 1 : m < 5 ? 3 : 5)
        if (m * step >= value)
            return m * step;
    return 10 * step;
}

static double x_of(const Frame *f, double trial)
{
    return LEFT + (WIDTH - LEFT - RIGHT) * trial / f->trials;
}

static double y_of(const Frame *f, double gflops)
{
    return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * gflops / f->gflops;
}

static void axes(FILE *out, const Frame *f, const char *title)
{
    fprintf(out, "<text x='%d' y='24' font-size='15'>", LEFT);
    for (const char *p = title; *p; p++) /* the title is the tool's own text, but escape it */
        fputs(*p == '<' ? "&lt;" : *p == '&' ? "&amp;" : (char[]){*p, 0}, out);
    fputs("</text>\n", out);
    for (int i = 0; i <= 5; i++) {
        double g = f->gflops * i / 5, t = f->trials * i / 5;
        fprintf(out,
                "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#ddd'/>"
                "<text x='%d' y='%.1f' font-size='11' text-anchor='end'>%g</text>\n",
                LEFT, y_of(f, g), WIDTH - RIGHT, y_of(f, g), LEFT - 6, y_of(f, g) + 4, g);
        fprintf(out, "<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%g</text>\n",
                x_of(f, t), HEIGHT - BOTTOM + 16, t);
    }
    fprintf(out,
            "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#444'/>\n"
            "<text x='%d' y='%d' font-size='12' text-anchor='middle'>trials</text>\n"
            "<text x='16' y='%d' font-size='12' transform='rotate(-90 16 %d)' "
            "text-anchor='middle'>best GFLOP/s</text>\n",
            LEFT, TOP, WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM, (WIDTH - RIGHT + LEFT) / 2,
            HEIGHT - 12, (HEIGHT - BOTTOM + TOP) / 2, (HEIGHT - BOTTOM + TOP) / 2);
}

static void level(FILE *out, const Frame *f, double gflops, const char *name, const char *color,
                  int row)
{
    if (gflops <= 0)
        return;
    fprintf(out,
            "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='%s' stroke-dasharray='6 4'/>\n"
            "<text x='%d' y='%d' font-size='12' fill='%s'>%s %.0f</text>\n",
            LEFT, y_of(f, gflops), WIDTH - RIGHT, y_of(f, gflops), color, WIDTH - RIGHT + 10,
            TOP + 20 * row, color, name, gflops);
}

bool tune_write_plot(const char *path, const TuneHistory *h, const char *title,
                     double default_gflops, double reference_gflops, const char *reference_name,
                     char *error, size_t error_size)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        snprintf(error, error_size, "--plot: cannot write %s: %s", path, strerror(errno));
        return false;
    }
    double top = h->best_gflops;
    top = default_gflops > top ? default_gflops : top;
    top = reference_gflops > top ? reference_gflops : top;
    Frame f = {nice_ceiling((double)(h->count > 1 ? h->count : 1)), nice_ceiling(top * 1.05)};
    fprintf(out,
            "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
            "font-family='sans-serif'>\n<rect width='100%%' height='100%%' fill='white'/>\n",
            WIDTH, HEIGHT);
    axes(out, &f, title);
    fputs("<polyline fill='none' stroke='#1f77b4' stroke-width='2' points='", out);
    double best = 0;
    for (int64_t i = 0; i < h->count; i++) {
        best = h->trials[i].gflops > best ? h->trials[i].gflops : best;
        fprintf(out, "%.1f,%.1f ", x_of(&f, (double)(i + 1)), y_of(&f, best));
    }
    fputs("'/>\n", out);
    fprintf(out, "<text x='%d' y='%d' font-size='12' fill='#1f77b4'>tcc best %.0f</text>\n",
            WIDTH - RIGHT + 10, TOP, h->best_gflops);
    level(out, &f, default_gflops, "default", "#2ca02c", 1);
    level(out, &f, reference_gflops, reference_name ? reference_name : "reference", "#d62728", 2);
    fputs("</svg>\n", out);
    if (fclose(out) != 0) {
        snprintf(error, error_size, "--plot: cannot write %s: %s", path, strerror(errno));
        return false;
    }
    return true;
}
