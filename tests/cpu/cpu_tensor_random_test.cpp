// foldkit::cpu::reduce / arg_reduce over tensors on randomized problems (tests/common/tensor_random_cases.hpp):
// the fixed edge shapes once (every row length 1..40, 2^k +- 1 rows, (4, 3e5) rows, (2^17 + 3, 3)
// over dim 0, wide outer reductions, transposed / stepped / broadcast views, rank 0 and 6, size-0
// dims), then 320 random problems across every regime, each with an op x dtype dealt from all 56,
// random layouts, axes, keepdims and output layouts. Every output element against the long double
// / wrapping-integer reference, argmin/argmax indices and values exact, bytes outside the output
// views still poisoned, the input unchanged. The run prints what it covered (plan families,
// regimes, tags); the seed is printed on failure (FOLDKIT_TEST_SEED replays it).
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <vector>

#include "common/tensor_random_cases.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

constexpr int kMaxReported = 20;  // failures printed in full per test; all are counted

Outcome run_cpu(RandomProblem& p) {
  const Device host = Device::host();
  const TensorView in = p.input_view(p.storage, host);
  try {
    if (p.vals)
      cpu::arg_reduce(p.op, in, p.axes, p.keepdims, p.out_view(p.out->bytes.data(), host), p.vals_view(p.vals->bytes.data(), host));
    else
      cpu::reduce(p.op, in, p.axes, p.keepdims, p.out_view(p.out->bytes.data(), host));
  } catch (const Error& e) {
    return Outcome{true, e.code(), e.what()};
  }
  return Outcome{};
}

void run_and_check(RandomProblem& p, CoverageSummary& summary) {
  const auto* storage = static_cast<const unsigned char*>(p.storage);
  const std::vector<unsigned char> before(storage, storage + p.storage_bytes);
  const Outcome outcome = run_cpu(p);
  summary.add(p);
  ::testing::AssertionResult r = check_problem(p, outcome);
  if (r && std::memcmp(before.data(), p.storage, p.storage_bytes) != 0) r = ::testing::AssertionFailure() << "the input's storage changed";
  if (!r && ++summary.failures <= kMaxReported) ADD_FAILURE() << p.describe() << "\n  " << r.message();
}

RandomCaseLimits cpu_limits() {
  RandomCaseLimits l;
  l.small_numel = 4096;
  l.big_numel = 1 << 18;
  return l;
}

TEST(CpuTensorRandom, EdgeShapesMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  ProblemSource source(test_seed(), cpu_limits());
  CoverageSummary summary;
  int id = 0;
  for (const ShapeSpec& spec : edge_specs()) {
    RandomProblem p = source.next_edge(spec, id++);
    run_and_check(p, summary);
  }
  std::cout << "[ CpuTensorRandom.EdgeShapes ]\n" << summary.text();
  EXPECT_EQ(summary.failures, 0);
  EXPECT_TRUE(summary.reached_every_structure(1));
  EXPECT_TRUE(summary.reached_tags(required_tags()));
}

TEST(CpuTensorRandom, RandomProblemsMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  ProblemSource source(test_seed(), cpu_limits());
  CoverageSummary summary;
  constexpr int kCases = 320;
  for (int id = 0; id < kCases; ++id) {
    RandomProblem p = source.next_random(id);
    run_and_check(p, summary);
  }
  std::cout << "[ CpuTensorRandom.RandomProblems ]\n" << summary.text();
  EXPECT_EQ(summary.failures, 0);
  EXPECT_EQ(summary.cases, kCases);
  EXPECT_TRUE(summary.reached_every_structure(1));
}

}  // namespace
}  // namespace foldkit::test
