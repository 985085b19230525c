// foldkit-colscan-core-probe: is the column scan's gap on narrow matrices its kernel, or the
// problem? A cumsum over dim 0 of a (ROWS, C) f32 matrix whose rows lie back to back is a
// whole-array scan of ROWS elements of C floats under elementwise addition. The core scan kernel
// (device/scan_kernel.cuh, the whole-array scans) reads 89-90 % of the copy ceiling on 2^26 f32
// elements on the H200 where the column scan's tile kernel reads 74.5-82 % on the same bytes
// (foldkit-bench axes, bench/results/h200-2026-11-30-axes-references.csv). This probe runs the core
// kernel itself on rows of C = 2 (8 bytes) or C = 4 (16 bytes) floats, at a few policies, beside
// the library's column scan, the whole-array f32 scan of the same bytes and cudaMemcpyAsync.
// Results are checked against the library's column scan (relative difference: the additions'
// order differs) and against themselves (two calls, bitwise).
//
// Prediction: C = 4 at the library's 2^26-element shape (2^24, 4) within 2 points of the
// whole-array f32 scan (~88-90 %) at one of the policies, where the column scan reads 76.5 %;
// if so, the narrow flat column scans (lines of 8 or 16 bytes) belong on the core kernel.
//
// Usage: foldkit-colscan-core-probe ROWS C [ROWS C ...]   (C = 2 or 4)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/dispatch/scan_launch.cuh"
#include "foldkit/cuda/dispatch/scan_runtime.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/scan_custom.cuh"
#include "foldkit/cuda/tensor_scan.hpp"
#include "matrix_cases_main.hpp"
#include "timing.hpp"

namespace {

using foldkit::cuda::detail::check_cuda;
namespace tn = foldkit::cuda::tuning;

// A row of C floats, aligned as a whole so that the kernel's 16-byte copies hold whole rows.
template <int C>
struct alignas(4 * C) Row {
  float v[C];
};
template <int C>
struct RowPlus {
  __host__ __device__ Row<C> operator()(Row<C> a, const Row<C>& b) const {
#pragma unroll
    for (int c = 0; c < C; ++c) a.v[c] += b.v[c];
    return a;
  }
};

// The core kernel's policy at `items` rows a thread and `blocks` blocks an SM (256 threads, 16
// look-back windows, the core's 2 MiB L2 prefetch and first-wave lag, the one-at-a-time left fold).
template <int C, int kItems, int kBlocks>
using CorePolicy = tn::ScanPolicy<256, kItems, kBlocks, 16, true, tn::scan_prefetch_tiles(4 * C, 256, kItems),
                                  tn::kFirstWaveLagEighths, false>;

// One variant: the core kernel on rows of C floats at one policy, with its own workspace (zeroed
// once; each call marks its tiles with a new epoch).
struct Variant {
  std::string name;
  std::function<void(const void*, void*, cudaStream_t)> run;
};

template <int C, int kItems, int kBlocks>
Variant core_variant(std::int64_t rows, std::vector<void*>& frees) {
  using Policy = CorePolicy<C, kItems, kBlocks>;
  using Spec = foldkit::cuda::CustomScanSpec<Row<C>, RowPlus<C>>;
  const std::int64_t tiles = (rows + Policy::kTile - 1) / Policy::kTile;
  foldkit::cuda::Workspace ws{};
  ws.bytes = foldkit::cuda::detail::scan_workspace_bytes_for(tiles, sizeof(Row<C>));
  check_cuda(cudaMalloc(&ws.ptr, ws.bytes), "cudaMalloc workspace");
  check_cuda(cudaMemset(ws.ptr, 0, ws.bytes), "cudaMemset workspace");
  frees.push_back(ws.ptr);
  char name[160];
  std::snprintf(name, sizeof name, "core kernel, rows of %d: %d threads x %d rows (%d KiB), %d/SM, prefetch %d tiles", C,
                Policy::kThreads, kItems, Policy::kTile * 4 * C / 1024, kBlocks, Policy::kPrefetchTiles);
  const std::size_t need = ws.bytes;
  return {name, [rows, ws, need](const void* in, void* out, cudaStream_t st) {
            const Row<C> zero{};
            foldkit::cuda::detail::launch_scan_kernel<Policy, false, Spec, foldkit::cuda::NoHeads>(
                static_cast<const Row<C>*>(in), rows, static_cast<Row<C>*>(out), zero, ws, need, st, Spec{RowPlus<C>{}, zero},
                foldkit::cuda::NoHeads{});
          }};
}

// Tiles of 16 and 32 KiB (a block's static shared memory stops at 48 KiB: 64 KiB tiles do not
// build), at the blocks an SM that their registers allow. ptxas sm_90: rows of 4 at 8 a thread
// and 6 blocks an SM (40 registers) spill ~100 bytes, at 4 (64 registers) 4 bytes.
template <int C>
std::vector<Variant> variants_for(std::int64_t rows, std::vector<void*>& frees) {
  constexpr int k16KiB = 16384 / (256 * 4 * C), k32KiB = 2 * k16KiB;
  std::vector<Variant> v;
  v.push_back(core_variant<C, k16KiB, 6>(rows, frees));
  v.push_back(core_variant<C, k32KiB, 4>(rows, frees));
  v.push_back(core_variant<C, k32KiB, 5>(rows, frees));
  v.push_back(core_variant<C, k32KiB, 6>(rows, frees));
  return v;
}

int run_case(std::int64_t rows, std::int64_t cols, cudaStream_t st, fkbench::LaunchGate& gate) {
  if (rows <= 0 || (cols != 2 && cols != 4)) {
    std::fprintf(stderr, "foldkit-colscan-core-probe: ROWS > 0, C = 2 or 4\n");
    return 2;
  }
  const std::int64_t n = rows * cols;
  const std::size_t bytes = static_cast<std::size_t>(n) * 4;
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  std::vector<void*> frees;
  const std::vector<Variant> vs = cols == 2 ? variants_for<2>(rows, frees) : variants_for<4>(rows, frees);

  fkbench::InputPool pool;
  pool.prepare(foldkit::DType::f32, n, 4242, st);
  fkbench::OutputPool outs;  // outputs rotate over >= 1 GiB too
  outs.prepare(bytes);
  auto next_out = [&] { return outs.next(); };
  const foldkit::Device device = foldkit::Device::cuda(dev);
  auto library = [&](const void* in, void* out) { fkprobe::library_cumsum_dim0(in, out, rows, cols, device, st); };

  std::printf("\n== cumsum f32 dim 0 of (%lld, %lld): %zu bytes read + written ==\n", static_cast<long long>(rows),
              static_cast<long long>(cols), 2 * bytes);
  int rc = 0;
  {
    const void* in = pool.next();
    void* ref = next_out();
    void* got = next_out();
    const std::vector<float> h_ref = fkprobe::library_reference(in, ref, rows, cols, device, st);
    for (const Variant& v : vs) {
      const fkprobe::VariantCheck c = fkprobe::check_variant([&](const void* i, void* o) { v.run(i, o, st); }, in, got, h_ref, st);
      if (!c.ok()) rc = 1;
      std::printf("  check %-80s max rel diff vs the library %.2e, two calls %s: %s\n", v.name.c_str(), c.worst,
                  c.same ? "bitwise equal" : "DIFFER", c.ok() ? "ok" : "FAILED");
    }
  }
  fkbench::TimingPlan tp;
  tp.reps_median = 40;
  tp.reps_batch = 80;
  std::vector<fkbench::Call> calls = {
      fkprobe::memcpy_call(bytes, next_out, st),
      [&](const void* in) { library(in, next_out()); },
      [&](const void* in) {
        foldkit::cuda::inclusive_scan<foldkit::ReduceOp::sum>(static_cast<const float*>(in), n, static_cast<float*>(next_out()), st);
      }};
  for (const Variant& v : vs) calls.push_back([&v, &next_out, st](const void* in) { v.run(in, next_out(), st); });
  const std::vector<fkbench::Timing> t = fkbench::time_interleaved(tp, st, pool, &gate, calls);
  const double ceil = t[0].median_us;
  auto row = [&](const std::string& what, const fkbench::Timing& x) { fkprobe::print_copy_row(88, what, x, ceil); };
  row("cudaMemcpyAsync (the copy ceiling)", t[0]);
  row("library: foldkit::cuda::inclusive_scan over dim 0 (the column scan)", t[1]);
  row("library: whole-array foldkit::cuda::inclusive_scan of the same floats", t[2]);
  for (std::size_t i = 0; i < vs.size(); ++i) row(vs[i].name, t[3 + i]);
  for (void* p : frees) cudaFree(p);
  return rc;
}

}  // namespace

int main(int argc, char** argv) { return fkprobe::run_matrix_cases(argc, argv, "foldkit-colscan-core-probe", run_case); }
