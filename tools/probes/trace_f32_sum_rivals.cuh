// foldkit-trace's launch-ab and floor reports time one f32 sum of n elements by the library and
// by CUB: the library's workspace and CUB's temporary storage for that, allocated once.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include <cub/device/device_reduce.cuh>

#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/reduce.hpp"

namespace fkbench {

class F32SumRivals {
 public:
  F32SumRivals(std::int64_t n, float* d_out, cudaStream_t s) : n_(n), out_(d_out), s_(s) {
    using foldkit::cuda::detail::check_cuda;
    ws_.bytes = foldkit::cuda::reduce_workspace_bytes();
    check_cuda(cudaMalloc(&ws_.ptr, ws_.bytes), "cudaMalloc (workspace)");
    foldkit::cuda::init_workspace(ws_, s);
    check_cuda(cub::DeviceReduce::Sum(nullptr, cub_bytes_, static_cast<const float*>(nullptr), d_out, static_cast<int>(n), s),
               "cub size");
    check_cuda(cudaMalloc(&cub_temp_, cub_bytes_), "cudaMalloc (cub)");
  }
  ~F32SumRivals() {
    cudaFree(cub_temp_);
    cudaFree(ws_.ptr);
  }
  F32SumRivals(const F32SumRivals&) = delete;
  F32SumRivals& operator=(const F32SumRivals&) = delete;

  const foldkit::cuda::Workspace& workspace() const { return ws_; }
  void library(const float* in, std::int64_t n) const {
    foldkit::cuda::reduce<foldkit::ReduceOp::sum, float>(in, n, out_, ws_, s_);
  }
  void cub(const float* in) const {
    std::size_t bytes = cub_bytes_;
    foldkit::cuda::detail::check_cuda(cub::DeviceReduce::Sum(cub_temp_, bytes, in, out_, static_cast<int>(n_), s_),
                                      "cub");
  }

 private:
  std::int64_t n_;
  float* out_;
  cudaStream_t s_;
  foldkit::cuda::Workspace ws_;
  void* cub_temp_ = nullptr;
  std::size_t cub_bytes_ = 0;
};

}  // namespace fkbench
