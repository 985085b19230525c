// Prefix scans of device memory: the CUDA backend. Types and semantics as foldkit/scan.hpp.
//
//   foldkit::cuda::inclusive_scan<foldkit::ReduceOp::sum>(d_in, n, d_out, stream);
//   foldkit::cuda::exclusive_scan<foldkit::ReduceOp::sum>(d_in, n, d_out, init, stream);
//
// One kernel launch, one pass: each element is read once and written once (single-pass scan
// with decoupled look-back, Merrill & Garland 2016). Tiles take their index from a ticket when
// they start, so a tile only waits on tiles that are already running or done: forward progress
// on any GPU. Deterministic: a tile's prefix is always the left-to-right fold of the tile
// aggregates before it, whichever predecessor the look-back stopped at, so every call gives the
// same bits. Stream-ordered, no host synchronisation.
//
// Workspace. The look-back needs tile states in device memory: scan_workspace_bytes(n, dtype)
// bytes (about 16-32 bytes per 4096 elements, plus 256).
// - Explicit form: allocate at least that, zero it once (init_scan_workspace or cudaMemset), and
//   pass it to any number of calls with n up to what it was sized for. Calls never need it
//   zeroed again: each call marks its tile states with a new epoch kept in the workspace. One
//   workspace must not serve two calls that may run at the same time. Works under graph capture.
// - Convenient form (no workspace argument): one growing workspace per (host thread, device,
//   stream), allocated and zeroed in stream order (cudaMallocAsync) when a call needs more.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "foldkit/cuda/reduce.hpp"  // Workspace, device_available
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

}  // namespace foldkit::cuda
