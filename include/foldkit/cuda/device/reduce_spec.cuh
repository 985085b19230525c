// A reduction "spec" tells the full-array kernel what it computes: how an element enters the
// accumulator, how accumulators combine, the identity, and how the final accumulator becomes
// the result. Built-in ops and user functors are both specs, so one kernel serves both.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "foldkit/cuda/device/vector_load.cuh"
#include "foldkit/ops.hpp"

namespace foldkit::cuda {

// The hardware's NaN-propagating min/max of two floats (sm_80+: max.NaN.f32 / min.NaN.f32, one
// FMNMX.NAN): -0 orders below +0 (IEEE 754-2019 maximum/minimum, the Min/Max tie rule of
// ops.hpp) and a NaN input gives the canonical NaN, so any combine order gives the same bits.
template <bool kMax>
__device__ __forceinline__ float nan_min_max(float a, float b) {
  float r;
  if constexpr (kMax) asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  else asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

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
      // Branch-free (selects, no predicated blocks): negative values flip all bits, others set
      // the sign bit; then both zeros take +0's key and every NaN the extreme key.
      using Signed = std::make_signed_t<Bits>;
      const Bits mag = Bits(u & kAbs);
      const Bits negative = Bits(static_cast<Signed>(u) >> (kKeyBits - 1));
      Bits key = Bits(u ^ Bits(negative | kSign));
      key = mag == 0 ? kSign : key;
      key = mag > kExp ? (kIsMax ? Bits(~Bits(0)) : Bits(0)) : key;
      return key;
    }
  }

  __device__ __forceinline__ unsigned long long identity() const { return kIsMax ? 0ull : ~0ull; }
  __device__ __forceinline__ unsigned long long from_element(T v, std::int64_t i) const {
    if constexpr (kIndexBits == 32) {
      // 32-bit key and 32-bit index: build the two halves as 32-bit words (one add and one NOT
      // for the index instead of 64-bit arithmetic); the pair is the 64-bit value.
      const auto low = static_cast<unsigned>(i);
      return (key_of(v) << 32) | (kIsMax ? ~low : low);
    } else {
      const unsigned long long index =
          kIsMax ? kIndexMask - static_cast<unsigned long long>(i) : static_cast<unsigned long long>(i);
      return (key_of(v) << kIndexBits) | index;
    }
  }
  __device__ __forceinline__ result_type finalize(unsigned long long a, std::int64_t, const T* in) const {
    using Bits = std::conditional_t<sizeof(T) == 2, unsigned short, unsigned>;
    constexpr Bits kSign = Bits(Bits(1) << (kKeyBits - 1));
    const unsigned long long low = a & kIndexMask;
    const auto index = static_cast<std::int64_t>(kIsMax ? kIndexMask - low : low);
    const auto key = static_cast<Bits>(a >> kIndexBits);
    // The key gives the value back without another trip to memory, except where keying lost
    // bits: a NaN (all NaNs share the extreme key) or a float zero (-0 shares +0's key).
    const Bits plus_zero_key = kSign;
    const bool lossy = !std::is_integral_v<T> && (key == (kIsMax ? Bits(~Bits(0)) : Bits(0)) || key == plus_zero_key);
    if (lossy) return result_type{in[index], index};
    Bits u;
    if constexpr (std::is_integral_v<T>) u = std::is_signed_v<T> ? Bits(key ^ kSign) : key;
    else u = (key & kSign) ? Bits(key & Bits(~kSign)) : Bits(~key);
    T value;
    memcpy(&value, &u, sizeof(T));
    return result_type{value, index};
  }
};

// argmin/argmax of 4-byte types, with a cheaper per-thread state in the hot loop
// (thread_state.cuh): the thread keeps the best 16-byte vector it has seen, that vector's
// extreme and the vector's position. Each new vector costs three min/max (its extreme), one
// compare with the best and a few selects; the packed key|index of PackedArgSpec is built once,
// after the loop, from the first element of the kept vector that equals its extreme, and
// everything from there on (block and grid combine, finalize) is PackedArgSpec's.
// The rules are the key's: a strictly better extreme replaces the kept vector, so the first
// vector wins ties (-0 ties +0), and within it the first equal element; a vector holding a NaN
// has a NaN extreme (NaN-propagating min/max), replaces any non-NaN best and is never replaced,
// and its first NaN is the answer.
template <ReduceOp Op, class T>
struct VectorArgSpec : PackedArgSpec<Op, T> {
  static_assert(sizeof(T) == 4);
  using Base = PackedArgSpec<Op, T>;
  using V = Vec16<T>;
  static constexpr bool kIsMax = Base::kIsMax;
  static constexpr unsigned kNoVector = ~0u;  // the thread has not left its identity
  struct State {
    V kept;          // the best vector so far
    T best;          // its extreme
    unsigned vector; // its position (kNoVector: none yet)
  };
  using thread_state_type = State;

  __device__ __forceinline__ static T extreme(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return nan_min_max<kIsMax>(a, b);
    } else {
      return kIsMax ? (a > b ? a : b) : (a < b ? a : b);
    }
  }
  __device__ __forceinline__ State thread_identity() const {
    // The far end of the order. A thread whose elements all equal it never leaves the identity;
    // thread_to_accum then credits the first element it read.
    State s;
    if constexpr (std::is_floating_point_v<T>)
      s.best = kIsMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else
      s.best = kIsMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
#pragma unroll
    for (int j = 0; j < V::kCount; ++j) s.kept.v[j] = s.best;
    s.vector = kNoVector;
    return s;
  }
  __device__ __forceinline__ State thread_update(State s, const V& v, unsigned vector) const {
    const T m = extreme(extreme(v.v[0], v.v[1]), extreme(v.v[2], v.v[3]));
    bool better;
    if constexpr (std::is_floating_point_v<T>) {
      // Unordered compare: true when m is past the best, or either is a NaN; a NaN best stays.
      better = (kIsMax ? !(m <= s.best) : !(m >= s.best)) && !(s.best != s.best);
    } else {
      better = kIsMax ? m > s.best : m < s.best;
    }
    State r;
#pragma unroll
    for (int j = 0; j < V::kCount; ++j) r.kept.v[j] = better ? v.v[j] : s.kept.v[j];
    r.best = better ? m : s.best;
    r.vector = better ? vector : s.vector;
    return r;
  }
  __device__ __forceinline__ unsigned long long thread_to_accum(const State& s, std::int64_t head,
                                                                std::int64_t first_vector, std::int64_t vectors) const {
    if (first_vector >= vectors) return Base::identity();
    if (s.vector == kNoVector) return Base::from_element(s.best, head + first_vector * V::kCount);
    // The first element of the kept vector that is its extreme (a NaN extreme: the first NaN).
    int first = V::kCount - 1;
#pragma unroll
    for (int j = V::kCount - 2; j >= 0; --j) {
      const T e = s.kept.v[j];
      bool hit;
      if constexpr (std::is_floating_point_v<T>) hit = s.best != s.best ? e != e : e == s.best;
      else hit = e == s.best;
      if (hit) first = j;
    }
    return Base::from_element(s.kept.v[first], head + static_cast<std::int64_t>(s.vector) * V::kCount + first);
  }
};

// min/max of half, bfloat16 and double as an integer min/max (float has NanMinMaxF32Spec
// below; PTX has no NaN-propagating f64 min/max): each element's bits become a signed
// integer key that orders like the value, with -0 below +0 (the Min/Max tie rule of ops.hpp),
// and any NaN mapped past the extreme so that it wins. The hot loop then does two or three
// integer operations per element instead of NaN tests and float compares. A NaN result comes
// back as the canonical quiet NaN (min/max promise "a NaN", not which one).
template <ReduceOp Op, class T>
struct KeyedMinMaxSpec {
  static_assert(Op == ReduceOp::min || Op == ReduceOp::max);
  static_assert(is_floating_v<T>);
  using Bits = std::conditional_t<sizeof(T) == 2, unsigned short, std::conditional_t<sizeof(T) == 4, unsigned, unsigned long long>>;
  using Signed = std::make_signed_t<Bits>;
  using input_type = T;
  using accum_type = std::conditional_t<sizeof(T) == 8, long long, int>;
  using result_type = T;
  static constexpr bool kIsMax = Op == ReduceOp::max;
  static constexpr int kWidth = 8 * sizeof(T);
  static constexpr Bits kAbs = Bits(Bits(~Bits(0)) >> 1);  // (16-bit: no sign-extending promotion)
  static constexpr Bits kExp = sizeof(T) == 8   ? Bits(0x7ff0000000000000ull)
                               : sizeof(T) == 4 ? Bits(0x7f800000u)
                               : std::is_same_v<T, half> ? Bits(0x7c00u)
                                                         : Bits(0x7f80u);
  static constexpr accum_type kNanKey =
      kIsMax ? std::numeric_limits<accum_type>::max() : std::numeric_limits<accum_type>::min();

  struct Combine {
    __device__ __forceinline__ accum_type operator()(accum_type a, accum_type b) const {
      if constexpr (kIsMax) return a > b ? a : b;
      else return a < b ? a : b;
    }
  };
  Combine combine{};

  __device__ __forceinline__ accum_type identity() const {
    return kIsMax ? std::numeric_limits<accum_type>::min() : std::numeric_limits<accum_type>::max();
  }
  __device__ __forceinline__ accum_type from_element(T v, std::int64_t) const {
    Bits u;
    memcpy(&u, &v, sizeof(T));
    const auto s = static_cast<Signed>(u);
    const auto key = static_cast<Signed>(s ^ static_cast<Signed>((s >> (kWidth - 1)) & static_cast<Signed>(kAbs)));
    return Bits(u & kAbs) > kExp ? kNanKey : static_cast<accum_type>(key);
  }
  __device__ __forceinline__ result_type finalize(accum_type k, std::int64_t, const T*) const {
    Bits u;
    if (k == kNanKey) {
      u = Bits(kExp | ((kExp >> 1) & Bits(~kExp)));  // exponent all ones, top mantissa bit: quiet NaN
    } else {
      const auto s = static_cast<Signed>(k);
      u = static_cast<Bits>(s ^ static_cast<Signed>((s >> (kWidth - 1)) & static_cast<Signed>(kAbs)));
    }
    T out;
    memcpy(&out, &u, sizeof(T));
    return out;
  }
};

// min/max of float with nan_min_max: one FMNMX.NAN per element, as the f32 sum's one FADD (the
// keyed form above takes six integer instructions per element, which made max f32 0.15-0.85 us
// slower than sum f32 at 2^12-2^20).
template <ReduceOp Op>
struct NanMinMaxF32Spec {
  static_assert(Op == ReduceOp::min || Op == ReduceOp::max);
  using input_type = float;
  using accum_type = float;
  using result_type = float;
  static constexpr bool kIsMax = Op == ReduceOp::max;

  struct Combine {
    __device__ __forceinline__ float operator()(float a, float b) const { return nan_min_max<kIsMax>(a, b); }
  };
  Combine combine{};

  __device__ __forceinline__ float identity() const {
    return kIsMax ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  __device__ __forceinline__ float from_element(float v, std::int64_t) const { return v; }
  __device__ __forceinline__ float finalize(float a, std::int64_t, const float*) const { return a; }
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
