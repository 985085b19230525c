// The main() of the probes that take `ROWS COLS [ROWS COLS ...]` (foldkit-scan-floor,
// foldkit-colscan-l2-probe, foldkit-colscan-two-pass-probe): one non-blocking stream and one
// launch gate for every case, run_case(rows, cols, stream, gate) per pair, the worst exit code.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "foldkit/cuda/dispatch/runtime.hpp"
#include "timing.hpp"

namespace fkprobe {

template <class RunCase>
int run_matrix_cases(int argc, char** argv, const char* name, RunCase run_case) {
  if (argc < 3 || (argc - 1) % 2 != 0) {
    std::fprintf(stderr, "usage: %s ROWS COLS [ROWS COLS ...]\n", name);
    return 2;
  }
  cudaStream_t s = nullptr;
  foldkit::cuda::detail::check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  fkbench::LaunchGate gate;
  int rc = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::int64_t rows = std::atoll(argv[i]), cols = std::atoll(argv[i + 1]);
    rc = std::max(rc, run_case(rows, cols, s, gate));
  }
  cudaStreamDestroy(s);
  return rc;
}

}  // namespace fkprobe
