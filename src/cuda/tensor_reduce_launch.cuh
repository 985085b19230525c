// Launches one tensor-reduction kernel family for one built-in (op, dtype): the installed switch
// (foldkit/cuda/dispatch/tensor_reduce_launch.cuh) with the built-in policy, instantiated in
// tensor_reduce_{int,int64,float,half}.cu (7 ops of two dtypes each) so that the 8 x 7 x 11
// kernels compile in parallel; tensor_reduce.cu sees only the extern declarations.
#pragma once

#include <cuda_runtime_api.h>

#include "foldkit/cuda/device/tensor_reduce_args.hpp"
#include "foldkit/cuda/dispatch/tensor_reduce_launch.cuh"
#include "foldkit/ops.hpp"

namespace foldkit::cuda::tensor {

template <ReduceOp Op, class T>
void launch_kernel(const Choice& c, cudaStream_t stream) {
  launch_tensor_reduce<BuiltinTensorOp<Op, T>>(c, c.launch, stream);
}

// Every op of one dtype: `template` (instantiate here) or `extern template` (instantiated in
// another file).
#define FOLDKIT_TENSOR_REDUCE_OPS(KW, T)                               \
  KW void launch_kernel<ReduceOp::sum, T>(const Choice&, cudaStream_t);    \
  KW void launch_kernel<ReduceOp::prod, T>(const Choice&, cudaStream_t);   \
  KW void launch_kernel<ReduceOp::min, T>(const Choice&, cudaStream_t);    \
  KW void launch_kernel<ReduceOp::max, T>(const Choice&, cudaStream_t);    \
  KW void launch_kernel<ReduceOp::mean, T>(const Choice&, cudaStream_t);   \
  KW void launch_kernel<ReduceOp::argmin, T>(const Choice&, cudaStream_t); \
  KW void launch_kernel<ReduceOp::argmax, T>(const Choice&, cudaStream_t);
#define FOLDKIT_TENSOR_REDUCE_INSTANTIATE(T) FOLDKIT_TENSOR_REDUCE_OPS(template, T)
#define FOLDKIT_TENSOR_REDUCE_EXTERN(T) FOLDKIT_TENSOR_REDUCE_OPS(extern template, T)

}  // namespace foldkit::cuda::tensor
