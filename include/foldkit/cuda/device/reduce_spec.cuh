// A reduction "spec" tells the full-array kernel what it computes: how an element enters the
// accumulator, how accumulators combine, the identity, and how the final accumulator becomes
// the result. Built-in ops and user functors are both specs, so one kernel serves both.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "foldkit/ops.hpp"

namespace foldkit::cuda {

template <ReduceOp Op, class T>
struct BuiltinReduceSpec {
  using traits = reduce_traits<Op, T>;
  using input_type = T;
  using accum_type = typename traits::accum_type;
  using result_type = typename traits::result_type;
  using combine_type = typename traits::combine_type;
  static constexpr bool kUsesIndex = traits::kUsesIndex;

  combine_type combine{};
  __device__ __forceinline__ accum_type identity() const { return traits::identity(); }
  __device__ __forceinline__ accum_type from_element(T v, std::int64_t i) const { return traits::from_element(v, i); }
  __device__ __forceinline__ result_type finalize(accum_type a, std::int64_t n, const T*) const {
    return traits::finalize(a, n);
  }
};

// argmin/argmax of 2- and 4-byte types as ONE 64-bit integer max/min: the element's value as an
// order-preserving integer key in the high bits and its index in the low bits (complemented for
// argmax, so the first index wins ties either way). The hot loop then costs one 64-bit integer
// min/max per element and two registers per lane instead of a {value, index} pair. NaN keys
// are the extreme; -0 and +0 share a key (they tie, the first index wins), as in ArgExtreme.
// The result's value is re-read from the input at the winning index, so it is the element's
// exact bits (NaN payload included). Valid while n < 2^(64 - 8 * sizeof(T)).
template <ReduceOp Op, class T>
struct PackedArgSpec {
  static_assert(Op == ReduceOp::argmin || Op == ReduceOp::argmax);
  static_assert(sizeof(T) == 2 || sizeof(T) == 4);
  using input_type = T;
  using accum_type = unsigned long long;
  using result_type = ArgResult<T>;
  static constexpr bool kIsMax = Op == ReduceOp::argmax;
  static constexpr int kKeyBits = 8 * sizeof(T);
  static constexpr int kIndexBits = 64 - kKeyBits;
  static constexpr unsigned long long kIndexMask = (1ull << kIndexBits) - 1ull;
  static constexpr std::int64_t kMaxElements = std::int64_t(1) << (kIndexBits < 62 ? kIndexBits : 62);

  struct Combine {
    __device__ __forceinline__ unsigned long long operator()(unsigned long long a, unsigned long long b) const {
      if constexpr (kIsMax) return a > b ? a : b;
      else return a < b ? a : b;
    }
  };
  Combine combine{};

  __device__ __forceinline__ static unsigned long long key_of(T v) {
    using Bits = std::conditional_t<sizeof(T) == 2, unsigned short, unsigned>;
    Bits u;
    memcpy(&u, &v, sizeof(T));
    constexpr Bits kSign = Bits(Bits(1) << (kKeyBits - 1));
    if constexpr (std::is_integral_v<T>) {
      return std::is_signed_v<T> ? Bits(u ^ kSign) : u;
    } else {
      constexpr Bits kAbs = Bits(kSign - 1);
      constexpr Bits kExp = sizeof(T) == 4 ? Bits(0x7f800000u) : std::is_same_v<T, half> ? Bits(0x7c00u) : Bits(0x7f80u);
      const Bits mag = Bits(u & kAbs);
      if (mag > kExp) return kIsMax ? Bits(~Bits(0)) : Bits(0);  // NaN: the extreme
      if (mag == 0) u = 0;                                       // -0 ties with +0
      return (u & kSign) ? Bits(~u) : Bits(u | kSign);
    }
  }

  __device__ __forceinline__ unsigned long long identity() const { return kIsMax ? 0ull : ~0ull; }
  __device__ __forceinline__ unsigned long long from_element(T v, std::int64_t i) const {
    const unsigned long long index = kIsMax ? kIndexMask - static_cast<unsigned long long>(i) : static_cast<unsigned long long>(i);
    return (key_of(v) << kIndexBits) | index;
  }
  __device__ __forceinline__ result_type finalize(unsigned long long a, std::int64_t, const T* in) const {
    const unsigned long long low = a & kIndexMask;
    const auto index = static_cast<std::int64_t>(kIsMax ? kIndexMask - low : low);
    return result_type{in[index], index};
  }
};

// A user's associative (and, for a unique answer, commutative) functor over T.
template <class T, class F>
struct CustomReduceSpec {
  using input_type = T;
  using accum_type = T;
  using result_type = T;
  using combine_type = F;
  static constexpr bool kUsesIndex = false;

  F combine;
  T identity_value;
  __device__ __forceinline__ T identity() const { return identity_value; }
  __device__ __forceinline__ T from_element(T v, std::int64_t) const { return v; }
  __device__ __forceinline__ T finalize(T a, std::int64_t, const T*) const { return a; }
};

}  // namespace foldkit::cuda
