// Segmented reductions (foldkit/segmented_reduce.hpp): the CPU backend, and the CUDA kernels'
// own source run on the host (src/cuda/segmented_reduce_emulation.cuh), both against an
// independent reference (long double sums, 64-bit wrapping integer arithmetic, first-index
// scans), on random segment layouts: uniform lengths, tiny segments among a few huge ones, runs
// of empty segments, a few long segments, offsets that start after 0 and end before n, begin/end
// pairs overlapping and out of order; every op x dtype; NaNs and ties for min/max/argmin/argmax;
// misaligned inputs. CPU results must also equal foldkit::cpu::reduce over each segment bit for
// bit, for every thread count. Then n = 0, num_segments = 0 and every bad-input class, with the
// outputs checked untouched. Outputs are poisoned before every call. Seed: FOLDKIT_TEST_SEED.
//
// The emulation must be the first include (it defines the CUDA qualifiers for the host compiler).
#if __has_include(<cuda_runtime_api.h>) && __has_include(<ucontext.h>)
#include "cuda/segmented_reduce_emulation.cuh"
#define FOLDKIT_SEG_EMULATED 1
#else
#define FOLDKIT_SEG_EMULATED 0
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/parallel.hpp"
#include "foldkit/error.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/segmented_reduce.hpp"
#include "support/random_arrays.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

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

Segs from_lengths(const std::vector<I64>& lens, I64 lead, I64 trail, std::string what) {
  Segs g;
  g.offsets.push_back(lead);
  for (I64 l : lens) g.offsets.push_back(g.offsets.back() + l);
  g.n = g.offsets.back() + trail;
  g.what = what + " S=" + std::to_string(lens.size()) + " n=" + std::to_string(g.n) + " lead=" +
           std::to_string(lead) + " trail=" + std::to_string(trail);
  return g;
}

// About `budget` elements in one of several shapes (kind % 6).
Segs random_offsets(Rng& rng, I64 budget, int kind) {
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

// S pairs over [0, n): random, overlapping, out of order; some empty, some the whole array.
Segs random_begin_end(Rng& rng, I64 n, I64 count, I64 max_len) {
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
// index), `got_value` (arg ops, may be null) at the value.
template <ReduceOp Op, class T>
::testing::AssertionResult check_segment(const T* x, I64 len, const unsigned char* got, const unsigned char* got_value) {
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
      const bool ok = isnan_of(x[best]) ? isnan_of(gv) : same_bits(gv, x[best]);
      if (!ok) return fail("value " + bits_text(gv) + ", expected " + bits_text(x[best]));
    }
    return ::testing::AssertionSuccess();
  }
}

// ---- one call and its checks -------------------------------------------------------------------

constexpr unsigned char kPoison = 0xA5;

template <ReduceOp Op, class T>
constexpr bool kIsArg = Op == ReduceOp::argmin || Op == ReduceOp::argmax;
template <ReduceOp Op, class T>
constexpr std::size_t out_size() {
  return kIsArg<Op, T> ? sizeof(I64) : sizeof(reduce_result_t<Op, T>);
}

enum class Backend { cpu, emulated_cuda };

struct Outputs {
  std::vector<unsigned char> out, values;
  std::int32_t status = 77;
};

// Runs one call on `backend` (emulated_cuda: the kernels' source on the host, with `ws` as the
// workspace) and checks every segment. with_values: segmented_arg_reduce (arg ops only).
template <ReduceOp Op, class T>
void run_and_check(Backend backend, const Segs& g, const Data<T>& d, bool with_values, std::vector<unsigned char>* ws,
                   Rng& rng, bool core_bits) {
  const I64 S = g.count();
  Outputs o;
  o.out.assign(static_cast<std::size_t>(S) * out_size<Op, T>() + 1, kPoison);
  if (with_values) o.values.assign(static_cast<std::size_t>(S) * sizeof(T) + 1, kPoison);
  void* values = with_values ? o.values.data() : nullptr;
  const T* x = d.data();
  const std::string where = std::string(backend == Backend::cpu ? "cpu" : "emulated cuda") + " " + op_name(Op) +
                            " " + dtype_name(dtype_v<T>) + " " + g.what + " shift=" + std::to_string(d.shift) +
                            (with_values ? " (arg_reduce)" : "");
  SCOPED_TRACE(where);
  if (backend == Backend::cpu) {
    if (g.by_offsets) {
      if (with_values)
        cpu::segmented_arg_reduce(Op, dtype_v<T>, x, g.n, g.offsets.data(), S, reinterpret_cast<I64*>(o.out.data()), values);
      else cpu::segmented_reduce(Op, dtype_v<T>, x, g.n, g.offsets.data(), S, o.out.data());
    } else {
      cpu::segmented_reduce(Op, dtype_v<T>, x, g.n, g.begin.data(), g.end.data(), S, o.out.data());
    }
  } else {
#if FOLDKIT_SEG_EMULATED
    cuda::seg::emu::run_call<Op, T>(x, g.n, g.by_offsets, g.by_offsets ? g.offsets.data() : nullptr, g.begin.data(),
                                    g.end.data(), S, o.out.data(), values, &o.status, *ws, rng.next() | 1,
                                    static_cast<int>(rng.uniform(1, 4)));
    EXPECT_EQ(o.status, 0);
    // Every call leaves the whole workspace zeroed (the convenient forms share the scans' one).
    const auto dirty = std::find_if(ws->begin(), ws->end(), [](unsigned char c) { return c != 0; });
    EXPECT_TRUE(dirty == ws->end()) << "workspace byte " << (dirty - ws->begin()) << " of " << ws->size()
                                    << " left nonzero";
#else
    (void)ws;
    (void)rng;
#endif
  }
  EXPECT_EQ(o.out.back(), kPoison) << "written past the output";
  if (with_values) EXPECT_EQ(o.values.back(), kPoison) << "written past the values";
  int failures = 0;
  for (I64 s = 0; s < S && failures < 5; ++s) {
    const I64 b = g.first(s), len = g.last(s) - b;
    const unsigned char* got = o.out.data() + s * out_size<Op, T>();
    const unsigned char* got_value = with_values ? o.values.data() + s * sizeof(T) : nullptr;
    const auto r = check_segment<Op, T>(x + b, len, got, got_value);
    if (!r) {
      ++failures;
      ADD_FAILURE() << "segment " << s << " [" << b << ", " << b + len << "): " << r.message();
      continue;
    }
    if (core_bits && len > 0) {  // bit for bit cpu::reduce over the segment
      const auto want = cpu::reduce<Op, T>(x + b, len);
      if constexpr (kIsArg<Op, T>) {
        I64 gi;
        std::memcpy(&gi, got, sizeof gi);
        bool same = gi == want.index;
        if (got_value != nullptr) same = same && std::memcmp(got_value, &want.value, sizeof(T)) == 0;
        if (!same) {
          ++failures;
          ADD_FAILURE() << "segment " << s << ": not cpu::reduce's {" << bits_text(want.value) << ", " << want.index
                        << "}";
        }
      } else if (std::memcmp(got, &want, sizeof want) != 0) {
        ++failures;
        ADD_FAILURE() << "segment " << s << " (len " << len << "): " << bits_text(*reinterpret_cast<const decltype(want)*>(got))
                      << " is not cpu::reduce's " << bits_text(want);
      }
    }
  }
}

template <class F>
void for_each_dtype(F&& f) {
  f(std::int32_t{});
  f(std::uint32_t{});
  f(std::int64_t{});
  f(std::uint64_t{});
  f(float{});
  f(double{});
  f(half{});
  f(bfloat16{});
}
template <class F>
void for_each_op(F&& f) {
  f(std::integral_constant<ReduceOp, ReduceOp::sum>{});
  f(std::integral_constant<ReduceOp, ReduceOp::prod>{});
  f(std::integral_constant<ReduceOp, ReduceOp::min>{});
  f(std::integral_constant<ReduceOp, ReduceOp::max>{});
  f(std::integral_constant<ReduceOp, ReduceOp::mean>{});
  f(std::integral_constant<ReduceOp, ReduceOp::argmin>{});
  f(std::integral_constant<ReduceOp, ReduceOp::argmax>{});
}

// Every op x dtype on `layouts` random layouts (kinds cycling), both forms, arg_reduce too.
void every_op_and_dtype(Backend backend, int layouts, I64 budget) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  std::vector<unsigned char> ws;
  for_each_dtype([&](auto tag) {
    using T = decltype(tag);
    for_each_op([&](auto op_tag) {
      constexpr ReduceOp Op = decltype(op_tag)::value;
      for (int k = 0; k < layouts; ++k) {
        const Segs g = random_offsets(rng, rng.uniform(1, budget), static_cast<int>(rng.uniform(0, 5)));
        const Data<T> d = make_data<Op, T>(rng, g.n, rng.uniform(0, 2) == 0 ? 0.002 : 0.0);
        run_and_check<Op, T>(backend, g, d, false, &ws, rng, backend == Backend::cpu);
        if constexpr (kIsArg<Op, T>) run_and_check<Op, T>(backend, g, d, true, &ws, rng, backend == Backend::cpu);
        const I64 n = rng.uniform(0, budget);
        const Segs be = random_begin_end(rng, n, rng.uniform(0, 300), rng.uniform(0, n));
        const Data<T> db = make_data<Op, T>(rng, n);
        run_and_check<Op, T>(backend, be, db, false, &ws, rng, backend == Backend::cpu);
      }
    });
  });
}

// ---- CPU backend -------------------------------------------------------------------------------

TEST(CpuSegmentedReduce, EveryOpAndDtype) { every_op_and_dtype(Backend::cpu, 3, 40000); }

// Large layouts (segments of millions of elements among tiny ones, runs of empties) on 1, 2, 3
// and 8 threads: the same bytes every time, and cpu::reduce's bits per segment.
TEST(CpuSegmentedReduce, LongSegmentsAnyThreadCount) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const I64 budget = std::min<I64>(max_n(), I64{3} << 20);
  auto run = [&](auto op_tag, auto tag, int kind) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    const Segs g = random_offsets(rng, budget, kind);
    const Data<T> d = make_data<Op, T>(rng, g.n);
    std::vector<unsigned char> first;
    for (int threads : {1, 2, 3, 8}) {
      cpu::detail::set_forced_threads_for_testing(threads);
      std::vector<unsigned char> out(static_cast<std::size_t>(g.count()) * out_size<Op, T>(), kPoison);
      cpu::segmented_reduce(Op, dtype_v<T>, d.data(), g.n, g.offsets.data(), g.count(), out.data());
      if (first.empty()) first = out;
      else EXPECT_TRUE(out == first) << threads << " threads changed the bytes (" << g.what << ")";
    }
    cpu::detail::set_forced_threads_for_testing(0);
    run_and_check<Op, T>(Backend::cpu, g, d, false, nullptr, rng, true);
  };
  using S = std::integral_constant<ReduceOp, ReduceOp::sum>;
  using AM = std::integral_constant<ReduceOp, ReduceOp::argmax>;
  using MN = std::integral_constant<ReduceOp, ReduceOp::min>;
  for (int kind : {0, 1, 2, 3}) {
    run(S{}, float{}, kind);
    run(S{}, half{}, kind);
    run(AM{}, std::int32_t{}, kind);
    run(MN{}, double{}, kind);
  }
}

TEST(CpuSegmentedReduce, BeginEndOverlappingAndOutOfOrder) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (int k = 0; k < 4; ++k) {
    const I64 n = rng.uniform(1, 300000);
    const Segs g = random_begin_end(rng, n, rng.uniform(1, 2000), rng.uniform(1, n));
    run_and_check<ReduceOp::sum, float>(Backend::cpu, g, make_data<ReduceOp::sum, float>(rng, n), false, nullptr, rng, true);
    run_and_check<ReduceOp::argmin, half>(Backend::cpu, g, make_data<ReduceOp::argmin, half>(rng, n, 0.001), false, nullptr,
                                          rng, true);
    run_and_check<ReduceOp::prod, std::int64_t>(Backend::cpu, g, make_data<ReduceOp::prod, std::int64_t>(rng, n), false,
                                                 nullptr, rng, true);
  }
}

// NaNs and ties planted densely: first NaN, first index of the extreme, the zeros' rule.
TEST(CpuSegmentedReduce, NanAndTies) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  auto run = [&](auto op_tag, auto tag) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    const Segs g = random_offsets(rng, 20000, 0);
    run_and_check<Op, T>(Backend::cpu, g, make_data<Op, T>(rng, g.n, 0.02), kIsArg<Op, T>, nullptr, rng, true);
  };
  for_each_op([&](auto op_tag) {
    run(op_tag, float{});
    run(op_tag, double{});
    run(op_tag, half{});
    run(op_tag, bfloat16{});
  });
}

TEST(CpuSegmentedReduce, EdgeCases) {
  std::vector<float> x = {1, 2, 3, 4, 5};
  float out[4];
  // n = 0: every segment empty, the input may be null.
  const I64 zeros[] = {0, 0, 0};
  std::memset(out, 0xA5, sizeof out);
  cpu::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 0, zeros, 2, out);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_FALSE(std::signbit(out[1]));
  cpu::segmented_reduce(ReduceOp::max, DType::f32, nullptr, 0, zeros, 2, out);
  EXPECT_EQ(out[0], -HUGE_VALF);
  // num_segments = 0: nothing written, output may be null; the one offset is still checked.
  const I64 one[] = {3};
  cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 5, one, 0, nullptr);
  const I64 bad_one[] = {6};
  EXPECT_THROW(cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 5, bad_one, 0, nullptr), Error);
  cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 5, nullptr, nullptr, 0, nullptr);  // begin/end, S = 0
  // Offsets not starting at 0 nor ending at n; empty segments; arg ops' relative indices.
  const I64 offs[] = {1, 3, 3, 4};
  cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 5, offs, 3, out);
  EXPECT_EQ(out[0], 5.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 4.0f);
  I64 idx[3];
  float vals[3];
  cpu::segmented_arg_reduce(ReduceOp::argmax, DType::f32, x.data(), 5, offs, 3, idx, vals);
  EXPECT_EQ(idx[0], 1);
  EXPECT_EQ(idx[1], -1);
  EXPECT_EQ(idx[2], 0);
  EXPECT_EQ(vals[0], 3.0f);
  EXPECT_EQ(vals[1], -HUGE_VALF);
  EXPECT_EQ(vals[2], 4.0f);
  std::int64_t iout[3];
  const std::int32_t xi[] = {5, -2, 7, 7};
  const I64 offs_i[] = {0, 2, 2, 4};
  cpu::segmented_reduce(ReduceOp::min, DType::i32, xi, 4, offs_i, 3, iout);  // i32 min -> i32
  std::int32_t mins[3];
  std::memcpy(mins, iout, sizeof mins);
  EXPECT_EQ(mins[0], -2);
  EXPECT_EQ(mins[1], std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(mins[2], 7);
  double means[3];
  cpu::segmented_reduce(ReduceOp::mean, DType::i32, xi, 4, offs_i, 3, means);
  EXPECT_EQ(means[0], 1.5);
  EXPECT_TRUE(std::isnan(means[1]));
  EXPECT_EQ(means[2], 7.0);
}

// Every bad-input class: the right Errc, and the outputs untouched.
template <class Call>
void expect_rejected(Errc code, Call&& call, const std::vector<unsigned char>& out, const char* what) {
  const std::vector<unsigned char> before = out;
  try {
    call();
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << what << ": " << e.what();
  }
  EXPECT_TRUE(out == before) << what << ": the output changed";
}

TEST(CpuSegmentedReduce, BadInput) {
  std::vector<float> x(16, 1.0f);
  std::vector<unsigned char> out(64, kPoison), vals(64, kPoison);
  void* o = out.data();
  auto* idx = reinterpret_cast<I64*>(out.data());
  const I64 ok[] = {0, 4, 8};
  const I64 decreasing[] = {0, 5, 3, 8};
  const I64 too_big[] = {0, 4, 17};
  const I64 negative[] = {-1, 4};
  auto seg = [&](const I64* offs, I64 S) { return [=] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 16, offs, S, o); }; };
  expect_rejected(Errc::invalid_argument, seg(decreasing, 3), out, "decreasing offsets");
  try {
    seg(decreasing, 3)();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("offsets[1] = 5"), std::string::npos) << e.what();
  }
  expect_rejected(Errc::invalid_argument, seg(too_big, 2), out, "offset > n");
  expect_rejected(Errc::invalid_argument, seg(negative, 1), out, "negative offset");
  expect_rejected(Errc::invalid_argument, seg(nullptr, 2), out, "null offsets");
  expect_rejected(Errc::invalid_argument, seg(ok, -1), out, "negative num_segments");
  expect_rejected(Errc::invalid_argument, [&] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), -1, ok, 2, o); },
                  out, "negative n");
  expect_rejected(Errc::invalid_argument, [&] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 16, ok, 2, o); },
                  out, "null input");
  expect_rejected(Errc::invalid_argument, [&] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 16, ok, 2, nullptr); },
                  out, "null output");
  expect_rejected(Errc::invalid_argument,
                  [&] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 16, ok, 2, x.data() + 3); }, out,
                  "output overlapping the input");
  std::vector<I64> offs_and_out = {0, 4, 8, 0, 0};
  expect_rejected(Errc::invalid_argument,
                  [&] { cpu::segmented_reduce(ReduceOp::sum, DType::i64, x.data(), 16, offs_and_out.data(), 2, offs_and_out.data() + 2); },
                  out, "output overlapping the offsets");
  expect_rejected(Errc::invalid_argument,
                  [&] { cpu::segmented_arg_reduce(ReduceOp::argmax, DType::f32, x.data(), 16, ok, 2, idx, nullptr); }, out,
                  "null values");
  expect_rejected(Errc::invalid_argument,
                  [&] { cpu::segmented_arg_reduce(ReduceOp::argmax, DType::f32, x.data(), 16, ok, 2, idx, out.data() + 8); },
                  out, "values overlapping indices");
  expect_rejected(Errc::invalid_argument,
                  [&] { cpu::segmented_arg_reduce(ReduceOp::sum, DType::f32, x.data(), 16, ok, 2, idx, vals.data()); }, out,
                  "arg_reduce of sum");
  expect_rejected(Errc::unsupported,
                  [&] { cpu::segmented_reduce(static_cast<ReduceOp>(42), DType::f32, x.data(), 16, ok, 2, o); }, out,
                  "unknown op");
  expect_rejected(Errc::unsupported,
                  [&] { cpu::segmented_reduce(ReduceOp::sum, static_cast<DType>(42), x.data(), 16, ok, 2, o); }, out,
                  "unknown dtype");
  const I64 b_ok[] = {0, 3}, e_ok[] = {5, 16};
  const I64 b_bad[] = {0, 6}, e_bad[] = {5, 4};
  const I64 e_far[] = {5, 17};
  auto be = [&](const I64* b, const I64* e) { return [=] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 16, b, e, 2, o); }; };
  expect_rejected(Errc::invalid_argument, be(b_bad, e_bad), out, "begin > end");
  expect_rejected(Errc::invalid_argument, be(b_ok, e_far), out, "end > n");
  expect_rejected(Errc::invalid_argument, be(nullptr, e_ok), out, "null begin");
  expect_rejected(Errc::invalid_argument, be(b_ok, nullptr), out, "null end");
}

// The test's own teeth: a corrupted result must be caught by check_segment.
TEST(CpuSegmentedReduce, CheckerCatchesWrongResults) {
  const float x[] = {1.0f, 2.0f, 4.0f};
  const float wrong = 7.5f, right = 7.0f;
  EXPECT_TRUE((check_segment<ReduceOp::sum, float>(x, 3, reinterpret_cast<const unsigned char*>(&right), nullptr)));
  EXPECT_FALSE((check_segment<ReduceOp::sum, float>(x, 3, reinterpret_cast<const unsigned char*>(&wrong), nullptr)));
  const I64 index = 1;
  EXPECT_FALSE((check_segment<ReduceOp::argmax, float>(x, 3, reinterpret_cast<const unsigned char*>(&index), nullptr)));
}

// ---- the CUDA kernels, emulated on the host ------------------------------------------------------

#if FOLDKIT_SEG_EMULATED

TEST(CudaSegmentedEmulated, EveryOpAndDtype) { every_op_and_dtype(Backend::emulated_cuda, 1, 12000); }

// Segments spanning many tiles, tiny ones, runs of empties; blocks in random orders; the same
// workspace through every call (it must come back zeroed).
TEST(CudaSegmentedEmulated, SpanningSegmentsAnyBlockOrder) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  std::vector<unsigned char> ws;
  for (int k = 0; k < 8; ++k) {
    const Segs g = random_offsets(rng, rng.uniform(1000, 70000), k);
    run_and_check<ReduceOp::sum, std::int32_t>(Backend::emulated_cuda, g, make_data<ReduceOp::sum, std::int32_t>(rng, g.n),
                                               false, &ws, rng, false);
    run_and_check<ReduceOp::sum, float>(Backend::emulated_cuda, g, make_data<ReduceOp::sum, float>(rng, g.n), false, &ws,
                                        rng, false);
    run_and_check<ReduceOp::argmax, half>(Backend::emulated_cuda, g, make_data<ReduceOp::argmax, half>(rng, g.n, 0.0005),
                                          true, &ws, rng, false);
    run_and_check<ReduceOp::mean, double>(Backend::emulated_cuda, g, make_data<ReduceOp::mean, double>(rng, g.n), false,
                                          &ws, rng, false);
  }
  for (int k = 0; k < 3; ++k) {
    const I64 n = rng.uniform(1, 60000);
    const Segs g = random_begin_end(rng, n, rng.uniform(1, 400), rng.uniform(1, n));
    run_and_check<ReduceOp::max, float>(Backend::emulated_cuda, g, make_data<ReduceOp::max, float>(rng, n, 0.0005), false,
                                        &ws, rng, false);
    run_and_check<ReduceOp::sum, std::uint64_t>(Backend::emulated_cuda, g, make_data<ReduceOp::sum, std::uint64_t>(rng, n),
                                                false, &ws, rng, false);
  }
}

// Invalid offsets: status 1, nothing written, and the next call (valid) works on the same workspace.
TEST(CudaSegmentedEmulated, InvalidOffsetsWriteNothing) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  std::vector<unsigned char> ws;
  const std::vector<float> x(50000, 1.0f);
  for (int k = 0; k < 6; ++k) {
    Segs g = random_offsets(rng, 40000, 0);
    const I64 S = g.count();
    const I64 at = rng.uniform(0, S);
    switch (k % 3) {
      case 0: g.offsets[static_cast<std::size_t>(at)] = g.n + 1; break;
      case 1: g.offsets[static_cast<std::size_t>(at)] = -3; break;
      default:
        if (S > 0) std::swap(g.offsets[0], g.offsets[static_cast<std::size_t>(S)]);
        else g.offsets[0] = -1;
        break;
    }
    std::vector<float> out(static_cast<std::size_t>(S), -123.0f);
    std::int32_t status = 5;
    cuda::seg::emu::run_call<ReduceOp::sum, float>(x.data(), g.n, true, g.offsets.data(), nullptr, nullptr, S,
                                                   out.data(), nullptr, &status, ws, rng.next() | 1);
    EXPECT_EQ(status, 1);
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == -123.0f; })) << "written";
    EXPECT_TRUE(std::all_of(ws.begin(), ws.end(), [](unsigned char c) { return c == 0; })) << "workspace left dirty";
    const Segs ok = random_offsets(rng, 40000, 1);
    run_and_check<ReduceOp::sum, float>(Backend::emulated_cuda, ok, make_data<ReduceOp::sum, float>(rng, ok.n), false, &ws,
                                        rng, false);
  }
  // Begin/end: a bad pair.
  std::vector<I64> b = {0, 10, 5}, e = {3, 9, 7};
  std::vector<float> out(3, -123.0f);
  std::int32_t status = 5;
  cuda::seg::emu::run_call<ReduceOp::sum, float>(x.data(), 100, false, nullptr, b.data(), e.data(), 3, out.data(),
                                                 nullptr, &status, ws, 3);
  EXPECT_EQ(status, 1);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == -123.0f; })) << "written";
}

#endif  // FOLDKIT_SEG_EMULATED

}  // namespace
}  // namespace foldkit::test
