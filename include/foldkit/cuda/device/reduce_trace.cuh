// The trace points of the full-array reduction kernels, for foldkit-trace
// (tools/probes/trace_main.cu; the hooks: trace_hooks.cuh).
#pragma once

#include "foldkit/cuda/device/trace_hooks.cuh"

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

}  // namespace foldkit::cuda
