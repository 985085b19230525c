// Console tables and CSV of `foldkit-bench ladder` (see ladder_report.hpp).
#include "ladder_report.hpp"

#include <cmath>

namespace fkbench {
namespace {

std::string num(double v, const char* f) { return number_or_dash(v, f); }
std::string us_text(double v) { return num(v, v < 1000 ? "%.2f" : v < 1e6 ? "%.1f" : "%.0f"); }
std::string gbps_text(double v) { return num(v, v < 10 ? "%.3f" : v < 100 ? "%.1f" : "%.0f"); }

}  // namespace

double ladder_gbps(const LadderRow& r) { return gbps(r.bytes_moved, r.median_us); }
double ladder_pct_of_ceiling(const LadderRow& r) { return 100.0 * ratio(r.ceiling_us, r.median_us); }
double ladder_speedup(const LadderRow& r) { return ratio(r.rung0_us, r.median_us); }
bool ladder_wrong(const LadderRow& r) { return r.check.rfind("WRONG", 0) == 0 || r.check.rfind("ERROR", 0) == 0; }

std::string shape_label(const foldkit::ladder::Shape& s) {
  return std::to_string(s.block_threads) + "/" + (s.grid_blocks == 0 ? std::string("auto") : std::to_string(s.grid_blocks)) +
         "/" + std::to_string(s.items_per_thread);
}

void print_ladder_title(const std::string& title, const std::vector<std::string>& lines) {
  std::printf("\n== %s ==\n", title.c_str());
  for (const std::string& l : lines) std::printf("   %s\n", l.c_str());
  std::fflush(stdout);
}

void print_ladder_rows(const std::vector<LadderRow>& rows) {
  const TextTable t({{"rung", 4},
                     {"variant", 24, true},
                     {"shape (thr/grid/items)", 22, true},
                     {"median us", 11},
                     {"GB/s", 8},
                     {"% ceil", 7},
                     {"speedup", 8},
                     {"check", 6, true},
                     {"notes", 0, true}});
  t.print_titles();
  for (const LadderRow& r : rows) {
    std::string notes = r.note;
    if (!r.seed_figure.empty()) notes += (notes.empty() ? "" : "; ") + std::string("seed: ") + r.seed_figure;
    const std::string check = r.check.empty() ? "-" : ladder_wrong(r) ? "WRONG" : r.check;
    t.print_row({r.rung >= 0 ? std::to_string(r.rung) : "", r.variant, r.shape, us_text(r.median_us),
                 gbps_text(ladder_gbps(r)), num(ladder_pct_of_ceiling(r), "%.1f"), num(ladder_speedup(r), "%.2f"), check,
                 notes});
    if (ladder_wrong(r))
      std::printf("!!!!!!!! seed %s %s %s n=%lld: %s !!!!!!!!\n", r.seed.c_str(), r.variant.c_str(), r.element.c_str(),
                  static_cast<long long>(r.n), r.check.c_str());
  }
  std::fflush(stdout);
}

bool LadderCsv::open(const std::string& path, const Header& h) {
  return file_.open(path, h, "gpu",
                    {"seed", "table", "variant", "element", "rung", "n", "bytes_moved", "l2_resident", "shape",
                     "median_us", "batch_us", "gbps", "pct_of_ceiling", "speedup_vs_rung0", "check", "note"});
}

void LadderCsv::write(const LadderRow& r) {
  // The seed's own figure goes into the note: it is the author's number, not a measurement.
  std::string note = r.note;
  if (!r.seed_figure.empty()) note += (note.empty() ? "" : "; ") + std::string("seed: ") + r.seed_figure;
  file_.write({r.seed, r.table, r.variant, r.element, r.rung >= 0 ? std::to_string(r.rung) : "", std::to_string(r.n),
               std::to_string(r.bytes_moved), r.l2_resident ? "1" : "0", r.shape, csv_number(r.median_us, "%.3f"),
               csv_number(r.batch_us, "%.3f"), csv_number(ladder_gbps(r), "%.1f"),
               csv_number(ladder_pct_of_ceiling(r), "%.2f"), csv_number(ladder_speedup(r), "%.3f"), r.check, note},
              r.memory);
}

}  // namespace fkbench
