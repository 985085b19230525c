// The CUDA reduction's tuning table (include/foldkit/cuda/tuning/reduce_tuning.hpp) is plain
// C++: its tier lookup and family classification are checked here, on every machine.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "foldkit/cuda/tuning/reduce_tuning.hpp"

namespace foldkit::test {
namespace {

namespace tuning = foldkit::cuda::tuning;

TEST(ReduceTuning, EachSampleSizeIsInItsOwnTierAndTheEdgesAreAtThreeHalvesOfTheSample) {
  EXPECT_EQ(tuning::reduce_tier(0), 0);
  for (int tier = 0; tier < tuning::kTiers; ++tier) {
    const std::size_t sample = tuning::tier_sample_bytes(tier);
    EXPECT_EQ(tuning::reduce_tier(sample), tier) << "sample " << sample;
    EXPECT_EQ(tuning::reduce_tier(sample / 2 * 3), tier) << "upper edge of tier " << tier;
    if (tier + 1 < tuning::kTiers) {
      EXPECT_EQ(tuning::reduce_tier(sample / 2 * 3 + 1), tier + 1) << "past tier " << tier;
    }
    if (tier > 0) {
      EXPECT_EQ(tuning::reduce_tier(sample / 4 * 3 + 1), tier) << "lower edge of tier " << tier;
    }
  }
  // Past the last sample every size takes the last tier.
  EXPECT_EQ(tuning::reduce_tier(std::size_t{1} << 40), tuning::kTiers - 1);
}

TEST(ReduceTuning, FamiliesFollowElementAccumulatorAndIndex) {
  using F = tuning::ReduceFamily;
  EXPECT_EQ(tuning::reduce_family(2, 4, false), F::narrow);     // half/bf16 sums (float accumulator)
  EXPECT_EQ(tuning::reduce_family(4, 4, false), F::value4);     // float sums, 4-byte min/max
  EXPECT_EQ(tuning::reduce_family(4, 8, false), F::widen4);     // int32/uint32 sums widen
  EXPECT_EQ(tuning::reduce_family(8, 8, false), F::value8);
  EXPECT_EQ(tuning::reduce_family(16, 16, false), F::value8);   // 16-byte user types
  EXPECT_EQ(tuning::reduce_family(2, 8, true), F::arg2);
  EXPECT_EQ(tuning::reduce_family(4, 8, true), F::arg4);
  EXPECT_EQ(tuning::reduce_family(8, 16, true), F::arg8);
}

TEST(ReduceTuning, EveryShapeIsLaunchableAndItsUnrollIsCompiled) {
  for (int f = 0; f < tuning::kFamilies; ++f) {
    const auto family = static_cast<tuning::ReduceFamily>(f);
    for (int tier = 0; tier < tuning::kTiers; ++tier) {
      const tuning::ReduceTuning t = tuning::reduce_tuning_for(family, tuning::tier_sample_bytes(tier));
      EXPECT_EQ(t.block_threads % 32, 0);
      EXPECT_GE(t.block_threads, 32);
      EXPECT_LE(t.block_threads, 1024);
      EXPECT_GE(t.blocks_per_sm, 1);
      EXPECT_LE(t.blocks_per_sm, tuning::kMaxBlocksPerSm);
      EXPECT_TRUE(tuning::unroll_fits(family, t.unroll)) << "family " << f << " tier " << tier;
      EXPECT_TRUE(tuning::table_uses_unroll(family, t.unroll));
    }
  }
}

}  // namespace
}  // namespace foldkit::test
