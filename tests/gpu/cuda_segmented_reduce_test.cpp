// foldkit::cuda::segmented_reduce / segmented_arg_reduce / validate_offsets
// (foldkit/cuda/segmented_reduce.hpp) against an independent host reference (long double sums,
// 64-bit wrapping integer arithmetic, first-index scans; the same checks as
// tests/cpu/cpu_segmented_reduce_test.cpp), and bit for bit against the CPU backend where results
// are exact (integers, min/max, argmin/argmax). Random layouts: uniform lengths, tiny segments
// among huge ones (spanning hundreds of the kernel's tiles), runs of empty segments, a few long
// segments, tile-sized ones, offsets starting after 0 and ending before n, begin/end pairs
// overlapping and out of order; misaligned inputs; NaNs and ties. RandomCases runs >= 1000 cases
// (every op x dtype, every form: explicit workspace reused across sizes, convenient, begin/end,
// arg_reduce) in one process; LargeLayouts the benchmark's two shapes at test scale. Outputs and
// *d_status are poisoned before each call. Then determinism, graph capture, invalid device
// offsets (nothing written, *d_status == 1), validate_offsets, and every host-side bad input
// (the right Errc, nothing enqueued). SKIPPED without a GPU. Seed: FOLDKIT_TEST_SEED.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "foldkit/cuda/segmented_reduce.hpp"
#include "foldkit/error.hpp"
#include "foldkit/segmented_reduce.hpp"
#include "support/cuda_backend.hpp"
#include "support/random_arrays.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using I64 = std::int64_t;
using CudaSegmentedReduce = CudaTest;

// ---- segment layouts (as the CPU test's) -------------------------------------------------------

struct Segs {
  I64 n = 0;
  bool by_offsets = true;
  std::vector<I64> offsets;
  std::vector<I64> begin, end;
  std::string what;
  I64 count() const { return by_offsets ? static_cast<I64>(offsets.size()) - 1 : static_cast<I64>(begin.size()); }
  I64 first(I64 s) const { return by_offsets ? offsets[s] : begin[s]; }
  I64 last(I64 s) const { return by_offsets ? offsets[s + 1] : end[s]; }
};

Segs from_lengths(const std::vector<I64>& lens, I64 lead, I64 trail, std::string what) {
  Segs g;
  g.offsets.reserve(lens.size() + 1);
  g.offsets.push_back(lead);
  for (I64 l : lens) g.offsets.push_back(g.offsets.back() + l);
  g.n = g.offsets.back() + trail;
  g.what = what + " S=" + std::to_string(lens.size()) + " n=" + std::to_string(g.n) + " lead=" +
           std::to_string(lead) + " trail=" + std::to_string(trail);
  return g;
}

Segs random_offsets(Rng& rng, I64 budget, int kind) {
  std::vector<I64> lens;
  I64 lead = 0, trail = 0;
  if (rng.uniform(0, 3) == 0) lead = rng.uniform(1, 40);
  if (rng.uniform(0, 3) == 0) trail = rng.uniform(1, 40);
  std::string what;
  switch (kind % 6) {
    case 0: {
      const I64 maxes[] = {1, 3, 16, 128, 1000, 5000};
      const I64 L = maxes[rng.uniform(0, 5)];
      for (I64 total = 0; total < budget;) {
        lens.push_back(rng.uniform(0, L));
        total += lens.back() + 1;
      }
      what = "uniform 0.." + std::to_string(L);
      break;
    }
    case 1: {
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
    case 2: {
      for (I64 total = 0; total < budget;) {
        const I64 run = rng.uniform(0, 3) == 0 ? rng.uniform(100, 9000) : rng.uniform(0, 3);
        for (I64 k = 0; k < run; ++k) lens.push_back(0);
        lens.push_back(rng.uniform(0, 3000));
        total += run + lens.back() + 1;
      }
      what = "empty runs";
      break;
    }
    case 3: {
      const I64 count = rng.uniform(1, 4);
      for (I64 k = 0; k < count; ++k) lens.push_back(rng.uniform(budget / 8, budget / 2));
      what = "few long";
      break;
    }
    case 4: {
      const I64 bases[] = {4094, 8188, 8192, 16376, 1 << 15};
      for (I64 total = 0; total < budget;) {
        lens.push_back(std::max<I64>(0, bases[rng.uniform(0, 4)] + rng.uniform(-3, 3)));
        total += lens.back() + 1;
      }
      what = "tile-sized";
      break;
    }
    default: {
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

Segs random_begin_end(Rng& rng, I64 n, I64 count, I64 max_len) {
  Segs g;
  g.by_offsets = false;
  g.n = n;
  for (I64 s = 0; s < count; ++s) {
    I64 b = rng.uniform(0, n), e;
    const I64 pick = rng.uniform(0, 9);
    if (pick == 0) e = b;
    else if (pick == 1 && n > 0) { b = 0; e = n; }
    else e = std::min(n, b + rng.uniform(0, std::max<I64>(0, max_len)));
    g.begin.push_back(b);
    g.end.push_back(e);
  }
  g.what = "begin/end S=" + std::to_string(count) + " n=" + std::to_string(n);
  return g;
}

// ---- data and the reference (as the CPU test's) ------------------------------------------------

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
      if (ld(want) == 0) {
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
      // The GPU's value is the element's own bits, NaN payload included.
      if (!same_bits(gv, x[best])) return fail("value " + bits_text(gv) + ", expected " + bits_text(x[best]));
    }
    return ::testing::AssertionSuccess();
  }
}

// ---- device plumbing ---------------------------------------------------------------------------

constexpr unsigned char kPoison = 0xA5;
constexpr std::size_t kGuard = 64;

template <ReduceOp Op>
constexpr bool kIsArg = Op == ReduceOp::argmin || Op == ReduceOp::argmax;
template <ReduceOp Op, class T>
constexpr std::size_t out_size() {
  return kIsArg<Op> ? sizeof(I64) : sizeof(reduce_result_t<Op, T>);
}

// A device copy (complete before any stream's next work: a pageable cudaMemcpy may return before
// its DMA lands, and non-blocking streams are not ordered after it).
DeviceBuffer upload(const void* host, std::size_t bytes) {
  DeviceBuffer d(bytes > 0 ? bytes : 16);
  if (bytes > 0) FOLDKIT_CUDA_CHECK(cudaMemcpy(d.get(), host, bytes, cudaMemcpyHostToDevice));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  return d;
}
std::vector<unsigned char> download(const DeviceBuffer& d, std::size_t bytes) {
  std::vector<unsigned char> h(bytes);
  if (bytes > 0) FOLDKIT_CUDA_CHECK(cudaMemcpy(h.data(), d.get(), bytes, cudaMemcpyDeviceToHost));
  return h;
}
// Poisoned device memory, the poison complete before any stream's next work (cudaMemset runs on
// the legacy stream, which non-blocking streams do not wait for).
DeviceBuffer poisoned(std::size_t bytes) {
  DeviceBuffer d(bytes);
  FOLDKIT_CUDA_CHECK(cudaMemset(d.get(), kPoison, bytes));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  return d;
}
void repoison(const DeviceBuffer& d, std::size_t bytes) {
  FOLDKIT_CUDA_CHECK(cudaMemset(d.get(), kPoison, bytes));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
}

enum class Form { explicit_ws, convenient, begin_end, arg_reduce };
const char* form_name(Form f) {
  switch (f) {
    case Form::explicit_ws: return "explicit workspace";
    case Form::convenient: return "convenient";
    case Form::begin_end: return "begin/end";
    case Form::arg_reduce: return "arg_reduce";
  }
  return "?";
}

// A growing explicit workspace, zeroed once and then reused by every call (calls leave it zeroed).
struct SharedWorkspace {
  DeviceBuffer buffer;
  cuda::Workspace get(std::size_t bytes) {
    if (buffer.bytes() < bytes) {
      buffer = DeviceBuffer(bytes * 2);
      cuda::init_workspace(cuda::Workspace{buffer.get(), buffer.bytes()});
      FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());  // before calls on any stream
    }
    return cuda::Workspace{buffer.get(), buffer.bytes()};
  }
};

struct DeviceCase {
  DeviceBuffer in, offsets, begin, end, out, values, status;
};

// One call: uploads, poisons, runs `form`, downloads. Returns the outputs (S results, then kGuard
// guard bytes) and the status.
template <ReduceOp Op, class T>
void run_on_device(const Segs& g, const Data<T>& d, Form form, cudaStream_t stream, SharedWorkspace& ws,
                   std::vector<unsigned char>& out, std::vector<unsigned char>& values, std::int32_t& status) {
  const I64 S = g.count();
  DeviceCase c;
  c.in = upload(d.storage.data(), d.storage.size() * sizeof(T));
  const T* d_in = c.in.as<T>() + d.shift;
  if (g.by_offsets) c.offsets = upload(g.offsets.data(), g.offsets.size() * sizeof(I64));
  else {
    c.begin = upload(g.begin.data(), g.begin.size() * sizeof(I64));
    c.end = upload(g.end.data(), g.end.size() * sizeof(I64));
  }
  const std::size_t out_bytes = static_cast<std::size_t>(S) * out_size<Op, T>();
  const std::size_t values_bytes = static_cast<std::size_t>(S) * sizeof(T);
  c.out = poisoned(out_bytes + kGuard);
  c.values = poisoned(values_bytes + kGuard);
  c.status = poisoned(sizeof(std::int32_t));
  auto* st = c.status.as<std::int32_t>();
  switch (form) {
    case Form::explicit_ws:
      cuda::segmented_reduce(Op, dtype_v<T>, d_in, g.n, c.offsets.as<I64>(), S, c.out.get(),
                             ws.get(cuda::segmented_reduce_workspace_bytes(g.n, S, Op, dtype_v<T>)), stream, st);
      break;
    case Form::convenient:
      cuda::segmented_reduce(Op, dtype_v<T>, d_in, g.n, c.offsets.as<I64>(), S, c.out.get(), stream, st);
      break;
    case Form::begin_end:
      cuda::segmented_reduce(Op, dtype_v<T>, d_in, g.n, c.begin.as<I64>(), c.end.as<I64>(), S, c.out.get(), stream, st);
      break;
    case Form::arg_reduce:
      cuda::segmented_arg_reduce(Op, dtype_v<T>, d_in, g.n, c.offsets.as<I64>(), S, c.out.as<I64>(), c.values.get(),
                                 stream, st);
      break;
  }
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  FOLDKIT_CUDA_CHECK(cudaGetLastError());
  out = download(c.out, out_bytes + kGuard);
  values = download(c.values, values_bytes + kGuard);
  const auto s = download(c.status, sizeof status);
  std::memcpy(&status, s.data(), sizeof status);
}

// Runs and checks one case; returns false after reporting a failure.
template <ReduceOp Op, class T>
bool check_case(const Segs& g, const Data<T>& d, Form form, cudaStream_t stream, SharedWorkspace& ws) {
  const I64 S = g.count();
  std::vector<unsigned char> out, values;
  std::int32_t status = 0;
  run_on_device<Op, T>(g, d, form, stream, ws, out, values, status);
  const std::string where = std::string(op_name(Op)) + " " + dtype_name(dtype_v<T>) + " " + form_name(form) + " " +
                            g.what + " shift=" + std::to_string(d.shift);
  bool ok = true;
  auto report = [&](const std::string& why) {
    ADD_FAILURE() << where << ": " << why;
    ok = false;
  };
  if (status != 0) report("*d_status = " + std::to_string(status) + " for valid offsets");
  const std::size_t out_bytes = static_cast<std::size_t>(S) * out_size<Op, T>();
  if (!std::all_of(out.begin() + static_cast<std::ptrdiff_t>(out_bytes), out.end(), [](unsigned char c) { return c == kPoison; }))
    report("written past the output");
  const bool with_values = form == Form::arg_reduce;
  const std::size_t values_bytes = with_values ? static_cast<std::size_t>(S) * sizeof(T) : 0;
  if (!std::all_of(values.begin() + static_cast<std::ptrdiff_t>(values_bytes), values.end(), [](unsigned char c) { return c == kPoison; }))
    report("written past the values (or values written by segmented_reduce)");
  int failures = 0;
  for (I64 s = 0; s < S && failures < 5; ++s) {
    const I64 b = g.first(s), len = g.last(s) - b;
    const auto r = check_segment<Op, T>(d.data() + b, len, out.data() + s * out_size<Op, T>(),
                                        with_values ? values.data() + s * sizeof(T) : nullptr);
    if (!r) {
      ++failures;
      report("segment " + std::to_string(s) + " [" + std::to_string(b) + ", " + std::to_string(b + len) + "): " +
             r.message());
    }
  }
  // Exact results: the CPU backend's bytes (integers, min/max, argmin/argmax indices).
  constexpr bool kExact = std::is_integral_v<T> ? Op != ReduceOp::mean || sizeof(T) == 4
                                                : Op == ReduceOp::min || Op == ReduceOp::max || kIsArg<Op>;
  if (kExact && failures == 0) {
    std::vector<unsigned char> cpu_out(out_bytes + 1);
    if (g.by_offsets) cpu::segmented_reduce(Op, dtype_v<T>, d.data(), g.n, g.offsets.data(), S, cpu_out.data());
    else cpu::segmented_reduce(Op, dtype_v<T>, d.data(), g.n, g.begin.data(), g.end.data(), S, cpu_out.data());
    bool same = std::memcmp(cpu_out.data(), out.data(), out_bytes) == 0;
    if constexpr (!std::is_integral_v<T> && (Op == ReduceOp::min || Op == ReduceOp::max)) {
      // min/max promise "a NaN", not which one: the device converts f16 NaNs to the canonical
      // NaN (seen on the H100: 11 f16 min/max cases differed from the CPU only in NaN bits).
      same = true;
      for (I64 s = 0; s < S && same; ++s) {
        T a, b;
        std::memcpy(&a, cpu_out.data() + s * sizeof(T), sizeof(T));
        std::memcpy(&b, out.data() + s * sizeof(T), sizeof(T));
        const double da = static_cast<double>(static_cast<float>(a)), db = static_cast<double>(static_cast<float>(b));
        same = (da != da && db != db) || std::memcmp(&a, &b, sizeof(T)) == 0;
      }
    }
    if (!same) report("differs from the CPU backend's exact result");
  }
  return ok;
}

template <class F>
void visit(ReduceOp op, DType dtype, F&& f) {
  auto with_op = [&](auto tag) {
    switch (op) {
      case ReduceOp::sum: return f(std::integral_constant<ReduceOp, ReduceOp::sum>{}, tag);
      case ReduceOp::prod: return f(std::integral_constant<ReduceOp, ReduceOp::prod>{}, tag);
      case ReduceOp::min: return f(std::integral_constant<ReduceOp, ReduceOp::min>{}, tag);
      case ReduceOp::max: return f(std::integral_constant<ReduceOp, ReduceOp::max>{}, tag);
      case ReduceOp::mean: return f(std::integral_constant<ReduceOp, ReduceOp::mean>{}, tag);
      case ReduceOp::argmin: return f(std::integral_constant<ReduceOp, ReduceOp::argmin>{}, tag);
      case ReduceOp::argmax: return f(std::integral_constant<ReduceOp, ReduceOp::argmax>{}, tag);
    }
  };
  visit_dtype(dtype, with_op);
}

// One random case of (op, dtype, form) at a cheap size.
bool random_case(Rng& rng, ReduceOp op, DType dtype, Form form, I64 budget, cudaStream_t stream, SharedWorkspace& ws) {
  bool ok = true;
  visit(op, dtype, [&](auto op_tag, auto tag) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    const double nan_rate = rng.uniform(0, 2) == 0 ? 0.002 : 0.0;
    if (form == Form::begin_end) {
      const I64 n = rng.uniform(0, budget);
      const Segs g = random_begin_end(rng, n, rng.uniform(0, 500), rng.uniform(0, n));
      ok = check_case<Op, T>(g, make_data<Op, T>(rng, g.n, nan_rate), form, stream, ws);
    } else {
      const Segs g = random_offsets(rng, rng.uniform(1, budget), static_cast<int>(rng.uniform(0, 5)));
      ok = check_case<Op, T>(g, make_data<Op, T>(rng, g.n, nan_rate), form, stream, ws);
    }
  });
  return ok;
}

// ---- tests -------------------------------------------------------------------------------------

// Every op x dtype x form, and then random (op, dtype, form) up to 1200 cases in all.
TEST_F(CudaSegmentedReduce, RandomCases) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  Stream stream;
  SharedWorkspace ws;
  const I64 budget = std::min<I64>(max_n(), 60000);
  int cases = 0, failed = 0;
  for (DType dtype : kAllDTypes)
    for (ReduceOp op : kAllReduceOps)
      for (Form form : {Form::explicit_ws, Form::convenient, Form::begin_end, Form::arg_reduce}) {
        if (form == Form::arg_reduce && op != ReduceOp::argmin && op != ReduceOp::argmax) continue;
        failed += !random_case(rng, op, dtype, form, budget, stream, ws);
        ++cases;
      }
  while (cases < 1200 && failed < 10) {
    const DType dtype = kAllDTypes[rng.uniform(0, 7)];
    const ReduceOp op = kAllReduceOps[rng.uniform(0, 6)];
    Form form = static_cast<Form>(rng.uniform(0, 3));
    if (form == Form::arg_reduce && op != ReduceOp::argmin && op != ReduceOp::argmax) form = Form::explicit_ws;
    failed += !random_case(rng, op, dtype, form, rng.uniform(0, 4) == 0 ? budget * 4 : budget / 4 + 1, stream, ws);
    ++cases;
  }
  EXPECT_EQ(failed, 0) << "of " << cases << " cases";
  std::printf("[          ] %d random cases\n", cases);
}

// The benchmark's two shapes at test scale: 2^20 segments of 0..128 elements, and 2 segments of
// 2^24 among 2^18 segments of 0..16 (capped by FOLDKIT_TEST_MAX_N).
TEST_F(CudaSegmentedReduce, LargeLayouts) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  Stream stream;
  SharedWorkspace ws;
  const I64 cap = max_n();
  {
    std::vector<I64> lens;
    for (I64 total = 0; total < std::min<I64>(cap, I64{64} << 20) && lens.size() < (1u << 20);) {
      lens.push_back(rng.uniform(0, 128));
      total += lens.back();
    }
    const Segs g = from_lengths(lens, 0, 0, "uniform 0..128");
    EXPECT_TRUE((check_case<ReduceOp::sum, float>(g, make_data<ReduceOp::sum, float>(rng, g.n), Form::explicit_ws, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::argmax, float>(g, make_data<ReduceOp::argmax, float>(rng, g.n), Form::arg_reduce, stream, ws)));
  }
  {
    std::vector<I64> lens;
    const I64 huge = std::min<I64>(cap / 4 + 1, I64{1} << 24);
    for (I64 i = 0; i < (I64{1} << 18); ++i) lens.push_back(i == 1000 || i == 200000 ? huge : rng.uniform(0, 16));
    const Segs g = from_lengths(lens, 3, 5, "2 huge among tiny");
    EXPECT_TRUE((check_case<ReduceOp::sum, float>(g, make_data<ReduceOp::sum, float>(rng, g.n), Form::convenient, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::sum, std::int32_t>(g, make_data<ReduceOp::sum, std::int32_t>(rng, g.n), Form::explicit_ws, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::min, half>(g, make_data<ReduceOp::min, half>(rng, g.n, 1e-7), Form::explicit_ws, stream, ws)));
  }
}

// The same call twice: the same bits (float sums of a huge segment spread over many tiles).
TEST_F(CudaSegmentedReduce, Deterministic) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  SharedWorkspace ws;
  const Segs g = random_offsets(rng, std::min<I64>(max_n(), 3000000), 1);
  const Data<float> d = make_data<ReduceOp::sum, float>(rng, g.n);
  std::vector<unsigned char> first, out, values;
  std::int32_t status = 0;
  for (int k = 0; k < 5; ++k) {
    run_on_device<ReduceOp::sum, float>(g, d, k % 2 == 0 ? Form::explicit_ws : Form::convenient, nullptr, ws, out, values,
                                        status);
    if (k == 0) first = out;
    else EXPECT_TRUE(out == first) << "call " << k << " gave other bits (" << g.what << ")";
  }
}

// n = 0, num_segments = 0, all-empty segments.
TEST_F(CudaSegmentedReduce, EdgeCases) {
  Stream stream;
  SharedWorkspace ws;
  const I64 zeros[] = {0, 0, 0};
  DeviceBuffer d_offs = upload(zeros, sizeof zeros);
  DeviceBuffer d_out = poisoned(64), d_status = poisoned(4);
  // n = 0 (null input), two empty segments.
  cuda::segmented_reduce(ReduceOp::max, DType::f32, nullptr, 0, d_offs.as<I64>(), 2, d_out.get(), stream,
                         d_status.as<std::int32_t>());
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  auto out = download(d_out, 8);
  float f[2];
  std::memcpy(f, out.data(), 8);
  EXPECT_EQ(f[0], -HUGE_VALF);
  EXPECT_EQ(f[1], -HUGE_VALF);
  std::int32_t status = 5;
  std::memcpy(&status, download(d_status, 4).data(), 4);
  EXPECT_EQ(status, 0);
  // num_segments = 0: nothing written (out may be null), status set from the one offset.
  const I64 bad_one[] = {7};
  DeviceBuffer d_bad = upload(bad_one, sizeof bad_one);
  repoison(d_status, 4);
  cuda::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 0, d_bad.as<I64>(), 0, nullptr, stream,
                         d_status.as<std::int32_t>());
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::memcpy(&status, download(d_status, 4).data(), 4);
  EXPECT_EQ(status, 1);
  cuda::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 0, d_offs.as<I64>(), 0, nullptr,
                         ws.get(cuda::segmented_reduce_workspace_bytes(0, 0, ReduceOp::sum, DType::f32)), stream,
                         d_status.as<std::int32_t>());
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::memcpy(&status, download(d_status, 4).data(), 4);
  EXPECT_EQ(status, 0);
  cuda::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 0, nullptr, nullptr, 0, nullptr, stream);
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Invalid device offsets: nothing written, *d_status == 1, later valid calls on the same
// workspace still right; validate_offsets names the first bad entry.
TEST_F(CudaSegmentedReduce, InvalidDeviceOffsets) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  Stream stream;
  SharedWorkspace ws;
  for (int k = 0; k < 9; ++k) {
    Segs g = random_offsets(rng, 200000, static_cast<int>(rng.uniform(0, 4)));
    const I64 S = g.count();
    const I64 at = rng.uniform(0, S);
    switch (k % 3) {
      case 0: g.offsets[static_cast<std::size_t>(at)] = g.n + 1 + rng.uniform(0, 1000); break;
      case 1: g.offsets[static_cast<std::size_t>(at)] = -1 - rng.uniform(0, 1000); break;
      default:
        if (S > 0) std::swap(g.offsets[0], g.offsets[static_cast<std::size_t>(S)]);
        if (g.offsets[0] == g.offsets[static_cast<std::size_t>(S)]) g.offsets[0] = -5;
        break;
    }
    const Data<float> d = make_data<ReduceOp::sum, float>(rng, g.n);
    std::vector<unsigned char> out, values;
    std::int32_t status = 0;
    for (Form form : {Form::explicit_ws, Form::convenient}) {
      run_on_device<ReduceOp::sum, float>(g, d, form, stream, ws, out, values, status);
      EXPECT_EQ(status, 1) << g.what;
      EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](unsigned char c) { return c == kPoison; }))
          << "written despite bad offsets (" << g.what << ")";
    }
    DeviceBuffer d_offs = upload(g.offsets.data(), g.offsets.size() * sizeof(I64));
    const I64 first = [&] {
      for (I64 i = 0; i <= S; ++i)
        if (g.offsets[i] < 0 || g.offsets[i] > g.n || (i < S && g.offsets[i] > g.offsets[i + 1])) return i;
      return I64{-1};
    }();
    try {
      cuda::validate_offsets(d_offs.as<I64>(), S, g.n, stream);
      ADD_FAILURE() << "validate_offsets accepted bad offsets";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("offsets[" + std::to_string(first) + "]"), std::string::npos) << e.what();
    }
    const Segs ok = random_offsets(rng, 200000, 1);
    EXPECT_TRUE((check_case<ReduceOp::sum, float>(ok, make_data<ReduceOp::sum, float>(rng, ok.n), Form::explicit_ws, stream, ws)));
    DeviceBuffer d_ok = upload(ok.offsets.data(), ok.offsets.size() * sizeof(I64));
    EXPECT_NO_THROW(cuda::validate_offsets(d_ok.as<I64>(), ok.count(), ok.n, stream));
  }
  // Begin/end: a pair with begin > end, one past n.
  const I64 b[] = {0, 9, 2}, e[] = {4, 3, 5}, e2[] = {4, 9, 11};
  std::vector<float> x(10, 1.0f);
  DeviceBuffer d_x = upload(x.data(), 40), d_b = upload(b, 24), d_e = upload(e, 24), d_e2 = upload(e2, 24);
  for (const DeviceBuffer* ends : {&d_e, &d_e2}) {
    DeviceBuffer d_out = poisoned(12), d_status = poisoned(4);
    cuda::segmented_reduce(ReduceOp::sum, DType::f32, d_x.get(), 10, d_b.as<I64>(), ends->as<I64>(), 3, d_out.get(),
                           stream, d_status.as<std::int32_t>());
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::int32_t status = 0;
    std::memcpy(&status, download(d_status, 4).data(), 4);
    EXPECT_EQ(status, 1);
    const auto out = download(d_out, 12);
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](unsigned char c) { return c == kPoison; })) << "written";
  }
}

// The explicit form under graph capture, replayed.
TEST_F(CudaSegmentedReduce, GraphCapture) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  Stream stream;
  const Segs g = random_offsets(rng, 500000, 1);
  const Data<float> d = make_data<ReduceOp::sum, float>(rng, g.n);
  const I64 S = g.count();
  DeviceBuffer d_in = upload(d.storage.data(), d.storage.size() * sizeof(float));
  DeviceBuffer d_offs = upload(g.offsets.data(), g.offsets.size() * sizeof(I64));
  DeviceBuffer d_out = poisoned(static_cast<std::size_t>(S) * 4 + 4);
  DeviceBuffer d_ws(cuda::segmented_reduce_workspace_bytes(g.n, S, ReduceOp::sum, DType::f32));
  cuda::init_workspace(cuda::Workspace{d_ws.get(), d_ws.bytes()}, stream);
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph;
  FOLDKIT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  cuda::segmented_reduce(ReduceOp::sum, DType::f32, d_in.as<float>() + d.shift, g.n, d_offs.as<I64>(), S, d_out.get(),
                         cuda::Workspace{d_ws.get(), d_ws.bytes()}, stream);
  FOLDKIT_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  FOLDKIT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<unsigned char> first;
  for (int k = 0; k < 3; ++k) {
    FOLDKIT_CUDA_CHECK(cudaMemsetAsync(d_out.get(), kPoison, d_out.bytes(), stream));
    FOLDKIT_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto out = download(d_out, static_cast<std::size_t>(S) * 4);
    if (k == 0) {
      first = out;
      for (I64 s = 0; s < S; ++s) {
        const auto r = check_segment<ReduceOp::sum, float>(d.data() + g.offsets[s], g.offsets[s + 1] - g.offsets[s],
                                                           out.data() + s * 4, nullptr);
        if (!r) {
          ADD_FAILURE() << "segment " << s << ": " << r.message();
          break;
        }
      }
    } else {
      EXPECT_TRUE(out == first) << "replay " << k;
    }
  }
  FOLDKIT_CUDA_CHECK(cudaGraphExecDestroy(exec));
  FOLDKIT_CUDA_CHECK(cudaGraphDestroy(graph));
}

// Host-side bad input: the right Errc, nothing enqueued (the poisoned output stays poisoned).
TEST_F(CudaSegmentedReduce, BadArguments) {
  std::vector<float> hx(16, 1.0f);
  const I64 offs[] = {0, 4, 8};
  DeviceBuffer d_x = upload(hx.data(), 64), d_offs = upload(offs, sizeof offs), d_out = poisoned(64),
               d_vals = poisoned(64);
  const I64 host_offs[] = {0, 4, 8};
  DeviceBuffer small_ws(16);
  const std::size_t need = cuda::segmented_reduce_workspace_bytes(16, 2, ReduceOp::sum, DType::f32);
  DeviceBuffer ws_buf(need + 16);
  const cuda::Workspace ws{ws_buf.get(), need};
  auto expect = [&](Errc code, auto&& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << what << ": " << e.what();
    }
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    const auto out = download(d_out, 64);
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](unsigned char c) { return c == kPoison; })) << what << ": written";
  };
  const float* x = d_x.as<float>();
  const I64* o = d_offs.as<I64>();
  void* out = d_out.get();
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, -1, o, 2, out); }, "n < 0");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, -2, out); }, "S < 0");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 16, o, 2, out); }, "null in");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, nullptr, 2, out); }, "null offsets");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, nullptr); }, "null out");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, d_x.get()); },
         "out overlapping the input");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::i64, x, 16, o, 2, d_offs.as<I64>() + 1); },
         "out overlapping the offsets");
  expect(Errc::invalid_argument,
         [&] { cuda::segmented_arg_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, d_out.as<I64>(), d_vals.get()); },
         "arg_reduce of sum");
  expect(Errc::invalid_argument,
         [&] { cuda::segmented_arg_reduce(ReduceOp::argmax, DType::f32, x, 16, o, 2, d_out.as<I64>(), nullptr); },
         "null values");
  expect(Errc::unsupported, [&] { cuda::segmented_reduce(static_cast<ReduceOp>(9), DType::f32, x, 16, o, 2, out); },
         "unknown op");
  expect(Errc::unsupported, [&] { cuda::segmented_reduce(ReduceOp::sum, static_cast<DType>(9), x, 16, o, 2, out); },
         "unknown dtype");
  expect(Errc::wrong_memory, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, hx.data(), 16, o, 2, out); },
         "host input");
  expect(Errc::wrong_memory, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, host_offs, 2, out); },
         "host offsets");
  expect(Errc::invalid_argument,
         [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, out, cuda::Workspace{small_ws.get(), 16}); },
         "workspace too small");
  expect(Errc::invalid_argument,
         [&] {
           cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, out,
                                  cuda::Workspace{static_cast<char*>(ws_buf.get()) + 4, need});
         },
         "misaligned workspace");
  expect(Errc::invalid_argument,
         [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, out, cuda::Workspace{nullptr, need}); },
         "null workspace");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, nullptr, o, 2, out); },
         "null begin");
  EXPECT_THROW(cuda::validate_offsets(host_offs, 2, 16), Error);
  EXPECT_THROW(cuda::validate_offsets(nullptr, 2, 16), Error);
  (void)ws;
}

}  // namespace
}  // namespace foldkit::test
