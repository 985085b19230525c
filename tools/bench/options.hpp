// Command-line options of foldkit-bench, shared by the suites. Parsed in main.cpp.
#pragma once

#include <string>
#include <vector>

namespace fkbench {

enum class Backend { automatic, cpu, cuda };

struct Options {
  bool sweep = false;         // `foldkit-bench sweep`: tune the CUDA reduction's launch configuration
  bool ladder = false;        // `foldkit-bench ladder`: the seeds' kernel ladders, rung by rung
  bool scan = false;          // `foldkit-bench scan`: foldkit's prefix sums vs cub::DeviceScan vs a copy ceiling
  bool axes = false;          // `foldkit-bench axes`: reductions and scans along tensor axes, segmented sums
  bool ladder_sweep = false;  // `ladder --sweep`: every rung's sweep shapes at the DRAM size
  bool scan_sweep = false;    // `scan --sweep`: the whole-array scan's alternative policies
  bool axes_sweep = false;    // `axes --sweep`: the column-scan tile kernel's geometries (cumsum over dim 0)
  std::vector<std::string> ladder_seeds;  // `ladder --seed 000,004`; empty: every seed
  bool quick = false;         // fewer repetitions (still >= 20 per-call samples, >= 100 batch calls)
  bool gate = true;           // hold the stream while a timed call is submitted (see timing.hpp)
  bool busy = false;          // CPU table: run 2 busy threads per core beside it (cpu_suite.cpp)
  Backend backend = Backend::automatic;
  std::string csv_path;       // empty: no CSV
  std::string only;           // `axes --only TEXT`: only the cases whose name contains TEXT
  std::vector<std::string> sweep_dtypes;  // empty: every dtype
  int sweep_tier_first = 0, sweep_tier_last = 99;  // `sweep --tiers A-B`: only those size tiers
  std::string command_line;   // argv joined, printed in the header

  // Repetitions. Per-call median over reps_median calls, mean over one batch of reps_batch
  // back-to-back calls. The defaults are set by main from --quick.
  int warmup = 5;
  int reps_median = 50;
  int reps_batch = 200;
};

}  // namespace fkbench
