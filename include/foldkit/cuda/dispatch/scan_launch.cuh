// Launching the single-pass scan kernel (device/scan_kernel.cuh) for any Spec: the built-in
// ops (src/cuda/dispatch/scan_typed.cuh) and user functors (scan_custom.cuh). Checks n and the
// workspace, provides the convenient form's workspace, and launches one grid of one block per
// tile. Internal (namespace detail), but installed for the header-only user-functor path.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "foldkit/cuda/device/scan_kernel.cuh"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/dispatch/scan_runtime.hpp"

namespace foldkit::cuda::detail {

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

// One scan launch of n elements with policy Policy. ws: the caller's workspace, or
// {nullptr, 0} for the convenient form; ws_needed: the documented workspace size for this n
// (a workspace of that size always works, one byte less is always refused). Heads: NoHeads
// (whole array) or SegmentHeads (blocked / segmented, already validated by the caller).
template <class Policy, bool kExclusive, class Spec, class Heads>
void launch_scan_kernel(const typename Spec::input_type* d_in, std::int64_t n, typename Spec::output_type* d_out,
                        typename Spec::accum_type init, Workspace ws, std::size_t ws_needed, cudaStream_t stream,
                        const Spec& spec, Heads heads) {
  using T = typename Spec::input_type;
  using A = typename Spec::accum_type;
  using O = typename Spec::output_type;
  if (n < 0) throw Error(Errc::invalid_argument, "scan: n is negative (" + std::to_string(n) + ")");
  if (n == 0) {
    // Nothing is read or written, so the n-element arrays are not checked; an explicit workspace
    // is, as for any n (the validation rule, README "Errors").
    if (ws.ptr != nullptr) {
      if (reinterpret_cast<std::uintptr_t>(ws.ptr) % 16 != 0)
        throw Error(Errc::invalid_argument, "scan: workspace must be 16-byte aligned");
      check_device_pointer(ws.ptr, "workspace");
    }
    return;
  }
  const std::int64_t tiles = (n + Policy::kTile - 1) / Policy::kTile;
  if (tiles > 0xffffffffLL) throw Error(Errc::unsupported, "scan: n is too large");
  const bool convenient = ws.ptr == nullptr && ws.bytes == 0;
  if (convenient) ws = scan_stream_workspace(stream, ws_needed);
  const int device =
      validate_scan_args(d_in, static_cast<std::size_t>(n) * sizeof(T), d_out, static_cast<std::size_t>(n) * sizeof(O),
                         std::is_same_v<T, O>, ws, ws_needed);
  if (reinterpret_cast<std::uintptr_t>(d_in) % alignof(T) != 0 || reinterpret_cast<std::uintptr_t>(d_out) % alignof(O) != 0)
    throw Error(Errc::invalid_argument, "scan: input or output is not aligned to its element size");
  if constexpr (std::is_same_v<Heads, SegmentHeads>) {
    // A blocked scan of at least two blocks of two or more whole tiles: its tickets interleave the
    // blocks' tiles (scan_kernel.cuh), the same tiles and slots in another order.
    const std::int64_t len = heads.block_length;
    if (heads.offsets == nullptr && len >= 2 * Policy::kTile && len % Policy::kTile == 0 && n % len == 0 && n / len >= 2)
      heads.lines = static_cast<unsigned>(n / len);
  }
  auto* header = static_cast<ScanHeader*>(ws.ptr);
  auto* slots = reinterpret_cast<ScanTileSlots<A>*>(static_cast<char*>(ws.ptr) + kScanHeaderBytes);
  prefer_shared_memory<Policy, kExclusive, Spec, Heads>(device);
  scan_kernel<Policy, kExclusive, Spec, Heads><<<static_cast<unsigned>(tiles), Policy::kThreads, 0, stream>>>(
      d_in, n, d_out, init, header, slots, static_cast<unsigned>(tiles), spec, heads);
  check_cuda(cudaGetLastError(), "launching scan_kernel");
  if (convenient) scan_stream_workspace_launched(stream);  // lets an eviction free it in stream order
}

}  // namespace foldkit::cuda::detail
