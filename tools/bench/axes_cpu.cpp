// `foldkit-bench axes --backend cpu` (or `axes` without a GPU): foldkit::cpu::reduce, sum over dim
// 1 and over dim 0 of the nine 2^26-element f32 matrices, beside an all-core streaming-read
// ceiling over the same bytes (issue #22's CPU bar: >= 80 %). Method as cpu_suite.cpp's: steady_clock,
// inputs rotated beyond the last-level cache, the two rivals interleaved call by call, each after
// the process is quiet and with its own threads started; 2 warm-up rounds; median and mean.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "axes_common.hpp"
#include "cpu_host.hpp"
#include "cpu/parallel.hpp"  // last_call_shape_for_testing: how foldkit's calls ran
#include "fill_values.hpp"
#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/reduce.hpp"  // cpu::detail::wake_threads
#include "foldkit/tensor_reduce.hpp"
#include "run_info.hpp"
#include "suites.hpp"
#include "table.hpp"

namespace fkbench {
namespace {

using axes::AxesRow;
using axes::Case;





volatile double g_sink;


struct CpuCall {
  std::function<double(const unsigned char*)> run;
  bool foldkit;  // start foldkit's pool before it (else an empty OpenMP region)
};
struct CpuTiming {
  double median_us = kNaN, mean_us = kNaN;
  std::string threads;
};

// Rivals interleaved call by call (the order rotating every round), 2 warm-up rounds, then `reps`.
std::vector<CpuTiming> time_cpu(int reps, HostPool& in, const std::vector<CpuCall>& calls) {
  std::vector<std::vector<double>> us(calls.size());
  std::vector<std::map<std::string, int>> shapes(calls.size());
  for (int rep = -2; rep < reps; ++rep)
    for (std::size_t k = 0; k < calls.size(); ++k) {
      const std::size_t c = (k + static_cast<std::size_t>(rep + 2)) % calls.size();
      wait_until_quiet();
      if (calls[c].foldkit) {
        foldkit::cpu::detail::wake_threads(true);
      } else {
#pragma omp parallel
        { (void)omp_get_thread_num(); }
      }
      const auto t0 = std::chrono::steady_clock::now();
      g_sink = calls[c].run(in.next());
      const auto t1 = std::chrono::steady_clock::now();
      if (rep < 0) continue;
      us[c].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      if (calls[c].foldkit) {
        const auto shape = foldkit::cpu::detail::last_call_shape_for_testing();
        ++shapes[c][std::to_string(shape.threads) + (shape.threads == 1 ? "" : shape.openmp_team ? " team" : " pool")];
      }
    }
  std::vector<CpuTiming> out;
  for (std::size_t c = 0; c < us.size(); ++c) {
    std::vector<double>& v = us[c];
    CpuTiming t;
    double sum = 0;
    for (double x : v) sum += x;
    t.mean_us = sum / static_cast<double>(v.size());
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    t.median_us = v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
    for (const auto& [shape, count] : shapes[c])
      t.threads += (t.threads.empty() ? "" : ", ") + shape + " x" + std::to_string(count);
    out.push_back(t);
  }
  return out;
}

std::vector<AxesRow> run_cpu_case(const Options& opt, const HostInfo& host, HostPool& in, const Case& c,
                                  std::vector<float>& out) {
  AxesRow base;
  base.mode = "cpu";
  base.section = c.section;
  base.case_name = c.name();
  base.op = c.op;
  base.shape = c.shape_text();
  base.axes = c.axes_text;
  base.dtype = foldkit::dtype_name(c.dtype);
  base.memory = in.memory_text() + "; one output buffer";
  AxesRow fk = base, ceil = base;
  fk.impl = "foldkit";
  fk.bar = c.bar;
  ceil.impl = "ceiling";
  ceil.op = "read";
  const std::int64_t n = c.numel();
  const std::uint64_t read = static_cast<std::uint64_t>(n) * sizeof(float);
  const std::vector<std::int64_t> shape = c.shape;
  const std::vector<int> axes_list = c.axes;
  auto view = [&](const void* p) {
    return foldkit::TensorView::contiguous(p, foldkit::DType::f32, shape.data(), static_cast<int>(shape.size()));
  };
  foldkit::TensorView out_view;
  try {
    const foldkit::ReduceOutput ro =
        foldkit::cpu::reduce_output_shape(foldkit::ReduceOp::sum, view(in.copy(0)), foldkit::AxisList(axes_list), false);
    out.resize(static_cast<std::size_t>(ro.numel()));
    out_view = foldkit::TensorView::contiguous(out.data(), ro.dtype, ro.shape, ro.rank);
    fk.written_bytes = static_cast<std::uint64_t>(ro.numel()) * foldkit::dtype_size(ro.dtype);
    const foldkit::detail::ReducePlan p = foldkit::detail::prepare_reduce(
        foldkit::ReduceOp::sum, view(in.copy(0)), foldkit::AxisList(axes_list), false, out_view, nullptr);
    fk.plan = foldkit::detail::plan_family(p);
    fk.config = foldkit::detail::describe_plan(p);
    // Check, once, on copy 0 into a poisoned output.
    std::fill(out.begin(), out.end(), std::nanf(""));
    foldkit::cpu::reduce(foldkit::ReduceOp::sum, view(in.copy(0)), foldkit::AxisList(axes_list), false, out_view);
    axes::HostTensor h{in.copy(0), foldkit::DType::f32, shape};
    fk.check = axes::check_reduce(c.op, h, axes_list,
                                  axes::HostOutput{reinterpret_cast<const unsigned char*>(out.data()), ro.dtype, false});
  } catch (const std::exception& e) {
    fk.check = std::string("ERROR ") + e.what();
  }
  fk.read_bytes = read;
  fk.ceiling_bytes = ceil.ceiling_bytes = ceil.read_bytes = read;
  ceil.config = std::to_string(host.threads) + " threads, XOR of 8-byte words";

  std::vector<CpuCall> calls = {
      {[read](const unsigned char* p) { return static_cast<double>(read_ceiling(p, static_cast<std::size_t>(read))); },
       false}};
  const bool time_foldkit = fk.check.rfind("ERROR", 0) != 0;
  if (time_foldkit)
    calls.push_back({[&](const unsigned char* p) {
                       foldkit::cpu::reduce(foldkit::ReduceOp::sum, view(p), foldkit::AxisList(axes_list), false, out_view);
                       return static_cast<double>(out[0]);
                     },
                     true});
  // A call slower than 0.5 s (a pathological path: the all-core read of 256 MiB takes ~10-40 ms)
  // gets 3 timed calls instead of reps_median.
  int reps = opt.reps_median;
  std::string slow_note;
  if (time_foldkit) {
    const auto t0 = std::chrono::steady_clock::now();
    g_sink = calls.back().run(in.next());
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (us > 5e5) {
      reps = 3;
      char buf[96];
      std::snprintf(buf, sizeof buf, "slow call (%.2f s alone): median of 3 calls", us / 1e6);
      slow_note = buf;
    }
  }
  const std::vector<CpuTiming> t = time_cpu(reps, in, calls);
  ceil.median_us = t[0].median_us;
  ceil.batch_us = t[0].mean_us;
  if (time_foldkit) {
    fk.median_us = t[1].median_us;
    fk.batch_us = t[1].mean_us;
    fk.config = "threads: " + t[1].threads + (slow_note.empty() ? "" : "; " + slow_note) + "; " + fk.config;
  }
  fk.ceil_median_us = ceil.median_us;
  fk.ceil_batch_us = ceil.batch_us;
  return {fk, ceil};
}

}  // namespace

int run_axes_cpu(const Options& opt, const char* why) {
  const HostInfo host = query_host();
  Header h;
  h.title = std::string("foldkit-bench axes: CPU backend (") + why +
            ") -- foldkit::cpu::reduce along the axes of 2^26-element f32 matrices vs an all-core read ceiling";
  h.device = host.cpu_name;
  h.date = utc_now_iso8601();
  h.command = opt.command_line;
  h.run.commit = source_commit();
  h.run.warmup = 2;
  h.run.reps_median = opt.reps_median;
  h.run.reps_batch = 0;  // the "batch" column is the mean of the timed calls
  h.run.order = "interleaved call by call, rotating; before each call the process is quiet and the call's own threads run";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%d OpenMP threads, last-level cache %.0f MiB, %.1f GiB memory available", host.threads,
                host.llc_bytes / 1048576.0, host.avail_bytes / double(1ull << 30));
  h.lines.emplace_back("cpu", buf);
  h.lines.emplace_back("timing", "steady_clock; 2 warm-up rounds; median (and mean, in the batch column) of " +
                                     std::to_string(opt.reps_median) + " calls each");
  h.lines.emplace_back("ratios", "%ceil: (bytes read + written / time) / (bytes read / ceiling time), the GB/s ratio; "
                                 "bar >= 80 %");
  print_header(h);
  axes::AxesCsv csv;
  if (!opt.csv_path.empty() && !csv.open(opt.csv_path, h)) return 1;

  HostPool in;
  const std::int64_t n = std::int64_t{1} << 26;
  if (!in.prepare<float>(n, host, 0x452821e638d01377ull ^ static_cast<std::uint64_t>(n))) {
    std::fprintf(stderr, "foldkit-bench: not enough memory for the 2^26-element inputs\n");
    return 1;
  }
  axes::AxesSummary summary;
  std::vector<float> out;
  std::string section;
  for (const Case& c : axes::cpu_cases()) {
    if (!axes::selected(c, opt.only)) continue;
    if (c.section != section) {
      section = c.section;
      axes::print_axes_section(section);
    }
    const std::vector<AxesRow> rows = run_cpu_case(opt, host, in, c, out);
    axes::print_axes_case(rows);
    for (const AxesRow& r : rows) csv.write(r);
    summary.add(rows);
  }
  summary.print();
  return summary.failures();
}

}  // namespace fkbench
