/*
 * The named convolution layers of ../shared/layers.csv, compiled in so that --layer works
 * wherever the tool is copied: the convolutions of TVM's tensor-core tutorial and of
 * its AutoTVM tutorial (named seed_* there) and ResNet-50 layers at batch 1, 32 and 256.
 * And the reader of a file in that format, for --layers-file.
 */
#include "conv_options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
static const ConvLayer layers[] = {
    /* name                  N    H   W    C    K  R  S  stride pad dilation groups */
    {"seed_tutorial",      256, 14, 14, 256, 512, 3, 3, 1, 1, 1, 1},
    {"seed_autotvm",         1,  7,  7, 512, 512, 3, 3, 1, 1, 1, 1},
    {"r50_res2_3x3_b32",    32, 56, 56,  64,  64, 3, 3, 1, 1, 1, 1},
    {"r50_res2_1x1_b32",    32, 56, 56,  64, 256, 1, 1, 1, 0, 1, 1},
    {"r50_res3_3x3s2_b32",  32, 56, 56, 128, 128, 3, 3, 2, 1, 1, 1},
    {"r50_res4_3x3_b32",    32, 14, 14, 256, 256, 3, 3, 1, 1, 1, 1},
    {"r50_res5_3x3_b32",    32,  7,  7, 512, 512, 3, 3, 1, 1, 1, 1},
    {"r50_res3_1x1_b256",  256, 28, 28, 512, 128, 1, 1, 1, 0, 1, 1},
    {"r50_res4_3x3_b1",      1, 14, 14, 256, 256, 3, 3, 1, 1, 1, 1},
};
/* clang-format on */

#define NLAYER (sizeof layers / sizeof layers[0])

const ConvLayer *conv_find_layer(const char *name)
{
    for (size_t i = 0; i < NLAYER; i++)
        if (strcmp(layers[i].name, name) == 0)
            return &layers[i];
    return NULL;
}

void conv_list_layers(FILE *out)
{
    for (size_t i = 0; i < NLAYER; i++) {
        const ConvLayer *l = &layers[i];
        fprintf(out,
                "%-20s N=%lld H=%lld W=%lld C=%lld K=%lld %lldx%lld stride %lld pad %lld "
                "dilation %lld groups %lld\n",
                l->name, (long long)l->batch, (long long)l->height, (long long)l->width,
                (long long)l->in_channels, (long long)l->out_channels, (long long)l->kernel_h,
                (long long)l->kernel_w, (long long)l->stride, (long long)l->pad,
                (long long)l->dilation, (long long)l->groups);
    }
}

/* ---- --layers-file ------------------------------------------------------------------------ */

/* The columns, in the order of layers.csv and of ConvLayer's numbers, and the least value. */
#define NCOLUMN 12
static const struct {
    const char *name;
    int64_t min;
} columns[NCOLUMN] = {{"name", 0},   {"N", 1},   {"H", 1},        {"W", 1},
                      {"C", 1},      {"K", 1},   {"R", 1},        {"S", 1},
                      {"stride", 1}, {"pad", 0}, {"dilation", 1}, {"groups", 1}};

static int64_t *layer_field(ConvLayer *l, int column)
{
    int64_t *fields[NCOLUMN] = {
        NULL,         &l->batch,    &l->height, &l->width, &l->in_channels, &l->out_channels,
        &l->kernel_h, &l->kernel_w, &l->stride, &l->pad,   &l->dilation,    &l->groups};
    return fields[column];
}

/* A file being read: its name, the line, and where a message goes. */
typedef struct Reader {
    const char *path;
    int line;
    char *error;
    size_t size;
} Reader;

static bool reader_fail(const Reader *r, const char *what)
{
    return cli_fail(r->error, r->size, "%s:%d: %s", r->path, r->line, what);
}

/* Splits `text` (its line end removed) at commas into at most `max` fields, each trimmed of
 * spaces. Returns the number of fields, or -1 for more than `max`. */
static int split(char *text, char **fields, int max)
{
    int count = 0;
    for (char *field = text;;) {
        char *comma = strchr(field, ',');
        if (comma)
            *comma = '\0';
        while (*field == ' ' || *field == '\t')
            field++;
        size_t len = strlen(field);
        while (len && (field[len - 1] == ' ' || field[len - 1] == '\t'))
            field[--len] = '\0';
        if (count == max)
            return -1;
        fields[count++] = field;
        if (!comma)
            return count;
        field = comma + 1;
    }
}

#define EXPECTED_HEADER "name,N,H,W,C,K,R,S,stride,pad,dilation,groups"

/* The header: which column each field is (order[field] = column). */
static bool read_header(const Reader *r, char *text, int order[NCOLUMN])
{
    char *fields[NCOLUMN], message[256];
    int count = split(text, fields, NCOLUMN);
    if (count < 0)
        return reader_fail(r, "more than 12 columns in the header (expected " EXPECTED_HEADER ")");
    bool seen[NCOLUMN] = {false};
    for (int f = 0; f < count; f++) {
        int column = -1;
        for (int c = 0; c < NCOLUMN; c++)
            if (strcmp(fields[f], columns[c].name) == 0)
                column = c;
        if (column < 0 || seen[column]) {
            snprintf(message, sizeof message,
                     "%s column '%.64s' in the header (expected " EXPECTED_HEADER ")",
                     column < 0 ? "an unknown" : "a second", fields[f]);
            return reader_fail(r, message);
        }
        seen[column] = true;
        order[f] = column;
    }
    for (int c = 0; c < NCOLUMN; c++) {
        if (!seen[c]) {
            snprintf(message, sizeof message,
                     "the header has no column '%s' (expected " EXPECTED_HEADER ")",
                     columns[c].name);
            return reader_fail(r, message);
        }
    }
    return true;
}

/* One layer's line into *layer (its name malloc'd). */
static bool read_layer(const Reader *r, char *text, const int order[NCOLUMN], ConvLayer *layer)
{
    char *fields[NCOLUMN + 1], message[512];
    int count = split(text, fields, NCOLUMN);
    if (count != NCOLUMN) {
        snprintf(message, sizeof message, "%s fields (expected %d, as the header)",
                 count < 0         ? "more"
                 : count < NCOLUMN ? "fewer"
                                   : "more",
                 NCOLUMN);
        return reader_fail(r, message);
    }
    memset(layer, 0, sizeof *layer);
    for (int f = 0; f < NCOLUMN; f++) {
        int column = order[f];
        if (column == 0) {
            if (!*fields[f])
                return reader_fail(r, "the layer has no name");
            continue;
        }
        char why[256];
        if (!cli_parse_i64(columns[column].name, fields[f], columns[column].min, INT32_MAX,
                           layer_field(layer, column), why, sizeof why)) {
            snprintf(message, sizeof message, "column %s", why);
            return reader_fail(r, message);
        }
    }
    for (int f = 0; f < NCOLUMN; f++)
        if (order[f] == 0 && !(layer->name = strdup(fields[f])))
            return reader_fail(r, "out of memory");
    return true;
}

/* Whether the line (its end removed) holds nothing to read: blank, or a '#' comment. */
static bool skipped(const char *text)
{
    text += strspn(text, " \t");
    return *text == '\0' || *text == '#';
}

/* Whether an earlier layer has the name of layers[count]. */
static bool repeated_name(const ConvLayerList *list, const ConvLayer *layer)
{
    for (int i = 0; i < list->count; i++)
        if (strcmp(list->layers[i].name, layer->name) == 0)
            return true;
    return false;
}

static bool read_lines(FILE *in, Reader *r, ConvLayerList *list)
{
    char *text = NULL;
    size_t capacity = 0;
    int order[NCOLUMN], allocated = 0;
    bool header = false, ok = true;
    ssize_t length;
    while (ok && (length = getline(&text, &capacity, in)) >= 0) {
        r->line++;
        while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == '\r'))
            text[--length] = '\0';
        if ((size_t)length != strlen(text)) {
            ok = reader_fail(r, "a NUL byte in the line");
        } else if (skipped(text)) {
            continue;
        } else if (!header) {
            ok = header = read_header(r, text, order);
        } else {
            if (list->count == allocated) {
                int more = allocated ? 2 * allocated : 16;
                ConvLayer *grown = realloc(list->layers, (size_t)more * sizeof *grown);
                if (!grown)
                    return free(text), reader_fail(r, "out of memory");
                list->layers = grown, allocated = more;
            }
            ConvLayer *layer = &list->layers[list->count];
            ok = read_layer(r, text, order, layer);
            if (ok && repeated_name(list, layer)) {
                char message[256];
                snprintf(message, sizeof message, "a second layer named '%.64s'", layer->name);
                free((char *)layer->name);
                ok = reader_fail(r, message);
            }
            list->count += ok;
        }
    }
    free(text);
    if (ok && ferror(in))
        return cli_fail(r->error, r->size, "%s: cannot read: %s", r->path, strerror(errno));
    if (ok && !header)
        return cli_fail(r->error, r->size, "%s: no header (expected " EXPECTED_HEADER ")", r->path);
    if (ok && list->count == 0)
        return cli_fail(r->error, r->size, "%s: no layers after the header", r->path);
    return ok;
}

bool conv_read_layers(const char *path, ConvLayerList *list, char *error, size_t error_size)
{
    memset(list, 0, sizeof *list);
    FILE *in = fopen(path, "r");
    if (!in)
        return cli_fail(error, error_size, "--layers-file: cannot open '%s': %s", path,
                        strerror(errno));
    Reader r = {path, 0, error, error_size};
    bool ok = read_lines(in, &r, list);
    fclose(in);
    if (!ok)
        conv_free_layers(list);
    return ok;
}

void conv_free_layers(ConvLayerList *list)
{
    for (int i = 0; i < list->count; i++)
        free((char *)list->layers[i].name);
    free(list->layers);
    memset(list, 0, sizeof *list);
}
