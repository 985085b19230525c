// The tensor-reduction planner (foldkit/detail/reduce_plan.hpp): output shapes, canonical forms
// and family names for hand-picked layouts, and the axis errors. Backend-independent: no data is
// read (views point at a dummy byte).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/error.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "support/result_checks.hpp"

namespace foldkit::test {
namespace {

using detail::describe_plan;
using detail::plan_reduce;
using detail::ReducedOrder;

char dummy;

TensorView rm(std::initializer_list<std::int64_t> shape) { return TensorView::contiguous(&dummy, DType::f32, shape); }
TensorView st(std::initializer_list<std::int64_t> shape, std::initializer_list<std::int64_t> strides) {
  return TensorView::strided(&dummy, DType::f32, shape, strides);
}
std::vector<std::int64_t> out_shape(const detail::ReducePlan& p) {
  return std::vector<std::int64_t>(p.out_shape, p.out_shape + p.out_rank);
}

TEST(ReducePlan, ShortRowsOfATallMatrix) {
  const auto p = plan_reduce(rm({1000000, 2}), {-1}, false);
  EXPECT_EQ(describe_plan(p), "kept [1000000 x (in 2, out 1)] reduced [2 x (in 1)] family=short-rows");
  EXPECT_EQ(out_shape(p), std::vector<std::int64_t>{1000000});
  EXPECT_EQ(p.reduce_numel, 2);
  EXPECT_EQ(p.out_numel, 1000000);
}

TEST(ReducePlan, SizeOneDimensionsAreDropped) {
  const auto p = plan_reduce(rm({1000000, 1, 2}), {1, 2}, true);
  EXPECT_EQ(describe_plan(p), "kept [1000000 x (in 2, out 1)] reduced [2 x (in 1)] family=short-rows");
  EXPECT_EQ(out_shape(p), (std::vector<std::int64_t>{1000000, 1, 1}));
}

TEST(ReducePlan, ContiguousRowsAndOuter) {
  EXPECT_EQ(describe_plan(plan_reduce(rm({64, 1000}), {1}, false)),
            "kept [64 x (in 1000, out 1)] reduced [1000 x (in 1)] family=contiguous-rows");
  EXPECT_EQ(describe_plan(plan_reduce(rm({64, 1000}), {0}, false)),
            "kept [1000 x (in 1, out 1)] reduced [64 x (in 1000)] family=outer");
}

TEST(ReducePlan, AdjacentDimensionsMerge) {
  // (2, 3, 4, 5) over the last two axes: 6 rows of 20 contiguous elements.
  EXPECT_EQ(describe_plan(plan_reduce(rm({2, 3, 4, 5}), {2, 3}, false)),
            "kept [6 x (in 20, out 1)] reduced [20 x (in 1)] family=short-rows");
  EXPECT_EQ(describe_plan(plan_reduce(rm({2, 3, 4, 5}), {}, false)), "kept [] reduced [120 x (in 1)] family=all");
  // Over the middle axes: kept dims are not adjacent in memory, reduced ones are.
  EXPECT_EQ(describe_plan(plan_reduce(rm({2, 3, 4, 5}), {1, 2}, false)),
            "kept [2 x (in 60, out 5), 5 x (in 1, out 1)] reduced [12 x (in 5)] family=outer");
}

TEST(ReducePlan, TransposedMatrix) {
  const auto t = st({4, 3}, {1, 4});  // the transpose of a row-major (3, 4)
  EXPECT_EQ(describe_plan(plan_reduce(t, {-1}, false)), "kept [4 x (in 1, out 1)] reduced [3 x (in 4)] family=outer");
  EXPECT_EQ(describe_plan(plan_reduce(t, {0}, false)),
            "kept [3 x (in 4, out 1)] reduced [4 x (in 1)] family=short-rows");
  // All axes: in memory order one run of 12; in logical order (argmin/argmax) two dimensions.
  EXPECT_EQ(describe_plan(plan_reduce(t, {}, false)), "kept [] reduced [12 x (in 1)] family=all");
  EXPECT_EQ(describe_plan(plan_reduce(t, {}, false, nullptr, ReducedOrder::logical)),
            "kept [] reduced [4 x (in 1), 3 x (in 4)] family=all");
}

TEST(ReducePlan, SteppedAndBroadcastInputs) {
  EXPECT_EQ(describe_plan(plan_reduce(st({4, 5}, {10, 2}), {1}, false)),
            "kept [4 x (in 10, out 1)] reduced [5 x (in 2)] family=strided");
  EXPECT_EQ(describe_plan(plan_reduce(st({3, 4}, {0, 1}), {0}, false)),
            "kept [4 x (in 1, out 1)] reduced [3 x (in 0)] family=outer");
  EXPECT_EQ(describe_plan(plan_reduce(st({3, 4}, {0, 0}), {}, false)), "kept [] reduced [12 x (in 0)] family=all");
}

TEST(ReducePlan, OutputStridesDecideKeptMerging) {
  // (3, 4, 5) over the last axis into a (3, 4) output padded to rows of 8: the kept dimensions
  // are one run in the input but not in the output.
  const std::int64_t padded[] = {8, 1};
  EXPECT_EQ(describe_plan(plan_reduce(rm({3, 4, 5}), {2}, false, padded)),
            "kept [3 x (in 20, out 8), 4 x (in 5, out 1)] reduced [5 x (in 1)] family=short-rows");
  const std::int64_t dense[] = {4, 1};
  EXPECT_EQ(describe_plan(plan_reduce(rm({3, 4, 5}), {2}, false, dense)),
            "kept [12 x (in 5, out 1)] reduced [5 x (in 1)] family=short-rows");
}

TEST(ReducePlan, MapAndZeroSizes) {
  EXPECT_EQ(describe_plan(plan_reduce(rm({5, 1}), {1}, false)), "kept [5 x (in 1, out 1)] reduced [] family=map");
  const auto e = plan_reduce(rm({3, 0, 4}), {1}, true);
  EXPECT_EQ(e.reduce_numel, 0);
  EXPECT_EQ(out_shape(e), (std::vector<std::int64_t>{3, 1, 4}));
  EXPECT_EQ(plan_reduce(rm({3, 0, 4}), {0}, false).out_numel, 0);
}

TEST(ReducePlan, OutputShapes) {
  EXPECT_EQ(out_shape(plan_reduce(rm({2, 3, 4}), {1}, true)), (std::vector<std::int64_t>{2, 1, 4}));
  EXPECT_EQ(out_shape(plan_reduce(rm({2, 3, 4}), {-2}, false)), (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(out_shape(plan_reduce(rm({2, 3, 4}), {}, false)), std::vector<std::int64_t>{});
  EXPECT_EQ(out_shape(plan_reduce(rm({2, 3, 4}), {}, true)), (std::vector<std::int64_t>{1, 1, 1}));
  EXPECT_EQ(out_shape(plan_reduce(rm({}), {}, false)), std::vector<std::int64_t>{});
}

TEST(ReducePlan, BadAxesAreInvalidArgument) {
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [] { plan_reduce(rm({2, 3}), {2}, false); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [] { plan_reduce(rm({2, 3}), {-3}, false); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [] { plan_reduce(rm({2, 3}), {0, -2}, false); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [] { plan_reduce(rm({}), {0}, false); }));
  EXPECT_TRUE(
      throws_errc(Errc::invalid_argument, [] { plan_reduce(rm({2, 2, 2, 2, 2, 2, 2, 2}), {0, 1, 2, 3, 4, 5, 6, 7, 0}, false); }));
}

}  // namespace
}  // namespace foldkit::test

namespace foldkit {
namespace {

// reduce_result_dtype (run time) agrees with reduce_result_t (compile time) for every op and
// dtype; argmin/argmax write their int64 index.
template <ReduceOp Op, class T> constexpr bool result_dtype_matches() {
  if constexpr (Op == ReduceOp::argmin || Op == ReduceOp::argmax) return reduce_result_dtype(Op, dtype_v<T>) == DType::i64;
  else return reduce_result_dtype(Op, dtype_v<T>) == dtype_v<reduce_result_t<Op, T>>;
}
template <class T> constexpr bool all_ops_match() {
  return result_dtype_matches<ReduceOp::sum, T>() && result_dtype_matches<ReduceOp::prod, T>() &&
         result_dtype_matches<ReduceOp::min, T>() && result_dtype_matches<ReduceOp::max, T>() &&
         result_dtype_matches<ReduceOp::mean, T>() && result_dtype_matches<ReduceOp::argmin, T>() &&
         result_dtype_matches<ReduceOp::argmax, T>();
}
static_assert(all_ops_match<std::int32_t>() && all_ops_match<std::uint32_t>() && all_ops_match<std::int64_t>() &&
              all_ops_match<std::uint64_t>() && all_ops_match<float>() && all_ops_match<double>() &&
              all_ops_match<half>() && all_ops_match<bfloat16>());

}  // namespace
}  // namespace foldkit
