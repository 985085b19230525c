// What one chunk of a CPU prefix scan does, where segments start, and the scan's tuning
// constants. Internal to src/cpu; the driver (the rounds below) is in scan_cpu.cpp.
//
// A scan (plain, blocked or segmented) is one algorithm here: a scan of the array in which the
// accumulator restarts from a seed at every "head" (the first element of a segment; a plain
// scan has one head, at 0; a blocked scan one every block_length elements). The seed is the
// combine functor's identity for inclusive scans and init for exclusive ones, so each segment
// of an exclusive scan starts at init.
//
// The array is cut into chunks of kScanChunk elements, independent of the thread count:
//   summarize  summarize_chunk: what the chunk hands to the next one. If the chunk holds a head,
//              the fold from the seed over the elements after its last head (the open segment's
//              value; the chunk restarts its successor's carry); else the fold of the whole chunk.
//   fold       carry[0] = seed, carry[c + 1] = restarts(c) ? value(c) : carry[c] (+) value(c),
//              serially, left to right;
//   rescan     scan_chunk: the chunk rescanned from carry[c], restarting at each head (or
//              scan_whole_chunks: head-free chunks, a few side by side, same operations).
//              Head-free chunks of floating-point sums and products are rescanned in
//              16-byte groups by either (scan_group.hpp); chunks with a head, one element at
//              a time.
// For exact ops (integers, min, max) the order of combines cannot change a bit, so summaries
// may use the vectorised reduction kernels. For float sum/prod it can: a chunk's total is the lane
// reduction of reduce_chunk.hpp, while the fold from the last head is done in exactly the order
// and operations of the rescan (so a segment that starts inside a chunk continues bit for bit in
// the next one). The result is deterministic but rounds differently from a purely serial scan:
// element i passes through at most about (chunk length) + (number of chunks before it) float
// roundings, instead of i (chunk length / 4 + 3 in the float groups' head-free chunks).
//
// The driver runs these three steps in rounds so that DRAM is read once: in each round every
// thread summarizes its piece (a few chunks, sized by kScanPieceBytes to stay in its L2), the
// threads wait once for the round's summaries, every thread folds them and rescans its piece from cache;
// the round's last carry starts the next round. Pieces and rounds only decide who does which chunk and when;
// the chunks and the fold order, hence the bits, are the same for every thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu/output_lines.hpp"
#include "cpu/reduce_chunk.hpp"
#include "cpu/scan_group.hpp"
#include "foldkit/detail/scan_heads.hpp"
#include "foldkit/ops.hpp"
#include "foldkit/scan.hpp"

namespace foldkit::cpu::detail {

// ---- tuning: every constant of the CPU scans ---------------------------------------------------

// Chunk length of every CPU scan (elements): the only constant the output bits depend on. 2^14
// keeps a chunk of the widest type (128 KiB) well inside L2, and limits the rounding depth of
// float sums.
inline constexpr std::int64_t kScanChunk = std::int64_t{1} << 14;

// One thread's piece of a round, input and output bytes together: the thread summarizes the
// piece (reading it from DRAM into its L2), waits for the round's other pieces, then rescans it, so
// the input must still be in L2 then; output written with plain stores passes through L2 too.
// Server cores have 1 MiB (Skylake-SP, Cascade Lake), 1.25 MiB (Ice Lake-SP) or 2 MiB (Sapphire
// Rapids) of L2: 1 MiB fits the smallest, e.g. 512 KiB of f32 input and 512 KiB of output. Smaller
// pieces mean more rounds, each a wait (a few us): a 16-thread round of these pieces reads 8 MiB
// of f32, about 90 us of DRAM time at the 16-core host's 94 GB/s, so the waits cost ~3 %.
inline constexpr std::int64_t kScanPieceBytes = std::int64_t{1} << 20;

// Head-free chunks of a float sum or product rescanned side by side. A scan is one dependent
// chain of combines (a float add or multiply: 3-4 cycles), so one chunk at a time runs at one
// element per latency (~0.9 ns on the 16-core Xeon host: 16 threads then need 3.8 ms for 2^26
// f32, more than DRAM needs for the output). 4 independent chains run at about an element per
// cycle, where the stores are the limit (measured on a Zen core: 0.94 -> 0.49 ns per element);
// 4 chains of 16-byte groups (scan_group.hpp) at 0.22 ns for f32, below a copy's 0.33.
// Integer combines take one cycle and min/max are compare-bound: they gain nothing from it.
inline constexpr int kScanSideBySide = 4;

// Below this much input one thread is faster than waking the pool (src/cpu/parallel.hpp) and a
// wait per round.
inline constexpr std::int64_t kMinParallelScanBytes = std::int64_t{1} << 18;

template <ReduceOp Op, class T> struct ScanTraits {
  static_assert(is_scan_op(Op));
  using R = scan_result_t<Op, T>;
  using A = scan_accum_t<Op, T>;
  // The reductions' functors and accumulators: scans combine exactly as reduce<Op> does (min/max
  // NaN and signed-zero rules included), so scans, reductions and the GPU agree bit for bit.
  using F = typename reduce_traits<Op, T>::combine_type;
  static_assert(std::is_same_v<A, reduce_accum_t<Op, T>>, "a scan accumulates like the reduction");
  // Whether any combine order gives the same bits (so summaries may use the lane kernels).
  static constexpr bool kExact = std::is_integral_v<A> || Op == ReduceOp::min || Op == ReduceOp::max;
  // Head-free chunks rescanned side by side (see kScanSideBySide).
  static constexpr int kChains =
      std::is_floating_point_v<A> && (Op == ReduceOp::sum || Op == ReduceOp::prod) ? kScanSideBySide : 1;
  // Chunks in one thread's piece of a round (see kScanPieceBytes); at least kChains.
  static constexpr std::int64_t kPieceChunks = std::max<std::int64_t>(
      kChains, kScanPieceBytes / (kScanChunk * static_cast<std::int64_t>(sizeof(T) + sizeof(R))));

  static A elem(T v) { return static_cast<A>(widen(v)); }
  static R result(A a) {
    if constexpr (is_16bit_float_v<R>) return R(a);  // round to nearest even, once per output
    else return a;
  }
  static A accum(R r) {
    if constexpr (is_16bit_float_v<R>) return static_cast<float>(r);
    else return r;
  }
};

// ---- where segments start: WholeArray, Blocks, Segments (foldkit/detail/scan_heads.hpp) -----

// ---- the kernels -----------------------------------------------------------------------------

// One element: returns the output for x (the prefix through x if inclusive, before x if
// exclusive) and moves acc past x. Every rescan kernel goes through here, so a chunk's outputs
// are the same bits whichever kernel scans it.
template <ReduceOp Op, class T, bool kInclusive>
inline scan_result_t<Op, T> scan_step(scan_accum_t<Op, T>& acc, T x) {
  using St = ScanTraits<Op, T>;
  const typename St::F f{};
  if constexpr (kInclusive) {
    acc = f(acc, St::elem(x));
    return St::result(acc);
  } else {
    const scan_result_t<Op, T> before = St::result(acc);
    acc = f(acc, St::elem(x));
    return before;
  }
}

// Scans [b, e) with no head inside, from acc; returns the accumulator after e - 1. Reads in[i]
// before writing out[i], so out == in works. The loop carries a dependency from one element to
// the next (a scan does), so it runs scalar at one element per combine latency.
template <ReduceOp Op, class T, bool kInclusive>
scan_accum_t<Op, T> scan_run(const T* in, scan_result_t<Op, T>* out, std::int64_t b, std::int64_t e,
                             scan_accum_t<Op, T> acc) {
  for (std::int64_t i = b; i < e; ++i) out[i] = scan_step<Op, T, kInclusive>(acc, in[i]);
  return acc;
}

// ---- output lines ------------------------------------------------------------------------------

// Lines gathered before they are stored. A line reloaded right after its elements were stored
// one by one stalls (the store buffer cannot forward several stores to one load); 4 lines give
// the first line's stores time to reach L1.
inline constexpr int kLinesPerStep = 4;
static_assert(kLinesPerStep % kScanSideBySide == 0, "each chunk gets whole lines per step");

// The K chunks that start at b (each kScanChunk long, none holding a head), chunk k from acc[k]
// (left as its accumulator after the chunk). Floating-point sums and products: group_scan
// (scan_group.hpp; streamed when `stream`). Others: the same
// scan_step sequence per chunk as scan_run,
// but K chunks side by side so that their dependency chains overlap, and the output gathered a
// line at a time per chunk (streamed when `stream`). Every chunk's output is aligned like the
// first's (kScanChunk * sizeof(R) is a multiple of 64), so the first `lead` elements of each are
// scanned singly up to a line boundary, then whole lines, then a tail. Each line is read in full
// before it is stored, so out == in works.
template <ReduceOp Op, class T, bool kInclusive, int K>
void scan_whole_chunks(const T* in, scan_result_t<Op, T>* out, std::int64_t b, scan_accum_t<Op, T>* acc,
                       bool stream) {
  using R = scan_result_t<Op, T>;
  if constexpr (kGroupScan<Op, T>) {  // float sums and products: in groups (scan_group.hpp)
    group_scan<Op, kInclusive, K>(in, out, b, kScanChunk, kScanChunk, acc, stream);
    return;
  }
  constexpr int W = static_cast<int>(kLineBytes / sizeof(R));
  static_assert(kScanChunk * sizeof(R) % kLineBytes == 0, "every chunk's output is aligned like the first's");
  const std::int64_t lead = stream ? elements_to_line(out + b) : 0;
  for (int k = 0; k < K; ++k) {
    const std::int64_t at = b + k * kScanChunk;
    acc[k] = scan_run<Op, T, kInclusive>(in, out, at, at + lead, acc[k]);
  }
  std::int64_t i = lead;
  scan_accum_t<Op, T> a[K];  // locals: the compiler keeps them in registers
  for (int k = 0; k < K; ++k) a[k] = acc[k];
  constexpr int L = kLinesPerStep / K;  // lines of each chunk per step
  for (; i + L * W <= kScanChunk; i += L * W) {
    R lines[K][L * W];
    for (int j = 0; j < L * W; ++j)
      for (int k = 0; k < K; ++k) lines[k][j] = scan_step<Op, T, kInclusive>(a[k], in[b + k * kScanChunk + i + j]);
    for (int k = 0; k < K; ++k)
      for (int l = 0; l < L; ++l) store_line(out + b + k * kScanChunk + i + l * W, lines[k] + l * W, stream);
  }
  for (int k = 0; k < K; ++k) {
    const std::int64_t at = b + k * kScanChunk;
    acc[k] = scan_run<Op, T, kInclusive>(in, out, at + i, at + kScanChunk, a[k]);
  }
}

// Rescan: the chunk [b, e) (b a multiple of kScanChunk) from its carry, restarting from seed at
// each head. A head-free chunk of a float sum or product goes through group_scan.
template <ReduceOp Op, class T, bool kInclusive, class Heads>
scan_accum_t<Op, T> scan_chunk(const T* in, scan_result_t<Op, T>* out, std::int64_t b, std::int64_t e,
                               scan_accum_t<Op, T> carry, scan_accum_t<Op, T> seed, const Heads& heads) {
  if constexpr (kGroupScan<Op, T>) {  // a head-free chunk of a float sum or product: in groups
    if (heads.last_head(b, e) < 0) {
      scan_accum_t<Op, T> acc = carry;
      group_scan<Op, kInclusive, 1>(in, out, b, kScanChunk, e - b, &acc, false);
      return acc;
    }
  }
  auto cursor = heads.cursor(b);
  scan_accum_t<Op, T> acc = carry;
  std::int64_t pos = b;
  std::int64_t head = cursor.next(pos, e);
  while (pos < e) {
    if (head == pos) {
      acc = seed;
      head = cursor.next(pos + 1, e);
    }
    acc = scan_run<Op, T, kInclusive>(in, out, pos, head, acc);
    pos = head;
  }
  return acc;
}

template <class A> struct ChunkSummary {
  A value;        // see the file comment
  bool restarts;  // the chunk holds a head: the next carry is `value` itself
};

// Summary of the chunk [b, e) (e > b).
template <ReduceOp Op, class T, class Heads>
ChunkSummary<scan_accum_t<Op, T>> summarize_chunk(const T* in, std::int64_t b, std::int64_t e,
                                                  scan_accum_t<Op, T> seed, const Heads& heads) {
  using St = ScanTraits<Op, T>;
  using A = typename St::A;
  const std::int64_t h = heads.last_head(b, e);
  if (h < 0) return {reduce_chunk<Op, T>(in + b, e - b, b), false};
  const typename St::F f{};
  if constexpr (St::kExact) {
    return {f(seed, reduce_chunk<Op, T>(in + h, e - h, h)), true};
  } else {
    A acc = seed;  // exactly the rescan's sequence of operations (scan_step)
    for (std::int64_t i = h; i < e; ++i) acc = f(acc, St::elem(in[i]));
    return {acc, true};
  }
}

}  // namespace foldkit::cpu::detail
