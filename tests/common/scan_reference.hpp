// Independent references for prefix scans (foldkit/scan.hpp), computed without any foldkit code
// path, and the checks that compare a backend's output with them. Backend-independent.
//
//   integer sum/prod: 64-bit unsigned arithmetic on the sign- or zero-extended elements, which is
//     exactly the documented "widen to 64 bits, wrap mod 2^64";
//   float sum/prod:   long double running values: exact for the tests' integer-valued data (so
//     the expected output is that exact value rounded once to the output type), and with the
//     per-element error scale for real-valued data (scan_tolerance below);
//   min/max:          the element itself, chosen by the documented rules written out again here:
//     NaN wins from its position on (the first NaN's bits), among equal values -0 < +0.
// Segments are given as offsets (num_segments + 1 entries); a whole-array scan is {0, n}, a
// blocked one {0, L, 2L, ..., n}. Inclusive segments start empty, exclusive ones at init.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "foldkit/ops.hpp"
#include "support/random_arrays.hpp"
#include "support/reference.hpp"
#include "support/result_checks.hpp"

namespace foldkit::test {

// The scan output table of foldkit/scan.hpp, written out again: integer sums and products widen
// to 64 bits of the same signedness; everything else keeps the input type.
template <ReduceOp Op, class T>
using expected_scan_t = std::conditional_t<(Op == ReduceOp::sum || Op == ReduceOp::prod) && std::is_integral_v<T>,
                                           int_result_t<T>, T>;

inline std::vector<std::int64_t> whole_offsets(std::int64_t n) { return {0, n}; }
inline std::vector<std::int64_t> block_offsets(std::int64_t n, std::int64_t block_length) {
  std::vector<std::int64_t> off;
  for (std::int64_t b = 0; b < n; b += block_length) off.push_back(b);
  off.push_back(n);
  return off;
}

// Visits every element in segment order: emit(i, state) with the state after element i
// (inclusive) or before it (exclusive). start() is a segment's first state, step(state, x) adds
// an element.
template <class T, class State, class Start, class Step, class Emit>
void walk_scan(const T* in, const std::vector<std::int64_t>& offsets, bool inclusive, Start start, Step step,
               Emit emit) {
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    State st = start();
    for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i) {
      if (inclusive) {
        st = step(st, in[i]);
        emit(i, st);
      } else {
        emit(i, st);
        st = step(st, in[i]);
      }
    }
  }
}

// A user operator's scan (the *_scan_custom forms): each segment starts at `seed` (the
// identity for inclusive scans, init for exclusive ones) and folds op left to right.
template <class T, class F>
std::vector<T> ref_custom_scan(const std::vector<T>& in, const std::vector<std::int64_t>& offsets, F op, T seed,
                               bool inclusive) {
  std::vector<T> out(in.size());
  walk_scan<T, T>(
      in.data(), offsets, inclusive, [&] { return seed; }, [&](T st, T x) { return op(st, x); },
      [&](std::int64_t i, T st) { out[static_cast<std::size_t>(i)] = st; });
  return out;
}

template <class T> bool ref_signbit(T v) { return std::signbit(to_ld(v)); }

// min/max of two values by the documented rules (a came first).
template <bool kMax, class T> T ref_extreme_of(T a, T b) {
  if (is_nan_value(a)) return a;
  if (is_nan_value(b)) return b;
  const long double x = to_ld(a), y = to_ld(b);
  if (x != y) return (kMax ? y > x : y < x) ? b : a;
  if (ref_signbit(a) == ref_signbit(b)) return a;  // the same value, the same bits
  return (ref_signbit(a) == !kMax) ? a : b;         // max: the +0; min: the -0
}

// A value in R from the exact running value (one rounding; 16-bit outputs via float, as the
// accumulator is float and holds the tests' exact values exactly).
template <class R> R round_to(long double v) {
  if constexpr (is_16bit_float_v<R>) return R(static_cast<float>(v));
  else return static_cast<R>(v);
}

// The expected outputs, for data on which every backend must be exact: integers, min/max, and
// float sums/products of integer-valued data (make_exact_sum_data, make_exact_prod_data).
template <ReduceOp Op, class T>
std::vector<expected_scan_t<Op, T>> ref_scan_exact(const T* in, const std::vector<std::int64_t>& offsets,
                                                   bool inclusive, expected_scan_t<Op, T> init) {
  using R = expected_scan_t<Op, T>;
  std::vector<R> out(static_cast<std::size_t>(offsets.back()));
  const auto emit_to = [&](auto convert) { return [&out, convert](std::int64_t i, const auto& st) { out[static_cast<std::size_t>(i)] = convert(st); }; };
  if constexpr (Op == ReduceOp::min || Op == ReduceOp::max) {
    struct St { bool has; T v; };
    walk_scan<T, St>(
        in, offsets, inclusive, [&] { return St{!inclusive, init}; },
        [](St st, T x) { return St{true, st.has ? ref_extreme_of<Op == ReduceOp::max>(st.v, x) : x}; },
        emit_to([](const St& st) { return st.v; }));
  } else if constexpr (std::is_integral_v<T>) {
    constexpr bool kSum = Op == ReduceOp::sum;
    const std::uint64_t seed = inclusive ? (kSum ? 0u : 1u) : static_cast<std::uint64_t>(init);
    walk_scan<T, std::uint64_t>(
        in, offsets, inclusive, [&] { return seed; },
        [](std::uint64_t st, T x) { return kSum ? st + as_u64(x) : st * as_u64(x); },
        emit_to([](std::uint64_t st) { return static_cast<R>(st); }));
  } else {
    constexpr bool kSum = Op == ReduceOp::sum;
    // -0 and 1 are exact identities of long double addition and multiplication.
    const long double seed = inclusive ? (kSum ? -0.0L : 1.0L) : to_ld(init);
    walk_scan<T, long double>(
        in, offsets, inclusive, [&] { return seed; },
        [](long double st, T x) { return kSum ? st + to_ld(x) : st * to_ld(x); },
        emit_to([](long double st) { return round_to<R>(st); }));
  }
  return out;
}

// ---- real-valued float data ------------------------------------------------------------------
//
// Error bound. A chunked (or tiled) scan computes element i as carry (+) (local scan within its
// chunk), the carry being the left-to-right fold of the totals of the chunks before it. So each
// summand of element i goes through at most (chunk length) roundings inside its chunk's total or
// the local scan, plus one per chunk in the carry fold: about 2 * chunk + i / chunk steps,
// instead of the i steps of a serial scan, and never more than i. We allow any chunk between
// 2^8 and 2^16 elements (CPU backend: 2^14; CUDA tiles: 2^11 to 2^12), so a prefix of k terms
// has depth m(k) = min(k, 2^17 + k / 2^8 + 1). As in reference.hpp we use the probabilistic
// bound of Higham & Mary (2019): |error| <= lambda * sqrt(m) * u * sum |terms|, lambda = 10, u
// the accumulator's unit roundoff; the worst-case m * u bound would accept almost anything.
// Products are different: every multiplication's rounding scales the whole product, whatever the
// order, so a product of k terms has k - 1 roundings: |error| <= lambda * sqrt(k) * u * |exact|.
// Once a product is subnormal a rounding is no longer relative: it is at most half the smallest
// subnormal, u * (smallest normal) (Higham's model with gradual underflow), so the scale is
// max(|exact|, smallest normal). A random product of millions of terms does drift there; the
// bound on normal values is unchanged.
// A 16-bit output adds one rounding to the output type (a rigorous bound): relative 2^-11 (half)
// or 2^-8 (bf16), plus half of half's smallest subnormal.
struct RealScanRef {
  long double exact;   // the running value, in long double
  long double scale;   // sum |terms| (sum) or |exact| (prod): the error scale
  std::int64_t terms;  // terms folded so far, init included
  bool product;
};

inline long double scan_depth(std::int64_t terms) {
  const std::int64_t chunked = (std::int64_t{1} << 17) + terms / 256 + 1;
  return static_cast<long double>(terms < chunked ? terms : chunked);
}

template <class R> long double scan_tolerance(const RealScanRef& r) {
  using Acc = std::conditional_t<std::is_same_v<R, double>, double, float>;
  const std::int64_t k = r.terms > 0 ? r.terms : 1;
  const long double steps = r.product ? static_cast<long double>(k) : scan_depth(k);
  const long double scale =
      r.product ? std::max(r.scale, static_cast<long double>(std::numeric_limits<Acc>::min())) : r.scale;
  const long double acc = kLambda * std::sqrt(steps) * unit_roundoff<Acc>() * scale;
  if constexpr (std::is_same_v<R, half>) return acc + 0x1p-11L * (std::fabs(r.exact) + acc) + 0x1p-25L;
  else if constexpr (std::is_same_v<R, bfloat16>) return acc + 0x1p-8L * (std::fabs(r.exact) + acc);
  else return acc;
}

template <ReduceOp Op, class T>
std::vector<RealScanRef> ref_scan_real(const T* in, const std::vector<std::int64_t>& offsets, bool inclusive, T init) {
  static_assert(is_floating_v<T> && (Op == ReduceOp::sum || Op == ReduceOp::prod));
  constexpr bool kSum = Op == ReduceOp::sum;
  std::vector<RealScanRef> out(static_cast<std::size_t>(offsets.back()));
  const RealScanRef seed = inclusive ? RealScanRef{kSum ? -0.0L : 1.0L, 0.0L, 0, !kSum}
                                     : RealScanRef{to_ld(init), std::fabs(to_ld(init)), 1, !kSum};
  walk_scan<T, RealScanRef>(
      in, offsets, inclusive, [&] { return seed; },
      [](RealScanRef st, T x) {
        const long double v = to_ld(x);
        if (kSum) return RealScanRef{st.exact + v, st.scale + std::fabs(v), st.terms + 1, false};
        const long double p = st.exact * v;
        return RealScanRef{p, std::fabs(p), st.terms + 1, true};
      },
      [&](std::int64_t i, const RealScanRef& st) { out[static_cast<std::size_t>(i)] = st; });
  return out;
}

// ---- checks ----------------------------------------------------------------------------------

// The value an output is filled with before a call: a NaN with every payload bit set for floats
// (no arithmetic produces it), 0xA5 bytes for integers.
template <class R> R scan_poison() {
  R r;
  std::memset(&r, is_floating_v<R> ? 0xFF : 0xA5, sizeof r);
  return r;
}

// The elements of a TestArray outside [0, n) all still hold `guard` (bitwise).
template <class V> ::testing::AssertionResult guards_intact(const TestArray<V>& a, const V& guard) {
  for (std::size_t k = 0; k < a.storage.size(); ++k) {
    const std::int64_t i = static_cast<std::int64_t>(k) - a.offset;
    if (i >= 0 && i < a.n) continue;
    if (!same_bits(a.storage[k], guard))
      return ::testing::AssertionFailure() << "guard element at index " << i << " of " << a.describe()
                                           << " was overwritten: " << show(a.storage[k]);
  }
  return ::testing::AssertionSuccess();
}

// Output [0, n) bitwise equal to want; reports the first mismatches and how many there are.
template <class V>
::testing::AssertionResult outputs_equal(const TestArray<V>& got, const std::vector<V>& want) {
  std::int64_t bad = 0;
  std::ostringstream first;
  for (std::int64_t i = 0; i < got.n; ++i) {
    if (same_bits(got[i], want[static_cast<std::size_t>(i)])) continue;
    if (bad++ < 3) first << "\n  out[" << i << "] = " << show(got[i]) << ", want " << show(want[static_cast<std::size_t>(i)]);
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.n << " outputs differ (" << got.describe() << "):"
                                       << first.str();
}

template <class V>
::testing::AssertionResult outputs_within(const TestArray<V>& got, const std::vector<RealScanRef>& want) {
  std::int64_t bad = 0;
  std::ostringstream first;
  first.precision(21);
  for (std::int64_t i = 0; i < got.n; ++i) {
    const RealScanRef& w = want[static_cast<std::size_t>(i)];
    const long double tol = scan_tolerance<V>(w);
    const long double g = to_ld(got[i]);
    if (std::fabs(g - w.exact) <= tol) continue;  // false for NaN
    if (bad++ < 3)
      first << "\n  out[" << i << "] = " << show(got[i]) << ", want " << w.exact << " +- " << tol << " (off by "
            << (g - w.exact) << ")";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.n << " outputs out of bounds (" << got.describe()
                                       << "):" << first.str();
}

}  // namespace foldkit::test
