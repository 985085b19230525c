// `foldkit-bench scan`: foldkit's prefix sums vs cub::DeviceScan vs a copy ceiling, in one run.
//
// Part 1, sizes: f32 and i32 (-> int64) inclusive and exclusive sums at n = 2^10, 2^12, ..., 2^28.
// Part 2, dtypes: f64 and f16 inclusive sums at 2^26.
// Every case: one check (foldkit's output against CUB's on the same input, element by element),
// then the copy ceiling's two copies, CUB and foldkit timed together, interleaved call by call
// over the same rotated inputs, each call writing the next of a rotation of output buffers.
//
// Bytes: a scan reads n input elements and writes n outputs, so its traffic is
// n * (sizeof(T) + sizeof(result)): 8n for f32, 16n for f64, 4n for f16, and 12n for i32, whose
// int64 outputs are twice the input. GB/s and the ceiling use that total. The ceiling copies
// (read + write) / 2 bytes (6n for i32), so it reads and writes exactly as many bytes as the scan.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "foldkit/cuda/scan.hpp"
#include "gpu_common.hpp"
#include "ladder_kernels.hpp"  // launch_scan_check, launch_scan_check_wide: the device-side checks
#include "scan_suite.hpp"
#include "scan_variants.hpp"
#include "suites.hpp"

namespace fkbench {
namespace {

using foldkit::DType;
using foldkit::ReduceOp;

struct ScanCase {
  bool exclusive;
  DType dtype;
  std::int64_t n;
  std::int64_t block_length = 0;  // > 0: a blocked scan (foldkit only)
  bool segmented = false;         // the table's random segments (foldkit only)
};

// The dtype foldkit writes for a sum of dtype (scan_result_t): 32-bit integers widen to 64 bits.
DType result_dtype(DType t) {
  return foldkit::visit_dtype(t, [](auto tag) { return foldkit::dtype_v<foldkit::scan_result_t<ReduceOp::sum, decltype(tag)>>; });
}
std::uint64_t read_bytes(const ScanCase& c) { return static_cast<std::uint64_t>(c.n) * foldkit::dtype_size(c.dtype); }
std::uint64_t write_bytes(const ScanCase& c) {
  return static_cast<std::uint64_t>(c.n) * foldkit::dtype_size(result_dtype(c.dtype));
}

// foldkit through its typed entry points with the explicit workspace (zeroed once, never again):
// the call a performance-minded user makes, with nothing allocated per call. Exclusive sums
// start from 0, as CUB's ExclusiveSum does.
using ScanCall = std::function<void(const void* in, void* out)>;

ScanCall make_foldkit_scan(const ScanCase& c, foldkit::cuda::Workspace ws, const std::int64_t* d_offsets,
                           std::int64_t num_segments, cudaStream_t s) {
  return foldkit::visit_dtype(c.dtype, [&](auto tag) -> ScanCall {
    using T = decltype(tag);
    using R = foldkit::scan_result_t<ReduceOp::sum, T>;
    const std::int64_t n = c.n;
    if (c.block_length > 0) {
      if (c.exclusive) throw std::runtime_error("the table times inclusive blocked scans only");
      const std::int64_t len = c.block_length;
      return [=](const void* in, void* out) {
        foldkit::cuda::inclusive_scan_blocked<ReduceOp::sum, T>(static_cast<const T*>(in), n, static_cast<R*>(out), len,
                                                                ws, s);
      };
    }
    if (c.segmented) {
      if (c.exclusive) throw std::runtime_error("the table times inclusive segmented scans only");
      return [=](const void* in, void* out) {
        foldkit::cuda::inclusive_scan_segmented<ReduceOp::sum, T>(static_cast<const T*>(in), n, static_cast<R*>(out),
                                                                  d_offsets, num_segments, ws, s);
      };
    }
    if (c.exclusive) {
      R zero;
      if constexpr (foldkit::is_16bit_float_v<R>) zero = R(0.0f);
      else zero = R(0);
      return [=](const void* in, void* out) {
        foldkit::cuda::exclusive_scan<ReduceOp::sum, T>(static_cast<const T*>(in), n, static_cast<R*>(out), zero, ws, s);
      };
    }
    return [=](const void* in, void* out) {
      foldkit::cuda::inclusive_scan<ReduceOp::sum, T>(static_cast<const T*>(in), n, static_cast<R*>(out), ws, s);
    };
  });
}

// Relative tolerance of the float check: the two scans add in different orders. f32 prefixes of
// 2^28 values in [0.5, 1.5) differ by ~1e-5 relative at worst; f16 outputs may differ by one half
// ulp (~1e-3) where the float prefixes straddle a rounding boundary.
double check_tolerance(DType t) {
  switch (t) {
    case DType::f64: return 1e-10;
    case DType::f16: case DType::bf16: return 2e-3;
    default: return 1e-4;
  }
}

std::uint64_t copy_bytes(const ScanCase& c) { return (read_bytes(c) + write_bytes(c) + 1) / 2; }

class ScanTable {
 public:
  explicit ScanTable(const Options& opt) : opt_(opt), sess_(opt) {}
  ~ScanTable();
  ScanTable(const ScanTable&) = delete;
  ScanTable& operator=(const ScanTable&) = delete;

  int run();

 private:
  void allocate(const std::vector<ScanCase>& all);
  void prepare_case(const ScanCase& c);
  void run_group(DType dtype, std::int64_t n, std::initializer_list<bool> kinds);
  void run_blocked_and_segmented_case(const ScanCase& c);
  void run_policy_sweep(DType dtype, std::int64_t n);
  std::vector<Row> run_case(const ScanCase& c);
  // The copy ceiling's two copies of `bytes` (cudaMemcpyAsync, the 16-byte copy kernel) as calls
  // for time_all, and the ceiling from their timings (each copy also goes to the CSV).
  std::vector<Call> ceiling_calls(std::uint64_t bytes);
  BestOf ceiling_from(std::uint64_t bytes, const Timing& memcpy_t, const Timing& kernel_t, const std::string& memory);
  void show(const std::vector<Row>& rows);
  std::string memory_text() const { return sess_.pool().memory_text() + "; " + outs_.memory_text(); }

  const Options& opt_;
  GpuSession sess_;
  CsvWriter csv_;
  Summary summary_;
  TableStyle style_;
  foldkit::cuda::Workspace ws_{};
  OutputPool outs_;  // check(0): foldkit's checked output, check(1): CUB's; the rest rotate
  std::int64_t* d_offsets_ = nullptr;  // the segmented case's offsets (num_segments_ + 1)
  std::int64_t num_segments_ = 0;
  void* d_sweep_ws_ = nullptr;  // the policy sweep's workspace (its smallest tiles need more slots)
  std::map<std::uint64_t, BestOf> ceilings_;  // by bytes copied: the last case's, for the listing
};

ScanTable::~ScanTable() {
  cudaStreamSynchronize(sess_.stream());
  if (ws_.ptr) cudaFree(ws_.ptr);
  if (d_offsets_) cudaFree(d_offsets_);
  if (d_sweep_ws_) cudaFree(d_sweep_ws_);
}

// One foldkit workspace for every case (sized for the largest); the output rotation laid out
// for the largest case first, so that later cases reuse its allocation.
void ScanTable::allocate(const std::vector<ScanCase>& all) {
  std::size_t ws_bytes = 0;
  std::uint64_t out_bytes = 0;
  for (const ScanCase& c : all) {
    ws_bytes = std::max(ws_bytes, foldkit::cuda::scan_workspace_bytes(c.n, c.dtype));
    out_bytes = std::max({out_bytes, write_bytes(c), copy_bytes(c)});
  }
  FKB_CHECK(cudaMalloc(&ws_.ptr, ws_bytes ? ws_bytes : 16));
  ws_.bytes = ws_bytes;
  foldkit::cuda::init_scan_workspace(ws_, sess_.stream());
  outs_.prepare(static_cast<std::size_t>(out_bytes));
  FKB_CHECK(cudaStreamSynchronize(sess_.stream()));
}

// Inputs long enough for the copy ceiling to read its (read + written) / 2 bytes from each, and
// output buffers for the larger of the scan's output and the copy.
void ScanTable::prepare_case(const ScanCase& c) {
  sess_.pool().prepare(c.dtype, c.n, input_seed(c.dtype, c.n), sess_.stream(), static_cast<std::size_t>(copy_bytes(c)));
  outs_.prepare(static_cast<std::size_t>(std::max(write_bytes(c), copy_bytes(c))));
}

int ScanTable::run() {
  Header h = sess_.make_header("foldkit-bench scan: foldkit prefix sums vs cub::DeviceScan vs copy ceiling (GPU)", opt_,
                               "copy ceiling (2 copies), CUB and foldkit interleaved call by call in every case, shuffled rounds");
  for (auto& [key, value] : h.lines)
    if (key == "ratios")
      value = "time / other time (< 1: foldkit faster); GB/s = (bytes read + bytes written) / time";
  h.lines.emplace_back("foldkit", "cuda::inclusive_scan / exclusive_scan<sum> (init 0), explicit workspace zeroed once");
  h.lines.emplace_back("cub", "DeviceScan::InclusiveSum / ExclusiveSum; i32 -> int64 and f16 (float accumulator) "
                              "through InclusiveScan / ExclusiveScan, the same types as foldkit");
  h.lines.emplace_back("ceiling", "faster of cudaMemcpyAsync D2D and a 16-byte copy kernel, copying (read + write) / 2 "
                                  "bytes (i32: 4n read + 8n written = 12n, so 6n copied)");
  for (auto& [key, value] : h.lines)
    if (key == "memory")
      value += "; outputs rotated over >= 1 GiB too (each call writes the next buffer), so no call writes into "
               "lines the previous one left in L2";
  print_header(h);
  if (!opt_.csv_path.empty() && !csv_.open(opt_.csv_path, h)) return 1;

  std::vector<ScanCase> all;
  for (int k = 10; k <= 28; k += 2)
    for (DType t : {DType::f32, DType::i32})
      for (bool ex : {false, true}) all.push_back({ex, t, std::int64_t{1} << k});
  all.push_back({false, DType::f64, std::int64_t{1} << 26});
  all.push_back({false, DType::f16, std::int64_t{1} << 26});
  // Issue #4's blocked bar: seed 004's experiment, 2^30 int32 (-> int64) in blocks of 256, 1024,
  // 4096 (--quick: 2^28). Segmented bar: 2^20 segments of random lengths 0..512 (mean 256), f32.
  const std::int64_t blocked_n = std::int64_t{1} << (opt_.quick ? 28 : 30);
  const std::vector<std::int64_t> block_lengths = {256, 1024, 4096};
  for (std::int64_t len : block_lengths) all.push_back({false, DType::i32, blocked_n, len});
  {
    std::vector<std::int64_t> offsets{0};
    std::uint64_t x = 0x9E3779B97F4A7C15ull;  // fixed: the same segments in every run
    for (int seg = 0; seg < (1 << 20); ++seg) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      offsets.push_back(offsets.back() + static_cast<std::int64_t>(x % 513));
    }
    num_segments_ = static_cast<std::int64_t>(offsets.size()) - 1;
    FKB_CHECK(cudaMalloc(reinterpret_cast<void**>(&d_offsets_), offsets.size() * sizeof(std::int64_t)));
    FKB_CHECK(cudaMemcpy(d_offsets_, offsets.data(), offsets.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
    all.push_back({false, DType::f32, offsets.back(), 0, true});
  }
  // With --sweep, blocked i32 -> i64 sums of 4096-element blocks at 2^26 and 2^28: every tile
  // starts a block, so no tile looks back. Beside the whole-array i32 sums they show what the
  // look-back costs the widening scan (its I/O and tiles are the same).
  std::vector<ScanCase> no_lookback;
  if (opt_.scan_sweep)
    for (int k : {26, 28}) no_lookback.push_back({false, DType::i32, std::int64_t{1} << k, 4096});
  std::vector<ScanCase> sized = all;
  sized.insert(sized.end(), no_lookback.begin(), no_lookback.end());
  allocate(sized);

  print_section("Inclusive and exclusive sum by size (f32; i32 -> i64)", style_);
  for (int k = 10; k <= 28; k += 2) {
    const std::int64_t n = std::int64_t{1} << k;
    run_group(DType::f32, n, {false, true});
    run_group(DType::i32, n, {false, true});
  }
  print_section("Inclusive sum of f64 and f16 at 2^26", style_);
  run_group(DType::f64, std::int64_t{1} << 26, {false});
  run_group(DType::f16, std::int64_t{1} << 26, {false});
  print_section("Blocked sums (i32 -> i64; seed 004) and a segmented sum (f32, 2^20 segments of 0..512)", style_);
  for (std::size_t k = 0; k < block_lengths.size(); ++k) run_blocked_and_segmented_case(all[all.size() - 4 + k]);
  run_blocked_and_segmented_case(all.back());
  if (opt_.scan_sweep) {
    print_section("Blocked i32 -> i64 sums, 4096-element blocks (no tile looks back): the whole-array sums' I/O alone",
                  style_);
    for (const ScanCase& c : no_lookback) run_blocked_and_segmented_case(c);
    print_section("Policy sweep of the whole-array scan (inclusive sums; every variant checked against CUB)", style_);
    for (DType t : {DType::f32, DType::i32})
      for (int k : {20, 22, 24, 26, 28}) run_policy_sweep(t, std::int64_t{1} << k);
  }
  if (!ceilings_.empty()) {
    std::printf("\n== Copy ceilings (bytes copied; the scan moves twice that) ==\n");
    for (const auto& [bytes, c] : ceilings_)
      std::printf("  %9.1f MB  median %9.2f us  batch %9.2f us  %s\n", bytes / 1e6, c.median_us, c.batch_us,
                  c.config.c_str());
  }
  summary_.print(true);
  return summary_.failures();
}

void ScanTable::run_group(DType dtype, std::int64_t n, std::initializer_list<bool> kinds) {
  prepare_case({false, dtype, n});
  for (bool exclusive : kinds) show(run_case({exclusive, dtype, n}));
}

// A blocked or segmented case: foldkit beside the copy ceiling (CUB has neither). Blocked
// outputs are checked on the device against a serial per-block sum; segmented ones are checked
// by the test suite, not here.
void ScanTable::run_blocked_and_segmented_case(const ScanCase& c) {
  prepare_case(c);
  show(run_case(c));
}

// Every variant of scan_variants(dtype) at n: checked once against CUB's output, then timed
// with CUB and the copy ceiling, all interleaved.
void ScanTable::run_policy_sweep(DType dtype, std::int64_t n) {
  const std::vector<ScanVariant> variants = scan_variants(dtype);
  if (variants.empty()) return;
  cudaStream_t s = sess_.stream();
  const ScanCase c{false, dtype, n};
  prepare_case(c);
  InputPool& pool = sess_.pool();
  if (d_sweep_ws_ == nullptr) {
    const std::size_t bytes = scan_variant_workspace_bytes(dtype, std::int64_t{1} << 28);
    FKB_CHECK(cudaMalloc(&d_sweep_ws_, bytes));
    FKB_CHECK(cudaMemsetAsync(d_sweep_ws_, 0, bytes, s));
  }
  const DType out_dtype = result_dtype(dtype);
  const std::size_t out_bytes = static_cast<std::size_t>(write_bytes(c));
  std::unique_ptr<CubReduce> cub_call = make_cub_scan_sum(false, dtype, n);
  FKB_CHECK(cudaMemsetAsync(outs_.check(1), 0xFF, out_bytes, s));
  cub_call->run(pool.copy(0), outs_.check(1), s);
  FKB_CHECK_LAUNCH("CUB scan");
  Row cub;
  cub.mode = "gpu";
  cub.impl = "cub";
  cub.op = "incl_sum";
  cub.dtype = foldkit::dtype_name(dtype);
  cub.n = n;
  cub.bytes = read_bytes(c) + write_bytes(c);
  cub.memory = memory_text();
  cub.config = cub_call->api();
  std::vector<Row> rows;
  std::vector<Call> calls = ceiling_calls(copy_bytes(c));
  calls.push_back([&](const void* in) { cub_call->run(in, outs_.next(), s); });
  std::vector<std::size_t> at(variants.size(), SIZE_MAX);  // where each checked variant's call is
  for (std::size_t k = 0; k < variants.size(); ++k) {
    const ScanVariant& v = variants[k];
    Row r = cub;
    r.impl = "variant";
    r.config = v.name;
    try {
      FKB_CHECK(cudaMemsetAsync(outs_.check(0), 0xFF, out_bytes, s));
      v.run(pool.copy(0), outs_.check(0), n, d_sweep_ws_, s);
      FKB_CHECK_LAUNCH(v.name.c_str());
      const ScanComparison cmp = compare_scan_outputs(out_dtype, outs_.check(0), outs_.check(1),
                                                      static_cast<std::size_t>(n), check_tolerance(out_dtype), s);
      r.check = cmp.mismatches == 0 ? "ok" : "MISMATCH " + std::to_string(cmp.mismatches) + " outputs differ from CUB's";
      at[k] = calls.size();
      calls.push_back([&, k](const void* in) { variants[k].run(in, outs_.next(), n, d_sweep_ws_, s); });
    } catch (const std::exception& e) {
      r.check = std::string("ERROR ") + e.what();
    }
    rows.push_back(r);
  }
  const std::vector<Timing> t = sess_.time_all(calls);
  const BestOf cr = ceiling_from(copy_bytes(c), t[0], t[1], cub.memory);
  GpuSession::record(cub, t[2]);
  for (std::size_t k = 0; k < variants.size(); ++k) {
    if (at[k] != SIZE_MAX) GpuSession::record(rows[k], t[at[k]]);
    rows[k].cub_median_us = cub.median_us;
    rows[k].cub_batch_us = cub.batch_us;
  }
  Row ceil = cub;
  ceil.impl = "ceiling";
  ceil.op = "copy";
  ceil.config = cr.config;
  ceil.median_us = cr.median_us;
  ceil.batch_us = cr.batch_us;
  for (Row& r : rows) {
    r.ceil_median_us = cr.median_us;
    r.ceil_batch_us = cr.batch_us;
  }
  cub.ceil_median_us = cr.median_us;
  cub.ceil_batch_us = cr.batch_us;
  rows.push_back(cub);
  rows.push_back(ceil);
  print_case(rows, style_);
  for (const Row& r : rows) {
    csv_.write(r);
    if (check_failed(r)) summary_.add_check(r);
  }
}

std::vector<Call> ScanTable::ceiling_calls(std::uint64_t copy_bytes) {
  return copy_ceiling_calls(static_cast<std::size_t>(copy_bytes), outs_, sess_.info().sm_count, sess_.stream());
}

BestOf ScanTable::ceiling_from(std::uint64_t copy_bytes, const Timing& memcpy_t, const Timing& kernel_t,
                               const std::string& memory) {
  const std::vector<std::pair<std::string, Timing>> named = copy_ceiling_named(memcpy_t, kernel_t);
  for (const auto& [name, t] : named) {
    Row v;  // every copy goes to the CSV
    v.mode = "gpu";
    v.impl = "ceiling-variant";
    v.op = "copy";
    v.dtype = "u8";
    v.n = static_cast<std::int64_t>(copy_bytes);
    v.bytes = 2 * copy_bytes;
    v.memory = memory;
    GpuSession::record(v, t);
    v.config = name;
    csv_.write(v);
  }
  BestOf c = best_of(named);
  char buf[64];
  std::snprintf(buf, sizeof buf, "copy %.1f MB; ", copy_bytes / 1e6);
  c.config = buf + c.config;
  ceilings_[copy_bytes] = c;
  return c;
}

std::vector<Row> ScanTable::run_case(const ScanCase& c) {
  InputPool& pool = sess_.pool();
  cudaStream_t s = sess_.stream();
  const DType out_dtype = result_dtype(c.dtype);

  Row base;
  base.mode = "gpu";
  base.op = c.exclusive ? "excl_sum" : "incl_sum";
  if (c.block_length > 0) base.op = "blocked_incl_sum/" + std::to_string(c.block_length);
  if (c.segmented) base.op = "segmented_incl_sum/" + std::to_string(num_segments_);
  base.dtype = foldkit::dtype_name(c.dtype);
  base.n = c.n;
  base.bytes = read_bytes(c) + write_bytes(c);
  base.memory = memory_text();
  Row fk = base, cub = base, ceil = base;
  fk.impl = "foldkit";
  cub.impl = "cub";
  ceil.impl = "ceiling";
  ceil.op = "copy";
  if (out_dtype != c.dtype) fk.config = std::string("-> ") + foldkit::dtype_name(out_dtype);

  // 1. Prepare both calls (CUB's temp storage is allocated here, outside any timing).
  ScanCall fk_call;
  std::unique_ptr<CubReduce> cub_call;
  try {
    fk_call = make_foldkit_scan(c, ws_, d_offsets_, num_segments_, s);
  } catch (const std::exception& e) {
    fk.check = std::string("ERROR ") + e.what();
  }
  const bool whole = c.block_length == 0 && !c.segmented;
  if (whole) {
    try {
      cub_call = make_cub_scan_sum(c.exclusive, c.dtype, c.n);
      cub.config = cub_call->api();
    } catch (const std::exception& e) {
      cub.check = std::string("ERROR ") + e.what();
    }
  } else {
    cub.check = "n/a";
  }

  // 2. Check, once per case, on copy 0: both outputs poisoned first (0xFF: NaN, or -1), then
  //    foldkit's compared with CUB's element by element.
  const std::size_t out_bytes = static_cast<std::size_t>(write_bytes(c));
  if (fk_call) {
    try {
      FKB_CHECK(cudaMemsetAsync(outs_.check(0), 0xFF, out_bytes, s));
      fk_call(pool.copy(0), outs_.check(0));
      FKB_CHECK_LAUNCH("foldkit scan");
      FKB_CHECK(cudaStreamSynchronize(s));
    } catch (const std::exception& e) {
      fk.check = std::string("ERROR ") + e.what();
      fk_call = nullptr;
    }
  }
  if (cub_call) {
    try {
      FKB_CHECK(cudaMemsetAsync(outs_.check(1), 0xFF, out_bytes, s));
      cub_call->run(pool.copy(0), outs_.check(1), s);
      FKB_CHECK_LAUNCH("CUB scan");
      FKB_CHECK(cudaStreamSynchronize(s));
    } catch (const std::exception& e) {
      cub.check = std::string("ERROR ") + e.what();
      cub_call = nullptr;
    }
  }
  if (fk_call && cub_call) {
    const bool is_float = foldkit::visit_dtype(out_dtype, [](auto tag) { return foldkit::is_floating_v<decltype(tag)>; });
    const ScanComparison cmp =
        compare_scan_outputs(out_dtype, outs_.check(0), outs_.check(1), static_cast<std::size_t>(c.n), check_tolerance(out_dtype), s);
    char note[96];
    if (is_float) std::snprintf(note, sizeof note, "max rel err vs CUB %.1e", cmp.max_rel_err);
    else std::snprintf(note, sizeof note, "exact");
    fk.config += (fk.config.empty() ? "" : "; ") + std::string(note);
    if (cmp.mismatches == 0) {
      fk.check = "ok";
    } else {
      char buf[160];
      std::snprintf(buf, sizeof buf, "MISMATCH %llu of %lld outputs differ from CUB's (first at %llu; max rel err %.2e)",
                    static_cast<unsigned long long>(cmp.mismatches), static_cast<long long>(c.n),
                    static_cast<unsigned long long>(cmp.first_mismatch), cmp.max_rel_err);
      fk.check = buf;
    }
  } else if (fk_call && c.block_length > 0 && (c.dtype == DType::i32 || c.dtype == DType::f32)) {
    auto* counters = static_cast<unsigned long long*>(outs_.check(1));  // free in blocked cases
    const unsigned long long init[2] = {0, ~0ull};
    FKB_CHECK(cudaMemcpyAsync(counters, init, sizeof init, cudaMemcpyHostToDevice, s));
    const auto len = static_cast<std::size_t>(c.block_length);
    if (c.dtype == DType::i32) launch_scan_check_wide(pool.copy(0), outs_.check(0), static_cast<std::size_t>(c.n), len, counters, s);
    else launch_scan_check(false, pool.copy(0), outs_.check(0), static_cast<std::size_t>(c.n), len, counters, s);
    unsigned long long res[2];
    FKB_CHECK(cudaMemcpyAsync(res, counters, sizeof res, cudaMemcpyDeviceToHost, s));
    FKB_CHECK(cudaStreamSynchronize(s));
    fk.check = res[0] == 0 ? "ok" : "WRONG: " + std::to_string(res[0]) + " bad elements, the first at index " +
                                         std::to_string(res[1]);
  } else if (fk_call) {
    fk.check = c.segmented ? "not checked here (tests check segmented scans)" : "not checked (no CUB result)";
  }

  // 3. Time the two copies, CUB and foldkit together, interleaved call by call, each call
  //    writing the next output buffer of the rotation.
  std::vector<Call> calls = ceiling_calls(copy_bytes(c));
  const std::size_t cub_at = cub_call ? calls.size() : SIZE_MAX;
  if (cub_call) calls.push_back([&](const void* in) { cub_call->run(in, outs_.next(), s); });
  const std::size_t fk_at = fk_call ? calls.size() : SIZE_MAX;
  if (fk_call) calls.push_back([&](const void* in) { fk_call(in, outs_.next()); });
  sess_.label_samples(base.op + " " + base.dtype + " " + pow2_label(c.n));
  const std::vector<Timing> t = sess_.time_all(calls);
  const BestOf cr = ceiling_from(copy_bytes(c), t[0], t[1], base.memory);
  ceil.median_us = cr.median_us;
  ceil.batch_us = cr.batch_us;
  ceil.config = cr.config;
  if (cub_call) GpuSession::record(cub, t[cub_at]);
  if (fk_call) GpuSession::record(fk, t[fk_at]);

  for (Row* r : {&fk, &cub}) {
    r->ceil_median_us = cr.median_us;
    r->ceil_batch_us = cr.batch_us;
  }
  fk.cub_median_us = cub.median_us;
  fk.cub_batch_us = cub.batch_us;
  return {fk, cub, ceil};
}

void ScanTable::show(const std::vector<Row>& rows) {
  print_case(rows, style_);
  for (const Row& r : rows) {
    csv_.write(r);
    if (r.impl == "foldkit") {
      summary_.add(r);
      summary_.add_check(r);
    } else if (check_failed(r)) {
      summary_.add_check(r);
    }
  }
}

}  // namespace

int run_scan_table(const Options& opt) {
  ScanTable t(opt);
  return t.run();
}

}  // namespace fkbench
