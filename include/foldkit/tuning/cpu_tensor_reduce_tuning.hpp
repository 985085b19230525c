// Tuning of the CPU backend's tensor reductions (foldkit/detail/tensor_reduce_cpu.hpp): the
// constants and the measurements that chose them. None of them changes a bit of a result except
// kOuterTargetPieces and kOuterMinPiece, which set the outer fold's pieces from the shape alone.
// Measured with `foldkit-bench axes --backend cpu --only 'sum f32'` on the 2-core test VM (AMD
// EPYC, SSE4.2 build): % of the all-core read ceiling.
#pragma once

#include <cstdint>

namespace foldkit::cpu::detail {

// Below this much input, handing units to the pool costs what it saves (as reduce_cpu.cpp).
inline constexpr std::int64_t kTensorMinParallelBytes = std::int64_t{1} << 20;

// Short contiguous rows whose outputs total at least this many bytes write them with streaming
// (non-temporal) stores, whole 64-byte lines: the scans' kStreamingStoreMinBytes (src/cpu/
// output_lines.hpp; tensor_reduce_cpu.cpp asserts they are equal). A plain store first reads its
// line (read for ownership), so (2^24, 4) over dim 1 moved 384 MiB for the 320 it reads and
// writes: 78.7 % of the read ceiling on the 16-core host (2026-11-27), 84.8 % on another host.
inline constexpr std::int64_t kRowsStreamingOutMinBytes = std::int64_t{64} << 20;

// ---- outer reductions (the innermost kept dimension has input stride 1) --------------------------
// A unit whose column block holds more than kOuterTileMinBytes of accumulators passes its rows
// in tiles of kOuterTileRows (a strip of accumulators stays in registers while a tile passes);
// narrower blocks take one row at a time (their accumulators stay in L1, and the unit reads its
// rows strictly in address order). On 2 threads, % of the ceiling with 8-row tiles / single rows:
// (2^20, 64) 63 / 93, (2^14, 4096) 72 / 87, (2^12, 2^14) 78 / 74, (16, 2^22) 84 / 73 (tiles of 4:
// within 1 point of 8; of 16: 2 points below).
inline constexpr int kOuterTileRows = 8;
inline constexpr std::int64_t kOuterTileMinBytes = std::int64_t{16} << 10;
// Accumulator bytes a strip keeps in registers: 8 SSE registers.
inline constexpr int kOuterStripBytes = 128;
// Built-in ops fold an outer row in pieces so that a thread streams whole rows (a contiguous run
// of the input) instead of a narrow column block of every row: on 2 threads, 8-row tiles over
// column blocks of 1 KiB reached 54 % of the ceiling, of 8 KiB 79 %, of 32 KiB 96 %, of 64 KiB
// 98 %; pieces of whole 4 KiB rows 98 %. The pieces aim at this many work units per call
// (pieces x column blocks of at least kOuterMinBlockBytes), whatever the thread count.
inline constexpr std::int64_t kOuterTargetPieces = 64;
inline constexpr std::int64_t kOuterMinPiece = 64;  // positions; a multiple of kOuterTileRows
// Column blocks: at least this many bytes of a row (where there are enough columns), at most
// kOuterMaxBlockBytes of accumulators (they live in L2 while the unit runs; 64 KiB instead:
// (16, 2^22) and (256, 2^18) over dim 0 within noise, 1-3 points lower).
inline constexpr std::int64_t kOuterMinBlockBytes = std::int64_t{64} << 10;
inline constexpr std::int64_t kOuterMaxBlockBytes = std::int64_t{256} << 10;
// Units per hardware thread where the shape allows it (the pool balances the rest).
inline constexpr std::int64_t kOuterUnitsPerThread = 4;

}  // namespace foldkit::cpu::detail
