/*
 * A fake CUDA driver for the runtime's unit tests: entry points that a test hands to
 * tci_device_open_with (through fake_lookup) in place of libcuda.so.1's, so that what only a
 * GPU (or an old driver, or an exhausted one) would provoke runs on every machine, under the
 * sanitizers too. The device it describes is an H100 SXM with a CUDA 12.4 driver; a test
 * bends one field of `fake` at a time. It counts what is live (contexts, buffers, modules,
 * events), so that a leak on a failure path fails the test, and records the calls made and
 * the arguments of the last launch.
 */
#ifndef TEST_FAKE_DRIVER_H
#define TEST_FAKE_DRIVER_H

#include "runtime/internal.h"

enum {
    FAKE_INVALID_VALUE = 1,
    FAKE_INVALID_CONTEXT = 201,
    FAKE_INVALID_HANDLE = 400,
    FAKE_INVALID_PTX = 218,
    FAKE_INVALID_DEVICE = 101,
    FAKE_LAUNCH_OUT_OF_RESOURCES = 701,
};

typedef struct FakeDriver {
    int version; /* cuDriverGetVersion */
    int arch;    /* compute capability, major * 10 + minor */
    int attributes[128];
    int function_max_threads, function_registers, function_static_shared;
    size_t free_bytes, total_bytes;
    CUresult load_result, launch_result;
    const char *load_log; /* written into the JIT's error log when a load fails */
    /* An image that starts with ELF's magic is machine code (a cubin), loaded without the
     * JIT: what its load returns, and how many were asked (also counted in loads). */
    CUresult machine_code_result;
    int machine_code_loads;
    const char *missing[4];
    /* What is live: each must be 0 once the device is closed. */
    int contexts, buffers, modules, events;
    /* Calls made: a refusal before the driver is asked must leave them unchanged. */
    int loads, launches, cluster_launches, encodes, synchronizes;
    unsigned int dynamic_shared; /* the last CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    /* cuMemsetD8: how many, and the last one's byte and length. */
    int memsets;
    unsigned char memset_value;
    size_t memset_bytes;
    /* Contexts: the fake's primary context is FAKE_PRIMARY; `current` is what cuCtxSetCurrent
     * made current (NULL at first); a stream other than NULL and the special handles belongs
     * to stream_owner (FAKE_PRIMARY unless a test changes it). */
    CUcontext current, stream_owner;
    CUresult stream_result; /* what cuStreamGetCtx returns */
    /* The last launch: its stream, the context current then, and the first values its
     * parameters point at (the addresses, then tensor maps; 0 past the end). */
    CUstream launch_stream;
    CUcontext launch_context;
    unsigned long long launch_values[8];
    unsigned long long encode_address; /* the last tensor map's global address */
    /* cuOccupancyMaxActiveClusters counts whole clusters in each GPC of these
     * multiprocessors (0 ends the list); the last query's dynamic shared memory. */
    int gpc_multiprocessors[8];
    unsigned int occupancy_shared;
} FakeDriver;

/* The driver's state, which the tests read and bend. */
extern FakeDriver fake;

/* The primary context the fake retains. */
#define FAKE_PRIMARY ((CUcontext)&fake)

/* An H100 SXM with a CUDA 12.4 driver, nothing live, nothing missing. */
void fake_reset(void);

/* The fake's entry point called `name` (NULL for one in fake.missing, or unknown), as dlsym
 * would find it: the lookup tci_device_open_with takes. */
void *fake_lookup(void *handle, const char *name);

#endif
