// Tensor reductions with user functors (reduce_custom over TensorViews), shared by both
// backends' tests (tests/cpu/cpu_tensor_custom_test.cpp, tests/gpu/cuda_tensor_custom_test.cu).
//
// The problems are tensor_random_cases.hpp's: the same regimes and edge shapes, layouts (padded,
// transposed, stepped, broadcast, offset starts), axes, keepdims and poisoned, strided outputs
// (built as a max problem, whose output dtype is the input's, as reduce_custom's is). Their
// values are then redrawn for the functor, and the holes and the elements around the view get a
// GUARD that changes the functor's answer if it is ever read. One functor per dtype (the functors
// in tests/support/custom_functors.hpp), each exact, associative and commutative, so any fold
// order gives the same bits and the reference may fold in its own order:
//   i32  bitwise and        u32  bitwise or, bitwise xor     i64  saturating add (values >= 0)
//   u64  lane-wise max of a pair of u32      f32  max |x|      f64, f16, bf16  largest magnitude
// The reference walks the logical index space (for_each_element), never the planner, and folds
// every output element from the identity (an empty reduced extent: the identity itself).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/tensor_random_cases.hpp"
#include "foldkit/error.hpp"
#include "foldkit/tensor.hpp"
#include "support/custom_functors.hpp"
#include "support/result_checks.hpp"

namespace foldkit::test {

// ---- the functors' test cases: element, functor, identity, values, guard, equality ---------------

struct AndI32 {
  using T = std::int32_t;
  using F = BitwiseAnd;
  static constexpr const char* kName = "and i32";
  static T identity() { return -1; }
  // Every bit but one (never the top one): rows keep their top bit, and a guard clears it.
  static T value(std::uint64_t b) { return static_cast<T>(~(1u << (b % 31))); }
  static T guard() { return std::numeric_limits<T>::max(); }
  static bool same(T a, T b) { return a == b; }
};
struct OrU32 {
  using T = std::uint32_t;
  using F = BitwiseOr;
  static constexpr const char* kName = "or u32";
  static T identity() { return 0; }
  static T value(std::uint64_t b) { return (1u << (b % 31)) | (b >> 40 & 1u ? 1u << (b >> 8) % 31 : 0u); }
  static T guard() { return 0x80000000u; }  // a bit no value has
  static bool same(T a, T b) { return a == b; }
};
struct XorU32 {
  using T = std::uint32_t;
  using F = BitwiseXor;
  static constexpr const char* kName = "xor u32";
  static T identity() { return 0; }
  static T value(std::uint64_t b) { return static_cast<T>(b >> 17); }
  static T guard() { return 0xdeadbeefu; }
  static bool same(T a, T b) { return a == b; }
};
struct SatAddI64 {
  using T = std::int64_t;
  using F = SaturatingAdd;
  static constexpr const char* kName = "saturating add i64";
  static T identity() { return 0; }
  // Small non-negative values, and one in 64 near 2^61: rows of a few hundred saturate.
  static T value(std::uint64_t b) {
    if ((b >> 58) == 0) return (std::int64_t{1} << 61) + static_cast<T>(b % 1000);
    return static_cast<T>(b % 1000);
  }
  static T guard() { return (std::int64_t{1} << 40) + 1; }
  static bool same(T a, T b) { return a == b; }
};
struct PairMaxU64 {
  using T = std::uint64_t;
  using F = PairMax;
  static constexpr const char* kName = "pair max u64";
  static T identity() { return 0; }
  static T value(std::uint64_t b) { return (b >> 32) % 100000 << 32 | (b & 0xffffffffu) % 100000; }
  static T guard() { return ~std::uint64_t{0}; }
  static bool same(T a, T b) { return a == b; }
};
struct AbsMaxF32 {
  using T = float;
  using F = MaxAbs;
  static constexpr const char* kName = "abs-max f32";
  static T identity() { return 0.0f; }
  // k/16 in [-64, 64] (ties, +-0) and now and then +-inf; no NaN (MaxAbs compares values).
  static T value(std::uint64_t b) {
    if ((b >> 52) == 0) return (b & 1u) ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
    const auto k = static_cast<std::int64_t>(b % 2049) - 1024;
    if (k == 0 && (b >> 30 & 1u)) return -0.0f;
    return static_cast<T>(k) / 16.0f;
  }
  static T guard() { return 1e30f; }  // larger than every finite value
  static bool same(T a, T b) { return a == b; }  // +0 == -0: MaxAbs may keep either zero
};
// Largest magnitude, compared as bits (NaNs included; a NaN's payload orders it).
template <class Elem, const char* Name>
struct MagnitudeCase {
  using T = Elem;
  using F = MagnitudeMax<T>;
  static constexpr const char* kName = Name;
  static T identity() { return from_double<T>(0.0); }
  static T value(std::uint64_t b) {
    if ((b >> 55) == 0) {  // a quiet NaN of either sign with a small payload (never the guard's)
      using Bits = typename F::Bits;
      const Bits quiet = sizeof(T) == 8 ? Bits(0x7ff8000000000000ull) : std::is_same_v<T, half> ? Bits(0x7e00u) : Bits(0x7fc0u);
      const Bits bits = static_cast<Bits>(quiet | (b & 0xfu) | (b >> 9 & 1u ? static_cast<Bits>(~F::kMagnitude) : Bits(0)));
      T t;
      std::memcpy(&t, &bits, sizeof(T));
      return t;
    }
    const auto k = static_cast<std::int64_t>(b % 513) - 256;
    return from_double<T>(static_cast<double>(k) / 8.0);
  }
  static T guard() {  // the largest magnitude there is: a NaN with every payload bit
    const typename F::Bits bits = F::kMagnitude;
    T t;
    std::memcpy(&t, &bits, sizeof(T));
    return t;
  }
  static bool same(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }
};
inline constexpr char kMagnitudeF64[] = "magnitude max f64";
inline constexpr char kMagnitudeF16[] = "magnitude max f16";
inline constexpr char kMagnitudeBF16[] = "magnitude max bf16";
using MagnitudeF64 = MagnitudeCase<double, kMagnitudeF64>;
using MagnitudeF16 = MagnitudeCase<half, kMagnitudeF16>;
using MagnitudeBF16 = MagnitudeCase<bfloat16, kMagnitudeBF16>;

template <class C> struct CaseTag {
  using type = C;
};
// Calls f(CaseTag<C>{}) for every case, one or two per dtype.
template <class F> void for_each_custom_case(F&& f) {
  f(CaseTag<AndI32>{}), f(CaseTag<OrU32>{}), f(CaseTag<XorU32>{}), f(CaseTag<SatAddI64>{}), f(CaseTag<PairMaxU64>{});
  f(CaseTag<AbsMaxF32>{}), f(CaseTag<MagnitudeF64>{}), f(CaseTag<MagnitudeF16>{}), f(CaseTag<MagnitudeBF16>{});
}
// Calls f(CaseTag<C>{}) for the first case of `dtype` (the bad-input calls pick their T so).
template <class F> void visit_custom_case(DType dtype, F&& f) {
  bool done = false;
  for_each_custom_case([&](auto tag) {
    if (!done && dtype_v<typename decltype(tag)::type::T> == dtype) {
      done = true;
      f(tag);
    }
  });
}

// ---- problems, reference, checks -------------------------------------------------------------------

// A regime drawn with tensor_random_cases.hpp's weights.
inline std::string random_regime(Rng& rng) {
  int total = 0;
  for (const auto& rw : regime_weights()) total += rw.second;
  std::int64_t k = rng.uniform(0, total - 1);
  for (const auto& [name, weight] : regime_weights()) {
    if (k < weight) return name;
    k -= weight;
  }
  return regime_weights().front().first;
}

// A problem of `spec` for case C: layouts, axes, keepdims and output from make_problem, values
// and guards for the functor. Tagged with the functor's name (the coverage summary's "tags").
template <class C> RandomProblem make_custom_problem(const ShapeSpec& spec, Rng& rng, int id) {
  using T = typename C::T;
  RandomProblem p = make_problem(spec, ReduceOp::max, dtype_v<T>, rng, id);
  p.expect_empty_error = false;  // a functor with an identity reduces empty extents too
  std::vector<std::string> tags;
  for (const std::string& t : p.tags)
    if (t != "expects empty_input" && t != "NaN planted") tags.push_back(t);  // max's, not ours
  tags.push_back(std::string("functor ") + C::kName);
  p.tags = tags;
  T* data = static_cast<T*>(p.storage);
  const std::size_t n = p.storage_bytes / sizeof(T);
  for (std::size_t i = 0; i < n; ++i) data[i] = C::guard();
  const CounterRng values = rng.counter();
  for_each_offset(p.in, [&](std::int64_t off) { data[off] = C::value(values.bits(static_cast<std::uint64_t>(off))); });
  return p;
}

template <class C> std::vector<typename C::T> custom_reference(const RandomProblem& p) {
  using T = typename C::T;
  const typename C::F op{};
  std::vector<T> acc(static_cast<std::size_t>(p.out_numel), C::identity());
  const T* base = static_cast<const T*>(p.storage);
  for_each_element(p, [&](std::int64_t off, std::int64_t o, std::int64_t) {
    acc[static_cast<std::size_t>(o)] = op(acc[static_cast<std::size_t>(o)], base[off]);
  });
  return acc;
}

// The call returned (`outcome`), every output element equals the reference, and every byte of
// the output buffer outside the view is still poisoned.
template <class C> ::testing::AssertionResult check_custom_problem(const RandomProblem& p, const Outcome& outcome) {
  using T = typename C::T;
  if (outcome.threw) return ::testing::AssertionFailure() << "threw " << errc_name(outcome.code) << ": " << outcome.what;
  const std::vector<T> want = custom_reference<C>(p);
  const OutBuffer& out = *p.out;
  for (std::int64_t o = 0; o < p.out_numel; ++o) {
    const T got = load<T>(out.at(), out.offset_of(o));
    if (!C::same(got, want[static_cast<std::size_t>(o)]))
      return ::testing::AssertionFailure() << C::kName << ": output element " << o << " is " << show(got) << ", want "
                                           << show(want[static_cast<std::size_t>(o)]);
  }
  return out.untouched_outside(p.out_numel);
}

// ---- bad inputs ----------------------------------------------------------------------------------------

// A bad call, made with the first case of dtype `as` (its T and functor).
struct CustomBadCall {
  std::string what;
  Errc want = Errc::invalid_argument;
  DType as = DType::f32;
  TensorView in;
  AxisList axes;
  bool keepdims = false;
  TensorView out;
};

// The tensor reductions' shared table (bad_calls()) where it applies to a functor over f32: its
// f32 sums into f32 (a sum's output dtype is then the functor's), none of which is bad for a
// reason of the op's; plus the dtype rules of reduce_custom: the input's and the output's dtype
// must both be T's. Same buffers as bad_calls().
inline std::vector<CustomBadCall> custom_bad_calls(void* in_base, void* out_base, Device dev) {
  std::vector<CustomBadCall> v;
  for (const BadCall& c : bad_calls(in_base, out_base, dev)) {
    if (c.arg || c.op != ReduceOp::sum || c.in.dtype != DType::f32 || c.out.dtype != DType::f32) continue;
    v.push_back(CustomBadCall{c.what, c.want, DType::f32, c.in, c.axes, c.keepdims, c.out});
  }
  using V = TensorView;
  auto* x0 = static_cast<float*>(in_base) + 256;
  auto* ob = static_cast<unsigned char*>(out_base);
  const Errc bad = Errc::invalid_argument;
  auto add = [&](std::string what, Errc want, DType as, V in, AxisList axes, bool keepdims, V out) {
    v.push_back(CustomBadCall{std::move(what), want, as, in, axes, keepdims, out});
  };
  add("f32 input and output, T = uint32_t", bad, DType::u32, V::contiguous(x0, DType::f32, {4, 16}, dev), {1}, false,
      V::contiguous(ob, DType::f32, {4}, dev));
  add("f32 input, u32 output, T = uint32_t", bad, DType::u32, V::contiguous(x0, DType::f32, {4, 16}, dev), {1}, false,
      V::contiguous(ob, DType::u32, {4}, dev));
  add("u32 input, f32 output, T = uint32_t", bad, DType::u32, V::contiguous(x0, DType::u32, {4, 16}, dev), {1}, false,
      V::contiguous(ob, DType::f32, {4}, dev));
  add("u32 input, u64 output (a sum's dtype), T = uint32_t", bad, DType::u32, V::contiguous(x0, DType::u32, {4, 16}, dev), {1},
      false, V::contiguous(ob, DType::u64, {4}, dev));
  add("i64 input and output, T = float", bad, DType::f32, V::contiguous(x0, DType::i64, {4, 8}, dev), {1}, false,
      V::contiguous(ob, DType::i64, {4}, dev));
  add("f16 input, f32 output, T = half", bad, DType::f16, V::contiguous(x0, DType::f16, {4, 16}, dev), {1}, false,
      V::contiguous(ob, DType::f32, {4}, dev));
  add("i32 input, i64 output, T = int32_t", bad, DType::i32, V::contiguous(x0, DType::i32, {4, 16}, dev), {1}, false,
      V::contiguous(ob, DType::i64, {4}, dev));
  add("unknown input dtype 99, T = float", Errc::unsupported, DType::f32, V::contiguous(x0, static_cast<DType>(99), {4, 16}, dev), {1},
      false, V::contiguous(ob, DType::f32, {4}, dev));
  add("unknown out dtype 99, T = float", Errc::unsupported, DType::f32, V::contiguous(x0, DType::f32, {4, 16}, dev), {1}, false,
      V::contiguous(ob, static_cast<DType>(99), {4}, dev));
  add("u64 out (3) for a (4) result, T = uint64_t", bad, DType::u64, V::contiguous(x0, DType::u64, {4, 8}, dev), {1}, false,
      V::contiguous(ob, DType::u64, {3}, dev));
  add("i64 keepdims but out (4), T = int64_t", bad, DType::i64, V::contiguous(x0, DType::i64, {4, 8}, dev), {-1}, true,
      V::contiguous(ob, DType::i64, {4}, dev));
  add("bf16 out (4, 16): nothing reduced, T = bfloat16", bad, DType::bf16, V::contiguous(x0, DType::bf16, {4, 16}, dev), {1},
      false, V::contiguous(ob, DType::bf16, {4, 16}, dev));
  return v;
}

inline std::string custom_bad_call_text(const CustomBadCall& c) {
  return c.what + " (reduce_custom as " + dtype_name(c.as) + ", want Error " + errc_name(c.want) + ")";
}

}  // namespace foldkit::test
