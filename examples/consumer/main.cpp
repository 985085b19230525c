// Sums 1..n with foldkit's CPU backend and, in CUDA builds with a GPU present, its CUDA backend,
// and checks the exact answer n(n+1)/2. Exit status 0 means every available backend agreed.
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

#include "foldkit/config.hpp"
#include "foldkit/reduce.hpp"
#if FOLDKIT_WITH_CUDA
#include <cuda_runtime_api.h>

#include "foldkit/cuda/reduce.hpp"
#endif

namespace {

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
#if FOLDKIT_WITH_CUDA
  ok = cuda_sum_ok(data, want) && ok;
#endif
  return ok ? 0 : 1;
}
