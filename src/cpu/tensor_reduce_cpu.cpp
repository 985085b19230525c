// foldkit::cpu::reduce over tensors (foldkit/tensor_reduce.hpp): executes the backend-independent
// plan (foldkit/detail/reduce_plan.hpp) on the CPU backend's threads.
//
// Every output element's row (the elements it folds, in the plan's reduced order) is cut into
// chunks of kReduceChunk positions, exactly as the full-array reduction cuts an array; each chunk
// is reduced on its own and the chunk results are folded left to right, then finalized. A row
// that is one contiguous run uses the full-array reduction's own chunk kernel (reduce_chunk.hpp),
// so its value is bit for bit cpu::reduce<Op, T> over the run. Other rows walk their elements in
// row-major order of the canonical reduced dimensions with the op's combine functor.
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
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/erased_dispatch.hpp"
#include "cpu/reduce_chunk.hpp"
#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/tensor_reduce.hpp"

namespace foldkit::cpu {
namespace {

using foldkit::detail::PlanDim;
using foldkit::detail::ReducePlan;

// As reduce_cpu.cpp: below this much input, handing units to the pool costs what it saves.
constexpr std::int64_t kMinParallelBytes = std::int64_t{1} << 20;
// An outer-reduction unit sweeps up to this many bytes of accumulators (4096 f32 outputs): each
// position is then one contiguous read of up to a page, which the prefetchers follow. Measured on
// the 2-core VM, (4096, 4096) f32 summed over dim 0: 256 outputs a block 6.8 GB/s, 1024 15.2,
// 4096 27.0 (the whole-array sum 36). Narrower blocks only where the lines are too few to give
// every thread units (the width changes no bits: each output element folds alone).
constexpr std::int64_t kOuterBlockBytes = 16384;
constexpr std::int64_t kOuterMinWidth = 64;

struct RowOffsets {
  std::int64_t in = 0, out = 0, out2 = 0;
};

// Offsets of output element o, numbered row-major over the canonical kept dimensions.
RowOffsets row_offsets(const ReducePlan& p, std::int64_t o) {
  RowOffsets r;
  for (int d = p.kept_rank - 1; d >= 0; --d) {
    const PlanDim& k = p.kept[d];
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
  ReducedWalk(const ReducePlan& p, std::int64_t pos) : p_(p), inner_(p.reduced_rank - 1) {
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
  const ReducePlan& p_;
  int inner_;
  std::int64_t idx_[kMaxRank] = {};
  std::int64_t off_ = 0;
};

template <ReduceOp Op, class T>
struct TensorJob {
  using Tr = reduce_traits<Op, T>;
  using A = typename Tr::accum_type;

  const ReducePlan* plan;
  const T* in;
  char* out;   // result (arg ops: the index)
  char* out2;  // arg_reduce's values, or null
  std::int64_t row_len;        // plan->reduce_numel
  std::int64_t chunks_per_row;  // >= 1
  bool contiguous;             // every row is one run of stride 1 (or a single element)
  std::int64_t rows_per_unit;  // chunks_per_row == 1: whole rows per work unit
  std::vector<A> partial;      // chunks_per_row > 1: one per (row, chunk)
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
    const typename Tr::combine_type f{};
    A acc[kOuterMaxWidth];
    for (std::int64_t j = 0; j < width; ++j) acc[j] = Tr::identity();
    const std::int64_t begin = c * detail::kReduceChunk;
    const std::int64_t end = std::min(row_len, begin + detail::kReduceChunk);
    ReducedWalk walk(*plan, begin);
    for (std::int64_t pos = begin; pos < end; ++pos, walk.advance(1)) {
      const T* q = first_row + walk.offset();
#pragma omp simd
      for (std::int64_t j = 0; j < width; ++j) acc[j] = f(acc[j], Tr::from_element(q[j], pos));
    }
    // Output element first + j sits j steps along the innermost kept dimension.
    const PlanDim& line = plan->kept[plan->kept_rank - 1];
    for (std::int64_t j = 0; j < width; ++j) {
      if (chunks_per_row == 1)
        write({at.in + j, at.out + j * line.out_stride, at.out2 + j * line.out2_stride}, f(Tr::identity(), acc[j]));
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
    const std::int64_t begin = c * detail::kReduceChunk;
    const std::int64_t len = row_len - begin < detail::kReduceChunk ? row_len - begin : detail::kReduceChunk;
    if (contiguous) return detail::reduce_chunk<Op, T>(row + begin, len, begin);
    return strided_chunk(row, begin, begin + len);
  }

  // Positions [begin, end) of a strided row, in row-major order of the reduced dimensions; an arg
  // op's index is the position (the plan keeps its reduced dimensions in logical order).
  A strided_chunk(const T* row, std::int64_t begin, std::int64_t end) const {
    const typename Tr::combine_type f{};
    ReducedWalk walk(*plan, begin);
    const std::int64_t s = walk.inner_stride();
    A acc = Tr::identity();
    for (std::int64_t pos = begin; pos < end;) {
      const std::int64_t run = std::min(end - pos, walk.inner_left());
      const T* q = row + walk.offset();
      for (std::int64_t j = 0; j < run; ++j) acc = f(acc, Tr::from_element(q[j * s], pos + j));
      pos += run;
      walk.advance(run);
    }
    return acc;
  }

  // Finalizes and writes the output element at offsets r (arg ops: the index, and the value).
  void write(const RowOffsets& r, A acc) const {
    const auto result = Tr::finalize(acc, row_len);
    if constexpr (Tr::kUsesIndex) {
      std::memcpy(out + r.out * sizeof(std::int64_t), &result.index, sizeof(std::int64_t));
      if (out2 != nullptr) std::memcpy(out2 + r.out2 * sizeof(T), &result.value, sizeof(T));
    } else {
      std::memcpy(out + r.out * sizeof(result), &result, sizeof(result));
    }
  }

  // Unit u: rows [u * rows_per_unit, ...) when a row is one chunk, else the u-th (row, chunk).
  static void run_unit(void* ctx, std::int64_t u) {
    auto& job = *static_cast<TensorJob*>(ctx);
    const ReducePlan& p = *job.plan;
    if (job.chunks_per_row == 1) {
      const std::int64_t first = u * job.rows_per_unit;
      const std::int64_t last = std::min(p.out_numel, first + job.rows_per_unit);
      const typename Tr::combine_type f{};
      for (std::int64_t o = first; o < last; ++o) {
        const RowOffsets r = row_offsets(p, o);
        job.write(r, f(Tr::identity(), job.chunk(job.in + r.in, 0)));
      }
    } else {
      const std::int64_t o = u / job.chunks_per_row, c = u % job.chunks_per_row;
      job.partial[static_cast<std::size_t>(u)] = job.chunk(job.in + row_offsets(p, o).in, c);
    }
  }
};

// Calls run(ctx, u) for u in [0, units): on the pool when the call reads enough to pay for it.
void for_units(std::int64_t units, std::int64_t bytes_read, void (*run)(void*, std::int64_t), void* ctx) {
  if (units >= 2 && bytes_read >= kMinParallelBytes) {
    detail::parallel_for_chunks(units, run, ctx);
  } else {
    for (std::int64_t u = 0; u < units; ++u) run(ctx, u);
  }
}

// Folds each output element's chunk partials left to right and writes it.
template <class Job> void fold_partials(const Job& job) {
  const typename Job::Tr::combine_type f{};
  for (std::int64_t o = 0; o < job.plan->out_numel; ++o) {
    typename Job::A acc = Job::Tr::identity();
    for (std::int64_t c = 0; c < job.chunks_per_row; ++c)
      acc = f(acc, job.partial[static_cast<std::size_t>(o * job.chunks_per_row + c)]);
    job.write(row_offsets(*job.plan, o), acc);
  }
}

template <ReduceOp Op, class T>
void execute(const ReducePlan& p, const TensorView& in, const TensorView& out, const TensorView* values) {
  using Job = TensorJob<Op, T>;
  using Tr = typename Job::Tr;
  if (p.out_numel == 0) return;
  Job job{&p, static_cast<const T*>(in.data), static_cast<char*>(out.data),
          values != nullptr ? static_cast<char*>(values->data) : nullptr, p.reduce_numel, 1, false, 1, {}};
  if (p.reduce_numel == 0) {  // sum, prod, mean only (prepare_reduce threw for the others)
    for (std::int64_t o = 0; o < p.out_numel; ++o) job.write(row_offsets(p, o), Tr::identity());
    return;
  }
  job.contiguous = p.reduced_rank == 0 || (p.reduced_rank == 1 && p.reduced[0].in_stride == 1);
  job.chunks_per_row = (p.reduce_numel + detail::kReduceChunk - 1) / detail::kReduceChunk;
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
    if (job.chunks_per_row > 1) fold_partials(job);
    return;
  }
  if (job.chunks_per_row == 1) {
    // About one chunk's worth of elements per unit, whole rows only.
    job.rows_per_unit = std::max<std::int64_t>(1, detail::kReduceChunk / p.reduce_numel);
    for_units((p.out_numel + job.rows_per_unit - 1) / job.rows_per_unit, bytes, &Job::run_unit, &job);
    return;
  }
  const std::int64_t units = p.out_numel * job.chunks_per_row;
  job.partial.resize(static_cast<std::size_t>(units));
  for_units(units, bytes, &Job::run_unit, &job);
  fold_partials(job);
}

// The CPU backend's own checks: host views over host memory.
void check_host_view(const TensorView& v, const char* what) {
  if (v.device.kind != DeviceKind::host)
    throw Error(Errc::wrong_memory, std::string(what) + " is a CUDA device view; the CPU backend needs host memory");
  detail::check_host_input(v.data, v.numel() > 0 ? 1 : 0);
}

void run(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out,
         const TensorView* values) {
  const ReducePlan plan = foldkit::detail::prepare_reduce(op, in, axes, keepdims, out, values);
  check_host_view(in, "input");
  check_host_view(out, values != nullptr ? "indices" : "out");
  if (values != nullptr) check_host_view(*values, "values");
  visit_dtype(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    erased::visit_reduce_op(op, [&](auto op_tag) { execute<decltype(op_tag)::value, T>(plan, in, out, values); });
  });
}

}  // namespace

ReduceOutput reduce_output_shape(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims) {
  validate(in, "input");
  erased::check_enums(op, in.dtype);
  if ((op == ReduceOp::argmin || op == ReduceOp::argmax) && axes.size() > 1)
    throw Error(Errc::invalid_argument, std::string(op_name(op)) + " takes at most one axis");
  const ReducePlan p = foldkit::detail::plan_reduce(in, axes, keepdims);
  ReduceOutput r;
  r.dtype = reduce_result_dtype(op, in.dtype);
  r.rank = p.out_rank;
  for (int i = 0; i < p.out_rank; ++i) r.shape[i] = p.out_shape[i];
  return r;
}

void reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out) {
  run(op, in, axes, keepdims, out, nullptr);
}

void arg_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& indices,
                const TensorView& values) {
  if (op != ReduceOp::argmin && op != ReduceOp::argmax)
    throw Error(Errc::invalid_argument, std::string("arg_reduce takes argmin or argmax, not ") +
                                            (is_valid(op) ? op_name(op) : "an unknown op"));
  run(op, in, axes, keepdims, indices, &values);
}

}  // namespace foldkit::cpu
