// cub::DeviceScan sums for `foldkit-bench scan`, written as foldkit writes them (scan_suite.hpp).
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>

#include "cub_impl.cuh"
#include "scan_suite.hpp"

namespace fkbench {
namespace {

// f32, f64: CUB's own sums, T -> T.
template <class T>
std::unique_ptr<CubReduce> plain_sum(bool exclusive, std::int64_t n) {
  const int items = detail::cub_items(n);  // 32-bit offsets: CUB's fastest scan kernels
  if (exclusive) {
    return detail::make_call(
        [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
          return cub::DeviceScan::ExclusiveSum(temp, bytes, static_cast<const T*>(in), static_cast<T*>(out), items, s);
        },
        "DeviceScan::ExclusiveSum");
  }
  return detail::make_call(
      [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
        return cub::DeviceScan::InclusiveSum(temp, bytes, static_cast<const T*>(in), static_cast<T*>(out), items, s);
      },
      "DeviceScan::InclusiveSum");
}

// i32 -> int64. CUB's InclusiveSum/ExclusiveSum take their accumulator type from the input
// (plus(int, int) is int), so an int64 output pointer alone would not widen: the scan would wrap
// at 2^31 and only the stores would be 8 bytes. *Scan with plus<int64> accumulates in int64
// (CUB's accumulator is the type of op(init, input)): the same work as foldkit's.
std::unique_ptr<CubReduce> widened_i32_sum(bool exclusive, std::int64_t n) {
  const int items = detail::cub_items(n);
  using Plus = ::cuda::std::plus<std::int64_t>;
  if (exclusive) {
    return detail::make_call(
        [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
          return cub::DeviceScan::ExclusiveScan(temp, bytes, static_cast<const std::int32_t*>(in),
                                                static_cast<std::int64_t*>(out), Plus{}, std::int64_t{0}, items, s);
        },
        "DeviceScan::ExclusiveScan plus<int64>, init 0");
  }
  return detail::make_call(
      [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
        return cub::DeviceScan::InclusiveScan(temp, bytes, static_cast<const std::int32_t*>(in),
                                              static_cast<std::int64_t*>(out), Plus{}, items, s);
      },
      "DeviceScan::InclusiveScan plus<int64>");
}

// f16: accumulate in float, round each output to half (what foldkit does). The accumulator is
// the type op(half, half) returns: float here.
struct PlusFloat {
  __device__ float operator()(float a, float b) const { return a + b; }
};

std::unique_ptr<CubReduce> half_sum(bool exclusive, std::int64_t n) {
  const int items = detail::cub_items(n);
  if (exclusive) {
    return detail::make_call(
        [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
          return cub::DeviceScan::ExclusiveScan(temp, bytes, static_cast<const __half*>(in), static_cast<__half*>(out),
                                                PlusFloat{}, 0.0f, items, s);
        },
        "DeviceScan::ExclusiveScan, float accumulator");
  }
  return detail::make_call(
      [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
        return cub::DeviceScan::InclusiveScan(temp, bytes, static_cast<const __half*>(in), static_cast<__half*>(out),
                                              PlusFloat{}, items, s);
      },
      "DeviceScan::InclusiveScan, float accumulator");
}

}  // namespace

std::unique_ptr<CubReduce> make_cub_scan_sum(bool exclusive, foldkit::DType dtype, std::int64_t n) {
  switch (dtype) {
    case foldkit::DType::f32: return plain_sum<float>(exclusive, n);
    case foldkit::DType::f64: return plain_sum<double>(exclusive, n);
    case foldkit::DType::i32: return widened_i32_sum(exclusive, n);
    case foldkit::DType::f16: return half_sum(exclusive, n);
    default: throw std::runtime_error("make_cub_scan_sum: f32, f64, i32 or f16 only");
  }
}

}  // namespace fkbench
