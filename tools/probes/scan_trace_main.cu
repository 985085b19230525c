// foldkit-scan-trace: where the time of one whole-array scan goes. Thread 0 of every block stamps
// %globaltimer (ns, one clock for every SM) at the scan kernel's trace points
// (include/foldkit/cuda/device/scan_trace.cuh): block start, tile loaded into shared memory,
// aggregate published, prefix known, output stores issued. The kernel is the library's own, with
// the library's policy and launch code; only the spec differs (it carries the trace buffer).
// Inputs rotate over 1 GiB (foldkit-bench's InputPool); each call is gated (foldkit-bench's
// LaunchGate), so its event time is GPU time.
//
// Usage: foldkit-scan-trace CASE N [CALLS] [BINS]
//   CASE: f32 (inclusive sum of float) | i32 (inclusive sum of int32, int64 out); f32-nolag,
//   i32-nolag: the same without the first wave's lag (tuning/scan_tuning.hpp, kFirstWaveLag)
// Prints the call of median span: the phases' latencies by wave, and a timeline in BINS bins of
// what the SMs read (tiles landed), wrote (stores issued) and held, against the rate of a
// cudaMemcpyAsync of the same traffic timed the same way.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/dispatch/scan_typed.cuh"
#include "foldkit/cuda/device/scan_trace.cuh"
#include "timing.hpp"

namespace {

namespace fc = foldkit::cuda;
using foldkit::ReduceOp;

// Per tile: the trace points' ns stamps, then the SM it ran on.
constexpr int kRecord = fc::kScanTracePoints + 1;

template <class Base>
struct Traced : Base {
  unsigned long long* trace = nullptr;
  // The stamps wait in shared memory until the block exits: a global store in the middle of the
  // kernel would sit on the path it times.
  __device__ __forceinline__ static unsigned long long* stamps() {
    __shared__ unsigned long long s[fc::kScanTracePoints];
    return s;
  }
  __device__ __forceinline__ void trace_point(int point) const {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (point == fc::kScanTraceStart)
      for (int k = 0; k < fc::kScanTracePoints; ++k) stamps()[k] = 0;
    stamps()[point] = t;
  }
  __device__ __forceinline__ void trace_flush(unsigned tile) const {
    unsigned long long* r = trace + static_cast<std::size_t>(tile) * kRecord;
    for (int k = 0; k < fc::kScanTracePoints; ++k) r[k] = stamps()[k];
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    r[fc::kScanTracePoints] = sm;
  }
};

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

using fkbench::rank_quantile;

// The library's policy for T's inclusive sum, with the first-wave lag kLag (eighths of a wave;
// tuning/scan_tuning.hpp, kFirstWaveLag; -1: the library's own).
template <class Lib, int kLag>
using WithLag = std::conditional_t<kLag < 0, Lib,
                                   fc::tuning::ScanPolicy<Lib::kThreads, Lib::kItems, Lib::kMinBlocksPerSM, Lib::kLookbackWindows,
                                                          Lib::kDeferredPrefix, Lib::kPrefetchTiles, kLag < 0 ? 0 : kLag>>;
template <class T, int kLag>
using TracedPolicy = WithLag<fc::tuning::ScanPolicyFor<sizeof(T), sizeof(foldkit::scan_accum_t<ReduceOp::sum, T>), false>, kLag>;

template <class T, int kLag>
int run(const char* name, std::int64_t n, int calls, int bins) {
  using A = foldkit::scan_accum_t<ReduceOp::sum, T>;
  using O = foldkit::scan_result_t<ReduceOp::sum, T>;
  using Spec = fc::ScanSpec<T, A, O, fc::detail::scan_combine_t<ReduceOp::sum, A>>;
  using Policy = TracedPolicy<T, kLag>;
  const std::int64_t tiles = (n + Policy::kTile - 1) / Policy::kTile;
  const std::size_t per_call = static_cast<std::size_t>(tiles) * kRecord;
  const fkbench::GpuInfo gpu = fkbench::query_gpu();
  const std::int64_t resident = static_cast<std::int64_t>(gpu.sm_count) * Policy::kMinBlocksPerSM;

  cudaStream_t s = nullptr;
  FKB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  O* d_out = nullptr;
  unsigned long long* d_trace = nullptr;
  void* d_copy = nullptr;
  const std::size_t traffic = static_cast<std::size_t>(n) * (sizeof(T) + sizeof(O));  // bytes read + written
  FKB_CHECK(cudaMalloc(&d_out, static_cast<std::size_t>(n) * sizeof(O)));
  FKB_CHECK(cudaMalloc(&d_copy, traffic / 2));
  FKB_CHECK(cudaMalloc(&d_trace, calls * per_call * sizeof(unsigned long long)));
  FKB_CHECK(cudaMemset(d_trace, 0, calls * per_call * sizeof(unsigned long long)));
  fc::Workspace ws;
  ws.bytes = fc::scan_workspace_bytes(n, foldkit::dtype_of<T>::value);
  FKB_CHECK(cudaMalloc(&ws.ptr, ws.bytes));
  FKB_CHECK(cudaMemset(ws.ptr, 0, ws.bytes));
  fkbench::InputPool pool;
  pool.prepare(foldkit::dtype_of<T>::value, n, 20261126, s);
  fkbench::InputPool copy_pool;  // the memcpy's own rotation: traffic / 2 bytes read, as many written
  copy_pool.prepare(foldkit::DType::u32, static_cast<std::int64_t>(traffic / 8), 7, s);
  FKB_CHECK(cudaDeviceSynchronize());

  std::printf("foldkit-scan-trace %s n=%lld on %s: %lld tiles of %d (%d threads x %d), %lld resident (%.2f waves), "
              "prefetch %d tiles ahead from %d waves, first-wave lag %d/8 wave\n",
              name, static_cast<long long>(n), gpu.name.c_str(), static_cast<long long>(tiles), Policy::kTile,
              Policy::kThreads, Policy::kItems, static_cast<long long>(resident),
              static_cast<double>(tiles) / static_cast<double>(resident), Policy::kPrefetchTiles,
              fc::tuning::kPrefetchMinWaves, Policy::kFirstWaveLag);

  fkbench::LaunchGate gate;
  cudaEvent_t e0, e1;
  FKB_CHECK(cudaEventCreate(&e0));
  FKB_CHECK(cudaEventCreate(&e1));
  auto gated = [&](auto&& call) {
    gate.hold(s);
    FKB_CHECK(cudaEventRecord(e0, s));
    call();
    FKB_CHECK(cudaEventRecord(e1, s));
    gate.release();
    FKB_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    FKB_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return 1e3 * ms;
  };
  std::vector<double> event_us, copy_us;
  for (int c = -5; c < calls; ++c) {
    Traced<Spec> spec{};
    spec.trace = d_trace + static_cast<std::size_t>(c < 0 ? 0 : c) * per_call;
    const auto* in = static_cast<const T*>(pool.next());
    const double us = gated([&] {
      fc::detail::launch_scan_kernel<Policy, false, Traced<Spec>, fc::NoHeads>(in, n, d_out, A{}, ws, ws.bytes, s, spec,
                                                                               fc::NoHeads{});
    });
    const void* src = copy_pool.next();
    const double cu =
        gated([&] { FKB_CHECK(cudaMemcpyAsync(d_copy, src, traffic / 2, cudaMemcpyDeviceToDevice, s)); });
    if (c >= 0) {
      event_us.push_back(us);
      copy_us.push_back(cu);
    }
  }
  if (gate.timed_out()) std::printf("(a gate timed out: some event times include host submission)\n");
  std::vector<unsigned long long> h(calls * per_call);
  FKB_CHECK(cudaMemcpy(h.data(), d_trace, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));

  // The call of median span (first start to last store).
  std::vector<std::pair<double, int>> spans;
  for (int c = 0; c < calls; ++c) {
    const unsigned long long* tr = h.data() + static_cast<std::size_t>(c) * per_call;
    unsigned long long t0 = ~0ull, t1 = 0;
    for (std::int64_t t = 0; t < tiles; ++t) {
      t0 = std::min(t0, tr[t * kRecord + fc::kScanTraceStart]);
      t1 = std::max(t1, tr[t * kRecord + fc::kScanTraceStored]);
    }
    spans.emplace_back(1e-3 * static_cast<double>(t1 - t0), c);
  }
  std::sort(spans.begin(), spans.end());
  const int c = spans[spans.size() / 2].second;
  const unsigned long long* tr = h.data() + static_cast<std::size_t>(c) * per_call;
  unsigned long long t0 = ~0ull;
  for (std::int64_t t = 0; t < tiles; ++t) t0 = std::min(t0, tr[t * kRecord + fc::kScanTraceStart]);
  auto at = [&](std::int64_t t, int p) { return 1e-3 * static_cast<double>(tr[t * kRecord + p] - t0); };  // us
  const double span = spans[spans.size() / 2].first;
  const double ev = median(event_us), cp = median(copy_us);
  std::printf("event time (gated) median %.2f us; memcpy of the same traffic %.2f us (%.1f %% of it); kernel span "
              "(first start -> last store issued) %.2f us (spans over calls %.2f .. %.2f)\n",
              ev, cp, 100.0 * cp / ev, span, spans.front().first, spans.back().first);
  const double rate = 1e-3 * static_cast<double>(traffic) / cp;  // memcpy GB/s (read + write)
  std::printf("memcpy rate %.0f GB/s (read + write); at that rate this scan's traffic takes %.2f us\n", rate,
              1e-3 * static_cast<double>(traffic) / rate);

  // Phase latencies, by wave of tiles (the first resident wave, the middle, the last wave).
  struct Phase {
    const char* what;
    int from, to;
  };
  const Phase phases[] = {{"start -> loaded", fc::kScanTraceStart, fc::kScanTraceLoaded},
                          {"loaded -> published", fc::kScanTraceLoaded, fc::kScanTracePublished},
                          {"published -> prefix", fc::kScanTracePublished, fc::kScanTracePrefix},
                          {"prefix -> stored", fc::kScanTracePrefix, fc::kScanTraceStored},
                          {"start -> stored", fc::kScanTraceStart, fc::kScanTraceStored}};
  const std::int64_t first_end = std::min(tiles, resident), last_begin = std::max<std::int64_t>(0, tiles - resident);
  std::printf("\nphase latency, us (median [p10, p90]) | first wave (tiles 0..%lld) | middle | last wave (from %lld)\n",
              static_cast<long long>(first_end - 1), static_cast<long long>(last_begin));
  for (const Phase& p : phases) {
    std::vector<double> w[3];
    for (std::int64_t t = 0; t < tiles; ++t) {
      const double d = at(t, p.to) - at(t, p.from);
      w[t < first_end ? 0 : t >= last_begin ? 2 : 1].push_back(d);
    }
    std::printf("%-22s", p.what);
    for (auto& v : w)
      std::printf(" | %7.2f [%6.2f, %6.2f]", median(v), rank_quantile(v, 0.1), rank_quantile(v, 0.9));
    std::printf("\n");
  }
  std::printf("tile 0: start %.2f, loaded %.2f, prefix %.2f, stored %.2f; last tile: start %.2f, loaded %.2f, "
              "prefix %.2f, stored %.2f\n",
              at(0, 0), at(0, 1), at(0, 3), at(0, 4), at(tiles - 1, 0), at(tiles - 1, 1), at(tiles - 1, 3),
              at(tiles - 1, 4));

  // Timeline: per bin, tiles landed (read), tiles stored (written), and blocks in each state at
  // the bin's middle. Rates are the tiles' bytes over the bin, against the memcpy's rate.
  const double width = span / bins;
  const double in_bytes = static_cast<double>(Policy::kTile) * sizeof(T), out_bytes = static_cast<double>(Policy::kTile) * sizeof(O);
  std::vector<double> read(bins + 1, 0), written(bins + 1, 0), started(bins + 1, 0);
  for (std::int64_t t = 0; t < tiles; ++t) {
    started[std::min<int>(bins, static_cast<int>(at(t, 0) / width))] += 1;
    read[std::min<int>(bins, static_cast<int>(at(t, 1) / width))] += in_bytes;
    written[std::min<int>(bins, static_cast<int>(at(t, 4) / width))] += out_bytes;
  }
  std::printf("\ntimeline (bins of %.2f us; rates in %% of the memcpy's read + write rate; blocks at the bin's middle)\n",
              width);
  std::printf("%8s %7s %7s %7s %7s | %8s %8s %8s\n", "t us", "starts", "read%", "write%", "sum%", "loading", "waiting",
              "storing");
  for (int b = 0; b <= bins; ++b) {
    const double mid = (b + 0.5) * width;
    int loading = 0, waiting = 0, storing = 0;
    for (std::int64_t t = 0; t < tiles; ++t) {
      if (at(t, 0) <= mid && mid < at(t, 1)) ++loading;
      else if (at(t, 1) <= mid && mid < at(t, 3)) ++waiting;
      else if (at(t, 3) <= mid && mid < at(t, 4)) ++storing;
    }
    const double r = 1e-3 * read[b] / width, w = 1e-3 * written[b] / width;  // GB/s
    std::printf("%8.2f %7.0f %7.1f %7.1f %7.1f | %8d %8d %8d\n", b * width, started[b], 100 * r / rate,
                100 * w / rate, 100 * (r + w) / rate, loading, waiting, storing);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: foldkit-scan-trace f32|i32|f32-nolag|i32-nolag N [CALLS] [BINS]\n");
    return 2;
  }
  const std::string which = argv[1];
  const std::int64_t n = std::atoll(argv[2]);
  const int calls = argc > 3 ? std::atoi(argv[3]) : 9;
  const int bins = argc > 4 ? std::atoi(argv[4]) : 40;
  if (n <= 0 || calls <= 0 || bins <= 0) {
    std::fprintf(stderr, "N, CALLS and BINS must be positive\n");
    return 2;
  }
  try {
    if (which == "f32") return run<float, -1>("inclusive sum f32", n, calls, bins);
    if (which == "i32") return run<std::int32_t, -1>("inclusive sum i32 -> i64", n, calls, bins);
    if (which == "f32-nolag") return run<float, 0>("inclusive sum f32, no first-wave lag", n, calls, bins);
    if (which == "i32-nolag") return run<std::int32_t, 0>("inclusive sum i32 -> i64, no first-wave lag", n, calls, bins);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "foldkit-scan-trace: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "unknown case %s (f32 | i32 | f32-nolag | i32-nolag)\n", which.c_str());
  return 2;
}
