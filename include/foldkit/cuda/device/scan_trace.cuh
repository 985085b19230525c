// Optional timeline hooks of the scan kernel (device/scan_kernel.cuh), for foldkit-scan-trace
// (tools/bench/scan_trace_main.cu): a spec that declares `scan_trace_point(int) const` and
// `scan_trace_flush(unsigned tile) const` is called by thread 0 of every block at the points
// below. The library's specs declare neither, so the hooks compile to nothing in the library
// (its SASS is unchanged).
#pragma once

#include <type_traits>
#include <utility>

namespace foldkit::cuda {

enum ScanTracePoint : int {
  kScanTraceStart = 0,      // the block started (before it draws its ticket)
  kScanTraceLoaded = 1,     // the tile is in shared memory (every copy landed, after the barrier)
  kScanTracePublished = 2,  // thread 0 published the tile's aggregate (or tile 0's inclusive prefix)
  kScanTracePrefix = 3,     // warp 0 has the tile's exclusive prefix (the look-back returned)
  kScanTraceStored = 4,     // thread 0 issued its share of the tile's output stores
  kScanTracePoints = 5,
};

template <class Spec, class = void>
struct has_scan_trace : std::false_type {};
template <class Spec>
struct has_scan_trace<Spec, std::void_t<decltype(std::declval<const Spec&>().scan_trace_point(0))>> : std::true_type {};

template <class Spec>
__device__ __forceinline__ void scan_trace_point(const Spec& spec, int point) {
  if constexpr (has_scan_trace<Spec>::value) spec.scan_trace_point(point);
}

// Writes the block's stamps out, filed under its tile, when the block is about to exit.
template <class Spec>
__device__ __forceinline__ void scan_trace_flush(const Spec& spec, unsigned tile) {
  if constexpr (has_scan_trace<Spec>::value) spec.scan_trace_flush(tile);
}

}  // namespace foldkit::cuda
