// foldkit::cpu::reduce_custom over tensors (foldkit/tensor_reduce_custom.hpp) with user functors,
// on the problems of tests/common/tensor_random_cases.hpp (through tensor_custom_cases.hpp: one
// exact, associative and commutative functor per dtype, values and guards redrawn for it): every
// edge shape and 60 random problems per functor against the logical-index reference, bytes outside
// the output views still poisoned, the input unchanged; the same bits for any thread count with a
// non-associative functor (float +), and bit for bit the full-array reduce_custom on contiguous
// rows; empty reduced extents write the identity; bad arguments throw and write nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iostream>
#include <vector>

#include "common/tensor_custom_cases.hpp"
#include "cpu/parallel.hpp"
#include "support/forced_threads.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/tensor_reduce_custom.hpp"
#include "support/custom_functors.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

constexpr int kMaxReported = 20;  // failures printed in full per test; all are counted

template <class C> Outcome run_cpu(RandomProblem& p) {
  const Device host = Device::host();
  try {
    cpu::reduce_custom(p.input_view(p.storage, host), p.axes, p.keepdims, p.out_view(p.out->bytes.data(), host),
                       typename C::F{}, C::identity());
  } catch (const Error& e) {
    return Outcome{true, e.code(), e.what()};
  }
  return Outcome{};
}

template <class C> void run_and_check(RandomProblem& p, CoverageSummary& summary) {
  const auto* storage = static_cast<const unsigned char*>(p.storage);
  const std::vector<unsigned char> before(storage, storage + p.storage_bytes);
  const Outcome outcome = run_cpu<C>(p);
  summary.add(p);
  ::testing::AssertionResult r = check_custom_problem<C>(p, outcome);
  if (r && std::memcmp(before.data(), p.storage, p.storage_bytes) != 0) r = ::testing::AssertionFailure() << "the input's storage changed";
  if (!r && ++summary.failures <= kMaxReported) ADD_FAILURE() << C::kName << ": " << p.describe() << "\n  " << r.message();
}

RandomCaseLimits cpu_limits() {
  RandomCaseLimits l;
  l.small_numel = 4096;
  l.big_numel = 1 << 18;
  return l;
}

TEST(CpuTensorCustom, EdgeShapesMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  CoverageSummary summary;
  int id = 0;
  const std::vector<ShapeSpec> specs = edge_specs();
  for_each_custom_case([&](auto tag) {
    using C = typename decltype(tag)::type;
    for (const ShapeSpec& spec : specs) {
      RandomProblem p = make_custom_problem<C>(spec, rng, id++);
      run_and_check<C>(p, summary);
    }
  });
  std::cout << "[ CpuTensorCustom.EdgeShapes ]\n" << summary.text();
  EXPECT_EQ(summary.failures, 0);
  EXPECT_TRUE(summary.reached_every_structure(9));
}

TEST(CpuTensorCustom, RandomProblemsMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  CoverageSummary summary;
  constexpr int kPerFunctor = 60;
  int id = 0;
  for_each_custom_case([&](auto tag) {
    using C = typename decltype(tag)::type;
    for (int i = 0; i < kPerFunctor; ++i) {
      RandomProblem p = make_custom_problem<C>(random_spec(random_regime(rng), cpu_limits(), rng), rng, id++);
      run_and_check<C>(p, summary);
    }
  });
  std::cout << "[ CpuTensorCustom.RandomProblems ]\n" << summary.text();
  EXPECT_EQ(summary.failures, 0);
  EXPECT_EQ(summary.cases, 9 * kPerFunctor);
  EXPECT_TRUE(summary.reached_every_structure(5));
}

// ---- order: fixed chunks, independent of the thread count -----------------------------------------

// Float addition rounds differently in every order, so equal bits mean an equal fold order.
TEST(CpuTensorCustom, SameBitsForAnyThreadCount) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t a = 1024, b = 1536;  // 6 MiB of f32: the calls run on the pool
  std::vector<float> data(static_cast<std::size_t>(a * b));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(r.unit(i) * 2 - 1) * (i % 97 == 0 ? 4096.0f : 1.0f);
  const TensorView rm = TensorView::contiguous(data.data(), DType::f32, {a, b});
  const TensorView tr = TensorView::strided(data.data(), DType::f32, {b, a}, {1, b});
  const TensorView long_rows = TensorView::contiguous(data.data(), DType::f32, {3, a * b / 3});
  struct Call { TensorView in; std::vector<int> axes; };
  const std::vector<Call> calls = {{rm, {-1}}, {rm, {0}}, {tr, {}}, {tr, {0}}, {tr, {-1}}, {long_rows, {1}}, {long_rows, {0}}};
  for (const Call& c : calls) {
    const ReduceOutput shape = cpu::reduce_output_shape(ReduceOp::max, c.in, c.axes, false);
    auto run = [&](int threads) {
      ForcedThreads forced(threads);
      std::vector<unsigned char> out(static_cast<std::size_t>(shape.numel()) * sizeof(float), 0xFF);
      cpu::reduce_custom(c.in, c.axes, false, TensorView::contiguous(out.data(), DType::f32, shape.shape, shape.rank), Plus{}, 0.0f);
      return out;
    };
    const auto one = run(1);
    for (int threads : {2, 7})
      EXPECT_TRUE(run(threads) == one) << "with " << threads << " threads, plan "
                                       << detail::describe_plan(detail::plan_reduce(c.in, c.axes, false));
  }
}

// A row that is one contiguous run folds exactly as the full-array reduce_custom folds an array
// (chunks of kReduceChunk, left to right), also across several chunks.
TEST(CpuTensorCustom, ContiguousRowsMatchTheArrayForm) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t rows = 3, len = 2 * cpu::detail::kReduceChunk + 12345;
  std::vector<float> data(static_cast<std::size_t>(rows * len));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(r.unit(i) * 2 - 1);
  std::vector<float> out(static_cast<std::size_t>(rows));
  cpu::reduce_custom(TensorView::contiguous(data.data(), DType::f32, {rows, len}), {1}, false,
                     TensorView::contiguous(out.data(), DType::f32, {rows}), Plus{}, 0.0f);
  for (std::int64_t row = 0; row < rows; ++row) {
    const float want = cpu::reduce_custom(data.data() + row * len, len, Plus{}, 0.0f);
    EXPECT_TRUE(bits_equal(out[static_cast<std::size_t>(row)], want)) << "row " << row;
  }
}

TEST(CpuTensorCustom, EmptyReducedExtentWritesTheIdentity) {
  std::vector<std::int64_t> out64(5, 7);
  cpu::reduce_custom(TensorView::contiguous(nullptr, DType::i64, {5, 0}), {1}, false,
                     TensorView::contiguous(out64.data(), DType::i64, {5}), SaturatingAdd{}, std::int64_t{0});
  for (std::int64_t v : out64) EXPECT_EQ(v, 0);
  std::vector<std::int32_t> out32(6, 7);
  std::vector<std::int32_t> none;
  cpu::reduce_custom(TensorView::contiguous(none.data(), DType::i32, {0, 2, 3}), {0}, true,
                     TensorView::contiguous(out32.data(), DType::i32, {1, 2, 3}), BitwiseAnd{}, std::int32_t{-1});
  for (std::int32_t v : out32) EXPECT_EQ(v, -1);
}

// ---- bad arguments: the right Errc, nothing written -------------------------------------------------

template <class C> void call_custom(const CustomBadCall& c) {
  cpu::reduce_custom(c.in, c.axes, c.keepdims, c.out, typename C::F{}, C::identity());
}

TEST(CpuTensorCustom, BadArgumentsThrowAndWriteNothing) {
  using Bytes = std::vector<unsigned char, AlignedAllocator<unsigned char>>;
  Bytes in(kBadInBytes), out(kBadOutBytes, 0xFF);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(mix64(i) >> 56);
  const Bytes in0 = in, out0 = out;
  std::vector<CustomBadCall> calls = custom_bad_calls(in.data(), out.data(), Device::host());
  // The CPU backend's memory space: host views only, also without elements.
  auto* x0 = reinterpret_cast<float*>(in.data()) + 256;
  const Device gpu = Device::cuda(0);
  calls.push_back(CustomBadCall{"input view of a CUDA device", Errc::wrong_memory, DType::f32,
                                TensorView::contiguous(x0, DType::f32, {4, 16}, gpu), {1}, false,
                                TensorView::contiguous(out.data(), DType::f32, {4})});
  calls.push_back(CustomBadCall{"empty input view of a CUDA device", Errc::wrong_memory, DType::f32,
                                TensorView::contiguous(nullptr, DType::f32, {4, 0}, gpu), {1}, false,
                                TensorView::contiguous(out.data(), DType::f32, {4})});
  calls.push_back(CustomBadCall{"out view of a CUDA device", Errc::wrong_memory, DType::f32,
                                TensorView::contiguous(x0, DType::f32, {4, 16}), {1}, false,
                                TensorView::contiguous(out.data(), DType::f32, {4}, gpu)});
  int checked = 0;
  for (const CustomBadCall& c : calls) {
    SCOPED_TRACE(custom_bad_call_text(c));
    bool called = false;
    visit_custom_case(c.as, [&](auto tag) {
      called = true;
      EXPECT_TRUE(throws_errc(c.want, [&] { call_custom<typename decltype(tag)::type>(c); }));
    });
    EXPECT_TRUE(called) << "no functor for dtype " << dtype_name(c.as);
    EXPECT_TRUE(in == in0) << "the input buffer changed";
    EXPECT_TRUE(out == out0) << "the output buffer was written";
    in = in0;
    out = out0;
    ++checked;
  }
  EXPECT_GE(checked, 60);
}

// The table's base views with valid arguments do run (so its failures are the arguments' fault).
TEST(CpuTensorCustom, TheTablesBaseCallIsValid) {
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i % 7) - (i == 37 ? 9.0f : 0.0f);
  float rows[4];
  cpu::reduce_custom(TensorView::contiguous(x.data(), DType::f32, {4, 16}), {1}, false, TensorView::contiguous(rows, DType::f32, {4}),
                     MaxAbs{}, 0.0f);
  EXPECT_EQ(rows[0], 6.0f);
  EXPECT_EQ(rows[1], 6.0f);
  EXPECT_EQ(rows[2], 7.0f);  // element 37 is 37 % 7 - 9 = -7
  EXPECT_EQ(rows[3], 6.0f);
}

}  // namespace
}  // namespace foldkit::test
