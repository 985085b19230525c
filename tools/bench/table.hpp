// What foldkit-bench measures and how it is shown: one Row per (implementation, case), printed
// as grouped console tables, written as CSV, and folded into a closing summary.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "run_info.hpp"

namespace fkbench {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One implementation timed on one case. Times in microseconds; NaN where not measured.
// The reference times (ceiling, CUB) were taken in the same run over the same bytes, so that the
// ratios never compare numbers from different machines or different days.
struct Row {
  std::string mode;    // "gpu", "cpu", "sweep"
  std::string impl;    // "foldkit", "cub", "ceiling", "loop-1t", "foldkit-tuned", ...
  std::string op;      // "sum", "max", "argmax", "read"
  std::string dtype;   // "f32", ...
  std::string config;  // launch configuration or API variant, free text (CSV: quoted)
  std::int64_t n = 0;
  std::uint64_t bytes = 0;  // bytes read by one call: n * sizeof(element)
  double median_us = kNaN;  // per-call median
  double batch_us = kNaN;   // mean of back-to-back calls (CPU: mean of the timed calls)
  double ceil_median_us = kNaN, ceil_batch_us = kNaN;
  double cub_median_us = kNaN, cub_batch_us = kNaN;
  std::string check;  // "ok", "MISMATCH ...", "ERROR ...", "" (not checked)
  std::string memory;  // where the call's bytes came from: "inputs rotated over 1024 MiB (4 copies)", ...
};

double gbps(std::uint64_t bytes, double us);  // GB/s (1e9 bytes) of bytes read in `us`
double ratio(double a, double b);             // a / b; NaN when either is missing
bool check_failed(const Row& r);              // a MISMATCH or ERROR row
std::string pow2_label(std::int64_t n);       // "2^20", or the plain number
std::string utc_now_iso8601();
std::string number_or_dash(double v, const char* printf_format);  // "-" for NaN
std::string csv_field(const std::string& s);  // quoted when it holds a comma, a quote or a newline
std::string csv_number(double v, const char* printf_format);  // "" for NaN
// "inputs rotated over 1024 MiB (4 copies)"; "one input reused (L2-resident)" for copies <= 1
std::string rotation_text(const char* what, std::size_t copies, std::size_t footprint_bytes);

struct Header {
  std::string title;   // first line
  std::string device;  // GPU or CPU name; also the CSV's first column
  std::string date;    // UTC, ISO 8601
  std::string command;
  RunInfo run;  // commit, repetitions, gate, order: printed and written to every CSV row
  std::vector<std::pair<std::string, std::string>> lines;  // further "key : value" lines
};
// The title, the device, the run's facts (commit, timing) and the further lines.
void print_header(const Header& h);

// foldkit-bench's one CSV writer. Every row is: the device and the date, the caller's columns,
// then what says how the numbers were taken: commit, warmup, reps_median, reps_batch, gate,
// order (from the Header) and memory (per row: the rotation depends on the size).
class CsvFile {
 public:
  CsvFile() = default;
  ~CsvFile();
  CsvFile(const CsvFile&) = delete;
  CsvFile& operator=(const CsvFile&) = delete;
  // device_column names the first column ("gpu_or_cpu_name", "gpu"). False (message on stderr)
  // when the file cannot be written.
  bool open(const std::string& path, const Header& h, const char* device_column, const std::vector<std::string>& columns);
  bool is_open() const { return f_ != nullptr; }
  void write(const std::vector<std::string>& fields, const std::string& memory);

 private:
  std::FILE* f_ = nullptr;
  std::string device_, date_;
  RunInfo run_;
};

// The Row CSV of the reduction, scan, sweep and CPU tables (columns: see table.cpp).
class CsvWriter {
 public:
  bool open(const std::string& path, const Header& h);  // false (message on stderr) on failure
  bool is_open() const { return file_.is_open(); }
  void write(const Row& r);

 private:
  CsvFile file_;
};

// foldkit-bench's one console table printer: fixed-width columns, right-aligned unless said,
// the last column free text; rows print as they come, so a long run shows where it is.
struct Column {
  const char* title;
  int width;
  bool left = false;
};
class TextTable {
 public:
  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}
  // A line of group titles over the column titles: each group spans `span` columns.
  void print_groups(const std::vector<std::pair<const char*, int>>& groups) const;
  void print_titles() const;
  void print_row(const std::vector<std::string>& cells) const;

 private:
  std::vector<Column> columns_;
};

// Console table: one block of rows per case, labelled "op dtype n=2^k" on its first row.
struct TableStyle {
  const char* batch_label = "batch";  // "batch" (GPU) or "mean" (CPU)
  bool with_cub = true;               // show the "foldkit / CUB" columns
};
void print_section(const char* title, const TableStyle& style);
void print_case(const std::vector<Row>& rows, const TableStyle& style);
void print_note(const char* fmt, ...);  // an indented line under the current case

// Collects the worst foldkit ratios and the check outcomes over a whole run.
class Summary {
 public:
  void add(const Row& foldkit_row);  // a foldkit row with its references filled in
  void add_check(const Row& r);      // count ok / failed checks
  // gpu_batch: the batch figures are back-to-back GPU calls (host submission included): say so.
  void print(bool with_cub, bool gpu_batch = true) const;
  int failures() const { return failures_; }

 private:
  struct Worst {
    double value = kNaN;
    std::string where;
    void update(double v, const std::string& w);
  };
  Worst cub_median_, cub_batch_, ceil_median_, ceil_batch_;
  int checks_ok_ = 0, failures_ = 0, unchecked_ = 0;
  int vs_cub_cases_ = 0, faster_median_ = 0, faster_batch_ = 0;
  // Cases where foldkit took less time than the ceiling (by more than 1 %: a ceiling that is
  // beaten is no ceiling), by median and by batch, of vs_ceiling_cases_.
  int vs_ceiling_cases_ = 0, below_ceiling_median_ = 0, below_ceiling_batch_ = 0;
  std::vector<std::string> failed_;
};

}  // namespace fkbench
