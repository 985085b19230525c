// `foldkit-bench ladder`: the seeds' kernel ladders (ladder/variant.hpp) timed rung by rung,
// each seed in a table of its own form (ladder_suite.cpp), and with --sweep every rung's
// launch shapes (ladder_sweep.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ladder_bench.hpp"
#include "options.hpp"

namespace fkbench {

// How one seed is shown.
struct SeedPlan {
  std::string seed;                // "000"
  std::vector<Element> elements;   // element types to show, the seed's own first
  std::int64_t seed_n = 0;         // the seed's size, timed on one reused input as its author did
  std::int64_t dram_n = 0;         // the DRAM-sized n, rotated inputs; 0: seed_n already is (one table)
  std::string size_note;           // where seed_n comes from
  std::string form;                // what the seed reported, and in which form
};
std::vector<SeedPlan> seed_plans(const std::vector<std::string>& only);  // empty: every seed

// The selected seed's variants of one element, in rung order.
std::vector<Variant> variants_of(const std::string& seed, Element e);
// The element types a plan shows: its own list, or, if the ladder has none of those, whatever
// it does have (so the bench keeps working whichever types the rungs were written for).
std::vector<Element> elements_shown(const SeedPlan& p);

// Runs the sweep part (--sweep) on the selected seeds; returns the number of failed checks.
// seed_size_us: each variant's median at its seed's size (from the tables), to skip rungs too
// slow to run at the DRAM size.
int run_ladder_sweep(LadderBench& bench, LadderCsv& csv, const std::vector<SeedPlan>& plans,
                     const std::map<std::string, double>& seed_size_us);

// A rung whose per-call time at the DRAM size, estimated from the seed size, exceeds this is
// not run there (seed 000's Serial: one thread, ~6 s per call at 2^28).
inline constexpr double kSkipEstimateUs = 1e6;
// A rung's per-call time at n estimated from its seed-size median (scaled by n / seed_n; the slow
// rungs are latency-bound single threads, linear in n); NaN when unknown.
double estimate_us(const Variant& v, const std::map<std::string, double>& seed_size_us, std::int64_t seed_n,
                   std::int64_t n);
// "skipped (single thread, ~6.4 s per call, estimated from the seed size)", or "" when the
// estimate is below kSkipEstimateUs or unknown.
std::string skip_note(const Variant& v, const std::map<std::string, double>& seed_size_us, std::int64_t seed_n,
                      std::int64_t n);

}  // namespace fkbench
