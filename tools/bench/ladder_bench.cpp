// LadderBench (see ladder_bench.hpp).
#include "ladder_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>

#include "ceiling_kernel.hpp"
#include "cub_runner.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/scan.hpp"
#include "ladder_kernels.hpp"

namespace fkbench {
namespace {

// The bench's float data are positive, in [0.5, 1.5) (fill_random). A correct float sum of them
// errs by about sqrt(h) * 2^-24 relative, h being its longest chain of dependent adds: ~1.2e-4
// for a single thread over 2^22 elements (Serial). 1e-3 leaves room for that and still catches
// a rung that loses or doubles more than ~0.1% of the input. Exact checks belong to
// foldkit_ladder_tests; this one guards the table against a rung that is plainly wrong.
constexpr double kFloatRelTol = 1e-3;
// Rungs that add floats with atomics into ONE float (seed 000's SinglePassAtomic: one atomic per
// thread) also carry a rounding BIAS: each add of a ~100-element partial onto a total of ~2^28
// rounds to the total's ulp (32) in the same direction for similar partials, so the error grows
// with the number of atomics (measured: 0.9 % at 2^28 with 2.2 M threads). That is the rung's
// nature, not a bug; such rungs are held to 5 %, which still catches lost or doubled blocks.
constexpr double kFloatAtomicRelTol = 5e-2;
constexpr std::size_t kScratchBytes = 256;

std::string format(const char* f, long long a, long long b) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

}  // namespace

foldkit::DType dtype_of(Element e) { return e == Element::i32 ? foldkit::DType::i32 : foldkit::DType::f32; }
bool is_scan(const Variant& v) { return v.algorithm == Algorithm::blocked_inclusive_scan; }

LadderBench::LadderBench(const Options& opt) : sess_(opt) {
  FKB_CHECK(cudaMalloc(&scratch_, kScratchBytes));
}

LadderBench::~LadderBench() {
  cudaStreamSynchronize(sess_.stream());  // destructors do not throw: errors are ignored here
  if (ws_) cudaFree(ws_);
  if (out_) cudaFree(out_);
  if (scratch_) cudaFree(scratch_);
}

void* LadderBench::grow(void*& ptr, std::size_t& have, std::size_t need) {
  need = std::max<std::size_t>(need, 256);
  if (need > have) {
    FKB_CHECK(cudaStreamSynchronize(sess_.stream()));
    if (ptr) FKB_CHECK(cudaFree(ptr));
    ptr = nullptr;
    have = 0;
    FKB_CHECK(cudaMalloc(&ptr, need));
    have = need;
  }
  return ptr;
}

std::uint64_t LadderBench::bytes_moved() const { return static_cast<std::uint64_t>(n_) * 4 * (scan_ ? 2 : 1); }

bool LadderBench::l2_resident(bool same_buffer) const {
  return same_buffer && static_cast<std::size_t>(n_) * 4 < sess_.info().l2_bytes;
}

std::string LadderBench::memory_text(bool same_buffer) const {
  std::string m = same_buffer ? std::string("one input reused") + (l2_resident(true) ? " (L2-resident)" : "")
                              : sess_.pool().memory_text();
  return scan_ ? m + "; one output buffer" : m;
}

bool LadderBench::prepare(Element e, std::int64_t n, bool scan) {
  const std::size_t bytes = static_cast<std::size_t>(n) * 4;
  const std::size_t copies = std::max<std::size_t>(2, (InputPool::kRotateBytes + bytes - 1) / bytes);
  const std::size_t need = copies * ((bytes + 255) / 256 * 256) + (scan ? bytes : 0);
  std::size_t free_b = 0, total_b = 0;
  FKB_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t usable = free_b + sess_.pool().footprint() + out_have_;
  if (need > usable) {
    std::printf("   skipped: n = %lld needs %.1f GiB of inputs and outputs, the GPU has %.1f GiB free\n",
                static_cast<long long>(n), need / 1073741824.0, usable / 1073741824.0);
    return false;
  }
  element_ = e;
  n_ = n;
  scan_ = scan;
  ws_key_.clear();
  cudaStream_t s = sess_.stream();
  sess_.pool().prepare(dtype_of(e), n, input_seed(dtype_of(e), n), s);
  // Scans: room for an int64 output too (foldkit's int32 sum scan widens; its row writes there).
  grow(out_, out_have_, scan ? 2 * bytes : 4);
  if (!scan) {
    FKB_CHECK(cudaMemsetAsync(scratch_, 0, 8, s));
    launch_reference_sum(e == Element::i32, sess_.pool().copy(0), bytes / 4, scratch_, s);
    unsigned char host[8];
    FKB_CHECK(cudaMemcpyAsync(host, scratch_, 8, cudaMemcpyDeviceToHost, s));
    FKB_CHECK(cudaStreamSynchronize(s));
    std::memcpy(e == Element::i32 ? static_cast<void*>(&ref_i64_) : static_cast<void*>(&ref_f64_), host, 8);
  }
  return true;
}

Measured LadderBench::time(const std::function<void(const void*)>& f, bool same_buffer, const TimingPlan* plan) {
  Measured m;
  InputPool& pool = sess_.pool();
  cudaStream_t s = sess_.stream();
  const void* fixed = pool.copy(0);
  // The first call alone, to know whether the full plan would take too long.
  cudaEvent_t a = nullptr, b = nullptr;
  FKB_CHECK(cudaEventCreate(&a));
  FKB_CHECK(cudaEventCreate(&b));
  float ms = 0;
  try {
    FKB_CHECK(cudaEventRecord(a, s));
    f(same_buffer ? fixed : pool.next());
    FKB_CHECK_LAUNCH("first call");
    FKB_CHECK(cudaEventRecord(b, s));
    FKB_CHECK(cudaEventSynchronize(b));
    FKB_CHECK(cudaEventElapsedTime(&ms, a, b));
  } catch (...) {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    throw;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  m.first_us = 1e3 * static_cast<double>(ms);

  TimingPlan p = plan ? *plan : sess_.plan();
  if (m.first_us > kSlowCallUs) {
    p.warmup = 0;  // the first call was the warm-up
    p.reps_median = 3;
    p.reps_batch = std::min(p.reps_batch, 3);
    m.note = "n=3";
  }
  m.t = sess_.time([&](const void* in) { f(same_buffer ? fixed : in); }, p);
  if (m.t.gate_timed_out) m.note += std::string(m.note.empty() ? "" : "; ") + "gate timed out";
  return m;
}

LadderRow LadderBench::ceiling(bool same_buffer) {
  const std::string key = std::to_string(n_) + (scan_ ? "s" : "r") + (same_buffer ? "same" : "rot");
  if (auto it = ceilings_.find(key); it != ceilings_.end()) return it->second;
  LadderRow r;
  r.variant = "ceiling";
  cudaStream_t s = sess_.stream();
  const std::size_t bytes = static_cast<std::size_t>(n_) * 4;
  auto consider = [&](const Measured& m, const std::string& what) {
    if (std::isnan(r.median_us) || m.t.median_us < r.median_us) {
      r.median_us = m.t.median_us;
      r.batch_us = m.t.batch_us;
      r.shape = what;
    }
  };
  if (scan_) {  // read + write the same bytes: the two ways to copy them, the faster wins
    consider(time([&](const void* in) { FKB_CHECK(cudaMemcpyAsync(out_, in, bytes, cudaMemcpyDeviceToDevice, s)); },
                  same_buffer),
             "copy: cudaMemcpyAsync");
    consider(time([&](const void* in) { launch_copy(in, out_, bytes, sess_.info().sm_count, s); }, same_buffer),
             "copy: 16-byte kernel");
  } else {
    auto* sink = static_cast<unsigned*>(scratch_) + 16;
    for (const CeilingVariant& v : ceiling_variants())
      consider(time([&](const void* in) { launch_read_ceiling(in, bytes, v, sess_.info().sm_count, sink, 0x9e3779b9u, s); },
                    same_buffer),
               "read: " + describe(v));
  }
  r.ceiling_us = r.median_us;
  return ceilings_.emplace(key, r).first->second;
}

void LadderBench::launch(const Variant& v, const Shape& s, const void* in) {
  const std::string key = v.full_name() + "|" + shape_label(s) + "|" + std::to_string(n_);
  if (key != ws_key_) {
    const std::size_t bytes = std::max<std::size_t>(256, v.workspace_bytes(static_cast<std::size_t>(n_), s));
    grow(ws_, ws_have_, bytes);
    FKB_CHECK(cudaMemsetAsync(ws_, 0, bytes, sess_.stream()));  // zeroed once; the rung keeps it so
    ws_key_ = key;
  }
  v.launch(in, static_cast<std::size_t>(n_), out_, ws_, s, sess_.stream());
}

std::string LadderBench::check_reduce_result(const void* host, bool wide, bool float_atomics) const {
  if (element_ == Element::i32) {
    long long got = 0;
    if (wide) {
      std::memcpy(&got, host, 8);
      if (got == ref_i64_) return "ok";
      return format("WRONG: %lld, reference %lld", got, ref_i64_);
    }
    std::int32_t g32;
    std::memcpy(&g32, host, 4);
    if (static_cast<std::uint32_t>(g32) == static_cast<std::uint32_t>(static_cast<unsigned long long>(ref_i64_)))
      return "ok";
    return format("WRONG: %lld, reference %lld (compared modulo 2^32)", g32, ref_i64_);
  }
  float got;
  std::memcpy(&got, host, 4);
  const double tol = float_atomics ? kFloatAtomicRelTol : kFloatRelTol;
  if (std::isfinite(got) && std::fabs(got - ref_f64_) <= tol * std::fabs(ref_f64_)) return "ok";
  char buf[160];
  std::snprintf(buf, sizeof buf, "WRONG: %.9g, reference %.9g (tolerance %.0e relative)", static_cast<double>(got),
                ref_f64_, tol);
  return buf;
}

std::string LadderBench::check_scan_output(const void* d_out, std::size_t tile, bool wide_int_output) {
  cudaStream_t s = sess_.stream();
  auto* counters = static_cast<unsigned long long*>(scratch_);
  const unsigned long long init[2] = {0, ~0ull};
  FKB_CHECK(cudaMemcpyAsync(counters, init, sizeof init, cudaMemcpyHostToDevice, s));
  if (wide_int_output)
    launch_scan_check_wide(sess_.pool().copy(0), d_out, static_cast<std::size_t>(n_), tile, counters, s);
  else
    launch_scan_check(element_ == Element::i32, sess_.pool().copy(0), d_out, static_cast<std::size_t>(n_), tile,
                      counters, s);
  unsigned long long res[2];
  FKB_CHECK(cudaMemcpyAsync(res, counters, sizeof res, cudaMemcpyDeviceToHost, s));
  FKB_CHECK(cudaStreamSynchronize(s));
  if (res[0] == 0) return "ok";
  return format("WRONG: %lld bad elements, the first at index %lld", static_cast<long long>(res[0]),
                static_cast<long long>(res[1]));
}

std::string LadderBench::check(const Variant& v, const Shape& s) {
  try {
    cudaStream_t st = sess_.stream();
    const std::size_t out_bytes = scan_ ? static_cast<std::size_t>(n_) * 4 : 4;
    FKB_CHECK(cudaMemsetAsync(out_, 0xFF, out_bytes, st));  // poison: NaN / -1
    launch(v, s, sess_.pool().copy(0));
    FKB_CHECK_LAUNCH(v.full_name().c_str());
    if (scan_) return check_scan_output(out_, v.tile_elements(s));
    unsigned char host[4];
    FKB_CHECK(cudaMemcpyAsync(host, out_, 4, cudaMemcpyDeviceToHost, st));
    FKB_CHECK(cudaStreamSynchronize(st));
    return check_reduce_result(host, false, !v.deterministic);
  } catch (const std::exception& e) {
    return std::string("ERROR ") + e.what();
  }
}

LadderRow LadderBench::foldkit_row(bool same_buffer) {
  LadderRow r;
  r.variant = "foldkit";
  if (scan_) return foldkit_scan_row(same_buffer);
  r.shape = "cuda::reduce<sum>";
  cudaStream_t s = sess_.stream();
  const foldkit::cuda::Workspace ws = sess_.workspace();
  void* out = sess_.out(0);
  const std::int64_t n = n_;
  std::function<void(const void*)> call;
  if (element_ == Element::i32)  // the int32 sum widens to int64 (foldkit's result type)
    call = [=](const void* in) {
      foldkit::cuda::reduce<foldkit::ReduceOp::sum, std::int32_t>(static_cast<const std::int32_t*>(in), n,
                                                                   static_cast<std::int64_t*>(out), ws, s);
    };
  else
    call = [=](const void* in) {
      foldkit::cuda::reduce<foldkit::ReduceOp::sum, float>(static_cast<const float*>(in), n,
                                                           static_cast<float*>(out), ws, s);
    };
  try {
    FKB_CHECK(cudaMemsetAsync(out, 0xFF, 8, s));
    call(sess_.pool().copy(0));
    unsigned char host[8];
    sess_.read_result(0, host, sizeof host);
    r.check = check_reduce_result(host, element_ == Element::i32, false);
    const Measured m = time(call, same_buffer);
    r.median_us = m.t.median_us;
    r.batch_us = m.t.batch_us;
    r.note = m.note;
  } catch (const std::exception& e) {
    r.check = std::string("ERROR ") + e.what();
  }
  return r;
}

// foldkit's blocked inclusive sum (cuda/scan.hpp: inclusive_scan_blocked), the production path
// for what the seed's kernels compute: independent scans of fixed-length blocks, here 1024
// elements (the rungs' own block lengths range from 256 to 1024). int32 sums widen to int64, so
// this row writes twice the bytes of the others (noted; GB/s counts the table's bytes).
LadderRow LadderBench::foldkit_scan_row(bool same_buffer) {
  LadderRow r;
  r.variant = "foldkit";
  cudaStream_t s = sess_.stream();
  const std::int64_t n = n_;
  void* out = out_;
  const bool is_int = element_ == Element::i32;
  constexpr std::int64_t kBlock = 1024;
  r.shape = is_int ? "cuda::inclusive_scan_blocked<sum>/1024 i32->i64" : "cuda::inclusive_scan_blocked<sum>/1024";
  std::function<void(const void*)> call;
  if (is_int)
    call = [=](const void* in) {
      foldkit::cuda::inclusive_scan_blocked<foldkit::ReduceOp::sum, std::int32_t>(
          static_cast<const std::int32_t*>(in), n, static_cast<std::int64_t*>(out), kBlock, s);
    };
  else
    call = [=](const void* in) {
      foldkit::cuda::inclusive_scan_blocked<foldkit::ReduceOp::sum, float>(static_cast<const float*>(in), n,
                                                                           static_cast<float*>(out), kBlock, s);
    };
  try {
    FKB_CHECK(cudaMemsetAsync(out, 0xFF, static_cast<std::size_t>(n) * (is_int ? 8 : 4), s));
    call(sess_.pool().copy(0));
    FKB_CHECK_LAUNCH("foldkit inclusive_scan_blocked");
    r.check = check_scan_output(out, static_cast<std::size_t>(kBlock), is_int);
    const Measured m = time(call, same_buffer);
    r.median_us = m.t.median_us;
    r.batch_us = m.t.batch_us;
    r.note = std::string("blocks of 1024") + (is_int ? "; writes int64 (1.5x the bytes)" : "");
    if (!m.note.empty()) r.note += "; " + m.note;
  } catch (const std::exception& e) {
    r.check = std::string("ERROR ") + e.what();
  }
  return r;
}

LadderRow LadderBench::cub_row(bool same_buffer) {
  LadderRow r;
  r.variant = "cub";
  cudaStream_t s = sess_.stream();
  try {
    std::unique_ptr<CubReduce> cub =
        scan_ ? make_cub_inclusive_sum(dtype_of(element_), n_) : make_cub_sum(dtype_of(element_), n_);
    r.shape = cub->api();
    void* out = scan_ ? out_ : sess_.out(1);
    FKB_CHECK(cudaMemsetAsync(out, 0xFF, scan_ ? static_cast<std::size_t>(n_) * 4 : 8, s));
    cub->run(sess_.pool().copy(0), out, s);
    FKB_CHECK_LAUNCH("CUB");
    if (scan_) {
      r.check = check_scan_output(out, static_cast<std::size_t>(n_));  // one tile: the whole array
      r.note = "full scan across the whole array: more work than a blocked scan, same bytes";
    } else {
      unsigned char host[8];
      sess_.read_result(1, host, sizeof host);
      r.check = check_reduce_result(host, element_ == Element::i32, false);
    }
    const Measured m = time([&](const void* in) { cub->run(in, out, s); }, same_buffer);
    r.median_us = m.t.median_us;
    r.batch_us = m.t.batch_us;
    if (!m.note.empty()) r.note += (r.note.empty() ? "" : "; ") + m.note;
  } catch (const std::exception& e) {
    r.check = std::string("ERROR ") + e.what();
  }
  return r;
}

}  // namespace fkbench
