// foldkit::half and foldkit::bfloat16 conversions against an independent reference:
// - decoding: every one of the 65536 bit patterns, against a decoder built from the format's
//   definition (significand * 2^exponent, with std::ldexp);
// - round trip: 16-bit -> float -> 16-bit is the identity for every non-NaN pattern;
// - encoding (float -> 16-bit, round to nearest, ties to even, overflow to infinity): the
//   reference searches the sorted table of all representable values for the nearest one, with
//   the next power of two past the largest finite value standing in for infinity, as IEEE 754
//   rounds. Checked on random floats of every exponent, random floats inside the 16-bit range,
//   and every exact midpoint between neighbouring 16-bit values (plus the floats right beside it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "foldkit/dtype.hpp"
#include "support/random_arrays.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

struct Format {
  int mantissa_bits;   // stored fraction bits: 10 (half), 7 (bfloat16)
  int exponent_bits;   // 5, 8
  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  std::uint16_t inf_bits() const { return static_cast<std::uint16_t>(((1u << exponent_bits) - 1) << mantissa_bits); }
};
constexpr Format kHalf{10, 5};
constexpr Format kBf16{7, 8};

// Value of a bit pattern from the definition; NaN for NaN patterns.
long double decode(const Format& f, std::uint16_t bits) {
  const bool negative = bits & 0x8000u;
  const unsigned exponent = (bits & 0x7fffu) >> f.mantissa_bits;
  const unsigned fraction = bits & ((1u << f.mantissa_bits) - 1);
  long double magnitude;
  if (exponent == (1u << f.exponent_bits) - 1) {
    magnitude = fraction ? std::numeric_limits<long double>::quiet_NaN() : std::numeric_limits<long double>::infinity();
  } else if (exponent == 0) {  // subnormal: fraction * 2^(1 - bias - mantissa_bits)
    magnitude = std::ldexp(static_cast<long double>(fraction), 1 - f.bias() - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<long double>(fraction | (1u << f.mantissa_bits)),
                           static_cast<int>(exponent) - f.bias() - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

// table[b] = value of non-negative pattern b for every finite b, then one more entry: the next
// power of two, standing for +infinity (index == the infinity pattern).
std::vector<long double> magnitude_table(const Format& f) {
  std::vector<long double> t;
  for (std::uint32_t b = 0; b < f.inf_bits(); ++b) t.push_back(decode(f, static_cast<std::uint16_t>(b)));
  t.push_back(std::ldexp(1.0L, f.bias() + 1));
  return t;
}

// The correctly rounded pattern for x, or -1 for NaN.
int expected_bits(const std::vector<long double>& table, float x) {
  if (std::isnan(x)) return -1;
  const std::uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  const long double a = std::fabs(static_cast<long double>(x));
  if (a >= table.back()) return sign | static_cast<int>(table.size() - 1);  // infinity
  const auto hi = static_cast<std::size_t>(std::upper_bound(table.begin(), table.end(), a) - table.begin());
  const std::size_t lo = hi - 1;  // table[lo] <= a < table[hi]
  const long double below = a - table[lo], above = table[hi] - a;  // exact (Sterbenz / small subnormals)
  std::size_t pick = below < above ? lo : above < below ? hi : (lo % 2 == 0 ? lo : hi);  // ties to even
  return sign | static_cast<int>(pick);
}

template <class H> std::uint16_t encode(float x) { return H(x).bits; }
template <class H> float to_float(std::uint16_t bits) { return static_cast<float>(H::from_bits(bits)); }

template <class H> void check_decode_and_round_trip(const Format& f) {
  for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const long double want = decode(f, bits);
    const float got = to_float<H>(bits);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << "pattern 0x" << std::hex << b;
      const std::uint16_t again = encode<H>(got);
      ASSERT_TRUE(std::isnan(decode(f, again))) << "NaN pattern 0x" << std::hex << b << " came back as 0x" << again;
      continue;
    }
    ASSERT_EQ(static_cast<long double>(got), want) << "pattern 0x" << std::hex << b;
    ASSERT_EQ(std::signbit(got), std::signbit(want)) << "pattern 0x" << std::hex << b;
    ASSERT_EQ(encode<H>(got), bits) << "round trip of pattern 0x" << std::hex << b;
  }
}

template <class H> ::testing::AssertionResult rounds_correctly(const std::vector<long double>& table, float x) {
  const int want = expected_bits(table, x);
  const std::uint16_t got = encode<H>(x);
  const bool ok = want < 0 ? std::isnan(to_float<H>(got)) : got == want;
  if (ok) return ::testing::AssertionSuccess();
  std::uint32_t xbits;
  std::memcpy(&xbits, &x, 4);
  return ::testing::AssertionFailure() << std::hexfloat << x << " (float bits 0x" << std::hex << xbits << ") -> 0x"
                                       << got << ", want 0x" << want;
}

template <class H> void check_rounding(const Format& f, Rng& rng) {
  const std::vector<long double> table = magnitude_table(f);
  int failures = 0;
  auto check = [&](float x) {
    if (failures < 10 && !rounds_correctly<H>(table, x).operator bool()) {
      ADD_FAILURE() << rounds_correctly<H>(table, x).message();
      ++failures;
    }
  };
  // Random bit patterns: every exponent, NaN and infinity included.
  const CounterRng any = rng.counter();
  for (std::uint64_t i = 0; i < 2000000; ++i) {
    const auto bits = static_cast<std::uint32_t>(any.bits(i));
    float x;
    std::memcpy(&x, &bits, 4);
    check(x);
  }
  // Random floats around the 16-bit format's own range (subnormals to overflow).
  const CounterRng near = rng.counter();
  const int lowest_exp = 1 - f.bias() - f.mantissa_bits - 2, highest_exp = f.bias() + 2;
  for (std::uint64_t i = 0; i < 1000000; ++i) {
    const float m = static_cast<float>(1.0 + near.unit(2 * i));  // [1, 2) with random low bits
    const int e = static_cast<int>(near.in_range<std::int64_t>(2 * i + 1, lowest_exp, highest_exp));
    check((i & 1) ? -std::ldexp(m, e) : std::ldexp(m, e));
  }
  // Every midpoint between neighbours (the tie cases), and the floats just below and above it.
  for (std::size_t b = 0; b + 1 < table.size(); ++b) {
    const float mid = static_cast<float>((table[b] + table[b + 1]) / 2);  // exact: 1 bit more than the format
    for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      check(x);
      check(-x);
    }
  }
  for (float x : {0.0f, -0.0f, std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::min(), INFINITY, -INFINITY})
    check(x);
}

TEST(HalfConversion, DecodeAndRoundTripAllPatterns) { check_decode_and_round_trip<half>(kHalf); }
TEST(Bfloat16Conversion, DecodeAndRoundTripAllPatterns) { check_decode_and_round_trip<bfloat16>(kBf16); }

TEST(HalfConversion, FloatRoundsToNearestEven) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  check_rounding<half>(kHalf, rng);
  // Spot values with known answers, so the reference itself is anchored.
  EXPECT_EQ(half(65504.0f).bits, 0x7bffu);   // largest finite
  EXPECT_EQ(half(65520.0f).bits, 0x7c00u);   // halfway to 2^16: ties to even = infinity
  EXPECT_EQ(half(std::nextafter(65520.0f, 0.0f)).bits, 0x7bffu);
  EXPECT_EQ(half(0x1p-24f).bits, 0x0001u);   // smallest subnormal
  EXPECT_EQ(half(0x1p-25f).bits, 0x0000u);   // halfway to it: ties to even = zero
  EXPECT_EQ(half(0x1.8p-24f).bits, 0x0002u); // 1.5 * min subnormal: ties to even = 2
  EXPECT_EQ(half(-1.0f).bits, 0xbc00u);
  EXPECT_EQ(half(1.0f + 0x1p-11f).bits, 0x3c00u);  // halfway above 1: ties to even = 1
}

TEST(Bfloat16Conversion, FloatRoundsToNearestEven) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  check_rounding<bfloat16>(kBf16, rng);
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3f80u);
  EXPECT_EQ(bfloat16(1.0f + 0x1p-8f).bits, 0x3f80u);         // tie: stays even
  EXPECT_EQ(bfloat16(1.0f + 0x1.8p-7f).bits, 0x3f82u);       // tie above odd 0x3f81: rounds up to even
  EXPECT_EQ(bfloat16(std::numeric_limits<float>::max()).bits, 0x7f80u);  // rounds past the largest finite
}

}  // namespace
}  // namespace foldkit::test
