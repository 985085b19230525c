// foldkit-tensor-scan-trace: where the time of one column scan goes (cumsum over dim 0 of a
// row-major ROWS x COLS f32 matrix, issue #22). Thread 0 of every block stamps %globaltimer (ns,
// one clock for every SM) at the tile kernel's trace points (include/foldkit/cuda/device/
// tensor_scan_trace.cuh): block start, tile loaded, aggregates published, inclusive predecessor
// found, prefix folded, stores issued; and notes the look-back's distance to its inclusive
// predecessor and its status rounds. The kernel, its geometry and its launch are the library's
// (the user-functor path's TileArgs for f32 sums); only the fold differs (it carries the buffer).
//
// Usage: foldkit-tensor-scan-trace [ROWS COLS [CALLS]]   (default 4194304 16 9)
// Prints the call of median event time: phase latencies and look-back distances by wave of
// tiles, against a cudaMemcpyAsync of the same traffic.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "foldkit/cuda/device/tensor_scan_trace.cuh"
#include "foldkit/cuda/dispatch/tensor_scan_launch.cuh"
#include "foldkit/cuda/dispatch/tensor_scan_runtime.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/tensor_scan.hpp"
#include "timing.hpp"

namespace {

namespace ts = foldkit::cuda::tensor_scan;

// Per tile: the trace points' ns stamps, the notes, then the SM it ran on.
constexpr int kRecord = ts::kTileTracePoints + ts::kTileTraceNotes + 1;

struct TracedArgs : ts::TileArgs {
  unsigned long long* trace = nullptr;
};

// f32 addition with trace hooks. The stamps and notes wait in shared memory until the block
// exits: a global store in the middle of the kernel would sit on the path it times.
struct TracedFold {
  unsigned long long* trace;
  __device__ __forceinline__ float identity() const { return 0.0f; }
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
  __device__ __forceinline__ static unsigned long long* slots() {
    __shared__ unsigned long long s[ts::kTileTracePoints + ts::kTileTraceNotes];
    return s;
  }
  __device__ __forceinline__ void trace_point(int point) const {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (point == ts::kTileTraceStart)
      for (int k = 0; k < ts::kTileTracePoints + ts::kTileTraceNotes; ++k) slots()[k] = 0;
    slots()[point] = t;
  }
  __device__ __forceinline__ void trace_note(int slot, long long value) const {
    if (slot == ts::kTileNoteStatusRounds) slots()[ts::kTileTracePoints + slot] += static_cast<unsigned long long>(value);
    else slots()[ts::kTileTracePoints + slot] = static_cast<unsigned long long>(value);
  }
  __device__ __forceinline__ void trace_flush(unsigned tile) const {
    unsigned long long* r = trace + static_cast<std::size_t>(tile) * kRecord;
    for (int k = 0; k < ts::kTileTracePoints + ts::kTileTraceNotes; ++k) r[k] = slots()[k];
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    r[kRecord - 1] = sm;
  }
};

struct TracedSpec : ts::TileShape<float, float> {
  using T = float;
  using A = float;
  using O = float;
  using Fold = TracedFold;
  using Args = TracedArgs;
  __device__ __forceinline__ static Fold fold(const Args& a) { return Fold{a.trace}; }
  __device__ __forceinline__ static T identity_input(const Fold&) { return 0.0f; }
  __device__ __forceinline__ static A load(T v) { return v; }
  __device__ __forceinline__ static O store(A v) { return v; }
};

using fkbench::rank_quantile;

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 4194304;
  const std::int64_t cols = argc > 2 ? std::atoll(argv[2]) : 16;
  const int calls = argc > 3 ? std::atoi(argv[3]) : 9;
  if (rows < 1 || cols < 1 || calls < 1) {
    std::fprintf(stderr, "usage: foldkit-tensor-scan-trace [ROWS COLS [CALLS]]\n");
    return 2;
  }
  const std::size_t n = static_cast<std::size_t>(rows * cols);
  const fkbench::GpuInfo gpu = fkbench::query_gpu();
  cudaStream_t s = nullptr;
  FKB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *d_in = nullptr, *d_out = nullptr;
  void* d_copy = nullptr;
  FKB_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  FKB_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  FKB_CHECK(cudaMalloc(&d_copy, n * sizeof(float)));
  const std::vector<float> ones(n, 1.0f);  // every prefix exact: checked below
  FKB_CHECK(cudaMemcpy(d_in, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const foldkit::Device dev = foldkit::Device::cuda(gpu.device);
  const auto in = foldkit::TensorView::contiguous(d_in, foldkit::DType::f32, {rows, cols}, dev);
  const auto out = foldkit::TensorView::contiguous(d_out, foldkit::DType::f32, {rows, cols}, dev);

  foldkit::cuda::Workspace ws;
  ws.bytes = foldkit::cuda::tensor_scan_workspace_bytes(in, 0);
  if (ws.bytes > 0) {
    FKB_CHECK(cudaMalloc(&ws.ptr, ws.bytes));
    foldkit::cuda::init_scan_workspace(ws, s);
  }
  const auto setup = foldkit::cuda::detail::prepare_tensor_scan_custom(foldkit::DType::f32, in, 0, out, false,
                                                                       ws.bytes > 0 ? &ws : nullptr);
  if (setup.blocked || setup.empty) {
    std::printf("this shape is not a tile-kernel scan (blocked or empty): nothing to trace\n");
    return 0;
  }
  const ts::TileArgs& g = setup.tiles;
  const std::int64_t tiles = g.num_tiles;
  const int per_sm = foldkit::cuda::tuning::tensor_scan_min_blocks(g.in_chunks, TracedSpec::kWide);
  const std::int64_t resident = static_cast<std::int64_t>(gpu.sm_count) * per_sm;
  const std::size_t per_call = static_cast<std::size_t>(tiles) * kRecord;
  unsigned long long* d_trace = nullptr;
  FKB_CHECK(cudaMalloc(&d_trace, calls * per_call * sizeof(unsigned long long)));
  std::printf("foldkit-tensor-scan-trace cumsum f32 dim 0 of (%lld, %lld) on %s: %lld tiles (%lld row tiles x %lld "
              "column tiles), vec %d, TC %d, %d chunks a thread, %lld resident at %d/SM (%.2f waves)\n",
              static_cast<long long>(rows), static_cast<long long>(cols), gpu.name.c_str(), static_cast<long long>(tiles),
              static_cast<long long>(g.row_tiles), static_cast<long long>(g.col_tiles), g.vec, 1 << g.tc_shift, g.in_chunks,
              static_cast<long long>(resident), per_sm,
              static_cast<double>(tiles) / static_cast<double>(resident));

  cudaEvent_t e0, e1;
  FKB_CHECK(cudaEventCreate(&e0));
  FKB_CHECK(cudaEventCreate(&e1));
  auto timed = [&](auto&& call) {
    FKB_CHECK(cudaEventRecord(e0, s));
    call();
    FKB_CHECK(cudaEventRecord(e1, s));
    FKB_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    FKB_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return 1e3 * ms;
  };
  std::vector<std::pair<double, int>> event_us;
  std::vector<double> copy_us;
  for (int c = -3; c < calls; ++c) {
    TracedArgs args;
    static_cast<ts::TileArgs&>(args) = g;
    args.header = static_cast<foldkit::cuda::ScanHeader*>(ws.ptr);
    args.trace = d_trace + static_cast<std::size_t>(c < 0 ? 0 : c) * per_call;
    const double us = timed([&] { ts::launch_tile_scan<TracedSpec>(args, s, setup.device); });
    const double cu = timed([&] { FKB_CHECK(cudaMemcpyAsync(d_copy, d_in, n * sizeof(float), cudaMemcpyDeviceToDevice, s)); });
    if (c >= 0) {
      event_us.emplace_back(us, c);
      copy_us.push_back(cu);
    }
  }
  float last = 0;
  FKB_CHECK(cudaMemcpy(&last, d_out + (n - 1), sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("check: out[rows-1][cols-1] = %.0f (want %lld) %s\n", last, static_cast<long long>(rows),
              last == static_cast<float>(rows) ? "ok" : "WRONG");
  std::vector<unsigned long long> h(calls * per_call);
  FKB_CHECK(cudaMemcpy(h.data(), d_trace, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));

  std::sort(event_us.begin(), event_us.end());
  const auto [ev, c] = event_us[event_us.size() / 2];
  const double cp = rank_quantile(copy_us, 0.5);
  std::printf("event time median %.2f us (calls %.2f .. %.2f); memcpy of the same bytes %.2f us: %.1f %% of the copy rate\n",
              ev, event_us.front().first, event_us.back().first, cp, 100.0 * cp / ev);
  const unsigned long long* tr = h.data() + static_cast<std::size_t>(c) * per_call;
  unsigned long long t0 = ~0ull;
  for (std::int64_t t = 0; t < tiles; ++t) t0 = std::min(t0, tr[t * kRecord + ts::kTileTraceStart]);
  auto at = [&](std::int64_t t, int p) { return 1e-3 * static_cast<double>(tr[t * kRecord + p] - t0); };
  auto note = [&](std::int64_t t, int k) { return static_cast<double>(tr[t * kRecord + ts::kTileTracePoints + k]); };

  // Phases by wave of tiles (chained tiles after a chain's first: the look-back phases).
  struct Phase {
    const char* what;
    int from, to;
  };
  const Phase phases[] = {{"start -> drawn", ts::kTileTraceStart, ts::kTileTraceDrawn},
                          {"drawn -> issued", ts::kTileTraceDrawn, ts::kTileTraceIssued},
                          {"issued -> loaded", ts::kTileTraceIssued, ts::kTileTraceLoaded},
                          {"start -> loaded", ts::kTileTraceStart, ts::kTileTraceLoaded},
                          {"loaded -> published", ts::kTileTraceLoaded, ts::kTileTracePublished},
                          {"published -> found", ts::kTileTracePublished, ts::kTileTraceFound},
                          {"found -> prefix", ts::kTileTraceFound, ts::kTileTracePrefix},
                          {"prefix -> stored", ts::kTileTracePrefix, ts::kTileTraceStored},
                          {"start -> stored", ts::kTileTraceStart, ts::kTileTraceStored}};
  const std::int64_t first_end = std::min(tiles, resident), last_begin = std::max<std::int64_t>(0, tiles - resident);
  auto wave = [&](std::int64_t t) { return t < first_end ? 0 : t >= last_begin ? 2 : 1; };
  auto chained_tile = [&](std::int64_t t) { return tr[t * kRecord + ts::kTileTraceFound] != 0; };
  std::printf("\nus, median [p10, p90] | first wave (tiles 0..%lld) | middle | last wave (from %lld); look-back rows: "
              "chained tiles only\n",
              static_cast<long long>(first_end - 1), static_cast<long long>(last_begin));
  for (const Phase& p : phases) {
    const bool lookback = p.from == ts::kTileTraceFound || p.to == ts::kTileTraceFound || p.from == ts::kTileTracePrefix;
    std::vector<double> w[3];
    for (std::int64_t t = 0; t < tiles; ++t) {
      if (lookback && !chained_tile(t)) continue;
      w[wave(t)].push_back(at(t, p.to) - at(t, p.from));
    }
    std::printf("%-20s", p.what);
    for (auto& v : w)
      std::printf(" | %7.2f [%6.2f, %6.2f]", rank_quantile(v, 0.5), rank_quantile(v, 0.1), rank_quantile(v, 0.9));
    std::printf("\n");
  }
  const char* notes[] = {"distance (tiles)", "status rounds"};
  for (int k = 0; k < ts::kTileTraceNotes; ++k) {
    std::vector<double> w[3];
    for (std::int64_t t = 0; t < tiles; ++t)
      if (chained_tile(t)) w[wave(t)].push_back(note(t, k));
    std::printf("%-20s", notes[k]);
    for (auto& v : w)
      std::printf(" | %7.0f [%6.0f, %6.0f]", rank_quantile(v, 0.5), rank_quantile(v, 0.1), rank_quantile(v, 0.9));
    std::printf("\n");
  }
  double span = 0;
  for (std::int64_t t = 0; t < tiles; ++t) span = std::max(span, at(t, ts::kTileTraceStored));
  std::printf("kernel span (first start -> last store issued) %.2f us\n", span);
  return 0;
}
