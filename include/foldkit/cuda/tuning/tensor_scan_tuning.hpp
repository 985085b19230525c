// Tuning of the CUDA tensor scans' tile kernel (foldkit/cuda/device/tensor_scan_kernel.cuh): the one place
// its constants live, and the geometry (tile shape and count) both the launch and
// tensor_scan_workspace_bytes compute from them. Plain C++ (host code and the kernel use it).
//
// The kernel scans a matrix of R rows (the scanned axis) by C columns (the innermost kept
// dimension; the outer kept dimensions repeat it) in tiles of rows_per_tile x cols_per_tile. A
// block of kTensorScanThreads threads is TR x TC threads (TC along the columns, each thread one
// vector of `vec` columns and K consecutive rows), so cols_per_tile = TC * vec and rows_per_tile =
// TR * K. The tile passes through shared memory in both directions (16-byte chunks, swizzled), so
// global memory is read and written in coalesced runs of TC * 16 bytes per row. Tiles along the
// scanned axis are chained by a decoupled look-back per column tile (their states live in the
// workspace); a matrix whose rows fit one tile needs no workspace.
//
// Measured on the H100 with `foldkit-bench axes` (cumsum over dim 0) and foldkit-tensor-scan-trace
// where a comment gives a number; the thread count, the L2 prefetch distance and the look-back
// scratch are the core scan's measured policy (tuning/scan_tuning.hpp), not swept here.
#pragma once

#include <cstddef>
#include <cstdint>

namespace foldkit::cuda::tuning {

inline constexpr int kTensorScanThreads = 256;
// 16-byte chunks of input per thread. Accumulators as wide as the element: shallow tiles of 8
// (32 KiB, ~42 KiB of shared memory a block: 4 blocks per SM) or deep ones of 16 (64 KiB, ~74 KiB:
// 3 per SM; 228 KiB per SM). Accumulators twice as wide (32-bit integer sums and products, 16-bit
// floats accumulated in float): 4 (16 KiB of input, 32 KiB of accumulators) at 3 blocks per SM.
// Cumsum f32 over dim 0 on the H100 (2026-11-27, deep against shallow, % of the copy ceiling):
// chains of few column tiles gain (2^22, 16) 58 -> 84, (2^18, 256) 72 -> 82 (the look-back
// passes half as many tiles per byte); (16, 2^22) falls 96 -> 75 (a deep tile holds 32 rows at
// least: half idle); (16384, 4096) and (4096, 16384) lose 2-4 points.
inline constexpr int kTensorScanShallowChunks = 8;
inline constexpr int kTensorScanDeepChunks = 16;
inline constexpr int kTensorScanWideChunks = 4;
// Chained tiles are deep when the matrix has at most this many column tiles (chains).
inline constexpr std::int64_t kTensorScanDeepMaxChains = 64;
// __launch_bounds__ blocks per SM for tiles of `chunks` (shared memory allows that many).
constexpr int tensor_scan_min_blocks(int chunks, bool wide_accum) {
  return wide_accum || chunks >= kTensorScanDeepChunks ? 3 : 4;
}
// At most this many thread columns (TC): wider tiles' per-column state would not fit the shared
// memory budget above.
inline constexpr int kTensorScanMaxTC = 128;
// When the scanned axis needs several row tiles, TC is capped here so that a tile has at least
// 256 / 4 x 8 = 512 rows (deep tiles 1024; f32: 16 columns). A look-back folds (tiles in flight per chain) x (columns
// per tile) values, and the tiles in flight per chain fall as the chains (column tiles) grow, so
// its cost grows with the square of the tile's width. Cumsum f32 over dim 0 on the H100: at 32
// (128 columns) (2^18, 256) read 4.6 % of the copy ceiling (471912b); at 8, 59-80 % from
// (2^20, 64) to (2^12, 2^14); at 4, 67-89 % (2026-11-27, kTensorScanLookbackBytes 4096; 8192
// changed nothing by more than 3 points). With deep tiles and the one-round window, 8 gained
// (2^22, 16) 88 -> 90 and lost 5-9 points on four other shapes (2026-11-27).
inline constexpr int kTensorScanChainMaxTC = 4;
// The widest chained tile the kernel holds state for (its shared-memory arrays are sized by it):
// `foldkit-bench axes --sweep` times chain widths up to this one.
inline constexpr int kTensorScanChainTCLimit = 8;
static_assert(kTensorScanChainMaxTC <= kTensorScanChainTCLimit);
// Bytes of predecessor values a look-back round gathers (all loads of a round in flight at once).
inline constexpr int kTensorScanLookbackBytes = 4096;
// Values per thread a look-back loads in its first round (each: its aggregate and inclusive
// prefix words), all in flight at once: the predecessors within reach of this one round need no
// status words and no second round. Deep tiles only (they carry the long chains): 16 8-byte words
// held per thread (85 registers). In shallow tiles (64 registers) and wide-accumulator ones the
// window spilled 12-24 bytes in the f64 min/max and i32 sum kernels even at one load a thread
// (ptxas sm_90): they look back stepwise only (0). Accumulators of `words` 8-byte words.
constexpr int tensor_scan_window_loads(int chunks, bool wide_accum, int words) {
  return wide_accum || chunks < kTensorScanDeepChunks ? 0 : 16 / (2 * words);
}
// L2 prefetch of the input of the tile that will be drawn this many bytes of tiles ahead (0:
// none), in calls of at least kTensorScanPrefetchMinWaves waves of tiles. Off: on the H200
// (foldkit-bench axes --sweep, 2026-11-29, cumsum f32 over dim 0) no prefetch was the fastest
// geometry of 7 of the 9 chained cases, 2.3-4.6 % faster than the 2 MiB ahead that was the
// core scan's distance ((16384, 4096) 164.7 -> 158.3 us, (2^18, 256) 175.5 -> 174.1, (2^24, 4)
// 185.3 -> 181.5); in foldkit-bench axes the unchained (256, 2^18), 4096 tiles of one row tile
// each, went 172.2 -> 142.9 us (74.7 -> 90.1 % of the copy ceiling), the chained ones 0-4 %. On
// the H100 (2026-11-27) 2 MiB had been 0.5 % faster than none at (2^22, 16).
inline constexpr std::int64_t kTensorScanPrefetchAheadBytes = 0;
inline constexpr int kTensorScanPrefetchMinWaves = 4;

// The tile shape for a matrix of `rows` x `cols`: elements of elem_bytes, accumulators of
// accum_bytes. narrow_vec: the vector width when every line is `cols` (< 16 / elem_bytes, a power
// of two) contiguous elements and the lines lie back to back in and out (a thread then owns whole
// rows: vec = cols, TC = 1); 0 otherwise (vec = 16 / elem_bytes, the columns padded up to vectors).
// axis_major: the scanned axis is the more contiguous dimension of the input (element-wise copies
// are then coalesced along it: TC = 1).
struct TensorScanGeometry {
  int in_chunks = 8;      // 16-byte input chunks per thread (the tile's depth)
  int vec = 1;            // columns per thread
  int tc_shift = 0;       // log2(TC)
  int rows_per_thread = 1;
  std::int64_t rows_per_tile = 1, cols_per_tile = 1;
  std::int64_t row_tiles = 1, col_tiles = 1;
};

constexpr int tensor_scan_log2(std::int64_t v) {
  int s = 0;
  while ((std::int64_t{1} << s) < v) ++s;
  return s;
}

// The geometry at a given depth (in_chunks) and widest chained tile (chain_max_tc thread columns,
// a power of two up to kTensorScanChainTCLimit).
constexpr TensorScanGeometry tensor_scan_geometry_at(int in_chunks, std::size_t elem_bytes, std::int64_t rows,
                                                     std::int64_t cols, int narrow_vec, bool axis_major,
                                                     int chain_max_tc = kTensorScanChainMaxTC) {
  TensorScanGeometry g{};
  g.in_chunks = in_chunks;
  const int chunk_elems = 16 / static_cast<int>(elem_bytes);
  g.vec = narrow_vec > 0 ? narrow_vec : chunk_elems;
  g.rows_per_thread = in_chunks * chunk_elems / g.vec;
  int tc_shift = 0;
  if (narrow_vec == 0 && !axis_major) {
    const std::int64_t vecs = (cols + g.vec - 1) / g.vec;
    tc_shift = tensor_scan_log2(vecs);
    const int max_shift = tensor_scan_log2(kTensorScanMaxTC);
    if (tc_shift > max_shift) tc_shift = max_shift;
    const auto tile_rows = [&](int s) { return static_cast<std::int64_t>(kTensorScanThreads >> s) * g.rows_per_thread; };
    const int chain_shift = tensor_scan_log2(chain_max_tc);
    // Rows that need several tiles at this width: the widest tile that holds them all if that
    // is no narrower than a chained one (no look-back, and no idle rows of threads: (256, 2^18)
    // in tiles of 512 rows read 75 % of the copy ceiling, in tiles of 256 rows 82 %), else
    // chained tiles of kTensorScanChainMaxTC.
    while (rows > tile_rows(tc_shift) && tc_shift > chain_shift) --tc_shift;
  }
  g.tc_shift = tc_shift;
  g.rows_per_tile = static_cast<std::int64_t>(kTensorScanThreads >> tc_shift) * g.rows_per_thread;
  g.cols_per_tile = (std::int64_t{1} << tc_shift) * g.vec;
  g.row_tiles = rows > 0 ? (rows + g.rows_per_tile - 1) / g.rows_per_tile : 0;
  g.col_tiles = cols > 0 ? (cols + g.cols_per_tile - 1) / g.cols_per_tile : 0;
  return g;
}

// The geometry: the depth (kTensorScan*Chunks above), then the tile shape at that depth. Rows that
// need several shallow tiles: deep tiles in matrices of few chains. Rows that fit one shallow
// tile: a deep one where it holds them with no more idle rows (it is then twice as wide).
constexpr TensorScanGeometry tensor_scan_geometry(std::size_t elem_bytes, std::size_t accum_bytes, std::int64_t rows,
                                                  std::int64_t cols, int narrow_vec, bool axis_major) {
  if (accum_bytes > elem_bytes)
    return tensor_scan_geometry_at(kTensorScanWideChunks, elem_bytes, rows, cols, narrow_vec, axis_major);
  const auto shallow = tensor_scan_geometry_at(kTensorScanShallowChunks, elem_bytes, rows, cols, narrow_vec, axis_major);
  const auto deep = tensor_scan_geometry_at(kTensorScanDeepChunks, elem_bytes, rows, cols, narrow_vec, axis_major);
  if (shallow.row_tiles > 1) return shallow.col_tiles <= kTensorScanDeepMaxChains ? deep : shallow;
  return deep.row_tiles <= 1 && deep.rows_per_tile <= shallow.rows_per_tile ? deep : shallow;
}

// A wave of resident tiles of depth in_chunks on `sm_count` SMs.
constexpr std::int64_t tensor_scan_first_wave(int in_chunks, bool wide_accum, int sm_count) {
  return static_cast<std::int64_t>(sm_count) * tensor_scan_min_blocks(in_chunks, wide_accum);
}

// The tiles ahead whose input a tile prefetches into L2 (0: none): in calls of `tiles` tiles of
// the geometry's depth at least kTensorScanPrefetchMinWaves waves long on `sm_count` SMs, when
// whole 16-byte chunks may be copied (in_vec).
// ahead_bytes: the distance (kTensorScanPrefetchAheadBytes; the tests pass their own).
constexpr int tensor_scan_prefetch_tiles(const TensorScanGeometry& g, bool wide_accum, std::int64_t tiles, int sm_count,
                                         bool in_vec, std::int64_t ahead_bytes = kTensorScanPrefetchAheadBytes) {
  const std::int64_t tile_bytes = static_cast<std::int64_t>(kTensorScanThreads) * g.in_chunks * 16;
  const std::int64_t wave = tensor_scan_first_wave(g.in_chunks, wide_accum, sm_count);
  return in_vec && tiles >= kTensorScanPrefetchMinWaves * wave ? static_cast<int>(ahead_bytes / tile_bytes) : 0;
}

// The first wave's lag, in eighths of a wave of resident tiles (0: none): in a chained call of
// more than one wave, first-wave tile t waits until tile t - lag has landed before it loads, so
// that the first wave's tiles land in about ticket order instead of all at once (the core scan's
// kFirstWaveLagEighths, tuning/scan_tuning.hpp: f32 2^26 95.0 -> 97.5 % there). The column scans'
// trace shows the same pile-up (first wave: 14.5-15.6 us from start to landed, later waves
// 6.4-7.0; tensor-scan-trace-h100-2026-11-27g.txt). `foldkit-bench axes --sweep`, H100
// 2026-11-27 (bench/results/h100-2026-11-27i-axes-sweep-lag*.txt), % of the copy ceiling, lag 0 / 2 / 3 / 4
// eighths: (2^24, 4) 83.3 / 84.0 / 84.8 / 83.7; (2^20, 64) 77.3 / 79.0 / 80.5 / 80.6;
// (2^18, 256) 81.1 / 81.7 / 81.5 / 82.4; (1e6, 8) 67.9 / 68.2 / 75.7 / 76.7; (1e6, 32)
// 74.5 / 76.4 / 78.2 / 77.9. 3 and 4 are within noise of each other; 3 is the better on the
// shape nearest its bar ((2^24, 4)).
inline constexpr int kTensorScanFirstWaveLagEighths = 3;
// The first wave's lag (tiles; 0: none) of a call of `tiles` chained tiles.
constexpr std::int64_t tensor_scan_first_wave_lag(std::int64_t tiles, std::int64_t first_wave, bool chained, int eighths) {
  return chained && tiles > first_wave ? first_wave * eighths / 8 : 0;
}

// Workspace bytes the look-back needs for `outer` repetitions of that matrix: the core scan's
// 256-byte header (ticket and epoch), then per tile two status words and two flagged words per
// 32-bit word of every column's accumulator (its aggregate and its inclusive prefix). 0 when the
// rows fit one tile.
constexpr std::size_t kTensorScanHeaderBytes = 256;
constexpr std::size_t tensor_scan_tile_words(const TensorScanGeometry& g, std::size_t accum_bytes) {
  return 2 + 2 * static_cast<std::size_t>(g.cols_per_tile) * ((accum_bytes + 3) / 4);
}
constexpr std::size_t tensor_scan_state_bytes(const TensorScanGeometry& g, std::int64_t outer, std::size_t accum_bytes) {
  if (g.row_tiles <= 1) return 0;
  const auto tiles = static_cast<std::size_t>(outer * g.row_tiles * g.col_tiles);
  return kTensorScanHeaderBytes + tiles * tensor_scan_tile_words(g, accum_bytes) * 8;
}

}  // namespace foldkit::cuda::tuning
