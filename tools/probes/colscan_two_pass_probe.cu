// foldkit-colscan-two-pass-probe: a scan over dim 0 of a (ROWS, COLS) f32 matrix whose input fits
// in L2, in two launches and no look-back: is it within the issue's 1.3x of the copy ceiling on
// the H200 where every single-pass design measured is not?
//
// foldkit-scan-floor (bench/results/h200-2026-11-29b-floors.txt) measured the H200's single-pass floor (load,
// flag, look back, store; no arithmetic) at 1.29x / 1.43x / 1.51x the copy ceiling for cumsum(0)
// of (1e6, 2 / 8 / 32), and the library at 1.54 / 1.45 / 1.35x; the core whole-array f32 scan of
// 2^20-2^22 elements is at 1.41-1.50x there (scan-h200-2026-11-26b). A copy overlaps its reads
// and writes; a single-pass scan cannot write a tile before every earlier tile has arrived. Two
// launches read and write in turn instead:
//   A (reduce): each tile of 64 KiB is read (from DRAM: the input is cold) and its column sums
//     written, [tiles][COLS];
//   B (scan): each tile is read again (from L2, if its 8-32 MB stayed there), its prefix summed
//     from the column sums of the tiles before it (every block sums its own, in a fixed order:
//     same bits every call), scanned and written with streaming stores (evict first, so the
//     outputs do not push the inputs out of L2).
// The DRAM traffic is the copy's; what it costs is A's read and B's write not overlapping, and a
// second launch. Prediction: (1e6, 8) (32 MB in) ~7-9 us of A + ~9-10 us of B ~= 1.0x the copy
// ceiling (21-23 us), where the library takes 31 us; matrices past L2 (256 MB) read DRAM twice:
// ~1.5x.
// Measured (H200, 2026-11-29, bench/results/h200-2026-11-29b-colscan-two-pass-probe.txt): refuted.
// Right results, bitwise equal twice, but (1e6, 2 / 8) 1.49 / 1.74x the copy ceiling against the
// library's 1.34 / 1.56x: A alone takes 0.7x the copy's time for half its bytes (one tile a block,
// 1.2 waves: no steady state) and B alone, input cold, 1.1-1.2x; the two do not overlap.
//
// f32 sums, COLS in {1, 2, 4, 8, 16} (a thread's 64 contiguous floats are whole rows), ROWS x
// COLS a multiple of 4. Beside it, interleaved call by call: cudaMemcpyAsync, the library's
// cumsum over dim 0 (and the core whole-array scan where COLS is 1), A alone and B alone (B cold:
// its input not left in L2 by an A). Output checked against the library's (relative
// difference; the sums' order differs).
//
// Usage: foldkit-colscan-two-pass-probe ROWS COLS [ROWS COLS ...]
#include <cuda_pipeline.h>
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
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/tensor_scan.hpp"
#include "matrix_cases_main.hpp"
#include "timing.hpp"

namespace {

using foldkit::cuda::detail::check_cuda;

constexpr int kThreads = 256;
constexpr int kVecs = 16;                        // float4 vectors a thread: 64 contiguous floats
constexpr int kTileVecs = kThreads * kVecs;      // 64 KiB of f32 a tile
constexpr int kPad = 17;                         // shared memory: vector v at v + v / 16 (no bank conflicts)
constexpr std::size_t kSmemBytes = static_cast<std::size_t>(kTileVecs / 16 * kPad) * 16;

struct Args {
  const float4* in;
  float4* out;
  long long vecs;   // ROWS x COLS / 4
  long long tiles;  // ceil(vecs / kTileVecs)
  float* sums;      // [tiles][C]
};

template <int C>
struct Cols {
  float v[C];
};
template <int C>
__device__ __forceinline__ void add_into(Cols<C>& a, const Cols<C>& b) {
#pragma unroll
  for (int c = 0; c < C; ++c) a.v[c] += b.v[c];
}

// Sums of C columns over the block's threads in a fixed order (a shuffle tree a warp, then the
// 8 warps in order through shared memory sw[8][C]): the same bits every call.
template <int C>
__device__ __forceinline__ Cols<C> block_sum(Cols<C> x, float* sw) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
#pragma unroll
  for (int d = 16; d > 0; d >>= 1)
#pragma unroll
    for (int c = 0; c < C; ++c) x.v[c] += __shfl_xor_sync(~0u, x.v[c], d);
  if (lane == 0)
#pragma unroll
    for (int c = 0; c < C; ++c) sw[warp * C + c] = x.v[c];
  __syncthreads();
  Cols<C> r{};
  for (int w = 0; w < kThreads / 32; ++w)
#pragma unroll
    for (int c = 0; c < C; ++c) r.v[c] += sw[w * C + c];
  __syncthreads();
  return r;
}

// Exclusive scan of C columns over the block's threads: a shuffle scan a warp, the warps' totals
// through shared memory sw[8][C].
template <int C>
__device__ __forceinline__ Cols<C> block_exclusive_scan(Cols<C> x, float* sw) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1)
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const float y = __shfl_up_sync(~0u, x.v[c], d);
      if (lane >= d) x.v[c] += y;
    }
  if (lane == 31)
#pragma unroll
    for (int c = 0; c < C; ++c) sw[warp * C + c] = x.v[c];
  Cols<C> r;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const float y = __shfl_up_sync(~0u, x.v[c], 1);
    r.v[c] = lane > 0 ? y : 0.f;
  }
  __syncthreads();
  Cols<C> w{};
  for (int j = 0; j < warp; ++j)
#pragma unroll
    for (int c = 0; c < C; ++c) w.v[c] += sw[j * C + c];
  add_into(w, r);
  __syncthreads();
  return w;
}

__device__ __forceinline__ float elem(const float4& v, int e) { return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w; }
__device__ __forceinline__ void set_elem(float4& v, int e, float x) {
  if (e == 0) v.x = x;
  else if (e == 1) v.y = x;
  else if (e == 2) v.z = x;
  else v.w = x;
}

// A: tile t's column sums. Thread i loads vectors i, i + 256, ... (coalesced); its floats' columns
// are (4 i + e) % C whatever the vector (1024 % C == 0).
template <int C>
__global__ void __launch_bounds__(kThreads) tile_sums_kernel(const __grid_constant__ Args a) {
  __shared__ float s[kThreads / 32 * C];
  const long long t = blockIdx.x;
  const long long v0 = t * kTileVecs;
  const long long nv = std::min<long long>(kTileVecs, a.vecs - v0);
  float4 x[kVecs];
  const float4* p = a.in + v0 + threadIdx.x;
  if (nv == kTileVecs) {  // every load issued before any is used (16 in flight)
#pragma unroll
    for (int k = 0; k < kVecs; ++k) x[k] = __ldcg(p + k * kThreads);
  } else {
#pragma unroll
    for (int k = 0; k < kVecs; ++k)
      x[k] = threadIdx.x + k * kThreads < nv ? __ldcg(p + k * kThreads) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  float4 acc = x[0];
#pragma unroll
  for (int k = 1; k < kVecs; ++k) acc = make_float4(acc.x + x[k].x, acc.y + x[k].y, acc.z + x[k].z, acc.w + x[k].w);
  Cols<C> part{};
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    if constexpr (C >= 4) {
      // column (4 i + e) % C: thread i's group of 4 columns
#pragma unroll
      for (int g = 0; g < C / 4; ++g)
        if ((static_cast<int>(threadIdx.x) % (C / 4)) == g) part.v[4 * g + e] += elem(acc, e);
    } else {
      part.v[e % C] += elem(acc, e);
    }
  }
  const Cols<C> total = block_sum<C>(part, s);
  if (threadIdx.x == 0)
#pragma unroll
    for (int c = 0; c < C; ++c) a.sums[t * C + c] = total.v[c];
}

// B: tile t's scan. The tile is copied into shared memory (cp.async, coalesced), its prefix (the
// sums of tiles 0 .. t - 1: thread j sums tiles j, j + 256, ..., then a fixed tree) summed while
// the copies land; each thread scans its 64 contiguous floats (64 / C whole rows) in place, the
// threads' totals are scanned across the block, a second pass adds prefix + exclusive, and the
// tile leaves in coalesced streaming stores (evict first).
template <int C>
__global__ void __launch_bounds__(kThreads, 3) tile_scan_kernel(const __grid_constant__ Args a) {
  extern __shared__ float4 tile[];
  __shared__ float s[kThreads / 32 * C];
  const long long t = blockIdx.x;
  const long long v0 = t * kTileVecs;
  const long long nv = std::min<long long>(kTileVecs, a.vecs - v0);
  const int tid = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int v = tid + k * kThreads;
    if (v < nv) __pipeline_memcpy_async(&tile[v + v / 16], a.in + v0 + v, 16);
    else tile[v + v / 16] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  __pipeline_commit();
  // The tile's prefix, while the copies land.
  Cols<C> pre{};
  for (long long u = tid; u < t; u += kThreads)
#pragma unroll
    for (int c = 0; c < C; ++c) pre.v[c] += __ldcg(a.sums + u * C + c);
  __pipeline_wait_prior(0);
  pre = block_sum<C>(pre, s);  // its barrier also publishes the tile
  // Pass 1: this thread's vectors 16 tid .. 16 tid + 15 (at 17 tid + k), scanned in place.
  Cols<C> run{};
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    float4 y = tile[kPad * tid + k];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int c = (4 * k + e) % C;
      run.v[c] += elem(y, e);
      set_elem(y, e, run.v[c]);
    }
    tile[kPad * tid + k] = y;
  }
  Cols<C> excl = block_exclusive_scan<C>(run, s);
  add_into(excl, pre);
  // Pass 2: + the prefix of every earlier row.
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    float4 y = tile[kPad * tid + k];
#pragma unroll
    for (int e = 0; e < 4; ++e) set_elem(y, e, elem(y, e) + excl.v[(4 * k + e) % C]);
    tile[kPad * tid + k] = y;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int v = tid + k * kThreads;
    if (v < nv) __stcs(a.out + v0 + v, tile[v + v / 16]);
  }
}

template <int C>
void launch_a(const Args& a, cudaStream_t st) {
  tile_sums_kernel<C><<<static_cast<unsigned>(a.tiles), kThreads, 0, st>>>(a);
  check_cuda(cudaGetLastError(), "tile_sums_kernel launch");
}
template <int C>
void launch_b(const Args& a, cudaStream_t st) {
  tile_scan_kernel<C><<<static_cast<unsigned>(a.tiles), kThreads, kSmemBytes, st>>>(a);
  check_cuda(cudaGetLastError(), "tile_scan_kernel launch");
}

struct Kernels {
  void (*a)(const Args&, cudaStream_t);
  void (*b)(const Args&, cudaStream_t);
};
template <int C>
Kernels kernels_for() {
  check_cuda(cudaFuncSetAttribute(tile_scan_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmemBytes)),
             "cudaFuncSetAttribute");
  return {launch_a<C>, launch_b<C>};
}

int run_case(std::int64_t rows, std::int64_t cols, cudaStream_t st, fkbench::LaunchGate& gate) {
  Kernels k{};
  switch (cols) {
    case 1: k = kernels_for<1>(); break;
    case 2: k = kernels_for<2>(); break;
    case 4: k = kernels_for<4>(); break;
    case 8: k = kernels_for<8>(); break;
    case 16: k = kernels_for<16>(); break;
    default: std::fprintf(stderr, "foldkit-colscan-two-pass-probe: COLS must be 1, 2, 4, 8 or 16\n"); return 2;
  }
  if (rows <= 0 || (rows * cols) % 4 != 0) {
    std::fprintf(stderr, "foldkit-colscan-two-pass-probe: ROWS x COLS must be a positive multiple of 4\n");
    return 2;
  }
  const std::size_t bytes = static_cast<std::size_t>(rows * cols) * 4;
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  Args args{};
  args.vecs = rows * cols / 4;
  args.tiles = (args.vecs + kTileVecs - 1) / kTileVecs;
  check_cuda(cudaMalloc(&args.sums, static_cast<std::size_t>(args.tiles * cols) * 4), "cudaMalloc sums");

  fkbench::InputPool pool;
  pool.prepare(foldkit::DType::f32, rows * cols, 4242, st);
  fkbench::OutputPool outs;  // outputs rotate over >= 1 GiB too
  outs.prepare(bytes);
  auto next_out = [&] { return outs.next(); };
  const foldkit::Device device = foldkit::Device::cuda(dev);
  auto with = [&](const void* in, void* out) {
    Args a = args;
    a.in = static_cast<const float4*>(in);
    a.out = static_cast<float4*>(out);
    return a;
  };
  auto two_pass = [&](const void* in, void* out) {
    const Args a = with(in, out);
    k.a(a, st);
    k.b(a, st);
  };
  auto library = [&](const void* in, void* out) { fkprobe::library_cumsum_dim0(in, out, rows, cols, device, st); };

  std::printf("\n== cumsum f32 dim 0 of (%lld, %lld): %lld tiles of 64 KiB; %zu bytes read + written ==\n",
              static_cast<long long>(rows), static_cast<long long>(cols), args.tiles, 2 * bytes);
  int rc = 0;
  {
    const void* in = pool.next();
    void* ref = next_out();
    void* got = next_out();
    const std::vector<float> h_ref = fkprobe::library_reference(in, ref, rows, cols, device, st);
    const fkprobe::VariantCheck c = fkprobe::check_variant(two_pass, in, got, h_ref, st);
    if (!c.ok()) rc = 1;
    std::printf("  check: max rel diff vs the library %.2e, two calls %s: %s\n", c.worst, c.same ? "bitwise equal" : "DIFFER",
                c.ok() ? "ok" : "FAILED");
  }
  fkbench::TimingPlan tp;
  tp.reps_median = 40;
  tp.reps_batch = 80;
  std::vector<fkbench::Call> calls = {
      fkprobe::memcpy_call(bytes, next_out, st),
      [&](const void* in) { library(in, next_out()); },
      [&](const void* in) { two_pass(in, next_out()); },
      [&](const void* in) { k.a(with(in, next_out()), st); },
      [&](const void* in) { k.b(with(in, next_out()), st); }};
  if (cols == 1)
    calls.push_back([&](const void* in) {
      foldkit::cuda::inclusive_scan<foldkit::ReduceOp::sum>(static_cast<const float*>(in), rows,
                                                            static_cast<float*>(next_out()), st);
    });
  const std::vector<fkbench::Timing> t = fkbench::time_interleaved(tp, st, pool, &gate, calls);
  const double ceil = t[0].median_us;
  auto row = [&](const std::string& what, const fkbench::Timing& x) { fkprobe::print_copy_row(58, what, x, ceil); };
  row("cudaMemcpyAsync (the copy ceiling)", t[0]);
  row("library: foldkit::cuda::inclusive_scan over dim 0", t[1]);
  row("two-pass: A (tile sums) then B (scan, input from L2)", t[2]);
  row("  A alone (read, tile sums)", t[3]);
  row("  B alone (input cold in DRAM)", t[4]);
  if (cols == 1) row("library: whole-array foldkit::cuda::inclusive_scan", t[5]);
  cudaFree(args.sums);
  return rc;
}

}  // namespace

int main(int argc, char** argv) { return fkprobe::run_matrix_cases(argc, argv, "foldkit-colscan-two-pass-probe", run_case); }
