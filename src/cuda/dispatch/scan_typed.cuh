// Definitions of the typed CUDA scan entry points. Included only by the per-dtype
// instantiation files in src/cuda/instantiate/ (scan_<dtype>.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "foldkit/cuda/dispatch/scan_launch.cuh"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/tuning/scan_tuning.hpp"

namespace foldkit::cuda {

namespace detail {

template <ReduceOp Op, class A>
using scan_combine_t = std::conditional_t<
    Op == ReduceOp::sum, op::Sum<A>,
    std::conditional_t<Op == ReduceOp::prod, op::Prod<A>, std::conditional_t<Op == ReduceOp::min, op::Min<A>, op::Max<A>>>>;

// One scan launch. Heads: NoHeads (whole array) or SegmentHeads (blocked / segmented, already
// validated by the caller).
template <ReduceOp Op, class T, bool kExclusive, class Heads = NoHeads>
void launch_scan(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, scan_accum_t<Op, T> init, Workspace ws,
                 cudaStream_t stream, Heads heads = {}) {
  static_assert(is_scan_op(Op), "scans take sum, prod, min or max");
  using O = scan_result_t<Op, T>;
  using A = scan_accum_t<Op, T>;
  using Spec = ScanSpec<T, A, O, scan_combine_t<Op, A>>;
  using Policy = tuning::ScanPolicyFor<sizeof(T), sizeof(A), !std::is_same_v<Heads, NoHeads>>;
  static_assert(Policy::kTile >= tuning::scan_tile_elements(sizeof(T)), "the workspace is sized by the smallest tile");
  // The documented size (scan_workspace_bytes), not the tighter need of this op: a workspace
  // sized by the documented rule always works, and one byte less is always refused.
  const std::size_t need = n > 0 ? scan_workspace_bytes(n, dtype_v<T>) : 0;
  launch_scan_kernel<Policy, kExclusive, Spec, Heads>(d_in, n, d_out, init, ws, need, stream, Spec{}, heads);
}

// The accumulator's view of an exclusive scan's init (half/bf16 inits widen to float).
template <ReduceOp Op, class T>
scan_accum_t<Op, T> scan_init(scan_result_t<Op, T> init) {
  return static_cast<scan_accum_t<Op, T>>(init);
}

}  // namespace detail

template <ReduceOp Op, class T>
void inclusive_scan(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, Workspace ws, cudaStream_t stream) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan<Op, T, false>(d_in, n, d_out, scan_accum_t<Op, T>{}, ws, stream);
}
template <ReduceOp Op, class T>
void inclusive_scan(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, cudaStream_t stream) {
  detail::launch_scan<Op, T, false>(d_in, n, d_out, scan_accum_t<Op, T>{}, Workspace{}, stream);
}
template <ReduceOp Op, class T>
void exclusive_scan(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, scan_result_t<Op, T> init,
                    Workspace ws, cudaStream_t stream) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan<Op, T, true>(d_in, n, d_out, detail::scan_init<Op, T>(init), ws, stream);
}
template <ReduceOp Op, class T>
void exclusive_scan(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, scan_result_t<Op, T> init,
                    cudaStream_t stream) {
  detail::launch_scan<Op, T, true>(d_in, n, d_out, detail::scan_init<Op, T>(init), Workspace{}, stream);
}

template <ReduceOp Op, class T>
void inclusive_scan_blocked(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, std::int64_t block_length,
                            Workspace ws, cudaStream_t stream) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan<Op, T, false>(d_in, n, d_out, scan_accum_t<Op, T>{}, ws, stream,
                                    detail::blocked_heads(block_length));
}
template <ReduceOp Op, class T>
void inclusive_scan_blocked(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, std::int64_t block_length,
                            cudaStream_t stream) {
  detail::launch_scan<Op, T, false>(d_in, n, d_out, scan_accum_t<Op, T>{}, Workspace{}, stream,
                                    detail::blocked_heads(block_length));
}
template <ReduceOp Op, class T>
void exclusive_scan_blocked(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, std::int64_t block_length,
                            scan_result_t<Op, T> init, Workspace ws, cudaStream_t stream) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan<Op, T, true>(d_in, n, d_out, detail::scan_init<Op, T>(init), ws, stream,
                                   detail::blocked_heads(block_length));
}
template <ReduceOp Op, class T>
void exclusive_scan_blocked(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out, std::int64_t block_length,
                            scan_result_t<Op, T> init, cudaStream_t stream) {
  detail::launch_scan<Op, T, true>(d_in, n, d_out, detail::scan_init<Op, T>(init), Workspace{}, stream,
                                   detail::blocked_heads(block_length));
}

template <ReduceOp Op, class T>
void inclusive_scan_segmented(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, Workspace ws,
                              cudaStream_t stream) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan<Op, T, false>(d_in, n, d_out, scan_accum_t<Op, T>{}, ws, stream,
                                    detail::segment_heads(d_offsets, num_segments, n));
}
template <ReduceOp Op, class T>
void inclusive_scan_segmented(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, cudaStream_t stream) {
  detail::launch_scan<Op, T, false>(d_in, n, d_out, scan_accum_t<Op, T>{}, Workspace{}, stream,
                                    detail::segment_heads(d_offsets, num_segments, n));
}
template <ReduceOp Op, class T>
void exclusive_scan_segmented(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, scan_result_t<Op, T> init,
                              Workspace ws, cudaStream_t stream) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan<Op, T, true>(d_in, n, d_out, detail::scan_init<Op, T>(init), ws, stream,
                                   detail::segment_heads(d_offsets, num_segments, n));
}
template <ReduceOp Op, class T>
void exclusive_scan_segmented(const T* d_in, std::int64_t n, scan_result_t<Op, T>* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, scan_result_t<Op, T> init,
                              cudaStream_t stream) {
  detail::launch_scan<Op, T, true>(d_in, n, d_out, detail::scan_init<Op, T>(init), Workspace{}, stream,
                                   detail::segment_heads(d_offsets, num_segments, n));
}

}  // namespace foldkit::cuda

#define FOLDKIT_INSTANTIATE_SCAN_OP(OP, T)                                                                        \
  template void foldkit::cuda::inclusive_scan<OP, T>(const T*, std::int64_t, foldkit::scan_result_t<OP, T>*,      \
                                                     foldkit::cuda::Workspace, cudaStream_t);                     \
  template void foldkit::cuda::inclusive_scan<OP, T>(const T*, std::int64_t, foldkit::scan_result_t<OP, T>*,      \
                                                     cudaStream_t);                                               \
  template void foldkit::cuda::exclusive_scan<OP, T>(const T*, std::int64_t, foldkit::scan_result_t<OP, T>*,      \
                                                     foldkit::scan_result_t<OP, T>, foldkit::cuda::Workspace,      \
                                                     cudaStream_t);                                               \
  template void foldkit::cuda::exclusive_scan<OP, T>(const T*, std::int64_t, foldkit::scan_result_t<OP, T>*,      \
                                                     foldkit::scan_result_t<OP, T>, cudaStream_t);        \
  template void foldkit::cuda::inclusive_scan_blocked<OP, T>(const T*, std::int64_t, foldkit::scan_result_t<OP, T>*, \
                                                             std::int64_t, foldkit::cuda::Workspace, cudaStream_t);  \
  template void foldkit::cuda::inclusive_scan_blocked<OP, T>(const T*, std::int64_t, foldkit::scan_result_t<OP, T>*, \
                                                             std::int64_t, cudaStream_t);                            \
  template void foldkit::cuda::exclusive_scan_blocked<OP, T>(const T*, std::int64_t, foldkit::scan_result_t<OP, T>*, \
                                                             std::int64_t, foldkit::scan_result_t<OP, T>,            \
                                                             foldkit::cuda::Workspace, cudaStream_t);                \
  template void foldkit::cuda::exclusive_scan_blocked<OP, T>(const T*, std::int64_t, foldkit::scan_result_t<OP, T>*, \
                                                             std::int64_t, foldkit::scan_result_t<OP, T>,            \
                                                             cudaStream_t);                                          \
  template void foldkit::cuda::inclusive_scan_segmented<OP, T>(                                                     \
      const T*, std::int64_t, foldkit::scan_result_t<OP, T>*, const std::int64_t*, std::int64_t,                    \
      foldkit::cuda::Workspace, cudaStream_t);                                                                      \
  template void foldkit::cuda::inclusive_scan_segmented<OP, T>(                                                     \
      const T*, std::int64_t, foldkit::scan_result_t<OP, T>*, const std::int64_t*, std::int64_t, cudaStream_t);     \
  template void foldkit::cuda::exclusive_scan_segmented<OP, T>(                                                     \
      const T*, std::int64_t, foldkit::scan_result_t<OP, T>*, const std::int64_t*, std::int64_t,                    \
      foldkit::scan_result_t<OP, T>, foldkit::cuda::Workspace, cudaStream_t);                                       \
  template void foldkit::cuda::exclusive_scan_segmented<OP, T>(                                                     \
      const T*, std::int64_t, foldkit::scan_result_t<OP, T>*, const std::int64_t*, std::int64_t,                    \
      foldkit::scan_result_t<OP, T>, cudaStream_t);

#define FOLDKIT_INSTANTIATE_SCAN(T)                       \
  FOLDKIT_INSTANTIATE_SCAN_OP(foldkit::ReduceOp::sum, T)  \
  FOLDKIT_INSTANTIATE_SCAN_OP(foldkit::ReduceOp::prod, T) \
  FOLDKIT_INSTANTIATE_SCAN_OP(foldkit::ReduceOp::min, T)  \
  FOLDKIT_INSTANTIATE_SCAN_OP(foldkit::ReduceOp::max, T)
