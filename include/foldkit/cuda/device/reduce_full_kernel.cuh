// The full-array reduction kernel: one launch reduces any n to one value.
//
// Phase 1, every block: each thread reduces its grid-strided share of 16-byte vectors, keeping
// kUnroll loads in flight and one accumulator per vector lane (independent dependency chains);
// the elements before the first 16-byte boundary and after the last whole vector go to the
// first threads of the grid. A block reduce leaves one partial per block, which the block
// publishes to its flagged slot in the workspace (flagged_slot.cuh).
// Phase 2, one block: the block that STARTED last (a ticket taken when each block starts,
// its latency hidden behind the loads) collects every slot, in a fixed order, and writes the
// result. Waiting only in the last-started block cannot deadlock: every other block is already
// resident or finished and waits for nothing. That block then zeroes the slots and the ticket,
// so the workspace is clean for the next launch and concurrent launches with separate
// workspaces never interact. No fences are needed on the critical path: a partial reaches the
// collector in about one L2 round trip.
//
// Determinism: the work assignment depends only on (n, grid, block, input alignment) and on
// blockIdx (never on the ticket), and every combine happens in a fixed order, so the same input
// and launch configuration give the same bits.
#pragma once

#include <cstdint>

#include "foldkit/cuda/block/block_reduce.cuh"
#include "foldkit/cuda/device/flagged_slot.cuh"
#include "foldkit/cuda/device/grid_dependency.cuh"
#include "foldkit/cuda/device/reduce_trace.cuh"
#include "foldkit/cuda/device/thread_state.cuh"
#include "foldkit/cuda/device/vector_load.cuh"

namespace foldkit::cuda {

// How [0, n) splits for 16-byte loads: `head` elements before the first 16-byte boundary,
// `vectors` whole aligned vectors, then `tail` elements. Computed on the host (it knows the
// pointer and n) and passed as a kernel parameter: in the kernel this took ~35 instructions of
// 64-bit arithmetic (mask, clamp, divide, multiply) on the path to the first load.
struct ReduceSplit {
  std::int64_t vectors;
  int head;  // < 16 / sizeof(T)
  int tail;  // < 16 / sizeof(T)
};

template <class T>
__host__ __device__ inline ReduceSplit split_for_vectors(const T* in, std::int64_t n) {
  constexpr std::int64_t kLanes = 16 / sizeof(T);
  const auto misalign = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(in) & 15u);
  std::int64_t head = misalign == 0 ? 0 : (16 - misalign) / static_cast<std::int64_t>(sizeof(T));
  if (head > n) head = n;
  const std::int64_t vectors = (n - head) / kLanes;
  return ReduceSplit{vectors, static_cast<int>(head), static_cast<int>(n - head - vectors * kLanes)};
}

// Takes this block's start ticket with atom.inc (old + 1, wrapping to 0 past 2^31 - 1, which a
// ticket never reaches: it counts blocks and is reset by every launch). Not atomicAdd: ptxas
// aggregates a warp's atomic adds (even one thread's, even from inline PTX, even an inc whose
// limit is 0xffffffff) and broadcasts the result with a shuffle, and that shuffle waits for
// the atomic's round trip through L2, contended by every block of the grid, before warp 0
// issues any of its loads. With this inc nothing reads the ticket until the block's input is
// reduced (checked in the SASS: ATOMG.E.INC, no SHFL before the first LDG).
__device__ __forceinline__ unsigned take_ticket(unsigned* ticket) {
  unsigned old;
  asm volatile("atom.relaxed.gpu.global.inc.u32 %0, [%1], 0x7fffffff;" : "=r"(old) : "l"(ticket));
  return old;
}

// The end of phase 1 for either path: thread t also folds in element t of the unaligned head
// and element t of the tail (at most 15 of each), after its vectors.
template <class Spec, class Index>
__device__ __forceinline__ typename Spec::accum_type fold_head_and_tail(typename Spec::accum_type acc,
                                                                         const typename Spec::input_type* __restrict__ in,
                                                                         ReduceSplit split, Index t, const Spec& spec) {
  constexpr int kLanes = Vec16<typename Spec::input_type>::kCount;
  if (t < static_cast<Index>(split.head)) acc = spec.combine(acc, spec.from_element(in[t], t));
  if (t < static_cast<Index>(split.tail)) {
    const std::int64_t tail_begin = split.head + split.vectors * kLanes;
    acc = spec.combine(acc, spec.from_element(in[tail_begin + t], tail_begin + t));
  }
  trace_barrier(spec);
  if (threadIdx.x == 0) trace_point(spec, kTraceLoopDone);
  return acc;
}

// Phase 1 of every reduction kernel, per thread: this thread's share of [0, n), reduced to one
// value. The grid-strided assignment depends only on blockIdx, gridDim and the input's
// alignment.
template <int kUnroll, class Spec>
__device__ __forceinline__ typename Spec::accum_type reduce_thread_share(
    const typename Spec::input_type* __restrict__ in, std::int64_t n, ReduceSplit split, const Spec& spec) {
  using V = Vec16<typename Spec::input_type>;

  const std::int64_t head = split.head;
  const std::int64_t vectors = split.vectors;
  const V* __restrict__ vin = reinterpret_cast<const V*>(in + split.head);

  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;

  using State = ThreadAccumulator<Spec>;
  typename State::type state = State::init(spec);

  // Zero at run time (n < 2^62), opaque to the compiler: see after_all_loads.
  const auto zero = static_cast<unsigned>(static_cast<std::uint64_t>(n) >> 62);
  std::int64_t i = tid;
  const std::int64_t main_end = vectors - (kUnroll - 1) * stride;  // i < main_end: kUnroll loads fit
  for (; i < main_end; i += kUnroll * stride) {
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = load_streaming(vin + i + u * stride);
    after_all_loads(v, zero);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) State::update(spec, state, v[u], head, i + u * stride);
  }
  // Fewer than kUnroll strides remain: issue their loads in batches of up to 3 before using any
  // (a plain loop here would wait one DRAM round trip per stride). States wider than 32 bytes
  // per thread (8 lanes of 8 bytes) leave no registers for a batch: one at a time there.
  constexpr int kBatch = sizeof(typename State::type) > 32 ? 1 : (kUnroll - 1 < 3 ? kUnroll - 1 : 3);
  if constexpr (kBatch > 1) {
    for (; i < vectors; i += kBatch * stride) {
      V v[kBatch] = {};
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        if (i + u * stride < vectors) v[u] = load_streaming(vin + i + u * stride);
      after_all_loads(v, zero);
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        if (i + u * stride < vectors) State::update(spec, state, v[u], head, i + u * stride);
    }
  } else {
    for (; i < vectors; i += stride) {
      const V v = load_streaming(vin + i);
      State::update(spec, state, v, head, i);
    }
  }

  return fold_head_and_tail(State::finish(spec, state, head, tid, vectors), in, split, tid, spec);
}

// Phase 1 for a one-block grid whose input is one batch per thread (vectors <= kUnroll *
// blockDim.x): the same assignment as reduce_thread_share (thread t takes vectors t, t +
// blockDim.x, ...), as straight-line code with 32-bit indices and a predicate per update. A
// one-block call is latency from start to end, and reduce_thread_share's 64-bit grid-stride
// bookkeeping and loops put ~180 instructions per warp on that path (ncu, f32 sum of 4096),
// against ~50 in a bare one-block kernel that was 0.35 us faster.
template <int kUnroll, class Spec>
__device__ __forceinline__ typename Spec::accum_type reduce_one_batch(const typename Spec::input_type* __restrict__ in,
                                                                       std::int64_t n, ReduceSplit split,
                                                                       const Spec& spec) {
  using V = Vec16<typename Spec::input_type>;
  using State = ThreadAccumulator<Spec>;
  const unsigned vectors = static_cast<unsigned>(split.vectors);
  const unsigned t = threadIdx.x;
  const unsigned stride = blockDim.x;
  const V* __restrict__ vin = reinterpret_cast<const V*>(in + split.head);
  const auto zero = static_cast<unsigned>(static_cast<std::uint64_t>(n) >> 62);  // see after_all_loads

  typename State::type state = State::init(spec);
  if (vectors != 0) {
    // Every load is unconditional, clamped to the last vector (a repeat of a line in flight),
    // and only the update is predicated: with predicated loads (`cond ? load : V{}`) ptxas
    // copied each loaded vector into its zeroed register as soon as it was issued, and that
    // copy waited for the load: the f64 sum's 8 loads left in two rounds (2^14: +1 us).
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = load_streaming(vin + ::min(t + u * stride, vectors - 1));
    after_all_loads(v, zero);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (t + u * stride < vectors) State::update(spec, state, v[u], split.head, t + u * stride);
  }

  return fold_head_and_tail(State::finish(spec, state, split.head, t, vectors), in, split, t, spec);
}

// This block's share of [0, n), reduced to one value that thread 0 receives.
template <int kUnroll, class Spec>
__device__ __forceinline__ typename Spec::accum_type reduce_block_share(
    const typename Spec::input_type* __restrict__ in, std::int64_t n, ReduceSplit split, const Spec& spec,
    BlockReduceStorage<typename Spec::accum_type>& storage) {
  return block_reduce(reduce_thread_share<kUnroll>(in, n, split, spec), spec.combine, spec.identity(), storage);
}

// Phase 2, in the collector block: waits for every block's slot and returns this thread's
// combine of the slots it read (slots threadIdx.x, + blockDim.x, ...: a fixed order), zeroing
// each slot and the ticket for the next launch. All loads of a poll round are issued before any
// is examined.
template <class Spec>
__device__ __forceinline__ typename Spec::accum_type collect_slots(FlaggedSlot<typename Spec::accum_type>* slots,
                                                                    unsigned* ticket, const Spec& spec) {
  using Acc = typename Spec::accum_type;
  constexpr int kBatch = 8 / FlaggedSlot<Acc>::kWords;  // 8 words in flight per thread and round
  Acc total = spec.identity();
  for (unsigned b0 = threadIdx.x; b0 < gridDim.x; b0 += kBatch * blockDim.x) {
    Acc p[kBatch];
    unsigned pending = 0;
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      p[k] = spec.identity();
      if (b0 + k * blockDim.x < gridDim.x) pending |= 1u << k;
    }
    poll_slots(pending, [&](int k) { return slots + b0 + k * blockDim.x; }, p);
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      total = spec.combine(total, p[k]);
      if (b0 + k * blockDim.x < gridDim.x) clear_slot(slots + b0 + k * blockDim.x);
    }
  }
  if (threadIdx.x == 0) {
    trace_point(spec, kTraceSeen0);
    *ticket = 0u;
  }
  trace_barrier(spec);
  if (threadIdx.x == 0) trace_point(spec, kTraceAllSeen);
  return total;
}

template <int kUnroll, class Spec>
__global__ void __launch_bounds__(1024)
    reduce_full_kernel(const typename Spec::input_type* __restrict__ in, std::int64_t n, ReduceSplit split,
                       typename Spec::result_type* __restrict__ out,
                       FlaggedSlot<typename Spec::accum_type>* __restrict__ slots, unsigned int* __restrict__ ticket,
                       Spec spec) {
  using Acc = typename Spec::accum_type;
  __shared__ BlockReduceStorage<Acc> storage;
  __shared__ bool is_collector;

  // Programmatic dependent launch (Hopper): this grid may have been started before the previous
  // kernel in the stream finished; wait for it before touching memory. A no-op otherwise.
  wait_for_prior_grid();
  if (threadIdx.x == 0) trace_point(spec, kTraceEntry);
  // The start ticket; its result is not needed until the block's input is reduced.
  unsigned start_ticket = 0;
  if (gridDim.x > 1 && threadIdx.x == 0) start_ticket = take_ticket(ticket);

  const bool one_batch = gridDim.x == 1 && split.vectors <= static_cast<std::int64_t>(kUnroll) * blockDim.x;
  Acc acc = one_batch ? reduce_one_batch<kUnroll>(in, n, split, spec) : reduce_thread_share<kUnroll>(in, n, split, spec);
  // This thread has read all its input: let the next kernel in the stream begin launching (it
  // still waits for this grid to complete before it touches memory).
  allow_next_grid();

  // Pass 0 reduces this block's values and publishes the partial; pass 1, in the collector
  // only, reduces the partials it collected and writes the result. One loop, so that the block
  // reduce and the finalize are compiled once (the f32 sum kernel: 15 shuffles instead of 30,
  // 10 % less code). The hope was that the collector would then run instruction-cache-warm
  // code; measured end to end it changed nothing beyond noise (docs/perf-log/2026-11-25.md,
  // third session).
  bool collecting = false;
#pragma unroll 1
  for (;;) {
    acc = block_reduce(acc, spec.combine, spec.identity(), storage);
    if (threadIdx.x == 0) trace_point(spec, collecting ? kTraceFinalReduced : kTraceReduced);
    if (collecting || gridDim.x == 1) {
      if (threadIdx.x == 0) {
        *out = spec.finalize(acc, n, in);
        trace_point(spec, kTraceDone);
        trace_flush(spec);
      }
      return;
    }
    if (threadIdx.x == 0) {
      publish_to_slot(slots + blockIdx.x, acc);
      is_collector = start_ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_collector) {
      if (threadIdx.x == 0) trace_flush(spec);
      return;
    }
    if (threadIdx.x == 0) trace_point(spec, kTraceCollectStart);
    acc = collect_slots(slots, ticket, spec);
    collecting = true;
    // Pass 0's reads of the storage were over before the barrier above, so this barrier is not
    // needed for correctness; without it the calls of 264 blocks of 512 threads (2^22-2^28 f32)
    // took 0.5 us longer on the H100 (docs/perf-log/2026-11-26.md, second session), so it stays.
    __syncthreads();
  }
}

}  // namespace foldkit::cuda
