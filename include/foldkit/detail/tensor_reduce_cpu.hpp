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
// so which thread computes a unit never changes a bit of the result. Short contiguous rows may be
// folded several at a time by the fold's contiguous_rows (same bits as contiguous_chunk).
//
// Outer reductions (the innermost kept dimension has input stride 1, e.g. a row-major matrix
// summed over dim 0): walking one output element's strided row touches a new cache line per
// element. Instead a unit sweeps a block of neighbouring output elements together, row by row
// (or in tiles of rows, a strip of accumulators in registers), each row one contiguous load of
// the block. The row is cut into pieces: kReduceChunk positions for a user's functor (so its
// bits equal the row walk's, as tensor_reduce_custom.hpp documents), outer_piece_length(...)
// positions for the built-in ops (a function of the shape alone: shorter pieces let a thread
// stream whole rows of the input rather than a narrow column block of every row, and keep the
// serial float sums shorter). Each piece folds its positions in order from the identity; the
// pieces' results are folded left to right. Units are (line, column block, piece): the blocks
// change no bits (each output element folds alone), the pieces are fixed by the shape.
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
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>  // _mm_sfence
#endif

#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/reduce.hpp"  // parallel_for_chunks, kReduceChunk
#include "foldkit/tuning/cpu_tensor_reduce_tuning.hpp"

// `#pragma omp simd` where the including file is compiled with OpenMP (the library is; a user's
// file may not be, and would warn about an unknown pragma).
#if defined(_OPENMP)
#define FOLDKIT_OMP_SIMD _Pragma("omp simd")
#else
#define FOLDKIT_OMP_SIMD
#endif

namespace foldkit::cpu::detail {

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

// Optional parts of a Fold (detected, so a user's functor needs none of them):
//   static constexpr bool kPiecedOuter = true: outer rows are folded in pieces of
//       outer_piece_length(...) positions instead of kReduceChunk (the built-in ops; a user's
//       functor keeps the documented chunks);
//   void contiguous_rows(const value_type* first, std::int64_t stride, std::int64_t rows,
//                        std::int64_t len, accum_type* acc): acc[i] = contiguous_chunk(first + i *
//       stride, len, 0) for i < rows, len <= kReduceChunk, bit for bit (short rows, vectorised
//       across rows);
//   void outer_run(accum_type* acc, const value_type* first, std::int64_t stride, std::int64_t n,
//                  std::int64_t width, std::int64_t pos): for j < width, folds the column j of
//       the n rows first, first + stride, ... (positions pos, ..., pos + n - 1) into acc[j], the
//       rows in order, as the executor's own tiles would (vectorised by hand where the
//       compiler's vectorisation of the tiles was not reliable).
template <class F, class = void> struct pieced_outer : std::false_type {};
template <class F> struct pieced_outer<F, std::void_t<decltype(F::kPiecedOuter)>> : std::bool_constant<F::kPiecedOuter> {};
template <class F, class = void> struct has_contiguous_rows : std::false_type {};
template <class F>
struct has_contiguous_rows<F, std::void_t<decltype(std::declval<const F&>().contiguous_rows(
                                  static_cast<const typename F::value_type*>(nullptr), std::int64_t{}, std::int64_t{},
                                  std::int64_t{}, static_cast<typename F::accum_type*>(nullptr)))>> : std::true_type {};

//   void write_rows(char* out, std::int64_t at, const accum_type* acc, std::int64_t count,
//                   std::int64_t row_len, bool stream): write() of acc[i] at output element at + i
//       for i < count (a contiguous output, no values output), with non-temporal stores for its
//       whole 64-byte lines when `stream` (the executor fences them).
template <class F, class = void> struct has_write_rows : std::false_type {};
template <class F>
struct has_write_rows<F, std::void_t<decltype(std::declval<const F&>().write_rows(
                             static_cast<char*>(nullptr), std::int64_t{}, static_cast<const typename F::accum_type*>(nullptr),
                             std::int64_t{}, std::int64_t{}, bool{}))>> : std::true_type {};

template <class F, class = void> struct has_outer_run : std::false_type {};
template <class F>
struct has_outer_run<F, std::void_t<decltype(std::declval<const F&>().outer_run(
                            static_cast<typename F::accum_type*>(nullptr), static_cast<const typename F::value_type*>(nullptr),
                            std::int64_t{}, std::int64_t{}, std::int64_t{}, std::int64_t{}))>> : std::true_type {};

// The length of the pieces a built-in op folds an outer row in (positions; the pieces restart from
// the identity and their results are folded left to right): a power of two in [kOuterMinPiece,
// kReduceChunk], the longest that still gives about kOuterTargetPieces units counting the column
// blocks of at least kOuterMinBlockBytes the lines allow. A function of the shape only.
inline std::int64_t outer_piece_length(std::int64_t row_len, std::int64_t lines, std::int64_t line_bytes) {
  const std::int64_t blocks = lines * std::max<std::int64_t>(1, line_bytes / kOuterMinBlockBytes);
  const std::int64_t want = std::max<std::int64_t>(1, (kOuterTargetPieces + blocks - 1) / blocks);
  std::int64_t piece = kReduceChunk;
  while (piece > kOuterMinPiece && (row_len + piece - 1) / piece < want) piece /= 2;
  return piece;
}

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
  bool stream_rows = false;         // short_rows: write_rows with streaming stores
  std::vector<A> partial;           // chunks_per_row > 1: one per (row, chunk)
  std::unique_ptr<A[]> piece_partial;  // outer, pieces > 1: per (line, piece, column), not zeroed

  // ---- outer form: the innermost kept dimension (input stride 1) is swept in column blocks ----
  static constexpr int kOuterStrip = sizeof(A) >= 32 ? 4 : static_cast<int>(kOuterStripBytes / sizeof(A));
  std::int64_t inner_kept = 1;       // plan->kept[kept_rank - 1].size
  std::int64_t lines = 1;            // out_numel / inner_kept
  std::int64_t piece = kReduceChunk; // positions a piece folds
  std::int64_t pieces = 1;           // per row
  std::int64_t outer_width = 1;      // columns a unit sweeps
  std::int64_t blocks_per_line = 1;  // ceil(inner_kept / outer_width)

  // Outer unit u: (line, block, piece), piece fastest (a thread's run of units is a run of rows).
  static void run_outer_unit(void* ctx, std::int64_t u) {
    auto& job = *static_cast<TensorJob*>(ctx);
    const std::int64_t pc = u % job.pieces;
    const std::int64_t lb = u / job.pieces;
    const std::int64_t line = lb / job.blocks_per_line, b = lb % job.blocks_per_line;
    const std::int64_t col = b * job.outer_width;
    job.outer_piece(line, col, std::min(job.outer_width, job.inner_kept - col), pc);
  }

  // Piece pc of the output elements [col, col + width) of kept line `line`: folds its positions
  // into the piece's partials (several pieces per row), or into this thread's scratch
  // accumulators and then writes the results (one piece per row).
  void outer_piece(std::int64_t line, std::int64_t col, std::int64_t width, std::int64_t pc) {
    const std::int64_t first = line * inner_kept + col;
    const RowOffsets at = row_offsets(*plan, first);
    const Fold f = fold;
    A* acc = pieces > 1 ? piece_partial.get() + (line * pieces + pc) * inner_kept + col : scratch(width);
    for (std::int64_t j = 0; j < width; ++j) acc[j] = f.identity();
    const std::int64_t begin = pc * piece, end = std::min(row_len, begin + piece);
    ReducedWalk walk(*plan, begin);
    if constexpr (has_outer_run<Fold>::value) {
      // Runs of equally spaced rows (along the innermost reduced dimension).
      for (std::int64_t pos = begin; pos < end;) {
        const std::int64_t n = std::min(end - pos, walk.inner_left());
        f.outer_run(acc, in + at.in + walk.offset(), walk.inner_stride(), n, width, pos);
        pos += n;
        walk.advance(n);
      }
      if (pieces == 1) write_line(at, acc, width);
      return;
    }
    const T* rows[kOuterTileRows];
    const int tile = width * static_cast<std::int64_t>(sizeof(A)) > kOuterTileMinBytes ? kOuterTileRows : 1;
    for (std::int64_t pos = begin; pos < end;) {
      const int n = static_cast<int>(std::min<std::int64_t>(tile, end - pos));
      for (int r = 0; r < n; ++r, walk.advance(1)) rows[r] = in + at.in + walk.offset();
      outer_tile(f, acc, rows, n, width, pos);
      pos += n;
    }
    if (pieces == 1) write_line(at, acc, width);
  }

  // Writes acc[j] (combined into the identity, as every fold starts) for output elements
  // first + j, j < width, of one kept line (`at`: first's offsets).
  void write_line(const RowOffsets& at, const A* acc, std::int64_t width) const {
    const foldkit::detail::PlanDim& line = plan->kept[plan->kept_rank - 1];
    for (std::int64_t j = 0; j < width; ++j)
      fold.write(out, out2, {at.in + j, at.out + j * line.out_stride, at.out2 + j * line.out2_stride},
                 fold.combine(fold.identity(), acc[j]), row_len);
  }

  // Folds rows[0, n) (positions pos, pos + 1, ...) into acc[0, width), in strips of neighbouring
  // accumulators that stay in registers while the n rows pass: acc travels through the cache once
  // per tile, not once per row. Each accumulator still takes the rows in order.
  static void outer_tile(const Fold& f, A* acc, const T* const* rows, int n, std::int64_t width, std::int64_t pos) {
    std::int64_t j = 0;
    for (; j + kOuterStrip <= width; j += kOuterStrip) outer_strip<kOuterStrip>(f, acc + j, rows, n, j, pos);
    outer_tail<kOuterStrip / 2>(f, acc, rows, n, j, width, pos);
  }

  // The last width - j (< 2 S) accumulators: a strip of S, then of S / 2, ..., then one by one.
  template <int S>
  static void outer_tail(const Fold& f, A* acc, const T* const* rows, int n, std::int64_t j, std::int64_t width,
                         std::int64_t pos) {
    if constexpr (S >= 1) {
      if (j + S <= width) {
        outer_strip<S>(f, acc + j, rows, n, j, pos);
        j += S;
      }
      outer_tail<S / 2>(f, acc, rows, n, j, width, pos);
    }
  }

  template <int S>
  static void outer_strip(const Fold& f, A* acc, const T* const* rows, int n, std::int64_t j, std::int64_t pos) {
    A a[S];
    for (int s = 0; s < S; ++s) a[s] = acc[s];
    for (int r = 0; r < n; ++r) {
      const T* q = rows[r] + j;
#pragma GCC unroll 64
      for (int s = 0; s < S; ++s) a[s] = f.combine(a[s], f.from_element(q[s], pos + r));
    }
    for (int s = 0; s < S; ++s) acc[s] = a[s];
  }

  // Per-thread accumulators for one unit (a unit never spans two calls on one thread).
  static A* scratch(std::int64_t width) {
    static thread_local std::vector<A> buf;
    if (static_cast<std::int64_t>(buf.size()) < width) buf.resize(static_cast<std::size_t>(width));
    return buf.data();
  }

  // Outer combine unit u: the output elements [u * W, ...) of the flattened (line, column) space
  // (W = outer_width, blocks never cross a line): folds their piece partials left to right.
  static void run_outer_combine(void* ctx, std::int64_t u) {
    auto& job = *static_cast<TensorJob*>(ctx);
    const std::int64_t line = u / job.blocks_per_line, col = (u % job.blocks_per_line) * job.outer_width;
    const std::int64_t width = std::min(job.outer_width, job.inner_kept - col);
    const Fold f = job.fold;
    A* acc = scratch(width);
    for (std::int64_t j = 0; j < width; ++j) acc[j] = f.identity();
    const A* part = job.piece_partial.get() + line * job.pieces * job.inner_kept + col;
    for (std::int64_t pc = 0; pc < job.pieces; ++pc, part += job.inner_kept) {
      FOLDKIT_OMP_SIMD
      for (std::int64_t j = 0; j < width; ++j) acc[j] = f.combine(acc[j], part[j]);
    }
    // The pieces' fold already started from the identity: write as is.
    const RowOffsets at = row_offsets(*job.plan, line * job.inner_kept + col);
    const foldkit::detail::PlanDim& k = job.plan->kept[job.plan->kept_rank - 1];
    for (std::int64_t j = 0; j < width; ++j)
      f.write(job.out, job.out2, {at.in + j, at.out + j * k.out_stride, at.out2 + j * k.out2_stride}, acc[j], job.row_len);
  }

  // Plans and runs the outer form (pieces, column blocks, units), then combines the pieces.
  void run_outer(std::int64_t bytes) {
    const foldkit::detail::ReducePlan& p = *plan;
    inner_kept = p.kept[p.kept_rank - 1].size;
    lines = p.out_numel / inner_kept;
    const std::int64_t line_bytes = inner_kept * static_cast<std::int64_t>(sizeof(T));
    piece = pieced_outer<Fold>::value ? outer_piece_length(row_len, lines, line_bytes) : kReduceChunk;
    pieces = (row_len + piece - 1) / piece;
    // Column blocks (no bits depend on them): enough units for every hardware thread, blocks of
    // at least kOuterMinBlockBytes of a row where the columns allow, accumulators within L2.
    const std::int64_t threads = std::max<std::int64_t>(1, std::thread::hardware_concurrency());
    const std::int64_t want = kOuterUnitsPerThread * threads;
    const std::int64_t max_blocks = std::max<std::int64_t>(1, line_bytes / kOuterMinBlockBytes);
    std::int64_t blocks = std::clamp<std::int64_t>((want + lines * pieces - 1) / (lines * pieces), 1, max_blocks);
    blocks = std::max(blocks, (inner_kept * static_cast<std::int64_t>(sizeof(A)) + kOuterMaxBlockBytes - 1) / kOuterMaxBlockBytes);
    outer_width = (inner_kept + blocks - 1) / blocks;
    outer_width = std::min(inner_kept, (outer_width + kOuterStrip - 1) / kOuterStrip * kOuterStrip);
    blocks_per_line = (inner_kept + outer_width - 1) / outer_width;
    if (pieces > 1) piece_partial.reset(new A[static_cast<std::size_t>(p.out_numel * pieces)]);
    for_units(lines * blocks_per_line * pieces, bytes, &run_outer_unit, this);
    if (pieces == 1) return;
    // Combine in blocks of columns (at most a scratch's worth each).
    outer_width = std::min<std::int64_t>(inner_kept, 4096);
    blocks_per_line = (inner_kept + outer_width - 1) / outer_width;
    const std::int64_t partial_bytes = p.out_numel * pieces * static_cast<std::int64_t>(sizeof(A));
    for_units(lines * blocks_per_line, partial_bytes, &run_outer_combine, this);
  }

  // ---- rows: each output element's row folded on its own ---------------------------------------
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

  // Whole rows [first, last), one chunk each, contiguous, through the fold's contiguous_rows: in
  // runs along the innermost kept dimension (one stride apart), kRowsBatch rows at a time.
  void short_rows(std::int64_t first, std::int64_t last) const {
    constexpr std::int64_t kRowsBatch = 256;
    A acc[kRowsBatch];
    // Locals: the writes go through char*, which may alias any member (the compiler reloaded
    // them per row: 40 % of (2^24, 4)'s time in the write loop).
    const Fold f = fold;
    char* const o1 = out;
    char* const o2 = out2;
    const std::int64_t n = row_len;
    const foldkit::detail::PlanDim k = plan->kept[plan->kept_rank - 1];
    for (std::int64_t o = first; o < last;) {
      const RowOffsets at = row_offsets(*plan, o);
      const std::int64_t run = std::min({last - o, k.size - o % k.size, kRowsBatch});
      f.contiguous_rows(in + at.in, k.in_stride, run, n, acc);
      o += run;
      if constexpr (has_write_rows<Fold>::value) {
        if (k.out_stride == 1 && o2 == nullptr) {
          f.write_rows(o1, at.out, acc, run, n, stream_rows);
          continue;
        }
      }
      for (std::int64_t i = 0; i < run; ++i)
        f.write(o1, o2, {at.in + i * k.in_stride, at.out + i * k.out_stride, at.out2 + i * k.out2_stride},
                f.combine(f.identity(), acc[i]), n);
    }
#if defined(__SSE2__)
    if (stream_rows) _mm_sfence();  // streaming stores are weakly ordered: done before the unit ends
#endif
  }

  // Unit u: rows [u * rows_per_unit, ...) when a row is one chunk, else the u-th (row, chunk).
  static void run_unit(void* ctx, std::int64_t u) {
    auto& job = *static_cast<TensorJob*>(ctx);
    const foldkit::detail::ReducePlan& p = *job.plan;
    if (job.chunks_per_row == 1) {
      const std::int64_t first = u * job.rows_per_unit;
      const std::int64_t last = std::min(p.out_numel, first + job.rows_per_unit);
      if constexpr (has_contiguous_rows<Fold>::value) {
        if (job.contiguous && p.reduced_rank == 1 && p.kept_rank > 0) return job.short_rows(first, last);
      }
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

  // Calls run(ctx, u) for u in [0, units): on the pool when the call reads enough to pay for it.
  static void for_units(std::int64_t units, std::int64_t bytes_read, void (*run)(void*, std::int64_t), void* ctx) {
    if (units >= 2 && bytes_read >= kTensorMinParallelBytes) {
      parallel_for_chunks(units, run, ctx);
    } else {
      for (std::int64_t u = 0; u < units; ++u) run(ctx, u);
    }
  }
};

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
    job.run_outer(bytes);
    return;
  }
  if (job.chunks_per_row == 1) {
    // About one chunk's worth of elements per unit, whole rows only.
    job.rows_per_unit = std::max<std::int64_t>(1, kReduceChunk / p.reduce_numel);
    job.stream_rows = out2 == nullptr && p.out_numel * static_cast<std::int64_t>(sizeof(typename Job::A)) >= kRowsStreamingOutMinBytes;
    Job::for_units((p.out_numel + job.rows_per_unit - 1) / job.rows_per_unit, bytes, &Job::run_unit, &job);
    return;
  }
  const std::int64_t units = p.out_numel * job.chunks_per_row;
  job.partial.resize(static_cast<std::size_t>(units));
  Job::for_units(units, bytes, &Job::run_unit, &job);
  job.fold_partials();
}

}  // namespace foldkit::cpu::detail
