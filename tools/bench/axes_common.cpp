// `foldkit-bench axes`: cases, rows, bars, table, CSV and host reference checks (axes_common.hpp).
#include "axes_common.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace fkbench::axes {

// ---------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------
std::string Bar::text() const {
  char buf[32];
  if (min_pct > 0) std::snprintf(buf, sizeof buf, ">=%g%%", min_pct);
  else if (max_ratio > 0) std::snprintf(buf, sizeof buf, "<=%gx", max_ratio);
  else return "-";
  return buf;
}

std::string Case::shape_text() const {
  if (kind == Kind::segmented) return segments_text(segments);
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

std::string Case::name() const {
  return op + " " + foldkit::dtype_name(dtype) + " " + shape_text() + " axes=" + axes_text;
}

std::int64_t Case::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

foldkit::ReduceOp Case::reduce_op() const {
  if (op == "max") return foldkit::ReduceOp::max;
  if (op == "argmax") return foldkit::ReduceOp::argmax;
  return foldkit::ReduceOp::sum;
}

const std::vector<std::pair<std::int64_t, std::int64_t>>& matrices() {
  static const std::vector<std::pair<std::int64_t, std::int64_t>> m = {
      {std::int64_t{1} << 24, 4},     {std::int64_t{1} << 22, 16},   {std::int64_t{1} << 20, 64},
      {std::int64_t{1} << 18, 256},   {std::int64_t{1} << 16, 1024}, {std::int64_t{1} << 14, 4096},
      {std::int64_t{1} << 12, 1 << 14}, {std::int64_t{1} << 8, 1 << 18}, {16, std::int64_t{1} << 22}};
  return m;
}

namespace {

Case reduce_case(const char* section, const char* op, foldkit::DType dtype, std::vector<std::int64_t> shape,
                 std::vector<int> axes, const char* axes_text, double min_pct, bool cub_rows = false) {
  Case c;
  c.section = section;
  c.kind = Kind::reduce;
  c.op = op;
  c.dtype = dtype;
  c.shape = std::move(shape);
  c.axes = std::move(axes);
  c.axes_text = axes_text;
  c.cub_rows = cub_rows;
  c.bar.min_pct = min_pct;
  return c;
}

Case scan_case(const char* section, std::vector<std::int64_t> shape, int axis, const char* axes_text, double min_pct) {
  Case c;
  c.section = section;
  c.kind = Kind::scan;
  c.op = "cumsum";
  c.dtype = foldkit::DType::f32;
  c.shape = std::move(shape);
  c.axes = {axis};
  c.axes_text = axes_text;
  c.bar.min_pct = min_pct;
  return c;
}

constexpr const char* kMatrices = "Matrices of 2^26 f32: sum, max, argmax and cumsum over dim 1 and dim 0";
constexpr const char* k3d = "3-D sums over the middle axis and over axes (0, 2), f32";
constexpr const char* kBf16 = "bf16 sums over dim 1 (accumulated in f32, f32 out)";
constexpr const char* kReported = "Shapes users reported as slow (bar: per call within 1.3x the ceiling)";
constexpr const char* kSegmented = "Segmented sums, f32 (bytes: the input read)";

}  // namespace

std::vector<Case> gpu_cases() {
  using foldkit::DType;
  std::vector<Case> v;
  for (const auto& [rows, cols] : matrices()) {
    for (const char* op : {"sum", "max", "argmax"})
      v.push_back(reduce_case(kMatrices, op, DType::f32, {rows, cols}, {1}, "1", std::strcmp(op, "argmax") ? 90 : 85, true));
    for (const char* op : {"sum", "max", "argmax"})
      v.push_back(reduce_case(kMatrices, op, DType::f32, {rows, cols}, {0}, "0", std::strcmp(op, "argmax") ? 90 : 85));
    v.push_back(scan_case(kMatrices, {rows, cols}, 1, "1", 85));
    v.push_back(scan_case(kMatrices, {rows, cols}, 0, "0", 85));
  }
  // The 2^26-element 3-D shapes first (they share the matrices' input), then the 2^28 one.
  for (std::vector<std::int64_t> s : {std::vector<std::int64_t>{64, 4096, 256}, {256, 256, 1024}, {4096, 64, 1024}}) {
    v.push_back(reduce_case(k3d, "sum", DType::f32, s, {1}, "1", 90));
    v.push_back(reduce_case(k3d, "sum", DType::f32, s, {0, 2}, "0,2", 90));
  }
  for (const auto& [rows, cols] : matrices())
    v.push_back(reduce_case(kBf16, "sum", DType::bf16, {rows, cols}, {1}, "1", 85));
  {
    auto reported = [&](Case c) {
      c.bar = Bar{0, 1.3};
      v.push_back(std::move(c));
    };
    reported(reduce_case(kReported, "sum", DType::f32, {7840000, 4}, {-1}, "-1", 0, true));
    reported(reduce_case(kReported, "sum", DType::f32, {1000000, 2}, {-1}, "-1", 0, true));
    reported(reduce_case(kReported, "sum", DType::f32, {32768, 32}, {0}, "0", 0));
    for (std::int64_t cols : {2, 8, 32}) reported(scan_case(kReported, {1000000, cols}, 0, "0", 0));
  }
  for (int which : {0, 1}) {
    Case c;
    c.section = kSegmented;
    c.kind = Kind::segmented;
    c.op = "segmented_sum";
    c.dtype = DType::f32;
    c.axes_text = "-";
    c.segments = which;
    c.bar.min_pct = 85;
    v.push_back(std::move(c));
  }
  return v;
}

bool selected(const Case& c, const std::string& only) {
  if (only.empty()) return true;
  const std::string name = c.name();
  std::size_t b = 0;
  while (b <= only.size()) {
    const std::size_t e = std::min(only.find('|', b), only.size());
    const std::string token = only.substr(b, e - b);
    if (!token.empty() && token[0] == '^') {  // a prefix
      if (name.compare(0, token.size() - 1, token, 1) == 0) return true;
    } else if (!token.empty() && name.find(token) != std::string::npos) {
      return true;
    }
    b = e + 1;
  }
  return false;
}

std::vector<Case> cpu_cases() {
  std::vector<Case> v;
  for (const auto& [rows, cols] : matrices())
    for (int dim : {1, 0}) {
      v.push_back(reduce_case("Matrices of 2^26 f32: foldkit::cpu::reduce sum over dim 1 and dim 0 (bar: 80 % of an "
                              "all-core read)",
                              "sum", foldkit::DType::f32, {rows, cols}, {dim}, dim ? "1" : "0", 80));
    }
  return v;
}

std::vector<std::int64_t> segment_offsets(int which) {
  std::uint64_t x = which == 0 ? 0x9E3779B97F4A7C15ull : 0xD1B54A32D192ED03ull;  // fixed seeds
  auto next = [&x] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  };
  std::vector<std::int64_t> lengths;
  if (which == 0) {  // 2^22 segments, lengths uniform in 0..128
    lengths.resize(std::size_t{1} << 22);
    for (auto& l : lengths) l = static_cast<std::int64_t>(next() % 129);
  } else {  // 4 segments of 2^24 among 2^20 of lengths 0..16, in a shuffled order
    lengths.resize((std::size_t{1} << 20) + 4);
    for (std::size_t i = 0; i < lengths.size(); ++i) lengths[i] = i < 4 ? (std::int64_t{1} << 24) : static_cast<std::int64_t>(next() % 17);
    for (std::size_t i = lengths.size(); i > 1; --i) std::swap(lengths[i - 1], lengths[next() % i]);  // Fisher-Yates
  }
  std::vector<std::int64_t> offsets(lengths.size() + 1, 0);
  for (std::size_t i = 0; i < lengths.size(); ++i) offsets[i + 1] = offsets[i] + lengths[i];
  return offsets;
}

std::string segments_text(int which) { return which == 0 ? "2^22segs_U0-128" : "4x2^24+2^20segs_U0-16"; }

// ---------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------
double AxesRow::pct_median() const {
  if (!(median_us > 0) || !(ceil_median_us > 0) || ceiling_bytes == 0) return kNaN;
  return 100.0 * (static_cast<double>(bytes()) / median_us) / (static_cast<double>(ceiling_bytes) / ceil_median_us);
}

double AxesRow::pct_batch() const {
  if (!(batch_us > 0) || !(ceil_batch_us > 0) || ceiling_bytes == 0) return kNaN;
  return 100.0 * (static_cast<double>(bytes()) / batch_us) / (static_cast<double>(ceiling_bytes) / ceil_batch_us);
}

std::string AxesRow::bar_met() const {
  if (impl != "foldkit") return "";
  if (bar.min_pct > 0) {
    const double p = pct_median();
    return std::isnan(p) ? "" : (p >= bar.min_pct ? "yes" : "no");
  }
  if (bar.max_ratio > 0) {
    const double r = ratio_ceiling_median();
    return std::isnan(r) ? "" : (r <= bar.max_ratio ? "yes" : "no");
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// CSV and console
// ---------------------------------------------------------------------------------------------
bool AxesCsv::open(const std::string& path, const Header& h) {
  return file_.open(path, h, "gpu_or_cpu_name",
                    {"mode", "section", "case", "impl", "op", "shape", "axes", "dtype", "bytes", "read_bytes",
                     "written_bytes", "median_us", "batch_mean_us", "gbps_median", "gbps_batch", "ceiling_bytes",
                     "ceiling_median_us", "ceiling_batch_us", "pct_of_ceiling_median", "pct_of_ceiling_batch",
                     "ratio_to_ceiling_median", "cub_median_us", "ratio_to_cub_median", "bar", "bar_met", "plan",
                     "config", "check"});
}

void AxesCsv::write(const AxesRow& r) {
  const bool self_ceiling = r.impl == "ceiling";
  file_.write({r.mode, r.section, r.case_name, r.impl, r.op, r.shape, r.axes, r.dtype, std::to_string(r.bytes()),
               std::to_string(r.read_bytes), std::to_string(r.written_bytes), csv_number(r.median_us, "%.3f"),
               csv_number(r.batch_us, "%.3f"), csv_number(gbps(r.bytes(), r.median_us), "%.1f"),
               csv_number(gbps(r.bytes(), r.batch_us), "%.1f"), std::to_string(r.ceiling_bytes),
               csv_number(self_ceiling ? kNaN : r.ceil_median_us, "%.3f"),
               csv_number(self_ceiling ? kNaN : r.ceil_batch_us, "%.3f"),
               csv_number(self_ceiling ? kNaN : r.pct_median(), "%.2f"),
               csv_number(self_ceiling ? kNaN : r.pct_batch(), "%.2f"),
               csv_number(self_ceiling ? kNaN : r.ratio_ceiling_median(), "%.4f"), csv_number(r.cub_median_us, "%.3f"),
               csv_number(r.impl == "cub" ? kNaN : r.ratio_cub_median(), "%.4f"),
               r.impl == "foldkit" ? r.bar.text() : "", r.bar_met(), r.plan, r.config, r.check},
              r.memory);
}

namespace {

TextTable axes_table() {
  return TextTable({{"case", 40, true},
                    {"impl", 8, true},
                    {"median us", 10},
                    {"batch us", 10},
                    {"GB/s", 6},
                    {"%ceil", 6},
                    {"/ceil", 6},
                    {"/CUB", 6},
                    {"bar", 6},
                    {"met", 4},
                    {"plan / notes", 0, true}});
}

std::string us_text(double v) { return number_or_dash(v, v < 1000 ? "%.2f" : "%.1f"); }
std::string ratio_text(double v) { return number_or_dash(v, v < 0.1 ? "%.3f" : v >= 100 ? "%.0f" : "%.2f"); }

}  // namespace

void print_axes_section(const std::string& title) {
  std::printf("\n== %s ==\n", title.c_str());
  const TextTable t = axes_table();
  t.print_titles();
  std::fflush(stdout);
}

void print_axes_case(const std::vector<AxesRow>& rows) {
  const TextTable t = axes_table();
  bool first = true;
  for (const AxesRow& r : rows) {
    const bool is_ceiling = r.impl == "ceiling";
    const bool is_fk = r.impl == "foldkit";
    std::string note = r.config;
    if (is_fk && !r.plan.empty()) note = r.plan + (note.empty() ? "" : "; " + note);
    t.print_row({first ? r.case_name : "", r.impl, us_text(r.median_us), us_text(r.batch_us),
                 number_or_dash(gbps(r.bytes(), r.median_us), "%.0f"),
                 is_ceiling ? "-" : number_or_dash(r.pct_median(), "%.1f"),
                 is_ceiling ? "-" : ratio_text(r.ratio_ceiling_median()),
                 r.impl == "cub" ? "-" : ratio_text(r.ratio_cub_median()), is_fk ? r.bar.text() : "",
                 is_fk ? (r.bar_met().empty() ? "-" : r.bar_met()) : "", note});
    first = false;
    if (check_failed_text(r.check))
      std::printf("!!!!!!!! %s %s: %s !!!!!!!!\n", r.impl.c_str(), r.case_name.c_str(), r.check.c_str());
  }
  std::fflush(stdout);
}

bool check_failed_text(const std::string& check) {
  return check.rfind("MISMATCH", 0) == 0 || check.rfind("ERROR", 0) == 0;
}

void AxesSummary::add(const std::vector<AxesRow>& case_rows) {
  for (const AxesRow& r : case_rows) {
    if (r.config.rfind("slow call", 0) == 0) ++slow_rows_;
    if (r.impl == "foldkit") {
      const double q = r.ratio_cub_median();
      if (!std::isnan(q)) {
        ++vs_cub_;
        faster_than_cub_ += q <= 1.0;
      }
      const std::string met = r.bar_met();
      if (!met.empty()) {
        ++bars_;
        if (met == "yes") ++met_;
        else {
          char buf[256];
          if (r.bar.min_pct > 0) std::snprintf(buf, sizeof buf, "%s: %.1f %% (bar %s)", r.case_name.c_str(), r.pct_median(), r.bar.text().c_str());
          else std::snprintf(buf, sizeof buf, "%s: %.2fx the ceiling's time (bar %s)", r.case_name.c_str(), r.ratio_ceiling_median(), r.bar.text().c_str());
          missed_.push_back(buf);
        }
      }
    }
    if (check_failed_text(r.check)) {
      ++failures_;
      failed_.push_back(r.impl + " " + r.case_name + ": " + r.check);
    } else if (r.check == "ok") {
      ++checks_ok_;
    } else if (r.impl != "ceiling") {
      ++unchecked_;
    }
  }
}

void AxesSummary::print() const {
  std::printf("\n== Summary (per-call medians; %% of ceiling is the GB/s ratio) ==\n");
  std::printf("  bars met: %d of %d foldkit cases\n", met_, bars_);
  for (const std::string& m : missed_) std::printf("    below the bar: %s\n", m.c_str());
  if (vs_cub_) std::printf("  foldkit at or below CUB DeviceSegmentedReduce's time in %d of %d cases\n", faster_than_cub_, vs_cub_);
  if (slow_rows_)
    std::printf("  %d rows timed by the slow-call rule (a single call over the threshold; see their notes)\n", slow_rows_);
  std::printf("  result checks: %d ok, %d FAILED", checks_ok_, failures_);
  if (unchecked_) std::printf(", %d not checked", unchecked_);
  std::printf("\n");
  for (const std::string& f : failed_) std::printf("  !!!!!!!! FAILED: %s\n", f.c_str());
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// Reference checks
// ---------------------------------------------------------------------------------------------
double HostTensor::at(std::int64_t flat) const {
  return foldkit::visit_dtype(dtype, [&](auto tag) -> double {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, data + static_cast<std::size_t>(flat) * sizeof(T), sizeof(T));
    if constexpr (foldkit::is_16bit_float_v<T>) return static_cast<double>(static_cast<float>(v));
    else return static_cast<double>(v);
  });
}

namespace {

// Row-major strides of a shape.
std::vector<std::int64_t> strides_of(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

int normalize(int axis, int rank) { return axis < 0 ? axis + rank : axis; }

// Up to `want` indices of [0, count): all of them, or evenly spread with the first and the last.
std::vector<std::int64_t> spread(std::int64_t count, std::int64_t want) {
  std::vector<std::int64_t> v;
  if (count <= 0) return v;
  if (count <= want) {
    for (std::int64_t i = 0; i < count; ++i) v.push_back(i);
    return v;
  }
  for (std::int64_t k = 0; k < want; ++k) v.push_back(want == 1 ? 0 : k * (count - 1) / (want - 1));
  return v;
}

std::int64_t samples_for(std::int64_t work_per_sample, std::int64_t lo) {
  const std::int64_t budget = std::int64_t{1} << 24;  // input elements visited per check
  return std::clamp<std::int64_t>(budget / std::max<std::int64_t>(work_per_sample, 1), lo, 256);
}

// Output element o of a result, as a double (values) or an index (argmax).
double out_value(const HostOutput& out, std::int64_t o) {
  if (out.cub_pairs) {
    float v;
    std::memcpy(&v, out.data + static_cast<std::size_t>(o) * 8 + 4, 4);
    return v;
  }
  HostTensor t{out.data, out.dtype, {}};
  return t.at(o);
}

std::int64_t out_index(const HostOutput& out, std::int64_t o) {
  if (out.cub_pairs) {
    std::int32_t k;
    std::memcpy(&k, out.data + static_cast<std::size_t>(o) * 8, 4);
    return k;
  }
  std::int64_t k;
  std::memcpy(&k, out.data + static_cast<std::size_t>(o) * 8, 8);
  return k;
}

bool sum_close(double got, double ref, double rel) {
  return std::isfinite(got) && std::fabs(got - ref) <= rel * std::fabs(ref);
}

std::string verdict(std::int64_t bad, std::int64_t checked, const std::string& first, const char* what) {
  if (bad == 0) return "ok";
  char buf[96];
  std::snprintf(buf, sizeof buf, "MISMATCH %lld of %lld sampled %s: ", static_cast<long long>(bad),
                static_cast<long long>(checked), what);
  return buf + first;
}

std::string g17(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string check_reduce(const std::string& op, const HostTensor& in, const std::vector<int>& axes,
                         const HostOutput& out) {
  const int rank = static_cast<int>(in.shape.size());
  const std::vector<std::int64_t> st = strides_of(in.shape);
  std::vector<bool> reduced(rank, false);
  for (int a : axes) reduced[normalize(a, rank)] = true;
  std::vector<int> kept_dims, red_dims;
  std::int64_t out_numel = 1, len = 1;
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) {
      red_dims.push_back(d);
      len *= in.shape[d];
    } else {
      kept_dims.push_back(d);
      out_numel *= in.shape[d];
    }
  }
  std::int64_t bad = 0, checked = 0;
  std::string first;
  std::vector<std::int64_t> idx(rank, 0);
  for (std::int64_t o : spread(out_numel, samples_for(len, 8))) {
    // The output element's input base (row-major over the kept dimensions, logical order).
    std::int64_t base = 0, rest = o;
    for (int k = static_cast<int>(kept_dims.size()) - 1; k >= 0; --k) {
      const int d = kept_dims[k];
      base += (rest % in.shape[d]) * st[d];
      rest /= in.shape[d];
    }
    double acc = 0, best = -INFINITY;
    std::int64_t best_at = -1;
    std::fill(idx.begin(), idx.end(), 0);
    for (std::int64_t p = 0; p < len; ++p) {
      std::int64_t off = base;
      for (int d : red_dims) off += idx[d] * st[d];
      const double x = in.at(off);
      acc += x;
      if (x > best) {
        best = x;
        best_at = p;
      }
      for (int k = static_cast<int>(red_dims.size()) - 1; k >= 0; --k) {  // odometer, row-major
        const int d = red_dims[k];
        if (++idx[d] < in.shape[d]) break;
        idx[d] = 0;
      }
    }
    ++checked;
    bool ok;
    std::string got_text, ref_text;
    if (op == "argmax") {
      const std::int64_t got = out_index(out, o);
      ok = got == best_at;
      got_text = std::to_string(got);
      ref_text = std::to_string(best_at) + " (max " + g17(best) + ")";
    } else {
      const double got = out_value(out, o);
      const double ref = op == "max" ? best : acc;
      ok = op == "max" ? got == ref : sum_close(got, ref, 1e-3);
      got_text = g17(got);
      ref_text = g17(ref);
    }
    if (!ok && bad++ == 0) first = "output " + std::to_string(o) + " is " + got_text + ", expected " + ref_text;
  }
  return verdict(bad, checked, first, "outputs");
}

std::string check_scan(const HostTensor& in, int axis, const HostOutput& out) {
  const int rank = static_cast<int>(in.shape.size());
  const int a = normalize(axis, rank);
  const std::vector<std::int64_t> st = strides_of(in.shape);
  const std::int64_t len = in.shape[a];
  std::int64_t lines = 1;
  for (int d = 0; d < rank; ++d)
    if (d != a) lines *= in.shape[d];
  std::int64_t bad = 0, checked = 0;
  std::string first;
  for (std::int64_t l : spread(lines, samples_for(len, 4))) {
    std::int64_t base = 0, rest = l;
    for (int d = rank - 1; d >= 0; --d) {
      if (d == a) continue;
      base += (rest % in.shape[d]) * st[d];
      rest /= in.shape[d];
    }
    double acc = 0;
    ++checked;
    for (std::int64_t i = 0; i < len; ++i) {
      const std::int64_t off = base + i * st[a];
      acc += in.at(off);
      const double got = out_value(out, off);
      if (!sum_close(got, acc, 1e-3)) {
        if (bad++ == 0)
          first = "line " + std::to_string(l) + " element " + std::to_string(i) + " is " + g17(got) + ", expected " + g17(acc);
        break;
      }
    }
  }
  return verdict(bad, checked, first, "lines");
}

std::string check_segmented_sum(const HostTensor& in, const std::vector<std::int64_t>& offsets, const HostOutput& out) {
  const std::int64_t segments = static_cast<std::int64_t>(offsets.size()) - 1;
  std::vector<std::int64_t> pick = spread(segments, 256);
  for (std::int64_t s = 0; s < segments; ++s)
    if (offsets[s + 1] - offsets[s] > (std::int64_t{1} << 16)) pick.push_back(s);
  std::int64_t bad = 0, checked = 0;
  std::string first;
  for (std::int64_t s : pick) {
    double acc = 0;
    for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i) acc += in.at(i);
    const double got = out_value(out, s);
    ++checked;
    if (!sum_close(got, acc, 1e-3) && bad++ == 0)
      first = "segment " + std::to_string(s) + " (length " + std::to_string(offsets[s + 1] - offsets[s]) + ") is " +
              g17(got) + ", expected " + g17(acc);
  }
  return verdict(bad, checked, first, "segments");
}

}  // namespace fkbench::axes
