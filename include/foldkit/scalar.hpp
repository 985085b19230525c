// foldkit::Scalar: one value together with its dtype, for the run-time arguments of the
// type-erased entry points (the `init` of a type-erased exclusive scan).
//
//   foldkit::cpu::exclusive_scan(foldkit::ReduceOp::sum, foldkit::DType::i32, in, n, out, 5);
//   // 5 is an int32 Scalar; the scan's result type is int64 and 5 converts exactly
//
// A Scalar is built implicitly from any foldkit element type (std::int32_t, std::uint32_t,
// std::int64_t, std::uint64_t, float, double, foldkit::half, foldkit::bfloat16) and from the
// other built-in integer types (the signed ones of up to 32 bits give an i32 Scalar, 64-bit
// ones i64; the unsigned ones u32 / u64). bool and pointers are rejected at compile time: a
// pointer is what the former `const void* init` took, and a Scalar is never read through one.
//
// Conversion rule (to_exact): a Scalar is accepted as a value of dtype R only when its value
// converts to R EXACTLY; otherwise Error(invalid_argument), naming the value, its dtype and R.
//   - integer -> integer: the value must lie in R's range (int64 -1 -> u64 is rejected,
//     int64 2^40 -> i32 is rejected);
//   - integer -> float: the value must be representable in R (2^24 + 1 -> f32 is rejected);
//   - float -> integer: the value must be finite, whole and in R's range (3.0 -> i64 is
//     accepted, 2.5 or NaN are rejected);
//   - float -> float: the value must round-trip (double 0.1 -> f32 is rejected, double 0.5 ->
//     f16 is accepted; infinities convert; NaN converts to a NaN of R).
// Nothing is ever rounded, wrapped or clamped silently.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>

#include "foldkit/dtype.hpp"
#include "foldkit/error.hpp"

namespace foldkit {

class Scalar {
  template <class I>
  static constexpr bool is_other_integer_v =
      std::is_integral_v<I> && !std::is_same_v<I, bool> && !std::is_same_v<I, std::int32_t> &&
      !std::is_same_v<I, std::uint32_t> && !std::is_same_v<I, std::int64_t> && !std::is_same_v<I, std::uint64_t> &&
      sizeof(I) <= 8;

 public:
  Scalar(std::int32_t v) noexcept : dtype_(DType::i32), i_(v) {}
  Scalar(std::uint32_t v) noexcept : dtype_(DType::u32), u_(v) {}
  Scalar(std::int64_t v) noexcept : dtype_(DType::i64), i_(v) {}
  Scalar(std::uint64_t v) noexcept : dtype_(DType::u64), u_(v) {}
  Scalar(float v) noexcept : dtype_(DType::f32), f_(static_cast<double>(v)) {}
  Scalar(double v) noexcept : dtype_(DType::f64), f_(v) {}
  Scalar(half v) noexcept : dtype_(DType::f16), f_(static_cast<double>(static_cast<float>(v))) {}
  Scalar(bfloat16 v) noexcept : dtype_(DType::bf16), f_(static_cast<double>(static_cast<float>(v))) {}
  // Other built-in integers (char, short, long long, ...): their value, as the foldkit integer
  // dtype of the same signedness that holds it.
  template <class I, std::enable_if_t<is_other_integer_v<I>, int> = 0>
  Scalar(I v) noexcept {
    if constexpr (std::is_signed_v<I>) {
      dtype_ = sizeof(I) <= 4 ? DType::i32 : DType::i64;
      i_ = static_cast<std::int64_t>(v);
    } else {
      dtype_ = sizeof(I) <= 4 ? DType::u32 : DType::u64;
      u_ = static_cast<std::uint64_t>(v);
    }
  }
  Scalar(bool) = delete;            // almost surely a mistake
  Scalar(std::nullptr_t) = delete;  // an init is a value, not a pointer to one
  template <class P>
  Scalar(const P*) = delete;

  // The dtype the value was given as.
  DType dtype() const noexcept { return dtype_; }

  // The value as R (one of the eight element types), under the rule above; throws
  // Error(invalid_argument) if it does not convert exactly. `context` starts the message.
  template <class R>
  R to_exact(const char* context = "Scalar") const {
    static_assert(std::is_same_v<R, std::int32_t> || std::is_same_v<R, std::uint32_t> ||
                      std::is_same_v<R, std::int64_t> || std::is_same_v<R, std::uint64_t> ||
                      std::is_same_v<R, float> || std::is_same_v<R, double> || std::is_same_v<R, half> ||
                      std::is_same_v<R, bfloat16>,
                  "Scalar converts to the foldkit element types only");
    R out{};
    if (!convert(out)) {
      throw Error(Errc::invalid_argument, std::string(context) + ": " + to_string() + " (" + dtype_name(dtype_) +
                                              ") does not convert exactly to " + dtype_name(dtype_v<R>));
    }
    return out;
  }

  // The value in decimal (floats with enough digits to round-trip their dtype).
  std::string to_string() const {
    if (is_signed()) return std::to_string(i_);
    if (is_unsigned()) return std::to_string(u_);
    char buf[40];
    std::snprintf(buf, sizeof buf, dtype_ == DType::f64 ? "%.17g" : "%.9g", f_);
    return buf;
  }

 private:
  bool is_signed() const { return dtype_ == DType::i32 || dtype_ == DType::i64; }
  bool is_unsigned() const { return dtype_ == DType::u32 || dtype_ == DType::u64; }

  // Integer targets.
  template <class R>
  bool convert_integer(R& out) const {
    if (is_signed()) {
      if constexpr (std::is_signed_v<R>) {
        if (i_ < static_cast<std::int64_t>(std::numeric_limits<R>::min()) ||
            i_ > static_cast<std::int64_t>(std::numeric_limits<R>::max()))
          return false;
      } else {
        if (i_ < 0 || static_cast<std::uint64_t>(i_) > static_cast<std::uint64_t>(std::numeric_limits<R>::max()))
          return false;
      }
      out = static_cast<R>(i_);
      return true;
    }
    if (is_unsigned()) {
      if (u_ > static_cast<std::uint64_t>(std::numeric_limits<R>::max())) return false;
      out = static_cast<R>(u_);
      return true;
    }
    // A float: finite, whole and in [min, max]. The bounds -2^(bits-1) / 2^bits are exact doubles.
    if (!(f_ == std::trunc(f_))) return false;  // NaN and fractions (infinities fail the range check)
    const double lo = std::is_signed_v<R> ? -std::ldexp(1.0, 8 * sizeof(R) - 1) : 0.0;
    const double hi_excl = std::ldexp(1.0, std::is_signed_v<R> ? 8 * sizeof(R) - 1 : 8 * sizeof(R));
    if (!(f_ >= lo && f_ < hi_excl)) return false;
    out = static_cast<R>(f_);
    return true;
  }

  // The value as a double, exactly (false if the integer has no exact double).
  bool exact_double(double& d) const {
    if (is_signed()) {
      d = static_cast<double>(i_);
      return d != 0x1p63 && static_cast<std::int64_t>(d) == i_;
    }
    if (is_unsigned()) {
      d = static_cast<double>(u_);
      return d != 0x1p64 && static_cast<std::uint64_t>(d) == u_;
    }
    d = f_;
    return true;
  }

  // Float targets.
  template <class R>
  bool convert_float(R& out) const {
    double d;
    if (!exact_double(d)) return false;
    if constexpr (std::is_same_v<R, double>) {
      out = d;
      return true;
    } else {
      float f;
      if (std::isnan(d)) {
        f = std::numeric_limits<float>::quiet_NaN();
      } else {
        if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max())) return false;
        f = static_cast<float>(d);
        if (static_cast<double>(f) != d) return false;
      }
      if constexpr (std::is_same_v<R, float>) {
        out = f;
        return true;
      } else {  // half, bfloat16: built from float, NaN stays NaN
        out = R(f);
        return std::isnan(f) || static_cast<float>(out) == f;
      }
    }
  }

  template <class R>
  bool convert(R& out) const {
    if constexpr (std::is_integral_v<R>) return convert_integer(out);
    else return convert_float(out);
  }

  DType dtype_;
  std::int64_t i_ = 0;   // i32, i64
  std::uint64_t u_ = 0;  // u32, u64
  double f_ = 0.0;       // f32, f64, f16, bf16 (each exact in double)
};

}  // namespace foldkit
