// cpu::inclusive_scan_custom / exclusive_scan_custom (whole, blocked and segmented) with user
// operators: a non-commutative one (composition of affine maps mod 2^32, exact, so any wrong
// order, lost element or missed restart shows), XOR, in place, every thread count giving the
// same bits, and the errors. (The type-erased scans: cpu_scan_erased_test.cpp.)
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/reduce_checks.hpp"
#include "common/scan_reference.hpp"
#include "foldkit/scan.hpp"
#include "support/custom_functors.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

constexpr Affine kIdentity{1u, 0u};

// A null pointer the optimiser cannot see through (a literal nullptr makes GCC warn about the
// loop that the validation never lets run).
template <class T> T* opaque_null() {
  static T* volatile p = nullptr;
  return p;
}

// Sizes around the chunk length (2^15), where the parallel carry starts.
std::vector<std::int64_t> sizes() { return capped({0, 1, 2, 33, 32767, 32768, 32769, 3 * 32768 + 5, 1000003}); }

std::vector<Affine> random_maps(std::int64_t n, const CounterRng& bits) {
  std::vector<Affine> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = Affine{static_cast<std::uint32_t>(bits.bits(2 * i)) | 1u,  // odd: never 0
                                            static_cast<std::uint32_t>(bits.bits(2 * i + 1))};
  return v;
}

TEST(CpuScanCustom, NonCommutativeComposeMatchesSerialFold) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (std::int64_t n : sizes()) {
    const auto in = random_maps(n, rng.counter());
    const Affine init{static_cast<std::uint32_t>(rng.uniform(0, 1000)) * 2u + 3u, 7u};
    std::vector<Affine> incl(static_cast<std::size_t>(n), Affine{0xdeadbeefu, 0xdeadbeefu}), excl = incl;
    cpu::inclusive_scan_custom(in.data(), n, incl.data(), ThenApply{}, kIdentity);
    cpu::exclusive_scan_custom(in.data(), n, excl.data(), ThenApply{}, kIdentity, init);
    Affine run_incl = kIdentity, run_excl = init;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      ASSERT_EQ(excl[k], run_excl) << "exclusive, n=" << n << " i=" << i;
      run_incl = ThenApply{}(run_incl, in[k]);
      run_excl = ThenApply{}(run_excl, in[k]);
      ASSERT_EQ(incl[k], run_incl) << "inclusive, n=" << n << " i=" << i;
    }
  }
}

TEST(CpuScanCustom, InPlaceXorAndSameBitsForAnyThreadCount) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t n = capped({3 * 32768 + 5}).front();
  const CounterRng bits = rng.counter();
  std::vector<std::uint32_t> data(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) data[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(bits.bits(i));
  std::vector<std::uint32_t> want(data.size());
  std::uint32_t x = 0;
  for (std::size_t i = 0; i < data.size(); ++i) want[i] = x ^= data[i];
  std::vector<float> real(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) real[static_cast<std::size_t>(i)] = 0.5f + static_cast<float>(bits.bits(n + i) % 1000) / 1000.0f;
  std::vector<float> first;
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3, 7}) {
    omp_set_num_threads(threads);
    std::vector<std::uint32_t> inplace = data;
    cpu::inclusive_scan_custom(inplace.data(), n, inplace.data(), BitwiseXor{}, 0u);
    EXPECT_EQ(inplace, want) << threads << " threads";
    std::vector<float> out(real.size(), -1.0f);
    cpu::inclusive_scan_custom(real.data(), n, out.data(), Plus{}, -0.0f);
    if (first.empty()) first = out;
    EXPECT_EQ(0, std::memcmp(first.data(), out.data(), out.size() * sizeof(float))) << threads << " threads";
  }
  omp_set_num_threads(saved);
}

// Segment offsets for n elements: empty, one-element, short and long segments (one spanning
// several chunks), and a start exactly on a chunk boundary.
std::vector<std::int64_t> segment_offsets(std::int64_t n, Rng& rng) {
  constexpr std::int64_t kChunk = cpu::detail::kReduceChunk;  // the custom scans' chunk
  std::vector<std::int64_t> offsets{0};
  std::int64_t at = 0;
  for (int s = 0; at < n; ++s) {
    std::int64_t len = 0;
    switch (s % 6) {
      case 0: len = 0; break;
      case 1: len = 1; break;
      case 2: len = rng.uniform(2, 5000); break;
      case 3: len = 2 * kChunk + 17; break;
      case 4: len = (at / kChunk + 1) * kChunk - at; break;  // ends on a chunk boundary
      default: len = rng.uniform(0, 300); break;
    }
    at = std::min(n, at + len);
    offsets.push_back(at);
  }
  offsets.push_back(n);  // a trailing empty segment
  return offsets;
}

TEST(CpuScanCustom, BlockedAndSegmentedComposeMatchSerialFold) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  constexpr std::int64_t kChunk = cpu::detail::kReduceChunk;
  for (std::int64_t n : capped({1, 2, 33, kChunk + 1, 3 * kChunk + 5, 1000003})) {
    const auto in = random_maps(n, rng.counter());
    const Affine init{static_cast<std::uint32_t>(rng.uniform(0, 1000)) * 2u + 3u, 11u};
    const auto check = [&](const std::vector<std::int64_t>& offsets, const std::string& what, auto&& incl_call,
                           auto&& excl_call) {
      std::vector<Affine> incl(static_cast<std::size_t>(n), Affine{0xdeadbeefu, 0xdeadbeefu}), excl = incl;
      incl_call(incl.data());
      excl_call(excl.data());
      const auto want_incl = ref_custom_scan(in, offsets, ThenApply{}, kIdentity, true);
      const auto want_excl = ref_custom_scan(in, offsets, ThenApply{}, init, false);
      for (std::size_t i = 0; i < in.size(); ++i) {
        ASSERT_EQ(incl[i], want_incl[i]) << what << ", inclusive, n=" << n << " i=" << i;
        ASSERT_EQ(excl[i], want_excl[i]) << what << ", exclusive, n=" << n << " i=" << i;
      }
    };
    for (std::int64_t length : {std::int64_t{1}, std::int64_t{3}, std::int64_t{32}, std::int64_t{1000}, std::int64_t{4096},
                                kChunk, kChunk + 1, n, n + 5}) {
      check(block_offsets(n, length), "blocked, length " + std::to_string(length),
            [&](Affine* out) { cpu::inclusive_scan_custom_blocked(in.data(), n, out, length, ThenApply{}, kIdentity); },
            [&](Affine* out) { cpu::exclusive_scan_custom_blocked(in.data(), n, out, length, ThenApply{}, kIdentity, init); });
    }
    const std::vector<std::int64_t> offsets = segment_offsets(n, rng);
    const auto segments = static_cast<std::int64_t>(offsets.size()) - 1;
    check(offsets, std::to_string(segments) + " segments",
          [&](Affine* out) {
            cpu::inclusive_scan_custom_segmented(in.data(), n, out, offsets.data(), segments, ThenApply{}, kIdentity);
          },
          [&](Affine* out) {
            cpu::exclusive_scan_custom_segmented(in.data(), n, out, offsets.data(), segments, ThenApply{}, kIdentity, init);
          });
  }
}

TEST(CpuScanCustom, BlockedAndSegmentedErrors) {
  std::vector<std::uint32_t> data(64, 1u), out(64);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::inclusive_scan_custom_blocked(data.data(), 64, out.data(), 0, BitwiseXor{}, 0u);
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::exclusive_scan_custom_blocked(data.data(), 64, out.data(), -3, BitwiseXor{}, 0u, 1u);
  }));
  const std::vector<std::int64_t> not_from_zero{1, 64}, decreasing{0, 40, 30, 64}, short_end{0, 32, 63};
  for (const auto* offsets : {&not_from_zero, &decreasing, &short_end}) {
    const auto segments = static_cast<std::int64_t>(offsets->size()) - 1;
    EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
      cpu::inclusive_scan_custom_segmented(data.data(), 64, out.data(), offsets->data(), segments, BitwiseXor{}, 0u);
    }));
  }
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::exclusive_scan_custom_segmented(data.data(), 64, out.data(), opaque_null<const std::int64_t>(), 2, BitwiseXor{},
                                         0u, 1u);
  }));
}

TEST(CpuScanCustom, Errors) {
  std::vector<std::uint32_t> data(64, 1u);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::inclusive_scan_custom(data.data(), -1, data.data(), BitwiseXor{}, 0u); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::inclusive_scan_custom(opaque_null<std::uint32_t>(), 4, data.data(), BitwiseXor{}, 0u);
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::inclusive_scan_custom(data.data(), 32, data.data() + 1, BitwiseXor{}, 0u); }));
  cpu::inclusive_scan_custom(opaque_null<std::uint32_t>(), 0, opaque_null<std::uint32_t>(), BitwiseXor{}, 0u);
}

}  // namespace
}  // namespace foldkit::test
