// The trace points of the tensor scans' tile kernel (device/tensor_scan_kernel.cuh), for
// foldkit-tensor-scan-trace (tools/probes/tensor_scan_trace_main.cu; the hooks: trace_hooks.cuh).
// A traced policy's Fold declares trace_point(int), trace_note(int, long long) and
// trace_flush(unsigned tile); the library's folds declare none, so the hooks compile to nothing.
#pragma once

#include "foldkit/cuda/device/trace_hooks.cuh"

namespace foldkit::cuda::tensor_scan {

enum TileScanTracePoint : int {
  kTileTraceStart = 0,      // the block started (before it draws its ticket)
  kTileTraceLoaded = 1,     // the tile is in shared memory (after the barrier)
  kTileTracePublished = 2,  // warp 0 published the tile's aggregates (a chain's first tile: its prefix)
  kTileTraceFound = 3,      // the look-back found its inclusive predecessor (statuses read)
  kTileTracePrefix = 4,     // the look-back folded the predecessors: the tile's prefix is known
  kTileTraceStored = 5,     // thread 0 issued its share of the output stores
  kTileTraceDrawn = 6,      // thread 0 drew its ticket and computed the tile's origin
  kTileTraceIssued = 7,     // thread 0 issued its copies in (before it waits for them)
  kTileTracePoints = 8,
};

// trace_note slots: the look-back's distance to its inclusive predecessor, and its status rounds.
enum TileScanTraceNote : int {
  kTileNoteDistance = 0,
  kTileNoteStatusRounds = 1,
  kTileTraceNotes = 2,
};

}  // namespace foldkit::cuda::tensor_scan
