// The registry itself (foldkit::ladder::all_variants()): names unique, every function pointer
// set, rungs numbered 0, 1, 2, ... per (seed, element), in the order variant.hpp promises.
// Needs no GPU, but like the rest of this binary it reports SKIPPED without one (the binary is
// labelled "gpu", and a pass there must mean the GPU tests ran).
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ladder/variant.hpp"
#include "support/cuda_backend.hpp"

namespace foldkit::test::ladder {
namespace {

using foldkit::ladder::Algorithm;
using foldkit::ladder::Element;
using foldkit::ladder::Variant;

using LadderRegistry = CudaTest;

std::string sanitized(std::string s) {  // as the parameterized tests name themselves
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

TEST_F(LadderRegistry, NamesUniqueAndFunctionsSet) {
  std::set<std::string> names, test_names;
  for (const Variant& v : foldkit::ladder::all_variants()) {
    SCOPED_TRACE(v.full_name());
    EXPECT_TRUE(names.insert(v.full_name()).second) << "duplicate variant";
    EXPECT_TRUE(test_names.insert(sanitized(v.full_name())).second) << "duplicate test name";
    EXPECT_FALSE(v.name.empty());
    EXPECT_FALSE(v.change.empty()) << "each rung says what it changes";
    EXPECT_TRUE(v.seed == "000" || v.seed == "002" || v.seed == "003" || v.seed == "004") << v.seed;
    EXPECT_NE(v.launch, nullptr);
    EXPECT_NE(v.accepts, nullptr);
    EXPECT_NE(v.workspace_bytes, nullptr);
    if (v.algorithm == Algorithm::blocked_inclusive_scan) {
      EXPECT_NE(v.tile_elements, nullptr);
    }
  }
}

TEST_F(LadderRegistry, RungsConsecutivePerSeedAndElement) {
  std::map<std::pair<std::string, Element>, int> next;  // the rung number expected next
  std::string last_seed;
  for (const Variant& v : foldkit::ladder::all_variants()) {
    SCOPED_TRACE(v.full_name());
    EXPECT_LE(last_seed, v.seed) << "variants are listed in seed order";
    last_seed = v.seed;
    int& expected = next[{v.seed, v.element}];
    EXPECT_EQ(v.rung, expected) << "rungs are numbered 0, 1, 2, ... per (seed, element), in ladder order";
    expected = v.rung + 1;
  }
}

}  // namespace
}  // namespace foldkit::test::ladder
