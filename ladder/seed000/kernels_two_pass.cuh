// Seed 000 ("CUDA高性能计算经典问题（一）—— 归约"), rungs 0-4: the serial baseline and the
// two-pass kernels whose block size is a run-time value. Every kernel of a two-pass rung reads
// `n` elements and writes one partial per block to part_sum[blockIdx.x]; the host runs it a
// second time with one block over those partials, as the seed does (see variants.cu).
//
// Fixes against the seed, common to all kernels here:
// - global positions are size_t (the seed's int32_t gtid / total_thread_num overflow, and its
//   `int32_t i < n` loop never ends, once n or the thread count passes 2^31);
// - int32 sums use wrap_add (unsigned wrap-around, never signed-overflow UB);
// - the element type is a template parameter (int and float), so the shared array is raw bytes
//   cast to T: `extern __shared__ T shm[]` would clash between the two instantiations.
#pragma once

#include <cstddef>

#include "ladder/common.cuh"

namespace foldkit::ladder::seed000 {

// The dynamic shared memory the host sized as blockDim.x * sizeof(T).
template <class T>
__device__ __forceinline__ T* dynamic_shared() {
  extern __shared__ __align__(16) unsigned char seed000_dynamic_smem[];
  return reinterpret_cast<T*>(seed000_dynamic_smem);
}

// Rung 0, "Serial" (SerialKernel): one thread adds every element in order. The baseline the
// seed measures everything against; its bottleneck is that it uses one thread of the GPU.
template <class T>
__global__ void SerialKernel(const T* __restrict__ input, T* __restrict__ output, std::size_t n) {
  T sum = T(0);
  for (std::size_t i = 0; i < n; ++i) sum = wrap_add(sum, input[i]);
  *output = sum;
}

// [begin, end) of part k when `len` items are split into `parts` nearly equal contiguous parts:
// the first len % parts parts get one item more. Fix: the seed's `n / gridDim.x * blockIdx.x`
// split drops the last n % gridDim.x elements (and n % blockDim.x per block); this one covers
// every item exactly once for any len, including len < parts (the later parts are empty).
struct Range {
  std::size_t begin, end;
};
__device__ __forceinline__ Range even_split(std::size_t len, std::size_t parts, std::size_t k) {
  const std::size_t q = len / parts, r = len % parts;
  const std::size_t begin = k * q + (k < r ? k : r);
  return {begin, begin + q + (k < r ? 1 : 0)};
}

// Thread 0 adds the block's blockDim.x per-thread sums in shared memory one by one, as the seed's
// first two rungs do. Call after the __syncthreads() that follows the stores.
template <class T>
__device__ __forceinline__ T serial_shared_sum(const T* shm) {
  T sum = T(0);
  for (unsigned t = 0; t < blockDim.x; ++t) sum = wrap_add(sum, shm[t]);
  return sum;
}

// Each thread adds input[i] for i = its global index, then every gridDim.x * blockDim.x-th
// element: a warp's 32 loads are adjacent, so they coalesce (the seed's interleaved loop).
template <class T>
__device__ __forceinline__ T grid_stride_sum(const T* __restrict__ input, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  T sum = T(0);
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    sum = wrap_add(sum, input[i]);
  return sum;
}

// Rung 1, "TwoPassSimple" (TwoPassSimpleKernel): n is cut into gridDim.x contiguous parts, each
// block's part into blockDim.x contiguous per-thread ranges; thread 0 adds the per-thread sums.
// Bottleneck it shows: at any moment the 32 threads of a warp read 32 addresses a whole range
// apart, so no load coalesces.
template <class T>
__global__ void __launch_bounds__(1024) TwoPassSimpleKernel(const T* __restrict__ input, T* __restrict__ part_sum,
                                                            std::size_t n) {
  const Range blk = even_split(n, gridDim.x, blockIdx.x);
  const Range thr = even_split(blk.end - blk.begin, blockDim.x, threadIdx.x);
  T sum = T(0);
  for (std::size_t i = blk.begin + thr.begin; i < blk.begin + thr.end; ++i) sum = wrap_add(sum, input[i]);
  T* shm = dynamic_shared<T>();
  shm[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x == 0) part_sum[blockIdx.x] = serial_shared_sum(shm);
}

// Rung 2, "TwoPassInterleaved" (TwoPassInterleavedKernel): the same two passes, but each thread
// reads grid-strided elements so a warp's loads coalesce. Bottleneck left: thread 0 still adds
// blockDim.x shared-memory values serially while the rest of the block waits.
template <class T>
__global__ void __launch_bounds__(1024) TwoPassInterleavedKernel(const T* __restrict__ input, T* __restrict__ part_sum,
                                                                 std::size_t n) {
  T* shm = dynamic_shared<T>();
  shm[threadIdx.x] = grid_stride_sum(input, n);
  __syncthreads();
  if (threadIdx.x == 0) part_sum[blockIdx.x] = serial_shared_sum(shm);
}

// Rung 3, "TwoPassSharedOptimized" (TwoPassSharedOptimizedKernel): the serial shared-memory loop
// becomes a halving tree, the upper half added onto the lower half each step (adjacent threads
// touch adjacent banks: no bank conflicts). log2(blockDim.x) steps instead of blockDim.x adds.
// Needs a power-of-two blockDim.x (accepts() guarantees it).
template <class T>
__global__ void __launch_bounds__(1024) TwoPassSharedOptimizedKernel(const T* __restrict__ input,
                                                                     T* __restrict__ part_sum, std::size_t n) {
  T* shm = dynamic_shared<T>();
  const unsigned tid = threadIdx.x;
  shm[tid] = grid_stride_sum(input, n);
  __syncthreads();
  for (unsigned active = blockDim.x / 2; active >= 1; active /= 2) {
    if (tid < active) shm[tid] = wrap_add(shm[tid], shm[tid + active]);
    __syncthreads();
  }
  if (tid == 0) part_sum[blockIdx.x] = shm[0];
}

// One step of the warp-synchronous tail: lanes below `offset` add the value `offset` slots up.
//
// Fix: the seed relies on `volatile` and the warp executing in lock-step. Since Volta's
// independent thread scheduling a warp's lanes need not run in step, so that is a data race.
// Here the lanes that are done keep their own value in a register (`v`), only lanes < offset
// read and write, and __syncwarp() after every step orders this step's writes (slots [0,
// offset)) before the next step's reads (slots [offset/2, offset)). Within one step the reads
// (slots [offset, 2 * offset)) and writes (slots [0, offset)) never touch the same slot, so no
// second __syncwarp is needed; __syncwarp also orders memory, so `volatile` is no longer needed.
// All 32 lanes of warp 0 call this (blockDim.x >= 32), as __syncwarp()'s full mask requires.
template <class T>
__device__ __forceinline__ void warp_sync_step(T* shm, unsigned lane, T& v, unsigned offset) {
  if (lane < offset) {
    v = wrap_add(v, shm[lane + offset]);
    shm[lane] = v;
  }
  __syncwarp();
}

// The last warp of the tree (the seed's "final warp" block): slots [0, 64) (or [0, 32) when the
// block has only 32 threads) down to one value, returned in lane 0. Call with threadIdx.x < 32
// after a __syncthreads() that follows the last write to those slots.
template <class T>
__device__ __forceinline__ T final_warp(T* shm, unsigned lane, bool upper_half) {
  T v = shm[lane];
  // The seed's `if (blockDim.x >= 64)` guard, kept: it is what makes 32-thread blocks correct.
  if (upper_half) warp_sync_step(shm, lane, v, 32);
  warp_sync_step(shm, lane, v, 16);
  warp_sync_step(shm, lane, v, 8);
  warp_sync_step(shm, lane, v, 4);
  warp_sync_step(shm, lane, v, 2);
  warp_sync_step(shm, lane, v, 1);
  return v;
}

// Rung 4, "TwoPassWarpSync" (TwoPassWarpSyncKernel): the tree stops calling __syncthreads() when
// only one warp's worth of work is left (<= 32 active threads); that warp finishes alone with
// warp-level synchronisation (see warp_sync_step for the fix). Removes five block-wide barriers
// during which all but one warp idled.
template <class T>
__global__ void __launch_bounds__(1024) TwoPassWarpSyncKernel(const T* __restrict__ input, T* __restrict__ part_sum,
                                                              std::size_t n) {
  T* shm = dynamic_shared<T>();
  const unsigned tid = threadIdx.x;
  shm[tid] = grid_stride_sum(input, n);
  __syncthreads();
  for (unsigned active = blockDim.x / 2; active > 32; active /= 2) {
    if (tid < active) shm[tid] = wrap_add(shm[tid], shm[tid + active]);
    __syncthreads();
  }
  if (tid < 32) {
    const T total = final_warp(shm, tid, blockDim.x >= 64);
    if (tid == 0) part_sum[blockIdx.x] = total;
  }
}

}  // namespace foldkit::ladder::seed000
