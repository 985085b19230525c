// The CUDA tensor scans' tile kernel (foldkit/cuda/device/tensor_scan_kernel.cuh) for the
// built-in ops: their policy, TileSpec<Op, T> (the op's combine, scan_accum_t / scan_result_t),
// and launch_tiles<Op, T>, instantiated per dtype in tensor_scan_<dtypes>.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <type_traits>

#include "cuda/tensor_scan_launch.cuh"
#include "foldkit/cuda/device/tensor_scan_kernel.cuh"
#include "foldkit/cuda/dispatch/tensor_scan_launch.cuh"
#include "foldkit/ops.hpp"
#include "foldkit/scan.hpp"

namespace foldkit::cuda::tensor_scan {

template <ReduceOp Op, class A>
using combine_t = std::conditional_t<
    Op == ReduceOp::sum, op::Sum<A>,
    std::conditional_t<Op == ReduceOp::prod, op::Prod<A>, std::conditional_t<Op == ReduceOp::min, op::Min<A>, op::Max<A>>>>;

// A built-in op: stateless, so the kernel's parameter is TileArgs alone.
template <ReduceOp Op, class TIn>
struct TileSpec : TileShape<TIn, scan_accum_t<Op, TIn>> {
  using T = TIn;
  using A = scan_accum_t<Op, T>;
  using O = scan_result_t<Op, T>;
  using Fold = combine_t<Op, A>;
  using Args = TileArgs;
  __device__ __forceinline__ static Fold fold(const Args&) { return Fold{}; }
  __device__ __forceinline__ static T identity_input(const Fold&) { return static_cast<T>(Fold::identity()); }
  __device__ __forceinline__ static A load(T v) { return static_cast<A>(v); }
  __device__ __forceinline__ static O store(A v) { return static_cast<O>(v); }
};

template <ReduceOp Op, class T>
void launch_tiles(const TileArgs& args, cudaStream_t stream, int device) {
  launch_tile_scan<TileSpec<Op, T>>(args, stream, device);
}

}  // namespace foldkit::cuda::tensor_scan

#define FOLDKIT_INSTANTIATE_TENSOR_SCAN(T)                                                                            \
  template void foldkit::cuda::tensor_scan::launch_tiles<foldkit::ReduceOp::sum, T>(                                 \
      const foldkit::cuda::tensor_scan::TileArgs&, cudaStream_t, int);                                               \
  template void foldkit::cuda::tensor_scan::launch_tiles<foldkit::ReduceOp::prod, T>(                                \
      const foldkit::cuda::tensor_scan::TileArgs&, cudaStream_t, int);                                               \
  template void foldkit::cuda::tensor_scan::launch_tiles<foldkit::ReduceOp::min, T>(                                 \
      const foldkit::cuda::tensor_scan::TileArgs&, cudaStream_t, int);                                               \
  template void foldkit::cuda::tensor_scan::launch_tiles<foldkit::ReduceOp::max, T>(                                 \
      const foldkit::cuda::tensor_scan::TileArgs&, cudaStream_t, int);
