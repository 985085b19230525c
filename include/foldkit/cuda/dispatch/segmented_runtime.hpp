// A research hook of the CUDA segmented reduction (src/cuda/segmented_reduce.cu) for
// `foldkit-bench axes --sweep`: the offsets form with its L2 prefetch distance forced, so that one
// build can time several distances (tuning/segmented_reduce_tuning.hpp). Internal (namespace
// detail); not for users: segmented_reduce (foldkit/cuda/segmented_reduce.hpp) is the API.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "foldkit/cuda/reduce.hpp"  // Workspace
#include "foldkit/dtype.hpp"
#include "foldkit/ops.hpp"

namespace foldkit::cuda::detail {

// segmented_reduce's offsets form with an explicit workspace (same checks, same results), the
// block of tile k prefetching tile k + prefetch_tiles's elements into L2 (0: none) in every call,
// whatever its size, instead of the tuning's rule.
void segmented_reduce_with_prefetch(ReduceOp op, DType dtype, const void* d_in, std::int64_t n,
                                    const std::int64_t* d_offsets, std::int64_t num_segments, void* d_out,
                                    Workspace ws, cudaStream_t stream, int prefetch_tiles);

// The prefetch distance (tiles ahead; 0: none) the library picks for such a call on the current
// device.
int segmented_reduce_prefetch_tiles(std::int64_t n, std::int64_t num_segments, ReduceOp op, DType dtype);

}  // namespace foldkit::cuda::detail
