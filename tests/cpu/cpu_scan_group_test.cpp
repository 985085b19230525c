// The CPU scans' vectorised group rescan (src/cpu/scan_group.hpp) against its scalar statement,
// bit for bit: float and double, sum and product, inclusive and exclusive, one chunk alone and
// four side by side, whole and partial last groups, plain and streaming stores (at every offset
// from a cache line), in place, and
// NaN, infinity and signed-zero data (NaN payloads aside: see same_value). The library's tests (cpu_scan_test.cpp) check the scans'
// values; this checks that the two codes a build may use agree, so that a chunk's bits do not
// depend on which one ran.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

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
template <class A> bool same_value(A a, A b) {
  return std::memcmp(&a, &b, sizeof(A)) == 0 || (std::isnan(a) && std::isnan(b));
}
template <class A> using AlignedVector = std::vector<A, AlignedAllocator<A>>;  // 256-byte aligned data

template <class A> bool same_values(const AlignedVector<A>& a, const AlignedVector<A>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_value(a[i], b[i])) {
      ADD_FAILURE() << "element " << i << ": " << a[i] << " against " << b[i];
      return false;
    }
  return true;
}

// Data for op: sums in [-1, 1], products near 1; `specials` plants NaN, infinities and signed
// zeros at random places.
template <ReduceOp Op, class A> std::vector<A> group_data(std::size_t count, bool specials, Rng& rng) {
  const CounterRng r = rng.counter();
  std::vector<A> v(count);
  for (std::size_t i = 0; i < count; ++i)
    v[i] = static_cast<A>(Op == ReduceOp::sum ? -1.0 + 2.0 * r.unit(i) : 0.99 + 0.02 * r.unit(i));
  if (specials) {
    const A planted[] = {std::numeric_limits<A>::quiet_NaN(), std::numeric_limits<A>::infinity(),
                         -std::numeric_limits<A>::infinity(), A(0), -A(0)};
    for (int p = 0; p < 12; ++p) v[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(count) - 1))] = planted[p % 5];
  }
  return v;
}

template <ReduceOp Op, bool kInclusive, int K, class A>
void check_group(std::int64_t len, std::int64_t out_offset, bool stream, bool specials, Rng& rng) {
  SCOPED_TRACE(std::string(op_name(Op)) + (kInclusive ? " inclusive" : " exclusive") + " K=" + std::to_string(K) +
               " len=" + std::to_string(len) + " out offset " + std::to_string(out_offset) +
               (stream ? " streamed" : "") + (specials ? " with specials" : ""));
  const std::int64_t stride = kScanChunk;
  const auto in = group_data<Op, A>(static_cast<std::size_t>(K * stride + 4), specials, rng);
  const A poison = A(12345.5);
  AlignedVector<A> want(in.size() + out_offset, poison);
  // The input and the output in one block, the output whole 4 KiB pages past the input plus
  // out_offset elements: that distance picks the streamed store order (4K aliasing,
  // scan_group.hpp), so every order runs here whatever the allocator does.
  const std::size_t page = 4096 / sizeof(A), span = (in.size() + page) / page * page;
  AlignedVector<A> arena(2 * span + static_cast<std::size_t>(out_offset) + in.size(), poison);
  std::copy(in.begin(), in.end(), arena.begin());
  A start[K], acc_want[K], acc_got[K];
  for (int k = 0; k < K; ++k) start[k] = acc_want[k] = acc_got[k] = group_data<Op, A>(1, false, rng)[0];
  group_scan_scalar<Op, kInclusive, K>(in.data(), want.data() + out_offset, 0, stride, len, acc_want);
  group_scan<Op, kInclusive, K>(arena.data(), arena.data() + span + out_offset, 0, stride, len, acc_got, stream);
  if (stream) cpu::detail::streaming_store_fence();
  const AlignedVector<A> got(arena.begin() + static_cast<std::ptrdiff_t>(span),
                             arena.begin() + static_cast<std::ptrdiff_t>(span + want.size()));
  EXPECT_TRUE(same_values(want, got));
  for (int k = 0; k < K; ++k)
    EXPECT_TRUE(same_value(acc_want[k], acc_got[k])) << "carry out of chunk " << k;
  // Nothing written outside each chunk's [0, len).
  for (int k = 0; k < K; ++k)
    for (std::int64_t i = len; i < stride; ++i)
      ASSERT_EQ(got[static_cast<std::size_t>(out_offset + k * stride + i)], poison) << "written past chunk " << k;
  // In place: the bits of the out-of-place scalar statement.
  std::vector<A> buffer = in;
  for (int k = 0; k < K; ++k) acc_got[k] = start[k];
  group_scan<Op, kInclusive, K>(buffer.data(), buffer.data(), 0, stride, len, acc_got, false);
  for (int k = 0; k < K; ++k)
    for (std::int64_t i = 0; i < len; ++i) {
      const auto at = static_cast<std::size_t>(k * stride + i);
      ASSERT_TRUE(same_value(buffer[at], want[at + static_cast<std::size_t>(out_offset)])) << "in place, element " << at;
    }
}

template <class A> void check_type(Rng& rng) {
#if !defined(__SSSE3__)
  GTEST_SKIP() << "built without SSSE3: group_scan is the scalar code itself";
#endif
  for (bool specials : {false, true}) {
    for (std::int64_t len : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{5}, std::int64_t{17},
                             std::int64_t{64}, std::int64_t{1001}, kScanChunk - 1, kScanChunk}) {
      const std::int64_t off = rng.uniform(0, 3);
      check_group<ReduceOp::sum, true, 1, A>(len, off, false, specials, rng);
      check_group<ReduceOp::sum, false, 1, A>(len, off, false, specials, rng);
      check_group<ReduceOp::prod, true, 1, A>(len, off, false, specials, rng);
      check_group<ReduceOp::prod, false, 1, A>(len, off, false, specials, rng);
    }
    // Whole chunks side by side: plain stores; and streamed at every element offset from a line
    // boundary (aligned vectors join groups unless the offset is a multiple of the group).
    for (int variant = -1; variant < 64 / static_cast<int>(sizeof(A)); ++variant) {
      const bool stream = variant >= 0;
      const std::int64_t off = stream ? variant : rng.uniform(0, 3);
      check_group<ReduceOp::sum, true, 4, A>(kScanChunk, off, stream, specials, rng);
      check_group<ReduceOp::sum, false, 4, A>(kScanChunk, off, stream, specials, rng);
      check_group<ReduceOp::prod, true, 4, A>(kScanChunk, off, stream, specials, rng);
      check_group<ReduceOp::prod, false, 4, A>(kScanChunk, off, stream, specials, rng);
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(CpuScanGroup, FloatMatchesScalarStatementBitForBit) {
  Rng rng{test_seed()};
  FOLDKIT_TRACE_SEED();
  check_type<float>(rng);
}

TEST(CpuScanGroup, DoubleMatchesScalarStatementBitForBit) {
  Rng rng{test_seed() + 1};
  FOLDKIT_TRACE_SEED();
  check_type<double>(rng);
}

}  // namespace
}  // namespace foldkit::test
