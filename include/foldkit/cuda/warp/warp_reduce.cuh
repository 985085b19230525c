// Warp-wide reduction by register shuffles (no shared memory).
#pragma once

#include <cstring>
#include <type_traits>

namespace foldkit::cuda {

// Shuffles any trivially copyable value of up to 16 bytes, one 32-bit word at a time, so that
// accumulators such as ArgResult<double> travel as easily as a float.
template <class T>
__device__ __forceinline__ T shfl_down_any(T v, unsigned delta, unsigned mask = 0xffffffffu) {
  static_assert(std::is_trivially_copyable_v<T>, "shuffled values must be trivially copyable");
  if constexpr (sizeof(T) == 4) {
    unsigned w;
    memcpy(&w, &v, 4);
    w = __shfl_down_sync(mask, w, delta);
    memcpy(&v, &w, 4);
    return v;
  } else {
    constexpr int kWords = (sizeof(T) + 3) / 4;
    unsigned w[kWords] = {};
    memcpy(w, &v, sizeof(T));
#pragma unroll
    for (int k = 0; k < kWords; ++k) w[k] = __shfl_down_sync(mask, w[k], delta);
    memcpy(&v, w, sizeof(T));
    return v;
  }
}

// Contract: all 32 lanes of the warp call it; lane 0 receives combine over the 32 values,
// combined as a fixed tree (lane i with lane i + delta, lower lane on the left), so the
// result is deterministic. Other lanes hold partial results.
template <class T, class Combine>
__device__ __forceinline__ T warp_reduce(T v, Combine combine) {
#pragma unroll
  for (unsigned delta = 16; delta > 0; delta >>= 1) v = combine(v, shfl_down_any(v, delta));
  return v;
}

}  // namespace foldkit::cuda
