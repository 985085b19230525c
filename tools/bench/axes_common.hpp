// `foldkit-bench axes` (issue #22): what its GPU suite (axes_suite.cpp) and its CPU section
// (axes_cpu.cpp) share: the cases, the row every measurement becomes, the bars, the console
// table and CSV, and the host-side reference checks of sampled outputs. Plain C++ (no CUDA).
//
// Case names: `case` = "<op> <dtype> <shape> axes=<axes>", e.g. "sum f32 16777216x4 axes=1",
// "cumsum f32 1000000x8 axes=0", "sum f32 64x4096x256 axes=0,2", "segmented_sum f32
// 2^22segs_U0-128 axes=-". scripts/torch_axes.py builds the same (op, dtype, shape, axes) to pair
// its rows with foldkit's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foldkit/dtype.hpp"
#include "foldkit/ops.hpp"
#include "table.hpp"

namespace fkbench::axes {

// ---- cases ---------------------------------------------------------------------------------------

enum class Kind { reduce, scan, segmented };

// The bar a case is held to (issue #22, "Benchmark and bar"):
//   min_pct:   foldkit's GB/s >= this % of the ceiling's (bytes as in AxesRow);
//   max_ratio: foldkit's time <= this x the ceiling's time (the small "reported" shapes).
struct Bar {
  double min_pct = 0;    // 0: no percentage bar
  double max_ratio = 0;  // 0: no time-ratio bar
  std::string text() const;  // ">=90%", "<=1.3x", "-"
};

struct Case {
  std::string section;  // "matrices", "3-D", "reported", "segmented", "cpu"
  Kind kind = Kind::reduce;
  std::string op;       // "sum", "max", "argmax", "cumsum", "segmented_sum"
  foldkit::DType dtype = foldkit::DType::f32;
  std::vector<std::int64_t> shape;  // reduce, scan
  std::vector<int> axes;            // reduce: the axes; scan: one axis
  std::string axes_text;            // as the user wrote them: "1", "-1", "0,2"
  bool cub_rows = false;            // rival: cub::DeviceSegmentedReduce with one segment per row
  Bar bar;
  int segments = 0;                 // segmented: 0 uniform lengths 0..128, 1 the power-law mix
  std::string shape_text() const;   // "16777216x4"; segmented: the segments' description
  std::string name() const;         // "sum f32 16777216x4 axes=1"
  std::int64_t numel() const;
  foldkit::ReduceOp reduce_op() const;  // sum / max / argmax (scans and segmented: sum)
};

// The nine 2^26-element matrices of the issue, rows x cols.
const std::vector<std::pair<std::int64_t, std::int64_t>>& matrices();

// Every GPU case, in the order the suite runs them (grouped so that each input size is laid out
// once): the matrices (sum, max, argmax over dims 1 and 0; cumsum over dims 1 and 0), the 3-D
// sums of 2^26 elements, bf16 sums over dim 1, the 3-D sums of 2^28, the reported shapes, the
// segmented sums.
std::vector<Case> gpu_cases();
// The CPU section's cases: sum over dim 1 and dim 0 of every matrix (bar >= 80 %).
std::vector<Case> cpu_cases();
// `--only`: whether the case's name contains one of the '|'-separated texts (empty: every case).
bool selected(const Case& c, const std::string& only);

// The power-law and uniform segment layouts (fixed seeds: the same segments every run).
// Returns the offsets (num_segments + 1 entries, offsets[0] == 0).
std::vector<std::int64_t> segment_offsets(int which);
std::string segments_text(int which);  // "2^22segs_U0-128", "4x2^24+2^20segs_U0-16"

// ---- rows ----------------------------------------------------------------------------------------

// One implementation timed in one case. Bytes: what one call reads + writes (reductions: the
// input and the output; scans: input and output; segmented sums: the input only). The ceiling
// moves ceiling_bytes (reductions and segmented sums: the input read once; scans: a copy of
// (read + written) / 2 bytes, so it reads and writes the scan's total), and "% of ceiling" is
// the GB/s ratio: (bytes / time) / (ceiling_bytes / ceiling time).
struct AxesRow {
  std::string mode = "gpu";  // "gpu", "cpu"
  std::string section, case_name, impl, op, shape, axes, dtype;
  std::uint64_t read_bytes = 0, written_bytes = 0;
  std::uint64_t ceiling_bytes = 0;
  double median_us = kNaN, batch_us = kNaN;
  double ceil_median_us = kNaN, ceil_batch_us = kNaN;
  double cub_median_us = kNaN, cub_batch_us = kNaN;
  Bar bar;
  std::string plan;    // the planner's family, e.g. "short-rows"
  std::string config;  // the plan in full, the API, notes
  std::string check;   // "ok", "MISMATCH ...", "ERROR ...", "" (not checked)
  std::string memory;

  std::uint64_t bytes() const { return read_bytes + written_bytes; }
  double pct_median() const;   // GB/s ratio to the ceiling, %
  double pct_batch() const;
  double ratio_ceiling_median() const { return ratio(median_us, ceil_median_us); }
  double ratio_cub_median() const { return ratio(median_us, cub_median_us); }
  // "yes", "no", or "" (no bar, or no time): foldkit rows only.
  std::string bar_met() const;
};

// ---- output --------------------------------------------------------------------------------------

class AxesCsv {
 public:
  bool open(const std::string& path, const Header& h);
  void write(const AxesRow& r);

 private:
  CsvFile file_;
};

bool check_failed_text(const std::string& check);  // a "MISMATCH ..." or "ERROR ..." check
void print_axes_section(const std::string& title);
// The rows of one case (foldkit first, then its rivals); mismatches are shouted.
void print_axes_case(const std::vector<AxesRow>& rows);

// Collects the bar outcomes and checks over a run; print() ends the run's output.
class AxesSummary {
 public:
  void add(const std::vector<AxesRow>& case_rows);
  void print() const;
  int failures() const { return failures_; }

 private:
  int bars_ = 0, met_ = 0, checks_ok_ = 0, failures_ = 0, unchecked_ = 0;
  int vs_cub_ = 0, faster_than_cub_ = 0, slow_rows_ = 0;
  std::vector<std::string> missed_, failed_;
};

// ---- reference checks (host) -----------------------------------------------------------------------

// A host copy of the input a checked call read (row-major, `shape`, elements of `dtype`).
struct HostTensor {
  const unsigned char* data = nullptr;
  foldkit::DType dtype = foldkit::DType::f32;
  std::vector<std::int64_t> shape;
  double at(std::int64_t flat) const;  // element `flat` as a double (f32, f64, f16, bf16, ints)
};

// How a result to check is laid out: values of out_dtype (sum, max; argmax: int64 indices), or
// CUB's ArgMax pairs (cub_pairs: 8 bytes each, an int index then the float value).
struct HostOutput {
  const unsigned char* data = nullptr;
  foldkit::DType dtype = foldkit::DType::f32;
  bool cub_pairs = false;
};

// Checks sampled outputs of a reduction of `in` along `axes` (keepdims false, row-major output)
// against a reference in double: sums within a relative 1e-3 (the data are positive; foldkit adds
// in float, in its own order), max exactly, argmax the first index of the maximum along the axis.
// Samples up to 256 output elements (first, last, evenly spread), fewer for long rows so that at
// most ~2^24 input elements are visited. Returns "ok" or "MISMATCH ...".
std::string check_reduce(const std::string& op, const HostTensor& in, const std::vector<int>& axes,
                         const HostOutput& out);
// Checks sampled lines of an inclusive sum along `axis` (every element of each sampled line,
// relative 1e-3 against double prefixes).
std::string check_scan(const HostTensor& in, int axis, const HostOutput& out);
// Checks sampled segments' sums (every segment longer than 2^16, and up to 256 others).
std::string check_segmented_sum(const HostTensor& in, const std::vector<std::int64_t>& offsets,
                                const HostOutput& out);

}  // namespace fkbench::axes
