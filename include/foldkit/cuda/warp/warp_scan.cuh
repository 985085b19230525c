// Warp-wide inclusive scans by register shuffles: plain, and segmented (a flag restarts the scan).
#pragma once

#include "foldkit/cuda/warp/warp_shuffle.cuh"

namespace foldkit::cuda {

// Contract: all 32 lanes call it; lane l receives v[0] op ... op v[l], the earlier lane's value
// always on the left (fixed order: deterministic, and right for non-commutative ops).
template <class A, class Op>
__device__ __forceinline__ A warp_inclusive_scan(A v, Op op) {
  const unsigned lane = threadIdx.x & 31u;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const A other = shfl_up_any(v, static_cast<unsigned>(offset));
    if (lane >= static_cast<unsigned>(offset)) v = op(other, v);
  }
  return v;
}

// Segmented form over (head, value) pairs: lane l receives the fold of the lanes since the last
// lane <= l whose head is set (that lane's value included), and head = "some lane <= l had a
// head". The pair combine (h1, v1) then (h2, v2) = (h1 | h2, h2 ? v2 : v1 op v2) is
// associative, so the shuffle tree gives the serial answer.
template <class A, class Op>
__device__ __forceinline__ A warp_inclusive_segmented_scan(A v, bool& head, Op op) {
  const unsigned lane = threadIdx.x & 31u;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const A other = shfl_up_any(v, static_cast<unsigned>(offset));
    const bool other_head = __shfl_up_sync(0xffffffffu, static_cast<int>(head), offset) != 0;
    if (lane >= static_cast<unsigned>(offset)) {
      if (!head) v = op(other, v);
      head = head || other_head;
    }
  }
  return v;
}

}  // namespace foldkit::cuda
