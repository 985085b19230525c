// foldkit::cuda::inclusive_scan_custom / exclusive_scan_custom (whole, blocked, segmented) with
// user operators: composition of affine maps on 8-byte structs (associative, NOT commutative:
// any combine with the later value on the left gives a different map), bitwise xor on
// uint32_t, and float addition (on exact data, against the built-in f32 sum too). Every result
// is compared with a serial scan written here; sizes from 0 to past one wave of resident tiles
// (the persistent loop), misaligned starts, in place, both workspace forms, block lengths and
// segments around the tiles; outputs are poisoned and the bytes around them checked for stray
// writes; bad arguments throw.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/scan_reference.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/scan_custom.cuh"
#include "support/cuda_backend.hpp"
#include "support/custom_functors.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using CudaScanCustom = CudaTest;

constexpr std::int64_t kGuard = 64;         // poisoned elements after the output
constexpr unsigned char kPoisonByte = 0xA5;  // output bytes before the call

// Sizes: the standard ones, 0, the tiles' edges (4096 8-byte or 8192 4-byte elements per tile,
// tuning::CustomScanPolicyFor) and one past a full wave of resident tiles (~3.2M 8-byte, ~6.5M
// 4-byte elements on an H100).
template <class T>
std::vector<std::int64_t> custom_scan_sizes() {
  std::vector<std::int64_t> sizes = standard_sizes();
  const std::int64_t tile = cuda::tuning::CustomScanPolicyFor<sizeof(T)>::kTile;
  for (std::int64_t k : {1, 2, 7}) {
    sizes.push_back(k * tile - 1);
    sizes.push_back(k * tile);
    sizes.push_back(k * tile + 1);
  }
  sizes.push_back(sizeof(T) == 8 ? (std::int64_t{1} << 22) + 1 : (std::int64_t{1} << 23) + 3);
  sizes = capped(sizes);
  sizes.insert(sizes.begin(), 0);
  return sizes;
}

// What one call does: inclusive or exclusive, convenient form or explicit workspace, out of
// place or in place.
struct CallKind {
  bool exclusive;
  bool explicit_workspace;
  bool in_place;
  std::string name() const {
    return std::string(exclusive ? "exclusive" : "inclusive") + (explicit_workspace ? ", explicit workspace" : ", convenient") +
           (in_place ? ", in place" : "");
  }
};

// Runs one call on `values` placed `offset` elements past a 256-byte aligned base. Returns
// "" when the outputs equal `want` bit for bit and nothing around them was written.
template <class T, class F>
std::string run_and_compare(const std::vector<T>& values, std::int64_t offset, F op, T identity, T init, CallKind kind,
                            const cuda::Workspace& ws, const std::vector<T>& want) {
  const auto n = static_cast<std::int64_t>(values.size());
  const std::size_t count = static_cast<std::size_t>(offset + n + kGuard);
  DeviceBuffer in_buf(count * sizeof(T)), out_buf(count * sizeof(T));
  FOLDKIT_CUDA_CHECK(cudaMemset(out_buf.get(), kPoisonByte, count * sizeof(T)));
  FOLDKIT_CUDA_CHECK(cudaMemset(in_buf.get(), kPoisonByte, count * sizeof(T)));
  if (n > 0)
    FOLDKIT_CUDA_CHECK(cudaMemcpy(in_buf.as<T>() + offset, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice));
  T* d_in = in_buf.as<T>() + offset;
  T* d_out = kind.in_place ? d_in : out_buf.as<T>() + offset;
  if (kind.exclusive) {
    if (kind.explicit_workspace) cuda::exclusive_scan_custom(d_in, n, d_out, op, identity, init, ws);
    else cuda::exclusive_scan_custom(d_in, n, d_out, op, identity, init);
  } else {
    if (kind.explicit_workspace) cuda::inclusive_scan_custom(d_in, n, d_out, op, identity, ws);
    else cuda::inclusive_scan_custom(d_in, n, d_out, op, identity);
  }
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> back(count * sizeof(T));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(back.data(), kind.in_place ? in_buf.get() : out_buf.get(), back.size(), cudaMemcpyDeviceToHost));
  const std::size_t first = static_cast<std::size_t>(offset) * sizeof(T), last = first + values.size() * sizeof(T);
  for (std::size_t b = 0; b < back.size(); ++b)
    if ((b < first || b >= last) && back[b] != kPoisonByte)
      return "byte " + std::to_string(b) + " outside the output was written (output bytes [" + std::to_string(first) +
             ", " + std::to_string(last) + "))";
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (std::memcmp(back.data() + first + k * sizeof(T), &want[k], sizeof(T)) != 0)
      return "first wrong output at i = " + std::to_string(i) + " of n = " + std::to_string(n);
  }
  return "";
}

// Every size x {a misaligned start} x every call kind against the serial fold.
template <class T, class F, class Make>
void check_against_serial_scan(F op, T identity, Make make, Rng& rng) {
  const std::vector<std::int64_t> sizes = custom_scan_sizes<T>();
  const std::int64_t largest = *std::max_element(sizes.begin(), sizes.end());
  DeviceBuffer ws_buf(cuda::scan_custom_workspace_bytes<T>(largest));
  const cuda::Workspace ws{ws_buf.get(), ws_buf.bytes()};
  cuda::init_scan_workspace(ws);
  const CallKind kinds[] = {{false, false, false}, {false, true, false}, {true, false, false},
                            {true, true, false},   {false, true, true},  {true, false, true}};
  for (const std::int64_t n : sizes) {
    const std::vector<T> values = make(n, rng.counter());
    const T init = make(1, rng.counter())[0];
    const std::int64_t offset = n <= kAllOffsetsUpTo ? n % 4 : rng.uniform(0, 3);
    for (const CallKind& kind : kinds) {
      const std::vector<T> want = ref_custom_scan(values, whole_offsets(n), op, kind.exclusive ? init : identity, !kind.exclusive);
      const std::string problem = run_and_compare(values, offset, op, identity, init, kind, ws, want);
      ASSERT_EQ(problem, "") << "n = " << n << ", offset " << offset << ", " << kind.name();
    }
  }
}

std::vector<Affine> random_affine(std::int64_t n, CounterRng bits) {
  std::vector<Affine> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t r = bits.bits(static_cast<std::uint64_t>(i));
    // Odd multipliers keep every composed map a bijection, so no prefix collapses to a constant
    // map that would hide a wrong order.
    v[static_cast<std::size_t>(i)] = Affine{static_cast<std::uint32_t>(r) | 1u, static_cast<std::uint32_t>(r >> 32)};
  }
  return v;
}

std::vector<std::uint32_t> random_words(std::int64_t n, CounterRng bits) {
  std::vector<std::uint32_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(bits.bits(i));
  return v;
}

// The order test: composing the maps in any other order gives other maps (checked on the host
// first, so that this test can fail for a kernel that swapped its operands).
TEST_F(CudaScanCustom, AffineCompositionIsNotCommutedOnEightByteStructs) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::vector<Affine> two = random_affine(2, rng.counter());
  ASSERT_FALSE(ThenApply{}(two[0], two[1]) == ThenApply{}(two[1], two[0])) << "the operator must not commute";
  check_against_serial_scan<Affine>(ThenApply{}, Affine{1u, 0u}, random_affine, rng);
}

TEST_F(CudaScanCustom, BitwiseXorOnUint32) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  check_against_serial_scan<std::uint32_t>(BitwiseXor{}, 0u, random_words, rng);
}

// Float addition through the custom path against the built-in f32 sum and a serial sum, on
// integer-valued data whose every partial sum is exact in float (|prefix| <= 2n < 2^24 in
// practice: a walk of steps in [-2, 2]), so all three agree bit for bit whatever the bracketing.
TEST_F(CudaScanCustom, FloatPlusOnExactDataMatchesTheBuiltInSum) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (const std::int64_t n : capped({1, 33, 4097, 9217, 65521, 1000003, (std::int64_t{1} << 23) + 3})) {
    const CounterRng bits = rng.counter();
    std::vector<float> values(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
      values[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<int>(bits.bits(i) % 5) - 2);
    DeviceBuffer in(values.size() * sizeof(float)), custom(values.size() * sizeof(float)),
        builtin(values.size() * sizeof(float));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(in.get(), values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice));
    for (const bool exclusive : {false, true}) {
      FOLDKIT_CUDA_CHECK(cudaMemset(custom.get(), 0xFF, custom.bytes()));
      FOLDKIT_CUDA_CHECK(cudaMemset(builtin.get(), 0x7F, builtin.bytes()));
      if (exclusive) {
        cuda::exclusive_scan_custom(in.as<float>(), n, custom.as<float>(), Plus{}, -0.0f, 3.0f);
        cuda::exclusive_scan<ReduceOp::sum>(in.as<float>(), n, builtin.as<float>(), 3.0f);
      } else {
        cuda::inclusive_scan_custom(in.as<float>(), n, custom.as<float>(), Plus{}, -0.0f);
        cuda::inclusive_scan<ReduceOp::sum>(in.as<float>(), n, builtin.as<float>());
      }
      FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<float> a(values.size()), b(values.size());
      FOLDKIT_CUDA_CHECK(cudaMemcpy(a.data(), custom.get(), custom.bytes(), cudaMemcpyDeviceToHost));
      FOLDKIT_CUDA_CHECK(cudaMemcpy(b.data(), builtin.get(), builtin.bytes(), cudaMemcpyDeviceToHost));
      const std::vector<float> want = ref_custom_scan(values, whole_offsets(n), Plus{}, exclusive ? 3.0f : -0.0f, !exclusive);
      ASSERT_EQ(0, std::memcmp(a.data(), want.data(), a.size() * sizeof(float)))
          << "custom vs serial, n = " << n << (exclusive ? ", exclusive" : ", inclusive");
      ASSERT_EQ(0, std::memcmp(b.data(), want.data(), b.size() * sizeof(float)))
          << "built-in vs serial, n = " << n << (exclusive ? ", exclusive" : ", inclusive");
    }
  }
}

// Runs `call(d_out)` into a poisoned output; "" when it equals `want` and nothing past it was written.
template <class Call>
std::string run_restarting(const std::vector<Affine>& want, Call call) {
  const std::size_t count = want.size() + kGuard;
  DeviceBuffer out(count * sizeof(Affine));
  FOLDKIT_CUDA_CHECK(cudaMemset(out.get(), kPoisonByte, out.bytes()));
  call(out.as<Affine>());
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> back(out.bytes());
  FOLDKIT_CUDA_CHECK(cudaMemcpy(back.data(), out.get(), back.size(), cudaMemcpyDeviceToHost));
  for (std::size_t b = want.size() * sizeof(Affine); b < back.size(); ++b)
    if (back[b] != kPoisonByte) return "byte " + std::to_string(b) + " past the output was written";
  for (std::size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(back.data() + i * sizeof(Affine), &want[i], sizeof(Affine)) != 0)
      return "first wrong output at i = " + std::to_string(i);
  return "";
}

// Blocked and segmented scans of affine maps (8 bytes, not commutative) against the serial
// scan with restarts: block lengths on and around the segmented policy's tile, and of 2 and 3
// whole tiles (12 tiles make 6 or 4 such blocks, whose tiles the tickets interleave), segments
// that are empty, one element, short, longer than two tiles, and ending on a tile boundary.
TEST_F(CudaScanCustom, BlockedAndSegmentedAffineMatchSerialScan) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  constexpr std::int64_t kTile = cuda::tuning::CustomScanPolicyFor<sizeof(Affine), true>::kTile;
  const Affine id{1u, 0u};
  for (const std::int64_t n : capped({1, 33, kTile + 1, 5 * kTile + 7, 12 * kTile, 1000003, (std::int64_t{1} << 22) + 1})) {
    const std::vector<Affine> values = random_affine(n, rng.counter());
    const Affine init = random_affine(1, rng.counter())[0];
    DeviceBuffer in(values.size() * sizeof(Affine));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(in.get(), values.data(), in.bytes(), cudaMemcpyHostToDevice));
    const Affine* d_in = in.as<Affine>();
    for (const std::int64_t length :
         {std::int64_t{1}, std::int64_t{3}, std::int64_t{1000}, kTile - 1, kTile, kTile + 1, 2 * kTile, 3 * kTile, n}) {
      const std::vector<std::int64_t> blocks = block_offsets(n, length);
      const auto incl = ref_custom_scan(values, blocks, ThenApply{}, id, true);
      const auto excl = ref_custom_scan(values, blocks, ThenApply{}, init, false);
      ASSERT_EQ("", run_restarting(incl, [&](Affine* out) {
        cuda::inclusive_scan_custom_blocked(d_in, n, out, length, ThenApply{}, id);
      })) << "inclusive, n = " << n << ", block length " << length;
      ASSERT_EQ("", run_restarting(excl, [&](Affine* out) {
        cuda::exclusive_scan_custom_blocked(d_in, n, out, length, ThenApply{}, id, init);
      })) << "exclusive, n = " << n << ", block length " << length;
    }
    std::vector<std::int64_t> offsets{0};
    for (int s = 0; offsets.back() < n; ++s) {
      const std::int64_t at = offsets.back();
      const std::int64_t len = s % 5 == 0 ? 0 : s % 5 == 1 ? 1 : s % 5 == 2 ? rng.uniform(2, 600)
                             : s % 5 == 3 ? 2 * kTile + 5 : (at / kTile + 1) * kTile - at;
      offsets.push_back(std::min(n, at + len));
    }
    const auto segments = static_cast<std::int64_t>(offsets.size()) - 1;
    DeviceBuffer d_offsets(offsets.size() * sizeof(std::int64_t));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets.data(), d_offsets.bytes(), cudaMemcpyHostToDevice));
    const auto incl = ref_custom_scan(values, offsets, ThenApply{}, id, true);
    const auto excl = ref_custom_scan(values, offsets, ThenApply{}, init, false);
    ASSERT_EQ("", run_restarting(incl, [&](Affine* out) {
      cuda::inclusive_scan_custom_segmented(d_in, n, out, d_offsets.as<std::int64_t>(), segments, ThenApply{}, id);
    })) << "inclusive, n = " << n << ", " << segments << " segments";
    ASSERT_EQ("", run_restarting(excl, [&](Affine* out) {
      cuda::exclusive_scan_custom_segmented(d_in, n, out, d_offsets.as<std::int64_t>(), segments, ThenApply{}, id, init);
    })) << "exclusive, n = " << n << ", " << segments << " segments";
  }
}

TEST_F(CudaScanCustom, RepeatedCallsBitwiseIdentical) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t n = capped({(std::int64_t{1} << 22) + 5}).front();
  const std::vector<Affine> values = random_affine(n, rng.counter());
  DeviceBuffer in(values.size() * sizeof(Affine)), out(values.size() * sizeof(Affine));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(in.get(), values.data(), in.bytes(), cudaMemcpyHostToDevice));
  std::vector<unsigned char> first(out.bytes()), again(out.bytes());
  for (int call = 0; call < 20; ++call) {
    FOLDKIT_CUDA_CHECK(cudaMemset(out.get(), call, out.bytes()));
    cuda::inclusive_scan_custom(in.as<Affine>(), n, out.as<Affine>(), ThenApply{}, Affine{1u, 0u});
    FOLDKIT_CUDA_CHECK(cudaMemcpy(call == 0 ? first.data() : again.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
    if (call > 0) ASSERT_EQ(0, std::memcmp(first.data(), again.data(), first.size())) << "call " << call;
  }
}

TEST_F(CudaScanCustom, EmptyInputWithNullPointersWritesNothing) {
  const std::uint32_t* none = nullptr;
  EXPECT_NO_THROW(cuda::inclusive_scan_custom(none, 0, static_cast<std::uint32_t*>(nullptr), BitwiseXor{}, 0u));
  EXPECT_NO_THROW(cuda::exclusive_scan_custom(none, 0, static_cast<std::uint32_t*>(nullptr), BitwiseXor{}, 0u, 5u));
  EXPECT_EQ(cuda::scan_custom_workspace_bytes<std::uint32_t>(0), cuda::scan_custom_workspace_bytes<Affine>(0));
}

TEST_F(CudaScanCustom, BadArgumentsThrow) {
  const std::int64_t n = 1000;
  DeviceBuffer in(n * sizeof(Affine)), out(n * sizeof(Affine));
  FOLDKIT_CUDA_CHECK(cudaMemset(in.get(), 1, in.bytes()));
  const auto* d_in = in.as<Affine>();
  auto* d_out = out.as<Affine>();
  const Affine id{1u, 0u};
  const ThenApply op{};
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan_custom(d_in, -1, d_out, op, id); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::inclusive_scan_custom(static_cast<const Affine*>(nullptr), n, d_out, op, id); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::exclusive_scan_custom(d_in, n, static_cast<Affine*>(nullptr), op, id, id); }));
  // Overlap other than exactly in place.
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::inclusive_scan_custom(d_in, n - 1, const_cast<Affine*>(d_in) + 1, op, id); }));
  // Not aligned to the element type (alignof(Affine) is 4).
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::inclusive_scan_custom(reinterpret_cast<const Affine*>(in.as<char>() + 2), 8, d_out, op, id);
  }));
  // Host memory.
  std::vector<Affine> host(static_cast<std::size_t>(n), id);
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cuda::inclusive_scan_custom(host.data(), n, d_out, op, id); }));
  // Workspace: null, and one byte short of the documented size.
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::inclusive_scan_custom(d_in, n, d_out, op, id, cuda::Workspace{nullptr, 1 << 20}); }));
  const std::size_t need = cuda::scan_custom_workspace_bytes<Affine>(n);
  DeviceBuffer ws_buf(need);
  cuda::init_scan_workspace(cuda::Workspace{ws_buf.get(), need});
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::inclusive_scan_custom(d_in, n, d_out, op, id, cuda::Workspace{ws_buf.get(), need - 1}); }));
  EXPECT_NO_THROW(cuda::inclusive_scan_custom(d_in, n, d_out, op, id, cuda::Workspace{ws_buf.get(), need}));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  // Blocked and segmented: a block length below 1; offsets in host memory, or null.
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan_custom_blocked(d_in, n, d_out, 0, op, id); }));
  const std::vector<std::int64_t> host_offsets{0, n};
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] {
    cuda::inclusive_scan_custom_segmented(d_in, n, d_out, host_offsets.data(), 1, op, id);
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::exclusive_scan_custom_segmented(d_in, n, d_out, static_cast<const std::int64_t*>(nullptr), 1, op, id, id);
  }));
}

}  // namespace
}  // namespace foldkit::test
