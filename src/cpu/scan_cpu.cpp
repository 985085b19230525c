// foldkit::cpu scans (foldkit/scan.hpp): argument checks, the round driver, and the explicit
// instantiations. The per-chunk kernels, the algorithm and the tuning constants are in
// scan_chunk.hpp.
//
// Deterministic: the chunks, the per-chunk kernels and the left-to-right fold of chunk
// summaries are fixed; threads only decide who computes a chunk, and the rounds only when. The
// serial path (small inputs, one thread, a busy machine, or called from inside a parallel
// region) is the same rounds planned for one thread, so every thread count gives the same bits.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/parallel.hpp"
#include "cpu/scan_chunk.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/scan.hpp"

namespace foldkit::cpu {
namespace detail {

// ---- argument checks -------------------------------------------------------------------------

// Declared in foldkit/scan.hpp: the header-only user-operator scans check their heads here too.
void check_scan_block_length(std::int64_t block_length) {
  if (block_length < 1)
    throw Error(Errc::invalid_argument, "block_length = " + std::to_string(block_length) + " is not positive");
}

void check_scan_offsets(const std::int64_t* offsets, std::int64_t num_segments, std::int64_t n) {
  if (num_segments < 0)
    throw Error(Errc::invalid_argument, "num_segments = " + std::to_string(num_segments) + " is negative");
  if (num_segments == 0 && n != 0) throw Error(Errc::invalid_argument, "no segments, but n = " + std::to_string(n));
  // offsets has num_segments + 1 >= 1 entries: checked whatever n is (the validation rule).
  if (offsets == nullptr)
    throw Error(Errc::invalid_argument, "offsets is null but num_segments = " + std::to_string(num_segments));
  check_host_input(offsets, 1);  // wrong_memory for device pointers (the probe needs one element)
  if (offsets[0] != 0)
    throw Error(Errc::invalid_argument, "offsets[0] = " + std::to_string(offsets[0]) + ", must be 0");
  for (std::int64_t s = 0; s < num_segments; ++s)
    if (offsets[s + 1] < offsets[s])
      throw Error(Errc::invalid_argument, "offsets decrease: offsets[" + std::to_string(s) + "] = " +
                                              std::to_string(offsets[s]) + " > offsets[" + std::to_string(s + 1) +
                                              "] = " + std::to_string(offsets[s + 1]));
  if (offsets[num_segments] != n)
    throw Error(Errc::invalid_argument, "offsets[num_segments] = " + std::to_string(offsets[num_segments]) +
                                            ", must equal n = " + std::to_string(n));
}

namespace {

void check_scan_op(ReduceOp op) {
  if (!is_scan_op(op))
    throw Error(Errc::unsupported, std::string(op_name(op)) + " (ReduceOp " + std::to_string(static_cast<int>(op)) +
                                       ") is not a scan op; scans support sum, prod, min and max");
}

// in/out: n elements of in_size and out_size bytes. out == in is allowed only when the types
// are equal (same_type); any other overlap is an error.
void check_scan_io(const void* in, std::size_t in_size, const void* out, std::size_t out_size, std::int64_t n,
                   bool same_type) {
  if (n < 0) throw Error(Errc::invalid_argument, "n = " + std::to_string(n) + " is negative");
  if (n == 0) return;  // nothing is read or written: any pointers will do
  if (in == nullptr) throw Error(Errc::invalid_argument, "in is null but n = " + std::to_string(n));
  if (out == nullptr) throw Error(Errc::invalid_argument, "out is null but n = " + std::to_string(n));
  check_host_input(in, n);   // wrong_memory for device pointers
  check_host_input(out, n);
  if (in == out) {
    if (!same_type)
      throw Error(Errc::invalid_argument,
                  "in place (out == in) needs the output type to equal the input type; this scan widens " +
                      std::to_string(in_size) + "-byte elements to " + std::to_string(out_size) + " bytes");
    return;
  }
  // Unsigned arithmetic: no overflow UB even for absurd n.
  const auto a = reinterpret_cast<std::uintptr_t>(in), b = reinterpret_cast<std::uintptr_t>(out);
  const std::uintptr_t a_end = a + static_cast<std::uintptr_t>(n) * in_size;
  const std::uintptr_t b_end = b + static_cast<std::uintptr_t>(n) * out_size;
  if (a < b_end && b < a_end)
    throw Error(Errc::invalid_argument, "out overlaps in without being exactly in place (out == in)");
}

template <ReduceOp Op, class T>
void check_io(const T* in, std::int64_t n, const scan_result_t<Op, T>* out) {
  using R = scan_result_t<Op, T>;
  check_scan_io(in, sizeof(T), out, sizeof(R), n, std::is_same_v<R, T>);
}

// ---- the driver ------------------------------------------------------------------------------

// One scan call: the chunk-level steps of scan_chunk.hpp and the rounds that schedule them.
template <ReduceOp Op, class T, bool kInclusive, class Heads>
class RoundScan {
 public:
  using St = ScanTraits<Op, T>;
  using A = typename St::A;
  using R = scan_result_t<Op, T>;
  using Summary = ChunkSummary<A>;
  static constexpr std::int64_t kPiece = St::kPieceChunks;  // chunks per piece (one thread's share of a round)

  RoundScan(const T* in, std::int64_t n, R* out, A seed, const Heads& heads)
      : in_(in), n_(n), out_(out), seed_(seed), heads_(heads), chunks_((n + kScanChunk - 1) / kScanChunk),
        stream_(use_streaming_stores(out, n)) {}

  std::int64_t chunks() const { return chunks_; }

  // The rounds, planned for `team` threads: round r covers chunks [lo, hi), lo = r * team * kPiece,
  // split into `team` consecutive pieces (kPiece chunks each but in the last round, which is
  // split evenly). Piece g (round g / team) is one work item (parallel.hpp); whoever claims it
  //   1. summarizes it into the summaries of its chunks; then, once every piece of the round is
  //      summarized and the carry into the round is known (held up only by threads that claimed
  //      pieces, never by threads that have not come yet: a participant claims the round's
  //      unclaimed pieces itself before it waits),
  //   2. folds the round's summaries up to its piece from the carry into the round (the first to
  //      get there also folds the rest of the round and publishes the carry into the next one),
  //   3. rescans its piece, still in its cache.
  // The pieces and the fold order are fixed by the chunks; threads decide only who runs a piece.
  // Serially (a team of one, or every piece claimed by one thread) this is a round per piece.
  void run(int threads) const {
    ThreadLease lease(threads);
    const int team = lease.threads();  // 1 when the pool is taken: the rounds suit who runs them
    const std::int64_t per_round = team * kPiece;
    const std::int64_t rounds = (chunks_ + per_round - 1) / per_round;
    std::vector<Summary> summaries(static_cast<std::size_t>(chunks_));
    std::unique_ptr<Round[]> round(new Round[static_cast<std::size_t>(rounds + 1)]());
    round[0].carry_in = seed_;
    round[0].carry_state.store(kCarryReady, std::memory_order_relaxed);
    Shared s{this, team, summaries.data(), round.get(), {}};
    lease.run(rounds * team, true, &participate, &s);  // in order: see participate
  }

  // The threads a scan of this size may use.
  int threads_wanted() const { return pick_threads(chunks_); }

 private:
  static constexpr std::uint32_t kCarryReady = 2;  // carry_state: 0 unknown, 1 being written, 2 ready

  struct Round {
    std::atomic<std::uint32_t> summarized;   // pieces of the round summarized
    std::atomic<std::uint32_t> carry_state;  // of carry_in
    A carry_in;                              // the carry into the round's first chunk
  };
  struct Shared {
    const RoundScan* scan;
    int team;
    Summary* summaries;  // [chunks]
    Round* round;        // [rounds + 1]
    Progress progress;   // advanced when a round is summarized or a carry published
  };

  std::int64_t piece_begin(const Shared& s, std::int64_t g) const {
    const std::int64_t per_round = s.team * kPiece, r = g / s.team, j = g % s.team;
    const std::int64_t lo = r * per_round, hi = std::min(chunks_, lo + per_round);
    return lo + (hi - lo) * j / s.team;
  }
  std::int64_t piece_end(const Shared& s, std::int64_t g) const {
    const std::int64_t per_round = s.team * kPiece, r = g / s.team;
    const std::int64_t lo = r * per_round, hi = std::min(chunks_, lo + per_round);
    return lo + (hi - lo) * (g % s.team + 1) / s.team;
  }

  static void participate(void* p, WorkItems& work) {
    Shared& s = *static_cast<Shared*>(p);  // read only once an item is claimed
    std::vector<std::int64_t> held;        // pieces of one round claimed and summarized, not finished
    std::int64_t round = -1;
    // Claims come in index order, so every piece below one claimed is claimed too, by a thread
    // that is running: a wait for a round's summaries or carry ends without help from threads
    // that have not come.
    WorkItems::Claimer me;
    for (std::int64_t g = work.claim(me); g >= 0; g = work.claim(me)) {
      const std::int64_t r = g / s.team;
      if (!held.empty() && r != round) {
        s.scan->finish_round(s, round, held, work);
        held.clear();
      }
      round = r;
      const RoundScan& scan = *s.scan;
      for (std::int64_t c = scan.piece_begin(s, g), c1 = scan.piece_end(s, g); c < c1; ++c)
        s.summaries[c] = scan.summarize(c);
      held.push_back(g);
      if (s.round[r].summarized.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<std::uint32_t>(s.team))
        s.progress.advance();
      if (work.unclaimed_below((r + 1) * s.team)) continue;  // a piece of this round nobody took yet
      s.scan->finish_round(s, round, held, work);
      held.clear();
    }
    if (!held.empty()) s.scan->finish_round(s, round, held, work);
  }

  // Steps 2 and 3 for the pieces `held` of round r; finishes them.
  void finish_round(Shared& s, std::int64_t r, const std::vector<std::int64_t>& held, WorkItems& work) const {
    Round& rd = s.round[r];
    const auto ready = [&] {
      return rd.summarized.load(std::memory_order_acquire) == static_cast<std::uint32_t>(s.team) &&
             rd.carry_state.load(std::memory_order_acquire) == kCarryReady;
    };
    while (!ready()) {
      const std::uint32_t seen = s.progress.value();
      if (ready()) break;
      s.progress.wait(seen, wait_spin_ns());
    }
    const std::int64_t lo = piece_begin(s, r * s.team), hi = piece_end(s, r * s.team + s.team - 1);
    Round& next = s.round[r + 1];
    std::uint32_t unknown = 0;
    if (next.carry_state.load(std::memory_order_relaxed) == 0 &&
        next.carry_state.compare_exchange_strong(unknown, 1, std::memory_order_acq_rel)) {
      next.carry_in = fold(s.summaries, lo, hi, rd.carry_in, 0, 0, nullptr);
      next.carry_state.store(kCarryReady, std::memory_order_release);
      s.progress.advance();
    }
    for (const std::int64_t g : held) {
      const std::int64_t c0 = piece_begin(s, g), c1 = piece_end(s, g);
      A carries[kPiece];  // carries[c - c0]: into chunk c of the piece
      fold(s.summaries, lo, c1, rd.carry_in, c0, c1, carries);
      rescan(c0, c1, s.summaries + c0, carries);
    }
    if (stream_) streaming_store_fence();  // before the caller may return and read the output
    work.finish(static_cast<std::int64_t>(held.size()));
  }

 private:
  static bool use_streaming_stores(const R* out, std::int64_t n) {
    return kHaveStreamingStores && n * static_cast<std::int64_t>(sizeof(R)) >= kStreamingStoreMinBytes &&
           reinterpret_cast<std::uintptr_t>(out) % sizeof(R) == 0;
  }

  std::int64_t begin_of(std::int64_t c) const { return c * kScanChunk; }
  std::int64_t end_of(std::int64_t c) const { return std::min(n_, c * kScanChunk + kScanChunk); }

  Summary summarize(std::int64_t c) const {
    return summarize_chunk<Op, T>(in_, begin_of(c), end_of(c), seed_, heads_);
  }

  // carry[c + 1] = restarts(c) ? value(c) : carry[c] (+) value(c) over [lo, hi), from `carry`
  // into lo (summaries[c]: chunk c); stores the carries into [c0, c1) and returns the carry out
  // of hi - 1.
  A fold(const Summary* summaries, std::int64_t lo, std::int64_t hi, A carry, std::int64_t c0, std::int64_t c1,
         A* carries) const {
    const typename St::F f{};
    for (std::int64_t c = lo; c < hi; ++c) {
      if (c >= c0 && c < c1) carries[c - c0] = carry;
      const Summary& s = summaries[c];
      carry = s.restarts ? s.value : f(carry, s.value);
    }
    return carry;
  }

  // Chunks [c0, c1) from their carries: runs of St::kChains whole chunks without a head go
  // through scan_whole_chunks (side by side, streamed when stream_), any other chunk alone.
  void rescan(std::int64_t c0, std::int64_t c1, const Summary* summaries, const A* carries) const {
    constexpr int K = St::kChains;
    for (std::int64_t c = c0; c < c1;) {
      // (One chain without streaming is what scan_chunk does, minus the line buffer.)
      if ((K > 1 || stream_) && whole_and_head_free(c, c1, K, summaries + (c - c0))) {
        A acc[K];
        for (int k = 0; k < K; ++k) acc[k] = carries[c - c0 + k];
        scan_whole_chunks<Op, T, kInclusive, K>(in_, out_, begin_of(c), acc, stream_);
        c += K;
      } else {
        scan_chunk<Op, T, kInclusive>(in_, out_, begin_of(c), end_of(c), carries[c - c0], seed_, heads_);
        ++c;
      }
    }
  }

  // Whether chunks [c, c + count) are all in [c, c1), kScanChunk long and free of heads.
  bool whole_and_head_free(std::int64_t c, std::int64_t c1, int count, const Summary* s) const {
    if (c + count > c1 || (c + count) * kScanChunk > n_) return false;
    for (int k = 0; k < count; ++k)
      if (s[k].restarts) return false;  // the chunk holds a head
    return true;
  }

  const T* in_;
  std::int64_t n_;
  R* out_;
  A seed_;
  Heads heads_;
  std::int64_t chunks_;
  bool stream_;
};

template <ReduceOp Op, class T, bool kInclusive, class Heads>
void run_scan(const T* in, std::int64_t n, scan_result_t<Op, T>* out, scan_accum_t<Op, T> seed, const Heads& heads) {
  using Scan = RoundScan<Op, T, kInclusive, Heads>;
  if (n == 0) return;
  const Scan scan(in, n, out, seed, heads);
  if (scan.chunks() == 1) {  // chunk 0 starts at a head: no carry, no summary needed
    scan_chunk<Op, T, kInclusive>(in, out, 0, n, seed, seed, heads);
    return;
  }
  const bool parallel = n * static_cast<std::int64_t>(sizeof(T)) >= kMinParallelScanBytes;
  scan.run(parallel ? scan.threads_wanted() : 1);
}

template <ReduceOp Op, class T> scan_accum_t<Op, T> identity_seed() { return ScanTraits<Op, T>::F::identity(); }
template <ReduceOp Op, class T> scan_accum_t<Op, T> init_seed(scan_result_t<Op, T> init) {
  return ScanTraits<Op, T>::accum(init);
}

}  // namespace
}  // namespace detail

// Every entry point checks the op at run time (an op that is not a scan op is Errc::unsupported
// even when reached through an instantiation for it), then its arguments, then scans.

template <ReduceOp Op, class T>
void inclusive_scan(const T* in, std::int64_t n, scan_result_t<Op, T>* out) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::run_scan<Op, T, true>(in, n, out, detail::identity_seed<Op, T>(), detail::WholeArray{});
  }
}

template <ReduceOp Op, class T>
void exclusive_scan(const T* in, std::int64_t n, scan_result_t<Op, T>* out, scan_result_t<Op, T> init) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::run_scan<Op, T, false>(in, n, out, detail::init_seed<Op, T>(init), detail::WholeArray{});
  }
}

template <ReduceOp Op, class T>
void inclusive_scan_blocked(const T* in, std::int64_t n, scan_result_t<Op, T>* out, std::int64_t block_length) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::check_scan_block_length(block_length);
    detail::run_scan<Op, T, true>(in, n, out, detail::identity_seed<Op, T>(), detail::Blocks{block_length});
  }
}

template <ReduceOp Op, class T>
void exclusive_scan_blocked(const T* in, std::int64_t n, scan_result_t<Op, T>* out, std::int64_t block_length,
                            scan_result_t<Op, T> init) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::check_scan_block_length(block_length);
    detail::run_scan<Op, T, false>(in, n, out, detail::init_seed<Op, T>(init), detail::Blocks{block_length});
  }
}

template <ReduceOp Op, class T>
void inclusive_scan_segmented(const T* in, std::int64_t n, scan_result_t<Op, T>* out, const std::int64_t* offsets,
                              std::int64_t num_segments) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::check_scan_offsets(offsets, num_segments, n);
    detail::run_scan<Op, T, true>(in, n, out, detail::identity_seed<Op, T>(),
                                  detail::Segments{offsets, num_segments});
  }
}

template <ReduceOp Op, class T>
void exclusive_scan_segmented(const T* in, std::int64_t n, scan_result_t<Op, T>* out, const std::int64_t* offsets,
                              std::int64_t num_segments, scan_result_t<Op, T> init) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::check_scan_offsets(offsets, num_segments, n);
    detail::run_scan<Op, T, false>(in, n, out, detail::init_seed<Op, T>(init),
                                   detail::Segments{offsets, num_segments});
  }
}

// The four scan ops x 8 dtypes; also mean/argmin/argmax, which throw Errc::unsupported, so that
// the documented error is what a caller gets rather than a link error.
#define FOLDKIT_CPU_SCAN_INSTANTIATE(OP, T)                                                                       \
  template void inclusive_scan<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*);                            \
  template void exclusive_scan<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*, scan_result_t<OP, T>);      \
  template void inclusive_scan_blocked<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*, std::int64_t);      \
  template void exclusive_scan_blocked<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*, std::int64_t,       \
                                              scan_result_t<OP, T>);                                            \
  template void inclusive_scan_segmented<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*,                  \
                                                const std::int64_t*, std::int64_t);                              \
  template void exclusive_scan_segmented<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*,                  \
                                                const std::int64_t*, std::int64_t, scan_result_t<OP, T>);

#define FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(T)          \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::sum, T)     \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::prod, T)    \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::min, T)     \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::max, T)     \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::mean, T)    \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::argmin, T)  \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::argmax, T)

FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(std::int32_t)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(std::uint32_t)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(std::int64_t)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(std::uint64_t)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(float)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(double)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(half)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(bfloat16)
#undef FOLDKIT_CPU_SCAN_INSTANTIATE_OPS
#undef FOLDKIT_CPU_SCAN_INSTANTIATE

}  // namespace foldkit::cpu
