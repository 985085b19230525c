// The CPU backend's engine of a tensor scan along one axis (foldkit/detail/scan_plan.hpp), shared
// by the built-in ops (src/cpu/tensor_scan_cpu.cpp) and the header-only user functors
// (foldkit/tensor_scan_custom.hpp): one walk, one chunking, so both give bits that depend only on
// the plan, never on the thread count. Internal (namespace detail), installed because the
// user-functor header needs it. ("rows-contiguous" plans do not come here: they are the core's
// blocked scans.)
//
// The engine runs over (lines x positions): the lines are numbered by the innermost canonical
// kept dimension (the "columns", width C) and the outer kept dimensions; the positions are the
// scanned axis (R of them). A work unit is (outer index, block of up to kColBlockBytes /
// sizeof(accumulator) columns, chunk of rows) and keeps one accumulator per column of its block:
//   - column sweeps (the columns are the more contiguous dimension, e.g. a row-major matrix
//     scanned along dim 0): row by row, out[r, block] = op(acc, in[r, block]), an inner loop over
//     contiguous columns that the compiler vectorises;
//   - line sweeps (the scanned axis is the more contiguous one): line by line along the axis.
// Both walk each line's positions in order, so they give the same bits.
// Few units (few, long lines): the rows are cut into fixed chunks; pass 1 folds each chunk but the
// last (per column, from the identity), a serial left fold gives each chunk its carry (the seed
// first: init for exclusive scans, the identity for inclusive ones), pass 2 rescans every chunk
// from its carry. The chunking is a function of the plan alone (never of the thread count), so
// the bits are too. An unchunked line is the plain left fold seed op x0 op x1 ...; a chunked one
// brackets each chunk's fold: F needs associativity, never commutativity.
// In place (out is the input view) is safe: every element is read before it is written, and no
// unit reads another unit's elements.
//
// A Fold (what is scanned) provides, all const and safe to call from several threads at once:
//   value_type (the input element), accum_type, result_type (the output element)
//   accum_type identity()                   op(identity, x) == x bit for bit
//   accum_type operator()(accum_type, accum_type)
//   static accum_type load(value_type)      static result_type store(accum_type)
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "foldkit/detail/scan_plan.hpp"
#include "foldkit/reduce.hpp"  // parallel_for_chunks
#include "foldkit/tensor.hpp"

namespace foldkit::cpu::detail {

// Below this much input, handing units to the pool costs what it saves (as reduce_cpu.cpp).
inline constexpr std::int64_t kScanMinParallelBytes = std::int64_t{1} << 20;
// A unit's accumulators: 16 KiB (4096 float columns), as the tensor reductions' outer sweep.
inline constexpr std::int64_t kScanColBlockBytes = 16384;
// With fewer units than this, the rows are cut into chunks (of at least kScanMinChunkRows rows)
// until there are about this many units. A constant, not the thread count: the bits depend on it.
inline constexpr std::int64_t kScanMinUnits = 32;
inline constexpr std::int64_t kScanMinChunkRows = 2048;

template <class Fold, bool kExclusive>
struct TensorScanJob {
  using T = typename Fold::value_type;
  using A = typename Fold::accum_type;
  using R = typename Fold::result_type;
  static constexpr std::int64_t kBlock = kScanColBlockBytes / static_cast<std::int64_t>(sizeof(A));

  // (A constructor, not aggregate initialisation: F need not be default-constructible nor
  // assignable, e.g. a lambda.)
  explicit TensorScanJob(const Fold& f) : fold(f) {}

  Fold fold;
  const T* in = nullptr;
  R* out = nullptr;
  A seed{};  // exclusive: init; inclusive: the identity
  // Geometry: R positions along the axis, C columns, the outer kept dimensions.
  std::int64_t rows = 0, rs_in = 0, rs_out = 0;
  std::int64_t cols = 0, cs_in = 0, cs_out = 0;
  int outer_rank = 0;
  std::int64_t outer_size[kMaxRank] = {}, outer_in[kMaxRank] = {}, outer_out[kMaxRank] = {};
  std::int64_t outer_count = 0;
  bool line_sweep = false;
  std::int64_t col_blocks = 0, chunks = 0, chunk_rows = 0;
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
    const Fold f = fold;  // a local copy: the stores below cannot alias it
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
          const A x = Fold::load(pi[r * rs_in]);  // read before the write: in place is allowed
          if constexpr (kWrite && kExclusive) po[r * rs_out] = Fold::store(a);
          a = f(a, x);
          if constexpr (kWrite && !kExclusive) po[r * rs_out] = Fold::store(a);
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
          const A x = Fold::load(pi[j]);
          if constexpr (kWrite && kExclusive) po[j] = Fold::store(acc[j]);
          acc[j] = f(acc[j], x);
          if constexpr (kWrite && !kExclusive) po[j] = Fold::store(acc[j]);
        }
      }
      return;
    }
    for (std::int64_t r = r0; r < r1; ++r) {
      const T* pi = pi0 + r * rs_in;
      R* po = po0 + r * rs_out;
      for (std::int64_t j = 0; j < width; ++j) {
        const A x = Fold::load(pi[j * cs_in]);
        if constexpr (kWrite && kExclusive) po[j * cs_out] = Fold::store(acc[j]);
        acc[j] = f(acc[j], x);
        if constexpr (kWrite && !kExclusive) po[j * cs_out] = Fold::store(acc[j]);
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
    auto& job = *static_cast<TensorScanJob*>(ctx);
    const std::int64_t g = u / (job.chunks - 1), k = u % (job.chunks - 1);
    std::int64_t o, j0, width, kk, r0, r1;
    job.unit_bounds(g * job.chunks + k, o, j0, width, kk, r0, r1);
    A acc[kBlock];
    for (std::int64_t j = 0; j < width; ++j) acc[j] = job.fold.identity();
    job.template sweep<false>(o, j0, width, r0, r1, acc);
    A* dst = job.carry.data() + (g * job.chunks + k) * kBlock;
    std::copy(acc, acc + width, dst);
  }

  static void pass2(void* ctx, std::int64_t u) {
    const auto& job = *static_cast<const TensorScanJob*>(ctx);
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

inline void for_scan_units(std::int64_t units, std::int64_t bytes, void (*run)(void*, std::int64_t), void* ctx) {
  if (units >= 2 && bytes >= kScanMinParallelBytes) {
    parallel_for_chunks(units, run, ctx);
  } else {
    for (std::int64_t u = 0; u < units; ++u) run(ctx, u);
  }
}

// Scans every line of a plan whose family is not rows-contiguous (nor empty), from `seed`.
template <bool kExclusive, class Fold>
void execute_tensor_scan(const foldkit::detail::ScanPlan& p, const void* in, void* out, const Fold& fold,
                         typename Fold::accum_type seed) {
  using Job = TensorScanJob<Fold, kExclusive>;
  using A = typename Job::A;
  Job job(fold);
  job.in = static_cast<const typename Job::T*>(in);
  job.out = static_cast<typename Job::R*>(out);
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
  if (groups < kScanMinUnits && job.rows >= 2 * kScanMinChunkRows)
    job.chunks = std::min((kScanMinUnits + groups - 1) / groups, job.rows / kScanMinChunkRows);
  job.chunk_rows = (job.rows + job.chunks - 1) / job.chunks;
  job.chunks = (job.rows + job.chunk_rows - 1) / job.chunk_rows;
  const std::int64_t bytes = p.numel * static_cast<std::int64_t>(sizeof(typename Job::T));
  if (job.chunks > 1) {
    job.carry.assign(static_cast<std::size_t>(groups * job.chunks * Job::kBlock), A{});
    for_scan_units(groups * (job.chunks - 1), bytes, &Job::pass1, &job);
    // Chunk k's carry = seed op fold(chunk 0) op ... op fold(chunk k - 1), left to right.
    const Fold f = fold;
    for (std::int64_t g = 0; g < groups; ++g) {
      const std::int64_t width = std::min(Job::kBlock, job.cols - (g % job.col_blocks) * Job::kBlock);
      A* c = job.carry.data() + g * job.chunks * Job::kBlock;
      for (std::int64_t j = 0; j < width; ++j) {
        A running = job.seed;
        for (std::int64_t k = 0; k < job.chunks; ++k) {
          const A chunk_fold = c[k * Job::kBlock + j];
          c[k * Job::kBlock + j] = running;
          running = f(running, chunk_fold);
        }
      }
    }
  }
  for_scan_units(groups * job.chunks, bytes, &Job::pass2, &job);
}

}  // namespace foldkit::cpu::detail
