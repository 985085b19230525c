// Reductions of N-dimensional strided tensors along any axes: the CUDA backend (issue #22, slice 2).
//
//   // d_x: device memory of the current device, 64 x 1000 floats, row-major
//   auto in  = foldkit::TensorView::contiguous(d_x, foldkit::DType::f32, {64, 1000}, foldkit::Device::cuda(dev));
//   auto out = foldkit::TensorView::contiguous(d_rows, foldkit::DType::f32, {64}, foldkit::Device::cuda(dev));
//   foldkit::cuda::reduce(foldkit::ReduceOp::sum, in, {-1}, /*keepdims=*/false, out, stream);
//
// Semantics, output rules and errors are those of the CPU forms (foldkit/tensor_reduce.hpp: the
// same result dtypes, NaN rules, empty rule, axes, keepdims, argmin/argmax index along the axis,
// first index on ties and first NaN, output shape/dtype/stride/overlap checks), plus:
//   - every view must describe device memory of the CURRENT device: device.kind == cuda with
//     device.id == the current device, and a data pointer that device can access (checked for
//     views with elements). Otherwise Error(wrong_memory).
//   - stream-ordered: the call enqueues one kernel on `stream` (none when the output is empty)
//     and returns; it never synchronises the host.
//   - every check happens before the launch, so a call that throws has enqueued nothing (and
//     so written nothing). Launch failures: Error(cuda_error).
// Kernels: the plan's canonical form picks one of seven families (describe_reduce() prints the
// plan and the launch): rows-packed (rows shorter than a 16-byte vector), rows-dense (adjacent
// rows of whole vectors), rows-group (a group of 1-32 lanes per row), rows-block (one or more
// blocks per long row), outer (threads across the contiguous kept columns, down the reduced
// dims, split over blocks), outer-flat (outer reductions whose rows are 1-8 vectors back to
// back, read as one flat array), generic (a warp per output). Shapes are in tools/bench
// (foldkit-bench axes) and docs/perf.md.
// Workspace: launches that split one output over several blocks (long rows with few outputs,
// outer reductions with few columns) combine the blocks' partials in the same launch through a
// workspace: tensor_reduce_workspace_bytes() bytes (0 when the shape needs none), zeroed once
// (init_workspace or cudaMemset); every call leaves it zeroed again, as the full-array
// reductions' workspace (one buffer may serve both, if big enough for each). One workspace must
// not serve two calls that may run at the same time. The forms without one use the calling
// thread's per-stream cache of foldkit/cuda/reduce.hpp (grown, in stream order, when a shape
// needs more; release_stream_workspaces() frees it).
// Determinism: each output element is folded in a fixed order that depends only on the plan and
// the launch shape (threads fold fixed positions left to right, then a fixed tree, then the
// blocks' partials in split order), so the same call gives the same bits every time on a given
// device. Float results need not equal the CPU backend's bits (a different, fixed order);
// integer results are exact and equal.
// User functors along axes, same planner and kernel families: foldkit/cuda/tensor_reduce_custom.cuh.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "foldkit/cuda/reduce.hpp"  // Workspace
#include "foldkit/ops.hpp"
#include "foldkit/tensor.hpp"
#include "foldkit/tensor_reduce.hpp"

namespace foldkit::cuda {

// The output a reduce() call with these arguments needs (backend-independent; the data
// pointer's memory space is not probed).
inline ReduceOutput reduce_output_shape(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims) {
  return foldkit::cpu::reduce_output_shape(op, in, axes, keepdims);
}

// Reduces `in` along `axes` into `out` (device memory), in stream order. Throws Error:
// invalid_argument (bad views, axes, output shape/dtype/strides, overlap), wrong_memory (a host
// view, a view of another device, or a pointer the current device cannot access), unsupported
// (op or dtype outside the enumerations), empty_input (min/max/argmin/argmax over an empty
// reduced extent), no_device, cuda_error.
void reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out,
            cudaStream_t stream = nullptr);
void reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out, Workspace ws,
            cudaStream_t stream = nullptr);

// argmin/argmax with both outputs: `indices` (i64) and `values` (the input dtype), same shape.
// Neither may overlap the input or the other.
void arg_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& indices,
                const TensorView& values, cudaStream_t stream = nullptr);
void arg_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& indices,
                const TensorView& values, Workspace ws, cudaStream_t stream = nullptr);

// Bytes of workspace a call with these arguments and a row-major output needs on the current
// device (0: none); the second form for the output view the call will get (its strides can
// change the plan). Validates as the call does.
std::size_t tensor_reduce_workspace_bytes(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims);
std::size_t tensor_reduce_workspace_bytes(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims,
                                          const TensorView& out);

// One line: the plan (foldkit::detail::describe_plan) and the kernel launch this call would
// make, e.g. "kept [...] reduced [...] family=outer kernel=outer vec16 grid=1056x256 cols=4 ...".
// Checks the arguments as reduce() does; launches nothing.
std::string describe_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out);

}  // namespace foldkit::cuda
