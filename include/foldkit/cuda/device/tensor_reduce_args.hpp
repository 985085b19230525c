// What a tensor-reduction kernel is launched with (tensor_reduce_kernels.cuh): the family, the
// dimensions and the launch shape the host picked from the plan (src/cuda/tensor_reduce.cu).
// Plain C++ (no device code): the library's host code fills it, and the header-only user-functor
// path (foldkit/cuda/tensor_reduce_custom.cuh) receives it from the library and launches it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "foldkit/cuda/tuning/tensor_reduce_tuning.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit::cuda::tensor {

enum class Family : int { rows_packed, rows_dense, rows_group, rows_block, outer, outer_flat, generic };

// Outer splits of argmin/argmax over 2- and 4-byte elements (their packed 64-bit keys select
// whatever the order) meet in one atomicMax slot a column; every other op's splits leave their
// partials for the last split to fold. One rule for the kernel (outer_kernel) and the workspace
// the host sizes for it (src/cuda/tensor_reduce.cu).
constexpr bool outer_splits_meet_in_slots(bool arg, std::size_t element_bytes) {
  return arg && (element_bytes == 2 || element_bytes == 4);
}

// Dimensions outermost first (sizes and strides in elements).
struct Dims {
  int rank = 0;
  std::int64_t size[kMaxRank] = {};
  std::int64_t in[kMaxRank] = {};
  std::int64_t out[kMaxRank] = {};
  std::int64_t out2[kMaxRank] = {};
};

// Everything a kernel needs, passed by value (__grid_constant__: read from the parameter bank).
struct Launch {
  const void* in = nullptr;
  void* out = nullptr;   // the result (argmin/argmax: the int64 index)
  void* out2 = nullptr;  // arg_reduce's values, or null
  std::int64_t out_numel = 0;
  std::int64_t reduce_numel = 0;  // positions per output
  // rows families: `kept` = the kept dims; `red` = the reduced dims OUTSIDE the run; run = the
  // innermost reduced dim's length (input stride 1). outer: `kept` = the kept dims outside the
  // contiguous column dim (the "batches"); `red` = all reduced dims; cols/col_out/col_out2 = the
  // column dim. generic: `kept` and `red` = all of them.
  Dims kept;
  Dims red;
  std::int64_t run = 1;
  std::int64_t cols = 1, col_out = 0, col_out2 = 0;
  // Launch shape.
  int group_shift = 0;          // rows-group: G = 1 << group_shift lanes per output
  std::int64_t chunks = 1;      // rows-block: blocks per output; outer: splits of the reduced dim
  int tx_shift = 0;             // outer: TX = 1 << tx_shift threads across column vectors;
                                // outer-flat: a row is 1 << tx_shift vectors
  std::int64_t col_tiles = 1;   // outer: blocks across the columns
  std::int64_t batches = 1;     // outer: product of `kept`
  // Split launches: arrival counters (unsigned) at ws, partials at ws + partials_offset
  // (outer-flat: its start ticket at ws, its flagged slots at ws + partials_offset).
  void* ws = nullptr;
  std::int64_t partials_offset = 0;
};

// The launch the host chose: family, vector loads or not, grid and block, and the kernel's
// arguments (the data pointers are filled in just before the launch).
struct Choice {
  Family family = Family::generic;
  bool vec = false;
  unsigned grid = 1;
  unsigned block = tuning::kTensorThreads;  // outer-flat: tuning::kOuterFlatThreads
  Launch launch;
};

// rows-block's pointer walk (tensor_reduce_kernels.cuh, kContig): whole vectors, and every
// output one contiguous run (no reduced dim outside the run). The planner and the launch ask here.
inline bool rows_block_contiguous(const Choice& c) { return c.vec && c.launch.red.rank == 0; }

}  // namespace foldkit::cuda::tensor
