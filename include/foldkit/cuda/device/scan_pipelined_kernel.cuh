// The whole-array scan kernel: persistent blocks that keep loads two tiles ahead and publish each
// tile's aggregate before they look back on the tile before it. Each element is read once from
// DRAM and written once.
//
// Why: a block that loads one tile and then waits (for its ticket, for the look-back, for its
// stores) has no load in flight for most of its life, and the scan then runs below the copy
// rate. Holding the next tile is not enough by itself: a block that holds a tile it has not yet
// reduced while it waits in a look-back delays that tile's aggregate, every later tile's
// look-back waits for it, and the look-backs chain one after another (measured 2026-11-23: 45 ns
// per tile, 4x slower than CUB). So here, in step k a block
//   1. starts the loads of tile k + 2 into shared memory (cp.async, one stage of three),
//   2. reduces tile k + 1 (loaded a step ago) and publishes its aggregate,
//   3. looks back for tile k, anchored at its own previous tile (whose inclusive prefix it knows,
//      so it waits only for aggregates, never for another block's look-back), and
//   4. writes tile k's outputs from shared memory with 16-byte stores.
// No aggregate ever waits for a look-back, so no look-back waits for another.
//
// Tile layout. A tile is kThreads * kRows 16-byte vectors of T (kVec elements each). Vector q of
// the tile is row q / 32 of 32 vectors, and warp w owns rows [w * kRows, (w + 1) * kRows): lane
// l of warp w holds vector (w * kRows + r) * 32 + l as its row r. Each row is one coalesced
// 512-byte access per warp, each thread copies into shared memory exactly the vectors it later
// reads (so the stages need no barrier), and each warp scans its rows with shuffles.
//
// Alignment. Tiles sit on a grid skewed by `skew` = (in mod 16) / sizeof(T) elements, so that
// every tile but the first starts on a 16-byte boundary of the input: tile t covers elements
// [t * kTile - skew, (t + 1) * kTile - skew) of [0, n). Full tiles copy 16-byte vectors; the
// first and last tiles are loaded element by element, positions outside [0, n) holding the
// identity. Outputs go out as 16-byte vectors when the output lines up the same way
// (vector_out), else element by element.
//
// Tickets. A block draws ticket indices d0 < d1 < ... from the workspace header (one 64-bit word:
// the index and the call's epoch) and processes them in order. It draws d0, d1, d2 at once, then
// d(k+3) in step k; the loop ends after the step whose next ticket is invalid (>= num_tiles). So
// every block makes exactly three invalid draws and a call makes num_tiles + 3 * gridDim.x draws;
// the block that draws the last index closes the call (next epoch, ticket 0), as in
// scan_tile_state.cuh. A block holds only tiles it drew, and a look-back only waits for smaller
// tickets, whose blocks are running: forward progress on any GPU, with concurrent calls.
//
// Determinism: in-tile combines follow a fixed tree (element, row, warp, tile) with the earlier
// part on the left, and every tile prefix is the left fold of all tile aggregates before it
// (whether it came from a published inclusive prefix or from the anchor); the result does not
// depend on which block drew which tile.
//
// Positions outside [0, n) and missing prefixes are the identity: for every op, op(identity, x)
// is x bit for bit unless x is a NaN (then it is a NaN), so only stores test positions.
#pragma once

#include <cstdint>
#include <cstring>

#include "foldkit/cuda/device/scan_kernel.cuh"  // ScanSpec
#include "foldkit/cuda/device/scan_tile_state.cuh"
#include "foldkit/cuda/warp/warp_scan.cuh"

namespace foldkit::cuda {

// Geometry of a tile of the pipelined kernel (see the layout above).
template <class Policy, class T>
struct PipelinedTile {
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  static constexpr int kRows = Policy::kRows;
  static constexpr int kThreads = Policy::kThreads;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kVectors = kThreads * kRows;
  static constexpr int kElements = kVectors * kVec;
  static constexpr int kStages = 3;  // tile k (being written), k + 1 (being reduced), k + 2 (loading)
  static_assert(16 % sizeof(T) == 0 && kThreads % 32 == 0);
  // Vector index within the tile of row r of (warp, lane).
  __device__ __forceinline__ static int vector(int warp, int lane, int r) { return (warp * kRows + r) * 32 + lane; }
  // Dynamic shared memory of the stages.
  static constexpr std::size_t stage_bytes() { return static_cast<std::size_t>(kStages) * kVectors * 16; }
};

template <class Policy, class Spec>
struct PipelinedScanShared {
  using A = typename Spec::accum_type;
  A warp_total[Policy::kThreads / 32];
  A lookback[Policy::kLookbackWindows][32];
  // Step k writes slot k % 2 before its barrier and everyone reads it after: the next write to
  // the same slot (step k + 2) comes after step k + 1's barrier.
  A prefix[2];
  unsigned long long newest_draw[2];
  unsigned long long first_draws[3];  // d0, d1, d2
};

template <class Spec>
struct PipelinedScanArgs {
  const typename Spec::input_type* in;
  typename Spec::output_type* out;
  std::int64_t n;
  typename Spec::accum_type init;  // exclusive scans start here
  ScanHeader* header;
  ScanTileSlots<typename Spec::accum_type>* slots;
  unsigned num_tiles;  // ceil((n + skew) / kTile)
  unsigned last_draw;  // num_tiles + 3 * gridDim.x - 1
  int skew;            // (in mod 16) / sizeof(T)
  bool vector_out;     // outputs of full tiles start 16-byte aligned
};

namespace pipelined {

template <class T, int kVec>
__device__ __forceinline__ T element_of(const uint4& v, int j) {
  T x[kVec];
  memcpy(x, &v, 16);
  return x[j];
}

__device__ __forceinline__ void copy_async_16(uint4* dst, const void* src) {
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(src) : "memory");
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most `kPending` of this thread's newest copy groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Starts loading the tile whose first element is at index `base` (negative for tile 0 when
// skewed) into `stage`: this thread's kRows vectors. Full tiles: asynchronous 16-byte copies;
// the first and last tiles element by element, positions outside [0, n) holding `fill`. Always
// commits one copy group (possibly empty), so that groups and tiles stay in step.
template <class Geo, class T>
__device__ __forceinline__ void start_tile(const T* in, std::int64_t n, std::int64_t base, T fill, uint4* stage,
                                           int warp, int lane) {
  if (base >= 0 && base + Geo::kElements <= n) {
#pragma unroll
    for (int r = 0; r < Geo::kRows; ++r) {
      const int q = Geo::vector(warp, lane, r);
      copy_async_16(stage + q, in + base + static_cast<std::int64_t>(q) * Geo::kVec);
    }
  } else {
#pragma unroll
    for (int r = 0; r < Geo::kRows; ++r) {
      const int q = Geo::vector(warp, lane, r);
      T x[Geo::kVec];
#pragma unroll
      for (int j = 0; j < Geo::kVec; ++j) {
        const std::int64_t i = base + static_cast<std::int64_t>(q) * Geo::kVec + j;
        x[j] = (i >= 0 && i < n) ? in[i] : fill;
      }
      memcpy(&stage[q], x, 16);
    }
  }
  commit_copies();
}

}  // namespace pipelined

// Policy: kThreads, kRows (16-byte vectors per thread per tile), kMinBlocksPerSM,
// kLookbackWindows, kSleepNs (look-back backoff). Launch with gridDim.x <= num_tiles blocks and
// PipelinedTile<Policy, T>::stage_bytes() of dynamic shared memory; the header's ticket at 0 for
// the first call on a workspace.
template <class Policy, bool kExclusive, class Spec>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocksPerSM)
    scan_pipelined_kernel(const PipelinedScanArgs<Spec> args, Spec spec) {
  using T = typename Spec::input_type;
  using A = typename Spec::accum_type;
  using O = typename Spec::output_type;
  using Geo = PipelinedTile<Policy, T>;
  constexpr int kRows = Geo::kRows, kVec = Geo::kVec, kWarps = Geo::kWarps, kTile = Geo::kElements;
  __shared__ PipelinedScanShared<Policy, Spec> smem;
  extern __shared__ uint4 stages[];  // kStages x kVectors
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;
  const std::int64_t n = args.n;
  const unsigned num_tiles = args.num_tiles;
  const T fill = Spec::identity_input();

  // A draw, by thread 0: the index in the low half, the epoch in the high half.
  auto draw = [&] { return atomicAdd(&args.header->ticket_and_epoch, 1ull); };
  // The call's last draw closes it: every other draw of the call has been made.
  auto close_if_last = [&](unsigned long long drawn) {
    if (static_cast<unsigned>(drawn) == args.last_draw)
      args.header->ticket_and_epoch = static_cast<unsigned long long>(static_cast<unsigned>(drawn >> 32) + 1u) << 32;
  };
  auto tile_base = [&](unsigned tile) { return static_cast<std::int64_t>(tile) * kTile - args.skew; };
  auto stage_of = [&](int k) { return stages + (k % Geo::kStages) * Geo::kVectors; };
  auto value = [&](const uint4* stage, int r, int j) {
    return Spec::load(pipelined::element_of<T, kVec>(stage[Geo::vector(warp, lane, r)], j));
  };

  if (tid == 0) {
    unsigned long long d[3];
#pragma unroll
    for (int k = 0; k < 3; ++k) d[k] = draw();
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      close_if_last(d[k]);
      smem.first_draws[k] = d[k];
    }
  }
  __syncthreads();
  const unsigned flag = static_cast<unsigned>(smem.first_draws[0] >> 32) + 1u;
  unsigned cur = static_cast<unsigned>(smem.first_draws[0]);    // tile k
  unsigned next = static_cast<unsigned>(smem.first_draws[1]);   // tile k + 1
  unsigned ahead = static_cast<unsigned>(smem.first_draws[2]);  // tile k + 2
  if (cur >= num_tiles) return;  // (d1 and d2 are invalid too: this block's three)

  // Reduces the tile in `stage` (index `tile`): each row's lane totals, the warp's inclusive scan
  // of them, and for this lane the fold of the warp's elements before its part of row r
  // (in_warp[r]); then the warp totals, this warp's prefix within the tile, and the tile
  // aggregate, which thread 0 publishes (tile 0: its inclusive prefix, init included).
  auto reduce_tile = [&](const uint4* stage, unsigned tile, A (&in_warp)[kRows], A& warp_prefix) {
    A rows_before = Spec::identity();
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      A t = value(stage, r, 0);
#pragma unroll
      for (int j = 1; j < kVec; ++j) t = spec.op(t, value(stage, r, j));
      const A inclusive = warp_inclusive_scan(t, spec.op);
      const A lanes_before = __shfl_up_sync(0xffffffffu, inclusive, 1);
      in_warp[r] = lane > 0 ? spec.op(rows_before, lanes_before) : rows_before;
      rows_before = spec.op(rows_before, __shfl_sync(0xffffffffu, inclusive, 31));
    }
    if (lane == 0) smem.warp_total[warp] = rows_before;
    __syncthreads();  // warp totals
    A tile_aggregate = smem.warp_total[0];
    warp_prefix = Spec::identity();
#pragma unroll
    for (int w = 1; w < kWarps; ++w) {
      if (w == warp) warp_prefix = tile_aggregate;
      tile_aggregate = spec.op(tile_aggregate, smem.warp_total[w]);
    }
    if (tid == 0) {
      if (tile == 0) {
        if (num_tiles > 1)
          publish_scan_slot(args.slots[0].inclusive, kExclusive ? spec.op(args.init, tile_aggregate) : tile_aggregate,
                            flag);
      } else {
        publish_scan_slot(args.slots[tile].aggregate, tile_aggregate, flag);
      }
    }
    return tile_aggregate;
  };

  // Prologue: tiles 0 and 1 of this block start loading; tile 0 is reduced.
  pipelined::start_tile<Geo>(args.in, n, tile_base(cur), fill, stage_of(0), warp, lane);
  if (next < num_tiles) pipelined::start_tile<Geo>(args.in, n, tile_base(next), fill, stage_of(1), warp, lane);
  else pipelined::commit_copies();
  pipelined::wait_copies<1>();
  A in_warp_cur[kRows], in_warp_next[kRows];
  A warp_prefix_cur, warp_prefix_next = Spec::identity();
  A aggregate_cur = reduce_tile(stage_of(0), cur, in_warp_cur, warp_prefix_cur);
  A aggregate_next = Spec::identity();
  __syncthreads();  // the prologue's warp totals are read before step 0 writes them again
  long long anchor = -1;  // this block's previous tile, and its inclusive prefix
  A anchor_value = Spec::identity();

  for (int k = 0;; ++k) {
    // 1. Tile k + 2 starts loading; thread 0 draws tile k + 3.
    if (ahead < num_tiles) pipelined::start_tile<Geo>(args.in, n, tile_base(ahead), fill, stage_of(k + 2), warp, lane);
    else pipelined::commit_copies();
    unsigned long long drawn = 0;
    if (tid == 0) drawn = draw();
    // 2. Tile k + 1 (its copies are done: only tile k + 2's may be in flight) is reduced and its
    //    aggregate published.
    pipelined::wait_copies<1>();
    if (next < num_tiles) aggregate_next = reduce_tile(stage_of(k + 1), next, in_warp_next, warp_prefix_next);
    // 3. Tile k's prefix: tile 0 has none (or init); others look back (warp 0) to the anchor.
    if (warp == 0) {
      A prefix = kExclusive ? args.init : Spec::identity();
      if (cur != 0) {
        prefix = look_back<Policy::kLookbackWindows, Policy::kSleepNs, Policy::kLookbackBatch>(
            args.slots, cur, flag, spec.op, smem.lookback, anchor, anchor_value);
      }
      if (tid == 0) {
        const A inclusive = spec.op(prefix, aggregate_cur);
        if (cur != 0 && cur + 1 < num_tiles) publish_scan_slot(args.slots[cur].inclusive, inclusive, flag);
        smem.prefix[k & 1] = prefix;
        close_if_last(drawn);
        smem.newest_draw[k & 1] = drawn;
      }
    }
    __syncthreads();  // prefix and ticket
    const A tile_prefix = smem.prefix[k & 1];
    const unsigned after = static_cast<unsigned>(smem.newest_draw[k & 1]);
    anchor = cur;
    anchor_value = spec.op(tile_prefix, aggregate_cur);  // tile 0, exclusive: init folded in
    if (cur == 0 && !kExclusive) anchor_value = aggregate_cur;

    // 4. Tile k's outputs: the prefix, then this lane's elements left to right.
    const uint4* stage = stage_of(k);
    const A block_prefix = spec.op(tile_prefix, warp_prefix_cur);
    const std::int64_t base = tile_base(cur);
    const bool full = base >= 0 && base + kTile <= n;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      A running = spec.op(block_prefix, in_warp_cur[r]);
      O outs[kVec];
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        if (kExclusive) {
          outs[j] = Spec::store(running);
          running = spec.op(running, value(stage, r, j));
        } else {
          running = spec.op(running, value(stage, r, j));
          outs[j] = Spec::store(running);
        }
      }
      const std::int64_t first = base + static_cast<std::int64_t>(Geo::vector(warp, lane, r)) * kVec;
      O* dst = args.out + first;
      if (full && args.vector_out) {
        static_assert(kVec * sizeof(O) % 16 == 0);
#pragma unroll
        for (int h = 0; h < static_cast<int>(kVec * sizeof(O) / 16); ++h) {
          uint4 word;
          memcpy(&word, reinterpret_cast<const char*>(outs) + 16 * h, 16);
          reinterpret_cast<uint4*>(dst)[h] = word;
        }
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j)
          if (first + j >= 0 && first + j < n) dst[j] = outs[j];
      }
    }
    if (next >= num_tiles) break;
    cur = next;
    next = ahead;
    ahead = after;
#pragma unroll
    for (int r = 0; r < kRows; ++r) in_warp_cur[r] = in_warp_next[r];
    warp_prefix_cur = warp_prefix_next;
    aggregate_cur = aggregate_next;
  }
  pipelined::wait_copies<0>();  // (no copy may outlive the block)
}

}  // namespace foldkit::cuda
