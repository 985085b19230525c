// Seed 002's kernels ("CUDA reduction evolution", cooperative groups): reduce6, reduce7,
// reduce7_v1 and reduce8, on int and float. The algorithms are the seed's; its bugs are fixed
// where they are, each fix commented ("Fix:"). Host-side launching lives in variants.cu.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstddef>
#include <type_traits>

#include "ladder/common.cuh"

namespace foldkit::ladder::seed002 {

namespace cg = cooperative_groups;

// ---------------------------------------------------------------------------------------------
// reduce6 (rung 0): reduce5 in cooperative-groups syntax (thread_block, thread_rank(),
// block.sync()), the seed's "translation only". Bottleneck it keeps addressing, as reduce5 did:
// each thread first sums several elements in registers (grid-stride, `items` coalesced loads per
// step), so the block's shared-memory tree runs once per block rather than once per BLOCK
// elements; the tree is unrolled at compile time (BLOCK is a template parameter, which is why
// reduce6 needs a power-of-two block size in [32, 1024]).
// Writes one partial per block to out[blockIdx.x] (a second launch, one block, reduces those).
// `scrub`, when not null, is `in` itself: every element read is zeroed again by the thread that
// read it (the second pass uses it to hand the caller's workspace back zeroed).
// ---------------------------------------------------------------------------------------------
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    reduce6(const T* in, std::size_t n, int items, T* out, T* scrub) {
  static_assert(is_power_of_two(BLOCK) && BLOCK >= 32 && BLOCK <= 1024,
                "reduce6's unrolled tree needs a power-of-two block in [32, 1024]");
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);  // all threads: collective
  __shared__ T sdata[BLOCK];

  const unsigned tid = block.thread_rank();
  // Fix: 64-bit indices (the seed's `unsigned int n` and indices stop at 2^32 elements, and a
  // grid-stride index in 32 bits can wrap before it passes n).
  const std::size_t step = static_cast<std::size_t>(BLOCK) * static_cast<std::size_t>(items);
  const std::size_t stride = step * gridDim.x;
  const std::size_t last = static_cast<std::size_t>(items - 1) * BLOCK;  // offset of the step's last item

  T sum = T(0);
  std::size_t i = static_cast<std::size_t>(block.group_index().x) * step + tid;
  // Whole steps: all `items` loads of this thread are in range, no per-load test.
  for (; i + last < n; i += stride) {
    for (int k = 0; k < items; ++k) {
      const std::size_t j = i + static_cast<std::size_t>(k) * BLOCK;
      sum = wrap_add(sum, in[j]);
      if (scrub != nullptr) scrub[j] = T(0);
    }
  }
  // Fix: any n, not a multiple of the step (the seed elides its load loop, "as before"; the
  // classic one reads i + blockSize unchecked). At most one ragged step remains (the next whole
  // step would start past n), and each of its loads is bounds-checked.
  for (int k = 0; k < items; ++k) {
    const std::size_t j = i + static_cast<std::size_t>(k) * BLOCK;
    if (j < n) {
      sum = wrap_add(sum, in[j]);
      if (scrub != nullptr) scrub[j] = T(0);
    }
  }

  sdata[tid] = sum;
  block.sync();
  // The seed's `if (block.size() >= 512) { ... block.sync(); }` cascade: BLOCK is a compile-time
  // constant, so this loop unrolls into exactly those steps (halving while > 64 values remain).
#pragma unroll
  for (int s = BLOCK / 2; s >= 64; s >>= 1) {
    if (tid < static_cast<unsigned>(s)) {
      sum = wrap_add(sum, sdata[tid + s]);
      sdata[tid] = sum;
    }
    block.sync();
  }
  // Last warp. Fix: reduce5's `volatile` warp-synchronous tail relied on lock-step warps, which
  // Volta's independent thread scheduling no longer guarantees; each step is now separated by
  // warp.sync() (a __syncwarp). Within a step only lanes < s write (sdata[0, s)) and they read
  // only sdata[s, 2s) (their own running sum is in a register), so no lane reads a slot another
  // lane writes in the same step.
  if (tid < 32) {  // exactly warp 0, all 32 lanes: warp.sync() below is not divergent
#pragma unroll
    for (int s = (BLOCK >= 64 ? 32 : 16); s >= 1; s >>= 1) {
      if (tid < static_cast<unsigned>(s)) {
        sum = wrap_add(sum, sdata[tid + s]);
        if (s > 1) sdata[tid] = sum;  // the last step's result stays in lane 0's register
      }
      warp.sync();
    }
  }
  if (tid == 0) out[block.group_index().x] = sum;
}

// reduce7's hand-written warp reduction: five shfl_down steps through registers; lane 0 ends
// with the warp's sum (other lanes hold partial sums nobody uses).
template <class T>
__device__ __forceinline__ T warp_reduce_sum(const cg::thread_block_tile<32>& warp, T value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    value = wrap_add(value, warp.shfl_down(value, offset));
  return value;
}

// ---------------------------------------------------------------------------------------------
// reduce7 (rung 1): no shared memory and no block-wide barrier at all. Bottleneck addressed:
// reduce6's shared-memory tree and its block.sync() steps (and the second launch for the block
// partials). Each thread sums a grid-stride range in a register, the warp reduces with shuffles,
// and each warp's lane 0 does one atomicAdd into *out (which the launch zeroes first).
// Any block size that is a multiple of 32 works (whole warps for the shuffles).
// Fix: the grid-stride index is 64-bit and int sums wrap through wrap_add (the seed's int +=
// overflows, which is undefined behaviour; the hardware atomicAdd on int wraps anyway).
// ---------------------------------------------------------------------------------------------
template <class T>
__global__ void reduce7(const T* in, std::size_t n, T* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);

  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  T sum = T(0);
  for (std::size_t i = static_cast<std::size_t>(block.group_index().x) * blockDim.x +
                       block.thread_rank();
       i < n; i += stride)
    sum = wrap_add(sum, in[i]);

  sum = warp_reduce_sum(warp, sum);
  if (warp.thread_rank() == 0) atomicAdd(out, sum);  // int: wraps mod 2^32 in hardware
}

// The 16-byte vector of four elements reduce7_v1 loads: float4 for float, int4 for int.
template <class T>
using vec4_t = std::conditional_t<std::is_same_v<T, float>, float4, int4>;

// ---------------------------------------------------------------------------------------------
// reduce7_v1 (rung 2): reduce7 with 128-bit loads (LDG.128): a quarter of the load
// instructions for the same bytes, more bytes in flight per thread. Bottleneck addressed:
// load-instruction issue and latency hiding in reduce7's scalar loop.
// Fix: the seed cast `data` to float4* and looped to n / 4, assuming a 16-byte aligned pointer
// and n % 4 == 0 (it crashed on `data + 1` and dropped up to 3 trailing elements). Here the
// host splits [0, n) into a scalar head up to the first 16-byte boundary (`head` <= 3
// elements), `nvec` whole aligned vectors, and a scalar tail (< 4 elements); the first threads
// of the grid take the head and tail elements. Nothing is read outside in[0, n). The seed's
// `int tid` vector index is 64-bit here.
// ---------------------------------------------------------------------------------------------
template <class T>
__global__ void reduce7_v1(const T* in, std::size_t n, std::size_t head, std::size_t nvec,
                           T* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  using V = vec4_t<T>;

  const std::size_t gtid =
      static_cast<std::size_t>(block.group_index().x) * blockDim.x + block.thread_rank();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tail_start = head + 4 * nvec;

  T sum = T(0);
  if (gtid < head) sum = in[gtid];
  if (gtid < n - tail_start) sum = wrap_add(sum, in[tail_start + gtid]);

  // Four independent per-component sums, as the seed's v4 accumulator.
  const V* vin = reinterpret_cast<const V*>(in + head);  // 16-byte aligned by construction
  V acc;
  acc.x = acc.y = acc.z = acc.w = T(0);
  for (std::size_t v = gtid; v < nvec; v += stride) {
    const V t = vin[v];
    acc.x = wrap_add(acc.x, t.x);
    acc.y = wrap_add(acc.y, t.y);
    acc.z = wrap_add(acc.z, t.z);
    acc.w = wrap_add(acc.w, t.w);
  }
  // Horizontal step: shuffles move scalars, so fold the four lanes of the vector first.
  sum = wrap_add(sum, wrap_add(wrap_add(acc.x, acc.y), wrap_add(acc.z, acc.w)));

  sum = warp_reduce_sum(warp, sum);
  if (warp.thread_rank() == 0) atomicAdd(out, sum);
}

// ---------------------------------------------------------------------------------------------
// reduce8 (rung 3): reduce7 (scalar grid-stride loads, one atomicAdd per warp) with the
// hand-written shuffle ladder replaced by cg::reduce from <cooperative_groups/reduce.h>.
// What it removes is the error-prone code, and for int the five shuffle+add rounds: on sm_80+
// cg::reduce of a 32-bit integer sum compiles to a single redux.sync instruction.
// Fix: int sums go through cg::plus<unsigned> so that overflow wraps (defined) instead of the
// seed's cg::plus<int> (signed overflow is undefined behaviour in C++).
// ---------------------------------------------------------------------------------------------
template <class T>
__global__ void reduce8(const T* in, std::size_t n, T* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);

  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  T sum = T(0);
  for (std::size_t i = static_cast<std::size_t>(block.group_index().x) * blockDim.x +
                       block.thread_rank();
       i < n; i += stride)
    sum = wrap_add(sum, in[i]);

  if constexpr (std::is_same_v<T, int>)
    sum = static_cast<int>(
        cg::reduce(warp, static_cast<unsigned>(sum), cg::plus<unsigned>()));
  else
    sum = cg::reduce(warp, sum, cg::plus<T>());
  if (warp.thread_rank() == 0) atomicAdd(out, sum);
}

}  // namespace foldkit::ladder::seed002
