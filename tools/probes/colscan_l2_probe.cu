// foldkit-colscan-l2-probe: can a column scan (cumsum over dim 0) whose tiles never wait for a
// look-back chain reach the copy rate on the H200, if its second read of each tile hits L2?
//
// The library's column scans chain their tiles by a decoupled look-back: a tile holds its 64 KiB
// of shared memory from its loads until every earlier tile has arrived, ~15 us on the H200, of
// which ~4.5 us waiting (docs/perf-log/2026-11-28.md, capacity model: <= 83 % of the copy rate).
// This probe's kernel holds nothing while it waits: a persistent grid (every block resident)
// walks the tiles in chunks of one tile per block. Phase A of chunk c reads each tile from DRAM
// and publishes its column sums; phase B of chunk c reads the tile again (from L2: a chunk is
// P x 32 KiB, ~17 MB at 528 blocks) and writes its scan, its prefix being the chunk's carry plus
// the sums of the earlier tiles of its column group in the chunk. A block runs A(c + 1) before
// B(c), so B(c) finds A(c) finished by every block (one phase of slack), and the chunk carries
// are summed by the last block to finish each A phase, a phase ahead of their use. (The two-phase
// rows of foldkit-scan-floor were a different design: one tile per block, phase 2 waiting in
// its slot, 65 % of the copy ceiling on the H100.)
//
// f32 sums only; COLS a multiple of 4 (float4 columns), rows in tiles of 8 per thread. Beside it,
// interleaved call by call: cudaMemcpyAsync and the library's cumsum over dim 0. Its output is
// checked against the library's (relative difference; the sums' order differs).
//
// Usage: foldkit-colscan-l2-probe ROWS COLS [ROWS COLS ...]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/tensor_scan.hpp"
#include "matrix_cases_main.hpp"
#include "timing.hpp"

namespace {

using foldkit::cuda::detail::check_cuda;

constexpr int kThreads = 256;
constexpr int kRows = 8;  // rows per thread in a tile: a tile is 256 x 8 float4 = 32 KiB

struct Args {
  const float4* in;
  float4* out;
  long long rows;
  int cols4;           // float4 columns
  int tc;              // column threads (float4 columns) of a tile; tr = kThreads / tc row groups
  int groups;          // column groups: cols4 / tc
  long long tile_rows; // tr * kRows
  long long tiles;     // row tiles x groups, numbered row tile major
  int blocks;          // P: the persistent grid
  int lag;             // a block runs B(c - lag) after A(c): lag + 1 chunks of input live in L2
  long long chunks;    // ceil(tiles / P)
  float4* agg;         // [tiles][tc]: a tile's column sums
  float4* rel;         // [tiles][tc]: the sums of the earlier tiles of its column group in its chunk
  float4* total;       // [chunks][cols4]: a chunk's sums
  float4* carry;       // [chunks + 1][cols4]: the sums of every tile before chunk c
  unsigned* done;      // [chunks]: A phases finished, cumulative over calls
  unsigned* ready;     // [chunks + 1]: ready[c + 1] = call once carry[c + 1] and chunk c's rel are written
  unsigned call;       // 1, 2, ...
  bool pipelined;      // host side: which kernel
};

__device__ __forceinline__ float4 add4(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
__device__ __forceinline__ float4 zero4() { return make_float4(0.f, 0.f, 0.f, 0.f); }
__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ long long chunk_tiles(const Args& a, long long c) {
  return std::min<long long>(a.blocks, a.tiles - c * a.blocks);
}

// Tree over the row groups in shared memory (fixed order): row group 0 of each column gets the sum.
__device__ __forceinline__ float4 reduce_row_groups(float4 v, float4* s, int ct, int rg, const Args& a) {
  s[threadIdx.x] = v;
  __syncthreads();
  for (int step = (kThreads / a.tc) >> 1; step > 0; step >>= 1) {
    if (rg < step) s[threadIdx.x] = add4(s[threadIdx.x], s[(rg + step) * a.tc + ct]);
    __syncthreads();
  }
  const float4 r = s[ct];
  __syncthreads();
  return r;
}

// Exclusive scan of v over `count` threads whose places pos = 0 .. count - 1 lie `stride` apart in
// threadIdx.x (a column's row groups, or a column's ranges): Hillis-Steele in shared memory (two
// buffers of kThreads). Every thread of the block calls it.
__device__ __forceinline__ float4 exclusive_scan_places(float4 v, float4* s, int pos, int stride, int count) {
  const int tid = static_cast<int>(threadIdx.x);
  float4* s0 = s;
  float4* s1 = s + kThreads;
  s0[tid] = v;
  __syncthreads();
  for (int step = 1; step < count; step <<= 1) {
    float4 x = s0[tid];
    if (pos >= step) x = add4(s0[tid - step * stride], x);
    s1[tid] = x;
    __syncthreads();
    float4* t = s0;
    s0 = s1;
    s1 = t;
  }
  const float4 excl = pos > 0 ? s0[tid - stride] : zero4();
  __syncthreads();
  return excl;
}

// The agg of the group tiles i .. i + 7 (those below hi) of a chunk's column: l0 + i * G the
// tile, cj the column in it; 8 loads in flight.
__device__ __forceinline__ void load_group_aggs(const Args& a, long long l0, long long i, long long hi, int cj, float4 (&x)[8]) {
#pragma unroll
  for (int u = 0; u < 8; ++u) x[u] = i + u < hi ? __ldcg(&a.agg[(l0 + (i + u) * a.groups) * a.tc + cj]) : zero4();
}

// The last block of A(c): for every column, the exclusive sums of its group's tiles in chunk c
// (rel) and the chunk's total. per_col threads a column (a power of two), each a contiguous range
// of the group's tiles: sum the range (8 loads in flight), an exclusive scan of the ranges' sums
// in shared memory, then the range again, writing each tile's rel. Needs no carry: the chunks'
// scans run in parallel; only carry[c + 1] = carry[c] + total[c] is chained (one add a column).
__device__ __noinline__ void scan_chunk(const Args& a, long long c, float4* s) {
  const int tid = static_cast<int>(threadIdx.x);
  const long long first = c * a.blocks, end = first + chunk_tiles(a, c);
  int per_col = 1;
  while (per_col * 2 * a.cols4 <= kThreads) per_col *= 2;
  const int q = tid % per_col;
  for (int j0 = 0; j0 < a.cols4; j0 += kThreads / per_col) {
    const int j = j0 + tid / per_col;
    const bool col = j < a.cols4;
    long long l0 = 0, n = 0, span = 0, lo = 0, hi = 0;
    int cj = 0;
    if (col) {
      const int g = j / a.tc;
      cj = j % a.tc;
      l0 = first + ((g - first % a.groups) % a.groups + a.groups) % a.groups;  // the group's first tile
      n = l0 < end ? (end - 1 - l0) / a.groups + 1 : 0;
      span = (n + per_col - 1) / per_col;
      lo = std::min(n, q * span);
      hi = std::min(n, lo + span);
    }
    float4 part = zero4();
    for (long long i = lo; i < hi; i += 8) {
      float4 x[8];
      load_group_aggs(a, l0, i, hi, cj, x);
#pragma unroll
      for (int u = 0; u < 8; ++u) part = add4(part, x[u]);
    }
    float4 base = exclusive_scan_places(part, s, q, 1, per_col);
    for (long long i = lo; i < hi; i += 8) {
      float4 x[8];
      load_group_aggs(a, l0, i, hi, cj, x);
#pragma unroll
      for (int u = 0; u < 8; ++u)
        if (i + u < hi) {
          __stcg(&a.rel[(l0 + (i + u) * a.groups) * a.tc + cj], base);
          base = add4(base, x[u]);
        }
    }
    if (col && q == per_col - 1) __stcg(&a.total[c * a.cols4 + j], base);
  }
  // The chained part: carry[c + 1] = carry[c] + total[c].
  __syncthreads();
  if (c > 0 && tid == 0)
    while (load_acquire(&a.ready[c]) != a.call) {
    }
  __syncthreads();
  __threadfence();
  for (int j = tid; j < a.cols4; j += kThreads) {
    const float4 t = __ldcg(&a.total[c * a.cols4 + j]);
    __stcg(&a.carry[(c + 1) * a.cols4 + j], c > 0 ? add4(__ldcg(&a.carry[c * a.cols4 + j]), t) : t);
  }
  __syncthreads();
  if (tid == 0) {
    __threadfence();
    store_release(&a.ready[c + 1], a.call);
  }
}

// Phase A, first half: issue the tile's loads (rows interleaved across the row groups, row0 +
// k * tr + rg: a warp's load covers 32 / tc consecutive rows, so whole rows of narrow matrices
// are read in 512-byte runs).
__device__ __forceinline__ void phase_a_load(const Args& a, long long L, float4 (&v)[kRows]) {
  const int tid = static_cast<int>(threadIdx.x);
  const int ct = tid % a.tc, rg = tid / a.tc, tr = kThreads / a.tc;
  const long long row0 = L / a.groups * a.tile_rows;
  const int col = static_cast<int>(L % a.groups) * a.tc + ct;
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const long long r = row0 + static_cast<long long>(k) * tr + rg;
    v[k] = r < a.rows ? a.in[r * a.cols4 + col] : zero4();
  }
}

// Phase A, second half: the tile's column sums published; the chunk's last tile scans the chunk.
__device__ void phase_a_finish(const Args& a, long long c, long long L, const float4 (&v)[kRows], float4* s) {
  const int tid = static_cast<int>(threadIdx.x);
  const int ct = tid % a.tc, rg = tid / a.tc;
  float4 sum = v[0];
#pragma unroll
  for (int k = 1; k < kRows; ++k) sum = add4(sum, v[k]);
  sum = reduce_row_groups(sum, s, ct, rg, a);
  if (rg == 0) __stcg(&a.agg[L * a.tc + ct], sum);
  __shared__ bool last;
  __syncthreads();
  if (tid == 0) {
    __threadfence();
    const long long n = chunk_tiles(a, c);
    const unsigned before = atomicAdd(&a.done[c], 1u);
    last = before == a.call * static_cast<unsigned>(n) - 1u;
  }
  __syncthreads();
  if (last) {
    __threadfence();
    scan_chunk(a, c, s);
  }
}

__device__ void phase_b(const Args& a, long long c, long long L, float4* s) {
  const int tid = static_cast<int>(threadIdx.x);
  const int ct = tid % a.tc, rg = tid / a.tc, tr = kThreads / a.tc;
  const long long rt = L / a.groups;
  const int g = static_cast<int>(L % a.groups);
  const int col = g * a.tc + ct;
  if (tid == 0)
    while (load_acquire(&a.ready[c + 1]) != a.call) {
    }
  __syncthreads();
  // The tile again (L2), rows contiguous per thread: row0 + rg * kRows + k; its prefix from the
  // chunk's scan.
  const long long row0 = rt * a.tile_rows + static_cast<long long>(rg) * kRows;
  float4 v[kRows];
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const long long r = row0 + k;
    v[k] = r < a.rows ? __ldcg(&a.in[r * a.cols4 + col]) : zero4();
  }
  float4 pre = __ldcg(&a.rel[L * a.tc + ct]);
  if (c > 0) pre = add4(__ldcg(&a.carry[c * a.cols4 + col]), pre);
#pragma unroll
  for (int k = 1; k < kRows; ++k) v[k] = add4(v[k - 1], v[k]);
  const float4 excl = exclusive_scan_places(v[kRows - 1], s, rg, a.tc, tr);  // the row groups' totals
  const float4 base = add4(pre, excl);
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const long long r = row0 + k;
    if (r < a.rows) __stcs(&a.out[r * a.cols4 + col], add4(base, v[k]));
  }
}

// kPipelined: a block issues A(c)'s loads, then runs B(c - lag), then folds A(c): its DRAM
// reads stay in flight through B's work (2 blocks a SM: both tiles in registers; at 3 blocks,
// 80 registers, ptxas spilled 112 bytes, the loads' own registers). Otherwise A(c) whole, then
// B(c - lag) (4 blocks a SM: 64 registers).
template <bool kPipelined>
__global__ void __launch_bounds__(kThreads, kPipelined ? 2 : 4) colscan_l2_kernel(const __grid_constant__ Args a) {
  __shared__ float4 s[2 * kThreads];
  const long long b = blockIdx.x;
  for (long long c = 0; c < a.chunks + a.lag; ++c) {
    const long long la = c * a.blocks + b, cb = c - a.lag, lb = cb * a.blocks + b;
    const bool has_a = c < a.chunks && la < a.tiles, has_b = cb >= 0 && lb < a.tiles;
    float4 v[kRows];
    if (has_a) phase_a_load(a, la, v);
    if constexpr (kPipelined) {
      if (has_b) phase_b(a, cb, lb, s);
      if (has_a) phase_a_finish(a, c, la, v, s);
    } else {
      if (has_a) phase_a_finish(a, c, la, v, s);
      if (has_b) phase_b(a, cb, lb, s);
    }
  }
}

// A persistent grid of `per_sm` blocks a SM for a rows x cols matrix, with its workspace.
Args make_args(std::int64_t rows, std::int64_t cols, int sms, int per_sm, int lag, bool pipelined) {
  const int cols4 = static_cast<int>(cols / 4);
  int tc = 1;
  while (tc < 32 && tc * 2 <= cols4 && cols4 % (tc * 2) == 0) tc *= 2;
  Args a{};
  a.rows = rows;
  a.cols4 = cols4;
  a.tc = tc;
  a.groups = cols4 / tc;
  a.tile_rows = static_cast<long long>(kThreads / tc) * kRows;
  a.tiles = (rows + a.tile_rows - 1) / a.tile_rows * a.groups;
  a.blocks = static_cast<int>(std::min<long long>(static_cast<long long>(sms) * per_sm, a.tiles));
  a.lag = lag;
  a.pipelined = pipelined;
  a.chunks = (a.tiles + a.blocks - 1) / a.blocks;
  check_cuda(cudaMalloc(&a.agg, static_cast<std::size_t>(a.tiles * tc) * sizeof(float4)), "cudaMalloc agg");
  check_cuda(cudaMalloc(&a.rel, static_cast<std::size_t>(a.tiles * tc) * sizeof(float4)), "cudaMalloc rel");
  check_cuda(cudaMalloc(&a.total, static_cast<std::size_t>(a.chunks * cols4) * sizeof(float4)), "cudaMalloc total");
  check_cuda(cudaMalloc(&a.carry, static_cast<std::size_t>((a.chunks + 1) * cols4) * sizeof(float4)), "cudaMalloc carry");
  check_cuda(cudaMalloc(&a.done, static_cast<std::size_t>(a.chunks + 1) * 4), "cudaMalloc done");
  check_cuda(cudaMalloc(&a.ready, static_cast<std::size_t>(a.chunks + 1) * 4), "cudaMalloc ready");
  check_cuda(cudaMemset(a.done, 0, static_cast<std::size_t>(a.chunks + 1) * 4), "cudaMemset");
  check_cuda(cudaMemset(a.ready, 0, static_cast<std::size_t>(a.chunks + 1) * 4), "cudaMemset");
  return a;
}

int run_case(std::int64_t rows, std::int64_t cols, cudaStream_t st, fkbench::LaunchGate& gate) {
  if (rows <= 0 || cols <= 0 || cols % 4 != 0) {
    std::fprintf(stderr, "foldkit-colscan-l2-probe: COLS must be a positive multiple of 4\n");
    return 2;
  }
  const std::size_t bytes = static_cast<std::size_t>(rows * cols) * 4;
  int dev = 0, sms = 0, max_plain = 0, max_pipelined = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "attribute");
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&max_plain, colscan_l2_kernel<false>, kThreads, 0), "occupancy");
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&max_pipelined, colscan_l2_kernel<true>, kThreads, 0), "occupancy");
  // Blocks a SM, lag, pipelined: a chunk is blocks x 32 KiB of input, and lag + 1 chunks of it
  // must stay in L2 from phase A to phase B (at 4 blocks a SM and lag 1, 2 x 16.5 MiB; pipelined
  // at 2 blocks and lag 2, 3 x 8.3 MiB). The pipelined kernel runs B(c - lag) between A(c)'s
  // loads and its fold: with lag 1, B would wait for every block's A(c - 1) just finished.
  struct Variant { int per_sm, lag; bool pipelined; };
  std::vector<Args> variants;
  for (const Variant& v : {Variant{2, 1, false}, Variant{2, 2, false}, Variant{3, 1, false}, Variant{4, 1, false},
                           Variant{2, 2, true}})
    if (v.per_sm <= (v.pipelined ? max_pipelined : max_plain))
      variants.push_back(make_args(rows, cols, sms, v.per_sm, v.lag, v.pipelined));

  fkbench::InputPool pool;
  pool.prepare(foldkit::DType::f32, rows * cols, 4242, st);
  fkbench::OutputPool outs;  // outputs rotate over >= 1 GiB too
  outs.prepare(bytes);
  auto next_out = [&] { return outs.next(); };
  const foldkit::Device device = foldkit::Device::cuda(dev);
  auto probe = [&](Args& a, const void* in, void* out) {
    ++a.call;
    a.in = static_cast<const float4*>(in);
    a.out = static_cast<float4*>(out);
    if (a.pipelined) colscan_l2_kernel<true><<<a.blocks, kThreads, 0, st>>>(a);
    else colscan_l2_kernel<false><<<a.blocks, kThreads, 0, st>>>(a);
    check_cuda(cudaGetLastError(), "colscan_l2_kernel launch");
  };
  auto library = [&](const void* in, void* out) { fkprobe::library_cumsum_dim0(in, out, rows, cols, device, st); };

  // The check: one input, every variant twice (the counters' epochs), max |probe - library| / (|library| + 1).
  std::printf("\n== cumsum f32 dim 0 of (%lld, %lld): tiles of %lld rows x %d columns; %zu bytes read + written ==\n",
              static_cast<long long>(rows), static_cast<long long>(cols), variants.empty() ? 0 : variants[0].tile_rows,
              variants.empty() ? 0 : 4 * variants[0].tc, 2 * bytes);
  int rc = 0;
  {
    const void* in = pool.next();
    void* ref = next_out();
    void* got = next_out();
    library(in, ref);
    std::vector<float> h_ref(static_cast<std::size_t>(rows * cols)), h_got(h_ref.size());
    check_cuda(cudaMemcpyAsync(h_ref.data(), ref, bytes, cudaMemcpyDeviceToHost, st), "copy");
    for (Args& a : variants) {
      probe(a, in, got);
      probe(a, in, got);
      check_cuda(cudaMemcpyAsync(h_got.data(), got, bytes, cudaMemcpyDeviceToHost, st), "copy");
      check_cuda(cudaStreamSynchronize(st), "sync");
      double worst = 0;
      for (std::size_t i = 0; i < h_got.size(); ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(h_got[i]) - h_ref[i]) / (std::fabs(static_cast<double>(h_ref[i])) + 1.0));
      const bool ok = worst < 1e-3;
      if (!ok) rc = 1;
      std::printf("  check: %d blocks, lag %d%s (%lld tiles, %lld chunks of %.1f MiB): max rel diff vs the library %.2e %s\n",
                  a.blocks, a.lag, a.pipelined ? ", pipelined" : "", a.tiles, a.chunks, a.blocks * 32.0 / 1024, worst,
                  ok ? "ok" : "FAILED");
    }
  }
  fkbench::TimingPlan tp;
  tp.reps_median = 30;
  tp.reps_batch = 60;
  std::vector<fkbench::Call> calls = {
      fkprobe::memcpy_call(bytes, next_out, st),
      [&](const void* in) { library(in, next_out()); }};
  for (Args& a : variants) calls.push_back([&](const void* in) { probe(a, in, next_out()); });
  const std::vector<fkbench::Timing> t = fkbench::time_interleaved(tp, st, pool, &gate, calls);
  const double ceil = t[0].median_us;
  auto row = [&](const std::string& what, const fkbench::Timing& x) { fkprobe::print_copy_row(56, what, x, ceil); };
  row("cudaMemcpyAsync (the copy ceiling)", t[0]);
  row("library: foldkit::cuda::inclusive_scan over dim 0", t[1]);
  for (std::size_t i = 0; i < variants.size(); ++i)
    row("probe, " + std::to_string(variants[i].blocks / sms) + " blocks a SM, B " + std::to_string(variants[i].lag) +
            " chunk(s) behind A" + (variants[i].pipelined ? ", A's loads across B" : ""), t[2 + i]);
  for (Args& a : variants) {
    cudaFree(a.agg);
    cudaFree(a.carry);
    cudaFree(a.done);
    cudaFree(a.ready);
    cudaFree(a.rel);
    cudaFree(a.total);
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) { return fkprobe::run_matrix_cases(argc, argv, "foldkit-colscan-l2-probe", run_case); }
