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
//     and returns; it never synchronises the host and allocates nothing.
//   - every check happens before the launch, so a call that throws has enqueued nothing (and
//     so written nothing). Launch failures: Error(cuda_error).
// Determinism: each output element is reduced by one warp in a fixed order that depends only on
// the plan (lane partials over fixed positions, then a fixed shuffle tree), so the same call
// gives the same bits every time on a given device. Float results need not equal the CPU
// backend's bits (a different, fixed order); integer results are exact and equal.
#pragma once

#include <cuda_runtime_api.h>

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

// argmin/argmax with both outputs: `indices` (i64) and `values` (the input dtype), same shape.
// Neither may overlap the input or the other.
void arg_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& indices,
                const TensorView& values, cudaStream_t stream = nullptr);

}  // namespace foldkit::cuda
