// Tuning of the single-pass scan (device/scan_kernel.cuh): the policy a kernel is compiled for.
// A tile is threads * items_per_thread consecutive elements; one block scans one tile.
//
// What sets the speed (docs/perf-log/2026-11-23.md, third session): a block holds its tile in shared
// memory from the moment its loads are issued until its look-back returns, which waits for the
// slowest load of every earlier tile. So the scan's rate is the shared memory held per SM over
// that time, and the bigger the tiles and the more of them fit, the closer it runs to a copy:
// f32 2^28 at 128 KiB per SM (8 x 16 KiB) 86 % of memcpy, 160 KiB (10 x 16) 89 %, 168 KiB
// (7 x 24) 91 %, 192 KiB (6 x 32) 92 %, 216 KiB (6 x 36: 288 threads x 32 items) 93 %. The
// tile is copied into shared memory asynchronously (no registers hold loads in flight), so
// registers no longer bound the tile. The same kernel's I/O alone (a copy through shared memory
// in 32 KiB chunks, foldkit-copy-probe) runs at 96-98 % of memcpy; the rest is the scan's own
// time in a block's life: its fold and output passes (~2 %) and the look-back (~2.5 %). Since
// 2026-11-25 (eighth session) the scans also prefetch their input into L2 ahead of the
// tiles (kPrefetchTiles, below), which no longer needs shared memory to keep DRAM busy: f32
// 2^28 93.4 -> 98.2 % of memcpy.
#pragma once

#include <cstddef>
#include <type_traits>

namespace foldkit::cuda::tuning {

// kLookbackWindows: the look-back examines 32 predecessors at a time (one per lane of a warp)
// and keeps up to this many whole windows of aggregates in shared memory before it waits for an
// inclusive prefix: 16 windows = 512 tiles, more than the ~1000 resident tiles' start-up wave
// needs per round trip, for 2-4 KiB of shared memory.
//
// kDeferredPrefix: whole-array scans whose outputs are their accumulators apply the tile's
// prefix in the store pass (scan_kernel.cuh), so that every warp but the look-back warp writes
// its tile-local scan while the look-back waits. false: the element pass waits for the prefix
// (the kernel before 2026-11-25f; kept for `foldkit-bench scan --sweep`).
//
// kPrefetchTiles: a block that draws tile t asks the L2 to prefetch the input of tile
// t + kPrefetchTiles (one bulk prefetch; see scan_prefetch_tiles below). 0: no prefetch.
//
// kFirstWaveLag: in calls of more than one wave of resident tiles (kMinBlocksPerSM x SMs), tile t
// of the first wave with t >= L (L = kFirstWaveLag eighths of a wave) issues its loads only once
// tile t - L has landed, so that the first wave's loads land in about tile order instead of all
// together (docs/perf-log/2026-11-26.md). 0: every tile loads at once.
//
// kTreeFold: for ops where any order gives the same bits (integer sums, products, min, max), the
// look-back folds what it found in parallel across the warp (each lane its own column, then five
// shuffle rounds) instead of one value at a time. The fold is on the chain's critical path: a
// tile publishes its inclusive prefix only after it. Measured on the H100 (2026-11-26, two runs),
// i32 -> i64 sums, % of memcpy at 2^24 / 2^26 / 2^28: one at a time 92.6 / 94.9-95.1 / 95.9;
// across the warp 93.1-93.3 / 95.2-95.4 / 96.2 (2^22: 25.5 -> 25.2 us). Floating-point ops keep
// the one-at-a-time left fold, which gives the same bits wherever the look-back stopped.
template <int kThreadsV, int kItemsV, int kMinBlocksPerSMV, int kLookbackWindowsV, bool kDeferredPrefixV = true,
          int kPrefetchTilesV = 0, int kFirstWaveLagV = 0, bool kTreeFoldV = false>
struct ScanPolicy {
  static constexpr int kThreads = kThreadsV;
  static constexpr int kItems = kItemsV;
  static constexpr int kMinBlocksPerSM = kMinBlocksPerSMV;
  static constexpr int kLookbackWindows = kLookbackWindowsV;
  static constexpr bool kDeferredPrefix = kDeferredPrefixV;
  static constexpr int kPrefetchTiles = kPrefetchTilesV;
  static constexpr int kFirstWaveLag = kFirstWaveLagV;
  static constexpr bool kTreeFold = kTreeFoldV;
  static constexpr int kTile = kThreads * kItems;
};

// Items per thread: tiles of 32 KiB (4- and 8-byte elements) within the 48 KiB of static shared
// memory a block may have. A 32-bit input whose scan widens to 64 bits (integer sums and
// products) needs shared memory for its 64-bit outputs: 16 KiB of inputs, 32 KiB of outputs.
// 2-byte elements take 32 items (16 KiB): a segmented scan's head bits for a thread fit one word.
constexpr int scan_items(std::size_t element_bytes, std::size_t accum_bytes) {
  return element_bytes >= 8 ? 16 : (element_bytes == 4 && accum_bytes > 4) ? 16 : 32;
}

// Blocks per SM (__launch_bounds__; caps registers at 65536 / (threads * blocks), in steps of 8):
// 6 fit the 32 KiB tiles' shared memory (40 registers); 2-byte elements' 16 KiB tiles fit 8
// (32 registers). Blocked and segmented scans carry (head, value) pairs: 40 registers with
// 4-byte accumulators, 48 (5 blocks) with 8-byte ones. ptxas (sm_90): no spills, except 4 bytes
// in the blocked / segmented 16-bit float sums and products, and in the 64-bit integer inclusive
// products (since their deferred path for interleaved blocks, scan_kernel.cuh).
constexpr int scan_min_blocks(std::size_t element_bytes, std::size_t accum_bytes, bool segmented) {
  return segmented ? (accum_bytes <= 4 ? 6 : 5) : element_bytes == 2 ? 8 : 6;
}

// Threads per block and look-back windows. Whole-array scans of 4-byte elements with 4-byte
// accumulators take 288 threads (9 warps): 36 KiB tiles at 6 blocks per SM, 216 KiB of an SM's
// 228 held in tiles (2026-11-25: f32 2^28 92.2 -> 93.1 % of memcpy; 256 x 36 items was slower:
// 9 chunks per thread meet bank conflicts in the swizzled layout). That leaves room for only 4
// look-back windows (128 predecessors before the look-back waits for an inclusive prefix; 4
// and 16 windows measured the same at 2^20-2^28). 288 x 6 threads per SM cap registers at 32:
// 8-byte accumulators spill there (12-24 bytes), so they keep 256 threads; blocked and
// segmented scans keep their head bits in shared memory and stay at 256 threads too.
constexpr int scan_threads(std::size_t element_bytes, std::size_t accum_bytes, bool segmented) {
  return !segmented && element_bytes == 4 && accum_bytes == 4 ? 288 : 256;
}
constexpr int scan_lookback_windows(std::size_t element_bytes, std::size_t accum_bytes, bool segmented) {
  return scan_threads(element_bytes, accum_bytes, segmented) == 288 ? 4 : 16;
}

// L2 prefetch of the input ahead of the tiles being scanned (every scan: whole-array, blocked and
// segmented; the segment offsets are not prefetched). A block holds its
// tile's shared memory from the moment it issues the loads until its look-back returns, so the
// bytes the SMs can have in flight were the limit (docs/perf-log/2026-11-25.md, second session). A bulk
// prefetch into L2 holds no shared memory and no registers: the DRAM then sees more requests in
// flight, and a block later finds its tile in L2, so it holds its shared memory for less time.
// Measured on the H100 (docs/perf-log/2026-11-25.md, eighth session), % of memcpy at 2^28 / 2^26:
//   f32 sum (36 KiB tiles):        none 93.7 / 91.5; 32-64 tiles ahead 98.2 / 94.8; 96: 97.2 / 94.0;
//                                  128: 95.3 / 92.5; 160: 92.4 / 89.9; 256: 81.7; 512: 68.1
//   i32 -> i64 sum (16 KiB in):    none 89.6 / 88.3; 64: 95.0 / 93.2; 128-192: 95.7-95.8 / 93.8-93.9;
//                                  256: 95.0 / 93.3; 320: 93.3 / 91.6; 512: 80.9
// Too far ahead, the prefetched lines are evicted before use and read twice. About 2 MiB of input
// ahead sits inside both optimal ranges (f32: 56 tiles, i32 -> i64: 128). The same rule for the
// segmented f32 sum (2^20 segments of 0-512) took it from 89.4 to 93.8 %; the blocked i32 -> i64
// sums of 2^30 stayed at 97.7-98.0 % (4350 -> 4358 us).
// Calls of fewer than kPrefetchMinWaves waves of resident tiles do not prefetch: at 2^22 the
// prefetch cost 2-5 % (f32 and i32), and at 2^24 f32 (2.3 waves) 1.5 % while i32 (5 waves) gained 3 %.
constexpr int kPrefetchAheadBytes = 2 << 20;
constexpr int kPrefetchMinWaves = 4;
constexpr int scan_prefetch_tiles(std::size_t element_bytes, int threads, int items) {
  return static_cast<int>(kPrefetchAheadBytes / (element_bytes * static_cast<std::size_t>(threads * items)));
}

// The first wave's lag (ScanPolicy::kFirstWaveLag), in eighths of a wave. At the start of a call
// every resident block loads its tile at once; the tiles then land together, late (the DRAM
// serves them interleaved), and wait together for the look-back, so the SMs hold their shared
// memory with no loads in flight and the wave repeats for several rounds (foldkit-scan-trace,
// docs/perf-log/2026-11-26.md: the first ~40 us of an f32 2^26 scan ran at ~65 % of the copy rate, the
// rest at ~97 %). With a lag, the first wave's tiles land in about tile order, the chain follows
// them, and blocks retire one by one. Measured on the H100, % of memcpy (2^24 / 2^26 / 2^28):
//   f32 sum, 36 KiB tiles:      none 84.7 / 95.0 / 98.2; 1/8: 78.9 / 94.1 / 98.0; 2/8: 86.6 / 97.1 / 98.8;
//                               3/8: 90.3 / 97.5 / 98.9; 4/8: 89.5 / 96.2 / 98.5
//   i32 -> i64 sum, 16 KiB in:  none 89.6 / 94.0 / 95.6; 1/8: 83.8 / 92.5 / 95.2; 2/8: 92.9 / 95.0 / 95.9;
//                               3/8: 92.6 / 94.8 / 95.9; 4/8: 91.0 / 94.7 / 95.7; 6/8: 90.2 / 94.1 / 95.6
// (too short a lag starves the DRAM: 1/8 wave of tiles in flight is too few bytes.)
constexpr int kFirstWaveLagEighths = 3;

// Where the look-back folds across the warp (ScanPolicy::kTreeFold; only ops where any order
// gives the same bits use it): 8-byte accumulators, where it was measured (the widening integer
// scans) and costs no spills. The 4-byte integer min/max at 288 threads x 6 blocks (32 registers)
// spilled 12-16 bytes with it (ptxas, sm_90).
constexpr bool scan_tree_fold(std::size_t accum_bytes) { return accum_bytes == 8; }

// One policy's constants, named once so that the prefetch distance follows its tile.
template <std::size_t kElementBytes, int kThreads, int kItems, int kMinBlocks, int kWindows, bool kTreeFold = false>
using PrefetchingScanPolicy = ScanPolicy<kThreads, kItems, kMinBlocks, kWindows, true,
                                         scan_prefetch_tiles(kElementBytes, kThreads, kItems), kFirstWaveLagEighths,
                                         kTreeFold>;

template <std::size_t kElementBytes, std::size_t kAccumBytes, bool kSegmented>
using ScanPolicyFor =
    PrefetchingScanPolicy<kElementBytes, scan_threads(kElementBytes, kAccumBytes, kSegmented), scan_items(kElementBytes, kAccumBytes),
                          scan_min_blocks(kElementBytes, kAccumBytes, kSegmented),
                          scan_lookback_windows(kElementBytes, kAccumBytes, kSegmented), scan_tree_fold(kAccumBytes)>;
// Scans with a user's operator (scan_custom.cuh; T in, T accumulated, T out, 4 or 8 bytes).
// Whole-array: 256 threads, so that 6 blocks per SM leave 40 registers. A user's combine may
// need more registers than a built-in one: at 288 threads' cap of 32, xor on uint32_t spilled
// 12-44 bytes (ptxas, sm_90), float addition none. Blocked and segmented: the built-in
// segmented policy of the same sizes.
template <std::size_t kElementBytes, bool kSegmented = false>
using CustomScanPolicyFor =
    std::conditional_t<kSegmented, ScanPolicyFor<kElementBytes, kElementBytes, true>,
                       PrefetchingScanPolicy<kElementBytes, 256, scan_items(kElementBytes, kElementBytes),
                                             scan_min_blocks(kElementBytes, kElementBytes, false), 16>>;
// The smallest tile of any scan of element_bytes-byte elements: the workspace holds a slot per
// tile of this size, enough for every op's policy.
constexpr int scan_tile_elements(std::size_t element_bytes) {
  return 256 * (element_bytes >= 8 ? 16 : element_bytes == 4 ? 16 : 32);
}

}  // namespace foldkit::cuda::tuning
