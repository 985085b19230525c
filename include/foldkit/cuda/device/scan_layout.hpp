// The workspace layout of the single-pass scan (plain types, shared by the kernel and the host
// code that sizes the workspace). See scan_tile_state.cuh for the protocol.
#pragma once

#include <cstddef>

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

}  // namespace foldkit::cuda
