// foldkit::cpu::inclusive_scan_custom / exclusive_scan_custom over tensors
// (foldkit/tensor_scan_custom.hpp) with user functors, on the built-in tensor scans' random cases
// (through tests/common/tensor_scan_custom_cases.hpp: one or two exact functors per dtype, two
// of them not commutative) against a plain left-to-right loop per line; bytes outside the output
// views still poisoned, in place; the same bits for any thread count with a non-associative
// functor (float +), contiguous rows bit for bit the array form's blocked custom scan; empty
// tensors; bad arguments throw and write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/tensor_scan_custom_cases.hpp"
#include "cpu/parallel.hpp"
#include "support/forced_threads.hpp"
#include "foldkit/scan.hpp"
#include "foldkit/tensor_scan_custom.hpp"
#include "support/custom_functors.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test::tscan {
namespace {

// The CPU backend on a case: `result` receives the output buffer (in place: the input buffer).
template <class C> void run_cpu(const CustomScanCase<C>& k, std::vector<unsigned char>& result) {
  const ScanCase& c = k.c;
  const typename C::F op{};
  if (c.in_place) {
    result = c.in_bytes;
    const TensorView v = c.in.view(result.data(), c.dtype);
    if (c.exclusive) cpu::exclusive_scan_custom(v, c.axis, v, op, C::identity(), k.init);
    else cpu::inclusive_scan_custom(v, c.axis, v, op, C::identity());
    return;
  }
  result = c.out_bytes;
  const TensorView iv = c.in.view(c.in_bytes.data(), c.dtype);
  const TensorView ov = c.out.view(result.data(), c.dtype);
  if (c.exclusive) cpu::exclusive_scan_custom(iv, c.axis, ov, op, C::identity(), k.init);
  else cpu::inclusive_scan_custom(iv, c.axis, ov, op, C::identity());
}

template <class C> ::testing::AssertionResult run_and_check(const CustomScanCase<C>& k) {
  std::vector<unsigned char> got;
  try {
    run_cpu(k, got);
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << "threw " << errc_name(e.code()) << ": " << e.what();
  }
  return check_custom_scan(k, got, custom_scan_reference(k));
}

TEST(CpuTensorScanCustom, RandomCasesMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  constexpr int kPerFunctor = 48, kLongEvery = 4;
  int cases = 0, in_place = 0, exclusive = 0, long_axes = 0;
  for_each_scan_custom_case([&](auto tag) {
    using C = typename decltype(tag)::type;
    for (int i = 0; i < kPerFunctor; ++i, ++cases) {
      const bool long_axis = i % kLongEvery == kLongEvery - 1;
      const CustomScanCase<C> k = make_custom_scan_case<C>(rng, /*max_numel=*/3000, long_axis);
      in_place += k.c.in_place;
      exclusive += k.c.exclusive;
      long_axes += long_axis;
      const auto r = run_and_check(k);
      if (!r) {
        ADD_FAILURE() << "case " << cases << ": " << k.describe() << "\n  plan " << plan_of(k.c) << "\n  " << r.message();
        return;
      }
    }
  });
  EXPECT_EQ(cases, kScanCustomCases * kPerFunctor);
  EXPECT_GT(in_place, 0);
  EXPECT_GT(exclusive, cases / 4);
  EXPECT_GT(long_axes, 0);
}

// Every family of the planner, by hand, with the non-commutative functor: matrices along each
// axis (rows-contiguous, columns, strided), lines of a few elements, and long lines that the
// engine cuts into chunks (and the blocked scan into kReduceChunk chunks).
TEST(CpuTensorScanCustom, EveryFamilyFoldsLeftToRight) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::vector<std::vector<std::int64_t>> shapes = {{5000, 2}, {3000, 4},  {33, 1024}, {3, 5000},
                                                         {7, 300, 3}, {2, 9000, 5}, {1, 3 * cpu::detail::kReduceChunk + 7}};
  int checked = 0;
  for (const auto& shape : shapes)
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis)
      for (bool exclusive : {false, true})
        for (bool transposed_out : {false, true}) {
          CustomScanCase<AffineU64> k;
          k.c.op = ReduceOp::max;
          k.c.dtype = k.c.out_dtype = DType::u64;
          k.c.in = row_major(shape);
          k.c.out = transposed_out ? make_layout(shape, rng, true, false, false, 1) : row_major(shape, 1);
          k.c.axis = axis;
          k.c.exclusive = exclusive;
          k.c.in_bytes.resize(static_cast<std::size_t>(k.c.in.storage) * sizeof(std::uint64_t));
          k.c.out_bytes.assign(static_cast<std::size_t>(k.c.out.storage + 4) * sizeof(std::uint64_t), 0xFF);
          redraw_values(k, rng);
          const auto r = run_and_check(k);
          EXPECT_TRUE(r) << k.describe() << "\n  plan " << plan_of(k.c) << "\n  " << r.message();
          ++checked;
        }
  EXPECT_EQ(checked, 2 * 2 * (2 + 2 + 2 + 2 + 3 + 3 + 2));
}

// ---- order: fixed, independent of the thread count ----------------------------------------------------

// Float addition rounds differently in every bracketing, so equal bits mean an equal fold order.
TEST(CpuTensorScanCustom, SameBitsForAnyThreadCount) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t a = 1024, b = 1536;  // 6 MiB of f32: the calls run on the pool
  std::vector<float> data(static_cast<std::size_t>(a * b));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(r.unit(i) * 2 - 1) * (i % 97 == 0 ? 4096.0f : 1.0f);
  const TensorView rm = TensorView::contiguous(data.data(), DType::f32, {a, b});
  const TensorView tr = TensorView::strided(data.data(), DType::f32, {b, a}, {1, b});
  const TensorView long_lines = TensorView::contiguous(data.data(), DType::f32, {a * b / 3, 3});
  struct Call {
    TensorView in;
    int axis;
  };
  const std::vector<Call> calls = {{rm, -1}, {rm, 0}, {tr, 0}, {tr, 1}, {long_lines, 0}};
  for (const Call& c : calls) {
    auto run = [&](int threads) {
      ForcedThreads forced(threads);
      std::vector<float> out(data.size(), -1.0f);
      cpu::exclusive_scan_custom(c.in, c.axis, TensorView::contiguous(out.data(), DType::f32, c.in.shape, c.in.rank), Plus{},
                                 0.0f, 0.25f);
      return out;
    };
    const auto one = run(1);
    for (int threads : {2, 7})
      EXPECT_TRUE(std::memcmp(run(threads).data(), one.data(), one.size() * sizeof(float)) == 0)
          << "with " << threads << " threads, plan " << detail::describe_scan_plan(detail::plan_scan(c.in, c.axis));
  }
}

// Lines back to back with stride 1 are the array form's blocked custom scan, bit for bit.
TEST(CpuTensorScanCustom, ContiguousRowsAreBitwiseTheBlockedScan) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t rows = 3, len = 2 * cpu::detail::kReduceChunk + 12345;
  std::vector<float> data(static_cast<std::size_t>(rows * len));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(r.unit(i) * 2 - 1);
  std::vector<float> got(data.size()), want(data.size());
  cpu::inclusive_scan_custom(TensorView::contiguous(data.data(), DType::f32, {rows, len}), 1,
                             TensorView::contiguous(got.data(), DType::f32, {rows, len}), Plus{}, 0.0f);
  cpu::inclusive_scan_custom_blocked(data.data(), rows * len, want.data(), len, Plus{}, 0.0f);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
}

TEST(CpuTensorScanCustom, EmptyAndTinyTensors) {
  // Empty: nothing written, null data fine.
  EXPECT_NO_THROW(cpu::inclusive_scan_custom(TensorView::contiguous(nullptr, DType::i64, {5, 0}), 1,
                                             TensorView::contiguous(nullptr, DType::i64, {5, 0}), SaturatingAdd{},
                                             std::int64_t{0}));
  EXPECT_NO_THROW(cpu::exclusive_scan_custom(TensorView::contiguous(nullptr, DType::i32, {0, 3}), 0,
                                             TensorView::contiguous(nullptr, DType::i32, {0, 3}), BitwiseAnd{},
                                             std::int32_t{-1}, std::int32_t{5}));
  // Rank 0: one element.
  std::uint64_t x = PackedThenApply<std::uint64_t>::pack(3, 4), y = 0;
  const std::uint64_t id = PackedThenApply<std::uint64_t>::pack(1, 0), init = PackedThenApply<std::uint64_t>::pack(5, 6);
  cpu::inclusive_scan_custom(TensorView::contiguous(&x, DType::u64, {}), 0, TensorView::contiguous(&y, DType::u64, {}),
                             PackedThenApply<std::uint64_t>{}, id);
  EXPECT_EQ(y, x);
  cpu::exclusive_scan_custom(TensorView::contiguous(&x, DType::u64, {}), -1, TensorView::contiguous(&y, DType::u64, {}),
                             PackedThenApply<std::uint64_t>{}, id, init);
  EXPECT_EQ(y, init);
  // A 2 x 2 matrix, both axes, in place: f then g composes as g(f(x)).
  using P = PackedThenApply<std::uint64_t>;
  const std::uint64_t m0[4] = {P::pack(2, 1), P::pack(3, 0), P::pack(1, 5), P::pack(7, 2)};
  std::uint64_t m[4];
  std::copy(m0, m0 + 4, m);
  const TensorView mv = TensorView::contiguous(m, DType::u64, {2, 2});
  cpu::inclusive_scan_custom(mv, 1, mv, P{}, id);
  EXPECT_EQ(m[1], P::pack(3 * 2, 3 * 1 + 0));  // x -> 3 (2x + 1)
  EXPECT_EQ(m[3], P::pack(7 * 1, 7 * 5 + 2));  // x -> 7 (x + 5) + 2
  std::copy(m0, m0 + 4, m);
  cpu::inclusive_scan_custom(mv, 0, mv, P{}, id);
  EXPECT_EQ(m[2], P::pack(1 * 2, 1 * 1 + 5));  // x -> (2x + 1) + 5
  EXPECT_EQ(m[3], P::pack(7 * 3, 7 * 0 + 2));  // x -> 7 (3x) + 2
}

// ---- bad arguments: the right Errc, nothing written ---------------------------------------------------

TEST(CpuTensorScanCustom, BadArgumentsThrowAndWriteNothing) {
  using Bytes = std::vector<unsigned char, AlignedAllocator<unsigned char>>;
  Bytes in(1024), out(1024, 0xFF);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(mix64(i) >> 56);
  const Bytes in0 = in, out0 = out;
  std::vector<ScanCustomBadCall> calls = scan_custom_bad_calls(in.data(), out.data(), Device::host());
  auto* x = reinterpret_cast<float*>(in.data());
  const Device gpu = Device::cuda(0);
  calls.push_back(ScanCustomBadCall{"input view of a CUDA device", Errc::wrong_memory, DType::f32,
                                    TensorView::contiguous(x, DType::f32, {4, 16}, gpu), 1,
                                    TensorView::contiguous(out.data(), DType::f32, {4, 16})});
  calls.push_back(ScanCustomBadCall{"out view of a CUDA device", Errc::wrong_memory, DType::f32,
                                    TensorView::contiguous(x, DType::f32, {4, 16}), 1,
                                    TensorView::contiguous(out.data(), DType::f32, {4, 16}, gpu)});
  for (const ScanCustomBadCall& c : calls) {
    SCOPED_TRACE(c.what + " (as " + dtype_name(c.as) + ", want Error " + errc_name(c.want) + ")");
    bool called = false;
    visit_scan_custom_case(c.as, [&](auto tag) {
      using C = typename decltype(tag)::type;
      called = true;
      EXPECT_TRUE(throws_errc(c.want, [&] { cpu::inclusive_scan_custom(c.in, c.axis, c.out, typename C::F{}, C::identity()); }));
      EXPECT_TRUE(throws_errc(c.want, [&] {
        cpu::exclusive_scan_custom(c.in, c.axis, c.out, typename C::F{}, C::identity(), C::identity());
      }));
    });
    EXPECT_TRUE(called) << "no functor for dtype " << dtype_name(c.as);
    EXPECT_TRUE(in == in0) << "the input buffer changed";
    EXPECT_TRUE(out == out0) << "the output buffer was written";
    in = in0;
    out = out0;
  }
  EXPECT_GE(calls.size(), 20u);
}

}  // namespace
}  // namespace foldkit::test::tscan
