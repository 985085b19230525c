// The single-pass scan kernel: one launch scans any n, each element read once and written once.
//
// One tile per block: block_threads * kItems consecutive elements, its index taken from a
// ticket when the block starts (scan_tile_state.cuh). The block
//  1. copies the tile into shared memory with asynchronous, coalesced (striped) copies, 16 bytes
//     each where alignment allows (scan_tile_io.cuh), and each thread reads back its kItems
//     consecutive elements (any alignment, any n: positions past n hold the identity);
//  2. folds its items, and scans the per-thread totals across the block (warp shuffles, then
//     the warp totals), which gives the tile aggregate;
//  3. publishes the aggregate, and (warp 0) looks back over the predecessors' states for the
//     tile's exclusive prefix, then publishes its inclusive prefix;
//  4. writes prefix-op-(its elements) through shared memory with coalesced stores.
// In the first wave of a call of several waves, a block waits before step 1 until an earlier
// tile has landed (tuning/scan_tuning.hpp, kFirstWaveLag), and a block of a long call asks the L2
// to prefetch a later tile's input (kPrefetchTiles).
// Every combine puts the earlier elements on the left, in a fixed order, so results are
// deterministic and the leftmost NaN wins for min/max as in the core's combine rules.
//
// Blocked and segmented scans (Heads = SegmentHeads) run through the same steps on (head, value)
// pairs: a head element restarts the scan (at init for exclusive scans). A tile that holds a
// head publishes its inclusive prefix at once (it does not depend on earlier tiles), and a tile
// whose first element is a head does not look back at all. Heads = NoHeads compiles to the
// whole-array scan with no head code. A blocked scan whose blocks are two or more whole tiles
// (heads.lines > 0) draws its tiles interleaved across the blocks, and where the whole-array
// scan defers its prefix (below) so does it: each block is then a whole-array scan of its own.
#pragma once

#include <cstdint>

#include <type_traits>

#include "foldkit/cuda/device/scan_tile_io.cuh"
#include "foldkit/cuda/device/scan_tile_state.cuh"
#include "foldkit/cuda/device/scan_trace.cuh"
#include "foldkit/cuda/device/segment_heads.cuh"
#include "foldkit/cuda/tuning/scan_tuning.hpp"
#include "foldkit/cuda/warp/warp_scan.cuh"

namespace foldkit::cuda {

// What a scan computes: input T, accumulator A, output O, the combine and its identity, and
// the conversions in and out.
template <class T, class A, class O, class Op>
struct ScanSpec {
  using input_type = T;
  using accum_type = A;
  using output_type = O;
  Op op{};
  __device__ __forceinline__ static A identity() { return Op::identity(); }
  // The identity as an input element (every op's identity is representable in T: -0, 1, +-inf or
  // an integer extreme), so that load(identity_input()) == identity().
  __device__ __forceinline__ static T identity_input() { return static_cast<T>(Op::identity()); }
  __device__ __forceinline__ static A load(T v) { return static_cast<A>(v); }
  __device__ __forceinline__ static O store(A v) { return static_cast<O>(v); }
};

// What a whole-array scan's storage holds instead of the segmented scan's head bits: nothing
// (one byte), so that its tiles can use the shared memory (tuning/scan_tuning.hpp).
struct NoTileHeads {};

template <class Policy, class Spec, bool kSegmented>
struct ScanSharedStorage {
  using T = typename Spec::input_type;
  using A = typename Spec::accum_type;
  using O = typename Spec::output_type;
  static constexpr int kThreads = Policy::kThreads;
  static constexpr int kTile = Policy::kTile;
  // The tile's inputs, then (in the same bytes) its outputs, in the swizzled layout of
  // scan_tile_io.cuh.
  static constexpr std::size_t kTileBytes = kTile * (sizeof(T) > sizeof(O) ? sizeof(T) : sizeof(O));
  alignas(16) unsigned char tile[kTileBytes];
  __device__ __forceinline__ T* in_tile() { return reinterpret_cast<T*>(tile); }
  __device__ __forceinline__ O* out_tile() { return reinterpret_cast<O*>(tile); }
  A warp_total[kThreads / 32];
  bool warp_head[kThreads / 32];  // segmented: the warp holds a head
  bool first_is_head;             // segmented: the tile's first element is a head
  std::conditional_t<kSegmented, TileHeadStorage<kTile>, NoTileHeads> heads;  // segmented by offsets: the head bits
  A lookback[Policy::kLookbackWindows][32];  // aggregates of whole windows passed over
  A prefix;  // the tile's exclusive prefix (from the look-back)
  unsigned tile_index;
  unsigned flag;
};

// Policy: a tuning::ScanPolicy (threads, items per thread, blocks per SM, look-back windows).
template <class Policy, bool kExclusive, class Spec, class Heads = NoHeads>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocksPerSM)
    scan_kernel(const typename Spec::input_type* in, std::int64_t n, typename Spec::output_type* out,
                typename Spec::accum_type init, ScanHeader* header,
                ScanTileSlots<typename Spec::accum_type>* slots, unsigned num_tiles, Spec spec, Heads heads = {}) {
  using T = typename Spec::input_type;
  using A = typename Spec::accum_type;
  using O = typename Spec::output_type;
  constexpr bool kSegmented = !std::is_same_v<Heads, NoHeads>;
  using Storage = ScanSharedStorage<Policy, Spec, kSegmented>;
  constexpr int kThreads = Policy::kThreads;
  constexpr int kItems = Policy::kItems;
  constexpr int kTile = Policy::kTile;
  // Whole-array scans whose outputs are their accumulators, at least as wide as their inputs:
  // the tile's prefix is applied in the store pass (below). So are blocked scans of such types
  // whose tickets interleave whole-tile blocks (heads.lines > 0, below): there a tile's only
  // possible head is its first element, in the first tile of a block, which then runs as a
  // whole-array scan's tile 0 (no look-back; an exclusive scan's prefix is init) and every other
  // tile as a whole-array tile whose look-back ends at its block's first tile.
  constexpr bool kDeferrable = Policy::kDeferredPrefix && std::is_same_v<A, O> && sizeof(T) <= sizeof(O);
  constexpr bool kDeferredPrefix = kDeferrable && !kSegmented;
  // The deferred store pass's unroll (scan_tile_io.cuh, store_tile): the most that spilled
  // nothing at these kernels' register caps (ptxas, sm_90, found by trial).
  constexpr int kDeferredStoreUnroll = sizeof(O) >= 8 ? 2 : 4;
  __shared__ Storage smem;
  const unsigned tid = threadIdx.x;
  const unsigned lane = tid & 31u, warp = tid >> 5;

  if (tid == 0) {
    trace_point(spec, kScanTraceStart);
    const unsigned long long drawn = atomicAdd(&header->ticket_and_epoch, 1ull);
    const auto index = static_cast<unsigned>(drawn);
    const unsigned flag_now = static_cast<unsigned>(drawn >> 32) + 1u;
    smem.tile_index = index;
    smem.flag = flag_now;
    // The call's last ticket: every block has drawn; close the call (next epoch, ticket 0).
    if (index == num_tiles - 1) header->ticket_and_epoch = static_cast<unsigned long long>(flag_now) << 32;
  }
  __syncthreads();
  // The tile a ticket stands for: the same in array order or, in a blocked scan whose blocks are
  // whole tiles (heads.lines > 0), tile t / lines of block t % lines. A tile's predecessor in its
  // block then drew its ticket `lines` tickets earlier and has most often landed by the time the
  // tile looks back; in array order a block of many tiles was a chain as long as a whole-array
  // scan's, and even blocks of two tiles waited for the neighbour's load (H200, f32 cumsum over
  // dim 1 of 2^26 elements: 94 % of the copy ceiling for rows of up to 4096, 89.7 for rows of
  // 2^14, 86.0 for 2^18, 81.4 for 2^22; interleaved and deferred, 92.2, 92.2 and 88.3). Slots
  // and the look-back go by the tile, not the ticket.
  auto tile_of = [&](unsigned t) -> unsigned {
    if constexpr (kSegmented) {
      if (heads.lines > 0) return (t % heads.lines) * (num_tiles / heads.lines) + t / heads.lines;
    }
    return t;
  };
  const unsigned ticket = smem.tile_index;
  const unsigned flag = smem.flag;
  const unsigned tile = tile_of(ticket);
  const std::int64_t base = static_cast<std::int64_t>(tile) * kTile;
  bool deferred = kDeferredPrefix;  // the deferred prefix (3-4 below)
  bool chain_start = tile == 0;     // deferred: the tile starts a chain of tiles (a whole array or block)
  if constexpr (kSegmented && kDeferrable) {
    deferred = heads.lines > 0;
    chain_start = ticket < heads.lines;
  }
  const int valid = static_cast<int>(n - base < kTile ? n - base : kTile);
  // One wave of resident tiles (%nsmid stands in for the SM count).
  const unsigned wave = static_cast<unsigned>(Policy::kMinBlocksPerSM) * tile_io::sm_id_count();
  if constexpr (Policy::kFirstWaveLag > 0) {
    // The first wave's later tiles wait for earlier ones to land (tuning/scan_tuning.hpp).
    const unsigned lag = wave * Policy::kFirstWaveLag / 8;
    if (ticket >= lag && ticket < wave && num_tiles > wave) {
      if (tid == 0) wait_for_publication(slots, tile_of(ticket - lag), flag);
      __syncthreads();
    }
  }
  if constexpr (Policy::kPrefetchTiles > 0) {
    // The input of the tile a block will draw kPrefetchTiles tickets later, into L2 now (one
    // bulk prefetch), in calls of at least kPrefetchMinWaves waves. One thread asks, not thread
    // 0, which has just drawn the ticket.
    if (tid == 32 && num_tiles >= tuning::kPrefetchMinWaves * wave) {
      const std::int64_t ahead_ticket = static_cast<std::int64_t>(ticket) + Policy::kPrefetchTiles;
      if (ahead_ticket < num_tiles) {
        const std::int64_t ahead = static_cast<std::int64_t>(tile_of(static_cast<unsigned>(ahead_ticket))) * kTile;
        tile_io::prefetch_l2(in + ahead, in + (n - ahead < kTile ? n : ahead + kTile));
      }
    }
  }

  // The items are read from the tile twice, 16 bytes at a time (for the fold, and after the
  // look-back for the outputs), rather than held in registers: that keeps the kernel within its
  // register budget (tuning/scan_tuning.hpp) at any number of items.
  constexpr int kVecIn = SwizzledTile<T>::kVec;
  auto read_chunk = [&](int j, T (&x)[kVecIn]) { read_thread_chunk<kItems>(smem.in_tile(), static_cast<int>(tid), j, x); };
  // All of this thread's items at once (the widening scans: their outputs overwrite other
  // threads' inputs, so every input is read before any output is written).
  auto read_all_items = [&](T (&x)[kItems]) {
#pragma unroll
    for (int j = 0; j < kItems / kVecIn; ++j) {
      T c[kVecIn];
      read_chunk(j, c);
#pragma unroll
      for (int e = 0; e < kVecIn; ++e) x[j * kVecIn + e] = c[e];
    }
  };
  // A head restarts the running value: at the element (inclusive) or at init (exclusive).
  auto restart = [&](A x) { return kExclusive ? spec.op(init, x) : x; };

  // 1. Asynchronous striped copies into shared memory; the head search of a segmented scan runs
  // while they land. Then each thread reads its kItems consecutive elements (positions past n
  // hold the identity, so no bounds tests follow).
  start_tile_load<kThreads, kTile>(in + base, valid, spec.identity_input(), smem.in_tile());
  if constexpr (kSegmented) {
    if (heads.offsets != nullptr) mark_offset_heads<kThreads, kTile>(heads, base, valid, smem.heads);
  }
  tile_io::wait_all_copies();
  __syncthreads();
  if (tid == 0) trace_point(spec, kScanTraceLoaded);
  unsigned head_mask = 0;  // bit k: item k starts a block or segment
  if constexpr (kSegmented) {
    if (!deferred) {  // deferred: no heads (the block's start is the chain's)
      head_mask = thread_head_mask<kItems, kTile>(heads, base, tid, smem.heads);
      if (tid == 0) smem.first_is_head = (head_mask & 1u) != 0;
    }
  }

  // 2. Thread fold, then the block scan of thread totals (pairs (head, value) when segmented).
  A thread_total;
#pragma unroll
  for (int j = 0; j < kItems / kVecIn; ++j) {
    T x[kVecIn];
    read_chunk(j, x);
#pragma unroll
    for (int e = 0; e < kVecIn; ++e) {
      const int k = j * kVecIn + e;
      const A v = spec.load(x[e]);
      if (k == 0) thread_total = (head_mask & 1u) ? restart(v) : v;
      else thread_total = ((head_mask >> k) & 1u) ? restart(v) : spec.op(thread_total, v);
    }
  }
  bool warp_head = head_mask != 0;  // after the scan: a head in this lane or an earlier one
  A warp_inclusive;
  if constexpr (kSegmented) warp_inclusive = warp_inclusive_segmented_scan(thread_total, warp_head, spec.op);
  else warp_inclusive = warp_inclusive_scan(thread_total, spec.op);
  if (lane == 31) {
    smem.warp_total[warp] = warp_inclusive;
    if constexpr (kSegmented) smem.warp_head[warp] = warp_head;
  }
  __syncthreads();
  A warp_prefix = spec.identity();  // fold of the warps before this one (since their last head)
  A tile_aggregate = spec.identity();
  bool warp_prefix_head = false, tile_head = false;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) {
    const A t = smem.warp_total[w];
    const bool h = kSegmented && smem.warp_head[w];
    if (w < static_cast<int>(warp)) {
      warp_prefix = (w == 0 || h) ? t : spec.op(warp_prefix, t);
      warp_prefix_head = warp_prefix_head || h;
    }
    tile_aggregate = (w == 0 || h) ? t : spec.op(tile_aggregate, t);
    tile_head = tile_head || h;
  }
  // The exclusive prefix of this thread within the tile, and whether a head lies in it.
  A thread_prefix = shfl_up_any(warp_inclusive, 1);
  bool thread_prefix_head = false;
  if constexpr (kSegmented) thread_prefix_head = __shfl_up_sync(0xffffffffu, static_cast<int>(warp_head), 1) != 0;
  if (lane == 0) {
    thread_prefix = warp_prefix;
    thread_prefix_head = warp_prefix_head;
  } else if (warp > 0 && !thread_prefix_head) {
    thread_prefix = spec.op(warp_prefix, thread_prefix);
    thread_prefix_head = warp_prefix_head;
  }
  const bool has_thread_prefix = lane != 0 || warp != 0;

  if constexpr (kDeferrable) if (deferred) {  // (compiled only for the types it applies to)
    // 3-4, deferred: tid 0 publishes and warp 0 looks back, then writes its items' final
    // values; meanwhile every other warp writes its items' values within the tile (from its
    // thread prefix: every thread past warp 0 has one). The store pass then puts the tile's
    // prefix on the left of those: out = prefix op (fold within the tile), the same combines in
    // the same order on every call. So the look-back's wait overlaps the element pass, and only
    // one pass over the tile (load, combine, store) follows it.
    const bool has_tile_prefix = !chain_start || kExclusive;
    if (chain_start) {
      if (tid == 0 && tile + 1 < num_tiles)
        publish_scan_slot(slots[tile].inclusive, kExclusive ? spec.op(init, tile_aggregate) : tile_aggregate, flag);
    } else if (tid == 0) {
      publish_scan_slot(slots[tile].aggregate, tile_aggregate, flag);
    }
    if (tid == 0) trace_point(spec, kScanTracePublished);
    A running = thread_prefix;
    bool has_running = has_thread_prefix;
    if (warp == 0) {
      A prefix = kExclusive ? init : spec.identity();
      if (!chain_start) {
        prefix = look_back<Policy::kLookbackWindows, Policy::kTreeFold>(slots, tile, flag, spec.op, smem.lookback);
        if (tid == 0 && tile + 1 < num_tiles) publish_scan_slot(slots[tile].inclusive, spec.op(prefix, tile_aggregate), flag);
      }
      if (tid == 0) {
        smem.prefix = prefix;
        trace_point(spec, kScanTracePrefix);
      }
      if (has_tile_prefix) {
        running = has_thread_prefix ? spec.op(prefix, thread_prefix) : prefix;
        has_running = true;
      }
    }
    constexpr int kVecOut = SwizzledTile<O>::kVec;
    auto write_outputs = [&](int j, const T (&x)[kVecOut]) {
      O chunk[kVecOut];
#pragma unroll
      for (int e = 0; e < kVecOut; ++e) {
        const A v = spec.load(x[e]);
        if constexpr (kExclusive) {
          chunk[e] = running;
          running = spec.op(running, v);
        } else {
          running = (j == 0 && e == 0 && !has_running) ? v : spec.op(running, v);
          chunk[e] = running;
        }
      }
      write_thread_chunk<kItems>(smem.out_tile(), static_cast<int>(tid), j, chunk);
    };
    if constexpr (sizeof(T) == sizeof(O)) {
      // In place: a thread's outputs replace its own inputs.
#pragma unroll
      for (int j = 0; j < kItems / kVecOut; ++j) {
        T x[kVecOut];
        read_chunk(j, x);
        write_outputs(j, x);
      }
    } else {
      // Widening (32-bit sums to 64): warp w's outputs fill the bytes that held the inputs of
      // warps 2w and 2w + 1 (the swizzle moves chunks only within 128-byte groups, and a warp's
      // inputs are whole groups). Every thread reads its items first. Warps 1.. then wait for
      // one another (barrier 1) but not for the look-back; warp 0 writes once warp 1 has read
      // (barrier 2: the others arrive, warp 0 waits). Holding the items from the fold instead
      // spilled (docs/perf-log/2026-11-25.md, fifth session).
      static_assert(sizeof(O) == 2 * sizeof(T) && 32 * kItems * sizeof(T) % 128 == 0,
                    "a warp's inputs are whole 128-byte swizzle groups");
      T x[kItems];
      read_all_items(x);
      if (warp == 0) {
        tile_io::named_barrier_sync<2, kThreads>();
      } else {
        tile_io::named_barrier_arrive<2, kThreads>();
        tile_io::named_barrier_sync<1, kThreads - 32>();
      }
#pragma unroll
      for (int j = 0; j < kItems / kVecOut; ++j) {
        T c[kVecOut];
#pragma unroll
        for (int e = 0; e < kVecOut; ++e) c[e] = x[j * kVecOut + e];
        write_outputs(j, c);
      }
    }
    __syncthreads();
    // Warp 0's chunks are final; every later chunk takes the tile's prefix (none before
    // element 0 of an inclusive scan).
    constexpr int kFinalChunks = 32 * kItems / kVecOut;
    const A tile_prefix = smem.prefix;
    store_tile<kThreads, kTile, kDeferredStoreUnroll>(smem.out_tile(), valid, out + base, [&](int chunk, O v) {
      return (chunk < kFinalChunks || !has_tile_prefix) ? v : spec.op(tile_prefix, v);
    });
    if (tid == 0) {
      trace_point(spec, kScanTraceStored);
      trace_flush(spec, tile);
    }
    return;
  }

  // 3. Publish and look back. Whole-array scans: inclusive prefixes include `init`, so
  // exclusive scans start at it. Segmented: a tile with a head publishes its inclusive prefix
  // (the fold since its last head) at once; one starting with a head needs no prefix.
  bool has_tile_prefix;
  if constexpr (kSegmented) {
    has_tile_prefix = !smem.first_is_head;
    if (tid == 0) {
      if (tile_head) {
        if (tile + 1 < num_tiles) publish_scan_slot(slots[tile].inclusive, tile_aggregate, flag);
      } else {
        publish_scan_slot(slots[tile].aggregate, tile_aggregate, flag);
      }
    }
    if (has_tile_prefix && warp == 0) {
      const A prefix = look_back<Policy::kLookbackWindows, Policy::kTreeFold>(slots, tile, flag, spec.op, smem.lookback);
      if (tid == 0) {
        if (!tile_head && tile + 1 < num_tiles)
          publish_scan_slot(slots[tile].inclusive, spec.op(prefix, tile_aggregate), flag);
        smem.prefix = prefix;
      }
    }
  } else {
    has_tile_prefix = tile != 0 || kExclusive;
    if (tile == 0) {
      if (tid == 0) {
        const A inclusive = kExclusive ? spec.op(init, tile_aggregate) : tile_aggregate;
        if (num_tiles > 1) publish_scan_slot(slots[0].inclusive, inclusive, flag);
        smem.prefix = kExclusive ? init : spec.identity();
      }
    } else {
      if (tid == 0) publish_scan_slot(slots[tile].aggregate, tile_aggregate, flag);
      if (warp == 0) {
        const A prefix = look_back<Policy::kLookbackWindows, Policy::kTreeFold>(slots, tile, flag, spec.op, smem.lookback);
        if (tid == 0) {
          if (tile + 1 < num_tiles) publish_scan_slot(slots[tile].inclusive, spec.op(prefix, tile_aggregate), flag);
          smem.prefix = prefix;
        }
      }
    }
  }
  __syncthreads();
  if (tid == 0) trace_point(spec, kScanTracePrefix);
  // The value before this thread's first item; none only before element 0 of an inclusive
  // scan or, segmented, before a thread whose first item is a head.
  A running = spec.identity();
  bool has_running = true;
  if (thread_prefix_head) running = thread_prefix;
  else if (has_tile_prefix) running = has_thread_prefix ? spec.op(smem.prefix, thread_prefix) : smem.prefix;
  else if (has_thread_prefix) running = thread_prefix;
  else has_running = false;

  // 4. This thread's outputs, through shared memory (blocked in, striped out), 16 bytes at a
  // time. An output as wide as the input replaces it in place (each thread's output chunks are
  // its own input chunks); a wider one (32-bit sums widen to 64) overlaps other threads'
  // inputs, so every thread reads its inputs before any output is written.
  auto output = [&](int k, A x) -> O {
    const bool head = ((head_mask >> k) & 1u) != 0;
    A value;
    if constexpr (kExclusive) {
      value = head ? init : running;
      running = head ? spec.op(init, x) : spec.op(running, x);
    } else {
      running = (head || (k == 0 && !has_running)) ? x : spec.op(running, x);
      value = running;
    }
    return spec.store(value);
  };
  constexpr int kVecOut = SwizzledTile<O>::kVec;
  if constexpr (sizeof(O) == sizeof(T)) {
#pragma unroll
    for (int j = 0; j < kItems / kVecIn; ++j) {
      T x[kVecIn];
      read_chunk(j, x);
      O chunk[kVecOut];
#pragma unroll
      for (int e = 0; e < kVecOut; ++e) chunk[e] = output(j * kVecIn + e, spec.load(x[e]));
      write_thread_chunk<kItems>(smem.out_tile(), static_cast<int>(tid), j, chunk);
    }
  } else {
    T x[kItems];
    read_all_items(x);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kItems / kVecOut; ++j) {
      O chunk[kVecOut];
#pragma unroll
      for (int e = 0; e < kVecOut; ++e) chunk[e] = output(j * kVecOut + e, spec.load(x[j * kVecOut + e]));
      write_thread_chunk<kItems>(smem.out_tile(), static_cast<int>(tid), j, chunk);
    }
  }
  __syncthreads();
  store_tile<kThreads, kTile>(smem.out_tile(), valid, out + base);
  if (tid == 0) {
    trace_point(spec, kScanTraceStored);
    trace_flush(spec, tile);
  }
}

}  // namespace foldkit::cuda
