// Every ladder variant (ladder/variant.hpp), one parameterized test per variant:
//   Contract     accepts(seed_shape) and the sweep shapes; shapes accepts() rejects throw
//                foldkit::Error(invalid_argument) from launch() before doing anything.
//   ExactSums    n from 0 to 2^22 + 1 (see ladder_sizes) x launch shapes x start offsets 0..3,
//                on non-zero integers in [-64, 64]: every output must be exact (see
//                expect_exact), nothing written past the output, the workspace reusable
//                without a memset, and deterministic variants bitwise repeatable.
//   RandomFloats (f32 only) real data against a long double reference with a tolerance.
// Without a usable GPU every test reports SKIPPED.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ladder_harness.hpp"
#include "support/test_config.hpp"

namespace foldkit::ladder {
// gtest prints a parameter on failure; the name says which variant.
void PrintTo(const Variant& v, std::ostream* os) { *os << v.full_name(); }
}  // namespace foldkit::ladder

namespace foldkit::test::ladder {
namespace {

std::string test_name(const ::testing::TestParamInfo<Variant>& info) {
  std::string s = info.param.full_name();  // "seed000/Serial/f32" -> "seed000_Serial_f32"
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class LadderVariant : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    if (!cuda::device_available()) GTEST_SKIP() << "no usable CUDA device";
    const Variant& v = GetParam();
    ASSERT_TRUE(v.launch && v.accepts && v.workspace_bytes && (!is_scan(v) || v.tile_elements))
        << v.full_name() << ": a function pointer is not set";
  }
};
class LadderFloatVariant : public LadderVariant {};  // instantiated over the f32 variants only

TEST_P(LadderVariant, Contract) {
  FOLDKIT_TRACE_SEED();
  const Variant& v = GetParam();
  EXPECT_TRUE(v.accepts(v.seed_shape)) << "seed shape " << describe(v.seed_shape);
  for (const Shape& s : v.sweep) EXPECT_TRUE(v.accepts(s)) << "sweep shape " << describe(s);

  Rng rng(test_seed());
  const Input in = make_exact_input(v.element, 1000, 1, rng.counter());
  Runner run(v);
  int rejected = 0;
  for (const Shape& bad : rejection_candidates(v)) {
    if (v.accepts(bad)) continue;  // a field this variant ignores
    ++rejected;
    const std::string err = run.check_rejected(in, bad);
    EXPECT_TRUE(err.empty()) << err;
  }
  RecordProperty("rejected_shapes_tried", rejected);
  const std::string err = run.check(in, v.seed_shape, expect_exact(v, in, v.seed_shape));
  EXPECT_TRUE(err.empty()) << err;
}

TEST_P(LadderVariant, ExactSums) {
  FOLDKIT_TRACE_SEED();
  const Variant& v = GetParam();
  const std::vector<Shape> shapes = accepted_shapes(v);
  ASSERT_FALSE(shapes.empty()) << v.full_name() << ": accepts() takes none of the shapes tried";
  Rng rng(test_seed());
  Runner run(v);
  int cases = 0;
  for (std::int64_t n : ladder_sizes(v)) {
    // All four start offsets where inputs are small; above, 0 and an odd one (vector-loading
    // rungs must handle an unaligned head and tail).
    std::vector<Input> inputs;
    const std::vector<std::int64_t> offsets =
        sanitize_matrix()     ? std::vector<std::int64_t>{1}
        : n <= kAllOffsetsUpTo ? std::vector<std::int64_t>{0, 1, 2, 3}
                               : std::vector<std::int64_t>{0, 2 * rng.uniform(0, 1) + 1};
    for (std::int64_t off : offsets) inputs.push_back(make_exact_input(v.element, n, off, rng.counter()));

    // (shape, input) pairs: the seed shape at every offset; at the small sizes every accepted
    // shape once, offsets rotating so each occurs; elsewhere three random shapes at every offset
    // (the full cross product at 2^22 would take minutes per variant).
    std::vector<std::pair<Shape, std::size_t>> todo;
    for (std::size_t o = 0; o < inputs.size(); ++o) todo.emplace_back(v.seed_shape, o);
    if (every_shape_at(n)) {
      for (std::size_t k = 0; k < shapes.size(); ++k) todo.emplace_back(shapes[k], k % inputs.size());
    } else {
      for (int k = 0; k < 3; ++k) {
        const Shape s = shapes[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(shapes.size()) - 1))];
        for (std::size_t o = 0; o < inputs.size(); ++o) todo.emplace_back(s, o);
      }
    }
    for (const auto& [shape, o] : todo) {
      const Input& in = inputs[o];
      const std::string err = run.check(in, shape, expect_exact(v, in, shape));
      ++cases;
      if (!err.empty()) {
        ADD_FAILURE() << err;
        return;  // the first failure says it; thousands more would bury it
      }
    }
  }
  RecordProperty("cases", cases);
}

// Real data: floats uniform in [0.5, 1.5). All terms are positive, so the sum is perfectly
// conditioned and any correct order of float adds lands near the exact value: a chain of h
// dependent adds errs by at most h * 2^-24 relative, and by about sqrt(h) * 2^-24 in practice
// (rounding errors of random data do not line up). kRelTol = 1e-4 covers the practical error of
// chains up to 2^26 adds, and the worst case up to h = 1677, while a lost or doubled element
// (>= 0.5, i.e. >= 1/(3n) of the sum) fails the test up to n ~ 3300; beyond that the exact tests
// above are the ones that catch it.
constexpr double kRelTol = 1e-4;
// Rungs that add floats with atomics into one float (Variant::deterministic false) round every
// atomic add to the running total's ulp, the same way for similar partials: a bias that grows
// with the number of atomics (0.9 % measured at 2^28 with 2.2 M threads). That is the rung's
// arithmetic, not a bug; the exact-data test above is what checks that no element is lost.
constexpr double kAtomicRelTol = 5e-2;

TEST_P(LadderFloatVariant, RandomFloats) {
  FOLDKIT_TRACE_SEED();
  const Variant& v = GetParam();
  const std::vector<Shape> shapes = accepted_shapes(v);
  ASSERT_FALSE(shapes.empty());
  Rng rng(test_seed());
  Runner run(v);
  const std::int64_t cap = is_single_thread(v) ? std::min(max_n(), kSerialMaxN) : max_n();
  std::vector<std::int64_t> sizes;
  for (std::int64_t n : {std::int64_t{3000}, std::int64_t{65521}, std::int64_t{1000003}, std::int64_t{1} << 22})
    if (n <= cap) sizes.push_back(n);
  if (sizes.empty()) sizes.push_back(cap);
  for (std::int64_t n : sizes) {
    const Input in = make_real_input(n, rng.uniform(0, 3), rng.counter());
    std::vector<Shape> todo = {v.seed_shape};
    for (int k = 0; k < 2; ++k)
      todo.push_back(shapes[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(shapes.size()) - 1))]);
    for (const Shape& s : todo) {
      const std::string err = run.check(in, s, expect_real(v, in, s, v.deterministic ? kRelTol : kAtomicRelTol));
      if (!err.empty()) {
        ADD_FAILURE() << err;
        return;
      }
    }
  }
}

std::vector<Variant> float_variants() {
  std::vector<Variant> out;
  for (const Variant& v : foldkit::ladder::all_variants())
    if (v.element == Element::f32) out.push_back(v);
  return out;
}

// The seed directories may hold no variants yet: an empty list must not fail the run.
INSTANTIATE_TEST_SUITE_P(Seeds, LadderVariant, ::testing::ValuesIn(foldkit::ladder::all_variants()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LadderVariant);
INSTANTIATE_TEST_SUITE_P(Seeds, LadderFloatVariant, ::testing::ValuesIn(float_variants()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LadderFloatVariant);

}  // namespace
}  // namespace foldkit::test::ladder
