/*
 * The target tables (target.h) and the questions asked of them.
 */
#include "target/target.h"

#include <stdio.h>
#include <string.h>

#define COUNT(array) ((int)(sizeof(array) / sizeof((array)[0])))

/* Appends `name`, item `index` of a list of `count`, to out: "a, b or c" with `last` (" or ",
 * " and ") before the final item. */
static void append_listed(char *out, size_t size, const char *name, int index, int count,
                          const char *last)
{
    size_t len = strlen(out);
    snprintf(out + len, size - len, "%s%s",
             index == 0           ? ""
             : index + 1 == count ? last
                                  : ", ",
             name);
}

/* ---- the tables ------------------------------------------------------------------------ */

/* The PTX ISA column is the lowest version with the arch and every instruction tcc emits:
 * sm_70 takes 6.1 rather than 6.0 because the m32n8k16 and m8n32k16 WMMA shapes arrived in
 * 6.1; sm_89 and sm_90 need 7.8. Memory limits are the CUDA programming guide's
 * "Technical Specifications per Compute Capability"; the L2 caches the parts' data sheets
 * (V100, T4, A100, A10, L40S, H100 SXM and H200). */
#define MIB (1024 * 1024)
static const TargetArch archs[] = {
    /* arch      name     PTX  shared/block  shared/SM  threads/SM SMs L2 cp.async wgmma bulk
     * setmaxnreg clusters */
    {TCC_SM_70, "sm_70", 61, 96 * 1024, 96 * 1024, 2048, 80, 6 * MIB, false, false, false, false,
     false},
    {TCC_SM_75, "sm_75", 63, 64 * 1024, 64 * 1024, 1024, 40, 4 * MIB, false, false, false, false,
     false},
    {TCC_SM_80, "sm_80", 70, 163 * 1024, 164 * 1024, 2048, 108, 40 * MIB, true, false, false, false,
     false},
    {TCC_SM_86, "sm_86", 71, 99 * 1024, 100 * 1024, 1536, 72, 6 * MIB, true, false, false, false,
     false},
    {TCC_SM_89, "sm_89", 78, 99 * 1024, 100 * 1024, 1536, 142, 96 * MIB, true, false, false, false,
     false},
    {TCC_SM_90, "sm_90", 78, 227 * 1024, 228 * 1024, 2048, 132, 50 * MIB, true, false, false, false,
     true},
    {TCC_SM_90A, "sm_90a", 80, 227 * 1024, 228 * 1024, 2048, 132, 50 * MIB, true, true, true, true,
     true},
};
#undef MIB

const DeviceLimits tci_device_limits = {
    .warp_size = 32,
    .warpgroup_size = 128,
    .threads_per_block = 1024,
    .block_dim = {1024, 1024, 64},
    .grid_dim = {2147483647, 65535, 65535},
    .static_shared_bytes = 48 * 1024,
    .registers_per_block = 64 * 1024,
    .registers_per_thread = 255,
    .register_allocation_unit = 256,
};

int64_t tci_target_block_registers(int64_t threads, int registers)
{
    const DeviceLimits *limits = &tci_device_limits;
    int64_t unit = limits->register_allocation_unit, warp = limits->warp_size;
    int64_t per_warp = ((int64_t)registers * warp + unit - 1) / unit * unit;
    return (threads + warp - 1) / warp * per_warp;
}

/* WMMA's shapes (the PTX ISA's wmma.mma, LLVM's IntrinsicsNVVM.td WMMA_REGS). Registers
 * are per thread: an m16n16k16 float16 A fragment is 8 registers of two halves. */
#define F32_F16                                                                                    \
    {                                                                                              \
        TCC_FLOAT32, TCC_FLOAT16                                                                   \
    }
static const TensorShape shapes[] = {
    /* family   m   n   k  input         arch accumulators    A/B registers */
    {TENSOR_WMMA, 16, 16, 16, TCC_FLOAT16, 70, F32_F16, FRAGMENT_F16X2, 8, 8},
    {TENSOR_WMMA, 32, 8, 16, TCC_FLOAT16, 70, F32_F16, FRAGMENT_F16X2, 8, 8},
    {TENSOR_WMMA, 8, 32, 16, TCC_FLOAT16, 70, F32_F16, FRAGMENT_F16X2, 8, 8},
    {TENSOR_WMMA, 16, 16, 16, TCC_BFLOAT16, 80, {TCC_FLOAT32}, FRAGMENT_B32, 4, 4},
    {TENSOR_WMMA, 32, 8, 16, TCC_BFLOAT16, 80, {TCC_FLOAT32}, FRAGMENT_B32, 8, 2},
    {TENSOR_WMMA, 8, 32, 16, TCC_BFLOAT16, 80, {TCC_FLOAT32}, FRAGMENT_B32, 2, 8},
    {TENSOR_WMMA, 16, 16, 8, TCC_FLOAT32, 80, {TCC_FLOAT32}, FRAGMENT_B32, 4, 4},
    {TENSOR_WMMA, 16, 16, 16, TCC_INT8, 72, {TCC_INT32}, FRAGMENT_B32, 2, 2},
    {TENSOR_WMMA, 32, 8, 16, TCC_INT8, 72, {TCC_INT32}, FRAGMENT_B32, 4, 1},
    {TENSOR_WMMA, 8, 32, 16, TCC_INT8, 72, {TCC_INT32}, FRAGMENT_B32, 1, 4},
    /* A 16x16x16 tile as two m16n8k16: ldmatrix.x4 loads each operand into 4 registers. */
    {TENSOR_MMA_SYNC, 16, 16, 16, TCC_FLOAT16, 80, F32_F16, FRAGMENT_F16X2, 4, 4},
    {TENSOR_MMA_SYNC, 16, 16, 16, TCC_BFLOAT16, 80, {TCC_FLOAT32}, FRAGMENT_B32, 4, 4},
    /* A warpgroup's m64nNk16 with A and B in shared memory (no operand registers); the
     * schedule's n is the warpgroup's whole width. */
    {TENSOR_WGMMA, 64, 64, 16, TCC_FLOAT16, 90, {TCC_FLOAT32}, FRAGMENT_F16X2, 0, 0},
    {TENSOR_WGMMA, 64, 128, 16, TCC_FLOAT16, 90, {TCC_FLOAT32}, FRAGMENT_F16X2, 0, 0},
    {TENSOR_WGMMA, 64, 256, 16, TCC_FLOAT16, 90, {TCC_FLOAT32}, FRAGMENT_F16X2, 0, 0},
    {TENSOR_WGMMA, 64, 64, 16, TCC_BFLOAT16, 90, {TCC_FLOAT32}, FRAGMENT_B32, 0, 0},
    {TENSOR_WGMMA, 64, 128, 16, TCC_BFLOAT16, 90, {TCC_FLOAT32}, FRAGMENT_B32, 0, 0},
    {TENSOR_WGMMA, 64, 256, 16, TCC_BFLOAT16, 90, {TCC_FLOAT32}, FRAGMENT_B32, 0, 0},
    /* tf32 (float32 tensors) in k8 and int8 in k32 slices: 32 bytes of k, as above. */
    {TENSOR_WGMMA, 64, 64, 8, TCC_FLOAT32, 90, {TCC_FLOAT32}, FRAGMENT_B32, 0, 0},
    {TENSOR_WGMMA, 64, 128, 8, TCC_FLOAT32, 90, {TCC_FLOAT32}, FRAGMENT_B32, 0, 0},
    {TENSOR_WGMMA, 64, 256, 8, TCC_FLOAT32, 90, {TCC_FLOAT32}, FRAGMENT_B32, 0, 0},
    {TENSOR_WGMMA, 64, 64, 32, TCC_INT8, 90, {TCC_INT32}, FRAGMENT_B32, 0, 0},
    {TENSOR_WGMMA, 64, 128, 32, TCC_INT8, 90, {TCC_INT32}, FRAGMENT_B32, 0, 0},
    {TENSOR_WGMMA, 64, 256, 32, TCC_INT8, 90, {TCC_INT32}, FRAGMENT_B32, 0, 0},
};
#undef F32_F16

static const TensorAccumulator accumulators[] = {
    {TCC_FLOAT32, FRAGMENT_F32, 1},
    {TCC_FLOAT16, FRAGMENT_F16X2, 2},
    {TCC_INT32, FRAGMENT_B32, 1},
};

/* Scalar types not every arch can convert to and from. */
static const struct {
    tcc_dtype type;
    int min_arch;
} scalar_types[] = {
    {TCC_BFLOAT16, 80},
};

/* ---- archs --------------------------------------------------------------------------- */

const TargetArch *tci_target_arch(tcc_arch arch)
{
    for (int i = 0; i < COUNT(archs); i++)
        if (archs[i].arch == arch)
            return &archs[i];
    return NULL;
}

ArchLabel tci_target_arch_label(tcc_arch arch)
{
    ArchLabel label;
    const TargetArch *row = tci_target_arch(arch);
    if (row)
        snprintf(label.text, sizeof label.text, "%s", row->name);
    else
        snprintf(label.text, sizeof label.text, "sm_%d", (int)arch);
    return label;
}

int tci_target_first_arch_from(int min_arch)
{
    for (int i = 0; i < COUNT(archs); i++)
        if ((int)archs[i].arch >= min_arch)
            return (int)archs[i].arch;
    return 0;
}

int tci_target_arch_count(void)
{
    return COUNT(archs);
}

const TargetArch *tci_target_arch_at(int index)
{
    return index >= 0 && index < COUNT(archs) ? &archs[index] : NULL;
}

int tcc_arch_count(void)
{
    return COUNT(archs);
}

tcc_arch tcc_arch_at(int index)
{
    return index >= 0 && index < COUNT(archs) ? archs[index].arch : (tcc_arch)0;
}

const char *tcc_arch_name(tcc_arch arch)
{
    const TargetArch *row = tci_target_arch(arch);
    return row ? row->name : NULL;
}

tcc_arch tcc_arch_for_device(int compute_capability)
{
    for (int i = COUNT(archs) - 1; i >= 0; i--) {
        /* Arch-specific code (sm_90a) runs on its own compute capability alone. */
        int base = archs[i].wgmma ? 90 : (int)archs[i].arch;
        bool runs = archs[i].wgmma ? compute_capability == base : compute_capability >= base;
        if (runs)
            return archs[i].arch;
    }
    return (tcc_arch)0;
}

tcc_status tcc_arch_parse(tcc_context *ctx, const char *name, tcc_arch *out)
{
    char expected[128] = "";
    if (!out)
        return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT,
                        "tcc_arch_parse: the result pointer is NULL");
    for (int i = 0; i < COUNT(archs); i++) {
        if (name && strcmp(name, archs[i].name) == 0) {
            *out = archs[i].arch;
            return TCC_OK;
        }
        append_listed(expected, sizeof expected, archs[i].name, i, COUNT(archs), " or ");
    }
    return tci_fail(ctx, TCC_ERROR_INVALID_ARGUMENT, "unknown arch '%s' (expected %s)",
                    name ? name : "", expected);
}

/* ---- launch limits ----------------------------------------------------------------------- */

const char *tci_thread_tag_name(tcc_thread_tag tag)
{
    static const char *const names[7] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x",
                                         "threadIdx.y", "threadIdx.z", "vthread"};
    return (int)tag >= 0 && (int)tag < 7 ? names[tag] : "unknown";
}

tcc_status tci_target_validate_launch(tcc_context *ctx, const int64_t launch[6])
{
    const DeviceLimits *limits = &tci_device_limits;
    for (int i = 0; i < 6; i++)
        if (launch[i] < 1)
            return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                            "launch size %s is %lld; it must be at least 1",
                            tci_thread_tag_name((tcc_thread_tag)i), (long long)launch[i]);
    const int64_t *block = launch + 3;
    /* The threads first, as both checks this one replaced did; a product past int64 is past
     * the limit too. */
    int64_t threads;
    if (__builtin_mul_overflow(block[0], block[1], &threads) ||
        __builtin_mul_overflow(threads, block[2], &threads))
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule needs %lld x %lld x %lld threads per block; the limit is %lld",
                        (long long)block[0], (long long)block[1], (long long)block[2],
                        (long long)limits->threads_per_block);
    if (threads > limits->threads_per_block)
        return tci_fail(ctx, TCC_ERROR_SCHEDULE,
                        "schedule needs %lld threads per block (%lld x %lld x %lld); the limit is "
                        "%lld",
                        (long long)threads, (long long)block[0], (long long)block[1],
                        (long long)block[2], (long long)limits->threads_per_block);
    for (int i = 0; i < 3; i++) {
        if (block[i] > limits->block_dim[i])
            return tci_fail(ctx, TCC_ERROR_SCHEDULE, "schedule needs %s = %lld; the limit is %lld",
                            tci_thread_tag_name((tcc_thread_tag)(3 + i)), (long long)block[i],
                            (long long)limits->block_dim[i]);
        if (launch[i] > limits->grid_dim[i])
            return tci_fail(ctx, TCC_ERROR_SCHEDULE, "schedule needs %s = %lld; the limit is %lld",
                            tci_thread_tag_name((tcc_thread_tag)i), (long long)launch[i],
                            (long long)limits->grid_dim[i]);
    }
    return TCC_OK;
}

bool tci_target_fold_launch(const int64_t launch[6], int64_t folded[6])
{
    const DeviceLimits *limits = &tci_device_limits;
    if (launch[1] <= limits->grid_dim[1] && launch[2] <= limits->grid_dim[2])
        return false;
    int64_t blocks;
    if (__builtin_mul_overflow(launch[0], launch[1], &blocks) ||
        __builtin_mul_overflow(blocks, launch[2], &blocks) || blocks > limits->grid_dim[0])
        return false;
    folded[0] = blocks;
    folded[1] = folded[2] = 1;
    for (int i = 3; i < 6; i++)
        folded[i] = launch[i];
    return true;
}

/* ---- tensor shapes ----------------------------------------------------------------------- */

int tci_target_shape_count(void)
{
    return COUNT(shapes);
}

const TensorShape *tci_target_shape_at(int index)
{
    return index >= 0 && index < COUNT(shapes) ? &shapes[index] : NULL;
}

static bool same_tile(const TensorShape *row, int m, int n, int k)
{
    return row->m == m && row->n == n && row->k == k;
}

const TensorShape *tci_target_shape(int m, int n, int k, tcc_dtype input)
{
    for (int i = 0; i < COUNT(shapes); i++)
        if (same_tile(&shapes[i], m, n, k) && shapes[i].input == input)
            return &shapes[i];
    return NULL;
}

const TensorShape *tci_target_family_shape(TensorFamily family, int m, int n, int k,
                                           tcc_dtype input)
{
    for (int i = 0; i < COUNT(shapes); i++)
        if (shapes[i].family == family && same_tile(&shapes[i], m, n, k) &&
            shapes[i].input == input)
            return &shapes[i];
    return NULL;
}

int tci_target_wgmma_k(tcc_dtype input)
{
    for (int i = 0; i < COUNT(shapes); i++)
        if (shapes[i].family == TENSOR_WGMMA && shapes[i].input == input)
            return shapes[i].k;
    return 0;
}

bool tci_target_wgmma_transposes(tcc_dtype input)
{
    return input == TCC_FLOAT16 || input == TCC_BFLOAT16;
}

const char *tci_target_family_name(TensorFamily family)
{
    return family == TENSOR_WGMMA ? "wgmma" : family == TENSOR_MMA_SYNC ? "mma.sync" : "WMMA";
}

int tci_target_family_threads(TensorFamily family)
{
    return family == TENSOR_WGMMA ? 128 : 32;
}

bool tci_target_arch_has_family(tcc_arch arch, TensorFamily family)
{
    const TargetArch *row = tci_target_arch(arch);
    if (!row)
        return false;
    if (family == TENSOR_WGMMA)
        return row->wgmma;
    return (int)arch >= tci_target_first_arch_from(tci_target_family_min_arch(family));
}

int tci_target_family_min_arch(TensorFamily family)
{
    int min_arch = 0;
    for (int i = 0; i < COUNT(shapes); i++)
        if (shapes[i].family == family && (min_arch == 0 || shapes[i].min_arch < min_arch))
            min_arch = shapes[i].min_arch;
    return min_arch;
}

bool tci_target_shape_exists(int m, int n, int k)
{
    for (int i = 0; i < COUNT(shapes); i++)
        if (same_tile(&shapes[i], m, n, k))
            return true;
    return false;
}

bool tci_target_shape_takes(const TensorShape *shape, tcc_dtype accumulator)
{
    for (int i = 0; i < TENSOR_MAX_ACCUMULATORS && shape->accumulators[i] != TCC_VOID; i++)
        if (shape->accumulators[i] == accumulator)
            return true;
    return false;
}

const TensorAccumulator *tci_target_accumulator(tcc_dtype type)
{
    for (int i = 0; i < COUNT(accumulators); i++)
        if (accumulators[i].type == type)
            return &accumulators[i];
    return NULL;
}

int tci_target_accumulator_regs(const TensorAccumulator *acc, TensorFamily family, int m, int n)
{
    return m * n / tci_target_family_threads(family) / acc->elements_per_reg;
}

/* Registers 4b .. 4b + 3 are the b-th m16n8 tile: its rows r and r + 8, two columns each. */
void tci_target_accumulator_element(int reg, int *row, int *col)
{
    *row = 8 * (reg / 2 % 2);
    *col = 8 * (reg / 4) + reg % 2;
}

int tci_target_accumulator_min_arch(int m, int n, int k, tcc_dtype type)
{
    int min_arch = 0;
    for (int i = 0; i < COUNT(shapes); i++) {
        const TensorShape *row = &shapes[i];
        if (same_tile(row, m, n, k) && tci_target_shape_takes(row, type) &&
            (min_arch == 0 || row->min_arch < min_arch))
            min_arch = row->min_arch;
    }
    return min_arch;
}

const char *tci_target_shape_name(int m, int n, int k, char *out, size_t size)
{
    snprintf(out, size, "m%dn%dk%d", m, n, k);
    return out;
}

/* Whether row i is the first of its tile among the rows of `input` (all rows for VOID). */
static bool first_of_tile(int i, tcc_dtype input)
{
    if (input != TCC_VOID && shapes[i].input != input)
        return false;
    for (int j = 0; j < i; j++)
        if ((input == TCC_VOID || shapes[j].input == input) &&
            same_tile(&shapes[j], shapes[i].m, shapes[i].n, shapes[i].k))
            return false;
    return true;
}

void tci_target_shape_names(tcc_dtype input, const char *last, char *out, size_t size)
{
    int total = 0;
    for (int i = 0; i < COUNT(shapes); i++)
        total += first_of_tile(i, input);
    out[0] = '\0';
    for (int i = 0, written = 0; i < COUNT(shapes); i++) {
        if (!first_of_tile(i, input))
            continue;
        char name[32];
        tci_target_shape_name(shapes[i].m, shapes[i].n, shapes[i].k, name, sizeof name);
        append_listed(out, size, name, written++, total, last);
    }
}

/* ---- validation -------------------------------------------------------------------------- */

/* How messages name the tensor cores of an input type: float32 elements are read as tf32. */
static const char *tensor_type_name(tcc_dtype input)
{
    return input == TCC_FLOAT32 ? "tf32" : tcc_dtype_name(input);
}

static bool has_input(tcc_dtype input)
{
    for (int i = 0; i < COUNT(shapes); i++)
        if (shapes[i].input == input)
            return true;
    return false;
}

/* The distinct values of a column of the table, in order of first appearance; the column
 * is read by `value(row, slot)` over `slots` slots a row (TCC_VOID: none). */
static int distinct_types(tcc_dtype (*value)(const TensorShape *row, int slot), int slots,
                          tcc_dtype input, tcc_dtype *out, int max)
{
    int count = 0;
    for (int i = 0; i < COUNT(shapes); i++) {
        if (input != TCC_VOID && shapes[i].input != input)
            continue;
        for (int s = 0; s < slots; s++) {
            tcc_dtype type = value(&shapes[i], s);
            bool seen = type == TCC_VOID;
            for (int j = 0; j < count && !seen; j++)
                seen = out[j] == type;
            if (!seen && count < max)
                out[count++] = type;
        }
    }
    return count;
}

static tcc_dtype input_of(const TensorShape *row, int slot)
{
    (void)slot;
    return row->input;
}

static tcc_dtype accumulator_of(const TensorShape *row, int slot)
{
    return row->accumulators[slot];
}

/* "a, b or c" from a list of types. */
static void type_list(const tcc_dtype *types, int count, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < count; i++)
        append_listed(out, size, tcc_dtype_name(types[i]), i, count, " or ");
}

tcc_status tci_target_validate_types(tcc_context *ctx, tcc_dtype input, tcc_dtype accumulate)
{
    tcc_dtype types[8];
    char list[128];
    if (!has_input(input)) {
        int count = distinct_types(input_of, 1, TCC_VOID, types, COUNT(types));
        type_list(types, count, list, sizeof list);
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED, "input_type must be %s (got %s)", list,
                        tcc_dtype_name(input));
    }
    int count = distinct_types(accumulator_of, TENSOR_MAX_ACCUMULATORS, input, types, COUNT(types));
    for (int i = 0; i < count; i++)
        if (types[i] == accumulate)
            return TCC_OK;
    type_list(types, count, list, sizeof list);
    return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                    "accumulate_type: %s inputs accumulate in %s, not %s", tcc_dtype_name(input),
                    list, tcc_dtype_name(accumulate));
}

tcc_status tci_target_validate_input(tcc_context *ctx, tcc_dtype input, tcc_arch arch)
{
    int needed = 0;
    for (int i = 0; i < COUNT(shapes); i++)
        if (shapes[i].input == input && (needed == 0 || shapes[i].min_arch < needed))
            needed = shapes[i].min_arch;
    if (needed == 0)
        return tci_fail(ctx, TCC_ERROR_UNSUPPORTED, "no tensor cores take %s inputs",
                        tcc_dtype_name(input));
    if ((int)arch >= needed)
        return TCC_OK;
    char what[64];
    if (input == TCC_FLOAT32)
        snprintf(what, sizeof what, "%s (float32 inputs)", tensor_type_name(input));
    else
        snprintf(what, sizeof what, "%s", tcc_dtype_name(input));
    return tci_fail(ctx, TCC_ERROR_UNSUPPORTED,
                    "%s tensor cores need sm_%d or newer; the target is %s", what, needed,
                    tci_target_arch_label(arch).text);
}

tcc_status tci_target_validate_shape(tcc_context *ctx, tcc_dtype input, int m, int n, int k)
{
    if (tci_target_shape(m, n, k, input))
        return TCC_OK;
    char names[128], shape[32], hint[160];
    tci_target_shape_names(input, " and ", names, sizeof names);
    /* One shape reads best as "tf32 has m16n16k8". */
    if (!strchr(names, ','))
        snprintf(hint, sizeof hint, "%s has %s", tensor_type_name(input), names);
    else
        snprintf(hint, sizeof hint, "%s", names);
    return tci_fail(ctx, TCC_ERROR_UNSUPPORTED, "no MMA shape %s for %s inputs (%s)",
                    tci_target_shape_name(m, n, k, shape, sizeof shape), tcc_dtype_name(input),
                    hint);
}

tcc_status tci_target_validate_scalar(tcc_context *ctx, tcc_dtype type, tcc_arch arch)
{
    for (int i = 0; i < COUNT(scalar_types); i++)
        if (scalar_types[i].type == type && (int)arch < scalar_types[i].min_arch)
            return tci_fail(ctx, TCC_ERROR_UNSUPPORTED, "%s needs sm_%d or newer; the target is %s",
                            tcc_dtype_name(type), scalar_types[i].min_arch,
                            tci_target_arch_label(arch).text);
    return TCC_OK;
}

/* ---- the public view ------------------------------------------------------------------- */

int tcc_mma_shape_count(void)
{
    int count = 0;
    for (int i = 0; i < COUNT(shapes); i++)
        count += first_of_tile(i, TCC_VOID);
    return count;
}

tcc_mma_shape tcc_mma_shape_at(int index)
{
    for (int i = 0, seen = 0; i < COUNT(shapes); i++) {
        if (!first_of_tile(i, TCC_VOID))
            continue;
        if (seen++ == index)
            return (tcc_mma_shape){shapes[i].m, shapes[i].n, shapes[i].k};
    }
    return (tcc_mma_shape){0, 0, 0};
}

bool tcc_mma_shape_takes(tcc_mma_shape shape, tcc_dtype input)
{
    return tci_target_shape(shape.m, shape.n, shape.k, input) != NULL;
}
