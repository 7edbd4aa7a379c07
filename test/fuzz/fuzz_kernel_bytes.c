/*
 * Fuzz target of tcc_kernel_deserialize (lib/driver/serialize.c): any byte string is refused
 * with a message or read as a kernel that serializes back to the same bytes. The format ends
 * with a checksum that random bytes never match, so the target makes it right before reading,
 * and, where the input starts with a 0 byte, reads it as edits (offset, value) of a real
 * kernel's bytes instead (two launches, a workspace, tensor maps, described parameters,
 * machine code with each launch's registers), so that the fuzzer reaches every field without
 * a seed corpus.
 */
#include "driver/kernel.h"
#include "fuzz_support.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const unsigned char *bytes, size_t size)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ bytes[i]) * 0x100000001b3ull;
    return hash;
}

/* A kernel described by hand with every kind of field set. */
static void seed_bytes(void **bytes, size_t *size)
{
    static tcc_kernel_param_info params[2] = {
        {.name = "A", .dtype = TCC_FLOAT16, .layout = "NHWC", .rank = 1, .shape = {8}},
        {.name = "C", .role = TCC_PARAM_OUTPUT, .dtype = TCC_FLOAT32, .layout = "row_major"}};
    /* Machine code: an ELF64 header's first bytes, as far as the reader looks. */
    static unsigned char machine_code[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    tcc_kernel kernel = {.loop_ir = "loops",
                         .ptx = ".version 8.0",
                         .machine_code = machine_code,
                         .machine_code_size = sizeof machine_code,
                         .nlaunch = 2,
                         .main_launch = 1,
                         .nparam = 2,
                         .nworkspace = 1,
                         .workspace_bytes = {256},
                         .params = params};
    kernel.launches[0] = (KernelLaunch){.name = "stage",
                                        .grid = {1, 1, 1},
                                        .block = {32, 1, 1},
                                        .registers = 16,
                                        .spill_store_bytes = -1,
                                        .spill_load_bytes = -1};
    kernel.launches[1] = (KernelLaunch){.name = "main",
                                        .grid = {4, 2, 1},
                                        .block = {128, 1, 1},
                                        .cluster = {1, 2, 1},
                                        .shared_bytes = 4096,
                                        .dynamic_shared_bytes = 1024,
                                        .ntensor_map = 1,
                                        .registers = 168,
                                        .spill_store_bytes = 8,
                                        .spill_load_bytes = 12};
    kernel.launches[1].tensor_maps[0] = (tcc_tensor_map_encoding){
        .mode = TCC_TENSOR_MAP_IM2COL, .param = 2, .type = TCC_FLOAT16, .rank = 4};
    tcc_context *ctx = NULL;
    *bytes = NULL;
    if (tcc_context_create(&ctx) == TCC_OK &&
        tcc_kernel_serialize(ctx, &kernel, bytes, size) != TCC_OK)
        __builtin_trap();
    tcc_context_destroy(ctx);
}

/* The bytes to read: the input, or the seed edited by the input's (u16 offset, u8 value)
 * triples; the checksum made right. */
static unsigned char *bytes_to_read(const uint8_t *data, size_t size, size_t *out_size)
{
    unsigned char *bytes = NULL;
    if (size > 0 && data[0] == 0) {
        void *seed = NULL;
        seed_bytes(&seed, out_size);
        bytes = seed;
        for (size_t i = 1; bytes && i + 2 < size; i += 3)
            bytes[(data[i] | (size_t)data[i + 1] << 8) % *out_size] = data[i + 2];
    } else {
        bytes = malloc(size ? size : 1);
        if (bytes)
            memcpy(bytes, data, size);
        *out_size = size;
    }
    if (bytes && *out_size >= 16) {
        uint64_t hash = fnv1a(bytes, *out_size - 8);
        for (int i = 0; i < 8; i++)
            bytes[*out_size - 8 + i] = (unsigned char)(hash >> (8 * i));
    }
    return bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t length = 0;
    unsigned char *bytes = bytes_to_read(data, size, &length);
    tcc_context *ctx = NULL;
    if (!bytes || tcc_context_create(&ctx) != TCC_OK) {
        free(bytes);
        return 0;
    }
    tcc_kernel *kernel = NULL;
    tcc_status status = fuzz_check_status(ctx, "tcc_kernel_deserialize",
                                          tcc_kernel_deserialize(ctx, bytes, length, &kernel));
    if (status == TCC_OK) {
        void *again = NULL;
        size_t again_size = 0;
        if (tcc_kernel_serialize(ctx, kernel, &again, &again_size) != TCC_OK ||
            again_size != length || memcmp(again, bytes, length) != 0) {
            fprintf(stderr, "fuzz: a kernel read does not serialize to its bytes\n");
            __builtin_trap();
        }
        free(again);
    } else if (kernel) {
        __builtin_trap(); /* a failure leaves no kernel */
    }
    tcc_kernel_destroy(kernel);
    tcc_context_destroy(ctx);
    free(bytes);
    return 0;
}
