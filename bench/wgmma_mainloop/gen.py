"""Writes mainloop.cu, a microbenchmark of wgmma main loops (sm_90a) on operands already in
shared memory: no copies, no epilogue, so that what it measures is the loop's own structure
(warpgroups, tile shapes, wait_group depth, commits a step, a barrier's traffic) against the
tensor cores' peak (2048 dense fp16 FMA a cycle a multiprocessor).

    python3 gen.py && nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o mainloop mainloop.cu
    ./mainloop      # on the GPU: cycles a step, share of the peak, TFLOP/s, clock

On an H100 (bench/NOTES.md, thirteenth session) every variant with two warpgroups, and a lone
warpgroup that keeps one step in flight, ran at the peak; a lone warpgroup that waits for its
products each step at 76-86% of it.
"""
def wgmma_fn(n):
    regs = n // 2
    outs = ", ".join("%%%d" % i for i in range(regs))
    ops = ", ".join('"+f"(d[%d])' % i for i in range(regs))
    return f'''
__device__ __forceinline__ void wgmma_n{n}(float *d, uint64_t a, uint64_t b, int scale) {{
  asm volatile("{{ .reg .pred p; setp.ne.b32 p, %{regs+2}, 0; wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 {{{outs}}}, %{regs}, %{regs+1}, p, 1, 1, 0, 0; }}"
    : {ops} : "l"(a), "l"(b), "r"(scale));
}}'''

src = r'''
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
''' + wgmma_fn(256) + wgmma_fn(128) + r'''
__device__ __forceinline__ uint64_t desc(uint32_t smem_addr) {
  return (uint64_t)((smem_addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int R> __device__ __forceinline__ void fence_operand(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; i++) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N> __device__ __forceinline__ void wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory"); }

// WG consumer warpgroups, each MT m64 tiles by N columns; A rows: WG*MT*64, B rows: N (shared).
// INF: groups left in flight after each step's commit. SYNC: per step, a try_wait on a completed
// mbarrier and an arrive by each warp's lane 0 (the pipeline's barrier traffic, no waiting).
// HALF: commit each two k16 (cuDNN's) with wait(1) between halves.
template <int WG, int MT, int N, int INF, int SYNC, int HALF>
__global__ void __launch_bounds__(WG * 128, 1) mb(int steps, long long *cycles, float *sink) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t *smem = (uint8_t *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
  const int STAGES = 3;
  const int a_bytes = WG * MT * 64 * 128, b_bytes = N * 128, stage_bytes = a_bytes + b_bytes;
  __shared__ __align__(8) uint64_t bars[2];
  // random halfs in [-1, 1)
  for (int i = threadIdx.x; i < STAGES * stage_bytes / 2; i += blockDim.x) {
    uint32_t h = (i + 1) * 2654435761u ^ (blockIdx.x * 40503u);
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    ((__half_raw *)smem)[i].x = __half_as_ushort(__float2half(((int)(h & 0xFFFF) - 32768) / 32768.0f));
  }
  if (threadIdx.x == 0) {
    uint32_t b0 = (uint32_t)__cvta_generic_to_shared(&bars[0]);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b0));
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b0));  // phase 0 complete
    uint32_t b1 = (uint32_t)__cvta_generic_to_shared(&bars[1]);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1000000;" :: "r"(b1));
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const int wg = threadIdx.x / 128;
  uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  float d[MT][N / 2];
  for (int t = 0; t < MT; t++) for (int i = 0; i < N / 2; i++) d[t][i] = 0.f;
  long long t0 = clock64();
  for (int s = 0; s < steps; s++) {
    int stage = s % STAGES;
    if (SYNC) {
      uint32_t b0 = (uint32_t)__cvta_generic_to_shared(&bars[0]);
      uint32_t ok;
      do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(b0), "r"(0) : "memory");
      } while (!ok);
    }
    uint32_t a0 = base + stage * stage_bytes + (wg * MT) * 64 * 128;
    uint32_t b0 = base + stage * stage_bytes + a_bytes;
    for (int t = 0; t < MT; t++) fence_operand(d[t]);
    fence();
#pragma unroll
    for (int k = 0; k < 4; k++) {
#pragma unroll
      for (int t = 0; t < MT; t++) {
        if (N == 256) wgmma_n256(d[t], desc(a0 + t * 64 * 128 + k * 32), desc(b0 + k * 32), 1);
        else wgmma_n128(d[t], desc(a0 + t * 64 * 128 + k * 32), desc(b0 + k * 32), 1);
      }
      if (HALF && k == 1) { commit(); wait<1>(); }
    }
    commit();
    wait<INF>();
    for (int t = 0; t < MT; t++) fence_operand(d[t]);
    if (SYNC && threadIdx.x % 32 == 0) {
      uint32_t b1 = (uint32_t)__cvta_generic_to_shared(&bars[1]);
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b1) : "memory");
    }
  }
  wait<0>();
  for (int t = 0; t < MT; t++) fence_operand(d[t]);
  long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  float acc = 0;
  for (int t = 0; t < MT; t++) for (int i = 0; i < N / 2; i++) acc += d[t][i];
  if (acc == 12345.678f) sink[threadIdx.x] = acc;
}

template <int WG, int MT, int N, int INF, int SYNC, int HALF>
void run(const char *name, int sms, long long *dcyc, float *sink) {
  auto k = mb<WG, MT, N, INF, SYNC, HALF>;
  int smem = 3 * (WG * MT * 64 * 128 + N * 128) + 1024;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int steps = 4000;
  k<<<sms, WG * 128, smem>>>(steps, dcyc, sink);  // warm-up
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0));
  k<<<sms, WG * 128, smem>>>(steps, dcyc, sink);
  CK(cudaEventRecord(e1));
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
  long long cyc[1024];
  CK(cudaMemcpy(cyc, dcyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
  double mean = 0; for (int i = 0; i < sms; i++) mean += cyc[i]; mean /= sms;
  double ideal = (double)steps * WG * MT * 4 * (64.0 * N * 16) / 2048.0;  // 2048 FMA/clk/SM
  double flops = 2.0 * sms * steps * WG * MT * 4 * 64.0 * N * 16;
  printf("%-34s cycles/step %7.1f ideal %6.0f tensor %5.1f%%  %6.1f TFLOP/s  %.2f GHz\n", name,
         mean / steps, ideal / steps, 100 * ideal / mean, flops / ms / 1e9, mean / ms / 1e6);
}

int main() {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  long long *dcyc; float *sink;
  CK(cudaMalloc(&dcyc, 1024 * sizeof(long long))); CK(cudaMalloc(&sink, 4096 * 4));
  for (int rep = 0; rep < 2; rep++) {
  run<2, 1, 256, 0, 0, 0>("coop 2x m64n256 wait0", sms, dcyc, sink);
  run<2, 1, 256, 1, 0, 0>("coop 2x m64n256 wait1", sms, dcyc, sink);
  run<2, 1, 256, 0, 1, 0>("coop 2x m64n256 wait0 sync", sms, dcyc, sink);
  run<2, 1, 256, 1, 1, 0>("coop 2x m64n256 wait1 sync", sms, dcyc, sink);
  run<2, 1, 256, 0, 0, 1>("coop 2x m64n256 half", sms, dcyc, sink);
  run<2, 2, 128, 0, 0, 0>("coop 2x (2 m64n128) wait0", sms, dcyc, sink);
  run<2, 2, 128, 1, 0, 0>("coop 2x (2 m64n128) wait1", sms, dcyc, sink);
  run<1, 1, 256, 0, 0, 0>("lone m64n256 wait0", sms, dcyc, sink);
  run<1, 1, 256, 1, 0, 0>("lone m64n256 wait1", sms, dcyc, sink);
  run<1, 2, 128, 0, 0, 0>("lone 2 m64n128 wait0", sms, dcyc, sink);
  run<1, 2, 128, 1, 0, 0>("lone 2 m64n128 wait1", sms, dcyc, sink);
  run<1, 2, 128, 1, 0, 1>("lone 2 m64n128 half", sms, dcyc, sink);
  }
  printf("done\n");
  return 0;
}
'''
open("mainloop.cu", "w").write(src.replace("#include <cuda_runtime.h>", "#include <cuda_runtime.h>\n#include <cuda_fp16.h>"))
