// cub::DeviceReduce sums over the four floating dtypes, into foldkit's result type.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cub_impl.cuh"
#include "foldkit/ops.hpp"

namespace fkbench {

std::unique_ptr<CubReduce> make_cub_sum(foldkit::DType dtype, std::int64_t n) {
  switch (dtype) {
    case foldkit::DType::i32: case foldkit::DType::u32: case foldkit::DType::i64: case foldkit::DType::u64:
      return detail::make_cub_sum_int(dtype, n);
    default: return detail::make_cub_sum_float(dtype, n);
  }
}

namespace detail {
namespace {

template <class T>
std::unique_ptr<CubReduce> plain_sum(std::int64_t n) {
  static_assert(std::is_same_v<foldkit::reduce_result_t<foldkit::ReduceOp::sum, T>, T>);
  const int items = cub_items(n);
  return make_call(
      [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
        return cub::DeviceReduce::Sum(temp, bytes, static_cast<const T*>(in), static_cast<T*>(out), items, s);
      },
      "DeviceReduce::Sum");
}

// 16-bit floats: foldkit returns a float accumulated in float. CUB's Sum cannot do that (no
// plus(float, __half)), so the fair rival is TransformReduce with a widening transform.
struct HalfToFloat {
  __device__ float operator()(__half h) const { return __half2float(h); }
};
struct Bf16ToFloat {
  __device__ float operator()(__nv_bfloat16 h) const { return __bfloat162float(h); }
};

template <class CudaT, class Widen, class FoldkitT>
std::unique_ptr<CubReduce> widened_sum(std::int64_t n) {
  static_assert(sizeof(CudaT) == sizeof(FoldkitT), "foldkit's 16-bit types share CUDA's layout");
  static_assert(std::is_same_v<foldkit::reduce_result_t<foldkit::ReduceOp::sum, FoldkitT>, float>);
  const int items = cub_items(n);
  return make_call(
      [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
        return cub::DeviceReduce::TransformReduce(temp, bytes, static_cast<const CudaT*>(in), static_cast<float*>(out),
                                                  items, ::cuda::std::plus<float>{}, Widen{}, 0.0f, s);
      },
      "DeviceReduce::TransformReduce to float");
}

}  // namespace

std::unique_ptr<CubReduce> make_cub_sum_float(foldkit::DType dtype, std::int64_t n) {
  switch (dtype) {
    case foldkit::DType::f32: return plain_sum<float>(n);
    case foldkit::DType::f64: return plain_sum<double>(n);
    case foldkit::DType::f16: return widened_sum<__half, HalfToFloat, foldkit::half>(n);
    case foldkit::DType::bf16: return widened_sum<__nv_bfloat16, Bf16ToFloat, foldkit::bfloat16>(n);
    default: throw std::runtime_error("make_cub_sum_float: not a floating dtype");
  }
}

}  // namespace detail
}  // namespace fkbench
