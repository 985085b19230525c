// What one chunk of a CPU reduction does. Internal to src/cpu.
//
// Every kernel keeps L independent lane accumulators (lane l sees elements l, l+L, l+2L, ...),
// updated by a loop simple enough for the compiler to vectorise without -ffast-math; then the
// lanes are combined in a fixed order, then the chunk's tail (len % L elements) is folded in.
// L depends only on the types, so a chunk's result depends only on its contents.
// `#pragma omp simd` on the lane loops only tells the compiler the lanes are independent (they
// are); it licenses no reassociation within a lane.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/narrow_float_sse.hpp"
#include "foldkit/dtype.hpp"
#include "foldkit/ops.hpp"
#include "foldkit/reduce.hpp"

namespace foldkit::cpu::detail {

// 64 bytes of lane state (16 lanes of 4 bytes, 8 of 8, 32 of 2): four SSE registers or two AVX
// ones, enough independent add chains to hide the FP add latency on one core.
template <class A> inline constexpr int kLanes = static_cast<int>(64 / sizeof(A));

template <class To, class From> inline To bits_as(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}

// half -> float without branches or loops (half::to_float normalises subnormals in a loop, which
// blocks vectorisation). Gives bit-identical results to half::to_float for all 65536 inputs:
// normals and inf/NaN are a rebias of the exponent field; subnormals are mant * 2^-24 computed
// from an exact int->float conversion, so no float denormal is ever touched (DAZ-safe).
inline float widen_half(std::uint16_t h) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
  const std::uint32_t em = static_cast<std::uint32_t>(h) & 0x7fffu;
  const std::uint32_t rebias = em >= 0x7c00u ? 0x70000000u : 0x38000000u;  // +224 or +112 exponent
  const std::uint32_t normal = (em << 13) + rebias;
  const float sub = static_cast<float>(static_cast<std::int32_t>(em)) * 0x1p-24f;
  // A mask, not ?:, so the compiler does not turn the select into a branch.
  const std::uint32_t is_sub = 0u - static_cast<std::uint32_t>(em < 0x400u);
  const std::uint32_t mag = (bits_as<std::uint32_t>(sub) & is_sub) | (normal & ~is_sub);
  return bits_as<float>(mag | sign);
}

// An element as the arithmetic type it is compared/accumulated in.
template <class T> inline auto widen(T v) {
  if constexpr (std::is_same_v<T, half>) return widen_half(v.bits);
  else if constexpr (std::is_same_v<T, bfloat16>) return bits_as<float>(static_cast<std::uint32_t>(v.bits) << 16);
  else return v;
}

// sum / prod / mean: lanes of the combine functor itself. Converter: the 16-bit conversions
// (narrow_float_sse.hpp); void, the ones this CPU runs best (tests name each).
template <ReduceOp Op, class T, class Converter = void>
reduce_accum_t<Op, T> reduce_chunk_fold(const T* in, std::int64_t len) {
  using Tr = reduce_traits<Op, T>;
  using A = typename Tr::accum_type;
  constexpr int L = kLanes<A>;
  const typename Tr::combine_type f{};
  auto elem = [](T v) -> A {
    if constexpr (is_16bit_float_v<T>) return static_cast<A>(widen(v));
    else return Tr::from_element(v, 0);
  };
  A lane[L];
  for (int l = 0; l < L; ++l) lane[l] = Tr::identity();
  std::int64_t i = 0;
#if defined(__SSE4_1__)
  if constexpr (is_16bit_float_v<T> && L == 16) {
    // The same 16 lanes in four SSE registers, the elements widened 8 at a time
    // (narrow_float_sse.hpp): the compiler did not vectorise widen_half's loop (f16: 0.39 ns an
    // element on a Zen core, against 0.05 for f32). The same combines in the same lanes, so the
    // same bits. Half widens by F16C where the CPU has it: it quiets signaling NaNs, which the
    // combines (every lane starts at the identity) quiet anyway, so the bits are the same.
    using F = typename Tr::combine_type;
    static_assert(std::is_same_v<F, op::Sum<float>> || std::is_same_v<F, op::Prod<float>>);
    auto combine = [](__m128 a, __m128 b) {
      if constexpr (std::is_same_v<F, op::Prod<float>>) return _mm_mul_ps(a, b);
      else return _mm_add_ps(a, b);
    };
    auto fold_lanes = [&](auto converter) {
      using N = typename decltype(converter)::type;
      __m128 v[4];
      for (auto& x : v) x = _mm_set1_ps(Tr::identity());
      for (; i + L <= len; i += L) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 8));
        v[0] = combine(v[0], N::low(a));
        v[1] = combine(v[1], N::high(a));
        v[2] = combine(v[2], N::low(b));
        v[3] = combine(v[3], N::high(b));
      }
      for (int q = 0; q < 4; ++q) _mm_storeu_ps(lane + 4 * q, v[q]);
    };
    if constexpr (std::is_void_v<Converter>) with_narrow_converter<T>(fold_lanes);
    else fold_lanes(ConverterTag<Converter>{});
  }
#endif
  for (; i + L <= len; i += L)
    for (int l = 0; l < L; ++l) lane[l] = f(lane[l], elem(in[i + l]));
  A acc = lane[0];
  for (int l = 1; l < L; ++l) acc = f(acc, lane[l]);
  for (; i < len; ++i) acc = f(acc, elem(in[i]));
  return acc;
}

// Order keys. Float compare-selects do not auto-vectorise (GCC will not treat a float min as a
// reduction without -ffinite-math-only), so min/max/argmin/argmax compare integer keys, whose
// signed order is the value order: non-negative floats keep their bits, negative ones flip the
// magnitude bits. NaN (any payload) maps to the extreme the op must pick, so one integer
// compare also implements "NaN wins". Integers are their own keys.
template <class T> struct OrderKey {
  using K = T;
  static K ordered(const T* p) { return *p; }
  static K merged(const T* p) { return *p; }
  static bool is_nan(const T*) { return false; }
};
template <class T, class U, U kInfBits> struct FloatOrderKey {
  using K = std::make_signed_t<U>;
  static constexpr K kMag = std::numeric_limits<K>::max();
  static K raw(const T* p) { return static_cast<K>(bits_as_of(p)); }
  static U bits_as_of(const T* p) {
    U u;
    std::memcpy(&u, p, sizeof u);
    return u;
  }
  static bool is_nan(const T* p) { return (raw(p) & kMag) > static_cast<K>(kInfBits); }
  // Bijective on bit patterns (-0 sorts below +0); its own inverse. For min/max, whose result
  // is rebuilt from the key.
  static K ordered(const T* p) {
    const K b = raw(p);
    return static_cast<K>(b ^ (static_cast<K>(b >> (sizeof(K) * 8 - 1)) & kMag));
  }
  static T from_ordered(K k) {
    const K b = static_cast<K>(k ^ (static_cast<K>(k >> (sizeof(K) * 8 - 1)) & kMag));
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  }
  // -0 and +0 share a key (they compare equal, so argmin/argmax must treat them as a tie).
  static K merged(const T* p) {
    const K b = raw(p);
    const K s = static_cast<K>(b >> (sizeof(K) * 8 - 1));
    const K mag = static_cast<K>(b & kMag);
    return static_cast<K>((mag ^ s) - s);
  }
};
template <> struct OrderKey<float> : FloatOrderKey<float, std::uint32_t, 0x7f800000u> {};
template <> struct OrderKey<double> : FloatOrderKey<double, std::uint64_t, 0x7ff0000000000000u> {};
template <> struct OrderKey<half> : FloatOrderKey<half, std::uint16_t, 0x7c00u> {};
template <> struct OrderKey<bfloat16> : FloatOrderKey<bfloat16, std::uint16_t, 0x7f80u> {};

// The key an op compares: NaN becomes the extreme in the op's direction (for floats, whose
// real keys never reach the integer limits).
template <class K, bool kMax> inline constexpr K kNanKey =
    kMax ? std::numeric_limits<K>::max() : std::numeric_limits<K>::lowest();

template <class T, bool kMax, bool kMerged>
inline typename OrderKey<T>::K op_key(const T* p) {
  using KT = OrderKey<T>;
  const auto k = kMerged ? KT::merged(p) : KT::ordered(p);
  if constexpr (is_floating_v<T>) return KT::is_nan(p) ? kNanKey<decltype(k), kMax> : k;
  else return k;
}

// min / max: lanes hold the best key; if it is the NaN key the chunk's result is its first NaN
// (what folding the functor left to right gives), found by a rescan (NaN is rare).
template <ReduceOp Op, class T>
reduce_accum_t<Op, T> reduce_chunk_minmax(const T* in, std::int64_t len) {
  using KT = OrderKey<T>;
  using K = typename KT::K;
  using C = reduce_accum_t<Op, T>;  // the compare type
  constexpr bool kMax = Op == ReduceOp::max;
  constexpr int L = kLanes<K>;
  const auto better = [](K a, K b) { return kMax ? a > b : a < b; };
  K lane[L];
  for (int l = 0; l < L; ++l) lane[l] = kMax ? std::numeric_limits<K>::lowest() : std::numeric_limits<K>::max();
  std::int64_t i = 0;
  for (; i + L <= len; i += L) {
#pragma omp simd
    for (int l = 0; l < L; ++l) {
      const K k = op_key<T, kMax, false>(in + i + l);
      lane[l] = better(k, lane[l]) ? k : lane[l];
    }
  }
  K best = lane[0];
  for (int l = 1; l < L; ++l) best = better(lane[l], best) ? lane[l] : best;
  for (; i < len; ++i) {
    const K k = op_key<T, kMax, false>(in + i);
    best = better(k, best) ? k : best;
  }
  if constexpr (is_floating_v<T>) {
    if (best == kNanKey<K, kMax>) {
      for (std::int64_t j = 0; j < len; ++j)
        if (KT::is_nan(in + j)) return static_cast<C>(widen(in[j]));
    }
    return static_cast<C>(widen(KT::from_ordered(best)));
  } else {
    return static_cast<C>(best);
  }
}

// argmin / argmax: lanes hold (key, chunk-relative index), the index as wide as the key so both
// vectorise at one width. Within a lane a later element wins only if strictly better, which
// keeps the first index on ties and the first NaN. Lanes start from the chunk's first L
// elements (identity()'s sentinel index must never survive). (key, index) is a total order,
// so the lane winner is well defined; the tail is folded with the functor itself.
template <ReduceOp Op, class T>
reduce_accum_t<Op, T> reduce_chunk_arg(const T* in, std::int64_t len, std::int64_t base) {
  using Tr = reduce_traits<Op, T>;
  using R = typename Tr::accum_type;  // ArgResult<compare type>
  using K = typename OrderKey<T>::K;
  using I = std::make_unsigned_t<K>;
  constexpr bool kMax = Op == ReduceOp::argmax;
  constexpr int L = kLanes<K>;
  static_assert(kReduceChunk - 1 <= std::numeric_limits<std::uint16_t>::max(), "chunk index fits in I");
  const typename Tr::combine_type f{};
  R acc = Tr::identity();
  std::int64_t i = 0;
  if (len >= L) {
    K key[L];
    I idx[L];
    for (int l = 0; l < L; ++l) { key[l] = op_key<T, kMax, true>(in + l); idx[l] = static_cast<I>(l); }
    for (i = L; i + L <= len; i += L) {
#pragma omp simd
      for (int l = 0; l < L; ++l) {
        const K k = op_key<T, kMax, true>(in + i + l);
        const bool take = kMax ? k > key[l] : k < key[l];
        key[l] = take ? k : key[l];
        idx[l] = take ? static_cast<I>(i + l) : idx[l];
      }
    }
    int w = 0;
    for (int l = 1; l < L; ++l) {
      const bool better = kMax ? key[l] > key[w] : key[l] < key[w];
      if (better || (key[l] == key[w] && idx[l] < idx[w])) w = l;
    }
    acc = R{widen(in[idx[w]]), base + static_cast<std::int64_t>(idx[w])};
  }
  for (; i < len; ++i) acc = f(acc, R{widen(in[i]), base + i});
  return acc;
}

// One chunk: in[0, len) are the elements at global indices [base, base + len).
template <ReduceOp Op, class T>
reduce_accum_t<Op, T> reduce_chunk(const T* in, std::int64_t len, std::int64_t base) {
  if constexpr (Op == ReduceOp::argmin || Op == ReduceOp::argmax) {
    return reduce_chunk_arg<Op, T>(in, len, base);
  } else if constexpr (Op == ReduceOp::min || Op == ReduceOp::max) {
    (void)base;
    return reduce_chunk_minmax<Op, T>(in, len);
  } else {
    (void)base;
    return reduce_chunk_fold<Op, T>(in, len);
  }
}

}  // namespace foldkit::cpu::detail
