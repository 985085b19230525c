// foldkit-stream-pipeline-probe: how near the read ceiling a tiled read comes when every tile
// carries work after it lands, with and without that work overlapped with the next tiles' copies.
//
// Issue #22's segmented sums read at 75 / 72 % of the ceiling; their tile pipeline with no work
// at all reads at 82-90 % (h100-2026-11-28a-segmented-ladder.txt): one 32 KiB cp.async tile per
// block, 6 blocks per SM, the block's work starting only when its whole tile has landed and no
// copy of its own in flight meanwhile. The question for a redesign: do persistent blocks that keep
// the next tiles' copies in flight while they work on this one (a ring of kStages tile buffers,
// cp.async groups) read near the ceiling with the same work per tile? Kernels, each over the same
// rotated input (>= 1 GiB, cold DRAM) and timed with foldkit-bench's gated medians:
//   tile      one tile per block, the library's shape (256 threads, 8 x 16 bytes each, 32 KiB),
//             launch bounds for 6 blocks per SM;
//   pipeline  SMs x B persistent blocks, each over a contiguous range of tiles, kStages buffers
//             (dynamic shared memory), the copies of tiles t + 1 .. t + kStages - 1 in flight
//             while tile t is worked on;
//   ceiling   foldkit-bench's streaming-read kernel, best of its launch shapes.
// Work per tile, level W: each thread folds its 32 floats from shared memory with W dependent
// multiply-adds per element (W = 0: the tile is copied in and waited for, nothing read), then a
// block reduction (shuffles, shared memory, barrier) and one float written per tile. The
// library's walk, block scan and write-out cost its tiles 7-8 points; the W that costs the tile
// kernel as much is the one to read the pipeline's rows at.
//
// Usage: foldkit-stream-pipeline-probe [ELEMENTS]   (f32; default 268591104, the 2^22-segment mix's
// input rounded to whole tiles)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ceiling_kernel.hpp"
#include "foldkit/cuda/device/scan_tile_io.cuh"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "timing.hpp"

namespace {

using foldkit::cuda::detail::check_cuda;
namespace tile_io = foldkit::cuda::tile_io;

constexpr int kThreads = 256;
constexpr int kChunksPerThread = 8;                      // 16-byte chunks: 32 floats a thread
constexpr int kTileChunks = kThreads * kChunksPerThread;  // 32 KiB

// Issues tile t's copies into `buf` (chunks past the input are skipped: the work reads zeros
// there, see below).
__device__ __forceinline__ void issue_tile(uint4* buf, const uint4* in, long long chunks, long long t) {
  const int tid = static_cast<int>(threadIdx.x);
  const long long first = t * kTileChunks;
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const long long q = first + i * kThreads + tid;
    if (q < chunks) tile_io::copy_async<16>(buf + i * kThreads + tid, in + q);
    else buf[i * kThreads + tid] = make_uint4(0, 0, 0, 0);
  }
}

// The work on a landed tile (after a barrier): W dependent multiply-adds per element, a block
// reduction, one float written. Ends with a barrier (the buffer and `red` may be reused).
template <int kWork>
__device__ __forceinline__ void work_on_tile(const uint4* buf, float* out, long long t, float* red) {
  const int tid = static_cast<int>(threadIdx.x);
  if constexpr (kWork == 0) {
    __syncthreads();
    return;
  } else {
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < kChunksPerThread; ++i) {
      const uint4 v = buf[i * kThreads + tid];  // conflict-free: consecutive threads, consecutive chunks
      const float e[4] = {__uint_as_float(v.x), __uint_as_float(v.y), __uint_as_float(v.z), __uint_as_float(v.w)};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        float x = e[k];
#pragma unroll
        for (int w = 1; w < kWork; ++w) x = fmaf(x, 0.9999999f, 1e-30f);  // a chain the compiler keeps
        acc += x;
      }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if ((tid & 31) == 0) red[tid >> 5] = acc;
    __syncthreads();
    if (tid < 32) {
      float x = tid < kThreads / 32 ? red[tid] : 0.0f;
#pragma unroll
      for (int o = 4; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
      if (tid == 0) out[t] = x;
    }
    __syncthreads();
  }
}

template <int kWork>
__global__ void __launch_bounds__(kThreads, 6) tile_kernel(const uint4* __restrict__ in, long long chunks,
                                                           float* __restrict__ out) {
  __shared__ uint4 buf[kTileChunks];
  __shared__ float red[kThreads / 32];
  const long long t = blockIdx.x;
  issue_tile(buf, in, chunks, t);
  tile_io::wait_all_copies();
  __syncthreads();
  work_on_tile<kWork>(buf, out, t, red);
}

// Block b works on tiles [tiles * b / G, tiles * (b + 1) / G): tile t is in buffer
// (t - t0) % kStages; its copies were issued kStages - 1 tiles earlier.
template <int kStages, int kWork>
__global__ void __launch_bounds__(kThreads) pipeline_kernel(const uint4* __restrict__ in, long long chunks,
                                                            float* __restrict__ out, long long tiles) {
  extern __shared__ uint4 ring[];
  __shared__ float red[kThreads / 32];
  const long long G = gridDim.x;
  const long long t0 = tiles * blockIdx.x / G, t1 = tiles * (blockIdx.x + 1) / G;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (t0 + s < t1) issue_tile(ring + s * kTileChunks, in, chunks, t0 + s);
    tile_io::commit_copies();  // (an empty group where there is no tile: wait_group's count stays right)
  }
  for (long long t = t0; t < t1; ++t) {
    const long long ahead = t + kStages - 1;
    if (ahead < t1) issue_tile(ring + ((ahead - t0) % kStages) * kTileChunks, in, chunks, ahead);
    tile_io::commit_copies();
    tile_io::wait_copies_but<kStages - 1>();  // tile t's group (and every older one) has landed
    __syncthreads();
    work_on_tile<kWork>(ring + ((t - t0) % kStages) * kTileChunks, out, t, red);  // (ends with a barrier)
  }
}

struct Row {
  const char* what;
  int work;
  fkbench::Call call;
  double check = 0;  // error of the per-tile sums' total over the sum of |x| (work > 0); NaN: not checked
  fkbench::Timing timing;
};

int run(long long elements) {
  const fkbench::GpuInfo gpu = fkbench::query_gpu();
  std::printf("foldkit-stream-pipeline-probe on %s\n", fkbench::describe(gpu).c_str());
  elements = elements / 4 * 4;
  const long long chunks = elements / 4;
  const long long tiles = (chunks + kTileChunks - 1) / kTileChunks;
  const std::size_t bytes = static_cast<std::size_t>(elements) * 4;
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  fkbench::LaunchGate gate;
  fkbench::InputPool pool;
  pool.prepare(foldkit::DType::f32, elements, 4242, s);
  float* d_out = nullptr;
  unsigned* d_sink = nullptr;
  check_cuda(cudaMalloc(&d_out, static_cast<std::size_t>(tiles) * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMalloc(&d_sink, 64), "cudaMalloc");
  std::printf("%lld floats (%.1f MiB), %lld tiles of 32 KiB; inputs: %s\n", elements, bytes / 1048576.0, tiles,
              pool.memory_text().c_str());

  // The reference: copy 0's sum in double.
  std::vector<float> host(static_cast<std::size_t>(elements));
  check_cuda(cudaMemcpy(host.data(), pool.copy(0), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  double want = 0, magnitude = 0;
  for (float x : host) {
    want += x;
    magnitude += std::fabs(x);
  }
  std::vector<float> tile_sums(static_cast<std::size_t>(tiles));
  // Work W multiplies each element by 0.9999999^(W-1) (plus ~0): the check allows for that.
  auto check = [&](int work) {
    check_cuda(cudaStreamSynchronize(s), "sync");
    check_cuda(cudaMemcpy(tile_sums.data(), d_out, tile_sums.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    double got = 0;
    for (float x : tile_sums) got += x;
    const double scale = std::pow(0.9999999, work - 1);
    return std::fabs(got - want * scale) / std::max(1.0, magnitude);
  };

  fkbench::TimingPlan tp;
  tp.reps_median = 30;
  tp.reps_batch = 60;
  auto timed = [&](const fkbench::Call& c) { return fkbench::time_calls(tp, s, pool, &gate, c); };

  // The ceiling: the best median over foldkit-bench's launch shapes, then timed again beside
  // every kernel (interleaved call by call).
  fkbench::CeilingVariant best{};
  double best_us = 1e30;
  for (const fkbench::CeilingVariant& v : fkbench::ceiling_variants()) {
    const fkbench::Timing t = timed([&, v](const void* in) {
      fkbench::launch_read_ceiling(in, bytes, v, gpu.sm_count, d_sink, 0x9e3779b9u, s);
    });
    if (t.median_us < best_us) {
      best_us = t.median_us;
      best = v;
    }
  }

  std::vector<Row> rows;
  auto tile_row = [&](auto work_tag, const char* what) {
    constexpr int W = decltype(work_tag)::value;
    auto launch = [&](const void* in) {
      tile_kernel<W><<<static_cast<unsigned>(tiles), kThreads, 0, s>>>(static_cast<const uint4*>(in), chunks, d_out);
      check_cuda(cudaGetLastError(), "tile_kernel launch");
    };
    launch(pool.copy(0));
    rows.push_back({what, W, launch, W > 0 ? check(W) : std::nan("")});
  };
  auto pipeline_row = [&](auto stages_tag, auto work_tag, int blocks_per_sm, const char* what) {
    constexpr int S = decltype(stages_tag)::value;
    constexpr int W = decltype(work_tag)::value;
    const int smem = S * kTileChunks * 16;
    check_cuda(cudaFuncSetAttribute(pipeline_kernel<S, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
               "cudaFuncSetAttribute");
    int fits = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fits, pipeline_kernel<S, W>, kThreads, smem), "occupancy");
    if (fits < blocks_per_sm) {
      std::printf("  (%s: %d blocks of %d KiB fit an SM, not %d: skipped)\n", what, fits, smem / 1024, blocks_per_sm);
      return;
    }
    const auto grid = static_cast<unsigned>(std::min<long long>(tiles, static_cast<long long>(gpu.sm_count) * blocks_per_sm));
    auto launch = [&, grid, smem](const void* in) {
      pipeline_kernel<S, W><<<grid, kThreads, smem, s>>>(static_cast<const uint4*>(in), chunks, d_out, tiles);
      check_cuda(cudaGetLastError(), "pipeline_kernel launch");
    };
    launch(pool.copy(0));
    rows.push_back({what, W, launch, W > 0 ? check(W) : std::nan("")});
  };
  using W0 = std::integral_constant<int, 0>;
  using W1 = std::integral_constant<int, 1>;
  using W4 = std::integral_constant<int, 4>;
  using W8 = std::integral_constant<int, 8>;
  using S1 = std::integral_constant<int, 1>;
  using S2 = std::integral_constant<int, 2>;
  using S3 = std::integral_constant<int, 3>;
  using S4 = std::integral_constant<int, 4>;
  tile_row(W0{}, "tile: one per block, 6/SM");
  tile_row(W1{}, "tile: one per block, 6/SM");
  tile_row(W4{}, "tile: one per block, 6/SM");
  tile_row(W8{}, "tile: one per block, 6/SM");
  pipeline_row(S1{}, W1{}, 6, "pipeline: 1 stage (no overlap), 6 blocks/SM");
  pipeline_row(S2{}, W0{}, 3, "pipeline: 2 stages, 3 blocks/SM");
  pipeline_row(S2{}, W1{}, 3, "pipeline: 2 stages, 3 blocks/SM");
  pipeline_row(S2{}, W4{}, 3, "pipeline: 2 stages, 3 blocks/SM");
  pipeline_row(S2{}, W8{}, 3, "pipeline: 2 stages, 3 blocks/SM");
  pipeline_row(S3{}, W0{}, 2, "pipeline: 3 stages, 2 blocks/SM");
  pipeline_row(S3{}, W1{}, 2, "pipeline: 3 stages, 2 blocks/SM");
  pipeline_row(S3{}, W4{}, 2, "pipeline: 3 stages, 2 blocks/SM");
  pipeline_row(S3{}, W8{}, 2, "pipeline: 3 stages, 2 blocks/SM");
  pipeline_row(S4{}, W4{}, 1, "pipeline: 4 stages, 1 block/SM");
  pipeline_row(S2{}, W4{}, 2, "pipeline: 2 stages, 2 blocks/SM");
  check_cuda(cudaStreamSynchronize(s), "sync");
  std::vector<fkbench::Call> calls{[&, best](const void* in) {
    fkbench::launch_read_ceiling(in, bytes, best, gpu.sm_count, d_sink, 0x9e3779b9u, s);
  }};
  for (const Row& r : rows) calls.push_back(r.call);
  const std::vector<fkbench::Timing> times = fkbench::time_interleaved(tp, s, pool, &gate, calls);
  const fkbench::Timing ceiling = times[0];
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].timing = times[i + 1];

  std::printf("\n  %-46s %4s %10s %10s %8s %9s\n", "kernel", "work", "median us", "batch us", "% ceil", "check");
  std::printf("  %-46s %4s %10.2f %10.2f %8s %9s   (%s)\n", "ceiling: streaming read", "-", ceiling.median_us,
              ceiling.batch_us, "100.0", "-", fkbench::describe(best).c_str());
  int bad = 0;
  for (const Row& r : rows) {
    const bool ok = std::isnan(r.check) || r.check < 1e-4;
    bad += ok ? 0 : 1;
    char check_text[32];
    if (std::isnan(r.check)) std::snprintf(check_text, sizeof check_text, "-");
    else std::snprintf(check_text, sizeof check_text, "%s", ok ? "ok" : "WRONG");
    std::printf("  %-46s %4d %10.2f %10.2f %8.1f %9s\n", r.what, r.work, r.timing.median_us, r.timing.batch_us,
                100.0 * ceiling.median_us / r.timing.median_us, check_text);
  }
  cudaFree(d_out);
  cudaFree(d_sink);
  cudaStreamDestroy(s);
  return bad == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const long long elements = argc > 1 ? std::atoll(argv[1]) : 268591104LL;
  if (elements < 4) {
    std::fprintf(stderr, "usage: foldkit-stream-pipeline-probe [ELEMENTS >= 4]\n");
    return 2;
  }
  return run(elements);
}
