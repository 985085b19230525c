// Register shuffles of any trivially copyable value (the intrinsics take only built-in types):
// built-in arithmetic types go to the intrinsic itself, anything else travels one 32-bit word
// at a time, so that accumulators such as ArgResult<double> or a user's 8-byte struct move as
// easily as a float.
#pragma once

#include <cstring>
#include <type_traits>

namespace foldkit::cuda {

namespace detail {
// Moves v word by word through `shuffle` (a callable taking and returning one 32-bit word).
template <class T, class Shuffle>
__device__ __forceinline__ T shuffle_words(T v, Shuffle shuffle) {
  static_assert(std::is_trivially_copyable_v<T>, "shuffled values must be trivially copyable");
  constexpr int kWords = (sizeof(T) + 3) / 4;
  unsigned w[kWords] = {};
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int k = 0; k < kWords; ++k) w[k] = shuffle(w[k]);
  memcpy(&v, w, sizeof(T));
  return v;
}
}  // namespace detail

template <class T>
__device__ __forceinline__ T shfl_down_any(T v, unsigned delta, unsigned mask = 0xffffffffu) {
  return detail::shuffle_words(v, [&](unsigned w) { return __shfl_down_sync(mask, w, delta); });
}

template <class T>
__device__ __forceinline__ T shfl_up_any(T v, unsigned delta, unsigned mask = 0xffffffffu) {
  if constexpr (std::is_arithmetic_v<T>) {
    return __shfl_up_sync(mask, v, delta);
  } else {
    return detail::shuffle_words(v, [&](unsigned w) { return __shfl_up_sync(mask, w, delta); });
  }
}

template <class T>
__device__ __forceinline__ T shfl_xor_any(T v, unsigned lane_mask, unsigned mask = 0xffffffffu) {
  if constexpr (std::is_arithmetic_v<T>) {
    return __shfl_xor_sync(mask, v, static_cast<int>(lane_mask));
  } else {
    return detail::shuffle_words(v, [&](unsigned w) { return __shfl_xor_sync(mask, w, static_cast<int>(lane_mask)); });
  }
}

template <class T>
__device__ __forceinline__ T shfl_idx_any(T v, int src_lane, unsigned mask = 0xffffffffu) {
  if constexpr (std::is_arithmetic_v<T>) {
    return __shfl_sync(mask, v, src_lane);
  } else {
    return detail::shuffle_words(v, [&](unsigned w) { return __shfl_sync(mask, w, src_lane); });
  }
}

}  // namespace foldkit::cuda
