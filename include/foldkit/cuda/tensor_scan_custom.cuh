// Prefix scans of N-dimensional strided tensors along one axis with a user-supplied operator: the
// CUDA backend (compile this from a .cu file with nvcc, as foldkit/cuda/scan_custom.cuh).
//
//   // x -> a * x + b (mod 2^32) packed as a << 32 | b; "f then g": associative, not commutative
//   struct Then { __host__ __device__ std::uint64_t operator()(std::uint64_t f, std::uint64_t g) const; };
//   // d_maps, d_out: (1000, 4) uint64_t of the current device
//   auto in  = foldkit::TensorView::contiguous(d_maps, foldkit::DType::u64, {1000, 4}, foldkit::Device::cuda(dev));
//   auto out = foldkit::TensorView::contiguous(d_out, foldkit::DType::u64, {1000, 4}, foldkit::Device::cuda(dev));
//   foldkit::cuda::inclusive_scan_custom(in, 0, out, Then{}, std::uint64_t{1} << 32, stream);
//
// Contract (as the CPU form, foldkit/tensor_scan_custom.hpp): F is callable on the device as
// T(T, T) through a const object (a functor with a __device__ operator(), or an nvcc extended
// __device__ / __host__ __device__ lambda) and associative; it need NOT be commutative (every
// combine has the earlier value on its left). identity: F(identity, x) == x == F(x, identity).
// F and identity are copied into the kernel's parameters, so F's state travels by value. T is the
// element, the accumulator and the result: one of foldkit's dtypes (int32_t, uint32_t, int64_t,
// uint64_t, float, double, half, bfloat16; a static_assert says so otherwise).
// Semantics, checks and errors are those of foldkit::cuda::inclusive_scan / exclusive_scan
// (foldkit/cuda/tensor_scan.hpp) for an op whose result dtype is the input's: the same axis,
// output, overlap (in place allowed) and memory (device memory of the current device) rules,
// stream-ordered, one launch, no host synchronisation; the input's and the output's dtype must
// both be T's (Error(invalid_argument) otherwise). A call that throws has enqueued nothing.
// Kernels: rows-contiguous lines of 4- or 8-byte T are the core's blocked custom scan
// (foldkit/cuda/scan_custom.cuh); everything else (and 2-byte T) is the built-in tensor scans'
// tile kernel with a decoupled look-back (foldkit/cuda/device/tensor_scan_kernel.cuh) with the
// functor as its combine.
// Determinism: the same views on the same device give the same bits on every call (the
// look-back folds the predecessors left to right whichever one it stops at). The bracketing is
// the kernels' (tiles, threads, warps), not the CPU backend's: a functor that rounds (float +)
// may differ from the CPU result in the last bits; an exact one gives the CPU's bits.
// Workspace: as the built-in tensor scans: tensor_scan_custom_workspace_bytes(in, axis) bytes
// (the same as tensor_scan_workspace_bytes: it covers a functor's accumulator), zeroed once
// (init_scan_workspace), reusable by later tensor and core scans; the forms without a Workspace
// use the calling thread's per-stream scan cache.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>

#include "foldkit/cuda/device/tensor_scan_args.hpp"
#include "foldkit/cuda/device/tensor_scan_kernel.cuh"
#include "foldkit/cuda/dispatch/scan_runtime.hpp"
#include "foldkit/cuda/dispatch/tensor_scan_launch.cuh"
#include "foldkit/cuda/dispatch/tensor_scan_runtime.hpp"
#include "foldkit/cuda/reduce.hpp"  // Workspace
#include "foldkit/cuda/scan_custom.cuh"
#include "foldkit/cuda/tensor_scan.hpp"
#include "foldkit/dtype.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit::cuda {

namespace tensor_scan {

// A user functor as the tile kernel's policy (device/tensor_scan_kernel.cuh): T in, accumulated
// and out; the functor and its identity travel in the kernel's parameter, after TileArgs.
template <class T, class F>
struct CustomTileFold {
  F op;
  T identity_value;
  __device__ __forceinline__ T identity() const { return identity_value; }
  __device__ __forceinline__ T operator()(T a, T b) const { return op(a, b); }
};
template <class T, class F>
struct CustomTileArgs : TileArgs {
  F op;
  T identity;
};
template <class TIn, class F>
struct CustomTileSpec : TileShape<TIn, TIn> {
  using T = TIn;
  using A = TIn;
  using O = TIn;
  using Fold = CustomTileFold<T, F>;
  using Args = CustomTileArgs<T, F>;
  __device__ __forceinline__ static Fold fold(const Args& a) { return Fold{a.op, a.identity}; }
  __device__ __forceinline__ static T identity_input(const Fold& f) { return f.identity_value; }
  __device__ __forceinline__ static A load(T v) { return v; }
  __device__ __forceinline__ static O store(A v) { return v; }
};

}  // namespace tensor_scan

namespace detail {

template <bool kExclusive, class T, class F>
void tensor_scan_custom(const TensorView& in, int axis, const TensorView& out, F op, T identity, T init,
                        const Workspace* ws, cudaStream_t stream) {
  static_assert(has_dtype_v<T>,
                "tensor scan_custom: T must be one of foldkit's dtypes (int32_t, uint32_t, int64_t, uint64_t, "
                "float, double, half, bfloat16): the views' dtype describes the elements; pack pairs into a uint64_t");
  if constexpr (has_dtype_v<T>) {  // (no second error after the assertion's otherwise)
    const TensorScanSetup setup = prepare_tensor_scan_custom(dtype_v<T>, in, axis, out, kExclusive, ws);
    if (setup.empty) return;
    if constexpr (sizeof(T) >= 4) {
      if (setup.blocked) {
        const T* src = static_cast<const T*>(in.data);
        T* dst = static_cast<T*>(out.data);
        // The explicit workspace was checked against tensor_scan_workspace_bytes(), which covers
        // the blocked scan's.
        const Workspace w = ws != nullptr ? *ws : Workspace{};
        launch_scan_custom<kExclusive>(src, setup.numel, dst, op, identity, kExclusive ? init : identity, w, stream,
                                       blocked_heads(setup.len));
        return;
      }
    }
    using Spec = tensor_scan::CustomTileSpec<T, F>;
    typename Spec::Args args{setup.tiles, op, identity};
    if constexpr (kExclusive) {
      static_assert(sizeof(T) <= sizeof(args.init_bits));
      std::memcpy(&args.init_bits, &init, sizeof(T));
    }
    const bool convenient = ws == nullptr;
    if (setup.state_bytes > 0) {
      const Workspace w = convenient ? scan_stream_workspace(stream, setup.state_bytes) : *ws;
      args.header = static_cast<ScanHeader*>(w.ptr);
    }
    tensor_scan::launch_tile_scan<Spec>(args, stream, setup.device);
    if (setup.state_bytes > 0 && convenient) scan_stream_workspace_launched(stream);
  }
}

}  // namespace detail

// Scans every line of `in` along `axis` into `out` (device memory) with op, in stream order.
// Throws Error: invalid_argument (bad views, axis, a dtype that is not T's, output shape/strides,
// overlap, misalignment, bad workspace), wrong_memory (a host view, a view of another device, or a
// pointer the current device cannot access), unsupported (a dtype outside the enumeration),
// no_device, cuda_error.
template <class T, class F>
void inclusive_scan_custom(const TensorView& in, int axis, const TensorView& out, F op, T identity, Workspace ws,
                           cudaStream_t stream = nullptr) {
  detail::tensor_scan_custom<false>(in, axis, out, op, identity, identity, &ws, stream);
}
template <class T, class F>
void inclusive_scan_custom(const TensorView& in, int axis, const TensorView& out, F op, T identity,
                           cudaStream_t stream = nullptr) {
  detail::tensor_scan_custom<false>(in, axis, out, op, identity, identity, nullptr, stream);
}
// out[0] = init, out[i] = init op x0 op ... op x(i-1) along each line.
template <class T, class F>
void exclusive_scan_custom(const TensorView& in, int axis, const TensorView& out, F op, T identity, T init,
                           Workspace ws, cudaStream_t stream = nullptr) {
  detail::tensor_scan_custom<true>(in, axis, out, op, identity, init, &ws, stream);
}
template <class T, class F>
void exclusive_scan_custom(const TensorView& in, int axis, const TensorView& out, F op, T identity, T init,
                           cudaStream_t stream = nullptr) {
  detail::tensor_scan_custom<true>(in, axis, out, op, identity, init, nullptr, stream);
}

// Bytes of workspace a scan_custom call over `in` along `axis` needs on the current device (0:
// none): tensor_scan_workspace_bytes(in, axis). Validates the view and the axis.
inline std::size_t tensor_scan_custom_workspace_bytes(const TensorView& in, int axis) {
  return tensor_scan_workspace_bytes(in, axis);
}

}  // namespace foldkit::cuda
