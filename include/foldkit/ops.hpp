// Reduction operators: which ops exist, what each returns for each dtype, what it accumulates
// in, and the associative combine functors shared by the CPU backend and the CUDA kernels.
//
// Result and accumulator types (documented contract; tests check it):
//
//   op \ dtype    | i32    u32    i64    u64    | f32   f64   | f16    bf16
//   --------------+------------------------------+-------------+-------------
//   sum, prod     | i64    u64    i64    u64    | f32   f64   | f32    f32     (result = accumulator)
//   mean          | f64    f64    f64    f64    | f32   f64   | f32    f32
//   min, max      | same as the input dtype, compared exactly
//   argmin/argmax | ArgResult<T>{value: T, index: int64}, first index on ties
//
// - Integer sums and products widen to 64 bits (as NumPy and PyTorch do) and wrap modulo 2^64
//   when even 64 bits overflow. The mean of an integer array is the exact 64-bit integer sum
//   (i32/u32) or a float64 sum (i64/u64), divided by n in float64.
// - half and bfloat16 accumulate in float and return float.
// - NaN: sum/prod/mean follow IEEE arithmetic. min/max return NaN if any element is NaN;
//   argmin/argmax treat NaN as the extreme value and return the first NaN's index (as PyTorch).
// - Empty input: sum -> 0, prod -> 1, mean -> NaN; min/max/argmin/argmax are an error.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "foldkit/dtype.hpp"

namespace foldkit {

enum class ReduceOp : int { sum, prod, min, max, mean, argmin, argmax };

inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::sum, ReduceOp::prod,   ReduceOp::min,   ReduceOp::max,
                                             ReduceOp::mean, ReduceOp::argmin, ReduceOp::argmax};

constexpr const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
    case ReduceOp::mean: return "mean";
    case ReduceOp::argmin: return "argmin";
    case ReduceOp::argmax: return "argmax";
  }
  return "?";
}

constexpr bool is_valid(ReduceOp op) {
  return static_cast<int>(op) >= 0 && static_cast<int>(op) <= static_cast<int>(ReduceOp::argmax);
}

// True for ops that have no identity: an empty input is an error.
constexpr bool needs_nonempty(ReduceOp op) {
  return op == ReduceOp::min || op == ReduceOp::max || op == ReduceOp::argmin || op == ReduceOp::argmax;
}

template <class T>
struct ArgResult {
  T value;
  std::int64_t index;
};

// ---------------------------------------------------------------------------------------------
// Type mapping
// ---------------------------------------------------------------------------------------------
namespace detail {
template <class T> struct widened_sum { using type = T; };
template <> struct widened_sum<std::int32_t> { using type = std::int64_t; };
template <> struct widened_sum<std::uint32_t> { using type = std::uint64_t; };
template <> struct widened_sum<half> { using type = float; };
template <> struct widened_sum<bfloat16> { using type = float; };

// The arithmetic type min/max/arg* compare in: 16-bit floats compare as float.
template <class T> struct compare_type { using type = T; };
template <> struct compare_type<half> { using type = float; };
template <> struct compare_type<bfloat16> { using type = float; };
}  // namespace detail

template <ReduceOp Op, class T>
struct reduce_types {
  using sum_t = typename detail::widened_sum<T>::type;
  using cmp_t = typename detail::compare_type<T>::type;
  // What the result is written as.
  using result_type = std::conditional_t<
      Op == ReduceOp::sum || Op == ReduceOp::prod, sum_t,
      std::conditional_t<Op == ReduceOp::mean, std::conditional_t<std::is_integral_v<T>, double, sum_t>,
                         std::conditional_t<Op == ReduceOp::min || Op == ReduceOp::max, T, ArgResult<T>>>>;
  // What partial results are carried in while reducing.
  using accum_type = std::conditional_t<
      Op == ReduceOp::sum || Op == ReduceOp::prod, sum_t,
      std::conditional_t<
          Op == ReduceOp::mean,
          std::conditional_t<std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>, double, sum_t>,
          std::conditional_t<Op == ReduceOp::min || Op == ReduceOp::max, cmp_t, ArgResult<cmp_t>>>>;
};

template <ReduceOp Op, class T> using reduce_result_t = typename reduce_types<Op, T>::result_type;
template <ReduceOp Op, class T> using reduce_accum_t = typename reduce_types<Op, T>::accum_type;

// ---------------------------------------------------------------------------------------------
// Combine functors. Each is associative and commutative (bitwise, for min/max/arg*, so that any
// fixed combine order gives one answer), callable on host and device, and has an identity().
// ---------------------------------------------------------------------------------------------
namespace op {

template <class T> FOLDKIT_HD bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

// Wrapping integer arithmetic: signed overflow is done in unsigned to stay defined.
template <class A> FOLDKIT_HD A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A> && std::is_signed_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class A> FOLDKIT_HD A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A> && std::is_signed_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// The identity of floating-point addition is -0.0 (-0 + x == x for every x, including -0).
template <class A> struct Sum {
  FOLDKIT_HD static A identity() {
    if constexpr (std::is_floating_point_v<A>) return -A(0);
    else return A(0);
  }
  FOLDKIT_HD A operator()(A a, A b) const { return wrap_add(a, b); }
};

template <class A> struct Prod {
  FOLDKIT_HD static A identity() { return A(1); }
  FOLDKIT_HD A operator()(A a, A b) const { return wrap_mul(a, b); }
};

template <class A> FOLDKIT_HD A lowest_value() {
  if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
  else return std::numeric_limits<A>::lowest();
}
template <class A> FOLDKIT_HD A highest_value() {
  if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
  else return std::numeric_limits<A>::max();
}

// For equal floating-point values (only +0 and -0 differ in bits), the maximum is the AND of
// the two bit patterns (+0 unless both are -0) and the minimum the OR (-0 unless both are +0).
// Branch-free, and it makes the answer independent of the combine order.
template <class A> FOLDKIT_HD A tie_break_bits(A a, A b, bool want_max) {
  if constexpr (std::is_floating_point_v<A>) {
    using U = std::conditional_t<sizeof(A) == 4, std::uint32_t, std::uint64_t>;
    U ua, ub;
    std::memcpy(&ua, &a, sizeof(A));
    std::memcpy(&ub, &b, sizeof(A));
    const U r = want_max ? (ua & ub) : (ua | ub);
    A out;
    std::memcpy(&out, &r, sizeof(A));
    return out;
  } else {
    (void)b;
    (void)want_max;
    return a;
  }
}

// NaN wins; among numbers the larger wins, and +0 counts as larger than -0, so that the answer
// does not depend on the combine order (CPU and GPU agree bit for bit).
template <class A> struct Max {
  FOLDKIT_HD static A identity() { return lowest_value<A>(); }
  FOLDKIT_HD A operator()(A a, A b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if (a == b) return tie_break_bits(a, b, true);
    return b > a ? b : a;
  }
};

// NaN wins; among numbers the smaller wins, and -0 counts as smaller than +0.
template <class A> struct Min {
  FOLDKIT_HD static A identity() { return highest_value<A>(); }
  FOLDKIT_HD A operator()(A a, A b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if (a == b) return tie_break_bits(a, b, false);
    return b < a ? b : a;
  }
};

// Arg ops order candidates by (value, then smaller index); NaN counts as the extreme.
// identity() carries index INT64_MAX so that it never wins a tie against a real element.
template <class A, bool kIsMax> struct ArgExtreme {
  using R = ArgResult<A>;
  FOLDKIT_HD static R identity() {
    return R{kIsMax ? lowest_value<A>() : highest_value<A>(), std::numeric_limits<std::int64_t>::max()};
  }
  FOLDKIT_HD static bool better(const R& a, const R& b) {  // is a strictly preferable to b?
    const bool an = is_nan(a.value), bn = is_nan(b.value);
    if (an || bn) return an && (!bn || a.index < b.index);
    if (a.value == b.value) return a.index < b.index;
    return kIsMax ? (a.value > b.value) : (a.value < b.value);
  }
  FOLDKIT_HD R operator()(const R& a, const R& b) const { return better(b, a) ? b : a; }
};
template <class A> using ArgMax = ArgExtreme<A, true>;
template <class A> using ArgMin = ArgExtreme<A, false>;

}  // namespace op

// Everything an algorithm needs to know about a built-in op on dtype T: how an element enters
// the accumulator, how accumulators combine, and how the final accumulator becomes the result.
template <ReduceOp Op, class T>
struct reduce_traits {
  using input_type = T;
  using accum_type = reduce_accum_t<Op, T>;
  using result_type = reduce_result_t<Op, T>;
  using cmp_t = typename detail::compare_type<T>::type;
  using combine_type = std::conditional_t<
      Op == ReduceOp::sum || Op == ReduceOp::mean, op::Sum<accum_type>,
      std::conditional_t<Op == ReduceOp::prod, op::Prod<accum_type>,
                         std::conditional_t<Op == ReduceOp::min, op::Min<accum_type>,
                                            std::conditional_t<Op == ReduceOp::max, op::Max<accum_type>,
                                                               std::conditional_t<Op == ReduceOp::argmin,
                                                                                  op::ArgMin<cmp_t>,
                                                                                  op::ArgMax<cmp_t>>>>>>;
  static constexpr bool kUsesIndex = Op == ReduceOp::argmin || Op == ReduceOp::argmax;

  FOLDKIT_HD static accum_type identity() { return combine_type::identity(); }

  FOLDKIT_HD static accum_type from_element(T v, std::int64_t index) {
    if constexpr (kUsesIndex) {
      return accum_type{static_cast<cmp_t>(v), index};
    } else {
      (void)index;
      if constexpr (is_16bit_float_v<T>) return static_cast<accum_type>(static_cast<float>(v));
      else return static_cast<accum_type>(v);
    }
  }

  FOLDKIT_HD static result_type finalize(accum_type acc, std::int64_t n) {
    if constexpr (Op == ReduceOp::mean) {
      if (n == 0) return std::numeric_limits<result_type>::quiet_NaN();
      // In double, rounded once to the result type: float(n) itself rounds above 2^24 elements
      // (2^24 ones and a zero: float(n) = 2^24 gave a mean of exactly 1).
      return static_cast<result_type>(static_cast<double>(acc) / static_cast<double>(n));
    } else if constexpr (Op == ReduceOp::sum) {
      return n == 0 ? result_type(0) : acc;  // +0 for an empty sum (the identity is -0)
    } else if constexpr (Op == ReduceOp::min || Op == ReduceOp::max) {
      return static_cast<T>(acc);
    } else if constexpr (kUsesIndex) {
      return result_type{static_cast<T>(acc.value), acc.index};
    } else {
      (void)n;
      return acc;
    }
  }
};

}  // namespace foldkit
