// Tuning of the single-pass scan (device/scan_kernel.cuh): the policy a kernel is compiled for.
// A tile is threads * items_per_thread consecutive elements; one block scans one tile.
//
// Starting point (see docs/perf.md for the measurements): 256 threads keep 8 blocks resident per
// SM within the shared memory a tile needs (it transposes through shared memory); 16 items of 4
// bytes per thread (a 16 KiB tile) keep 64 B of loads in flight per thread. 8-byte types take 8
// items (the same bytes), 2-byte types 16 (their loads are half as wide; a 32-item variant
// spills). kMinBlocksPerSM = 8 caps registers at 32 per thread, so that 8 blocks (2048 threads)
// stay resident: the scan is bound by bytes in flight, and an exclusive f32 sum at 40 registers
// (6 blocks) ran 8 % slower than the inclusive one at 32 (perf.md, 2026-11-22).
#pragma once

#include <cstddef>

namespace foldkit::cuda::tuning {

// kLookbackWindows: the look-back examines 32 predecessors at a time (one per lane of a warp)
// and keeps up to this many whole windows of aggregates in shared memory before it waits for an
// inclusive prefix: 16 windows = 512 tiles, more than the ~1000 resident tiles' start-up wave
// needs per round trip, for 2-4 KiB of shared memory.
template <int kThreadsV, int kItemsV, int kMinBlocksPerSMV, int kLookbackWindowsV>
struct ScanPolicy {
  static constexpr int kThreads = kThreadsV;
  static constexpr int kItems = kItemsV;
  static constexpr int kMinBlocksPerSM = kMinBlocksPerSMV;
  static constexpr int kLookbackWindows = kLookbackWindowsV;
  static constexpr int kTile = kThreads * kItems;
};

// The policy of a scan of kElementBytes-byte elements into kAccumBytes-byte accumulators.
// Registers (ptxas -v, sm_90): with 4-byte accumulators every whole-array op fits 32 registers
// without spilling (8 blocks per SM). 8-byte accumulators get 40 (6 blocks), where the 64-bit
// sums of 32-bit integers and of u64 still spill 8-24 bytes (uncapped they take 74 registers,
// 3 blocks; to be settled by a sweep). Blocked and segmented scans hold the tile's loads in
// registers while they mark its heads and carry (head, value) pairs through the block scan:
// 48 registers (5 blocks; the widening 32-bit integer sums/products still spill 4-16 bytes).
// Every policy has the same tile, so the grid and workspace are shared.
template <std::size_t kElementBytes, std::size_t kAccumBytes, bool kSegmented>
using ScanPolicyFor =
    ScanPolicy<256, (kElementBytes >= 8 ? 8 : 16), (kSegmented ? 5 : kAccumBytes <= 4 ? 8 : 6), 16>;

// The whole-array scan (device/scan_pipelined_kernel.cuh): persistent blocks, each thread holding
// kRows 16-byte vectors of the tile it scans and kRows of the next tile, whose loads are in flight.
// kMinBlocksPerSM caps registers so that the blocks fit; kSleepNs backs the look-back off between
// unsuccessful polls (0: none).
template <int kThreadsV, int kRowsV, int kMinBlocksPerSMV, int kLookbackWindowsV, int kSleepNsV, int kLookbackBatchV = 4>
struct PipelinedScanPolicy {
  static constexpr int kLookbackBatch = kLookbackBatchV;  // look-back windows polled per round trip
  static constexpr int kThreads = kThreadsV;
  static constexpr int kRows = kRowsV;
  static constexpr int kMinBlocksPerSM = kMinBlocksPerSMV;
  static constexpr int kLookbackWindows = kLookbackWindowsV;
  static constexpr int kSleepNs = kSleepNsV;
  // Elements per tile for elements of kElementBytes (16-byte vectors).
  static constexpr int tile_elements(std::size_t element_bytes) {
    return kThreads * kRows * static_cast<int>(16 / element_bytes);
  }
};

// Whole-array scans use the pipelined kernel (true) or the one-tile-per-block scan_kernel
// (false). The pipelined kernel is correct (GPU suite, memcheck and racecheck, 2026-11-23) but
// not yet faster: 1216 us for 2^28 f32 against the tiled kernel's 843 (docs/perf.md).
inline constexpr bool kPipelinedWholeArrayScan = false;

// The library's policy for elements of kElementBytes and accumulators of kAccumBytes: 16 KiB
// tiles (4 vectors per thread), at least scan_tile_elements() elements (the workspace is sized
// by those). Three 16 KiB stages per block: 4 blocks per SM fit in shared memory. The look-back
// keeps up to 24 windows (768 tiles): a block's consecutive tiles are about one grid apart (<=
// 528 on an H100), so it reaches its anchor without waiting for an inclusive prefix.
template <std::size_t kElementBytes, std::size_t kAccumBytes>
using PipelinedScanPolicyFor = PipelinedScanPolicy<256, 4, (kAccumBytes <= 4 ? 4 : 3), 24, 0>;

// Elements per tile (host code sizes the grid and the workspace with it).
constexpr int scan_tile_elements(std::size_t element_bytes) { return 256 * (element_bytes >= 8 ? 8 : 16); }

}  // namespace foldkit::cuda::tuning
