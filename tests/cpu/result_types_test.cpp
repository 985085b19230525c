// The result-type table at the top of include/foldkit/ops.hpp, checked at compile time for all
// 7 ops x 8 dtypes against both the library's reduce_result_t and the public entry points.
#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>

#include "foldkit/reduce.hpp"
#include "support/expected_types.hpp"

namespace foldkit::test {
namespace {

template <ReduceOp Op, class T, class Want> constexpr bool result_is() {
  static_assert(std::is_same_v<expected_result_t<Op, T>, Want>, "tests' own table is wrong");
  static_assert(std::is_same_v<reduce_result_t<Op, T>, Want>, "reduce_result_t differs from the table");
  using FromCpu = decltype(cpu::reduce<Op>(std::declval<const T*>(), std::int64_t{}));
  static_assert(std::is_same_v<FromCpu, Want>, "cpu::reduce returns a type other than the table's");
  return true;
}

// One row per op: the result type for i32, u32, i64, u64, f32, f64, f16, bf16.
template <ReduceOp Op, class I32, class U32, class I64, class U64, class F32, class F64, class F16, class BF16>
constexpr bool row() {
  return result_is<Op, std::int32_t, I32>() && result_is<Op, std::uint32_t, U32>() &&
         result_is<Op, std::int64_t, I64>() && result_is<Op, std::uint64_t, U64>() && result_is<Op, float, F32>() &&
         result_is<Op, double, F64>() && result_is<Op, half, F16>() && result_is<Op, bfloat16, BF16>();
}

using i64 = std::int64_t;
using u64 = std::uint64_t;
template <class T> using Arg = ArgResult<T>;
static_assert(row<ReduceOp::sum, i64, u64, i64, u64, float, double, float, float>());
static_assert(row<ReduceOp::prod, i64, u64, i64, u64, float, double, float, float>());
static_assert(row<ReduceOp::mean, double, double, double, double, float, double, float, float>());
static_assert(row<ReduceOp::min, std::int32_t, std::uint32_t, i64, u64, float, double, half, bfloat16>());
static_assert(row<ReduceOp::max, std::int32_t, std::uint32_t, i64, u64, float, double, half, bfloat16>());
static_assert(row<ReduceOp::argmin, Arg<std::int32_t>, Arg<std::uint32_t>, Arg<i64>, Arg<u64>, Arg<float>, Arg<double>,
                  Arg<half>, Arg<bfloat16>>());
static_assert(row<ReduceOp::argmax, Arg<std::int32_t>, Arg<std::uint32_t>, Arg<i64>, Arg<u64>, Arg<float>, Arg<double>,
                  Arg<half>, Arg<bfloat16>>());

// ArgResult's index is 64-bit whatever the value type.
static_assert(std::is_same_v<decltype(ArgResult<half>{}.index), std::int64_t>);

TEST(ResultTypes, MatchTheDocumentedTable) {
  SUCCEED() << "checked by the static_asserts in this file at compile time";
}

}  // namespace
}  // namespace foldkit::test
