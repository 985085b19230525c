// cpu::inclusive_scan_custom / exclusive_scan_custom with user operators: a non-commutative one
// (composition of affine maps mod 2^32, exact, so any wrong order or lost element shows), XOR,
// in place, every thread count giving the same bits, and the errors; and the type-erased scans.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/reduce_checks.hpp"
#include "foldkit/scan.hpp"
#include "support/custom_functors.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

// x -> a*x + b (mod 2^32). Compose(p, q) applies p, then q: associative, not commutative.
struct Affine {
  std::uint32_t a, b;
  bool operator==(const Affine& o) const { return a == o.a && b == o.b; }
};
struct Compose {
  Affine operator()(Affine p, Affine q) const { return Affine{q.a * p.a, q.a * p.b + q.b}; }
};
constexpr Affine kIdentity{1u, 0u};

// A null pointer the optimiser cannot see through (a literal nullptr makes GCC warn about the
// loop that the validation never lets run).
template <class T> T* opaque_null() {
  static T* volatile p = nullptr;
  return p;
}

// Sizes around the chunk length (2^15), where the parallel carry starts.
std::vector<std::int64_t> sizes() { return capped({0, 1, 2, 33, 32767, 32768, 32769, 3 * 32768 + 5, 1000003}); }

std::vector<Affine> random_maps(std::int64_t n, const CounterRng& bits) {
  std::vector<Affine> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = Affine{static_cast<std::uint32_t>(bits.bits(2 * i)) | 1u,  // odd: never 0
                                            static_cast<std::uint32_t>(bits.bits(2 * i + 1))};
  return v;
}

TEST(CpuScanCustom, NonCommutativeComposeMatchesSerialFold) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (std::int64_t n : sizes()) {
    const auto in = random_maps(n, rng.counter());
    const Affine init{static_cast<std::uint32_t>(rng.uniform(0, 1000)) * 2u + 3u, 7u};
    std::vector<Affine> incl(static_cast<std::size_t>(n), Affine{0xdeadbeefu, 0xdeadbeefu}), excl = incl;
    cpu::inclusive_scan_custom(in.data(), n, incl.data(), Compose{}, kIdentity);
    cpu::exclusive_scan_custom(in.data(), n, excl.data(), Compose{}, kIdentity, init);
    Affine run_incl = kIdentity, run_excl = init;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      ASSERT_EQ(excl[k], run_excl) << "exclusive, n=" << n << " i=" << i;
      run_incl = Compose{}(run_incl, in[k]);
      run_excl = Compose{}(run_excl, in[k]);
      ASSERT_EQ(incl[k], run_incl) << "inclusive, n=" << n << " i=" << i;
    }
  }
}

TEST(CpuScanCustom, InPlaceXorAndSameBitsForAnyThreadCount) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t n = capped({3 * 32768 + 5}).front();
  const CounterRng bits = rng.counter();
  std::vector<std::uint32_t> data(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) data[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(bits.bits(i));
  std::vector<std::uint32_t> want(data.size());
  std::uint32_t x = 0;
  for (std::size_t i = 0; i < data.size(); ++i) want[i] = x ^= data[i];
  std::vector<float> real(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) real[static_cast<std::size_t>(i)] = 0.5f + static_cast<float>(bits.bits(n + i) % 1000) / 1000.0f;
  std::vector<float> first;
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3, 7}) {
    omp_set_num_threads(threads);
    std::vector<std::uint32_t> inplace = data;
    cpu::inclusive_scan_custom(inplace.data(), n, inplace.data(), BitwiseXor{}, 0u);
    EXPECT_EQ(inplace, want) << threads << " threads";
    std::vector<float> out(real.size(), -1.0f);
    cpu::inclusive_scan_custom(real.data(), n, out.data(), Plus{}, -0.0f);
    if (first.empty()) first = out;
    EXPECT_EQ(0, std::memcmp(first.data(), out.data(), out.size() * sizeof(float))) << threads << " threads";
  }
  omp_set_num_threads(saved);
}

TEST(CpuScanCustom, Errors) {
  std::vector<std::uint32_t> data(64, 1u);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::inclusive_scan_custom(data.data(), -1, data.data(), BitwiseXor{}, 0u); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::inclusive_scan_custom(opaque_null<std::uint32_t>(), 4, data.data(), BitwiseXor{}, 0u);
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::inclusive_scan_custom(data.data(), 32, data.data() + 1, BitwiseXor{}, 0u); }));
  cpu::inclusive_scan_custom(opaque_null<std::uint32_t>(), 0, opaque_null<std::uint32_t>(), BitwiseXor{}, 0u);
}

}  // namespace
}  // namespace foldkit::test

namespace foldkit::test {
namespace {

// The type-erased scans give the typed results bit for bit, for every scan op x dtype.
template <ReduceOp Op, class T>
void expect_erased_matches_typed_op(const std::vector<T>& in) {
  using R = scan_result_t<Op, T>;
  static_assert(dtype_v<R> == scan_result_dtype(Op, dtype_v<T>));
  const auto n = static_cast<std::int64_t>(in.size());
  const R init = from_double<R>(3.0);
  std::vector<R> typed(in.size()), erased(in.size(), from_double<R>(-7.0));
  cpu::inclusive_scan<Op>(in.data(), n, typed.data());
  cpu::inclusive_scan(Op, dtype_v<T>, in.data(), n, erased.data());
  EXPECT_EQ(0, std::memcmp(typed.data(), erased.data(), typed.size() * sizeof(R)))
      << "inclusive " << op_name(Op) << " " << dtype_name(dtype_v<T>);
  cpu::exclusive_scan<Op>(in.data(), n, typed.data(), init);
  cpu::exclusive_scan(Op, dtype_v<T>, in.data(), n, erased.data(), &init);
  EXPECT_EQ(0, std::memcmp(typed.data(), erased.data(), typed.size() * sizeof(R)))
      << "exclusive " << op_name(Op) << " " << dtype_name(dtype_v<T>);
}

template <class T>
void expect_erased_matches_typed(Rng& rng) {
  const std::int64_t n = capped({70001}).front();
  const CounterRng bits = rng.counter();
  std::vector<T> in(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    in[static_cast<std::size_t>(i)] = from_double<T>(static_cast<double>(static_cast<int>(bits.bits(i) % 5) - 2));
  expect_erased_matches_typed_op<ReduceOp::sum>(in);
  expect_erased_matches_typed_op<ReduceOp::prod>(in);
  expect_erased_matches_typed_op<ReduceOp::min>(in);
  expect_erased_matches_typed_op<ReduceOp::max>(in);
}

TEST(CpuScanErased, MatchesTypedForEveryOpAndDtype) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  expect_erased_matches_typed<std::int32_t>(rng);
  expect_erased_matches_typed<std::uint32_t>(rng);
  expect_erased_matches_typed<std::int64_t>(rng);
  expect_erased_matches_typed<std::uint64_t>(rng);
  expect_erased_matches_typed<float>(rng);
  expect_erased_matches_typed<double>(rng);
  expect_erased_matches_typed<half>(rng);
  expect_erased_matches_typed<bfloat16>(rng);
}

TEST(CpuScanErased, Errors) {
  std::vector<float> data(8, 1.0f), out(8);
  const float init = 0.0f;
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::inclusive_scan(ReduceOp::argmax, DType::f32, data.data(), 8, out.data());
  }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::exclusive_scan(ReduceOp::mean, DType::f32, data.data(), 8, out.data(), &init);
  }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::inclusive_scan(static_cast<ReduceOp>(99), DType::f32, data.data(), 8, out.data());
  }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::inclusive_scan(ReduceOp::sum, static_cast<DType>(99), data.data(), 8, out.data());
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::exclusive_scan(ReduceOp::sum, DType::f32, data.data(), 8, out.data(), nullptr);
  }));
}

}  // namespace
}  // namespace foldkit::test
