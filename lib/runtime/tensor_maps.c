/*
 * Tensor maps (CUtensorMap) for the bulk tensor copies of a launch, encoded through the
 * driver (cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col) from the device addresses of the
 * buffers they describe and the encoding the compiler recorded (tcc_tensor_map_encoding).
 * Out-of-bounds elements read as zero: the edges of a tile, a convolution's padding.
 */
#include "runtime/internal.h"

#include <stdio.h>

static int data_type(tcc_dtype type)
{
    switch (type) {
    case TCC_FLOAT16:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case TCC_BFLOAT16:
        return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case TCC_FLOAT32:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case TCC_INT32:
        return CU_TENSOR_MAP_DATA_TYPE_INT32;
    default:
        return CU_TENSOR_MAP_DATA_TYPE_UINT8; /* int8: bytes as they are */
    }
}

static int swizzle(int bytes)
{
    return bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
           : bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                         : CU_TENSOR_MAP_SWIZZLE_32B;
}

static tcc_status encode(tcc_device *device, const LoadedLaunch *launch, int index,
                         const tcc_tensor_map_encoding *e, CUdeviceptr pointer, CUtensorMap *map)
{
    unsigned long long dims[TCC_TENSOR_MAP_MAX_RANK], strides[TCC_TENSOR_MAP_MAX_RANK];
    unsigned int box[TCC_TENSOR_MAP_MAX_RANK], steps[TCC_TENSOR_MAP_MAX_RANK];
    for (int d = 0; d < e->rank; d++) {
        dims[d] = (unsigned long long)e->dims[d];
        strides[d] = (unsigned long long)(d + 1 < e->rank ? e->strides[d + 1] : 0);
        box[d] = (unsigned int)e->box[d];
        steps[d] = (unsigned int)e->element_strides[d];
    }
    void *address = (void *)(uintptr_t)pointer;
    CUresult result;
    const char *call;
    if (e->mode == TCC_TENSOR_MAP_IM2COL) {
        call = "cuTensorMapEncodeIm2col";
        result = device->cu.cuTensorMapEncodeIm2col(
            map, data_type(e->type), (unsigned int)e->rank, address, dims, strides, e->lower_corner,
            e->upper_corner, (unsigned int)e->box[0], (unsigned int)e->box[1], steps, 0,
            swizzle(e->swizzle_bytes), CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 0);
    } else {
        call = "cuTensorMapEncodeTiled";
        result = device->cu.cuTensorMapEncodeTiled(
            map, data_type(e->type), (unsigned int)e->rank, address, dims, strides, box, steps, 0,
            swizzle(e->swizzle_bytes), CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 0);
    }
    if (result == CUDA_SUCCESS)
        return TCC_OK;
    char detail[320];
    snprintf(detail, sizeof detail, " for tensor map %d of kernel '%s' (parameter %d, rank %d)",
             index, launch->name, e->param, e->rank);
    return tci_cuda_fail(device, result, call, detail);
}

tcc_status tci_encode_tensor_maps(tcc_device *device, const LoadedLaunch *launch,
                                  const CUdeviceptr *pointers, int npointer, CUtensorMap *maps)
{
    /* The encoders are optional entry points (CUDA 12.0); tcc_kernel_load checked this too. */
    tcc_status status = tci_check_entries(device, launch);
    if (status != TCC_OK)
        return status;
    for (int i = 0; i < launch->ntensor_map; i++) {
        const tcc_tensor_map_encoding *e = &launch->tensor_maps[i];
        if (e->param < 0 || e->param >= npointer)
            return tci_fail(device->ctx, TCC_ERROR_INVALID_ARGUMENT,
                            "kernel '%s': tensor map %d describes parameter %d of %d", launch->name,
                            i, e->param, npointer);
        status = encode(device, launch, i, e, pointers[e->param], &maps[i]);
        if (status != TCC_OK)
            return status;
    }
    return TCC_OK;
}
