// Definitions of the typed CUDA scan entry points. Included only by the per-dtype
// instantiation files in src/cuda/instantiate/ (scan_<dtype>.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>

#include "cuda/dispatch/scan_runtime.hpp"
#include "foldkit/cuda/device/scan_kernel.cuh"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/tuning/scan_tuning.hpp"

namespace foldkit::cuda {

namespace detail {

template <ReduceOp Op, class A>
using scan_combine_t = std::conditional_t<
    Op == ReduceOp::sum, op::Sum<A>,
    std::conditional_t<Op == ReduceOp::prod, op::Prod<A>, std::conditional_t<Op == ReduceOp::min, op::Min<A>, op::Max<A>>>>;

// The scan's tiles fill an SM's shared memory (tuning/scan_tuning.hpp), so its kernels ask for
// the largest shared-memory carveout, once per (instantiation, device): the template arguments
// key it because kernels of one signature share a pointer type, and the device because the
// runtime keeps a kernel's attributes per device.
template <class Policy, bool kExclusive, class Spec, class Heads>
void prefer_shared_memory(int device) {
  static std::atomic<int> asked[kMemoDevices] = {};
  per_device_memo(asked, device, [] {
    if (cudaFuncSetAttribute(scan_kernel<Policy, kExclusive, Spec, Heads>, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared) != cudaSuccess)
      (void)cudaGetLastError();  // a hint: the launch works without it, at the driver's carveout
    return 1;
  });
}

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
  if (n < 0) throw Error(Errc::invalid_argument, "scan: n is negative (" + std::to_string(n) + ")");
  if (n == 0) return;
  const std::int64_t tiles = (n + Policy::kTile - 1) / Policy::kTile;
  if (tiles > 0xffffffffLL) throw Error(Errc::unsupported, "scan: n is too large");
  // The documented size (scan_workspace_bytes), not the tighter need of this op: a workspace
  // sized by the documented rule always works, and one byte less is always refused.
  const std::size_t need = scan_workspace_bytes(n, dtype_v<T>);
  if (ws.ptr == nullptr && ws.bytes == 0) ws = scan_stream_workspace(stream, need);  // convenient form
  const int device = validate_scan_args(d_in, static_cast<std::size_t>(n) * sizeof(T), d_out, static_cast<std::size_t>(n) * sizeof(O),
                     std::is_same_v<T, O>, ws, need);
  if (reinterpret_cast<std::uintptr_t>(d_in) % alignof(T) != 0 || reinterpret_cast<std::uintptr_t>(d_out) % alignof(O) != 0)
    throw Error(Errc::invalid_argument, "scan: input or output is not aligned to its element size");
  auto* header = static_cast<ScanHeader*>(ws.ptr);
  auto* slots = reinterpret_cast<ScanTileSlots<A>*>(static_cast<char*>(ws.ptr) + kScanHeaderBytes);
  prefer_shared_memory<Policy, kExclusive, Spec, Heads>(device);
  scan_kernel<Policy, kExclusive, Spec, Heads><<<static_cast<unsigned>(tiles), Policy::kThreads, 0, stream>>>(
      d_in, n, d_out, init, header, slots, static_cast<unsigned>(tiles), Spec{}, heads);
  check_cuda(cudaGetLastError(), "launching scan_kernel");
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
