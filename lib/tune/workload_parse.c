/*
 * A workload key read back into its workload (tcc_workload_from_key), so that a host that
 * only has the key (a worker claiming a job) measures the workload the key names. The key's
 * format is templates.c's alone: a key is read field by field, then written again with
 * tcc_workload_key and compared, so that a field this reader missed or a format that changed
 * is refused rather than read into another workload.
 */
#include "tune/records.h"
#include "tune/templates.h"

#include "ops/ops.h"
#include "support/context.h"

#include <stdio.h>
#include <string.h>

/* Reads a key's members in order; the first failure is kept. */
typedef struct KeyReader {
    const Json *next;
    const char *why; /* NULL while all is well */
} KeyReader;

static const Json *member(KeyReader *r, JsonKind kind, const char *what)
{
    const Json *m = r->next;
    if (r->why)
        return NULL;
    if (!m || m->kind != kind) {
        r->why = what;
        return NULL;
    }
    r->next = m->next;
    return m;
}

static int64_t integer(KeyReader *r, const char *what)
{
    int64_t value = 0;
    const Json *m = member(r, JSON_NUMBER, what);
    if (m && !tci_json_int(m, &value))
        r->why = what;
    return value;
}

/* A JSON array of `count` integers into out[]. */
static void integers(KeyReader *r, int count, int64_t *out, const char *what)
{
    const Json *array = member(r, JSON_ARRAY, what);
    if (array && array->count != count)
        r->why = what;
    if (r->why)
        return;
    KeyReader inner = {array->first, NULL};
    for (int i = 0; i < count; i++)
        out[i] = integer(&inner, what);
    r->why = inner.why;
}

static double number(const Json *m, KeyReader *r, const char *what)
{
    if (!m || m->kind != JSON_NUMBER) {
        r->why = r->why ? r->why : what;
        return 0;
    }
    return m->number;
}

static const char *text(KeyReader *r, const char *what)
{
    const Json *m = member(r, JSON_STRING, what);
    return m ? m->text : "";
}

/* The enum value whose name (as `name_of` writes it) is `name`, among 0..last. */
static int named(KeyReader *r, const char *name, int last, const char *(*name_of)(int),
                 const char *what)
{
    for (int v = 0; v <= last; v++)
        if (strcmp(name_of(v), name) == 0)
            return v;
    r->why = r->why ? r->why : what;
    return 0;
}

static const char *layout_name(int v)
{
    return tci_conv2d_layout_name((tcc_layout)v);
}

static const char *filter_layout_name(int v)
{
    return tci_conv2d_filter_layout_name((tcc_filter_layout)v);
}

static const char *dtype_name(int v)
{
    return tcc_dtype_name((tcc_dtype)v);
}

static tcc_dtype dtype(KeyReader *r, const char *what)
{
    return (tcc_dtype)named(r, text(r, what), TCC_FLOAT32, dtype_name, what);
}

static void epilogue(KeyReader *r, tcc_epilogue *e)
{
    const Json *object = member(r, JSON_OBJECT, "the epilogue");
    if (!object)
        return;
    e->alpha = number(tci_json_member(object, "alpha"), r, "the epilogue's alpha");
    e->beta = number(tci_json_member(object, "beta"), r, "the epilogue's beta");
    e->bias = number(tci_json_member(object, "bias"), r, "the epilogue's bias") != 0;
    e->residual = number(tci_json_member(object, "residual"), r, "the epilogue's residual") != 0;
    e->relu = number(tci_json_member(object, "relu"), r, "the epilogue's relu") != 0;
    const Json *clamp = tci_json_member(object, "clamp");
    const Json *prologue = tci_json_member(object, "prologue");
    if (!clamp || clamp->kind != JSON_ARRAY || clamp->count != 3 || !prologue ||
        prologue->kind != JSON_ARRAY || prologue->count != 2) {
        r->why = r->why ? r->why : "the epilogue's clamp or prologue";
        return;
    }
    e->clamp = number(clamp->first, r, "the clamp") != 0;
    e->clamp_min = number(clamp->first->next, r, "the clamp");
    e->clamp_max = number(clamp->first->next->next, r, "the clamp");
    double op = number(prologue->first, r, "the prologue");
    if (!(op >= TCC_PROLOGUE_NONE && op <= TCC_PROLOGUE_RELU))
        r->why = r->why ? r->why : "the prologue";
    else
        e->prologue = (tcc_prologue_op)(int)op;
    e->prologue_arg = number(prologue->first->next, r, "the prologue");
}

/* ["tcc/NAME/conv2d", N, H, W, C, K, R, S, [sh, sw], [pt, pb, pl, pr], [dh, dw], groups,
 * layout, filter layout, input, accumulate, output, epilogue] (templates.c's conv2d_key). */
static void conv2d(KeyReader *r, tcc_conv2d_desc *d)
{
    int64_t *shape[] = {&d->batch,        &d->height,   &d->width,   &d->in_channels,
                        &d->out_channels, &d->kernel_h, &d->kernel_w};
    for (int i = 0; i < 7; i++)
        *shape[i] = integer(r, "the shape");
    int64_t stride[2] = {0}, pad[4] = {0}, dilation[2] = {0};
    integers(r, 2, stride, "the strides");
    integers(r, 4, pad, "the padding");
    integers(r, 2, dilation, "the dilation");
    d->stride_h = stride[0], d->stride_w = stride[1];
    d->pad_top = pad[0], d->pad_bottom = pad[1], d->pad_left = pad[2], d->pad_right = pad[3];
    d->dilation_h = dilation[0], d->dilation_w = dilation[1];
    d->groups = integer(r, "the groups");
    d->layout =
        (tcc_layout)named(r, text(r, "the layout"), TCC_LAYOUT_NHWCNC, layout_name, "the layout");
    d->filter_layout = (tcc_filter_layout)named(r, text(r, "the filter layout"), TCC_FILTER_BLOCKED,
                                                filter_layout_name, "the filter layout");
    d->input_type = dtype(r, "the input type");
    d->accumulate_type = dtype(r, "the accumulation type");
    d->output_type = dtype(r, "the output type");
    epilogue(r, &d->epilogue);
}

/* ["tcc/NAME/matmul", batch, M, N, K, a_col_major, b_col_major, input, accumulate, output,
 * epilogue] (templates.c's matmul_key). */
static void matmul(KeyReader *r, tcc_matmul_desc *d)
{
    d->batch = integer(r, "the batch");
    d->m = integer(r, "M");
    d->n = integer(r, "N");
    d->k = integer(r, "K");
    d->a_col_major = integer(r, "A's order") != 0;
    d->b_col_major = integer(r, "B's order") != 0;
    d->input_type = dtype(r, "the input type");
    d->accumulate_type = dtype(r, "the accumulation type");
    d->output_type = dtype(r, "the output type");
    epilogue(r, &d->epilogue);
}

/* AutoTVM's ["tutorial/conv2d_no_batching", N, H, W, CO, CI, KH, KW, strides, padding]: the
 * rest is what the template computes, float32 NCHW/KCRS with even padding. */
static void seed_conv2d(KeyReader *r, tcc_conv2d_desc *d)
{
    int64_t *shape[] = {&d->batch,       &d->height,   &d->width,   &d->out_channels,
                        &d->in_channels, &d->kernel_h, &d->kernel_w};
    for (int i = 0; i < 7; i++)
        *shape[i] = integer(r, "the shape");
    int64_t stride[2] = {0}, pad[2] = {0};
    integers(r, 2, stride, "the strides");
    integers(r, 2, pad, "the padding");
    d->stride_h = stride[0], d->stride_w = stride[1];
    d->pad_top = d->pad_bottom = pad[0];
    d->pad_left = d->pad_right = pad[1];
    d->layout = TCC_LAYOUT_NCHW;
    d->filter_layout = TCC_FILTER_KCRS;
    d->input_type = d->accumulate_type = d->output_type = TCC_FLOAT32;
}

/* Reads the key's fields into *w (kind and descriptor); NULL, or what was not read. */
static const char *read_key(const tcc_template *tmpl, const Json *key, tcc_workload *w)
{
    if (!key || key->kind != JSON_ARRAY)
        return "it is no JSON array";
    KeyReader r = {key->first, NULL};
    const char *name = text(&r, "its name");
    char conv[96], mm[96];
    snprintf(conv, sizeof conv, "tcc/%s/conv2d", tmpl->name);
    snprintf(mm, sizeof mm, "tcc/%s/matmul", tmpl->name);
    if (tmpl->instantiate == tci_template_conv2d_no_batching &&
        strcmp(name, "tutorial/conv2d_no_batching") == 0) {
        seed_conv2d(&r, &w->conv2d);
    } else if (strcmp(name, conv) == 0) {
        conv2d(&r, &w->conv2d);
    } else if (strcmp(name, mm) == 0) {
        tcc_workload_init_size(w, TCC_WORKLOAD_MATMUL, sizeof *w);
        matmul(&r, &w->matmul);
    } else if (!r.why) {
        r.why = "its name is not the template's";
    }
    if (!r.why && r.next)
        r.why = "it has more members than a key";
    return r.why;
}

tcc_status tcc_workload_from_key(tcc_context *ctx, const tcc_template *tmpl, const char *key,
                                 tcc_workload *out)
{
    if (!tmpl || !key || !out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_workload_from_key: the template, key and out are required");
    /* What the caller's out holds is checked before anything is written to it. */
    tcc_status status = TCI_CHECK_SIZE(ctx, "tcc_workload_from_key: out", tcc_workload, out);
    if (status != TCC_OK)
        return status;
    Arena *arena = tci_arena_create();
    if (!arena)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory reading a workload key");
    char why[200] = "";
    tcc_workload w;
    tcc_workload_init_size(&w, TCC_WORKLOAD_CONV2D, sizeof w);
    const Json *json = tci_json_parse(arena, key, why, sizeof why);
    const char *problem = json ? read_key(tmpl, json, &w) : why;
    tci_arena_destroy(arena);
    /* What was read must be what the key says, written the one way tcc writes keys. */
    char again[2048];
    if (!problem && (tcc_workload_key(tmpl, &w, again, sizeof again) >= (int)sizeof again ||
                     strcmp(again, key) != 0))
        problem = "written again it reads otherwise (a key of another tcc?)";
    if (problem) {
        /* The key as one line, whatever a database handed over. */
        char shown[512];
        snprintf(shown, sizeof shown, "%s", key);
        for (char *c = shown; *c; c++)
            if (*c == '\n' || *c == '\r')
                *c = ' ';
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "workload key of template %s: %s: %s",
                        tmpl->name, problem, shown);
    }
    *out = w;
    return TCC_OK;
}
