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

// kCount values per lane (a power of two), value k of every lane of an aligned group of `width`
// lanes (a power of two up to 32) belonging to the same output k: reduces each output over its
// group in lane order (lower lanes on the left, so a non-commutative combine gets its operands
// in order). The first h = min(log2 width, log2 kCount) levels each halve what a lane holds (it
// keeps half its outputs and sends the other half to its partner: kCount - 1 shuffles of a
// value over those levels, not h * kCount), the rest are a butterfly. Afterwards a lane whose
// place in its group is l holds output (j << h) + (l & ((1 << h) - 1)) in v[j], j < kCount >> h
// (lanes whose places agree in their low h bits hold the same). Returns h. All 32 lanes call it.
template <int kCount, class T, class Combine>
__device__ __forceinline__ int group_reduce_scatter(T (&v)[kCount], int width, Combine combine) {
  static_assert(kCount >= 1 && (kCount & (kCount - 1)) == 0, "a power of two of values per lane");
  const unsigned lane = threadIdx.x & 31u;
  int h = 0;
#pragma unroll
  for (int level = 0; (kCount >> level) > 1; ++level) {
    const unsigned m = 1u << level;
    if (static_cast<int>(m) < width) {  // uniform over the warp
      const bool upper = (lane & m) != 0;
      // Output 2j goes to the lower lane of the pair, 2j + 1 to the upper.
#pragma unroll
      for (int j = 0; j < (kCount >> level) / 2; ++j) {
        const T recv = shfl_xor_any(upper ? v[2 * j] : v[2 * j + 1], m);
        const T left = upper ? recv : v[2 * j], right = upper ? v[2 * j + 1] : recv;  // one combine, no divergence
        v[j] = combine(left, right);
      }
      h = level + 1;
    }
  }
  for (int m = 1 << h; m < width; m <<= 1) {
    const T other = shfl_xor_any(v[0], static_cast<unsigned>(m));
    const bool upper = (lane & static_cast<unsigned>(m)) != 0;
    const T left = upper ? other : v[0], right = upper ? v[0] : other;
    v[0] = combine(left, right);
  }
  return h;
}

}  // namespace foldkit::cuda
