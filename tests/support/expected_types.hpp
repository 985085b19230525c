// The result-type table of include/foldkit/ops.hpp, written out again independently so the
// tests check the library's type mapping instead of reusing it.
#pragma once

#include <cstdint>
#include <type_traits>

#include "foldkit/dtype.hpp"
#include "foldkit/ops.hpp"

namespace foldkit::test {

template <ReduceOp Op, class T> struct expected_result;

// sum, prod: 32-bit integers widen to 64 bits of the same signedness, 16-bit floats to float.
template <class T> struct widened { using type = T; };
template <> struct widened<std::int32_t> { using type = std::int64_t; };
template <> struct widened<std::uint32_t> { using type = std::uint64_t; };
template <> struct widened<half> { using type = float; };
template <> struct widened<bfloat16> { using type = float; };

template <class T> struct expected_result<ReduceOp::sum, T> { using type = typename widened<T>::type; };
template <class T> struct expected_result<ReduceOp::prod, T> { using type = typename widened<T>::type; };
// mean: double for every integer dtype; the float dtypes return what they accumulate in.
template <class T> struct expected_result<ReduceOp::mean, T> {
  using type = std::conditional_t<std::is_integral_v<T>, double, typename widened<T>::type>;
};
template <class T> struct expected_result<ReduceOp::min, T> { using type = T; };
template <class T> struct expected_result<ReduceOp::max, T> { using type = T; };
template <class T> struct expected_result<ReduceOp::argmin, T> { using type = ArgResult<T>; };
template <class T> struct expected_result<ReduceOp::argmax, T> { using type = ArgResult<T>; };

template <ReduceOp Op, class T> using expected_result_t = typename expected_result<Op, T>::type;

}  // namespace foldkit::test
