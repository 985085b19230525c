// Workspaces and validation of the CUDA scans (see scan_runtime.hpp).
#include "foldkit/cuda/dispatch/scan_runtime.hpp"

#include <cstdint>
#include <string>

#include "foldkit/cuda/device/scan_layout.hpp"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/tuning/scan_tuning.hpp"

namespace foldkit::cuda {

namespace detail {

std::int64_t scan_tiles(std::int64_t n, std::size_t element_bytes) {
  const std::int64_t tile = tuning::scan_tile_elements(element_bytes);
  return (n + tile - 1) / tile;
}

std::size_t scan_workspace_bytes_for(std::int64_t tiles, std::size_t accum_bytes) {
  const std::size_t words = (accum_bytes + 3) / 4;
  return kScanHeaderBytes + static_cast<std::size_t>(tiles) * 2 * words * sizeof(unsigned long long);
}

// The convenient scans' workspaces live in this thread's scan cache (StreamWorkspaceCache,
// runtime.hpp): at most kEntriesPerDevice per device, LRU, each growing (stream-ordered) when a
// call needs more.
Workspace scan_stream_workspace(cudaStream_t stream, std::size_t bytes) {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  return scan_workspace_cache().acquire(stream, bytes, device);
}

void scan_stream_workspace_launched(cudaStream_t stream) noexcept { scan_workspace_cache().launched(stream); }

int validate_scan_args(const void* d_in, std::size_t in_bytes, const void* d_out, std::size_t out_bytes,
                        bool same_type, Workspace ws, std::size_t ws_needed) {
  if (d_in == nullptr) throw Error(Errc::invalid_argument, "scan: input is null");
  if (d_out == nullptr) throw Error(Errc::invalid_argument, "scan: output is null");
  const auto in0 = reinterpret_cast<std::uintptr_t>(d_in), out0 = reinterpret_cast<std::uintptr_t>(d_out);
  const bool overlap = in0 < out0 + out_bytes && out0 < in0 + in_bytes;
  if (overlap && !(in0 == out0 && same_type))
    throw Error(Errc::invalid_argument,
                "scan: input and output overlap; only exactly in place (same address, same type) is allowed");
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  if (reinterpret_cast<std::uintptr_t>(ws.ptr) % 16 != 0)
    throw Error(Errc::invalid_argument, "scan: workspace must be 16-byte aligned");
  if (ws.bytes < ws_needed)
    throw Error(Errc::invalid_argument, "scan: workspace has " + std::to_string(ws.bytes) + " bytes; " +
                                            std::to_string(ws_needed) + " are needed (scan_workspace_bytes())");
  const int device = current_device_for_checks();
  check_device_pointer(d_in, "input", device);
  check_device_pointer(d_out, "output", device);
  check_device_pointer(ws.ptr, "workspace", device);
  return device;
}

SegmentHeads blocked_heads(std::int64_t block_length) {
  if (block_length < 1)
    throw Error(Errc::invalid_argument, "scan: block_length = " + std::to_string(block_length) + " (must be >= 1)");
  return SegmentHeads{block_length, nullptr, 0};
}

SegmentHeads segment_heads(const std::int64_t* d_offsets, std::int64_t num_segments, std::int64_t n) {
  if (num_segments < 0)
    throw Error(Errc::invalid_argument, "scan: num_segments = " + std::to_string(num_segments) + " is negative");
  if (d_offsets == nullptr) throw Error(Errc::invalid_argument, "scan: offsets is null");
  if (num_segments == 0 && n > 0)
    throw Error(Errc::invalid_argument,
                "scan: no segments for n = " + std::to_string(n) + " elements (offsets[num_segments] must be n)");
  check_device_pointer(d_offsets, "offsets");
  return SegmentHeads{0, d_offsets, num_segments};
}

}  // namespace detail

std::size_t scan_workspace_bytes(std::int64_t n, DType dtype) {
  if (n < 0) throw Error(Errc::invalid_argument, "scan_workspace_bytes: n is negative");
  const std::size_t element = dtype_size(dtype);
  // The widest accumulator any scan op of this dtype uses: 8 bytes for 4- and 8-byte types
  // (integer sums widen), 4 (float) for half/bf16.
  const std::size_t accum = element == 2 ? 4 : 8;
  // A slot per tile of the smallest tile any op of this dtype uses (the others need fewer).
  const std::int64_t tiles = n > 0 ? detail::scan_tiles(n, element) : 0;
  return detail::scan_workspace_bytes_for(tiles, accum);
}

void init_scan_workspace(Workspace ws, cudaStream_t stream) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "init_scan_workspace: workspace is null");
  detail::check_cuda(cudaMemsetAsync(ws.ptr, 0, ws.bytes, stream), "cudaMemsetAsync (init_scan_workspace)");
}

}  // namespace foldkit::cuda
