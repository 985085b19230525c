// A CUDA graph captured from a stream, for the graph-capture tests of the reductions and scans.
#pragma once

#include <cuda_runtime_api.h>

#include "support/cuda_backend.hpp"

namespace foldkit::test {

// Records what `record` enqueues on `stream` into a graph and instantiates it; destroys both
// when it goes out of scope (also when a check fails midway).
class CapturedGraph {
 public:
  template <class Record> CapturedGraph(cudaStream_t stream, Record&& record) {
    FOLDKIT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    try {
      record();
    } catch (...) {
      (void)cudaStreamEndCapture(stream, &graph_);
      throw;
    }
    FOLDKIT_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
    FOLDKIT_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  ~CapturedGraph() {
    if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
    if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  void launch(cudaStream_t stream) const { FOLDKIT_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace foldkit::test
