// Optional timeline hooks of the library's kernels, for the bench's tracers (foldkit-trace,
// foldkit-scan-trace): a spec that declares `trace_point(int) const` is called by thread 0 of
// every block at a kernel's trace points (reduce_trace.cuh, scan_trace.cuh name them); the
// library's own specs declare none, so the hooks compile to nothing in the library.
#pragma once

#include <type_traits>
#include <utility>

namespace foldkit::cuda {

template <class Spec, class = void>
struct has_trace_point : std::false_type {};
template <class Spec>
struct has_trace_point<Spec, std::void_t<decltype(std::declval<const Spec&>().trace_point(0))>> : std::true_type {};

template <class Spec>
__device__ __forceinline__ void trace_point(const Spec& spec, int point) {
  if constexpr (has_trace_point<Spec>::value) spec.trace_point(point);
}

// A value a traced spec records beside its stamps (thread 0; slots are the kernel's, e.g.
// tensor_scan_trace.cuh's notes).
template <class Spec, class = void>
struct has_trace_note : std::false_type {};
template <class Spec>
struct has_trace_note<Spec, std::void_t<decltype(std::declval<const Spec&>().trace_note(0, 0LL))>> : std::true_type {};
template <class Spec>
__device__ __forceinline__ void trace_note(const Spec& spec, int slot, long long value) {
  if constexpr (has_trace_note<Spec>::value) spec.trace_note(slot, value);
}

// Writes the block's stamps out (thread 0, when the block is about to exit): a spec may keep its
// stamps in shared memory until then, so that no store of its own sits on the path it times.
// The arguments are the kernel's (the scan files its stamps under the block's tile).
template <class Spec, class... Args>
__device__ __forceinline__ void trace_flush(const Spec& spec, Args... args) {
  if constexpr (has_trace_point<Spec>::value) spec.trace_flush(args...);
}

// A barrier for traced kernels only (to stamp a point that the whole block has passed).
template <class Spec>
__device__ __forceinline__ void trace_barrier(const Spec&) {
  if constexpr (has_trace_point<Spec>::value) __syncthreads();
}

}  // namespace foldkit::cuda
