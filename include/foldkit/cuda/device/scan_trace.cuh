// The trace points of the scan kernel (device/scan_kernel.cuh), for foldkit-scan-trace
// (tools/probes/scan_trace_main.cu; the hooks: trace_hooks.cuh). A traced spec's
// trace_flush(unsigned tile) files the block's stamps under its tile.
#pragma once

#include "foldkit/cuda/device/trace_hooks.cuh"

namespace foldkit::cuda {

enum ScanTracePoint : int {
  kScanTraceStart = 0,      // the block started (before it draws its ticket)
  kScanTraceLoaded = 1,     // the tile is in shared memory (every copy landed, after the barrier)
  kScanTracePublished = 2,  // thread 0 published the tile's aggregate (or tile 0's inclusive prefix)
  kScanTracePrefix = 3,     // warp 0 has the tile's exclusive prefix (the look-back returned)
  kScanTraceStored = 4,     // thread 0 issued its share of the tile's output stores
  kScanTracePoints = 5,
};

}  // namespace foldkit::cuda
