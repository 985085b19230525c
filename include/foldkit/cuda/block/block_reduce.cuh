// Block-wide reduction: warp shuffles, one shared-memory slot per warp, then the first warp.
#pragma once

#include "foldkit/cuda/warp/warp_reduce.cuh"

namespace foldkit::cuda {

// Shared memory a block_reduce over T needs (one slot per possible warp).
template <class T>
struct BlockReduceStorage {
  T warp_result[32];
};

// Contract: every thread of the block calls it (blockDim.x a multiple of 32, up to 1024);
// thread 0 receives the result. The combine order is fixed (deterministic). The storage may
// be reused after a __syncthreads() that follows the call.
template <class T, class Combine>
__device__ __forceinline__ T block_reduce(T v, Combine combine, T identity, BlockReduceStorage<T>& storage) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  v = warp_reduce(v, combine);
  if (blockDim.x == 32) return v;
  if (lane == 0) storage.warp_result[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const unsigned warps = blockDim.x >> 5;
    v = lane < warps ? storage.warp_result[lane] : identity;
    v = warp_reduce(v, combine);
  }
  return v;
}

}  // namespace foldkit::cuda
