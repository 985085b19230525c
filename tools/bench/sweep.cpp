// `foldkit-bench sweep`: times foldkit's reduction kernel over a grid of launch configurations
// (block_threads x unroll x blocks_per_sm) for one op of each tuning family (sum f32, max f32,
// argmax f32, sum i32, sum f64, sum f16) at the tuning table's sample sizes (4 KiB ... 1 GiB of
// input), to choose the table in include/foldkit/cuda/tuning/reduce_tuning.hpp. Prints each
// case's best configurations beside the tuned default (with and without programmatic launch).
// The table is picked from the CSV (one run or several) by tools/probes/pick_reduce_table.py.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cub_runner.hpp"
#include "cuda/dispatch/reduce_config.hpp"
#include "foldkit/error.hpp"
#include "gpu_common.hpp"
#include "suites.hpp"

namespace fkbench {
namespace {

using foldkit::DType;
using foldkit::ReduceOp;
using foldkit::cuda::detail::ReduceLaunchConfig;
namespace tuning = foldkit::cuda::tuning;

constexpr int kThreads[] = {128, 256, 512, 1024};
constexpr int kUnrolls[] = {1, 2, 4, 8};
constexpr int kBlocksPerSm[] = {1, 2, 4, 8, 16};
constexpr int kShowBest = 5;

std::string cfg_name(const ReduceLaunchConfig& c) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "threads=%d unroll=%d blocks/SM=%d", c.block_threads, c.unroll, c.blocks_per_sm);
  return buf;
}
bool same(const ReduceLaunchConfig& a, const ReduceLaunchConfig& b) {
  return a.block_threads == b.block_threads && a.unroll == b.unroll && a.blocks_per_sm == b.blocks_per_sm;
}

struct Measured {
  ReduceLaunchConfig cfg;
  Row row;
};

struct Case {
  ReduceOp op;
  DType dtype;
};

class Sweep {
 public:
  explicit Sweep(const Options& opt) : opt_(opt), sess_(opt) {}
  int run();

 private:
  // Returns every configuration the kernel accepted, timed.
  std::vector<Measured> sweep_case(Case c, int tier);
  void print_results(Case c, std::int64_t n, std::vector<Measured> all, const Measured& tuned, int rejected,
                     const CeilingResult& ceil);

  const Options& opt_;
  GpuSession sess_;
  CsvWriter csv_;
  Summary summary_;
};

int Sweep::run() {
  const Header h = sess_.make_header("foldkit-bench sweep: launch configurations of foldkit's reduction kernel", opt_,
                                     "sequential: one configuration after another");
  print_header(h);
  if (!opt_.csv_path.empty() && !csv_.open(opt_.csv_path, h)) return 1;

  // One op of each family the table tunes (the 8-byte and 2-byte arg families keep theirs).
  // --dtypes keeps the cases of those dtypes.
  const Case all_cases[] = {{ReduceOp::sum, DType::f32}, {ReduceOp::max, DType::f32}, {ReduceOp::argmax, DType::f32},
                            {ReduceOp::sum, DType::i32}, {ReduceOp::sum, DType::f64}, {ReduceOp::sum, DType::f16}};
  for (const Case& c : all_cases) {
    const char* name = foldkit::dtype_name(c.dtype);
    if (!opt_.sweep_dtypes.empty() &&
        std::find(opt_.sweep_dtypes.begin(), opt_.sweep_dtypes.end(), name) == opt_.sweep_dtypes.end())
      continue;
    for (int tier = 0; tier < tuning::kTiers; ++tier)
      if (tier >= opt_.sweep_tier_first && tier <= opt_.sweep_tier_last) sweep_case(c, tier);
  }
  summary_.print(false);
  return summary_.failures();
}

std::vector<Measured> Sweep::sweep_case(Case c, int tier) {
  const DType dtype = c.dtype;
  const ReduceOp op = c.op;
  const std::int64_t n =
      static_cast<std::int64_t>(tuning::tier_sample_bytes(tier) / static_cast<std::size_t>(foldkit::dtype_size(dtype)));
  InputPool& pool = sess_.pool();
  cudaStream_t s = sess_.stream();
  pool.prepare(dtype, n, input_seed(dtype, n), s);
  const std::size_t bytes = static_cast<std::size_t>(n) * foldkit::dtype_size(dtype);
  const CeilingResult ceil = sess_.measure_ceiling(bytes);

  // Reference result: CUB on copy 0; every configuration must agree with it.
  unsigned char ref[64] = {};
  bool have_ref = false;
  try {
    auto cub = op == ReduceOp::sum ? make_cub_sum(dtype, n)
               : op == ReduceOp::max ? make_cub_max_f32(n)
                                     : make_cub_argmax_f32(n);
    cub->run(pool.copy(0), sess_.out(1), s);
    FKB_CHECK_LAUNCH("CUB reference");
    sess_.read_result(1, ref, sizeof ref);
    have_ref = true;
  } catch (const std::exception& e) {
    std::printf("  (no CUB reference for %s: %s)\n", foldkit::dtype_name(dtype), e.what());
  }

  auto measure = [&](const ReduceLaunchConfig& cfg, const char* impl, bool* rejected) {
    Measured m{cfg, {}};
    Row& r = m.row;
    r.mode = "sweep";
    r.impl = impl;
    r.op = foldkit::op_name(op);
    r.dtype = foldkit::dtype_name(dtype);
    r.n = n;
    r.bytes = bytes;
    r.memory = pool.memory_text();
    r.config = cfg_name(cfg);
    r.ceil_median_us = ceil.median_us;
    r.ceil_batch_us = ceil.batch_us;
    const foldkit::cuda::Workspace ws = sess_.workspace();
    auto call = [&, cfg](const void* in) {
      foldkit::cuda::detail::reduce_with_config(op, dtype, in, n, sess_.out(0), ws, cfg, s);
    };
    try {
      call(pool.copy(0));
      FKB_CHECK_LAUNCH("reduce_with_config");
      unsigned char got[64] = {};
      sess_.read_result(0, got, sizeof got);
      r.check = have_ref ? compare_results(op, dtype, got, ref, "foldkit", "cub") : "";
      const Timing t = sess_.time(call);
      r.median_us = t.median_us;
      r.batch_us = t.batch_us;
    } catch (const foldkit::Error& e) {
      // The kernel rejects configurations it cannot run (e.g. too many registers for the
      // block size): skipped, not a failure.
      if (rejected && e.code() == foldkit::Errc::invalid_argument) *rejected = true;
      else r.check = std::string("ERROR ") + e.what();
    } catch (const std::exception& e) {
      r.check = std::string("ERROR ") + e.what();
    }
    return m;
  };

  const ReduceLaunchConfig tuned_cfg = foldkit::cuda::detail::tuned_reduce_config(op, dtype, n);
  const Measured tuned = measure(tuned_cfg, "foldkit-tuned", nullptr);
  csv_.write(tuned.row);
  summary_.add_check(tuned.row);
  // The same configuration launched without programmatic dependent launch: what PDL costs or
  // saves per call and back to back.
  ReduceLaunchConfig no_pdl = tuned_cfg;
  no_pdl.programmatic_launch = false;
  Measured tuned_no_pdl = measure(no_pdl, "foldkit-tuned-no-pdl", nullptr);
  tuned_no_pdl.row.config += " no-PDL";
  csv_.write(tuned_no_pdl.row);
  summary_.add_check(tuned_no_pdl.row);
  std::printf("  tuned %s: PDL on %.2f / %.2f us, off %.2f / %.2f us (median / batch)\n", cfg_name(tuned_cfg).c_str(),
              tuned.row.median_us, tuned.row.batch_us, tuned_no_pdl.row.median_us, tuned_no_pdl.row.batch_us);

  std::vector<Measured> all;
  int rejected = 0;
  for (int bt : kThreads)
    for (int u : kUnrolls)
      for (int bps : kBlocksPerSm) {
        bool rej = false;
        Measured m = measure(ReduceLaunchConfig{bt, bps, u}, "foldkit", &rej);
        if (rej) {
          ++rejected;
          continue;
        }
        csv_.write(m.row);
        if (check_failed(m.row)) summary_.add_check(m.row);
        all.push_back(m);
      }
  print_results(c, n, all, tuned, rejected, ceil);
  return all;
}

void Sweep::print_results(Case c, std::int64_t n, std::vector<Measured> all, const Measured& tuned, int rejected,
                          const CeilingResult& ceil) {
  const DType dtype = c.dtype;
  const std::size_t bytes = tuned.row.bytes;
  std::printf("\n== %s %s n=%s (%.0f MiB): %zu configurations timed, %d rejected; ceiling %.2f us batch = %.0f GB/s ==\n",
              foldkit::op_name(c.op), foldkit::dtype_name(dtype), pow2_label(n).c_str(), bytes / 1048576.0, all.size(), rejected,
              ceil.batch_us, gbps(bytes, ceil.batch_us));
  // Rank by batch mean (steady-state throughput), median beside it.
  std::sort(all.begin(), all.end(), [](const Measured& a, const Measured& b) {
    const double x = std::isnan(a.row.batch_us) ? 1e300 : a.row.batch_us;
    const double y = std::isnan(b.row.batch_us) ? 1e300 : b.row.batch_us;
    return x < y;
  });
  std::printf("  %-8s %7s %6s %9s %10s %10s %7s %6s %9s  %s\n", "rank", "threads", "unroll", "blocks/SM", "median us",
              "batch us", "GB/s", "%ceil", "vs tuned", "check");
  auto line = [&](const std::string& rank, const Measured& m) {
    const Row& r = m.row;
    std::printf("  %-8s %7d %6d %9d %10.2f %10.2f %7.0f %6.1f %9.3f  %s\n", rank.c_str(), m.cfg.block_threads,
                m.cfg.unroll, m.cfg.blocks_per_sm, r.median_us, r.batch_us, gbps(r.bytes, r.batch_us),
                100.0 * ratio(r.ceil_batch_us, r.batch_us), ratio(r.batch_us, tuned.row.batch_us), r.check.c_str());
  };
  for (int i = 0; i < kShowBest && i < static_cast<int>(all.size()); ++i) line(std::to_string(i + 1), all[i]);
  int tuned_rank = 0;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (same(all[i].cfg, tuned.cfg)) tuned_rank = static_cast<int>(i) + 1;
  line("tuned", tuned);
  if (tuned_rank) std::printf("  (tuned default ranks %d of %zu in the grid)\n", tuned_rank, all.size());
  else std::printf("  (tuned default is outside the grid)\n");
  for (const Measured& m : all)
    if (check_failed(m.row)) std::printf("  !!!!!!!! %s: %s !!!!!!!!\n", m.row.config.c_str(), m.row.check.c_str());
  if (check_failed(tuned.row)) std::printf("  !!!!!!!! tuned: %s !!!!!!!!\n", tuned.row.check.c_str());
  std::fflush(stdout);
}

}  // namespace

int run_sweep(const Options& opt) {
  Sweep s(opt);
  return s.run();
}

}  // namespace fkbench
