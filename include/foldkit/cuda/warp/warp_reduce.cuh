// Warp-wide reduction by register shuffles (no shared memory).
#pragma once

#include "foldkit/cuda/warp/warp_shuffle.cuh"

namespace foldkit::cuda {

// Contract: all 32 lanes of the warp call it; lane 0 receives combine over the 32 values,
// combined as a fixed tree (lane i with lane i + delta, lower lane on the left), so the
// result is deterministic. Other lanes hold partial results.
template <class T, class Combine>
__device__ __forceinline__ T warp_reduce(T v, Combine combine) {
#pragma unroll
  for (unsigned delta = 16; delta > 0; delta >>= 1) v = combine(v, shfl_down_any(v, delta));
  return v;
}

// The same tree within aligned groups of `width` lanes (a power of two up to 32): the group's
// first lane receives combine over its group's values. All 32 lanes call it.
template <class T, class Combine>
__device__ __forceinline__ T group_reduce(T v, int width, Combine combine) {
  for (int delta = width >> 1; delta > 0; delta >>= 1) v = combine(v, shfl_down_any(v, static_cast<unsigned>(delta)));
  return v;
}

}  // namespace foldkit::cuda
