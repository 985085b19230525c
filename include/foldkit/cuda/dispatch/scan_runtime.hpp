// Host-side pieces of the CUDA scans that do not depend on the element type: workspace sizing,
// the convenient form's cached workspaces (per thread and device, LRU: StreamWorkspaceCache in
// runtime.hpp), and argument validation. Internal
// (namespace detail), but installed because the header-only user-functor scans
// (scan_custom.cuh) use it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "foldkit/cuda/device/scan_layout.hpp"
#include "foldkit/cuda/scan.hpp"

namespace foldkit::cuda::detail {

// Tiles of a scan of n elements of `element_bytes` each.
std::int64_t scan_tiles(std::int64_t n, std::size_t element_bytes);
// Workspace bytes for a given tile count and accumulator size.
std::size_t scan_workspace_bytes_for(std::int64_t tiles, std::size_t accum_bytes);
// The growing workspace of the convenient form for (this thread, current device, stream), with
// at least `bytes` bytes, from this thread's scan cache; allocated in stream order. Throws
// out_of_memory when it cannot be allocated (nothing changed).
Workspace scan_stream_workspace(cudaStream_t stream, std::size_t bytes);
// Call right after the launch that used scan_stream_workspace(stream, ...): lets a later
// eviction of that workspace be stream-ordered (StreamWorkspaceCache::launched). Without it,
// an evicted scan workspace is freed after a cudaDeviceSynchronize (correct, slower).
void scan_stream_workspace_launched(cudaStream_t stream) noexcept;
// Throws the documented Error for bad arguments (n > 0 only; n == 0 needs nothing). Returns
// the current device (-1 when the runtime cannot say: the pointer checks then report why).
int validate_scan_args(const void* d_in, std::size_t in_bytes, const void* d_out, std::size_t out_bytes,
                        bool same_type, Workspace ws, std::size_t ws_needed);

// The heads of a blocked scan; throws invalid_argument for block_length < 1.
SegmentHeads blocked_heads(std::int64_t block_length);
// The heads of a segmented scan of n elements; throws invalid_argument for num_segments < 0,
// null offsets, or no segment for n > 0, and wrong_memory for offsets the device cannot read.
// The offsets' values stay unchecked (reading them would synchronise).
SegmentHeads segment_heads(const std::int64_t* d_offsets, std::int64_t num_segments, std::int64_t n);

}  // namespace foldkit::cuda::detail
