// The tensor-reduction kernels for std::int64_t and std::uint64_t (every op): see tensor_reduce_launch.cuh.
#include <cstdint>

#include "tensor_reduce_launch.cuh"

namespace foldkit::cuda::tensor {
FOLDKIT_TENSOR_REDUCE_INSTANTIATE(std::int64_t)
FOLDKIT_TENSOR_REDUCE_INSTANTIATE(std::uint64_t)
}  // namespace foldkit::cuda::tensor
