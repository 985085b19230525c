// The tensor-reduction kernels for std::int32_t and std::uint32_t (every op): see tensor_reduce_launch.cuh.
#include <cstdint>

#include "tensor_reduce_launch.cuh"

namespace foldkit::cuda::tensor {
FOLDKIT_TENSOR_REDUCE_INSTANTIATE(std::int32_t)
FOLDKIT_TENSOR_REDUCE_INSTANTIATE(std::uint32_t)
}  // namespace foldkit::cuda::tensor
