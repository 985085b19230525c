// Tuning of the single-pass scan (device/scan_kernel.cuh): threads per block and items per
// thread by element size. A tile is block_threads * items_per_thread consecutive elements.
//
// Starting point (not yet swept on the H100): 256 threads keep 8 blocks resident per SM within
// the shared memory a tile needs (transposes through shared memory); 16 items of 4 bytes per
// thread (a 16 KiB tile) keep 64 B of loads in flight per thread. 8-byte types take 8 items (the
// same bytes), 2-byte types 16 (their loads are half as wide; a 32-item variant spills).
#pragma once

#include <cstddef>

namespace foldkit::cuda::tuning {

inline constexpr int kScanBlockThreads = 256;

constexpr int scan_items_per_thread(std::size_t element_bytes) { return element_bytes >= 8 ? 8 : 16; }

// The look-back examines 32 predecessors at a time (one per lane of a warp) and keeps up to
// this many whole windows of aggregates in shared memory before it waits for an inclusive
// prefix: 16 windows = 512 tiles, more than the ~800 resident tiles' start-up wave needs per
// round trip, for 2-4 KiB of shared memory.
inline constexpr int kScanLookbackWindows = 16;

}  // namespace foldkit::cuda::tuning
