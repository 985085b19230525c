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
inline constexpr int kClusterWaves = 2;

// Blocks per SM the workspace has room for: the largest grid any configuration may launch.
inline constexpr int kMaxBlocksPerSm = 32;

// Bytes of one block's partial-result slot: the largest accumulator (16 bytes, e.g.
// ArgResult<double>) as four flagged 8-byte words.
inline constexpr std::size_t kPartialSlotBytes = 32;

// From `foldkit-bench sweep` on the H100 (2026-11-22, sum, n = 2^14 ... 2^28): per element
// size, the configuration whose worst ratio to the per-size best was smallest. Differences
// between the top configurations were within a few percent at 2^24 and above; at 2^14 ... 2^20
// the timings are dominated by launch latency and noisy (see docs/perf.md).
constexpr ReduceTuning reduce_tuning_for(std::size_t element_bytes) {
  switch (element_bytes) {
    case 2: return {512, 4, 4};
    case 4: return {512, 4, 4};
    default: return {256, 8, 4};
  }
}

}  // namespace foldkit::cuda::tuning
