// User functors for reduce_custom, shared by the CPU test (plain C++) and the CUDA test (nvcc):
// FOLDKIT_HD makes them __host__ __device__ under nvcc and inline otherwise.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "foldkit/dtype.hpp"

namespace foldkit::test {

struct BitwiseXor {  // associative and commutative on uint32_t; identity 0
  FOLDKIT_HD std::uint32_t operator()(std::uint32_t a, std::uint32_t b) const { return a ^ b; }
};

struct MaxAbs {  // max |x| (the result is non-negative); identity 0
  FOLDKIT_HD float operator()(float a, float b) const {
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    return b > a ? b : a;
  }
};

struct BitwiseOr {  // associative and commutative on uint32_t; identity 0
  FOLDKIT_HD std::uint32_t operator()(std::uint32_t a, std::uint32_t b) const { return a | b; }
};

struct BitwiseAnd {  // associative and commutative on int32_t; identity -1 (every bit set)
  FOLDKIT_HD std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a & b; }
};

// min(a + b, INT64_MAX): associative and commutative over NON-NEGATIVE int64_t (then it is the
// exact sum clamped once at the top); identity 0.
struct SaturatingAdd {
  FOLDKIT_HD std::int64_t operator()(std::int64_t a, std::int64_t b) const {
    return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max() : a + b;
  }
};

// A pair of uint32_t packed in a uint64_t (high, low), combined lane by lane with max: a 2-lane
// "max of pairs" through a dtype the tensor views describe; identity 0.
struct PairMax {
  FOLDKIT_HD std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const {
    const std::uint64_t hi = (a >> 32) > (b >> 32) ? (a >> 32) : (b >> 32);
    const std::uint64_t lo = (a & 0xffffffffu) > (b & 0xffffffffu) ? (a & 0xffffffffu) : (b & 0xffffffffu);
    return hi << 32 | lo;
  }
};

// The largest magnitude of an IEEE type (double, half, bfloat16), compared as the unsigned
// integers of the bits without the sign: exact, and associative and commutative even with NaNs
// (a NaN's magnitude bits exceed infinity's); returns |x|. Identity +0.
template <class T>
struct MagnitudeMax {
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint16_t>;
  static constexpr Bits kMagnitude = static_cast<Bits>(~Bits(0) >> 1);
  FOLDKIT_HD static Bits magnitude(T v) {
    Bits b;
    std::memcpy(&b, &v, sizeof(T));
    return static_cast<Bits>(b & kMagnitude);
  }
  FOLDKIT_HD T operator()(T a, T b) const {
    const Bits m = magnitude(a) > magnitude(b) ? magnitude(a) : magnitude(b);
    T r;
    std::memcpy(&r, &m, sizeof(T));
    return r;
  }
};

struct Plus {  // float addition: not associative in rounding, so only determinism is checked
  FOLDKIT_HD float operator()(float a, float b) const { return a + b; }
};

// A 16-byte struct type (the documented maximum): min, max and wrapping sum at once.
struct Span {
  std::int32_t lo;
  std::int32_t hi;
  std::int64_t total;
};
static_assert(sizeof(Span) == 16, "Span is meant to be the largest allowed type");
struct CombineSpans {
  FOLDKIT_HD Span operator()(Span x, Span y) const {
    Span r;
    r.lo = y.lo < x.lo ? y.lo : x.lo;
    r.hi = y.hi > x.hi ? y.hi : x.hi;
    r.total = static_cast<std::int64_t>(static_cast<std::uint64_t>(x.total) + static_cast<std::uint64_t>(y.total));
    return r;
  }
};
inline Span span_identity() {
  return Span{std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::lowest(), 0};
}
inline Span span_of(std::int32_t v) { return Span{v, v, v}; }

// x -> a*x + b (mod 2^32); combining f then g gives g(f(x)). Associative, NOT commutative: for
// the scans, which combine left to right on both backends (reduce_custom does not promise that).
struct Affine {
  std::uint32_t a;
  std::uint32_t b;
};
inline bool operator==(Affine x, Affine y) { return x.a == y.a && x.b == y.b; }
struct ThenApply {
  FOLDKIT_HD Affine operator()(Affine f, Affine g) const { return Affine{g.a * f.a, g.a * f.b + g.b}; }
};

// ThenApply's maps packed into one unsigned integer U (a in the high half, b in the low half,
// arithmetic mod 2^(half width)): a non-commutative associative operator over a dtype a
// TensorView can describe (uint32_t: mod 2^16; uint64_t: mod 2^32), for the tensor scans.
// Identity: a = 1, b = 0. (The products fit U: both factors are below 2^(half width).)
template <class U>
struct PackedThenApply {
  static constexpr int kHalf = 4 * static_cast<int>(sizeof(U));
  static constexpr U kMask = (U{1} << kHalf) - 1;
  FOLDKIT_HD static U pack(U a, U b) { return static_cast<U>((a & kMask) << kHalf | (b & kMask)); }
  FOLDKIT_HD U operator()(U f, U g) const {
    const U fa = f >> kHalf, fb = f & kMask, ga = g >> kHalf, gb = g & kMask;
    return pack(static_cast<U>(ga * fa), static_cast<U>(ga * fb + gb));
  }
};

}  // namespace foldkit::test
