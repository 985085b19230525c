// cub::DeviceReduce::Sum over the four integer dtypes, into foldkit's (widened) result type.
#include <type_traits>

#include "cub_impl.cuh"
#include "foldkit/ops.hpp"

namespace fkbench::detail {
namespace {

template <class T>
std::unique_ptr<CubReduce> sum_of(std::int64_t n) {
  // i32 -> int64 and u32 -> uint64: CUB accumulates in the output iterator's value type, so the
  // widening costs it nothing extra, exactly as for foldkit.
  using Out = foldkit::reduce_result_t<foldkit::ReduceOp::sum, T>;
  const int items = cub_items(n);
  return make_call(
      [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
        return cub::DeviceReduce::Sum(temp, bytes, static_cast<const T*>(in), static_cast<Out*>(out), items, s);
      },
      std::is_same_v<T, Out> ? "DeviceReduce::Sum" : "DeviceReduce::Sum into 64-bit");
}

}  // namespace

std::unique_ptr<CubReduce> make_cub_sum_int(foldkit::DType dtype, std::int64_t n) {
  switch (dtype) {
    case foldkit::DType::i32: return sum_of<std::int32_t>(n);
    case foldkit::DType::u32: return sum_of<std::uint32_t>(n);
    case foldkit::DType::i64: return sum_of<std::int64_t>(n);
    case foldkit::DType::u64: return sum_of<std::uint64_t>(n);
    default: throw std::runtime_error("make_cub_sum_int: not an integer dtype");
  }
}

}  // namespace fkbench::detail
