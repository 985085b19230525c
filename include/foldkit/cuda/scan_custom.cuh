// Prefix scans of device memory with a user-supplied associative operator (compile this from a
// .cu file with nvcc).
//
//   struct Affine { std::uint32_t a, b; };  // the map x -> a * x + b (mod 2^32)
//   struct Then {                           // f then g: not commutative
//     __host__ __device__ Affine operator()(Affine f, Affine g) const { return {g.a * f.a, g.a * f.b + g.b}; }
//   };
//   foldkit::cuda::inclusive_scan_custom(d_in, n, d_out, Then{}, Affine{1, 0}, stream);
//
// Blocked and segmented forms (inclusive/exclusive_scan_custom_blocked / _segmented) take the
// built-in forms' block length or device offsets before the operator.
//
// Contract: F is callable as T(T, T) on the device (a const operator()) and associative. It
// need not be commutative: the kernel always combines an earlier value on the left, as the CPU
// backend's cpu::inclusive_scan_custom does. identity: op(identity, x) == x == op(x, identity).
// T is trivially copyable and trivially default-constructible, 4 or 8 bytes, aligned to its
// alignof. Inclusive: out[i] = in[0] op ... op in[i]; exclusive: out[0] = init,
// out[i] = init op in[0] op ... op in[i - 1].
//
// The same single-pass kernel as foldkit::cuda::inclusive_scan (scan.hpp): one launch, each
// element read once and written once, deterministic (a fixed bracketing; bitwise the same on
// every call), stream-ordered, in place (d_out == d_in) allowed. Workspace: explicit
// (scan_custom_workspace_bytes<T>(n) bytes, zeroed once) or the convenient form, with the same
// rules and errors as the built-in scans.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "foldkit/cuda/dispatch/scan_launch.cuh"
#include "foldkit/cuda/scan.hpp"

namespace foldkit::cuda {

// What the scan kernel computes for a user operator: T in, T accumulated, T out.
template <class T, class F>
struct CustomScanSpec {
  using input_type = T;
  using accum_type = T;
  using output_type = T;
  F op;
  T identity_value;
  __device__ __forceinline__ T identity() const { return identity_value; }
  __device__ __forceinline__ T identity_input() const { return identity_value; }
  __device__ __forceinline__ static T load(T v) { return v; }
  __device__ __forceinline__ static T store(T v) { return v; }
};

namespace detail {

template <class T>
constexpr void check_custom_scan_type() {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_default_constructible_v<T>,
                "scan_custom: T must be trivially copyable and trivially default-constructible");
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "scan_custom: T must be 4 or 8 bytes");
}

template <bool kExclusive, class T, class F, class Heads = NoHeads>
void launch_scan_custom(const T* d_in, std::int64_t n, T* d_out, F op, T identity, T init, Workspace ws,
                        cudaStream_t stream, Heads heads = {}) {
  check_custom_scan_type<T>();
  using Spec = CustomScanSpec<T, F>;
  using Policy = tuning::CustomScanPolicyFor<sizeof(T), !std::is_same_v<Heads, NoHeads>>;
  static_assert(Policy::kTile >= tuning::scan_tile_elements(sizeof(T)), "the workspace is sized by the smallest tile");
  const std::size_t need = n > 0 ? scan_workspace_bytes_for(scan_tiles(n, sizeof(T)), sizeof(T)) : 0;
  launch_scan_kernel<Policy, kExclusive, Spec, Heads>(d_in, n, d_out, kExclusive ? init : identity, ws, need, stream,
                                                      Spec{op, identity}, heads);
}

}  // namespace detail

// Bytes of workspace a custom scan of n elements of T needs (0 <= n).
template <class T>
std::size_t scan_custom_workspace_bytes(std::int64_t n) {
  detail::check_custom_scan_type<T>();
  if (n < 0) throw Error(Errc::invalid_argument, "scan_custom_workspace_bytes: n is negative");
  return detail::scan_workspace_bytes_for(n > 0 ? detail::scan_tiles(n, sizeof(T)) : 0, sizeof(T));
}

template <class T, class F>
void inclusive_scan_custom(const T* d_in, std::int64_t n, T* d_out, F op, T identity, Workspace ws,
                           cudaStream_t stream = nullptr) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan_custom<false>(d_in, n, d_out, op, identity, identity, ws, stream);
}
template <class T, class F>
void inclusive_scan_custom(const T* d_in, std::int64_t n, T* d_out, F op, T identity, cudaStream_t stream = nullptr) {
  detail::launch_scan_custom<false>(d_in, n, d_out, op, identity, identity, Workspace{}, stream);
}
template <class T, class F>
void exclusive_scan_custom(const T* d_in, std::int64_t n, T* d_out, F op, T identity, T init, Workspace ws,
                           cudaStream_t stream = nullptr) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan_custom<true>(d_in, n, d_out, op, identity, init, ws, stream);
}
template <class T, class F>
void exclusive_scan_custom(const T* d_in, std::int64_t n, T* d_out, F op, T identity, T init,
                           cudaStream_t stream = nullptr) {
  detail::launch_scan_custom<true>(d_in, n, d_out, op, identity, init, Workspace{}, stream);
}

// Blocked and segmented forms: semantics, offsets contract and errors as the built-in
// inclusive_scan_blocked / _segmented (scan.hpp); every exclusive block or segment starts at
// init. d_offsets: device memory, num_segments + 1 entries.
template <class T, class F>
void inclusive_scan_custom_blocked(const T* d_in, std::int64_t n, T* d_out, std::int64_t block_length, F op,
                                   T identity, Workspace ws, cudaStream_t stream = nullptr) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan_custom<false>(d_in, n, d_out, op, identity, identity, ws, stream,
                                    detail::blocked_heads(block_length));
}
template <class T, class F>
void inclusive_scan_custom_blocked(const T* d_in, std::int64_t n, T* d_out, std::int64_t block_length, F op,
                                   T identity, cudaStream_t stream = nullptr) {
  detail::launch_scan_custom<false>(d_in, n, d_out, op, identity, identity, Workspace{}, stream,
                                    detail::blocked_heads(block_length));
}
template <class T, class F>
void exclusive_scan_custom_blocked(const T* d_in, std::int64_t n, T* d_out, std::int64_t block_length, F op,
                                   T identity, T init, Workspace ws, cudaStream_t stream = nullptr) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan_custom<true>(d_in, n, d_out, op, identity, init, ws, stream, detail::blocked_heads(block_length));
}
template <class T, class F>
void exclusive_scan_custom_blocked(const T* d_in, std::int64_t n, T* d_out, std::int64_t block_length, F op,
                                   T identity, T init, cudaStream_t stream = nullptr) {
  detail::launch_scan_custom<true>(d_in, n, d_out, op, identity, init, Workspace{}, stream,
                                   detail::blocked_heads(block_length));
}
template <class T, class F>
void inclusive_scan_custom_segmented(const T* d_in, std::int64_t n, T* d_out, const std::int64_t* d_offsets,
                                     std::int64_t num_segments, F op, T identity, Workspace ws,
                                     cudaStream_t stream = nullptr) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan_custom<false>(d_in, n, d_out, op, identity, identity, ws, stream,
                                    detail::segment_heads(d_offsets, num_segments, n));
}
template <class T, class F>
void inclusive_scan_custom_segmented(const T* d_in, std::int64_t n, T* d_out, const std::int64_t* d_offsets,
                                     std::int64_t num_segments, F op, T identity, cudaStream_t stream = nullptr) {
  detail::launch_scan_custom<false>(d_in, n, d_out, op, identity, identity, Workspace{}, stream,
                                    detail::segment_heads(d_offsets, num_segments, n));
}
template <class T, class F>
void exclusive_scan_custom_segmented(const T* d_in, std::int64_t n, T* d_out, const std::int64_t* d_offsets,
                                     std::int64_t num_segments, F op, T identity, T init, Workspace ws,
                                     cudaStream_t stream = nullptr) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "scan: workspace is null");
  detail::launch_scan_custom<true>(d_in, n, d_out, op, identity, init, ws, stream,
                                   detail::segment_heads(d_offsets, num_segments, n));
}
template <class T, class F>
void exclusive_scan_custom_segmented(const T* d_in, std::int64_t n, T* d_out, const std::int64_t* d_offsets,
                                     std::int64_t num_segments, F op, T identity, T init,
                                     cudaStream_t stream = nullptr) {
  detail::launch_scan_custom<true>(d_in, n, d_out, op, identity, init, Workspace{}, stream,
                                   detail::segment_heads(d_offsets, num_segments, n));
}

}  // namespace foldkit::cuda
