// The small kernels around the segmented reduction's main kernel (segmented_reduce.cu): the
// validation of the offsets with the merge-path splits, the begin/end form's validation and
// lengths, the status of a call without segments, and validate_offsets' search. A header so that
// the host emulation of the kernels (segmented_reduce_emulation.cuh, for the CPU tests) runs
// them too.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace foldkit::cuda::seg {

// Offsets form: thread g validates offsets[g] (g <= S) and, for g <= tiles, finds the split of
// diagonal g * tile_items: i = the number of segment ends before it (the first s with
// s + offsets[s + 1] >= d), j = d - i, stored as tile g's start and tile g - 1's stop. With bad
// offsets the splits are garbage (the main kernel clamps them, and writes nothing), but every read
// stays inside the offsets.
__global__ void prepare_offsets_kernel(const std::int64_t* offsets, std::int64_t num_segments, std::int64_t n,
                                       std::int64_t tiles, std::int64_t tile_items, unsigned* flag,
                                       longlong2* starts, longlong2* stops) {
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g <= tiles) {  // first: the searches are the long chains of dependent loads
    const std::int64_t total = n + num_segments;
    const std::int64_t d = g * tile_items < total ? g * tile_items : total;
    std::int64_t lo = d - n > 0 ? d - n : 0, hi = d < num_segments ? d : num_segments;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (mid + offsets[mid + 1] < d) lo = mid + 1;
      else hi = mid;
    }
    const longlong2 split = make_longlong2(lo, d - lo);
    if (g < tiles) starts[g] = split;
    if (g > 0) stops[g - 1] = split;
  }
  if (g <= num_segments) {
    const std::int64_t v = offsets[g];
    if (v < 0 || v > n || (g < num_segments && v > offsets[g + 1])) *static_cast<volatile unsigned*>(flag) = 1u;
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
    const bool bad = b < 0 || e > n || b > e;  // detail::bad_begin_end
    if (bad) *static_cast<volatile unsigned*>(flag) = 1u;
    voff[g + 1] = bad ? 0 : e - b;
  }
}

// No segments: only the one offset to check, for *status.
__global__ void offsets_status_kernel(const std::int64_t* offsets, std::int64_t n, std::int32_t* status) {
  const std::int64_t v = offsets[0];
  *status = v < 0 || v > n ? 1 : 0;
}

// validate_offsets: the smallest bad index.
__global__ void first_bad_offset_kernel(const std::int64_t* offsets, std::int64_t num_segments, std::int64_t n,
                                        unsigned long long* first) {
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g <= num_segments) {
    const std::int64_t v = offsets[g];
    if (v < 0 || v > n || (g < num_segments && v > offsets[g + 1]))
      atomicMin(first, static_cast<unsigned long long>(g));
  }
}

}  // namespace foldkit::cuda::seg
