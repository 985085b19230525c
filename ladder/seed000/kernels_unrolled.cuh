// Seed 000, rungs 5-8: the kernels whose block size is a template parameter (the seed's
// `template <int32_t block_thread_num>`), the single-pass kernels, and the shuffle tail.
// Shared helpers (grid_stride_sum, final_warp, ...) and the fixes common to every kernel are in
// kernels_two_pass.cuh.
#pragma once

#include <cuda/atomic>

#include <cstddef>

#include "ladder/common.cuh"
#include "ladder/seed000/kernels_two_pass.cuh"

namespace foldkit::ladder::seed000 {

// The block-wide steps of the seed's unrolled tree: slots [0, B) down to [0, 64) (or [0, 32)
// when B == 32), each step behind a __syncthreads(). Steps for sizes above B vanish at compile
// time. Call after the __syncthreads() that follows the stores to shm[0, B).
template <class T, int B>
__device__ __forceinline__ void unrolled_block_steps(T* shm, unsigned tid) {
  static_assert(B >= 32 && B <= 1024 && (B & (B - 1)) == 0, "power-of-two block of 32..1024 threads");
  if constexpr (B >= 1024) {
    if (tid < 512) shm[tid] = wrap_add(shm[tid], shm[tid + 512]);
    __syncthreads();
  }
  if constexpr (B >= 512) {
    if (tid < 256) shm[tid] = wrap_add(shm[tid], shm[tid + 256]);
    __syncthreads();
  }
  if constexpr (B >= 256) {
    if (tid < 128) shm[tid] = wrap_add(shm[tid], shm[tid + 128]);
    __syncthreads();
  }
  if constexpr (B >= 128) {
    if (tid < 64) shm[tid] = wrap_add(shm[tid], shm[tid + 64]);
    __syncthreads();
  }
}

// The seed's ReduceSharedMemory<block_thread_num>: shm[0, B) to one value, returned in thread 0
// (other threads get an unspecified value). The last warp goes warp-synchronously (the
// __syncwarp fix in final_warp). Fix: the seed's listing of this function lost its last step
// (`vshm[tid] += vshm[tid + 1]`), so SinglePassMerged, which uses it, summed only every other
// slot of the last pair; final_warp has all steps.
template <class T, int B>
__device__ __forceinline__ T ReduceSharedMemory(T* shm) {
  const unsigned tid = threadIdx.x;
  unrolled_block_steps<T, B>(shm, tid);
  T v = T(0);
  if (tid < 32) v = final_warp(shm, tid, B >= 64);
  return v;
}

// The seed's ReduceSharedMemoryByShuffle<block_thread_num>: as ReduceSharedMemory, but the last
// warp adds its 32 (or 64) slots once and then exchanges registers with __shfl_xor_sync: no
// shared-memory stores, so no ordering to get wrong in the tail. Result in thread 0 (with xor,
// every lane of warp 0 has it).
template <class T, int B>
__device__ __forceinline__ T ReduceSharedMemoryByShuffle(T* shm) {
  const unsigned tid = threadIdx.x;
  unrolled_block_steps<T, B>(shm, tid);
  T v = T(0);
  if (tid < 32) {
    v = shm[tid];
    if constexpr (B >= 64) v = wrap_add(v, shm[tid + 32]);  // reads only: no race to fence
#pragma unroll
    for (int offset = 16; offset >= 1; offset /= 2) v = wrap_add(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

// Rung 5, "TwoPassUnroll" (TwoPassUnrollKernel<block_thread_num>): the block size is known at
// compile time, so the tree is fully unrolled: no loop counter or branch per step, and steps
// larger than the block disappear. Launch with blockDim.x == B.
template <class T, int B>
__global__ void __launch_bounds__(B) TwoPassUnrollKernel(const T* __restrict__ input, T* __restrict__ part_sum,
                                                         std::size_t n) {
  __shared__ T shm[B];
  shm[threadIdx.x] = grid_stride_sum(input, n);
  __syncthreads();
  const T total = ReduceSharedMemory<T, B>(shm);
  if (threadIdx.x == 0) part_sum[blockIdx.x] = total;
}

// Rung 6, "SinglePassMerged" (SinglePassMergedKernel<block_thread_num>): both passes in one
// launch. Each block publishes its partial and takes a ticket; the block that draws the last
// ticket adds all partials. Saves the second launch (and the gap before it).
//
// Fixes: the seed's ticket is a global `__device__ int32_t done_block_count`, shared by every
// call in the process (two concurrent reductions corrupt each other's count). Here it is the
// first word of the caller's workspace (`ticket`, zeroed once by the caller), and the last
// block stores 0 back, so the workspace is clean for the next call. The seed's __threadfence +
// plain atomicAdd becomes a device-scope acq_rel fetch_add: its release half publishes this
// block's partial (written by the same thread 0 just before), its acquire half (in the last
// block) makes every earlier block's partial visible to thread 0, and the __syncthreads() that
// broadcasts is_last_block extends that to the whole block. Partials are then read with __ldcg
// (from L2, the point of coherence) for good measure.
template <class T, int B>
__global__ void __launch_bounds__(B) SinglePassMergedKernel(const T* __restrict__ input, T* part_sum,
                                                            unsigned* ticket, T* __restrict__ output,
                                                            std::size_t n) {
  __shared__ T shm[B];
  __shared__ bool is_last_block;
  const unsigned tid = threadIdx.x;
  shm[tid] = grid_stride_sum(input, n);
  __syncthreads();
  const T block_total = ReduceSharedMemory<T, B>(shm);
  if (tid == 0) {
    part_sum[blockIdx.x] = block_total;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(*ticket);
    const bool last = done.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    if (last) done.store(0u, cuda::memory_order_relaxed);  // every block has drawn: reset for the next call
    is_last_block = last;
  }
  __syncthreads();  // also orders warp 0's last reads of shm before the stores below
  if (!is_last_block) return;

  T sum = T(0);
  for (std::size_t i = tid; i < gridDim.x; i += B) sum = wrap_add(sum, __ldcg(&part_sum[i]));
  shm[tid] = sum;
  __syncthreads();
  const T total = ReduceSharedMemory<T, B>(shm);
  if (tid == 0) *output = total;
}

// The output word as something atomicAdd can wrap: int32 goes through unsigned (wraps modulo
// 2^32 by definition), float is added as float.
__device__ __forceinline__ void atomic_accumulate(int* out, int v) {
  atomicAdd(reinterpret_cast<unsigned*>(out), static_cast<unsigned>(v));
}
__device__ __forceinline__ void atomic_accumulate(float* out, float v) { atomicAdd(out, v); }

// Rung 7, "SinglePassAtomic" (SinglePassAtomicKernel): no partials, no tree: every thread
// atomically adds its grid-stride sum into the output. The point of the rung is its bottleneck:
// gridDim.x * blockDim.x atomics serialised on one address. Float results depend on the order
// the atomics land in (not deterministic). The output must start at 0: the host enqueues a
// cudaMemsetAsync on the same stream before the launch (the seed left that to the caller).
template <class T>
__global__ void __launch_bounds__(1024) SinglePassAtomicKernel(const T* __restrict__ input, T* output, std::size_t n) {
  atomic_accumulate(output, grid_stride_sum(input, n));
}

// Rung 8, "WarpShuffle": TwoPassUnroll with the seed's ReduceSharedMemoryByShuffle as the block
// tree, i.e. the last warp reduces in registers through __shfl_xor_sync instead of through
// shared memory (the seed reports no measurable change; it removes the tail's 5 shared-memory
// store/load round trips and its __syncwarp()s).
template <class T, int B>
__global__ void __launch_bounds__(B) WarpShuffleKernel(const T* __restrict__ input, T* __restrict__ part_sum,
                                                       std::size_t n) {
  __shared__ T shm[B];
  shm[threadIdx.x] = grid_stride_sum(input, n);
  __syncthreads();
  const T total = ReduceSharedMemoryByShuffle<T, B>(shm);
  if (threadIdx.x == 0) part_sum[blockIdx.x] = total;
}

}  // namespace foldkit::ladder::seed000
