// What the host side of the segmented reduction (segmented_reduce.cu) and its kernels
// (segmented_reduce_kernel.cuh and segmented_group_kernel.cuh, instantiated in
// segmented_reduce_{int,int64,float,half}.cu) share: the kernels' parameters, the workspace's
// layouts, and their launchers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "foldkit/cuda/tuning/segmented_reduce_tuning.hpp"
#include "foldkit/ops.hpp"

namespace foldkit::cuda::seg {

// Workspace layout (16-byte aligned pieces):
//   [0, 256)  header: at byte kSegFlagOffset the flag (u32: 1 = the validation kernel found bad
//             offsets), the ticket (u32) and the offsets form's boundary budget (u64,
//             segmented_reduce_prepare.cuh). Bytes 0-7 are never touched: a stream's cached
//             workspace serves the scans too, whose ticket and epoch live there
//             (device/scan_layout.hpp)
//   slots     one kSlotBytes slot per tile (block): the partial of the segment open at the tile's
//             end, as flagged 8-byte words (each 4-byte word of the value | 1 << 32)
//   starts    offsets form: per tile, the merge-path split {i, j} of its first diagonal
//   stops     offsets form: per tile, the split of its end (tile k + 1's start, stored twice so
//             that each copy has one reader, which zeroes it)
//   voff      begin/end form: num_segments + 1 virtual offsets
//   scan      begin/end form: the workspace of the inclusive scan that builds voff
// Each call zeroes the slots first (the offsets form's validation kernel, thread g slot g; the
// begin/end form a memset of [kSegFlagOffset, starts) in stream order): a scan on the same
// cached workspace leaves its tile states there flagged with its epoch + 1, which the slots'
// "published" flag (1) matches, so a reader would take a stale word for a partial (rare wrong
// results in long segments: 2 in ~25 runs of the random GPU cases, not reproduced by their
// seeds, 2026-11-27). And every call leaves what it used zero, so that a scan after it finds no
// flagged word of its own epoch either: the last block to take a ticket clears the flag, the
// ticket and the budget; the tile where a spanning segment ends clears the slots it folded;
// each block zeroes its two splits (also when the offsets were bad); voff and the begin/end form's scan workspace
// (whose tile states that scan leaves flagged with epoch 1) are cleared by a memset after the
// kernel. (The begin/end validation kernel zeroes the scan's workspace first, which the scan
// needs zeroed.)
// The group path (segmented_group_kernel.cuh) lays out its own pieces after the same header
// (GroupLayout below) and keeps the same rule: every call leaves what it used zero.
inline constexpr std::size_t kHeaderBytes = 256;
inline constexpr std::size_t kSegFlagOffset = 128;
inline constexpr std::size_t kSlotWords = 4;  // the largest accumulator, ArgResult<8-byte type>: 16 bytes
inline constexpr std::size_t kSlotBytes = kSlotWords * 8;

inline constexpr std::size_t align16(std::size_t b) { return (b + 15) & ~std::size_t{15}; }

struct Layout {
  std::size_t slots, starts, stops, voff, scan, bytes;
};
// tiles: the grid; scan_bytes: the begin/end form's scan workspace (0 for the offsets form).
inline Layout layout(std::int64_t tiles, std::int64_t num_segments, bool by_offsets, std::size_t scan_bytes) {
  Layout l{};
  const auto t = static_cast<std::size_t>(tiles);
  l.slots = kHeaderBytes;
  l.starts = l.slots + t * kSlotBytes;
  l.stops = l.starts + (by_offsets ? t * 2 * sizeof(std::int64_t) : 0);
  l.voff = l.stops + (by_offsets ? t * 2 * sizeof(std::int64_t) : 0);
  l.scan = l.voff + (by_offsets ? 0 : align16(static_cast<std::size_t>(num_segments + 1) * sizeof(std::int64_t)));
  l.bytes = l.scan + scan_bytes;
  return l;
}

// The workspace flag's read (the kernels of both paths; the host emulation defines its own):
// acquire at GPU scope, so that what the validation kernel wrote before it is seen after it.
#if defined(__CUDACC__) && !defined(FOLDKIT_SEG_EMULATION)
__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
#endif

struct Params {
  const void* in;
  std::int64_t n;
  const std::int64_t* offsets;  // offsets form: the caller's (S + 1); begin/end form: voff (S + 1)
  const std::int64_t* begin;    // begin/end form: the caller's begin offsets
  std::int64_t num_segments;
  void* out;     // results (argmin/argmax: int64 indices)
  void* values;  // argmin/argmax values or null
  unsigned* header;
  unsigned long long* slots;
  longlong2* starts;     // offsets form
  longlong2* stops;      // offsets form
  std::int32_t* status;  // or null
  int prefetch_tiles;    // offsets form: L2 prefetch distance in tiles, 0 = none
  std::int64_t tiles;    // offsets form: tiles of the merge path (the splits' count)
  int tiles_per_block;   // offsets form: consecutive tiles a block takes (the grid: tiles / this, rounded up)
};

// The main kernel on `grid` blocks (segmented_reduce_kernel.cuh).
template <ReduceOp Op, class T, bool kByOffsets>
void launch_main(const Params& p, unsigned grid, cudaStream_t stream);

// ---- The group path (segmented_group_kernel.cuh) ----

// A listed (long) segment.
struct GroupEntry {
  std::int64_t segment;
  std::int64_t items;  // its length
  int base;            // its first chunk slot
  int count;           // its chunks, at most kSegGroupMaxChunks
};
// A chunk slot: the range the prepare kernel gave it, so that the chunk kernel's block starts
// streaming one load after it takes the slot (it read the slot's entry, then the entry, then the
// segment's offsets before: 80 us for the power-law mix's chunks against 68 for the probe's
// host-listed ones, ncu H200 2026-11-29).
struct GroupChunk {
  std::int64_t begin;  // its first element
  int items;           // its length (a chunk is under 2^31 elements: seg_group_chunk_items or
                       // 1 / kSegGroupMaxChunks of a segment)
  int entry;           // its segment's entry
};

// Workspace layout of the group path (after the shared 256-byte header; header words, from
// kSegFlagOffset: [0] the flag, [1] the chunk kernel's ticket, [2..3] the merge path's budget,
// untouched here, [4] listed entries, [5] chunk slots taken, [6] short segments counted, [7] the
// fused kernel's unit counter).
struct GroupLayout {
  std::int64_t max_entries, max_slots;
  std::size_t entries, chunks, tickets, partials, bytes;
};
inline constexpr int kGroupEntriesWord = 4;
inline constexpr std::size_t kGroupPartialBytes = 16;  // a chunk's partial: an accumulator of a non-arg op (<= 8 bytes)
inline constexpr int kGroupSlotsWord = 5;
inline constexpr int kGroupShortWord = 6;  // segments of at most seg_group_short_vectors() vectors
inline constexpr int kGroupUnitWord = 7;   // the fused kernel's next work unit (segmented_group_fused_kernel)
inline GroupLayout group_layout(std::int64_t n, std::size_t element_bytes) {
  GroupLayout l{};
  l.max_entries = n / (tuning::seg_group_long_items(element_bytes) + 1) + 1;
  l.max_slots = n / tuning::seg_group_chunk_items(element_bytes) + l.max_entries;
  l.entries = kHeaderBytes;
  l.chunks = l.entries + align16(static_cast<std::size_t>(l.max_entries) * sizeof(GroupEntry));
  l.tickets = l.chunks + align16(static_cast<std::size_t>(l.max_slots) * sizeof(GroupChunk));
  l.partials = l.tickets + align16(static_cast<std::size_t>(l.max_entries) * sizeof(unsigned));
  l.bytes = l.partials + static_cast<std::size_t>(l.max_slots) * kGroupPartialBytes;
  return l;
}

struct GroupParams {
  const void* in;
  std::int64_t n;
  const std::int64_t* offsets;
  std::int64_t num_segments;
  void* out;
  unsigned* header;  // at kSegFlagOffset
  GroupEntry* entries;
  GroupChunk* chunks;
  unsigned* tickets;
  void* partials;
  std::int64_t max_entries, max_slots;
  std::int32_t* status;  // or null
  bool gated;            // the group kernels run only in their kind of call (the library's);
                         // false: whatever the call (foldkit-seg-group-probe's rows)
};

// A call's parameters, its workspace at `base` (16-byte aligned) laid out by `l`.
inline GroupParams group_params(const GroupLayout& l, unsigned char* base, const void* in, std::int64_t n,
                                const std::int64_t* offsets, std::int64_t num_segments, void* out, std::int32_t* status) {
  GroupParams p{};
  p.in = in;
  p.n = n;
  p.offsets = offsets;
  p.num_segments = num_segments;
  p.out = out;
  p.header = reinterpret_cast<unsigned*>(base + kSegFlagOffset);
  p.entries = reinterpret_cast<GroupEntry*>(base + l.entries);
  p.chunks = reinterpret_cast<GroupChunk*>(base + l.chunks);
  p.tickets = reinterpret_cast<unsigned*>(base + l.tickets);
  p.partials = base + l.partials;
  p.max_entries = l.max_entries;
  p.max_slots = l.max_slots;
  p.status = status;
  p.gated = true;
  return p;
}

// prepare_group_kernel's grid: as many blocks as stay resident, at most one a tile of
// kSegPrepareSegments offsets (num_segments + 1 of them).
inline unsigned group_prepare_blocks(std::int64_t num_segments, int sm_count) {
  const std::int64_t tiles = (num_segments + tuning::kSegPrepareSegments) / tuning::kSegPrepareSegments;
  const std::int64_t resident = static_cast<std::int64_t>(sm_count) * tuning::kSegGroupPrepareMinBlocks;
  return static_cast<unsigned>(tiles < resident ? tiles : resident);
}

// The group path's three kernels (every op but argmin/argmax).
template <ReduceOp Op, class T>
void launch_group(const GroupParams& p, int sm_count, cudaStream_t stream);

}  // namespace foldkit::cuda::seg
