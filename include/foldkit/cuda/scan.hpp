// Prefix scans of device memory: the CUDA backend. Types and semantics as foldkit/scan.hpp.
//
//   foldkit::cuda::inclusive_scan<foldkit::ReduceOp::sum>(d_in, n, d_out, stream);
//   foldkit::cuda::exclusive_scan<foldkit::ReduceOp::sum>(d_in, n, d_out, init, stream);
//   foldkit::cuda::inclusive_scan_blocked<foldkit::ReduceOp::sum>(d_in, n, d_out, 1000, stream);
//   foldkit::cuda::inclusive_scan_segmented<foldkit::ReduceOp::max>(d_in, n, d_out, d_offsets, segments, stream);
//
// One kernel launch, one pass: each element is read once and written once (single-pass scan
// with decoupled look-back, Merrill & Garland 2016). Tiles take their index from a ticket when
// they start, so a tile only waits on tiles that are already running or done: forward progress
// on any GPU. Deterministic: a tile's prefix is always the left-to-right fold of the tile
// aggregates before it, whichever predecessor the look-back stopped at, so every call gives the
// same bits. Stream-ordered, no host synchronisation.
//
// Blocked and segmented scans (semantics as in foldkit/scan.hpp) run through the same single
// pass: items that start a block or segment ("heads") restart the scan, and a tile that holds a
// head publishes its inclusive prefix without waiting for its predecessors, so the look-back
// stops at the nearest tile with a head.
//
// Workspace. The look-back needs tile states in device memory: scan_workspace_bytes(n, dtype)
// bytes (about 16-32 bytes per 4096 elements, plus 256).
// - Explicit form: allocate at least that, zero it once (init_scan_workspace or cudaMemset), and
//   pass it to any number of calls with n up to what it was sized for. Calls never need it
//   zeroed again: each call marks its tile states with a new epoch kept in the workspace. One
//   workspace must not serve two calls that may run at the same time. Works under graph capture.
// - Convenient form (no workspace argument): each host thread caches a growing workspace for
//   each of the last 8 streams it used per device (least recently used evicted first, freed in
//   stream order on the evicting call's stream, or after a cudaDeviceSynchronize when it has no
//   event after its last use), allocated and zeroed in stream order (cudaMallocAsync) when a
//   call needs more; policy and graph capture as the reductions' (foldkit/cuda/reduce.hpp),
//   release_stream_workspaces() frees them. Out of memory: Error out_of_memory, nothing changed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "foldkit/cuda/reduce.hpp"  // Workspace, device_available
#include "foldkit/scalar.hpp"
#include "foldkit/scan.hpp"

namespace foldkit::cuda {

// Bytes of workspace a scan of n elements of dtype needs (0 <= n).
std::size_t scan_workspace_bytes(std::int64_t n, DType dtype);
// Zeroes a scan workspace in stream order; required once after allocating it.
void init_scan_workspace(Workspace ws, cudaStream_t stream = nullptr);

// Throws Error: invalid_argument (null pointers with n > 0, n < 0, workspace too small,
// overlapping in/out other than exactly in place with equal types), wrong_memory (pointers
// not device-accessible), unsupported (not a scan op), cuda_error.
template <ReduceOp Op, class T>
void inclusive_scan(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, Workspace ws,
                    cudaStream_t stream = nullptr);
template <ReduceOp Op, class T>
void inclusive_scan(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, cudaStream_t stream = nullptr);
template <ReduceOp Op, class T>
void exclusive_scan(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, scan_result_t<Op, T> init,
                    Workspace ws, cudaStream_t stream = nullptr);
template <ReduceOp Op, class T>
void exclusive_scan(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, scan_result_t<Op, T> init,
                    cudaStream_t stream = nullptr);

// Type-erased forms (op and dtype chosen at run time, as cpu::inclusive_scan(op, dtype, ...)):
// d_out receives n elements of scan_result_dtype(op, dtype). `init` is a Scalar
// (foldkit/scalar.hpp) of any dtype, e.g. a std::int32_t for an i32 sum whose result type is
// i64: it must convert EXACTLY to scan_result_dtype(op, dtype) (integer in range; a float value
// that round-trips, NaN allowed for float results), else Error(invalid_argument) naming the
// value and both dtypes, before anything is launched. Throws Error(unsupported) for an op that
// is not a scan op, or an op or dtype outside the enumerations; otherwise as the typed forms.
// The blocked and segmented type-erased forms follow their typed forms below.
void inclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, Workspace ws,
                    cudaStream_t stream = nullptr);
void inclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                    cudaStream_t stream = nullptr);
void exclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, Scalar init,
                    Workspace ws, cudaStream_t stream = nullptr);
void exclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, Scalar init,
                    cudaStream_t stream = nullptr);

// Blocked scans: consecutive blocks of block_length (>= 1) elements, each scanned on its own
// (the last block may be shorter); exclusive blocks each start at init.
// Throws as above, plus invalid_argument for block_length < 1.
template <ReduceOp Op, class T>
void inclusive_scan_blocked(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, std::int64_t block_length,
                            Workspace ws, cudaStream_t stream = nullptr);
template <ReduceOp Op, class T>
void inclusive_scan_blocked(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, std::int64_t block_length,
                            cudaStream_t stream = nullptr);
template <ReduceOp Op, class T>
void exclusive_scan_blocked(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, std::int64_t block_length,
                            scan_result_t<Op, T> init, Workspace ws, cudaStream_t stream = nullptr);
template <ReduceOp Op, class T>
void exclusive_scan_blocked(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, std::int64_t block_length,
                            scan_result_t<Op, T> init, cudaStream_t stream = nullptr);

// Segmented scans: segment s covers [d_offsets[s], d_offsets[s + 1]); d_offsets is DEVICE memory
// with num_segments + 1 entries, non-decreasing, d_offsets[0] == 0, d_offsets[num_segments] == n
// (empty segments allowed). The offsets' values are not checked (that would need a
// synchronisation): offsets that break the contract give unspecified output values, but never
// an access outside in, out or the num_segments + 1 offsets. Exclusive segments each start at init.
// Throws as above, plus invalid_argument for num_segments < 0, null d_offsets, or
// num_segments == 0 with n > 0; wrong_memory for host offsets.
template <ReduceOp Op, class T>
void inclusive_scan_segmented(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, Workspace ws,
                              cudaStream_t stream = nullptr);
template <ReduceOp Op, class T>
void inclusive_scan_segmented(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, cudaStream_t stream = nullptr);
template <ReduceOp Op, class T>
void exclusive_scan_segmented(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, scan_result_t<Op, T> init,
                              Workspace ws, cudaStream_t stream = nullptr);
template <ReduceOp Op, class T>
void exclusive_scan_segmented(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, scan_result_t<Op, T> init,
                              cudaStream_t stream = nullptr);

// Type-erased blocked and segmented forms (op, dtype and init as the type-erased forms above;
// the other parameters and errors as the typed forms).
void inclusive_scan_blocked(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                            std::int64_t block_length, Workspace ws, cudaStream_t stream = nullptr);
void inclusive_scan_blocked(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                            std::int64_t block_length, cudaStream_t stream = nullptr);
void exclusive_scan_blocked(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                            std::int64_t block_length, Scalar init, Workspace ws, cudaStream_t stream = nullptr);
void exclusive_scan_blocked(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                            std::int64_t block_length, Scalar init, cudaStream_t stream = nullptr);

void inclusive_scan_segmented(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, Workspace ws,
                              cudaStream_t stream = nullptr);
void inclusive_scan_segmented(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, cudaStream_t stream = nullptr);
void exclusive_scan_segmented(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, Scalar init, Workspace ws,
                              cudaStream_t stream = nullptr);
void exclusive_scan_segmented(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, Scalar init,
                              cudaStream_t stream = nullptr);

}  // namespace foldkit::cuda
