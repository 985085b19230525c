// foldkit::cpu::inclusive_scan / exclusive_scan over tensors (foldkit/tensor_scan.hpp) against
// the independent reference of tests/common/tensor_scan_reference.hpp (shared with the CUDA
// tests): random shapes, axes, layouts, in place, every op x dtype, NaNs, exclusive inits; then
// the planner's families, the core's blocked scan for contiguous rows (bit for bit), the same
// bits for any thread count, and bad arguments (the right Errc, nothing written).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/tensor_scan_reference.hpp"
#include "cpu/parallel.hpp"
#include "support/forced_threads.hpp"
#include "foldkit/detail/scan_plan.hpp"
#include "foldkit/scan.hpp"
#include "foldkit/tensor_scan.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test::tscan {
namespace {

// The CPU backend as the cases' runner: views straight over host copies of the buffers.
void cpu_run(const ScanCase& c, std::vector<unsigned char>& result) {
  std::vector<unsigned char> in = c.in_bytes;
  const TensorView iv = c.in.view(in.data(), c.dtype);
  if (c.in_place) {
    struct Back {
      std::vector<unsigned char>& from;
      std::vector<unsigned char>& to;
      ~Back() { to = from; }
    } back{in, result};
    if (c.exclusive) cpu::exclusive_scan(c.op, iv, c.axis, iv, c.init);
    else cpu::inclusive_scan(c.op, iv, c.axis, iv);
    return;
  }
  result = c.out_bytes;
  const TensorView ov = c.out.view(result.data(), c.out_dtype);
  if (c.exclusive) cpu::exclusive_scan(c.op, iv, c.axis, ov, c.init);
  else cpu::inclusive_scan(c.op, iv, c.axis, ov);
}

TEST(CpuTensorScan, RandomCasesMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const int cases = run_random_cases(rng, /*count=*/16, /*long_every=*/4, /*max_numel=*/3000, &cpu_run);
  EXPECT_EQ(cases, 16 * 4 * 8);
}

// Narrow and wide matrices along both axes, and 3-D middle axes: the shapes of the benchmark's
// families, small, every op on f32 and i32.
TEST(CpuTensorScan, MatricesAlongEachAxis) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::vector<std::vector<std::int64_t>> shapes = {{5000, 2}, {3000, 4}, {1000, 16}, {33, 1024},
                                                         {3, 5000},  {7, 300, 3}, {2, 2049, 5}};
  for (const auto& shape : shapes)
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis)
      for (bool exclusive : {false, true}) {
        auto one = [&](auto op, auto tag) {
          constexpr ReduceOp kOp = decltype(op)::value;
          using T = decltype(tag);
          using R = scan_result_t<kOp, T>;
          ScanCase c;
          c.op = kOp;
          c.dtype = dtype_v<T>;
          c.out_dtype = dtype_v<R>;
          c.in = row_major(shape);
          c.out = row_major(shape, 1);
          c.axis = axis;
          c.exclusive = exclusive;
          c.init = Scalar(static_cast<std::int32_t>(kOp == ReduceOp::prod ? 1 : 3));
          const CounterRng values = rng.counter();
          c.in_bytes.resize(static_cast<std::size_t>(c.in.storage) * sizeof(T));
          for (std::int64_t i = 0; i < c.in.storage; ++i) {
            const T v = scan_value<T>(kOp, values, static_cast<std::uint64_t>(i), kOp == ReduceOp::max);
            std::memcpy(c.in_bytes.data() + i * static_cast<std::int64_t>(sizeof(T)), &v, sizeof(T));
          }
          c.out_bytes.assign(static_cast<std::size_t>(c.out.storage + 4) * sizeof(R), 0xFF);
          EXPECT_TRUE((check_case<kOp, T>(c, &cpu_run))) << c.describe() << " plan " << plan_of(c);
        };
        for_each_scan_op([&](auto op) {
          one(op, float{});
          one(op, std::int32_t{});
        });
      }
}

// ---- the planner --------------------------------------------------------------------------------

TEST(CpuTensorScan, PlanFamilies) {
  float x = 0;
  auto family = [&](std::initializer_list<std::int64_t> shape, std::initializer_list<std::int64_t> in_strides,
                    std::initializer_list<std::int64_t> out_strides, int axis) {
    const TensorView in = TensorView::strided(&x, DType::f32, shape, in_strides);
    const std::vector<std::int64_t> os(out_strides);
    const auto p = detail::plan_scan(in, axis, os.data());
    return std::string(detail::scan_family_name(p.family)) + " | " + detail::describe_scan_plan(p);
  };
  auto starts = [](const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; };
  // A row-major matrix along its last axis: one blocked scan of the flat array.
  EXPECT_TRUE(starts(family({1000000, 2}, {2, 1}, {2, 1}, 1), "rows-contiguous")) << family({1000000, 2}, {2, 1}, {2, 1}, 1);
  EXPECT_TRUE(starts(family({4, 5, 6}, {30, 6, 1}, {30, 6, 1}, -1), "rows-contiguous"));
  // Along dim 0: columns, the kept dims merged into one.
  EXPECT_TRUE(starts(family({1000000, 2}, {2, 1}, {2, 1}, 0), "columns"));
  EXPECT_EQ(family({64, 8, 4}, {32, 4, 1}, {32, 4, 1}, 0),
            "columns | scan [64 x (in 32, out 32)] kept [32 x (in 1, out 1)] family=columns");
  // Padded rows along the last axis: rows, not contiguous.
  EXPECT_TRUE(starts(family({10, 7}, {8, 1}, {7, 1}, 1), "rows |"));
  // A transposed input along its (now contiguous) dim 0 into a row-major output: strided.
  EXPECT_TRUE(starts(family({7, 10}, {1, 7}, {10, 1}, 0), "strided"));
  // Size-1 dims vanish; a length-1 axis counts as contiguous rows.
  EXPECT_EQ(family({1, 6, 1}, {6, 1, 1}, {6, 1, 1}, 1), "rows-contiguous | scan [6 x (in 1, out 1)] kept [] family=rows-contiguous");
  EXPECT_TRUE(starts(family({6, 1}, {1, 1}, {1, 1}, 1), "rows-contiguous"));
  EXPECT_TRUE(starts(family({6, 0}, {1, 1}, {1, 1}, 0), "empty"));
  // Rank 0: one line of one element.
  const TensorView scalar = TensorView::contiguous(&x, DType::f32, {});
  EXPECT_EQ(detail::plan_scan(scalar, -1).family, detail::ScanFamily::rows_contiguous);
}

// ---- contiguous rows are the core's blocked scan, bit for bit ------------------------------------

TEST(CpuTensorScan, ContiguousRowsAreBitwiseTheBlockedScan) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (const auto& [rows, len] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1000, 3}, {7, 40000}, {3, 70001}}) {
    std::vector<float> data(static_cast<std::size_t>(rows * len));
    const CounterRng r = rng.counter();
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(r.unit(i) * 2 - 1);
    std::vector<float> got(data.size(), -1.0f), want(data.size(), -2.0f);
    cpu::inclusive_scan(ReduceOp::sum, TensorView::contiguous(data.data(), DType::f32, {rows, len}), -1,
                        TensorView::contiguous(got.data(), DType::f32, {rows, len}));
    cpu::inclusive_scan_blocked<ReduceOp::sum>(data.data(), rows * len, want.data(), len);
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << rows << " x " << len;
  }
}

// ---- the thread count never changes a bit ----------------------------------------------------------

TEST(CpuTensorScan, SameBitsForAnyThreadCount) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t a = 3000, b = 700;  // 8 MiB of f32
  std::vector<float> data(static_cast<std::size_t>(a * b));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(r.unit(i) * 2 - 1) * (i % 97 == 0 ? 4096.0f : 1.0f);
  struct Call {
    TensorView in;
    int axis;
    std::vector<std::int64_t> out_shape;
  };
  const std::vector<Call> calls = {
      {TensorView::contiguous(data.data(), DType::f32, {a, b}), 0, {a, b}},        // columns
      {TensorView::contiguous(data.data(), DType::f32, {a * b / 2, 2}), 0, {a * b / 2, 2}},  // two long columns: chunked
      {TensorView::strided(data.data(), DType::f32, {b, a}, {1, b}), 0, {b, a}},   // strided
      {TensorView::strided(data.data(), DType::f32, {b, a}, {1, b}), 1, {b, a}},   // strided, long lines
      {TensorView::strided(data.data(), DType::f32, {a, b - 1}, {b, 1}), 1, {a, b - 1}},  // padded rows
      {TensorView::strided(data.data(), DType::f32, {4, a * b / 4 - 9}, {a * b / 4, 1}), 1, {4, a * b / 4 - 9}}};  // few long rows
  for (const Call& c : calls) {
    auto run = [&](int threads) {
      ForcedThreads forced(threads);
      std::vector<float> out(static_cast<std::size_t>(c.out_shape[0] * c.out_shape[1]), -1.0f);
      cpu::inclusive_scan(ReduceOp::sum, c.in, c.axis,
                          TensorView::contiguous(out.data(), DType::f32, c.out_shape.data(), 2));
      return out;
    };
    const auto one = run(1);
    for (int threads : {2, 7}) {
      const auto other = run(threads);
      EXPECT_EQ(0, std::memcmp(other.data(), one.data(), one.size() * sizeof(float)))
          << threads << " threads, plan " << detail::describe_scan_plan(detail::plan_scan(c.in, c.axis));
    }
  }
}

// ---- bad arguments: the right Errc, nothing written ------------------------------------------------

TEST(CpuTensorScan, BadArgumentsThrowAndWriteNothing) {
  std::vector<float> data(64, 1.0f);
  std::vector<unsigned char> buf(1024, 0xFF);
  void* o = buf.data();
  const TensorView in = TensorView::contiguous(data.data(), DType::f32, {4, 16});
  const TensorView out = TensorView::contiguous(o, DType::f32, {4, 16});
  const std::vector<float> data_before = data;
  auto expect = [&](Errc want, auto&& f, const char* what) {
    EXPECT_TRUE(throws_errc(want, f)) << what;
    EXPECT_TRUE(std::all_of(buf.begin(), buf.end(), [](unsigned char c) { return c == 0xFF; })) << what << " wrote";
    EXPECT_TRUE(data == data_before) << what << " wrote into the input";
  };
  const std::int64_t shape9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  TensorView rank9 = TensorView::contiguous(data.data(), DType::f32, shape9, 8);
  rank9.rank = 9;
  TensorView out9 = TensorView::contiguous(o, DType::f32, shape9, 8);
  out9.rank = 9;
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, rank9, 0, out9); }, "rank 9");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, in, 2, out); }, "axis 2 of rank 2");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, in, -3, out); }, "axis -3 of rank 2");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, TensorView::contiguous(data.data(), DType::f32, {}), 1, TensorView::contiguous(o, DType::f32, {})); }, "axis 1 of rank 0");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, in, 1, TensorView::contiguous(o, DType::f32, {16, 4})); }, "wrong out shape");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, in, 1, TensorView::contiguous(o, DType::f32, {4, 16, 1})); }, "wrong out rank");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, in, 1, TensorView::contiguous(o, DType::f64, {4, 16})); }, "wrong out dtype");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, TensorView::contiguous(data.data(), DType::i32, {4, 16}), 1, TensorView::contiguous(o, DType::i32, {4, 16})); }, "i32 sum into i32");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, in, 1, TensorView::strided(o, DType::f32, {4, 16}, {0, 1})); }, "zero out stride");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, in, 1, TensorView::strided(o, DType::f32, {4, 16}, {8, 1})); }, "overlapping out strides");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, TensorView::contiguous(data.data(), DType::f32, {4, 8}), 1, TensorView::contiguous(data.data() + 16, DType::f32, {4, 8})); }, "out overlaps the input");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, TensorView::contiguous(data.data(), DType::f32, {4, 8}), 1, TensorView::strided(data.data(), DType::f32, {4, 8}, {1, 4})); }, "in place with other strides");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, TensorView::contiguous(data.data(), DType::i32, {4, 8}), 1, TensorView::contiguous(data.data(), DType::i64, {4, 8})); }, "in place with a wider dtype");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, TensorView::strided(data.data(), DType::f32, {4, 16}, {-16, 1}), 1, out); }, "negative input stride");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, TensorView::contiguous(nullptr, DType::f32, {4, 16}), 1, out); }, "null input data");
  expect(Errc::invalid_argument, [&] { cpu::inclusive_scan(ReduceOp::sum, in, 1, TensorView::contiguous(nullptr, DType::f32, {4, 16})); }, "null out data");
  // Inits that do not convert exactly to the result dtype.
  expect(Errc::invalid_argument, [&] { cpu::exclusive_scan(ReduceOp::sum, in, 1, out, Scalar(0.1)); }, "init 0.1 (f64) into f32");
  expect(Errc::invalid_argument, [&] { cpu::exclusive_scan(ReduceOp::sum, in, 1, out, Scalar(std::int64_t{(1 << 24) + 1})); }, "init 2^24 + 1 into f32");
  expect(Errc::invalid_argument, [&] { cpu::exclusive_scan(ReduceOp::max, TensorView::contiguous(data.data(), DType::u32, {4, 16}), 1, TensorView::contiguous(o, DType::u32, {4, 16}), Scalar(-1)); }, "init -1 into u32");
  expect(Errc::invalid_argument, [&] { cpu::exclusive_scan(ReduceOp::sum, TensorView::contiguous(data.data(), DType::i32, {4, 8}), 1, TensorView::contiguous(o, DType::i64, {4, 8}), Scalar(2.5)); }, "init 2.5 into i64");
  // Memory spaces.
  expect(Errc::wrong_memory, [&] { cpu::inclusive_scan(ReduceOp::sum, in, 1, TensorView::contiguous(o, DType::f32, {4, 16}, Device::cuda(0))); }, "device out view");
  expect(Errc::wrong_memory, [&] { cpu::inclusive_scan(ReduceOp::sum, TensorView::contiguous(data.data(), DType::f32, {4, 16}, Device::cuda(0)), 1, out); }, "device input view");
  // Ops that are not scans.
  expect(Errc::unsupported, [&] { cpu::inclusive_scan(ReduceOp::mean, in, 1, out); }, "mean");
  expect(Errc::unsupported, [&] { cpu::inclusive_scan(ReduceOp::argmax, in, 1, TensorView::contiguous(o, DType::i64, {4, 16})); }, "argmax");
  expect(Errc::unsupported, [&] { cpu::inclusive_scan(static_cast<ReduceOp>(42), in, 1, out); }, "unknown op");
}

// Edge cases by hand: empty tensors (null data allowed), a rank-0 scalar, a length-1 axis, in place.
TEST(CpuTensorScan, EdgeCases) {
  // Empty: nothing written, null pointers fine, but the init is still checked.
  EXPECT_NO_THROW(cpu::inclusive_scan(ReduceOp::max, TensorView::contiguous(nullptr, DType::f32, {0, 5}), 0,
                                      TensorView::contiguous(nullptr, DType::f32, {0, 5})));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [] {
    cpu::exclusive_scan(ReduceOp::sum, TensorView::contiguous(nullptr, DType::f32, {3, 0}), 1,
                        TensorView::contiguous(nullptr, DType::f32, {3, 0}), Scalar(0.1));
  }));
  // Rank 0.
  float x = 2.5f, y = -1.0f;
  cpu::inclusive_scan(ReduceOp::prod, TensorView::contiguous(&x, DType::f32, {}), 0, TensorView::contiguous(&y, DType::f32, {}));
  EXPECT_EQ(y, 2.5f);
  cpu::exclusive_scan(ReduceOp::sum, TensorView::contiguous(&x, DType::f32, {}), -1, TensorView::contiguous(&y, DType::f32, {}), Scalar(7));
  EXPECT_EQ(y, 7.0f);
  // i32 -> i64 widening, a length-1 axis, exclusive.
  std::int32_t v[6] = {1, 2, 3, 4, 5, 6};
  std::int64_t w[6];
  std::memset(w, 0xFF, sizeof w);
  cpu::exclusive_scan(ReduceOp::sum, TensorView::contiguous(v, DType::i32, {6, 1}), 1, TensorView::contiguous(w, DType::i64, {6, 1}), Scalar(-4));
  for (std::int64_t e : w) EXPECT_EQ(e, -4);
  // In place, along dim 0 of a 3 x 2 matrix.
  float m[6] = {1, 2, 3, 4, 5, 6};
  const TensorView mv = TensorView::contiguous(m, DType::f32, {3, 2});
  cpu::inclusive_scan(ReduceOp::sum, mv, 0, mv);
  const float want[6] = {1, 2, 4, 6, 9, 12};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(m[i], want[i]) << i;
}

}  // namespace
}  // namespace foldkit::test::tscan
