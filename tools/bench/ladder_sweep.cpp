// `foldkit-bench ladder --sweep`: every shape in each rung's sweep list (ladder/variant.hpp),
// timed at the DRAM size on rotated inputs (per-call median only, with the --quick floors: 3
// warm-up calls, 20 timed), each shape checked once. One line per rung: the seed shape's time
// beside the best shape's; every shape also goes to the CSV (table "sweep").
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ladder_suite.hpp"

namespace fkbench {
namespace {

bool same_shape(const Shape& a, const Shape& b) {
  return a.block_threads == b.block_threads && a.grid_blocks == b.grid_blocks && a.items_per_thread == b.items_per_thread;
}

}  // namespace

int run_ladder_sweep(LadderBench& bench, LadderCsv& csv, const std::vector<SeedPlan>& plans,
                     const std::map<std::string, double>& seed_size_us) {
  TimingPlan plan = bench.session().plan();
  plan.warmup = 3;
  plan.reps_median = 20;
  plan.reps_batch = 1;  // the sweep reports medians only; the batch is not shown
  int failures = 0;

  for (const SeedPlan& p : plans) {
    const std::int64_t n = p.dram_n > 0 ? p.dram_n : p.seed_n;
    for (Element e : elements_shown(p)) {
      const std::vector<Variant> variants = variants_of(p.seed, e);
      const bool scan = is_scan(variants.front());
      std::printf("\n== sweep: seed %s | %s | n = %s | inputs rotated | median of %d calls per shape ==\n",
                  p.seed.c_str(), foldkit::ladder::element_name(e), pow2_label(n).c_str(), plan.reps_median);
      std::printf("%4s  %-24s %-16s %11s   %-16s %11s %8s  %s\n", "rung", "variant", "seed shape", "median us",
                  "best shape", "median us", "GB/s", "seed/best  shapes");
      if (!bench.prepare(e, n, scan)) continue;
      const double ceil_us = bench.ceiling(false).median_us;
      double rung0_us = kNaN;

      for (const Variant& v : variants) {
        const std::string skip = skip_note(v, seed_size_us, p.seed_n, n);
        if (!skip.empty()) {
          std::printf("%4d  %-24s %s\n", v.rung, v.name.c_str(), skip.c_str());
          continue;
        }
        std::vector<Shape> shapes = {v.seed_shape};  // the seed shape first, then the sweep list
        for (const Shape& s : v.sweep)
          if (!same_shape(s, v.seed_shape)) shapes.push_back(s);
        double seed_us = kNaN, best_us = kNaN;
        Shape best = v.seed_shape;
        int wrong = 0;
        for (const Shape& s : shapes) {
          LadderRow r;
          r.seed = p.seed;
          r.table = "sweep";
          r.variant = v.name;
          r.element = foldkit::ladder::element_name(e);
          r.rung = v.rung;
          r.n = n;
          r.bytes_moved = bench.bytes_moved();
          r.shape = shape_label(s);
          r.ceiling_us = ceil_us;
          r.check = bench.check(v, s);
          if (r.check.rfind("ERROR", 0) != 0) {
            try {
              const Measured m = bench.time([&](const void* in) { bench.launch(v, s, in); }, false, &plan);
              r.median_us = m.t.median_us;
              r.note = m.note;
            } catch (const std::exception& ex) {
              r.check = std::string("ERROR ") + ex.what();
            }
          }
          if (&s == &shapes.front()) {
            seed_us = r.median_us;
            if (v.rung == 0) rung0_us = r.median_us;
            r.note += std::string(r.note.empty() ? "" : "; ") + "seed shape";
          }
          r.rung0_us = rung0_us;
          if (ladder_wrong(r)) {
            ++wrong;
            std::printf("!!!!!!!! seed %s %s shape %s: %s\n", p.seed.c_str(), v.full_name().c_str(), r.shape.c_str(),
                        r.check.c_str());
          } else if (std::isnan(best_us) || r.median_us < best_us) {
            best_us = r.median_us;
            best = s;
          }
          csv.write(r);
        }
        failures += wrong;
        LadderRow best_row;
        best_row.bytes_moved = bench.bytes_moved();
        best_row.median_us = best_us;
        const std::string wrong_note = wrong ? " (" + std::to_string(wrong) + " WRONG)" : "";
        std::printf("%4d  %-24s %-16s %11.2f   %-16s %11.2f %8.0f  %9.2f  %zu%s\n", v.rung, v.name.c_str(),
                    shape_label(v.seed_shape).c_str(), seed_us, shape_label(best).c_str(), best_us,
                    ladder_gbps(best_row), ratio(seed_us, best_us), shapes.size(), wrong_note.c_str());
        std::fflush(stdout);
      }
    }
  }
  return failures;
}

}  // namespace fkbench
