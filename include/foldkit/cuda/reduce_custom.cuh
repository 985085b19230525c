// Full-array reduction with a user-supplied operator (compile this from a .cu file with nvcc).
//
//   struct AbsMax { __host__ __device__ float operator()(float a, float b) const { ... } };
//   foldkit::cuda::reduce_custom(d_in, n, d_out, AbsMax{}, 0.0f, stream);
//
// Contract: F is callable as T(T, T) on the device, associative, and commutative (the kernel
// combines in a fixed but interleaved order, so a non-commutative F gives a fixed but
// unspecified bracketing). T is trivially copyable and at most 16 bytes. n == 0 writes
// identity. Same workspace, stream and error rules as foldkit::cuda::reduce.
#pragma once

#include <type_traits>

#include "foldkit/cuda/device/reduce_spec.cuh"
#include "foldkit/cuda/dispatch/reduce_launch.cuh"
#include "foldkit/cuda/reduce.hpp"

namespace foldkit::cuda {

template <class T, class F>
void reduce_custom(const T* d_in, std::int64_t n, T* d_out, F op, T identity, Workspace ws, cudaStream_t stream = nullptr) {
  static_assert(std::is_trivially_copyable_v<T>, "reduce_custom: T must be trivially copyable");
  static_assert(sizeof(T) <= 16, "reduce_custom: T must be at most 16 bytes");
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16,
                "reduce_custom: sizeof(T) must divide 16 (2, 4, 8 or 16 bytes)");
  const detail::DeviceFacts dev = detail::validate_reduce_args(d_in, n, d_out, ws, false);
  // Tuned as the built-in ops whose accumulator is the element (a user functor's state is T).
  constexpr tuning::ReduceFamily kFamily = tuning::reduce_family(sizeof(T), sizeof(T), false);
  const tuning::ReduceTuning t = tuning::reduce_tuning_for(kFamily, static_cast<std::size_t>(n) * sizeof(T));
  detail::launch_reduce_full<detail::TableUnrolls<kFamily>>(d_in, n, d_out, ws, CustomReduceSpec<T, F>{op, identity}, t,
                                                            stream, dev);
}

template <class T, class F>
void reduce_custom(const T* d_in, std::int64_t n, T* d_out, F op, T identity, cudaStream_t stream = nullptr) {
  reduce_custom(d_in, n, d_out, op, identity, detail::stream_workspace(stream), stream);
}

}  // namespace foldkit::cuda
