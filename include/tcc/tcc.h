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
 * in one line. The library never prints, exits or aborts. Handles are not shared between
 * contexts; two contexts may be used from two threads at once.
 */
#ifndef TCC_TCC_H
#define TCC_TCC_H

#include "tcc/runtime.h"

#endif
