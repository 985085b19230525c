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

}  // namespace foldkit::cuda
