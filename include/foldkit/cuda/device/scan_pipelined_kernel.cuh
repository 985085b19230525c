// The whole-array scan kernel: persistent blocks that keep the next tile's loads in flight while
// they scan, look back on and store the current one. Each element is read once and written once.
//
// Why: a block that loads one tile and then waits (for its ticket, for the look-back, for its
// stores) has no load in flight for most of its life, and the scan then runs below the copy
// rate. Here a block draws its tiles from a ticket and holds two tiles in registers: tile k is
// scanned and stored while tile k + 1's 16-byte loads are in flight.
//
// Tile layout. A tile is kThreads * kRows 16-byte vectors of T (kVec elements each). Vector q of
// the tile is row q / 32 of 32 vectors, and warp w owns rows [w * kRows, (w + 1) * kRows): lane
// l of warp w holds vector (w * kRows + r) * 32 + l as its row r. Each row is one coalesced
// 512-byte load per warp, and each warp scans its rows with shuffles (one warp scan per row).
//
// Alignment. Tiles sit on a grid skewed by `skew` = (in mod 16) / sizeof(T) elements, so that
// every tile but the first starts on a 16-byte boundary of the input: tile t covers elements
// [t * kTile - skew, (t + 1) * kTile - skew) of [0, n). Full tiles load 16-byte vectors; the
// first and last tiles load element by element. Outputs go out as 16-byte vectors when the
// output lines up the same way (vector_out), else element by element.
//
// Tickets. Block b draws ticket indices d1 < d2 < ... from the workspace header (one 64-bit word:
// the index and the call's epoch). It processes them in order and always keeps two draws ahead
// of the tile it scans; it stops drawing after its first invalid ticket (>= num_tiles), by which
// time exactly one more draw is in flight. So every block makes exactly two invalid draws and a
// call makes num_tiles + 2 * gridDim.x draws: the block that draws the last index closes the call
// (next epoch, ticket 0), as in scan_tile_state.cuh. A block holds only tiles it drew, and a
// tile's look-back only waits on smaller tickets, whose blocks are running: forward progress on
// any GPU, with any number of concurrent calls.
//
// Determinism: in-tile combines follow a fixed tree (element, row, warp, tile) with the earlier
// part always on the left, and the look-back folds tile aggregates left to right; the result
// does not depend on which block drew which tile.
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
  static constexpr int kElements = kThreads * kRows * kVec;
  static_assert(16 % sizeof(T) == 0 && kThreads % 32 == 0);
  // Element index within the tile of element j of row r of (warp, lane).
  __device__ __forceinline__ static int element(int warp, int lane, int r, int j) {
    return ((warp * kRows + r) * 32 + lane) * kVec + j;
  }
};

template <class Policy, class Spec>
struct PipelinedScanShared {
  using A = typename Spec::accum_type;
  A warp_total[Policy::kThreads / 32];
  A lookback[Policy::kLookbackWindows][32];
  A prefix;
  unsigned long long tickets[2];  // prologue: the first two draws; then tickets[0] is the newest draw
};

template <class Spec>
struct PipelinedScanArgs {
  const typename Spec::input_type* in;
  typename Spec::output_type* out;
  std::int64_t n;
  typename Spec::accum_type init;  // exclusive scans start here
  ScanHeader* header;
  ScanTileSlots<typename Spec::accum_type>* slots;
  unsigned num_tiles;        // ceil((n + skew) / kTile)
  unsigned last_draw;        // num_tiles + 2 * gridDim.x - 1
  int skew;                  // (in mod 16) / sizeof(T)
  bool vector_out;           // outputs of full tiles start 16-byte aligned
};

namespace pipelined {

// The tile's registers: kRows raw 16-byte vectors.
template <int kRows>
struct TileRegs {
  uint4 v[kRows];
};

template <class T, int kVec>
__device__ __forceinline__ T element_of(const uint4& v, int j) {
  T x[kVec];
  memcpy(x, &v, 16);
  return x[j];
}

// Loads the tile whose first element is at index `base` (negative for tile 0 when skewed). The
// first and last tiles are loaded element by element, positions outside [0, n) holding `fill`.
template <class Geo, class T, int kRows>
__device__ __forceinline__ void load_tile(const T* in, std::int64_t n, std::int64_t base, T fill,
                                          TileRegs<kRows>& regs, int warp, int lane) {
  if (base >= 0 && base + Geo::kElements <= n) {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      regs.v[r] = __ldcs(reinterpret_cast<const uint4*>(in + base + Geo::element(warp, lane, r, 0)));
  } else {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      T x[Geo::kVec];
#pragma unroll
      for (int j = 0; j < Geo::kVec; ++j) {
        const std::int64_t i = base + Geo::element(warp, lane, r, j);
        x[j] = (i >= 0 && i < n) ? in[i] : fill;
      }
      memcpy(&regs.v[r], x, 16);
    }
  }
}

}  // namespace pipelined

// Policy: kThreads, kRows (16-byte vectors per thread per tile), kMinBlocksPerSM,
// kLookbackWindows, kSleepNs (look-back backoff). Launch with gridDim.x <= num_tiles blocks
// (more would only draw invalid tickets), the header's ticket at 0 for the first call.
//
// Positions outside [0, n) of the first and last tiles hold the identity, and a missing prefix
// (before the scan's first element, before a warp's first row, ...) is the identity too: for
// every op, op(identity, x) is x bit for bit unless x is a NaN (then it is a NaN), so no
// element needs a validity test except when it is stored.
template <class Policy, bool kExclusive, class Spec>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocksPerSM)
    scan_pipelined_kernel(const PipelinedScanArgs<Spec> args, Spec spec) {
  using T = typename Spec::input_type;
  using A = typename Spec::accum_type;
  using O = typename Spec::output_type;
  using Geo = PipelinedTile<Policy, T>;
  using Regs = pipelined::TileRegs<Geo::kRows>;
  constexpr int kRows = Geo::kRows, kVec = Geo::kVec, kWarps = Geo::kWarps, kTile = Geo::kElements;
  __shared__ PipelinedScanShared<Policy, Spec> smem;
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;
  const std::int64_t n = args.n;
  const T fill = Spec::identity_input();

  // A draw, by thread 0: the index in the low half, the epoch in the high half.
  auto draw = [&] { return atomicAdd(&args.header->ticket_and_epoch, 1ull); };
  // The call's last draw closes it: every other draw of the call has been made.
  auto close_if_last = [&](unsigned long long drawn) {
    if (static_cast<unsigned>(drawn) == args.last_draw)
      args.header->ticket_and_epoch = static_cast<unsigned long long>(static_cast<unsigned>(drawn >> 32) + 1u) << 32;
  };

  if (tid == 0) {
    const unsigned long long d1 = draw();
    const unsigned long long d2 = draw();
    close_if_last(d1);
    close_if_last(d2);
    smem.tickets[0] = d1;
    smem.tickets[1] = d2;
  }
  __syncthreads();
  const unsigned flag = static_cast<unsigned>(smem.tickets[0] >> 32) + 1u;
  unsigned cur = static_cast<unsigned>(smem.tickets[0]);
  unsigned nxt = static_cast<unsigned>(smem.tickets[1]);
  if (cur >= args.num_tiles) return;  // (and so is nxt: both draws were this block's invalid two)
  __syncthreads();                    // everyone has read tickets[] before thread 0 writes it again
  unsigned long long pending = 0;     // thread 0: the draw two tiles ahead, in flight
  if (tid == 0) pending = draw();

  auto tile_base = [&](unsigned tile) { return static_cast<std::int64_t>(tile) * kTile - args.skew; };
  Regs regs_a, regs_b;
  pipelined::load_tile<Geo>(args.in, n, tile_base(cur), fill, regs_a, warp, lane);

  // One tile: `now` holds tile cur; tile nxt's loads go into `ahead` first. Returns false when
  // this block has no more tiles.
  auto step = [&](Regs& now, Regs& ahead) -> bool {
    const bool has_next = nxt < args.num_tiles;
    if (has_next) pipelined::load_tile<Geo>(args.in, n, tile_base(nxt), fill, ahead, warp, lane);
    auto value = [&](int r, int j) { return Spec::load(pipelined::element_of<T, kVec>(now.v[r], j)); };

    // 1. Each row: this lane's total, the warp's inclusive scan of the lane totals, and the fold
    //    of this warp's elements before this lane's part of the row (rows before it, then lanes).
    A in_warp[kRows];
    A rows_before = Spec::identity();
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      A t = value(r, 0);
#pragma unroll
      for (int j = 1; j < kVec; ++j) t = spec.op(t, value(r, j));
      const A inclusive = warp_inclusive_scan(t, spec.op);
      const A lanes_before = __shfl_up_sync(0xffffffffu, inclusive, 1);
      in_warp[r] = lane > 0 ? spec.op(rows_before, lanes_before) : rows_before;
      rows_before = spec.op(rows_before, __shfl_sync(0xffffffffu, inclusive, 31));
    }
    if (lane == 0) smem.warp_total[warp] = rows_before;
    __syncthreads();  // (a) warp totals

    // 2. The tile aggregate and this warp's prefix within the tile (left to right).
    A tile_aggregate = smem.warp_total[0];
    A warp_prefix = Spec::identity();
#pragma unroll
    for (int w = 1; w < kWarps; ++w) {
      if (w == warp) warp_prefix = tile_aggregate;
      tile_aggregate = spec.op(tile_aggregate, smem.warp_total[w]);
    }

    // 3. Publish, look back (warp 0), hand the newest draw on.
    if (cur == 0) {
      if (tid == 0) {
        const A inclusive = kExclusive ? spec.op(args.init, tile_aggregate) : tile_aggregate;
        if (args.num_tiles > 1) publish_scan_slot(args.slots[0].inclusive, inclusive, flag);
        smem.prefix = kExclusive ? args.init : Spec::identity();
      }
    } else {
      if (tid == 0) publish_scan_slot(args.slots[cur].aggregate, tile_aggregate, flag);
      if (warp == 0) {
        const A prefix = look_back<Policy::kLookbackWindows, Policy::kSleepNs>(args.slots, cur, flag, spec.op,
                                                                              smem.lookback);
        if (tid == 0) {
          if (cur + 1 < args.num_tiles) publish_scan_slot(args.slots[cur].inclusive, spec.op(prefix, tile_aggregate), flag);
          smem.prefix = prefix;
        }
      }
    }
    if (tid == 0) {
      close_if_last(pending);
      smem.tickets[0] = pending;
    }
    __syncthreads();  // (b) prefix and ticket
    const A block_prefix = spec.op(smem.prefix, warp_prefix);
    const unsigned after_next = static_cast<unsigned>(smem.tickets[0]);

    // 4. Outputs: the prefix, then this lane's elements left to right.
    const std::int64_t base = tile_base(cur);
    const bool full = base >= 0 && base + kTile <= n;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      A running = spec.op(block_prefix, in_warp[r]);
      O outs[kVec];
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        if (kExclusive) {
          outs[j] = Spec::store(running);
          running = spec.op(running, value(r, j));
        } else {
          running = spec.op(running, value(r, j));
          outs[j] = Spec::store(running);
        }
      }
      const std::int64_t first = base + Geo::element(warp, lane, r, 0);
      O* dst = args.out + first;
      if (full && args.vector_out) {
        static_assert(kVec * sizeof(O) % 16 == 0);
#pragma unroll
        for (int k = 0; k < static_cast<int>(kVec * sizeof(O) / 16); ++k) {
          uint4 word;
          memcpy(&word, reinterpret_cast<const char*>(outs) + 16 * k, 16);
          reinterpret_cast<uint4*>(dst)[k] = word;
        }
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j)
          if (first + j >= 0 && first + j < n) dst[j] = outs[j];
      }
    }
    if (!has_next) return false;
    if (tid == 0) pending = draw();  // (nxt is valid: keep two draws ahead)
    cur = nxt;
    nxt = after_next;
    return true;
  };

  while (step(regs_a, regs_b) && step(regs_b, regs_a)) {
  }
}

}  // namespace foldkit::cuda
