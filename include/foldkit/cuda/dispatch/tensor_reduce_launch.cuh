// Launches the tensor-reduction kernel family the host chose (tensor::Choice) for one kernel
// policy P (device/tensor_reduce_ops.cuh): the library's built-in ops
// (src/cuda/tensor_reduce_launch.cuh) and the header-only user functors
// (foldkit/cuda/tensor_reduce_custom.cuh) go through this one switch, so both run the same
// families with the same launch shapes.
#pragma once

#include <cuda_runtime_api.h>

#include "foldkit/cuda/device/tensor_reduce_args.hpp"
#include "foldkit/cuda/device/tensor_reduce_kernels.cuh"
#include "foldkit/cuda/dispatch/programmatic_launch.cuh"
#include "foldkit/cuda/tuning/tensor_reduce_tuning.hpp"

namespace foldkit::cuda::tensor {

// Enqueues the chosen kernel with `args` (P::Args: the choice's Launch with its data pointers
// filled in, plus whatever P carries). Launch errors are left for cudaGetLastError.
template <class P>
void launch_tensor_reduce(const Choice& c, const typename P::Args& args, cudaStream_t stream) {
  const dim3 grid(c.grid), block(c.block);
  switch (c.family) {
    case Family::rows_packed:
      // launch.run: 2 or 4 (rows of fewer elements than a 16-byte vector holds, several per vector).
      if constexpr (sizeof(typename P::value_type) <= 4) {
        if (c.launch.run == 2) rows_packed_kernel<P, 2><<<grid, block, 0, stream>>>(args);
        else if constexpr (sizeof(typename P::value_type) <= 2) rows_packed_kernel<P, 4><<<grid, block, 0, stream>>>(args);
      }
      break;
    case Family::rows_dense:
      // launch.chunks: M, the vectors per lane of a row (tensor_reduce_kernels.cuh: kM = min(M, 8)).
      if (c.launch.chunks >= 8) rows_dense_kernel<P, 8><<<grid, block, 0, stream>>>(args);
      else if (c.launch.chunks == 4) rows_dense_kernel<P, 4><<<grid, block, 0, stream>>>(args);
      else if (c.launch.chunks == 2) rows_dense_kernel<P, 2><<<grid, block, 0, stream>>>(args);
      else rows_dense_kernel<P, 1><<<grid, block, 0, stream>>>(args);
      break;
    case Family::rows_group:
      if (c.vec) rows_group_kernel<P, true><<<grid, block, 0, stream>>>(args);
      else rows_group_kernel<P, false><<<grid, block, 0, stream>>>(args);
      break;
    case Family::rows_block:
      if (rows_block_contiguous(c)) rows_block_kernel<P, true, true><<<grid, block, 0, stream>>>(args);
      else if (c.vec) rows_block_kernel<P, true><<<grid, block, 0, stream>>>(args);
      else rows_block_kernel<P, false><<<grid, block, 0, stream>>>(args);
      break;
    case Family::outer:
      if constexpr (P::kArg && tuning::outer_unsplit_arg_kernel<typename P::value_type>()) {
        if (c.vec && c.launch.chunks == 1) {
          outer_kernel<P, true, false><<<grid, block, 0, stream>>>(args);
          break;
        }
      }
      if (c.vec) outer_kernel<P, true><<<grid, block, 0, stream>>>(args);
      else outer_kernel<P, false><<<grid, block, 0, stream>>>(args);
      break;
    case Family::outer_flat:
      if constexpr (!P::kArg)
        launch_programmatic(outer_flat_kernel<P, tuning::outer_flat_loads_in_flight(sizeof(typename P::value_type))>, grid,
                            block, stream, args);
      break;
    case Family::generic:
      generic_kernel<P><<<grid, block, 0, stream>>>(args);
      break;
  }
}

}  // namespace foldkit::cuda::tensor
