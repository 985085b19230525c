// cub::DeviceSegmentedReduce for `foldkit-bench axes` (cub_segmented.hpp): Sum, Max and ArgMax of
// f32 rows (offsets from an iterator) and Sum of f32 segments given by int64 offsets. Only these
// four are instantiated (each CUB instantiation is slow to compile).
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "cub_impl.cuh"
#include "cub_segmented.hpp"

namespace fkbench {
namespace {

// Row r starts at r * cols (int: CUB's ArgMax uses int offsets, and the suite's matrices have
// 2^26 elements; checked below).
struct RowStart {
  int cols;
  __host__ __device__ int operator()(int r) const { return r * cols; }
};
using RowOffsets = thrust::transform_iterator<RowStart, thrust::counting_iterator<int>>;

RowOffsets row_offsets(int cols) { return RowOffsets(thrust::counting_iterator<int>(0), RowStart{cols}); }

static_assert(sizeof(cub::KeyValuePair<int, float>) == kCubArgmaxBytes, "CUB ArgMax output layout");

}  // namespace

std::unique_ptr<CubReduce> make_cub_segmented_rows(foldkit::ReduceOp op, std::int64_t rows, std::int64_t cols) {
  if (rows <= 0 || cols <= 0 || rows * cols > INT_MAX)
    throw std::runtime_error("make_cub_segmented_rows: rows * cols must fit in an int");
  const std::int64_t segments = rows;
  const RowOffsets begin = row_offsets(static_cast<int>(cols));
  const RowOffsets end = begin + 1;
  switch (op) {
    case foldkit::ReduceOp::sum:
      return detail::make_call(
          [=](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
            return cub::DeviceSegmentedReduce::Sum(temp, bytes, static_cast<const float*>(in), static_cast<float*>(out),
                                                   segments, begin, end, s);
          },
          "DeviceSegmentedReduce::Sum, offsets r * cols from an iterator");
    case foldkit::ReduceOp::max:
      return detail::make_call(
          [=](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
            return cub::DeviceSegmentedReduce::Max(temp, bytes, static_cast<const float*>(in), static_cast<float*>(out),
                                                   segments, begin, end, s);
          },
          "DeviceSegmentedReduce::Max, offsets r * cols from an iterator");
    case foldkit::ReduceOp::argmax:
      return detail::make_call(
          [=](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
            return cub::DeviceSegmentedReduce::ArgMax(temp, bytes, static_cast<const float*>(in),
                                                      static_cast<cub::KeyValuePair<int, float>*>(out), segments, begin,
                                                      end, s);
          },
          "DeviceSegmentedReduce::ArgMax -> KeyValuePair<int, float>, offsets r * cols from an iterator");
    default: throw std::runtime_error("make_cub_segmented_rows: sum, max or argmax only");
  }
}

std::unique_ptr<CubReduce> make_cub_segmented_sum_offsets(const std::int64_t* d_offsets, std::int64_t num_segments) {
  return detail::make_call(
      [=](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
        return cub::DeviceSegmentedReduce::Sum(temp, bytes, static_cast<const float*>(in), static_cast<float*>(out),
                                               num_segments, d_offsets, d_offsets + 1, s);
      },
      "DeviceSegmentedReduce::Sum, int64 offsets");
}

}  // namespace fkbench
