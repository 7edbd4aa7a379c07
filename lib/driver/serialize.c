/*
 * A built kernel as bytes and back (tcc_kernel_serialize, tcc_kernel_deserialize): to hand a
 * kernel to another process (tcc-tune's runner) or keep it on disk. The format, all integers
 * little-endian:
 *
 *   "TCCK" u32 version
 *   str loop_ir, str llvm_ir, str ptx
 *   i32 nparam, i32 nworkspace, i64 workspace_bytes[nworkspace]
 *   i32 nlaunch, i32 main_launch, then per launch:
 *     str name, i64 grid[3] block[3] cluster[3], i64 shared_bytes dynamic_shared_bytes,
 *     i32 ntensor_map, then per map: i32 mode param dtype rank, i64 dims[5] strides[5] box[5],
 *     i32 element_strides[5] lower_corner[3] upper_corner[3] swizzle_bytes
 *   u8 described, then per parameter when described:
 *     str name, i32 role dtype, i32 layout (an index into LAYOUTS; -1 for none), i32 rank,
 *     i64 shape[8] elements bytes, i32 alignment
 *   u64 machine code size (0: none), that many bytes (an ELF cubin), then when there are
 *     some, per launch: i32 registers, i64 spill_store_bytes spill_load_bytes (-1: unknown)
 *   u64 checksum: FNV-1a of every byte before it
 *
 * where str is a u64 length (UINT64_MAX for NULL) and that many bytes, no NUL among them.
 * Version 2 added the machine code; version 1 is refused (a kernel is rebuilt, not migrated).
 * The reader checks every length against what is left and every value against what a kernel
 * may hold, so that any byte string is either refused in one line or a kernel the accessors
 * and the runtime can take; the checksum refuses a corrupted byte the ranges would not see
 * (a changed character of the PTX).
 */
#include "driver/kernel.h"
#include "support/context.h"
#include "target/target.h"

#include <stdlib.h>
#include <string.h>

#define FORMAT_MAGIC "TCCK"
#define FORMAT_VERSION 2u
#define NULL_STRING UINT64_MAX
/* More parameters than any operator has; a bound on what a reader allocates. */
#define MAX_PARAMS 64

/* A parameter's layout is a static string (tcc_kernel_param_info): it travels as its index. */
static const char *const LAYOUTS[] = {"NHWC",    "NCHW",      "NHWCnc",    "KRSC",  "KCRS",
                                      "blocked", "row_major", "col_major", "vector"};
enum { LAYOUT_COUNT = sizeof LAYOUTS / sizeof LAYOUTS[0] };

static uint64_t fnv1a(const unsigned char *bytes, size_t size)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ bytes[i]) * 0x100000001b3ull;
    return hash;
}

/* ---- writing ------------------------------------------------------------------------------- */

typedef struct Writer {
    unsigned char *data;
    size_t size, capacity;
    bool failed; /* out of memory: every later write is dropped */
} Writer;

static void put_bytes(Writer *w, const void *bytes, size_t size)
{
    if (w->failed)
        return;
    if (w->capacity - w->size < size) {
        size_t capacity = w->capacity ? w->capacity : 4096;
        while (capacity - w->size < size)
            capacity *= 2;
        unsigned char *data = realloc(w->data, capacity);
        if (!data) {
            w->failed = true;
            return;
        }
        w->data = data;
        w->capacity = capacity;
    }
    memcpy(w->data + w->size, bytes, size);
    w->size += size;
}

static void put_u64(Writer *w, uint64_t value)
{
    unsigned char bytes[8];
    for (int i = 0; i < 8; i++)
        bytes[i] = (unsigned char)(value >> (8 * i));
    put_bytes(w, bytes, 8);
}

static void put_u32(Writer *w, uint32_t value)
{
    unsigned char bytes[4];
    for (int i = 0; i < 4; i++)
        bytes[i] = (unsigned char)(value >> (8 * i));
    put_bytes(w, bytes, 4);
}

static void put_i32(Writer *w, int32_t value)
{
    put_u32(w, (uint32_t)value);
}

static void put_i64s(Writer *w, const int64_t *values, int count)
{
    for (int i = 0; i < count; i++)
        put_u64(w, (uint64_t)values[i]);
}

static void put_i32s(Writer *w, const int *values, int count)
{
    for (int i = 0; i < count; i++)
        put_i32(w, values[i]);
}

static void put_string(Writer *w, const char *text)
{
    if (!text) {
        put_u64(w, NULL_STRING);
        return;
    }
    size_t length = strlen(text);
    put_u64(w, length);
    put_bytes(w, text, length);
}

static void put_tensor_map(Writer *w, const tcc_tensor_map_encoding *map)
{
    put_i32(w, (int32_t)map->mode);
    put_i32(w, map->param);
    put_i32(w, (int32_t)map->type);
    put_i32(w, map->rank);
    put_i64s(w, map->dims, TCC_TENSOR_MAP_MAX_RANK);
    put_i64s(w, map->strides, TCC_TENSOR_MAP_MAX_RANK);
    put_i64s(w, map->box, TCC_TENSOR_MAP_MAX_RANK);
    put_i32s(w, map->element_strides, TCC_TENSOR_MAP_MAX_RANK);
    put_i32s(w, map->lower_corner, 3);
    put_i32s(w, map->upper_corner, 3);
    put_i32(w, map->swizzle_bytes);
}

static void put_launch(Writer *w, const KernelLaunch *launch)
{
    put_string(w, launch->name);
    put_i64s(w, launch->grid, 3);
    put_i64s(w, launch->block, 3);
    put_i64s(w, launch->cluster, 3);
    put_u64(w, (uint64_t)launch->shared_bytes);
    put_u64(w, (uint64_t)launch->dynamic_shared_bytes);
    put_i32(w, launch->ntensor_map);
    for (int i = 0; i < launch->ntensor_map; i++)
        put_tensor_map(w, &launch->tensor_maps[i]);
}

static int layout_index(const char *layout)
{
    for (int i = 0; layout && i < LAYOUT_COUNT; i++)
        if (strcmp(layout, LAYOUTS[i]) == 0)
            return i;
    return -1;
}

static void put_param(Writer *w, const tcc_kernel_param_info *param)
{
    put_string(w, param->name);
    put_i32(w, (int32_t)param->role);
    put_i32(w, (int32_t)param->dtype);
    put_i32(w, layout_index(param->layout));
    put_i32(w, param->rank);
    put_i64s(w, param->shape, TCC_PARAM_MAX_RANK);
    put_u64(w, (uint64_t)param->elements);
    put_u64(w, (uint64_t)param->bytes);
    put_i32(w, param->alignment);
}

static void put_machine_code(Writer *w, const tcc_kernel *kernel)
{
    size_t size = kernel->machine_code ? kernel->machine_code_size : 0;
    put_u64(w, size);
    if (size == 0)
        return;
    put_bytes(w, kernel->machine_code, size);
    for (int i = 0; i < kernel->nlaunch; i++) {
        const KernelLaunch *launch = &kernel->launches[i];
        put_i32(w, launch->registers);
        put_u64(w, (uint64_t)launch->spill_store_bytes);
        put_u64(w, (uint64_t)launch->spill_load_bytes);
    }
}

static void put_kernel(Writer *w, const tcc_kernel *kernel)
{
    put_bytes(w, FORMAT_MAGIC, 4);
    put_u32(w, FORMAT_VERSION);
    put_string(w, kernel->loop_ir);
    put_string(w, kernel->llvm_ir);
    put_string(w, kernel->ptx);
    put_i32(w, kernel->nparam);
    put_i32(w, kernel->nworkspace);
    put_i64s(w, kernel->workspace_bytes, kernel->nworkspace);
    put_i32(w, kernel->nlaunch);
    put_i32(w, kernel->main_launch);
    for (int i = 0; i < kernel->nlaunch; i++)
        put_launch(w, &kernel->launches[i]);
    unsigned char described = kernel->params != NULL;
    put_bytes(w, &described, 1);
    for (int i = 0; described && i < kernel->nparam; i++)
        put_param(w, &kernel->params[i]);
    put_machine_code(w, kernel);
    put_u64(w, fnv1a(w->data, w->size));
}

static bool layout_known(const tcc_kernel *kernel)
{
    for (int i = 0; kernel->params && i < kernel->nparam; i++)
        if (kernel->params[i].layout && layout_index(kernel->params[i].layout) < 0)
            return false;
    return true;
}

tcc_status tcc_kernel_serialize(tcc_context *ctx, const tcc_kernel *kernel, void **bytes,
                                size_t *size)
{
    if (!kernel || !bytes || !size)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_serialize needs a kernel, bytes and a size (got NULL)");
    *bytes = NULL;
    *size = 0;
    if (!layout_known(kernel))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_serialize: a parameter's layout is none the format names");
    Writer w = {0};
    put_kernel(&w, kernel);
    if (w.failed) {
        free(w.data);
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory serializing a kernel");
    }
    *bytes = w.data;
    *size = w.size;
    return TCC_OK;
}

/* ---- reading ------------------------------------------------------------------------------- */

typedef struct Reader {
    tcc_context *ctx;
    const unsigned char *data;
    size_t size, pos;
    tcc_status status; /* the first failure; every later read yields zeros */
} Reader;

/* Fails the read with a message naming the offset; only the first failure is kept. */
static bool refuse(Reader *r, tcc_status status, const char *what)
{
    if (r->status == TCC_OK)
        r->status =
            tci_fail(r->ctx, status, "kernel bytes: %s at byte %zu of %zu", what, r->pos, r->size);
    return false;
}

static bool take(Reader *r, void *out, size_t count, const char *what)
{
    if (r->status != TCC_OK || r->size - r->pos < count) {
        memset(out, 0, count);
        return r->status == TCC_OK ? refuse(r, TCC_ERROR_INVALID_ARGUMENT, what) : false;
    }
    memcpy(out, r->data + r->pos, count);
    r->pos += count;
    return true;
}

static uint64_t get_u64(Reader *r, const char *what)
{
    unsigned char bytes[8];
    take(r, bytes, 8, what);
    uint64_t value = 0;
    for (int i = 0; i < 8; i++)
        value |= (uint64_t)bytes[i] << (8 * i);
    return value;
}

static int32_t get_i32(Reader *r, const char *what)
{
    unsigned char bytes[4];
    take(r, bytes, 4, what);
    uint32_t value = 0;
    for (int i = 0; i < 4; i++)
        value |= (uint32_t)bytes[i] << (8 * i);
    return (int32_t)value; /* two's complement, as every C compiler tcc builds with */
}

/* An int32 in [lo, hi], else refused with `what`. */
static int get_ranged(Reader *r, int lo, int hi, const char *what)
{
    int32_t value = get_i32(r, what);
    if (r->status == TCC_OK && (value < lo || value > hi)) {
        refuse(r, TCC_ERROR_INVALID_ARGUMENT, what);
        return lo;
    }
    return value;
}

/* An int64 in [lo, hi], else refused with `what`. */
static int64_t get_i64_ranged(Reader *r, int64_t lo, int64_t hi, const char *what)
{
    int64_t value = (int64_t)get_u64(r, what);
    if (r->status == TCC_OK && (value < lo || value > hi)) {
        refuse(r, TCC_ERROR_INVALID_ARGUMENT, what);
        return lo;
    }
    return value;
}

static void get_i64s(Reader *r, int64_t *values, int count, int64_t lo, int64_t hi,
                     const char *what)
{
    for (int i = 0; i < count; i++)
        values[i] = get_i64_ranged(r, lo, hi, what);
}

static void get_i32s(Reader *r, int *values, int count, const char *what)
{
    for (int i = 0; i < count; i++)
        values[i] = get_i32(r, what);
}

/* A string, malloc'd (NULL for the format's NULL, or on failure). */
static char *get_string(Reader *r, bool nullable, const char *what)
{
    uint64_t length = get_u64(r, what);
    if (r->status != TCC_OK)
        return NULL;
    if (length == NULL_STRING) {
        if (!nullable)
            refuse(r, TCC_ERROR_INVALID_ARGUMENT, what);
        return NULL;
    }
    if (length > r->size - r->pos) {
        refuse(r, TCC_ERROR_INVALID_ARGUMENT, what);
        return NULL;
    }
    if (memchr(r->data + r->pos, '\0', (size_t)length)) {
        refuse(r, TCC_ERROR_INVALID_ARGUMENT, what);
        return NULL;
    }
    char *text = malloc((size_t)length + 1);
    if (!text) {
        refuse(r, TCC_ERROR_OUT_OF_MEMORY, "out of memory for a string");
        return NULL;
    }
    take(r, text, (size_t)length, what);
    text[length] = '\0';
    return text;
}

/* Dimensions, strides and sizes: up to 2^62, so that the runtime's products of two of them
 * cannot overflow. */
#define MAX_EXTENT ((int64_t)1 << 62)

static void get_tensor_map(Reader *r, tcc_tensor_map_encoding *map, int npointer)
{
    map->size = sizeof *map;
    map->mode =
        (tcc_tensor_map_mode)get_ranged(r, TCC_TENSOR_MAP_TILED, TCC_TENSOR_MAP_IM2COL, "map mode");
    map->param = get_ranged(r, 0, npointer > 0 ? npointer - 1 : 0, "tensor map's parameter");
    map->type = (tcc_dtype)get_ranged(r, TCC_BOOL, TCC_FLOAT32, "tensor map's element type");
    map->rank = get_ranged(r, 1, TCC_TENSOR_MAP_MAX_RANK, "tensor map's rank");
    get_i64s(r, map->dims, TCC_TENSOR_MAP_MAX_RANK, 0, MAX_EXTENT, "tensor map's dimensions");
    get_i64s(r, map->strides, TCC_TENSOR_MAP_MAX_RANK, 0, MAX_EXTENT, "tensor map's strides");
    get_i64s(r, map->box, TCC_TENSOR_MAP_MAX_RANK, 0, MAX_EXTENT, "tensor map's box");
    get_i32s(r, map->element_strides, TCC_TENSOR_MAP_MAX_RANK, "element strides");
    get_i32s(r, map->lower_corner, 3, "im2col corner");
    get_i32s(r, map->upper_corner, 3, "im2col corner");
    map->swizzle_bytes = get_ranged(r, 0, 128, "tensor map's swizzle");
}

static void get_launch(Reader *r, KernelLaunch *launch, int npointer)
{
    launch->name = get_string(r, false, "launch name");
    get_i64s(r, launch->grid, 3, 1, INT32_MAX, "launch grid");
    get_i64s(r, launch->block, 3, 1, INT32_MAX, "launch block");
    get_i64s(r, launch->cluster, 3, 0, INT32_MAX, "launch cluster");
    launch->shared_bytes = get_i64_ranged(r, 0, INT32_MAX, "shared bytes");
    launch->dynamic_shared_bytes =
        get_i64_ranged(r, 0, launch->shared_bytes, "dynamic shared bytes");
    launch->ntensor_map = get_ranged(r, 0, TCI_MAX_LAUNCH_MAPS, "tensor map count");
    if (launch->ntensor_map > 0 && npointer == 0)
        refuse(r, TCC_ERROR_INVALID_ARGUMENT, "tensor maps without parameters");
    for (int i = 0; i < launch->ntensor_map && r->status == TCC_OK; i++)
        get_tensor_map(r, &launch->tensor_maps[i], npointer);
}

static void get_param(Reader *r, tcc_kernel_param_info *param)
{
    param->size = sizeof *param;
    param->name = get_string(r, false, "parameter name");
    param->role =
        (tcc_param_role)get_ranged(r, TCC_PARAM_INPUT, TCC_PARAM_INPUT_OUTPUT, "parameter role");
    param->dtype = (tcc_dtype)get_ranged(r, TCC_VOID, TCC_FLOAT32, "parameter type");
    int layout = get_ranged(r, -1, LAYOUT_COUNT - 1, "parameter layout");
    param->layout = layout >= 0 ? LAYOUTS[layout] : NULL;
    param->rank = get_ranged(r, 0, TCC_PARAM_MAX_RANK, "parameter rank");
    get_i64s(r, param->shape, TCC_PARAM_MAX_RANK, 0, MAX_EXTENT, "parameter shape");
    param->elements = get_i64_ranged(r, 0, MAX_EXTENT, "parameter elements");
    param->bytes = get_i64_ranged(r, 0, MAX_EXTENT, "parameter bytes");
    param->alignment = get_ranged(r, 1, 1 << 20, "parameter alignment");
    /* What tcc_kernel_param promises, which a caller sizes buffers from: elements the shape's
     * product, bytes the elements' size, the dimensions past the rank 0. */
    int64_t product = 1;
    bool consistent = param->dtype != TCC_VOID;
    for (int d = 0; d < TCC_PARAM_MAX_RANK; d++)
        consistent &= d < param->rank ? !__builtin_mul_overflow(product, param->shape[d], &product)
                                      : param->shape[d] == 0;
    int64_t bytes = 0;
    consistent &= product == param->elements &&
                  !__builtin_mul_overflow(product, (int64_t)tcc_dtype_size(param->dtype), &bytes) &&
                  bytes == param->bytes;
    if (r->status == TCC_OK && !consistent)
        refuse(r, TCC_ERROR_INVALID_ARGUMENT,
               "a parameter's type, shape, elements and bytes disagree");
}

/* The parameter descriptions; the kernel owns them (and their names) as soon as they exist,
 * so that tcc_kernel_destroy frees what a failed read leaves. */
static void get_params(Reader *r, tcc_kernel *kernel)
{
    unsigned char described = 0;
    take(r, &described, 1, "parameter flag");
    if (r->status != TCC_OK || !described)
        return;
    if (described != 1) {
        refuse(r, TCC_ERROR_INVALID_ARGUMENT, "parameter flag");
        return;
    }
    kernel->params =
        calloc(kernel->nparam > 0 ? (size_t)kernel->nparam : 1, sizeof *kernel->params);
    if (!kernel->params) {
        refuse(r, TCC_ERROR_OUT_OF_MEMORY, "out of memory for the parameters");
        return;
    }
    for (int i = 0; i < kernel->nparam && r->status == TCC_OK; i++)
        get_param(r, &kernel->params[i]);
}

/* The smallest image the driver could take for a cubin: an ELF64 header. */
enum { ELF64_HEADER_BYTES = 64 };

/* The machine code and what ptxas said of each launch. The bytes must be an ELF64 image:
 * the driver tells a cubin from PTX by its magic and would read other bytes as PTX text,
 * which needs a NUL these need not have. */
static void get_machine_code(Reader *r, tcc_kernel *kernel)
{
    uint64_t size = get_u64(r, "machine code size");
    if (r->status != TCC_OK || size == 0)
        return;
    if (size > r->size - r->pos || size < ELF64_HEADER_BYTES) {
        refuse(r, TCC_ERROR_INVALID_ARGUMENT, "machine code size");
        return;
    }
    const unsigned char *image = r->data + r->pos;
    if (memcmp(image,
               "\x7f"
               "ELF",
               4) != 0 ||
        image[4] != 2 /* ELFCLASS64 */) {
        refuse(r, TCC_ERROR_INVALID_ARGUMENT, "machine code that is not an ELF64 image");
        return;
    }
    kernel->machine_code = malloc((size_t)size);
    if (!kernel->machine_code) {
        refuse(r, TCC_ERROR_OUT_OF_MEMORY, "out of memory for the machine code");
        return;
    }
    kernel->machine_code_size = (size_t)size;
    take(r, kernel->machine_code, (size_t)size, "machine code");
    for (int i = 0; i < kernel->nlaunch && r->status == TCC_OK; i++) {
        KernelLaunch *launch = &kernel->launches[i];
        launch->registers =
            get_ranged(r, -1, (int)tci_device_limits.registers_per_thread, "launch registers");
        launch->spill_store_bytes = get_i64_ranged(r, -1, MAX_EXTENT, "spill store bytes");
        launch->spill_load_bytes = get_i64_ranged(r, -1, MAX_EXTENT, "spill load bytes");
    }
}

static void get_kernel(Reader *r, tcc_kernel *kernel)
{
    kernel->loop_ir = get_string(r, true, "loop IR");
    kernel->llvm_ir = get_string(r, true, "LLVM IR");
    kernel->ptx = get_string(r, false, "PTX");
    kernel->nparam = get_ranged(r, 0, MAX_PARAMS, "parameter count");
    kernel->nworkspace = get_ranged(r, 0, TCI_MAX_WORKSPACES, "workspace count");
    get_i64s(r, kernel->workspace_bytes, kernel->nworkspace, 0, MAX_EXTENT, "workspace bytes");
    int nlaunch = get_ranged(r, 1, TCI_MAX_LAUNCHES, "launch count");
    kernel->main_launch = get_ranged(r, 0, nlaunch - 1, "main launch");
    /* A map may read a workspace (an operand staged channels-last), which follow the
     * parameters. */
    int npointer = kernel->nparam + kernel->nworkspace;
    for (int i = 0; i < nlaunch && r->status == TCC_OK; i++) {
        kernel->nlaunch = i + 1; /* so that a failed read frees the name it took */
        get_launch(r, &kernel->launches[i], npointer);
    }
    get_params(r, kernel);
    get_machine_code(r, kernel);
}

static bool check_header(Reader *r)
{
    char magic[4];
    if (!take(r, magic, 4, "not a serialized kernel (too short)"))
        return false;
    if (memcmp(magic, FORMAT_MAGIC, 4) != 0)
        return refuse(r, TCC_ERROR_INVALID_ARGUMENT, "not a serialized kernel (no TCCK magic)");
    uint32_t version = (uint32_t)get_i32(r, "no format version");
    if (r->status == TCC_OK && version != FORMAT_VERSION) {
        r->status = tci_fail(r->ctx, TCC_ERROR_UNSUPPORTED,
                             "kernel bytes: format version %u, this tcc reads version %u", version,
                             FORMAT_VERSION);
        return false;
    }
    if (r->size < r->pos + 8)
        return refuse(r, TCC_ERROR_INVALID_ARGUMENT, "truncated (no checksum)");
    /* Whatever the body holds, the bytes must be those written: checked before reading it. */
    Reader tail = {.ctx = r->ctx, .data = r->data, .size = r->size, .pos = r->size - 8};
    if (get_u64(&tail, "checksum") != fnv1a(r->data, r->size - 8))
        return refuse(r, TCC_ERROR_INVALID_ARGUMENT, "checksum mismatch (truncated or corrupted)");
    r->size -= 8; /* the body ends before the checksum */
    return true;
}

tcc_status tcc_kernel_deserialize(tcc_context *ctx, const void *bytes, size_t size,
                                  tcc_kernel **out)
{
    if (!out || (!bytes && size > 0))
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_kernel_deserialize needs bytes and an output (got NULL)");
    *out = NULL;
    Reader r = {.ctx = ctx, .data = bytes, .size = size};
    if (!check_header(&r))
        return r.status;
    tcc_kernel *kernel = calloc(1, sizeof *kernel);
    if (!kernel)
        return tci_fail(ctx, TCC_ERROR_OUT_OF_MEMORY, "out of memory reading a kernel");
    get_kernel(&r, kernel);
    if (r.status == TCC_OK && r.pos != r.size)
        refuse(&r, TCC_ERROR_INVALID_ARGUMENT, "bytes after the kernel");
    if (r.status != TCC_OK) {
        tcc_kernel_destroy(kernel);
        return r.status;
    }
    *out = kernel;
    return TCC_OK;
}
