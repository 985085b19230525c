// CUDA prefix scans (foldkit/cuda/scan.hpp) against an independent serial host scan.
//
// Reference (written here, no foldkit code path): integer sums and products in wrapping uint64
// arithmetic on the sign- or zero-extended values; float sums and products in long double;
// min/max with the rules of ops.hpp's op::Min/op::Max written out again (pick_extreme below).
// Outputs are compared bit for bit wherever the result is exact:
//   integers                     always (64-bit wrap-around included);
//   float sums                   on integer-valued data whose every prefix stays bounded (see
//                                make_walk_data), so every partial sum the GPU can form is exact;
//   float products               on +-1 data with a few factors 2, 1/2, 3/2 (make_exact_prod_data);
//   min/max                      always (NaN: any NaN where the reference has one);
//   16-bit floats                accumulate in float and round each output once (scan.hpp): the
//                                exact float prefix rounded to half/bf16 is predictable bit for bit.
// Real-valued float sums are checked within a stated bound (check_real_sum).
//
// Every call writes into an output poisoned with 0xFF bytes that has guard elements before (the
// misaligned start) and after the end; the guards must come back untouched. Inputs carry NaN or
// answer-changing guards on both sides (random_arrays.hpp). Calls alternate between the
// convenient form and one explicit workspace that is zeroed once and never again. The data
// generators and the poisoned-output / in-place / workspace machinery are shared with the
// blocked and segmented tests: support/cuda_scan_harness.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "foldkit/cuda/scan.hpp"
#include "foldkit/scan.hpp"
#include "support/captured_graph.hpp"
#include "support/cuda_backend.hpp"
#include "support/cuda_scan_harness.hpp"
#include "support/random_arrays.hpp"
#include "support/reference.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

// ---- the result-type table of scan.hpp, written out again ----------------------------------
static_assert(std::is_same_v<scan_result_t<ReduceOp::sum, std::int32_t>, std::int64_t>);
static_assert(std::is_same_v<scan_result_t<ReduceOp::sum, std::uint32_t>, std::uint64_t>);
static_assert(std::is_same_v<scan_result_t<ReduceOp::prod, std::int32_t>, std::int64_t>);
static_assert(std::is_same_v<scan_result_t<ReduceOp::prod, std::uint64_t>, std::uint64_t>);
static_assert(std::is_same_v<scan_result_t<ReduceOp::min, std::int32_t>, std::int32_t>);
static_assert(std::is_same_v<scan_result_t<ReduceOp::max, std::uint32_t>, std::uint32_t>);
static_assert(std::is_same_v<scan_result_t<ReduceOp::sum, float>, float>);
static_assert(std::is_same_v<scan_result_t<ReduceOp::sum, half>, half>);
static_assert(std::is_same_v<scan_result_t<ReduceOp::prod, bfloat16>, bfloat16>);
static_assert(std::is_same_v<scan_result_t<ReduceOp::max, half>, half>);

// =============================================================================================
// Reference
// =============================================================================================

// op::Max / op::Min of ops.hpp, written out again: a NaN wins (the left operand's when both are
// NaN: a scan keeps operand order); otherwise the larger (smaller) value; of two equal values
// (only +0 and -0 differ in bits) max takes the AND of the bit patterns (+0 unless both are
// -0) and min the OR (-0 unless both are +0).
template <bool kMax, class C> C pick_extreme(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) {
      using U = std::conditional_t<sizeof(C) == 4, std::uint32_t, std::uint64_t>;
      U ua, ub;
      std::memcpy(&ua, &a, sizeof(C));
      std::memcpy(&ub, &b, sizeof(C));
      const U r = kMax ? (ua & ub) : (ua | ub);
      C out;
      std::memcpy(&out, &r, sizeof(C));
      return out;
    }
  }
  if constexpr (kMax) return b > a ? b : a;
  else return b < a ? b : a;
}

// The running prefix of one op over dtype T, serially, left to right.
template <ReduceOp Op, class T> class RefScan {
 public:
  using R = scan_result_t<Op, T>;
  static constexpr bool kMinMax = Op == ReduceOp::min || Op == ReduceOp::max;
  static constexpr bool kIntArith = !kMinMax && std::is_integral_v<T>;
  static constexpr bool kRealArith = !kMinMax && !std::is_integral_v<T>;
  using C = std::conditional_t<is_16bit_float_v<T>, float, T>;  // what min/max compare in

  // Inclusive scans start from the op's identity (sum: 0, or -0 for floats; prod: 1; max: -inf
  // or the lowest integer; min: +inf or the highest): combining it with x gives x exactly.
  static RefScan identity() {
    RefScan r;
    if constexpr (kIntArith) {
      r.int_acc_ = Op == ReduceOp::prod ? 1 : 0;
    } else if constexpr (kRealArith) {
      r.real_acc_ = Op == ReduceOp::prod ? 1.0L : -0.0L;
    } else if constexpr (std::is_floating_point_v<C>) {
      r.ext_acc_ = Op == ReduceOp::max ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    } else {
      r.ext_acc_ = Op == ReduceOp::max ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
    }
    return r;
  }
  // Exclusive scans start from init.
  static RefScan starting_at(R init) {
    RefScan r;
    if constexpr (kIntArith) r.int_acc_ = as_u64(init);
    else if constexpr (kRealArith) r.real_acc_ = to_ld(init);
    else r.ext_acc_ = to_c(init);
    return r;
  }

  void add(T x) {
    if constexpr (kIntArith) {
      if constexpr (Op == ReduceOp::sum) int_acc_ += as_u64(x);
      else int_acc_ *= as_u64(x);
    } else if constexpr (kRealArith) {
      if constexpr (Op == ReduceOp::sum) real_acc_ += to_ld(x);
      else real_acc_ *= to_ld(x);
    } else {
      ext_acc_ = pick_extreme<Op == ReduceOp::max>(ext_acc_, to_c(x));
    }
  }

  // The prefix as the scan writes it. Float sums and products are exact on the data the exact
  // tests use, so one rounding to the output type (float, then half/bf16) gives the answer.
  R value() const {
    if constexpr (kIntArith) {
      return static_cast<R>(int_acc_);
    } else if constexpr (kRealArith) {
      if constexpr (is_16bit_float_v<T>) return T(static_cast<float>(real_acc_));
      else return static_cast<T>(real_acc_);
    } else {
      if constexpr (is_16bit_float_v<T>) return T(ext_acc_);
      else return ext_acc_;
    }
  }

 private:
  static C to_c(T v) {
    if constexpr (is_16bit_float_v<T>) return static_cast<float>(v);
    else return v;
  }
  std::uint64_t int_acc_ = 0;
  long double real_acc_ = 0;
  C ext_acc_{};
};

template <class R> bool same_or_both_nan(const R& got, const R& want) {
  return same_bits(got, want) || (is_nan_value(got) && is_nan_value(want));
}

// Every output bit-identical to the serial reference (any NaN where it has a NaN).
template <ReduceOp Op, class T>
::testing::AssertionResult check_exact(const TestArray<T>& a, bool exclusive, scan_result_t<Op, T> init,
                                       const scan_result_t<Op, T>* got) {
  using R = scan_result_t<Op, T>;
  RefScan<Op, T> ref = exclusive ? RefScan<Op, T>::starting_at(init) : RefScan<Op, T>::identity();
  std::int64_t bad = 0, first = -1;
  R first_want{}, first_got{};
  for (std::int64_t i = 0; i < a.n; ++i) {
    R want;
    if (exclusive) {
      want = ref.value();
      ref.add(a[i]);
    } else {
      ref.add(a[i]);
      want = ref.value();
    }
    if (!same_or_both_nan(got[i], want) && bad++ == 0) {
      first = i;
      first_want = want;
      first_got = got[i];
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << op_name(Op) << (exclusive ? " exclusive" : " inclusive") << " scan: " << bad
                                       << " of " << a.n << " outputs wrong; first at index " << first << ": got "
                                       << show(first_got) << ", want bit-identical " << show(first_want)
                                       << " (input there " << show(a[first]) << ")";
}

// Real-valued float sums. Bound on |out[i] - exact prefix[i]|, with A[i] = |init| + sum |x_j|
// over the prefix, eps the accumulator's machine epsilon (float for f32/f16/bf16, double for
// f64), u = eps / 2:
//
//   acc_tol[i] = ((log2 n + 64) * eps + 10 * sqrt(n / 1024) * u) * A[i]
//
// How the GPU adds (scan.hpp): within a tile of about 4096 elements each thread adds its items
// serially, then thread and warp prefixes combine in log-depth trees; across tiles a tile's
// prefix is the left-to-right fold of the tile aggregates before it. An output is therefore
// (tile prefix) + (thread-level tree) + (serial in-thread chain). The in-tile part passes through
// at most ~32 serial additions plus ~10 tree levels: its worst-case error is below 42 u A, well
// inside (log2 n + 64) eps A (the first term; log2 n adds room for any deeper tree). The
// cross-tile fold is a serial sum of T = n / tile aggregates, whose worst case (T u A) is far
// too loose to test anything at large n; its realistic error is a random walk, and the second
// term is the probabilistic bound of Higham & Mary (the reference.hpp tolerance, lambda = 10)
// for T <= n / 1024 serial additions, i.e. assuming tiles of at least 1024 elements. At the
// sizes tested (n <= 2^24) the bound is 84..728 eps relative to A: loose for a correct scan (a
// host simulation of that structure, 16 items a thread, 256 threads, tiles of 4096, on data in
// [0, 1), stayed below 6 eps A at n = 2^20 and 13 eps A at 2^24, so even (log2 n + 64) eps A
// alone holds there with room), yet tight enough that a lost or doubled tile aggregate on
// non-negative data shows (about 2048 / A relative).
// 16-bit outputs are then rounded once more: + eps_T * (|prefix| + acc_tol) (eps_T = 2^-10 for
// half, 2^-7 for bf16), plus half's smallest subnormal for results that underflow.
// The reference itself is a Neumaier-compensated long double sum: effectively exact.
template <class T> long double output_epsilon() {
  if constexpr (std::is_same_v<T, double>) return 0x1p-52L;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-23L;
  else if constexpr (std::is_same_v<T, half>) return 0x1p-10L;
  else return 0x1p-7L;
}

template <class T>
::testing::AssertionResult check_real_sum(const TestArray<T>& a, bool exclusive, T init, const T* got) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const long double eps = std::numeric_limits<Acc>::epsilon();
  const long double n = static_cast<long double>(std::max<std::int64_t>(a.n, 2));
  const long double factor = (std::log2(n) + 64) * eps + 10 * std::sqrt(n / 1024) * (eps / 2);
  long double sum = exclusive ? to_ld(init) : -0.0L, comp = 0, abs_sum = exclusive ? std::fabs(to_ld(init)) : 0.0L;
  auto add = [&](long double x) {  // Neumaier: sum + comp is the exact prefix to ~2 ulps of long double
    const long double t = sum + x;
    comp += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
    abs_sum += std::fabs(x);
  };
  std::int64_t bad = 0, first = -1;
  long double first_want = 0, first_tol = 0;
  for (std::int64_t i = 0; i < a.n; ++i) {
    if (!exclusive) add(to_ld(a[i]));
    const long double want = sum + comp;
    bool ok;
    long double tol = 0;
    if (want != want) {
      ok = is_nan_value(got[i]);
    } else {
      const long double acc_tol = factor * abs_sum;
      tol = acc_tol;
      if constexpr (is_16bit_float_v<T>) tol += output_epsilon<T>() * (std::fabs(want) + acc_tol) + 0x1p-24L;
      ok = std::fabs(to_ld(got[i]) - want) <= tol;  // false for NaN
    }
    if (!ok && bad++ == 0) {
      first = i;
      first_want = want;
      first_tol = tol;
    }
    if (exclusive) add(to_ld(a[i]));
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(21);
  os << "sum " << (exclusive ? "exclusive" : "inclusive") << " scan: " << bad << " of " << a.n
     << " outputs out of bounds; first at index " << first << ": got " << show(got[first]) << ", want "
     << static_cast<double>(first_want) << " +- " << static_cast<double>(first_tol);
  return ::testing::AssertionFailure() << os.str();
}

// =============================================================================================
// The op x dtype sweep
// =============================================================================================

// 0..3, warp and tile edges (31-33, 1023-1025; tiles of 4096 and 8192 elements: 4095-4097,
// 8191-8193, 12287/12289; of 9216 (4-byte whole-array scans, 288 x 32): 9215-9217,
// 18431/18433), 2^16 - 1..2^16 + 1, the primes 65521 and 1000003, and 2^k +- 1 up to 2^24;
// capped by FOLDKIT_TEST_MAX_N.
std::vector<std::int64_t> scan_sizes() {
  std::vector<std::int64_t> s = {0,     1,     2,     3,     31,    32,    33,    1023,  1024,  1025,
                                 4095,  4096,  4097,  8191,  8192,  8193,  9215,  9216,  9217,  12287,
                                 12289, 18431, 18433, 65521, 65535, 65536, 65537, 1000003};
  for (int k : {8, 14, 17, 18, 20, 22, 24}) {
    const std::int64_t p = std::int64_t{1} << k;
    s.insert(s.end(), {p - 1, p + 1});
  }
  std::sort(s.begin(), s.end());
  return capped(s);
}

struct Layout {
  std::int64_t in_offset, out_offset;
};
// Misaligned starts of the input and, separately, of the output: every single offset up to 4097
// elements, a few random ones up to 65537, one random pair above.
std::vector<Layout> layouts(std::int64_t n, Rng& rng) {
  auto r = [&] { return rng.uniform(1, 3); };
  if (n <= 4097) return {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1}, {0, 2}, {0, 3}, {r(), r()}};
  if (n <= kAllOffsetsUpTo) return {{0, 0}, {r(), 0}, {0, r()}, {r(), r()}};
  return {{rng.uniform(0, 3), rng.uniform(0, 3)}};
}

// Inclusive and exclusive, every size and layout, out of place; in place as well where the
// result type is T. Calls alternate between the convenient form and one explicit workspace.
template <ReduceOp Op, class T> void sweep_exact() {
  using R = scan_result_t<Op, T>;
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::vector<std::int64_t> sizes = scan_sizes();
  const ScanWorkspace ws(sizes.back(), {dtype_v<T>});
  ScanOutput<R> out;
  std::vector<T> in_place_host;
  int calls = 0;
  for (std::int64_t n : sizes) {
    for (const Layout& l : layouts(n, rng)) {
      for (bool exclusive : {false, true}) {
        const cuda::Workspace* use_ws = (calls++ % 2) ? ws.get() : nullptr;
        const R init = make_init<Op, T>(rng);
        const TestArray<T> a = make_exact_data<Op, T>(n, l.in_offset, rng, exclusive, init);
        SCOPED_TRACE(a.describe() + ", " + describe_call(exclusive, use_ws, l.out_offset) +
                     (exclusive ? ", init " + show(init) : std::string()));
        const R* got = nullptr;
        ASSERT_TRUE((out.template run<Op, T>(a, l.out_offset, exclusive, init, use_ws, nullptr, &got)));
        EXPECT_TRUE((check_exact<Op, T>(a, exclusive, init, got)));
        if (::testing::Test::HasFailure()) return;
      }
    }
    if constexpr (std::is_same_v<R, T>) {
      for (bool exclusive : {false, true}) {
        const cuda::Workspace* use_ws = (calls++ % 2) ? ws.get() : nullptr;
        const R init = make_init<Op, T>(rng);
        const TestArray<T> a = make_exact_data<Op, T>(n, rng.uniform(n <= kAllOffsetsUpTo ? 1 : 0, 3), rng, exclusive, init);
        SCOPED_TRACE(a.describe() + ", IN PLACE, " + describe_call(exclusive, use_ws, a.offset));
        const T* got = nullptr;
        ASSERT_TRUE((run_in_place<Op, T>(a, exclusive, init, use_ws, in_place_host, &got)));
        EXPECT_TRUE((check_exact<Op, T>(a, exclusive, init, got)));
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

using CudaScan = CudaTest;

#define FOLDKIT_SCAN_SWEEPS(name, T)                                            \
  TEST_F(CudaScan, Sum_##name) { sweep_exact<ReduceOp::sum, T>(); }             \
  TEST_F(CudaScan, Prod_##name) { sweep_exact<ReduceOp::prod, T>(); }           \
  TEST_F(CudaScan, Min_##name) { sweep_exact<ReduceOp::min, T>(); }             \
  TEST_F(CudaScan, Max_##name) { sweep_exact<ReduceOp::max, T>(); }

FOLDKIT_FOR_EACH_SCAN_DTYPE(FOLDKIT_SCAN_SWEEPS)

// =============================================================================================
// Floating-point specifics
// =============================================================================================

// Random real data, signed (cancellation) and non-negative, within check_real_sum's bound.
template <class T> void real_sums() {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  ScanOutput<T> out;
  const ScanWorkspace ws(std::int64_t{1} << 24, {dtype_v<T>});
  int calls = 0;
  for (std::int64_t n : capped({1, 2, 3, 33, 1025, 4097, 65537, (1 << 20) + 1, 1000003, (1 << 24) - 1})) {
    for (double lo : {-1.0, 0.0}) {
      for (bool exclusive : {false, true}) {
        const cuda::Workspace* use_ws = (calls++ % 2) ? ws.get() : nullptr;
        const std::int64_t out_offset = rng.uniform(0, 3);
        // f16 tops out at 65504: its data shrink with n so that no prefix can overflow.
        const double scale = std::is_same_v<T, half> ? std::min(1.0, 30000.0 / static_cast<double>(n)) : 1.0;
        const T init = from_double<T>(scale * (lo + rng.uniform(0, 1000) / 1000.0));
        const auto a = make_real_data<T>(n, rng.uniform(0, 3), rng.counter(), scale * lo, scale);
        SCOPED_TRACE(a.describe() + " in [" + std::to_string(scale * lo) + ", " + std::to_string(scale) + "), " +
                     describe_call(exclusive, use_ws, out_offset));
        const T* got = nullptr;
        ASSERT_TRUE((out.template run<ReduceOp::sum, T>(a, out_offset, exclusive, init, use_ws, nullptr, &got)));
        EXPECT_TRUE(check_real_sum<T>(a, exclusive, init, got));
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

// NaN planted at the start, in the misaligned head, at the end and at random places (one to
// three of them, quiet NaN and negative NaN): min/max are exact before the first NaN and NaN
// from it on; sums are NaN from it on.
template <class T> void nan_propagation() {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  ScanOutput<T> out;
  const T nan = quiet_nan<T>();
  const T negative_nan = from_double<T>(-static_cast<double>(std::numeric_limits<float>::quiet_NaN()));
  for (std::int64_t n : capped({1, 2, 3, 33, 1025, 4097, 65537, 1000003})) {
    const std::vector<std::vector<std::int64_t>> plants = {
        {0}, {n - 1}, {rng.uniform(0, std::min<std::int64_t>(n - 1, 3))}, {rng.uniform(0, n - 1)},
        {rng.uniform(0, n - 1), rng.uniform(0, n - 1), rng.uniform(0, n - 1)}};
    for (const auto& at : plants) {
      auto a = make_real_data<T>(n, rng.uniform(0, 3), rng.counter(), -1.0, 1.0);
      for (std::size_t k = 0; k < at.size(); ++k) a[at[k]] = (k % 2) ? negative_nan : nan;
      const std::int64_t out_offset = rng.uniform(0, 3);
      SCOPED_TRACE(a.describe() + ", NaN at " + ::testing::PrintToString(at) + ", out offset " +
                   std::to_string(out_offset));
      for (bool exclusive : {false, true}) {
        SCOPED_TRACE(exclusive ? "exclusive" : "inclusive");
        const T init = from_double<T>(0.25);
        const T* got = nullptr;
        ASSERT_TRUE((out.template run<ReduceOp::max, T>(a, out_offset, exclusive, init, nullptr, nullptr, &got)));
        EXPECT_TRUE((check_exact<ReduceOp::max, T>(a, exclusive, init, got)));
        ASSERT_TRUE((out.template run<ReduceOp::min, T>(a, out_offset, exclusive, init, nullptr, nullptr, &got)));
        EXPECT_TRUE((check_exact<ReduceOp::min, T>(a, exclusive, init, got)));
        ASSERT_TRUE((out.template run<ReduceOp::sum, T>(a, out_offset, exclusive, init, nullptr, nullptr, &got)));
        EXPECT_TRUE(check_real_sum<T>(a, exclusive, init, got));
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Signed zeros, bit for bit. max over {-1, -0, +0 (rare)}: -1 until the first zero, -0 until
// the first +0, then +0; min mirrored over {+1, +0, -0 (rare)}. Sums of all -0 are -0 (the
// identity of float addition is -0, ops.hpp); an exclusive sum from +0 is +0.
template <class T> void signed_zeros() {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  ScanOutput<T> out;
  const T neg = from_double<T>(-0.0), pos = from_double<T>(0.0);
  for (std::int64_t n : capped({1, 2, 3, 33, 1025, 4097, 65537, 1000003})) {
    const std::int64_t offset = rng.uniform(0, 3), out_offset = rng.uniform(0, 3);
    const CounterRng c = rng.counter();
    // One +0 (-0) in about 4096 elements, so that the switch happens inside larger arrays too.
    TestArray<T> for_max(n, offset, quiet_nan<T>()), for_min(n, offset, quiet_nan<T>()), zeros(n, offset, quiet_nan<T>());
    fill(for_max, [&](std::int64_t i) {
      const std::uint64_t r = c.bits(static_cast<std::uint64_t>(i)) % 4096;
      return r == 0 ? pos : r < 2048 ? neg : from_double<T>(-1.0);
    });
    fill(for_min, [&](std::int64_t i) {
      const std::uint64_t r = c.bits(static_cast<std::uint64_t>(i)) % 4096;
      return r == 0 ? neg : r < 2048 ? pos : from_double<T>(1.0);
    });
    fill(zeros, [&](std::int64_t) { return neg; });
    SCOPED_TRACE(for_max.describe() + ", out offset " + std::to_string(out_offset));
    const T* got = nullptr;
    for (bool exclusive : {false, true}) {
      SCOPED_TRACE(exclusive ? "exclusive" : "inclusive");
      ASSERT_TRUE((out.template run<ReduceOp::max, T>(for_max, out_offset, exclusive, neg, nullptr, nullptr, &got)));
      EXPECT_TRUE((check_exact<ReduceOp::max, T>(for_max, exclusive, neg, got)));
      ASSERT_TRUE((out.template run<ReduceOp::min, T>(for_min, out_offset, exclusive, pos, nullptr, nullptr, &got)));
      EXPECT_TRUE((check_exact<ReduceOp::min, T>(for_min, exclusive, pos, got)));
      for (T init : {neg, pos}) {
        ASSERT_TRUE((out.template run<ReduceOp::sum, T>(zeros, out_offset, exclusive, init, nullptr, nullptr, &got)));
        EXPECT_TRUE((check_exact<ReduceOp::sum, T>(zeros, exclusive, init, got))) << "sum of -0s, init " << show(init);
        if (!exclusive) break;  // init only matters for exclusive scans
      }
    }
    if (::testing::Test::HasFailure()) return;
  }
}

#define FOLDKIT_SCAN_FLOAT_TESTS(name, T)                                     \
  TEST_F(CudaScan, SumRealData_##name) { real_sums<T>(); }                    \
  TEST_F(CudaScan, NaNPropagation_##name) { nan_propagation<T>(); }           \
  TEST_F(CudaScan, SignedZeros_##name) { signed_zeros<T>(); }

FOLDKIT_SCAN_FLOAT_TESTS(f32, float)
FOLDKIT_SCAN_FLOAT_TESTS(f64, double)
FOLDKIT_SCAN_FLOAT_TESTS(f16, half)
FOLDKIT_SCAN_FLOAT_TESTS(bf16, bfloat16)

// 32-bit integer sums widen before adding: three maxima (or minima) give their exact 64-bit sum.
TEST_F(CudaScan, IntegerSumsWidenAndWrap) {
  ScanOutput<std::int64_t> out_s;
  ScanOutput<std::uint64_t> out_u;
  for (std::int64_t offset : {0, 1, 3}) {
    TestArray<std::int32_t> s(4, offset, 0);
    TestArray<std::uint32_t> u(4, offset, 0);
    for (std::int64_t i = 0; i < 4; ++i) {
      s[i] = (i % 2) ? std::numeric_limits<std::int32_t>::lowest() : std::numeric_limits<std::int32_t>::max();
      u[i] = std::numeric_limits<std::uint32_t>::max();
    }
    const std::int64_t* gs = nullptr;
    const std::uint64_t* gu = nullptr;
    ASSERT_TRUE((out_s.run<ReduceOp::sum, std::int32_t>(s, 1, false, 0, nullptr, nullptr, &gs)));
    EXPECT_EQ(gs[0], 2147483647);
    EXPECT_EQ(gs[1], -1);
    EXPECT_EQ(gs[2], 2147483646);
    ASSERT_TRUE((out_u.run<ReduceOp::sum, std::uint32_t>(u, 2, false, 0, nullptr, nullptr, &gu)));
    EXPECT_EQ(gu[3], 4ull * 4294967295ull);
    // Exclusive from a 64-bit init near the top: wraps mod 2^64.
    ASSERT_TRUE((out_u.run<ReduceOp::sum, std::uint32_t>(u, 0, true, ~std::uint64_t{0}, nullptr, nullptr, &gu)));
    EXPECT_EQ(gu[0], ~std::uint64_t{0});
    EXPECT_EQ(gu[1], 4294967294ull);
    ASSERT_TRUE((out_s.run<ReduceOp::prod, std::int32_t>(s, 0, false, 0, nullptr, nullptr, &gs)));
    EXPECT_EQ(gs[1], static_cast<std::int64_t>(2147483647ll * -2147483648ll));
  }
}

// Zero elements: nothing is written, nothing throws, null pointers included.
TEST_F(CudaScan, EmptyInputWritesNothing) {
  const TestArray<float> a(0, 1, quiet_nan<float>());
  ScanOutput<float> out;
  const float* got = nullptr;
  for (bool exclusive : {false, true}) {
    EXPECT_TRUE((out.run<ReduceOp::sum, float>(a, 2, exclusive, 1.0f, nullptr, nullptr, &got)));
    EXPECT_TRUE((out.run<ReduceOp::max, float>(a, 0, exclusive, 1.0f, nullptr, nullptr, &got)));
  }
  const TestArray<std::int32_t> b(0, 0, 0);
  ScanOutput<std::int64_t> out64;
  const std::int64_t* got64 = nullptr;
  EXPECT_TRUE((out64.run<ReduceOp::sum, std::int32_t>(b, 1, true, 5, nullptr, nullptr, &got64)));
  EXPECT_NO_THROW(cuda::inclusive_scan<ReduceOp::sum>(static_cast<const float*>(nullptr), 0, static_cast<float*>(nullptr)));
  EXPECT_NO_THROW(cuda::exclusive_scan<ReduceOp::min>(static_cast<const half*>(nullptr), 0, static_cast<half*>(nullptr),
                                                      half(1.0f)));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
}

// =============================================================================================
// Large input, determinism
// =============================================================================================

constexpr std::int64_t k2Pow28 = std::int64_t{1} << 28;

// 2^28 elements (capped by FOLDKIT_TEST_MAX_N): f32 inclusive sum of walk data, exact, with
// misaligned input and output.
TEST_F(CudaScan, F32SumExact2Pow28) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t n = capped({k2Pow28}).front();
  const auto a = make_walk_data<float>(n, rng.uniform(1, 3), rng.counter(), 0);
  const std::int64_t out_offset = rng.uniform(1, 3);
  SCOPED_TRACE(a.describe() + ", out offset " + std::to_string(out_offset));
  ScanOutput<float> out;
  const float* got = nullptr;
  ASSERT_TRUE((out.run<ReduceOp::sum, float>(a, out_offset, false, 0.0f, nullptr, nullptr, &got)));
  EXPECT_TRUE((check_exact<ReduceOp::sum, float>(a, false, 0.0f, got)));
}

// 20 calls on the same real-valued input give the same bits (f32 sum, many tiles), the
// convenient form and an explicit workspace alike.
TEST_F(CudaScan, RepeatedCallsBitwiseIdentical) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t n = capped({3 * (std::int64_t{1} << 20) + 7}).front();
  const auto a = make_real_data<float>(n, 1, rng.counter(), -1.0, 1.0);
  SCOPED_TRACE(a.describe());
  const ScanWorkspace ws(n, {DType::f32});
  for (bool exclusive : {false, true}) {
    SCOPED_TRACE(exclusive ? "exclusive" : "inclusive");
    ScanOutput<float> out;
    const float init = 0.375f;
    const float* got = nullptr;
    ASSERT_TRUE((out.run<ReduceOp::sum, float>(a, 0, exclusive, init, nullptr, nullptr, &got)));
    ASSERT_TRUE(check_real_sum<float>(a, exclusive, init, got));
    const std::vector<float> first(got, got + n);
    for (int call = 1; call < 20; ++call) {
      const cuda::Workspace* use_ws = call % 2 ? ws.get() : nullptr;
      ASSERT_TRUE((out.run<ReduceOp::sum, float>(a, 0, exclusive, init, use_ws, nullptr, &got)));
      ASSERT_EQ(std::memcmp(first.data(), got, static_cast<std::size_t>(n) * sizeof(float)), 0)
          << "call " << call << " (" << describe_call(exclusive, use_ws, 0) << ") differs from call 0";
    }
  }
}

// =============================================================================================
// Workspaces
// =============================================================================================

using CudaScanWorkspace = CudaTest;

TEST_F(CudaScanWorkspace, SizeQuery) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dtype_name(t));
    std::size_t previous = 0;
    for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{4096}, std::int64_t{4097},
                           std::int64_t{1} << 20, std::int64_t{1} << 24, k2Pow28}) {
      const std::size_t bytes = cuda::scan_workspace_bytes(n, t);
      EXPECT_GE(bytes, previous) << "n " << n << ": a larger n never needs less";
      // Documented as tens of bytes per 4096 elements: far below the data itself.
      EXPECT_LE(bytes, static_cast<std::size_t>(n) / 16 + 65536) << "n " << n;
      previous = bytes;
    }
    EXPECT_GT(cuda::scan_workspace_bytes(std::int64_t{1} << 24, t), 0u);
  }
}

// One workspace, zeroed once (over garbage, by init_scan_workspace; or by a plain cudaMemset),
// then ~40 calls of several ops and dtypes without re-zeroing: sizes go up to its capacity, down
// to 0 and 1, and back up (smaller after bigger and bigger after smaller).
template <ReduceOp Op, class T>
void one_call_with(const cuda::Workspace* ws, std::int64_t n, bool exclusive, Rng& rng, cudaStream_t stream) {
  using R = scan_result_t<Op, T>;
  ScanOutput<R> out;
  const R init = make_init<Op, T>(rng);
  const auto a = make_exact_data<Op, T>(n, rng.uniform(0, 3), rng, exclusive, init);
  const std::int64_t out_offset = rng.uniform(0, 3);
  SCOPED_TRACE(std::string(op_name(Op)) + " " + a.describe() + ", " + describe_call(exclusive, ws, out_offset));
  const R* got = nullptr;
  ASSERT_TRUE((out.template run<Op, T>(a, out_offset, exclusive, init, ws, stream, &got)));
  EXPECT_TRUE((check_exact<Op, T>(a, exclusive, init, got)));
}

void reuse_one_workspace(bool zero_with_memset) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t cap = capped({(std::int64_t{1} << 22) + 5}).front();
  const ScanWorkspace workspace(cap, {DType::f32, DType::i32, DType::f16, DType::f64},
                                zero_with_memset ? ScanZeroing::memset_over_garbage : ScanZeroing::init_over_garbage);
  const cuda::Workspace& ws = *workspace.get();
  const std::int64_t sizes[] = {cap, 1000, cap, 1, 4097, 0, cap - 1, 65537, 33, cap, 2, (cap + 1) / 2};
  int call = 0;
  for (std::int64_t n : sizes) {
    const bool exclusive = (call++ % 3) == 1;
    one_call_with<ReduceOp::sum, float>(&ws, n, exclusive, rng, nullptr);
    one_call_with<ReduceOp::sum, std::int32_t>(&ws, n, !exclusive, rng, nullptr);
    one_call_with<ReduceOp::max, half>(&ws, n, exclusive, rng, nullptr);
    one_call_with<ReduceOp::prod, double>(&ws, n, !exclusive, rng, nullptr);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST_F(CudaScanWorkspace, ReusedWithoutReZeroingInitScanWorkspace) { reuse_one_workspace(false); }
TEST_F(CudaScanWorkspace, ReusedWithoutReZeroingCudaMemset) { reuse_one_workspace(true); }

// The convenient form grows its workspace when a call needs more, on a created stream and on
// the default stream, with smaller calls in between.
TEST_F(CudaScanWorkspace, ConvenientFormGrowsAndShrinks) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  on_created_and_default_streams([&](cudaStream_t s) {
    for (std::int64_t n : capped({1000, (1 << 20) + 1, 17, (1 << 22) + 3, 4097, (1 << 22) + 3, 0, 65537})) {
      one_call_with<ReduceOp::sum, float>(nullptr, n, false, rng, s);
      one_call_with<ReduceOp::sum, std::uint32_t>(nullptr, n, true, rng, s);
      if (::testing::Test::HasFailure()) return;
    }
  });
}


// Documented: the explicit form works under graph capture. An inclusive and an exclusive scan
// sharing one workspace are captured once and replayed on new data, outputs poisoned between.
TEST_F(CudaScanWorkspace, GraphCaptureWithExplicitWorkspaceReplays) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const Stream stream;
  const std::int64_t n = capped({(1 << 20) + 3}).front(), offset = 1;
  const ScanWorkspace ws(n, {DType::i32}, stream);
  auto data = make_exact_sum_data<std::int32_t>(n, offset, rng.counter());
  const DeviceArray<std::int32_t> in = to_device(data);
  const DeviceBuffer incl(static_cast<std::size_t>(n) * 8), excl(static_cast<std::size_t>(n) * 8);
  const std::int64_t init = -123456789012345;
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  const CapturedGraph graph(stream, [&] {
    cuda::inclusive_scan<ReduceOp::sum>(in.ptr, n, incl.as<std::int64_t>(), *ws.get(), stream);
    cuda::exclusive_scan<ReduceOp::sum>(in.ptr, n, excl.as<std::int64_t>(), init, *ws.get(), stream);
  });
  std::vector<std::int64_t> host(static_cast<std::size_t>(n));
  for (int replay = 0; replay < 5 && !HasFailure(); ++replay) {
    SCOPED_TRACE("replay " + std::to_string(replay));
    data = make_exact_sum_data<std::int32_t>(n, offset, rng.counter());
    FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(in.buffer.get(), data.storage.data(), data.storage.size() * sizeof(std::int32_t),
                                       cudaMemcpyHostToDevice, stream));
    FOLDKIT_CUDA_CHECK(cudaMemsetAsync(incl.get(), kPoison, incl.bytes(), stream));
    FOLDKIT_CUDA_CHECK(cudaMemsetAsync(excl.get(), kPoison, excl.bytes(), stream));
    graph.launch(stream);
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(host.data(), incl.get(), incl.bytes(), cudaMemcpyDeviceToHost));
    EXPECT_TRUE((check_exact<ReduceOp::sum, std::int32_t>(data, false, 0, host.data()))) << "inclusive";
    FOLDKIT_CUDA_CHECK(cudaMemcpy(host.data(), excl.get(), excl.bytes(), cudaMemcpyDeviceToHost));
    EXPECT_TRUE((check_exact<ReduceOp::sum, std::int32_t>(data, true, init, host.data()))) << "exclusive";
  }
}

// =============================================================================================
// Concurrency: 4 streams in flight at once
// =============================================================================================

// One independent job with its own input, output and expected answer; enqueue() does not wait.
class Lane {
 public:
  virtual ~Lane() = default;
  virtual std::size_t workspace_bytes() const = 0;
  virtual void enqueue(cudaStream_t stream, const cuda::Workspace* ws) = 0;
  virtual ::testing::AssertionResult collect(cudaStream_t stream) = 0;  // waits for stream
};

template <ReduceOp Op, class T> class TypedLane final : public Lane {
 public:
  using R = scan_result_t<Op, T>;
  TypedLane(std::int64_t n, bool exclusive, Rng& rng)
      : exclusive_(exclusive),
        init_(make_init<Op, T>(rng)),
        data_(make_exact_data<Op, T>(n, rng.uniform(0, 3), rng, exclusive, init_)),
        in_(to_device(data_)),
        out_(static_cast<std::size_t>(n + kOutGuard) * sizeof(R)),
        host_(static_cast<std::size_t>(n + kOutGuard)) {}
  std::size_t workspace_bytes() const override { return cuda::scan_workspace_bytes(data_.n, dtype_v<T>); }
  void enqueue(cudaStream_t stream, const cuda::Workspace* ws) override {
    FOLDKIT_CUDA_CHECK(cudaMemsetAsync(out_.get(), kPoison, out_.bytes(), stream));
    enqueue_scan<Op, T>(exclusive_, in_.ptr, data_.n, out_.as<R>(), init_, ws, stream);
  }
  ::testing::AssertionResult collect(cudaStream_t stream) override {
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(host_.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost));
    const auto* bytes = reinterpret_cast<const unsigned char*>(host_.data());
    const std::size_t end = static_cast<std::size_t>(data_.n) * sizeof(R);
    if (first_unpoisoned(bytes, end, out_.bytes()) >= 0)
      return ::testing::AssertionFailure() << op_name(Op) << " " << data_.describe() << ": wrote past the end";
    auto r = check_exact<Op, T>(data_, exclusive_, init_, host_.data());
    if (!r) r << " (" << op_name(Op) << " " << data_.describe() << ")";
    return r;
  }

 private:
  bool exclusive_;
  R init_;
  TestArray<T> data_;
  DeviceArray<T> in_;
  DeviceBuffer out_;
  std::vector<R> host_;
};

void run_four_streams(bool explicit_ws) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  // Large enough that each scan spans the whole GPU, so launches on different streams overlap.
  const std::int64_t n = capped({(std::int64_t{1} << 22) + 1}).front();
  std::vector<std::unique_ptr<Lane>> lanes;
  lanes.push_back(std::make_unique<TypedLane<ReduceOp::sum, float>>(n, false, rng));
  lanes.push_back(std::make_unique<TypedLane<ReduceOp::sum, std::int32_t>>(n, true, rng));
  lanes.push_back(std::make_unique<TypedLane<ReduceOp::max, double>>(n, false, rng));
  lanes.push_back(std::make_unique<TypedLane<ReduceOp::sum, half>>(n, true, rng));
  std::array<Stream, 4> streams;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<cuda::Workspace> workspaces;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const std::size_t bytes = lanes[i]->workspace_bytes();
    buffers.push_back(std::make_unique<DeviceBuffer>(bytes > 0 ? bytes : 1));
    workspaces.push_back(cuda::Workspace{buffers.back()->get(), bytes});
    cuda::init_scan_workspace(workspaces.back(), streams[i]);
  }
  for (int round = 0; round < 10; ++round) {
    for (std::size_t i = 0; i < lanes.size(); ++i) lanes[i]->enqueue(streams[i], explicit_ws ? &workspaces[i] : nullptr);
    for (std::size_t i = 0; i < lanes.size(); ++i) ASSERT_TRUE(lanes[i]->collect(streams[i])) << "round " << round << ", stream " << i;
  }
}

using CudaScanConcurrency = CudaTest;

TEST_F(CudaScanConcurrency, FourStreamsOwnExplicitWorkspaces) { run_four_streams(true); }
TEST_F(CudaScanConcurrency, FourStreamsConvenientForm) { run_four_streams(false); }

// =============================================================================================
// Errors
// =============================================================================================

using CudaScanErrors = CudaTest;

TEST_F(CudaScanErrors, NullPointersWithElements) {
  const auto in = to_device(make_exact_sum_data<float>(16, 0, CounterRng{1}));
  const DeviceBuffer out(16 * sizeof(float));
  const ScanWorkspace ws(16, {DType::f32});
  float* o = out.as<float>();
  const float* none = nullptr;
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan<ReduceOp::sum>(none, 5, o); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan<ReduceOp::sum>(in.ptr, 5, static_cast<float*>(nullptr)); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::exclusive_scan<ReduceOp::max>(none, 5, o, 0.0f, *ws.get()); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::exclusive_scan<ReduceOp::max>(in.ptr, 5, static_cast<float*>(nullptr), 0.0f); }));
  const std::int32_t* inone = nullptr;
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::inclusive_scan<ReduceOp::sum>(inone, 1, static_cast<std::int64_t*>(nullptr));
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::inclusive_scan<ReduceOp::sum>(in.ptr, 16, o, cuda::Workspace{nullptr, std::size_t{1} << 20});
  })) << "null workspace";
}

// A pointer that is not aligned to its element type (only a reinterpret_cast makes one) is
// refused before anything runs, for inputs and outputs, whole-array and blocked.
TEST_F(CudaScanErrors, PointerNotAlignedToItsElementType) {
  const DeviceBuffer in(64 * sizeof(float)), out(64 * sizeof(std::int64_t));
  const auto* odd_in = reinterpret_cast<const float*>(in.as<char>() + 2);
  auto* odd_out = reinterpret_cast<float*>(out.as<char>() + 1);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan<ReduceOp::sum>(odd_in, 16, out.as<float>()); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan<ReduceOp::sum>(in.as<float>(), 16, odd_out); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::exclusive_scan<ReduceOp::sum>(reinterpret_cast<const std::int32_t*>(in.as<char>() + 1), 8,
                                        out.as<std::int64_t>(), std::int64_t{0});
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::inclusive_scan_blocked<ReduceOp::max>(odd_in, 16, out.as<float>(), 4);
  }));
}

TEST_F(CudaScanErrors, NegativeLength) {
  const auto in = to_device(make_exact_sum_data<float>(16, 0, CounterRng{2}));
  const DeviceBuffer out(16 * sizeof(float));
  const ScanWorkspace ws(16, {DType::f32});
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan<ReduceOp::sum>(in.ptr, -1, out.as<float>()); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::exclusive_scan<ReduceOp::prod>(in.ptr, -16, out.as<float>(), 1.0f, *ws.get()); }));
}

TEST_F(CudaScanErrors, WorkspaceTooSmall) {
  const std::int64_t n = 1 << 20;
  const auto in = to_device(make_exact_sum_data<float>(n, 0, CounterRng{3}));
  const DeviceBuffer out(static_cast<std::size_t>(n) * sizeof(float));
  const std::size_t need = cuda::scan_workspace_bytes(n, DType::f32);
  const DeviceBuffer buffer(need + 64);
  cuda::init_scan_workspace(cuda::Workspace{buffer.get(), need}, nullptr);
  ASSERT_GT(need, 0u);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::inclusive_scan<ReduceOp::sum>(in.ptr, n, out.as<float>(), cuda::Workspace{buffer.get(), need - 1});
  })) << "one byte short";
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::exclusive_scan<ReduceOp::sum>(in.ptr, n, out.as<float>(), 0.0f, cuda::Workspace{buffer.get(), 0});
  })) << "zero bytes";
  // A workspace sized for fewer elements than this call has.
  const std::size_t small = cuda::scan_workspace_bytes(1000, DType::f32);
  if (small < need) {
    EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
      cuda::inclusive_scan<ReduceOp::sum>(in.ptr, n, out.as<float>(), cuda::Workspace{buffer.get(), small});
    })) << "sized for n = 1000";
  }
  // The full size is accepted.
  EXPECT_NO_THROW(cuda::inclusive_scan<ReduceOp::sum>(in.ptr, n, out.as<float>(), cuda::Workspace{buffer.get(), need}));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
}

// Pageable host memory is not device-accessible: refused, never dereferenced.
TEST_F(CudaScanErrors, HostPointerIsWrongMemory) {
  const std::unique_ptr<float, decltype(&std::free)> host(static_cast<float*>(std::malloc(64 * sizeof(float))), &std::free);
  for (int i = 0; i < 64; ++i) host.get()[i] = 1.0f;
  const auto in = to_device(make_exact_sum_data<float>(64, 0, CounterRng{4}));
  const DeviceBuffer out(64 * sizeof(float));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cuda::inclusive_scan<ReduceOp::sum>(host.get(), 64, out.as<float>()); }));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cuda::inclusive_scan<ReduceOp::sum>(in.ptr, 64, host.get()); }));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory,
                          [&] { cuda::exclusive_scan<ReduceOp::min>(host.get(), 64, out.as<float>(), 0.0f); }));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cuda::exclusive_scan<ReduceOp::min>(in.ptr, 64, host.get(), 0.0f); }));
}

// Overlap other than exactly in place with equal types is refused, and nothing is written.
TEST_F(CudaScanErrors, PartialOverlapIsInvalidArgument) {
  const std::int64_t n = 1000;
  const DeviceBuffer buffer(static_cast<std::size_t>(4 * n) * sizeof(std::int64_t));
  FOLDKIT_CUDA_CHECK(cudaMemset(buffer.get(), 0, buffer.bytes()));
  float* f = buffer.as<float>() + 8;
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan<ReduceOp::sum>(f, n, f + 1); })) << "out = in + 1";
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan<ReduceOp::sum>(f, n, f - 1); })) << "out = in - 1";
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::exclusive_scan<ReduceOp::max>(f, n, f + n - 1, 0.0f); }))
      << "out starts at in's last element";
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::exclusive_scan<ReduceOp::max>(f + n - 1, n, f, 0.0f); }))
      << "out ends at in's first element";
  // i32 -> i64: even the same address is an overlap (the result type differs from T).
  std::int32_t* i = buffer.as<std::int32_t>() + 8;
  auto* same = reinterpret_cast<std::int64_t*>(i);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan<ReduceOp::sum>(i, n, same); }))
      << "i32 sum into int64 at the input's address";
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::exclusive_scan<ReduceOp::prod>(i, n, same + n / 4, std::int64_t{1}); }))
      << "i32 prod into int64 half-way into the input";
  // Disjoint neighbours are fine: out right after in.
  EXPECT_NO_THROW(cuda::inclusive_scan<ReduceOp::sum>(f, n, f + n));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
}

// A refused call writes nothing and leaves no sticky error behind: the next valid call works.
TEST_F(CudaScanErrors, RefusedCallWritesNothingAndValidCallFollows) {
  const auto a = make_exact_sum_data<std::int32_t>(5000, 2, CounterRng{5});
  const auto in = to_device(a);
  const DeviceBuffer out(5000 * sizeof(std::int64_t));
  FOLDKIT_CUDA_CHECK(cudaMemset(out.get(), kPoison, out.bytes()));
  EXPECT_THROW(cuda::inclusive_scan<ReduceOp::sum>(in.ptr, -1, out.as<std::int64_t>()), Error);
  EXPECT_THROW(cuda::inclusive_scan<ReduceOp::sum>(in.ptr, 5000, out.as<std::int64_t>(),
                                                   cuda::Workspace{out.get(), 1}),
               Error);
  std::vector<unsigned char> bytes(out.bytes());
  FOLDKIT_CUDA_CHECK(cudaMemcpy(bytes.data(), out.get(), bytes.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(first_unpoisoned(bytes.data(), 0, bytes.size()), -1) << "a refused call wrote to the output";
  ScanOutput<std::int64_t> result;
  const std::int64_t* got = nullptr;
  ASSERT_TRUE((result.run<ReduceOp::sum, std::int32_t>(a, 0, false, 0, nullptr, nullptr, &got)));
  EXPECT_TRUE((check_exact<ReduceOp::sum, std::int32_t>(a, false, 0, got)));
}

}  // namespace
}  // namespace foldkit::test
