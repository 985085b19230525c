// The CUDA tensor scans' tile geometry (include/foldkit/cuda/tuning/tensor_scan_tuning.hpp) is
// plain C++: the depth and width choices the H100 measurements set, and the invariants every
// geometry must keep (the tiles cover the matrix; chained tiles are no wider than the kernel's
// look-back state), are checked here, on every machine.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "foldkit/cuda/tuning/tensor_scan_tuning.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

namespace tuning = foldkit::cuda::tuning;

// f32 sums over dim 0 of a row-major rows x cols matrix (narrow: lines of 2 or 4 back to back).
tuning::TensorScanGeometry f32_columns(std::int64_t rows, std::int64_t cols) {
  const int narrow = cols == 2 || cols == 4 ? static_cast<int>(cols) : 0;
  return tuning::tensor_scan_geometry(4, 4, rows, cols, narrow, false);
}

TEST(TensorScanTuning, DeepTilesForChainsOfFewColumnTilesShallowForMany) {
  for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{std::int64_t{1} << 22, 16},
                                   {std::int64_t{1} << 20, 64},
                                   {std::int64_t{1} << 18, 256},
                                   {65536, 1024},
                                   {std::int64_t{1} << 24, 4}}) {
    const auto g = f32_columns(rows, cols);
    EXPECT_EQ(g.in_chunks, tuning::kTensorScanDeepChunks) << rows << " x " << cols;
    EXPECT_GT(g.row_tiles, 1) << rows << " x " << cols;
  }
  for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{16384, 4096}, {4096, 16384}}) {
    const auto g = f32_columns(rows, cols);
    EXPECT_EQ(g.in_chunks, tuning::kTensorScanShallowChunks) << rows << " x " << cols;
    EXPECT_GT(g.col_tiles, tuning::kTensorScanDeepMaxChains) << rows << " x " << cols;
  }
}

TEST(TensorScanTuning, SingleTilesAreDeepOnlyWhenTheyIdleNoMoreRows) {
  const auto tall = f32_columns(256, std::int64_t{1} << 18);  // deep: 16 x 16 rows, twice as wide
  EXPECT_EQ(tall.in_chunks, tuning::kTensorScanDeepChunks);
  EXPECT_EQ(tall.row_tiles, 1);
  EXPECT_EQ(tall.rows_per_tile, 256);
  const auto flat = f32_columns(16, std::int64_t{1} << 22);  // a deep tile holds >= 32 rows
  EXPECT_EQ(flat.in_chunks, tuning::kTensorScanShallowChunks);
  EXPECT_EQ(flat.rows_per_tile, 16);
}

TEST(TensorScanTuning, WideAccumulatorsKeepTheirDepthAndTheChainWidthIsACap) {
  EXPECT_EQ(tuning::tensor_scan_geometry(2, 4, 100000, 64, 0, false).in_chunks, tuning::kTensorScanWideChunks);
  for (int tc = 1; tc <= tuning::kTensorScanChainTCLimit; tc *= 2) {
    const auto g = tuning::tensor_scan_geometry_at(tuning::kTensorScanDeepChunks, 4, 1 << 20, 1024, 0, false, tc);
    EXPECT_EQ(1 << g.tc_shift, tc);
    EXPECT_GT(g.row_tiles, 1);
  }
}

TEST(TensorScanTuning, RandomShapesAreCoveredAndChainedTilesStayWithinTheKernelsState) {
  FOLDKIT_TRACE_SEED();
  std::mt19937_64 rng(test_seed());  // fresh shapes every run (the seed in the trace)
  for (int k = 0; k < 20000; ++k) {
    const std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % (std::uint64_t{1} << (1 + rng() % 24)));
    const std::int64_t cols = 1 + static_cast<std::int64_t>(rng() % (std::uint64_t{1} << (1 + rng() % 16)));
    for (std::size_t elem : {2, 4, 8})
      for (std::size_t accum : {elem, 2 * elem}) {
        if (accum > 8) continue;
        const int vec_max = static_cast<int>(16 / elem);
        const int narrow = (cols == 2 || cols == 4) && cols < vec_max ? static_cast<int>(cols) : 0;
        const auto g = tuning::tensor_scan_geometry(elem, accum, rows, cols, narrow, rng() % 2 == 0);
        SCOPED_TRACE(testing::Message() << rows << " x " << cols << ", elem " << elem << ", accum " << accum);
        EXPECT_GE(g.rows_per_tile * g.row_tiles, rows);
        EXPECT_GE(g.cols_per_tile * g.col_tiles, cols);
        EXPECT_LT(g.rows_per_tile * (g.row_tiles - 1), rows);
        if (g.row_tiles > 1) {
          EXPECT_LE(1 << g.tc_shift, tuning::kTensorScanChainTCLimit);
        }
        EXPECT_LE(1 << g.tc_shift, tuning::kTensorScanMaxTC);
      }
  }
}

// The rule at a distance of 2 MiB (the library's distance is 0, off: every call gets none).
TEST(TensorScanTuning, PrefetchOnlyInLongCallsOfWholeChunks) {
  const auto g = f32_columns(std::int64_t{1} << 22, 16);
  constexpr std::int64_t kAhead = std::int64_t{2} << 20;
  EXPECT_EQ(tuning::tensor_scan_prefetch_tiles(g, false, 4096, 132, true, kAhead),
            static_cast<int>(kAhead / (256 * g.in_chunks * 16)));
  EXPECT_GT(tuning::tensor_scan_prefetch_tiles(g, false, 4096, 132, true, kAhead), 0);
  EXPECT_EQ(tuning::tensor_scan_prefetch_tiles(g, false, 4096, 132, false, kAhead), 0);
  EXPECT_EQ(tuning::tensor_scan_prefetch_tiles(g, false, 100, 132, true, kAhead), 0);
  EXPECT_EQ(tuning::tensor_scan_prefetch_tiles(g, false, 4096, 132, true), 0);
}

// The first wave's lag: only in chained calls of more than one wave, a fraction of that wave.
TEST(TensorScanTuning, FirstWaveLagOnlyInChainedCallsPastOneWave) {
  const std::int64_t wave = tuning::tensor_scan_first_wave(tuning::kTensorScanDeepChunks, false, 132);
  EXPECT_EQ(wave, 132 * tuning::tensor_scan_min_blocks(tuning::kTensorScanDeepChunks, false));
  EXPECT_EQ(tuning::tensor_scan_first_wave_lag(4096, wave, true, 3), wave * 3 / 8);
  EXPECT_EQ(tuning::tensor_scan_first_wave_lag(4096, wave, false, 3), 0);
  EXPECT_EQ(tuning::tensor_scan_first_wave_lag(wave, wave, true, 3), 0);
  EXPECT_EQ(tuning::tensor_scan_first_wave_lag(4096, wave, true, 0), 0);
  EXPECT_LT(tuning::tensor_scan_first_wave_lag(4096, wave, true, 7), wave);
}

}  // namespace
}  // namespace foldkit::test
