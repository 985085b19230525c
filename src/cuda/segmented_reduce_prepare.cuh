// The small kernels around the segmented reduction's main kernel (segmented_reduce.cu): the
// validation of the offsets with the merge-path splits, the begin/end form's validation and
// lengths, the status of a call without segments, and validate_offsets' search. A header so that
// the host emulation of the kernels (segmented_reduce_emulation.cuh, for the CPU tests) runs
// them too.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/segmented_prepare.hpp"  // the offsets' rules
#include "foldkit/cuda/tuning/segmented_reduce_tuning.hpp"
#include "segmented_reduce_launch.cuh"  // kSlotWords

namespace foldkit::cuda::seg {

// Offsets form, one pass over the offsets (no searches): a block of kSegPrepareThreads threads
// takes kSegPrepareSegments consecutive offsets (and the next one), coalesced into shared
// memory; it validates them (setting the workspace flag for a bad one), zeroes as many tiles'
// look-back slots (a scan on the same cached workspace leaves its tile states flagged there; this
// replaces a memset, one stream node less), and writes the merge-path splits of the tile
// boundaries that fall on its segments. The split of diagonal d = min(b * tile_items, n + S) is
// {i, d - i}, i = the number of segment ends before d (segment s's end item is on diagonal
// E_s = s + offsets[s + 1], strictly increasing for valid offsets): i is the first s with
// E_s >= d, so the boundaries in (E_{s0 - 1}, E_{s_last}] belong to the block of segments
// s0 .. s_last, which finds each one's s by a binary search over its offsets in shared memory.
// Tile b's start is the split of boundary b, its stop that of b + 1 (stored twice so that each
// copy has one reader, which zeroes it). It replaced a binary search in the offsets for every
// boundary (~22 dependent loads each); a block per 256 offsets was latency-bound (16 waves of
// one load each, slower than the searches), hence 8 offsets a thread (see the ledger).
// A block with a bad offset among its own (or its last pair) writes no split, so that the
// blocks' ranges stay disjoint and bounded whatever the offsets hold: the main kernel clamps
// splits it finds unwritten (zero, or a scan's leftovers) and, the flag set, writes nothing.
// The header's flag and budget (flag + 2, 8 bytes) need no clearing here: the workspace is zeroed
// once and every call leaves them zero (the main kernel's last block clears them; the scans use
// only the header's first 8 bytes).
struct PrepareOffsetsShared {
  std::int64_t off[tuning::kSegPrepareSegments + 1];  // offsets[s0 .. s0 + kSegPrepareSegments]
  std::int64_t b0, b1;  // the block's boundaries: (E_{s0 - 1}, E_last] / tile_items
  bool over;            // the boundary budget is spent
};

// Its grid: a block per kSegPrepareSegments offsets or slots, whichever are more.
inline unsigned prepare_offsets_blocks(std::int64_t num_segments, std::int64_t tiles) {
  const std::int64_t items = num_segments + 1 > tiles ? num_segments + 1 : tiles;
  return static_cast<unsigned>((items + tuning::kSegPrepareSegments - 1) / tuning::kSegPrepareSegments);
}

__global__ void __launch_bounds__(tuning::kSegPrepareThreads)
    prepare_offsets_kernel(const std::int64_t* offsets, std::int64_t num_segments, std::int64_t n, std::int64_t tiles,
                           std::int64_t tile_items, unsigned* flag, longlong2* starts, longlong2* stops,
                           unsigned long long* slots) {
  constexpr int kThreads = tuning::kSegPrepareThreads;
  constexpr int kSegs = tuning::kSegPrepareSegments;
  constexpr int kPer = kSegs / kThreads;
  static_assert(kSegs % kThreads == 0);
#if defined(FOLDKIT_SEG_EMULATION)
  PrepareOffsetsShared& sm = emu::block_shared<PrepareOffsetsShared>();
#else
  __shared__ PrepareOffsetsShared sm;
#endif
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t s0 = static_cast<std::int64_t>(blockIdx.x) * kSegs;
  const std::int64_t S = num_segments, total = n + S;
  if (s0 <= S) {  // block-uniform: the loads first, all in flight at once
#pragma unroll
    for (int k = 0; k <= kPer; ++k) {
      const int q = k * kThreads + t;
      if (q <= kSegs && s0 + q <= S) sm.off[q] = offsets[s0 + q];
    }
  }
  for (std::int64_t g = s0 + t; g < s0 + kSegs && g < tiles; g += kThreads)
#pragma unroll
    for (std::size_t k = 0; k < kSlotWords; ++k) slots[g * kSlotWords + k] = 0ull;
  if (s0 > S) return;
  const int last = static_cast<int>(S - s0 < kSegs - 1 ? S - s0 : kSegs - 1);  // the block's last segment (or S)
  const int top = S - s0 < kSegs ? last : kSegs;  // the last offset loaded
  __syncthreads();
  bool bad = false;
  for (int q = t; q <= top; q += kThreads) {
    bad |= foldkit::detail::bad_offset(sm.off[q], q < top, q < top ? sm.off[q + 1] : 0, n);
  }
  if (bad) *static_cast<volatile unsigned*>(flag) = 1u;
  if (t == 0) {
    // E_s of the block's segment q (s = S: the end of the items).
    const auto E = [&](int q) { return s0 + q < S ? s0 + q + sm.off[q + 1] : total; };
    sm.b0 = s0 == 0 ? 0 : (s0 - 1 + sm.off[0]) / tile_items + 1;
    sm.b1 = s0 + last == S ? tiles : E(last) / tile_items;
  }
  if (__syncthreads_count(bad) != 0) return;  // block-uniform
  const std::int64_t b0 = sm.b0, b1 = sm.b1;
  if (b1 - b0 >= kThreads) {  // block-uniform
    // Many boundaries (a long segment): claimed from a budget of the tiles + 1 there are, so
    // that blocks whose ranges overlap (good blocks between bad ones) cannot multiply the
    // writes. Exceeding it proves the offsets bad.
    if (t == 0) {
      const unsigned long long c = static_cast<unsigned long long>(b1 - b0 + 1);
      sm.over = atomicAdd(reinterpret_cast<unsigned long long*>(flag + 2), c) + c >
                static_cast<unsigned long long>(tiles + 1);
      if (sm.over) *static_cast<volatile unsigned*>(flag) = 1u;
    }
    __syncthreads();
    if (sm.over) return;
  }
  for (std::int64_t b = b0 + t; b <= b1; b += kThreads) {
    const std::int64_t d = b * tile_items < total ? b * tile_items : total;
    int lo = 0, hi = last;  // E(last) >= d
    while (lo < hi) {
      const int mid = (lo + hi) >> 1;
      if (s0 + mid + sm.off[mid + 1] < d) lo = mid + 1;  // (mid < last <= S - s0: a real segment)
      else hi = mid;
    }
    const longlong2 split = make_longlong2(s0 + lo, d - (s0 + lo));
    if (b < tiles) starts[b] = split;
    if (b > 0) stops[b - 1] = split;
  }
}

// Begin/end form: validates pair g and writes its length to voff[g + 1] (0 for a bad pair); zeroes
// the scan's workspace (scan_words 8-byte words), which the scan needs zeroed (every call leaves
// it zero anyway; see segmented_reduce_launch.cuh).
__global__ void prepare_begin_end_kernel(const std::int64_t* begin, const std::int64_t* end,
                                         std::int64_t num_segments, std::int64_t n, unsigned* flag,
                                         std::int64_t* voff, std::int64_t scan_words, unsigned long long* scan) {
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < scan_words) scan[g] = 0ull;
  if (g == 0) voff[0] = 0;
  if (g < num_segments) {
    const std::int64_t b = begin[g], e = end[g];
    const bool bad = foldkit::detail::bad_begin_end(b, e, n);
    if (bad) *static_cast<volatile unsigned*>(flag) = 1u;
    voff[g + 1] = bad ? 0 : e - b;
  }
}

// No segments: only the one offset to check, for *status.
__global__ void offsets_status_kernel(const std::int64_t* offsets, std::int64_t n, std::int32_t* status) {
  const std::int64_t v = offsets[0];
  *status = foldkit::detail::offset_outside(v, n) ? 1 : 0;
}

// validate_offsets: the smallest bad index.
__global__ void first_bad_offset_kernel(const std::int64_t* offsets, std::int64_t num_segments, std::int64_t n,
                                        unsigned long long* first) {
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g <= num_segments) {
    if (foldkit::detail::bad_offset(offsets[g], g < num_segments, g < num_segments ? offsets[g + 1] : 0, n))
      atomicMin(first, static_cast<unsigned long long>(g));
  }
}

}  // namespace foldkit::cuda::seg
