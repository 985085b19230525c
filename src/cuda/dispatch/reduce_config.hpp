// Launch configuration of the full-array reduction kernel, exposed inside the project for the
// tuning sweep (foldkit-bench sweep). Not part of the public API.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/tuning/reduce_tuning.hpp"
#include "foldkit/dtype.hpp"

namespace foldkit::cuda::detail {

struct ReduceLaunchConfig {
  int block_threads;  // a multiple of 32, 32..1024
  int blocks_per_sm;  // grid = min(SMs * blocks_per_sm, blocks needed to give each thread work)
  int unroll;         // independent 16-byte loads in flight per thread: 1, 2, 4 or 8
  bool programmatic_launch = true;  // Hopper programmatic dependent launch (tuning.hpp)
};

// The tuning family of op's kernel for dtype.
tuning::ReduceFamily reduce_family_of(ReduceOp op, DType dtype);

// The configuration foldkit uses for op over n elements of dtype
// (include/foldkit/cuda/tuning/reduce_tuning.hpp).
ReduceLaunchConfig tuned_reduce_config(ReduceOp op, DType dtype, std::int64_t n);

// Whether reduce_with_config serves (op, dtype): sum of every dtype, and max and argmax of f32.
bool reduce_with_config_supports(ReduceOp op, DType dtype);

// op with an explicit launch configuration. Same contract as reduce<op>. Throws
// Error(invalid_argument) for a configuration the kernel cannot run, Error(unsupported) for an
// (op, dtype) it does not serve.
void reduce_with_config(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, Workspace ws,
                        ReduceLaunchConfig cfg, cudaStream_t stream);

}  // namespace foldkit::cuda::detail
