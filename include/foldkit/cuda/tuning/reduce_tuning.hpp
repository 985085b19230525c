// Tuning of the full-array reduction kernel: the launch configuration per kernel family and
// input size, and the sweep that chose it. Re-tune with `foldkit-bench sweep` and record the
// result here.
//
// The constants are chosen below, beside the sweep summary; the full sweep table of each run is
// kept under bench/results/ (sweep-*.csv).
#pragma once

#include <cstddef>

namespace foldkit::cuda::tuning {

struct ReduceTuning {
  int block_threads;  // threads per block (multiple of 32)
  int blocks_per_sm;  // upper bound on resident blocks per SM the grid is sized for
  int unroll;         // independent 16-byte loads in flight per thread per iteration
  // Launch with programmatic stream serialization (Hopper PDL): the kernel's launch overlaps
  // the end of the previous kernel in the stream; the kernel waits for it before reading.
  bool programmatic_launch = true;
  // Grids of up to kMaxClusterBlocks * kClusterWaves blocks' worth of work run as one
  // thread-block cluster that combines through distributed shared memory.
  bool use_clusters = true;
};

// Largest cluster (16 needs the non-portable size; Hopper allows it) and how many unrolled
// iterations per thread the cluster path may take before a wider grid pays off.
inline constexpr int kMaxClusterBlocks = 16;
inline constexpr int kClusterWaves = 1;

// Blocks per SM the workspace has room for: the largest grid any configuration may launch.
inline constexpr int kMaxBlocksPerSm = 32;

// Bytes of one block's partial-result slot: the largest accumulator (16 bytes, e.g.
// ArgResult<double>) as four flagged 8-byte words.
inline constexpr std::size_t kPartialSlotBytes = 32;

// What a kernel keeps per thread decides its best launch shape (registers per thread, so
// resident threads and loads in flight): the families the tuning tells apart.
enum class ReduceFamily : int {
  narrow,  // 2-byte elements (half, bfloat16): 8 float lanes per 16-byte vector
  value4,  // 4-byte elements, 4-byte accumulator (float sums, every 4-byte min/max/prod)
  widen4,  // 4-byte elements, 8-byte accumulator (int32/uint32 sums and means widen)
  value8,  // 8-byte (and 16-byte user) elements
  arg2,    // argmin/argmax of 2-byte elements (a packed 64-bit key per lane)
  arg4,    // argmin/argmax of 4-byte elements (value and vector index per lane)
  arg8,    // argmin/argmax of 8-byte elements ({value, index} per lane)
};
inline constexpr int kFamilies = 7;

constexpr ReduceFamily reduce_family(std::size_t element_bytes, std::size_t accum_bytes, bool arg) {
  if (arg) return element_bytes == 2 ? ReduceFamily::arg2 : element_bytes == 4 ? ReduceFamily::arg4 : ReduceFamily::arg8;
  if (element_bytes == 2) return ReduceFamily::narrow;
  if (element_bytes == 4) return accum_bytes == 8 ? ReduceFamily::widen4 : ReduceFamily::value4;
  return ReduceFamily::value8;
}

// The most 16-byte loads in flight per thread a family's kernel takes without spilling
// registers (2-byte elements carry 8 lanes; 8-byte arg ops carry 16-byte lanes).
constexpr int max_unroll(ReduceFamily f) {
  return f == ReduceFamily::narrow || f == ReduceFamily::arg2 || f == ReduceFamily::arg8 ? 4 : 8;
}

// Whether a family's kernel compiles without register spills at `unroll` (1, 2, 4 or 8). The
// 2-byte sums also spill at 1 and 2 (12-16 bytes: ptxas packs their 8 float lanes worse there).
constexpr bool unroll_fits(ReduceFamily f, int unroll) {
  if (unroll != 1 && unroll != 2 && unroll != 4 && unroll != 8) return false;
  if (f == ReduceFamily::narrow && unroll < 4) return false;
  return unroll <= max_unroll(f);
}

// Size tiers. The sweep times inputs of 4 KiB * 2^k (k = 0..18: 4 KiB ... 1 GiB); tier k takes
// every input from 3/4 to 3/2 of its sample, so each sample sits in the middle of its tier
// (geometrically near enough) and the benchmark's power-of-two sizes are samples themselves.
inline constexpr int kTiers = 19;
constexpr std::size_t tier_sample_bytes(int tier) { return std::size_t{4096} << tier; }
constexpr int reduce_tier(std::size_t input_bytes) {
  int tier = 0;
  while (tier + 1 < kTiers && input_bytes > tier_sample_bytes(tier) / 2 * 3) ++tier;
  return tier;
}

// The table: {block_threads, blocks_per_sm, unroll} per family and tier.
//
// From three runs of `foldkit-bench sweep` on the H100 (2026-11-24, machines of kind
// nvidia-h100-x1; bench/results/sweep-h100-2026-11-24{a,b,c}.csv; a and b timed every other
// tier): 80 shapes (threads 128-1024 x unroll 1/2/4/8 x blocks/SM 1-16) per case and tier. A
// shape's score in a case is the worse of its per-call median over that size's best median and
// its batch mean over the best batch mean (up to 256 KiB the median alone: the batch mean is
// the host's submission rate there), averaged over the runs (arg4: b and c, which timed the
// vector-state argmax). A family's pick minimises the worst score over its cases (value4:
// sum and max f32) plus a quarter of that at the neighbouring tiers:
// `tools/probes/pick_reduce_table.py sweep-h100-2026-11-24{a,b,c}.csv --arg-from 1` prints the
// rows below (arg2, arg8 excepted). What the sweep showed:
// - up to ~256 KiB one block or a one-cluster grid wins: a call is latency, the whole input one
//   round of loads; the shapes within ~5 % of each other there are noise;
// - 1-16 MiB: spread over every SM with each thread doing one round of loads (256-512 threads,
//   unroll 2-8 by element and state size); the old "512 x 4 everywhere" was up to 10-25 %
//   slower at 256 KiB-4 MiB and 5-10 % at 16 MiB for i32 sums, f64 sums and argmax;
// - from 64 MiB: a persistent grid of 1024-thread blocks, within 0.5 % of the best.
// Re-swept 2026-11-25 after the load-batch fixes (tiers 5-13, two runs on one machine:
// sweep-h100-2026-11-25{a,b}.csv, `foldkit-bench sweep --tiers 5-13`): 12 entries of tiers
// 7-13 whose shape scored >= 4.5 % off the best were replaced by the best shape among the
// unrolls the family already compiles (docs/perf-log/2026-11-25.md, fourth session; the bench's
// batch means at f32 2^20 and f64 2^22 fell 9-11 %).
// 2026-11-26: arg4 tiers 8 and 12 (1 and 16 MiB) take the shapes pick_reduce_table.py gives
// for sweep-h100-2026-11-25{a,b}.csv, 256 x 8 x 4 and 256 x 16 x 8 (the old 512 x 8 x 1 and
// 512 x 16 x 8 were 2-3 % behind them by batch mean there, under the 4.5 % at which the
// fourth session replaced entries), A/B-measured in docs/perf-log/2026-11-26.md (second session).
// narrow takes only unroll 4 (unroll_fits); arg2 and arg8 were not swept and keep the
// 2026-11-22 shapes.
struct ReduceShape {
  int block_threads, blocks_per_sm, unroll;
};
inline constexpr ReduceShape kReduceTable[kFamilies][kTiers] = {
    // tier samples: 4K, 8K, 16K, ... (x2) ... 512M, 1G
    /* narrow */ {{128, 8, 4}, {256, 1, 4}, {256, 4, 4}, {512, 2, 4}, {1024, 16, 4},
                  {256, 16, 4}, {128, 1, 4}, {128, 2, 4}, {256, 8, 4}, {512, 8, 4},
                  {256, 2, 4}, {512, 8, 4}, {512, 2, 4}, {512, 8, 4}, {512, 8, 4},
                  {1024, 1, 4}, {1024, 1, 4}, {1024, 4, 4}, {1024, 4, 4}},
    /* value4 */ {{128, 8, 4}, {256, 16, 4}, {256, 2, 4}, {512, 8, 4}, {512, 4, 8},
                  {256, 16, 2}, {256, 2, 2}, {256, 8, 2}, {256, 4, 4}, {256, 16, 2},
                  {1024, 2, 2}, {256, 2, 4}, {512, 2, 4}, {1024, 4, 4}, {512, 4, 4},
                  {1024, 1, 4}, {1024, 4, 2}, {1024, 8, 2}, {1024, 1, 8}},
    /* widen4 */ {{256, 16, 2}, {512, 4, 2}, {512, 2, 4}, {1024, 1, 4}, {512, 4, 8},
                  {128, 8, 1}, {128, 4, 2}, {256, 8, 1}, {128, 8, 8}, {512, 4, 2},
                  {512, 8, 2}, {256, 16, 8}, {512, 8, 8}, {512, 2, 2}, {1024, 4, 8},
                  {1024, 8, 8}, {1024, 8, 8}, {1024, 2, 8}, {1024, 2, 8}},
    /* value8 */ {{512, 2, 1}, {512, 16, 2}, {256, 1, 4}, {512, 2, 4}, {1024, 4, 4},
                  {1024, 1, 8}, {128, 1, 4}, {256, 8, 4}, {128, 8, 2}, {256, 2, 4},
                  {512, 8, 4}, {512, 2, 4}, {256, 16, 4}, {256, 8, 4}, {512, 4, 4},
                  {512, 4, 4}, {1024, 1, 4}, {1024, 4, 4}, {1024, 4, 8}},
    /* arg2   */ {{512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4},
                  {512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4},
                  {512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {512, 4, 4}, {1024, 2, 4},
                  {1024, 2, 4}, {1024, 2, 4}, {1024, 2, 4}, {1024, 2, 4}},
    /* arg4   */ {{256, 4, 2}, {512, 2, 2}, {256, 1, 4}, {512, 4, 4}, {512, 8, 8},
                  {128, 2, 2}, {256, 4, 2}, {128, 8, 2}, {256, 8, 4}, {128, 16, 8},
                  {128, 4, 8}, {256, 8, 8}, {256, 16, 8}, {256, 2, 4}, {1024, 4, 4},
                  {1024, 16, 4}, {1024, 8, 4}, {1024, 1, 8}, {1024, 1, 8}},
    /* arg8   */ {{256, 8, 4}, {256, 8, 4}, {256, 8, 4}, {256, 8, 4}, {256, 8, 4},
                  {256, 8, 4}, {256, 8, 4}, {256, 8, 4}, {256, 8, 4}, {256, 8, 4},
                  {256, 8, 4}, {256, 8, 4}, {256, 8, 4}, {256, 8, 4}, {1024, 2, 4},
                  {1024, 2, 4}, {1024, 2, 4}, {1024, 2, 4}, {1024, 2, 4}},
};

constexpr ReduceTuning reduce_tuning_for(ReduceFamily family, std::size_t input_bytes) {
  const ReduceShape s = kReduceTable[static_cast<int>(family)][reduce_tier(input_bytes)];
  return ReduceTuning{s.block_threads, s.blocks_per_sm, s.unroll};
}

// Whether the table launches `family` with `unroll` at some size: only those kernels are
// compiled into the library.
constexpr bool table_uses_unroll(ReduceFamily family, int unroll) {
  for (int tier = 0; tier < kTiers; ++tier)
    if (kReduceTable[static_cast<int>(family)][tier].unroll == unroll) return true;
  return false;
}

// Every table entry fits its family (a wrong edit fails to compile, not to launch).
constexpr bool table_fits() {
  for (int f = 0; f < kFamilies; ++f)
    for (int tier = 0; tier < kTiers; ++tier) {
      const ReduceShape s = kReduceTable[f][tier];
      if (!unroll_fits(static_cast<ReduceFamily>(f), s.unroll) || s.block_threads < 32 || s.block_threads > 1024 || s.block_threads % 32 != 0 || s.blocks_per_sm < 1 ||
          s.blocks_per_sm > kMaxBlocksPerSm)
        return false;
    }
  return true;
}
static_assert(table_fits(), "reduce tuning table: an entry does not fit its family");

}  // namespace foldkit::cuda::tuning
