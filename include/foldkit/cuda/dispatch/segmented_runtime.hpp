// A research hook of the CUDA segmented reduction (src/cuda/segmented_reduce.cu) for
// `foldkit-bench axes --sweep`: the offsets form with its L2 prefetch distance or its tiles per
// block forced, so that one build can time several (tuning/segmented_reduce_tuning.hpp).
// Internal (namespace detail); not for users: segmented_reduce (foldkit/cuda/segmented_reduce.hpp)
// is the API.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "foldkit/cuda/reduce.hpp"  // Workspace
#include "foldkit/dtype.hpp"
#include "foldkit/ops.hpp"

namespace foldkit::cuda::detail {

// segmented_reduce's offsets form with an explicit workspace (same checks, same results but for
// the fold order of segments that span tiles), the block of tile k prefetching tile
// k + prefetch_tiles's elements into L2 (0: none; -1: the tuning's rule) and each block taking
// tiles_per_block consecutive tiles (0: the tuning's).
void segmented_reduce_with_tuning(ReduceOp op, DType dtype, const void* d_in, std::int64_t n,
                                  const std::int64_t* d_offsets, std::int64_t num_segments, void* d_out, Workspace ws,
                                  cudaStream_t stream, int prefetch_tiles, int tiles_per_block);

// The prefetch distance (tiles ahead; 0: none) the library picks for such a call on the current
// device.
int segmented_reduce_prefetch_tiles(std::int64_t n, std::int64_t num_segments, ReduceOp op, DType dtype);

}  // namespace foldkit::cuda::detail
