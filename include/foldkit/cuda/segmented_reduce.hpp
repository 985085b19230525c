// Segmented reductions of device memory: the CUDA backend (issue #22). Semantics, result types
// and the empty segment rule as the CPU forms (foldkit/segmented_reduce.hpp).
//
//   foldkit::cuda::segmented_reduce(foldkit::ReduceOp::sum, foldkit::DType::f32, d_x, n, d_offsets,
//                                   num_segments, d_sums, stream);
//
// in, offsets (or begin/end), out (and values) and d_status are device memory of the current
// device (else Error(wrong_memory)); null pointers as the CPU forms allow. Stream-ordered, no host
// synchronisation, so the offsets' VALUES are checked on the device, not before the call
// returns: a small kernel checks them first and sets a flag in the workspace; a call whose offsets
// break the contract (decreasing, or outside [0, n]; a begin/end pair with begin > end or outside
// [0, n]) then writes nothing to out (or values), reads nothing outside in and the offsets, and
// sets *d_status (if given: device memory, one int32) to 1; valid offsets set it to 0.
// validate_offsets() checks offsets on the host's behalf and throws (it synchronises the
// stream). Every other check happens before the first launch (a call that throws has enqueued
// nothing).
//
// Work is balanced by ELEMENTS and by SEGMENTS (merge path: a tile of the kernel holds a fixed
// number of elements plus segment ends), so any mix of lengths runs at the memory's pace: many
// tiny or empty segments, a few huge ones spread over many blocks (their partials combined in the
// same launch, in a fixed order). Offsets form: 2 launches (validation, reduction). Begin/end form
// (segments may overlap, so the total length is known only on the device): 3 launches
// (validation, a scan of the lengths, reduction); it reads its segments without 16-byte staging
// and is the slower form.
//
// Workspace: segmented_reduce_workspace_bytes(n, num_segments, op, dtype) bytes (256 + 64 per tile
// of 8188 elements-plus-segments, 4094 for 8-byte types: under 0.01 bytes per element), zeroed once
// (init_workspace), reusable by every later call whose segmented_reduce_workspace_bytes is no
// larger (it grows with n + num_segments; 8-byte dtypes need twice the tiles); every call leaves
// it zeroed again. One workspace must not serve two calls that may run at the same time.
// The forms without a workspace use the calling thread's per-stream cache of the scans (one
// growing workspace per stream, shared with the convenient scans; release_stream_workspaces()
// frees it); under graph capture they need that stream's cached workspace to be large enough
// already, as the convenient scans do. The kernel's look-back (a segment spanning several blocks
// is finished by the block where it ends, which waits for the earlier blocks' partials) assumes,
// as the scans do, that a block's predecessors in the grid were scheduled before it.
// Determinism: the same input, offsets and device give the same bits on every call. Integer
// results, min/max and argmin/argmax are exact, so they equal the CPU backend's; floating-point
// sums, products and means are combined in a different fixed order than the CPU's and may differ
// from them in the last bits, as may the two forms' (offsets, begin/end) of the same segments, which
// walk a segment in different orders. argmin/argmax values are the input elements' own bits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "foldkit/cuda/reduce.hpp"  // Workspace, init_workspace
#include "foldkit/segmented_reduce.hpp"

namespace foldkit::cuda {

std::size_t segmented_reduce_workspace_bytes(std::int64_t n, std::int64_t num_segments, ReduceOp op, DType dtype);

void segmented_reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, const std::int64_t* d_offsets,
                      std::int64_t num_segments, void* d_out, Workspace ws, cudaStream_t stream = nullptr,
                      std::int32_t* d_status = nullptr);
void segmented_reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, const std::int64_t* d_offsets,
                      std::int64_t num_segments, void* d_out, cudaStream_t stream = nullptr,
                      std::int32_t* d_status = nullptr);
void segmented_reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, const std::int64_t* d_begin,
                      const std::int64_t* d_end, std::int64_t num_segments, void* d_out, cudaStream_t stream = nullptr,
                      std::int32_t* d_status = nullptr);
// argmin/argmax with both outputs (as the CPU form): d_indices (num_segments int64, -1 for an empty
// segment) and d_values (num_segments elements of dtype, the extreme elements' own bits).
void segmented_arg_reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, const std::int64_t* d_offsets,
                          std::int64_t num_segments, std::int64_t* d_indices, void* d_values,
                          cudaStream_t stream = nullptr, std::int32_t* d_status = nullptr);

// Throws Error(invalid_argument) naming the first bad offset (the smallest i with offsets[i]
// outside [0, n] or offsets[i] > offsets[i + 1]; the CPU forms' message) after synchronising
// `stream`. d_offsets: num_segments + 1 entries of device memory. Allocates (stream-ordered) a
// few bytes for its answer; not for use under graph capture.
void validate_offsets(const std::int64_t* d_offsets, std::int64_t num_segments, std::int64_t n,
                      cudaStream_t stream = nullptr);

}  // namespace foldkit::cuda
