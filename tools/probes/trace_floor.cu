// foldkit-trace floor N: the least a one-launch reduction over many blocks can cost, measured.
//
// The issue's per-call bars for 2^10-2^22 f32 elements compare a reduction with the streaming-
// read ceiling kernel, which reads and writes nothing, and (2^14-2^20) with 0.6 x CUB's two
// launches. Whether any one-launch reduction can meet them is a measurable question: this
// times, in one run and with foldkit-bench's gated medians and batch means, the ceiling
// (every variant; the best wins), kernels that do only the least a reduction must do beyond
// the read, the library, and CUB:
//   floor-store: the library's launch shape and loads, a block reduce, and one store of each
//                block's partial: no cross-block combine at all (not yet a reduction);
//   floor-red:   the same, then one fire-and-forget red.global.add.f32 per block into the
//                result: the cheapest cross-block combine there is (not deterministic);
//   floor-last:  the same, then the textbook deterministic tail: store the partial, an
//                acq_rel ticket, and the last block to finish reduces the partials.
// All three are launched with the library's programmatic (PDL) attribute, as the library is.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "ceiling_kernel.hpp"
#include "foldkit/cuda/block/block_reduce.cuh"
#include "foldkit/cuda/device/reduce_full_kernel.cuh"
#include "foldkit/cuda/device/reduce_spec.cuh"
#include "foldkit/cuda/device/vector_load.cuh"
#include "foldkit/cuda/dispatch/programmatic_launch.cuh"
#include "foldkit/cuda/dispatch/reduce_launch.cuh"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/tuning/reduce_tuning.hpp"
#include "timing.hpp"
#include "trace_f32_sum_rivals.cuh"

namespace {

using foldkit::cuda::detail::check_cuda;
namespace fc = foldkit::cuda;

enum FloorMode { kStoreOnly = 0, kRedAdd = 1, kLastBlock = 2 };

template <int kUnroll, int kMode>
__global__ void __launch_bounds__(1024)
    floor_sum_kernel(const fc::Vec16<float>* __restrict__ in, long long vectors, float* __restrict__ out,
                     float* __restrict__ partials, unsigned* __restrict__ ticket) {
  __shared__ fc::BlockReduceStorage<float> storage;
  __shared__ bool last;
  fc::wait_for_prior_grid();
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto zero = static_cast<unsigned>(static_cast<unsigned long long>(vectors) >> 62);
  float s = 0.f;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    fc::Vec16<float> v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = fc::load_streaming(in + i + u * stride);
    fc::after_all_loads(v, zero);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) s += (v[u].v[0] + v[u].v[1]) + (v[u].v[2] + v[u].v[3]);
  }
  for (; i < vectors; i += stride) {
    const fc::Vec16<float> v = fc::load_streaming(in + i);
    s += (v.v[0] + v.v[1]) + (v.v[2] + v.v[3]);
  }
  fc::allow_next_grid();
  const auto plus = [](float a, float b) { return a + b; };
  s = fc::block_reduce(s, plus, 0.f, storage);
  if (kMode == kStoreOnly || gridDim.x == 1) {
    if (threadIdx.x == 0) (gridDim.x == 1 ? *out : partials[blockIdx.x]) = s;
    return;
  }
  if (kMode == kRedAdd) {
    if (threadIdx.x == 0) atomicAdd(out, s);  // RED: nothing waits for it
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = s;
    unsigned prev;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], 0x7fffffff;" : "=r"(prev) : "l"(ticket) : "memory");
    last = prev == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  float t = 0.f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
    float p;
    asm volatile("ld.relaxed.gpu.global.f32 %0, [%1];" : "=f"(p) : "l"(partials + b) : "memory");
    t += p;
  }
  __syncthreads();  // storage is reused
  t = fc::block_reduce(t, plus, 0.f, storage);
  if (threadIdx.x == 0) {
    *out = t;
    *ticket = 0u;
  }
}

template <int kMode>
void launch_floor(int unroll, int grid, int threads, const void* in, long long vectors, float* out, float* partials,
                  unsigned* ticket, cudaStream_t s) {
  const dim3 g(static_cast<unsigned>(grid)), b(static_cast<unsigned>(threads));
  const auto* vin = static_cast<const fc::Vec16<float>*>(in);
  const auto launch = [&](auto kernel) { return fc::launch_programmatic(kernel, g, b, s, vin, vectors, out, partials, ticket); };
  cudaError_t err = cudaSuccess;
  switch (unroll) {
    case 1: err = launch(floor_sum_kernel<1, kMode>); break;
    case 2: err = launch(floor_sum_kernel<2, kMode>); break;
    case 4: err = launch(floor_sum_kernel<4, kMode>); break;
    default: err = launch(floor_sum_kernel<8, kMode>); break;
  }
  check_cuda(err, "floor kernel launch");
}

}  // namespace

// One row per implementation: gated median and batch mean (us) and both over the best ceiling's.
int floor_report(std::int64_t n) {
  using Spec = fc::BuiltinReduceSpec<foldkit::ReduceOp::sum, float>;
  constexpr auto kFamily = fc::tuning::ReduceFamily::value4;
  if (n <= 0 || n % 4 != 0) {
    std::fprintf(stderr, "foldkit-trace floor: N must be a positive multiple of 4\n");
    return 2;
  }
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  fkbench::InputPool pool;
  pool.prepare(foldkit::DType::f32, n, 777, s);
  const fc::detail::DeviceFacts dev = fc::detail::current_device_facts();
  const std::size_t bytes = static_cast<std::size_t>(n) * 4;
  const fc::tuning::ReduceTuning t = fc::tuning::reduce_tuning_for(kFamily, bytes);
  const fc::detail::ReducePlan plan = fc::detail::plan_full_reduce(
      n, 4, t, dev.sm_count, fc::detail::resident_blocks_per_sm<4, Spec>(dev.device, t.block_threads));

  float* d_out = nullptr;
  float* d_partials = nullptr;
  unsigned* d_ticket = nullptr;
  unsigned* d_sink = nullptr;
  check_cuda(cudaMalloc(&d_out, 64), "cudaMalloc");
  // Room for a partial per block of any shape below (the ceiling's shapes go to 16 blocks/SM).
  check_cuda(cudaMalloc(&d_partials, static_cast<std::size_t>(dev.sm_count) * 32 * 4 + 64), "cudaMalloc");
  check_cuda(cudaMalloc(&d_ticket, 64), "cudaMalloc");
  check_cuda(cudaMalloc(&d_sink, 64), "cudaMalloc");
  check_cuda(cudaMemset(d_ticket, 0, 64), "cudaMemset");
  check_cuda(cudaMemset(d_out, 0, 64), "cudaMemset");
  const fkbench::F32SumRivals rivals(n, d_out, s);

  fkbench::LaunchGate gate;
  fkbench::TimingPlan tp;
  tp.reps_median = 60;
  tp.reps_batch = 200;
  const long long vectors = n / 4;
  std::printf("floor: f32 sum, n = %lld (%zu bytes); library shape %d threads x unroll %d, grid %d\n",
              static_cast<long long>(n), bytes, t.block_threads, t.unroll, plan.grid);

  // The ceiling: every variant, the best median and the best batch mean (as foldkit-bench).
  double ceil_med = 1e30, ceil_batch = 1e30;
  for (const fkbench::CeilingVariant& v : fkbench::ceiling_variants()) {
    const fkbench::Timing r = fkbench::time_calls(tp, s, pool, &gate, [&](const void* in) {
      fkbench::launch_read_ceiling(in, bytes, v, dev.sm_count, d_sink, 0x9e3779b9u, s);
    });
    ceil_med = std::min(ceil_med, r.median_us);
    ceil_batch = std::min(ceil_batch, r.batch_us);
  }
  std::printf("  %-58s median %7.3f us   batch %7.3f us\n", "read ceiling (best variant)", ceil_med, ceil_batch);
  auto report = [&](const char* what, const fkbench::Call& call) {
    const fkbench::Timing r = fkbench::time_calls(tp, s, pool, &gate, call);
    std::printf("  %-58s median %7.3f us   batch %7.3f us   / ceiling %.3f / %.3f\n", what, r.median_us, r.batch_us,
                r.median_us / ceil_med, r.batch_us / ceil_batch);
  };
  // The floors again in the ceiling kernel's launch shapes (and its grids, ceiling_grid): the
  // least of each over the shapes, so that the floor is not the library's shape's.
  {
    double store_med = 1e30, store_batch = 1e30, red_med = 1e30, red_batch = 1e30;
    for (const fkbench::CeilingVariant& v : fkbench::ceiling_variants()) {
      const int grid = static_cast<int>(fkbench::ceiling_grid(bytes, v, dev.sm_count));
      const fkbench::Timing a = fkbench::time_calls(tp, s, pool, &gate, [&](const void* in) {
        launch_floor<kStoreOnly>(v.unroll, grid, v.block_threads, in, vectors, d_out, d_partials, d_ticket, s);
      });
      const fkbench::Timing b = fkbench::time_calls(tp, s, pool, &gate, [&](const void* in) {
        launch_floor<kRedAdd>(v.unroll, grid, v.block_threads, in, vectors, d_out, d_partials, d_ticket, s);
      });
      std::printf("    shape %-16s grid %5d: floor-store median %7.3f batch %7.3f | floor-red median %7.3f batch %7.3f\n",
                  fkbench::describe(v).c_str(), grid, a.median_us, a.batch_us, b.median_us, b.batch_us);
      store_med = std::min(store_med, a.median_us);
      store_batch = std::min(store_batch, a.batch_us);
      red_med = std::min(red_med, b.median_us);
      red_batch = std::min(red_batch, b.batch_us);
    }
    std::printf("  %-58s median %7.3f us   batch %7.3f us   / ceiling %.3f / %.3f\n", "floor-store, best of the ceiling's shapes",
                store_med, store_batch, store_med / ceil_med, store_batch / ceil_batch);
    std::printf("  %-58s median %7.3f us   batch %7.3f us   / ceiling %.3f / %.3f\n", "floor-red, best of the ceiling's shapes",
                red_med, red_batch, red_med / ceil_med, red_batch / ceil_batch);
  }
  for (int round = 0; round < 2; ++round) {
    report("floor-store: read, block reduce, store per block", [&](const void* in) {
      launch_floor<kStoreOnly>(plan.unroll, plan.grid, plan.block_threads, in, vectors, d_out, d_partials, d_ticket, s);
    });
    report("floor-red: + red.add.f32 per block (not deterministic)", [&](const void* in) {
      launch_floor<kRedAdd>(plan.unroll, plan.grid, plan.block_threads, in, vectors, d_out, d_partials, d_ticket, s);
    });
    report("floor-last: + acq_rel ticket, last block reduces", [&](const void* in) {
      launch_floor<kLastBlock>(plan.unroll, plan.grid, plan.block_threads, in, vectors, d_out, d_partials, d_ticket, s);
    });
    report("library: foldkit::cuda::reduce<sum, float>", [&](const void* in) {
      rivals.library(static_cast<const float*>(in), n);
    });
    // The same call on an input that starts 4 bytes past a 16-byte boundary (3 head elements
    // outside the vectors): what a caller with an unaligned pointer pays on top.
    report("library, unaligned: (in + 1, n - 1)", [&](const void* in) {
      rivals.library(static_cast<const float*>(in) + 1, n - 1);
    });
    report("cub::DeviceReduce::Sum", [&](const void* in) {
      rivals.cub(static_cast<const float*>(in));
    });
  }
  check_cuda(cudaStreamSynchronize(s), "sync");
  cudaFree(d_out);
  cudaFree(d_partials);
  cudaFree(d_ticket);
  cudaFree(d_sink);
  cudaStreamDestroy(s);
  return 0;
}
