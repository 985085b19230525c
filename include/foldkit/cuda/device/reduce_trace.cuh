// Optional timeline hooks of the full-array reduction kernels, for foldkit-trace
// (tools/bench/trace_main.cu): a spec that declares `trace_point(int) const` is called by
// thread 0 of every block at the points below; the library's own specs declare none, so the
// hooks compile to nothing in the library.
#pragma once

#include <type_traits>

namespace foldkit::cuda {

enum ReduceTracePoint : int {
  kTraceEntry = 0,         // the block started (after waiting for the previous grid)
  kTraceReduced = 1,       // the block's share is loaded and block-reduced (thread 0 has it)
  kTraceCollectStart = 2,  // the collector block begins polling the other blocks' slots
  kTraceSeen0 = 3,         // thread 0 of the collector has seen every slot of its share
  kTraceAllSeen = 4,       // every thread of the collector has (traced kernels only: one more barrier)
  kTraceDone = 5,          // the result is stored
  kTraceLoopDone = 6,      // every thread of the block has its share loaded (traced kernels: a barrier)
  kTraceFinalReduced = 7,  // the collector has the block-reduced total, before the result's store
  kTracePoints = 8,        // points per block in a trace buffer (a spec may keep two stamps each)
};

template <class Spec, class = void>
struct has_trace_point : std::false_type {};
template <class Spec>
struct has_trace_point<Spec, std::void_t<decltype(std::declval<const Spec&>().trace_point(0))>> : std::true_type {};

template <class Spec>
__device__ __forceinline__ void trace_point(const Spec& spec, int point) {
  if constexpr (has_trace_point<Spec>::value) spec.trace_point(point);
}

// Writes the block's stamps out (thread 0, when the block is about to exit): a spec may keep its
// stamps in shared memory until then, so that no store of its own sits on the path it times.
template <class Spec>
__device__ __forceinline__ void trace_flush(const Spec& spec) {
  if constexpr (has_trace_point<Spec>::value) spec.trace_flush();
}

// A barrier for traced kernels only (to stamp a point that the whole block has passed).
template <class Spec>
__device__ __forceinline__ void trace_barrier(const Spec&) {
  if constexpr (has_trace_point<Spec>::value) __syncthreads();
}

}  // namespace foldkit::cuda
