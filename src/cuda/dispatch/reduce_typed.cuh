// Definitions of the typed CUDA reduction entry points. Included only by the per-dtype
// instantiation files in src/cuda/instantiate/, so each dtype's kernels compile in their own TU.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda/dispatch/reduce_config.hpp"
#include "foldkit/cuda/device/reduce_spec.cuh"
#include "foldkit/cuda/dispatch/reduce_launch.cuh"
#include "foldkit/cuda/reduce.hpp"

namespace foldkit::cuda {

namespace detail {

// The tuning family of reduce<Op, T>'s kernel.
template <ReduceOp Op, class T>
constexpr tuning::ReduceFamily reduce_family_of() {
  return tuning::reduce_family(sizeof(T), sizeof(reduce_accum_t<Op, T>), Op == ReduceOp::argmin || Op == ReduceOp::argmax);
}

// Chooses the kernel's spec for Op and T and launches it with tuning t (arguments validated).
// Unrolls: the unroll factors compiled (reduce_launch.cuh).
template <ReduceOp Op, class T, class Unrolls>
void launch_reduce(const T* d_in, std::int64_t n, reduce_result_t<Op, T>* d_out, Workspace ws, tuning::ReduceTuning t,
                   cudaStream_t stream, DeviceFacts dev) {
  constexpr bool kArg = Op == ReduceOp::argmin || Op == ReduceOp::argmax;
  if constexpr (kArg && sizeof(T) == 2) {
    // 2^48 elements (512 TiB) is beyond any GPU: the packed form is the only one needed.
    if (n >= PackedArgSpec<Op, T>::kMaxElements) throw Error(Errc::unsupported, "argmin/argmax: n >= 2^48");
    launch_reduce_full<Unrolls>(d_in, n, d_out, ws, PackedArgSpec<Op, T>{}, t, stream, dev);
  } else if constexpr (kArg && sizeof(T) == 4) {
    if (n < PackedArgSpec<Op, T>::kMaxElements) {
      launch_reduce_full<Unrolls>(d_in, n, d_out, ws, VectorArgSpec<Op, T>{}, t, stream, dev);
    } else {  // 2^32 or more elements: a {value, int64 index} accumulator, at the unroll that fits
      t.unroll = 4;
      launch_reduce_full<OnlyUnroll<4>>(d_in, n, d_out, ws, BuiltinReduceSpec<Op, T>{}, t, stream, dev);
    }
  } else if constexpr ((Op == ReduceOp::min || Op == ReduceOp::max) && std::is_same_v<T, float>) {
    launch_reduce_full<Unrolls>(d_in, n, d_out, ws, NanMinMaxF32Spec<Op>{}, t, stream, dev);
  } else if constexpr ((Op == ReduceOp::min || Op == ReduceOp::max) && is_floating_v<T>) {
    launch_reduce_full<Unrolls>(d_in, n, d_out, ws, KeyedMinMaxSpec<Op, T>{}, t, stream, dev);
  } else {
    launch_reduce_full<Unrolls>(d_in, n, d_out, ws, BuiltinReduceSpec<Op, T>{}, t, stream, dev);
  }
}

}  // namespace detail

template <ReduceOp Op, class T>
void reduce(const T* d_in, std::int64_t n, reduce_result_t<Op, T>* d_out, Workspace ws, cudaStream_t stream) {
  const detail::DeviceFacts dev = detail::validate_reduce_args(d_in, n, d_out, ws, needs_nonempty(Op));
  constexpr tuning::ReduceFamily kFamily = detail::reduce_family_of<Op, T>();
  detail::launch_reduce<Op, T, detail::TableUnrolls<kFamily>>(
      d_in, n, d_out, ws, tuning::reduce_tuning_for(kFamily, static_cast<std::size_t>(n) * sizeof(T)), stream, dev);
}

template <ReduceOp Op, class T>
void reduce(const T* d_in, std::int64_t n, reduce_result_t<Op, T>* d_out, cudaStream_t stream) {
  reduce<Op, T>(d_in, n, d_out, detail::stream_workspace(stream), stream);
}

template <ReduceOp Op, class T>
reduce_result_t<Op, T> reduce_to_host(const T* d_in, std::int64_t n, cudaStream_t stream) {
  using R = reduce_result_t<Op, T>;
  static_assert(sizeof(R) <= detail::kStagingBytes);
  const detail::StreamWorkspaceLease lease = detail::stream_workspace(stream);  // held past the copy
  const Workspace ws = lease;
  auto* staging = reinterpret_cast<R*>(static_cast<char*>(ws.ptr) + detail::kStagingOffset);
  reduce<Op, T>(d_in, n, staging, ws, stream);
  R result;
  detail::check_cuda(cudaMemcpyAsync(&result, staging, sizeof(R), cudaMemcpyDeviceToHost, stream),
                     "cudaMemcpyAsync (reduce_to_host)");
  detail::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (reduce_to_host)");
  return result;
}

namespace detail {

// Op with a caller-chosen launch configuration: the tuning sweep's entry point. Compiles every
// unroll the family fits.
template <ReduceOp Op, class T>
void reduce_with_config_typed(const T* d_in, std::int64_t n, reduce_result_t<Op, T>* d_out, Workspace ws,
                              ReduceLaunchConfig cfg, cudaStream_t stream) {
  if (cfg.block_threads < 32 || cfg.block_threads > 1024 || cfg.block_threads % 32 != 0 || cfg.blocks_per_sm < 1 ||
      cfg.blocks_per_sm > tuning::kMaxBlocksPerSm)
    throw Error(Errc::invalid_argument, "reduce_with_config: block_threads must be a multiple of 32 in "
                                        "[32, 1024] and blocks_per_sm in [1, 32]");
  const DeviceFacts dev = validate_reduce_args(d_in, n, d_out, ws, needs_nonempty(Op));
  tuning::ReduceTuning t{cfg.block_threads, cfg.blocks_per_sm, cfg.unroll};
  t.programmatic_launch = cfg.programmatic_launch;
  launch_reduce<Op, T, FittingUnrolls<reduce_family_of<Op, T>()>>(d_in, n, d_out, ws, t, stream, dev);
}

}  // namespace detail
}  // namespace foldkit::cuda

// Instantiates every op of one dtype, and the sweep entry point for its sum.
#define FOLDKIT_INSTANTIATE_REDUCE_OP(OP, T)                                                                 \
  template void foldkit::cuda::reduce<OP, T>(const T*, std::int64_t, foldkit::reduce_result_t<OP, T>*,      \
                                              foldkit::cuda::Workspace, cudaStream_t);                       \
  template void foldkit::cuda::reduce<OP, T>(const T*, std::int64_t, foldkit::reduce_result_t<OP, T>*,      \
                                              cudaStream_t);                                                 \
  template foldkit::reduce_result_t<OP, T> foldkit::cuda::reduce_to_host<OP, T>(const T*, std::int64_t,     \
                                                                                 cudaStream_t);

// The sweep's entry point for one op (every dtype's sum; f32 also min/max and argmax).
#define FOLDKIT_INSTANTIATE_REDUCE_WITH_CONFIG(OP, T)                                                        \
  template void foldkit::cuda::detail::reduce_with_config_typed<OP, T>(                                       \
      const T*, std::int64_t, foldkit::reduce_result_t<OP, T>*, foldkit::cuda::Workspace,                     \
      foldkit::cuda::detail::ReduceLaunchConfig, cudaStream_t);

#define FOLDKIT_INSTANTIATE_REDUCE(T)                                                                        \
  FOLDKIT_INSTANTIATE_REDUCE_OP(foldkit::ReduceOp::sum, T)                                                   \
  FOLDKIT_INSTANTIATE_REDUCE_OP(foldkit::ReduceOp::prod, T)                                                  \
  FOLDKIT_INSTANTIATE_REDUCE_OP(foldkit::ReduceOp::min, T)                                                   \
  FOLDKIT_INSTANTIATE_REDUCE_OP(foldkit::ReduceOp::max, T)                                                   \
  FOLDKIT_INSTANTIATE_REDUCE_OP(foldkit::ReduceOp::mean, T)                                                  \
  FOLDKIT_INSTANTIATE_REDUCE_OP(foldkit::ReduceOp::argmin, T)                                                \
  FOLDKIT_INSTANTIATE_REDUCE_OP(foldkit::ReduceOp::argmax, T)                                                \
  FOLDKIT_INSTANTIATE_REDUCE_WITH_CONFIG(foldkit::ReduceOp::sum, T)
