// Tuning of the full-array reduction kernel: the launch configuration per kernel family and
// input size, and the sweep that chose it. Re-tune with `foldkit-bench sweep` and record the
// result here.
//
// The constants are chosen below, beside the sweep summary; the full sweep table of each run is
// kept under bench/results/ (sweep-*.csv).
#pragma once

#include <cstddef>

namespace foldkit::cuda::tuning {

struct ReduceTuning {
  int block_threads;  // threads per block (multiple of 32)
  int blocks_per_sm;  // upper bound on resident blocks per SM the grid is sized for
  int unroll;         // independent 16-byte loads in flight per thread per iteration
  // Launch with programmatic stream serialization (Hopper PDL): the kernel's launch overlaps
  // the end of the previous kernel in the stream; the kernel waits for it before reading.
  bool programmatic_launch = true;
  // Grids of up to kMaxClusterBlocks * kClusterWaves blocks' worth of work run as one
  // thread-block cluster that combines through distributed shared memory.
  bool use_clusters = true;
};

// Largest cluster (16 needs the non-portable size; Hopper allows it) and how many unrolled
// iterations per thread the cluster path may take before a wider grid pays off.
inline constexpr int kMaxClusterBlocks = 16;
inline constexpr int kClusterWaves = 1;

// Blocks per SM the workspace has room for: the largest grid any configuration may launch.
inline constexpr int kMaxBlocksPerSm = 32;

// Bytes of one block's partial-result slot: the largest accumulator (16 bytes, e.g.
// ArgResult<double>) as four flagged 8-byte words.
inline constexpr std::size_t kPartialSlotBytes = 32;

// What a kernel keeps per thread decides its best launch shape (registers per thread, so
// resident threads and loads in flight): the families the tuning tells apart.
enum class ReduceFamily : int {
  narrow,  // 2-byte elements (half, bfloat16): 8 float lanes per 16-byte vector
  value4,  // 4-byte elements, 4-byte accumulator (float sums, every 4-byte min/max/prod)
  widen4,  // 4-byte elements, 8-byte accumulator (int32/uint32 sums and means widen)
  value8,  // 8-byte (and 16-byte user) elements
  arg2,    // argmin/argmax of 2-byte elements (a packed 64-bit key per lane)
  arg4,    // argmin/argmax of 4-byte elements (value and vector index per lane)
  arg8,    // argmin/argmax of 8-byte elements ({value, index} per lane)
};
inline constexpr int kFamilies = 7;

constexpr ReduceFamily reduce_family(std::size_t element_bytes, std::size_t accum_bytes, bool arg) {
  if (arg) return element_bytes == 2 ? ReduceFamily::arg2 : element_bytes == 4 ? ReduceFamily::arg4 : ReduceFamily::arg8;
  if (element_bytes == 2) return ReduceFamily::narrow;
  if (element_bytes == 4) return accum_bytes == 8 ? ReduceFamily::widen4 : ReduceFamily::value4;
  return ReduceFamily::value8;
}

// The most 16-byte loads in flight per thread a family's kernel takes without spilling
// registers (2-byte elements carry 8 lanes; 8-byte arg ops carry 16-byte lanes).
constexpr int max_unroll(ReduceFamily f) {
  return f == ReduceFamily::narrow || f == ReduceFamily::arg2 || f == ReduceFamily::arg8 ? 4 : 8;
}

// Size tiers. The sweep times inputs of 4 KiB * 4^k (k = 0..9: 4 KiB ... 1 GiB); tier k takes
// every input up to twice its sample, so each sample sits in the middle of its tier.
inline constexpr int kTiers = 10;
constexpr std::size_t tier_sample_bytes(int tier) { return std::size_t{4096} << (2 * tier); }
constexpr int reduce_tier(std::size_t input_bytes) {
  int tier = 0;
  while (tier + 1 < kTiers && input_bytes > 2 * tier_sample_bytes(tier)) ++tier;
  return tier;
}

// The table: {block_threads, blocks_per_sm, unroll} per family and tier.
//
// From `foldkit-bench sweep` on the H100 (2026-11-22, sum of every dtype, n = 2^14 ... 2^28;
// bench/results/sweep-h100-2026-11-22.csv), two tiers by input size:
// - up to 64 MiB: 512 threads with 4 loads in flight (8-byte types: 256 threads) were within
//   ~2% of the best at 2^20 ... 2^24; below that the times are launch latency and noise;
// - from 64 MiB: 1024 threads with 8 loads in flight (2-byte types: 4, which needs no spills)
//   were the best or within 0.2% of it at 2^28 for every dtype, 1.3-1.5% faster than the
//   small tier there.
struct ReduceShape {
  int block_threads, blocks_per_sm, unroll;
};
inline constexpr ReduceShape kReduceTable[kFamilies][kTiers] = {
    // tier samples: 4K, 16K, 64K, 256K, 1M, 4M, 16M, 64M, 256M, 1G
    /* narrow */ {{512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4},
                  {512, 4, 4}, {512, 4, 4}, {1024, 2, 4}, {1024, 2, 4}, {1024, 2, 4}},
    /* value4 */ {{512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4},
                  {512, 4, 4}, {512, 4, 4}, {1024, 2, 8}, {1024, 2, 8}, {1024, 2, 8}},
    /* widen4 */ {{512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4},
                  {512, 4, 4}, {512, 4, 4}, {1024, 2, 8}, {1024, 2, 8}, {1024, 2, 8}},
    /* value8 */ {{256, 8, 4}, {256, 8, 4}, {256, 8, 4}, {256, 8, 4}, {256, 8, 4},
                  {256, 8, 4}, {256, 8, 4}, {1024, 2, 8}, {1024, 2, 8}, {1024, 2, 8}},
    /* arg2 */   {{512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4},
                  {512, 4, 4}, {512, 4, 4}, {1024, 2, 4}, {1024, 2, 4}, {1024, 2, 4}},
    /* arg4 */   {{512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4},
                  {512, 4, 4}, {512, 4, 4}, {1024, 2, 8}, {1024, 2, 8}, {1024, 2, 8}},
    /* arg8 */   {{256, 8, 4}, {256, 8, 4}, {256, 8, 4}, {256, 8, 4}, {256, 8, 4},
                  {256, 8, 4}, {256, 8, 4}, {1024, 2, 4}, {1024, 2, 4}, {1024, 2, 4}},
};

constexpr ReduceTuning reduce_tuning_for(ReduceFamily family, std::size_t input_bytes) {
  const ReduceShape s = kReduceTable[static_cast<int>(family)][reduce_tier(input_bytes)];
  return ReduceTuning{s.block_threads, s.blocks_per_sm, s.unroll};
}

// Whether the table launches `family` with `unroll` at some size: only those kernels are
// compiled into the library.
constexpr bool table_uses_unroll(ReduceFamily family, int unroll) {
  for (int tier = 0; tier < kTiers; ++tier)
    if (kReduceTable[static_cast<int>(family)][tier].unroll == unroll) return true;
  return false;
}

// Every table entry fits its family (a wrong edit fails to compile, not to launch).
constexpr bool table_fits() {
  for (int f = 0; f < kFamilies; ++f)
    for (int tier = 0; tier < kTiers; ++tier) {
      const ReduceShape s = kReduceTable[f][tier];
      if (s.unroll < 1 || s.unroll > max_unroll(static_cast<ReduceFamily>(f)) || (s.unroll & (s.unroll - 1)) != 0 ||
          s.block_threads < 32 || s.block_threads > 1024 || s.block_threads % 32 != 0 || s.blocks_per_sm < 1 ||
          s.blocks_per_sm > kMaxBlocksPerSm)
        return false;
    }
  return true;
}
static_assert(table_fits(), "reduce tuning table: an entry does not fit its family");

}  // namespace foldkit::cuda::tuning
