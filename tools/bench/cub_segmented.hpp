// `foldkit-bench axes`: cub::DeviceSegmentedReduce, the rival of foldkit's reductions along the
// last axis of a matrix and of its segmented sums. Host-only interface (axes_suite.cpp never
// includes CUB); the instantiations, only those the suite uses, are in cub_segmented.cu.
#pragma once

#include <cstdint>
#include <memory>

#include "cub_runner.hpp"
#include "foldkit/ops.hpp"

namespace fkbench {

// One segment per row of a row-major f32 matrix: segment r = [r * cols, (r + 1) * cols). The
// offsets are computed by an iterator (a counting iterator times cols), so CUB reads no offset
// array: the best a CUB user can do for rows. op:
//   sum    DeviceSegmentedReduce::Sum    -> float per row
//   max    DeviceSegmentedReduce::Max    -> float per row
//   argmax DeviceSegmentedReduce::ArgMax -> cub::KeyValuePair<int, float> per row (8 bytes: the
//          index within the row, then the value; read it with cub_argmax_key_offset below)
// Anything else throws std::runtime_error. Temp storage is allocated here, outside any timing.
std::unique_ptr<CubReduce> make_cub_segmented_rows(foldkit::ReduceOp op, std::int64_t rows, std::int64_t cols);

// DeviceSegmentedReduce::Sum of f32 over num_segments segments given by d_offsets (device
// memory, num_segments + 1 int64 entries: begin = d_offsets, end = d_offsets + 1), as foldkit's
// segmented_reduce reads them. Output: one float per segment.
std::unique_ptr<CubReduce> make_cub_segmented_sum_offsets(const std::int64_t* d_offsets, std::int64_t num_segments);

// Layout of CUB's ArgMax output element (cub::KeyValuePair<int, float>).
inline constexpr std::size_t kCubArgmaxBytes = 8;
inline constexpr std::size_t kCubArgmaxKeyOffset = 0;    // int: the index within the segment
inline constexpr std::size_t kCubArgmaxValueOffset = 4;  // float: the value

}  // namespace fkbench
