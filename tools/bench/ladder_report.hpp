// How `foldkit-bench ladder` shows what it measured: one LadderRow per measured thing (a rung,
// foldkit, CUB, the ceiling), printed as one console table per (seed, element, size) and
// written as CSV with the ladder's own columns.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ladder/variant.hpp"
#include "table.hpp"

namespace fkbench {

struct LadderRow {
  std::string seed;     // "000"
  std::string table;    // "seed_size", "dram_size" or "sweep"
  std::string variant;  // the rung's name; "foldkit", "cub", "ceiling" for the reference rows
  std::string element;  // "i32", "f32"
  int rung = -1;        // -1: not a rung
  std::int64_t n = 0;
  std::uint64_t bytes_moved = 0;  // reductions: bytes read; scans: read + write
  bool l2_resident = false;       // the same input every call and it fits in L2
  std::string shape;              // "256/auto/2" (threads/grid/items), or the reference's API
  double median_us = kNaN, batch_us = kNaN;
  double ceiling_us = kNaN;  // the ceiling's median for the same bytes and input reuse
  double rung0_us = kNaN;    // rung 0's median in the same table
  std::string check;         // "ok", "WRONG ...", "ERROR ...", "" (not checked)
  std::string note;          // "n=3", "skipped (...)", the seed's own figure, ...
  std::string seed_figure;   // what the seed's author reported for this rung (their GPU)
  std::string memory;        // "one input reused", "inputs rotated over 1024 MiB (4 copies)", ...
};

double ladder_gbps(const LadderRow& r);
double ladder_pct_of_ceiling(const LadderRow& r);
double ladder_speedup(const LadderRow& r);
bool ladder_wrong(const LadderRow& r);  // a WRONG or ERROR check

// "256/auto/2": block_threads / grid_blocks (auto = derived from n) / items_per_thread.
std::string shape_label(const foldkit::ladder::Shape& s);

// A table title ("== ... ==") and indented lines under it (printed before measuring, so a long
// run shows where it is); then the column header and the rows.
void print_ladder_title(const std::string& title, const std::vector<std::string>& lines);
void print_ladder_rows(const std::vector<LadderRow>& rows);

// CSV columns: gpu,date,seed,table,variant,element,rung,n,bytes_moved,l2_resident,shape,
// median_us,batch_us,gbps,pct_of_ceiling,speedup_vs_rung0,check,note, then CsvFile's run columns.
class LadderCsv {
 public:
  bool open(const std::string& path, const Header& h);  // false (message on stderr) on failure
  void write(const LadderRow& r);

 private:
  CsvFile file_;
};

}  // namespace fkbench
