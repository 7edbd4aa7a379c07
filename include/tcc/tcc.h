/*
 * tcc: a tensor-core compiler.
 *
 * The public C API. Everything an embedding compiler needs, in five headers a reader can
 * take one at a time, each including the one before it:
 *
 *   tcc/base.h      status, types, archs, the context and its errors, number formats
 *   tcc/te.h        tensor expressions and schedules; building them into kernels
 *   tcc/ops.h       conv2d and matmul: descriptors, compiling, CPU references
 *   tcc/runtime.h   devices, buffers, loading, launching and timing; checks on the GPU
 *   tcc/tune.h      tunable templates, config spaces, tuners and the records of trials
 *
 * The objects:
 *
 *   tcc_context   owns the LLVM context and the error message of the last failed call.
 *   tcc_func      a compute definition and its schedule; every tensor, axis and
 *                 expression made for it lives (and dies) with it.
 *   tcc_kernel    the result of a build: loop IR text, LLVM IR text, PTX, launch shape.
 *   tcc_device    a GPU opened through the CUDA Driver API (libcuda.so.1, loaded at run time).
 *
 * ABI. The shared library is libtensorcc.so.TCC_VERSION_MAJOR: within one major version
 * nothing is removed or changed, only added (new functions, new enum values at the end, new
 * fields at the end of the structs below). tcc_version_string() and tcc_version_number()
 * say what the library is; the TCC_VERSION_* macros what the headers are. The handles are
 * opaque. A struct that may grow starts with `size_t size`: tcc_conv2d_desc,
 * tcc_matmul_desc, tcc_gemm_schedule, tcc_build_options, tcc_check_options, tcc_workload
 * (each set by its _init function, which also gives the defaults), tcc_reference_tensors,
 * tcc_tensor_map, tcc_template, tcc_record, tcc_job (set it to sizeof), and what the library
 * fills: tcc_check_result, tcc_tensor_map_encoding, tcc_kernel_param_info, the record of
 * tcc_record_best, the jobs of tcc_job_claim and the workload of tcc_workload_from_key (set
 * size before the call). A library reads and
 * writes only the sizes it knows, so a program built against older headers keeps working with a
 * newer library, and a size it does not know is refused in one line, never misread. Each _init is
 * a macro over its _init_size function with the struct's sizeof, so that the library writes
 * only as far as the caller's struct reaches; the function of the _init name itself, which
 * programs built before the macro call, writes its struct's first-release size. tcc_epilogue
 * grows only as the last member of the descriptors, whose size covers it; tcc_mma_shape and
 * the tutorial's structs are what the tutorial defines and do not grow.
 *
 * Every call that can fail returns a tcc_status; on failure tcc_last_error(ctx) says why
 * in one line. The library never prints, exits or aborts.
 *
 * Threads, handle by handle. Separate contexts may be used from separate threads at once,
 * with no lock: outside them tcc keeps no mutable state but what it sets up in LLVM once
 * (pthread_once: the NVPTX target, and a fatal-error handler whose state is per thread);
 * each context has an LLVMContext of its own, and the CUDA driver is thread-safe.
 *   tcc_context        one thread at a time (calls write its last error, builds its LLVM
 *                      state); it may move to another thread when the caller orders the
 *                      two (pthread_join, a mutex, ...).
 *   tcc_func, and its tensors, axes and stages: as the context it was made with.
 *   tcc_device, tcc_device_buffer, tcc_loaded_kernel: as the context the device was opened
 *                      with (their errors go there). Launches of one loaded kernel that
 *                      overlap in time share its workspaces: order them, or give each its
 *                      own (tcc_kernel_launch_async_with_workspaces).
 *   tcc_kernel         any number of threads at once: it refers to no context, may outlive
 *                      the one that built it, and nothing changes it after the build (its
 *                      accessors, tcc_kernel_load and the checks on each thread's own
 *                      device) but tcc_kernel_compile_machine_code, which adds its machine
 *                      code: call that before others read it; tcc_kernel_destroy it once
 *                      none reads it.
 *   what the calls take as const (descriptors, schedules, build options): only read.
 *   the calls that take no context (versions, status names, archs, MMA shapes, types,
 *                      number formats, descriptor and option defaults, sizes and FLOPs,
 *                      tolerances): safe from any thread.
 * A print_callback runs on the thread that builds.
 * test/unit/llvm_test_threads.c checks these rules under ThreadSanitizer.
 */
#ifndef TCC_TCC_H
#define TCC_TCC_H

#include "tcc/tune.h"

#endif
