// Seed 004's kernels ("making prefix sum really fast"): the blocked inclusive scan kernel_0 ..
// kernel_4. Every tile of TILE consecutive elements (TILE = BLOCK, or BLOCK * BATCH for
// kernel_4) is scanned on its own; out[i] = in[t] + ... + in[i], t the first index of i's tile.
//
// Fixes common to every kernel here (each kernel notes its own as well):
// - The seed launched exactly ceil(numElements / TILE) blocks, one tile each. Here any grid is
//   correct: each block walks tiles blockIdx.x, blockIdx.x + gridDim.x, ... (the loop bound is
//   the same for every thread of a block, so the barriers inside stay uniform).
// - 64-bit indices (the seed's `blockIdx.x * threadsPerBlock + tid` in int overflows past 2^31)
//   and a run-time n instead of the template numElements; every global access is guarded by
//   index < n, so the last, partial tile is scanned correctly and nothing outside [0, n) is
//   touched. Threads past n still take part in every barrier.
// - int arithmetic through wrap_add (wraps modulo 2^32; the seed's int += is UB on overflow).
#pragma once

#include <cstddef>

#include "ladder/common.cuh"
#include "ladder/seed004/block_scan.cuh"

namespace foldkit::ladder::seed004 {

// ---------------------------------------------------------------------------------------------
// kernel_0 (rung 0): the naive baseline. Hillis-Steele scan of each tile done in place in
// global memory: log2(BLOCK) steps, each a global read of out[g - offset] and a global
// read-modify-write of out[g]. Bottleneck: every step goes through L2/global memory.
// The seed's step is read into a register, barrier, write, barrier (the two barriers are what
// keep a thread from reading out[g - offset] after its owner already added to it); that order
// is kept. Fix: the seed's first line `output[gtid] = input[gtid]` and its read
// `output[gtid - offset]` ran for gtid >= numElements (out of bounds); all are guarded now.
// ---------------------------------------------------------------------------------------------
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    kernel_0(const T* in, T* out, std::size_t n, std::size_t tiles) {
  const unsigned tid = threadIdx.x;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t g = tile * BLOCK + tid;
    const bool live = g < n;
    if (live) out[g] = in[g];
    __syncthreads();
#pragma unroll
    for (unsigned offset = 1; offset <= BLOCK / 2; offset <<= 1) {
      const bool adds = live && tid >= offset;  // g - offset stays in this tile and below n
      T earlier = T(0);
      if (adds) earlier = out[g - offset];
      __syncthreads();  // every read of this step is done before any write
      if (adds) out[g] = wrap_add(earlier, out[g]);
      __syncthreads();  // every write is visible before the next step reads
    }
    // The next tile touches other elements of `out`: no further barrier is needed.
  }
}

// ---------------------------------------------------------------------------------------------
// kernel_1 (rung 1): the same steps on a shared-memory copy of the tile. Bottleneck removed:
// kernel_0's 2·log2(BLOCK) global accesses per element; now one global read and one global write
// per element, the log-steps hit shared memory.
// Fix: the seed declared `extern __shared__ int buffer[threadsPerBlock]` (an extern array
// with a size is ill-formed) and loaded input[gtid] unguarded; the buffer is a static
// BLOCK-sized array, and slots past n are loaded as 0 (they only feed slots that are never
// stored).
// ---------------------------------------------------------------------------------------------
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    kernel_1(const T* in, T* out, std::size_t n, std::size_t tiles) {
  __shared__ T buffer[BLOCK];
  const unsigned tid = threadIdx.x;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t g = tile * BLOCK + tid;
    // Only this thread touches buffer[tid] between the previous tile's last barrier and here.
    buffer[tid] = g < n ? in[g] : T(0);
    __syncthreads();
#pragma unroll
    for (unsigned offset = 1; offset <= BLOCK / 2; offset <<= 1) {
      T earlier = T(0);
      if (tid >= offset) earlier = buffer[tid - offset];
      __syncthreads();
      if (tid >= offset) buffer[tid] = wrap_add(earlier, buffer[tid]);
      __syncthreads();
    }
    if (g < n) out[g] = buffer[tid];
  }
}

// ---------------------------------------------------------------------------------------------
// kernel_2 (rung 2): double buffering. Each step reads one shared buffer and writes the other,
// so a step needs one barrier instead of two (no thread can overwrite a value another thread of
// the same step still has to read). Bottleneck removed: half of kernel_1's barriers.
// Fix: the seed's unguarded input[gtid] load (as kernel_1).
// ---------------------------------------------------------------------------------------------
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    kernel_2(const T* in, T* out, std::size_t n, std::size_t tiles) {
  __shared__ T buffer_a[BLOCK];
  __shared__ T buffer_b[BLOCK];
  const unsigned tid = threadIdx.x;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t g = tile * BLOCK + tid;
    // Restarting from buffer_a each tile lets the unrolled steps address fixed buffers. Safe
    // without a barrier: the previous tile's last step read buffer_a or buffer_b before its
    // barrier, and since then each thread has only read its own slot.
    T* src = buffer_a;
    T* dst = buffer_b;
    src[tid] = g < n ? in[g] : T(0);
    __syncthreads();
#pragma unroll
    for (unsigned offset = 1; offset <= BLOCK / 2; offset <<= 1) {
      dst[tid] = tid >= offset ? wrap_add(src[tid - offset], src[tid]) : src[tid];
      __syncthreads();
      T* const swap = src;
      src = dst;
      dst = swap;
    }
    if (g < n) out[g] = src[tid];
  }
}

// ---------------------------------------------------------------------------------------------
// kernel_3 (rung 3): the block scan by warp shuffles (block_scan.cuh): __shfl_up_sync within
// each warp, one warp scans the per-warp totals. Bottleneck removed: kernel_2's log2(BLOCK)
// shared-memory steps and barriers; now registers plus two (three with the grid-stride reuse)
// barriers per tile. Fix: the seed loaded input[gtid] for gtid >= numElements; such threads
// now contribute 0 (they still join the block scan's barriers).
// ---------------------------------------------------------------------------------------------
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    kernel_3(const T* in, T* out, std::size_t n, std::size_t tiles) {
  const unsigned tid = threadIdx.x;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t g = tile * BLOCK + tid;
    const T value = g < n ? in[g] : T(0);
    const T before = block_exclusive_scan<T, BLOCK>(value);
    if (g < n) out[g] = wrap_add(before, value);
  }
}

// ---------------------------------------------------------------------------------------------
// kernel_4 (rung 4): thread coarsening. Each thread scans BATCH consecutive elements serially in
// registers, the block scan runs once on the per-thread totals, and each thread adds its
// exclusive offset to its BATCH running sums. Bottleneck removed: kernel_3 pays a whole block
// scan (shuffles, barriers) per element; here per BATCH elements, with BATCH loads in flight.
// Tile = BLOCK * BATCH elements. Fix: the seed left reductions[i] unset past numElements and
// indexed `gtid * batchSize + i` in int; the running sums are always set, indices are 64-bit.
// ---------------------------------------------------------------------------------------------
template <class T, int BLOCK, int BATCH>
__global__ void __launch_bounds__(BLOCK)
    kernel_4(const T* in, T* out, std::size_t n, std::size_t tiles) {
  constexpr std::size_t kTile = static_cast<std::size_t>(BLOCK) * BATCH;
  const unsigned tid = threadIdx.x;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t first = tile * kTile + static_cast<std::size_t>(tid) * BATCH;
    T running[BATCH];
    T total = T(0);
#pragma unroll
    for (int i = 0; i < BATCH; ++i) {
      if (first + i < n) total = wrap_add(total, in[first + i]);
      running[i] = total;
    }
    const T before = block_exclusive_scan<T, BLOCK>(total);
#pragma unroll
    for (int i = 0; i < BATCH; ++i)
      if (first + i < n) out[first + i] = wrap_add(before, running[i]);
  }
}

}  // namespace foldkit::ladder::seed004
