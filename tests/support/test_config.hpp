// Run-wide test settings taken from the environment, and the per-test random seed.
//
//   FOLDKIT_TEST_SEED=<u64>   replay a run: every test derives its data from this seed and its own
//                             name, so one test can be replayed alone with --gtest_filter.
//                             Default: a fresh std::random_device seed per process.
//   FOLDKIT_TEST_MAX_N=<n>    cap every input size at n (e.g. 100000 for a compute-sanitizer run).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace foldkit::test {

std::uint64_t base_seed();  // chosen once per process
std::int64_t max_n();       // INT64_MAX when FOLDKIT_TEST_MAX_N is unset

// Seed for the running test: base_seed() mixed with the test's full name, so a test's data does
// not depend on which other tests ran before it in the same process.
std::uint64_t test_seed();

// "FOLDKIT_TEST_SEED=... (replay: FOLDKIT_TEST_SEED=... <binary> --gtest_filter=<this test>)"
std::string seed_note();

// The sizes every op x dtype is tested at (capped by max_n()): 1, 2, 3; 2^k-1, 2^k, 2^k+1 for
// k in {5, 10, 12, 15, 16, 20} (2^15 is the CPU chunk length); the primes 65521 and 1000003.
std::vector<std::int64_t> standard_sizes();

// Keeps only the sizes <= max_n(); when all are capped away, keeps max_n() itself so a reduced
// run still tests something.
std::vector<std::int64_t> capped(std::vector<std::int64_t> sizes);

// Misaligned starts tried for a size: all of {0, 1, 2, 3} up to kAllOffsetsUpTo elements, one
// random offset above (the trace says which, and the seed replays it).
inline constexpr std::int64_t kAllOffsetsUpTo = 65537;

}  // namespace foldkit::test

// Puts the replay line into every failure message of the enclosing scope.
#define FOLDKIT_TRACE_SEED() SCOPED_TRACE(::foldkit::test::seed_note())
