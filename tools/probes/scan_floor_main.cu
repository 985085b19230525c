// foldkit-scan-floor: the least a single-pass scan in tiles can cost, measured (issue #22's
// small-shape and cumsum-over-dim-0 bars are per-call ratios to the copy ceiling).
//
// A single-pass scan (decoupled look-back) must, per tile: load it, make its arrival known, learn
// that every earlier tile has arrived (its output depends on all of them), and store it. The
// "chain" kernels here do exactly that and nothing else: no arithmetic, no values in the look-back
// (one flag word per tile: arrived, or "all up to here arrived"; every thread of a block polls one
// predecessor's flag, 256 a round, all in flight, back to the nearest inclusive one), tiles of contiguous bytes drawn by ticket, copied
// through shared memory by 16-byte cp.async as the library's tile kernel does, in the library's
// tile sizes and blocks per SM. Beside them, in the same run and with foldkit-bench's gated
// medians: cudaMemcpyAsync, the same kernels with the wait left out (a tile copy: the copy
// ceiling in the scan's own shape), and the library's cumsum over dim 0 of a ROWS x COLS f32
// matrix of the same bytes. And a design that holds nothing while it waits: each block reads
// one tile (publishing its arrival) and then copies the tile `lag` tiles behind it, reading its
// input a second time, from L2 if it stayed there: how near the copy rate can a scan come whose
// second read hits L2? Inputs and outputs rotate over >= 1 GiB each (cold DRAM).
//
// Usage: foldkit-scan-floor ROWS COLS [ROWS COLS ...]   (f32; bytes read = ROWS * COLS * 4)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "foldkit/cuda/device/scan_tile_io.cuh"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/tensor_scan.hpp"
#include "matrix_cases_main.hpp"
#include "timing.hpp"

namespace {

using foldkit::cuda::detail::check_cuda;
namespace tile_io = foldkit::cuda::tile_io;

constexpr int kThreads = 256;

__device__ __forceinline__ void publish_flag(unsigned* p, unsigned v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Returns (the whole block) once every tile up to `newest` has arrived in this call: a decoupled
// look-back on flags alone. A tile's flag is 2 * call + 1 when it has arrived, 2 * call + 2
// ("inclusive") when every tile up to it has too. A round loads kThreads predecessors' flags at
// once: it ends the search when the nearest inclusive one's newer ones have all arrived, moves
// kThreads back when all arrived and none is inclusive, and is loaded again otherwise (the
// library's status search, without values).
__device__ __forceinline__ void await_all_arrived(const unsigned* flags, long long newest, unsigned call) {
  const unsigned arrived = 2u * call + 1u, inclusive = 2u * call + 2u;
  __shared__ int s_nearest;
  const int tid = static_cast<int>(threadIdx.x);
  while (newest >= 0) {
    if (tid == 0) s_nearest = kThreads;
    __syncthreads();
    const long long p = newest - tid;
    unsigned f = inclusive;
    if (p >= 0) asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(f) : "l"(flags + p) : "memory");
    if (f == inclusive) atomicMin(&s_nearest, tid);
    __syncthreads();
    const int nearest = s_nearest;
    const bool gap = __syncthreads_or(tid < nearest && f < arrived);
    if (!gap && nearest < kThreads) break;
    if (!gap) newest -= kThreads;
  }
}

// One tile of kChunks 16-byte chunks per thread: tile = ticket - base; copy in, (kWait) publish
// its flag and look back until every earlier tile has arrived, copy out. Flags carry the call
// (calls count up from 1, so no zeroing between calls).
template <int kChunks, bool kWait>
__global__ void __launch_bounds__(kThreads) chain_copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out,
                                                              long long chunks, unsigned* ticket, unsigned* flags,
                                                              unsigned call, unsigned base) {
  extern __shared__ uint4 tile_buf[];
  __shared__ unsigned s_tile;
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) {
    s_tile = kWait ? atomicAdd(ticket, 1u) - base : blockIdx.x;
  }
  __syncthreads();
  const unsigned t = s_tile;
  const long long first = static_cast<long long>(t) * kThreads * kChunks;
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    const long long q = first + i * kThreads + tid;
    if (q < chunks) tile_io::copy_async<16>(tile_buf + i * kThreads + tid, in + q);
  }
  tile_io::wait_all_copies();
  __syncthreads();
  if (kWait) {
    if (tid == 0) publish_flag(flags + t, t == 0 ? 2u * call + 2u : 2u * call + 1u);
    await_all_arrived(flags, static_cast<long long>(t) - 1, call);
    if (tid == 0 && t > 0) publish_flag(flags + t, 2u * call + 2u);
  }
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    const long long q = first + i * kThreads + tid;
    if (q < chunks) out[q] = tile_buf[i * kThreads + tid];
  }
}

// Nothing held while waiting: the block of ticket t reads tile t (phase 1: into registers,
// folded, its flag published), then copies tile t - lag (phase 2: its input read again, from L2
// if it is still there, once every tile up to it has arrived) to the output. lag tiles' input
// (lag x the tile) must stay in L2 between the phases. tiles + lag blocks: the first lag do only
// phase 1, the last lag only phase 2.
template <int kChunks>
__global__ void __launch_bounds__(kThreads) two_phase_kernel(const uint4* __restrict__ in, uint4* __restrict__ out,
                                                             long long chunks, unsigned tiles, unsigned lag,
                                                             unsigned* ticket, unsigned* flags, unsigned* sink,
                                                             unsigned call, unsigned base) {
  __shared__ unsigned s_tile;
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) s_tile = atomicAdd(ticket, 1u) - base;
  __syncthreads();
  const unsigned t = s_tile;
  if (t < tiles) {
    const long long first = static_cast<long long>(t) * kThreads * kChunks;
    uint4 v[kChunks];
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const long long q = first + i * kThreads + tid;
      v[i] = q < chunks ? in[q] : make_uint4(0, 0, 0, 0);
    }
    unsigned x = 0;
#pragma unroll
    for (int i = 0; i < kChunks; ++i) x ^= v[i].x + v[i].y + v[i].z + v[i].w;
    if (x == 0x9e3779b9u) sink[0] = x;  // (keeps the loads)
    __syncthreads();
    if (tid == 0) publish_flag(flags + t, t == 0 ? 2u * call + 2u : 2u * call + 1u);
  }
  if (t >= lag) {
    const unsigned u = t - lag;
    await_all_arrived(flags, static_cast<long long>(u), call);
    if (tid == 0 && u > 0) publish_flag(flags + u, 2u * call + 2u);
    const long long first = static_cast<long long>(u) * kThreads * kChunks;
    uint4 v[kChunks];
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const long long q = first + i * kThreads + tid;
      if (q < chunks) v[i] = in[q];
    }
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const long long q = first + i * kThreads + tid;
      if (q < chunks) out[q] = v[i];
    }
  }
}

template <int kChunks, bool kWait>
void launch_chain(const void* in, void* out, long long chunks, unsigned* ticket, unsigned* flags, unsigned call,
                  unsigned base, int smem, cudaStream_t s) {
  const long long per_block = static_cast<long long>(kThreads) * kChunks;
  const auto grid = static_cast<unsigned>((chunks + per_block - 1) / per_block);
  chain_copy_kernel<kChunks, kWait><<<grid, kThreads, smem, s>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out),
                                                                 chunks, ticket, flags, call, base);
  check_cuda(cudaGetLastError(), "chain_copy_kernel launch");
}

template <int kChunks, bool kWait>
void set_smem(int smem) {
  check_cuda(cudaFuncSetAttribute(chain_copy_kernel<kChunks, kWait>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
             "cudaFuncSetAttribute");
}

int run_case(std::int64_t rows, std::int64_t cols, cudaStream_t s, fkbench::LaunchGate& gate) {
  const std::size_t bytes = static_cast<std::size_t>(rows * cols) * 4;
  if (bytes == 0 || bytes % 16 != 0) {
    std::fprintf(stderr, "foldkit-scan-floor: ROWS * COLS * 4 must be a positive multiple of 16\n");
    return 2;
  }
  const long long chunks = static_cast<long long>(bytes / 16);
  fkbench::InputPool pool;
  pool.prepare(foldkit::DType::f32, rows * cols, 4242, s);
  // Outputs rotate too (>= 1 GiB), so that stores go to DRAM as in the bench's ceilings.
  fkbench::OutputPool outs;
  outs.prepare(bytes);
  auto next_out = [&] { return outs.next(); };
  const long long max_tiles = chunks / (kThreads * 8) + 2;
  unsigned* d_ticket = nullptr;
  unsigned* d_flags = nullptr;
  unsigned* d_sink = nullptr;
  check_cuda(cudaMalloc(&d_sink, 64), "cudaMalloc");
  check_cuda(cudaMalloc(&d_ticket, 64), "cudaMalloc");
  check_cuda(cudaMalloc(&d_flags, static_cast<std::size_t>(max_tiles) * 4), "cudaMalloc");
  check_cuda(cudaMemset(d_ticket, 0, 64), "cudaMemset");
  check_cuda(cudaMemset(d_flags, 0, static_cast<std::size_t>(max_tiles) * 4), "cudaMemset");
  unsigned call = 0, base = 0;  // calls run in stream order: each one's tickets start at `base`

  // The library's shared memory per block: 64 KiB tiles at 3 blocks per SM, 32 KiB at 4.
  const int smem_deep = 74 * 1024, smem_shallow = 42 * 1024;
  set_smem<16, true>(smem_deep);
  set_smem<16, false>(smem_deep);
  set_smem<8, true>(smem_shallow);
  set_smem<8, false>(smem_shallow);

  fkbench::TimingPlan tp;
  tp.reps_median = 40;
  tp.reps_batch = 100;
  auto timed = [&](const fkbench::Call& c) { return fkbench::time_calls(tp, s, pool, &gate, c); };
  const fkbench::Timing memcpy_t = timed([&](const void* in) {
    check_cuda(cudaMemcpyAsync(next_out(), in, bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
  });
  // One variant (kChunks chunks a thread, waiting or not): a call of the waiting kernels draws
  // `grid` tickets, where the next call's tiles start.
  auto time_chain = [&](auto chunks_tag, auto wait_tag, int smem) {
    constexpr int kChunks = decltype(chunks_tag)::value;
    constexpr bool kWait = decltype(wait_tag)::value;
    const long long per_block = static_cast<long long>(kThreads) * kChunks;
    const auto grid = static_cast<unsigned>((chunks + per_block - 1) / per_block);
    return timed([&, smem, grid](const void* in) {
      ++call;
      launch_chain<kChunks, kWait>(in, next_out(), chunks, d_ticket, d_flags, call, base, smem, s);
      if (kWait) base += grid;
    });
  };
  using Deep = std::integral_constant<int, 16>;
  using Shallow = std::integral_constant<int, 8>;
  const fkbench::Timing copy64 = time_chain(Deep{}, std::false_type{}, smem_deep);
  const fkbench::Timing copy32 = time_chain(Shallow{}, std::false_type{}, smem_shallow);
  const fkbench::Timing chain64 = time_chain(Deep{}, std::true_type{}, smem_deep);
  const fkbench::Timing chain32 = time_chain(Shallow{}, std::true_type{}, smem_shallow);
  // Two phases (nothing held while waiting), phase 2 `lag` tiles behind phase 1.
  auto time_two_phase = [&](auto chunks_tag, unsigned lag) {
    constexpr int kChunks = decltype(chunks_tag)::value;
    const long long per_block = static_cast<long long>(kThreads) * kChunks;
    const auto tiles = static_cast<unsigned>((chunks + per_block - 1) / per_block);
    const unsigned grid = tiles + lag;
    return timed([&, tiles, lag, grid](const void* in) {
      ++call;
      two_phase_kernel<kChunks><<<grid, kThreads, 0, s>>>(static_cast<const uint4*>(in), static_cast<uint4*>(next_out()),
                                                          chunks, tiles, lag, d_ticket, d_flags, d_sink, call, base);
      check_cuda(cudaGetLastError(), "two_phase_kernel launch");
      base += grid;
    });
  };
  const fkbench::Timing two64_128 = time_two_phase(Deep{}, 128), two64_384 = time_two_phase(Deep{}, 384);
  const fkbench::Timing two32_256 = time_two_phase(Shallow{}, 256), two32_768 = time_two_phase(Shallow{}, 768);
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  const foldkit::Device dev = foldkit::Device::cuda(device);
  const fkbench::Timing library = timed([&](const void* in) {
    foldkit::cuda::inclusive_scan(foldkit::ReduceOp::sum, foldkit::TensorView::contiguous(in, foldkit::DType::f32, {rows, cols}, dev),
                                  0, foldkit::TensorView::contiguous(next_out(), foldkit::DType::f32, {rows, cols}, dev), s);
  });
  check_cuda(cudaStreamSynchronize(s), "sync");

  const double ceil = std::min({memcpy_t.median_us, copy64.median_us, copy32.median_us});
  std::printf("\n== cumsum f32 dim 0 of (%lld, %lld): %zu bytes read + written; gated medians (batch means) ==\n",
              static_cast<long long>(rows), static_cast<long long>(cols), 2 * bytes);
  auto row = [&](const char* what, const fkbench::Timing& t) {
    std::printf("  %-60s %9.2f us (%9.2f)   %5.1f %% of the copy ceiling   %.2fx\n", what, t.median_us, t.batch_us,
                100.0 * ceil / t.median_us, t.median_us / ceil);
  };
  row("cudaMemcpyAsync", memcpy_t);
  row("tile copy, 64 KiB tiles, 3 blocks/SM (no wait)", copy64);
  row("tile copy, 32 KiB tiles, 4 blocks/SM (no wait)", copy32);
  row("chain floor, 64 KiB tiles: load, flag, look back, store", chain64);
  row("chain floor, 32 KiB tiles", chain32);
  row("two phases via L2, 64 KiB tiles, phase 2 128 tiles behind", two64_128);
  row("two phases via L2, 64 KiB tiles, 384 behind", two64_384);
  row("two phases via L2, 32 KiB tiles, 256 behind", two32_256);
  row("two phases via L2, 32 KiB tiles, 768 behind", two32_768);
  row("library: foldkit::cuda::inclusive_scan over dim 0", library);
  std::printf("  floor / ceiling: %.2fx (64 KiB), %.2fx (32 KiB); library / best floor: %.2fx\n", chain64.median_us / ceil,
              chain32.median_us / ceil, library.median_us / std::min(chain64.median_us, chain32.median_us));
  cudaFree(d_ticket);
  cudaFree(d_flags);
  cudaFree(d_sink);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return fkprobe::run_matrix_cases(argc, argv, "foldkit-scan-floor", run_case); }
