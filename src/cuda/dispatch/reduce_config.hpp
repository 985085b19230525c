// Launch configuration of the full-array reduction kernel, exposed inside the project for the
// tuning sweep (foldkit-bench sweep). Not part of the public API.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "foldkit/cuda/reduce.hpp"
#include "foldkit/dtype.hpp"

namespace foldkit::cuda::detail {

struct ReduceLaunchConfig {
  int block_threads;  // a multiple of 32, 32..1024
  int blocks_per_sm;  // grid = min(SMs * blocks_per_sm, blocks needed to give each thread work)
  int unroll;         // independent 16-byte loads in flight per thread: 1, 2, 4 or 8
};

// The configuration foldkit uses for n elements of dtype (include/foldkit/cuda/tuning/reduce_tuning.hpp).
ReduceLaunchConfig tuned_reduce_config(DType dtype, std::int64_t n);

// Sum with an explicit launch configuration. Same contract as reduce<ReduceOp::sum>.
// Throws Error(invalid_argument) for a configuration the kernel cannot run.
void reduce_sum_with_config(DType dtype, const void* d_in, std::int64_t n, void* d_out, Workspace ws,
                            ReduceLaunchConfig cfg, cudaStream_t stream);

}  // namespace foldkit::cuda::detail
