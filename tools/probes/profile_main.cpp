// foldkit-profile: runs one reduction many times on random data, for a profiler to attach to
// (ncu, nsys). It times nothing itself; foldkit-bench does the measuring.
// Usage: foldkit-profile OP DTYPE N [CALLS]   e.g. foldkit-profile sum f64 1048576 20
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/reduce.hpp"

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "foldkit-profile: %s\nusage: foldkit-profile OP DTYPE N [CALLS]\n", what);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return fail("missing arguments");
  foldkit::ReduceOp op{};
  foldkit::DType dtype{};
  bool op_found = false, dtype_found = false;
  for (int o = 0; o < 7; ++o)
    if (std::strcmp(argv[1], foldkit::op_name(static_cast<foldkit::ReduceOp>(o))) == 0) {
      op = static_cast<foldkit::ReduceOp>(o);
      op_found = true;
    }
  for (foldkit::DType t : foldkit::kAllDTypes)
    if (std::strcmp(argv[2], foldkit::dtype_name(t)) == 0) {
      dtype = t;
      dtype_found = true;
    }
  if (!op_found) return fail("unknown op");
  if (!dtype_found) return fail("unknown dtype");
  const std::int64_t n = std::atoll(argv[3]);
  const int calls = argc > 4 ? std::atoi(argv[4]) : 20;
  if (n <= 0 || calls <= 0) return fail("N and CALLS must be positive");

  try {
    // Random bytes that are valid values of every dtype: small non-zero integers, written as
    // the dtype's bit pattern through the library's own conversion of a double.
    const std::size_t bytes = static_cast<std::size_t>(n) * foldkit::dtype_size(dtype);
    std::vector<unsigned char> host(bytes);
    std::mt19937_64 rng(std::random_device{}());
    foldkit::visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      auto* p = reinterpret_cast<T*>(host.data());
      std::uniform_int_distribution<int> value(1, 100);
      for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<float>(value(rng)));
    });
    void* d_in = nullptr;
    void* d_out = nullptr;
    foldkit::cuda::detail::check_cuda(cudaMalloc(&d_in, bytes), "cudaMalloc (input)");
    foldkit::cuda::detail::check_cuda(cudaMalloc(&d_out, 64), "cudaMalloc (output)");
    foldkit::cuda::detail::check_cuda(cudaMemcpy(d_in, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    foldkit::cuda::Workspace ws;
    ws.bytes = foldkit::cuda::reduce_workspace_bytes();
    foldkit::cuda::detail::check_cuda(cudaMalloc(&ws.ptr, ws.bytes), "cudaMalloc (workspace)");
    foldkit::cuda::init_workspace(ws, nullptr);
    for (int c = 0; c < calls; ++c) foldkit::cuda::reduce(op, dtype, d_in, n, d_out, ws, nullptr);
    foldkit::cuda::detail::check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    std::printf("foldkit-profile: %d calls of %s %s n=%lld done\n", calls, argv[1], argv[2], static_cast<long long>(n));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "foldkit-profile: %s\n", e.what());
    return 1;
  }
  return 0;
}
