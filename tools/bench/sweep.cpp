// `foldkit-bench sweep`: times foldkit's sum kernel over a grid of launch configurations
// (block_threads x unroll x blocks_per_sm) for each dtype at n = 2^14 ... 2^24 (even powers) and 2^28, to choose the
// constants in src/cuda/tuning/. Prints each case's best configurations beside the tuned
// default, and at the end, per dtype, the configuration that is closest to the best at every size.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
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

class Sweep {
 public:
  explicit Sweep(const Options& opt) : opt_(opt), sess_(opt) {}
  int run();

 private:
  // Returns every configuration the kernel accepted, timed.
  std::vector<Measured> sweep_case(DType dtype, std::int64_t n);
  void print_results(DType dtype, std::int64_t n, std::vector<Measured> all, const Measured& tuned, int rejected,
                  const CeilingResult& ceil);
  void print_suggestions() const;

  const Options& opt_;
  GpuSession sess_;
  CsvWriter csv_;
  Summary summary_;
  // batch time per (dtype, n, config name) for the closing suggestion
  std::map<std::string, std::map<std::int64_t, std::map<std::string, double>>> times_;
};

int Sweep::run() {
  const Header h = sess_.make_header("foldkit-bench sweep: launch configurations of foldkit's sum kernel", opt_);
  print_header(h);
  if (!opt_.csv_path.empty() && !csv_.open(opt_.csv_path, h)) return 1;

  std::vector<DType> dtypes;
  for (DType t : foldkit::kAllDTypes) {
    if (opt_.sweep_dtypes.empty() ||
        std::find(opt_.sweep_dtypes.begin(), opt_.sweep_dtypes.end(), foldkit::dtype_name(t)) != opt_.sweep_dtypes.end())
      dtypes.push_back(t);
  }
  for (DType t : dtypes)
    for (int k : {14, 16, 18, 20, 22, 24, 28}) sweep_case(t, std::int64_t{1} << k);
  print_suggestions();
  summary_.print(false);
  return summary_.failures();
}

std::vector<Measured> Sweep::sweep_case(DType dtype, std::int64_t n) {
  InputPool& pool = sess_.pool();
  cudaStream_t s = sess_.stream();
  pool.prepare(dtype, n, input_seed(dtype, n), s);
  const std::size_t bytes = static_cast<std::size_t>(n) * foldkit::dtype_size(dtype);
  const CeilingResult ceil = sess_.measure_ceiling(bytes);

  // Reference result: CUB on copy 0; every configuration must agree with it.
  unsigned char ref[64] = {};
  bool have_ref = false;
  try {
    auto cub = make_cub_sum(dtype, n);
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
    r.op = "sum";
    r.dtype = foldkit::dtype_name(dtype);
    r.n = n;
    r.bytes = bytes;
    r.config = cfg_name(cfg);
    r.ceil_median_us = ceil.median_us;
    r.ceil_batch_us = ceil.batch_us;
    const foldkit::cuda::Workspace ws = sess_.workspace();
    auto call = [&, cfg](const void* in) {
      foldkit::cuda::detail::reduce_sum_with_config(dtype, in, n, sess_.out(0), ws, cfg, s);
    };
    try {
      call(pool.copy(0));
      FKB_CHECK_LAUNCH("reduce_sum_with_config");
      unsigned char got[64] = {};
      sess_.read_result(0, got, sizeof got);
      r.check = have_ref ? compare_results(ReduceOp::sum, dtype, got, ref, "foldkit", "cub") : "";
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

  const ReduceLaunchConfig tuned_cfg = foldkit::cuda::detail::tuned_reduce_config(dtype, n);
  const Measured tuned = measure(tuned_cfg, "foldkit-tuned", nullptr);
  csv_.write(tuned.row);
  summary_.add_check(tuned.row);

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
  print_results(dtype, n, all, tuned, rejected, ceil);
  return all;
}

void Sweep::print_results(DType dtype, std::int64_t n, std::vector<Measured> all, const Measured& tuned, int rejected,
                       const CeilingResult& ceil) {
  const std::size_t bytes = tuned.row.bytes;
  std::printf("\n== sum %s n=%s (%.0f MiB): %zu configurations timed, %d rejected; ceiling %.2f us batch = %.0f GB/s ==\n",
              foldkit::dtype_name(dtype), pow2_label(n).c_str(), bytes / 1048576.0, all.size(), rejected,
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

  for (const Measured& m : all)
    if (!std::isnan(m.row.batch_us)) times_[foldkit::dtype_name(dtype)][n][m.row.config] = m.row.batch_us;
  times_[foldkit::dtype_name(dtype)][n]["tuned: " + tuned.row.config] = tuned.row.batch_us;
}

// Per dtype: the grid configuration whose worst slowdown against each size's best is smallest,
// i.e. the one a single constant per dtype should be.
void Sweep::print_suggestions() const {
  std::printf("\n== Per dtype: the configuration closest to the best at every size (by batch mean) ==\n");
  for (const auto& [dtype, by_n] : times_) {
    std::map<std::int64_t, double> best;
    for (const auto& [n, cfgs] : by_n)
      for (const auto& [name, t] : cfgs)
        if (!best.count(n) || t < best[n]) best[n] = t;
    std::string pick;
    double pick_score = 1e300;
    const auto& first = by_n.begin()->second;
    for (const auto& [name, t0] : first) {
      if (name.rfind("tuned: ", 0) == 0) continue;
      double score = 0;
      bool everywhere = true;
      for (const auto& [n, cfgs] : by_n) {
        auto it = cfgs.find(name);
        if (it == cfgs.end()) { everywhere = false; break; }
        score = std::max(score, it->second / best[n]);
      }
      if (everywhere && score < pick_score) { pick_score = score; pick = name; }
    }
    double tuned_score = 0;
    for (const auto& [n, cfgs] : by_n)
      for (const auto& [name, t] : cfgs)
        if (name.rfind("tuned: ", 0) == 0) tuned_score = std::max(tuned_score, t / best[n]);
    std::printf("  %-5s suggested %-40s worst %.3fx the best;  tuned default worst %.3fx\n", dtype.c_str(),
                pick.c_str(), pick_score, tuned_score);
  }
  std::fflush(stdout);
}

}  // namespace

int run_sweep(const Options& opt) {
  Sweep s(opt);
  return s.run();
}

}  // namespace fkbench
