// CPU prefix scans (foldkit/scan.hpp) against the independent references of
// tests/common/scan_reference.hpp: every scan op x dtype, whole / blocked / segmented, inclusive
// and exclusive, out of place into a poisoned output with guards, and in place; exact on exact
// data, within a stated bound on real float data; NaN and signed-zero rules; determinism across
// calls and thread counts; argument errors.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/scan_reference.hpp"
#include "foldkit/scan.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

// One short global type per dtype, so ctest names read CpuScanAll.Exact<scan_f32>.
struct scan_i32 { using T = std::int32_t; };
struct scan_u32 { using T = std::uint32_t; };
struct scan_i64 { using T = std::int64_t; };
struct scan_u64 { using T = std::uint64_t; };
struct scan_f32 { using T = float; };
struct scan_f64 { using T = double; };
struct scan_f16 { using T = foldkit::half; };
struct scan_bf16 { using T = foldkit::bfloat16; };

namespace foldkit::test {
namespace {

// ---- the output type table -------------------------------------------------------------------
template <ReduceOp Op, class T> constexpr bool scan_types_match() {
  using Acc = std::conditional_t<is_16bit_float_v<T>, float, expected_scan_t<Op, T>>;
  return std::is_same_v<scan_result_t<Op, T>, expected_scan_t<Op, T>> && std::is_same_v<scan_accum_t<Op, T>, Acc>;
}
template <class T> constexpr bool all_scan_types_match() {
  return scan_types_match<ReduceOp::sum, T>() && scan_types_match<ReduceOp::prod, T>() &&
         scan_types_match<ReduceOp::min, T>() && scan_types_match<ReduceOp::max, T>();
}
static_assert(all_scan_types_match<std::int32_t>() && all_scan_types_match<std::uint32_t>() &&
              all_scan_types_match<std::int64_t>() && all_scan_types_match<std::uint64_t>() &&
              all_scan_types_match<float>() && all_scan_types_match<double>() && all_scan_types_match<half>() &&
              all_scan_types_match<bfloat16>());
static_assert(std::is_same_v<scan_result_t<ReduceOp::sum, std::int32_t>, std::int64_t> &&
              std::is_same_v<scan_result_t<ReduceOp::prod, std::uint32_t>, std::uint64_t> &&
              std::is_same_v<scan_result_t<ReduceOp::sum, half>, half> &&
              std::is_same_v<scan_accum_t<ReduceOp::max, bfloat16>, float>);

template <class F> void for_each_scan_op(F&& f) {
  f(std::integral_constant<ReduceOp, ReduceOp::sum>{});
  f(std::integral_constant<ReduceOp, ReduceOp::prod>{});
  f(std::integral_constant<ReduceOp, ReduceOp::min>{});
  f(std::integral_constant<ReduceOp, ReduceOp::max>{});
}

// ---- the three forms of scan, one interface ---------------------------------------------------
struct Form {
  enum Kind { whole, blocked, segmented } kind = whole;
  std::int64_t block_length = 0;
  std::vector<std::int64_t> offsets;  // segmented: num_segments + 1 entries

  static Form blocks(std::int64_t length) { return Form{blocked, length, {}}; }
  static Form segments(std::vector<std::int64_t> off) { return Form{segmented, 0, std::move(off)}; }
  std::vector<std::int64_t> ref_offsets(std::int64_t n) const {
    if (kind == whole) return whole_offsets(n);
    if (kind == blocked) return block_offsets(n, block_length);
    return offsets;
  }
  std::string describe() const {
    if (kind == whole) return "whole";
    if (kind == blocked) return "blocked, block_length " + std::to_string(block_length);
    return "segmented, " + std::to_string(offsets.size() - 1) + " segments";
  }
};

template <ReduceOp Op, class T>
void call_scan(const Form& form, bool inclusive, const T* in, std::int64_t n, scan_result_t<Op, T>* out,
               scan_result_t<Op, T> init) {
  const std::int64_t segs = static_cast<std::int64_t>(form.offsets.size()) - 1;
  switch (form.kind) {
    case Form::whole:
      return inclusive ? cpu::inclusive_scan<Op, T>(in, n, out) : cpu::exclusive_scan<Op, T>(in, n, out, init);
    case Form::blocked:
      return inclusive ? cpu::inclusive_scan_blocked<Op, T>(in, n, out, form.block_length)
                       : cpu::exclusive_scan_blocked<Op, T>(in, n, out, form.block_length, init);
    case Form::segmented:
      return inclusive ? cpu::inclusive_scan_segmented<Op, T>(in, n, out, form.offsets.data(), segs)
                       : cpu::exclusive_scan_segmented<Op, T>(in, n, out, form.offsets.data(), segs, init);
  }
}

// ---- data ------------------------------------------------------------------------------------

template <class T> T nan_kind(int k) {  // quiet NaNs of either sign with different payloads
  using U = std::conditional_t<sizeof(T) == 2, std::uint16_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
  U q;  // the quiet NaN with no payload
  if constexpr (std::is_same_v<T, half>) q = 0x7e00u;
  else if constexpr (std::is_same_v<T, bfloat16>) q = 0x7fc0u;
  else if constexpr (std::is_same_v<T, float>) q = 0x7fc00000u;
  else q = 0x7ff8000000000000ull;
  const U sign = static_cast<U>(U{1} << (sizeof(T) * 8 - 1));
  const U bits = k % 3 == 0 ? q : k % 3 == 1 ? static_cast<U>(q | sign | 1u) : static_cast<U>(q | 0x15u);
  T v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// min/max data. Plain: ties and signed zeros (floats), the whole range (integers); rarely an
// infinity. Drift: values growing in magnitude, changing sign every 1024 elements, so the
// running min and max both keep changing all along the array.
template <class T> TestArray<T> make_minmax_data(std::int64_t n, std::int64_t offset, CounterRng rng, bool drift) {
  TestArray<T> a(n, offset, is_floating_v<T> ? quiet_nan<T>() : std::numeric_limits<T>::max());
  fill(a, [&](std::int64_t i) -> T {
    const std::uint64_t r = rng.bits(i);
    if (drift) {
      const std::int64_t t = i / 4, v = ((i / 1024) % 2 ? -t : t) + static_cast<std::int64_t>(r % 5) - 2;
      if constexpr (is_floating_v<T>) return (r >> 8) % 16 == 0 ? from_double<T>((r >> 12) & 1 ? -0.0 : 0.0)
                                                                 : from_double<T>(static_cast<double>(v));
      else if constexpr (std::is_signed_v<T>) return static_cast<T>(v);
      else return static_cast<T>((std::int64_t{1} << 31) + v);
    }
    if constexpr (is_floating_v<T>) {
      switch (r % 4096) {
        case 0: case 1: case 2: case 3: return from_double<T>(-0.0);
        case 4: case 5: case 6: case 7: return from_double<T>(0.0);
        case 8: return from_double<T>(-std::numeric_limits<double>::infinity());
        case 9: return from_double<T>(std::numeric_limits<double>::infinity());
        default: return from_double<T>((r % 3 == 0 ? 0.5 : -1.0 + 2.0 * rng.unit(i)));  // 0.5: frequent ties
      }
    } else {
      return ExtremeValues<T>::data_at(rng, i);
    }
  });
  return a;
}

// Data every backend must scan exactly (see random_arrays.hpp for why sums/products are exact).
template <ReduceOp Op, class T> TestArray<T> make_exact_scan_data(std::int64_t n, std::int64_t offset, Rng& rng) {
  if constexpr (Op == ReduceOp::sum) return make_exact_sum_data<T>(n, offset, rng.counter());
  else if constexpr (Op == ReduceOp::prod) {
    if (n == 0) return TestArray<T>(0, offset, is_floating_v<T> ? quiet_nan<T>() : T(0));  // it plants in [0, n)
    return make_exact_prod_data<T>(n, offset, rng.counter(), rng);
  }
  else return make_minmax_data<T>(n, offset, rng.counter(), rng.next() & 1);
}

// A non-identity init that keeps the exact data exact.
template <ReduceOp Op, class T> expected_scan_t<Op, T> some_init(Rng& rng) {
  using R = expected_scan_t<Op, T>;
  if constexpr (Op == ReduceOp::min || Op == ReduceOp::max) {
    if constexpr (is_floating_v<T>) return from_double<T>(-0.75 + 1.5 * static_cast<double>(rng.uniform(0, 8)) / 8);
    else return ExtremeValues<T>::data_at(rng.counter(), 0);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<R>(Op == ReduceOp::sum ? rng.next() : rng.next() | 1u);
  } else if constexpr (Op == ReduceOp::sum) {
    return round_to<R>(static_cast<long double>(rng.uniform(1, 8) * (rng.next() & 1 ? -1 : 1)));
  } else {
    const double f[] = {2.0, -2.0, 0.5, -1.5};
    return round_to<R>(f[rng.uniform(0, 3)]);
  }
}

// Segment layouts for n elements (offsets, num_segments + 1 entries).
std::vector<std::int64_t> make_segments(std::int64_t n, int kind, Rng& rng) {
  std::vector<std::int64_t> off{0};
  switch (kind) {
    case 0:  // random lengths: empty, single, short, long (several chunks)
      for (std::int64_t pos = 0; pos < n;) {
        const std::int64_t pick = rng.uniform(0, 9);
        const std::int64_t len = pick < 2 ? 0 : pick < 4 ? 1 : pick < 8 ? rng.uniform(2, 64) : rng.uniform(65, 70000);
        pos = std::min(n, pos + len);
        off.push_back(pos);
      }
      break;
    case 1:  // single elements, an empty segment now and then
      for (std::int64_t i = 1; i <= n; ++i) {
        if (rng.uniform(0, 7) == 0) off.push_back(i - 1);
        off.push_back(i);
      }
      break;
    case 2:  // empty segments, one very long segment, empty segments
      off.insert(off.end(), {0, 0, std::min<std::int64_t>(n, 1)});
      off.insert(off.end(), {n - (n > 2 ? 1 : 0), n, n, n});
      break;
    case 3:  // many empty segments at and around powers of two (chunk and tile boundaries)
      for (std::int64_t p = 1; p < n; p *= 2)
        for (std::int64_t q : {p - 1, p, p, p, p + 1})
          if (q > off.back() && q < n) off.push_back(q);
          else if (q == off.back()) off.push_back(q);
      off.push_back(n);
      break;
    case 4:  // long segments starting exactly at power-of-two boundaries (chunk or tile starts),
             // each followed by the next one only after another power-of-two multiple; some empty
      for (std::int64_t pos = 0, k = 0; pos < n; ++k) {
        const std::int64_t len = k == 0   ? std::int64_t{1} << 14  // then segments start at 2^14 and 3 * 2^14
                                 : k == 1 ? std::int64_t{1} << 15
                                          : (std::int64_t{1} << rng.uniform(9, 16)) * rng.uniform(0, 3);
        pos = std::min(n, pos + len);
        off.push_back(pos);
      }
      break;
    default:  // one segment
      off.push_back(n);
  }
  if (off.back() != n) off.push_back(n);
  return off;
}

std::vector<std::int64_t> scan_sizes() {
  return capped({0, 1, 2, 3, 31, 32, 33, 1023, 1024, 1025, 4093, 16383, 16384, 16385, 32767, 32768, 32769, 65521,
                 65537, 262145, 1000003, (1 << 22) - 1, (1 << 22) + 1});
}

// (n, input offset, output offset): every input offset 0..3 up to 65537 elements, one random
// one above; the output misaligned differently from the input.
struct Shape { std::int64_t n, in_offset, out_offset; };
std::vector<Shape> scan_shapes(const std::vector<std::int64_t>& sizes, Rng& rng) {
  std::vector<Shape> out;
  for (std::int64_t n : sizes) {
    if (n <= kAllOffsetsUpTo) {
      for (std::int64_t off = 0; off < 4; ++off) out.push_back({n, off, (off + 1 + rng.uniform(0, 2)) % 4});
    } else {
      out.push_back({n, rng.uniform(0, 3), rng.uniform(0, 3)});
    }
  }
  return out;
}

// ---- the checks ------------------------------------------------------------------------------

// Out of place into a poisoned, guarded output; and in place (when the types allow it): both
// bitwise equal to the exact reference, nothing written outside [0, n).
template <ReduceOp Op, class T>
void check_exact(const TestArray<T>& data, const Form& form, bool inclusive, expected_scan_t<Op, T> init,
                 std::int64_t out_offset, bool in_place_too = true) {
  using R = expected_scan_t<Op, T>;
  SCOPED_TRACE(std::string(op_name(Op)) + (inclusive ? " inclusive " : " exclusive ") + form.describe() + ", " +
               data.describe() + (inclusive ? "" : ", init " + show(init)));
  const auto want = ref_scan_exact<Op, T>(data.data(), form.ref_offsets(data.n), inclusive, init);
  TestArray<R> out(data.n, out_offset, scan_poison<R>());
  call_scan<Op, T>(form, inclusive, data.data(), data.n, out.data(), init);
  EXPECT_TRUE(outputs_equal(out, want)) << "out of place";
  EXPECT_TRUE(guards_intact(out, scan_poison<R>()));
  if constexpr (std::is_same_v<R, T>) {
    if (!in_place_too) return;
    TestArray<T> buffer = data;
    call_scan<Op, T>(form, inclusive, buffer.data(), buffer.n, buffer.data(), init);
    EXPECT_TRUE(outputs_equal(buffer, want)) << "in place";
    EXPECT_TRUE(guards_intact(buffer, data.storage.back()));
  }
}

template <class C> class CpuScanAll : public ::testing::Test {
 protected:
  Rng rng_{test_seed()};
};
using AllScanTypes = ::testing::Types<scan_i32, scan_u32, scan_i64, scan_u64, scan_f32, scan_f64, scan_f16, scan_bf16>;
TYPED_TEST_SUITE(CpuScanAll, AllScanTypes);

// Whole-array scans, every size and misalignment.
TYPED_TEST(CpuScanAll, Exact) {
  using T = typename TypeParam::T;
  FOLDKIT_TRACE_SEED();
  for (const Shape& s : scan_shapes(scan_sizes(), this->rng_)) {
    for_each_scan_op([&](auto op) {
      constexpr ReduceOp kOp = decltype(op)::value;
      const auto data = make_exact_scan_data<kOp, T>(s.n, s.in_offset, this->rng_);
      check_exact<kOp, T>(data, Form{}, true, {}, s.out_offset);
      check_exact<kOp, T>(data, Form{}, false, some_init<kOp, T>(this->rng_), s.out_offset);
    });
    if (this->HasFailure()) return;  // one failing shape is enough to read
  }
}

TYPED_TEST(CpuScanAll, Blocked) {
  using T = typename TypeParam::T;
  FOLDKIT_TRACE_SEED();
  for (std::int64_t n : capped({0, 1, 5, 1000, 4097, 16385, 100003, 1000003})) {
    // Also blocks as long as, or a multiple of, the power-of-two chunk/tile lengths a backend
    // may use (a block then starts exactly at a chunk boundary), and one random length.
    std::vector<std::int64_t> lengths = {1, 3, 32, 1000, 4096, 1 << 14, 1 << 15, 3 << 14, n + 5,
                                         this->rng_.uniform(4097, 70000)};
    if (n > 0) lengths.push_back(n);
    for (std::int64_t length : lengths) {
      for_each_scan_op([&](auto op) {
        constexpr ReduceOp kOp = decltype(op)::value;
        const auto data = make_exact_scan_data<kOp, T>(n, this->rng_.uniform(0, 3), this->rng_);
        const std::int64_t out_offset = this->rng_.uniform(0, 3);
        const bool in_place = n < 100000 || length == 1000;
        check_exact<kOp, T>(data, Form::blocks(length), true, {}, out_offset, in_place);
        check_exact<kOp, T>(data, Form::blocks(length), false, some_init<kOp, T>(this->rng_), out_offset, in_place);
      });
      if (this->HasFailure()) return;
    }
  }
}

TYPED_TEST(CpuScanAll, Segmented) {
  using T = typename TypeParam::T;
  FOLDKIT_TRACE_SEED();
  for (std::int64_t n : capped({0, 1, 2, 33, 1025, 16385, 100003, 1000003})) {
    for (int kind = 0; kind < 6; ++kind) {
      const Form form = Form::segments(make_segments(n, kind, this->rng_));
      SCOPED_TRACE("segment layout " + std::to_string(kind));
      for_each_scan_op([&](auto op) {
        constexpr ReduceOp kOp = decltype(op)::value;
        const auto data = make_exact_scan_data<kOp, T>(n, this->rng_.uniform(0, 3), this->rng_);
        const std::int64_t out_offset = this->rng_.uniform(0, 3);
        const bool in_place = n < 100000 || kind == 0;
        check_exact<kOp, T>(data, form, true, {}, out_offset, in_place);
        check_exact<kOp, T>(data, form, false, some_init<kOp, T>(this->rng_), out_offset, in_place);
      });
      if (this->HasFailure()) return;
    }
  }
  // No segments at all on no elements: offsets = {0} (its one entry is needed even then: the
  // validation rule, README "Errors"; null offsets are an error as on the GPU).
  const std::vector<std::int64_t> zero{0};
  const T* in = nullptr;
  scan_result_t<ReduceOp::sum, T>* out = nullptr;
  EXPECT_NO_THROW(cpu::inclusive_scan_segmented<ReduceOp::sum>(in, 0, out, zero.data(), 0));
  EXPECT_NO_THROW(cpu::exclusive_scan_segmented<ReduceOp::sum>(in, 0, out, zero.data(), 0, {}));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::exclusive_scan_segmented<ReduceOp::sum>(in, 0, out, nullptr, 0, {}); }));
}

// The same input gives the same bits on every call and for every thread count (the serial
// path for one thread, the two-pass parallel path otherwise).
TYPED_TEST(CpuScanAll, DeterministicAcrossCallsAndThreads) {
  using T = typename TypeParam::T;
  FOLDKIT_TRACE_SEED();
  const std::int64_t n = capped({1000003}).front();
  const int saved_threads = omp_get_max_threads();
  for_each_scan_op([&](auto op) {
    constexpr ReduceOp kOp = decltype(op)::value;
    using R = scan_result_t<kOp, T>;
    // Real data for floats (rounding would show any change of order), exact data otherwise.
    const TestArray<T> data = [&] {
      const std::int64_t offset = this->rng_.uniform(0, 3);
      if constexpr (is_floating_v<T>) {
        const bool prod = kOp == ReduceOp::prod;
        return make_real_data<T>(n, offset, this->rng_.counter(), prod ? 0.99 : -1.0, prod ? 1.01 : 1.0);
      } else {
        return make_exact_scan_data<kOp, T>(n, offset, this->rng_);
      }
    }();
    const Form forms[] = {Form{}, Form::blocks(1000), Form::segments(make_segments(n, 0, this->rng_))};
    const R init = some_init<kOp, T>(this->rng_);
    for (const Form& form : forms) {
      for (bool inclusive : {true, false}) {
        SCOPED_TRACE(std::string(op_name(kOp)) + (inclusive ? " inclusive " : " exclusive ") + form.describe());
        std::vector<R> first(static_cast<std::size_t>(n)), again(static_cast<std::size_t>(n));
        call_scan<kOp, T>(form, inclusive, data.data(), n, first.data(), init);
        for (int call = 1; call < 20; ++call) {
          std::memset(again.data(), 0xA5, again.size() * sizeof(R));
          call_scan<kOp, T>(form, inclusive, data.data(), n, again.data(), init);
          ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(R)), 0) << "call " << call;
        }
        for (int threads : {1, 2, 3, 7}) {
          omp_set_num_threads(threads);
          std::memset(again.data(), 0xA5, again.size() * sizeof(R));
          call_scan<kOp, T>(form, inclusive, data.data(), n, again.data(), init);
          omp_set_num_threads(saved_threads);
          ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(R)), 0) << threads << " threads";
        }
      }
    }
  });
}

// ---- the rounds of the CPU scan ----------------------------------------------------------------
// The CPU backend (src/cpu/scan_chunk.hpp) scans chunks of 2^14 elements in rounds: each thread
// takes a piece of whole chunks (1 MiB of input and output together, at least 4 chunks), a round
// is one piece per thread, the last round is split evenly, and outputs of 64 MiB or more are
// written with streaming stores. The sizes below sit on those boundaries for the thread counts
// they set; should the constants change they stay valid tests, only no longer on the edges.
constexpr std::int64_t kCpuChunk = std::int64_t{1} << 14;
template <ReduceOp Op, class T> constexpr std::int64_t cpu_piece_elements() {
  const std::int64_t bytes = static_cast<std::int64_t>(sizeof(T) + sizeof(scan_result_t<Op, T>));
  return std::max<std::int64_t>(4, (std::int64_t{1} << 20) / (kCpuChunk * bytes)) * kCpuChunk;
}

// omp_set_num_threads for a scope.
class ThreadCount {
 public:
  explicit ThreadCount(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ThreadCount() { omp_set_num_threads(saved_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

// Exact results at and around the ends of the first piece, of one and two rounds, and with a
// last round of one chunk and a bit, for 1, 2 and 3 threads; whole arrays (in place too), and
// blocked and segmented forms whose heads fall in some chunks and not in others.
TYPED_TEST(CpuScanAll, RoundAndPieceBoundaries) {
  using T = typename TypeParam::T;
  FOLDKIT_TRACE_SEED();
  for (int threads : {1, 2, 3}) {
    const ThreadCount scoped(threads);
    SCOPED_TRACE(std::to_string(threads) + " threads");
    for_each_scan_op([&](auto op) {
      constexpr ReduceOp kOp = decltype(op)::value;
      const std::int64_t piece = cpu_piece_elements<kOp, T>(), round = threads * piece;
      std::vector<std::int64_t> sizes = {piece - 1, piece + 1, round - 1, round, round + 1, 2 * round + 1,
                                         round + kCpuChunk + 7};
      if (threads == 1) sizes = {piece - 1, piece, piece + 1, 2 * piece + 1, 3 * piece + kCpuChunk + 7};
      for (std::int64_t n : capped(sizes)) {
        const auto data = make_exact_scan_data<kOp, T>(n, this->rng_.uniform(0, 3), this->rng_);
        const std::int64_t out_offset = this->rng_.uniform(0, 3);
        check_exact<kOp, T>(data, Form{}, true, {}, out_offset);
        check_exact<kOp, T>(data, Form{}, false, some_init<kOp, T>(this->rng_), out_offset);
        check_exact<kOp, T>(data, Form::blocks(3 * kCpuChunk + 5), false, some_init<kOp, T>(this->rng_), out_offset,
                            false);
        check_exact<kOp, T>(data, Form::segments(make_segments(n, 4, this->rng_)), true, {}, out_offset, false);
        if (this->HasFailure()) return;
      }
    });
    if (this->HasFailure()) return;
  }
}

// The same bits for every thread count on an array of several rounds for all of them (the
// last round partial), for whole arrays (side-by-side chunks), long blocks and long segments
// (chunks with and without heads mixed), real data for float sums and products.
TYPED_TEST(CpuScanAll, SameBitsForAnyThreadCountAcrossRounds) {
  using T = typename TypeParam::T;
  FOLDKIT_TRACE_SEED();
  const std::int64_t n = capped({5 * 8 * kCpuChunk + 12345}).front();
  for_each_scan_op([&](auto op) {
    constexpr ReduceOp kOp = decltype(op)::value;
    using R = scan_result_t<kOp, T>;
    const TestArray<T> data = [&] {
      const std::int64_t offset = this->rng_.uniform(0, 3);
      if constexpr (is_floating_v<T> && (kOp == ReduceOp::sum || kOp == ReduceOp::prod)) {
        const bool prod = kOp == ReduceOp::prod;
        return make_real_data<T>(n, offset, this->rng_.counter(), prod ? 0.99 : -1.0, prod ? 1.01 : 1.0);
      } else {
        return make_exact_scan_data<kOp, T>(n, offset, this->rng_);
      }
    }();
    const Form forms[] = {Form{}, Form::blocks(3 * kCpuChunk + 5), Form::segments(make_segments(n, 4, this->rng_))};
    const R init = some_init<kOp, T>(this->rng_);
    for (const Form& form : forms) {
      for (bool inclusive : {true, false}) {
        SCOPED_TRACE(std::string(op_name(kOp)) + (inclusive ? " inclusive " : " exclusive ") + form.describe());
        std::vector<R> one(static_cast<std::size_t>(n)), many(static_cast<std::size_t>(n));
        {
          const ThreadCount scoped(1);
          call_scan<kOp, T>(form, inclusive, data.data(), n, one.data(), init);
        }
        for (int threads : {2, 3, 4, 5, 8}) {
          const ThreadCount scoped(threads);
          std::memset(many.data(), 0xA5, many.size() * sizeof(R));
          call_scan<kOp, T>(form, inclusive, data.data(), n, many.data(), init);
          ASSERT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(R)), 0) << threads << " threads";
        }
      }
    }
  });
}

// ================================ float dtypes ================================
template <class C> class CpuScanFloat : public CpuScanAll<C> {};
using FloatScanTypes = ::testing::Types<scan_f32, scan_f64, scan_f16, scan_bf16>;
TYPED_TEST_SUITE(CpuScanFloat, FloatScanTypes);

// Real-valued data: within scan_tolerance (scan_reference.hpp); in place gives the same bits.
template <ReduceOp Op, class T>
void check_real(const TestArray<T>& data, const Form& form, bool inclusive, T init, std::int64_t out_offset) {
  SCOPED_TRACE(std::string(op_name(Op)) + (inclusive ? " inclusive " : " exclusive ") + form.describe() + ", " +
               data.describe() + (inclusive ? "" : ", init " + show(init)));
  const auto want = ref_scan_real<Op, T>(data.data(), form.ref_offsets(data.n), inclusive, init);
  TestArray<T> out(data.n, out_offset, scan_poison<T>());
  call_scan<Op, T>(form, inclusive, data.data(), data.n, out.data(), init);
  EXPECT_TRUE(outputs_within(out, want));
  EXPECT_TRUE(guards_intact(out, scan_poison<T>()));
  TestArray<T> buffer = data;
  call_scan<Op, T>(form, inclusive, buffer.data(), buffer.n, buffer.data(), init);
  std::vector<T> out_of_place(out.data(), out.data() + out.n);
  EXPECT_TRUE(outputs_equal(buffer, out_of_place)) << "in place differs from out of place";
}

TYPED_TEST(CpuScanFloat, RealDataWithinBound) {
  using T = typename TypeParam::T;
  FOLDKIT_TRACE_SEED();
  for (const Shape& s : scan_shapes(capped({1, 2, 3, 33, 1025, 16383, 16385, 65537, 1000003, (1 << 22) + 1}), this->rng_)) {
    const Form forms[] = {Form{}, Form::blocks(this->rng_.uniform(1, 5000)),
                          Form::segments(make_segments(s.n, 0, this->rng_))};
    const auto sums = make_real_data<T>(s.n, s.in_offset, this->rng_.counter(), -1.0, 1.0);
    for (const Form& form : forms) {
      check_real<ReduceOp::sum, T>(sums, form, true, T{}, s.out_offset);
      check_real<ReduceOp::sum, T>(sums, form, false, from_double<T>(0.375), s.out_offset);
    }
    // Products of data near 1 stay in range: log |p| is a random walk of steps <= 0.01 (for
    // 16-bit types the walk over 65537 steps stays far from half's limit 65504 ~ e^11).
    if (s.n <= 65537 || !is_16bit_float_v<T>) {
      const auto prods = make_real_data<T>(s.n, s.in_offset, this->rng_.counter(), 0.99, 1.01);
      for (const Form& form : forms) {
        check_real<ReduceOp::prod, T>(prods, form, true, T{}, s.out_offset);
        check_real<ReduceOp::prod, T>(prods, form, false, from_double<T>(-1.25), s.out_offset);
      }
    }
    if (this->HasFailure()) return;
  }
}

// min/max: a NaN wins from its position on, and the first NaN's bits are what is carried (its
// sign and payload; different NaNs are planted). sum/prod: NaN from the first NaN on.
TYPED_TEST(CpuScanFloat, NaNPropagatesFromItsPosition) {
  using T = typename TypeParam::T;
  FOLDKIT_TRACE_SEED();
  for (std::int64_t n : capped({1, 2, 3, 33, 1025, 16385, 100003, 1000003})) {
    const std::int64_t edge = std::min<std::int64_t>(n, 16);
    const std::vector<std::vector<std::int64_t>> plants = {
        {0}, {n - 1}, {this->rng_.uniform(0, edge - 1)}, {this->rng_.uniform(0, n - 1)},
        {this->rng_.uniform(0, n - 1), this->rng_.uniform(0, n - 1), this->rng_.uniform(n - edge, n - 1)}};
    for (const auto& positions : plants) {
      SCOPED_TRACE("NaN at " + ::testing::PrintToString(positions));
      auto data = make_minmax_data<T>(n, this->rng_.uniform(0, 3), this->rng_.counter(), this->rng_.next() & 1);
      int k = static_cast<int>(this->rng_.uniform(0, 2));
      for (std::int64_t p : positions) data[p] = nan_kind<T>(k++);
      const Form forms[] = {Form{}, Form::blocks(this->rng_.uniform(1, 3000)),
                            Form::segments(make_segments(n, 0, this->rng_))};
      const std::int64_t out_offset = this->rng_.uniform(0, 3);
      for (const Form& form : forms) {
        check_exact<ReduceOp::min, T>(data, form, true, {}, out_offset);
        check_exact<ReduceOp::max, T>(data, form, true, {}, out_offset);
        check_exact<ReduceOp::min, T>(data, form, false, from_double<T>(0.25), out_offset);
        check_exact<ReduceOp::max, T>(data, form, false, from_double<T>(0.25), out_offset);
      }
      // Sums and products follow IEEE arithmetic: NaN exactly from the first NaN on, on data
      // near 1 that can make no NaN of its own (no infinities, no zeros, no overflow in float).
      auto near_one = make_real_data<T>(n, data.offset, this->rng_.counter(), 0.99, 1.01);
      for (std::int64_t p : positions) near_one[p] = data[p];
      std::int64_t first = n;
      for (std::int64_t p : positions) first = std::min(first, p);
      TestArray<T> out(n, 0, scan_poison<T>());
      cpu::inclusive_scan<ReduceOp::sum, T>(near_one.data(), n, out.data());
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_EQ(is_nan_value(out[i]), i >= first) << "sum out[" << i << "] = " << show(out[i]);
      cpu::exclusive_scan<ReduceOp::prod, T>(near_one.data(), n, out.data(), from_double<T>(1.0));
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_EQ(is_nan_value(out[i]), i > first) << "exclusive prod out[" << i << "] = " << show(out[i]);
      if (this->HasFailure()) return;
    }
  }
  // A NaN init of an exclusive scan is every output of every segment.
  const T qnan = nan_kind<T>(1);
  const auto data = make_minmax_data<T>(1000, 1, this->rng_.counter(), false);
  check_exact<ReduceOp::max, T>(data, Form::blocks(7), false, qnan, 2);
  check_exact<ReduceOp::min, T>(data, Form{}, false, qnan, 2);
}

// Signed zeros: sums follow IEEE (-0 only while everything so far is -0), products multiply
// signs, min orders -0 below +0 and max +0 above -0, whatever the chunking.
TYPED_TEST(CpuScanFloat, SignedZeros) {
  using T = typename TypeParam::T;
  FOLDKIT_TRACE_SEED();
  const T neg = from_double<T>(-0.0), pos = from_double<T>(0.0);
  for (std::int64_t n : capped({1, 2, 3, 33, 16385, 100003, 1000003})) {
    TestArray<T> data(n, this->rng_.uniform(0, 3), quiet_nan<T>());
    for (int pattern = 0; pattern < 3; ++pattern) {
      SCOPED_TRACE("pattern " + std::to_string(pattern));
      if (pattern == 0) fill(data, [&](std::int64_t) { return neg; });  // all -0
      if (pattern == 1) data[this->rng_.uniform(0, n - 1)] = pos;         // one +0 among -0
      if (pattern == 2) {                                                  // random signs
        const CounterRng bits = this->rng_.counter();
        fill(data, [&](std::int64_t i) { return bits.bits(i) & 1 ? neg : pos; });
      }
      const Form forms[] = {Form{}, Form::blocks(this->rng_.uniform(1, 3000)),
                            Form::segments(make_segments(n, 0, this->rng_))};
      for (const Form& form : forms) {
        for_each_scan_op([&](auto op) {
          constexpr ReduceOp kOp = decltype(op)::value;
          check_exact<kOp, T>(data, form, true, {}, 1);
          check_exact<kOp, T>(data, form, false, neg, 2);
          check_exact<kOp, T>(data, form, false, pos, 3);
        });
      }
      if (this->HasFailure()) return;
    }
  }
}

// ================================ integer dtypes ================================
template <class C> class CpuScanInteger : public CpuScanAll<C> {};
using IntegerScanTypes = ::testing::Types<scan_i32, scan_u32, scan_i64, scan_u64>;
TYPED_TEST_SUITE(CpuScanInteger, IntegerScanTypes);

// The type's limits: sums and products widen to 64 bits first, then wrap mod 2^64.
TYPED_TEST(CpuScanInteger, WideningAndWrapAround) {
  using T = typename TypeParam::T;
  using L = std::numeric_limits<T>;
  FOLDKIT_TRACE_SEED();
  for (std::int64_t n : {1, 2, 7, 40000}) {
    TestArray<T> data(n, this->rng_.uniform(0, 3), T(0));
    const CounterRng bits = this->rng_.counter();
    fill(data, [&](std::int64_t i) { return bits.bits(i) % 3 == 0 ? L::lowest() : bits.bits(i) % 3 == 1 ? L::max() : T(-1); });
    for_each_scan_op([&](auto op) {
      constexpr ReduceOp kOp = decltype(op)::value;
      check_exact<kOp, T>(data, Form{}, true, {}, 1);
      check_exact<kOp, T>(data, Form::blocks(3), false, static_cast<expected_scan_t<kOp, T>>(L::max()), 2);
    });
  }
}

// ================================ large outputs ================================

// Outputs of 64 MiB and more are written with streaming stores a line at a time (after a lead
// up to a line boundary, which the output offsets vary; f32 sums stream only 16-byte aligned
// outputs, in 16-byte groups, and write the others with plain stores): exact against the
// reference, in place, and the same bits for 1, 2 and 3 threads. Three result widths: f32, i32 -> i64, f16.
template <ReduceOp Op, class T> void check_streamed(Rng& rng) {
  using R = expected_scan_t<Op, T>;
  const std::int64_t n = capped({(std::int64_t{64} << 20) / static_cast<std::int64_t>(sizeof(R)) + 3}).front();
  const auto data = make_exact_scan_data<Op, T>(n, rng.uniform(0, 3), rng);
  for (std::int64_t out_offset : {0, 1, 3}) {
    check_exact<Op, T>(data, Form{}, true, {}, out_offset, out_offset == 0);
    check_exact<Op, T>(data, Form{}, false, some_init<Op, T>(rng), out_offset, false);
  }
  TestArray<R> one(n, 1, scan_poison<R>()), many(n, 1, scan_poison<R>());
  {
    const ThreadCount scoped(1);
    cpu::inclusive_scan<Op, T>(data.data(), n, one.data());
  }
  for (int threads : {2, 3}) {
    const ThreadCount scoped(threads);
    cpu::inclusive_scan<Op, T>(data.data(), n, many.data());
    ASSERT_EQ(std::memcmp(one.data(), many.data(), static_cast<std::size_t>(n) * sizeof(R)), 0)
        << threads << " threads";
  }
}

TEST(CpuScanLarge, StreamedOutput) {
  Rng rng{test_seed()};
  FOLDKIT_TRACE_SEED();
  check_streamed<ReduceOp::sum, float>(rng);
  check_streamed<ReduceOp::max, float>(rng);
  check_streamed<ReduceOp::sum, std::int32_t>(rng);
  check_streamed<ReduceOp::min, half>(rng);
}

// ================================ errors ================================

template <class T> T* opaque_null() {  // a null the optimiser cannot see through
  static T* volatile p = nullptr;
  return p;
}

// Every entry point with the same bad arguments must throw `want` and write nothing.
template <ReduceOp Op, class T>
void expect_all_forms_throw(Errc want, const T* in, std::int64_t n, scan_result_t<Op, T>* out,
                            const char* what) {
  SCOPED_TRACE(std::string(what) + ", " + op_name(Op) + " " + dtype_name(dtype_v<T>));
  const std::vector<std::int64_t> off{0, n > 0 ? n : 0};
  const scan_result_t<Op, T> init{};
  EXPECT_TRUE(throws_errc(want, [&] { cpu::inclusive_scan<Op, T>(in, n, out); }));
  EXPECT_TRUE(throws_errc(want, [&] { cpu::exclusive_scan<Op, T>(in, n, out, init); }));
  EXPECT_TRUE(throws_errc(want, [&] { cpu::inclusive_scan_blocked<Op, T>(in, n, out, 4); }));
  EXPECT_TRUE(throws_errc(want, [&] { cpu::exclusive_scan_blocked<Op, T>(in, n, out, 4, init); }));
  EXPECT_TRUE(throws_errc(want, [&] { cpu::inclusive_scan_segmented<Op, T>(in, n, out, off.data(), 1); }));
  EXPECT_TRUE(throws_errc(want, [&] { cpu::exclusive_scan_segmented<Op, T>(in, n, out, off.data(), 1, init); }));
}

TEST(CpuScanErrors, NullPointersAndNegativeLength) {
  std::vector<float> data(16, 1.0f), out(16, 7.0f);
  expect_all_forms_throw<ReduceOp::sum, float>(Errc::invalid_argument, opaque_null<const float>(), 4, out.data(), "null in");
  expect_all_forms_throw<ReduceOp::max, float>(Errc::invalid_argument, data.data(), 4, opaque_null<float>(), "null out");
  expect_all_forms_throw<ReduceOp::sum, float>(Errc::invalid_argument, data.data(), -1, out.data(), "n < 0");
  EXPECT_EQ(out, std::vector<float>(16, 7.0f)) << "an error wrote to out";
  // n == 0: null is fine, nothing happens.
  EXPECT_NO_THROW(cpu::inclusive_scan<ReduceOp::sum>(opaque_null<const float>(), 0, opaque_null<float>()));
  EXPECT_NO_THROW(cpu::exclusive_scan_blocked<ReduceOp::min>(opaque_null<const float>(), 0, opaque_null<float>(), 3, 0.0f));
}

TEST(CpuScanErrors, BadBlockLength) {
  std::vector<std::int32_t> data(16, 1);
  std::vector<std::int64_t> out(16, 7);
  for (std::int64_t length : {0, -1, -1000}) {
    for (std::int64_t n : {0, 16}) {
      EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                              [&] { cpu::inclusive_scan_blocked<ReduceOp::sum>(data.data(), n, out.data(), length); }));
      EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
        cpu::exclusive_scan_blocked<ReduceOp::prod>(data.data(), n, out.data(), length, std::int64_t{1});
      }));
    }
  }
  EXPECT_EQ(out, std::vector<std::int64_t>(16, 7));
}

TEST(CpuScanErrors, BadOffsets) {
  std::vector<double> data(10, 1.0), out(10, 7.0);
  const auto bad = [&](std::vector<std::int64_t> off, std::int64_t segs, std::int64_t n, const char* what) {
    SCOPED_TRACE(what);
    const std::int64_t* p = off.empty() ? nullptr : off.data();
    EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                            [&] { cpu::inclusive_scan_segmented<ReduceOp::sum>(data.data(), n, out.data(), p, segs); }));
    EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
      cpu::exclusive_scan_segmented<ReduceOp::max>(data.data(), n, out.data(), p, segs, 0.0);
    }));
  };
  bad({}, 2, 10, "null offsets with segments");
  bad({0, 5, 10}, -1, 10, "negative num_segments");
  bad({1, 5, 10}, 2, 10, "offsets[0] != 0");
  bad({0, 6, 5, 10}, 3, 10, "decreasing offsets");
  bad({0, 5, 9}, 2, 10, "last offset below n");
  bad({0, 5, 11}, 2, 10, "last offset above n");
  bad({0}, 0, 10, "no segments with n > 0");
  bad({}, 0, 10, "no segments (null) with n > 0");
  bad({-1, 5, 10}, 2, 10, "negative first offset");
  EXPECT_EQ(out, std::vector<double>(10, 7.0)) << "an error wrote to out";
  // Valid: empty segments anywhere.
  const std::vector<std::int64_t> ok{0, 0, 4, 4, 10, 10};
  EXPECT_NO_THROW(cpu::inclusive_scan_segmented<ReduceOp::sum>(data.data(), 10, out.data(), ok.data(), 5));
  EXPECT_EQ(out[3], 4.0);
  EXPECT_EQ(out[4], 1.0);
}

TEST(CpuScanErrors, OverlapOtherThanExactlyInPlace) {
  std::vector<float> f(64, 1.0f);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::inclusive_scan<ReduceOp::sum>(f.data(), 32, f.data() + 1); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::exclusive_scan<ReduceOp::max>(f.data() + 8, 32, f.data(), 0.0f); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::inclusive_scan_blocked<ReduceOp::min>(f.data(), 32, f.data() + 31, 5); }));
  EXPECT_NO_THROW(cpu::inclusive_scan<ReduceOp::sum>(f.data(), 32, f.data() + 32));  // adjacent: no overlap
  EXPECT_EQ(f[63], 32.0f);
  // Widening scans cannot run in place, nor overlap at all.
  std::vector<std::int64_t> storage(64, 1);
  auto* as_i32 = reinterpret_cast<std::int32_t*>(storage.data());
  auto* as_u32 = reinterpret_cast<std::uint32_t*>(storage.data());
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::inclusive_scan<ReduceOp::sum>(as_i32, 16, storage.data()); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::exclusive_scan<ReduceOp::prod>(as_u32, 16, reinterpret_cast<std::uint64_t*>(storage.data()), std::uint64_t{1});
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::inclusive_scan<ReduceOp::sum>(as_i32 + 16, 16, storage.data()); }));  // out's tail
  // In place with equal types is fine: 64-bit sums, min/max of 32-bit integers.
  EXPECT_NO_THROW(cpu::inclusive_scan<ReduceOp::sum>(storage.data(), 64, storage.data()));
  EXPECT_EQ(storage[63], 64);
  EXPECT_NO_THROW(cpu::inclusive_scan<ReduceOp::max>(as_i32, 8, as_i32));
}

template <ReduceOp Op> void expect_not_a_scan_op() {
  std::vector<float> data(8, 1.0f), out(8, 7.0f);
  expect_all_forms_throw<Op, float>(Errc::unsupported, data.data(), 8, out.data(), "not a scan op");
  EXPECT_EQ(out, std::vector<float>(8, 7.0f));
  std::vector<std::int32_t> ints(8, 1), iout(8, 7);
  expect_all_forms_throw<Op, std::int32_t>(Errc::unsupported, ints.data(), 8, iout.data(), "not a scan op");
}

TEST(CpuScanErrors, OpsThatAreNotScansAreUnsupported) {
  static_assert(!is_scan_op(ReduceOp::mean) && !is_scan_op(ReduceOp::argmin) && !is_scan_op(ReduceOp::argmax));
  static_assert(is_scan_op(ReduceOp::sum) && is_scan_op(ReduceOp::prod) && is_scan_op(ReduceOp::min) &&
                is_scan_op(ReduceOp::max));
  expect_not_a_scan_op<ReduceOp::mean>();
  expect_not_a_scan_op<ReduceOp::argmin>();
  expect_not_a_scan_op<ReduceOp::argmax>();
}

}  // namespace
}  // namespace foldkit::test
