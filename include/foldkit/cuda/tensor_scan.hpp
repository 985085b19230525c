// Prefix scans of N-dimensional strided tensors along one axis: the CUDA backend (issue #22).
// Semantics, output rules and errors are those of the CPU forms (foldkit/tensor_scan.hpp), plus
// the CUDA backend's rules of foldkit/cuda/tensor_reduce.hpp: every view describes device memory
// of the CURRENT device (else Error(wrong_memory)); stream-ordered, no host synchronisation;
// every check happens before the first launch, so a call that throws has enqueued nothing.
//
// Workspace, as the whole-array scans (foldkit/cuda/scan.hpp): tensor_scan_workspace_bytes(in,
// axis) bytes (0 for shapes whose kernels need none), zeroed once (init_scan_workspace), reusable
// by later calls of up to that size without zeroing again, and by the core scans (the same tile
// state convention and epochs); one workspace must not serve two calls that may run at the same
// time. The size depends on the input and the axis only: it is the most any output layout can
// need, and an explicit workspace smaller than it is refused (Error(invalid_argument)) even where
// this call's output would need less. The forms without a workspace use the calling thread's
// per-stream scan cache (release_stream_workspaces() frees it). Works under graph capture with an
// explicit workspace.
// Kernels (foldkit/detail/scan_plan.hpp names the family a call gets): lines that lie back to back
// with stride 1 in and out ("rows-contiguous") are the core's blocked scan of the flat array, one
// launch; everything else is one launch of a tiled kernel with a decoupled look-back along the
// scanned axis (foldkit/cuda/device/tensor_scan_kernel.cuh). With a user operator:
// foldkit/cuda/tensor_scan_custom.cuh.
// Determinism: the same views on the same device give the same bits on every call. Float results
// need not equal the CPU backend's bits (a different, fixed order); integer results are exact.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "foldkit/cuda/reduce.hpp"  // Workspace
#include "foldkit/cuda/scan.hpp"    // init_scan_workspace
#include "foldkit/scalar.hpp"
#include "foldkit/tensor_scan.hpp"

namespace foldkit::cuda {

// Bytes of workspace a scan of `in` along `axis` needs (validates the view and the axis).
std::size_t tensor_scan_workspace_bytes(const TensorView& in, int axis);

void inclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, Workspace ws,
                    cudaStream_t stream = nullptr);
void inclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, cudaStream_t stream = nullptr);
void exclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, Scalar init, Workspace ws,
                    cudaStream_t stream = nullptr);
void exclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, Scalar init,
                    cudaStream_t stream = nullptr);

}  // namespace foldkit::cuda
