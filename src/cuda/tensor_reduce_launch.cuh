// Launches one tensor-reduction kernel family for one (op, dtype): the kernels of
// tensor_reduce_kernels.cuh, instantiated in tensor_reduce_{int,int64,float,half}.cu (7 ops of
// two dtypes each) so that the 8 x 7 x 8 kernels compile in parallel.
#pragma once

#include <cuda_runtime_api.h>

#include "tensor_reduce_kernels.cuh"

namespace foldkit::cuda::tensor {

// The launch tensor_reduce.cu chose: family, vector loads or not, grid (kTensorThreads each).
struct Choice {
  Family family = Family::generic;
  bool vec = false;
  unsigned grid = 1;
  Launch launch;
};

template <ReduceOp Op, class T>
void launch_kernel(const Choice& c, cudaStream_t stream) {
  const dim3 grid(c.grid), block(tuning::kTensorThreads);
  switch (c.family) {
    case Family::rows_packed:
      rows_packed_kernel<Op, T><<<grid, block, 0, stream>>>(c.launch);
      break;
    case Family::rows_dense:
      // launch.chunks: kM, the vectors per lane of a row (tensor_reduce_kernels.cuh).
      if (c.launch.chunks == 4) rows_dense_kernel<Op, T, 4><<<grid, block, 0, stream>>>(c.launch);
      else if (c.launch.chunks == 2) rows_dense_kernel<Op, T, 2><<<grid, block, 0, stream>>>(c.launch);
      else rows_dense_kernel<Op, T, 1><<<grid, block, 0, stream>>>(c.launch);
      break;
    case Family::rows_group:
      if (c.vec) rows_group_kernel<Op, T, true><<<grid, block, 0, stream>>>(c.launch);
      else rows_group_kernel<Op, T, false><<<grid, block, 0, stream>>>(c.launch);
      break;
    case Family::rows_block:
      if (c.vec) rows_block_kernel<Op, T, true><<<grid, block, 0, stream>>>(c.launch);
      else rows_block_kernel<Op, T, false><<<grid, block, 0, stream>>>(c.launch);
      break;
    case Family::outer:
      if (c.vec) outer_kernel<Op, T, true><<<grid, block, 0, stream>>>(c.launch);
      else outer_kernel<Op, T, false><<<grid, block, 0, stream>>>(c.launch);
      break;
    case Family::generic:
      generic_kernel<Op, T><<<grid, block, 0, stream>>>(c.launch);
      break;
  }
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
