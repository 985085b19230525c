// The GPU scan tests' shared harness (tests/gpu/cuda_scan_test.cpp: whole-array scans;
// tests/gpu/cuda_scan_segmented_test.cpp: blocked and segmented scans).
//
// Data on which every scan is exact (so outputs compare bit for bit with a serial reference):
//   integer sums            any 64-bit pattern (sums wrap mod 2^64);
//   float sums              integer-valued walk data whose prefixes stay bounded (make_walk_data),
//                           so every contiguous partial sum is an exact integer in the accumulator;
//   products                odd integers; +-1 floats with a few factors 2, 1/2, 3/2;
//   min/max                 running extremes that keep changing along the array.
// make_exact_data picks the right one for an op; make_init a non-identity init that keeps it exact.
//
// Running a scan: ScanOutput poisons a reused device output (0xFF bytes) with kOutGuard elements
// after it and the misaligned start before it, runs one enqueued call into it, waits, copies
// everything back and checks that nothing outside [0, n) was written. run_in_place_with does the
// same in place, checking the guards of the uploaded input on both sides. The whole-array forms
// (run<Op, T>, run_in_place<Op, T>) call cuda::inclusive_scan / exclusive_scan; the generic
// forms (run_with, run_in_place_with) take any launch, e.g. a blocked or segmented scan.
// ScanCut / enqueue_cut / run_scan_call: one call of any kind (whole, blocked, segmented; explicit
// workspace or convenient form; out of place or in place) through the same checks; CallPlan: the
// mix of such calls a sweep makes; segment_layout: segment offsets placed around the kernel's tiles.
// ScanWorkspace: an explicit scan workspace, zeroed once.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "foldkit/cuda/scan.hpp"
#include "foldkit/scan.hpp"
#include "support/cuda_backend.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

// The eight dtypes as (name, type) pairs: X(i32, std::int32_t) ... X(bf16, bfloat16), for the
// macros that generate one test per dtype.
#define FOLDKIT_FOR_EACH_SCAN_DTYPE(X) \
  X(i32, std::int32_t)                 \
  X(u32, std::uint32_t)                \
  X(i64, std::int64_t)                 \
  X(u64, std::uint64_t)                \
  X(f32, float)                        \
  X(f64, double)                       \
  X(f16, half)                         \
  X(bf16, bfloat16)

namespace foldkit::test {

// =============================================================================================
// Data
// =============================================================================================

// Integer-valued float data in [-m, m] whose running sum, starting from `start`, never leaves
// [-bound, bound]: a step that would leave it is taken backwards. Any partial sum the GPU can
// form (a prefix, or a contiguous range = difference of two prefixes) is then an integer of
// magnitude <= 2 * bound, exact in the accumulator: f32 (and f16/bf16, which accumulate in
// float) need 2 * bound < 2^24, f64 2 * bound < 2^53. f16's bound 2^11 also keeps every output
// an exactly representable integer; bf16 outputs above 256 are rounded once from the exact
// float prefix, which the reference does the same way. Serial by nature (~3 ns an element).
template <class T> struct WalkRange;
template <> struct WalkRange<float> { static constexpr std::int64_t m = 1000, bound = std::int64_t{1} << 22; };
template <> struct WalkRange<double> { static constexpr std::int64_t m = 1 << 20, bound = std::int64_t{1} << 50; };
template <> struct WalkRange<half> { static constexpr std::int64_t m = 2, bound = 1 << 11; };
template <> struct WalkRange<bfloat16> { static constexpr std::int64_t m = 2, bound = 1 << 11; };

template <class T> TestArray<T> make_walk_data(std::int64_t n, std::int64_t offset, CounterRng rng, std::int64_t start) {
  using W = WalkRange<T>;
  TestArray<T> a(n, offset, sum_guard<T>());
  T* d = a.data();
  std::int64_t s = start;
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t v = rng.in_range<std::int64_t>(static_cast<std::uint64_t>(i), -W::m, W::m);
    if (s + v > W::bound || s + v < -W::bound) v = -v;
    s += v;
    d[i] = from_double<T>(static_cast<double>(v));
  }
  return a;
}

// min/max data whose running extreme keeps changing along the array: integers uniform in a range
// that widens with the index (centred for unsigned types), plus 0-2 planted type minima and
// maxima; floats are integers in a widening range (capped where the type stops holding
// integers exactly), one element in 8 a zero of random sign.
template <class T>
TestArray<T> make_minmax_data(std::int64_t n, std::int64_t offset, CounterRng rng, Rng& choices, bool for_max) {
  TestArray<T> a(n, offset, ExtremeValues<T>::guard(for_max));
  if constexpr (is_floating_v<T>) {
    constexpr std::int64_t limit = std::is_same_v<T, double>  ? (std::int64_t{1} << 53)
                                   : std::is_same_v<T, float> ? (std::int64_t{1} << 24)
                                   : std::is_same_v<T, half>  ? 2048
                                                              : 256;
    fill(a, [&](std::int64_t i) {
      const std::uint64_t b = rng.bits(~static_cast<std::uint64_t>(i));
      if (b % 8 == 0) return from_double<T>((b & 8) ? -0.0 : 0.0);
      const std::int64_t g = std::min<std::int64_t>(i + 1, limit);
      return from_double<T>(static_cast<double>(rng.in_range<std::int64_t>(static_cast<std::uint64_t>(i), -g, g)));
    });
  } else {
    fill(a, [&](std::int64_t i) {
      const std::int64_t g = sizeof(T) == 4 ? i + 1 : (i + 1) * (std::int64_t{1} << 32);
      const std::int64_t v = rng.in_range<std::int64_t>(static_cast<std::uint64_t>(i), -g, g);
      if constexpr (std::is_signed_v<T>) {
        return static_cast<T>(v);
      } else {
        const std::uint64_t centre = std::uint64_t{1} << (8 * sizeof(T) - 1);
        return static_cast<T>(centre + static_cast<std::uint64_t>(v));
      }
    });
    if (n > 0) {
      for (std::int64_t k = choices.uniform(0, 2); k > 0; --k) a[choices.uniform(0, n - 1)] = std::numeric_limits<T>::lowest();
      for (std::int64_t k = choices.uniform(0, 2); k > 0; --k) a[choices.uniform(0, n - 1)] = std::numeric_limits<T>::max();
    }
  }
  return a;
}

// A non-identity init for exclusive scans, inside the range the data generators assume.
template <ReduceOp Op, class T> scan_result_t<Op, T> make_init(Rng& rng) {
  using R = scan_result_t<Op, T>;
  if constexpr (Op == ReduceOp::sum || Op == ReduceOp::prod) {
    if constexpr (std::is_integral_v<T>) {
      const std::uint64_t bits = rng.next();  // any 64-bit value: sums wrap; products stay odd
      return static_cast<R>(Op == ReduceOp::prod ? (bits | 1u) : bits);
    } else if constexpr (Op == ReduceOp::sum) {
      std::int64_t v = rng.uniform(-WalkRange<T>::m, WalkRange<T>::m);
      if (v == 0) v = 1;
      return from_double<T>(static_cast<double>(v));
    } else {
      static constexpr double kInits[] = {-2.0, 0.5, 1.5, -1.0};
      return from_double<T>(kInits[rng.uniform(0, 3)]);
    }
  } else if constexpr (is_floating_v<T>) {
    switch (rng.uniform(0, 4)) {
      case 0: return from_double<T>(-0.0);
      case 1: return from_double<T>(0.0);
      default: return from_double<T>(static_cast<double>(rng.uniform(-8, 8)));
    }
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(rng.uniform(-1000, 1000));
  } else {
    return static_cast<T>((std::uint64_t{1} << (8 * sizeof(T) - 1)) + static_cast<std::uint64_t>(rng.uniform(-1000, 1000)));
  }
}

// Data for which the scan of Op is exact (see the file comment), started from init when exclusive.
template <ReduceOp Op, class T>
TestArray<T> make_exact_data(std::int64_t n, std::int64_t offset, Rng& rng, bool exclusive, scan_result_t<Op, T> init) {
  if constexpr (Op == ReduceOp::sum) {
    if constexpr (std::is_integral_v<T>) {
      (void)exclusive;
      (void)init;
      return make_exact_sum_data<T>(n, offset, rng.counter());  // any 64-bit pattern: sums wrap mod 2^64
    } else {
      return make_walk_data<T>(n, offset, rng.counter(), exclusive ? static_cast<std::int64_t>(to_ld(init)) : 0);
    }
  } else if constexpr (Op == ReduceOp::prod) {
    (void)exclusive;
    (void)init;
    if (n == 0) {  // make_exact_prod_data picks positions in [0, n): nothing to pick from
      if constexpr (is_floating_v<T>) return TestArray<T>(0, offset, quiet_nan<T>());
      else return TestArray<T>(0, offset, T(0));
    }
    // Integers: odd values (never wrap to 0). Floats: +-1 with <= 40 factors 2, <= 40 of 1/2 and
    // <= 10 of 3/2: any partial product (times an init from make_init) is +-3^a 2^b, a <= 11,
    // |b| <= 41, exact in float.
    return make_exact_prod_data<T>(n, offset, rng.counter(), rng);
  } else {
    (void)exclusive;
    (void)init;
    return make_minmax_data<T>(n, offset, rng.counter(), rng, Op == ReduceOp::max);
  }
}

// =============================================================================================
// Running a scan
// =============================================================================================

inline constexpr std::int64_t kOutGuard = 16;  // poisoned elements after the output
inline constexpr unsigned char kPoison = 0xFF;

// A whole-array scan: inclusive, or exclusive from init; the explicit form when ws is given.
template <ReduceOp Op, class T>
void enqueue_scan(bool exclusive, const T* in, std::int64_t n, scan_result_t<Op, T>* out, scan_result_t<Op, T> init,
                  const cuda::Workspace* ws, cudaStream_t stream) {
  if (exclusive) {
    if (ws) cuda::exclusive_scan<Op>(in, n, out, init, *ws, stream);
    else cuda::exclusive_scan<Op>(in, n, out, init, stream);
  } else {
    if (ws) cuda::inclusive_scan<Op>(in, n, out, *ws, stream);
    else cuda::inclusive_scan<Op>(in, n, out, stream);
  }
}

inline std::string describe_call(bool exclusive, const cuda::Workspace* ws, std::int64_t out_offset) {
  return std::string(exclusive ? "exclusive" : "inclusive") + ", " +
         (ws ? "explicit workspace" : "convenient form") + ", out offset " + std::to_string(out_offset);
}

// The first byte in [begin, end) that is not the poison, or -1.
inline std::int64_t first_unpoisoned(const unsigned char* p, std::size_t begin, std::size_t end) {
  for (std::size_t k = begin; k < end; ++k)
    if (p[k] != kPoison) return static_cast<std::int64_t>(k);
  return -1;
}

// A device output buffer reused across calls (grown when needed) and its host copy.
template <class R> class ScanOutput {
 public:
  // Poisons [0, out_offset + n + kOutGuard) elements of the output, calls launch(d_out) with
  // d_out = element out_offset (it must enqueue one call that writes n outputs there on
  // `stream`), waits, copies everything back and checks the guards. On success *got points at
  // the n outputs (valid until the next call).
  template <class Launch>
  ::testing::AssertionResult run_with(std::int64_t n, std::int64_t out_offset, cudaStream_t stream, Launch&& launch,
                                      const R** got) {
    const std::size_t total = static_cast<std::size_t>(out_offset + n + kOutGuard);
    if (out_.bytes() < total * sizeof(R)) out_ = DeviceBuffer(total * sizeof(R));
    FOLDKIT_CUDA_CHECK(cudaMemsetAsync(out_.get(), kPoison, total * sizeof(R), stream));
    launch(out_.as<R>() + out_offset);
    FOLDKIT_CUDA_CHECK(cudaGetLastError());
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    host_.resize(total);
    FOLDKIT_CUDA_CHECK(cudaMemcpy(host_.data(), out_.get(), total * sizeof(R), cudaMemcpyDeviceToHost));
    const auto* bytes = reinterpret_cast<const unsigned char*>(host_.data());
    const std::size_t data_begin = static_cast<std::size_t>(out_offset) * sizeof(R);
    const std::size_t data_end = data_begin + static_cast<std::size_t>(n) * sizeof(R);
    if (const std::int64_t k = first_unpoisoned(bytes, 0, data_begin); k >= 0)
      return ::testing::AssertionFailure() << "wrote before the output: byte " << k << " of the " << data_begin
                                           << "-byte head guard";
    if (const std::int64_t k = first_unpoisoned(bytes, data_end, total * sizeof(R)); k >= 0)
      return ::testing::AssertionFailure() << "wrote past the end of the output: element "
                                           << (static_cast<std::size_t>(k) - data_end) / sizeof(R)
                                           << " after it";
    *got = host_.data() + out_offset;
    return ::testing::AssertionSuccess();
  }

  // The whole-array scan: uploads `a` and scans it out of place into element out_offset.
  template <ReduceOp Op, class T>
  ::testing::AssertionResult run(const TestArray<T>& a, std::int64_t out_offset, bool exclusive, R init,
                                 const cuda::Workspace* ws, cudaStream_t stream, const R** got) {
    static_assert(std::is_same_v<R, scan_result_t<Op, T>>);
    const auto in = to_device(a);  // synchronises the device
    return run_with(
        a.n, out_offset, stream, [&](R* out) { enqueue_scan<Op, T>(exclusive, in.ptr, a.n, out, init, ws, stream); },
        got);
  }

 private:
  DeviceBuffer out_;
  std::vector<R> host_;
};

// In place (out == in, allowed when the result type is T): uploads `a`, calls launch(p) with p
// the device copy of a.data() (it must enqueue one call on the default stream that scans p in
// place), and checks that the guards of the uploaded array on both sides come back unchanged.
// On success *got points at the n outputs.
template <class T, class Launch>
::testing::AssertionResult run_in_place_with(const TestArray<T>& a, Launch&& launch, std::vector<T>& host,
                                             const T** got) {
  const auto in = to_device(a);
  T* p = in.buffer.template as<T>() + a.offset;
  launch(p);
  FOLDKIT_CUDA_CHECK(cudaGetLastError());
  host.resize(a.storage.size());
  FOLDKIT_CUDA_CHECK(cudaMemcpy(host.data(), in.buffer.get(), host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  const std::size_t begin = static_cast<std::size_t>(a.offset), end = begin + static_cast<std::size_t>(a.n);
  if (std::memcmp(host.data(), a.storage.data(), begin * sizeof(T)) != 0)
    return ::testing::AssertionFailure() << "in place: wrote before the array";
  if (std::memcmp(host.data() + end, a.storage.data() + end, (host.size() - end) * sizeof(T)) != 0)
    return ::testing::AssertionFailure() << "in place: wrote past the end of the array";
  *got = host.data() + begin;
  return ::testing::AssertionSuccess();
}

// The whole-array scan in place.
template <ReduceOp Op, class T>
::testing::AssertionResult run_in_place(const TestArray<T>& a, bool exclusive, T init, const cuda::Workspace* ws,
                                        std::vector<T>& host, const T** got) {
  static_assert(std::is_same_v<scan_result_t<Op, T>, T>);
  return run_in_place_with(
      a, [&](T* p) { enqueue_scan<Op, T>(exclusive, p, a.n, p, init, ws, nullptr); }, host, got);
}

// =============================================================================================
// Blocked and segmented scans
// =============================================================================================

// How a scan cuts the array: whole, blocks of block_length, or segments at d_offsets (device
// memory, num_segments + 1 entries). A plain view: the error tests pass any values here.
struct ScanCut {
  enum Kind { whole, blocked, segmented } kind = whole;
  std::int64_t block_length = 0;
  const std::int64_t* d_offsets = nullptr;
  std::int64_t num_segments = 0;

  std::string describe() const {
    if (kind == whole) return "whole array";
    if (kind == blocked) return "blocked, block_length " + std::to_string(block_length);
    return "segmented, " + std::to_string(num_segments) + " segments";
  }
};

// One scan call over `cut`: inclusive, or exclusive from init; the explicit form when ws is given.
template <ReduceOp Op, class T>
void enqueue_cut(const ScanCut& cut, bool exclusive, const T* in, std::int64_t n, scan_result_t<Op, T>* out,
                 scan_result_t<Op, T> init, const cuda::Workspace* ws, cudaStream_t s) {
  const std::int64_t len = cut.block_length, segs = cut.num_segments;
  const std::int64_t* off = cut.d_offsets;
  if (cut.kind == ScanCut::whole) {
    enqueue_scan<Op, T>(exclusive, in, n, out, init, ws, s);
  } else if (cut.kind == ScanCut::blocked) {
    if (exclusive && ws) cuda::exclusive_scan_blocked<Op>(in, n, out, len, init, *ws, s);
    else if (exclusive) cuda::exclusive_scan_blocked<Op>(in, n, out, len, init, s);
    else if (ws) cuda::inclusive_scan_blocked<Op>(in, n, out, len, *ws, s);
    else cuda::inclusive_scan_blocked<Op>(in, n, out, len, s);
  } else {
    if (exclusive && ws) cuda::exclusive_scan_segmented<Op>(in, n, out, off, segs, init, *ws, s);
    else if (exclusive) cuda::exclusive_scan_segmented<Op>(in, n, out, off, segs, init, s);
    else if (ws) cuda::inclusive_scan_segmented<Op>(in, n, out, off, segs, *ws, s);
    else cuda::inclusive_scan_segmented<Op>(in, n, out, off, segs, s);
  }
}

// How one call is made.
struct ScanCall {
  bool exclusive = false;
  const cuda::Workspace* ws = nullptr;  // null: the convenient form
  std::int64_t in_offset = 0;           // where the test's input starts (TestArray offset)
  std::int64_t out_offset = 0;          // out of place: where the output starts in its buffer
  bool in_place = false;                // honoured where the result type is T

  template <ReduceOp Op, class T> bool runs_in_place() const {
    return in_place && std::is_same_v<scan_result_t<Op, T>, T>;
  }
  template <ReduceOp Op, class T> std::string describe(std::int64_t array_offset) const {
    const bool here = runs_in_place<Op, T>();
    return std::string(here ? "IN PLACE, " : "") + describe_call(exclusive, ws, here ? array_offset : out_offset);
  }
};

// Runs one call over `cut` on the uploaded `a`: out of place into a poisoned, guarded output on
// `stream` (ScanOutput::run_with), or in place on the default stream (run_in_place_with). On
// success `result` holds the n outputs; a failure says which guard was written.
template <ReduceOp Op, class T>
::testing::AssertionResult run_scan_call(const ScanCut& cut, const TestArray<T>& a, const ScanCall& c,
                                         scan_result_t<Op, T> init, cudaStream_t stream,
                                         std::vector<scan_result_t<Op, T>>& result) {
  using R = scan_result_t<Op, T>;
  const R* got = nullptr;
  ::testing::AssertionResult ran = ::testing::AssertionSuccess();
  if constexpr (std::is_same_v<R, T>) {
    if (c.in_place) {
      std::vector<T> host;
      const auto launch = [&](T* d) { enqueue_cut<Op, T>(cut, c.exclusive, d, a.n, d, init, c.ws, nullptr); };
      ran = run_in_place_with(a, launch, host, &got);
      if (ran) result.assign(got, got + a.n);
      return ran;
    }
  }
  ScanOutput<R> out;
  const auto in = to_device(a);
  const auto launch = [&](R* d) { enqueue_cut<Op, T>(cut, c.exclusive, in.ptr, a.n, d, init, c.ws, stream); };
  ran = out.run_with(a.n, c.out_offset, stream, launch, &got);
  if (ran) result.assign(got, got + a.n);
  return ran;
}

// The calls a sweep makes at one (size, partition). Up to kAllOffsetsUpTo elements: inclusive and
// exclusive out of place, and every other time one more in place; above, one call (inclusive or
// exclusive at random, in place one time in four). Input and output start 1-3 elements past an
// aligned base (both aligned one call in five); calls alternate explicit workspace / convenient.
class CallPlan {
 public:
  CallPlan(const cuda::Workspace* ws, bool in_place_allowed) : ws_(ws), in_place_(in_place_allowed) {}
  std::vector<ScanCall> next(std::int64_t n, Rng& rng) {
    std::vector<ScanCall> calls;
    if (n <= kAllOffsetsUpTo) {
      calls = {make(false, false, rng), make(true, false, rng)};
      if (in_place_ && (rng.next() & 1)) calls.push_back(make(rng.next() & 1, true, rng));
    } else {
      calls = {make(rng.next() & 1, in_place_ && rng.uniform(0, 3) == 0, rng)};
    }
    return calls;
  }

 private:
  ScanCall make(bool exclusive, bool in_place, Rng& rng) {
    const int k = count_++;
    const bool aligned = k % 5 == 0;
    return ScanCall{exclusive, k % 2 ? ws_ : nullptr, aligned ? 0 : rng.uniform(1, 3), aligned ? 0 : rng.uniform(1, 3),
                in_place};
  }
  const cuda::Workspace* ws_;
  bool in_place_;
  int count_ = 0;
};

inline constexpr int kSegmentLayouts = 7;
inline const char* const kLayoutNames[kSegmentLayouts] = {"random lengths", "runs of empty segments", "single elements",
                                                   "one long segment", "starts at tile edges +-1", "one segment",
                                                   "n segments of 1"};

// Segment layouts for n elements (offsets: non-decreasing, 0 first, n last), placed around the
// scan kernel's tiles (256 x 16 = 4096 elements for 2- and 4-byte types, 256 x 8 = 2048 for
// 8-byte ones): layout `kind` of kLayoutNames.
inline std::vector<std::int64_t> segment_layout(std::int64_t n, int kind, Rng& rng) {
  std::vector<std::int64_t> off{0};
  const auto at = [&](std::int64_t pos, std::int64_t times = 1) {  // clamped to [previous, n]
    for (std::int64_t k = 0; k < times; ++k) off.push_back(std::min(n, std::max(off.back(), pos)));
  };
  switch (kind) {
    case 0:  // empty, single, short, medium and long (many tiles) at random
      while (off.back() < n) {
        const std::int64_t pick = rng.uniform(0, 9);
        at(off.back() + (pick < 2 ? 0 : pick < 4 ? 1 : pick < 8 ? rng.uniform(2, 64)
                         : pick < 9 ? rng.uniform(65, 5000) : rng.uniform(5001, 50000)));
      }
      break;
    case 1: {  // runs of empties at the start, in the middle and at the end; 300 and 1000 in a row
      at(0, 300);  // more than one block of threads' worth of segment starts at one element
      std::vector<std::int64_t> cuts;
      for (int k = 0; k < 8; ++k) cuts.push_back(rng.uniform(0, n));
      std::sort(cuts.begin(), cuts.end());
      const std::int64_t runs[] = {1, 2, 31, 300, 1000};
      for (std::int64_t c : cuts) at(c, runs[rng.uniform(0, 4)]);
      at(n, 257);
      break;
    }
    case 2:  // single elements, an empty segment now and then
      for (std::int64_t i = 1; i <= n; ++i) {
        if (rng.uniform(0, 7) == 0) at(i - 1);
        at(i);
      }
      break;
    case 3: {  // a long segment over many tiles, starting and ending mid-tile or at 0 / n
      const std::int64_t a = rng.next() & 1 ? 0 : rng.uniform(0, std::min<std::int64_t>(n, 5000));
      const std::int64_t b = n - (rng.next() & 1 ? 0 : rng.uniform(0, std::min<std::int64_t>(n - a, 3000)));
      off.insert(off.end(), {0, a, a, b, b, n, n});
      break;
    }
    case 4:  // at multiples of 2048 (every 8-byte tile, every other 4-byte one): start at the edge,
             // one before, one after, all three, an empty segment there, or none
      for (std::int64_t m = 2048; m < n; m += 2048) {
        switch (rng.uniform(0, 5)) {
          case 0: at(m - 1); break;
          case 1: at(m); break;
          case 2: at(m + 1); break;
          case 3: off.insert(off.end(), {m - 1, m, std::min(n, m + 1)}); break;
          case 4: at(m, 2); break;
          default: break;
        }
      }
      break;
    case 5: break;  // one segment: the whole array
    default:        // n segments of length 1
      for (std::int64_t i = 1; i <= n; ++i) at(i);
  }
  if (off.back() != n || (kind == 5 && off.size() == 1)) off.push_back(n);
  return off;
}

// Runs body(stream) on a stream created for it and then on the default stream (the convenient
// form keeps one workspace per stream), each under a trace naming it; stops after the first
// stream whose body failed.
template <class Body> void on_created_and_default_streams(Body&& body) {
  const Stream stream;
  for (cudaStream_t s : {static_cast<cudaStream_t>(stream), cudaStream_t{nullptr}}) {
    SCOPED_TRACE(s ? "created stream" : "default stream");
    body(s);
    if (::testing::Test::HasFailure()) return;
  }
}

// An explicit scan workspace sized for (max_n, each of dtypes), zeroed once.
// How a ScanWorkspace is zeroed: by init_scan_workspace (stream-ordered), or after being filled
// with garbage (0xA5 bytes) by init_scan_workspace or by a plain cudaMemset, the two ways the
// documentation allows.
enum class ScanZeroing { init, init_over_garbage, memset_over_garbage };

class ScanWorkspace {
 public:
  ScanWorkspace(std::int64_t max_n, std::initializer_list<DType> dtypes, cudaStream_t stream = nullptr)
      : ScanWorkspace(max_n, dtypes, ScanZeroing::init, stream) {}
  ScanWorkspace(std::int64_t max_n, std::initializer_list<DType> dtypes, ScanZeroing zeroing,
                cudaStream_t stream = nullptr) {
    std::size_t bytes = 0;
    for (DType t : dtypes) bytes = std::max(bytes, cuda::scan_workspace_bytes(max_n, t));
    buffer_ = DeviceBuffer(bytes > 0 ? bytes : 1);
    ws_ = cuda::Workspace{buffer_.get(), bytes};
    if (zeroing != ScanZeroing::init) FOLDKIT_CUDA_CHECK(cudaMemset(buffer_.get(), 0xA5, buffer_.bytes()));
    if (zeroing == ScanZeroing::memset_over_garbage) FOLDKIT_CUDA_CHECK(cudaMemset(buffer_.get(), 0, buffer_.bytes()));
    else cuda::init_scan_workspace(ws_, stream);
  }
  const cuda::Workspace* get() const { return &ws_; }

 private:
  DeviceBuffer buffer_;
  cuda::Workspace ws_{};
};

}  // namespace foldkit::test
