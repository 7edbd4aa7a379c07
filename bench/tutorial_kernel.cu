// The TVM tensor-core tutorial's kernel, as TVM's CUDA code generator writes it for the
// tutorial's lowered TIR (../shared/seeds/000, "Lowering Computation to Intrinsics"):
// the same loops, indices, fragments and barriers, compiled by nvcc. It is the baseline
// tcc's own kernel is measured against (bench/tutorial_vs_cudnn.py); it is not part of tcc.
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

extern "C" __global__ void __launch_bounds__(256)
    tutorial_conv(half *__restrict__ A, half *__restrict__ W, float *__restrict__ Conv)
{
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[8];
    __shared__ __align__(32) half Apad_shared[12288];
    __shared__ __align__(32) half W_shared[12288];
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a_frag[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b_frag[4];
    const int bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;
    const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
#pragma unroll
    for (int i = 0; i < 8; ++i)
        wmma::fill_fragment(acc[i], 0.0f);
    for (int ic_outer = 0; ic_outer < 8; ++ic_outer) {
        for (int kh = 0; kh < 3; ++kh) {
            __syncthreads();
            for (int ax2 = 0; ax2 < 3; ++ax2) {
#pragma unroll
                for (int ax3 = 0; ax3 < 2; ++ax3) {
#pragma unroll
                    for (int f = 0; f < 8; ++f) {
                        bool inside = 1 <= bz / 14 + kh && bz / 14 + kh < 15 && 1 <= ax2 + bz % 14 &&
                                      ax2 + bz % 14 < 15;
                        Apad_shared[ty * 3072 + tz * 1536 + ax2 * 512 + ax3 * 256 + f * 32 + tx] =
                            inside ? A[bx * 6422528 + ty * 1605632 + tz * 802816 + kh * 57344 +
                                       bz * 4096 + ax2 * 4096 + ic_outer * 512 + ax3 * 256 +
                                       f * 32 + tx - 61440]
                                   : __float2half_rn(0.0f);
                    }
                }
            }
            for (int ax1 = 0; ax1 < 3; ++ax1) {
#pragma unroll
                for (int ax2 = 0; ax2 < 2; ++ax2) {
                    ((uint4 *)(W_shared + ax1 * 4096 + ax2 * 2048 + ty * 512 + tz * 256 + tx * 8))[0] =
                        ((uint4 *)(W + kh * 393216 + ax1 * 131072 + ic_outer * 16384 + ax2 * 8192 +
                                   by * 2048 + ty * 512 + tz * 256 + tx * 8))[0];
                }
            }
            __syncthreads();
            for (int ic_inner = 0; ic_inner < 2; ++ic_inner) {
                for (int kw = 0; kw < 3; ++kw) {
#pragma unroll
                    for (int ax0 = 0; ax0 < 2; ++ax0)
                        wmma::load_matrix_sync(a_frag[ax0],
                                               Apad_shared + ty * 3072 + ax0 * 1536 + kw * 512 +
                                                   ic_inner * 256,
                                               16);
#pragma unroll
                    for (int ax3 = 0; ax3 < 4; ++ax3)
                        wmma::load_matrix_sync(b_frag[ax3],
                                               W_shared + kw * 4096 + ic_inner * 2048 + tz * 1024 +
                                                   ax3 * 256,
                                               16);
#pragma unroll
                    for (int n_c = 0; n_c < 2; ++n_c)
#pragma unroll
                        for (int o_c = 0; o_c < 4; ++o_c)
                            wmma::mma_sync(acc[n_c * 4 + o_c], a_frag[n_c], b_frag[o_c],
                                           acc[n_c * 4 + o_c]);
                }
            }
        }
    }
#pragma unroll
    for (int n_inner = 0; n_inner < 2; ++n_inner)
#pragma unroll
        for (int o_inner = 0; o_inner < 4; ++o_inner)
            wmma::store_matrix_sync(Conv + bx * 12845056 + ty * 3211264 + n_inner * 1605632 +
                                        bz * 8192 + by * 2048 + tz * 1024 + o_inner * 256,
                                    acc[n_inner * 4 + o_inner], 16, wmma::mem_row_major);
}
