// foldkit::cpu::reduce over tensors (foldkit/tensor_reduce.hpp) against an independent
// reference (tests/common/tensor_reference.hpp, shared with the CUDA tests): a naive walk over
// the LOGICAL index space of the input (flat row-major index -> output index and position in
// the reduced space), accumulating in long double / wrapping
// uint64, never through the planner. Random shapes, axes, keepdims, input layouts (transposed,
// stepped, broadcast, offset) and output layouts; outputs are poisoned (0xFF) and every byte the
// output view does not cover must stay poisoned.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/parallel.hpp"
#include "support/forced_threads.hpp"
#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "foldkit/tuning/cpu_tensor_reduce_tuning.hpp"
#include "support/random_arrays.hpp"
#include "support/reference.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"
#include "common/tensor_reference.hpp"

namespace foldkit::test {
namespace {

// The CPU backend as random_case's runner: views straight over the host buffers.
template <ReduceOp Op> struct CpuRunner {
  template <class T>
  void operator()(const std::vector<T>& storage, const Layout& in, const std::vector<int>& axes, bool keepdims,
                  OutBuffer& out, DType out_dtype, OutBuffer* vals) const {
    const TensorView view = in.view(storage.data(), dtype_v<T>);
    if (vals != nullptr) cpu::arg_reduce(Op, view, axes, keepdims, out.view(out_dtype), vals->view(dtype_v<T>));
    else cpu::reduce(Op, view, axes, keepdims, out.view(out_dtype));
  }
};

TEST(CpuTensorReduce, RandomCasesMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  int case_no = 0;
  constexpr int kCasesPerPair = 12;  // x 7 ops x 8 dtypes = 672 cases
  for (DType dt : kAllDTypes)
    visit_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      for_each_reduce_op([&](auto op) {
        for (int k = 0; k < kCasesPerPair; ++k) random_case<decltype(op)::value, T>(rng, case_no++, CpuRunner<decltype(op)::value>{});
      });
    });
}

// ---- rows that are one contiguous run equal the full-array reduction bit for bit --------------

template <ReduceOp Op, class T> void expect_rows_equal_core(std::int64_t rows, std::int64_t len, std::int64_t row_stride, Rng& rng) {
  std::vector<T> data(static_cast<std::size_t>(rows * row_stride + 1));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = from_double<T>(std::is_integral_v<T> ? static_cast<double>(r.in_range<std::int64_t>(i, 0, 1000)) : r.unit(i) * 2 - 1);
  const TensorView in = TensorView::strided(data.data(), dtype_v<T>, {rows, len}, {row_stride, 1});
  const DType rd = reduce_result_dtype(Op, dtype_v<T>);
  std::vector<unsigned char> out(static_cast<std::size_t>(rows) * dtype_size(rd), 0xFF);
  cpu::reduce(Op, in, {-1}, false, TensorView::contiguous(out.data(), rd, {rows}));
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto want = cpu::reduce<Op>(data.data() + i * row_stride, len);
    if constexpr (is_arg(Op)) {
      EXPECT_EQ(load<std::int64_t>(out.data(), i), want.index) << op_name(Op) << " row " << i << " len " << len;
    } else {
      EXPECT_TRUE(bits_equal(load<reduce_result_t<Op, T>>(out.data(), i), want)) << op_name(Op) << " row " << i << " len " << len;
    }
  }
}

TEST(CpuTensorReduce, ContiguousRowsAreBitwiseTheFullArrayReduction) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (const auto& [rows, len, pad] : std::vector<std::array<std::int64_t, 3>>{
           {5, 1, 0}, {7, 33, 0}, {3, 1000, 5}, {2, 32768, 0}, {3, 32769, 3}, {2, 3 * 32768 + 7, 1}}) {
    for_each_reduce_op([&](auto op) {
      constexpr ReduceOp kOp = decltype(op)::value;
      expect_rows_equal_core<kOp, float>(rows, len, len + pad, rng);
      expect_rows_equal_core<kOp, half>(rows, len, len + pad, rng);
      expect_rows_equal_core<kOp, std::int32_t>(rows, len, len + pad, rng);
      expect_rows_equal_core<kOp, double>(rows, len, len + pad, rng);
    });
  }
}

// Short rows (shorter than two rounds of the chunk kernel's lanes) and medium ones (up to 1024)
// of float sums and means are folded four rows at a time (src/cpu/tensor_reduce_cpu.cpp): every
// length up to past the short boundary, lengths around the medium one and the lanes' rounds, row
// counts that leave a remainder, padded rows, and values whose bits tell folds apart (signed
// zeros, infinities, NaNs with payloads, magnitudes that round differently).
TEST(CpuTensorReduce, ShortAndMediumFloatRowsAreBitwiseTheFullArrayReduction) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  std::vector<std::int64_t> lengths;
  for (std::int64_t len = 1; len <= 40; ++len) lengths.push_back(len);
  for (std::int64_t len : {47, 48, 49, 63, 64, 65, 100, 255, 256, 257, 1023, 1024, 1025, 1500}) lengths.push_back(len);
  for (const std::int64_t len : lengths) {
    for (const auto& [rows, pad] : {std::pair<std::int64_t, std::int64_t>{9, 0}, {6, 3}}) {
      const std::int64_t stride = len + pad;
      std::vector<float> data(static_cast<std::size_t>(rows * stride));
      const CounterRng r = rng.counter();
      for (std::size_t i = 0; i < data.size(); ++i) {
        const std::int64_t pick = r.in_range<std::int64_t>(i, 0, 40);
        float v = static_cast<float>((r.unit(i) * 2 - 1) * std::ldexp(1.0, static_cast<int>(pick % 24)));
        if (pick == 0) v = -0.0f;
        if (pick == 1) v = std::numeric_limits<float>::infinity();
        if (pick == 2) {
          const std::uint32_t nan_bits = 0x7fc00000u | static_cast<std::uint32_t>(i & 0xffff);
          std::memcpy(&v, &nan_bits, sizeof v);
        }
        data[i] = v;
      }
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean}) {
        std::vector<float> out(static_cast<std::size_t>(rows));
        cpu::reduce(op, TensorView::strided(data.data(), DType::f32, {rows, len}, {stride, 1}), {1}, false,
                    TensorView::contiguous(out.data(), DType::f32, {rows}));
        for (std::int64_t i = 0; i < rows; ++i) {
          const float want = op == ReduceOp::sum ? cpu::reduce<ReduceOp::sum>(data.data() + i * stride, len)
                                                 : cpu::reduce<ReduceOp::mean>(data.data() + i * stride, len);
          EXPECT_TRUE(bits_equal(out[static_cast<std::size_t>(i)], want)) << op_name(op) << " row " << i << " len " << len;
        }
      }
    }
  }
}

// Outputs of 64 MiB and more are written with streaming stores in whole 64-byte lines
// (kRowsStreamingOutMinBytes), the rest of each batch with plain ones: 2^24 + 5 rows of 2 into
// a contiguous output and into one a float off a line boundary, every value checked, and the
// floats around the output untouched.
TEST(CpuTensorReduce, LargeOutputsOfShortRowsWithStreamingStores) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t rows = (std::int64_t{1} << 24) + 5;
  ASSERT_GE(rows * 4, cpu::detail::kRowsStreamingOutMinBytes);
  std::vector<float> data(static_cast<std::size_t>(rows * 2));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(r.in_range<std::int64_t>(i, -1000, 1000));
  std::vector<float> out(static_cast<std::size_t>(rows + 32));
  for (std::int64_t skew : {0, 1}) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean}) {
      std::fill(out.begin(), out.end(), 12345.0f);
      // 64-byte aligned base (std::vector's is 16): skew floats past a line boundary.
      const auto base = reinterpret_cast<std::uintptr_t>(out.data());
      const std::int64_t lead = static_cast<std::int64_t>((64 - base % 64) % 64 / 4) + skew;
      float* o = out.data() + lead;
      cpu::reduce(op, TensorView::contiguous(data.data(), DType::f32, {rows, 2}), {1}, false,
                  TensorView::contiguous(o, DType::f32, {rows}));
      for (std::int64_t i = 0; i < rows; ++i) {
        const float sum = data[static_cast<std::size_t>(2 * i)] + data[static_cast<std::size_t>(2 * i + 1)];
        const float want = op == ReduceOp::sum ? sum : sum / 2.0f;
        ASSERT_EQ(o[i], want) << op_name(op) << ", skew " << skew << ", row " << i;
      }
      for (std::int64_t i = 0; i < lead; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], 12345.0f) << "before, " << i;
      for (std::size_t i = static_cast<std::size_t>(lead + rows); i < out.size(); ++i) ASSERT_EQ(out[i], 12345.0f) << "after, " << i;
    }
  }
}

// ---- the thread count never changes a bit ----------------------------------------------------

TEST(CpuTensorReduce, SameBitsForAnyThreadCount) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t a = 1024, b = 1536;  // 6 MiB of f32
  std::vector<float> data(static_cast<std::size_t>(a * b));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(r.unit(i) * 2 - 1) * (i % 97 == 0 ? 4096.0f : 1.0f);
  const TensorView rm = TensorView::contiguous(data.data(), DType::f32, {a, b});
  const TensorView tr = TensorView::strided(data.data(), DType::f32, {b, a}, {1, b});
  struct Call { TensorView in; std::vector<int> axes; ReduceOp op; };
  const std::vector<Call> calls = {
      {rm, {-1}, ReduceOp::sum},  {rm, {0}, ReduceOp::sum},    {tr, {}, ReduceOp::sum},
      {tr, {0}, ReduceOp::mean},  {tr, {-1}, ReduceOp::argmax}, {rm, {}, ReduceOp::argmin}};
  for (const Call& c : calls) {
    const ReduceOutput shape = cpu::reduce_output_shape(c.op, c.in, c.axes, false);
    auto run = [&](int threads) {
      ForcedThreads forced(threads);
      std::vector<unsigned char> out(static_cast<std::size_t>(shape.numel()) * dtype_size(shape.dtype), 0xFF);
      cpu::reduce(c.op, c.in, c.axes, false, TensorView::contiguous(out.data(), shape.dtype, shape.shape, shape.rank));
      return out;
    };
    const auto one = run(1);
    for (int threads : {2, 7}) {
      EXPECT_TRUE(run(threads) == one) << op_name(c.op) << " with " << threads << " threads, plan "
                                       << detail::describe_plan(detail::plan_reduce(c.in, c.axes, false));
    }
  }
}

// ---- bad arguments: the right Errc, nothing written -------------------------------------------

TEST(CpuTensorReduce, BadArgumentsThrowAndWriteNothing) {
  std::vector<float> data(64, 1.0f);
  std::vector<unsigned char> buf(1024, 0xFF);
  void* o = buf.data();
  const TensorView in = TensorView::contiguous(data.data(), DType::f32, {4, 16});
  const TensorView out4 = TensorView::contiguous(o, DType::f32, {4});
  auto expect = [&](Errc want, auto&& f, const char* what) {
    EXPECT_TRUE(throws_errc(want, f)) << what;
    EXPECT_TRUE(std::all_of(buf.begin(), buf.end(), [](unsigned char c) { return c == 0xFF; })) << what << " wrote";
  };
  const std::int64_t shape9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  TensorView rank9 = TensorView::contiguous(data.data(), DType::f32, shape9, 8);
  rank9.rank = 9;
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, rank9, {}, false, TensorView::contiguous(o, DType::f32, {})); }, "rank 9");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, in, {2}, false, out4); }, "axis out of range");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, in, {1, -1}, false, out4); }, "duplicate axes");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, in, {1}, true, out4); }, "shape without the kept dim");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, in, {1}, false, TensorView::contiguous(o, DType::f32, {16})); }, "wrong shape");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, in, {1}, false, TensorView::contiguous(o, DType::f64, {4})); }, "wrong dtype");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::argmax, in, {1}, false, out4); }, "argmax into f32");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, in, {1}, false, TensorView::strided(o, DType::f32, {4}, {0})); }, "zero stride");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, TensorView::contiguous(data.data(), DType::f32, {2, 3, 4}), {1}, false, TensorView::strided(o, DType::f32, {2, 4}, {2, 1})); }, "overlapping strides");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, in, {1}, false, TensorView::contiguous(data.data() + 60, DType::f32, {4})); }, "output overlaps input");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, TensorView::strided(data.data(), DType::f32, {4, 16}, {-16, 1}), {1}, false, out4); }, "negative stride");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, TensorView::contiguous(nullptr, DType::f32, {4, 16}), {1}, false, out4); }, "null data");
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, TensorView::strided(data.data(), DType::f32, {2, 2}, {std::int64_t{1} << 61, 1}), {1}, false, TensorView::contiguous(o, DType::f32, {2})); }, "byte extent overflow");
  const TensorView idx4 = TensorView::contiguous(o, DType::i64, {});
  expect(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::argmax, in, {0, 1}, false, idx4); }, "argmax with two axes");
  expect(Errc::invalid_argument, [&] { cpu::arg_reduce(ReduceOp::max, in, {1}, false, TensorView::contiguous(o, DType::i64, {4}), TensorView::contiguous(buf.data() + 512, DType::f32, {4})); }, "arg_reduce of max");
  expect(Errc::invalid_argument, [&] { cpu::arg_reduce(ReduceOp::argmax, in, {1}, false, TensorView::contiguous(o, DType::i64, {4}), TensorView::contiguous(buf.data() + 8, DType::f32, {4})); }, "values overlap indices");
  expect(Errc::wrong_memory, [&] { cpu::reduce(ReduceOp::sum, in, {1}, false, TensorView::contiguous(o, DType::f32, {4}, Device::cuda(0))); }, "device output view");
  expect(Errc::wrong_memory, [&] { cpu::reduce(ReduceOp::sum, TensorView::contiguous(data.data(), DType::f32, {4, 16}, Device::cuda(0)), {1}, false, out4); }, "device input view");
  expect(Errc::empty_input, [&] { cpu::reduce(ReduceOp::max, TensorView::contiguous(data.data(), DType::f32, {4, 0}), {1}, false, out4); }, "max over an empty extent");
  expect(Errc::empty_input, [&] { cpu::reduce(ReduceOp::argmin, TensorView::contiguous(data.data(), DType::f32, {0, 4}), {}, false, idx4); }, "argmin of an empty tensor");
  expect(Errc::unsupported, [&] { cpu::reduce(static_cast<ReduceOp>(42), in, {1}, false, out4); }, "unknown op");
}

TEST(CpuTensorReduce, EmptyExtentsForOpsWithIdentity) {
  std::vector<float> data(4, 1.0f);
  float out[3];
  std::memset(out, 0xFF, sizeof out);
  cpu::reduce(ReduceOp::prod, TensorView::contiguous(data.data(), DType::f32, {3, 0}), {1}, false, TensorView::contiguous(out, DType::f32, {3}));
  for (float v : out) EXPECT_EQ(v, 1.0f);
  cpu::reduce(ReduceOp::sum, TensorView::contiguous(data.data(), DType::f32, {3, 0}), {1}, false, TensorView::contiguous(out, DType::f32, {3}));
  for (float v : out) EXPECT_TRUE(bits_equal(v, 0.0f));
  cpu::reduce(ReduceOp::mean, TensorView::contiguous(data.data(), DType::f32, {0, 3}), {0}, false, TensorView::contiguous(out, DType::f32, {3}));
  for (float v : out) EXPECT_TRUE(is_nan_result(v));
  // An empty output: nothing to write, even for max (the reduced extent, 4, is not empty).
  cpu::reduce(ReduceOp::max, TensorView::contiguous(data.data(), DType::f32, {0, 4}), {1}, false, TensorView::contiguous(out, DType::f32, {0}));
}

}  // namespace
}  // namespace foldkit::test
