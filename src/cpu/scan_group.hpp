// The vectorised rescan of head-free chunks of floating-point sums and products (CPU scans).
// Internal to src/cpu; scan_chunk.hpp decides which chunks come here.
//
// Why: a rescan is one chain of dependent combines. Run one element at a time it costs a load, a
// combine, a store into a line buffer and the line's copy out: about 1.5 cycles an element even
// with four chunks side by side, which bounded the f32 scan on few cores (a 2-core machine
// spent more time rescanning than reading: 73 % of its copy ceiling at 2^26). In 16-byte groups
// (4 floats, 2 doubles) the chain advances a whole group per combine, and each group leaves as
// one 16-byte store: 92-93 % there. Half and bfloat16 accumulate in float: groups of 4, two to a
// 16-byte vector, converted with SSE4.1 (narrow_float_sse.hpp) instead of one value at a time in
// software (f16 2^24 on 2 threads: 90-117 ms -> 12-16 ms).
//
// What it computes: a head-free chunk is cut into groups of W elements (W = 16 / sizeof(A), A the
// accumulator) from the chunk's first element (chunks start at multiples of kScanChunk, so the
// groups do not depend on pointers or thread counts). Within a group, with id the combine's identity and f the
// combine, a Hillis-Steele scan:
//   s0 = x;  s_d[j] = f(s[j], s[j-d]) for d = 1, 2, ... < W  (s[j-d] = id when j < d)
//   inclusive out[j] = f(carry, s[j]);  exclusive out[j] = f(carry, s[j-1])  (s[-1] = id)
//   carry' = f(carry, s[W-1]) (the inclusive output of the last lane)
// For floats: s1[j] = f(x[j], x[j-1]), s2[j] = f(s1[j], s1[j-2]). A last partial group of r
// elements is computed as if padded with id, and its carry out is lane r - 1's inclusive
// output. f(x, id) == x for every x (id is -0 for sums and 1 for products), so the padding
// changes no bit; signed zeros and NaN positions come out as in a serial scan, while rounding
// differs (fewer roundings per element: an element passes through about chunk / W + log2(W) + 1
// of them from its chunk's carry).
// Every path that rescans a head-free chunk of these types goes through group_scan (the SSE
// code, or group_scan_scalar, the same operations, where SSSE3 is missing), so a chunk's outputs
// are the same bits whichever thread or kernel scans it. The two codes agree bit for bit
// (cpu_scan_group_test.cpp) except in NaN payloads, where two different NaNs meet.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSSE3__)
#include <tmmintrin.h>  // _mm_alignr_epi8 (SSSE3; x86-64-v2 has it), SSE and SSE2 below it
#endif

#include "cpu/narrow_float_sse.hpp"
#include "foldkit/dtype.hpp"
#include "foldkit/ops.hpp"

#if defined(__GNUC__)
#define FOLDKIT_GROUP_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define FOLDKIT_GROUP_ALWAYS_INLINE inline
#endif

namespace foldkit::cpu::detail {

// The scans that take this path: sums and products of float and double (accumulated in their
// type) and of half and bfloat16 (accumulated in float, each output rounded once to its type).
template <ReduceOp Op, class T>
inline constexpr bool kGroupScan =
    (std::is_same_v<T, float> || std::is_same_v<T, double> || is_16bit_float_v<T>) &&
    (Op == ReduceOp::sum || Op == ReduceOp::prod);

template <class A> inline constexpr int kGroupLanes = static_cast<int>(16 / sizeof(A));

template <ReduceOp Op, class A> constexpr A group_identity() { return Op == ReduceOp::sum ? -A(0) : A(1); }
template <ReduceOp Op, class A> inline A group_combine(A a, A b) { return Op == ReduceOp::sum ? a + b : a * b; }

// An accumulator value as an output element.
template <class T, class A> inline T group_out(A a) {
  if constexpr (is_16bit_float_v<T>) return T(a);  // round to nearest even
  else return a;
}

// group_scan's operations one lane at a time: what group_scan runs where SSSE3 (SSE4.1 for the
// 16-bit types) is missing, and what the tests hold the vector code to, bit for bit. T: the
// elements; A: the accumulator (T, or float for 16-bit T).
template <ReduceOp Op, bool kInclusive, int K, class T, class A>
void group_scan_scalar(const T* in, T* out, std::int64_t b, std::int64_t stride, std::int64_t len, A* acc) {
  constexpr int W = kGroupLanes<A>;
  const A id = group_identity<Op, A>();
  for (int k = 0; k < K; ++k) {
    const std::int64_t at = b + k * stride;
    for (std::int64_t g = 0; g < len; g += W) {
      A s[W], next[W];
      for (int j = 0; j < W; ++j) s[j] = g + j < len ? static_cast<A>(in[at + g + j]) : id;
      for (int d = 1; d < W; d *= 2) {
        for (int j = 0; j < W; ++j) next[j] = group_combine<Op>(s[j], j >= d ? s[j - d] : id);
        for (int j = 0; j < W; ++j) s[j] = next[j];
      }
      const A carry = acc[k];
      int j = 0;
      for (; j < W && g + j < len; ++j)
        out[at + g + j] =
            group_out<T>(kInclusive ? group_combine<Op>(carry, s[j]) : group_combine<Op>(carry, j >= 1 ? s[j - 1] : id));
      acc[k] = group_combine<Op>(carry, s[j - 1]);
    }
  }
}

#if defined(__SSSE3__)

// One 16-byte group in a register, per element type.
template <ReduceOp Op, class A> struct GroupVec;

template <ReduceOp Op> struct GroupVec<Op, float> {
  using V = __m128;
  static V splat(float x) { return _mm_set1_ps(x); }
  static V load(const float* p) { return _mm_loadu_ps(p); }
  static void store(float* p, V v) { _mm_storeu_ps(p, v); }
  static void stream(float* p, V v) { _mm_stream_ps(p, v); }
  static float first(V v) { return _mm_cvtss_f32(v); }
  static V f(V a, V b) { return Op == ReduceOp::sum ? _mm_add_ps(a, b) : _mm_mul_ps(a, b); }
  // v shifted up by `lanes` (id shifted in): [id, v0, v1, v2] and [id, id, v0, v1].
  template <int lanes> static V up(V v, V id) {
    return _mm_castsi128_ps(_mm_alignr_epi8(_mm_castps_si128(v), _mm_castps_si128(id), 16 - 4 * lanes));
  }
  static V last(V v) { return _mm_shuffle_ps(v, v, _MM_SHUFFLE(3, 3, 3, 3)); }
  // lo's last m lanes, then hi's first 4 - m: the 16 bytes that straddle them.
  template <int m> static V join(V lo, V hi) {
    return _mm_castsi128_ps(_mm_alignr_epi8(_mm_castps_si128(hi), _mm_castps_si128(lo), 16 - 4 * m));
  }
  static V scan(V x, V id) {  // s2 above
    const V s1 = f(x, up<1>(x, id));
    return f(s1, up<2>(s1, id));
  }
};

template <ReduceOp Op> struct GroupVec<Op, double> {
  using V = __m128d;
  static V splat(double x) { return _mm_set1_pd(x); }
  static V load(const double* p) { return _mm_loadu_pd(p); }
  static void store(double* p, V v) { _mm_storeu_pd(p, v); }
  static void stream(double* p, V v) { _mm_stream_pd(p, v); }
  static double first(V v) { return _mm_cvtsd_f64(v); }
  static V f(V a, V b) { return Op == ReduceOp::sum ? _mm_add_pd(a, b) : _mm_mul_pd(a, b); }
  template <int lanes> static V up(V v, V id) {
    static_assert(lanes == 1);
    return _mm_unpacklo_pd(id, v);  // [id, v0]
  }
  static V last(V v) { return _mm_unpackhi_pd(v, v); }
  template <int m> static V join(V lo, V hi) {
    static_assert(m == 1);
    return _mm_shuffle_pd(lo, hi, 1);  // [lo1, hi0]
  }
  static V scan(V x, V id) { return f(x, up<1>(x, id)); }  // s1
};

// One group from carry (every lane equal): returns the group's outputs and moves carry past it
// (to the last lane of the inclusive outputs).
template <ReduceOp Op, class A, bool kInclusive>
inline typename GroupVec<Op, A>::V group_step(typename GroupVec<Op, A>::V& carry, typename GroupVec<Op, A>::V x,
                                              typename GroupVec<Op, A>::V id) {
  using G = GroupVec<Op, A>;
  const auto s = G::scan(x, id);
  const auto inclusive = G::f(carry, s);
  const auto result = kInclusive ? inclusive : G::f(carry, G::template up<1>(s, id));
  carry = G::last(inclusive);
  return result;
}

// Streams 16-byte vectors [0, count) of K chunks: next(k, v) makes vector v of chunk k (called in
// order of v for each chunk), at(k, v) is its address (16-byte aligned; the chunks share their
// alignment). Streaming stores only go out as whole cache lines, each line's four stores back to
// back:
// - interleaved with the chains' work they ran at 0.55 ns an element on one core (a Zen core,
//   2^26 f32); back to back, 0.22 ns;
// - lines that straddle two cache lines ran 2.7x slower on the 16-core Xeon host (16 bytes past a
//   line boundary is what malloc returns for large blocks);
// so the vectors before the first line boundary and after the last whole line take plain stores.
// 4K aliasing: a load whose address matches an older store's in bits 0-11 waits for it. A line's
// stores go `delta` bytes (mod 4 KiB) past the inputs that complete it; with delta in (0, 64]
// they meet the next line's loads, which then stalled (2.2x slower on a Zen core with the output
// 16-64 bytes past the input, malloc's offsets). There the next line is made before this one is
// stored (spilling some registers: 1.3x slower than the plain order where nothing aliases).
// delta in (64, 128) is left slow (1.7-2.1x).
// Always inlined: called out of line, its callers' carries (captured by `next`) lived in memory
// and the f32 rescan ran 2x slower (0.50 against 0.22 ns an element).
template <int K, class V, class Next, class At, class Store, class Stream>
FOLDKIT_GROUP_ALWAYS_INLINE void stream_vectors(std::int64_t count, std::int64_t delta, Next&& next, At&& at, Store&& store, Stream&& stream) {
  const auto line_offset = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(at(0, 0)) % 64);
  const std::int64_t lead = std::min(count, (64 - line_offset) % 64 / 16);
  std::int64_t v = 0;
  for (; v < lead; ++v)
    for (int k = 0; k < K; ++k) store(at(k, v), next(k, v));
  auto make_line = [&](std::int64_t first, V(&line)[K][4]) {
    for (int q = 0; q < 4; ++q)
      for (int k = 0; k < K; ++k) line[k][q] = next(k, first + q);
  };
  auto stream_line = [&](std::int64_t first, V(&line)[K][4]) {
    for (int k = 0; k < K; ++k)
      for (int q = 0; q < 4; ++q) stream(at(k, first + q), line[k][q]);
  };
  if (delta > 0 && delta <= 64 && v + 4 <= count) {
    V line[K][4], ahead[K][4];
    make_line(v, line);
    for (; v + 8 <= count; v += 4) {
      make_line(v + 4, ahead);
      stream_line(v, line);
      for (int k = 0; k < K; ++k)
        for (int q = 0; q < 4; ++q) line[k][q] = ahead[k][q];
    }
    stream_line(v, line);
    v += 4;
  }
  for (; v + 4 <= count; v += 4) {
    V line[K][4];
    make_line(v, line);
    stream_line(v, line);
  }
  for (; v < count; ++v)
    for (int k = 0; k < K; ++k) store(at(k, v), next(k, v));
}

// Byte distance from p to q, mod 4 KiB.
inline std::int64_t page_delta(const void* p, const void* q) {
  return static_cast<std::int64_t>((reinterpret_cast<std::uintptr_t>(q) - reinterpret_cast<std::uintptr_t>(p)) % 4096);
}

// Whole chunks side by side (as group_scan below) with streaming stores, the output M elements
// past a 16-byte boundary (out + b is A-aligned). With M > 0 each aligned vector joins the end of
// one group to the start of the next, and the elements before the first and after the last
// aligned vector take plain stores.
template <ReduceOp Op, bool kInclusive, int K, int M, class A>
void group_scan_streamed(const A* in, A* out, std::int64_t b, std::int64_t stride, A* acc) {
  using G = GroupVec<Op, A>;
  using V = typename G::V;
  constexpr int W = kGroupLanes<A>;
  static_assert(M >= 0 && M < W);
  constexpr int kFirst = M > 0 ? 1 : 0;              // the group whose outputs start aligned vector 0
  constexpr std::int64_t kSkew = M > 0 ? W - M : 0;  // elements before aligned vector 0
  const V id = G::splat(group_identity<Op, A>());
  V carry[K], prev[K];
  for (int k = 0; k < K; ++k) carry[k] = G::splat(acc[k]);
  // Aligned vector v of chunk k: completed by group v + kFirst.
  auto next = [&](int k, std::int64_t v) -> V {
    const V r = group_step<Op, A, kInclusive>(carry[k], G::load(in + b + k * stride + (v + kFirst) * W), id);
    if constexpr (M == 0) {
      return r;
    } else {
      const V joined = G::template join<M>(prev[k], r);
      prev[k] = r;
      return joined;
    }
  };
  auto at = [&](int k, std::int64_t v) { return out + b + k * stride + kSkew + v * W; };
  if constexpr (M > 0) {
    for (int k = 0; k < K; ++k) {  // group 0: its first kSkew outputs
      prev[k] = group_step<Op, A, kInclusive>(carry[k], G::load(in + b + k * stride), id);
      A lanes[W];
      G::store(lanes, prev[k]);
      std::memcpy(out + b + k * stride, lanes, kSkew * sizeof(A));
    }
  }
  stream_vectors<K, V>(
      stride / W - kFirst, page_delta(in + b + kFirst * W, at(0, 0)), next, at, [](A* p, V v) { G::store(p, v); },
      [](A* p, V v) { G::stream(p, v); });
  if constexpr (M > 0) {
    for (int k = 0; k < K; ++k) {  // the last group: its last M outputs
      A lanes[W];
      G::store(lanes, prev[k]);
      std::memcpy(out + b + k * stride + stride - M, lanes + kSkew, M * sizeof(A));
    }
  }
  for (int k = 0; k < K; ++k) acc[k] = G::first(carry[k]);
}

#if defined(__SSE4_1__)
// Half and bfloat16 (narrow_float_sse.hpp): 16-byte vectors of 8 elements, each two groups of 4
// floats, converted on the way in and out. Streamed only where the output is 16-byte aligned;
// the last len % 8 elements by the scalar statement (the same operations).
// N: the conversions (NarrowFloat<T>, or HalfF16C for half where the CPU has F16C).
template <ReduceOp Op, bool kInclusive, int K, class T, class N = NarrowFloat<T>>
void group_scan_narrow(const T* in, T* out, std::int64_t b, std::int64_t stride, std::int64_t len, float* acc,
                       bool stream) {
  using G = GroupVec<Op, float>;
  constexpr std::int64_t E = 8;  // elements per vector
  const __m128 id = G::splat(group_identity<Op, float>());
  __m128 carry[K];
  for (int k = 0; k < K; ++k) carry[k] = G::splat(acc[k]);
  auto next = [&](int k, std::int64_t v) -> __m128i {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + b + k * stride + v * E));
    const __m128 lo = group_step<Op, float, kInclusive>(carry[k], N::low(x), id);
    const __m128 hi = group_step<Op, float, kInclusive>(carry[k], N::high(x), id);
    return N::pack(lo, hi);
  };
  auto at = [&](int k, std::int64_t v) { return reinterpret_cast<__m128i*>(out + b + k * stride + v * E); };
  auto store = [](__m128i* p, __m128i v) { _mm_storeu_si128(p, v); };
  const std::int64_t vectors = len / E;
  if (stream && reinterpret_cast<std::uintptr_t>(out + b) % 16 == 0) {
    stream_vectors<K, __m128i>(vectors, page_delta(in + b, out + b), next, at, store,
                               [](__m128i* p, __m128i v) { _mm_stream_si128(p, v); });
  } else {
    for (std::int64_t v = 0; v < vectors; ++v)
      for (int k = 0; k < K; ++k) store(at(k, v), next(k, v));
  }
  for (int k = 0; k < K; ++k) {
    acc[k] = _mm_cvtss_f32(carry[k]);
    if (len > vectors * E) group_scan_scalar<Op, kInclusive, 1>(in, out, b + k * stride + vectors * E, stride, len - vectors * E, acc + k);
  }
}
#endif

// K chunks side by side (their chains overlap), chunk k being [b + k * stride, + len) from
// acc[k]; acc[k] is left as the carry out of its chunk. K > 1 only for whole chunks (len ==
// stride). `stream` (whole chunks only): streaming stores where the output is A-aligned
// (group_scan_streamed); else plain stores, and the last len % W elements by the scalar
// statement (the same operations).
template <ReduceOp Op, bool kInclusive, int K, class A>
void group_scan_wide(const A* in, A* out, std::int64_t b, std::int64_t stride, std::int64_t len, A* acc, bool stream) {
  using G = GroupVec<Op, A>;
  using V = typename G::V;
  constexpr int W = kGroupLanes<A>;
  const auto address = reinterpret_cast<std::uintptr_t>(out + b);
  if (stream && len == stride && address % sizeof(A) == 0) {
    switch (address % 16 / sizeof(A)) {
      case 0: return group_scan_streamed<Op, kInclusive, K, 0>(in, out, b, stride, acc);
      case 1: return group_scan_streamed<Op, kInclusive, K, 1>(in, out, b, stride, acc);
      case 2:
        if constexpr (W > 2) return group_scan_streamed<Op, kInclusive, K, 2>(in, out, b, stride, acc);
        break;
      case 3:
        if constexpr (W > 3) return group_scan_streamed<Op, kInclusive, K, 3>(in, out, b, stride, acc);
        break;
    }
  }
  const V id = G::splat(group_identity<Op, A>());
  V carry[K];
  for (int k = 0; k < K; ++k) carry[k] = G::splat(acc[k]);
  const std::int64_t whole = len - len % W;
  for (std::int64_t g = 0; g < whole; g += W)
    for (int k = 0; k < K; ++k) {
      const std::int64_t at = b + k * stride + g;
      G::store(out + at, group_step<Op, A, kInclusive>(carry[k], G::load(in + at), id));
    }
  for (int k = 0; k < K; ++k) {
    acc[k] = G::first(carry[k]);
    if (len > whole) group_scan_scalar<Op, kInclusive, 1>(in, out, b + k * stride + whole, stride, len - whole, acc + k);
  }
}

template <ReduceOp Op, bool kInclusive, int K, class T, class A>
void group_scan(const T* in, T* out, std::int64_t b, std::int64_t stride, std::int64_t len, A* acc, bool stream) {
  if constexpr (is_16bit_float_v<T>) {
#if defined(__SSE4_1__)
    with_narrow_converter<T>([&](auto converter) {
      group_scan_narrow<Op, kInclusive, K, T, typename decltype(converter)::type>(in, out, b, stride, len, acc, stream);
    });
#else
    group_scan_scalar<Op, kInclusive, K>(in, out, b, stride, len, acc);
#endif
  } else {
    group_scan_wide<Op, kInclusive, K>(in, out, b, stride, len, acc, stream);
  }
}

#else

template <ReduceOp Op, bool kInclusive, int K, class T, class A>
void group_scan(const T* in, T* out, std::int64_t b, std::int64_t stride, std::int64_t len, A* acc, bool /*stream*/) {
  group_scan_scalar<Op, kInclusive, K>(in, out, b, stride, len, acc);
}

#endif

}  // namespace foldkit::cpu::detail
