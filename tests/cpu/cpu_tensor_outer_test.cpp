// Outer reductions on the CPU (a row-major matrix reduced over dim 0, and 3-D forms whose kept
// innermost dimension is contiguous): swept in blocks of neighbouring output elements
// (foldkit/detail/tensor_reduce_cpu.hpp), each output element of a built-in op must still be its
// documented fold, bit for bit: its positions in order, restarting every
// outer_piece_length(rows, lines, line bytes) positions (a function of the shape only), the
// piece results folded left to right. The reference below is that definition, one output
// element at a time.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "foldkit/detail/tensor_reduce_cpu.hpp"  // outer_piece_length
#include "foldkit/reduce.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "support/random_arrays.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

// The documented fold of column j of a (rows, cols) row-major matrix reduced over dim 0.
template <ReduceOp Op, class T>
reduce_result_t<Op, T> column_fold(const std::vector<T>& x, std::int64_t rows, std::int64_t cols, std::int64_t j) {
  using Tr = reduce_traits<Op, T>;
  const typename Tr::combine_type f{};
  const std::int64_t piece = cpu::detail::outer_piece_length(rows, 1, cols * static_cast<std::int64_t>(sizeof(T)));
  typename Tr::accum_type acc = Tr::identity();
  for (std::int64_t begin = 0; begin < rows; begin += piece) {
    typename Tr::accum_type part = Tr::identity();
    for (std::int64_t r = begin; r < rows && r < begin + piece; ++r)
      part = f(part, Tr::from_element(x[static_cast<std::size_t>(r * cols + j)], r));
    acc = f(acc, part);
  }
  return Tr::finalize(acc, rows);
}

template <ReduceOp Op, class T> void expect_columns_are_their_fold(std::int64_t rows, std::int64_t cols, Rng& rng) {
  const CounterRng bits = rng.counter();
  std::vector<T> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = from_double<T>(4.0 * bits.unit(i) - 2.0);
  using R = reduce_result_t<Op, T>;
  constexpr bool kArg = Op == ReduceOp::argmin || Op == ReduceOp::argmax;
  using Out = std::conditional_t<kArg, std::int64_t, R>;
  std::vector<Out> out(static_cast<std::size_t>(cols));
  std::memset(out.data(), 0x5a, out.size() * sizeof(Out));
  const auto in = TensorView::contiguous(x.data(), dtype_v<T>, {rows, cols});
  const auto o = TensorView::contiguous(out.data(), reduce_result_dtype(Op, dtype_v<T>), {cols});
  cpu::reduce(Op, in, {0}, false, o);
  for (std::int64_t j = 0; j < cols; ++j) {
    const R want = column_fold<Op, T>(x, rows, cols, j);
    const Out got = out[static_cast<std::size_t>(j)];
    if constexpr (kArg) {
      ASSERT_EQ(got, want.index) << op_name(Op) << " " << dtype_name(dtype_v<T>) << " (" << rows << ", " << cols
                                 << ") column " << j;
    } else {
      ASSERT_EQ(0, std::memcmp(&got, &want, sizeof(R))) << op_name(Op) << " " << dtype_name(dtype_v<T>) << " ("
                                                        << rows << ", " << cols << ") column " << j;
    }
  }
}

TEST(CpuTensorOuter, EachColumnIsItsDocumentedFoldBitForBit) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  // Blocks of 256 columns with a ragged last one; rows past one chunk (2^15) and a ragged chunk.
  // Pieces shorter than a chunk (70001 x 300: 2048 positions; 20000 x 4: 512), blocks of
  // accumulators past kOuterTileMinBytes (70 x 20000: tiles of rows), narrow columns.
  for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{3, 1000}, {1000, 3}, {70001, 300},
                                  {40000, 17}, {5, 513}, {20000, 4}, {70, 20000}, {300001, 5}}) {
    expect_columns_are_their_fold<ReduceOp::sum, float>(rows, cols, rng);
    expect_columns_are_their_fold<ReduceOp::mean, half>(rows, cols, rng);
    expect_columns_are_their_fold<ReduceOp::prod, double>(rows, cols, rng);
    expect_columns_are_their_fold<ReduceOp::max, float>(rows, cols, rng);
    expect_columns_are_their_fold<ReduceOp::argmin, double>(rows, cols, rng);
    expect_columns_are_their_fold<ReduceOp::sum, std::int32_t>(rows, cols, rng);
    expect_columns_are_their_fold<ReduceOp::mean, float>(rows, cols, rng);
    expect_columns_are_their_fold<ReduceOp::sum, double>(rows, cols, rng);
  }
}

}  // namespace
}  // namespace foldkit::test
