// CPU backend: argument errors, the type-erased entry point's enum checks, determinism across
// thread counts, and reduce_custom.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <vector>

#include "common/reduce_checks.hpp"
#include "foldkit/reduce.hpp"
#include "support/cpu_backend.hpp"
#include "support/custom_functors.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

// A null pointer the optimiser cannot see through (a literal nullptr makes GCC warn about the
// library's loop that the validation never lets run).
template <class T> const T* opaque_null() {
  static const T* volatile p = nullptr;
  return p;
}

TEST(CpuErrors, NullInputWithElementsIsInvalidArgument) {
  const float* null = opaque_null<float>();
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::sum(null, 1); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::argmax(null, 1000); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::min(null, 5); }));
  double out = 0;
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, DType::f64, nullptr, 3, &out); }));
}

TEST(CpuErrors, NullInputWithZeroElementsIsAnEmptyInput) {  // documented: null is an error only with n > 0
  const std::int32_t* null = opaque_null<std::int32_t>();
  EXPECT_EQ(cpu::sum(null, 0), 0);
  EXPECT_EQ(cpu::prod(null, 0), 1);
  EXPECT_TRUE(throws_errc(Errc::empty_input, [&] { cpu::max(null, 0); }));
}

TEST(CpuErrors, NegativeLengthIsInvalidArgument) {
  const std::vector<float> data(8, 1.0f);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::sum(data.data(), -1); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::argmin(data.data(), -5); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::reduce_custom(data.data(), -1, Plus{}, 0.0f); }));
  float out = 0;
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::reduce(ReduceOp::max, DType::f32, data.data(), -1, &out); }));
}

TEST(CpuErrors, TypeErasedNullOutputIsInvalidArgument) {
  const std::vector<float> data(8, 1.0f);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::reduce(ReduceOp::sum, DType::f32, data.data(), 8, nullptr); }));
}

TEST(CpuErrors, TypeErasedInvalidEnumIsUnsupported) {
  const std::vector<float> data(8, 1.0f);
  PoisonedSlot out;
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::reduce(ReduceOp::sum, static_cast<DType>(99), data.data(), 8, out.bytes);
  }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::reduce(ReduceOp::sum, static_cast<DType>(-1), data.data(), 8, out.bytes);
  }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::reduce(static_cast<ReduceOp>(99), DType::f32, data.data(), 8, out.bytes);
  }));
}

// Restores the OpenMP thread count a test changes.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(omp_get_max_threads()) {}
  ~ThreadCountGuard() { omp_set_num_threads(saved_); }
  int saved() const { return saved_; }

 private:
  int saved_;
};

// Documented: chunk length independent of the thread count, so the bits cannot depend on it.
template <class T> void expect_same_bits_for_any_thread_count(Rng& rng) {
  const std::int64_t n = capped({1000003}).front();
  const auto a = make_all_ops_data<T>(n, rng.uniform(0, 3), rng);
  SCOPED_TRACE(a.describe());
  const auto in = CpuBackend::upload(a);
  ThreadCountGuard guard;
  for_each_op([&](auto op) {
    constexpr ReduceOp kOp = decltype(op)::value;
    omp_set_num_threads(1);
    const auto single = reduce_on<kOp, CpuBackend>(in);
    for (int threads : {guard.saved(), 2, 3, 7}) {
      omp_set_num_threads(threads);
      EXPECT_TRUE(bits_equal(reduce_on<kOp, CpuBackend>(in), single)) << op_name(kOp) << " with " << threads << " threads";
    }
  });
}

TEST(CpuDeterminism, SameBitsForAnyThreadCount) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  expect_same_bits_for_any_thread_count<float>(rng);
  expect_same_bits_for_any_thread_count<double>(rng);
  expect_same_bits_for_any_thread_count<half>(rng);
  expect_same_bits_for_any_thread_count<bfloat16>(rng);
  expect_same_bits_for_any_thread_count<std::int64_t>(rng);
}

// Sizes around the CPU chunk length (2^15), where the parallel combine starts.
std::vector<std::int64_t> custom_sizes() { return capped({0, 1, 2, 33, 32767, 32768, 32769, 3 * 32768 + 5, 1000003}); }

TEST(CpuReduceCustom, BitwiseXor) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (std::int64_t n : custom_sizes()) {
    const CounterRng bits = rng.counter();
    std::vector<std::uint32_t> data(static_cast<std::size_t>(n + 3));
    for (auto& v : data) v = static_cast<std::uint32_t>(bits.bits(&v - data.data()));
    const std::int64_t off = rng.uniform(0, 3);
    std::uint32_t want = 0;
    for (std::int64_t i = 0; i < n; ++i) want ^= data[static_cast<std::size_t>(off + i)];
    EXPECT_EQ(cpu::reduce_custom(data.data() + off, n, BitwiseXor{}, 0u), want) << "n=" << n << " offset=" << off;
  }
}

TEST(CpuReduceCustom, MaxAbsWithPlantedExtreme) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (std::int64_t n : custom_sizes()) {
    if (n == 0) {
      EXPECT_EQ(cpu::reduce_custom(opaque_null<float>(), 0, MaxAbs{}, 0.0f), 0.0f);
      continue;
    }
    auto a = make_real_data<float>(n, rng.uniform(0, 3), rng.counter(), -1.0, 1.0);
    a[rng.uniform(0, n - 1)] = -3.5f;  // the largest magnitude, negative
    EXPECT_EQ(cpu::reduce_custom(a.data(), n, MaxAbs{}, 0.0f), 3.5f) << a.describe();
  }
}

TEST(CpuReduceCustom, SixteenByteStruct) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (std::int64_t n : custom_sizes()) {
    const CounterRng bits = rng.counter();
    std::vector<Span> data(static_cast<std::size_t>(n));
    Span want = span_identity();
    for (std::int64_t i = 0; i < n; ++i) {
      data[static_cast<std::size_t>(i)] = span_of(static_cast<std::int32_t>(bits.bits(i)));
      want = CombineSpans{}(want, data[static_cast<std::size_t>(i)]);
    }
    const Span got = cpu::reduce_custom(data.data(), n, CombineSpans{}, span_identity());
    EXPECT_EQ(got.lo, want.lo) << "n=" << n;
    EXPECT_EQ(got.hi, want.hi) << "n=" << n;
    EXPECT_EQ(got.total, want.total) << "n=" << n;
  }
}

// Documented for the CPU backend only: left-to-right order, so F need not be commutative.
TEST(CpuReduceCustom, NonCommutativeOperatorKeepsOrder) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (std::int64_t n : custom_sizes()) {
    const CounterRng bits = rng.counter();
    std::vector<Affine> data(static_cast<std::size_t>(n));
    Affine want{1, 0};
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint64_t r = bits.bits(i);
      data[static_cast<std::size_t>(i)] = Affine{static_cast<std::uint32_t>(r) | 1u, static_cast<std::uint32_t>(r >> 32)};
      want = ThenApply{}(want, data[static_cast<std::size_t>(i)]);
    }
    const Affine got = cpu::reduce_custom(data.data(), n, ThenApply{}, Affine{1, 0});
    EXPECT_EQ(got.a, want.a) << "n=" << n;
    EXPECT_EQ(got.b, want.b) << "n=" << n;
  }
}

TEST(CpuReduceCustom, NullInputWithElementsIsInvalidArgument) {
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [] { cpu::reduce_custom(opaque_null<std::uint32_t>(), 4, BitwiseXor{}, 0u); }));
}

}  // namespace
}  // namespace foldkit::test
