// The GPU table: foldkit vs cub::DeviceReduce vs the streaming-read ceiling, all in one run.
//
// Part 1, sizes: n = 2^10, 2^12, ..., 2^28: f32 sum, max, argmax; i32 sum; f64 sum.
// Part 2, dtypes: sum of every dtype at 2^26, and of f16 and bf16 at 2^28 as well.
// Every case: one sanity check (foldkit's result against CUB's on the same input), then the
// ceiling's launch shapes, CUB and foldkit timed together, interleaved call by call over the same
// rotated inputs (timing.hpp), so every ratio compares numbers taken in the same minutes.
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <vector>
#include <cstdint>

#include "cub_runner.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "gpu_common.hpp"
#include "suites.hpp"

namespace fkbench {

bool gpu_present() { return foldkit::cuda::device_available(); }

namespace {

using foldkit::DType;
using foldkit::ReduceOp;

struct CaseSpec {
  ReduceOp op;
  DType dtype;
  std::int64_t n;
};

// foldkit through its typed entry point with the explicit workspace: the call a performance-minded
// user makes, with nothing allocated per call.
using FoldkitCall = std::function<void(const void* in, void* out)>;

FoldkitCall make_foldkit_call(const CaseSpec& c, foldkit::cuda::Workspace ws, cudaStream_t s) {
  const std::int64_t n = c.n;
  if (c.op == ReduceOp::sum) {
    return foldkit::visit_dtype(c.dtype, [&](auto tag) -> FoldkitCall {
      using T = decltype(tag);
      using R = foldkit::reduce_result_t<ReduceOp::sum, T>;
      return [=](const void* in, void* out) {
        foldkit::cuda::reduce<ReduceOp::sum, T>(static_cast<const T*>(in), n, static_cast<R*>(out), ws, s);
      };
    });
  }
  if (c.op == ReduceOp::max && c.dtype == DType::f32) {
    return [=](const void* in, void* out) {
      foldkit::cuda::reduce<ReduceOp::max, float>(static_cast<const float*>(in), n, static_cast<float*>(out), ws, s);
    };
  }
  if (c.op == ReduceOp::argmax && c.dtype == DType::f32) {
    return [=](const void* in, void* out) {
      foldkit::cuda::reduce<ReduceOp::argmax, float>(static_cast<const float*>(in), n,
                                                     static_cast<foldkit::ArgResult<float>*>(out), ws, s);
    };
  }
  throw std::runtime_error("foldkit-bench: no foldkit call for this case");
}

std::unique_ptr<CubReduce> make_cub(const CaseSpec& c) {
  if (c.op == ReduceOp::sum) return make_cub_sum(c.dtype, c.n);
  if (c.op == ReduceOp::max && c.dtype == DType::f32) return make_cub_max_f32(c.n);
  if (c.op == ReduceOp::argmax && c.dtype == DType::f32) return make_cub_argmax_f32(c.n);
  throw std::runtime_error("foldkit-bench: no CUB call for this case");
}

class GpuTable {
 public:
  GpuTable(const Options& opt) : opt_(opt), sess_(opt) {}

  int run();

 private:
  std::vector<Row> run_case(const CaseSpec& c);
  void write_ceiling_variants(const CeilingResult& r, const Row& base);
  void show(const std::vector<Row>& rows, bool fresh);
  void print_ceiling_variants() const;

  const Options& opt_;
  GpuSession sess_;
  CsvWriter csv_;
  Summary summary_;
  TableStyle style_;
  std::map<std::size_t, CeilingResult> ceilings_;  // by bytes read: the last case's, for the listing
  std::map<std::tuple<int, int, std::int64_t>, std::vector<Row>> done_;  // by (op, dtype, n)
};

int GpuTable::run() {
  const Header h = sess_.make_header("foldkit-bench: foldkit vs cub::DeviceReduce vs streaming-read ceiling (GPU)", opt_,
                                     "ceiling (7 launch shapes), CUB and foldkit interleaved call by call in every case, shuffled rounds");
  print_header(h);
  if (!opt_.csv_path.empty() && !csv_.open(opt_.csv_path, h)) return 1;

  auto run_group = [&](DType dtype, std::int64_t n, std::initializer_list<ReduceOp> ops) {
    bool prepared = false;
    for (ReduceOp op : ops) {
      const auto key = std::make_tuple(static_cast<int>(op), static_cast<int>(dtype), n);
      if (auto it = done_.find(key); it != done_.end()) {  // already measured in this run
        show(it->second, false);
        continue;
      }
      if (!prepared) {
        sess_.pool().prepare(dtype, n, input_seed(dtype, n), sess_.stream());
        prepared = true;
      }
      const auto rows = run_case({op, dtype, n});
      done_[key] = rows;
      show(rows, true);
    }
  };

  print_section("Full-array reductions by size (f32 sum/max/argmax, i32 sum, f64 sum)", style_);
  for (int k = 10; k <= 28; k += 2) {
    const std::int64_t n = std::int64_t{1} << k;
    run_group(DType::f32, n, {ReduceOp::sum, ReduceOp::max, ReduceOp::argmax});
    run_group(DType::i32, n, {ReduceOp::sum});
    run_group(DType::f64, n, {ReduceOp::sum});
  }

  print_section("Sum of every dtype at 2^26 (and 16-bit floats at 2^28)", style_);
  for (DType t : foldkit::kAllDTypes) run_group(t, std::int64_t{1} << 26, {ReduceOp::sum});
  run_group(DType::f16, std::int64_t{1} << 28, {ReduceOp::sum});
  run_group(DType::bf16, std::int64_t{1} << 28, {ReduceOp::sum});

  print_ceiling_variants();
  summary_.print(true);
  return summary_.failures();
}

// Every launch shape of the ceiling goes to the CSV, so the ceiling's own tuning can be read back.
void GpuTable::write_ceiling_variants(const CeilingResult& r, const Row& base) {
  for (const auto& [v, t] : r.variants) {
    Row vr = base;
    vr.impl = "ceiling-variant";
    vr.op = "read";
    vr.median_us = t.median_us;
    vr.batch_us = t.batch_us;
    vr.config = describe(v);
    csv_.write(vr);
  }
}

std::vector<Row> GpuTable::run_case(const CaseSpec& c) {
  InputPool& pool = sess_.pool();
  cudaStream_t s = sess_.stream();

  Row base;
  base.mode = "gpu";
  base.op = foldkit::op_name(c.op);
  base.dtype = foldkit::dtype_name(c.dtype);
  base.n = c.n;
  base.bytes = static_cast<std::uint64_t>(c.n) * foldkit::dtype_size(c.dtype);
  base.memory = pool.memory_text();
  Row fk = base, cub = base, ceil = base;
  fk.impl = "foldkit";
  cub.impl = "cub";
  ceil.impl = "ceiling";
  ceil.op = "read";

  // 1. Prepare both calls (CUB's temp storage is allocated here, outside any timing).
  FoldkitCall fk_call;
  std::unique_ptr<CubReduce> cub_call;
  try {
    fk_call = make_foldkit_call(c, sess_.workspace(), s);
  } catch (const std::exception& e) {
    fk.check = std::string("ERROR ") + e.what();
  }
  try {
    cub_call = make_cub(c);
    cub.config = cub_call->api();
  } catch (const std::exception& e) {
    cub.check = std::string("ERROR ") + e.what();
  }

  // 2. Sanity check, once per case, on copy 0: foldkit's result must equal CUB's.
  unsigned char r_fk[64] = {}, r_cub[64] = {};
  if (fk_call) {
    try {
      fk_call(pool.copy(0), sess_.out(0));
      FKB_CHECK_LAUNCH("foldkit call");
      sess_.read_result(0, r_fk, sizeof r_fk);
    } catch (const std::exception& e) {
      fk.check = std::string("ERROR ") + e.what();
      fk_call = nullptr;
    }
  }
  if (cub_call) {
    try {
      cub_call->run(pool.copy(0), sess_.out(1), s);
      FKB_CHECK_LAUNCH("CUB call");
      sess_.read_result(1, r_cub, sizeof r_cub);
    } catch (const std::exception& e) {
      cub.check = std::string("ERROR ") + e.what();
      cub_call = nullptr;
    }
  }
  if (fk_call && cub_call) fk.check = compare_results(c.op, c.dtype, r_fk, r_cub, "foldkit", "cub");
  else if (fk_call) fk.check = "not checked (no CUB result)";

  // 3. Time the ceiling's launch shapes, CUB and foldkit together, interleaved call by call.
  std::vector<Call> calls = sess_.ceiling_calls(base.bytes);
  const std::size_t n_ceiling = calls.size();
  const std::size_t cub_at = cub_call ? calls.size() : SIZE_MAX;
  if (cub_call) calls.push_back([&](const void* in) { cub_call->run(in, sess_.out(1), s); });
  const std::size_t fk_at = fk_call ? calls.size() : SIZE_MAX;
  if (fk_call) calls.push_back([&](const void* in) { fk_call(in, sess_.out(0)); });
  sess_.label_samples(base.op + " " + base.dtype + " " + pow2_label(c.n));
  const std::vector<Timing> t = sess_.time_all(calls);
  const CeilingResult cr = sess_.ceiling_from(std::vector<Timing>(t.begin(), t.begin() + n_ceiling));
  ceil.median_us = cr.median_us;
  ceil.batch_us = cr.batch_us;
  ceil.config = cr.config;
  if (cub_call) GpuSession::record(cub, t[cub_at]);
  if (fk_call) GpuSession::record(fk, t[fk_at]);
  write_ceiling_variants(cr, base);
  ceilings_[base.bytes] = cr;

  for (Row* r : {&fk, &cub}) {
    r->ceil_median_us = cr.median_us;
    r->ceil_batch_us = cr.batch_us;
  }
  fk.cub_median_us = cub.median_us;
  fk.cub_batch_us = cub.batch_us;
  return {fk, cub, ceil};
}

void GpuTable::show(const std::vector<Row>& rows, bool fresh) {
  print_case(rows, style_);
  if (!fresh) return;  // a repeat of a case measured above: counted and written once
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

void GpuTable::print_ceiling_variants() const {
  // The large byte counts are where the ceiling is the bandwidth limit proper (ANCHORS.md:
  // 3098 GB/s at 1 GiB for the plain float4 kernel; this one must reach >= 3000).
  for (const auto& [bytes, r] : ceilings_) {
    if (bytes < (std::size_t{1} << 28)) continue;
    std::printf("\n== Read ceiling, each launch shape, %.0f MiB (GB/s; the best is the ceiling) ==\n",
                bytes / 1048576.0);
    for (const auto& [v, t] : r.variants)
      std::printf("  %-16s median %7.0f   batch %7.0f\n", describe(v).c_str(), gbps(bytes, t.median_us),
                  gbps(bytes, t.batch_us));
    if (sess_.info().peak_gbps > 0)
      std::printf("  best batch: %.0f GB/s = %.1f%% of the theoretical %.0f GB/s\n", gbps(bytes, r.batch_us),
                  100.0 * gbps(bytes, r.batch_us) / sess_.info().peak_gbps, sess_.info().peak_gbps);
  }
  std::fflush(stdout);
}

}  // namespace

int run_gpu_table(const Options& opt) {
  GpuTable t(opt);
  return t.run();
}

}  // namespace fkbench
