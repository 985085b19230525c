// Shared by the segmented-reduction tests (tests/cpu/cpu_segmented_reduce_test.cpp and
// tests/gpu/cuda_segmented_reduce_test.cpp): random segment layouts (offsets and begin/end
// pairs), op-shaped random data at a random misalignment, and check_segment, the independent
// per-segment reference (long double sums, 64-bit wrapping integer arithmetic, first-index
// scans, the NaN and signed-zero rules of min/max/argmin/argmax). Backend-independent.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "foldkit/ops.hpp"
#include "foldkit/segmented_reduce.hpp"
#include "support/random_arrays.hpp"

namespace foldkit::test {

using I64 = std::int64_t;

// ---- segment layouts ---------------------------------------------------------------------------

struct Segs {
  I64 n = 0;
  bool by_offsets = true;
  std::vector<I64> offsets;     // by_offsets: S + 1 entries
  std::vector<I64> begin, end;  // else: S each
  std::string what;
  I64 count() const { return by_offsets ? static_cast<I64>(offsets.size()) - 1 : static_cast<I64>(begin.size()); }
  I64 first(I64 s) const { return by_offsets ? offsets[s] : begin[s]; }
  I64 last(I64 s) const { return by_offsets ? offsets[s + 1] : end[s]; }
};

inline Segs from_lengths(const std::vector<I64>& lens, I64 lead, I64 trail, std::string what) {
  Segs g;
  g.offsets.reserve(lens.size() + 1);
  g.offsets.push_back(lead);
  for (I64 l : lens) g.offsets.push_back(g.offsets.back() + l);
  g.n = g.offsets.back() + trail;
  g.what = what + " S=" + std::to_string(lens.size()) + " n=" + std::to_string(g.n) + " lead=" +
           std::to_string(lead) + " trail=" + std::to_string(trail);
  return g;
}

// About `budget` elements in one of several shapes (kind % 6).
inline Segs random_offsets(Rng& rng, I64 budget, int kind) {
  std::vector<I64> lens;
  I64 lead = 0, trail = 0;
  if (rng.uniform(0, 3) == 0) lead = rng.uniform(1, 40);
  if (rng.uniform(0, 3) == 0) trail = rng.uniform(1, 40);
  std::string what;
  switch (kind % 6) {
    case 0: {  // uniform lengths 0..L
      const I64 maxes[] = {1, 3, 16, 128, 1000, 5000};
      const I64 L = maxes[rng.uniform(0, 5)];
      for (I64 total = 0; total < budget;) {
        lens.push_back(rng.uniform(0, L));
        total += lens.back() + 1;
      }
      what = "uniform 0.." + std::to_string(L);
      break;
    }
    case 1: {  // tiny segments among a few huge ones
      const I64 huge = rng.uniform(1, 3);
      std::vector<I64> at;
      for (I64 k = 0; k < huge; ++k) at.push_back(rng.uniform(0, 200));
      for (I64 total = 0, i = 0; total < budget; ++i) {
        const bool big = std::find(at.begin(), at.end(), i) != at.end();
        lens.push_back(big ? rng.uniform(budget / 8, budget / 3) : rng.uniform(0, 16));
        total += lens.back() + 1;
      }
      what = "tiny+huge";
      break;
    }
    case 2: {  // runs of empty segments between random ones
      for (I64 total = 0; total < budget;) {
        const I64 run = rng.uniform(0, 3) == 0 ? rng.uniform(100, 9000) : rng.uniform(0, 3);
        for (I64 k = 0; k < run; ++k) lens.push_back(0);
        lens.push_back(rng.uniform(0, 3000));
        total += run + lens.back() + 1;
      }
      what = "empty runs";
      break;
    }
    case 3: {  // a few long segments
      const I64 count = rng.uniform(1, 4);
      for (I64 k = 0; k < count; ++k) lens.push_back(rng.uniform(budget / 8, budget / 2));
      what = "few long";
      break;
    }
    case 4: {  // lengths around tile-ish sizes (powers of two +- 1, the kernels' tiles of 4094/8188)
      const I64 bases[] = {4094, 8188, 8192, 16376, 1 << 15};
      for (I64 total = 0; total < budget;) {
        lens.push_back(std::max<I64>(0, bases[rng.uniform(0, 4)] + rng.uniform(-3, 3)));
        total += lens.back() + 1;
      }
      what = "tile-sized";
      break;
    }
    default: {  // everything empty (and elements outside every segment)
      const I64 count = rng.uniform(1, std::max<I64>(1, budget));
      lens.assign(static_cast<std::size_t>(count), 0);
      lead = rng.uniform(0, 100);
      trail = rng.uniform(0, 100);
      what = "all empty";
      break;
    }
  }
  return from_lengths(lens, lead, trail, what);
}

// Makes g's offsets bad at the rule's edge: one entry exactly one above the next (or, where the
// next is n, the next one below it, which may go to -1: bad too); with no segments, offsets[0] = n + 1.
inline void break_by_one(Segs& g, Rng& rng) {
  const I64 S = g.count();
  if (S == 0) {
    g.offsets[0] = g.n + 1;
    return;
  }
  const auto i = static_cast<std::size_t>(rng.uniform(0, S - 1));
  if (g.offsets[i + 1] < g.n) g.offsets[i] = g.offsets[i + 1] + 1;
  else g.offsets[i + 1] = g.offsets[i] - 1;
}

// S pairs over [0, n): random, overlapping, out of order; some empty, some the whole array.
inline Segs random_begin_end(Rng& rng, I64 n, I64 count, I64 max_len) {
  Segs g;
  g.by_offsets = false;
  g.n = n;
  for (I64 s = 0; s < count; ++s) {
    I64 b = rng.uniform(0, n), e;
    const I64 pick = rng.uniform(0, 9);
    if (pick == 0) e = b;                                      // empty
    else if (pick == 1 && n > 0) { b = 0; e = n; }             // everything
    else e = std::min(n, b + rng.uniform(0, std::max<I64>(0, max_len)));
    g.begin.push_back(b);
    g.end.push_back(e);
  }
  g.what = "begin/end S=" + std::to_string(count) + " n=" + std::to_string(n);
  return g;
}

// ---- data --------------------------------------------------------------------------------------

// Values shaped for the op: exact wrapping sums of full-range integers, products of mostly ones
// (and exact powers of two for floats), many ties, both zeros and rare extremes for comparisons.
template <ReduceOp Op, class T>
T random_value(Rng& rng, double nan_rate) {
  constexpr bool kFloat = is_floating_v<T>;
  const std::uint64_t r = rng.next();
  if constexpr (Op == ReduceOp::sum || Op == ReduceOp::mean) {
    if constexpr (kFloat) return from_double<T>(static_cast<double>(r >> 11) * 0x1p-52 - 1.0);
    else {
      T v;
      std::memcpy(&v, &r, sizeof v);
      return v;
    }
  } else if constexpr (Op == ReduceOp::prod) {
    const std::uint64_t k = r % 1000;
    if constexpr (kFloat) return from_double<T>(k == 0 ? -1.0 : k == 1 ? 2.0 : k == 2 ? 0.5 : 1.0);
    else if constexpr (std::is_signed_v<T>) return static_cast<T>(k < 900 ? 1 : k < 930 ? -1 : k < 980 ? 2 : 3);
    else return static_cast<T>(k < 900 ? 1 : k < 960 ? 2 : 3);
  } else {
    const std::uint64_t k = r % 100;
    if constexpr (kFloat) {
      if (static_cast<double>((r >> 20) % 1000000) < nan_rate * 1e6) return quiet_nan<T>();
      if (k == 0) return from_double<T>(std::numeric_limits<double>::infinity());
      if (k == 1) return from_double<T>(-std::numeric_limits<double>::infinity());
      if (k < 10) return from_double<T>(-0.0);
      if (k < 20) return from_double<T>(0.0);
      const double small[] = {-2.0, -1.0, 0.5, 1.0, 3.0};
      if (k < 60) return from_double<T>(small[(r >> 8) % 5]);
      return from_double<T>(static_cast<double>((r >> 11) % 2000001) / 1000.0 - 1000.0);
    } else {
      if (k == 0) return std::numeric_limits<T>::lowest();
      if (k == 1) return std::numeric_limits<T>::max();
      if constexpr (std::is_signed_v<T>) return static_cast<T>(static_cast<I64>((r >> 8) % 41) - 20);
      else return static_cast<T>((r >> 8) % 41);
    }
  }
}

// n elements at a random misalignment (0..7 elements past the vector's start).
template <class T>
struct Data {
  std::vector<T> storage;
  I64 shift = 0;
  const T* data() const { return storage.data() + shift; }
};
template <ReduceOp Op, class T>
Data<T> make_data(Rng& rng, I64 n, double nan_rate = 0.0) {
  Data<T> d;
  d.shift = rng.uniform(0, 7);
  d.storage.resize(static_cast<std::size_t>(n + d.shift + 8));
  for (auto& v : d.storage) v = random_value<Op, T>(rng, nan_rate);
  return d;
}

// ---- the independent reference -----------------------------------------------------------------

template <class T> std::string bits_text(const T& v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  std::string s = "0x";
  const char* hex = "0123456789abcdef";
  for (int i = static_cast<int>(sizeof(T)) - 1; i >= 0; --i) {
    s += hex[b[i] >> 4];
    s += hex[b[i] & 15];
  }
  return s;
}
template <class A, class B> bool same_bits(const A& a, const B& b) {
  static_assert(sizeof(A) == sizeof(B));
  return std::memcmp(&a, &b, sizeof(A)) == 0;
}
template <class T> long double ld(T v) { return to_ld(v); }
template <class T> bool isnan_of(T v) { return is_nan_value(v); }
template <class T> bool negative_zero(T v) {
  if constexpr (is_floating_v<T>) return ld(v) == 0 && std::signbit(ld(v));
  else return false;
}
template <class R> long double eps_of() {
  if constexpr (std::is_same_v<R, double>) return 0x1p-53L;
  else return 0x1p-24L;
}

// Checks segment x[0, len)'s result: `got` points at the output element (arg ops: the int64
// index), `got_value` (arg ops, may be null) at the value. nan_payload_exact (arg ops' values):
// a NaN value must be the element's own bits, payload included (the CUDA test's rule); false
// accepts any NaN where the element is NaN (the CPU test's rule).
template <ReduceOp Op, class T>
::testing::AssertionResult check_segment(const T* x, I64 len, const unsigned char* got, const unsigned char* got_value,
                                         bool nan_payload_exact = true) {
  using R = reduce_result_t<Op, T>;
  auto fail = [&](const std::string& why) { return ::testing::AssertionFailure() << why << " (len " << len << ")"; };
  if constexpr (Op == ReduceOp::sum || Op == ReduceOp::prod || Op == ReduceOp::mean) {
    R g;
    std::memcpy(&g, got, sizeof g);
    if (len == 0) {
      if constexpr (Op == ReduceOp::mean) {
        if (!std::isnan(static_cast<double>(g))) return fail("empty mean is " + std::to_string(static_cast<double>(g)));
      } else if (!same_bits(g, static_cast<R>(Op == ReduceOp::sum ? 0 : 1))) {
        return fail("empty segment gives " + bits_text(g));
      }
      return ::testing::AssertionSuccess();
    }
    if constexpr (std::is_integral_v<T>) {
      std::uint64_t acc = Op == ReduceOp::prod ? 1 : 0;
      long double exact = 0, abs_sum = 0;
      for (I64 i = 0; i < len; ++i) {
        const auto v = static_cast<std::uint64_t>(static_cast<std::conditional_t<std::is_signed_v<T>, I64, std::uint64_t>>(x[i]));
        acc = Op == ReduceOp::prod ? acc * v : acc + v;
        exact += static_cast<long double>(x[i]);
        abs_sum += std::fabs(static_cast<long double>(x[i]));
      }
      if constexpr (Op == ReduceOp::mean) {
        const long double e = exact / len;
        const long double tol = (sizeof(T) == 8 ? (len + 4) * 0x1p-53L * abs_sum / len : 0.0L) +
                                std::fabs(e) * 0x1p-51L + 1e-300L;
        if (!(std::fabs(static_cast<long double>(g) - e) <= tol))
          return fail("mean " + std::to_string(static_cast<double>(g)) + ", expected " + std::to_string(static_cast<double>(e)));
      } else if (!same_bits(g, static_cast<R>(acc))) {
        return fail("got " + std::to_string(g) + ", expected " + std::to_string(static_cast<R>(acc)));
      }
      return ::testing::AssertionSuccess();
    } else {
      long double e = Op == ReduceOp::prod ? 1 : 0, abs_sum = 0;
      bool nan = false;
      for (I64 i = 0; i < len; ++i) {
        const long double v = ld(x[i]);
        nan |= v != v;
        e = Op == ReduceOp::prod ? e * v : e + v;
        abs_sum += std::fabs(v);
      }
      const long double gl = static_cast<long double>(g);
      if (nan) return std::isnan(gl) ? ::testing::AssertionSuccess() : fail("NaN input, got " + std::to_string(static_cast<double>(g)));
      const long double eps = eps_of<R>();
      long double tol;
      if constexpr (Op == ReduceOp::sum) tol = (len + 8) * eps * abs_sum;
      else if constexpr (Op == ReduceOp::mean) {
        e /= len;
        tol = (len + 8) * eps * abs_sum / len + 2 * eps * std::fabs(e);
      } else {
        tol = (len + 8) * eps * std::fabs(e);
      }
      tol += std::numeric_limits<R>::min();
      if (!(std::fabs(gl - e) <= tol))
        return fail("got " + std::to_string(static_cast<double>(g)) + " (" + bits_text(g) + "), expected " +
                    std::to_string(static_cast<double>(e)) + " +- " + std::to_string(static_cast<double>(tol)));
      return ::testing::AssertionSuccess();
    }
  } else if constexpr (Op == ReduceOp::min || Op == ReduceOp::max) {
    constexpr bool kMax = Op == ReduceOp::max;
    T g;
    std::memcpy(&g, got, sizeof g);
    T want;
    if (len == 0) {
      if constexpr (is_floating_v<T>) want = from_double<T>(kMax ? -HUGE_VAL : HUGE_VAL);
      else want = kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    } else {
      I64 best = -1;
      for (I64 i = 0; i < len && best < 0; ++i)
        if (isnan_of(x[i])) best = i;
      if (best >= 0) return isnan_of(g) ? ::testing::AssertionSuccess() : fail("NaN input, got " + bits_text(g));
      best = 0;
      for (I64 i = 1; i < len; ++i)
        if (kMax ? ld(x[i]) > ld(x[best]) : ld(x[i]) < ld(x[best])) best = i;
      want = x[best];
      if (ld(want) == 0) {  // the zeros' rule: min is -0 if any zero is, max +0 if any zero is
        bool any_neg = false, any_pos = false;
        for (I64 i = 0; i < len; ++i)
          if (ld(x[i]) == 0) (negative_zero(x[i]) ? any_neg : any_pos) = true;
        for (I64 i = 0; i < len; ++i)
          if (ld(x[i]) == 0 && negative_zero(x[i]) == (kMax ? !any_pos : any_neg)) want = x[i];
      }
    }
    if (!same_bits(g, want)) return fail("got " + bits_text(g) + ", expected " + bits_text(want));
    return ::testing::AssertionSuccess();
  } else {
    constexpr bool kMax = Op == ReduceOp::argmax;
    I64 gi;
    std::memcpy(&gi, got, sizeof gi);
    if (len == 0) {
      if (gi != -1) return fail("empty segment's index " + std::to_string(gi));
      if (got_value != nullptr) {
        T gv, want;
        std::memcpy(&gv, got_value, sizeof gv);
        if constexpr (is_floating_v<T>) want = from_double<T>(kMax ? -HUGE_VAL : HUGE_VAL);
        else want = kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
        if (!same_bits(gv, want)) return fail("empty segment's value " + bits_text(gv));
      }
      return ::testing::AssertionSuccess();
    }
    I64 best = -1;
    for (I64 i = 0; i < len && best < 0; ++i)
      if (isnan_of(x[i])) best = i;
    if (best < 0) {
      best = 0;
      for (I64 i = 1; i < len; ++i)
        if (kMax ? ld(x[i]) > ld(x[best]) : ld(x[i]) < ld(x[best])) best = i;
    }
    if (gi != best) return fail("index " + std::to_string(gi) + ", expected " + std::to_string(best));
    if (got_value != nullptr) {
      T gv;
      std::memcpy(&gv, got_value, sizeof gv);
      const bool ok = !nan_payload_exact && isnan_of(x[best]) ? isnan_of(gv) : same_bits(gv, x[best]);
      if (!ok) return fail("value " + bits_text(gv) + ", expected " + bits_text(x[best]));
    }
    return ::testing::AssertionSuccess();
  }
}

}  // namespace foldkit::test
