// Tuning of the full-array reduction kernel: the launch configuration per element size, and the
// sweep that chose it. Re-tune with `foldkit-bench sweep` and record the table here.
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

// From `foldkit-bench sweep` on the H100 (2026-11-22, sum of every dtype, n = 2^14 ... 2^28;
// bench/results/sweep-h100-2026-11-22.csv). Two tiers by input size:
// - up to 64 MiB: 512 threads with 4 loads in flight (8-byte types: 256 threads) were within
//   ~2% of the best at 2^20 ... 2^24; below that the times are launch latency and noise;
// - from 64 MiB: 1024 threads with 8 loads in flight (2-byte types: 4, which needs no spills)
//   were the best or within 0.2% of it at 2^28 for every dtype, 1.3-1.5% faster than the
//   small tier there.
inline constexpr std::size_t kLargeInputBytes = std::size_t{64} << 20;
inline constexpr int kUnrollSmall = 4;
inline constexpr int kUnrollLarge = 8;

constexpr ReduceTuning reduce_tuning_for(std::size_t element_bytes, std::size_t input_bytes = 0) {
  if (input_bytes >= kLargeInputBytes) return {1024, 2, element_bytes == 2 ? kUnrollSmall : kUnrollLarge};
  return {element_bytes == 8 ? 256 : 512, element_bytes == 8 ? 8 : 4, kUnrollSmall};
}

}  // namespace foldkit::cuda::tuning
