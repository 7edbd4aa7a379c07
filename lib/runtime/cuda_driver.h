/*
 * The slice of the CUDA Driver API that the runtime uses, declared by hand.
 *
 * tcc must build on machines without the CUDA toolkit and run on machines without a
 * driver, so <cuda.h> is never included and libcuda.so.1 is never linked: runtime.c
 * opens it with dlopen and resolves the functions below by name. The numeric values are
 * copied from cuda.h (CUDA 13.0); they are part of the driver's stable ABI.
 */
#ifndef TCI_RUNTIME_CUDA_DRIVER_H
#define TCI_RUNTIME_CUDA_DRIVER_H

#include <stddef.h>

/* ---- types --------------------------------------------------------------------------- */

typedef int CUresult; /* enum cudaError_enum */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2: 64 bits on every target */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
/* Enums are passed as int-sized values (and arrays of them) in the C ABI. */
typedef int CUjit_option;
typedef int CUdevice_attribute;

/* ---- values -------------------------------------------------------------------------- */

/* CUresult: the failures the runtime explains beyond the driver's own description */
enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
};

/* CUjit_option */
enum {
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_LOG_VERBOSE = 12,
};

/* CUdevice_attribute */
enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2, /* _Y = 3, _Z = 4 */
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,  /* _Y = 6, _Z = 7 */
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

/* CUfunction_attribute */
enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0, /* what its registers and .maxntid allow here */
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,     /* static shared memory */
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

/* A tensor map: 128 opaque bytes, 64-byte aligned (CUtensorMap). */
typedef struct CUtensorMap {
    _Alignas(64) unsigned long long opaque[16];
} CUtensorMap;

/* CUtensorMapDataType, CUtensorMapSwizzle, CUtensorMapL2promotion (the others: 0) */
enum {
    CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
    CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
    CU_TENSOR_MAP_SWIZZLE_32B = 1,
    CU_TENSOR_MAP_SWIZZLE_64B = 2,
    CU_TENSOR_MAP_SWIZZLE_128B = 3,
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
};

/* A launch's attributes (cuLaunchKernelEx): only the cluster dimension is set; the value is
 * a 64-byte union in the ABI. */
enum {
    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
};
typedef struct CUlaunchAttribute {
    int id; /* CUlaunchAttributeID */
    char pad[8 - sizeof(int)];
    union {
        char pad[64];
        unsigned long long align; /* the union holds 8-byte members in cuda.h */
        struct {
            unsigned int x, y, z;
        } clusterDim;
    } value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;

_Static_assert(sizeof(CUlaunchAttribute) == 72 && offsetof(CUlaunchAttribute, value) == 8 &&
                   _Alignof(CUlaunchAttribute) == 8,
               "CUlaunchAttribute as cuda.h lays it out");
_Static_assert(sizeof(CUlaunchConfig) == 56 && offsetof(CUlaunchConfig, hStream) == 32 &&
                   offsetof(CUlaunchConfig, numAttrs) == 48,
               "CUlaunchConfig as cuda.h lays it out");

/* CUevent_flags */
enum {
    CU_EVENT_DEFAULT = 0,
};

/* ---- functions ----------------------------------------------------------------------- */

typedef CUresult (*PFN_cuDriverGetVersion)(int *version);
typedef CUresult (*PFN_cuInit)(unsigned int flags);
typedef CUresult (*PFN_cuGetErrorName)(CUresult error, const char **text);
typedef CUresult (*PFN_cuGetErrorString)(CUresult error, const char **text);
typedef CUresult (*PFN_cuDeviceGet)(CUdevice *device, int ordinal);
typedef CUresult (*PFN_cuDeviceGetCount)(int *count);
typedef CUresult (*PFN_cuDeviceGetName)(char *name, int len, CUdevice device);
typedef CUresult (*PFN_cuDeviceGetAttribute)(int *value, CUdevice_attribute attribute,
                                             CUdevice device);
typedef CUresult (*PFN_cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
typedef CUresult (*PFN_cuDevicePrimaryCtxRelease)(CUdevice device);
typedef CUresult (*PFN_cuCtxSetCurrent)(CUcontext context);
typedef CUresult (*PFN_cuCtxGetCurrent)(CUcontext *context);
typedef CUresult (*PFN_cuStreamGetCtx)(CUstream stream, CUcontext *context);
typedef CUresult (*PFN_cuCtxSynchronize)(void);
typedef CUresult (*PFN_cuMemGetInfo)(size_t *free_bytes, size_t *total_bytes);
typedef CUresult (*PFN_cuMemAlloc)(CUdeviceptr *pointer, size_t bytes);
typedef CUresult (*PFN_cuMemFree)(CUdeviceptr pointer);
typedef CUresult (*PFN_cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
typedef CUresult (*PFN_cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
typedef CUresult (*PFN_cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t count);
typedef CUresult (*PFN_cuModuleLoadDataEx)(CUmodule *module, const void *image,
                                           unsigned int noption, CUjit_option *options,
                                           void **values);
typedef CUresult (*PFN_cuModuleUnload)(CUmodule module);
typedef CUresult (*PFN_cuModuleGetFunction)(CUfunction *function, CUmodule module,
                                            const char *name);
typedef CUresult (*PFN_cuFuncGetAttribute)(int *value, int attribute, CUfunction function);
typedef CUresult (*PFN_cuFuncSetAttribute)(CUfunction function, int attribute, int value);
typedef CUresult (*PFN_cuLaunchKernel)(CUfunction function, unsigned int grid_x,
                                       unsigned int grid_y, unsigned int grid_z,
                                       unsigned int block_x, unsigned int block_y,
                                       unsigned int block_z, unsigned int shared_bytes,
                                       CUstream stream, void **params, void **extra);
typedef CUresult (*PFN_cuLaunchKernelEx)(const CUlaunchConfig *config, CUfunction function,
                                         void **params, void **extra);
typedef CUresult (*PFN_cuOccupancyMaxActiveClusters)(int *clusters, CUfunction function,
                                                     const CUlaunchConfig *config);
typedef CUresult (*PFN_cuTensorMapEncodeTiled)(CUtensorMap *map, int type, unsigned int rank,
                                               void *address, const unsigned long long *dims,
                                               const unsigned long long *strides,
                                               const unsigned int *box,
                                               const unsigned int *element_strides, int interleave,
                                               int swizzle, int l2_promotion, int oob_fill);
typedef CUresult (*PFN_cuTensorMapEncodeIm2col)(CUtensorMap *map, int type, unsigned int rank,
                                                void *address, const unsigned long long *dims,
                                                const unsigned long long *strides,
                                                const int *lower_corner, const int *upper_corner,
                                                unsigned int channels, unsigned int pixels,
                                                const unsigned int *element_strides, int interleave,
                                                int swizzle, int l2_promotion, int oob_fill);
typedef CUresult (*PFN_cuEventCreate)(CUevent *event, unsigned int flags);
typedef CUresult (*PFN_cuEventDestroy)(CUevent event);
typedef CUresult (*PFN_cuEventRecord)(CUevent event, CUstream stream);
typedef CUresult (*PFN_cuEventSynchronize)(CUevent event);
typedef CUresult (*PFN_cuEventElapsedTime)(float *ms, CUevent start, CUevent end);

/* The resolved entry points; runtime.c fills it from the symbols named in its table. The
 * optional ones (cuLaunchKernelEx, the tensor-map encoders) are NULL where the driver is too
 * old to have them: only the kernels that need them are refused (limits.c); without
 * cuStreamGetCtx a caller's stream is taken unchecked (launch.c). */
typedef struct CudaDriver {
    PFN_cuDriverGetVersion cuDriverGetVersion;
    PFN_cuInit cuInit;
    PFN_cuGetErrorName cuGetErrorName;
    PFN_cuGetErrorString cuGetErrorString;
    PFN_cuDeviceGet cuDeviceGet;
    PFN_cuDeviceGetCount cuDeviceGetCount;
    PFN_cuDeviceGetName cuDeviceGetName;
    PFN_cuDeviceGetAttribute cuDeviceGetAttribute;
    PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain;
    PFN_cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease;
    PFN_cuCtxSetCurrent cuCtxSetCurrent;
    PFN_cuCtxGetCurrent cuCtxGetCurrent;
    PFN_cuCtxSynchronize cuCtxSynchronize;
    PFN_cuMemGetInfo cuMemGetInfo;
    PFN_cuMemAlloc cuMemAlloc;
    PFN_cuMemFree cuMemFree;
    PFN_cuMemcpyHtoD cuMemcpyHtoD;
    PFN_cuMemcpyDtoH cuMemcpyDtoH;
    PFN_cuMemsetD8 cuMemsetD8;
    PFN_cuModuleLoadDataEx cuModuleLoadDataEx;
    PFN_cuModuleUnload cuModuleUnload;
    PFN_cuModuleGetFunction cuModuleGetFunction;
    PFN_cuFuncGetAttribute cuFuncGetAttribute;
    PFN_cuFuncSetAttribute cuFuncSetAttribute;
    PFN_cuLaunchKernel cuLaunchKernel;
    PFN_cuLaunchKernelEx cuLaunchKernelEx;                         /* optional: clusters */
    PFN_cuOccupancyMaxActiveClusters cuOccupancyMaxActiveClusters; /* optional: clusters */
    PFN_cuTensorMapEncodeTiled cuTensorMapEncodeTiled;   /* optional: bulk tensor copies */
    PFN_cuTensorMapEncodeIm2col cuTensorMapEncodeIm2col; /* optional: their im2col form */
    PFN_cuEventCreate cuEventCreate;
    PFN_cuEventDestroy cuEventDestroy;
    PFN_cuEventRecord cuEventRecord;
    PFN_cuEventSynchronize cuEventSynchronize;
    PFN_cuEventElapsedTime cuEventElapsedTime;
    PFN_cuStreamGetCtx cuStreamGetCtx; /* optional: checking a caller's stream (CUDA 9.2) */
} CudaDriver;

#endif
