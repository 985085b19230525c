// Reductions of N-dimensional strided tensors along any axes with a user-supplied operator: the
// CUDA backend (compile this from a .cu file with nvcc, as foldkit/cuda/reduce_custom.cuh).
//
//   struct AbsMax { __host__ __device__ float operator()(float a, float b) const { ... } };
//   // d_x: (64, 1000) floats of the current device; d_rows: 64 floats
//   auto in  = foldkit::TensorView::contiguous(d_x, foldkit::DType::f32, {64, 1000}, foldkit::Device::cuda(dev));
//   auto out = foldkit::TensorView::contiguous(d_rows, foldkit::DType::f32, {64}, foldkit::Device::cuda(dev));
//   foldkit::cuda::reduce_custom(in, {-1}, /*keepdims=*/false, out, AbsMax{}, 0.0f, stream);
//
// Contract (as reduce_custom over arrays): F is callable on the device as T(T, T) through a const
// object (a functor with a __device__ operator(), or an nvcc extended __device__ /
// __host__ __device__ lambda), associative and commutative (the kernels fold in a fixed but
// interleaved order, so a non-commutative F gives a fixed but unspecified bracketing); it is
// copied into the kernel's parameters with its identity (F(identity, x) == x), so its state
// travels by value, as any kernel argument's.
// T is the element, the accumulator and the result: one of foldkit's dtypes (int32_t, uint32_t,
// int64_t, uint64_t, float, double, half, bfloat16; a static_assert says so otherwise). Structs
// are out of scope because a TensorView's dtype must describe its elements (and the kernels load
// 2-, 4- and 8-byte elements); pack a pair of 32-bit values into a uint64_t instead.
// Semantics and errors are those of foldkit::cuda::reduce (foldkit/cuda/tensor_reduce.hpp) for
// a sum, with the functor in place of the sum: the same axes, keepdims, output shape, stride,
// overlap and memory (device of the current device) rules, the same planner and kernel families
// and launch shapes, stream-ordered, one launch, no host synchronisation, deterministic (the same
// bits on every call on a given device). In addition: the input's and the output's dtype must
// both be T's (Error(invalid_argument) otherwise), and an empty reduced extent writes `identity`.
// A call that throws has enqueued nothing.
// Workspace: as reduce(): shapes that split an output over several blocks need
// tensor_reduce_custom_workspace_bytes() bytes (0 when none), zeroed once; every call leaves it
// zeroed. The form without a Workspace uses the calling thread's per-stream cache.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "foldkit/cuda/device/tensor_reduce_ops.cuh"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/dispatch/tensor_reduce_launch.cuh"
#include "foldkit/cuda/dispatch/tensor_reduce_runtime.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/dtype.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit::cuda {

namespace detail {

// The call, once T is known to be a dtype.
template <class T, class F>
void tensor_reduce_custom_checked(const TensorView& in, AxisList axes, bool keepdims, const TensorView& out, F op,
                                  T identity, const Workspace* ws, cudaStream_t stream) {
  TensorReduceSetup setup = prepare_tensor_reduce_custom(dtype_v<T>, in, axes, keepdims, out);
  if (setup.choice.launch.out_numel == 0) return;
  using Policy = tensor::CustomTensorOp<T, F>;
  auto launch = [&](Workspace w) {
    tensor::Launch l = setup.choice.launch;
    l.in = in.data;
    l.out = out.data;
    l.ws = w.ptr;
    const typename Policy::Args args{l, typename Policy::Spec{op, identity}};
    tensor::launch_tensor_reduce<Policy>(setup.choice, args, stream);
    check_cuda(cudaGetLastError(), "tensor reduce_custom kernel launch");
  };
  if (ws != nullptr) {
    check_tensor_reduce_workspace(*ws, setup.ws_bytes);
    launch(*ws);
  } else if (setup.ws_bytes == 0) {
    launch(Workspace{});
  } else {
    launch(stream_workspace(stream, setup.ws_bytes));  // the lease ends after the launch
  }
}

template <class T, class F>
void tensor_reduce_custom(const TensorView& in, AxisList axes, bool keepdims, const TensorView& out, F op,
                          T identity, const Workspace* ws, cudaStream_t stream) {
  static_assert(has_dtype_v<T>,
                "tensor reduce_custom: T must be one of foldkit's dtypes (int32_t, uint32_t, int64_t, uint64_t, "
                "float, double, half, bfloat16): the views' dtype describes the elements; pack pairs into a uint64_t");
  if constexpr (has_dtype_v<T>)  // (no second error after the assertion's otherwise)
    tensor_reduce_custom_checked(in, axes, keepdims, out, op, identity, ws, stream);
}

}  // namespace detail

// Reduces `in` along `axes` into `out` (device memory) with op, in stream order. Throws Error:
// invalid_argument (bad views, axes, a dtype that is not T's, output shape/strides, overlap, bad
// workspace), wrong_memory (a host view, a view of another device, or a pointer the current device
// cannot access), unsupported (a dtype outside the enumeration), no_device, cuda_error.
template <class T, class F>
void reduce_custom(const TensorView& in, AxisList axes, bool keepdims, const TensorView& out, F op, T identity,
                   Workspace ws, cudaStream_t stream = nullptr) {
  detail::tensor_reduce_custom(in, axes, keepdims, out, op, identity, &ws, stream);
}
template <class T, class F>
void reduce_custom(const TensorView& in, AxisList axes, bool keepdims, const TensorView& out, F op, T identity,
                   cudaStream_t stream = nullptr) {
  detail::tensor_reduce_custom(in, axes, keepdims, out, op, identity, nullptr, stream);
}

// Bytes of workspace a reduce_custom call with these views needs on the current device (0:
// none); T is the views' dtype. Validates as the call does.
inline std::size_t tensor_reduce_custom_workspace_bytes(const TensorView& in, AxisList axes, bool keepdims,
                                                        const TensorView& out) {
  return detail::prepare_tensor_reduce_custom(in.dtype, in, axes, keepdims, out).ws_bytes;
}

// describe_reduce()'s line for a reduce_custom call with these views: the plan and the launch.
inline std::string describe_reduce_custom(const TensorView& in, AxisList axes, bool keepdims, const TensorView& out) {
  return detail::describe_tensor_reduce_custom(in.dtype, in, axes, keepdims, out);
}

}  // namespace foldkit::cuda
