// foldkit::cpu::inclusive_scan / exclusive_scan over tensors (foldkit/tensor_scan.hpp): executes
// the backend-independent plan (foldkit/detail/scan_plan.hpp) on the CPU backend's threads.
//
// "rows-contiguous" plans (the lines lie back to back in and out) are the core's blocked scan of
// the flat array with block_length = line length (cpu::*_scan_blocked, type-erased): its bits.
//
// Every other plan runs one engine over (lines x positions): the lines are numbered by the
// innermost canonical kept dimension (the "columns", width C) and the outer kept dimensions; the
// positions are the scanned axis (R of them). A work unit is (outer index, block of up to
// kColBlockBytes / sizeof(accumulator) columns, chunk of rows) and keeps one accumulator per
// column of its block:
//   - column sweeps (the columns are the more contiguous dimension, e.g. a row-major matrix
//     scanned along dim 0): row by row, out[r, block] = op(acc, in[r, block]), an inner loop over
//     contiguous columns that the compiler vectorises;
//   - line sweeps (the scanned axis is the more contiguous one): line by line along the axis.
// Both walk each line's positions in order, so they give the same bits.
// Few units (few, long lines): the rows are cut into fixed chunks; pass 1 folds each chunk but the
// last (per column), a serial left fold gives each chunk its carry (the seed first: init for
// exclusive scans, the identity for inclusive ones), pass 2 rescans every chunk from its carry.
// The chunking is a function of the plan alone (never of the thread count), so the bits are too.
// In place (out is the input view) is safe: every element is read before it is written, and no
// unit reads another unit's elements.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "common/erased_dispatch.hpp"
#include "foldkit/detail/scan_plan.hpp"
#include "foldkit/reduce.hpp"  // detail::parallel_for_chunks, check_host_input
#include "foldkit/scan.hpp"
#include "foldkit/tensor_scan.hpp"

namespace foldkit::cpu {
namespace {

using foldkit::detail::PlanDim;
using foldkit::detail::ScanFamily;
using foldkit::detail::ScanPlan;

// Below this much input, handing units to the pool costs what it saves (as reduce_cpu.cpp).
constexpr std::int64_t kMinParallelBytes = std::int64_t{1} << 20;
// A unit's accumulators: 16 KiB (4096 float columns), as the tensor reductions' outer sweep.
constexpr std::int64_t kColBlockBytes = 16384;
// With fewer units than this, the rows are cut into chunks (of at least kMinChunkRows rows) until
// there are about this many units. A constant, not the thread count: the bits depend on it.
constexpr std::int64_t kMinUnits = 32;
constexpr std::int64_t kMinChunkRows = 2048;

template <ReduceOp Op, class A>
using combine_t = std::conditional_t<
    Op == ReduceOp::sum, op::Sum<A>,
    std::conditional_t<Op == ReduceOp::prod, op::Prod<A>, std::conditional_t<Op == ReduceOp::min, op::Min<A>, op::Max<A>>>>;

template <ReduceOp Op, class T, bool kExclusive>
struct ScanJob {
  using R = scan_result_t<Op, T>;
  using A = scan_accum_t<Op, T>;
  using F = combine_t<Op, A>;
  static constexpr std::int64_t kBlock = kColBlockBytes / static_cast<std::int64_t>(sizeof(A));

  const T* in;
  R* out;
  A seed;  // exclusive: init; inclusive: the identity (op(identity, x) == x bit for bit)
  // Geometry: R positions along the axis, C columns, the outer kept dimensions.
  std::int64_t rows, rs_in, rs_out;
  std::int64_t cols, cs_in, cs_out;
  int outer_rank;
  std::int64_t outer_size[kMaxRank], outer_in[kMaxRank], outer_out[kMaxRank];
  std::int64_t outer_count;
  bool line_sweep;
  std::int64_t col_blocks, chunks, chunk_rows;
  std::vector<A> carry;  // chunks > 1: per (outer, block, chunk) kBlock values; pass 1 fills the
                         // chunk folds, then the serial fold turns them into carries

  void offsets(std::int64_t o, std::int64_t& in_off, std::int64_t& out_off) const {
    in_off = out_off = 0;
    for (int d = outer_rank - 1; d >= 0; --d) {
      const std::int64_t i = o % outer_size[d];
      o /= outer_size[d];
      in_off += i * outer_in[d];
      out_off += i * outer_out[d];
    }
  }

  // Positions [r0, r1) of columns [j0, j0 + width) of outer line group o, from acc (updated).
  // kWrite: write the outputs (pass 2); else only fold (pass 1).
  template <bool kWrite>
  void sweep(std::int64_t o, std::int64_t j0, std::int64_t width, std::int64_t r0, std::int64_t r1, A* acc) const {
    const F f{};
    std::int64_t in_off, out_off;
    offsets(o, in_off, out_off);
    const T* pi0 = in + in_off + j0 * cs_in;
    R* po0 = out + out_off + j0 * cs_out;
    if (line_sweep) {
      for (std::int64_t j = 0; j < width; ++j) {
        const T* pi = pi0 + j * cs_in;
        R* po = po0 + j * cs_out;
        A a = acc[j];
        for (std::int64_t r = r0; r < r1; ++r) {
          const A x = static_cast<A>(pi[r * rs_in]);  // read before the write: in place is allowed
          if constexpr (kWrite && kExclusive) po[r * rs_out] = static_cast<R>(a);
          a = f(a, x);
          if constexpr (kWrite && !kExclusive) po[r * rs_out] = static_cast<R>(a);
        }
        acc[j] = a;
      }
      return;
    }
    if (cs_in == 1 && cs_out == 1) {
      for (std::int64_t r = r0; r < r1; ++r) {
        const T* pi = pi0 + r * rs_in;
        R* po = po0 + r * rs_out;
        for (std::int64_t j = 0; j < width; ++j) {
          const A x = static_cast<A>(pi[j]);
          if constexpr (kWrite && kExclusive) po[j] = static_cast<R>(acc[j]);
          acc[j] = f(acc[j], x);
          if constexpr (kWrite && !kExclusive) po[j] = static_cast<R>(acc[j]);
        }
      }
      return;
    }
    for (std::int64_t r = r0; r < r1; ++r) {
      const T* pi = pi0 + r * rs_in;
      R* po = po0 + r * rs_out;
      for (std::int64_t j = 0; j < width; ++j) {
        const A x = static_cast<A>(pi[j * cs_in]);
        if constexpr (kWrite && kExclusive) po[j * cs_out] = static_cast<R>(acc[j]);
        acc[j] = f(acc[j], x);
        if constexpr (kWrite && !kExclusive) po[j * cs_out] = static_cast<R>(acc[j]);
      }
    }
  }

  // Unit u = (group g = outer * col_blocks + block, chunk k), chunk fastest.
  void unit_bounds(std::int64_t u, std::int64_t& o, std::int64_t& j0, std::int64_t& width, std::int64_t& k,
                   std::int64_t& r0, std::int64_t& r1) const {
    k = u % chunks;
    const std::int64_t g = u / chunks;
    o = g / col_blocks;
    const std::int64_t b = g % col_blocks;
    j0 = b * kBlock;
    width = std::min(kBlock, cols - j0);
    r0 = k * chunk_rows;
    r1 = std::min(rows, r0 + chunk_rows);
  }

  static void pass1(void* ctx, std::int64_t u) {  // u over the units whose chunk is not the last
    auto& job = *static_cast<ScanJob*>(ctx);
    const std::int64_t g = u / (job.chunks - 1), k = u % (job.chunks - 1);
    std::int64_t o, j0, width, kk, r0, r1;
    job.unit_bounds(g * job.chunks + k, o, j0, width, kk, r0, r1);
    A acc[kBlock];
    for (std::int64_t j = 0; j < width; ++j) acc[j] = F::identity();
    job.template sweep<false>(o, j0, width, r0, r1, acc);
    A* dst = job.carry.data() + (g * job.chunks + k) * kBlock;
    std::copy(acc, acc + width, dst);
  }

  static void pass2(void* ctx, std::int64_t u) {
    const auto& job = *static_cast<const ScanJob*>(ctx);
    std::int64_t o, j0, width, k, r0, r1;
    job.unit_bounds(u, o, j0, width, k, r0, r1);
    A acc[kBlock];
    if (job.chunks > 1) {
      const A* src = job.carry.data() + u * kBlock;
      std::copy(src, src + width, acc);
    } else {
      for (std::int64_t j = 0; j < width; ++j) acc[j] = job.seed;
    }
    job.template sweep<true>(o, j0, width, r0, r1, acc);
  }
};

void for_units(std::int64_t units, std::int64_t bytes, void (*run)(void*, std::int64_t), void* ctx) {
  if (units >= 2 && bytes >= kMinParallelBytes) {
    detail::parallel_for_chunks(units, run, ctx);
  } else {
    for (std::int64_t u = 0; u < units; ++u) run(ctx, u);
  }
}

template <ReduceOp Op, class T, bool kExclusive>
void run_engine(const ScanPlan& p, const TensorView& in, const TensorView& out, scan_accum_t<Op, T> seed) {
  using Job = ScanJob<Op, T, kExclusive>;
  using A = typename Job::A;
  Job job{};
  job.in = static_cast<const T*>(in.data);
  job.out = static_cast<typename Job::R*>(out.data);
  job.seed = seed;
  const foldkit::detail::ScanMatrix m = foldkit::detail::scan_matrix(p);
  job.rows = m.rows;
  job.rs_in = m.in_rs;
  job.rs_out = m.out_rs;
  job.cols = m.cols;
  job.cs_in = m.in_cs;
  job.cs_out = m.out_cs;
  job.outer_rank = m.outer_rank;
  job.outer_count = m.outer_count;
  for (int d = 0; d < m.outer_rank; ++d) {
    job.outer_size[d] = m.outer[d].size;
    job.outer_in[d] = m.outer[d].in_stride;
    job.outer_out[d] = m.outer[d].out_stride;
  }
  // Walk along the axis when it is the more contiguous dimension of the input.
  job.line_sweep = job.cols == 1 || m.axis_major();
  job.col_blocks = (job.cols + Job::kBlock - 1) / Job::kBlock;
  const std::int64_t groups = job.outer_count * job.col_blocks;
  job.chunks = 1;
  if (groups < kMinUnits && job.rows >= 2 * kMinChunkRows)
    job.chunks = std::min((kMinUnits + groups - 1) / groups, job.rows / kMinChunkRows);
  job.chunk_rows = (job.rows + job.chunks - 1) / job.chunks;
  job.chunks = (job.rows + job.chunk_rows - 1) / job.chunk_rows;
  const std::int64_t bytes = p.numel * static_cast<std::int64_t>(sizeof(T));
  if (job.chunks > 1) {
    job.carry.assign(static_cast<std::size_t>(groups * job.chunks * Job::kBlock), A{});
    for_units(groups * (job.chunks - 1), bytes, &Job::pass1, &job);
    // Chunk k's carry = seed op fold(chunk 0) op ... op fold(chunk k - 1), left to right.
    const typename Job::F f{};
    for (std::int64_t g = 0; g < groups; ++g) {
      const std::int64_t width = std::min(Job::kBlock, job.cols - (g % job.col_blocks) * Job::kBlock);
      A* c = job.carry.data() + g * job.chunks * Job::kBlock;
      for (std::int64_t j = 0; j < width; ++j) {
        A running = job.seed;
        for (std::int64_t k = 0; k < job.chunks; ++k) {
          const A fold = c[k * Job::kBlock + j];
          c[k * Job::kBlock + j] = running;
          running = f(running, fold);
        }
      }
    }
  }
  for_units(groups * job.chunks, bytes, &Job::pass2, &job);
}

// The CPU backend's own checks: host views over host memory.
void check_host_view(const TensorView& v, const char* what) {
  if (v.device.kind != DeviceKind::host)
    throw Error(Errc::wrong_memory, std::string(what) + " is a CUDA device view; the CPU backend needs host memory");
  detail::check_host_input(v.data, v.numel() > 0 ? 1 : 0);
}

void run(ReduceOp op, const TensorView& in, int axis, const TensorView& out, const Scalar* init) {
  const ScanPlan plan = foldkit::detail::prepare_scan(op, in, axis, out, init);
  check_host_view(in, "input");
  check_host_view(out, "out");
  if (plan.family == ScanFamily::empty) return;
  if (plan.family == ScanFamily::rows_contiguous) {
    if (init != nullptr) exclusive_scan_blocked(op, in.dtype, in.data, plan.numel, out.data, plan.len, *init);
    else inclusive_scan_blocked(op, in.dtype, in.data, plan.numel, out.data, plan.len);
    return;
  }
  erased::visit_scan(op, in.dtype, init, [&](auto op_tag, auto tag, auto seed) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    using A = scan_accum_t<Op, T>;
    if constexpr (erased::is_inclusive_v<decltype(seed)>) {
      run_engine<Op, T, false>(plan, in, out, combine_t<Op, A>::identity());
    } else {
      run_engine<Op, T, true>(plan, in, out, static_cast<A>(seed));
    }
  });
}

}  // namespace

void inclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out) {
  run(op, in, axis, out, nullptr);
}

void exclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, Scalar init) {
  run(op, in, axis, out, &init);
}

}  // namespace foldkit::cpu
