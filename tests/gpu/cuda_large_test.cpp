// Large inputs on the GPU: up to 2^28 elements for the combinations where size matters most
// (f32/f64/i32 sums and f32 argmax), and 2^24 + 7 for every dtype. Sizes obey FOLDKIT_TEST_MAX_N.
//
// Exactness makes these meaningful at any size: integer sums are exact, float sums run on
// integer-valued data (see make_exact_sum_data for why every partial sum is exact), and argmax
// has a planted maximum. One missed, doubled or out-of-range element fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "common/reduce_checks.hpp"
#include "support/cuda_backend.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using CudaLarge = CudaTest;

constexpr std::int64_t k2Pow28 = std::int64_t{1} << 28;

template <class T> void exact_sums_at(std::initializer_list<std::int64_t> sizes, Rng& rng) {
  for (std::int64_t n : capped(sizes)) {
    check_sum_and_mean_exact<CudaBackend>(make_exact_sum_data<T>(n, rng.uniform(1, 3), rng.counter()));
    if (::testing::Test::HasFailure()) return;
  }
}

TEST_F(CudaLarge, F32SumExact) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  exact_sums_at<float>({(std::int64_t{1} << 26) + 3, k2Pow28}, rng);
}

TEST_F(CudaLarge, I32SumExact) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  exact_sums_at<std::int32_t>({(std::int64_t{1} << 26) + 3, k2Pow28}, rng);
}

TEST_F(CudaLarge, F64SumExact) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  exact_sums_at<double>({k2Pow28}, rng);
}

// A maximum planted twice (the first index must win), one of them in the last 16-byte vector.
TEST_F(CudaLarge, F32ArgMaxPlanted) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t n = capped({k2Pow28}).front();
  const std::int64_t tail = rng.uniform(std::max<std::int64_t>(0, n - 4), n - 1);
  const auto a = make_extreme_data<float>(n, rng.uniform(1, 3), rng.counter(), true, {rng.uniform(0, n - 1), tail});
  SCOPED_TRACE(a.describe());
  const auto in = CudaBackend::upload(a);
  EXPECT_TRUE(matches_arg(CudaBackend::run<ReduceOp::argmax>(in), a, ref_arg_index<true>(a)));
  EXPECT_TRUE(matches_extreme(CudaBackend::run<ReduceOp::max>(in), ref_extreme<true>(a)));
}

// Every dtype once past 2^24 elements: exact sum, exact product, planted min/max/arg.
template <class T> void all_ops_past_2pow24(Rng& rng) {
  const std::int64_t n = capped({(std::int64_t{1} << 24) + 7}).front();
  check_sum_and_mean_exact<CudaBackend>(make_exact_sum_data<T>(n, rng.uniform(0, 3), rng.counter()));
  check_prod_exact<CudaBackend>(make_exact_prod_data<T>(n, rng.uniform(0, 3), rng.counter(), rng));
  const std::vector<std::int64_t> at = {rng.uniform(0, n - 1)};
  const std::int64_t offset = rng.uniform(0, 3);
  check_min_max_arg<CudaBackend>(make_extreme_data<T>(n, offset, rng.counter(), false, at),
                                 make_extreme_data<T>(n, offset, rng.counter(), true, at));
}

TEST_F(CudaLarge, EveryDtypePast2Pow24) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  all_ops_past_2pow24<std::int32_t>(rng);
  all_ops_past_2pow24<std::uint32_t>(rng);
  all_ops_past_2pow24<std::int64_t>(rng);
  all_ops_past_2pow24<std::uint64_t>(rng);
  all_ops_past_2pow24<float>(rng);
  all_ops_past_2pow24<double>(rng);
  all_ops_past_2pow24<half>(rng);
  all_ops_past_2pow24<bfloat16>(rng);
}

TEST_F(CudaLarge, MeanRoundsOncePast2Pow24) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  if (!check_mean_rounds_once<CudaBackend, float>(rng)) GTEST_SKIP() << "FOLDKIT_TEST_MAX_N < 2^24 + 1";
  check_mean_rounds_once<CudaBackend, half>(rng);
  check_mean_rounds_once<CudaBackend, bfloat16>(rng);
}

}  // namespace
}  // namespace foldkit::test
