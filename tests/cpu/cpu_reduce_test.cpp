// The shared typed suites (tests/common/reduce_typed_tests.hpp) on the CPU backend, and the
// mean past 2^24 elements (one rounding).
#include "common/reduce_typed_tests.hpp"
#include "support/cpu_backend.hpp"

FOLDKIT_INSTANTIATE_REDUCE_SUITES(Cpu, foldkit::test::CpuBackend)

namespace foldkit::test {
namespace {

TEST(CpuMean, RoundsOncePast2Pow24) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  if (!check_mean_rounds_once<CpuBackend, float>(rng)) GTEST_SKIP() << "FOLDKIT_TEST_MAX_N < 2^24 + 1";
  check_mean_rounds_once<CpuBackend, half>(rng);
  check_mean_rounds_once<CpuBackend, bfloat16>(rng);
}

}  // namespace
}  // namespace foldkit::test
