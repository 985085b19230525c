// The tensor scans' tile kernel's parameter (device/tensor_scan_kernel.cuh), filled by the host
// (src/cuda/tensor_scan.cu) for the built-in ops and for the user functors alike. Plain data: no
// CUDA headers beyond the runtime API's types.
#pragma once

#include <cstdint>

#include "foldkit/cuda/device/scan_layout.hpp"         // ScanHeader
#include "foldkit/cuda/tuning/tensor_scan_tuning.hpp"  // TensorScanGeometry
#include "foldkit/tensor.hpp"                          // kMaxRank

namespace foldkit::cuda::tensor_scan {

// One launch of the tile kernel: a matrix of `rows` (the scanned axis) x `cols` (the innermost
// kept dimension), repeated over the outer kept dimensions, all strides in elements.
struct TileArgs {
  const void* in = nullptr;
  void* out = nullptr;
  std::int64_t rows = 1, cols = 1;
  std::int64_t in_rs = 0, out_rs = 0;  // along the scanned axis
  std::int64_t in_cs = 0, out_cs = 0;  // along the columns
  int outer_rank = 0;
  std::int64_t outer_size[kMaxRank] = {}, outer_in[kMaxRank] = {}, outer_out[kMaxRank] = {};
  std::int64_t row_tiles = 1, col_tiles = 1;
  unsigned num_tiles = 0;       // outer count x row_tiles x col_tiles (the grid)
  int tc_shift = 0;             // log2 of the thread columns (TC)
  int vec = 1;                  // columns per thread (tuning::TensorScanGeometry::vec)
  int in_chunks = 8;            // 16-byte input chunks per thread (tuning::TensorScanGeometry::in_chunks)
  bool in_vec = false;          // whole 16-byte chunks of the input may be copied as such
  bool out_vec = false;         // whole chunks of the output may be stored as vectors
  bool exclusive = false;
  int prefetch_tiles = 0;       // L2-prefetch the tile this many tickets ahead (0: none)
  unsigned first_wave = 0;      // chained calls: the tiles of the first wave of resident blocks
  unsigned first_wave_lag = 0;  // ... of which tile t >= lag waits for tile t - lag to land (0: none)
  unsigned long long init_bits = 0;  // exclusive: the init as the accumulator type, its bytes
  ScanHeader* header = nullptr;      // workspace (chained tiles only; null when row_tiles == 1)
};

// Sets a's tile fields from geometry g for `outer` matrices (tiles <= 2^31 - 1, checked by the
// caller): the tile shape and count, the depth, the L2 prefetch (a.in_vec set before) and the
// first wave's lag.
inline void set_tile_geometry(TileArgs& a, const tuning::TensorScanGeometry& g, std::int64_t outer, bool wide_accum,
                              int sm_count) {
  const std::int64_t tiles = outer * g.row_tiles * g.col_tiles;
  a.row_tiles = g.row_tiles;
  a.col_tiles = g.col_tiles;
  a.num_tiles = static_cast<unsigned>(tiles);
  a.tc_shift = g.tc_shift;
  a.vec = g.vec;
  a.in_chunks = g.in_chunks;
  a.prefetch_tiles = tuning::tensor_scan_prefetch_tiles(g, wide_accum, tiles, sm_count, a.in_vec);
  const std::int64_t wave = tuning::tensor_scan_first_wave(g.in_chunks, wide_accum, sm_count);
  a.first_wave = static_cast<unsigned>(wave);
  a.first_wave_lag = static_cast<unsigned>(
      tuning::tensor_scan_first_wave_lag(tiles, wave, g.row_tiles > 1, tuning::kTensorScanFirstWaveLagEighths));
}

}  // namespace foldkit::cuda::tensor_scan
