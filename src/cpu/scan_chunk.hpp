// What one chunk of a CPU prefix scan does, and where segments start. Internal to src/cpu.
//
// A scan (plain, blocked or segmented) is one algorithm here: a scan of the array in which the
// accumulator restarts from a seed at every "head" (the first element of a segment; a plain
// scan has one head, at 0; a blocked scan one every block_length elements). The seed is the
// combine functor's identity for inclusive scans and init for exclusive ones, so each segment
// of an exclusive scan starts at init.
//
// The array is cut into chunks of kScanChunk elements, independent of the thread count:
//   pass 1  summarize_chunk: what the chunk hands to the next one. If the chunk holds a head,
//           the fold from the seed over the elements after its last head (the open segment's
//           value; the chunk restarts its successor's carry); else the fold of the whole chunk.
//   fold    carry[0] = seed, carry[c + 1] = restarts(c) ? value(c) : carry[c] (+) value(c),
//           serially, left to right;
//   pass 2  scan_chunk: the chunk rescanned from carry[c], restarting at each head.
// For exact ops (integers, min, max) the order of combines cannot change a bit, so pass 1 may
// use the vectorised reduction kernels. For float sum/prod it can: a chunk's total is the lane
// reduction of reduce_chunk.hpp, while the fold from the last head is done in exactly the order
// and operations of pass 2 (so a segment that starts inside a chunk continues bit for bit in
// the next one). The result is deterministic but rounds differently from a purely serial scan:
// element i passes through at most about (chunk length) + (number of chunks before it) float
// roundings, instead of i.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cpu/reduce_chunk.hpp"
#include "foldkit/ops.hpp"
#include "foldkit/scan.hpp"

namespace foldkit::cpu::detail {

// Chunk length of every CPU scan (elements). 2^14 keeps one chunk of the widest type (128 KiB)
// in L2 between the two passes of the serial path, and limits the rounding depth of float sums.
inline constexpr std::int64_t kScanChunk = std::int64_t{1} << 14;

template <ReduceOp Op, class T> struct ScanTraits {
  static_assert(is_scan_op(Op));
  using R = scan_result_t<Op, T>;
  using A = scan_accum_t<Op, T>;
  // The reductions' functors and accumulators: scans combine exactly as reduce<Op> does (min/max
  // NaN and signed-zero rules included), so scans, reductions and the GPU agree bit for bit.
  using F = typename reduce_traits<Op, T>::combine_type;
  static_assert(std::is_same_v<A, reduce_accum_t<Op, T>>, "a scan accumulates like the reduction");
  // Whether any combine order gives the same bits (so pass 1 may use the lane kernels).
  static constexpr bool kExact = std::is_integral_v<A> || Op == ReduceOp::min || Op == ReduceOp::max;

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

// ---- where segments start ----------------------------------------------------------------------
// Each policy gives last_head(b, e): the last head in [b, e), or -1; and a cursor whose
// next(p, e) is the first head in [p, e), or e. Cursors only move forward.

struct WholeArray {  // one segment: a head at 0
  std::int64_t last_head(std::int64_t b, std::int64_t) const { return b == 0 ? 0 : -1; }
  struct Cursor {
    std::int64_t next(std::int64_t p, std::int64_t e) const { return p == 0 ? 0 : e; }
  };
  Cursor cursor(std::int64_t) const { return {}; }
};

struct Blocks {  // a head every `length` elements (length >= 1)
  std::int64_t length;
  std::int64_t last_head(std::int64_t b, std::int64_t e) const {
    const std::int64_t h = (e - 1) - (e - 1) % length;
    return h >= b ? h : -1;
  }
  struct Cursor {
    std::int64_t length;
    std::int64_t next(std::int64_t p, std::int64_t e) const {
      const std::int64_t r = p % length;
      if (r == 0) return p;
      const std::int64_t gap = length - r;  // never overflows, unlike rounding p up
      return gap >= e - p ? e : p + gap;
    }
  };
  Cursor cursor(std::int64_t) const { return Cursor{length}; }
};

// Segment s starts at offsets[s], s < count (validated: offsets[0] == 0, non-decreasing,
// offsets[count] == n). Empty segments repeat a start; restarting twice there is harmless.
struct Segments {
  const std::int64_t* offsets;
  std::int64_t count;
  std::int64_t last_head(std::int64_t b, std::int64_t e) const {
    // The last start <= e - 1; offsets[0] == 0 <= e - 1, so there is one.
    const std::int64_t* it = std::upper_bound(offsets, offsets + count, e - 1);
    const std::int64_t h = *(it - 1);
    return h >= b ? h : -1;
  }
  struct Cursor {
    const std::int64_t* offsets;
    std::int64_t count;
    std::int64_t s;  // no start below offsets[s] is >= the positions still to come
    std::int64_t next(std::int64_t p, std::int64_t e) {
      while (s < count && offsets[s] < p) ++s;  // amortised: each segment is passed once
      return s < count && offsets[s] < e ? offsets[s] : e;
    }
  };
  Cursor cursor(std::int64_t b) const {
    return Cursor{offsets, count, std::lower_bound(offsets, offsets + count, b) - offsets};
  }
};

// ---- the kernels -----------------------------------------------------------------------------

// Scans [b, e) with no head inside, from acc; returns the accumulator after e - 1. Reads in[i]
// before writing out[i], so out == in works. The loop carries a dependency from one element to
// the next (a scan does), so it runs scalar; pass 1 is the vectorised half of the work.
template <ReduceOp Op, class T, bool kInclusive>
scan_accum_t<Op, T> scan_run(const T* in, scan_result_t<Op, T>* out, std::int64_t b, std::int64_t e,
                             scan_accum_t<Op, T> acc) {
  using St = ScanTraits<Op, T>;
  const typename St::F f{};
  if constexpr (kInclusive) {
    for (std::int64_t i = b; i < e; ++i) {
      acc = f(acc, St::elem(in[i]));
      out[i] = St::result(acc);
    }
  } else {
    for (std::int64_t i = b; i < e; ++i) {
      const auto x = St::elem(in[i]);
      out[i] = St::result(acc);
      acc = f(acc, x);
    }
  }
  return acc;
}

// Pass 2: the chunk [b, e) from its carry, restarting from seed at each head.
template <ReduceOp Op, class T, bool kInclusive, class Heads>
scan_accum_t<Op, T> scan_chunk(const T* in, scan_result_t<Op, T>* out, std::int64_t b, std::int64_t e,
                               scan_accum_t<Op, T> carry, scan_accum_t<Op, T> seed, const Heads& heads) {
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

// Pass 1 for the chunk [b, e) (e > b).
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
    A acc = seed;  // exactly scan_run's sequence of operations
    for (std::int64_t i = h; i < e; ++i) acc = f(acc, St::elem(in[i]));
    return {acc, true};
  }
}

}  // namespace foldkit::cpu::detail
