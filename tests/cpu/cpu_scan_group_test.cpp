// The CPU scans' vectorised group rescan (src/cpu/scan_group.hpp) against its scalar statement,
// bit for bit: float, double, half and bfloat16, sum and product, inclusive and exclusive, one
// chunk alone and four side by side, whole and partial last groups, plain and streaming stores
// (at every offset from a cache line), in place, and NaN, infinity and signed-zero data (NaN
// payloads aside: see same_value). The library's tests (cpu_scan_test.cpp) check the scans'
// values; this checks that the two codes a build may use agree, so that a chunk's bits do not
// depend on which one ran. (The 16-bit conversions the vector code uses were also checked
// against dtype.hpp's on every float, once, by hand: 0 differences; CpuNarrowFloat checks
// edges and a random sample of them on every run, for the SSE4.1 code and, where the CPU has
// it, the F16C code the half scans take there.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/narrow_float_sse.hpp"
#include "cpu/scan_chunk.hpp"
#include "support/random_arrays.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using cpu::detail::group_scan;
using cpu::detail::group_scan_scalar;
using cpu::detail::kScanChunk;

// Equal bits, or both NaN: where two different NaNs meet (a planted one and one that inf - inf
// or 0 * inf makes), which one survives depends on the instruction's operand order, which the
// compiler chooses for the scalar code. Where NaNs are is what the codes must agree on.
template <class T> bool same_value(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (is_nan_value(a) && is_nan_value(b));
}
template <class A> using AlignedVector = std::vector<A, AlignedAllocator<A>>;  // 256-byte aligned data

template <class A> bool same_values(const AlignedVector<A>& a, const AlignedVector<A>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_value(a[i], b[i])) {
      ADD_FAILURE() << "element " << i << ": " << to_ld(a[i]) << " against " << to_ld(b[i]);
      return false;
    }
  return true;
}

// Data for op: sums in [-1, 1], products near 1; `specials` plants NaN, infinities and signed
// zeros at random places.
template <ReduceOp Op, class T> std::vector<T> group_data(std::size_t count, bool specials, Rng& rng) {
  const CounterRng r = rng.counter();
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i)
    v[i] = from_double<T>(Op == ReduceOp::sum ? -1.0 + 2.0 * r.unit(i) : 0.99 + 0.02 * r.unit(i));
  if (specials) {
    const double inf = std::numeric_limits<double>::infinity();
    const T planted[] = {quiet_nan<T>(), from_double<T>(inf), from_double<T>(-inf), from_double<T>(0.0),
                         from_double<T>(-0.0)};
    for (int p = 0; p < 12; ++p) v[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(count) - 1))] = planted[p % 5];
  }
  return v;
}

// group_scan as the library runs it; kSseHalf: half through the SSE4.1 conversions even where
// the CPU has F16C (group_scan takes HalfF16C there), so that both codes are checked.
template <ReduceOp Op, bool kInclusive, int K, bool kSseHalf, class T, class A>
void run_group_scan(const T* in, T* out, std::int64_t stride, std::int64_t len, A* acc, bool stream) {
#if defined(__SSE4_1__)
  if constexpr (kSseHalf && std::is_same_v<T, half>)
    return cpu::detail::group_scan_narrow<Op, kInclusive, K, T, cpu::detail::NarrowFloat<half>>(in, out, 0, stride, len, acc,
                                                                                                  stream);
#endif
  group_scan<Op, kInclusive, K>(in, out, 0, stride, len, acc, stream);
}

template <ReduceOp Op, bool kInclusive, int K, class T, bool kSseHalf = false>
void check_group(std::int64_t len, std::int64_t out_offset, bool stream, bool specials, Rng& rng) {
  SCOPED_TRACE(std::string(op_name(Op)) + (kInclusive ? " inclusive" : " exclusive") + " K=" + std::to_string(K) +
               " len=" + std::to_string(len) + " out offset " + std::to_string(out_offset) +
               (stream ? " streamed" : "") + (specials ? " with specials" : ""));
  const std::int64_t stride = kScanChunk;
  using A = scan_accum_t<Op, T>;
  const auto in = group_data<Op, T>(static_cast<std::size_t>(K * stride + 4), specials, rng);
  const T poison = from_double<T>(12345.5);
  AlignedVector<T> want(in.size() + out_offset, poison);
  // The input and the output in one block, the output whole 4 KiB pages past the input plus
  // out_offset elements: that distance picks the streamed store order (4K aliasing,
  // scan_group.hpp), so every order runs here whatever the allocator does.
  const std::size_t page = 4096 / sizeof(T), span = (in.size() + page) / page * page;
  AlignedVector<T> arena(2 * span + static_cast<std::size_t>(out_offset) + in.size(), poison);
  std::copy(in.begin(), in.end(), arena.begin());
  A start[K], acc_want[K], acc_got[K];
  for (int k = 0; k < K; ++k) start[k] = acc_want[k] = acc_got[k] = static_cast<A>(to_ld(group_data<Op, T>(1, false, rng)[0]));
  group_scan_scalar<Op, kInclusive, K>(in.data(), want.data() + out_offset, 0, stride, len, acc_want);
  run_group_scan<Op, kInclusive, K, kSseHalf>(arena.data(), arena.data() + span + out_offset, stride, len, acc_got, stream);
  if (stream) cpu::detail::streaming_store_fence();
  const AlignedVector<T> got(arena.begin() + static_cast<std::ptrdiff_t>(span),
                             arena.begin() + static_cast<std::ptrdiff_t>(span + want.size()));
  EXPECT_TRUE(same_values(want, got));
  for (int k = 0; k < K; ++k)
    EXPECT_TRUE(same_value(acc_want[k], acc_got[k])) << "carry out of chunk " << k;
  // Nothing written outside each chunk's [0, len).
  for (int k = 0; k < K; ++k)
    for (std::int64_t i = len; i < stride; ++i)
      ASSERT_TRUE(std::memcmp(&got[static_cast<std::size_t>(out_offset + k * stride + i)], &poison, sizeof(T)) == 0)
          << "written past chunk " << k;
  // In place: the bits of the out-of-place scalar statement.
  std::vector<T> buffer = in;
  for (int k = 0; k < K; ++k) acc_got[k] = start[k];
  run_group_scan<Op, kInclusive, K, kSseHalf>(buffer.data(), buffer.data(), stride, len, acc_got, false);
  for (int k = 0; k < K; ++k)
    for (std::int64_t i = 0; i < len; ++i) {
      const auto at = static_cast<std::size_t>(k * stride + i);
      ASSERT_TRUE(same_value(buffer[at], want[at + static_cast<std::size_t>(out_offset)])) << "in place, element " << at;
    }
}

template <class T, bool kSseHalf = false> void check_type(Rng& rng) {
#if !defined(__SSSE3__) || !defined(__SSE4_1__)
  GTEST_SKIP() << "built without SSSE3 / SSE4.1: group_scan is the scalar code itself";
#endif
  for (bool specials : {false, true}) {
    for (std::int64_t len : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{5}, std::int64_t{17},
                             std::int64_t{64}, std::int64_t{1001}, kScanChunk - 1, kScanChunk}) {
      const std::int64_t off = rng.uniform(0, 3);
      check_group<ReduceOp::sum, true, 1, T, kSseHalf>(len, off, false, specials, rng);
      check_group<ReduceOp::sum, false, 1, T, kSseHalf>(len, off, false, specials, rng);
      check_group<ReduceOp::prod, true, 1, T, kSseHalf>(len, off, false, specials, rng);
      check_group<ReduceOp::prod, false, 1, T, kSseHalf>(len, off, false, specials, rng);
    }
    // Whole chunks side by side: plain stores; and streamed at every element offset from a line
    // boundary (aligned vectors join groups unless the offset is a multiple of the group; 16-bit
    // types stream only 16-byte aligned outputs).
    for (int variant = -1; variant < 64 / static_cast<int>(sizeof(T)); ++variant) {
      const bool stream = variant >= 0;
      const std::int64_t off = stream ? variant : rng.uniform(0, 3);
      check_group<ReduceOp::sum, true, 4, T, kSseHalf>(kScanChunk, off, stream, specials, rng);
      check_group<ReduceOp::sum, false, 4, T, kSseHalf>(kScanChunk, off, stream, specials, rng);
      check_group<ReduceOp::prod, true, 4, T, kSseHalf>(kScanChunk, off, stream, specials, rng);
      check_group<ReduceOp::prod, false, 4, T, kSseHalf>(kScanChunk, off, stream, specials, rng);
    }
    if (::testing::Test::HasFailure()) return;
  }
}

template <class T> class CpuScanGroup : public ::testing::Test {};
using GroupScanTypes = ::testing::Types<float, double, half, bfloat16>;
TYPED_TEST_SUITE(CpuScanGroup, GroupScanTypes);

TYPED_TEST(CpuScanGroup, MatchesScalarStatementBitForBit) {
  Rng rng{test_seed()};
  FOLDKIT_TRACE_SEED();
  check_type<TypeParam>(rng);
}

// half through the SSE4.1 conversions where group_scan would take F16C's.
TEST(CpuScanGroupHalfSse, MatchesScalarStatementBitForBit) {
  Rng rng{test_seed()};
  FOLDKIT_TRACE_SEED();
  check_type<half, true>(rng);
}

// The SSE conversions (narrow_float_sse.hpp) against dtype.hpp's: every 16-bit pattern widened;
// floats narrowed at the edges (NaNs with every payload shape, infinities, the overflow and
// subnormal thresholds and their neighbours, ties) and at 2^20 random bit patterns.
template <class T, class N, bool kQuietsSignalingNaN = false> void check_narrow_conversions(Rng& rng) {
#if !defined(__SSE4_1__)
  GTEST_SKIP() << "built without SSE4.1";
#else
  for (std::uint32_t h = 0; h < 65536; h += 8) {
    alignas(16) std::uint16_t bits[8];
    for (int j = 0; j < 8; ++j) bits[j] = static_cast<std::uint16_t>(h + j);
    const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(bits));
    alignas(16) float got[8];
    _mm_store_ps(got, N::low(v));
    _mm_store_ps(got + 4, N::high(v));
    for (int j = 0; j < 8; ++j) {
      // F16C quiets a signaling NaN as it widens it (sets the quiet bit; the payload stays).
      // Every scan then combines it in float arithmetic, which quiets it on any path, so the
      // outputs agree (CpuScanGroup checks them).
      const bool quiets = kQuietsSignalingNaN && (bits[j] & 0x7e00) == 0x7c00 && (bits[j] & 0x1ff) != 0;
      const float want = T::to_float(static_cast<std::uint16_t>(quiets ? bits[j] | 0x200 : bits[j]));
      ASSERT_EQ(std::memcmp(&got[j], &want, 4), 0) << "widening 0x" << std::hex << bits[j];
    }
  }
  std::vector<std::uint32_t> xs = {0x7fffffffu, 0xffffffffu, 0x7f800001u, 0x7fbfffffu, 0x7fc00000u, 0xffc00001u,
                                   0x7f800000u, 0xff800000u, 0x7f7fffffu, 0x477fefffu, 0x477ff000u, 0x477fffffu,
                                   0x47800000u, 0x38800000u, 0x387fffffu, 0x33000000u, 0x33000001u, 0x32ffffffu,
                                   0x00000001u, 0x80000000u, 0x00000000u, 0x3f801000u, 0x3f803000u, 0x3f808000u,
                                   0x3f818000u, 0x3f7fffffu, 0x00800000u, 0x807fffffu};
  const CounterRng r = rng.counter();
  for (std::uint32_t i = 0; i < (1u << 20); ++i) xs.push_back(static_cast<std::uint32_t>(r.bits(i)));
  while (xs.size() % 4 != 0) xs.push_back(0);
  for (std::size_t i = 0; i < xs.size(); i += 4) {
    __m128 f;
    std::memcpy(&f, &xs[i], 16);
    alignas(16) std::uint32_t got[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(got), N::bits(f));
    for (int j = 0; j < 4; ++j) {
      float x;
      std::memcpy(&x, &xs[i + static_cast<std::size_t>(j)], 4);
      ASSERT_EQ(got[j], T::from_float(x)) << "narrowing 0x" << std::hex << xs[i + static_cast<std::size_t>(j)];
    }
  }
#endif
}

template <class T> class CpuNarrowFloat : public ::testing::Test {};
using NarrowTypes = ::testing::Types<half, bfloat16>;
TYPED_TEST_SUITE(CpuNarrowFloat, NarrowTypes);

TYPED_TEST(CpuNarrowFloat, ConversionsMatchDtypeHpp) {
  Rng rng{test_seed()};
  FOLDKIT_TRACE_SEED();
#if defined(__SSE4_1__)
  check_narrow_conversions<TypeParam, cpu::detail::NarrowFloat<TypeParam>>(rng);
#endif
}

#if defined(__SSE4_1__)
// The half sums and products (and the scans' chunk summaries, reduce_chunk.hpp) through each
// converter: the same bits, NaN payloads aside.
TEST(CpuNarrowFloatF16C, HalfFoldsAgreeAcrossConverters) {
  if (!cpu::detail::cpu_has_f16c()) GTEST_SKIP() << "this CPU has no F16C";
  Rng rng{test_seed()};
  FOLDKIT_TRACE_SEED();
  for (bool specials : {false, true})
    for (std::int64_t len : {std::int64_t{1}, std::int64_t{15}, std::int64_t{16}, std::int64_t{17}, std::int64_t{1000},
                             std::int64_t{4099}}) {
      SCOPED_TRACE("len " + std::to_string(len) + (specials ? " with specials" : ""));
      const auto sums = group_data<ReduceOp::sum, half>(static_cast<std::size_t>(len), specials, rng);
      const auto prods = group_data<ReduceOp::prod, half>(static_cast<std::size_t>(len), specials, rng);
      using cpu::detail::HalfF16C;
      using Sse = cpu::detail::NarrowFloat<half>;
      using cpu::detail::reduce_chunk_fold;
      EXPECT_TRUE(same_value(reduce_chunk_fold<ReduceOp::sum, half, Sse>(sums.data(), len),
                             reduce_chunk_fold<ReduceOp::sum, half, HalfF16C>(sums.data(), len)));
      EXPECT_TRUE(same_value(reduce_chunk_fold<ReduceOp::prod, half, Sse>(prods.data(), len),
                             reduce_chunk_fold<ReduceOp::prod, half, HalfF16C>(prods.data(), len)));
    }
}

// The F16C conversions (HalfF16C), which the half scans and reductions take where the CPU has
// F16C, against dtype.hpp's too (the group scan through each: CpuScanGroup, CpuScanGroupHalfSse).
TEST(CpuNarrowFloatF16C, ConversionsMatchDtypeHpp) {
  if (!cpu::detail::cpu_has_f16c()) GTEST_SKIP() << "this CPU has no F16C";
  Rng rng{test_seed()};
  FOLDKIT_TRACE_SEED();
  check_narrow_conversions<half, cpu::detail::HalfF16C, true>(rng);
}
#endif

}  // namespace
}  // namespace foldkit::test
