// Backend-independent checks: run ops through a backend adapter (support/cpu_backend.hpp,
// support/cuda_backend.hpp) and compare with the independent references. Used by the typed
// suites and by the GPU large-input tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "foldkit/ops.hpp"
#include "support/expected_types.hpp"
#include "support/random_arrays.hpp"
#include "support/reference.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {

// Runs op Op on an uploaded input; the static_assert pins the result type to the ops.hpp table.
template <ReduceOp Op, class Backend, class Input> auto reduce_on(const Input& in) {
  using T = typename Input::value_type;
  using R = decltype(Backend::template run<Op, T>(in));
  static_assert(std::is_same_v<R, expected_result_t<Op, T>>, "result type differs from the ops.hpp table");
  static_assert(std::is_same_v<R, reduce_result_t<Op, T>>, "reduce_result_t differs from the ops.hpp table");
  return Backend::template run<Op, T>(in);
}
template <ReduceOp Op, class Backend, class Input> auto reduce_erased_on(const Input& in) {
  using T = typename Input::value_type;
  return Backend::template run_erased<Op, T>(in);
}

// Calls f(std::integral_constant<ReduceOp, op>{}) for each of the seven ops.
template <class F> void for_each_op(F&& f) {
  f(std::integral_constant<ReduceOp, ReduceOp::sum>{});
  f(std::integral_constant<ReduceOp, ReduceOp::prod>{});
  f(std::integral_constant<ReduceOp, ReduceOp::min>{});
  f(std::integral_constant<ReduceOp, ReduceOp::max>{});
  f(std::integral_constant<ReduceOp, ReduceOp::mean>{});
  f(std::integral_constant<ReduceOp, ReduceOp::argmin>{});
  f(std::integral_constant<ReduceOp, ReduceOp::argmax>{});
}

// Sum exactly equal to the reference (integer data, or integer-valued float data from
// make_exact_sum_data); mean as documented.
template <class Backend, class T> void check_sum_and_mean_exact(const TestArray<T>& a) {
  const auto in = Backend::upload(a);
  const auto sum = reduce_on<ReduceOp::sum, Backend>(in);
  const auto mean = reduce_on<ReduceOp::mean, Backend>(in);
  if constexpr (std::is_integral_v<T>) {
    const auto want = ref_int_sum(a);
    EXPECT_TRUE(bits_equal(sum, want)) << "sum of " << a.describe();
    if constexpr (sizeof(T) == 4) {
      // Documented: the exact 64-bit integer sum, divided by n in float64.
      const double want_mean = static_cast<double>(want) / static_cast<double>(a.n);
      EXPECT_TRUE(bits_equal(mean, want_mean)) << "mean of " << a.describe();
    } else {
      // Documented: a float64 sum, divided by n. Converting each element to double adds one more
      // rounding of at most u * |x_i| per element.
      const RealSum rs = ref_real_sum(a);
      const long double want_mean = rs.sum / a.n;
      const long double tol =
          mean_tolerance<double>(a.n, rs.abs_sum, want_mean) + unit_roundoff<double>() * rs.abs_sum / a.n;
      EXPECT_TRUE(within(mean, want_mean, tol)) << "mean of " << a.describe();
    }
  } else {
    using Acc = expected_result_t<ReduceOp::sum, T>;
    const long double want = ref_real_sum(a).sum;  // exact: integer-valued data
    EXPECT_TRUE(exactly(sum, static_cast<Acc>(want))) << "sum of " << a.describe();
    const long double want_mean = want / a.n;
    EXPECT_TRUE(within(mean, want_mean, 2.5L * unit_roundoff<Acc>() * std::fabs(want_mean)))
        << "mean of " << a.describe() << " (exact sum " << static_cast<double>(want) << ")";
  }
}

// The mean divides once, rounding once: 2^24 ones and a zero (at a random place) have the exact
// mean 2^24 / (2^24 + 1) = 0.99999994 in float, but float(n) = 2^24 made it exactly 1 (issue
// #21). The sum is exact in every accumulator, so only the division can be wrong. Returns false
// when FOLDKIT_TEST_MAX_N caps the size away (nothing checked).
template <class Backend, class T> bool check_mean_rounds_once(Rng& rng) {
  const std::int64_t n = (std::int64_t{1} << 24) + 1;
  if (max_n() < n) return false;
  TestArray<T> a(n, rng.uniform(0, 3), quiet_nan<T>());
  const std::int64_t zero_at = rng.uniform(0, n - 1);
  fill(a, [&](std::int64_t i) { return from_double<T>(i == zero_at ? 0.0 : 1.0); });
  using R = expected_result_t<ReduceOp::mean, T>;
  const R want = static_cast<R>(static_cast<long double>(n - 1) / static_cast<long double>(n));
  const R got = reduce_on<ReduceOp::mean, Backend>(Backend::upload(a));
  EXPECT_TRUE(bits_equal(got, want)) << "mean of " << a.describe() << " (zero at " << zero_at << "): got "
                                     << static_cast<double>(got) << ", want " << static_cast<double>(want);
  return true;
}

// Product exactly equal to the reference (data from make_exact_prod_data).
template <class Backend, class T> void check_prod_exact(const TestArray<T>& a) {
  const auto in = Backend::upload(a);
  const auto prod = reduce_on<ReduceOp::prod, Backend>(in);
  if constexpr (std::is_integral_v<T>) {
    EXPECT_TRUE(bits_equal(prod, ref_int_prod(a))) << "prod of " << a.describe();
  } else {
    const long double want = ref_real_prod(a);
    EXPECT_TRUE(exactly(prod, static_cast<decltype(prod)>(want))) << "prod of " << a.describe();
  }
}

// min and argmin on min_data, max and argmax on max_data: exact value, exact index.
template <class Backend, class T> void check_min_max_arg(const TestArray<T>& min_data, const TestArray<T>& max_data) {
  {
    const auto in = Backend::upload(min_data);
    EXPECT_TRUE(matches_extreme(reduce_on<ReduceOp::min, Backend>(in), ref_extreme<false>(min_data)))
        << "min of " << min_data.describe();
    EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmin, Backend>(in), min_data, ref_arg_index<false>(min_data)))
        << "argmin of " << min_data.describe();
  }
  {
    const auto in = Backend::upload(max_data);
    EXPECT_TRUE(matches_extreme(reduce_on<ReduceOp::max, Backend>(in), ref_extreme<true>(max_data)))
        << "max of " << max_data.describe();
    EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmax, Backend>(in), max_data, ref_arg_index<true>(max_data)))
        << "argmax of " << max_data.describe();
  }
}

// Sum and mean of real-valued float data, within the tolerances of reference.hpp.
template <class Backend, class T> void check_sum_and_mean_real(const TestArray<T>& a) {
  using Acc = expected_result_t<ReduceOp::sum, T>;
  const auto in = Backend::upload(a);
  const RealSum rs = ref_real_sum(a);
  EXPECT_TRUE(within(reduce_on<ReduceOp::sum, Backend>(in), rs.sum, sum_tolerance<Acc>(a.n, rs.abs_sum)))
      << "sum of " << a.describe();
  const long double want_mean = rs.sum / a.n;
  EXPECT_TRUE(within(reduce_on<ReduceOp::mean, Backend>(in), want_mean, mean_tolerance<Acc>(a.n, rs.abs_sum, want_mean)))
      << "mean of " << a.describe();
}

template <class Backend, class T> void check_prod_real(const TestArray<T>& a) {
  using Acc = expected_result_t<ReduceOp::prod, T>;
  const auto in = Backend::upload(a);
  const long double want = ref_real_prod(a);
  EXPECT_TRUE(within(reduce_on<ReduceOp::prod, Backend>(in), want, prod_tolerance<Acc>(a.n, want)))
      << "prod of " << a.describe();
}

// Data every op gives a non-trivial answer on: odd integers (products stay nonzero), floats
// near 1 (products neither overflow nor underflow).
template <class T> TestArray<T> make_all_ops_data(std::int64_t n, std::int64_t offset, Rng& rng) {
  if constexpr (is_floating_v<T>) return make_real_data<T>(n, offset, rng.counter(), 0.99, 1.01);
  else return make_exact_prod_data<T>(n, offset, rng.counter(), rng);
}

// The (n, offset) shapes a size is tested at: every offset in 0..3 up to kAllOffsetsUpTo
// elements, one random offset above that (reproducible from the seed).
inline std::vector<std::pair<std::int64_t, std::int64_t>> shapes(const std::vector<std::int64_t>& sizes, Rng& rng) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t n : sizes) {
    if (n <= kAllOffsetsUpTo) {
      for (std::int64_t off = 0; off < 4; ++off) out.emplace_back(n, off);
    } else {
      out.emplace_back(n, rng.uniform(0, 3));
    }
  }
  return out;
}

// Where to plant extremes (or NaNs) in an array of n elements of `elem_bytes`: the first and last
// element, somewhere in the first and last two 16-byte vectors (the misaligned head and tail a
// vectorised kernel handles separately), anywhere, a tie of three, and a tie of two neighbours
// (mostly in one 16-byte vector, where a kernel that keeps whole vectors must pick the first).
inline std::vector<std::vector<std::int64_t>> plant_scenarios(std::int64_t n, std::size_t elem_bytes, Rng& rng) {
  const std::int64_t edge = std::min<std::int64_t>(n, 2 * 16 / static_cast<std::int64_t>(elem_bytes));
  const std::int64_t pair = n >= 2 ? rng.uniform(0, n - 2) : 0;
  return {{0},
          {n - 1},
          {rng.uniform(0, edge - 1)},
          {rng.uniform(n - edge, n - 1)},
          {rng.uniform(0, n - 1)},
          {rng.uniform(0, n - 1), rng.uniform(0, n - 1), rng.uniform(n - edge, n - 1)},
          {pair, std::min<std::int64_t>(pair + 1, n - 1)}};
}

}  // namespace foldkit::test
