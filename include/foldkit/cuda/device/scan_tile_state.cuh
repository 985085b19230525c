// Tile states of the single-pass scan (decoupled look-back), kept in the caller's workspace.
//
// Layout: a 256-byte header (ticket and epoch, scan_layout.hpp) and then, per tile, two flagged slots: the
// tile's aggregate and its inclusive prefix. Every 4-byte word of a value travels with a 32-bit
// flag in one 8-byte store (single-copy atomic), so a reader that sees the flag sees the word;
// no fences on the critical path.
//
// Epochs instead of zeroing: a call marks its slots with flag = epoch + 1, where epoch comes
// with each block's ticket; the block that draws the call's last ticket stores epoch + 1 back
// with the ticket reset to 0. Slots left by earlier calls carry smaller flags and
// read as "not yet published", so the workspace never needs zeroing between calls (only once,
// after allocation). The flag wraps after 2^32 calls on one workspace: a slot last written
// exactly 2^32 calls earlier would then read as published. (A workspace that serves 4 billion
// calls should be re-zeroed with init_scan_workspace; documented in cuda/scan.hpp.)
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "foldkit/cuda/device/scan_layout.hpp"
#include "foldkit/cuda/warp/warp_shuffle.cuh"
#include "foldkit/ops.hpp"

namespace foldkit::cuda {

template <class A>
__device__ __forceinline__ void publish_scan_slot(unsigned long long* slot, const A& value, unsigned flag) {
  static_assert(std::is_trivially_copyable_v<A>);
  constexpr int kWords = ScanTileSlots<A>::kWords;
  unsigned words[kWords] = {};
  memcpy(words, &value, sizeof(A));
#pragma unroll
  for (int k = 0; k < kWords; ++k) {
    const unsigned long long w = (static_cast<unsigned long long>(flag) << 32) | words[k];
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slot + k), "l"(w) : "memory");
  }
}

// Issues the loads of one slot's words (relaxed, so a later poll sees newer stores).
template <class A>
__device__ __forceinline__ void load_scan_slot(const unsigned long long* slot,
                                               unsigned long long (&w)[ScanTileSlots<A>::kWords]) {
#pragma unroll
  for (int k = 0; k < ScanTileSlots<A>::kWords; ++k)
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w[k]) : "l"(slot + k) : "memory");
}

// True (and the value) when every loaded word carries `flag`.
template <class A>
__device__ __forceinline__ bool decode_scan_slot(const unsigned long long (&w)[ScanTileSlots<A>::kWords],
                                                 unsigned flag, A& value) {
  constexpr int kWords = ScanTileSlots<A>::kWords;
  bool complete = true;
  unsigned words[kWords];
#pragma unroll
  for (int k = 0; k < kWords; ++k) {
    complete &= static_cast<unsigned>(w[k] >> 32) == flag;
    words[k] = static_cast<unsigned>(w[k]);
  }
  if (complete) memcpy(&value, words, sizeof(A));
  return complete;
}

// Waits (one thread) until tile `pred` has published its aggregate or its inclusive prefix in
// this call, i.e. until its input has landed. Every tile but the last publishes one of them (tile
// 0 its inclusive prefix, when the call has more than one tile), and `pred` drew an earlier ticket
// than the caller, so it is running or done: the wait ends on any GPU.
template <class A>
__device__ __forceinline__ void wait_for_publication(const ScanTileSlots<A>* slots, unsigned pred, unsigned flag) {
  while (true) {
    if constexpr (ScanTileSlots<A>::kWords == 1) {
      unsigned long long wa[1], wi[1];
      load_scan_slot<A>(slots[pred].aggregate, wa);
      load_scan_slot<A>(slots[pred].inclusive, wi);
      A ignored;
      if (decode_scan_slot<A>(wa, flag, ignored) || decode_scan_slot<A>(wi, flag, ignored)) return;
    } else {
      // The wait reads no value: word 0's flag says the slot's publication has begun. Loading and
      // decoding every word of 8-byte slots here made ptxas spill 8 bytes in the f64 inclusive
      // scans (sm_90: two local stores per thread per tile in the store pass; issue #20).
      unsigned long long wa[1], wi[1];
      load_scan_slot<unsigned>(slots[pred].aggregate, wa);
      load_scan_slot<unsigned>(slots[pred].inclusive, wi);
      if (static_cast<unsigned>(wa[0] >> 32) == flag || static_cast<unsigned>(wi[0] >> 32) == flag) return;
    }
  }
}

// Ops for which every grouping and order of the combines gives the same bits: the built-in
// integer sums, products, minima and maxima (wrapping arithmetic is associative and commutative).
template <class Op>
struct exact_any_order : std::false_type {};
template <class A>
struct exact_any_order<op::Sum<A>> : std::bool_constant<std::is_integral_v<A>> {};
template <class A>
struct exact_any_order<op::Prod<A>> : std::bool_constant<std::is_integral_v<A>> {};
template <class A>
struct exact_any_order<op::Min<A>> : std::bool_constant<std::is_integral_v<A>> {};
template <class A>
struct exact_any_order<op::Max<A>> : std::bool_constant<std::is_integral_v<A>> {};

// The exclusive prefix of tile `tile` (>= 1), by warp 0 (every lane calls it; all lanes
// return the same value). The warp examines a window of 32 predecessors at a time, lane l the
// l-th newest; each lane loads both slots of its predecessor at once, so one poll costs one L2
// round trip. A window is re-read until either some lane sees an inclusive prefix and every
// newer lane sees at least an aggregate (done), or every lane sees an aggregate (then the
// window's aggregates are kept in `store` and the warp moves 32 tiles further back, up to
// kWindows windows; past that it waits in the last window for an inclusive prefix to appear).
// The prefix is then folded LEFT TO RIGHT: from that inclusive prefix through every newer
// aggregate, oldest first. Whichever predecessor the look-back stopped at, that is the left
// fold of all tile aggregates before `tile`, so it is the same bits on every call. Tiles take
// their index from a ticket, so every predecessor is held by a block that is running or done:
// the wait ends on any GPU.
template <int kWindows, bool kTreeFold = false, class A, class Op>
__device__ __forceinline__ A look_back(const ScanTileSlots<A>* slots, unsigned tile, unsigned flag, Op op,
                                       A (*store)[32]) {
  constexpr int kWords = ScanTileSlots<A>::kWords;
  const unsigned lane = threadIdx.x & 31u;
  long long newest = static_cast<long long>(tile) - 1;  // the current window's lane-0 predecessor
  int windows = 0;                                      // full windows kept in `store`
  A value{};
  unsigned s = 0;
  while (true) {
    const long long pred = newest - static_cast<long long>(lane);
    bool inclusive = false, any = false;
    value = A{};
    if (pred >= 0) {  // (lanes past tile 0 never matter: tile 0 publishes an inclusive prefix)
      unsigned long long wi[kWords], wa[kWords];
      load_scan_slot<A>(slots[pred].inclusive, wi);
      load_scan_slot<A>(slots[pred].aggregate, wa);
      A aggregate{};
      inclusive = decode_scan_slot<A>(wi, flag, value);
      const bool has_aggregate = decode_scan_slot<A>(wa, flag, aggregate);
      if (!inclusive) value = aggregate;
      any = inclusive || has_aggregate;
    }
    // Done at an inclusive prefix whose newer lanes all have aggregates; a window of aggregates
    // is kept and the next one examined; anything else is polled again.
    const unsigned inclusive_mask = __ballot_sync(0xffffffffu, inclusive);
    const unsigned any_mask = __ballot_sync(0xffffffffu, any);
    if (inclusive_mask != 0) {
      s = __ffs(inclusive_mask) - 1;
      const unsigned newer = (1u << s) - 1u;
      if ((any_mask & newer) == newer) break;
    } else if (any_mask == 0xffffffffu && windows + 1 < kWindows) {
      store[windows][lane] = value;  // a whole window of aggregates: keep it, look further back
      ++windows;
      newest -= 32;
    }
  }
  if constexpr (kTreeFold && exact_any_order<Op>::value) {
    // Any order gives the same bits: each lane folds its own values (the inclusive prefix at
    // lane s, the aggregates newer than it, and its column of the kept windows), then the warp
    // combines the lanes in five shuffle rounds.
    A mine = lane <= s ? value : Op::identity();
    __syncwarp();  // `store` was written by other lanes
    for (int w = 0; w < windows; ++w) mine = op(mine, store[w][lane]);
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
      mine = op(mine, detail::shuffle_words(mine, [&](unsigned x) { return __shfl_xor_sync(0xffffffffu, x, offset); }));
    return mine;
  }
  // Fold: the inclusive prefix at lane s, then the aggregates newer than it, oldest first. The
  // shuffles do not depend on each other (only the combines do), so they issue back to back.
  A running = shfl_idx_any(value, static_cast<int>(s));
#pragma unroll
  for (int l = 30; l >= 0; --l) {
    const A v = shfl_idx_any(value, l);
    if (l < static_cast<int>(s)) running = op(running, v);
  }
  __syncwarp();  // `store` was written by other lanes
  for (int w = windows - 1; w >= 0; --w)
    for (int l = 31; l >= 0; --l) running = op(running, store[w][l]);
  return running;
}

}  // namespace foldkit::cuda
