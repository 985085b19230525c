// Seed 004's warp-shuffle block scan (kernel_3 and kernel_4): each warp scans its 32 values
// with __shfl_up_sync, one warp scans the per-warp totals, every thread adds its warp's offset.
#pragma once

#include <cstddef>

#include "ladder/common.cuh"

namespace foldkit::ladder::seed004 {

constexpr unsigned kFullMask = 0xffffffffu;

// Inclusive scan of one value per lane over a whole warp: five shuffle-up steps (Hillis-Steele
// in registers; all 32 lanes must call it).
template <class T>
__device__ __forceinline__ T warp_inclusive_scan(T x, unsigned lane) {
#pragma unroll
  for (unsigned offset = 1; offset < 32; offset <<= 1) {
    const T y = __shfl_up_sync(kFullMask, x, offset);
    if (lane >= offset) x = wrap_add(y, x);
  }
  return x;
}

// Exclusive scan of `value` over the BLOCK threads of the block (thread order); all threads
// must call it (it contains barriers), with blockDim.x == BLOCK.
//
// Fix (float): the seed formed the exclusive warp prefix as `inclusive - value`, exact for int
// but not for float (rounding, and catastrophic cancellation once the prefix is large). The
// exclusive prefix here is the previous lane's inclusive value, fetched with one more shuffle.
// Fix: the seed's step C let lanes 0..31 of warp 0 read and write sdata[lane] although sdata
// has only BLOCK/32 entries (out of bounds for BLOCK < 1024); lanes past the last warp now use
// 0 and write nothing.
// Fix: a trailing barrier: the grid-stride tile loop calls this again, and the next call's
// writes to warp_totals must not overtake a slower warp still reading this call's values.
template <class T, int BLOCK>
__device__ __forceinline__ T block_exclusive_scan(T value) {
  static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024, "whole warps, at most 32");
  constexpr int kWarps = BLOCK / 32;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;

  // A. Scan within each warp.
  const T inclusive = warp_inclusive_scan(value, lane);
  T exclusive = __shfl_up_sync(kFullMask, inclusive, 1);
  if (lane == 0) exclusive = T(0);
  if constexpr (kWarps == 1) {
    return exclusive;  // one warp: no totals to combine, no shared memory, no barrier
  } else {
    __shared__ T warp_totals[kWarps];
    // B. The last lane of each warp publishes the warp's total.
    if (lane == 31) warp_totals[warp] = inclusive;
    __syncthreads();
    // C. Warp 0 scans the totals in place (inclusive): each lane reads and writes only its
    //    own slot, and the shuffles order the lanes.
    if (warp == 0) {
      const T total = lane < static_cast<unsigned>(kWarps) ? warp_totals[lane] : T(0);
      const T scanned = warp_inclusive_scan(total, lane);
      if (lane < static_cast<unsigned>(kWarps)) warp_totals[lane] = scanned;
    }
    __syncthreads();
    // D. This warp's offset is the inclusive total of the warps before it.
    const T offset = warp > 0 ? warp_totals[warp - 1] : T(0);
    __syncthreads();
    return wrap_add(offset, exclusive);
  }
}

}  // namespace foldkit::ladder::seed004
