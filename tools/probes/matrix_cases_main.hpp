// The main() of the probes that take `ROWS COLS [ROWS COLS ...]` (foldkit-scan-floor,
// foldkit-colscan-l2-probe, foldkit-colscan-two-pass-probe): one non-blocking stream and one
// launch gate for every case, run_case(rows, cols, stream, gate) per pair, the worst exit code.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/tensor_scan.hpp"
#include "foldkit/tensor.hpp"
#include "timing.hpp"

namespace fkprobe {

// The library's cumsum over dim 0 of a row-major (rows, cols) f32 matrix on `device`, into a
// row-major output: the column-scan probes' reference and rival.
inline void library_cumsum_dim0(const void* in, void* out, std::int64_t rows, std::int64_t cols, const foldkit::Device& device,
                                cudaStream_t st) {
  foldkit::cuda::inclusive_scan(foldkit::ReduceOp::sum, foldkit::TensorView::contiguous(in, foldkit::DType::f32, {rows, cols}, device),
                                0, foldkit::TensorView::contiguous(out, foldkit::DType::f32, {rows, cols}, device), st);
}

// The library's cumsum over dim 0 of `in` into `ref` (device), and its `count` floats on the host.
inline std::vector<float> library_reference(const void* in, void* ref, std::int64_t rows, std::int64_t cols,
                                            const foldkit::Device& device, cudaStream_t st) {
  using foldkit::cuda::detail::check_cuda;
  library_cumsum_dim0(in, ref, rows, cols, device, st);
  std::vector<float> h(static_cast<std::size_t>(rows * cols));
  check_cuda(cudaMemcpyAsync(h.data(), ref, h.size() * sizeof(float), cudaMemcpyDeviceToHost, st), "copy");
  check_cuda(cudaStreamSynchronize(st), "sync");
  return h;
}

// The copy ceiling's call for a timing list: cudaMemcpyAsync of `bytes` into next_out().
template <class NextOut>
fkbench::Call memcpy_call(std::size_t bytes, NextOut next_out, cudaStream_t st) {
  return [bytes, next_out, st](const void* in) {
    foldkit::cuda::detail::check_cuda(cudaMemcpyAsync(next_out(), in, bytes, cudaMemcpyDeviceToDevice, st), "memcpy");
  };
}

// A variant's f32 result against a reference's (host copy `ref`): its output poisoned before each
// of two calls on `in`; the largest relative difference |got - ref| / (|ref| + 1) (NaN: 1e30) and
// whether the two calls gave the same bits. run(in, out) enqueues one call on `st`.
struct VariantCheck {
  double worst = 0;
  bool same = false;
  bool ok() const { return worst < 1e-3 && same; }
};
template <class Run>
VariantCheck check_variant(Run&& run, const void* in, void* got, const std::vector<float>& ref, cudaStream_t st) {
  using foldkit::cuda::detail::check_cuda;
  const std::size_t bytes = ref.size() * sizeof(float);
  std::vector<float> first(ref.size()), again(ref.size());
  for (std::vector<float>* h : {&first, &again}) {
    check_cuda(cudaMemsetAsync(got, 0xff, bytes, st), "poison");
    run(in, got);
    check_cuda(cudaGetLastError(), "launch");
    check_cuda(cudaMemcpyAsync(h->data(), got, bytes, cudaMemcpyDeviceToHost, st), "copy");
  }
  check_cuda(cudaStreamSynchronize(st), "sync");
  VariantCheck c;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(static_cast<double>(first[i]) - ref[i]) / (std::fabs(static_cast<double>(ref[i])) + 1.0);
    c.worst = std::isnan(d) ? 1e30 : std::max(c.worst, d);
  }
  c.same = std::equal(first.begin(), first.end(), again.begin(),
                      [](float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; });
  return c;
}

// One timing line against the copy ceiling's median (ceil_us): median and batch, % of the
// ceiling's rate, the time ratio; `what` padded to `width` characters.
inline void print_copy_row(int width, const std::string& what, const fkbench::Timing& x, double ceil_us) {
  std::printf("  %-*s %9.2f us (%9.2f)   %5.1f %% of the copy ceiling   %5.2fx\n", width, what.c_str(), x.median_us,
              x.batch_us, 100.0 * ceil_us / x.median_us, x.median_us / ceil_us);
}

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
