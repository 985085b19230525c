// The CPU table: foldkit::cpu::sum vs a plain single-thread loop vs an all-core streaming-read
// ceiling, f32 at n = 2^20..2^26 and f64 and i32 at 2^26; and the f32 inclusive sum scan at 2^24
// and 2^26 against an all-core copy ceiling. Timed with steady_clock; every call
// reads the next copy of a pool of inputs larger than the last-level cache, so the table shows
// memory bandwidth, not cache bandwidth (as the GPU table does).
// --busy: the same table while 2 busy threads per core run beside it (the bar: every foldkit
// call within 1.5x of the single-thread loop's time in the same run).
#include <dirent.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cpu_host.hpp"
#include "cpu/parallel.hpp"  // last_call_shape_for_testing: the threads column
#include "fill_values.hpp"

#include "foldkit/reduce.hpp"
#include "foldkit/scan.hpp"
#include "run_info.hpp"
#include "suites.hpp"
#include "table.hpp"

namespace fkbench {
namespace {

using foldkit::DType;






// What a programmer writes first: one thread, one accumulator of foldkit's result type.
template <class T>
foldkit::reduce_result_t<foldkit::ReduceOp::sum, T> plain_sum(const T* p, std::int64_t n) {
  foldkit::reduce_result_t<foldkit::ReduceOp::sum, T> acc = 0;
  for (std::int64_t i = 0; i < n; ++i) acc += p[i];
  return acc;
}

volatile double g_sink;  // every timed result lands here, so no call is optimised away

// --busy: threads that spin on arithmetic (no memory traffic) until stopped.
class BusyLoad {
 public:
  explicit BusyLoad(int threads) : count_(threads), tids_(std::make_unique<std::atomic<long>[]>(threads)) {
    for (int i = 0; i < threads; ++i)
      threads_.emplace_back([this, i] {
        tids_[i].store(static_cast<long>(syscall(SYS_gettid)));
        volatile double x = 1.0;
        while (!stop_.load(std::memory_order_relaxed))
          for (int k = 0; k < 4096; ++k) x = x * 1.0000001 + 1e-9;
      });
    for (int i = 0; i < threads; ++i)  // every one has started and told its id
      while (tids_[i].load() == 0) std::this_thread::yield();
  }
  ~BusyLoad() {
    stop_.store(true);
    for (std::thread& t : threads_) t.join();
  }
  int size() const { return static_cast<int>(threads_.size()); }
  bool is_busy_thread(long tid) const {
    for (int i = 0; i < count_; ++i)
      if (tids_[i].load() == tid) return true;
    return false;
  }

 private:
  std::atomic<bool> stop_{false};
  int count_;
  std::unique_ptr<std::atomic<long>[]> tids_;
  std::vector<std::thread> threads_;
};

const BusyLoad* g_load = nullptr;  // the running --busy load, if any


// Starts an implementation's threads before its timed call, as a call just before it would have.
enum class Warm { none, openmp, foldkit_reduction, foldkit };
void warm(Warm w) {
  if (w == Warm::openmp) {
#pragma omp parallel
    { (void)omp_get_thread_num(); }
  } else if (w == Warm::foldkit || w == Warm::foldkit_reduction) {
    foldkit::cpu::detail::wake_threads(w == Warm::foldkit_reduction);
  }
}

struct CpuTiming {
  double median_us, mean_us;
  std::string threads;  // foldkit's calls: how they ran, e.g. "16 team x50" (threads_text)
};

// How the timed calls of foldkit ran, most frequent first: "16 team x48, 15 team x2" (team: an
// OpenMP team; pool: the backend's pool; 1: the caller alone).
std::string threads_text(const std::map<std::pair<int, bool>, int>& shapes) {
  std::vector<std::pair<int, std::pair<int, bool>>> byCount;
  for (const auto& [shape, count] : shapes) byCount.push_back({count, shape});
  std::sort(byCount.begin(), byCount.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text;
  for (const auto& [count, shape] : byCount) {
    if (!text.empty()) text += ", ";
    text += std::to_string(shape.first) + (shape.first == 1 ? "" : shape.second ? " team" : " pool") + " x" + std::to_string(count);
  }
  return text;
}
struct CpuCall {
  std::function<double(const unsigned char*)> run;
  Warm warm;
};

// Times the calls round-robin (each on the next copy), so that whatever else runs on the
// machine slows each implementation alike instead of whichever happened to be timed at the
// wrong moment. The order rotates every round. Before every timed call the process is let go
// quiet (wait_until_quiet: no other implementation's threads still spinning) and then the
// call's own threads are started (warm: an empty OpenMP region for the OpenMP ceilings,
// foldkit::cpu::detail::wake_threads for foldkit; each returns once its threads run): otherwise
// a call would pay for waking threads that went to sleep while the single-thread loop ran, or
// share the cores with the spinning threads of the call before it.
std::vector<CpuTiming> time_cpu(const Options& opt, HostPool& pool, const std::vector<CpuCall>& calls) {
  std::vector<std::vector<double>> us(calls.size());
  std::vector<std::map<std::pair<int, bool>, int>> shapes(calls.size());
  for (int rep = -2; rep < opt.reps_median; ++rep) {  // two warm-up rounds: threads up, pages mapped
    for (std::size_t k = 0; k < calls.size(); ++k) {
      const std::size_t c = (k + static_cast<std::size_t>(rep + 2)) % calls.size();
      wait_until_quiet([](long tid) { return g_load != nullptr && g_load->is_busy_thread(tid); });
      warm(calls[c].warm);
      const auto t0 = std::chrono::steady_clock::now();
      g_sink = calls[c].run(pool.next());
      const auto t1 = std::chrono::steady_clock::now();
      if (rep >= 0) {
        us[c].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        if (calls[c].warm == Warm::foldkit || calls[c].warm == Warm::foldkit_reduction) {
          const auto shape = foldkit::cpu::detail::last_call_shape_for_testing();
          ++shapes[c][{shape.threads, shape.openmp_team}];
        }
      }
    }
  }
  std::vector<CpuTiming> out;
  for (std::size_t c = 0; c < us.size(); ++c) {
    std::vector<double>& v = us[c];
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    out.push_back({v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]), mean, threads_text(shapes[c])});
  }
  return out;
}

template <class T>
std::vector<Row> run_case(const Options& opt, const HostInfo& host, std::int64_t n) {
  using R = foldkit::reduce_result_t<foldkit::ReduceOp::sum, T>;
  Row base;
  base.mode = "cpu";
  base.op = "sum";
  base.dtype = foldkit::dtype_name(foldkit::dtype_v<T>);
  base.n = n;
  base.bytes = static_cast<std::uint64_t>(n) * sizeof(T);
  Row fk = base, loop = base, ceil = base;
  fk.impl = "foldkit";
  loop.impl = "loop-1t";
  ceil.impl = "ceiling";
  ceil.op = "read";
  ceil.config = std::to_string(host.threads) + " threads";

  HostPool pool;
  if (!pool.prepare<T>(n, host, 0x243f6a8885a308d3ull ^ static_cast<std::uint64_t>(n))) {
    fk.check = "ERROR not enough memory for the input";
    return {fk};
  }
  for (Row* r : {&fk, &loop, &ceil}) r->memory = pool.memory_text();

  // Check: foldkit against a sequential sum in a wider type (exact for i32; long double for floats).
  try {
    const T* p = reinterpret_cast<const T*>(pool.copy(0));
    const R got = foldkit::cpu::sum(p, n);
    if constexpr (std::is_integral_v<T>) {
      const std::int64_t ref = plain_sum(p, n);
      fk.check = got == ref ? "ok" : "MISMATCH foldkit=" + std::to_string(got) + " ref=" + std::to_string(ref);
    } else {
      long double ref = 0;
      for (std::int64_t i = 0; i < n; ++i) ref += p[i];
      const double tol = std::is_same_v<T, double> ? 1e-12 : 1e-3;  // float: chunked vs exact order
      const bool ok = std::fabs(static_cast<double>(got) - static_cast<double>(ref)) <= tol * std::fabs(static_cast<double>(ref));
      char buf[128];
      std::snprintf(buf, sizeof buf, "MISMATCH foldkit=%.17g ref=%.17g", static_cast<double>(got), static_cast<double>(ref));
      fk.check = ok ? "ok" : buf;
    }
  } catch (const std::exception& e) {
    fk.check = std::string("ERROR ") + e.what();
  }

  const std::size_t bytes = base.bytes;
  std::vector<CpuCall> calls = {
      {[&](const unsigned char* p) { return static_cast<double>(read_ceiling(p, bytes)); }, Warm::openmp},
      {[&](const unsigned char* p) { return static_cast<double>(plain_sum(reinterpret_cast<const T*>(p), n)); },
       Warm::none},
  };
  const bool time_foldkit = fk.check.rfind("ERROR", 0) != 0;  // it threw once: do not time it
  if (time_foldkit)
    calls.push_back(
        {[&](const unsigned char* p) { return static_cast<double>(foldkit::cpu::sum(reinterpret_cast<const T*>(p), n)); },
         Warm::foldkit_reduction});
  try {
    const std::vector<CpuTiming> t = time_cpu(opt, pool, calls);
    ceil.median_us = t[0].median_us;
    ceil.batch_us = t[0].mean_us;
    loop.median_us = t[1].median_us;
    loop.batch_us = t[1].mean_us;
    if (time_foldkit) {
      fk.median_us = t[2].median_us;
      fk.batch_us = t[2].mean_us;
      fk.config = "threads: " + t[2].threads;
    }
  } catch (const std::exception& e) {
    fk.check = std::string("ERROR ") + e.what();
  }
  for (Row* r : {&fk, &loop}) {
    r->ceil_median_us = ceil.median_us;
    r->ceil_batch_us = ceil.batch_us;
  }
  return {fk, loop, ceil};
}

// All-core copy of `bytes` (1 MiB pieces, one static schedule): the bound for any scan, which
// reads and writes every element once.
void copy_ceiling(const unsigned char* src, unsigned char* dst, std::size_t bytes) {
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  const std::int64_t pieces = static_cast<std::int64_t>((bytes + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < pieces; ++b) {
    const std::size_t at = static_cast<std::size_t>(b) * kPiece;
    std::memcpy(dst + at, src + at, std::min(kPiece, bytes - at));
  }
}

// Inclusive sum scan of f32: foldkit::cpu::inclusive_scan vs a one-thread loop vs the all-core
// copy ceiling. Bytes are read + written (8 per element), as in the GPU scan table.
std::vector<Row> run_scan_case(const Options& opt, const HostInfo& host, std::int64_t n) {
  using T = float;
  Row base;
  base.mode = "cpu";
  base.op = "incl_sum";
  base.dtype = "f32";
  base.n = n;
  base.bytes = static_cast<std::uint64_t>(n) * sizeof(T) * 2;
  Row fk = base, loop = base, ceil = base;
  fk.impl = "foldkit";
  loop.impl = "loop-1t";
  ceil.impl = "ceiling";
  ceil.op = "copy";
  ceil.config = std::to_string(host.threads) + " threads, memcpy";
  HostPool pool;
  std::vector<T> out(static_cast<std::size_t>(n));
  if (!pool.prepare<T>(n, host, 0x13198a2e03707344ull ^ static_cast<std::uint64_t>(n))) {
    fk.check = "ERROR not enough memory for the input";
    return {fk};
  }
  for (Row* r : {&fk, &loop, &ceil}) r->memory = pool.memory_text() + "; one output buffer";
  // Check the last element against a long double sum (chunked float order vs exact: 1e-3).
  try {
    const T* p = reinterpret_cast<const T*>(pool.copy(0));
    foldkit::cpu::inclusive_scan<foldkit::ReduceOp::sum>(p, n, out.data());
    long double ref = 0;
    for (std::int64_t i = 0; i < n; ++i) ref += p[i];
    const double got = out[static_cast<std::size_t>(n - 1)];
    fk.check = std::fabs(got - static_cast<double>(ref)) <= 1e-3 * std::fabs(static_cast<double>(ref)) ? "ok" : "MISMATCH";
  } catch (const std::exception& e) {
    fk.check = std::string("ERROR ") + e.what();
  }
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(T);
  T* o = out.data();
  std::vector<CpuCall> calls = {
      {[&](const unsigned char* p) {
         copy_ceiling(p, reinterpret_cast<unsigned char*>(o), bytes);
         return static_cast<double>(o[n - 1]);
       },
       Warm::openmp},
      {[&](const unsigned char* p) {
         const T* x = reinterpret_cast<const T*>(p);
         T acc = 0;
         for (std::int64_t i = 0; i < n; ++i) o[i] = acc += x[i];
         return static_cast<double>(o[n - 1]);
       },
       Warm::none},
  };
  const bool time_foldkit = fk.check.rfind("ERROR", 0) != 0;
  if (time_foldkit)
    calls.push_back({[&](const unsigned char* p) {
                       foldkit::cpu::inclusive_scan<foldkit::ReduceOp::sum>(reinterpret_cast<const T*>(p), n, o);
                       return static_cast<double>(o[n - 1]);
                     },
                     Warm::foldkit});
  try {
    const std::vector<CpuTiming> t = time_cpu(opt, pool, calls);
    ceil.median_us = t[0].median_us;
    ceil.batch_us = t[0].mean_us;
    loop.median_us = t[1].median_us;
    loop.batch_us = t[1].mean_us;
    if (time_foldkit) {
      fk.median_us = t[2].median_us;
      fk.batch_us = t[2].mean_us;
      fk.config = "threads: " + t[2].threads;
    }
  } catch (const std::exception& e) {
    fk.check = std::string("ERROR ") + e.what();
  }
  for (Row* r : {&fk, &loop}) {
    r->ceil_median_us = ceil.median_us;
    r->ceil_batch_us = ceil.batch_us;
  }
  return {fk, loop, ceil};
}

}  // namespace

int run_cpu_table(const Options& opt, const char* why) {
  const HostInfo host = query_host();
  // --busy: 2 busy threads per core for the whole suite (stopped when this returns).
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::unique_ptr<BusyLoad> load;
  if (opt.busy) load = std::make_unique<BusyLoad>(2 * cores);
  g_load = load.get();
  struct ClearLoad {
    ~ClearLoad() { g_load = nullptr; }
  } clear_load;
  const std::string load_note = load ? "under load: " + std::to_string(load->size()) + " busy threads" : "";

  Header h;
  h.title = std::string("foldkit-bench: CPU backend (") + why + (load ? ", " + load_note : std::string()) +
            ") -- foldkit::cpu vs a plain loop vs an all-core read ceiling";
  h.device = host.cpu_name;
  h.date = utc_now_iso8601();
  h.command = opt.command_line;
  h.run.commit = source_commit();
  h.run.warmup = 2;
  h.run.reps_median = opt.reps_median;
  h.run.reps_batch = 0;  // the "mean" column is the mean of the timed calls
  h.run.order = std::string("interleaved call by call, rotating; before each call the process is quiet and the call's own threads run") +
                (load ? "; " + load_note : "");
  char buf[256];
  std::snprintf(buf, sizeof buf, "%d OpenMP threads, last-level cache %.0f MiB, %.1f GiB memory available", host.threads,
                host.llc_bytes / 1048576.0, host.avail_bytes / double(1ull << 30));
  h.lines.emplace_back("cpu", buf);
  h.lines.emplace_back("build", FOLDKIT_BENCH_CUDA ? "with the CUDA backend (foldkit-bench --backend cuda for the GPU table)"
                                                   : "CPU only (configured without CUDA)");
  if (load) {
    std::snprintf(buf, sizeof buf,
                  "%d busy threads (2 per core, %d cores; arithmetic spin loops) run for the whole suite; bar: "
                  "foldkit <= 1.5x the loop-1t time",
                  load->size(), cores);
    h.lines.emplace_back("load", buf);
  } else {
    h.lines.emplace_back("load", "none started (idle-machine run; --busy adds 2 busy threads per core)");
  }
  std::snprintf(buf, sizeof buf,
                "steady_clock; inputs rotated beyond the last-level cache; implementations interleaved call by call, "
                "each after the process is quiet and its own threads are started; 2 warm-up rounds; median and mean of %d calls",
                opt.reps_median);
  h.lines.emplace_back("timing", buf);
  h.lines.emplace_back("ratios", "time / ceiling time (> 1: slower than the memory allows); GB/s = bytes read / time");
  print_header(h);

  CsvWriter csv;
  if (!opt.csv_path.empty() && !csv.open(opt.csv_path, h)) return 1;
  Summary summary;
  TableStyle style;
  style.batch_label = "mean";
  style.with_cub = false;
  print_section("Sum (foldkit::cpu::sum; loop-1t: one thread, one accumulator; ceiling: all cores, read only)", style);

  std::vector<std::vector<Row>> cases;
  auto show = [&](std::vector<Row> rows) {
    if (load)
      for (Row& r : rows) r.config += (r.config.empty() ? "" : "; ") + load_note;
    print_case(rows, style);
    for (const Row& r : rows) {
      csv.write(r);
      if (r.impl == "foldkit") {
        summary.add(r);
        summary.add_check(r);
      }
    }
    cases.push_back(std::move(rows));
  };
  for (int k : {20, 22, 24, 26}) show(run_case<float>(opt, host, std::int64_t{1} << k));
  show(run_case<double>(opt, host, std::int64_t{1} << 26));
  show(run_case<std::int32_t>(opt, host, std::int64_t{1} << 26));
  print_section("Inclusive sum scan, f32 (foldkit::cpu::inclusive_scan; loop-1t: one thread; ceiling: all-core "
                "copy; GB/s = bytes read + written / time)",
                style);
  for (int k : {24, 26}) show(run_scan_case(opt, host, std::int64_t{1} << k));
  summary.print(false, false);

  // The bars of issue #20: under load foldkit within 1.5x of the single-thread loop; idle, at
  // >= 95 % of the all-core ceiling. Medians.
  int missed = 0;
  if (load)
    std::printf("  %s: foldkit / loop-1t time (median), bar <= 1.5\n", load_note.c_str());
  else
    std::printf("  idle: foldkit's %% of the all-core ceiling (median), bar >= 95 %%\n");
  for (const auto& rows : cases) {
    const Row* fk = nullptr;
    const Row* loop = nullptr;
    for (const Row& r : rows) {
      if (r.impl == "foldkit") fk = &r;
      if (r.impl == "loop-1t") loop = &r;
    }
    if (!fk) continue;
    const std::string where = fk->op + " " + fk->dtype + " " + pow2_label(fk->n);
    if (load) {
      const double q = loop ? ratio(fk->median_us, loop->median_us) : kNaN;
      const bool ok = q <= 1.5;
      missed += !ok;
      std::printf("    %-18s %8.3f  (%.1f us / %.1f us)  %s\n", where.c_str(), q, fk->median_us,
                  loop ? loop->median_us : kNaN, ok ? "ok" : "MISSED");
    } else {
      const double pct = 100.0 * ratio(fk->ceil_median_us, fk->median_us);
      const bool ok = pct >= 95.0;
      missed += !ok;
      std::printf("    %-18s %7.1f %%  %s\n", where.c_str(), pct, ok ? "ok" : "below");
    }
  }
  std::printf("  %d of %zu cases meet the bar\n", static_cast<int>(cases.size()) - missed, cases.size());
  return summary.failures();
}

}  // namespace fkbench
