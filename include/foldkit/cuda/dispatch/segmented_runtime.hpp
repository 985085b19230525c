// Research hooks of the CUDA segmented reduction (src/cuda/segmented_reduce.cu) for
// `foldkit-bench axes --sweep`, the probes and the tests: the offsets form with its L2 prefetch
// distance, its tiles per block or its path forced, so that one build can time several
// (tuning/segmented_reduce_tuning.hpp).
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

// The offsets form's two paths: the merge path (src/cuda/segmented_reduce_kernel.cuh) and the
// group path (src/cuda/segmented_group_kernel.cuh: every op but argmin/argmax); `library` is the
// one segmented_reduce picks.
enum class SegmentedPath { library, merge, group };
// segmented_reduce's offsets form with an explicit workspace (segmented_reduce_workspace_bytes
// covers both paths), on a forced path: for tests and benchmarks of a path that is not (yet) the
// library's choice. Same checks; a group-path call of argmin/argmax throws.
void segmented_reduce_on_path(SegmentedPath path, ReduceOp op, DType dtype, const void* d_in, std::int64_t n,
                              const std::int64_t* d_offsets, std::int64_t num_segments, void* d_out, Workspace ws,
                              cudaStream_t stream, std::int32_t* d_status = nullptr);

// The path segmented_reduce's offsets form takes for `op` (merge or group), and its name.
SegmentedPath segmented_reduce_path(ReduceOp op);
const char* segmented_path_name(SegmentedPath path);

// The prefetch distance (tiles ahead; 0: none) the library picks for such a call on the current
// device.
int segmented_reduce_prefetch_tiles(std::int64_t n, std::int64_t num_segments, ReduceOp op, DType dtype);

}  // namespace foldkit::cuda::detail
