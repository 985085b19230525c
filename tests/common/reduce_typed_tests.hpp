// The typed test bodies shared by the CPU and CUDA backends. A test binary includes this header
// and instantiates every suite for its backend at global scope:
//   FOLDKIT_INSTANTIATE_REDUCE_SUITES(Cpu, foldkit::test::CpuBackend)
// giving gtest names like CpuAllDtypes/ReduceAllDtypes/4.ProdExact (TypeParam = f32) and ctest
// names like CpuAllDtypes.ProdExact<f32>.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/reduce_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {

template <class B, class T> struct Case {
  using Backend = B;
  using Value = T;
};

template <class C> class BackendTest : public ::testing::Test {
 protected:
  using Backend = typename C::Backend;
  using T = typename C::Value;
  void SetUp() override {
    if (!Backend::available()) GTEST_SKIP() << "no usable CUDA device; " << Backend::kName << " tests skipped";
  }
  Rng rng_{test_seed()};
};

// ================================ every op x every dtype ================================
template <class C> class ReduceAllDtypes : public BackendTest<C> {};
TYPED_TEST_SUITE_P(ReduceAllDtypes);

// Sums must be exact: integers at every size (wrapping mod 2^64), floats on integer-valued data.
TYPED_TEST_P(ReduceAllDtypes, SumAndMeanExact) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  FOLDKIT_TRACE_SEED();
  for (auto [n, offset] : shapes(standard_sizes(), this->rng_)) {
    check_sum_and_mean_exact<Backend>(make_exact_sum_data<T>(n, offset, this->rng_.counter()));
    if (this->HasFailure()) return;  // one failing shape is enough to read; the rest would repeat it
  }
}

TYPED_TEST_P(ReduceAllDtypes, ProdExact) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  FOLDKIT_TRACE_SEED();
  for (auto [n, offset] : shapes(standard_sizes(), this->rng_)) {
    check_prod_exact<Backend>(make_exact_prod_data<T>(n, offset, this->rng_.counter(), this->rng_));
    if (this->HasFailure()) return;
  }
}

// Every element at the far end of the order (lowest for argmax, highest for argmin: -inf/+inf
// for floats): a kernel that starts each lane from that value as its identity must still report
// the first index. Also with one element just past it, placed at random, which must win.
TYPED_TEST_P(ReduceAllDtypes, ArgAtTheEndOfTheOrder) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  FOLDKIT_TRACE_SEED();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  T lowest, highest, above_lowest;
  if constexpr (is_floating_v<T>) {
    lowest = from_double<T>(-kInf), highest = from_double<T>(kInf), above_lowest = from_double<T>(-1000.0);
  } else {
    lowest = std::numeric_limits<T>::lowest(), highest = std::numeric_limits<T>::max();
    above_lowest = std::is_signed_v<T> ? T(-1000) : T(1000);
  }
  const T below_highest = from_double<T>(1000.0);
  for (auto [n, offset] : shapes(standard_sizes(), this->rng_)) {
    TestArray<T> low(n, offset, above_lowest), high(n, offset, below_highest);
    fill(low, [&](std::int64_t) { return lowest; });
    fill(high, [&](std::int64_t) { return highest; });
    EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmax, Backend>(Backend::upload(low)), low, 0));
    EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmin, Backend>(Backend::upload(high)), high, 0));
    const std::int64_t k = this->rng_.uniform(0, n - 1);
    low[k] = above_lowest;
    high[k] = below_highest;
    EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmax, Backend>(Backend::upload(low)), low, k));
    EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmin, Backend>(Backend::upload(high)), high, k));
    if (this->HasFailure()) return;
  }
}

// The extreme is planted at the ends, in the misaligned head and tail, anywhere, and as a tie.
TYPED_TEST_P(ReduceAllDtypes, MinMaxArgMinArgMaxPlanted) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  FOLDKIT_TRACE_SEED();
  for (auto [n, offset] : shapes(standard_sizes(), this->rng_)) {
    auto scenarios = plant_scenarios(n, sizeof(T), this->rng_);
    if (n > kAllOffsetsUpTo)  // keep large n cheap
      scenarios = {scenarios[this->rng_.uniform(0, 3)], scenarios[5], scenarios[6]};
    for (const auto& positions : scenarios) {
      SCOPED_TRACE("planted at " + ::testing::PrintToString(positions));
      const auto min_data = make_extreme_data<T>(n, offset, this->rng_.counter(), false, positions);
      const auto max_data = make_extreme_data<T>(n, offset, this->rng_.counter(), true, positions);
      check_min_max_arg<Backend>(min_data, max_data);
      if (this->HasFailure()) return;
    }
  }
}

// sum -> 0, prod -> 1, mean -> NaN; ops without identity throw empty_input. The pointer is valid
// (non-null, guards around it) so only n == 0 decides.
TYPED_TEST_P(ReduceAllDtypes, EmptyInput) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  for (std::int64_t offset : {0, 1}) {
    const TestArray<T> empty(0, offset, sum_guard<T>());
    const auto in = Backend::upload(empty);
    using S = expected_result_t<ReduceOp::sum, T>;
    EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::sum, Backend>(in), S(0))) << "an empty sum is +0";
    EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::prod, Backend>(in), S(1)));
    EXPECT_TRUE(is_nan_result(reduce_on<ReduceOp::mean, Backend>(in)));
    EXPECT_TRUE(throws_errc(Errc::empty_input, [&] { reduce_on<ReduceOp::min, Backend>(in); }));
    EXPECT_TRUE(throws_errc(Errc::empty_input, [&] { reduce_on<ReduceOp::max, Backend>(in); }));
    EXPECT_TRUE(throws_errc(Errc::empty_input, [&] { reduce_on<ReduceOp::argmin, Backend>(in); }));
    EXPECT_TRUE(throws_errc(Errc::empty_input, [&] { reduce_on<ReduceOp::argmax, Backend>(in); }));
  }
}

// The same input gives the same bits on every call (float sums included).
TYPED_TEST_P(ReduceAllDtypes, RepeatedCallsBitwiseIdentical) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  FOLDKIT_TRACE_SEED();
  const std::int64_t n = capped({1000003}).front();
  const auto a = make_all_ops_data<T>(n, this->rng_.uniform(0, 3), this->rng_);
  SCOPED_TRACE(a.describe());
  const auto in = Backend::upload(a);
  for_each_op([&](auto op) {
    constexpr ReduceOp kOp = decltype(op)::value;
    const auto first = reduce_on<kOp, Backend>(in);
    for (int call = 1; call < 20; ++call)
      ASSERT_TRUE(bits_equal(reduce_on<kOp, Backend>(in), first)) << op_name(kOp) << ", call " << call;
  });
}

// reduce(ReduceOp, DType, void*...) gives the typed API's bits for every op.
TYPED_TEST_P(ReduceAllDtypes, TypeErasedMatchesTyped) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  FOLDKIT_TRACE_SEED();
  for (std::int64_t n : capped({1, 4099, 65537})) {
    const auto a = make_all_ops_data<T>(n, this->rng_.uniform(0, 3), this->rng_);
    SCOPED_TRACE(a.describe());
    const auto in = Backend::upload(a);
    for_each_op([&](auto op) {
      constexpr ReduceOp kOp = decltype(op)::value;
      EXPECT_TRUE(bits_equal(reduce_erased_on<kOp, Backend>(in), reduce_on<kOp, Backend>(in))) << op_name(kOp);
    });
  }
}

REGISTER_TYPED_TEST_SUITE_P(ReduceAllDtypes, ArgAtTheEndOfTheOrder, SumAndMeanExact, ProdExact, MinMaxArgMinArgMaxPlanted, EmptyInput,
                            RepeatedCallsBitwiseIdentical, TypeErasedMatchesTyped);

// ================================ floating-point dtypes ================================
template <class C> class ReduceFloatDtypes : public BackendTest<C> {};
TYPED_TEST_SUITE_P(ReduceFloatDtypes);

// Real-valued data, within the documented tolerance (reference.hpp): signed data (cancellation)
// and non-negative data (no cancellation, so the relative error itself is tested).
TYPED_TEST_P(ReduceFloatDtypes, SumAndMeanRealData) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  FOLDKIT_TRACE_SEED();
  for (auto [n, offset] : shapes(standard_sizes(), this->rng_)) {
    check_sum_and_mean_real<Backend>(make_real_data<T>(n, offset, this->rng_.counter(), -1.0, 1.0));
    check_sum_and_mean_real<Backend>(make_real_data<T>(n, offset, this->rng_.counter(), 0.0, 1.0));
    if (this->HasFailure()) return;
  }
}

// Products of real data in [0.95, 1.05): up to 4097 elements, where no partial product can
// leave float range.
TYPED_TEST_P(ReduceFloatDtypes, ProdRealData) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  FOLDKIT_TRACE_SEED();
  for (auto [n, offset] : shapes(capped({1, 2, 3, 31, 32, 33, 1023, 1024, 1025, 4095, 4096, 4097}), this->rng_)) {
    check_prod_real<Backend>(make_real_data<T>(n, offset, this->rng_.counter(), 0.95, 1.05));
    if (this->HasFailure()) return;
  }
}

// NaN: min/max return NaN; argmin/argmax return the first NaN (any sign) and its index; sums
// are NaN. Infinities: max/argmax find +inf, a sum with +inf and -inf is NaN.
TYPED_TEST_P(ReduceFloatDtypes, NaNAndInfinity) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  FOLDKIT_TRACE_SEED();
  const T nan = quiet_nan<T>();
  const T negative_nan = from_double<T>(-static_cast<double>(std::numeric_limits<float>::quiet_NaN()));
  const T inf = from_double<T>(std::numeric_limits<double>::infinity());
  for (auto [n, offset] : shapes(capped({1, 2, 3, 33, 1025, 65537, 1000003}), this->rng_)) {
    for (const auto& positions : plant_scenarios(n, sizeof(T), this->rng_)) {
      SCOPED_TRACE("NaN planted at " + ::testing::PrintToString(positions));
      auto a = make_real_data<T>(n, offset, this->rng_.counter(), -1.0, 1.0);
      for (std::size_t k = 0; k < positions.size(); ++k) a[positions[k]] = (k % 2) ? negative_nan : nan;
      // Real data but with planted NaN: the extreme data layout's checks apply unchanged.
      check_min_max_arg<Backend>(a, a);
      const auto in = Backend::upload(a);
      EXPECT_TRUE(is_nan_result(reduce_on<ReduceOp::sum, Backend>(in)));
      EXPECT_TRUE(is_nan_result(reduce_on<ReduceOp::mean, Backend>(in)));
      EXPECT_TRUE(is_nan_result(reduce_on<ReduceOp::prod, Backend>(in)));
      if (this->HasFailure()) return;
    }
    auto a = make_real_data<T>(n, offset, this->rng_.counter(), -1.0, 1.0);
    const std::int64_t p = this->rng_.uniform(0, n - 1);
    a[p] = inf;
    const auto with_inf = Backend::upload(a);
    EXPECT_TRUE(exactly(reduce_on<ReduceOp::max, Backend>(with_inf), inf));
    EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmax, Backend>(with_inf), a, p));
    EXPECT_TRUE(exactly(reduce_on<ReduceOp::sum, Backend>(with_inf), expected_result_t<ReduceOp::sum, T>(INFINITY)));
    if (n >= 2) {
      a[(p + 1) % n] = from_double<T>(-std::numeric_limits<double>::infinity());
      EXPECT_TRUE(is_nan_result(reduce_on<ReduceOp::sum, Backend>(Backend::upload(a))));
    }
    if (this->HasFailure()) return;
  }
}

// Signed zeros (ops.hpp): min/max order -0 below +0, so the answer is the same bits whatever the
// combine order; argmin/argmax treat -0 and +0 as a tie (first index wins); sums follow IEEE
// (all -0 sums to -0, any +0 makes it +0).
TYPED_TEST_P(ReduceFloatDtypes, SignedZeros) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  using S = expected_result_t<ReduceOp::sum, T>;
  FOLDKIT_TRACE_SEED();
  const T neg = from_double<T>(-0.0), pos = from_double<T>(0.0);
  for (auto [n, offset] : shapes(capped({1, 2, 3, 33, 1025, 65537, 1000003}), this->rng_)) {
    TestArray<T> a(n, offset, quiet_nan<T>());
    fill(a, [&](std::int64_t) { return neg; });
    {
      SCOPED_TRACE("all -0, " + a.describe());
      const auto in = Backend::upload(a);
      EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::sum, Backend>(in), S(-0.0)));
      EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::min, Backend>(in), neg));
      EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::max, Backend>(in), neg));
      EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmin, Backend>(in), a, 0));
      EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmax, Backend>(in), a, 0));
    }
    if (n < 2) continue;
    // One +0 among -0s (and then one -0 among +0s), never at index 0: the arg ops must still
    // return index 0, min/max the zero of the right sign.
    for (bool lone_positive : {true, false}) {
      fill(a, [&](std::int64_t) { return lone_positive ? neg : pos; });
      a[this->rng_.uniform(1, n - 1)] = lone_positive ? pos : neg;
      SCOPED_TRACE(std::string(lone_positive ? "one +0 among -0, " : "one -0 among +0, ") + a.describe());
      const auto in = Backend::upload(a);
      EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::sum, Backend>(in), S(0.0)));
      EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::min, Backend>(in), neg));
      EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::max, Backend>(in), pos));
      EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmin, Backend>(in), a, 0));
      EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmax, Backend>(in), a, 0));
    }
    if (this->HasFailure()) return;
  }
}

REGISTER_TYPED_TEST_SUITE_P(ReduceFloatDtypes, SumAndMeanRealData, ProdRealData, NaNAndInfinity, SignedZeros);

// ================================ integer dtypes ================================
template <class C> class ReduceIntegerDtypes : public BackendTest<C> {};
TYPED_TEST_SUITE_P(ReduceIntegerDtypes);

template <class T> TestArray<T> array_of(std::vector<T> values, std::int64_t offset) {
  TestArray<T> a(static_cast<std::int64_t>(values.size()), offset, T(0));
  for (std::size_t i = 0; i < values.size(); ++i) a[static_cast<std::int64_t>(i)] = values[i];
  return a;
}

// The 64-bit widening and wrap-around rules at the type's limits.
TYPED_TEST_P(ReduceIntegerDtypes, WideningAndWrapAround) {
  using Backend = typename TestFixture::Backend;
  using T = typename TestFixture::T;
  using L = std::numeric_limits<T>;
  using S = expected_result_t<ReduceOp::sum, T>;
  for (std::int64_t offset : {0, 1, 3}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    const auto max3 = array_of<T>({L::max(), L::max(), L::max()}, offset);
    const auto in = Backend::upload(max3);
    // 3 * max: exact in 64 bits for 32-bit types, wrapped mod 2^64 for 64-bit ones.
    EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::sum, Backend>(in), static_cast<S>(3 * as_u64(L::max()))));
    EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::prod, Backend>(in),
                           static_cast<S>(as_u64(L::max()) * as_u64(L::max()) * as_u64(L::max()))));
    // The mean of equal values is that value (rounded to double) whether the sum is exact
    // (32-bit) or float64 (64-bit); a sum that wrapped first would be far off.
    EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::mean, Backend>(in), static_cast<double>(L::max())));
    if constexpr (std::is_signed_v<T>) {
      // lowest * -1: 2^31 for i32 (widened before multiplying), wraps back to lowest for i64.
      const auto a = array_of<T>({L::lowest(), T(-1)}, offset);
      EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::prod, Backend>(Backend::upload(a)),
                             static_cast<S>(as_u64(L::lowest()) * as_u64(T(-1)))));
      const auto low2 = array_of<T>({L::lowest(), L::lowest()}, offset);
      EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::sum, Backend>(Backend::upload(low2)),
                             static_cast<S>(2 * as_u64(L::lowest()))));
    }
    const auto limits = array_of<T>({T(5), L::max(), L::lowest(), L::max(), L::lowest(), T(0)}, offset);
    const auto lim = Backend::upload(limits);
    EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::min, Backend>(lim), L::lowest()));
    EXPECT_TRUE(bits_equal(reduce_on<ReduceOp::max, Backend>(lim), L::max()));
    EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmin, Backend>(lim), limits, 2));
    EXPECT_TRUE(matches_arg(reduce_on<ReduceOp::argmax, Backend>(lim), limits, 1));
  }
}

REGISTER_TYPED_TEST_SUITE_P(ReduceIntegerDtypes, WideningAndWrapAround);

}  // namespace foldkit::test

// One short global type per dtype: gtest prints "TypeParam = f32", and CMake's test discovery
// turns that into the ctest name (a typed-test name generator would break its parsing).
#define FOLDKIT_INSTANTIATE_REDUCE_SUITES(Prefix, BackendType)                                          \
  struct i32 : ::foldkit::test::Case<BackendType, std::int32_t> {};                                   \
  struct u32 : ::foldkit::test::Case<BackendType, std::uint32_t> {};                                  \
  struct i64 : ::foldkit::test::Case<BackendType, std::int64_t> {};                                   \
  struct u64 : ::foldkit::test::Case<BackendType, std::uint64_t> {};                                  \
  struct f32 : ::foldkit::test::Case<BackendType, float> {};                                          \
  struct f64 : ::foldkit::test::Case<BackendType, double> {};                                         \
  struct f16 : ::foldkit::test::Case<BackendType, ::foldkit::half> {};                                \
  struct bf16 : ::foldkit::test::Case<BackendType, ::foldkit::bfloat16> {};                           \
  namespace foldkit::test {                                                                           \
  using Prefix##AllCases = ::testing::Types<i32, u32, i64, u64, f32, f64, f16, bf16>;                  \
  using Prefix##FloatCases = ::testing::Types<f32, f64, f16, bf16>;                                   \
  using Prefix##IntegerCases = ::testing::Types<i32, u32, i64, u64>;                                  \
  INSTANTIATE_TYPED_TEST_SUITE_P(Prefix##AllDtypes, ReduceAllDtypes, Prefix##AllCases);                \
  INSTANTIATE_TYPED_TEST_SUITE_P(Prefix##FloatDtypes, ReduceFloatDtypes, Prefix##FloatCases);          \
  INSTANTIATE_TYPED_TEST_SUITE_P(Prefix##IntegerDtypes, ReduceIntegerDtypes, Prefix##IntegerCases);    \
  }
