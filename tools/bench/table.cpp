// Console tables, CSV and the closing summary of foldkit-bench.
#include "table.hpp"

#include <cmath>
#include <cstdarg>
#include <ctime>

namespace fkbench {

double gbps(std::uint64_t bytes, double us) {
  if (!(us > 0)) return kNaN;
  return static_cast<double>(bytes) / us / 1e3;  // bytes / (us * 1e-6) / 1e9
}

double ratio(double a, double b) {
  if (std::isnan(a) || std::isnan(b) || !(b > 0)) return kNaN;
  return a / b;
}

bool check_failed(const Row& r) {
  return r.check.rfind("MISMATCH", 0) == 0 || r.check.rfind("ERROR", 0) == 0;
}

std::string pow2_label(std::int64_t n) {
  if (n > 0 && (n & (n - 1)) == 0) {
    int k = 0;
    while ((std::int64_t{1} << k) != n) ++k;
    return "2^" + std::to_string(k);
  }
  return std::to_string(n);
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string number_or_dash(double v, const char* f) {
  if (std::isnan(v)) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += (c == '\n' ? ' ' : c);
  }
  return q + "\"";
}

std::string csv_number(double v, const char* f) { return std::isnan(v) ? "" : number_or_dash(v, f); }

std::string rotation_text(const char* what, std::size_t copies, std::size_t footprint_bytes) {
  if (copies <= 1) return std::string("one ") + what + " buffer";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%ss rotated over %zu MiB (%zu copies)", what, footprint_bytes >> 20, copies);
  return buf;
}

void print_header(const Header& h) {
  std::printf("%s\n", h.title.c_str());
  std::printf("  %-9s: %s\n", "device", h.device.c_str());
  for (const auto& [k, v] : h.lines) std::printf("  %-9s: %s\n", k.c_str(), v.c_str());
  std::printf("  %-9s: %s\n", "commit", h.run.commit.c_str());
  std::printf("  %-9s: %s\n", "date", h.date.c_str());
  std::printf("  %-9s: %s\n", "command", h.command.c_str());
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------
CsvFile::~CsvFile() {
  if (f_) std::fclose(f_);
}

bool CsvFile::open(const std::string& path, const Header& h, const char* device_column,
                   const std::vector<std::string>& columns) {
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) {
    std::fprintf(stderr, "foldkit-bench: cannot write CSV file '%s'\n", path.c_str());
    return false;
  }
  device_ = h.device;
  date_ = h.date;
  run_ = h.run;
  std::fprintf(f_, "%s,date", device_column);
  for (const std::string& c : columns) std::fprintf(f_, ",%s", c.c_str());
  std::fprintf(f_, ",commit,warmup,reps_median,reps_batch,gate,order,memory\n");
  std::fflush(f_);
  return true;
}

void CsvFile::write(const std::vector<std::string>& fields, const std::string& memory) {
  if (!f_) return;
  std::fprintf(f_, "%s,%s", csv_field(device_).c_str(), date_.c_str());
  for (const std::string& v : fields) std::fprintf(f_, ",%s", csv_field(v).c_str());
  std::fprintf(f_, ",%s,%d,%d,%d,%s,%s,%s\n", csv_field(run_.commit).c_str(), run_.warmup, run_.reps_median,
               run_.reps_batch, csv_field(run_.gate).c_str(), csv_field(run_.order).c_str(), csv_field(memory).c_str());
  std::fflush(f_);  // a crash half-way still leaves every finished row on disk
}

bool CsvWriter::open(const std::string& path, const Header& h) {
  return file_.open(path, h, "gpu_or_cpu_name",
                    {"mode", "impl", "op", "dtype", "n", "bytes", "median_us", "batch_mean_us", "gbps_median",
                     "gbps_batch", "pct_of_ceiling_median", "pct_of_ceiling_batch", "ratio_to_cub_median",
                     "ratio_to_cub_batch", "ratio_to_ceiling_median", "ratio_to_ceiling_batch", "config", "check"});
}

void CsvWriter::write(const Row& r) {
  file_.write({r.mode, r.impl, r.op, r.dtype, std::to_string(r.n), std::to_string(r.bytes),
               csv_number(r.median_us, "%.3f"), csv_number(r.batch_us, "%.3f"),
               csv_number(gbps(r.bytes, r.median_us), "%.1f"), csv_number(gbps(r.bytes, r.batch_us), "%.1f"),
               csv_number(100.0 * ratio(r.ceil_median_us, r.median_us), "%.2f"),
               csv_number(100.0 * ratio(r.ceil_batch_us, r.batch_us), "%.2f"),
               csv_number(ratio(r.median_us, r.cub_median_us), "%.4f"), csv_number(ratio(r.batch_us, r.cub_batch_us), "%.4f"),
               csv_number(ratio(r.median_us, r.ceil_median_us), "%.4f"),
               csv_number(ratio(r.batch_us, r.ceil_batch_us), "%.4f"), r.config, r.check},
              r.memory);
}

// ---------------------------------------------------------------------------------------------
// Console table
// ---------------------------------------------------------------------------------------------
namespace {

std::string fmt(double v, const char* f) { return number_or_dash(v, f); }
std::string fmt_us(double v) { return fmt(v, v < 1000 ? "%.2f" : "%.1f"); }
std::string fmt_pct(double v) { return fmt(v, "%.1f"); }
std::string fmt_ratio(double v) { return fmt(v, "%.2f"); }
std::string fmt_gbps(double v) { return fmt(v, v < 100 ? "%.1f" : "%.0f"); }

}  // namespace

void TextTable::print_groups(const std::vector<std::pair<const char*, int>>& groups) const {
  std::string line;
  std::size_t col = 0;
  for (const auto& [title, span] : groups) {
    int width = -1;  // the columns' widths and the spaces between them
    for (int k = 0; k < span && col < columns_.size(); ++k, ++col) width += columns_[col].width + 1;
    char buf[128];
    std::snprintf(buf, sizeof buf, "%*s ", width, title);
    line += buf;
  }
  std::printf("%s\n", line.c_str());
}

void TextTable::print_titles() const {
  std::vector<std::string> titles;
  for (const Column& c : columns_) titles.emplace_back(c.title);
  print_row(titles);
}

void TextTable::print_row(const std::vector<std::string>& cells) const {
  std::string line;
  for (std::size_t k = 0; k < cells.size() && k < columns_.size(); ++k) {
    const Column& c = columns_[k];
    if (k + 1 == columns_.size()) {  // free text, two spaces after the last fixed column
      line += " " + cells[k];
      break;
    }
    char buf[256];
    std::snprintf(buf, sizeof buf, c.left ? "%-*s " : "%*s ", c.width, cells[k].c_str());
    line += buf;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::printf("%s\n", line.c_str());
}

namespace {

// The Row table's columns: case, impl, time, GB/s, % of ceiling, foldkit / CUB (optional),
// time / ceiling, notes.
TextTable row_table(const TableStyle& s) {
  std::vector<Column> c = {{"case", 18, true}, {"impl", 9, true}, {"median", 10}, {s.batch_label, 10},
                           {"median", 9},      {s.batch_label, 7}, {"median", 8},  {s.batch_label, 7}};
  if (s.with_cub) {
    c.push_back({"median", 8});
    c.push_back({s.batch_label, 7});
  }
  c.push_back({"median", 8});
  c.push_back({s.batch_label, 7});
  c.push_back({"notes", 0, true});
  return TextTable(std::move(c));
}

}  // namespace

void print_section(const char* title, const TableStyle& s) {
  std::printf("\n== %s ==\n", title);
  const TextTable t = row_table(s);
  std::vector<std::pair<const char*, int>> groups = {{"", 2}, {"time (us)", 2}, {"GB/s", 2}, {"% of ceiling", 2}};
  if (s.with_cub) groups.emplace_back("foldkit / CUB", 2);
  groups.emplace_back("time / ceiling", 2);
  t.print_groups(groups);
  t.print_titles();
  std::fflush(stdout);
}

void print_case(const std::vector<Row>& rows, const TableStyle& s) {
  const TextTable t = row_table(s);
  bool first = true;
  for (const Row& r : rows) {
    std::string label;
    if (first) label = r.op + " " + r.dtype + " " + pow2_label(r.n);
    first = false;
    const bool is_ceiling = r.impl.rfind("ceiling", 0) == 0;
    const bool is_cub = r.impl == "cub";
    // A row never shows its ratio to itself: "-" keeps the eye on the foldkit rows.
    const double pct_med = is_ceiling ? kNaN : 100.0 * ratio(r.ceil_median_us, r.median_us);
    const double pct_bat = is_ceiling ? kNaN : 100.0 * ratio(r.ceil_batch_us, r.batch_us);
    const double cub_med = is_cub ? kNaN : ratio(r.median_us, r.cub_median_us);
    const double cub_bat = is_cub ? kNaN : ratio(r.batch_us, r.cub_batch_us);
    const double ceil_med = is_ceiling ? kNaN : ratio(r.median_us, r.ceil_median_us);
    const double ceil_bat = is_ceiling ? kNaN : ratio(r.batch_us, r.ceil_batch_us);

    std::string note = r.config;
    // 3% is about the run-to-run noise of these timings; beyond it, say so on the row.
    if (r.impl.rfind("foldkit", 0) == 0 && ((cub_med > 1.03) || (cub_bat > 1.03)))
      note = "<-- SLOWER THAN CUB" + (note.empty() ? "" : "  " + note);

    std::vector<std::string> cells = {label,
                                      r.impl,
                                      fmt_us(r.median_us),
                                      fmt_us(r.batch_us),
                                      fmt_gbps(gbps(r.bytes, r.median_us)),
                                      fmt_gbps(gbps(r.bytes, r.batch_us)),
                                      fmt_pct(pct_med),
                                      fmt_pct(pct_bat)};
    if (s.with_cub) {
      cells.push_back(fmt_ratio(cub_med));
      cells.push_back(fmt_ratio(cub_bat));
    }
    cells.push_back(fmt_ratio(ceil_med));
    cells.push_back(fmt_ratio(ceil_bat));
    cells.push_back(note);
    t.print_row(cells);
    if (check_failed(r)) {
      std::printf("!!!!!!!! %s %s %s %s: %s !!!!!!!!\n", r.impl.c_str(), r.op.c_str(), r.dtype.c_str(),
                  pow2_label(r.n).c_str(), r.check.c_str());
    }
  }
  std::fflush(stdout);
}

void print_note(const char* f, ...) {
  std::printf("%-18s ", "");
  va_list ap;
  va_start(ap, f);
  std::vprintf(f, ap);
  va_end(ap);
  std::printf("\n");
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// Summary
// ---------------------------------------------------------------------------------------------
void Summary::Worst::update(double v, const std::string& w) {
  if (std::isnan(v)) return;
  if (std::isnan(value) || v > value) {
    value = v;
    where = w;
  }
}

void Summary::add(const Row& r) {
  const std::string where = r.op + " " + r.dtype + " " + pow2_label(r.n);
  cub_median_.update(ratio(r.median_us, r.cub_median_us), where);
  cub_batch_.update(ratio(r.batch_us, r.cub_batch_us), where);
  ceil_median_.update(ratio(r.median_us, r.ceil_median_us), where);
  ceil_batch_.update(ratio(r.batch_us, r.ceil_batch_us), where);
  const double cm = ratio(r.median_us, r.cub_median_us), cb = ratio(r.batch_us, r.cub_batch_us);
  if (!std::isnan(cm) && !std::isnan(cb)) {
    ++vs_cub_cases_;
    faster_median_ += cm < 1.0;
    faster_batch_ += cb < 1.0;
  }
  const double km = ratio(r.median_us, r.ceil_median_us), kb = ratio(r.batch_us, r.ceil_batch_us);
  if (!std::isnan(km) && !std::isnan(kb)) {
    ++vs_ceiling_cases_;
    below_ceiling_median_ += km < 0.99;
    below_ceiling_batch_ += kb < 0.99;
  }
}

void Summary::add_check(const Row& r) {
  if (check_failed(r)) {
    ++failures_;
    failed_.push_back(r.impl + " " + r.op + " " + r.dtype + " " + pow2_label(r.n) + ": " + r.check);
  } else if (r.check == "ok") {
    ++checks_ok_;
  } else {
    ++unchecked_;
  }
}

void Summary::print(bool with_cub, bool gpu_batch) const {
  std::printf("\n== Summary (time ratios: > 1 means foldkit is slower; per-call median first%s) ==\n",
              gpu_batch ? ": the batch includes host submission, which dominates below ~2^20 elements" : "");
  auto line = [](const char* what, const Worst& w) {
    if (std::isnan(w.value)) return;
    std::printf("  worst %-28s %6.2f   at %s\n", what, w.value, w.where.c_str());
  };
  if (with_cub) {
    line("foldkit / CUB (median):", cub_median_);
    line("foldkit / CUB (batch):", cub_batch_);
    if (vs_cub_cases_)
      std::printf("  foldkit faster than CUB in %d of %d cases (median), %d of %d (batch)\n", faster_median_,
                  vs_cub_cases_, faster_batch_, vs_cub_cases_);
  }
  line("foldkit / ceiling (median):", ceil_median_);
  line("foldkit / ceiling (batch):", ceil_batch_);
  if (vs_ceiling_cases_)
    std::printf("  foldkit more than 1%% below the ceiling's time in %d of %d cases (median), %d of %d (batch)%s\n",
                below_ceiling_median_, vs_ceiling_cases_, below_ceiling_batch_, vs_ceiling_cases_,
                below_ceiling_median_ + below_ceiling_batch_ ? "  <-- the ceiling was beaten" : "");
  std::printf("  result checks: %d ok, %d FAILED", checks_ok_, failures_);
  if (unchecked_) std::printf(", %d not checked", unchecked_);
  std::printf("\n");
  for (const auto& f : failed_) std::printf("  !!!!!!!! FAILED: %s\n", f.c_str());
  std::fflush(stdout);
}

}  // namespace fkbench
