// The single-pass scan kernel: one launch scans any n, each element read once and written once.
//
// One tile per block: block_threads * kItems consecutive elements, its index taken from a
// ticket when the block starts (scan_tile_state.cuh). The block
//  1. loads the tile with coalesced (striped) loads and transposes it through shared memory so
//     that each thread holds kItems consecutive elements (any alignment, any n: loads past n
//     are skipped);
//  2. folds its items, and scans the per-thread totals across the block (warp shuffles, then
//     the warp totals), which gives the tile aggregate;
//  3. publishes the aggregate, and (warp 0) looks back over the predecessors' states for the
//     tile's exclusive prefix, then publishes its inclusive prefix;
//  4. writes prefix-op-(its elements) through shared memory with coalesced stores.
// Every combine puts the earlier elements on the left, in a fixed order, so results are
// deterministic and the leftmost NaN wins for min/max as in the core's combine rules.
#pragma once

#include <cstdint>

#include "foldkit/cuda/device/scan_tile_state.cuh"
#include "foldkit/cuda/tuning/scan_tuning.hpp"

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
  __device__ __forceinline__ static A load(T v) { return static_cast<A>(v); }
  __device__ __forceinline__ static O store(A v) { return static_cast<O>(v); }
};

// Inclusive scan of one value per thread across a warp; the earlier lane's value on the left.
template <class A, class Op>
__device__ __forceinline__ A warp_inclusive_scan(A v, Op op) {
  const unsigned lane = threadIdx.x & 31u;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const A other = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= static_cast<unsigned>(offset)) v = op(other, v);
  }
  return v;
}

template <int kThreads, int kItems, class Spec>
struct ScanSharedStorage {
  using T = typename Spec::input_type;
  using A = typename Spec::accum_type;
  using O = typename Spec::output_type;
  static constexpr int kTile = kThreads * kItems;
  // One padding slot per 32 elements keeps the blocked (per-thread) reads and writes of the
  // transpose free of most bank conflicts.
  static constexpr int kPadded = kTile + kTile / 32;
  union {
    T in[kPadded];
    O out[kPadded];
  } tile;
  A warp_total[kThreads / 32];
  A lookback[tuning::kScanLookbackWindows][32];  // aggregates of whole windows passed over
  A prefix;  // the tile's exclusive prefix (from the look-back)
  unsigned tile_index;
  unsigned flag;
};

__device__ __forceinline__ int padded(int i) { return i + (i >> 5); }

template <int kThreads, int kItems, bool kExclusive, class Spec>
__global__ void __launch_bounds__(kThreads)
    scan_kernel(const typename Spec::input_type* in, std::int64_t n, typename Spec::output_type* out,
                typename Spec::accum_type init, ScanHeader* header,
                ScanTileSlots<typename Spec::accum_type>* slots, unsigned num_tiles, Spec spec) {
  using T = typename Spec::input_type;
  using A = typename Spec::accum_type;
  using O = typename Spec::output_type;
  using Storage = ScanSharedStorage<kThreads, kItems, Spec>;
  constexpr int kTile = Storage::kTile;
  __shared__ Storage smem;
  const unsigned tid = threadIdx.x;
  const unsigned lane = tid & 31u, warp = tid >> 5;

  if (tid == 0) {
    const unsigned long long drawn = atomicAdd(&header->ticket_and_epoch, 1ull);
    const auto index = static_cast<unsigned>(drawn);
    const unsigned flag_now = static_cast<unsigned>(drawn >> 32) + 1u;
    smem.tile_index = index;
    smem.flag = flag_now;
    // The call's last ticket: every block has drawn; close the call (next epoch, ticket 0).
    if (index == num_tiles - 1) header->ticket_and_epoch = static_cast<unsigned long long>(flag_now) << 32;
  }
  __syncthreads();
  const unsigned tile = smem.tile_index;
  const unsigned flag = smem.flag;
  const std::int64_t base = static_cast<std::int64_t>(tile) * kTile;
  const int valid = static_cast<int>(n - base < kTile ? n - base : kTile);

  // 1. Striped loads (coalesced), into shared memory, read back blocked. Full tiles (all but
  // the last) skip the bounds tests.
  const bool full = valid == kTile;
  if (full) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = k * kThreads + static_cast<int>(tid);
      smem.tile.in[padded(i)] = in[base + i];
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = k * kThreads + static_cast<int>(tid);
      if (i < valid) smem.tile.in[padded(i)] = in[base + i];
    }
  }
  __syncthreads();
  A item[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int i = static_cast<int>(tid) * kItems + k;
    item[k] = (full || i < valid) ? Spec::load(smem.tile.in[padded(i)]) : Spec::identity();
  }

  // 2. Thread fold, then the block scan of thread totals.
  A thread_total = item[0];
#pragma unroll
  for (int k = 1; k < kItems; ++k) thread_total = spec.op(thread_total, item[k]);
  const A warp_inclusive = warp_inclusive_scan(thread_total, spec.op);
  if (lane == 31) smem.warp_total[warp] = warp_inclusive;
  __syncthreads();  // also: every thread has read its items from smem.tile.in
  A warp_prefix = Spec::identity();  // fold of the warps before this one
  A tile_aggregate = Spec::identity();
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) {
    const A t = smem.warp_total[w];
    if (w < static_cast<int>(warp)) warp_prefix = w == 0 ? t : spec.op(warp_prefix, t);
    tile_aggregate = w == 0 ? t : spec.op(tile_aggregate, t);
  }
  // The exclusive prefix of this thread within the tile.
  A thread_prefix = __shfl_up_sync(0xffffffffu, warp_inclusive, 1);
  if (lane == 0) thread_prefix = warp_prefix;
  else if (warp > 0) thread_prefix = spec.op(warp_prefix, thread_prefix);
  const bool has_thread_prefix = lane != 0 || warp != 0;

  // 3. Publish and look back (inclusive prefixes include `init`, so exclusive scans start at it).
  if (tile == 0) {
    if (tid == 0) {
      const A inclusive = kExclusive ? spec.op(init, tile_aggregate) : tile_aggregate;
      if (num_tiles > 1) publish_scan_slot(slots[0].inclusive, inclusive, flag);
      smem.prefix = kExclusive ? init : Spec::identity();
    }
  } else {
    if (tid == 0) publish_scan_slot(slots[tile].aggregate, tile_aggregate, flag);
    if (warp == 0) {
      const A prefix = look_back<tuning::kScanLookbackWindows>(slots, tile, flag, spec.op, smem.lookback);
      if (tid == 0) {
        if (tile + 1 < num_tiles) publish_scan_slot(slots[tile].inclusive, spec.op(prefix, tile_aggregate), flag);
        smem.prefix = prefix;
      }
    }
  }
  __syncthreads();
  const bool has_tile_prefix = tile != 0 || kExclusive;
  A running;
  if (has_tile_prefix) running = has_thread_prefix ? spec.op(smem.prefix, thread_prefix) : smem.prefix;
  else running = has_thread_prefix ? thread_prefix : Spec::identity();

  // 4. This thread's outputs, through shared memory (blocked in, striped out).
  const bool first_of_scan = !has_tile_prefix && !has_thread_prefix;  // element 0 of an inclusive scan
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int i = static_cast<int>(tid) * kItems + k;
    A value;
    if constexpr (kExclusive) {
      value = running;
      running = spec.op(running, item[k]);
    } else {
      running = (first_of_scan && k == 0) ? item[0] : spec.op(running, item[k]);
      value = running;
    }
    smem.tile.out[padded(i)] = Spec::store(value);  // slots past n are written but never stored
  }
  __syncthreads();
  if (full) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = k * kThreads + static_cast<int>(tid);
      out[base + i] = smem.tile.out[padded(i)];
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = k * kThreads + static_cast<int>(tid);
      if (i < valid) out[base + i] = smem.tile.out[padded(i)];
    }
  }

}

}  // namespace foldkit::cuda
