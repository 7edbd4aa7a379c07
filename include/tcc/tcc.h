/*
 * tcc: a tensor-core compiler.
 *
 * The public C API. Everything an embedding compiler needs, in four headers a reader can
 * take one at a time, each including the one before it:
 *
 *   tcc/base.h      status, types, archs, the context and its errors, number formats
 *   tcc/te.h        tensor expressions and schedules; building them into kernels
 *   tcc/ops.h       conv2d and matmul: descriptors, compiling, CPU references
 *   tcc/runtime.h   devices, buffers, loading, launching and timing; checks on the GPU
 *
 * The objects:
 *
 *   tcc_context   owns the LLVM context and the error message of the last failed call.
 *   tcc_func      a compute definition and its schedule; every tensor, axis and
 *                 expression made for it lives (and dies) with it.
 *   tcc_kernel    the result of a build: loop IR text, LLVM IR text, PTX, launch shape.
 *   tcc_device    a GPU opened through the CUDA Driver API (libcuda.so.1, loaded at run time).
 *
 * Every call that can fail returns a tcc_status; on failure tcc_last_error(ctx) says why
 * in one line. The library never prints, exits or aborts.
 *
 * Threads. A context and everything made from it or opened with it (its tcc_funcs with
 * their tensors, axes and schedules; its tcc_devices with their buffers and loaded
 * kernels) are used by one thread at a time: calls write the context's last error, and
 * builds its LLVM state. They may move to another thread when the caller orders the two
 * (pthread_join, a mutex, ...). Separate contexts may be used from separate threads at
 * once, with no lock: outside them tcc keeps no mutable state but what it sets up in LLVM
 * once (pthread_once: the NVPTX target, and a fatal-error handler whose state is per
 * thread); each context has an LLVMContext of its own, and the CUDA driver is thread-safe.
 * Shared between threads:
 *   - a built tcc_kernel: it refers to no context and may outlive the one that built it,
 *     and nothing changes it after the build, so any number of threads may read it at
 *     once (its accessors, tcc_kernel_load and the checks on each thread's own device);
 *     tcc_kernel_destroy it once none does;
 *   - what the calls take as const (descriptors, schedules, build options), only read;
 *   - the calls that take no context (archs, MMA shapes, types, number formats,
 *     descriptor and option defaults, sizes and FLOPs, tolerances): safe from any thread.
 * A print_callback runs on the thread that builds.
 * test/unit/llvm_test_threads.c checks these rules under ThreadSanitizer.
 */
#ifndef TCC_TCC_H
#define TCC_TCC_H

#include "tcc/runtime.h"

#endif
