// Tuning of the segmented reduction (src/cuda/segmented_reduce_kernel.cuh): every constant of its
// launch shape in one place. Plain C++ (the host sizes the workspace from it).
//
// The kernel cuts the MERGE PATH of the call (the n elements and the num_segments segment ends,
// in order: segment s's elements, then its end) into tiles of seg_tile_items() items; a block takes
// kSegTilesPerBlock consecutive tiles (begin/end pairs: a run of tiles, see below). A tile is staged in shared memory:
// kSegThreads threads x seg_items() elements, 16-byte aligned, so a tile of elements is at most
// seg_tile_items() = kSegThreads * seg_items() - (16 / element bytes) items (its first element
// may sit up to one 16-byte vector into the buffer). The segment ends of the tile share the same
// buffer (a tile's elements plus its ends are at most seg_tile_items()), as 32-bit offsets.
//
// The sizes follow the scans' findings (include/foldkit/cuda/tuning/scan_tuning.hpp): 32 KiB tiles,
// 6 blocks per SM, L2 prefetch of the input ~2 MiB ahead of the tiles. Measured on the H100
// (2026-11-27, perf-log/2026-11-27.md; f32 sums, 2^22 segments of 0-128 / the power-law mix):
// 75 % / 72 % of the read ceiling, the kernel 58 % issue-busy; tiles of 128 / 256 / 512 threads
// (16 / 32 / 64 KiB; launch bounds for 12 / 6 / 3 blocks per SM) 486 / 462 / 487 us and 155 / 139 / 138 us; the
// prefetch distance 0-512 tiles within a few points of the library's (foldkit-bench axes
// --sweep); the tile pipeline alone (no walk, scan or writes) 82 % / 76 %, so no setting of
// these constants meets issue #22's 85 % (docs/perf.md, Known gaps). kSegSmallFold not swept.
#pragma once

#include <cstddef>
#include <cstdint>

#include "foldkit/ops.hpp"

namespace foldkit::cuda::tuning {

inline constexpr int kSegThreads = 256;

// Elements per thread and tile: 32 KiB of 4-byte elements (8192), 32 KiB of 8-byte ones (4096),
// 16 KiB of 2-byte ones (8192: their segment ends, 4 bytes each, need the 32 KiB buffer anyway).
constexpr int seg_items(std::size_t element_bytes) { return element_bytes >= 8 ? 16 : 32; }
// Positions of the shared buffer, and the merge-path items of one tile.
constexpr int seg_slots(std::size_t element_bytes) { return kSegThreads * seg_items(element_bytes); }
constexpr int seg_tile_items(std::size_t element_bytes) {
  return seg_slots(element_bytes) - static_cast<int>(16 / element_bytes);
}
// Bytes of the shared buffer (elements and 32-bit ends; +128: the swizzled element chunks fill
// whole 128-byte groups before the ends start).
constexpr int seg_buffer_bytes(std::size_t element_bytes) {
  return seg_slots(element_bytes) * static_cast<int>(element_bytes > 4 ? element_bytes : 4) + 128;
}

// Blocks per SM for __launch_bounds__ (caps registers at 65536 / (256 x blocks)): 6 x 33 KiB of
// shared memory fit an SM's 228 KiB. Means (the division when a segment is finished) and
// argmin/argmax ({value, int64 index}) get 4 (64 registers): at 5-6 their kernels spilled 4-56
// bytes (ptxas sm_90); the sums, products, minima and maxima 6 (the begin/end form, which keeps
// 64-bit input positions, 5). The offsets form's minima and maxima of 2- and 8-byte elements get 5
// too: with blocks of several tiles (kSegTilesPerBlock) they spilled 4-16 bytes at 6 (40 registers).
constexpr int seg_min_blocks(bool by_offsets, ReduceOp op, std::size_t element_bytes) {
  const bool mean_or_arg = op == ReduceOp::mean || op == ReduceOp::argmin || op == ReduceOp::argmax;
  const bool min_or_max = op == ReduceOp::min || op == ReduceOp::max;
  return mean_or_arg ? 4 : !by_offsets ? 5 : (min_or_max && element_bytes != 4) ? 5 : 6;
}

// L2 prefetch (offsets form): the block of tile t asks the L2 for the elements of tile
// t + seg_prefetch_tiles(); only in calls of at least kSegPrefetchMinWaves waves of resident
// blocks (the scans' rule: ~2 MiB ahead).
inline constexpr int kSegPrefetchAheadBytes = 2 << 20;
inline constexpr int kSegPrefetchMinWaves = 4;
constexpr int seg_prefetch_tiles(std::size_t element_bytes) {
  return kSegPrefetchAheadBytes / (seg_slots(element_bytes) * static_cast<int>(element_bytes));
}

// Begin/end pairs: the merge path's length (sum of the lengths + num_segments) is known only on
// the device, so the grid has a fixed number of blocks (as many as the offsets form would use for
// n + num_segments items, at least kSegBeginEndMinBlocks) and each block takes a run of
// consecutive tiles, as many as the device finds necessary.
inline constexpr int kSegBeginEndMinBlocks = 1;

// Offsets form: consecutive tiles a block takes (its next tile's split copied in with the current
// tile's elements, so that only a block's first tile waits for its split before its copies).
// `foldkit-bench axes --sweep` times 1, 2, 4, 8 and 16: on the H100 (2026-11-28, f32 sums) 2^22
// segments of 0-128 took 466 / 431 / 454 / 529 us at 1 / 2 / 4 / 8, the power-law mix 138.9 /
// 137.7 us at 1 / 2 and more above (fewer blocks than 2 a tile leave the last wave short). On the
// H200: 400 / 362 / 348 / 345 us at 1 / 2 / 4 / 8 and 123 / 119 / 123 / 142 us: 2 is the
// best for the power-law mix on both, within 4 % of the best for 2^22 segments on the H200.
inline constexpr int kSegTilesPerBlock = 2;

inline constexpr int kSegPrepareThreads = 256;  // the validation / split kernel
// Offsets a validation block takes (8 a thread, loaded at once): with 256 (one a thread) the
// kernel took 31-41 us on 2^22 segments against 19-27 for the searches it replaced (ncu, H100,
// 2026-11-28): 16 waves of blocks that each wait for one load.
inline constexpr int kSegPrepareSegments = 2048;

// A segment that spans tiles is finished by the tile where it ends, which folds the partials
// the earlier tiles published: up to this many by the one thread that finished the segment (a
// few round trips to L2, no barrier), more by the whole block after its tiles.
inline constexpr int kSegSmallFold = 16;

// ---- The group path (src/cuda/segmented_group_kernel.cuh; offsets form, every op but
// argmin/argmax) ----
// Each short segment is folded where it lies by a group of kSegGroupLanes lanes (16-byte loads of
// its aligned vectors, kSegGroupLoads a lane in flight, seg_group_batches() batches of 32 / lanes
// segments a warp at a time, the next step's offsets loaded before this step's data); segments
// longer than seg_group_long_items() go to block chunks. From foldkit-seg-group-probe on the H200
// (2026-11-29, 2^22 segments of 0-128 f32 / the power-law mix): the merge path read 67.4 / 60.1 %
// of the ceiling; the group path with 8 lanes a segment 81.3 / 48.2 % (its group kernel alone
// 84.4 % on the first; on the second 60 us for the 2^20 short segments, against 17 us at 2 lanes
// a segment): hence the short steps below. With them (f50969b, one probe run): 78.7 / 61.1 %
// against the merge path's 67.1 / 60.0 %, so the group path is the default for every op but
// argmin/argmax (which the merge path keeps, with the begin/end form).
inline constexpr bool kSegGroupDefault = true;
inline constexpr int kSegGroupLanes = 8;
inline constexpr int kSegGroupLoads = 4;
// Short steps: a warp's step of 32 / kSegGroupShortLanes segments whose longest fits
// kSegGroupShortLanes x kSegGroupShortLoads vectors is folded kSegGroupShortLanes lanes a segment,
// all at once (the power-law mix's 2^20 segments of 0-16 f32: at 8 lanes a segment a warp had 1
// vector a lane in flight, and the group kernel alone took 60 us, probe G=2 17 us).
inline constexpr int kSegGroupShortLanes = 2;
inline constexpr int kSegGroupShortLoads = 4;
constexpr int seg_group_short_vectors() { return kSegGroupShortLanes * kSegGroupShortLoads; }
// But steps of 16 cost the other steps: 2^22 segments of 0-128 took 410 us with them against 301
// without (H200, 2026-11-29; nearly every step there is long, and its two sets of 8 run one after
// the other with 40-64 bytes spilled at 80 registers, ptxas sm_90). So a call takes short steps
// only when at least kSegGroupShortShare (a fraction, 1 / this) of its segments are short
// (prepare_group_kernel counts them): two group kernels are launched, and the one not meant for
// the call returns at once.
inline constexpr int kSegGroupShortShare = 2;
// __launch_bounds__ blocks per SM of the group path's prepare kernel (a resident grid, each
// block a 16 KiB tile of offsets in shared memory and the next tile's loads in flight).
inline constexpr int kSegGroupPrepareMinBlocks = 4;
inline constexpr int kSegGroupShortMinBlocks = 4;  // (its __launch_bounds__; see short_steps_kernel)
// Batches a step: 2, or 1 for 8-byte elements (at 2 their kernels spilled 4-8 bytes at 80
// registers, ptxas sm_90: 64-bit accumulators and positions).
constexpr int seg_group_batches(std::size_t element_bytes) { return element_bytes >= 8 ? 1 : 2; }
// __launch_bounds__ blocks per SM of the group kernel: at 3 ptxas issues all 8 (2-, 4-byte
// elements) / 4 (8-byte) loads of a step before the first use (SASS sm_90, 64-80 registers, no
// spills); without a minimum it interleaved each load with the previous one's adds (the probe).
// At 4 (64 registers) the 2- and 4-byte kernels spill 4 bytes, in the divergent-shuffle path
// after the loop; all 8 loads of a step still issue first (SASS sm_90). The f32 kernel at 4:
// 283.8 us alone and 291.7 in the call against 285.8 / 295.0 at 3 (probe, H200 2026-11-29).
// foldkit-bench axes, A/B of 2 rounds (H200 2026-11-30, with the chunk kernel's branchless
// fold): 2^22 segments of 0-128 296.1 -> 292.6 us.
inline constexpr int kSegGroupMinBlocks = 4;
// Segments longer than this many bytes are summed in block chunks: a group's rounds stay few
// (a warp waits for its longest group), 4 KiB = 8 rounds of a lane's 4 loads.
inline constexpr int kSegGroupLongBytes = 4096;
constexpr std::int64_t seg_group_long_items(std::size_t element_bytes) {
  return kSegGroupLongBytes / static_cast<std::int64_t>(element_bytes);
}
// A chunk: at least this many bytes (a block's 256 threads x kSegGroupChunkLoads 16-byte loads),
// at most kSegGroupMaxChunks chunks a segment (longer segments get longer chunks), so that the
// segment's last chunk folds its partials in one round.
inline constexpr int kSegGroupChunkLoads = 8;
inline constexpr int kSegGroupChunkBytes = kSegThreads * kSegGroupChunkLoads * 16;
inline constexpr int kSegGroupMaxChunks = kSegThreads;
// __launch_bounds__ blocks per SM of the chunk kernel (the probe's long_kernel_b4): 4, where
// ptxas issues all 8 loads of a round before the first use for every type (SASS sm_90). For the
// 8-byte ones only since their loads past the chunk read its last vector again instead of being
// predicated off (fold_chunk_slot): predicated, ptxas moved each loaded pair behind its load, and
// 1-2 of 8 were in flight.
constexpr int seg_group_chunk_min_blocks(std::size_t) { return 4; }
constexpr std::int64_t seg_group_chunk_items(std::size_t element_bytes) {
  return kSegGroupChunkBytes / static_cast<std::int64_t>(element_bytes);
}

}  // namespace foldkit::cuda::tuning
