// cub::DeviceReduce::Max and ArgMax over f32.
#include <cstddef>

#include "cub_impl.cuh"
#include "foldkit/ops.hpp"

namespace fkbench {

std::string cub_version() {
  return "CCCL " + std::to_string(CCCL_MAJOR_VERSION) + "." + std::to_string(CCCL_MINOR_VERSION) + "." +
         std::to_string(CCCL_PATCH_VERSION);
}

std::unique_ptr<CubReduce> make_cub_max_f32(std::int64_t n) {
  const int items = detail::cub_items(n);
  return detail::make_call(
      [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
        return cub::DeviceReduce::Max(temp, bytes, static_cast<const float*>(in), static_cast<float*>(out), items, s);
      },
      "DeviceReduce::Max");
}

std::unique_ptr<CubReduce> make_cub_argmax_f32(std::int64_t n) {
  using R = foldkit::ArgResult<float>;
  static_assert(offsetof(R, value) == 0 && sizeof(R::index) == 8, "ArgResult<float> layout");
  const std::int64_t items = n;  // this overload takes an int64 count
  return detail::make_call(
      [items](void* temp, std::size_t& bytes, const void* in, void* out, cudaStream_t s) {
        // CCCL 3.0's overload with separate value and index outputs (the KeyValuePair one is
        // deprecated): the value lands in R::value, the index in R::index.
        // (Addresses computed with offsetof: out is device memory, never dereferenced here.)
        auto* base = static_cast<char*>(out);
        auto* value = base ? reinterpret_cast<float*>(base + offsetof(R, value)) : nullptr;
        auto* index = base ? reinterpret_cast<std::int64_t*>(base + offsetof(R, index)) : nullptr;
        return cub::DeviceReduce::ArgMax(temp, bytes, static_cast<const float*>(in), value, index, items, s);
      },
      "DeviceReduce::ArgMax (value, index)");
}

}  // namespace fkbench
