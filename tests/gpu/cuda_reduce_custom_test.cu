// foldkit::cuda::reduce_custom with user functors (tests/support/custom_functors.hpp): bitwise
// xor on uint32_t, max |x| on float, and a 16-byte struct; with the convenient and the explicit
// workspace form, at the standard sizes and misaligned starts; n == 0 writes the identity; a
// non-associative float functor still gives the same bits on every call; bad arguments throw.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "common/reduce_checks.hpp"
#include "foldkit/cuda/reduce_custom.cuh"
#include "support/cuda_backend.hpp"
#include "support/custom_functors.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using CudaReduceCustom = CudaTest;

// Runs reduce_custom on a device copy of `a` into a poisoned slot, convenient form or with `ws`.
template <class T, class F>
T run_custom(const DeviceArray<T>& in, F op, T identity, const cuda::Workspace* ws = nullptr) {
  DeviceSlot out;
  out.poison();
  if (ws != nullptr) cuda::reduce_custom(in.ptr, in.n, out.get<T>(), op, identity, *ws);
  else cuda::reduce_custom(in.ptr, in.n, out.get<T>(), op, identity);
  return out.take<T>("reduce_custom");
}

// For every standard size and offset (and n == 0), both API forms against a host fold.
template <class T, class F, class MakeArray, class Same>
void check_against_host_fold(F op, T identity, MakeArray make, Same same, Rng& rng) {
  const OwnedWorkspace owned;
  const cuda::Workspace ws = owned.get();
  std::vector<std::int64_t> sizes = standard_sizes();
  sizes.insert(sizes.begin(), 0);
  for (auto [n, offset] : shapes(sizes, rng)) {
    const TestArray<T> a = make(n, offset, rng);
    SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(offset));
    T want = identity;
    for (std::int64_t i = 0; i < n; ++i) want = op(want, a[i]);
    const auto in = to_device(a);
    EXPECT_TRUE(same(run_custom(in, op, identity), want)) << "convenient form";
    EXPECT_TRUE(same(run_custom(in, op, identity, &ws), want)) << "explicit workspace";
    if (::testing::Test::HasFailure()) return;
  }
}

TEST_F(CudaReduceCustom, BitwiseXorOnUint32) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  check_against_host_fold<std::uint32_t>(
      BitwiseXor{}, 0u,
      [](std::int64_t n, std::int64_t offset, Rng& r) {
        TestArray<std::uint32_t> a(n, offset, 0xdeadbeefu);  // a guard read flips bits of the answer
        const CounterRng bits = r.counter();
        fill(a, [&](std::int64_t i) { return static_cast<std::uint32_t>(bits.bits(i)); });
        return a;
      },
      [](std::uint32_t x, std::uint32_t y) { return x == y; }, rng);
}

TEST_F(CudaReduceCustom, MaxAbsOnFloatWithPlantedExtreme) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  check_against_host_fold<float>(
      MaxAbs{}, 0.0f,
      [](std::int64_t n, std::int64_t offset, Rng& r) {
        TestArray<float> a(n, offset, 1e30f);  // guards larger than any element
        const CounterRng values = r.counter();
        fill(a, [&](std::int64_t i) { return static_cast<float>(-1.0 + 2.0 * values.unit(i)); });
        if (n > 0) a[r.uniform(0, n - 1)] = -3.5f;
        return a;
      },
      [](float x, float y) { return x == y; }, rng);
}

TEST_F(CudaReduceCustom, SixteenByteStruct) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  check_against_host_fold<Span>(
      CombineSpans{}, span_identity(),
      [](std::int64_t n, std::int64_t offset, Rng& r) {
        TestArray<Span> a(n, offset, Span{-5, 5, 12345});
        const CounterRng values = r.counter();
        fill(a, [&](std::int64_t i) { return span_of(static_cast<std::int32_t>(values.bits(i))); });
        return a;
      },
      [](const Span& x, const Span& y) { return x.lo == y.lo && x.hi == y.hi && x.total == y.total; }, rng);
}

// Float addition is not associative, so the answer depends on the combine order; the order is
// fixed, so 20 calls must agree bit for bit.
TEST_F(CudaReduceCustom, FloatPlusIsDeterministic) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const auto in = to_device(make_real_data<float>(capped({1000003}).front(), 1, rng.counter(), -1.0, 1.0));
  const float first = run_custom(in, Plus{}, 0.0f);
  for (int call = 1; call < 20; ++call) ASSERT_TRUE(bits_equal(run_custom(in, Plus{}, 0.0f), first)) << "call " << call;
}

TEST_F(CudaReduceCustom, BadArgumentsThrow) {
  DeviceSlot out;
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::reduce_custom(static_cast<const std::uint32_t*>(nullptr), 4, out.get<std::uint32_t>(), BitwiseXor{}, 0u);
  }));
  const auto in = to_device(make_real_data<float>(64, 0, CounterRng{8}, -1.0, 1.0));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::reduce_custom(in.ptr, -1, out.get<float>(), MaxAbs{}, 0.0f); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::reduce_custom(in.ptr, 64, static_cast<float*>(nullptr), MaxAbs{}, 0.0f); }));
  const std::unique_ptr<float, decltype(&std::free)> host(static_cast<float*>(std::malloc(64 * sizeof(float))), &std::free);
  EXPECT_TRUE(throws_errc(Errc::wrong_memory,
                          [&] { cuda::reduce_custom(host.get(), 64, out.get<float>(), MaxAbs{}, 0.0f); }));
  const DeviceBuffer small(cuda::reduce_workspace_bytes() - 1);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::reduce_custom(in.ptr, 64, out.get<float>(), MaxAbs{}, 0.0f, cuda::Workspace{small.get(), small.bytes()});
  }));
}

}  // namespace
}  // namespace foldkit::test
