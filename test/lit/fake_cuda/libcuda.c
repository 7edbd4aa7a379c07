/*
 * libcuda.so.1 for the lit tests: the unit tests' fake CUDA driver (test/unit/fake_driver.c)
 * under the driver's own entry-point names, so that a tool's --run, which opens
 * libcuda.so.1 by name, runs through to the check on a machine without a GPU
 * (LD_LIBRARY_PATH=%fake-cuda). It describes an H100 SXM; every call succeeds, kernels
 * compute nothing and outputs read back as zeros, so a check fails: what only a GPU that
 * computes wrong results could show otherwise (tcc-conv's exit status 4). A stand-in for
 * tests only, never installed. TCC_FAKE_CUDA_MULTIPROCESSORS=N gives the device N
 * multiprocessors instead of the H100 SXM's 132 (114: an H100 PCIe's).
 */
#include "fake_driver.c"

#include <stdlib.h>

/* `name`, exported, is the fake's `function` (the same type, the same code). */
#define EXPORT(name, function)                                                                     \
    __typeof__(function) name __attribute__((alias(#function), visibility("default")));
FAKE_ENTRY_POINTS(EXPORT)

/* The device described before the first call, as the unit tests' fake_reset() sets it. */
__attribute__((constructor)) static void describe_device(void)
{
    fake_reset();
    const char *multiprocessors = getenv("TCC_FAKE_CUDA_MULTIPROCESSORS");
    if (multiprocessors && atoi(multiprocessors) > 0)
        fake.attributes[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] = atoi(multiprocessors);
}
