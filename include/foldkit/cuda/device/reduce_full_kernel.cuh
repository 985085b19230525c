// The full-array reduction kernel: one launch reduces any n to one value.
//
// Phase 1, every block: each thread reduces its grid-strided share of 16-byte vectors, keeping
// kUnroll loads in flight and one accumulator per vector lane (independent dependency chains);
// the elements before the first 16-byte boundary and after the last whole vector go to the
// first threads of the grid. A block reduce leaves one partial per block.
// Phase 2, the last block to finish: the block whose ticket completes the count reads every
// partial from L2 and writes the result. The ticket lives in the caller's workspace and is
// returned to zero by that last block (atomicInc wraps), so no state outlives a launch and
// concurrent launches with separate workspaces never interact.
//
// Determinism: the work assignment depends only on (n, grid, block, input alignment), and every
// combine happens in a fixed order, so the same input and launch give the same bits.
#pragma once

#include <cstdint>

#include "foldkit/cuda/block/block_reduce.cuh"
#include "foldkit/cuda/device/vector_load.cuh"

namespace foldkit::cuda {

// Takes the next ticket: returns the old count and stores (old == last ? 0 : old + 1), so the
// counter is back at zero once every block has taken one. acq_rel: the release publishes this
// block's partial (stored just before); the acquire makes every earlier block's partial visible
// to the block that takes the last ticket. Cheaper than __threadfence() (fence.sc).
__device__ __forceinline__ unsigned take_ticket(unsigned* ticket, unsigned last) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(ticket), "r"(last) : "memory");
  return old;
}

__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

template <int kUnroll, class Spec>
__global__ void __launch_bounds__(1024)
    reduce_full_kernel(const typename Spec::input_type* __restrict__ in, std::int64_t n,
                       typename Spec::result_type* __restrict__ out, typename Spec::accum_type* __restrict__ partials,
                       unsigned int* __restrict__ ticket, Spec spec) {
  using T = typename Spec::input_type;
  using Acc = typename Spec::accum_type;
  using V = Vec16<T>;
  constexpr int kLanes = V::kCount;
  __shared__ BlockReduceStorage<Acc> storage;
  __shared__ bool is_last_block;

  // Split [0, n) into an unaligned head, whole aligned vectors, and a tail.
  // Programmatic dependent launch (Hopper): this grid may have been started before the previous
  // kernel in the stream finished; wait for it before touching memory. A no-op otherwise.
  wait_for_prior_grid();

  const auto misalign = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(in) & 15u);
  std::int64_t head = misalign == 0 ? 0 : (16 - misalign) / static_cast<std::int64_t>(sizeof(T));
  if (head > n) head = n;
  const std::int64_t vectors = (n - head) / kLanes;
  const std::int64_t tail_begin = head + vectors * kLanes;
  const V* __restrict__ vin = reinterpret_cast<const V*>(in + head);

  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;

  Acc lane[kLanes];
#pragma unroll
  for (int j = 0; j < kLanes; ++j) lane[j] = spec.identity();

  std::int64_t i = tid;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = load_streaming(vin + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t base = head + (i + u * stride) * kLanes;
#pragma unroll
      for (int j = 0; j < kLanes; ++j) lane[j] = spec.combine(lane[j], spec.from_element(v[u].v[j], base + j));
    }
  }
  for (; i < vectors; i += stride) {
    const V v = load_streaming(vin + i);
    const std::int64_t base = head + i * kLanes;
#pragma unroll
    for (int j = 0; j < kLanes; ++j) lane[j] = spec.combine(lane[j], spec.from_element(v.v[j], base + j));
  }

  Acc acc = lane[0];
#pragma unroll
  for (int j = 1; j < kLanes; ++j) acc = spec.combine(acc, lane[j]);
  if (tid < head) acc = spec.combine(acc, spec.from_element(in[tid], tid));
  if (tid < n - tail_begin) acc = spec.combine(acc, spec.from_element(in[tail_begin + tid], tail_begin + tid));

  acc = block_reduce(acc, spec.combine, spec.identity(), storage);
  // This block has read all its input: let the next kernel in the stream begin launching (it
  // still waits for this grid to complete before it touches memory).
  allow_next_grid();

  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = spec.finalize(acc, n);
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    is_last_block = take_ticket(ticket, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();  // extends thread 0's acquire to the whole block
  if (!is_last_block) return;

  // All partial loads are issued before the first combine: one L2 round trip, not one per slot.
  constexpr int kBatch = 8;
  Acc total = spec.identity();
  for (unsigned b0 = threadIdx.x; b0 < gridDim.x; b0 += kBatch * blockDim.x) {
    Acc p[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const unsigned b = b0 + k * blockDim.x;
      p[k] = b < gridDim.x ? load_from_l2(partials + b) : spec.identity();
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) total = spec.combine(total, p[k]);
  }
  __syncthreads();  // storage is reused
  total = block_reduce(total, spec.combine, spec.identity(), storage);
  if (threadIdx.x == 0) *out = spec.finalize(total, n);
}

}  // namespace foldkit::cuda
