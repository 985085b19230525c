// The CPU backend's executor of a tensor-reduction plan (foldkit/detail/reduce_plan.hpp), shared
// by the built-in ops (src/cpu/tensor_reduce_cpu.cpp) and the header-only user functors
// (foldkit/tensor_reduce_custom.hpp): one walk, one chunking, so both give bits that depend only
// on the plan, never on the thread count. Internal (namespace detail), installed because the
// user-functor header needs it.
//
// Every output element's row (the elements it folds, in the plan's reduced order) is cut into
// chunks of kReduceChunk positions, exactly as the full-array reduction cuts an array; each chunk
// is reduced on its own and the chunk results are folded left to right, then finalized. A row
// that is one contiguous run is handed to the fold's contiguous_chunk (the built-in ops: the
// full-array reduction's own chunk kernel, so the value is bit for bit cpu::reduce<Op, T> over
// the run). Other rows walk their elements in row-major order of the canonical reduced dimensions
// with the fold's combine.
// TODO(#22): long strided float sums accumulate serially within a chunk (error ~ chunk length);
// lanes or pairwise blocks as in reduce_chunk_fold would make them as accurate as the runs.
//
// Work units are fixed by the plan alone (groups of whole rows, or single chunks of long rows),
// so which thread computes a unit never changes a bit of the result.
//
// Outer reductions (the innermost kept dimension has input stride 1, e.g. a row-major matrix
// summed over dim 0): walking one output element's strided row touches a new cache line per
// element. Instead a unit sweeps a block of neighbouring output elements together (up to
// kOuterBlockBytes of accumulators), position by position: each position is one contiguous load
// of the block (vectorised, one accumulator per output element). Every output element still
// folds its positions in the same order, restarting at the same chunk boundaries, so the bits
// equal the row walk's.
//
// A Fold (what is reduced) provides, all const and safe to call from several threads at once:
//   value_type, accum_type
//   accum_type identity()
//   accum_type combine(accum_type, accum_type)
//   accum_type from_element(value_type v, std::int64_t pos)   pos: the position in the row
//   accum_type contiguous_chunk(const value_type* p, std::int64_t len, std::int64_t first_pos)
//              the fold of positions [first_pos, first_pos + len), stored contiguously from p
//   void write(char* out, char* out2, const RowOffsets& at, accum_type acc, std::int64_t row_len)
//              finalizes acc and stores it at element offset at.out of `out` (and at.out2 of
//              `out2`, arg_reduce's values, when not null)
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/reduce.hpp"  // parallel_for_chunks, kReduceChunk

// `#pragma omp simd` where the including file is compiled with OpenMP (the library is; a user's
// file may not be, and would warn about an unknown pragma).
#if defined(_OPENMP)
#define FOLDKIT_OMP_SIMD _Pragma("omp simd")
#else
#define FOLDKIT_OMP_SIMD
#endif

namespace foldkit::cpu::detail {

// As reduce_cpu.cpp: below this much input, handing units to the pool costs what it saves.
inline constexpr std::int64_t kTensorMinParallelBytes = std::int64_t{1} << 20;
// An outer-reduction unit sweeps up to this many bytes of accumulators (4096 f32 outputs): each
// position is then one contiguous read of up to a page, which the prefetchers follow. Measured on
// the 2-core VM, (4096, 4096) f32 summed over dim 0: 256 outputs a block 6.8 GB/s, 1024 15.2,
// 4096 27.0 (the whole-array sum 36). Narrower blocks only where the lines are too few to give
// every thread units (the width changes no bits: each output element folds alone).
inline constexpr std::int64_t kOuterBlockBytes = 16384;
inline constexpr std::int64_t kOuterMinWidth = 64;

struct RowOffsets {
  std::int64_t in = 0, out = 0, out2 = 0;
};

// Offsets of output element o, numbered row-major over the canonical kept dimensions.
inline RowOffsets row_offsets(const foldkit::detail::ReducePlan& p, std::int64_t o) {
  RowOffsets r;
  for (int d = p.kept_rank - 1; d >= 0; --d) {
    const foldkit::detail::PlanDim& k = p.kept[d];
    const std::int64_t i = o % k.size;
    o /= k.size;
    r.in += i * k.in_stride;
    r.out += i * k.out_stride;
    r.out2 += i * k.out2_stride;
  }
  return r;
}

// A position's offset within a row, walking the canonical reduced dimensions row-major: decoded
// once at the start of a chunk, then advanced with carries (no division per position).
class ReducedWalk {
 public:
  ReducedWalk(const foldkit::detail::ReducePlan& p, std::int64_t pos) : p_(p), inner_(p.reduced_rank - 1) {
    for (int d = inner_; d >= 0; --d) {
      idx_[d] = pos % p.reduced[d].size;
      pos /= p.reduced[d].size;
      off_ += idx_[d] * p.reduced[d].in_stride;
    }
  }
  std::int64_t offset() const { return off_; }
  std::int64_t inner_stride() const { return p_.reduced[inner_].in_stride; }
  // Positions left before the innermost dimension wraps.
  std::int64_t inner_left() const { return p_.reduced[inner_].size - idx_[inner_]; }
  // Moves `steps` (<= inner_left()) positions on, carrying into the outer dimensions.
  void advance(std::int64_t steps) {
    off_ += steps * p_.reduced[inner_].in_stride;
    idx_[inner_] += steps;
    for (int d = inner_; d > 0 && idx_[d] == p_.reduced[d].size; --d) {
      off_ -= idx_[d] * p_.reduced[d].in_stride;
      idx_[d] = 0;
      ++idx_[d - 1];
      off_ += p_.reduced[d - 1].in_stride;
    }
  }

 private:
  const foldkit::detail::ReducePlan& p_;
  int inner_;
  std::int64_t idx_[kMaxRank] = {};
  std::int64_t off_ = 0;
};

template <class Fold>
struct TensorJob {
  using T = typename Fold::value_type;
  using A = typename Fold::accum_type;

  explicit TensorJob(const Fold& f) : fold(f) {}

  Fold fold;
  const foldkit::detail::ReducePlan* plan = nullptr;
  const T* in = nullptr;
  char* out = nullptr;   // result (arg ops: the index)
  char* out2 = nullptr;  // arg_reduce's values, or null
  std::int64_t row_len = 0;         // plan->reduce_numel
  std::int64_t chunks_per_row = 1;  // >= 1
  bool contiguous = false;          // every row is one run of stride 1 (or a single element)
  std::int64_t rows_per_unit = 1;   // chunks_per_row == 1: whole rows per work unit
  std::vector<A> partial;           // chunks_per_row > 1: one per (row, chunk)
  // Outer form: the innermost kept dimension (input stride 1) is swept in blocks.
  static constexpr std::int64_t kOuterMaxWidth = kOuterBlockBytes / static_cast<std::int64_t>(sizeof(A));
  bool outer = false;
  std::int64_t inner_kept = 1;       // plan->kept[kept_rank - 1].size when outer
  std::int64_t outer_width = 1;      // output elements a unit sweeps (<= kOuterMaxWidth)
  std::int64_t blocks_per_line = 1;  // ceil(inner_kept / outer_width)

  // Outer unit: chunk c of the output elements [first, first + width) of one kept line (their
  // rows start at first_row, first_row + 1, ...; `at` are first's offsets). Writes the results
  // (one chunk per row) or the chunk partials.
  void outer_sweep(std::int64_t first, std::int64_t width, const RowOffsets& at, std::int64_t c) {
    const T* first_row = in + at.in;
    const Fold f = fold;  // a local copy: the vectorised loop reads nothing through `this`
    A acc[kOuterMaxWidth];
    for (std::int64_t j = 0; j < width; ++j) acc[j] = f.identity();
    const std::int64_t begin = c * kReduceChunk;
    const std::int64_t end = std::min(row_len, begin + kReduceChunk);
    ReducedWalk walk(*plan, begin);
    for (std::int64_t pos = begin; pos < end; ++pos, walk.advance(1)) {
      const T* q = first_row + walk.offset();
      FOLDKIT_OMP_SIMD
      for (std::int64_t j = 0; j < width; ++j) acc[j] = f.combine(acc[j], f.from_element(q[j], pos));
    }
    // Output element first + j sits j steps along the innermost kept dimension.
    const foldkit::detail::PlanDim& line = plan->kept[plan->kept_rank - 1];
    for (std::int64_t j = 0; j < width; ++j) {
      if (chunks_per_row == 1)
        f.write(out, out2, {at.in + j, at.out + j * line.out_stride, at.out2 + j * line.out2_stride}, f.combine(f.identity(), acc[j]),
                row_len);
      else
        partial[static_cast<std::size_t>((first + j) * chunks_per_row + c)] = acc[j];
    }
  }

  // Outer unit u: (line, block, chunk), chunk fastest.
  static void run_outer_unit(void* ctx, std::int64_t u) {
    auto& job = *static_cast<TensorJob*>(ctx);
    const std::int64_t c = u % job.chunks_per_row;
    const std::int64_t lb = u / job.chunks_per_row;
    const std::int64_t line = lb / job.blocks_per_line, b = lb % job.blocks_per_line;
    const std::int64_t first = line * job.inner_kept + b * job.outer_width;
    const std::int64_t width = std::min(job.outer_width, job.inner_kept - b * job.outer_width);
    job.outer_sweep(first, width, row_offsets(*job.plan, first), c);
  }

  // Chunk c of the row starting at `row`: positions [c * K, min(row_len, (c + 1) * K)).
  A chunk(const T* row, std::int64_t c) const {
    const std::int64_t begin = c * kReduceChunk;
    const std::int64_t len = row_len - begin < kReduceChunk ? row_len - begin : kReduceChunk;
    if (contiguous) return fold.contiguous_chunk(row + begin, len, begin);
    return strided_chunk(row, begin, begin + len);
  }

  // Positions [begin, end) of a strided row, in row-major order of the reduced dimensions; an arg
  // op's index is the position (the plan keeps its reduced dimensions in logical order).
  A strided_chunk(const T* row, std::int64_t begin, std::int64_t end) const {
    ReducedWalk walk(*plan, begin);
    const std::int64_t s = walk.inner_stride();
    A acc = fold.identity();
    for (std::int64_t pos = begin; pos < end;) {
      const std::int64_t run = std::min(end - pos, walk.inner_left());
      const T* q = row + walk.offset();
      for (std::int64_t j = 0; j < run; ++j) acc = fold.combine(acc, fold.from_element(q[j * s], pos + j));
      pos += run;
      walk.advance(run);
    }
    return acc;
  }

  void write(const RowOffsets& r, A acc) const { fold.write(out, out2, r, acc, row_len); }

  // Unit u: rows [u * rows_per_unit, ...) when a row is one chunk, else the u-th (row, chunk).
  static void run_unit(void* ctx, std::int64_t u) {
    auto& job = *static_cast<TensorJob*>(ctx);
    const foldkit::detail::ReducePlan& p = *job.plan;
    if (job.chunks_per_row == 1) {
      const std::int64_t first = u * job.rows_per_unit;
      const std::int64_t last = std::min(p.out_numel, first + job.rows_per_unit);
      for (std::int64_t o = first; o < last; ++o) {
        const RowOffsets r = row_offsets(p, o);
        job.write(r, job.fold.combine(job.fold.identity(), job.chunk(job.in + r.in, 0)));
      }
    } else {
      const std::int64_t o = u / job.chunks_per_row, c = u % job.chunks_per_row;
      job.partial[static_cast<std::size_t>(u)] = job.chunk(job.in + row_offsets(p, o).in, c);
    }
  }

  // Folds each output element's chunk partials left to right and writes it.
  void fold_partials() const {
    for (std::int64_t o = 0; o < plan->out_numel; ++o) {
      A acc = fold.identity();
      for (std::int64_t c = 0; c < chunks_per_row; ++c)
        acc = fold.combine(acc, partial[static_cast<std::size_t>(o * chunks_per_row + c)]);
      write(row_offsets(*plan, o), acc);
    }
  }
};

// Calls run(ctx, u) for u in [0, units): on the pool when the call reads enough to pay for it.
inline void for_units(std::int64_t units, std::int64_t bytes_read, void (*run)(void*, std::int64_t), void* ctx) {
  if (units >= 2 && bytes_read >= kTensorMinParallelBytes) {
    parallel_for_chunks(units, run, ctx);
  } else {
    for (std::int64_t u = 0; u < units; ++u) run(ctx, u);
  }
}

// Runs plan p over `in` into `out` (and `out2`, arg_reduce's values, or null) with `fold`. The
// views were checked (prepare_reduce or prepare_reduce_custom, and the host-memory checks).
template <class Fold>
void execute_tensor_reduce(const foldkit::detail::ReducePlan& p, const void* in, void* out, void* out2, const Fold& fold) {
  using Job = TensorJob<Fold>;
  using T = typename Job::T;
  if (p.out_numel == 0) return;
  Job job(fold);
  job.plan = &p;
  job.in = static_cast<const T*>(in);
  job.out = static_cast<char*>(out);
  job.out2 = static_cast<char*>(out2);
  job.row_len = p.reduce_numel;
  if (p.reduce_numel == 0) {  // ops with an identity only (the preparation threw for the others)
    for (std::int64_t o = 0; o < p.out_numel; ++o) job.write(row_offsets(p, o), fold.identity());
    return;
  }
  job.contiguous = p.reduced_rank == 0 || (p.reduced_rank == 1 && p.reduced[0].in_stride == 1);
  job.chunks_per_row = (p.reduce_numel + kReduceChunk - 1) / kReduceChunk;
  const std::int64_t bytes = p.out_numel * p.reduce_numel * static_cast<std::int64_t>(sizeof(T));
  if (!job.contiguous && p.kept_rank > 0 && p.kept[p.kept_rank - 1].in_stride == 1 && p.kept[p.kept_rank - 1].size > 1) {
    job.outer = true;
    job.inner_kept = p.kept[p.kept_rank - 1].size;
    const std::int64_t lines = p.out_numel / job.inner_kept;
    // Wide blocks, but a unit for every hardware thread when the lines allow it (4 a thread,
    // with narrower blocks, measured 3.6x slower on the 2-core VM).
    const std::int64_t want_units = std::max<std::int64_t>(1, std::thread::hardware_concurrency());
    const std::int64_t per_line = (want_units + lines * job.chunks_per_row - 1) / (lines * job.chunks_per_row);
    job.outer_width = std::clamp<std::int64_t>((job.inner_kept + per_line - 1) / per_line, kOuterMinWidth, Job::kOuterMaxWidth);
    job.blocks_per_line = (job.inner_kept + job.outer_width - 1) / job.outer_width;
    const std::int64_t units = lines * job.blocks_per_line * job.chunks_per_row;
    if (job.chunks_per_row > 1) job.partial.resize(static_cast<std::size_t>(p.out_numel * job.chunks_per_row));
    for_units(units, bytes, &Job::run_outer_unit, &job);
    if (job.chunks_per_row > 1) job.fold_partials();
    return;
  }
  if (job.chunks_per_row == 1) {
    // About one chunk's worth of elements per unit, whole rows only.
    job.rows_per_unit = std::max<std::int64_t>(1, kReduceChunk / p.reduce_numel);
    for_units((p.out_numel + job.rows_per_unit - 1) / job.rows_per_unit, bytes, &Job::run_unit, &job);
    return;
  }
  const std::int64_t units = p.out_numel * job.chunks_per_row;
  job.partial.resize(static_cast<std::size_t>(units));
  for_units(units, bytes, &Job::run_unit, &job);
  job.fold_partials();
}

}  // namespace foldkit::cpu::detail
