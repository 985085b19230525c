// Memory access helpers for the device algorithms.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace foldkit::cuda {

// 16 bytes of any element type, loaded with one LDG.E.128 and taken apart in registers.
template <class T>
struct alignas(16) Vec16 {
  static constexpr int kCount = 16 / sizeof(T);
  T v[kCount];
};

// Streaming (evict-first) 16-byte load: the input of a reduction is read exactly once, so it
// should not displace anything else from L2.
template <class T>
__device__ __forceinline__ Vec16<T> load_streaming(const Vec16<T>* p) {
  const uint4 raw = __ldcs(reinterpret_cast<const uint4*>(p));
  Vec16<T> out;
  memcpy(&out, &raw, 16);
  return out;
}

// Load from L2, bypassing L1: for values other blocks of the same launch wrote (partials).
template <class T>
__device__ __forceinline__ T load_from_l2(const T* p) {
  static_assert(std::is_trivially_copyable_v<T>);
  if constexpr (sizeof(T) % 8 == 0 && alignof(T) >= 8) {
    unsigned long long w[sizeof(T) / 8];
#pragma unroll
    for (int k = 0; k < int(sizeof(T) / 8); ++k) w[k] = __ldcg(reinterpret_cast<const unsigned long long*>(p) + k);
    T v;
    memcpy(&v, w, sizeof(T));
    return v;
  } else if constexpr (sizeof(T) == 2) {
    const unsigned short w = __ldcg(reinterpret_cast<const unsigned short*>(p));
    T v;
    memcpy(&v, &w, 2);
    return v;
  } else {
    static_assert(sizeof(T) % 4 == 0 && alignof(T) >= 4, "partials must be 2 bytes or word-sized");
    unsigned w[sizeof(T) / 4];
#pragma unroll
    for (int k = 0; k < int(sizeof(T) / 4); ++k) w[k] = __ldcg(reinterpret_cast<const unsigned*>(p) + k);
    T v;
    memcpy(&v, w, sizeof(T));
    return v;
  }
}

}  // namespace foldkit::cuda
