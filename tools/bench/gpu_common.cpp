// GpuSession, ceiling measurement and result comparison (see gpu_common.hpp).
#include "gpu_common.hpp"

#include "cub_runner.hpp"
#include "ladder_kernels.hpp"  // launch_copy

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace fkbench {

GpuSession::GpuSession(const Options& opt) {
  info_ = query_gpu();
  FKB_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  plan_.warmup = opt.warmup;
  plan_.reps_median = opt.reps_median;
  plan_.reps_batch = opt.reps_batch;
  plan_.gate = opt.gate;
  if (const char* path = std::getenv("FOLDKIT_BENCH_SAMPLES"); path && *path) {
    plan_.samples = std::fopen(path, "a");
    if (!plan_.samples) throw std::runtime_error(std::string("cannot append to FOLDKIT_BENCH_SAMPLES=") + path);
  }
  // The explicit-workspace form: allocated and zeroed once here, so no timed call allocates.
  ws_.bytes = foldkit::cuda::reduce_workspace_bytes(info_.device);
  FKB_CHECK(cudaMalloc(&ws_.ptr, ws_.bytes ? ws_.bytes : 16));
  foldkit::cuda::init_workspace(ws_, stream_);
  FKB_CHECK(cudaMalloc(&d_out_, 4 * 64));
  FKB_CHECK(cudaMemsetAsync(d_out_, 0, 4 * 64, stream_));
  FKB_CHECK(cudaMalloc(reinterpret_cast<void**>(&d_sink_), sizeof(unsigned)));
  FKB_CHECK(cudaStreamSynchronize(stream_));
}

GpuSession::~GpuSession() {
  if (plan_.samples) std::fclose(plan_.samples);
  if (stream_) cudaStreamSynchronize(stream_);
  if (ws_.ptr) cudaFree(ws_.ptr);
  if (d_out_) cudaFree(d_out_);
  if (d_sink_) cudaFree(d_sink_);
  if (stream_) cudaStreamDestroy(stream_);
}

BestOf best_of(const std::vector<std::pair<std::string, Timing>>& named) {
  BestOf r;
  std::string best_med, best_bat;
  for (const auto& [name, t] : named) {
    if (!std::isnan(t.median_us) && (std::isnan(r.median_us) || t.median_us < r.median_us)) {
      r.median_us = t.median_us;
      best_med = name;
    }
    if (!std::isnan(t.batch_us) && (std::isnan(r.batch_us) || t.batch_us < r.batch_us)) {
      r.batch_us = t.batch_us;
      best_bat = name;
    }
  }
  r.config = best_med == best_bat ? "best: " + best_med : "best median: " + best_med + ", batch: " + best_bat;
  return r;
}

std::vector<Call> copy_ceiling_calls(std::size_t bytes, OutputPool& outs, int sm_count, cudaStream_t s) {
  OutputPool* o = &outs;
  return {
      [o, s, bytes](const void* in) { FKB_CHECK(cudaMemcpyAsync(o->next(), in, bytes, cudaMemcpyDeviceToDevice, s)); },
      [o, s, bytes, sm_count](const void* in) { launch_copy(in, o->next(), bytes, sm_count, s); },
  };
}

std::vector<std::pair<std::string, Timing>> copy_ceiling_named(const Timing& memcpy_t, const Timing& kernel_t) {
  return {{"cudaMemcpyAsync", memcpy_t}, {"16-byte copy kernel", kernel_t}};
}

std::vector<Call> GpuSession::ceiling_calls(std::size_t bytes) {
  std::vector<Call> calls;
  for (const CeilingVariant& v : ceiling_variants())
    calls.push_back([this, bytes, v](const void* in) {
      // The sentinel is a constant the XOR of real data practically never equals.
      launch_read_ceiling(in, bytes, v, info_.sm_count, d_sink_, 0x9e3779b9u, stream_);
    });
  return calls;
}

CeilingResult GpuSession::ceiling_from(const std::vector<Timing>& timings) const {
  CeilingResult r;
  std::vector<std::pair<std::string, Timing>> named;
  const std::vector<CeilingVariant> variants = ceiling_variants();
  for (std::size_t i = 0; i < variants.size() && i < timings.size(); ++i) {
    r.variants.emplace_back(variants[i], timings[i]);
    named.emplace_back(describe(variants[i]), timings[i]);
  }
  const BestOf b = best_of(named);
  r.median_us = b.median_us;
  r.batch_us = b.batch_us;
  r.config = b.config;
  return r;
}

CeilingResult GpuSession::measure_ceiling(std::size_t bytes) { return ceiling_from(time_all(ceiling_calls(bytes))); }

void GpuSession::record(Row& row, const Timing& t) {
  if (!t.error.empty()) {
    row.check = "ERROR " + t.error;
    return;
  }
  row.median_us = t.median_us;
  row.batch_us = t.batch_us;
  if (t.gate_timed_out) row.config += (row.config.empty() ? "" : "; ") + std::string("gate timed out");
}

void GpuSession::read_result(int slot, void* host, std::size_t bytes) {
  FKB_CHECK(cudaMemcpyAsync(host, out(slot), bytes, cudaMemcpyDeviceToHost, stream_));
  FKB_CHECK(cudaStreamSynchronize(stream_));
}

Header GpuSession::make_header(const std::string& title, const Options& opt, const std::string& order) const {
  Header h;
  h.title = title;
  h.device = info_.name;
  h.date = utc_now_iso8601();
  h.command = opt.command_line;
  h.run.commit = source_commit();
  h.run.warmup = plan_.warmup;
  h.run.reps_median = plan_.reps_median;
  h.run.reps_batch = plan_.reps_batch;
  h.run.gate = plan_.gate ? "gated" : "ungated";
  h.run.order = order;
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  char buf[160];
  std::snprintf(buf, sizeof buf, "runtime %d.%d, driver %d.%d, %s", rt / 1000, (rt % 1000) / 10, drv / 1000,
                (drv % 1000) / 10, cub_version().c_str());
  h.lines.emplace_back("gpu", describe(info_));
  h.lines.emplace_back("cuda", buf);
  h.lines.emplace_back("timing", order + "; " + std::to_string(plan_.warmup) + " warm-up calls each; median of " +
                                     std::to_string(plan_.reps_median) + " calls each" +
                                     (plan_.gate ? " (stream gated: the GPU time of one call)"
                                                 : " (not gated: host submission included)"));
  h.lines.emplace_back("batch", "mean of " + std::to_string(plan_.reps_batch) + " back-to-back calls each (" +
                                    std::to_string(kBatchRounds) + " blocks of " +
                                    std::to_string(std::max(1, plan_.reps_batch / kBatchRounds)) +
                                    "); host submission included: below ~2^20 elements it mostly measures how fast "
                                    "the host launches. Lead with the median.");
  std::snprintf(buf, sizeof buf, "inputs rotated over >= %zu MiB (>= 2 copies; each call reads the next), so no call "
                "finds its input in L2", InputPool::kRotateBytes >> 20);
  h.lines.emplace_back("memory", buf);
  h.lines.emplace_back("ratios", "time / other time (< 1: foldkit faster); GB/s = bytes read / time");
  return h;
}

// ---------------------------------------------------------------------------------------------
// Result comparison
// ---------------------------------------------------------------------------------------------
namespace {

template <class V>
std::string show(V v) {
  char buf[64];
  if constexpr (std::is_same_v<V, float>) std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  else if constexpr (std::is_same_v<V, double>) std::snprintf(buf, sizeof buf, "%.17g", v);
  else if constexpr (std::is_signed_v<V>) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else if constexpr (std::is_unsigned_v<V>) std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  else std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(static_cast<float>(v)));  // half, bfloat16
  return buf;
}

template <class V>
bool same_bits(const V& a, const V& b) {
  return std::memcmp(&a, &b, sizeof(V)) == 0;
}

template <class T>
std::string compare_typed(foldkit::ReduceOp op, const void* pa, const void* pb, const char* an, const char* bn) {
  using foldkit::ReduceOp;
  auto mismatch = [&](const std::string& a, const std::string& b) {
    return std::string("MISMATCH ") + an + "=" + a + " " + bn + "=" + b;
  };
  if (op == ReduceOp::sum) {
    using R = foldkit::reduce_result_t<ReduceOp::sum, T>;
    R a, b;
    std::memcpy(&a, pa, sizeof(R));
    std::memcpy(&b, pb, sizeof(R));
    if constexpr (std::is_integral_v<R>) {
      return a == b ? "ok" : mismatch(show(a), show(b));
    } else {
      const double tol = std::is_same_v<R, double> ? 1e-10 : 1e-4;
      const double da = a, db = b;
      const double scale = std::fmax(std::fabs(da), std::fabs(db));
      const bool ok = std::isfinite(da) && std::isfinite(db) && std::fabs(da - db) <= tol * scale;
      return ok ? "ok" : mismatch(show(a), show(b));
    }
  }
  if (op == ReduceOp::max || op == ReduceOp::min) {
    T a, b;
    std::memcpy(&a, pa, sizeof(T));
    std::memcpy(&b, pb, sizeof(T));
    return same_bits(a, b) ? "ok" : mismatch(show(a), show(b));
  }
  if (op == ReduceOp::argmax || op == ReduceOp::argmin) {
    foldkit::ArgResult<T> a, b;
    std::memcpy(&a, pa, sizeof a);
    std::memcpy(&b, pb, sizeof b);
    if (same_bits(a.value, b.value) && a.index == b.index) return "ok";
    return mismatch(show(a.value) + "@" + std::to_string(a.index), show(b.value) + "@" + std::to_string(b.index));
  }
  return "not compared";
}

}  // namespace

std::string compare_results(foldkit::ReduceOp op, foldkit::DType dtype, const void* a, const void* b,
                            const char* a_name, const char* b_name) {
  return foldkit::visit_dtype(dtype, [&](auto tag) {
    return compare_typed<decltype(tag)>(op, a, b, a_name, b_name);
  });
}

std::uint64_t input_seed(foldkit::DType dtype, std::int64_t n) {
  return 0x243f6a8885a308d3ull ^ (static_cast<std::uint64_t>(dtype) << 56) ^ static_cast<std::uint64_t>(n);
}

}  // namespace fkbench
