// Comparisons that explain themselves: every mismatch prints both values exactly (hex float for
// floats, the bit pattern for 16-bit floats) so a failure can be understood from the log alone.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>

#include "foldkit/error.hpp"
#include "foldkit/ops.hpp"
#include "support/random_arrays.hpp"
#include "support/reference.hpp"

namespace foldkit::test {

template <class V> std::string show(const V& v) {
  std::ostringstream os;
  if constexpr (is_16bit_float_v<V>) {
    os << static_cast<float>(v) << " (bits 0x" << std::hex << v.bits << ")";
  } else if constexpr (std::is_floating_point_v<V>) {
    os.precision(std::is_same_v<V, float> ? 9 : 21);
    os << v << " (" << std::hexfloat << v << ")";
  } else if constexpr (std::is_integral_v<V>) {
    os << +v;
  } else {  // ArgResult
    os << "{value " << show(v.value) << ", index " << v.index << "}";
  }
  return os.str();
}

// Bitwise equality of results; ArgResult compares its two fields (never its padding bytes).
template <class V> bool same_bits(const V& a, const V& b) {
  if constexpr (std::is_integral_v<V> || std::is_floating_point_v<V> || is_16bit_float_v<V>) {
    return std::memcmp(&a, &b, sizeof(V)) == 0;
  } else {
    return same_bits(a.value, b.value) && a.index == b.index;
  }
}
template <class V> ::testing::AssertionResult bits_equal(const V& got, const V& want) {
  if (same_bits(got, want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << show(got) << ", want bit-identical " << show(want);
}

// Exact value equality (for floats -0 == +0; NaN never equals).
template <class V> ::testing::AssertionResult exactly(const V& got, const V& want) {
  if (to_ld(got) == to_ld(want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << show(got) << ", want exactly " << show(want);
}

template <class V> ::testing::AssertionResult within(const V& got, long double want, long double tol) {
  const long double g = to_ld(got);
  if (std::fabs(g - want) <= tol) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(21);
  os << "got " << show(got) << ", want " << want << " +- " << tol << " (off by " << (g - want) << ")";
  return ::testing::AssertionFailure() << os.str();
}

template <class V> ::testing::AssertionResult is_nan_result(const V& got) {
  if (is_nan_value(got)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << show(got) << ", want NaN";
}

// min/max against ExtremeRef.
template <class T> ::testing::AssertionResult matches_extreme(const T& got, const ExtremeRef& want) {
  if (want.nan) return is_nan_result(got);
  if (to_ld(got) == want.value) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(21);
  os << "got " << show(got) << ", want exactly " << want.value;
  return ::testing::AssertionFailure() << os.str();
}

// argmin/argmax: the reference index, and the value stored at that index (bit for bit).
template <class T>
::testing::AssertionResult matches_arg(const ArgResult<T>& got, const TestArray<T>& a, std::int64_t want_index) {
  if (got.index == want_index && same_bits(got.value, a[want_index])) return ::testing::AssertionSuccess();
  auto fail = ::testing::AssertionFailure();
  fail << "got " << show(got) << ", want {value " << show(a[want_index]) << ", index " << want_index << "}";
  if (got.index >= 0 && got.index < a.n) fail << "; element at the returned index is " << show(a[got.index]);
  return fail;
}

// Runs f() and checks that it throws foldkit::Error with code `want`.
template <class F> ::testing::AssertionResult throws_errc(Errc want, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.code() == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "threw Error " << errc_name(e.code()) << " (" << e.what()
                                         << "), want " << errc_name(want);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-foldkit exception: " << e.what() << "; want Error "
                                         << errc_name(want);
  }
  return ::testing::AssertionFailure() << "did not throw; want Error " << errc_name(want);
}

}  // namespace foldkit::test
