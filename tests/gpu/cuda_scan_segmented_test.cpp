// CUDA blocked and segmented scans (foldkit/cuda/scan.hpp) against the backend-independent
// reference of tests/common/scan_reference.hpp (ref_scan_exact / ref_scan_real walk the same
// offsets the CPU tests use: block_offsets for blocked scans, the offsets themselves otherwise).
//
// Every op x dtype, inclusive and exclusive (from a random non-identity init), on data for which
// the scan is exact (support/cuda_scan_harness.hpp: integers, integer-valued walk data for float
// sums, +-1 and a few powers for float products, changing extremes for min/max): outputs must be
// bit-identical to the reference. Real-valued float sums are checked within scan_tolerance
// (scan_reference.hpp: Higham & Mary's probabilistic bound for tiles of 2^8..2^16 elements).
// Each call runs on fresh data, into an output poisoned with 0xFF bytes with guards on both sides
// (or in place, checking the input's guards), with input and output misaligned by 1-3 elements,
// alternating between one explicit workspace (zeroed once) and the convenient form.
// The kernel's tile is 256 x 16 = 4096 elements for 2- and 4-byte types, 256 x 8 = 2048 for
// 8-byte ones: block lengths, sizes and segment starts are placed on and around those edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/scan_reference.hpp"
#include "foldkit/cuda/scan.hpp"
#include "support/cuda_backend.hpp"
#include "support/cuda_scan_harness.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();

// =============================================================================================
// A partition (host offsets for the reference, device offsets for the call), one checked call
// =============================================================================================

struct Partition {
  ScanCut::Kind kind = ScanCut::whole;
  std::int64_t block_length = 0;
  std::vector<std::int64_t> offsets;  // segmented: num_segments + 1 entries
  DeviceArray<std::int64_t> d_offsets;
  std::string label;

  static Partition blocks(std::int64_t length) { return Partition{ScanCut::blocked, length, {}, {}, ""}; }
  static Partition segments(std::vector<std::int64_t> off, std::string label) {
    Partition p{ScanCut::segmented, 0, std::move(off), {}, std::move(label)};
    const auto count = static_cast<std::int64_t>(p.offsets.size());
    p.d_offsets = to_device(p.offsets.data(), p.offsets.size(), 0, count);  // int64, device memory
    return p;
  }
  ScanCut cut() const {
    return ScanCut{kind, block_length, d_offsets.ptr, static_cast<std::int64_t>(offsets.size()) - 1};
  }
  std::vector<std::int64_t> ref_offsets(std::int64_t n) const {
    if (kind == ScanCut::whole) return whole_offsets(n);
    return kind == ScanCut::blocked ? block_offsets(n, block_length) : offsets;
  }
  std::string describe() const { return cut().describe() + (label.empty() ? "" : " (" + label + ")"); }
};

template <class R> TestArray<R> host_array(const std::vector<R>& got) {
  TestArray<R> a(static_cast<std::int64_t>(got.size()), 0, scan_poison<R>());
  std::copy(got.begin(), got.end(), a.data());
  return a;
}

template <ReduceOp Op, class T>
std::string describe(const Partition& p, const TestArray<T>& a, const ScanCall& c, scan_result_t<Op, T> init) {
  return std::string(op_name(Op)) + " " + p.describe() + ", " + a.describe() + ", " +
         c.describe<Op, T>(a.offset) + (c.exclusive ? ", init " + show(init) : std::string());
}

// One call on fresh exact data: every output bit-identical to ref_scan_exact, no guard written.
template <ReduceOp Op, class T>
::testing::AssertionResult check_exact_call(const Partition& p, std::int64_t n, const ScanCall& c, Rng& rng,
                                            cudaStream_t stream = nullptr) {
  using R = scan_result_t<Op, T>;
  static_assert(std::is_same_v<R, expected_scan_t<Op, T>>, "scan.hpp's result table, written out again");
  const R init = make_init<Op, T>(rng);
  const TestArray<T> a = make_exact_data<Op, T>(n, c.in_offset, rng, c.exclusive, init);
  std::vector<R> got;
  auto r = run_scan_call<Op, T>(p.cut(), a, c, init, stream, got);
  if (r) r = outputs_equal(host_array(got), ref_scan_exact<Op, T>(a.data(), p.ref_offsets(n), !c.exclusive, init));
  if (!r) r << "\n  (" << describe<Op, T>(p, a, c, init) << ")";
  return r;
}

// =============================================================================================
// Sizes and block lengths
// =============================================================================================

// 0..3, odd, primes (1021, 4093, 65521, 1000003), 2^k +- 1, the tile edges of both tiles, and
// whole numbers of blocks of whole tiles (49152 = 3 x 16384, 172032 = 7 x 24576, 3 x 2^20).
std::vector<std::int64_t> partition_sizes() {
  return capped({0, 1, 2, 3, 5, 31, 33, 127, 257, 1021, 2047, 2048, 2049, 4093, 4095, 4096, 4097, 8191, 8193, 12289,
                 49152, 65521, 65537, 172032, (1 << 20) - 1, 1000003, 3 << 20, (1 << 22) + 1});
}

// Lengths of two or more whole tiles (4096 or 8192 elements by dtype and op) that cut n into two
// or more whole blocks: the scan's tickets interleave such blocks' tiles (scan_kernel.cuh), with
// look-back chains of 2-3 tiles (8192-24576) up to 256 (2^20, several look-back windows).
std::vector<std::int64_t> whole_tile_lengths(std::int64_t n) {
  std::vector<std::int64_t> l;
  for (std::int64_t length : {8192, 16384, 24576, 1 << 20})
    if (n % length == 0 && n / length >= 2) l.push_back(length);
  return l;
}

// The required lengths (1, 3, 32, 1000, 4096, n), around both tiles (2047-2049, 4095, 4097,
// 8193), longer than n (n + 1, 3n + 7, INT64_MAX), one random length, and the whole-tile
// lengths that divide n. Single-tile sizes skip the tile-edge lengths (they act like n + 1
// there); multi-million sizes take a subset.
std::vector<std::int64_t> block_lengths(std::int64_t n, Rng& rng) {
  const std::int64_t random = rng.uniform(2, 70000);
  std::vector<std::int64_t> l = whole_tile_lengths(n);
  if (n > kAllOffsetsUpTo) {
    l.insert(l.end(), {1, 1000, 2049, 4096, 8193, n, n + 1, random});
    return l;
  }
  l.insert(l.end(), {1, 3, 32, 1000, std::max<std::int64_t>(n, 1), n + 1, 3 * n + 7, kI64Max, random});
  if (n >= 2047) l.insert(l.end(), {4096, 2047, 2048, 2049, 4095, 4097, 8193});
  return l;
}

// =============================================================================================
// Every op x dtype, exact
// =============================================================================================

template <ReduceOp Op, class T> void sweep(ScanCut::Kind kind) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::vector<std::int64_t> sizes = partition_sizes();
  const ScanWorkspace ws(sizes.back(), {dtype_v<T>});
  CallPlan plan(ws.get(), std::is_same_v<scan_result_t<Op, T>, T>);
  for (std::int64_t n : sizes) {
    std::vector<Partition> parts;
    if (kind == ScanCut::blocked) {
      for (std::int64_t length : block_lengths(n, rng)) parts.push_back(Partition::blocks(length));
    } else {
      for (int k = 0; k < kSegmentLayouts; ++k)
        parts.push_back(Partition::segments(segment_layout(n, k, rng), kLayoutNames[k]));
    }
    for (const Partition& p : parts)
      for (const ScanCall& c : plan.next(n, rng)) ASSERT_TRUE((check_exact_call<Op, T>(p, n, c, rng)));
  }
}

using CudaScanBlocked = CudaTest;
using CudaScanSegmented = CudaTest;

#define FOLDKIT_PARTITIONED_SWEEPS(name, T)                                                                   \
  TEST_F(CudaScanBlocked, SumBitExact_##name) { sweep<ReduceOp::sum, T>(ScanCut::blocked); }                \
  TEST_F(CudaScanBlocked, ProdBitExact_##name) { sweep<ReduceOp::prod, T>(ScanCut::blocked); }              \
  TEST_F(CudaScanBlocked, MinBitExact_##name) { sweep<ReduceOp::min, T>(ScanCut::blocked); }                \
  TEST_F(CudaScanBlocked, MaxBitExact_##name) { sweep<ReduceOp::max, T>(ScanCut::blocked); }                \
  TEST_F(CudaScanSegmented, SumBitExact_##name) { sweep<ReduceOp::sum, T>(ScanCut::segmented); }            \
  TEST_F(CudaScanSegmented, ProdBitExact_##name) { sweep<ReduceOp::prod, T>(ScanCut::segmented); }          \
  TEST_F(CudaScanSegmented, MinBitExact_##name) { sweep<ReduceOp::min, T>(ScanCut::segmented); }            \
  TEST_F(CudaScanSegmented, MaxBitExact_##name) { sweep<ReduceOp::max, T>(ScanCut::segmented); }

FOLDKIT_FOR_EACH_SCAN_DTYPE(FOLDKIT_PARTITIONED_SWEEPS)

// Zero elements with null data pointers: accepted (blocked; no segments; only empty segments).
// (Zero elements into a poisoned, guarded output are part of every sweep.)
TEST_F(CudaScanSegmented, EmptyInputWithNullPointersIsAccepted) {
  const auto none = Partition::segments({0}, "no segments"), empties = Partition::segments({0, 0, 0}, "two empty");
  const float* in = nullptr;
  float* out = nullptr;
  const ScanCut cuts[] = {Partition::blocks(3).cut(), none.cut(), empties.cut()};
  for (const ScanCut& cut : cuts) {
    for (bool exclusive : {false, true}) {
      EXPECT_NO_THROW((enqueue_cut<ReduceOp::sum, float>(cut, exclusive, in, 0, out, 1.0f, nullptr, nullptr)))
          << cut.describe();
    }
  }
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
}

// =============================================================================================
// Real-valued float sums, determinism
// =============================================================================================

// One call of a float sum on real data; every output within scan_tolerance of the exact prefix.
template <class T>
::testing::AssertionResult check_real_call(const Partition& p, const TestArray<T>& a, const ScanCall& c, T init,
                                           std::vector<T>& got) {
  auto r = run_scan_call<ReduceOp::sum, T>(p.cut(), a, c, init, nullptr, got);
  if (r) r = outputs_within(host_array(got), ref_scan_real<ReduceOp::sum, T>(a.data(), p.ref_offsets(a.n),
                                                                              !c.exclusive, init));
  if (!r) r << "\n  (" << describe<ReduceOp::sum, T>(p, a, c, init) << ")";
  return r;
}

// Data in [-1, 1) and [0, 1); blocks and segments of at most 50000 elements keep half's sums
// below its largest value (65504).
template <class T> void real_sums_within_bound() {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::vector<std::int64_t> sizes = capped({1, 33, 4097, 65537, 1000003, (1 << 22) + 1});
  const ScanWorkspace ws(sizes.back(), {dtype_v<T>});
  CallPlan plan(ws.get(), true);
  std::vector<T> got;
  for (std::int64_t n : sizes) {
    const Partition parts[] = {Partition::blocks(rng.uniform(1, 5000)), Partition::blocks(30001),
                               Partition::segments(segment_layout(n, 0, rng), kLayoutNames[0]),
                               Partition::segments(segment_layout(n, 4, rng), kLayoutNames[4])};
    for (const Partition& p : parts) {
      for (const ScanCall& c : plan.next(n, rng)) {
        const auto a = make_real_data<T>(n, c.in_offset, rng.counter(), rng.next() & 1 ? -1.0 : 0.0, 1.0);
        ASSERT_TRUE(check_real_call<T>(p, a, c, from_double<T>(0.375), got));
      }
    }
  }
}

TEST_F(CudaScanSegmented, RealSumsWithinBound_f32) { real_sums_within_bound<float>(); }
TEST_F(CudaScanSegmented, RealSumsWithinBound_f64) { real_sums_within_bound<double>(); }
TEST_F(CudaScanSegmented, RealSumsWithinBound_f16) { real_sums_within_bound<half>(); }
TEST_F(CudaScanSegmented, RealSumsWithinBound_bf16) { real_sums_within_bound<bfloat16>(); }

// 20 calls of an f32 sum on the same real-valued input give the same bits: blocks of a random
// length and of 2^20 + 3 (each over hundreds of tiles), random and tile-edge segments;
// inclusive and exclusive; explicit workspace and convenient form alternating.
TEST_F(CudaScanSegmented, BlockedAndSegmentedRepeatBitwise) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t n = capped({3 * (std::int64_t{1} << 20) + 7}).front();
  const auto a = make_real_data<float>(n, 1, rng.counter(), -1.0, 1.0);
  const ScanWorkspace ws(n, {DType::f32});
  const Partition parts[] = {Partition::blocks(rng.uniform(4097, 200000)), Partition::blocks((1 << 20) + 3),
                             Partition::segments(segment_layout(n, 0, rng), kLayoutNames[0]),
                             Partition::segments(segment_layout(n, 4, rng), kLayoutNames[4])};
  std::vector<float> first, again;
  for (const Partition& p : parts) {
    for (bool exclusive : {false, true}) {
      ScanCall c{exclusive, nullptr, 1, 2, false};
      ASSERT_TRUE(check_real_call<float>(p, a, c, 0.375f, first));
      for (int call = 1; call < 20; ++call) {
        c.ws = call % 2 ? ws.get() : nullptr;
        ASSERT_TRUE((run_scan_call<ReduceOp::sum, float>(p.cut(), a, c, 0.375f, nullptr, again)));
        ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)), 0)
            << "call " << call << " differs from call 0: " << describe<ReduceOp::sum, float>(p, a, c, 0.375f);
      }
    }
  }
}

// =============================================================================================
// Workspaces
// =============================================================================================

// One workspace over garbage, zeroed once (init_scan_workspace or cudaMemset), then ~60 calls of
// whole-array, blocked and segmented scans of five ops/dtypes without re-zeroing; sizes up to
// its capacity, down to 0 and 1, and back up.
void reuse_one_workspace_across_kinds(bool zero_with_memset) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t cap = capped({(std::int64_t{1} << 22) + 5}).front();
  const ScanWorkspace workspace(cap, {DType::f32, DType::i32, DType::f16, DType::f64, DType::u64},
                                zero_with_memset ? ScanZeroing::memset_over_garbage : ScanZeroing::init_over_garbage);
  const cuda::Workspace& ws = *workspace.get();
  for (std::int64_t size : {cap, std::int64_t{1000}, cap, std::int64_t{1}, std::int64_t{4097}, std::int64_t{0}, cap - 1,
                            std::int64_t{65537}, std::int64_t{33}, cap, (cap + 1) / 2}) {
    const std::int64_t n = std::min(size, cap);  // the workspace is sized for cap
    const auto segments = [&] {
      const int k = static_cast<int>(rng.uniform(0, kSegmentLayouts - 1));
      return Partition::segments(segment_layout(n, k, rng), kLayoutNames[k]);
    };
    const auto call = [&] { return ScanCall{(rng.next() & 1) != 0, &ws, rng.uniform(0, 3), rng.uniform(0, 3), false}; };
    ASSERT_TRUE((check_exact_call<ReduceOp::sum, float>(Partition{}, n, call(), rng)));
    const auto blocks = Partition::blocks(rng.uniform(1, 9000));
    ASSERT_TRUE((check_exact_call<ReduceOp::sum, std::int32_t>(blocks, n, call(), rng)));
    ASSERT_TRUE((check_exact_call<ReduceOp::max, half>(segments(), n, call(), rng)));
    ASSERT_TRUE((check_exact_call<ReduceOp::prod, double>(Partition::blocks(2048), n, call(), rng)));
    ASSERT_TRUE((check_exact_call<ReduceOp::min, std::uint64_t>(segments(), n, call(), rng)));
    ASSERT_TRUE((check_exact_call<ReduceOp::sum, float>(segments(), n, call(), rng)));
  }
}

using CudaScanPartitionedWorkspace = CudaTest;

TEST_F(CudaScanPartitionedWorkspace, OneWorkspaceServesAllKindsInitScanWorkspace) {
  reuse_one_workspace_across_kinds(false);
}
TEST_F(CudaScanPartitionedWorkspace, OneWorkspaceServesAllKindsCudaMemset) { reuse_one_workspace_across_kinds(true); }

// The convenient form on a created stream and on the default stream, growing and shrinking.
TEST_F(CudaScanPartitionedWorkspace, ConvenientFormOnCreatedAndDefaultStreams) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  on_created_and_default_streams([&](cudaStream_t s) {
    for (std::int64_t n : capped({1000, (1 << 20) + 1, 17, (1 << 22) + 3, 4097, 0, 65537})) {
      const ScanCall c{(rng.next() & 1) != 0, nullptr, rng.uniform(0, 3), rng.uniform(0, 3), false};
      ASSERT_TRUE((check_exact_call<ReduceOp::sum, float>(Partition::blocks(rng.uniform(1, 9000)), n, c, rng, s)));
      const auto p = Partition::segments(segment_layout(n, 0, rng), kLayoutNames[0]);
      ASSERT_TRUE((check_exact_call<ReduceOp::sum, std::uint32_t>(p, n, c, rng, s)));
    }
  });
}

// =============================================================================================
// Offsets that break the contract
// =============================================================================================

// Decreasing, negative, past n, the int64 extremes, a first offset other than 0, a last one other
// than n, garbage. The outputs are unspecified; the call must not fail and must write nothing
// outside [0, n) of the output (in place: of the array). Under compute-sanitizer
// (scripts/gpu_check.sh) any read outside in, out and the offsets shows as well.
std::vector<std::vector<std::int64_t>> invalid_offsets(std::int64_t n, Rng& rng) {
  std::vector<std::int64_t> garbage{0};
  for (int k = 0; k < 64; ++k) garbage.push_back(rng.uniform(-2 * n, 2 * n));
  garbage.push_back(n);
  return {{0, n / 2, n / 4, n}, {0, n, n / 2, 1, n}, {0, -5, n / 3, n},  {-1000, n},
          {0, n / 2, n + 1000, n}, {0, n + 5}, {0, n / 2},   {3, n},
          {0, kI64Max, kI64Min, n}, {kI64Min, kI64Max}, {n, 0}, garbage};
}

template <ReduceOp Op, class T>
::testing::AssertionResult stays_inside(const Partition& p, std::int64_t n, const ScanCall& c, Rng& rng) {
  using R = scan_result_t<Op, T>;
  const R init = make_init<Op, T>(rng);
  const TestArray<T> a = make_exact_data<Op, T>(n, c.in_offset, rng, c.exclusive, init);
  std::vector<R> got;
  ::testing::AssertionResult r = ::testing::AssertionSuccess();
  try {
    r = run_scan_call<Op, T>(p.cut(), a, c, init, nullptr, got);
  } catch (const std::exception& e) {  // foldkit::Error, or a CUDA failure seen by FOLDKIT_CUDA_CHECK
    r = ::testing::AssertionFailure() << "the call failed: " << e.what();
  }
  if (!r) r << "\n  (" << describe<Op, T>(p, a, c, init) << ")";
  return r;
}

TEST_F(CudaScanSegmented, InvalidOffsetsNeverWriteOutsideTheOutput) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::vector<std::int64_t> sizes = capped({1, 4097, 100003, (1 << 20) + 1});
  const ScanWorkspace ws(sizes.back(), {DType::f32, DType::i32, DType::f64, DType::f16});
  for (std::int64_t n : sizes) {
    const auto bad = invalid_offsets(n, rng);
    for (std::size_t k = 0; k < bad.size(); ++k) {
      const auto p = Partition::segments(bad[k], "invalid offsets #" + std::to_string(k));
      const auto call = [&](bool exclusive, bool explicit_ws, bool in_place) {
        return ScanCall{exclusive, explicit_ws ? ws.get() : nullptr, rng.uniform(1, 3), rng.uniform(1, 3), in_place};
      };
      ASSERT_TRUE((stays_inside<ReduceOp::sum, float>(p, n, call(false, true, false), rng)));
      ASSERT_TRUE((stays_inside<ReduceOp::sum, std::int32_t>(p, n, call(true, false, false), rng)));
      ASSERT_TRUE((stays_inside<ReduceOp::max, double>(p, n, call(true, true, false), rng)));
      ASSERT_TRUE((stays_inside<ReduceOp::min, half>(p, n, call(false, false, false), rng)));
      ASSERT_TRUE((stays_inside<ReduceOp::min, float>(p, n, call(false, true, true), rng)));
      ASSERT_TRUE((stays_inside<ReduceOp::prod, double>(p, n, call(true, false, true), rng)));
    }
    // The workspace still serves valid calls after them.
    const auto good = Partition::segments(segment_layout(n, 0, rng), kLayoutNames[0]);
    ASSERT_TRUE((check_exact_call<ReduceOp::sum, float>(good, n, ScanCall{true, ws.get(), 1, 2, false}, rng)));
    ASSERT_TRUE((check_exact_call<ReduceOp::max, double>(good, n, ScanCall{false, ws.get(), 3, 1, false}, rng)));
  }
}

// =============================================================================================
// Errors: foldkit::Error with the documented code, and nothing written
// =============================================================================================

// A valid f32 input of kN elements, a poisoned output, a workspace and device offsets; each case
// changes one argument. out_untouched() checks that no refused call wrote to the output.
struct ErrorSetup {
  static constexpr std::int64_t kN = 1000;
  DeviceArray<float> in = to_device(make_exact_sum_data<float>(kN, 0, CounterRng{11}));
  DeviceBuffer out{static_cast<std::size_t>(kN) * sizeof(std::int64_t)};
  ScanWorkspace ws{1 << 16, {DType::f32, DType::i32}};
  Partition segments = Partition::segments({0, 7, 500, kN}, "valid");

  ErrorSetup() { FOLDKIT_CUDA_CHECK(cudaMemset(out.get(), kPoison, out.bytes())); }
  float* fout() const { return out.as<float>(); }
  ScanCut blocked(std::int64_t length = 4) const { return ScanCut{ScanCut::blocked, length, nullptr, 0}; }
  ScanCut segmented(const std::int64_t* offsets, std::int64_t num_segments) const {
    return ScanCut{ScanCut::segmented, 0, offsets, num_segments};
  }
  ::testing::AssertionResult out_untouched() const {
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> bytes(out.bytes());
    FOLDKIT_CUDA_CHECK(cudaMemcpy(bytes.data(), out.get(), bytes.size(), cudaMemcpyDeviceToHost));
    if (const std::int64_t k = first_unpoisoned(bytes.data(), 0, bytes.size()); k >= 0)
      return ::testing::AssertionFailure() << "a refused call wrote to the output (byte " << k << ")";
    return ::testing::AssertionSuccess();
  }
};

// Every form of the cut (inclusive / exclusive x explicit workspace / convenient) throws `want`.
template <ReduceOp Op, class T>
void expect_all_forms_throw(Errc want, const ScanCut& cut, const T* in, std::int64_t n, scan_result_t<Op, T>* out,
                            const ScanWorkspace& ws, const std::string& what) {
  SCOPED_TRACE(what + ", " + op_name(Op) + " " + dtype_name(dtype_v<T>) + ", " + cut.describe());
  for (bool exclusive : {false, true}) {
    for (const cuda::Workspace* w : {ws.get(), static_cast<const cuda::Workspace*>(nullptr)}) {
      EXPECT_TRUE(throws_errc(want, [&] { enqueue_cut<Op, T>(cut, exclusive, in, n, out, {}, w, nullptr); }))
          << describe_call(exclusive, w, 0);
    }
  }
}

using CudaScanPartitionedErrors = CudaTest;

TEST_F(CudaScanPartitionedErrors, NullPointersAndNegativeLength) {
  const ErrorSetup e;
  const float* no_in = nullptr;
  float* no_out = nullptr;
  for (const ScanCut& cut : {e.blocked(), e.segmented(e.segments.d_offsets.ptr, 3)}) {
    expect_all_forms_throw<ReduceOp::sum, float>(Errc::invalid_argument, cut, no_in, 5, e.fout(), e.ws, "null in");
    expect_all_forms_throw<ReduceOp::max, float>(Errc::invalid_argument, cut, e.in.ptr, 5, no_out, e.ws, "null out");
    expect_all_forms_throw<ReduceOp::sum, float>(Errc::invalid_argument, cut, e.in.ptr, -1, e.fout(), e.ws, "n = -1");
    expect_all_forms_throw<ReduceOp::prod, float>(Errc::invalid_argument, cut, e.in.ptr, -16, e.fout(), e.ws,
                                                  "n = -16");
  }
  EXPECT_TRUE(e.out_untouched());
}

TEST_F(CudaScanPartitionedErrors, BlockLengthBelowOne) {
  const ErrorSetup e;
  for (std::int64_t length : {std::int64_t{0}, std::int64_t{-1}, kI64Min}) {
    for (std::int64_t n : {std::int64_t{0}, ErrorSetup::kN}) {
      const std::string what = "block_length " + std::to_string(length) + ", n " + std::to_string(n);
      const ScanCut cut = e.blocked(length);
      expect_all_forms_throw<ReduceOp::sum, float>(Errc::invalid_argument, cut, e.in.ptr, n, e.fout(), e.ws, what);
      expect_all_forms_throw<ReduceOp::max, float>(Errc::invalid_argument, cut, e.in.ptr, n, e.fout(), e.ws, what);
    }
  }
  EXPECT_TRUE(e.out_untouched());
}

TEST_F(CudaScanPartitionedErrors, BadSegmentArguments) {
  const ErrorSetup e;
  const std::int64_t n = ErrorSetup::kN;
  const std::int64_t* d_off = e.segments.d_offsets.ptr;
  const auto bad = [&](Errc want, const std::int64_t* off, std::int64_t segs, const char* what) {
    expect_all_forms_throw<ReduceOp::sum, float>(want, e.segmented(off, segs), e.in.ptr, n, e.fout(), e.ws, what);
  };
  bad(Errc::invalid_argument, d_off, -1, "num_segments = -1");
  bad(Errc::invalid_argument, d_off, -5, "num_segments = -5");
  bad(Errc::invalid_argument, nullptr, 3, "null offsets");
  bad(Errc::invalid_argument, d_off, 0, "num_segments == 0 with n > 0");
  const std::vector<std::int64_t> host{0, 7, 500, n};  // pageable host memory: never dereferenced
  bad(Errc::wrong_memory, host.data(), 3, "host offsets");
  EXPECT_TRUE(e.out_untouched());
  // num_segments == 0 with n == 0 is valid.
  for (bool exclusive : {false, true}) {
    EXPECT_NO_THROW((enqueue_cut<ReduceOp::sum, float>(e.segmented(d_off, 0), exclusive, e.in.ptr, 0, e.fout(), 0.0f,
                                                       e.ws.get(), nullptr)));
  }
  EXPECT_TRUE(e.out_untouched());
}

TEST_F(CudaScanPartitionedErrors, HostDataIsWrongMemoryNullOrShortWorkspaceInvalid) {
  const ErrorSetup e;
  const std::int64_t n = ErrorSetup::kN;
  std::vector<float> host(static_cast<std::size_t>(n), 1.0f);
  const std::size_t need = cuda::scan_workspace_bytes(n, DType::f32);
  ASSERT_GT(need, 0u);
  for (const ScanCut& cut : {e.blocked(), e.segmented(e.segments.d_offsets.ptr, 3)}) {
    expect_all_forms_throw<ReduceOp::sum, float>(Errc::wrong_memory, cut, host.data(), n, e.fout(), e.ws, "host in");
    expect_all_forms_throw<ReduceOp::min, float>(Errc::wrong_memory, cut, e.in.ptr, n, host.data(), e.ws, "host out");
    const cuda::Workspace null_ws{nullptr, std::size_t{1} << 20}, short_ws{e.ws.get()->ptr, need - 1};
    for (const cuda::Workspace* w : {&null_ws, &short_ws}) {
      for (bool exclusive : {false, true}) {
        EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
          enqueue_cut<ReduceOp::sum, float>(cut, exclusive, e.in.ptr, n, e.fout(), 0.0f, w, nullptr);
        })) << cut.describe() << (w == &null_ws ? ", null workspace" : ", workspace one byte short");
      }
    }
  }
  EXPECT_TRUE(e.out_untouched());
  EXPECT_EQ(host, std::vector<float>(static_cast<std::size_t>(n), 1.0f)) << "a refused call wrote to host memory";
}

// Overlap other than exactly in place with equal types is refused; adjacent arrays and exactly
// in place are fine.
TEST_F(CudaScanPartitionedErrors, OverlapOtherThanExactlyInPlace) {
  const ErrorSetup e;
  const std::int64_t n = ErrorSetup::kN;
  const DeviceBuffer buffer(static_cast<std::size_t>(4 * n) * sizeof(std::int64_t));
  FOLDKIT_CUDA_CHECK(cudaMemset(buffer.get(), 0, buffer.bytes()));
  float* f = buffer.as<float>() + 8;
  std::int32_t* i = buffer.as<std::int32_t>() + 8;
  auto* wide = reinterpret_cast<std::int64_t*>(i);
  for (const ScanCut& cut : {e.blocked(1000), e.segmented(e.segments.d_offsets.ptr, 3)}) {
    expect_all_forms_throw<ReduceOp::sum, float>(Errc::invalid_argument, cut, f, n, f + 1, e.ws, "out = in + 1");
    expect_all_forms_throw<ReduceOp::max, float>(Errc::invalid_argument, cut, f, n, f - 1, e.ws, "out = in - 1");
    expect_all_forms_throw<ReduceOp::min, float>(Errc::invalid_argument, cut, f, n, f + n - 1, e.ws,
                                                 "out starts at in's last element");
    expect_all_forms_throw<ReduceOp::sum, std::int32_t>(Errc::invalid_argument, cut, i, n, wide, e.ws,
                                                        "i32 sum into i64 at in's address");
    expect_all_forms_throw<ReduceOp::prod, std::int32_t>(Errc::invalid_argument, cut, i, n, wide + n / 4, e.ws,
                                                         "i32 prod into i64 half-way into in");
    EXPECT_NO_THROW((enqueue_cut<ReduceOp::sum, float>(cut, false, f, n, f + n, 0.0f, nullptr, nullptr))) << "adjacent";
    EXPECT_NO_THROW((enqueue_cut<ReduceOp::max, float>(cut, true, f, n, f, 0.0f, e.ws.get(), nullptr))) << "in place";
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  }
  EXPECT_TRUE(e.out_untouched());
}

// After refused calls of every kind, no sticky error: valid blocked and segmented calls work.
TEST_F(CudaScanPartitionedErrors, ValidCallsFollowRefusedOnes) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const ErrorSetup e;
  const auto refused = [&](const ScanCut& cut, bool exclusive, const cuda::Workspace* ws) {
    EXPECT_THROW((enqueue_cut<ReduceOp::sum, float>(cut, exclusive, e.in.ptr, 1000, e.fout(), 0.0f, ws, nullptr)), Error)
        << cut.describe();
  };
  refused(e.blocked(0), false, nullptr);
  refused(e.segmented(nullptr, 3), true, e.ws.get());
  refused(e.segmented(e.segments.d_offsets.ptr, -2), false, nullptr);
  EXPECT_TRUE(e.out_untouched());
  const std::int64_t n = 5000;
  const auto p = Partition::segments(segment_layout(n, 0, rng), kLayoutNames[0]);
  EXPECT_TRUE((check_exact_call<ReduceOp::sum, std::int32_t>(Partition::blocks(77), n, ScanCall{true, e.ws.get(), 2, 1},
                                                             rng)));
  EXPECT_TRUE((check_exact_call<ReduceOp::sum, std::int32_t>(p, n, ScanCall{false, nullptr, 1, 3}, rng)));
}

}  // namespace
}  // namespace foldkit::test
