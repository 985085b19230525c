// The segmented reduction kernel (foldkit/cuda/segmented_reduce.hpp), balanced by ELEMENTS and by
// segments alike: one launch (after a small validation kernel), any mix of segment lengths.
//
// The merge path. The call's items are the input's elements and the segments' ends, in order:
// segment s's elements, then its end item (an empty segment is its end item alone). Item
// (i ends, j elements) sits on diagonal i + j; segment s's end item is on diagonal
// E_s = s + offsets[s + 1] (strictly increasing), its first item on s + offsets[s]. Tiles are
// equal runs of kTile diagonals (tuning/segmented_reduce_tuning.hpp), so a tile holds at most
// kTile elements AND ends: 2^20 empty segments cost what 2^20 elements cost, and a segment of 2^24
// elements is spread over thousands of tiles. The split (i, j) of a diagonal d (i = the number
// of ends before d): for the offsets form the validation kernel writes every tile boundary's in
// its pass over the offsets (segmented_reduce_prepare.cuh); for begin/end pairs each block
// searches its own (a block-wide 257-ary search) in the virtual offsets, see below.
//
// One tile (offsets form): the block copies the tile's elements into shared memory with 16-byte
// cp.async (aligned 16-byte chunks of the input, XOR-swizzled; chunks at the array's ends element
// by element, never outside [0, n)), and the tile's segment ends as 32-bit offsets from the
// tile's first element; with the ends it builds each thread's masks (shared atomics): which of
// its positions end a segment, and which are followed by empty segments. Thread t owns buffer
// positions [t * kItems, (t + 1) * kItems) and walks them left to right in one predicated pass:
// it folds elements into one accumulator and, where a segment ends, EMITS it: stores it in place
// of that segment's last element (accumulators no wider than an element; the block writes all
// results out after the scan, with the empty segments) or to out. The first segment a thread
// ends may have begun in earlier threads: its partial waits for the carry, an exclusive block
// scan over (ended anything?, trailing partial) pairs (the reduce-by-key operator: (f1, v1) +
// (f2, v2) = (f1 | f2, f2 ? v2 : v1 . v2)), then it is finished with carry . partial. The
// begin/end form walks the input where it is (walk_direct) and writes empty segments in a
// separate pass over the ends.
//
// Segments that span tiles: a deterministic look-back. A tile that ends inside a segment
// publishes that segment's partial over the tile (the scan's total, carried through the block's
// tiles) in its slot: each 4-byte word with a flag in one 8-byte store, so a reader that sees
// every flag sees the value, with no fence and no atomic. The tile where the segment ENDS folds
// the slots of the tiles before it in tile order (its own partial last), waiting for any not yet
// published: those tiles have lower block indices, so they were started before it (as the
// scans' look-back assumes), and they never wait for a higher tile, so nothing deadlocks. A few
// slots are folded by one thread after the block's tiles; many (a segment over more than
// kSegSmallFold tiles) by the whole block (thread u a contiguous run, then block_reduce's fixed
// tree). The reader clears the slots, and each block zeroes its two splits (stored once as its
// start, once as its predecessor's stop), so the workspace stays zeroed. The fold order depends
// only on (n, offsets, the input's alignment): every call gives the same bits. (The last of a
// segment's tiles to arrive finishing it instead, with a count per segment, measured slower: see
// the ledger.)
//
// Validation without a host sync: the validation kernel sets the workspace flag for bad offsets.
// Every block first clamps its splits so that every address it computes stays inside the input
// and the offsets whatever they hold, issues its tile's loads, and only then reads the flag
// (ld.acquire), overlapping the round trip; if the flag is set it exits before writing anything.
// Each block also takes a ticket after reading the flag; the last one to take a ticket writes
// *status (if given) and clears flag and ticket for the next call.
//
// Begin/end pairs: the validation kernel writes the lengths, a foldkit inclusive scan turns them
// into virtual offsets (the segments laid end to end), and this kernel runs on those, reading
// element v of segment s from in[begin[s] + v - voff[s]] directly (no staging: the segments need
// not be contiguous). The total length is known only on the device, so the grid is fixed and
// block k takes the run of G consecutive tiles k*G .. k*G + G - 1, G = ceil(items / (kTile *
// grid)), carrying its running partial from tile to tile.
#pragma once

#include <cuda_runtime_api.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "foldkit/cuda/block/block_reduce.cuh"
#include "foldkit/cuda/device/scan_tile_io.cuh"
#include "foldkit/cuda/tuning/segmented_reduce_tuning.hpp"
#include "foldkit/cuda/warp/warp_shuffle.cuh"
#include "foldkit/ops.hpp"
#include "segmented_reduce_launch.cuh"

namespace foldkit::cuda::seg {

// The kernel's few memory primitives of its own; the host emulation of the kernel
// (segmented_reduce_emulation.cuh) defines them itself, before including this header.
#if !defined(FOLDKIT_SEG_EMULATION)
__device__ __forceinline__ void copy16_async(void* dst_shared, const void* src) {
  tile_io::copy_async<16>(dst_shared, src);
}
__device__ __forceinline__ void wait_copies() { tile_io::wait_all_copies(); }
// A slot word: relaxed (single-copy atomic 8-byte) store and load at GPU scope, every load a
// fresh one; and the pause between polls of a slot not yet published.
__device__ __forceinline__ void slot_store(unsigned long long* p, unsigned long long w) {
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}
__device__ __forceinline__ unsigned long long slot_load(const unsigned long long* p) {
  unsigned long long w;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w) : "l"(p));
  return w;
}
__device__ __forceinline__ void poll_pause() { __nanosleep(32); }
#endif

template <ReduceOp Op, class T, bool kByOffsets>
struct SegKernel {
  using Tr = reduce_traits<Op, T>;
  using A = typename Tr::accum_type;
  using F = typename Tr::combine_type;
  using R = typename Tr::result_type;
  static constexpr bool kArg = Tr::kUsesIndex;
  static constexpr int kThreads = tuning::kSegThreads;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kItems = tuning::seg_items(sizeof(T));
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  static constexpr int kChunksPerThread = kItems / kVec;
  // Offsets form, accumulators no wider than elements: each segment's value is left in the tile
  // buffer at its last element (walk_in_place) and written out by the block afterwards.
  static constexpr bool kInPlace = kByOffsets && !kArg && sizeof(A) <= sizeof(T);
  static constexpr int kItemsLog2 = kItems == 32 ? 5 : kItems == 16 ? 4 : kItems == 8 ? 3 : -1;
  static_assert(kItemsLog2 > 0, "a power of two up to 32 positions per thread");
  static constexpr int kTile = tuning::seg_tile_items(sizeof(T));
  static constexpr int kBufBytes = tuning::seg_buffer_bytes(sizeof(T));
  static constexpr int kMinBlocks = tuning::seg_min_blocks(kByOffsets, Op, sizeof(T));
  static constexpr int kWords = (static_cast<int>(sizeof(A)) + 3) / 4;  // flagged 8-byte words per slot
  static constexpr int kBatch = 4 / kWords > 0 ? 4 / kWords : 1;          // slots loaded per poll round
  static_assert(kItems % kVec == 0 && kWords <= static_cast<int>(kSlotWords));

  struct Carry {
    A v;
    int f;  // 1: a segment ended at or after this value's elements began
  };
  struct Shared {
    alignas(128) unsigned char buf[kBufBytes];
    Carry warp_total[kWarps];
    BlockReduceStorage<A> reduce;
    std::int64_t i0, j0c, start0;  // the current tile's first segment, first element, i0's start - j0c
    std::int64_t i1;               // the current tile's end split's segment
    std::int64_t tb;               // the block's first diagonal (held here, not in registers across the walk)
    std::int64_t t_end;            // offsets form: the block's tiles end here
    std::int64_t head_s;           // a head segment left for the whole block to fold (-1: none)
    A head_v;                      // its partial over this block's tiles
    int flag;
    // Offsets form, blocks of several tiles: the next tile's start and stop splits, copied in
    // (cp.async) with the current tile's elements; two sets, by tile parity.
    alignas(16) longlong2 next_split[2][2];
    // Offsets form: per thread, bit i = its buffer position i is the last element of a segment
    // (lmask), of a segment followed by empty ones (zmask); firstq: its first such segment.
    unsigned lmask[kThreads], zmask[kThreads];
    int firstq[kThreads];
  };

  const Params& p;
  Shared& sm;
  const int tid;
  F f{};

  __device__ __forceinline__ const T* in() const { return static_cast<const T*>(p.in); }
  // Virtual start / end of segment s (offsets form: the real ones).
  __device__ __forceinline__ std::int64_t vstart(std::int64_t s) const { return p.offsets[s]; }
  __device__ __forceinline__ std::int64_t vend(std::int64_t s) const { return p.offsets[s + 1]; }
  // Where segment s's elements are in the input (its index 0).
  __device__ __forceinline__ std::int64_t base_of(std::int64_t s) const {
    return kByOffsets ? p.offsets[s] : p.begin[s];
  }

  __device__ __forceinline__ Carry op(const Carry& a, const Carry& b) const {
    return b.f ? b : Carry{f(a.v, b.v), a.f};
  }

  // Segment s's result from its accumulator (len > 0); `base`: base_of(s).
  __device__ __forceinline__ void write_final(std::int64_t s, const A& acc, std::int64_t len, std::int64_t base) const {
    const R r = Tr::finalize(acc, len);
    if constexpr (kArg) {
      static_cast<std::int64_t*>(p.out)[s] = r.index;
      // The value is the winning element itself, reloaded: r.value went through the compare
      // type (float for f16/bf16), which need not keep a NaN's payload bits.
      if (p.values != nullptr) static_cast<T*>(p.values)[s] = in()[base + r.index];
    } else {
      static_cast<R*>(p.out)[s] = r;
    }
  }
  // The empty segment rule (foldkit/segmented_reduce.hpp).
  __device__ __forceinline__ void write_empty(std::int64_t s) const {
    if constexpr (kArg) {
      static_cast<std::int64_t*>(p.out)[s] = -1;
      if (p.values != nullptr) static_cast<T*>(p.values)[s] = static_cast<T>(Tr::identity().value);
    } else {
      static_cast<R*>(p.out)[s] = Tr::finalize(Tr::identity(), 0);
    }
  }

  // ---- slots: the partial of the segment open at a tile's end ----
  __device__ __forceinline__ unsigned long long* slot(std::int64_t tile) const {
    return p.slots + static_cast<std::size_t>(tile) * kSlotWords;
  }
  __device__ __forceinline__ void publish(std::int64_t tile, const A& v) const {
    unsigned w[kWords] = {};
    memcpy(w, &v, sizeof(A));
    unsigned long long* sl = slot(tile);
#pragma unroll
    for (int k = 0; k < kWords; ++k) slot_store(sl + k, (1ull << 32) | w[k]);
  }
  // acc . slot[t0] . ... . slot[t1 - 1], waiting for slots not yet published; clears them.
  // kBatch slots' loads are in flight before any is examined.
  __device__ __forceinline__ A fold_slots(std::int64_t t0, std::int64_t t1, A acc) const {
    for (std::int64_t t = t0; t < t1; t += kBatch) {
      unsigned long long w[kBatch][kWords];
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
#pragma unroll
        for (int k = 0; k < kWords; ++k) w[b][k] = t + b < t1 ? slot_load(slot(t + b) + k) : 0ull;
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (t + b >= t1) break;
        unsigned long long* sl = slot(t + b);
        for (;;) {
          bool complete = true;
#pragma unroll
          for (int k = 0; k < kWords; ++k) complete &= (w[b][k] >> 32) == 1u;
          if (complete) break;
          poll_pause();
#pragma unroll
          for (int k = 0; k < kWords; ++k) w[b][k] = slot_load(sl + k);
        }
        unsigned low[kWords];
#pragma unroll
        for (int k = 0; k < kWords; ++k) {
          low[k] = static_cast<unsigned>(w[b][k]);
          sl[k] = 0ull;  // the workspace stays zeroed
        }
        A v;
        memcpy(&v, low, sizeof(A));
        acc = f(acc, v);
      }
    }
    return acc;
  }

  // Exclusive block scan of the (ended?, trailing partial) pairs; thread 0's result is "none"
  // ({identity, 0}). `total`: every thread's pair combined.
  __device__ __forceinline__ Carry block_scan(Carry x, Carry& total) {
    const int lane = tid & 31, warp = tid >> 5;
    Carry inc = x;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      Carry o;
      o.v = shfl_up_any(inc.v, static_cast<unsigned>(d));
      o.f = __shfl_up_sync(0xffffffffu, inc.f, static_cast<unsigned>(d));
      if (lane >= d) inc = op(o, inc);
    }
    Carry ex;
    ex.v = shfl_up_any(inc.v, 1u);
    ex.f = __shfl_up_sync(0xffffffffu, inc.f, 1u);
    if (lane == 31) sm.warp_total[warp] = inc;
    __syncthreads();
    Carry pre{Tr::identity(), 0};
    total = sm.warp_total[0];
    for (int w = 1; w < kWarps; ++w) {
      if (w == warp) pre = total;
      total = op(total, sm.warp_total[w]);
    }
    if (warp == 0) {
      if (lane == 0) ex = Carry{Tr::identity(), 0};
    } else {
      ex = lane == 0 ? pre : op(pre, ex);
    }
    return ex;
  }

  // The first q in [lo, hi) with ends[q] > r (hi if none).
  __device__ __forceinline__ static int first_end_after(const int* ends, int lo, int hi, int r) {
    while (lo < hi) {
      const int mid = (lo + hi) >> 1;
      if (ends[mid] > r) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  // Segment i0 + q's start relative to the tile's first element (may lie before the tile).
  __device__ __forceinline__ std::int64_t start_rel(const int* ends, int q) const {
    return q == 0 ? sm.start0 : ends[q - 1];
  }
  // Finishes segment i0 + q (it ended in this thread, which saw all of it, or its carry is in acc).
  __device__ __forceinline__ void finish(const int* ends, int q, const A& acc) const {
    const std::int64_t s = sm.i0 + q;
    const std::int64_t st = start_rel(ends, q);
    write_final(s, acc, ends[q] - st, kByOffsets ? sm.j0c + st : p.begin[s]);
  }

  // Bit i set: the thread's position base + i is a tile element ([a, b)); 0 <= a - base <=
  // b - base <= kItems.
  __device__ __forceinline__ static unsigned valid_positions(int a, int b, int base) {
    const int lo = a - base, hi = b - base;
    return (hi >= 32 ? ~0u : (1u << hi) - 1u) & ~(lo >= 32 ? ~0u : (1u << lo) - 1u);
  }
  // Byte offset in sm.buf of buffer position i (tile position i - h).
  __device__ __forceinline__ static int buf_offset(int i) {
    return SwizzledTile<T>::chunk(i / kVec) * 16 + (i % kVec) * static_cast<int>(sizeof(T));
  }
  // walk_staged where accumulators fit in an element's place (kInPlace): a segment's value is
  // stored over its last element, which this thread alone reads (its chunks are its own), so
  // each position costs a predicated fold and a predicated shared store; the block writes the
  // results out after the scan (coalesced, with the empty segments). The pending segment's value
  // is read back from its place (pend_slot: its byte offset).
  __device__ __forceinline__ void walk_in_place(int a, int b, int h, A& acc, int& pend_q, A& pend_v,
                                                int& pend_slot) const {
    const int base = tid * kItems - h;
    const unsigned L = sm.lmask[tid];
    const unsigned F = pend_q >= 0 ? 0u : L & (0u - L);
    const unsigned V = valid_positions(a, b, base);
#pragma unroll
    for (int c = 0; c < kChunksPerThread; ++c) {
      unsigned char* chunk = sm.buf + SwizzledTile<T>::chunk(tid * kChunksPerThread + c) * 16;
      T x[kVec];
      const uint4 raw = *reinterpret_cast<const uint4*>(chunk);
      memcpy(x, &raw, 16);
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        const int i = c * kVec + e;
        const A v = f(acc, Tr::from_element(x[e], 0));
        if ((V >> i) & 1u) acc = v;
        if ((L >> i) & 1u) {  // the last element of a segment
          memcpy(chunk + e * sizeof(T), &acc, sizeof(A));
          acc = Tr::identity();
        }
      }
    }
    if (F != 0) {
      pend_q = sm.firstq[tid];
      pend_slot = buf_offset(tid * kItems + __ffs(static_cast<int>(F)) - 1);
      memcpy(&pend_v, sm.buf + pend_slot, sizeof(A));
    }
  }

  // The offsets form's walk over the staged tile: thread tid's kItems buffer positions, tile
  // positions base .. base + kItems - 1 (base = tid * kItems - h), of which [a, b) are the tile's
  // elements. Bit i of four masks describes position base + i: V, an element of the tile; L, the
  // last element of a segment (sm.lmask, built with the ends, see tile()); F, L's first bit,
  // the end of the segment whose carry comes from the block scan (not when thread 0 already has
  // one: a segment that ended at position 0); Z, a segment followed by empty ones. The walk is
  // one unrolled pass of predicated folds and stores, no search and no range checks; a segment's
  // result is stored where it ends (F's too: rewritten with its carry after the scan). It
  // replaced a walk that looked for the next end at every element and split each thread's
  // positions into a checked and an unchecked loop (ncu, 2^22 segments of 0-128 f32: 537 M warp
  // instructions for 268 M elements, issue slots 89 % busy, 16.6 of 32 threads active).
  template <bool kEmpties>
  __device__ __forceinline__ void walk_staged(int a, int b, int h, const int* ends, int nends, std::int64_t i0,
                                              std::int64_t j0c, A& acc, int& pend_q, A& pend_v) const {
    static_assert(kItems <= 32, "one bit per position");
    const int base = tid * kItems - h;
    const unsigned L = sm.lmask[tid];
    const unsigned Z = kEmpties ? sm.zmask[tid] : 0u;
    int q = L != 0 ? sm.firstq[tid] : 0;
    if constexpr (kArg) {
      if (L == 0) q = first_end_after(ends, 0, nends, a);  // the segment of the thread's elements
    }
    const unsigned F = pend_q >= 0 ? 0u : L & (0u - L);
    const unsigned V = valid_positions(a, b, base);
    // The current segment's start (argmin/argmax: the element's index; mean: the length).
    std::int64_t cur = 0;
    if constexpr (kArg || Op == ReduceOp::mean) cur = start_rel(ends, q);
    const int q_first = q;
    A head = Tr::identity();
    R* outp = static_cast<R*>(p.out) + (i0 + q);  // segment q's result (not argmin/argmax)
#pragma unroll
    for (int c = 0; c < kChunksPerThread; ++c) {
      T x[kVec];
      read_thread_chunk<kItems>(reinterpret_cast<const T*>(sm.buf), tid, c, x);
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        const int i = c * kVec + e;
        const int r = base + i;
        const A v = f(acc, Tr::from_element(x[e], kArg ? r - cur : 0));
        if ((V >> i) & 1u) acc = v;
        if ((F >> i) & 1u) head = acc;
        if ((L >> i) & 1u) {  // segment q's last element
          if constexpr (kArg) write_final(i0 + q, acc, r + 1 - cur, j0c + cur);
          else *outp = Tr::finalize(acc, Op == ReduceOp::mean ? r + 1 - cur : 1);  // never empty
          acc = Tr::identity();
          cur = r + 1;
          ++q;
          ++outp;
          if constexpr (kEmpties) {
            if ((Z >> i) & 1u) {
              q = first_end_after(ends, q, nends, r + 1);
              outp = static_cast<R*>(p.out) + (i0 + q);
            }
          }
        }
      }
    }
    if (F != 0) {
      pend_q = q_first;
      pend_v = head;
    }
  }

  // The begin/end form's walk: elements read from the input where they are (no staging).
  __device__ __forceinline__ void walk_direct(int a, int b, bool walks, const int* ends, int nends, A& acc,
                                              int& pend_q, A& pend_v) const {
    int q = 0;
    if (tid != 0 && walks) q = first_end_after(ends, 0, nends, a);
    int next_end = q < nends ? ends[q] : INT_MAX;
    std::int64_t cur_start = 0;  // argmin/argmax: the current segment's start (relative)
    if constexpr (kArg) cur_start = start_rel(ends, q);
    std::int64_t src = 0;  // input index of relative position 0 in the current segment
    if (walks && sm.i0 + q < p.num_segments) src = p.begin[sm.i0 + q] - start_rel(ends, q);

    // Segment q ends at ends[q] <= r: emit it, skip the empty ones ending there too.
    auto boundary = [&](int r) {
      const std::int64_t st = start_rel(ends, q);
      if (ends[q] > st) {
        if (pend_q < 0) {
          pend_q = q;
          pend_v = acc;
        } else {
          finish(ends, q, acc);
        }
      }
      acc = Tr::identity();
      ++q;
      if (q < nends && ends[q] <= r) q = first_end_after(ends, q + 1, nends, r);
      next_end = q < nends ? ends[q] : INT_MAX;
      if constexpr (kArg) cur_start = ends[q - 1];
      if (sm.i0 + q < p.num_segments) src = p.begin[sm.i0 + q] - ends[q - 1];
    };
    auto element = [&](T x, int r) {
      if constexpr (kArg) acc = f(acc, Tr::from_element(x, r - cur_start));
      else acc = f(acc, Tr::from_element(x, 0));
    };

    if (next_end >= b) {  // no segment ends inside (a, b): fold without checks
#pragma unroll 4
      for (int r = a; r < b; ++r) element(in()[src + r], r);
    } else {
#pragma unroll 1
      for (int r = a; r < b; ++r) {
        if (r >= next_end) boundary(r);
        element(in()[src + r], r);
      }
    }
    if (walks && b >= next_end) boundary(b);
  }

  // Staging of a tile at the array's first or last chunk: chunks partly outside [0, n) element by
  // element, only the elements of [j0c, j1c).
  __device__ __forceinline__ void stage_edge_tile(std::int64_t g0, int chunks, std::int64_t j0c, std::int64_t j1c) {
    using Layout = SwizzledTile<T>;
    for (int c = tid; c < chunks; c += kThreads) {
      const std::int64_t g = g0 + static_cast<std::int64_t>(c) * kVec;
      unsigned char* dst = sm.buf + Layout::chunk(c) * 16;
      if (g >= 0 && g + kVec <= p.n) {
        copy16_async(dst, in() + g);
      } else {
        T x[kVec];
#pragma unroll
        for (int e = 0; e < kVec; ++e) x[e] = g + e >= j0c && g + e < j1c ? in()[g + e] : T{};
        memcpy(dst, x, 16);
      }
    }
  }

  // One tile: ends [i0, i1), elements [j0, j1) (`tb`: the first diagonal of the block's tiles).
  // `running`: the partial of the segment open at the
  // tile's start, from the block's earlier tiles; updated to the one open at its end. `first`:
  // the block's first tile, which reads the flag (thread 0) while its loads are in flight;
  // returns false, having written nothing, when the flag is set. [pf_a, pf_b): elements to
  // prefetch into L2 once this tile's loads are issued.
  __device__ __forceinline__ bool tile(std::int64_t i0, std::int64_t j0, std::int64_t i1, std::int64_t j1,
                                       std::int64_t lo, std::int64_t hi, std::int64_t tb,
                                       bool first, unsigned& ticket, A& running, std::int64_t pf_a = 0,
                                       std::int64_t pf_b = 0) {
    const std::int64_t j0c = j0 < lo ? lo : (j0 > hi ? hi : j0);
    const std::int64_t j1c = j1 < j0c ? j0c : (j1 > hi ? hi : j1);
    const int ne = static_cast<int>(j1c - j0c);
    const int nends = static_cast<int>(i1 - i0);
    int h = 0, chunks = 0;
    if constexpr (kByOffsets) {
      h = static_cast<int>((reinterpret_cast<std::uintptr_t>(in() + j0c) & 15u) / sizeof(T));
      chunks = (h + ne + kVec - 1) / kVec;
    }
    int* ends = reinterpret_cast<int*>(sm.buf + ((chunks * 16 + 127) & ~127));
    if constexpr (kByOffsets) {
      sm.lmask[tid] = 0u;
      sm.zmask[tid] = 0u;
    }

    // Stage: elements (offsets form) and ends.
    if constexpr (kByOffsets) {
      using Layout = SwizzledTile<T>;
      const std::int64_t g0 = j0c - h;  // the input index of buffer position 0 (16-byte aligned address)
      if (g0 >= 0 && g0 + static_cast<std::int64_t>(chunks) * kVec <= p.n) {
        // Every chunk inside the array (all tiles but the array's first and last): thread tid's
        // chunks c = tid + k * kThreads sit at chunk(tid) + k * kThreads (the swizzle moves only
        // the low 3 bits, which k does not change), so one address each side plus immediates.
        static_assert(kThreads % 64 == 0, "chunk(tid + k * kThreads) = chunk(tid) + k * kThreads");
        const T* src = in() + g0 + tid * kVec;
        unsigned char* dst = sm.buf + Layout::chunk(tid) * 16;
#pragma unroll
        for (int k = 0; k < kChunksPerThread; ++k)
          if (tid + k * kThreads < chunks) copy16_async(dst + k * kThreads * 16, src + k * kThreads * kVec);
      } else {
        stage_edge_tile(g0, chunks, j0c, j1c);
      }
    }
    if constexpr (kByOffsets) {
      // The ends, and each thread's masks (walk_staged): end q at position pq > 0 marks position
      // pq - 1 of its owner (ends at 0 are thread 0's, handled before its walk). An empty
      // segment marks zmask; a segment whose start (the previous end) is another thread's is its
      // owner's first. (The barrier: the masks are zeroed.)
      __syncthreads();
      for (int q = tid; q < nends; q += kThreads) {
        const int pq = static_cast<int>(vend(i0 + q) - j0c);
        ends[q] = pq;
        if (pq > 0 && pq <= ne) {  // (always, for valid offsets; bad ones must not address outside)
          const std::int64_t prev = vstart(i0 + q) - j0c;
          const int o = (pq - 1 + h) >> kItemsLog2;
          const unsigned bit = 1u << ((pq - 1 + h) & (kItems - 1));
          if (pq == prev) {
            atomicOr(&sm.zmask[o], bit);
          } else {
            atomicOr(&sm.lmask[o], bit);
            // (One writer per owner for valid offsets; with bad ones several may write, the
            // block then exiting on the flag: an atomic store keeps that race-free.)
            if (prev <= 0 || static_cast<int>((prev - 1 + h) >> kItemsLog2) != o) atomicExch(&sm.firstq[o], q);
          }
        }
      }
    } else {
      for (int q = tid; q < nends; q += kThreads) ends[q] = static_cast<int>(vend(i0 + q) - j0c);
    }
    if (tid == 0) {
      if (pf_a < pf_b) tile_io::prefetch_l2(in() + pf_a, in() + pf_b);
      if (first) {
        const unsigned flag = load_acquire(p.header);
        // After the flag's read (acquire): the last block to take a ticket knows that every
        // block has read the flag, so it may clear it for the next call (at its end).
        ticket = atomicAdd(p.header + 1, 1u);
        sm.flag = static_cast<int>(flag);
      }
      sm.i0 = i0;
      sm.i1 = i1;
      sm.tb = tb;
      sm.j0c = j0c;
      sm.start0 = vstart(i0) - j0c;  // i0 <= num_segments: the offsets have that entry
    }
    if constexpr (kByOffsets) wait_copies();
    __syncthreads();
    if (sm.flag != 0) return false;

    // Walk: thread t's positions [a, b) relative to j0c; ends at (a, b] are its to emit (thread
    // 0's also at 0).
    int a = tid * kItems - h, b = a + kItems;
    a = a < 0 ? 0 : a;
    b = b > ne ? ne : b;
    const bool walks = a < b || tid == 0;
    if (!walks) a = b = 0;

    A acc = Tr::identity();
    int pend_q = -1;  // the first segment this thread ended: its carry comes from the scan
    A pend_v = Tr::identity();
    int pend_slot = -1;  // walk_in_place: where the pending segment's value is
    if constexpr (kByOffsets) {
      if (walks) {
        // Ends at position 0 (thread 0): segments that end before the tile's first element. The
        // first, if it began in earlier tiles, is their partials alone (pending, with nothing of
        // its own); the others are empty (written by the pass over the ends).
        if (tid == 0 && nends > 0 && ends[0] <= 0 && sm.start0 < 0) pend_q = 0;
        if constexpr (kInPlace) walk_in_place(a, b, h, acc, pend_q, pend_v, pend_slot);
        else if (sm.zmask[tid] == 0) walk_staged<false>(a, b, h, ends, nends, i0, j0c, acc, pend_q, pend_v);
        else walk_staged<true>(a, b, h, ends, nends, i0, j0c, acc, pend_q, pend_v);
      }
    } else {
      walk_direct(a, b, walks, ends, nends, acc, pend_q, pend_v);
    }

    // The carry into each thread, then the pending first segments.
    Carry total;
    const Carry ex = block_scan(Carry{acc, pend_q >= 0 ? 1 : 0}, total);
    if (pend_q >= 0) {
      const A carry = ex.f ? ex.v : (tid == 0 ? running : f(running, ex.v));
      const A v = f(carry, pend_v);
      const std::int64_t first_item = sm.i0 + pend_q + sm.j0c + start_rel(ends, pend_q);
      if (first_item < sm.tb) {
        // Began before this block's tiles: the earlier tiles' partials come first; folded after
        // the block's tiles (run()), out of the walk's way.
        sm.head_s = sm.i0 + pend_q;
        sm.head_v = v;
      } else if (kInPlace && pend_slot >= 0) {
        memcpy(sm.buf + pend_slot, &v, sizeof(A));  // written out below
      } else {
        finish(ends, pend_q, v);
      }
    }
    if constexpr (kInPlace) {
      // Every segment's result from its place (empty ones by the rule; not thread 0's pending
      // one that ended at position 0, nor a head, which the look-back finishes).
      __syncthreads();
      const std::int64_t head_s = sm.head_s;
      for (int k = tid; k < nends; k += kThreads) {
        const int pk = ends[k];
        const std::int64_t st = start_rel(ends, k);
        if (pk == st) {
          write_empty(i0 + k);
        } else if (pk > 0 && i0 + k != head_s) {
          A v;
          memcpy(&v, sm.buf + buf_offset(pk - 1 + h), sizeof(A));
          write_final(i0 + k, v, pk - st, 0);  // (not argmin/argmax: no input position needed)
        }
      }
    } else {
      // Empty segments.
      for (int k = tid; k < nends; k += kThreads)
        if (ends[k] == start_rel(ends, k)) write_empty(i0 + k);
    }
    running = total.f ? total.v : f(running, total.v);
    return true;
  }

  // The block's head segment s (begun in tile t0 < k, ended here; its partial over this block in
  // sm.head_v): the tail partials of tiles t0 .. k - 1 folded in order, then sm.head_v. Up to
  // kSegSmallFold by thread 0 alone, more by the block (thread u a contiguous run, then
  // block_reduce's fixed tree). All threads call it.
  __device__ __forceinline__ void fold_head(std::int64_t s, std::int64_t t0, std::int64_t k) {
    const std::int64_t m = k - t0;
    if (m <= tuning::kSegSmallFold) {
      if (tid == 0) write_final(s, f(fold_slots(t0, k, Tr::identity()), sm.head_v), vend(s) - vstart(s), base_of(s));
      return;
    }
    const std::int64_t per = (m + kThreads - 1) / kThreads;
    const std::int64_t u0 = t0 + tid * per, u1 = u0 + per < k ? u0 + per : k;
    A acc = u0 < u1 ? fold_slots(u0, u1, Tr::identity()) : Tr::identity();
    acc = block_reduce(acc, f, Tr::identity(), sm.reduce);
    if (tid == 0) write_final(s, f(acc, sm.head_v), vend(s) - vstart(s), base_of(s));
  }

  // The search for the split of diagonal d: the first s in [lo, hi) with s + vend(s) >= d (hi if
  // none), 257-ary: every thread probes one position per round. All threads call it.
  __device__ __forceinline__ std::int64_t search(std::int64_t d, std::int64_t lo, std::int64_t hi) const {
    while (true) {
      const std::int64_t span = hi - lo;
      if (span <= kThreads) {
        const bool below = tid < span && lo + tid + vend(lo + tid) < d;
        return lo + __syncthreads_count(below);
      }
      const std::int64_t probe = lo + span * (tid + 1) / (kThreads + 1);
      const int c = __syncthreads_count(probe + vend(probe) < d);
      const std::int64_t new_lo = c > 0 ? lo + span * c / (kThreads + 1) + 1 : lo;
      const std::int64_t new_hi = c < kThreads ? lo + span * (c + 1) / (kThreads + 1) : hi;
      lo = new_lo;
      hi = new_hi;
    }
  }

  // The block's end, on every path (every thread calls it): the offsets form's block zeroes the
  // two splits of each of its tiles; the last block to take a ticket writes *status and clears
  // the header.
  __device__ __forceinline__ void retire(std::int64_t k, unsigned ticket) const {
    if constexpr (kByOffsets) {
      const std::int64_t t0 = k * p.tiles_per_block;
      const std::int64_t t1 = t0 + p.tiles_per_block < p.tiles ? t0 + p.tiles_per_block : p.tiles;
      for (std::int64_t t = t0 + tid; t < t1; t += kThreads) {
        p.starts[t] = make_longlong2(0, 0);
        p.stops[t] = make_longlong2(0, 0);
      }
    }
    if (tid != 0) return;
    if (ticket == gridDim.x - 1) {
      if (p.status != nullptr) *p.status = sm.flag != 0 ? 1 : 0;
      p.header[0] = 0u;
      p.header[1] = 0u;
      p.header[2] = 0u;  // the validation kernel's boundary budget (segmented_reduce_prepare.cuh)
      p.header[3] = 0u;
    }
  }

  __device__ __forceinline__ void run() {
    const std::int64_t k = blockIdx.x;
    const std::int64_t S = p.num_segments;
    unsigned ticket = 0;
    A running = Tr::identity();
    std::int64_t te, tile_items = kTile;
    if (tid == 0) sm.head_s = -1;
    if constexpr (kByOffsets) {
      // Block k takes tiles t0 .. t0 + G - 1 (p.tiles_per_block, fewer at the end), carrying the partial of
      // the segment open between them in `running` (as the begin/end form does); its slot and
      // head are per block, so the look-back sees blocks of tile_items diagonals. Tile t + 1's
      // splits are copied into shared memory with tile t's elements, so that only the block's
      // first tile waits for its split before its copies (the split loads cost 16 us of 462 at
      // one tile a block, 2^22 segments; perf.md).
      // Only t lives in registers across tile(): the splits are loaded inside the iteration (8
      // registers carried from one tile to the next made the f32 / f16 sums spill 16-32 bytes at
      // 6 blocks per SM) and the block's last tile is read from shared memory (a barrier inside
      // tile() keeps the compiler from hoisting it).
      const std::int64_t t0 = k * p.tiles_per_block;
      if (tid == 0) sm.t_end = t0 + p.tiles_per_block < p.tiles ? t0 + p.tiles_per_block : p.tiles;
      const std::int64_t n = p.n;
      std::int64_t t = t0;
#pragma unroll 1
      do {
        const bool first = t == k * p.tiles_per_block;
        const longlong2 s0 = first ? p.starts[t] : sm.next_split[t & 1][0];
        const longlong2 s1 = first ? p.stops[t] : sm.next_split[t & 1][1];
        // Everything clamped so that, whatever the offsets hold (the flag is read later), every
        // address stays inside the input, the offsets and the shared buffer; valid offsets pass
        // unchanged. lo, hi: where the segments begin and end (reloaded each tile, from L1:
        // held across tile() they made the i32 / u32 means spill).
        std::int64_t lo = p.offsets[0], hi = p.offsets[S];
        lo = lo < 0 ? 0 : (lo > n ? n : lo);
        hi = hi < lo ? lo : (hi > n ? n : hi);
        const std::int64_t i0 = s0.x < 0 ? 0 : (s0.x > S ? S : s0.x);
        const std::int64_t j0 = s0.y < 0 ? 0 : (s0.y > n ? n : s0.y);
        const std::int64_t j1 = s1.y < j0 ? j0 : (s1.y > j0 + kTile ? j0 + kTile : (s1.y > n ? n : s1.y));
        const std::int64_t i_cap = i0 + (kTile - (j1 - j0)) < S ? i0 + (kTile - (j1 - j0)) : S;
        const std::int64_t i1 = s1.x < i0 ? i0 : (s1.x > i_cap ? i_cap : s1.x);
        // L2 prefetch of tile t + prefetch_tiles's elements (thread 0, issued in tile() after this
        // tile's own loads; a split already zeroed by its block gives an empty range).
        std::int64_t pf_a = 0, pf_b = 0;
        if (p.prefetch_tiles > 0 && tid == 0 && t + p.prefetch_tiles < p.tiles) {
          pf_a = p.starts[t + p.prefetch_tiles].y;
          pf_b = p.stops[t + p.prefetch_tiles].y;
          pf_a = pf_a < lo ? lo : pf_a;
          pf_b = pf_b > hi ? hi : pf_b;
        }
        if (!first) __syncthreads();  // the previous tile's buffer and next_split[t & 1] are read
        if (tid == 0 && t + 1 < sm.t_end) {  // waited for with this tile's elements (tile()'s wait_copies)
          copy16_async(&sm.next_split[(t + 1) & 1][0], p.starts + (t + 1));
          copy16_async(&sm.next_split[(t + 1) & 1][1], p.stops + (t + 1));
        }
        if (!tile(i0, j0, i1, j1, lo, hi, k * p.tiles_per_block * kTile, first, ticket, running, pf_a, pf_b))
          return retire(k, ticket);
      } while (++t < sm.t_end);
      tile_items = static_cast<std::int64_t>(p.tiles_per_block) * kTile;
      te = sm.t_end * kTile < p.n + S ? sm.t_end * kTile : p.n + S;
    } else {
      if (tid == 0) {
        const unsigned flag = load_acquire(p.header);
        ticket = atomicAdd(p.header + 1, 1u);
        sm.flag = static_cast<int>(flag);
      }
      __syncthreads();
      if (sm.flag != 0) return retire(k, ticket);
      const std::int64_t hi = p.offsets[S];  // the sum of the lengths
      const std::int64_t total = hi + S;
      const std::int64_t per_block = static_cast<std::int64_t>(kTile) * gridDim.x;
      const std::int64_t g = total > per_block ? (total + per_block - 1) / per_block : 1;
      tile_items = kTile * g;
      const std::int64_t tb = k * tile_items;
      if (tb >= total) return retire(k, ticket);
      te = tb + tile_items < total ? tb + tile_items : total;
      auto lower = [&](std::int64_t d) { return d - hi > 0 ? d - hi : 0; };
      std::int64_t i = search(tb, lower(tb), tb < S ? tb : S);
      std::int64_t j = tb - i;
      for (std::int64_t d = tb; d < te; d += kTile) {
        const std::int64_t dn = d + kTile < te ? d + kTile : te;
        const std::int64_t lo_i = lower(dn) > i ? lower(dn) : i;
        const std::int64_t hi_i = i + (dn - d) < S ? i + (dn - d) : S;
        const std::int64_t in_ = search(dn, lo_i, hi_i);
        if (d != tb) __syncthreads();  // the previous tile's buffer is free
        tile(i, j, in_, dn - in_, 0, hi, tb, false, ticket, running);
        i = in_;
        j = dn - in_;
      }
    }

    // The segment open at the block's end, if it has items here: its partial for the tile where
    // it ends. Then a head left to the whole block.
    if (tid == 0) {
      const std::int64_t i_last = sm.i1;
      if (i_last < S && i_last + vstart(i_last) < te) publish(k, running);
    }
    __syncthreads();
    if (sm.head_s >= 0) {
      const std::int64_t s = sm.head_s;
      fold_head(s, (s + vstart(s)) / tile_items, k);
    }
    retire(k, ticket);
  }
};

template <ReduceOp Op, class T, bool kByOffsets>
__global__ void __launch_bounds__(tuning::kSegThreads, (SegKernel<Op, T, kByOffsets>::kMinBlocks))
    segmented_reduce_kernel(const Params p) {
  using K = SegKernel<Op, T, kByOffsets>;
#if defined(FOLDKIT_SEG_EMULATION)
  typename K::Shared& sm = emu::block_shared<typename K::Shared>();
#else
  __shared__ typename K::Shared sm;
#endif
  K{p, sm, static_cast<int>(threadIdx.x)}.run();
}

#if defined(__CUDACC__)
template <ReduceOp Op, class T, bool kByOffsets>
void launch_main(const Params& p, unsigned grid, cudaStream_t stream) {
  segmented_reduce_kernel<Op, T, kByOffsets><<<grid, tuning::kSegThreads, 0, stream>>>(p);
}
#endif

// Every op of dtype T, both forms.
#define FOLDKIT_SEG_INSTANTIATE(T)                                                       \
  template void launch_main<ReduceOp::sum, T, true>(const Params&, unsigned, cudaStream_t);    \
  template void launch_main<ReduceOp::prod, T, true>(const Params&, unsigned, cudaStream_t);   \
  template void launch_main<ReduceOp::min, T, true>(const Params&, unsigned, cudaStream_t);    \
  template void launch_main<ReduceOp::max, T, true>(const Params&, unsigned, cudaStream_t);    \
  template void launch_main<ReduceOp::mean, T, true>(const Params&, unsigned, cudaStream_t);   \
  template void launch_main<ReduceOp::argmin, T, true>(const Params&, unsigned, cudaStream_t); \
  template void launch_main<ReduceOp::argmax, T, true>(const Params&, unsigned, cudaStream_t); \
  template void launch_main<ReduceOp::sum, T, false>(const Params&, unsigned, cudaStream_t);   \
  template void launch_main<ReduceOp::prod, T, false>(const Params&, unsigned, cudaStream_t);  \
  template void launch_main<ReduceOp::min, T, false>(const Params&, unsigned, cudaStream_t);   \
  template void launch_main<ReduceOp::max, T, false>(const Params&, unsigned, cudaStream_t);   \
  template void launch_main<ReduceOp::mean, T, false>(const Params&, unsigned, cudaStream_t);  \
  template void launch_main<ReduceOp::argmin, T, false>(const Params&, unsigned, cudaStream_t); \
  template void launch_main<ReduceOp::argmax, T, false>(const Params&, unsigned, cudaStream_t);

}  // namespace foldkit::cuda::seg
