// User functors for reduce_custom, shared by the CPU test (plain C++) and the CUDA test (nvcc):
// FOLDKIT_HD makes them __host__ __device__ under nvcc and inline otherwise.
#pragma once

#include <cstdint>
#include <limits>

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

}  // namespace foldkit::test
