// Seed 003, rungs 5-7: reduce5 (block size as a template, tree fully unrolled), reduce6 (many
// elements per thread, grid-stride) and the seed's unimplemented "optimisation 7", warp shuffle
// (reduce7_shuffle). Helpers and the fixes common to all kernels are in kernels_tree.cuh.
#pragma once

#include <cstddef>

#include "ladder/common.cuh"
#include "ladder/seed003/kernels_tree.cuh"

namespace foldkit::ladder::seed003 {

// The completely unrolled tree of reduce5/reduce6: sdata[0, B) to one value in thread 0 (other
// threads get an unspecified value). Steps for sizes above B vanish at compile time; the seed
// stops at 512 threads, the 1024 step is added so every block size up to 1024 works. Call after
// the __syncthreads() that follows the stores to sdata[0, B).
template <class T, unsigned B>
__device__ __forceinline__ T unrolled_tree(T* sdata, unsigned tid) {
  static_assert(B >= 32 && B <= 1024 && (B & (B - 1)) == 0, "power-of-two block of 32..1024 threads");
  if constexpr (B >= 1024) {
    if (tid < 512) sdata[tid] = wrap_add(sdata[tid], sdata[tid + 512]);
    __syncthreads();
  }
  if constexpr (B >= 512) {
    if (tid < 256) sdata[tid] = wrap_add(sdata[tid], sdata[tid + 256]);
    __syncthreads();
  }
  if constexpr (B >= 256) {
    if (tid < 128) sdata[tid] = wrap_add(sdata[tid], sdata[tid + 128]);
    __syncthreads();
  }
  if constexpr (B >= 128) {
    if (tid < 64) sdata[tid] = wrap_add(sdata[tid], sdata[tid + 64]);
    __syncthreads();
  }
  T v = T(0);
  if (tid < 32) v = warpReduce(sdata, tid, B >= 64);
  return v;
}

// reduce5: reduce4 with the block size as a template parameter (launch with blockDim.x == B):
// the whole tree unrolls, so the loop counter, its compare and the dead steps are gone.
// Fix: the seed declares `extern __shared__ float sdata[THREAD_PER_BLOCK]` (an extern array
// cannot have a size); the array is sized by the template instead.
template <class T, unsigned B>
__global__ void __launch_bounds__(B) reduce5(const T* __restrict__ g_idata, std::size_t n, T* __restrict__ g_odata) {
  __shared__ T sdata[B];
  const unsigned tid = threadIdx.x;
  for_each_tile<T>(tile_count(n, 2 * static_cast<std::size_t>(B)), g_odata, [&](std::size_t tile) {
    sdata[tid] = load_pair(g_idata, n, tile, B);
    __syncthreads();
    return unrolled_tree<T, B>(sdata, tid);
  });
}

// Each thread's share of reduce6/reduce7: the input is walked in chunks of
// block_threads * IPT elements, block b taking chunks b, b + gridDim.x, ... (grid-stride); in a
// chunk, thread tid adds elements tid, tid + block_threads, ..., so every load instruction of a
// warp reads 32 adjacent elements. Whole chunks use IPT independent unguarded loads (the seed's
// `#pragma unroll` over NUM_THREAD), the last partial chunk guards each one.
// Fixes: the seed's reduce6 reads g_idata[i + iter * blockSize] with no bound (n had to be a
// multiple of the chunk) and its `unsigned int` n and i wrap past 2^32 elements. It also
// accumulated in sdata[tid] in shared memory; a register does the same with no shared traffic.
template <class T, int IPT>
__device__ __forceinline__ T chunked_grid_stride_sum(const T* __restrict__ g_idata, std::size_t n,
                                                     unsigned block_threads) {
  const std::size_t chunk = static_cast<std::size_t>(block_threads) * IPT;
  const std::size_t grid_step = chunk * gridDim.x;
  T sum = T(0);
  for (std::size_t base = blockIdx.x * chunk; base < n; base += grid_step) {
    const std::size_t i = base + threadIdx.x;
    if (n - base >= chunk) {
#pragma unroll
      for (int k = 0; k < IPT; ++k) sum = wrap_add(sum, g_idata[i + static_cast<std::size_t>(k) * block_threads]);
    } else {
#pragma unroll
      for (int k = 0; k < IPT; ++k)
        sum = wrap_add(sum, load_or_zero(g_idata, n, i + static_cast<std::size_t>(k) * block_threads));
    }
  }
  return sum;
}

// reduce6: many elements per thread. Each thread first adds IPT elements per chunk over a
// grid-stride loop, then the block runs reduce5's unrolled tree once. With the grid capped near
// one wave of resident threads (see variants.cu), each thread keeps many independent loads in
// flight, which hides memory latency, and there are few partials for the next pass.
template <class T, unsigned B, int IPT>
__global__ void __launch_bounds__(B) reduce6(const T* __restrict__ g_idata, std::size_t n, T* __restrict__ g_odata) {
  __shared__ T sdata[B];
  const unsigned tid = threadIdx.x;
  sdata[tid] = chunked_grid_stride_sum<T, IPT>(g_idata, n, B);
  __syncthreads();
  const T total = unrolled_tree<T, B>(sdata, tid);
  if (tid == 0) g_odata[blockIdx.x] = total;
}

// Sum over the 32 lanes of a warp through register shuffles; the total lands in lane 0.
template <class T>
__device__ __forceinline__ T warp_shuffle_sum(T v) {
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2) v = wrap_add(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

// reduce7_shuffle, the seed's "optimisation 7 (not implemented)": reduce6's loads, then the
// shared-memory tree is replaced by shuffles: every warp reduces its 32 values in registers,
// lane 0 of each warp stores one value, and warp 0 shuffles those (at most 32) into the block's
// total. One __syncthreads() instead of log2(B), and B / 32 shared-memory slots instead of B.
// Works for any blockDim.x that is a multiple of 32 (every warp full, as the full shuffle mask
// requires); the block size is a run-time value.
template <class T, int IPT>
__global__ void __launch_bounds__(1024) reduce7_shuffle(const T* __restrict__ g_idata, std::size_t n,
                                                        T* __restrict__ g_odata) {
  __shared__ T warp_sums[32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  T v = warp_shuffle_sum(chunked_grid_stride_sum<T, IPT>(g_idata, n, blockDim.x));
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_shuffle_sum(lane < blockDim.x / 32 ? warp_sums[lane] : T(0));
    if (lane == 0) g_odata[blockIdx.x] = v;
  }
}

}  // namespace foldkit::ladder::seed003
