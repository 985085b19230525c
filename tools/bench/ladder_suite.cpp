// `foldkit-bench ladder`: per seed, its rungs' seed shapes timed at (a) the seed's own size on one
// reused input, as the seed's author timed them (L2-resident when the input fits in L2), and
// (b) a DRAM-sized n with inputs rotated over >= 1 GiB; the ceiling above them, foldkit's
// production path and CUB on the same input below. Every row is checked once per size.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ladder_suite.hpp"
#include "suites.hpp"

namespace fkbench {
namespace {

// What each seed's author measured, rung by rung, on their own GPU: shown beside ours.
std::string seed_figure(const std::string& seed, const std::string& name) {
  static const std::map<std::string, std::string> figures = {
      {"000/Serial", "100307 us"}, {"000/TwoPassSimple", "92 us"},
      {"000/TwoPassInterleaved", "78 us"}, {"000/TwoPassSharedOptimized", "46 us"}, {"000/TwoPassWarpSync", "40 us"},
      {"000/TwoPassUnroll", "38 us"}, {"000/SinglePassMerged", "39 us"}, {"000/SinglePassAtomic", "2553 us"},
      {"000/WarpShuffle", "~38 us (\"no change\")"},
      {"000/cub", "49 us"},
      {"002/reduce7", "360 GB/s (RTX 2070)"}, {"002/reduce7_v1", "470 GB/s (RTX 2070)"},
      {"003/reduce0", "1.51 ms, 49.22 GB/s"}, {"003/reduce1", "1.25 ms, 58.93 GB/s, 1.21x"},
      {"003/reduce2", "1.00 ms, 73.82 GB/s, 1.51x"}, {"003/reduce3", "520.30 us, 73.47 GB/s, 2.9x"},
      {"003/reduce4", "367.42 us, 92.11 GB/s, 4.1x"}, {"003/reduce5", "355.68 us, 94.07 GB/s, 4.24x"},
      {"003/reduce6", "339.74 us, 96.79 GB/s, 4.4x"},
      {"004/kernel_0", "823.9 GB/s, efficiency 0.25"}, {"004/kernel_1", "1288.7 GB/s, efficiency 0.39"},
      {"004/kernel_2", "1616.7 GB/s, efficiency 0.49"}, {"004/kernel_3", "1976.4 GB/s, efficiency 0.60"},
      {"004/kernel_4", "3056.5 GB/s, efficiency 0.93"},
  };
  const auto it = figures.find(seed + "/" + name);
  return it == figures.end() ? "" : it->second;
}

std::string mb(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  return buf;
}

class LadderTables {
 public:
  explicit LadderTables(const Options& opt) : opt_(opt), bench_(opt) {}
  int run();

 private:
  void table(const SeedPlan& p, Element e, std::int64_t n, bool seed_size);
  LadderRow rung_row(const Variant& v, bool same_buffer, bool seed_size, const SeedPlan& p);

  const Options& opt_;
  LadderBench bench_;
  LadderCsv csv_;
  std::map<std::string, double> seed_size_us_;  // full_name -> median at the seed size
  int ok_ = 0;
  std::vector<std::string> wrong_;
};

int LadderTables::run() {
  Header h = bench_.session().make_header("foldkit-bench ladder: the seeds' kernel ladders, rung by rung (GPU)", opt_,
                                               "sequential: the ceiling, then each rung, then foldkit and CUB");
  h.lines.emplace_back("sizes", "seed_size: the seed's n, ONE input reused every call as the seeds timed (L2-resident "
                                "when it fits in L2); dram_size: 2^28 elements, inputs rotated over >= 1 GiB (seed 004: its "
                                "own 2^30, rotated, one table)");
  h.lines.emplace_back("columns", "median = per-call median; GB/s = bytes read (reductions) or read + written (scans) "
                                  "/ median; % ceil = ceiling median / median; speedup = rung 0 median / median");
  h.lines.emplace_back("shape", "block_threads/grid_blocks/items_per_thread of the seed's launch (auto: from n)");
  print_header(h);
  if (!opt_.csv_path.empty() && !csv_.open(opt_.csv_path, h)) return 1;

  const std::vector<SeedPlan> plans = seed_plans(opt_.ladder_seeds);
  for (const SeedPlan& p : plans) {
    const std::vector<Element> elements = elements_shown(p);
    if (elements.empty()) {
      std::printf("\n== seed %s: the ladder has no variants yet ==\n", p.seed.c_str());
      continue;
    }
    for (Element e : elements) {
      table(p, e, p.seed_n, true);
      if (p.dram_n > 0) table(p, e, p.dram_n, false);
    }
  }
  int failures = static_cast<int>(wrong_.size());
  if (opt_.ladder_sweep) failures += run_ladder_sweep(bench_, csv_, plans, seed_size_us_);

  std::printf("\n== Summary ==\n  result checks: %d ok, %d WRONG\n", ok_, static_cast<int>(wrong_.size()));
  for (const std::string& w : wrong_) std::printf("  !!!!!!!! %s\n", w.c_str());
  std::fflush(stdout);
  return failures;
}

LadderRow LadderTables::rung_row(const Variant& v, bool same_buffer, bool seed_size, const SeedPlan& p) {
  LadderRow r;
  r.variant = v.name;
  r.rung = v.rung;
  r.shape = shape_label(v.seed_shape);
  r.seed_figure = seed_figure(v.seed, v.name);
  if (!seed_size) {
    r.note = skip_note(v, seed_size_us_, p.seed_n, bench_.n());
    if (!r.note.empty()) return r;
  }
  r.check = bench_.check(v, v.seed_shape);
  if (r.check.rfind("ERROR", 0) == 0) return r;
  try {
    const Measured m = bench_.time([&](const void* in) { bench_.launch(v, v.seed_shape, in); }, same_buffer);
    r.median_us = m.t.median_us;
    r.batch_us = m.t.batch_us;
    r.note = m.note;
    if (seed_size) seed_size_us_[v.full_name()] = m.t.median_us;
  } catch (const std::exception& e) {
    r.check = std::string("ERROR ") + e.what();
  }
  return r;
}

void LadderTables::table(const SeedPlan& p, Element e, std::int64_t n, bool seed_size) {
  const std::vector<Variant> variants = variants_of(p.seed, e);
  const bool scan = !variants.empty() && is_scan(variants.front());
  // Seed size: one input reused, as the seed timed it, unless that size is the DRAM table too.
  const bool same_buffer = seed_size && p.dram_n > 0;
  const std::size_t in_bytes = static_cast<std::size_t>(n) * 4;
  const std::size_t l2 = bench_.session().info().l2_bytes;

  std::string title = "seed " + p.seed + " | " + foldkit::ladder::element_name(e) + " | n = " + pow2_label(n) + " (" +
                      mb(in_bytes) + ") | ";
  if (!same_buffer) title += "inputs rotated over >= 1 GiB (DRAM)";
  else if (in_bytes < l2) title += "one input reused, L2-resident (L2 " + mb(l2) + ")";
  else title += "one input reused, NOT L2-resident (L2 " + mb(l2) + ")";
  std::vector<std::string> lines = {p.form};
  if (seed_size) lines.push_back(p.size_note);
  print_ladder_title(title, lines);
  if (!bench_.prepare(e, n, scan)) return;

  // The ceiling first (the bound every row is a percentage of), then the rungs, then the two
  // references the ladder climbs towards: foldkit's production path and CUB.
  std::vector<LadderRow> rows = {bench_.ceiling(same_buffer)};
  for (const Variant& v : variants) rows.push_back(rung_row(v, same_buffer, seed_size, p));
  rows.push_back(bench_.foldkit_row(same_buffer));
  rows.push_back(bench_.cub_row(same_buffer));
  if (!scan) rows.back().seed_figure = seed_figure(p.seed, "cub");

  double rung0 = kNaN;
  bool rung0_skipped = false;
  for (const LadderRow& r : rows)
    if (r.rung == 0) {
      rung0 = r.median_us;
      rung0_skipped = r.note.rfind("skipped", 0) == 0;
    }
  if (rung0_skipped) {
    // Rung 0 too slow to run here (Serial): speedups against its estimated time, said so.
    rung0 = estimate_us(variants.front(), seed_size_us_, p.seed_n, n);
    if (!std::isnan(rung0))
      std::printf("   speedup: against rung 0's ESTIMATED time here (%.1f s per call: its seed-size time x n ratio)\n",
                  rung0 / 1e6);
  }
  const double ceil_us = rows.front().median_us;
  for (LadderRow& r : rows) {
    r.seed = p.seed;
    r.table = seed_size ? "seed_size" : "dram_size";
    r.element = foldkit::ladder::element_name(e);
    r.n = n;
    r.bytes_moved = bench_.bytes_moved();
    r.l2_resident = bench_.l2_resident(same_buffer);
    r.memory = bench_.memory_text(same_buffer);
    r.ceiling_us = ceil_us;
    r.rung0_us = rung0;
    csv_.write(r);
    if (r.check == "ok") ++ok_;
    if (ladder_wrong(r))
      wrong_.push_back("seed " + p.seed + " " + r.variant + " " + r.element + " n=" + pow2_label(n) + ": " + r.check);
  }
  print_ladder_rows(rows);
}

}  // namespace

double estimate_us(const Variant& v, const std::map<std::string, double>& seed_size_us, std::int64_t seed_n,
                   std::int64_t n) {
  const auto it = seed_size_us.find(v.full_name());
  if (it == seed_size_us.end() || !(it->second > 0)) return kNaN;
  return it->second * double(n) / double(seed_n);
}

std::string skip_note(const Variant& v, const std::map<std::string, double>& seed_size_us, std::int64_t seed_n,
                      std::int64_t n) {
  const double est = estimate_us(v, seed_size_us, seed_n, n);
  if (!(est > kSkipEstimateUs)) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf, "skipped (%s~%.1f s per call, estimated from the seed size)",
                v.name == "Serial" ? "single thread, " : "", est / 1e6);
  return buf;
}

std::vector<SeedPlan> seed_plans(const std::vector<std::string>& only) {
  const std::int64_t k2p28 = std::int64_t{1} << 28;
  std::vector<SeedPlan> all = {
      {"000", {Element::f32}, 4 * (std::int64_t{1} << 20), k2p28,
       "n = 4*1024*1024 floats, the seed's own size",
       "seed 000 reports time per call (us), one input reused: Serial 100307 us ... TwoPassUnroll 38 us, "
       "CUB 49 us (author's GPU)"},
      {"002", {Element::i32, Element::f32}, std::int64_t{1} << 24, k2p28,
       "the seed names no n: 2^24 here",
       "seed 002 reports bandwidth (GB/s, RTX 2070) for reduce7 (360) and reduce7_v1 (470); int rungs, and float "
       "for reduce7_v1: both types shown"},
      {"003", {Element::i32}, std::int64_t{1} << 22, k2p28, "n = 2^22 elements (4M)",
       "seed 003 reports time, GB/s and cumulative speedup over reduce0 (reduce0 1.51 ms ... reduce6 339.74 us, 4.4x)"},
      {"004", {Element::i32}, std::int64_t{1} << 30, 0,
       "N = 1 << 30 ints, the seed's own size: already DRAM-sized, inputs rotated (one table)",
       "seed 004 reports bandwidth (read + write) and efficiency = bandwidth / peak (kernel_0 824 GB/s, 0.25 ... "
       "kernel_4 3057 GB/s, 0.93); % ceil here plays efficiency's part"},
  };
  if (only.empty()) return all;
  std::vector<SeedPlan> kept;
  for (const SeedPlan& p : all)
    if (std::find(only.begin(), only.end(), p.seed) != only.end()) kept.push_back(p);
  return kept;
}

std::vector<Variant> variants_of(const std::string& seed, Element e) {
  std::vector<Variant> out;
  for (const Variant& v : foldkit::ladder::all_variants())
    if (v.seed == seed && v.element == e) out.push_back(v);
  std::stable_sort(out.begin(), out.end(), [](const Variant& a, const Variant& b) { return a.rung < b.rung; });
  return out;
}

std::vector<Element> elements_shown(const SeedPlan& p) {
  std::vector<Element> shown;
  for (Element e : p.elements)
    if (!variants_of(p.seed, e).empty()) shown.push_back(e);
  if (!shown.empty()) return shown;
  for (Element e : {Element::i32, Element::f32})
    if (!variants_of(p.seed, e).empty()) shown.push_back(e);
  return shown;
}

int run_ladder(const Options& opt) {
  LadderTables t(opt);
  return t.run();
}

}  // namespace fkbench
