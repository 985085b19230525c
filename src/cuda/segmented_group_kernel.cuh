// The segmented reduction's group path (offsets form; every op but argmin/argmax): three kernels
// in stream order, no host synchronisation. The merge path (segmented_reduce_kernel.cuh) stages
// 32 KiB tiles through shared memory with masks, a block scan and a look-back; this path reads each
// short segment where it lies, the design foldkit-seg-group-probe measured faster on both of
// issue #22's layouts (tuning/segmented_reduce_tuning.hpp). This path itself is not yet measured
// on a GPU: the library takes it only when tuning::kSegGroupDefault says so.
//
//   prepare_group_kernel   one thread an offset: validates it (the merge path's rule: a bad one
//       sets the workspace flag) and lists each segment longer than seg_group_long_items() in the
//       workspace: an entry (segment, chunk length, first chunk slot, chunks) by two atomics, and
//       the entry's index in the slot map for each of its chunk slots. The entries' order varies
//       from call to call; nothing a result depends on does (a chunk's range is a function of the
//       segment's length alone, and its sum lands in its own slot).
//   segmented_group_kernel  groups of kSegGroupLanes lanes, one segment a group; a warp takes
//       seg_group_batches() batches of 32 / lanes consecutive segments a step (warps grid-stride over
//       steps, so the grid reads the input front to back), the next step's offsets loaded before
//       this step's data. Lane l of a group loads the segment's aligned 16-byte vectors l,
//       l + lanes, ... (kSegGroupLoads at a time) and folds the elements inside the segment in
//       order; a fixed shuffle tree folds the group; lane 0 writes the result (an empty segment:
//       the empty rule). Listed segments are left to:
//   segmented_group_chunks_kernel  a block a chunk slot (grid-stride): the chunk's vectors folded
//       by thread (vector t, t + 256, ...), block_reduce's fixed tree, the partial into its slot;
//       the segment's last chunk to finish (a ticket an entry) folds its partials in chunk order
//       and writes the result. Its last block writes *status and leaves the workspace zeroed.
// The same input, offsets and alignment give the same bits on every call. Inputs need not be
// 16-byte aligned: vectors are the aligned 16-byte runs of memory that hold elements, and the
// two at the array's ends, when partial, are read element by element (never outside [0, n)).
//
// Bad offsets: the group and chunk kernels read the flag first (stream order makes it final) and
// write nothing. Listing cannot overrun the workspace (sized from n alone): valid offsets list
// at most n / (long items + 1) segments; an append past the sizes proves them bad (flag).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/segmented_prepare.hpp"  // the offsets' rules
#include "foldkit/cuda/block/block_reduce.cuh"
#include "foldkit/cuda/tuning/segmented_reduce_tuning.hpp"
#include "foldkit/cuda/warp/warp_reduce.cuh"
#include "foldkit/ops.hpp"
#include "segmented_reduce_launch.cuh"

namespace foldkit::cuda::seg {

// The path's memory primitives; the host emulation (segmented_reduce_emulation.cuh) defines its
// own before including this header.
#if !defined(FOLDKIT_SEG_EMULATION)
__device__ __forceinline__ uint4 load16_stream(const void* p) { return __ldcs(static_cast<const uint4*>(p)); }
__device__ __forceinline__ unsigned warp_max(unsigned v) { return __reduce_max_sync(0xffffffffu, v); }
__device__ __forceinline__ bool warp_any(bool v) { return __any_sync(0xffffffffu, v); }
#endif

// ---- the prepare kernel ------------------------------------------------------------------------

template <int kElementBytes>
__global__ void __launch_bounds__(tuning::kSegPrepareThreads) prepare_group_kernel(GroupParams p) {
  constexpr int kVec = 16 / kElementBytes;
  const std::int64_t S = p.num_segments, n = p.n;
  const std::int64_t long_items = tuning::seg_group_long_items(kElementBytes);
  const std::int64_t chunk_min = tuning::seg_group_chunk_items(kElementBytes);
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i <= S;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t v0 = p.offsets[i];
    const std::int64_t v1 = i < S ? p.offsets[i + 1] : 0;
    if (foldkit::detail::bad_offset(v0, i < S, v1, n)) {
      *static_cast<volatile unsigned*>(p.header) = 1u;
      continue;
    }
    if (i == S || foldkit::detail::offset_outside(v1, n) || v1 - v0 <= long_items) continue;
    const std::int64_t len = v1 - v0;
    // Chunks of at least chunk_min elements, at most kSegGroupMaxChunks of them, in whole vectors.
    std::int64_t per = (len + tuning::kSegGroupMaxChunks - 1) / tuning::kSegGroupMaxChunks;
    per = per < chunk_min ? chunk_min : (per + kVec - 1) / kVec * kVec;
    const int count = static_cast<int>((len + per - 1) / per);
    const unsigned e = atomicAdd(p.header + kGroupEntriesWord, 1u);
    const unsigned base = atomicAdd(p.header + kGroupSlotsWord, static_cast<unsigned>(count));
    if (e >= p.max_entries || static_cast<std::int64_t>(base) + count > p.max_slots) {  // only bad offsets get here
      *static_cast<volatile unsigned*>(p.header) = 1u;
      continue;
    }
    p.entries[e] = GroupEntry{i, per, static_cast<int>(base), count};
    for (int c = 0; c < count; ++c) p.map[base + c] = static_cast<int>(e);
  }
}

// ---- the element access both kernels share -----------------------------------------------------

// The input as aligned 16-byte vectors: vector q holds virtual positions q * kVec .. + kVec - 1,
// and element i sits at virtual position i + lead (lead: the input's offset into its first
// vector, in elements).
template <class T>
struct VectorView {
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  const T* in;
  const unsigned char* vbase;  // the first vector's address
  std::int64_t lead, n, last;  // last: the last vector's index
  __device__ __forceinline__ explicit VectorView(const void* p, std::int64_t count) : in(static_cast<const T*>(p)), n(count) {
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    vbase = reinterpret_cast<const unsigned char*>(addr & ~std::uintptr_t{15});
    lead = static_cast<std::int64_t>((addr & 15u) / sizeof(T));
    last = count > 0 ? (count - 1 + lead) / kVec : 0;
  }
  // Whether vector q lies wholly inside [0, n).
  __device__ __forceinline__ bool whole(std::int64_t q) const {
    return (q > 0 || lead == 0) && (q < last || (n + lead) % kVec == 0);
  }
  __device__ __forceinline__ void load(std::int64_t q, T (&x)[kVec]) const {
    const uint4 raw = load16_stream(vbase + q * 16);
    memcpy(x, &raw, 16);
  }
  // Element by element, only positions inside [0, n) (the others are left as they are: never folded).
  __device__ __forceinline__ void load_edge(std::int64_t q, T (&x)[kVec]) const {
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const std::int64_t i = q * kVec + k - lead;
      if (i >= 0 && i < n) x[k] = in[i];
    }
  }
  // Vector q; kEdge: the caller's range may hold a partial end vector, read element by element
  // (without kEdge the loop has no such test).
  template <bool kEdge>
  __device__ __forceinline__ void load_any(std::int64_t q, T (&x)[kVec]) const {
    if (!kEdge || whole(q)) load(q, x);
    else load_edge(q, x);
  }
};

// acc . x[k] over the positions pos0 + k that lie inside [0, len), in order (both kernels' fold).
template <class Tr, class F, class T, int kVec, class I>
__device__ __forceinline__ void fold_inside(const F& f, typename Tr::accum_type& acc, const T (&x)[kVec], I pos0, I len) {
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    const I pos = pos0 + k;
    if (pos >= 0 && pos < len) acc = f(acc, Tr::from_element(x[k], 0));
  }
}

// ---- the group kernel --------------------------------------------------------------------------

template <ReduceOp Op, class T>
__global__ void __launch_bounds__(tuning::kSegThreads, tuning::kSegGroupMinBlocks) segmented_group_kernel(GroupParams p) {
  using Tr = reduce_traits<Op, T>;
  using A = typename Tr::accum_type;
  using R = typename Tr::result_type;
  static_assert(!Tr::kUsesIndex, "argmin/argmax take the merge path");
  constexpr int kLanes = tuning::kSegGroupLanes, kLoads = tuning::kSegGroupLoads;
  constexpr int kBatches = tuning::seg_group_batches(sizeof(T));
  constexpr int kPerWarp = 32 / kLanes, kSegs = kPerWarp * kBatches;
  static_assert(kSegs < 32, "a step's kSegs + 1 offsets, one a lane");
  using View = VectorView<T>;
  constexpr int kVec = View::kVec;
  if (load_acquire(p.header) != 0u) return;  // bad offsets: nothing written (warp-uniform)
  const typename Tr::combine_type f{};
  const View v(p.in, p.n);
  const std::int64_t S = p.num_segments;
  const std::int64_t long_items = tuning::seg_group_long_items(sizeof(T));
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int g = lane / kLanes, gl = lane % kLanes;
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32) * kSegs;
  const auto load_offsets = [&](std::int64_t s0) { return lane <= kSegs && s0 + lane <= S ? p.offsets[s0 + lane] : std::int64_t{0}; };
  std::int64_t s0 = warp * kSegs;
  std::int64_t mine = s0 < S ? load_offsets(s0) : 0;
  for (; s0 < S; s0 += step) {
    const std::int64_t mine_next = s0 + step < S ? load_offsets(s0 + step) : 0;  // in flight during this step
    // Positions relative to a segment fit 32 bits: a group's segments are at most long_items long.
    std::int64_t q0[kBatches];
    int pos0[kBatches], len[kBatches], span[kBatches];
    bool to_write[kBatches];
    unsigned rounds = 0;
    bool edge = false;
#pragma unroll
    for (int d = 0; d < kBatches; ++d) {
      const std::int64_t b = __shfl_sync(0xffffffffu, mine, d * kPerWarp + g);
      const std::int64_t e = __shfl_sync(0xffffffffu, mine, d * kPerWarp + g + 1);
      to_write[d] = s0 + d * kPerWarp + g < S && e - b <= long_items;
      len[d] = to_write[d] ? static_cast<int>(e - b) : 0;
      q0[d] = (b + v.lead) / kVec;
      pos0[d] = static_cast<int>(q0[d] * kVec - (b + v.lead));  // vector q0's first position, relative to the segment (-kVec < . <= 0)
      span[d] = len[d] > 0 ? static_cast<int>((e - 1 + v.lead) / kVec - q0[d] + 1) : 0;
      const auto r = static_cast<unsigned>((span[d] + kLanes - 1) / kLanes);
      rounds = r > rounds ? r : rounds;
      edge |= span[d] > 0 && (!v.whole(q0[d]) || !v.whole(q0[d] + span[d] - 1));
    }
    const int warp_rounds = static_cast<int>(warp_max(rounds));
    A acc[kBatches];
#pragma unroll
    for (int d = 0; d < kBatches; ++d) acc[d] = Tr::identity();
    // The step's rounds; kEdge: some vector is the array's first or last one and partial (at
    // most two steps a call), read element by element. The common path has no such test in it.
    const auto fold_rounds = [&](auto edge_tag) {
      constexpr bool kEdge = decltype(edge_tag)::value;
      for (int k = 0; k < warp_rounds; k += kLoads) {
        T x[kBatches][kLoads][kVec];
#pragma unroll
        for (int d = 0; d < kBatches; ++d)
#pragma unroll
          for (int u = 0; u < kLoads; ++u) {
            const int j = (k + u) * kLanes + gl;  // this lane's vector of the segment
            if (j < span[d]) v.template load_any<kEdge>(q0[d] + j, x[d][u]);
          }
#pragma unroll
        for (int d = 0; d < kBatches; ++d)
#pragma unroll
          for (int u = 0; u < kLoads; ++u) {
            const int j = (k + u) * kLanes + gl;
            if (j < span[d]) fold_inside<Tr>(f, acc[d], x[d][u], pos0[d] + j * kVec, len[d]);
          }
      }
    };
    if (warp_any(edge)) fold_rounds(std::true_type{});
    else fold_rounds(std::false_type{});
#pragma unroll
    for (int d = 0; d < kBatches; ++d) {
      acc[d] = group_reduce(acc[d], kLanes, f);  // the group's fixed tree: its first lane gets the fold
      if (gl == 0 && to_write[d]) static_cast<R*>(p.out)[s0 + d * kPerWarp + g] = Tr::finalize(acc[d], len[d]);
    }
    mine = mine_next;
  }
}

// ---- the chunk kernel --------------------------------------------------------------------------

template <ReduceOp Op, class T>
__global__ void __launch_bounds__(tuning::kSegThreads, tuning::seg_group_chunk_min_blocks(sizeof(T)))
    segmented_group_chunks_kernel(GroupParams p) {
  using Tr = reduce_traits<Op, T>;
  using A = typename Tr::accum_type;
  using R = typename Tr::result_type;
  static_assert(!Tr::kUsesIndex, "argmin/argmax take the merge path");
  static_assert(sizeof(A) <= kGroupPartialBytes, "a partial a slot");
  using View = VectorView<T>;
  constexpr int kVec = View::kVec;
  constexpr int kThreads = tuning::kSegThreads;
  constexpr int kLoads = tuning::kSegGroupChunkLoads;
  struct Shared {
    BlockReduceStorage<A> red;
    int entry;
    bool last, last_block;
  };
#if defined(FOLDKIT_SEG_EMULATION)
  Shared& sm = emu::block_shared<Shared>();
#else
  __shared__ Shared sm;
#endif
  const typename Tr::combine_type f{};
  const int tid = static_cast<int>(threadIdx.x);
  const bool bad = load_acquire(p.header) != 0u;
  const std::int64_t listed_all = p.header[kGroupEntriesWord], slots_all = p.header[kGroupSlotsWord];
  const std::int64_t listed = listed_all < p.max_entries ? listed_all : p.max_entries;
  const std::int64_t slots = slots_all < p.max_slots ? slots_all : p.max_slots;
  A* const partials = static_cast<A*>(p.partials);
  const View v(p.in, p.n);
  for (std::int64_t slot = bad ? slots : blockIdx.x; slot < slots; slot += gridDim.x) {
    if (tid == 0) {
      sm.entry = p.map[slot];
      p.map[slot] = 0;  // the workspace is left zeroed
    }
    __syncthreads();
    const GroupEntry en = p.entries[sm.entry];
    const int c = static_cast<int>(slot - en.base);
    const std::int64_t b = p.offsets[en.segment], e = p.offsets[en.segment + 1];
    const std::int64_t cb = b + c * en.chunk_items, ce = cb + en.chunk_items < e ? cb + en.chunk_items : e;
    // The chunk's vectors: thread t takes t, t + kThreads, ... of them, kLoads at a time.
    const std::int64_t q0 = (cb + v.lead) / kVec, pos0 = q0 * kVec - (cb + v.lead);
    const std::int64_t span = (ce - 1 + v.lead) / kVec - q0 + 1;
    const std::int64_t clen = ce - cb;
    const bool edge = !v.whole(q0) || !v.whole(q0 + span - 1);  // block-uniform
    A acc = Tr::identity();
    const auto fold_chunk = [&](auto edge_tag) {
      constexpr bool kEdge = decltype(edge_tag)::value;
      for (std::int64_t j0 = 0; j0 < span; j0 += static_cast<std::int64_t>(kThreads) * kLoads) {
        T x[kLoads][kVec];
#pragma unroll
        for (int u = 0; u < kLoads; ++u) {
          const std::int64_t j = j0 + static_cast<std::int64_t>(u) * kThreads + tid;
          if (j < span) v.template load_any<kEdge>(q0 + j, x[u]);
        }
#pragma unroll
        for (int u = 0; u < kLoads; ++u) {
          const std::int64_t j = j0 + static_cast<std::int64_t>(u) * kThreads + tid;
          if (j < span) fold_inside<Tr>(f, acc, x[u], pos0 + j * kVec, clen);
        }
      }
    };
    if (edge) fold_chunk(std::true_type{});
    else fold_chunk(std::false_type{});
    const A y = block_reduce(acc, f, Tr::identity(), sm.red);  // (thread 0 gets it)
    if (tid == 0) {
      partials[slot] = y;
      __threadfence();
      sm.last = atomicAdd(p.tickets + sm.entry, 1u) == static_cast<unsigned>(en.count - 1);
    }
    __syncthreads();
    if (sm.last) {  // the segment's partials in chunk order (count <= kThreads: one a thread), the same tree
      __threadfence();
      A z = Tr::identity();
      if (tid < en.count) {
        A* const w = partials + en.base + tid;
        z = *static_cast<volatile A*>(w);
        *w = A{};  // zeroed again
      }
      __syncthreads();  // sm.red is reused
      const A total = block_reduce(z, f, Tr::identity(), sm.red);
      if (tid == 0) {
        static_cast<R*>(p.out)[en.segment] = Tr::finalize(total, e - b);
        p.tickets[sm.entry] = 0u;
      }
    }
    __syncthreads();  // sm is reused by the next slot
  }
  // The call's end: the last block writes *status and zeroes what the call used.
  if (tid == 0) {
    __threadfence();
    sm.last_block = atomicAdd(p.header + 1, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!sm.last_block) return;
  __threadfence();
  for (std::int64_t k = tid; k < listed; k += kThreads) p.entries[k] = GroupEntry{};
  if (bad)
    for (std::int64_t k = tid; k < slots; k += kThreads) p.map[k] = 0;
  __syncthreads();
  if (tid == 0) {
    if (p.status != nullptr) *p.status = bad ? 1 : 0;
    p.header[0] = 0u;
    p.header[1] = 0u;
    p.header[kGroupEntriesWord] = 0u;
    p.header[kGroupSlotsWord] = 0u;
  }
}

// launch_group (segmented_reduce_launch.cuh): the prepare kernel a thread an offset, the others
// as many blocks as their launch bounds keep resident (their loops are grid-strided).
#if defined(__CUDACC__)
template <ReduceOp Op, class T>
void launch_group(const GroupParams& p, int sm_count, cudaStream_t stream) {
  constexpr int kPrep = tuning::kSegPrepareThreads;
  const auto prep_grid = static_cast<unsigned>((p.num_segments + 1 + kPrep - 1) / kPrep);
  prepare_group_kernel<sizeof(T)><<<prep_grid, kPrep, 0, stream>>>(p);
  segmented_group_kernel<Op, T><<<static_cast<unsigned>(sm_count * tuning::kSegGroupMinBlocks), tuning::kSegThreads, 0, stream>>>(p);
  segmented_group_chunks_kernel<Op, T>
      <<<static_cast<unsigned>(sm_count * tuning::seg_group_chunk_min_blocks(sizeof(T))), tuning::kSegThreads, 0, stream>>>(p);
}
#endif

#define FOLDKIT_SEG_GROUP_INSTANTIATE(T)                                                        \
  template void launch_group<ReduceOp::sum, T>(const GroupParams&, int, cudaStream_t);  \
  template void launch_group<ReduceOp::prod, T>(const GroupParams&, int, cudaStream_t); \
  template void launch_group<ReduceOp::min, T>(const GroupParams&, int, cudaStream_t);  \
  template void launch_group<ReduceOp::max, T>(const GroupParams&, int, cudaStream_t);  \
  template void launch_group<ReduceOp::mean, T>(const GroupParams&, int, cudaStream_t);

}  // namespace foldkit::cuda::seg
