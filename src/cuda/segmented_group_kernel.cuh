// The segmented reduction's group path (offsets form; every op but argmin/argmax): four kernels
// in stream order, each launched programmatically (PDL: it waits for the one before it first), no
// host synchronisation. The merge path (segmented_reduce_kernel.cuh) stages
// 32 KiB tiles through shared memory with masks, a block scan and a look-back; this path reads each
// short segment where it lies (foldkit-seg-group-probe; measured in tuning/segmented_reduce_tuning.hpp,
// which also says whether the library takes it: tuning::kSegGroupDefault).
//
//   prepare_group_kernel   validates each offset (a resident grid over tiles of
//       kSegPrepareSegments, the next tile's loads in flight; the merge path's rule: a bad one
//       sets the workspace flag), counts the segments of at most seg_group_short_vectors()
//       vectors, and lists each segment longer than seg_group_long_items() in the workspace: an
//       entry (segment, length, first chunk slot, chunks) by two atomics, and each of its chunk
//       slots' range and entry. The entries' order varies from call to call; nothing a result
//       depends on does (a chunk's range is a function of the segment's length alone, and its
//       sum lands in its own slot).
//   segmented_group_kernel  groups of kSegGroupLanes lanes, one segment a group; a warp takes
//       seg_group_batches() batches of 32 / lanes consecutive segments a step (warps grid-stride over
//       steps, so the grid reads the input front to back), the next step's offsets loaded before
//       this step's data. Lane l of a group loads the segment's aligned 16-byte vectors l,
//       l + lanes, ... (kSegGroupLoads at a time) and folds the elements inside the segment in
//       order; a fixed shuffle tree folds the group; lane 0 writes the result (an empty segment:
//       the empty rule). Launched twice: without and with short steps (short_steps_kernel: steps
//       of 16 segments, 2 lanes a segment when they all fit 8 vectors); the prepare kernel's
//       count picks one for the call (short_call), the other returns at once. Listed segments
//       are left to:
//   segmented_group_chunks_kernel  a block a chunk slot (grid-stride): the chunk's vectors folded
//       by thread (vector t, t + 256, ...), block_reduce's fixed tree, the partial into its slot;
//       the segment's last chunk to finish (a ticket an entry) folds its partials in chunk order
//       and writes the result. Its last block writes *status and leaves the workspace zeroed
//       (block 0, when nothing was listed).
// The same input, offsets and alignment give the same bits on every call. Inputs need not be
// 16-byte aligned: vectors are the aligned 16-byte runs of memory that hold elements, and the
// two at the array's ends, when partial, are read element by element (never outside [0, n)).
//
// Bad offsets: the group and chunk kernels read the flag first (stream order makes it final) and
// write nothing. Listing cannot overrun the workspace (sized from n alone): valid offsets list
// at most n / (long items + 1) segments; an append past the sizes proves them bad (flag).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/segmented_prepare.hpp"  // the offsets' rules
#include "foldkit/cuda/block/block_reduce.cuh"
#include "foldkit/cuda/device/grid_dependency.cuh"
#include "foldkit/cuda/tuning/segmented_reduce_tuning.hpp"
#include "foldkit/cuda/warp/warp_reduce.cuh"
#include "foldkit/ops.hpp"
#include "segmented_reduce_launch.cuh"
#if defined(__CUDACC__)
#include "foldkit/cuda/dispatch/programmatic_launch.cuh"
#endif

namespace foldkit::cuda::seg {

// The path's memory primitives; the host emulation (segmented_reduce_emulation.cuh) defines its
// own before including this header.
#if !defined(FOLDKIT_SEG_EMULATION)
// (Not vector_load.cuh's load_streaming: through its Vec16<half> the f16/bf16 kernels kept 88-144
// byte stack frames and spilled 160-216 bytes, ptxas sm_90; the other types' SASS was the same.)
__device__ __forceinline__ uint4 load16_stream(const void* p) { return __ldcs(static_cast<const uint4*>(p)); }
__device__ __forceinline__ unsigned warp_max(unsigned v) { return __reduce_max_sync(0xffffffffu, v); }
__device__ __forceinline__ unsigned warp_sum(unsigned v) { return __reduce_add_sync(0xffffffffu, v); }
__device__ __forceinline__ bool warp_any(bool v) { return __any_sync(0xffffffffu, v); }
#endif

// The 16-byte vectors that hold a segment's elements: its first element's place in its vector,
// plus its length, rounded up to whole vectors (b: its first element; lead: the input's first
// element's place in its vector; len < 2^31 - 16; an empty segment gives 0 or 1). In 32 bits:
// the prepare kernel's count and a short step's test run it once an offset.
template <int kVec>
__device__ __forceinline__ unsigned segment_vectors(std::int64_t b, unsigned len, unsigned lead) {
  return ((static_cast<unsigned>(b) + lead) % kVec + len + kVec - 1) / kVec;
}

// ---- the prepare kernel ------------------------------------------------------------------------

// A resident grid (group_prepare_blocks) strides over tiles of kSegPrepareSegments consecutive
// offsets: a thread loads kPerThread of a tile (strided by the block's width, so that each load
// is coalesced), and the next tile's loads are in flight while the block checks this one, from
// shared memory, where an offset's successor is its neighbour. A tile a block and one round trip
// each, all blocks in step, left DRAM idle while they checked and turned over: 2^22 offsets
// took ~20 us (probe, H200 2026-11-29). A valid short segment costs a few 32-bit operations:
// its length is at most seg_group_long_items().
template <int kElementBytes>
__global__ void __launch_bounds__(tuning::kSegPrepareThreads, tuning::kSegGroupPrepareMinBlocks)
    prepare_group_kernel(GroupParams p) {
  constexpr int kVec = 16 / kElementBytes;
  constexpr int kThreads = tuning::kSegPrepareThreads;
  constexpr int kTile = tuning::kSegPrepareSegments;
  constexpr int kPerThread = kTile / kThreads;
#if defined(FOLDKIT_SEG_EMULATION)
  std::int64_t* const tile = emu::block_shared<std::array<std::int64_t, kTile + 1>>().data();
#else
  __shared__ std::int64_t tile[kTile + 1];  // the tile's offsets and the next one
#endif
  const std::int64_t S = p.num_segments, n = p.n;
  const std::int64_t long_items = tuning::seg_group_long_items(kElementBytes);
  const std::int64_t chunk_min = tuning::seg_group_chunk_items(kElementBytes);
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kTile;
  unsigned short_segments = 0;  // (valid ones of at most seg_group_short_vectors() vectors)
  const auto lead = static_cast<unsigned>((reinterpret_cast<std::uintptr_t>(p.in) & 15u) / kElementBytes);
  std::int64_t v[kPerThread], after = 0;  // a tile's offsets, in flight
  const auto load_tile = [&](std::int64_t t0) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const std::int64_t i = t0 + k * kThreads + tid;
      v[k] = i <= S ? p.offsets[i] : 0;
    }
    after = tid == kThreads - 1 && t0 + kTile <= S ? p.offsets[t0 + kTile] : 0;
  };
  wait_for_prior_grid();  // (launched programmatically: launch_group)
  std::int64_t t0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  if (t0 <= S) load_tile(t0);
  for (; t0 <= S; t0 += stride) {  // (block-uniform)
    __syncthreads();               // the last tile's readers are done
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) tile[k * kThreads + tid] = v[k];
    if (tid == kThreads - 1) tile[kTile] = after;
    if (t0 + stride <= S) load_tile(t0 + stride);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const std::int64_t i = t0 + k * kThreads + tid;
      if (i > S) continue;
      const std::int64_t v0 = tile[k * kThreads + tid], v1 = tile[k * kThreads + tid + 1];  // (v1: offset i + 1, when i < S)
      if (foldkit::detail::bad_offset(v0, i < S, v1, n)) {
        *static_cast<volatile unsigned*>(p.header) = 1u;
        continue;
      }
      if (i == S || foldkit::detail::offset_outside(v1, n)) continue;
      const std::int64_t len = v1 - v0;
      if (len <= long_items) {  // (an empty one counts as short)
        short_segments += segment_vectors<kVec>(v0, static_cast<unsigned>(len), lead) <= tuning::seg_group_short_vectors() ? 1u : 0u;
        continue;
      }
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
      p.entries[e] = GroupEntry{i, len, static_cast<int>(base), count};
      for (int c = 0; c < count; ++c) {
        const std::int64_t at = static_cast<std::int64_t>(c) * per;
        p.chunks[base + c] = GroupChunk{v0 + at, static_cast<int>(len - at < per ? len - at : per), static_cast<int>(e)};
      }
    }
  }
  short_segments = warp_sum(short_segments);
  if ((threadIdx.x & 31u) == 0 && short_segments != 0) atomicAdd(p.header + kGroupShortWord, short_segments);
}

// Whether a call takes short steps (the group kernel with kShortLanes > 0), from the prepare
// kernel's count: a function of the offsets alone.
__device__ __forceinline__ bool short_call(const GroupParams& p) {
  return static_cast<std::int64_t>(p.header[kGroupShortWord]) * tuning::kSegGroupShortShare >= p.num_segments;
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
  // Elements [0, edge_lo) lie in a partial first vector, [edge_hi, n) in a partial last one (a
  // range [b, e) touches one iff b < edge_lo or e > edge_hi).
  std::int64_t edge_lo, edge_hi;
  __device__ __forceinline__ explicit VectorView(const void* p, std::int64_t count) : in(static_cast<const T*>(p)), n(count) {
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    vbase = reinterpret_cast<const unsigned char*>(addr & ~std::uintptr_t{15});
    lead = static_cast<std::int64_t>((addr & 15u) / sizeof(T));
    last = count > 0 ? (count - 1 + lead) / kVec : 0;
    edge_lo = lead != 0 ? kVec - lead : 0;
    edge_hi = count - (count + lead) % kVec;
  }
  // Whether vector q lies wholly inside [0, n).
  __device__ __forceinline__ bool whole(std::int64_t q) const {
    return (q > 0 || lead == 0) && (q < last || (n + lead) % kVec == 0);
  }
  __device__ __forceinline__ void load_at(const unsigned char* at, T (&x)[kVec]) const {
    const uint4 raw = load16_stream(at);
    memcpy(x, &raw, 16);
  }
  __device__ __forceinline__ void load(std::int64_t q, T (&x)[kVec]) const { load_at(vbase + q * 16, x); }
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
// One unsigned compare a position (a negative one wraps past len).
template <class Tr, class F, class T, int kVec, class I, class L>
__device__ __forceinline__ void fold_inside(const F& f, typename Tr::accum_type& acc, const T (&x)[kVec], I pos0, L len) {
  using U = std::make_unsigned_t<I>;
#pragma unroll
  for (int k = 0; k < kVec; ++k)
    if (static_cast<U>(pos0 + k) < static_cast<U>(len)) acc = f(acc, Tr::from_element(x[k], 0));
}

// ---- the group kernel --------------------------------------------------------------------------

// One batch-set of a step: segments first + d * (32 / kLanes) + g of the step at s0 (d <
// kBatches, g this lane's group), their offsets in lanes 0 .. of `mine`, kLanes lanes a segment
// and kLoads vectors a lane in flight a batch; each written by its group's first lane. The loop
// is the probe's: a pointer a batch, 32-bit positions, one unsigned compare an element (SASS
// sm_90: the first port, with 64-bit vector indices and two compares an element, had 226
// instructions a round of 8 loads against the probe's 152 and took 379 us on 2^22 segments of
// 0-128 f32 against the probe's 293, H200 2026-11-29: the kernel is issue-bound).
template <class Tr, int kLanes, int kLoads, int kBatches, class T, class F>
__device__ __forceinline__ void fold_segments(const GroupParams& p, const VectorView<T>& v, const F& f, std::int64_t mine,
                                              std::int64_t s0, int first, int lane) {
  using A = typename Tr::accum_type;
  using R = typename Tr::result_type;
  constexpr int kPerWarp = 32 / kLanes;
  constexpr int kVec = VectorView<T>::kVec;
  const int g = lane / kLanes, gl = lane % kLanes;
  const std::int64_t S = p.num_segments;
  const std::int64_t long_items = tuning::seg_group_long_items(sizeof(T));
  // Per batch: this lane's first vector of its segment (vector gl), the position of that
  // vector's first element relative to the segment (32 bits: a group's segments are at most
  // long_items long), and the segment's vectors (span).
  const unsigned char* vp[kBatches];
  int pos0[kBatches], span[kBatches];
  unsigned len[kBatches];
  bool to_write[kBatches];
  unsigned rounds = 0;
  bool edge = false;
#pragma unroll
  for (int d = 0; d < kBatches; ++d) {
    const int i = first + d * kPerWarp + g;
    const std::int64_t b = __shfl_sync(0xffffffffu, mine, i);
    const std::int64_t e = __shfl_sync(0xffffffffu, mine, i + 1);
    to_write[d] = s0 + i < S && e - b <= long_items;
    len[d] = to_write[d] ? static_cast<unsigned>(e - b) : 0u;
    const std::int64_t vb = b + v.lead;  // the segment's first virtual position (>= 0)
    const std::int64_t q0 = static_cast<std::int64_t>(static_cast<std::uint64_t>(vb) / kVec);
    pos0[d] = static_cast<int>(q0 * kVec - vb) + gl * kVec;  // (-kVec < vector q0's <= 0)
    span[d] = len[d] > 0 ? static_cast<int>(segment_vectors<kVec>(b, len[d], static_cast<unsigned>(v.lead))) : 0;
    vp[d] = v.vbase + (q0 + gl) * 16;  // (read only where gl < span)
    const unsigned r = (static_cast<unsigned>(span[d]) + kLanes - 1) / kLanes;
    rounds = r > rounds ? r : rounds;
    edge |= len[d] > 0 && (b < v.edge_lo || e > v.edge_hi);
  }
  const int warp_rounds = static_cast<int>(warp_max(rounds));
  A acc[kBatches];
#pragma unroll
  for (int d = 0; d < kBatches; ++d) acc[d] = Tr::identity();
  // The rounds; kEdge: some vector is the array's first or last one and partial (at most two
  // steps a call), read element by element. The common path has no such test in it.
  const auto fold_rounds = [&](auto edge_tag) {
    constexpr bool kEdge = decltype(edge_tag)::value;
    for (int k = 0; k < warp_rounds; k += kLoads) {
      T x[kBatches][kLoads][kVec];
#pragma unroll
      for (int d = 0; d < kBatches; ++d)
#pragma unroll
        for (int u = 0; u < kLoads; ++u) {
          const unsigned char* at = vp[d] + (k + u) * kLanes * 16;
          if ((k + u) * kLanes + gl < span[d]) {
            if (kEdge) v.template load_any<true>((at - v.vbase) / 16, x[d][u]);
            else v.load_at(at, x[d][u]);
          }
        }
      // (A vector not loaded lies past its segment: fold_inside skips all its positions.)
#pragma unroll
      for (int d = 0; d < kBatches; ++d)
#pragma unroll
        for (int u = 0; u < kLoads; ++u) fold_inside<Tr>(f, acc[d], x[d][u], pos0[d] + (k + u) * kLanes * kVec, len[d]);
    }
  };
  if (warp_any(edge)) fold_rounds(std::true_type{});
  else fold_rounds(std::false_type{});
#pragma unroll
  for (int d = 0; d < kBatches; ++d) {
    acc[d] = group_reduce(acc[d], kLanes, f);  // the group's fixed tree: its first lane gets the fold
    if (gl == 0 && to_write[d])
      static_cast<R*>(p.out)[s0 + first + d * kPerWarp + g] = Tr::finalize(acc[d], static_cast<std::int64_t>(len[d]));
  }
}

// Segments a step: 32 / kShortLanes with short steps, else one set of kBatches batches.
constexpr int group_step_segments(int short_lanes, int lanes, int batches) {
  return short_lanes > 0 ? 32 / short_lanes : 32 / lanes * batches;
}

// One step: segments s0 .. s0 + group_step_segments() - 1, their offsets (and the next one) in
// lanes 0 .. of `mine` (see segmented_group_kernel).
template <class Tr, int kShortLanes, int kShortLoads, int kLanes, int kLoads, int kBatches, class T, class F>
__device__ __forceinline__ void fold_step(const GroupParams& p, const VectorView<T>& v, const F& f, std::int64_t mine,
                                          std::int64_t s0, int lane) {
  constexpr int kSetSegs = 32 / kLanes * kBatches;
  constexpr int kStepSegs = group_step_segments(kShortLanes, kLanes, kBatches);
  static_assert(kStepSegs < 32 && kStepSegs % kSetSegs == 0, "a step's kStepSegs + 1 offsets, one a lane; whole sets");
  constexpr int kVec = VectorView<T>::kVec;
  bool short_step = false;
  if constexpr (kShortLanes > 0) {
    // Lane l: segment s0 + l's vectors (0 for a long or missing one).
    const std::int64_t e = __shfl_down_sync(0xffffffffu, mine, 1);
    unsigned span = 0;
    if (lane < kStepSegs && s0 + lane < p.num_segments && e > mine && e - mine <= tuning::seg_group_long_items(sizeof(T)))
      span = segment_vectors<kVec>(mine, static_cast<unsigned>(e - mine), static_cast<unsigned>(v.lead));
    short_step = warp_max(span) <= static_cast<unsigned>(kShortLanes * kShortLoads);
  }
  if (short_step) {
    fold_segments<Tr, (kShortLanes > 0 ? kShortLanes : kLanes), kShortLoads, 1>(p, v, f, mine, s0, 0, lane);
  } else {
#pragma unroll 1
    for (int first = 0; first < kStepSegs; first += kSetSegs) fold_segments<Tr, kLanes, kLoads, kBatches>(p, v, f, mine, s0, first, lane);
  }
}

// A warp takes steps of kStepSegs consecutive segments (warps grid-stride over steps, so the
// grid reads the input front to back; the next step's offsets are loaded before this step's
// data). A step whose longest segment fits kShortLanes x kShortLoads vectors (every lane's loads
// in one round) is folded kShortLanes lanes a segment, all kStepSegs at once; any other step in
// sets of kBatches batches of kLanes lanes a segment. Which set a segment's step takes depends on
// the offsets alone (steps start at multiples of kStepSegs), so the bits do too. The defaults are
// the tuning file's; foldkit-seg-group-probe instantiates others. kShortLanes 0: no short steps
// (the kernel for calls whose segments are mostly longer; p.gated: each kernel returns at once in
// the other kind of call, short_call).
template <ReduceOp Op, class T, int kShortLanes = 0, int kShortLoads = tuning::kSegGroupShortLoads,
          int kLanes = tuning::kSegGroupLanes, int kLoads = tuning::kSegGroupLoads,
          int kBatches = tuning::seg_group_batches(sizeof(T)), int kMinBlocks = tuning::kSegGroupMinBlocks>
__global__ void __launch_bounds__(tuning::kSegThreads, kMinBlocks) segmented_group_kernel(GroupParams p) {
  using Tr = reduce_traits<Op, T>;
  static_assert(!Tr::kUsesIndex, "argmin/argmax take the merge path");
  constexpr int kStepSegs = group_step_segments(kShortLanes, kLanes, kBatches);
  using View = VectorView<T>;
  wait_for_prior_grid();  // (launched programmatically: launch_group)
  if (load_acquire(p.header) != 0u) return;  // bad offsets: nothing written (warp-uniform)
  if (p.gated && short_call(p) != (kShortLanes > 0)) return;  // the other kernel's call
  const typename Tr::combine_type f{};
  const View v(p.in, p.n);
  const std::int64_t S = p.num_segments;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32) * kStepSegs;
  const auto load_offsets = [&](std::int64_t s0) { return lane <= kStepSegs && s0 + lane <= S ? p.offsets[s0 + lane] : std::int64_t{0}; };
  std::int64_t s0 = warp * kStepSegs;
  std::int64_t mine = s0 < S ? load_offsets(s0) : 0;
  for (; s0 < S; s0 += step) {
    const std::int64_t mine_next = s0 + step < S ? load_offsets(s0 + step) : 0;  // in flight during this step
    fold_step<Tr, kShortLanes, kShortLoads, kLanes, kLoads, kBatches>(p, v, f, mine, s0, lane);
    mine = mine_next;
  }
}

// The library's kernel with short steps: its long steps in sets of one batch (4 of them a step of
// 16): with two, as the other kernel's, ptxas spilled 40-136 bytes at 80 registers (sm_90); with
// one, 55 registers, so kSegGroupShortMinBlocks blocks an SM.
template <ReduceOp Op, class T>
inline constexpr auto short_steps_kernel =
    segmented_group_kernel<Op, T, tuning::kSegGroupShortLanes, tuning::kSegGroupShortLoads, tuning::kSegGroupLanes,
                           tuning::kSegGroupLoads, 1, tuning::kSegGroupShortMinBlocks>;

// ---- the chunk kernel --------------------------------------------------------------------------

// A block's shared state while it folds chunks (and finishes the call).
template <class A>
struct ChunkShared {
  BlockReduceStorage<A> red;
  std::int64_t unit;  // (the fused kernel's)
  bool last, last_block;
};

// The block's ChunkShared (in the host emulation, the emulated block's).
template <class A>
__device__ __forceinline__ ChunkShared<A>& chunk_shared() {
#if defined(FOLDKIT_SEG_EMULATION)
  return emu::block_shared<ChunkShared<A>>();
#else
  __shared__ ChunkShared<A> sm;
  return sm;
#endif
}

// Chunk slot `slot` (its range `ch`: a copy in each thread, as thread 0 zeroes the slot), by the
// whole block: its vectors folded by thread (vector t, t + 256, ...), block_reduce's fixed tree,
// the partial into its slot; the segment's last chunk to finish (a ticket an entry) folds its
// partials in chunk order and writes the result. Block-uniform; leaves the slot's range, partial
// and ticket zeroed.
template <class Tr, class T, class F>
__device__ __forceinline__ void fold_chunk_slot(const GroupParams& p, const VectorView<T>& v, const F& f, std::int64_t slot,
                                                const GroupChunk ch, ChunkShared<typename Tr::accum_type>& sm) {
  using A = typename Tr::accum_type;
  using R = typename Tr::result_type;
  static_assert(sizeof(A) <= kGroupPartialBytes, "a partial a slot");
  constexpr int kVec = VectorView<T>::kVec;
  constexpr int kThreads = tuning::kSegThreads;
  constexpr int kLoads = tuning::kSegGroupChunkLoads;
  const int tid = static_cast<int>(threadIdx.x);
  A* const partials = static_cast<A*>(p.partials);
  const int count = p.entries[ch.entry].count;  // (first used after the fold: its load is hidden)
  const std::int64_t cb = ch.begin, ce = cb + ch.items;
  // The chunk's vectors: thread t takes t, t + kThreads, ... of them, kLoads at a time. Only
  // its first and last can hold elements outside it: the others are folded whole. Positions
  // relative to the chunk fit 32 bits (a chunk is chunk_min elements or 1 / kSegGroupMaxChunks
  // of its segment, well under 2^31 for any array a GPU's memory holds).
  const std::int64_t q0 = (cb + v.lead) / kVec;
  const int pos0 = static_cast<int>(q0 * kVec - (cb + v.lead));
  const int span = static_cast<int>((ce - 1 + v.lead) / kVec - q0 + 1);
  const auto clen = static_cast<unsigned>(ce - cb);
  const bool edge = !v.whole(q0) || !v.whole(q0 + span - 1);  // block-uniform
  const unsigned char* const first = v.vbase + (q0 + tid) * 16;
  A acc = Tr::identity();
  const auto fold_chunk = [&](auto edge_tag) {
    constexpr bool kEdge = decltype(edge_tag)::value;
    for (int j0 = 0; j0 < span; j0 += kThreads * kLoads) {
      T x[kLoads][kVec];
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const int j = j0 + u * kThreads + tid;
        const unsigned char* at = first + static_cast<std::int64_t>(j0 + u * kThreads) * 16;
        if constexpr (!kEdge) {
          // Past the chunk, its last vector again (never folded: its positions are past clen).
          // (8-byte elements, predicated: ptxas moved each loaded pair into x behind the load,
          // so 2 of a round's 8 loads were in flight before the first use, SASS sm_90.)
          v.load_at(j < span ? at : first + static_cast<std::int64_t>(span - 1 - tid) * 16, x[u]);
        } else if (j < span) {
          v.template load_any<true>((at - v.vbase) / 16, x[u]);
        }
      }
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const int j = j0 + u * kThreads + tid;
        if constexpr (!kEdge) {
          // Every vector by its elements' positions, without a branch (the probe's chunk
          // kernel's form). Not what kept this kernel's DRAM at 71 % against the probe's 80 %
          // (ncu, H200 2026-11-29): without the branch the power-law mix took 0.990x the time.
          fold_inside<Tr>(f, acc, x[u], pos0 + j * kVec, clen);
        } else if (j > 0 && j < span - 1) {
#pragma unroll
          for (int k = 0; k < kVec; ++k) acc = f(acc, Tr::from_element(x[u][k], 0));
        } else if (j < span) {
          fold_inside<Tr>(f, acc, x[u], pos0 + j * kVec, clen);
        }
      }
    }
  };
  if (edge) fold_chunk(std::true_type{});
  else fold_chunk(std::false_type{});
  const A y = block_reduce(acc, f, Tr::identity(), sm.red);  // (thread 0 gets it)
  if (tid == 0) {
    p.chunks[slot] = GroupChunk{};  // the workspace is left zeroed (every thread has read it: block_reduce synced)
    partials[slot] = y;
    __threadfence();
    sm.last = atomicAdd(p.tickets + ch.entry, 1u) == static_cast<unsigned>(count - 1);
  }
  __syncthreads();
  if (sm.last) {  // the segment's partials in chunk order (count <= kThreads: one a thread), the same tree
    __threadfence();
    const GroupEntry en = p.entries[ch.entry];
    A z = Tr::identity();
    if (tid < en.count) {
      A* const w = partials + en.base + tid;
      z = *static_cast<volatile A*>(w);
      *w = A{};  // zeroed again
    }
    __syncthreads();  // sm.red is reused
    const A total = block_reduce(z, f, Tr::identity(), sm.red);
    if (tid == 0) {
      static_cast<R*>(p.out)[en.segment] = Tr::finalize(total, en.items);
      p.tickets[ch.entry] = 0u;
    }
  }
  __syncthreads();  // sm is reused by the next slot
}

// The call's status, and the header words zeroed for the next call (by one thread, after every
// other use of them: the other blocks of the kernel that ends the call read them first, or
// find nothing to do when they read them zeroed).
__device__ __forceinline__ void end_group_call(const GroupParams& p, bool bad) {
  if (p.status != nullptr) *p.status = bad ? 1 : 0;
  p.header[0] = 0u;
  p.header[1] = 0u;
  p.header[kGroupEntriesWord] = 0u;
  p.header[kGroupSlotsWord] = 0u;
  p.header[kGroupShortWord] = 0u;
  p.header[kGroupUnitWord] = 0u;
}

// The call's end, by every block of the kernel that ends it: the last block writes *status and
// zeroes what the call used (the entries, the chunk ranges when the offsets were bad, the header words).
template <class A>
__device__ __forceinline__ void finish_group_call(const GroupParams& p, bool bad, std::int64_t listed, std::int64_t slots,
                                                  ChunkShared<A>& sm) {
  constexpr int kThreads = tuning::kSegThreads;
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) {
    __threadfence();
    sm.last_block = atomicAdd(p.header + 1, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!sm.last_block) return;
  __threadfence();
  for (std::int64_t k = tid; k < listed; k += kThreads) p.entries[k] = GroupEntry{};
  if (bad)
    for (std::int64_t k = tid; k < slots; k += kThreads) p.chunks[k] = GroupChunk{};
  __syncthreads();
  if (tid == 0) end_group_call(p, bad);
}

// The listed entries and chunk slots of the call (capped by the workspace's sizes: more means
// bad offsets, which the flag says too).
struct ListedCounts {
  std::int64_t listed, slots;
};
__device__ __forceinline__ ListedCounts listed_counts(const GroupParams& p) {
  const std::int64_t listed_all = p.header[kGroupEntriesWord], slots_all = p.header[kGroupSlotsWord];
  return {listed_all < p.max_entries ? listed_all : p.max_entries, slots_all < p.max_slots ? slots_all : p.max_slots};
}

template <ReduceOp Op, class T>
__global__ void __launch_bounds__(tuning::kSegThreads, tuning::seg_group_chunk_min_blocks(sizeof(T)))
    segmented_group_chunks_kernel(GroupParams p) {
  using Tr = reduce_traits<Op, T>;
  using A = typename Tr::accum_type;
  static_assert(!Tr::kUsesIndex, "argmin/argmax take the merge path");
  ChunkShared<A>& sm = chunk_shared<A>();
  const typename Tr::combine_type f{};
  wait_for_prior_grid();  // (launched programmatically: launch_group)
  const bool bad = load_acquire(p.header) != 0u;
  const ListedCounts lc = listed_counts(p);
  if (!bad && lc.listed == 0) {  // no chunks (most calls): block 0 ends the call, no tickets
    if (blockIdx.x == 0 && threadIdx.x == 0) end_group_call(p, false);
    return;
  }
  const VectorView<T> v(p.in, p.n);
  // A slot's range is loaded a slot ahead, so that it is in registers when the block takes it.
  std::int64_t slot = bad ? lc.slots : blockIdx.x;
  GroupChunk ch = slot < lc.slots ? p.chunks[slot] : GroupChunk{};
  for (; slot < lc.slots; slot += gridDim.x) {
    const GroupChunk next = slot + gridDim.x < lc.slots ? p.chunks[slot + gridDim.x] : GroupChunk{};
    fold_chunk_slot<Tr>(p, v, f, slot, ch, sm);
    ch = next;
  }
  finish_group_call(p, bad, lc.listed, lc.slots, sm);
}

// ---- the fused kernel (foldkit-seg-group-probe's rows; not launched by the library yet) ---------

// Both parts in one launch, so that the short segments' latency-bound steps run while the long
// segments' chunks stream (on the power-law mix the library's kernels run them one after the
// other: 25 + ~80 us, H200 2026-11-29). Blocks take work units in order from a counter (header
// word kGroupUnitWord): of units 0 .. slots + step units - 1, unit u is chunk slot
// floor(u * slots / units) where that floor rises at u (the chunks spread evenly over the
// units), and otherwise step unit u - floor(u * slots / units): one step a warp, warp w of the
// block taking step unit * warps + w. A step's segments and their bits are the group kernel's
// whichever warp takes it, a chunk's whichever block: the same bits as the group and chunk
// kernels with the same template arguments. The next step's offsets are not loaded ahead.
template <ReduceOp Op, class T, int kShortLanes = tuning::kSegGroupShortLanes, int kShortLoads = tuning::kSegGroupShortLoads,
          int kLanes = tuning::kSegGroupLanes, int kLoads = tuning::kSegGroupLoads, int kBatches = 1,
          int kMinBlocks = tuning::kSegGroupShortMinBlocks>
__global__ void __launch_bounds__(tuning::kSegThreads, kMinBlocks) segmented_group_fused_kernel(GroupParams p) {
  using Tr = reduce_traits<Op, T>;
  using A = typename Tr::accum_type;
  static_assert(!Tr::kUsesIndex, "argmin/argmax take the merge path");
  constexpr int kStepSegs = group_step_segments(kShortLanes, kLanes, kBatches);
  constexpr int kWarps = tuning::kSegThreads / 32;
  ChunkShared<A>& sm = chunk_shared<A>();
  const typename Tr::combine_type f{};
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  wait_for_prior_grid();
  const bool bad = load_acquire(p.header) != 0u;
  const ListedCounts lc = listed_counts(p);
  const VectorView<T> v(p.in, p.n);
  const std::int64_t S = p.num_segments;
  const std::int64_t slots = bad ? 0 : lc.slots;
  const std::int64_t step_units = bad ? 0 : ((S + kStepSegs - 1) / kStepSegs + kWarps - 1) / kWarps;
  const std::int64_t units = slots + step_units;
  for (;;) {
    if (tid == 0) sm.unit = atomicAdd(p.header + kGroupUnitWord, 1u);
    __syncthreads();
    const std::int64_t u = sm.unit;
    __syncthreads();  // (thread 0 writes sm.unit again next round)
    if (u >= units) break;
    const std::int64_t before = u * slots / units, through = (u + 1) * slots / units;
    if (through > before) {
      fold_chunk_slot<Tr>(p, v, f, before, p.chunks[before], sm);
    } else {
      const std::int64_t s0 = ((u - before) * kWarps + warp) * kStepSegs;  // (warp-uniform)
      if (s0 < S) {
        const std::int64_t mine = lane <= kStepSegs && s0 + lane <= S ? p.offsets[s0 + lane] : std::int64_t{0};
        fold_step<Tr, kShortLanes, kShortLoads, kLanes, kLoads, kBatches>(p, v, f, mine, s0, lane);
      }
    }
  }
  finish_group_call(p, bad, lc.listed, lc.slots, sm);
}

// launch_group (segmented_reduce_launch.cuh): each kernel on as many blocks as its launch bounds
// keep resident (their loops are grid-strided; the prepare kernel's no more than its tiles). Each is
// launched programmatically (Hopper PDL) and waits for the grid before it first: a kernel that
// returns at once costs little more than that wait, and none waits for its own launch.
#if defined(__CUDACC__)
template <ReduceOp Op, class T>
void launch_group(const GroupParams& p, int sm_count, cudaStream_t stream) {
  const dim3 threads(tuning::kSegThreads);
  const auto resident = [&](int blocks_per_sm) { return dim3(static_cast<unsigned>(sm_count * blocks_per_sm)); };
  launch_programmatic(prepare_group_kernel<sizeof(T)>, dim3(group_prepare_blocks(p.num_segments, sm_count)),
                      dim3(tuning::kSegPrepareThreads), stream, p);
  launch_programmatic(segmented_group_kernel<Op, T>, resident(tuning::kSegGroupMinBlocks), threads, stream, p);
  launch_programmatic(short_steps_kernel<Op, T>, resident(tuning::kSegGroupShortMinBlocks), threads, stream, p);
  launch_programmatic(segmented_group_chunks_kernel<Op, T>, resident(tuning::seg_group_chunk_min_blocks(sizeof(T))), threads,
                      stream, p);
}
#endif

#define FOLDKIT_SEG_GROUP_INSTANTIATE(T)                                                        \
  template void launch_group<ReduceOp::sum, T>(const GroupParams&, int, cudaStream_t);  \
  template void launch_group<ReduceOp::prod, T>(const GroupParams&, int, cudaStream_t); \
  template void launch_group<ReduceOp::min, T>(const GroupParams&, int, cudaStream_t);  \
  template void launch_group<ReduceOp::max, T>(const GroupParams&, int, cudaStream_t);  \
  template void launch_group<ReduceOp::mean, T>(const GroupParams&, int, cudaStream_t);

}  // namespace foldkit::cuda::seg
