// Tuning of the CUDA tensor reductions (src/cuda/tensor_reduce*.cu): every launch-shape constant
// of their kernel families in one place. See foldkit/cuda/device/tensor_reduce_kernels.cuh for what each
// family does, and docs/perf.md ("Tensors along axes") for the measurements behind the values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace foldkit::cuda::tuning {

// Threads per block of every tensor-reduction kernel.
inline constexpr int kTensorThreads = 256;
// Resident blocks of kTensorThreads per SM the launches aim for (2048 threads: a full SM).
inline constexpr int kTensorBlocksPerSm = 8;
// __launch_bounds__' minimum resident blocks for the streaming families (caps registers at 80;
// at 4 = 64 registers the f32 rows and outer kernels spilled 50-340 bytes).
inline constexpr int kTensorMinBlocksPerSm = 3;

// Rows (the innermost reduced dimension is contiguous), group mode: a group of G lanes (a power
// of two, at most 32) reduces one output; each group takes kRowsOutputsPerGroup outputs per
// pass, their loads issued together (4 loads in flight per lane even when a row is one vector).
inline constexpr int kRowsOutputsPerGroup = 4;
// argmin/argmax: their thread state (value and position) is bigger; 4 outputs spilled.
inline constexpr int kRowsArgOutputsPerGroup = 2;
// Group mode while it keeps at least this many lanes busy; otherwise block mode (one or more
// blocks per output, their partials combined by the last block to finish).
inline constexpr std::int64_t kRowsGroupMinLanesPerSm = 1024;

// Rows-dense (adjacent rows of 1-32 vectors): vector loads each thread issues together.
inline constexpr int kDenseLoadsInFlight = 8;
// Rows-dense rows of up to 32 * this many vectors (a warp per row above 32; longer rows go to
// rows-group or rows-block). Rows of 256 f32 in rows-group: 87 % of the read ceiling.
inline constexpr std::int64_t kDenseMaxVectorsPerLane = 4;
// Rows-dense lanes per row: argmin/argmax rows and 2-byte types' rows of kDenseFewLanesMinVectors
// to kDenseFewLanesMaxVectors vectors take kDenseFewLanes lanes (2-8 vectors each), not one lane
// a vector up to a warp: a shuffle level of their (value, position), or of a sum of 8 elements,
// costs more than folding a vector. 16 lanes a row read argmax rows of 64 f32 at 78 % of the read
// ceiling (H100); 32 lanes argmax rows of 256 f32 at 80 % and bf16 sums of rows of 256 at 81 %,
// 8 lanes at 99 and 97 % (H200, 2026-11-29).
inline constexpr std::int64_t kDenseFewLanes = 8;
inline constexpr std::int64_t kDenseFewLanesMinVectors = 16;
inline constexpr std::int64_t kDenseFewLanesMaxVectors = 64;
// ... and rows of a multiple of 8 * 32 vectors up to 32 * this many (a warp per row, 8 vectors
// per lane per round) when there are at least kDenseLongMinRowsPerSm rows per SM (a warp for
// each of an SM's 64 warp slots): rows of 1024-4096 f32, 2048-8192 bf16. In rows-block, a
// block of 256 threads read a row of 4096 f32 in one round and then sat in its block reduce:
// (2^14, 4096) f32 at 87 %, bf16 at 59 % of the read ceiling.
inline constexpr std::int64_t kDenseMaxVectorsPerLaneLong = 32;
inline constexpr std::int64_t kDenseLongMinRowsPerSm = 64;
// Long rows-dense grids: every warp the same number of rows, the fewest that fit the grid into
// this many blocks an SM, the fewest any of its kernels fits (46-61 registers: 5 or 4 blocks of
// 256; ptxas sm_90). The grid-stride grid of 8 blocks an SM ran 1.6 waves: f32 sums over dim 1
// (foldkit-tensor-probe --rows-sweep, H200, 2026-11-29) of (65536, 1024) 68.9 us against 66.6
// in one wave of the 5 that fit, of (16384, 4096) 69.7 against 66.4 for CUB's block a row.
inline constexpr int kDenseLongBlocksPerSm = 4;

// Block mode over contiguous rows (one run per output): __launch_bounds__' minimum resident
// blocks (caps registers at 40; the general rows-block kernel takes 56-78 and fits 3 blocks).
inline constexpr int kRowsBlockContigMinBlocksPerSm = 6;
// argmin/argmax (value and position per thread): 40 registers spilled 96-124 bytes, 48 20-24.
inline constexpr int kRowsBlockContigArgMinBlocksPerSm = 4;
// Block mode and the outer family: loads each thread issues before it folds any of them (8 in
// the outer kernel spilled and read (2^20, 64) over dim 0 at 76 % of the read ceiling, 4: 83 %).
inline constexpr int kLoadsInFlight = 4;
// Block mode over runs that tile the block (the pointer walk of rows_block_kernel): loads a
// thread issues before it folds any of them. With 8 (and the walk), 3-D sums over axes (0, 2)
// rose from 80.5 / 82.9 / 87.0 % of the read ceiling to 98.1 / 93.4 / 93.7 % ((64, 4096, 256),
// (256, 256, 1024), (4096, 64, 1024); H200, A/B in one call, 2026-11-29).
inline constexpr int kRowsBlockSteppedLoadsInFlight = 8;
// Block mode: chunks per output are picked so that the launch's last wave of resident blocks is
// at least this full (src/cuda/tensor_reduce.cu, whole_waves_chunks).
inline constexpr std::int64_t kWaveFillPercent = 90;
// Block mode: with at least this many waves of one block per output, no split.
inline constexpr std::int64_t kRowsBlockUnsplitMinWaves = 4;
// Block mode: a block gets at least this many vectors per thread of its row (or it would
// spend more on its partial than on its loads).
inline constexpr std::int64_t kRowsMinVectorsPerThread = 8;

// Outer family (the reduced dimensions are outer, the innermost kept one contiguous): threads
// across the contiguous columns (at most kOuterMaxColumnThreads 16-byte column vectors per
// block), the rest of the block down the reduced dimension; the reduced dimension is split over
// several blocks (combined by the last) until the grid fills the GPU, but never below
// kOuterMinRowsPerThread reduced positions per thread. When the column tiles alone give every
// SM a block, the splits balance blocks per SM rather than fill resident slots (src/cuda/tensor_reduce.cu).
inline constexpr int kOuterMaxColumnThreads = 256;
inline constexpr std::int64_t kOuterMinRowsPerThread = 8;
// argmin/argmax in the outer family: 2 resident blocks (8 loads in flight). For 4-byte types
// they read 0.2-5 points more of the read ceiling than 3 blocks with 4 loads (2026-11-28); at 3
// blocks (80 registers) the kernels spill: f32 / i32 60 bytes, bf16 108, f64 48 (ptxas sm_90,
// c647e29: at 2 they use 84-92 registers, no spill).
inline constexpr int kOuterArgMinBlocksPerSm = 2;

// Outer-flat (outer reductions whose rows are 1-8 whole vectors back to back, one batch, not
// argmin/argmax; tensor_reduce_kernels.cuh): threads per block, 16-byte loads in flight per
// thread, the grid's blocks per SM at most, and the largest input it takes (above it the outer
// kernel, which reads the 2^26-element matrices over dim 0 at 90-100 % of the read ceiling).
// The block and the rows (at most kOuterFlatMaxVectorsPerRow vectors) size its shared memory,
// kept within the read kernels' 8 KiB configuration (tensor_reduce_kernels.cuh).
// H100, 2026-11-27 (foldkit-tensor-probe --outer-sweep, per-call event times beside its read
// kernel): (32768, 32) f32 over dim 0 at 256 / 512 threads x 2 / 4 / 8 loads: 1.22-2.64x the
// read kernel, 512 x 4 and 512 x 8 best (1.22-1.31x; the outer kernel's best shape 1.43x); at
// (262144, 32), (2^20, 4) and (2^22, 4) 512 x 8 is the best or within 2 % of it. foldkit-bench
// axes: (32768, 32) 10.4 us (2.00x the read ceiling) -> 7.7 us (1.46-1.52x), the same at 4 and 8
// loads; the full-array reduction of the same 4 MiB runs at ~1.30x (ncu: both kernels active
// ~5k cycles a SM, this one elapsed ~13k against ~10.5k; not its 660-byte parameter, not its
// shared memory: ledger).
inline constexpr int kOuterFlatThreads = 512;
inline constexpr int kOuterFlatMaxVectorsPerRow = 8;
inline constexpr int kOuterFlatLoadsInFlight = 8;
// 2-byte elements (8 float lanes a vector): 8 loads spilled 8 bytes in the half sums (ptxas sm_90).
inline constexpr int kOuterFlatNarrowLoadsInFlight = 4;
constexpr int outer_flat_loads_in_flight(std::size_t element_bytes) {
  return element_bytes == 2 ? kOuterFlatNarrowLoadsInFlight : kOuterFlatLoadsInFlight;
}
inline constexpr int kOuterFlatBlocksPerSm = 2;
inline constexpr std::int64_t kOuterFlatMaxBytes = std::int64_t{64} << 20;

// The resident blocks per SM the block-split families' __launch_bounds__ guarantee
// (tensor_reduce_kernels.cuh) and the planner sizes their splits by (src/cuda/tensor_reduce.cu,
// whole_waves_chunks): one rule for both.
constexpr int rows_block_min_blocks(bool contiguous, bool arg) {
  return !contiguous ? kTensorMinBlocksPerSm : arg ? kRowsBlockContigArgMinBlocksPerSm : kRowsBlockContigMinBlocksPerSm;
}
constexpr int outer_min_blocks(bool arg) { return arg ? kOuterArgMinBlocksPerSm : kTensorMinBlocksPerSm; }
// argmin/argmax launches with no split (chunks == 1: the column tiles alone fill the GPU, as in
// (16, 2^22) over dim 0) take a kernel without the splits' combine (outer_kernel<P, true,
// false>), which fits the 80 registers of 3 blocks an SM for f32 and the 8-byte types with no
// spill (ptxas sm_90, 2026-11-29: f32 / f64 / i64 80 / 78 / 80 registers; i32 / u32 would spill
// 20 bytes, f16 / bf16 76: they keep 2 blocks and the one kernel). A/B on the H200, 2 rounds
// (2026-11-29): argmax f32 (16, 2^22) over dim 0 88.3 -> 86.3 us (83.5 -> 85.2 % of the read
// ceiling); the other outer cases within 1 %.
template <class T>
constexpr bool outer_unsplit_arg_kernel() { return std::is_same_v<T, float> || sizeof(T) == 8; }
inline constexpr int kOuterUnsplitArgMinBlocksPerSm = 3;
template <class T>
constexpr int outer_kernel_min_blocks(bool arg, bool split) {
  return arg && !split && outer_unsplit_arg_kernel<T>() ? kOuterUnsplitArgMinBlocksPerSm : outer_min_blocks(arg);
}
// Outer, one reduced dim (a pointer walk, fewer registers): loads issued together.
inline constexpr int kOuterLoadsInFlight = 8;
// A round of the outer kernel's one-reduced-dim loop: loads a thread issues together. 2-byte
// types (8 columns a vector) keep kLoadsInFlight: with 8 loads their folds spilled 170-750 bytes
// (ptxas sm_90).
constexpr int outer_loads_per_round(std::size_t element_bytes) {
  return element_bytes == 2 ? kLoadsInFlight : kOuterLoadsInFlight;
}
// An unsplit reduced dim of more than one round a thread at the widest column tile (TY rows
// apart) halves the column threads, down to this many, until each thread folds at most one
// round: twice the threads a column vector, a tree one level deeper, and more, smaller blocks.
// H200, 2026-11-29 (foldkit-tensor-probe --outer-sweep, f32 sums): over dim 0 of (16, 2^22),
// 256 column threads (two rounds) 75.7 us, 128 (one round) 72.7 us, 64 (half a round) 94.1 us,
// the read kernel 67.5 us (in foldkit-bench axes sum / max 74.6 / 74.8 -> 72.3 / 72.6 us, 0.99x
// PyTorch's); over the middle axis of (1024, 64, 1024), 256 column threads (8 rounds, 1024
// blocks) 71.4-72.4 us, 128 69.7, 64 69.2, 32 (one round, 8192 blocks) 68.5 us, the read kernel
// 69.2 us. Not argmin/argmax (2 blocks an SM): 88.4 -> 95.1 us on (16, 2^22) there.
inline constexpr int kOuterOneRoundMinColumnThreads = 32;
// The last block of a column tile folds the splits' partials, splits / TY of them per thread in
// series: fewer column threads (more TY) until that depth is at most this, but never fewer than
// kOuterMinColumnThreads: 4 column threads (64 bytes of a 256-byte row) read (2^20, 64) over
// dim 0 at 75 % of the read ceiling, 8 at 87 %. A depth of 32 cost argmax 10-20 points.
// (argmin/argmax of 2- and 4-byte types no longer fold: their splits meet in one atomicMax slot
// a column, c647e29; the rule still picks their column threads, not re-measured without it.)
inline constexpr int kOuterMinColumnThreads = 8;
inline constexpr std::int64_t kOuterMaxFoldDepth = 8;

}  // namespace foldkit::cuda::tuning
