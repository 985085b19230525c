// cub::DeviceScan::InclusiveSum over the whole array: the rival row of seed 004's table. It does
// more than a blocked scan (a full prefix sum carries a running total across the whole array,
// through CUB's decoupled look-back), yet moves the same bytes: read n, write n.
#include <cub/device/device_scan.cuh>

#include "cub_impl.cuh"

namespace fkbench {
namespace {

template <class T>
std::unique_ptr<CubReduce> inclusive_sum_of(std::int64_t n) {
  const int items = detail::cub_items(n);  // 32-bit offsets: CUB's fastest scan kernels
  return detail::make_call(
      [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
        return cub::DeviceScan::InclusiveSum(temp, bytes, static_cast<const T*>(in), static_cast<T*>(out), items, s);
      },
      "DeviceScan::InclusiveSum");
}

}  // namespace

std::unique_ptr<CubReduce> make_cub_inclusive_sum(foldkit::DType dtype, std::int64_t n) {
  switch (dtype) {
    case foldkit::DType::i32: return inclusive_sum_of<std::int32_t>(n);
    case foldkit::DType::f32: return inclusive_sum_of<float>(n);
    default: throw std::runtime_error("make_cub_inclusive_sum: i32 or f32 only");
  }
}

}  // namespace fkbench
