// Where a blocked or segmented scan restarts ("heads"), and how one tile of the scan kernel finds
// the heads among its elements.
#pragma once

#include <cstdint>

#include "foldkit/cuda/device/scan_layout.hpp"  // NoHeads, SegmentHeads

namespace foldkit::cuda {

// The first index s in [0, count) with a[s] >= key, or count (count >= 1). Contract: all 32 lanes
// of a warp call it and all receive the answer. A 32-ary search: each round a lane probes the
// last element of its 1/32 of the range, so 2^20 offsets take 4 rounds of one load each. For
// unsorted a the answer is some index in [0, count]; only a[0 .. count) is ever read.
__device__ __forceinline__ std::int64_t warp_lower_bound(const std::int64_t* a, std::int64_t count, std::int64_t key) {
  const std::int64_t lane = threadIdx.x & 31u;
  std::int64_t lo = 0, hi = count;  // the answer lies in [lo, hi]
  while (hi - lo > 32) {
    const std::int64_t part = (hi - lo + 31) / 32;  // lane l covers [lo + l * part, lo + (l + 1) * part)
    std::int64_t probe = lo + (lane + 1) * part - 1;
    if (probe > hi - 1) probe = hi - 1;  // lane 31 always probes hi - 1
    const unsigned ge = __ballot_sync(0xffffffffu, __ldg(a + probe) >= key);
    if (ge == 0) return hi;
    const std::int64_t f = __ffs(ge) - 1;
    const std::int64_t f_probe = lo + (f + 1) * part - 1;
    hi = f_probe < hi - 1 ? f_probe : hi - 1;  // a[hi] >= key
    lo += f * part;                            // every probe before lane f's was < key
  }
  const std::int64_t i = lo + lane;
  const bool less = i < hi && __ldg(a + i) < key;
  return lo + __popc(__ballot_sync(0xffffffffu, less));
}

// Shared memory for the heads of one tile of kTile elements.
template <int kTile>
struct TileHeadStorage {
  unsigned bits[kTile / 32];  // bit (i & 31) of word i / 32: element base + i is a head
  std::int64_t first_segment;
};

// Marks the heads among the tile's elements [base, base + valid) in storage.bits. Contract:
// every thread of the block calls it; it ends with a barrier, after which the bits are complete.
// The segments starting in the tile are offsets[lo ...], lo found by warp 0; the block then
// reads kThreads offsets per round until one lies past the tile (so work grows with the number
// of segment starts in the tile, however many empty segments share one element).
template <int kThreads, int kTile>
__device__ __forceinline__ void mark_offset_heads(const SegmentHeads& heads, std::int64_t base, int valid,
                                                  TileHeadStorage<kTile>& storage) {
  const unsigned tid = threadIdx.x;
  for (unsigned w = tid; w < kTile / 32; w += kThreads) storage.bits[w] = 0u;
  if (tid < 32) {
    const std::int64_t lo = warp_lower_bound(heads.offsets, heads.num_segments, base);
    if (tid == 0) storage.first_segment = lo;
  }
  __syncthreads();
  for (std::int64_t s0 = storage.first_segment;; s0 += kThreads) {
    const std::int64_t s = s0 + tid;
    bool more = false;
    if (s < heads.num_segments) {
      // Compared before subtracting: offsets that break the contract (INT64_MIN, say) must not
      // overflow; they mark nothing.
      const std::int64_t at = __ldg(heads.offsets + s);
      const bool in_tile = at >= base && at - base < kTile;
      if (in_tile && at - base < valid) {
        const auto pos = static_cast<unsigned>(at - base);
        atomicOr(&storage.bits[pos >> 5], 1u << (pos & 31));
      }
      more = tid == kThreads - 1 && (at < base || in_tile);  // sorted: later offsets may still fall in the tile
    }
    if (!__syncthreads_or(more)) break;
  }
}

// The head bits of thread `tid`'s kItems consecutive elements (bit k: element base + tid * kItems
// + k), blocked or from the marked storage. Element 0 of the array is always a head.
template <int kItems, int kTile>
__device__ __forceinline__ unsigned thread_head_mask(const SegmentHeads& heads, std::int64_t base, unsigned tid,
                                                     const TileHeadStorage<kTile>& storage) {
  static_assert(32 % kItems == 0, "a thread's head bits must sit in one 32-bit word");
  const std::int64_t first = base + static_cast<std::int64_t>(tid) * kItems;
  unsigned mask = 0;
  if (heads.offsets == nullptr) {
    std::int64_t r = first % heads.block_length;  // one division per thread and tile
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      mask |= (r == 0 ? 1u : 0u) << k;
      r = r + 1 == heads.block_length ? 0 : r + 1;
    }
  } else {
    const unsigned at = tid * kItems;
    const unsigned word = storage.bits[at >> 5] >> (at & 31);
    if constexpr (kItems == 32) mask = word;
    else mask = word & ((1u << kItems) - 1u);
  }
  if (first == 0) mask |= 1u;
  return mask;
}

}  // namespace foldkit::cuda
