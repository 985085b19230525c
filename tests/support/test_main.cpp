// gtest main that announces the run's seed and size cap before any test runs, so that even a
// crash (no failure message) can be replayed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>

#include "support/test_config.hpp"

int main(int argc, char** argv) {
  // ctest's test discovery parses --gtest_list_tests output: print nothing extra there.
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::strcmp(argv[i], "--gtest_list_tests") == 0;
  ::testing::InitGoogleTest(&argc, argv);
  if (listing) return RUN_ALL_TESTS();
  std::printf("[ foldkit  ] FOLDKIT_TEST_SEED=%llu", static_cast<unsigned long long>(foldkit::test::base_seed()));
  if (foldkit::test::max_n() != std::numeric_limits<std::int64_t>::max())
    std::printf(" FOLDKIT_TEST_MAX_N=%lld", static_cast<long long>(foldkit::test::max_n()));
  std::printf("\n");
  std::fflush(stdout);
  return RUN_ALL_TESTS();
}
