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

// Makes every vector of a batch of loads depend on the LAST load of the batch, so that all the
// batch's loads are issued before any is used. Without it ptxas may start folding the first
// vectors (and reuse their registers) before it has issued the last loads: the SASS of
// reduce_full_kernel<4, f32 sum> read "LDG, LDG, FADD x5, LDG, LDG" (sm_90, CUDA 13.0), so a
// thread waited one DRAM round trip for its first two loads before the other two left, and
// the unroll-8 kernels had 4-5 loads in flight instead of 8. `zero` must be 0 at run time but
// unknown to the compiler (e.g. n >> 62 for an element count): every word of the earlier
// vectors is OR-ed with (zero ? the OR of every vector's first word : 0), which changes no bit
// but cannot be folded. Every word, and the whole word: with only the first word tied ptxas
// folded the other three early, and with (last & zero) it knew the high bits were clear and
// took the signs of min/max keys before the last load. The first words of EVERY load, not only
// the last one's: tied to the last load alone, ptxas issued the f16 argmax's loads 0, 1 and 3,
// used them, and only then issued load 2. Costs one LOP3 per 4 bytes, on an SM that waits for
// memory.
template <int kBatch, class T>
__device__ __forceinline__ void after_all_loads(Vec16<T> (&v)[kBatch], unsigned zero) {
  if constexpr (kBatch > 1) {
    unsigned first_words = 0;  // every load's first word: no use may start before all have arrived
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      unsigned w;
      memcpy(&w, &v[u], 4);
      first_words |= w;
    }
    const unsigned dep = zero != 0 ? first_words : 0u;
#pragma unroll
    for (int u = 0; u < kBatch - 1; ++u) {
      unsigned w[4];
      memcpy(w, &v[u], 16);
#pragma unroll
      for (int k = 0; k < 4; ++k) w[k] |= dep;
      memcpy(&v[u], w, 16);
    }
  }
}

}  // namespace foldkit::cuda
