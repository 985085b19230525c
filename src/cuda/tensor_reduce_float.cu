// The tensor-reduction kernels for float and double (every op): see tensor_reduce_launch.cuh.
#include <cstdint>

#include "tensor_reduce_launch.cuh"

namespace foldkit::cuda::tensor {
FOLDKIT_TENSOR_REDUCE_INSTANTIATE(float)
FOLDKIT_TENSOR_REDUCE_INSTANTIATE(double)
}  // namespace foldkit::cuda::tensor
