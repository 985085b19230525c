// foldkit-outer-arg-staged-probe: argmax over dim 0 of a (ROWS, COLS) f32 matrix with the rows
// staged in shared memory by cp.async, against the library's outer kernel and the read ceiling.
//
// The question: issue #22's argmax over dim 0 sits at 82-85 % of the read ceiling on the H200
// (bar 85 %) on seven of nine shapes, where the sum over dim 0 reads at 90-98 %. The outer
// kernel holds each round's 8 loads in registers until it folds them: with argmax's (value,
// position) state that is 110-128 registers, 2 blocks of 256 an SM, 2 x 256 x 8 x 16 B = 64 KiB
// in flight an SM, half what the read ceiling keeps (8 x 256 x 4 x 16 B). Every alternative kept
// the loads in registers (prefetch to L2, warp tickets, shorter rounds: all refuted, perf.md
// ledger). Staged instead: each thread cp.async's its own K vectors a round into its own
// shared-memory slots, S rounds ahead, and folds a round from shared memory once its copy group
// has landed (cp.async.wait_group; no barrier: a thread only reads what it copied). Registers
// hold only the fold's state, so the bytes in flight are S x K x 4 KiB a block, as many blocks
// as shared memory allows (foldkit-stream-pipeline-probe: one tile a block read at 101.6-101.9 %
// of the read ceiling whatever work followed it, rings of tiles at 96-100 %).
// Prediction: the staged variants at 90-95 % on the 2^26-element shapes, against the library's
// 82-85 %; none slower than the library.
//
// Block b: column tile b % col_tiles (TX column vectors), split b / col_tiles of the rows (a round
// is K x TY rows; split s takes rounds s, s + splits, ...: one band of the input at a time); the
// TY partials of a column fold in a fixed tree, and with several splits the last block of a
// column tile to arrive folds the splits' partials (as the library's outer kernel does). The fold
// is the library's ArgFold (the same NaN, tie and position rules), so the indices must equal the
// library's exactly. COLS a multiple of 4 (whole 16-byte vectors).
//
// Usage: foldkit-outer-arg-staged-probe ROWS COLS [ROWS COLS ...]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ceiling_kernel.hpp"
#include "foldkit/cuda/device/scan_tile_io.cuh"
#include "foldkit/cuda/device/tensor_reduce_kernels.cuh"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/tensor_reduce.hpp"
#include "matrix_cases_main.hpp"
#include "timing.hpp"

namespace {

using foldkit::cuda::detail::check_cuda;
namespace tz = foldkit::cuda::tensor;
namespace tio = foldkit::cuda::tile_io;
using P = tz::BuiltinTensorOp<foldkit::ReduceOp::argmax, float>;
using Spec = P::Spec;
using A = Spec::accum_type;

constexpr int kThreads = 256;

struct StagedArgs {
  const float* in;
  std::int64_t* out;
  std::int64_t rows, cols;  // row stride: cols
  int tx_shift;             // TX = 1 << tx_shift column vectors a block, TY = 256 / TX rows
  std::int64_t col_tiles, splits;
  unsigned* counters;  // [col_tiles], zero between calls
  A* partials;         // [col_tiles][splits][TX * 4]
};

template <int kK, int kS>
__global__ void __launch_bounds__(kThreads) staged_argmax_kernel(const __grid_constant__ StagedArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];  // kS rounds of kK x 256 vectors; then the tree
  __shared__ bool last_block;
  float4* stage = reinterpret_cast<float4*>(smem);
  A* tree = reinterpret_cast<A*>(smem);  // [256][4], after every copy has landed
  const Spec spec{};
  const int TX = 1 << a.tx_shift, TY = kThreads >> a.tx_shift;
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid & (TX - 1), ty = tid >> a.tx_shift;
  const std::int64_t tile = blockIdx.x % a.col_tiles, split = blockIdx.x / a.col_tiles;
  const std::int64_t colv = tile * TX + tx;
  const bool active = colv * 4 < a.cols;
  const std::int64_t round_rows = static_cast<std::int64_t>(kK) * TY;
  const std::int64_t rounds = (a.rows + round_rows - 1) / round_rows;
  const std::int64_t mine = split < rounds ? (rounds - split + a.splits - 1) / a.splits : 0;
  const float* column = a.in + colv * 4;
  auto first_row_of = [&](std::int64_t i) { return (split + i * a.splits) * round_rows + ty; };
  // Round i of this block into stage slot i % kS: this thread's own kK vectors (one copy group,
  // committed even when empty, so that the groups in flight count rounds).
  auto issue = [&](std::int64_t i) {
    if (i < mine && active) {
      const std::int64_t r0 = first_row_of(i);
      float4* dst = stage + (i % kS) * kK * kThreads + tid;
#pragma unroll
      for (int k = 0; k < kK; ++k) {
        const std::int64_t r = r0 + static_cast<std::int64_t>(k) * TY;
        if (r < a.rows) tio::copy_async<16>(dst + k * kThreads, column + r * a.cols);
      }
    }
    tio::commit_copies();
  };
  P::Fold fold[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) fold[e] = P::Fold(spec);
#pragma unroll
  for (int s = 0; s < kS - 1; ++s) issue(s);
  for (std::int64_t i = 0; i < mine; ++i) {
    issue(i + kS - 1);
    tio::wait_copies_but<kS - 1>();  // round i's group has landed
    if (active) {
      const std::int64_t r0 = first_row_of(i);
      const float4* src = stage + (i % kS) * kK * kThreads + tid;
#pragma unroll
      for (int k = 0; k < kK; ++k) {
        const std::int64_t r = r0 + static_cast<std::int64_t>(k) * TY;
        if (r < a.rows) {
          const float4 v = src[k * kThreads];
          fold[0].add(spec, v.x, r);
          fold[1].add(spec, v.y, r);
          fold[2].add(spec, v.z, r);
          fold[3].add(spec, v.w, r);
        }
      }
    }
  }
  const std::int64_t first = mine > 0 && first_row_of(0) < a.rows ? first_row_of(0) : -1;
  A acc[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) acc[e] = active ? fold[e].result(spec, first) : spec.identity();
  tio::wait_all_copies();
  __syncthreads();  // the stage's bytes become the tree
  // TY partials of a column: ty with ty + half, lower rows on the left.
  auto fold_over_ty = [&] {
#pragma unroll
    for (int e = 0; e < 4; ++e) tree[tid * 4 + e] = acc[e];
    for (int half = TY >> 1; half > 0; half >>= 1) {
      __syncthreads();
      if (ty < half) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          acc[e] = spec.combine(acc[e], tree[(tid + half * TX) * 4 + e]);
          tree[tid * 4 + e] = acc[e];
        }
      }
    }
  };
  auto write = [&] {
    if (ty != 0 || !active) return;
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (colv * 4 + e < a.cols) a.out[colv * 4 + e] = tz::arg_index(spec, acc[e]);
  };
  fold_over_ty();
  if (a.splits == 1) {
    write();
    return;
  }
  const int width = TX * 4;
  A* part = a.partials + tile * a.splits * width;
  if (ty == 0) {
#pragma unroll
    for (int e = 0; e < 4; ++e) part[split * width + tx * 4 + e] = acc[e];
  }
  __threadfence();
  __syncthreads();
  if (tid == 0) last_block = atomicAdd(a.counters + tile, 1u) == static_cast<unsigned>(a.splits - 1);
  __syncthreads();
  if (!last_block) return;
  __threadfence();
#pragma unroll
  for (int e = 0; e < 4; ++e) acc[e] = spec.identity();
  for (std::int64_t sp = ty; sp < a.splits; sp += TY) {
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[e] = spec.combine(acc[e], tz::load_partial(part + sp * width + tx * 4 + e));
  }
  __syncthreads();  // the tree is reused
  fold_over_ty();
  if (tid == 0) a.counters[tile] = 0u;
  write();
}

struct Variant {
  void (*kernel)(StagedArgs);
  int k, s;
};
const Variant kVariants[] = {{staged_argmax_kernel<2, 3>, 2, 3}, {staged_argmax_kernel<2, 4>, 2, 4},
                             {staged_argmax_kernel<4, 2>, 4, 2}, {staged_argmax_kernel<4, 3>, 4, 3},
                             {staged_argmax_kernel<8, 2>, 8, 2}, {staged_argmax_kernel<8, 3>, 8, 3}};

int run_case(std::int64_t rows, std::int64_t cols, cudaStream_t st, fkbench::LaunchGate& gate) {
  if (rows <= 0 || cols <= 0 || cols % 4 != 0 || rows >= (std::int64_t{1} << 32)) {
    std::fprintf(stderr, "foldkit-outer-arg-staged-probe: COLS a multiple of 4, ROWS below 2^32\n");
    return 2;
  }
  const fkbench::GpuInfo gpu = fkbench::query_gpu();
  const std::int64_t vecs = cols / 4;
  const std::size_t bytes = static_cast<std::size_t>(rows * cols) * 4;
  fkbench::InputPool pool;
  pool.prepare(foldkit::DType::f32, rows * cols, 7177, st);
  fkbench::OutputPool outs;
  outs.prepare(static_cast<std::size_t>(cols) * 8);
  unsigned* d_sink = nullptr;
  check_cuda(cudaMalloc(&d_sink, 4), "cudaMalloc sink");
  const foldkit::Device device = foldkit::Device::cuda(gpu.device);
  auto library = [&](const void* in, void* out) {
    const std::int64_t oshape[1] = {cols};
    foldkit::cuda::reduce(foldkit::ReduceOp::argmax, foldkit::TensorView::contiguous(in, foldkit::DType::f32, {rows, cols}, device),
                          {0}, false, foldkit::TensorView::contiguous(out, foldkit::DType::i64, oshape, 1, device), st);
  };

  // The staged launches: every variant at column tiles of 16 and 64 vectors (fewer where the
  // matrix is narrower), splits filling one wave of the blocks that fit.
  struct StagedLaunch {
    const Variant* v;
    StagedArgs args;
    unsigned grid;
    std::size_t smem;
    std::string name;
  };
  std::vector<StagedLaunch> launches;
  std::vector<void*> allocations;
  for (const Variant& v : kVariants) {
    const std::size_t smem = static_cast<std::size_t>(v.s) * v.k * kThreads * 16;
    check_cuda(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
               "cudaFuncSetAttribute");
    int fit = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, v.kernel, kThreads, smem), "occupancy");
    std::vector<int> shifts;
    for (int shift : {4, 6})
      if ((std::int64_t{1} << shift) <= vecs) shifts.push_back(shift);
    if (shifts.empty()) {
      int shift = 0;
      while ((std::int64_t{2} << shift) <= vecs) ++shift;
      shifts.push_back(shift);  // the widest power of two within the row
    }
    for (int shift : shifts) {
      const std::int64_t tx = std::int64_t{1} << shift, ty = kThreads / tx;
      const std::int64_t col_tiles = (vecs + tx - 1) / tx;
      const std::int64_t rounds = (rows + v.k * ty - 1) / (v.k * ty);
      const std::int64_t splits = std::clamp<std::int64_t>(static_cast<std::int64_t>(fit) * gpu.sm_count / col_tiles, 1, rounds);
      if (col_tiles * splits > 0x7fffffffLL) continue;
      StagedArgs args{};
      args.rows = rows;
      args.cols = cols;
      args.tx_shift = shift;
      args.col_tiles = col_tiles;
      args.splits = splits;
      if (splits > 1) {
        check_cuda(cudaMalloc(&args.counters, static_cast<std::size_t>(col_tiles) * 4), "cudaMalloc counters");
        check_cuda(cudaMemset(args.counters, 0, static_cast<std::size_t>(col_tiles) * 4), "cudaMemset counters");
        check_cuda(cudaMalloc(&args.partials, static_cast<std::size_t>(col_tiles * splits * tx * 4) * sizeof(A)), "cudaMalloc partials");
        allocations.push_back(args.counters);
        allocations.push_back(args.partials);
      }
      launches.push_back({&v, args, static_cast<unsigned>(col_tiles * splits), smem,
                          "staged K " + std::to_string(v.k) + " S " + std::to_string(v.s) + " (" + std::to_string(fit) +
                              " blocks/SM, " + std::to_string(v.s * v.k * 4) + " KiB) TX " + std::to_string(tx) + " splits " +
                              std::to_string(splits)});
    }
  }
  auto staged = [&](const StagedLaunch& l, const void* in, void* out) {
    StagedArgs args = l.args;
    args.in = static_cast<const float*>(in);
    args.out = static_cast<std::int64_t*>(out);
    l.v->kernel<<<l.grid, kThreads, l.smem, st>>>(args);
  };

  std::printf("\n== argmax f32 over dim 0 of (%lld, %lld): %zu bytes read ==\n", static_cast<long long>(rows),
              static_cast<long long>(cols), bytes);
  int rc = 0;
  {
    const void* in = pool.next();
    std::vector<std::int64_t> want(static_cast<std::size_t>(cols)), got(want.size());
    library(in, outs.check(0));
    check_cuda(cudaMemcpyAsync(want.data(), outs.check(0), cols * 8, cudaMemcpyDeviceToHost, st), "copy");
    for (const StagedLaunch& l : launches) {
      check_cuda(cudaMemsetAsync(outs.check(1), 0xff, cols * 8, st), "poison");
      staged(l, in, outs.check(1));
      check_cuda(cudaGetLastError(), "staged launch");
      check_cuda(cudaMemcpyAsync(got.data(), outs.check(1), cols * 8, cudaMemcpyDeviceToHost, st), "copy");
      check_cuda(cudaStreamSynchronize(st), "sync");
      const auto miss = std::mismatch(want.begin(), want.end(), got.begin());
      if (miss.first != want.end()) {
        rc = 1;
        std::printf("  check %s: MISMATCH at column %lld (library %lld, staged %lld)\n", l.name.c_str(),
                    static_cast<long long>(miss.first - want.begin()), static_cast<long long>(*miss.first),
                    static_cast<long long>(*miss.second));
      }
    }
    if (rc == 0) std::printf("  check: every staged variant's indices equal the library's\n");
  }
  const fkbench::CeilingVariant ceiling{8, 256, 4};
  fkbench::TimingPlan tp;
  tp.reps_median = 30;
  tp.reps_batch = 60;
  std::vector<fkbench::Call> calls = {
      [&](const void* in) { fkbench::launch_read_ceiling(in, bytes, ceiling, gpu.sm_count, d_sink, 0x9e3779b9u, st); },
      [&](const void* in) { library(in, outs.next()); }};
  for (const StagedLaunch& l : launches) calls.push_back([&, l](const void* in) { staged(l, in, outs.next()); });
  const std::vector<fkbench::Timing> t = fkbench::time_interleaved(tp, st, pool, &gate, calls);
  const double ceil = t[0].median_us;
  auto row = [&](const std::string& what, const fkbench::Timing& x) {
    std::printf("  %-62s %9.2f us (%9.2f)   %5.1f %% of the read ceiling   %5.2fx the library\n", what.c_str(), x.median_us,
                x.batch_us, 100.0 * ceil / x.median_us, x.median_us / t[1].median_us);
  };
  row("read ceiling (8 x 256 / SM, 4 loads)", t[0]);
  row("library: foldkit::cuda::reduce argmax over dim 0", t[1]);
  for (std::size_t i = 0; i < launches.size(); ++i) row(launches[i].name, t[2 + i]);
  for (void* p : allocations) cudaFree(p);
  cudaFree(d_sink);
  return rc;
}

}  // namespace

int main(int argc, char** argv) { return fkprobe::run_matrix_cases(argc, argv, "foldkit-outer-arg-staged-probe", run_case); }
