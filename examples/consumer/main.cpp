// Sums 1..n with foldkit's CPU backend and, in CUDA builds with a GPU present, its CUDA backend,
// and checks the exact answer n(n+1)/2; on the CPU also as the row sums of a (1000, 1000) view
// with a user functor (the header-only tensor reduce_custom). Exit status 0 means every
// available backend agreed.
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

#include "foldkit/config.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/tensor_reduce_custom.hpp"
#if FOLDKIT_WITH_CUDA
#include <cuda_runtime_api.h>

#include "foldkit/cuda/reduce.hpp"
#endif

namespace {

struct Plus {  // a user functor (int32_t rows of 1000 of these values fit)
  std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a + b; }
};

// The row sums of `data` as a (1000, n / 1000) tensor, added up.
std::int64_t tensor_rows_sum(const std::vector<std::int32_t>& data) {
  const std::int64_t rows = 1000, cols = static_cast<std::int64_t>(data.size()) / rows;
  std::vector<std::int32_t> sums(static_cast<std::size_t>(rows));
  foldkit::cpu::reduce_custom(foldkit::TensorView::contiguous(data.data(), foldkit::DType::i32, {rows, cols}), {1}, false,
                              foldkit::TensorView::contiguous(sums.data(), foldkit::DType::i32, {rows}), Plus{}, 0);
  return std::accumulate(sums.begin(), sums.end(), std::int64_t{0});
}

bool check(const char* backend, std::int64_t got, std::int64_t want) {
  std::printf("%s sum = %lld (%s)\n", backend, static_cast<long long>(got), got == want ? "ok" : "WRONG");
  return got == want;
}

#if FOLDKIT_WITH_CUDA
// Returns false only for a wrong answer or a CUDA failure; no GPU is not an error here.
bool cuda_sum_ok(const std::vector<std::int32_t>& data, std::int64_t want) {
  if (!foldkit::cuda::device_available()) {
    std::printf("cuda: no usable GPU, skipping the CUDA backend\n");
    return true;
  }
  void* buffer = nullptr;
  const std::size_t bytes = data.size() * sizeof(std::int32_t);
  if (cudaMalloc(&buffer, bytes) != cudaSuccess ||
      cudaMemcpy(buffer, data.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    std::printf("cuda: allocation or copy failed\n");
    cudaFree(buffer);
    return false;
  }
  const auto* d_data = static_cast<const std::int32_t*>(buffer);
  bool ok = false;
  try {
    const std::int64_t got = foldkit::cuda::reduce_to_host<foldkit::ReduceOp::sum>(
        d_data, static_cast<std::int64_t>(data.size()));
    ok = check("cuda", got, want);
  } catch (const foldkit::Error& e) {
    std::printf("cuda: %s\n", e.what());
  }
  cudaFree(buffer);
  return ok;
}
#endif

}  // namespace

int main() {
  const std::int64_t n = 1000000;
  std::vector<std::int32_t> data(static_cast<std::size_t>(n));
  std::iota(data.begin(), data.end(), 1);
  const std::int64_t want = n * (n + 1) / 2;  // does not fit in 32 bits: the sum widens to i64

  std::printf("foldkit %s (CUDA backend: %d)\n", FOLDKIT_VERSION, FOLDKIT_WITH_CUDA);
  bool ok = check("cpu", foldkit::cpu::sum(data.data(), n), want);
  ok = check("cpu tensor rows", tensor_rows_sum(data), want) && ok;
#if FOLDKIT_WITH_CUDA
  ok = cuda_sum_ok(data, want) && ok;
#endif
  return ok ? 0 : 1;
}
