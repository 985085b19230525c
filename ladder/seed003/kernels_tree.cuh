// Seed 003 (Mark Harris' "Optimizing Parallel Reduction in CUDA", as retold in the seed), rungs
// 0-4: reduce0..reduce4, one tile of blockDim.x (reduce0-2) or 2 * blockDim.x (reduce3-4)
// elements per block, reduced by a shared-memory tree whose block size is a run-time value. Each
// kernel writes one partial per block to g_odata[blockIdx.x]; the host launches the same kernel
// again over the partials until one value is left (see variants.cu), as the seed does.
//
// Fixes against the seed, common to every kernel here:
// - The seed assumes n is a multiple of the tile (it reads g_idata[i] unguarded) and that the
//   grid is exactly n / tile. Here loads past n contribute 0 (the last tile is padded with the
//   identity, no out-of-bounds read), and a block loops over tiles blockIdx.x, + gridDim.x, ...
//   so any grid is correct: with the derived grid (one tile per block) each block runs the
//   seed's kernel body exactly once; blocks past the last tile write 0.
// - Global positions are size_t (the seed's `unsigned int i` wraps for n >= 2^32), and int32
//   sums use wrap_add (unsigned wrap-around, never signed-overflow UB).
// - The shared array is sized by the host from blockDim.x (dynamic shared memory as raw bytes
//   cast to T, so the int and float instantiations do not clash) instead of a fixed
//   THREAD_PER_BLOCK that every launch had to match.
#pragma once

#include <cstddef>

#include "ladder/common.cuh"

namespace foldkit::ladder::seed003 {

template <class T>
__device__ __forceinline__ T* dynamic_shared() {
  extern __shared__ __align__(16) unsigned char seed003_dynamic_smem[];
  return reinterpret_cast<T*>(seed003_dynamic_smem);
}

// g_idata[i], or the identity 0 past the end: the tail fix.
template <class T>
__device__ __forceinline__ T load_or_zero(const T* __restrict__ g_idata, std::size_t n, std::size_t i) {
  return i < n ? g_idata[i] : T(0);
}

// Runs `tile_sum(tile)` for tiles blockIdx.x, blockIdx.x + gridDim.x, ... < tiles, adds what it
// returns in thread 0, and writes the block's total to g_odata[blockIdx.x]. `tile_sum` stores
// into and reduces the shared array and returns the tile's sum in thread 0. The loop's trip
// count is the same for every thread of the block, so the barriers inside are uniform; the one
// between tiles keeps the next tile's stores after the last reads of this tile's tree.
template <class T, class TileSum>
__device__ __forceinline__ void for_each_tile(std::size_t tiles, T* __restrict__ g_odata, TileSum tile_sum) {
  T block_sum = T(0);
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    block_sum = wrap_add(block_sum, tile_sum(tile));
    if (tile + gridDim.x < tiles) __syncthreads();
  }
  if (threadIdx.x == 0) g_odata[blockIdx.x] = block_sum;
}

__device__ __forceinline__ std::size_t tile_count(std::size_t n, std::size_t tile_elements) {
  return (n + tile_elements - 1) / tile_elements;
}

// reduce0: one element per thread, then the tree with interleaved addressing: at stride s the
// threads whose tid is a multiple of 2s add sdata[tid + s]. Bottleneck: `tid % (2 * s)` leaves
// the active threads scattered over every warp, so warps diverge and all stay busy. (Needs a
// power-of-two blockDim.x: accepts() guarantees it, and then tid + s < blockDim.x always.)
template <class T>
__global__ void __launch_bounds__(1024) reduce0(const T* __restrict__ g_idata, std::size_t n, T* __restrict__ g_odata) {
  T* sdata = dynamic_shared<T>();
  const unsigned tid = threadIdx.x;
  for_each_tile<T>(tile_count(n, blockDim.x), g_odata, [&](std::size_t tile) {
    sdata[tid] = load_or_zero(g_idata, n, tile * blockDim.x + tid);
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
      if (tid % (2 * s) == 0) sdata[tid] = wrap_add(sdata[tid], sdata[tid + s]);
      __syncthreads();
    }
    return tid == 0 ? sdata[0] : T(0);
  });
}

// reduce1: the same interleaved pairs, but thread tid works on slot index = 2 * s * tid, so the
// active threads are the first blockDim.x / (2s): whole warps retire, no divergence. Bottleneck
// it introduces: the 2s-strided slots of a warp land in the same shared-memory banks (bank
// conflicts).
template <class T>
__global__ void __launch_bounds__(1024) reduce1(const T* __restrict__ g_idata, std::size_t n, T* __restrict__ g_odata) {
  T* sdata = dynamic_shared<T>();
  const unsigned tid = threadIdx.x;
  for_each_tile<T>(tile_count(n, blockDim.x), g_odata, [&](std::size_t tile) {
    sdata[tid] = load_or_zero(g_idata, n, tile * blockDim.x + tid);
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
      const unsigned index = 2 * s * tid;  // <= 2 * 512 * 1023: no overflow
      if (index < blockDim.x) sdata[index] = wrap_add(sdata[index], sdata[index + s]);
      __syncthreads();
    }
    return tid == 0 ? sdata[0] : T(0);
  });
}

// reduce2: sequential addressing: the upper half of the live slots is added onto the lower
// half (stride s = blockDim.x / 2, / 4, ...), so a warp reads 32 consecutive slots: no bank
// conflicts. Bottleneck left: half of the threads are idle from the very first step.
template <class T>
__global__ void __launch_bounds__(1024) reduce2(const T* __restrict__ g_idata, std::size_t n, T* __restrict__ g_odata) {
  T* sdata = dynamic_shared<T>();
  const unsigned tid = threadIdx.x;
  for_each_tile<T>(tile_count(n, blockDim.x), g_odata, [&](std::size_t tile) {
    sdata[tid] = load_or_zero(g_idata, n, tile * blockDim.x + tid);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (tid < s) sdata[tid] = wrap_add(sdata[tid], sdata[tid + s]);
      __syncthreads();
    }
    return tid == 0 ? sdata[0] : T(0);
  });
}

// The two loads and first add of reduce3 onwards: a tile is 2 * blockDim.x elements, thread tid
// adds elements tid and tid + blockDim.x of it while loading (both guarded by the tail fix).
template <class T>
__device__ __forceinline__ T load_pair(const T* __restrict__ g_idata, std::size_t n, std::size_t tile,
                                       unsigned block_threads) {
  const std::size_t i = tile * (2 * static_cast<std::size_t>(block_threads)) + threadIdx.x;
  return wrap_add(load_or_zero(g_idata, n, i), load_or_zero(g_idata, n, i + block_threads));
}

// reduce3: first add during the global load: each thread loads two elements and adds them, so
// a block covers 2 * blockDim.x elements and the grid halves; no thread idles in the first step.
// Bottleneck left: instruction overhead (loop, __syncthreads) of the tree's later steps.
template <class T>
__global__ void __launch_bounds__(1024) reduce3(const T* __restrict__ g_idata, std::size_t n, T* __restrict__ g_odata) {
  T* sdata = dynamic_shared<T>();
  const unsigned tid = threadIdx.x;
  for_each_tile<T>(tile_count(n, 2 * static_cast<std::size_t>(blockDim.x)), g_odata, [&](std::size_t tile) {
    sdata[tid] = load_pair(g_idata, n, tile, blockDim.x);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (tid < s) sdata[tid] = wrap_add(sdata[tid], sdata[tid + s]);
      __syncthreads();
    }
    return tid == 0 ? sdata[0] : T(0);
  });
}

// One step of Harris' warpReduce: lanes below `offset` add the slot `offset` above.
//
// Fix: Harris' warpReduce relies on `volatile` and a warp executing in lock-step; since Volta's
// independent thread scheduling that is a data race (and with 32-thread blocks his unguarded
// `sdata[tid + 16]` from lanes 16..31 reads past the array). Here each lane carries its running
// value in a register `v`, only lanes < offset read and write (reads: slots [offset, 2 * offset),
// writes: slots [0, offset), never the same slot within a step), and __syncwarp() after each step
// orders its writes before the next step's reads. __syncwarp also orders memory, so no
// `volatile`. Called by all 32 lanes of warp 0, as __syncwarp()'s full mask requires.
template <class T>
__device__ __forceinline__ void warp_step(T* sdata, unsigned tid, T& v, unsigned offset) {
  if (tid < offset) {
    v = wrap_add(v, sdata[tid + offset]);
    sdata[tid] = v;
  }
  __syncwarp();
}

// Harris' warpReduce: slots [0, 64) (or [0, 32) when the block has only 32 threads: the +32 step
// is skipped) to one value, in lane 0. Call with tid < 32 after the __syncthreads() that follows
// the last block-wide step. reduce5/6 pass `upper_half` as a compile-time constant.
template <class T>
__device__ __forceinline__ T warpReduce(T* sdata, unsigned tid, bool upper_half) {
  T v = sdata[tid];
  if (upper_half) warp_step(sdata, tid, v, 32);
  warp_step(sdata, tid, v, 16);
  warp_step(sdata, tid, v, 8);
  warp_step(sdata, tid, v, 4);
  warp_step(sdata, tid, v, 2);
  warp_step(sdata, tid, v, 1);
  return v;
}

// reduce4: unroll the last warp: the tree loop stops at 64 live slots and warp 0 finishes
// without __syncthreads() (warpReduce). Removes the barriers and loop overhead of the last six
// steps, where only one warp had work.
template <class T>
__global__ void __launch_bounds__(1024) reduce4(const T* __restrict__ g_idata, std::size_t n, T* __restrict__ g_odata) {
  T* sdata = dynamic_shared<T>();
  const unsigned tid = threadIdx.x;
  for_each_tile<T>(tile_count(n, 2 * static_cast<std::size_t>(blockDim.x)), g_odata, [&](std::size_t tile) {
    sdata[tid] = load_pair(g_idata, n, tile, blockDim.x);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
      if (tid < s) sdata[tid] = wrap_add(sdata[tid], sdata[tid + s]);
      __syncthreads();
    }
    T v = T(0);
    if (tid < 32) v = warpReduce(sdata, tid, blockDim.x >= 64);
    return v;
  });
}

}  // namespace foldkit::ladder::seed003
