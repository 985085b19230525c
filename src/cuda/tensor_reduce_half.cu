// The tensor-reduction kernels for half and bfloat16 (every op): see tensor_reduce_launch.cuh.
#include <cstdint>

#include "tensor_reduce_launch.cuh"

namespace foldkit::cuda::tensor {
FOLDKIT_TENSOR_REDUCE_INSTANTIATE(half)
FOLDKIT_TENSOR_REDUCE_INSTANTIATE(bfloat16)
}  // namespace foldkit::cuda::tensor
