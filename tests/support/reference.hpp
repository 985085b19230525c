// Independent reference results, computed without any foldkit code path:
//   integer sums/products: 64-bit unsigned arithmetic on the sign- or zero-extended values, which
//     is exactly the documented "exact result, wrapped mod 2^64";
//   float sums/products/means: long double (64-bit significand on x86), plus sum |x_i| for the
//     tolerance;
//   min/max/argmin/argmax: plain loops over the documented rules (NaN propagates for min/max;
//     arg ops: NaN is the extreme and the first NaN wins, otherwise the first index of the extreme).
// Large inputs are split into fixed chunks reduced in parallel and combined in index order.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "support/random_arrays.hpp"

namespace foldkit::test {

// Reduces [0, n) as chunks of 2^16: chunk(b, e) -> A, then combine(left, right) in index order.
template <class A, class Chunk, class Combine>
A chunked_reduce(std::int64_t n, A identity, Chunk chunk, Combine combine) {
  constexpr std::int64_t kChunk = 1 << 16;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<A> partial(static_cast<std::size_t>(chunks), identity);
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c)
    partial[static_cast<std::size_t>(c)] = chunk(c * kChunk, std::min(n, (c + 1) * kChunk));
  A acc = identity;
  for (const A& p : partial) acc = combine(acc, p);
  return acc;
}

// The value as a 64-bit two's complement pattern (sign-extended for signed types).
template <class T> std::uint64_t as_u64(T v) {
  if constexpr (std::is_signed_v<T>) return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  else return static_cast<std::uint64_t>(v);
}
// The 64-bit result type of an integer sum or product (i32/i64 -> i64, u32/u64 -> u64).
template <class T> using int_result_t = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;

template <class T> int_result_t<T> ref_int_sum(const TestArray<T>& a) {
  const T* d = a.data();
  const std::uint64_t s = chunked_reduce<std::uint64_t>(
      a.n, 0,
      [&](std::int64_t b, std::int64_t e) {
        std::uint64_t acc = 0;
        for (std::int64_t i = b; i < e; ++i) acc += as_u64(d[i]);
        return acc;
      },
      [](std::uint64_t x, std::uint64_t y) { return x + y; });
  return static_cast<int_result_t<T>>(s);
}

template <class T> int_result_t<T> ref_int_prod(const TestArray<T>& a) {
  const T* d = a.data();
  const std::uint64_t p = chunked_reduce<std::uint64_t>(
      a.n, 1,
      [&](std::int64_t b, std::int64_t e) {
        std::uint64_t acc = 1;
        for (std::int64_t i = b; i < e; ++i) acc *= as_u64(d[i]);
        return acc;
      },
      [](std::uint64_t x, std::uint64_t y) { return x * y; });
  return static_cast<int_result_t<T>>(p);
}

struct RealSum {
  long double sum = 0;      // sum of x_i
  long double abs_sum = 0;  // sum of |x_i|: the scale of any summation's rounding error
};
template <class T> RealSum ref_real_sum(const TestArray<T>& a) {
  const T* d = a.data();
  return chunked_reduce<RealSum>(
      a.n, RealSum{},
      [&](std::int64_t b, std::int64_t e) {
        RealSum r;
        for (std::int64_t i = b; i < e; ++i) {
          const long double x = to_ld(d[i]);
          r.sum += x;
          r.abs_sum += std::fabs(x);
        }
        return r;
      },
      [](RealSum x, RealSum y) { return RealSum{x.sum + y.sum, x.abs_sum + y.abs_sum}; });
}

template <class T> long double ref_real_prod(const TestArray<T>& a) {
  long double p = 1;
  for (std::int64_t i = 0; i < a.n; ++i) p *= to_ld(a[i]);
  return p;
}

// min/max: NaN if any element is NaN, otherwise the extreme value (compared as long double,
// which holds every dtype's values exactly).
struct ExtremeRef {
  bool nan = false;
  long double value = 0;
};
template <bool kMax, class T> ExtremeRef ref_extreme(const TestArray<T>& a) {
  ExtremeRef r{false, to_ld(a[0])};
  for (std::int64_t i = 0; i < a.n; ++i) {
    const long double x = to_ld(a[i]);
    if (x != x) return ExtremeRef{true, x};
    if (kMax ? x > r.value : x < r.value) r.value = x;
  }
  return r;
}

// argmin/argmax: the index the documented rules select.
template <bool kMax, class T> std::int64_t ref_arg_index(const TestArray<T>& a) {
  struct Best { std::int64_t index; bool nan; long double value; };
  const T* d = a.data();
  const Best none{-1, false, 0};
  const Best best = chunked_reduce<Best>(
      a.n, none,
      [&](std::int64_t b, std::int64_t e) {
        Best r = none;
        for (std::int64_t i = b; i < e; ++i) {
          const long double x = to_ld(d[i]);
          if (x != x) return Best{i, true, x};  // first NaN of the chunk wins the chunk
          if (r.index < 0 || (kMax ? x > r.value : x < r.value)) r = Best{i, false, x};  // strict: first of ties
        }
        return r;
      },
      [](const Best& left, const Best& right) {  // left holds the lower indices
        if (left.index < 0 || (!left.nan && right.nan)) return right.index < 0 ? left : right;
        if (left.nan || right.index < 0) return left;
        return (kMax ? right.value > left.value : right.value < left.value) ? right : left;
      });
  return best.index;
}

// ---- tolerances for real-valued float data --------------------------------------------------------
//
// Unit roundoff of the accumulator: float for f32/f16/bf16, double for f64 and for i64/u64 means.
template <class Acc> constexpr long double unit_roundoff() {
  return std::is_same_v<Acc, double> ? 0x1p-53L : 0x1p-24L;
}

// Summation error bound, valid for ANY summation order (sequential, blocked, tree, per-thread),
// because foldkit's order is unspecified and differs between backends and devices:
//   |computed - exact| <= lambda * sqrt(n) * u * sum|x_i|,  lambda = 10.
// This is the probabilistic bound of Higham & Mary (SIAM J. Sci. Comput. 41(5), 2019): modelling
// rounding errors as independent with mean zero, it fails with probability < 2n * exp(-lambda^2/2)
// (about 1e-13 at n = 2^28). The worst-case bound (n - 1) * u * sum|x_i| would accept almost any
// answer; with this one, on data in [-1, 1), one missed element of typical size is still caught up
// to a few thousand elements. Larger sizes rely on the exact tests (integer-valued data, planted
// extremes), which catch a single missed element at every size.
inline constexpr long double kLambda = 10;
template <class Acc> long double sum_tolerance(std::int64_t n, long double abs_sum) {
  return kLambda * std::sqrt(static_cast<long double>(n)) * unit_roundoff<Acc>() * abs_sum;
}
// A mean adds two roundings to the sum's error: n converted to the accumulator type (inexact for
// float beyond 2^24) and the division.
template <class Acc> long double mean_tolerance(std::int64_t n, long double abs_sum, long double exact_mean) {
  return sum_tolerance<Acc>(n, abs_sum) / static_cast<long double>(n) +
         2.5L * unit_roundoff<Acc>() * std::fabs(exact_mean);
}
// Products: each of the n - 1 multiplications adds a relative error of at most u; same model.
template <class Acc> long double prod_tolerance(std::int64_t n, long double exact_prod) {
  return kLambda * std::sqrt(static_cast<long double>(n)) * unit_roundoff<Acc>() * std::fabs(exact_prod);
}

}  // namespace foldkit::test
