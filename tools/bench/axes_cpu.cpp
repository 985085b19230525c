// `foldkit-bench axes --backend cpu` (or `axes` without a GPU): foldkit::cpu::reduce, sum over dim
// 1 and over dim 0 of the nine 2^26-element f32 matrices, beside an all-core streaming-read
// ceiling over the same bytes (issue #22's CPU bar: >= 80 %). Method as cpu_suite.cpp's: steady_clock,
// inputs rotated beyond the last-level cache, the two rivals interleaved call by call, each after
// the process is quiet and with its own threads started; 2 warm-up rounds; median and mean.
#include <dirent.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

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

struct Host {
  std::string cpu_name = "unknown CPU";
  int threads = 1;
  std::size_t llc_bytes = 0, avail_bytes = 0;
};

Host query_host() {
  Host h;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      h.cpu_name = line.substr(line.find(':') + 2);
      break;
    }
  h.threads = omp_get_max_threads();
  std::string s;
  std::ifstream("/sys/devices/system/cpu/cpu0/cache/index3/size") >> s;
  if (!s.empty()) {
    std::size_t v = std::strtoull(s.c_str(), nullptr, 10);
    if (s.find('K') != std::string::npos) v <<= 10;
    if (s.find('M') != std::string::npos) v <<= 20;
    h.llc_bytes = v;
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) h.llc_bytes = std::max(h.llc_bytes, static_cast<std::size_t>(l3));
#endif
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) h.avail_bytes = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
  return h;
}

// Copies of one f32 input of n elements, back to back, covering max(256 MiB, 4 x LLC) (at least
// 2 copies; fewer when memory is short); each call reads the next.
class HostInputs {
 public:
  ~HostInputs() { std::free(base_); }
  bool prepare(std::int64_t n, const Host& host) {
    bytes_ = static_cast<std::size_t>(n) * sizeof(float);
    stride_ = (bytes_ + 63) / 64 * 64;
    const std::size_t target = std::max<std::size_t>(std::size_t{256} << 20, 4 * host.llc_bytes);
    copies_ = std::max<std::size_t>(2, (target + bytes_ - 1) / bytes_);
    const std::size_t cap = host.avail_bytes ? host.avail_bytes / 3 : std::size_t{2} << 30;
    if (stride_ > cap) return false;
    copies_ = std::max<std::size_t>(1, std::min(copies_, cap / stride_));
    base_ = static_cast<unsigned char*>(std::aligned_alloc(64, copies_ * stride_));
    if (!base_) return false;
    const std::int64_t count = static_cast<std::int64_t>(copies_ * stride_ / sizeof(float));
    float* p = reinterpret_cast<float*>(base_);
    const std::uint64_t seed = 0x452821e638d01377ull ^ static_cast<std::uint64_t>(n);
#pragma omp parallel for schedule(static)  // first touch by the threads that will read them
    for (std::int64_t i = 0; i < count; ++i)
      p[i] = foldkit_bench::value_from_hash<float>(foldkit_bench::hash64(seed * 0x9e3779b97f4a7c15ull + i));
    return true;
  }
  const unsigned char* copy(std::size_t k) const { return base_ + (k % copies_) * stride_; }
  const unsigned char* next() { return copy(cursor_++); }
  std::string memory_text() const { return rotation_text("input", copies_, copies_ * stride_); }

 private:
  unsigned char* base_ = nullptr;
  std::size_t bytes_ = 0, stride_ = 0, copies_ = 0, cursor_ = 0;
};

// All-core streaming read (cpu_suite.cpp's ceiling): XOR of every 8-byte word into 16 lanes.
std::uint64_t read_ceiling(const unsigned char* p, std::size_t bytes) {
  constexpr int kLanes = 16;
  const std::int64_t blocks = static_cast<std::int64_t>(bytes / (8 * kLanes));
  const std::uint64_t* w = reinterpret_cast<const std::uint64_t*>(p);
  std::uint64_t acc = 0;
#pragma omp parallel reduction(^ : acc)
  {
    std::uint64_t lane[kLanes] = {};
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::uint64_t* q = w + b * kLanes;
      for (int j = 0; j < kLanes; ++j) lane[j] ^= q[j];
    }
    for (int j = 0; j < kLanes; ++j) acc ^= lane[j];
  }
  for (std::size_t i = static_cast<std::size_t>(blocks) * 8 * kLanes; i < bytes; ++i) acc ^= p[i];
  return acc;
}

volatile double g_sink;

// Waits (at most 200 ms) until no other thread of this process is runnable: the OpenMP team spins
// for a while after a region, foldkit's pool briefly after a call; neither may share the cores
// with the next timed call.
void wait_until_quiet() {
  const long self = static_cast<long>(syscall(SYS_gettid));
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(200)) {
    bool quiet = true;
    if (DIR* dir = opendir("/proc/self/task")) {
      while (dirent* e = readdir(dir)) {
        const long tid = std::strtol(e->d_name, nullptr, 10);
        if (tid <= 0 || tid == self) continue;
        std::ifstream stat("/proc/self/task/" + std::string(e->d_name) + "/stat");
        std::string line;
        std::getline(stat, line);
        const std::size_t paren = line.rfind(')');
        if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'R') {
          quiet = false;
          break;
        }
      }
      closedir(dir);
    }
    if (quiet) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

struct CpuCall {
  std::function<double(const unsigned char*)> run;
  bool foldkit;  // start foldkit's pool before it (else an empty OpenMP region)
};
struct CpuTiming {
  double median_us = kNaN, mean_us = kNaN;
  std::string threads;
};

// Rivals interleaved call by call (the order rotating every round), 2 warm-up rounds, then `reps`.
std::vector<CpuTiming> time_cpu(int reps, HostInputs& in, const std::vector<CpuCall>& calls) {
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

std::vector<AxesRow> run_cpu_case(const Options& opt, const Host& host, HostInputs& in, const Case& c,
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
  const Host host = query_host();
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

  HostInputs in;
  const std::int64_t n = std::int64_t{1} << 26;
  if (!in.prepare(n, host)) {
    std::fprintf(stderr, "foldkit-bench: not enough memory for the 2^26-element inputs\n");
    return 1;
  }
  axes::AxesSummary summary;
  std::vector<float> out;
  std::string section;
  for (const Case& c : axes::cpu_cases()) {
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
