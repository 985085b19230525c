// Tensor scans with user functors (inclusive/exclusive_scan_custom over TensorViews), shared by
// both backends' tests (tests/cpu/cpu_tensor_scan_custom_test.cpp,
// tests/gpu/cuda_tensor_scan_custom_test.cu).
//
// The cases are the built-in tensor scans' (tensor_scan_reference.hpp's make_case, drawn as a max
// scan, whose output dtype is the input's as a functor's is): the same random shapes (ranks 0-6,
// sizes 0, 1, primes, 2^k +- 1, long axes that chain GPU tiles and chunk CPU rows), axes
// (negative too), input and output layouts, in place and exclusive inits. Their values are then
// redrawn for the functor. One or two functors per dtype, each exact, so that the reference may
// be a plain left-to-right loop per line whatever bracketing a backend uses:
//   i32  bitwise and                 u32  affine maps mod 2^16 (NOT commutative), bitwise xor
//   i64  saturating add (values >= 0) u64  affine maps mod 2^32 (NOT commutative)
//   f32  + over quarters in [-5, 5]  (every partial sum is exact: the reference sums in double)
//   f64, f16, bf16  largest magnitude (compared as bits, NaNs included)
// A backend that combined a later value on the left, or skipped or repeated an element, gets the
// affine cases wrong.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "common/tensor_custom_cases.hpp"
#include "common/tensor_scan_reference.hpp"
#include "support/custom_functors.hpp"

namespace foldkit::test::tscan {

// ---- the functors' cases (AndI32, XorU32, SatAddI64 and the magnitudes: tensor_custom_cases.hpp) ---

template <class U, const char* Name>
struct AffineCase {
  using T = U;
  using F = PackedThenApply<U>;
  static constexpr const char* kName = Name;
  static T identity() { return F::pack(1, 0); }
  // Odd multipliers (the maps stay invertible, so no prefix collapses to a constant) and any offset.
  static T value(std::uint64_t b) { return F::pack(static_cast<U>(b >> 7) | 1u, static_cast<U>(b >> 29)); }
  static bool same(T a, T b) { return a == b; }
};
inline constexpr char kAffineU32[] = "affine u32 (not commutative)";
inline constexpr char kAffineU64[] = "affine u64 (not commutative)";
using AffineU32 = AffineCase<std::uint32_t, kAffineU32>;
using AffineU64 = AffineCase<std::uint64_t, kAffineU64>;

struct PlusQuartersF32 {
  using T = float;
  using F = Plus;
  static constexpr const char* kName = "+ f32 (quarters: exact)";
  static constexpr bool kSumInDouble = true;
  static T identity() { return 0.0f; }
  static T value(std::uint64_t b) { return static_cast<float>(static_cast<std::int64_t>(b % 41) - 20) / 4.0f; }
  static bool same(T a, T b) { return a == b; }
};

template <class F> void for_each_scan_custom_case(F&& f) {
  f(CaseTag<AndI32>{}), f(CaseTag<AffineU32>{}), f(CaseTag<XorU32>{}), f(CaseTag<SatAddI64>{}), f(CaseTag<AffineU64>{});
  f(CaseTag<PlusQuartersF32>{}), f(CaseTag<MagnitudeF64>{}), f(CaseTag<MagnitudeF16>{}), f(CaseTag<MagnitudeBF16>{});
}
inline constexpr int kScanCustomCases = 9;

template <class C, class = void> struct sums_in_double : std::false_type {};
template <class C> struct sums_in_double<C, std::void_t<decltype(C::kSumInDouble)>> : std::true_type {};

// ---- a case: the built-in scans' case, values redrawn, and the functor's init ------------------------

template <class C> struct CustomScanCase {
  ScanCase c;  // op / init: unused (a max scan's draw)
  typename C::T init{};
  std::string describe() const {
    std::ostringstream s;
    s << (c.exclusive ? "exclusive " : "inclusive ") << C::kName << " input " << c.in.describe() << " axis " << c.axis;
    if (c.in_place) s << " IN PLACE";
    else s << " out " << c.out.describe();
    if (c.exclusive) s << " init " << show(init);
    return s.str();
  }
};

// A scan's first output is its first element on one path (the core's blocked scan) and
// identity op element on another (the tile kernel, the CPU engine): the same only when the
// identity is one. MagnitudeMax returns |x|, so +0 is its identity only for elements whose sign
// bit is clear: its scan cases draw those alone (the reductions' cases need not).
template <class C> typename C::T scan_value(std::uint64_t bits) {
  using T = typename C::T;
  T v = C::value(bits);
  if constexpr (std::is_same_v<typename C::F, MagnitudeMax<T>>) v = typename C::F{}(T{}, v);
  return v;
}

template <class C> void redraw_values(CustomScanCase<C>& k, Rng& rng) {
  using T = typename C::T;
  const CounterRng values = rng.counter();
  for (std::int64_t i = 0; i < k.c.in.storage; ++i) {
    const T v = scan_value<C>(values.bits(static_cast<std::uint64_t>(i)));
    std::memcpy(k.c.in_bytes.data() + i * static_cast<std::int64_t>(sizeof(T)), &v, sizeof(T));
  }
  k.init = scan_value<C>(rng.counter().bits(0));
}

template <class C> CustomScanCase<C> make_custom_scan_case(Rng& rng, std::int64_t max_numel, bool long_axis) {
  CustomScanCase<C> k;
  k.c = make_case<ReduceOp::max, typename C::T>(rng, max_numel, long_axis);
  redraw_values(k, rng);
  return k;
}

// ---- the reference: a plain left-to-right loop per line ---------------------------------------------

// The expected outputs, in row-major logical order.
template <class C> std::vector<typename C::T> custom_scan_reference(const CustomScanCase<C>& k) {
  using T = typename C::T;
  const ScanCase& c = k.c;
  const Layout& l = c.in;
  const std::int64_t n = l.numel();
  std::vector<T> want(static_cast<std::size_t>(n));
  const int rank = l.rank();
  const int axis = rank == 0 ? 0 : (c.axis < 0 ? c.axis + rank : c.axis);
  const std::int64_t len = rank == 0 ? 1 : l.shape[static_cast<std::size_t>(axis)];
  std::int64_t inner = 1;  // row-major step of the axis
  for (int d = axis + 1; d < rank; ++d) inner *= l.shape[static_cast<std::size_t>(d)];
  const unsigned char* base = c.in_bytes.data() + l.offset * static_cast<std::int64_t>(sizeof(T));
  const typename C::F op{};
  for (std::int64_t first = 0; first < n; ++first) {
    if ((first / inner) % len != 0) continue;  // not a line's first element
    if constexpr (sums_in_double<C>::value) {
      double acc = c.exclusive ? static_cast<double>(k.init) : 0.0;
      for (std::int64_t i = 0; i < len; ++i) {
        const double x = static_cast<double>(load_at<T>(base, l.offset_of(first + i * inner)));
        if (c.exclusive) want[static_cast<std::size_t>(first + i * inner)] = static_cast<T>(acc);
        acc += x;
        if (!c.exclusive) want[static_cast<std::size_t>(first + i * inner)] = static_cast<T>(acc);
      }
    } else {
      T acc = c.exclusive ? k.init : C::identity();
      for (std::int64_t i = 0; i < len; ++i) {
        const T x = load_at<T>(base, l.offset_of(first + i * inner));
        if (c.exclusive) want[static_cast<std::size_t>(first + i * inner)] = acc;
        acc = op(acc, x);
        if (!c.exclusive) want[static_cast<std::size_t>(first + i * inner)] = acc;
      }
    }
  }
  return want;
}

// `got`: the output buffer after the call (in place: the input buffer). Every output element
// equals `want` (row-major logical order), and every byte outside the output view still holds its
// poison (0xFF), or, in place, the input's own bytes.
template <class C>
::testing::AssertionResult check_custom_scan(const CustomScanCase<C>& k, const std::vector<unsigned char>& got,
                                             const std::vector<typename C::T>& want) {
  using T = typename C::T;
  const ScanCase& c = k.c;
  const Layout& ol = c.in_place ? c.in : c.out;
  if (got.size() != (c.in_place ? c.in_bytes.size() : c.out_bytes.size()))
    return ::testing::AssertionFailure() << "the result buffer has " << got.size() << " bytes";
  const unsigned char* at = got.data() + ol.offset * static_cast<std::int64_t>(sizeof(T));
  std::int64_t bad = 0;
  std::ostringstream first;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(want.size()); ++i) {
    const T g = load_at<T>(at, ol.offset_of(i));
    if (C::same(g, want[static_cast<std::size_t>(i)])) continue;
    if (bad++ < 3) first << "\n  element " << i << " (row-major): got " << show(g) << ", want " << show(want[static_cast<std::size_t>(i)]);
  }
  if (bad > 0) return ::testing::AssertionFailure() << bad << " of " << want.size() << " outputs differ:" << first.str();
  std::vector<char> covered(got.size(), 0);
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(want.size()); ++i)
    std::memset(&covered[static_cast<std::size_t>((ol.offset + ol.offset_of(i)) * static_cast<std::int64_t>(sizeof(T)))], 1, sizeof(T));
  for (std::size_t b = 0; b < got.size(); ++b) {
    if (covered[b]) continue;
    const unsigned char expect = c.in_place ? c.in_bytes[b] : 0xFF;
    if (got[b] != expect) return ::testing::AssertionFailure() << "byte " << b << " outside the output view was written";
  }
  return ::testing::AssertionSuccess();
}

// ---- bad arguments --------------------------------------------------------------------------------------

// A bad call, made as scan_custom with the first case of dtype `as` (its T and functor).
struct ScanCustomBadCall {
  std::string what;
  Errc want = Errc::invalid_argument;
  DType as = DType::f32;
  TensorView in;
  int axis = 0;
  TensorView out;
};

// The built-in tensor scans' bad views (as cpu_tensor_scan_test.cpp's table, minus the op and
// init rules a functor has none of), and the dtype rules of scan_custom: the input's and the
// output's dtype must both be T's. in_base: at least 512 bytes, out_base at least 1024, both
// 16-byte aligned; `dev` the views' device.
inline std::vector<ScanCustomBadCall> scan_custom_bad_calls(void* in_base, void* out_base, Device dev) {
  using V = TensorView;
  auto* x = static_cast<float*>(in_base);
  void* o = out_base;
  const Errc bad = Errc::invalid_argument;
  const V in = V::contiguous(x, DType::f32, {4, 16}, dev), out = V::contiguous(o, DType::f32, {4, 16}, dev);
  std::vector<ScanCustomBadCall> v;
  auto add = [&](std::string what, Errc want, DType as, V i, int axis, V u) {
    v.push_back(ScanCustomBadCall{std::move(what), want, as, i, axis, u});
  };
  const std::int64_t shape9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  V rank9 = V::contiguous(x, DType::f32, shape9, 8, dev), out9 = V::contiguous(o, DType::f32, shape9, 8, dev);
  rank9.rank = 9;
  out9.rank = 9;
  add("rank 9", bad, DType::f32, rank9, 0, out9);
  add("axis 2 of rank 2", bad, DType::f32, in, 2, out);
  add("axis -3 of rank 2", bad, DType::f32, in, -3, out);
  add("axis 1 of rank 0", bad, DType::f32, V::contiguous(x, DType::f32, {}, dev), 1, V::contiguous(o, DType::f32, {}, dev));
  add("wrong out shape", bad, DType::f32, in, 1, V::contiguous(o, DType::f32, {16, 4}, dev));
  add("wrong out rank", bad, DType::f32, in, 1, V::contiguous(o, DType::f32, {4, 16, 1}, dev));
  add("zero out stride", bad, DType::f32, in, 1, V::strided(o, DType::f32, {4, 16}, {0, 1}, dev));
  add("overlapping out strides", bad, DType::f32, in, 1, V::strided(o, DType::f32, {4, 16}, {8, 1}, dev));
  add("out overlaps the input", bad, DType::f32, V::contiguous(x, DType::f32, {4, 8}, dev), 1,
      V::contiguous(x + 16, DType::f32, {4, 8}, dev));
  add("in place with other strides", bad, DType::f32, V::contiguous(x, DType::f32, {4, 8}, dev), 1,
      V::strided(x, DType::f32, {4, 8}, {1, 4}, dev));
  add("negative input stride", bad, DType::f32, V::strided(x, DType::f32, {4, 16}, {-16, 1}, dev), 1, out);
  add("null input data", bad, DType::f32, V::contiguous(nullptr, DType::f32, {4, 16}, dev), 1, out);
  add("null out data", bad, DType::f32, in, 1, V::contiguous(nullptr, DType::f32, {4, 16}, dev));
  // The functor's dtype.
  add("f32 input and output, T = uint32_t", bad, DType::u32, in, 1, out);
  add("f32 input, u32 output, T = uint32_t", bad, DType::u32, in, 1, V::contiguous(o, DType::u32, {4, 16}, dev));
  add("u32 input, f32 output, T = uint32_t", bad, DType::u32, V::contiguous(x, DType::u32, {4, 16}, dev), 1, out);
  add("i32 input, i64 output (a sum's dtype), T = int32_t", bad, DType::i32, V::contiguous(x, DType::i32, {4, 16}, dev), 1,
      V::contiguous(o, DType::i64, {4, 16}, dev));
  add("f16 input, f32 output, T = half", bad, DType::f16, V::contiguous(x, DType::f16, {4, 16}, dev), 1, out);
  add("i64 input and output, T = float", bad, DType::f32, V::contiguous(x, DType::i64, {4, 8}, dev), 1,
      V::contiguous(o, DType::i64, {4, 8}, dev));
  add("unknown input dtype 99, T = float", Errc::unsupported, DType::f32, V::contiguous(x, static_cast<DType>(99), {4, 16}, dev),
      1, out);
  add("unknown out dtype 99, T = float", Errc::unsupported, DType::f32, in, 1, V::contiguous(o, static_cast<DType>(99), {4, 16}, dev));
  return v;
}

// Calls f(CaseTag<C>{}) for the first scan case of `dtype`.
template <class F> void visit_scan_custom_case(DType dtype, F&& f) {
  bool done = false;
  for_each_scan_custom_case([&](auto tag) {
    if (!done && dtype_v<typename decltype(tag)::type::T> == dtype) {
      done = true;
      f(tag);
    }
  });
}

}  // namespace foldkit::test::tscan
