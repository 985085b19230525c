// Shared by the cub_*.cu files: a CubReduce around one CUB entry point. Needs nvcc.
#pragma once

#include <cub/device/device_reduce.cuh>

#include <climits>
#include <stdexcept>
#include <string>
#include <utility>

#include "cub_runner.hpp"
#include "timing.hpp"

namespace fkbench::detail {

// Fn: cudaError_t(void* temp, size_t& temp_bytes, const void* d_in, void* d_out, cudaStream_t),
// the same signature CUB uses: temp == nullptr asks for the size and does no work.
template <class Fn>
class CubCall final : public CubReduce {
 public:
  CubCall(Fn fn, std::string api) : fn_(std::move(fn)), api_(std::move(api)) {
    FKB_CHECK(fn_(nullptr, temp_bytes_, nullptr, nullptr, nullptr));
    FKB_CHECK(cudaMalloc(&temp_, temp_bytes_ ? temp_bytes_ : 1));
  }
  ~CubCall() override {
    if (temp_) cudaFree(temp_);
  }
  void run(const void* d_in, void* d_out, cudaStream_t s) override {
    std::size_t bytes = temp_bytes_;
    FKB_CHECK(fn_(temp_, bytes, d_in, d_out, s));
  }
  std::string api() const override { return api_; }

 private:
  Fn fn_;
  std::string api_;
  void* temp_ = nullptr;
};

template <class Fn>
std::unique_ptr<CubReduce> make_call(Fn fn, std::string api) {
  return std::make_unique<CubCall<Fn>>(std::move(fn), std::move(api));
}

// CUB's Sum/Max/TransformReduce take num_items as a template type and choose 32-bit offsets
// for an int, 64-bit ones for an int64. The benchmark's n never exceeds 2^28, so it passes an
// int: CUB's 32-bit-offset kernels are its fastest, and foldkit is measured against the best.
inline int cub_items(std::int64_t n) {
  if (n < 0 || n > INT_MAX) throw std::runtime_error("foldkit-bench: CUB runner supports n <= INT_MAX");
  return static_cast<int>(n);
}

}  // namespace fkbench::detail
