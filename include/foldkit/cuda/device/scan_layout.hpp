// The workspace layout of the single-pass scan (plain types, shared by the kernel and the host
// code that sizes the workspace). See scan_tile_state.cuh for the protocol.
#pragma once

#include <cstddef>
#include <cstdint>

namespace foldkit::cuda {

// One 64-bit word: the low half is the next tile index to hand out, the high half the epoch
// (the flag of the last call). A block takes both with one atomicAdd; the block that draws the
// last ticket of a call stores {epoch + 1, 0} back: every other block of the call has drawn
// already, and the next call starts after this one completes.
struct ScanHeader {
  unsigned long long ticket_and_epoch;
};
inline constexpr std::size_t kScanHeaderBytes = 256;

template <class A>
struct ScanTileSlots {
  static constexpr int kWords = (sizeof(A) + 3) / 4;
  unsigned long long aggregate[kWords];
  unsigned long long inclusive[kWords];
};

// The whole-array scan: no heads (a tag, so that its kernel carries no head code at all).
struct NoHeads {};

// The heads of a blocked or segmented scan (scan.hpp), where the scan restarts.
//  blocked:   offsets == nullptr; element i is a head when i % block_length == 0.
//  segmented: element offsets[s] is a head for every s < num_segments (device memory, sorted;
//             an empty segment marks the same element as the next one, which is harmless).
// Element 0 is always a head, whatever the offsets say, so tile 0 never looks back.
//  lines:     blocked scans whose blocks are whole tiles (set at launch, scan_launch.cuh): the
//             number of blocks, whose tiles the tickets interleave (scan_kernel.cuh); 0: tiles
//             in array order.
struct SegmentHeads {
  std::int64_t block_length;
  const std::int64_t* offsets;
  std::int64_t num_segments;
  unsigned lines = 0;
};

}  // namespace foldkit::cuda
