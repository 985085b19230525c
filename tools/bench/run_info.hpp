// What every table header and every CSV row says about how its numbers were taken: the commit
// measured, the repetitions, the gate and the order in which rivals were timed. (The memory state
// depends on the case's size and travels with each row.)
#pragma once

#include <string>

namespace fkbench {

struct RunInfo {
  std::string commit = "unknown";  // source_commit()
  int warmup = 0;                  // untimed calls per implementation before timing
  int reps_median = 0;             // per-call samples per implementation
  int reps_batch = 0;              // back-to-back calls per implementation (0: no batch figure)
  std::string gate = "n/a";        // "gated" (GPU time of one call), "ungated", "n/a" (CPU)
  std::string order;               // how rivals were timed, e.g. "interleaved"
};

// The commit the benchmark measures: $FOLDKIT_COMMIT when set (a copy of the tree without .git,
// as on the GPU machine), else `git describe` of the source tree this binary was built from
// (12 hex digits, "-dirty" when it had uncommitted changes), else "unknown".
std::string source_commit();

}  // namespace fkbench
