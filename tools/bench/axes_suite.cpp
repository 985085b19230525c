// `foldkit-bench axes` on the GPU (issue #22): foldkit's reductions and scans along the axes of
// N-dimensional tensors, and its segmented sums, beside the memory's ceiling and CUB's
// DeviceSegmentedReduce in the same run. The cases, rows, table, CSV and checks: axes_common.hpp.
//
// Every case:
//   1. the call is prepared (views, output shape, the planner's plan for the notes);
//   2. foldkit's result (and CUB's) is checked once, on the first input copy into a poisoned
//      (0xFF) output, against a double reference on the host over sampled outputs;
//   3. each rival is called once (warm-up) and timed once alone ("probe"); rivals whose call
//      takes at most 5 ms are timed together, interleaved call by call over the rotated inputs
//      (GpuSession::time_all: gated per-call median and back-to-back batch), each call writing
//      the next buffer of a rotation of outputs over >= 1 GiB; a rival slower than that (a
//      pathological kernel: the largest case reads 1 GiB in ~0.35 ms) is timed apart as the
//      median of 3 single calls with no batch, and its row says so.
// The inputs rotate over >= 1 GiB (InputPool) and are laid out once per dtype and element count:
// the nine 2^26-element matrices and two of the 3-D shapes share one layout.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "axes_common.hpp"
#include "cub_segmented.hpp"
#include "foldkit/cuda/dispatch/segmented_runtime.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/segmented_reduce.hpp"
#include "foldkit/cuda/tensor_reduce.hpp"
#include "foldkit/cuda/tensor_scan.hpp"
#include "foldkit/detail/reduce_plan.hpp"
#if __has_include("foldkit/detail/scan_plan.hpp")
#include "foldkit/detail/scan_plan.hpp"
#define FKB_HAVE_SCAN_PLAN 1
#else
#define FKB_HAVE_SCAN_PLAN 0
#endif
#include "foldkit/scan.hpp"
#include "foldkit/tensor.hpp"
#include "gpu_common.hpp"
#include "suites.hpp"

namespace fkbench {
namespace {

using axes::AxesRow;
using axes::Case;
using axes::Kind;
using foldkit::DType;
using foldkit::ReduceOp;

constexpr double kSlowCallUs = 5000;  // a rival slower than this per call is timed apart
constexpr int kSlowReps = 3;

struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    FKB_CHECK(cudaEventCreate(&start));
    FKB_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  double us() const {
    float ms = 0;
    FKB_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return 1e3 * static_cast<double>(ms);
  }
};

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Device memory freed with its owner (the segmented cases' offsets).
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { FKB_CHECK(cudaMalloc(&p, bytes ? bytes : 1)); }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// The scan's plan for the notes: (family, description). From the planner
// (detail::prepare_scan, describe_scan_plan) when this tree has foldkit/detail/scan_plan.hpp;
// otherwise the bench's own account of the lines, which is what the planner decides on.
std::pair<std::string, std::string> scan_plan_text(const Case& c, const foldkit::TensorView& in,
                                                   const foldkit::TensorView& out) {
#if FKB_HAVE_SCAN_PLAN
  try {
    const foldkit::detail::ScanPlan p = foldkit::detail::prepare_scan(ReduceOp::sum, in, c.axes[0], out, nullptr);
    return {foldkit::detail::scan_family_name(p.family), foldkit::detail::describe_scan_plan(p)};
  } catch (const std::exception& e) {
    return {"-", std::string("plan: ") + e.what()};
  }
#else
  (void)in;
  (void)out;
#endif
  const int rank = static_cast<int>(c.shape.size());
  const int a = c.axes[0] < 0 ? c.axes[0] + rank : c.axes[0];
  std::int64_t stride = 1;
  for (int d = rank - 1; d > a; --d) stride *= c.shape[d];
  const std::int64_t len = c.shape[a];
  const std::int64_t lines = c.numel() / std::max<std::int64_t>(len, 1);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%lld lines of %lld, element stride %lld (this tree has no detail/scan_plan.hpp)",
                static_cast<long long>(lines), static_cast<long long>(len), static_cast<long long>(stride));
  return {stride == 1 ? "rows" : "columns", buf};
}

class AxesGpu {
 public:
  explicit AxesGpu(const Options& opt) : opt_(opt), sess_(opt) { FKB_CHECK(cudaGetDevice(&device_)); }
  int run();

 private:
  struct RivalTimes {
    std::vector<Timing> t;
    std::vector<std::string> note;  // the slow rule's note, per rival
  };

  std::vector<AxesRow> run_case(const Case& c);
  void ensure_input(DType dtype, std::int64_t count);
  const unsigned char* host_input();
  std::vector<unsigned char> to_host(const void* d, std::size_t bytes);
  foldkit::TensorView view(const void* p, DType dtype, const std::vector<std::int64_t>& shape) const {
    return foldkit::TensorView::contiguous(p, dtype, shape.data(), static_cast<int>(shape.size()),
                                           foldkit::Device::cuda(device_));
  }
  RivalTimes time_rivals(const std::vector<Call>& calls);
  std::string memory_text() const { return sess_.pool().memory_text() + "; " + outs_.memory_text(); }

  const Options& opt_;
  GpuSession sess_;
  int device_ = 0;
  OutputPool outs_;  // check(0): foldkit's checked output, check(1): CUB's; the rest rotate
  axes::AxesCsv csv_;
  axes::AxesSummary summary_;
  DType pool_dtype_ = DType::f32;
  std::int64_t pool_count_ = 0;
  std::vector<unsigned char> host_in_;  // copy 0 of the pool's input, fetched for the checks
  bool host_valid_ = false;
};

void AxesGpu::ensure_input(DType dtype, std::int64_t count) {
  if (pool_count_ == count && pool_dtype_ == dtype) return;
  sess_.pool().prepare(dtype, count, input_seed(dtype, count), sess_.stream());
  pool_dtype_ = dtype;
  pool_count_ = count;
  host_valid_ = false;
}

std::vector<unsigned char> AxesGpu::to_host(const void* d, std::size_t bytes) {
  std::vector<unsigned char> h(bytes);
  FKB_CHECK(cudaMemcpyAsync(h.data(), d, bytes, cudaMemcpyDeviceToHost, sess_.stream()));
  FKB_CHECK(cudaStreamSynchronize(sess_.stream()));
  return h;
}

const unsigned char* AxesGpu::host_input() {
  if (!host_valid_) {
    host_in_ = to_host(sess_.pool().copy(0), sess_.pool().bytes());
    host_valid_ = true;
  }
  return host_in_.data();
}

// Probes every rival (one warm-up call, one call timed alone), then times the fast ones
// interleaved (time_all) and the slow ones apart (median of kSlowReps single calls).
AxesGpu::RivalTimes AxesGpu::time_rivals(const std::vector<Call>& calls) {
  const std::size_t k = calls.size();
  RivalTimes r;
  r.t.resize(k);
  r.note.resize(k);
  InputPool& pool = sess_.pool();
  cudaStream_t s = sess_.stream();
  EventPair ev;
  std::vector<double> probe(k, kNaN);
  for (std::size_t c = 0; c < k; ++c) {
    try {
      calls[c](pool.next());
      FKB_CHECK_LAUNCH("probe warm-up call");
      FKB_CHECK(cudaStreamSynchronize(s));
      FKB_CHECK(cudaEventRecord(ev.start, s));
      calls[c](pool.next());
      FKB_CHECK(cudaEventRecord(ev.stop, s));
      FKB_CHECK(cudaEventSynchronize(ev.stop));
      probe[c] = ev.us();
    } catch (const std::exception& e) {
      r.t[c].error = e.what();
      cudaStreamSynchronize(s);
    }
  }
  std::vector<std::size_t> fast, slow;
  for (std::size_t c = 0; c < k; ++c) {
    if (!r.t[c].error.empty()) continue;
    (probe[c] > kSlowCallUs ? slow : fast).push_back(c);
  }
  if (!fast.empty()) {
    std::vector<Call> fc;
    for (std::size_t c : fast) fc.push_back(calls[c]);
    const std::vector<Timing> tf = sess_.time_all(fc);
    for (std::size_t j = 0; j < fast.size(); ++j) r.t[fast[j]] = tf[j];
  }
  for (std::size_t c : slow) {
    std::vector<double> v;
    try {
      for (int rep = 0; rep < kSlowReps; ++rep) {
        FKB_CHECK(cudaEventRecord(ev.start, s));
        calls[c](pool.next());
        FKB_CHECK(cudaEventRecord(ev.stop, s));
        FKB_CHECK(cudaEventSynchronize(ev.stop));
        v.push_back(ev.us());
      }
      r.t[c].median_us = median(v);
    } catch (const std::exception& e) {
      r.t[c].error = e.what();
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "slow call (%.1f ms alone): median of %d single calls, not gated, no batch",
                  probe[c] / 1e3, kSlowReps);
    r.note[c] = buf;
  }
  return r;
}

std::vector<AxesRow> AxesGpu::run_case(const Case& c) {
  cudaStream_t s = sess_.stream();
  AxesRow base;
  base.mode = "gpu";
  base.section = c.section;
  base.case_name = c.name();
  base.op = c.op;
  base.shape = c.shape_text();
  base.axes = c.axes_text;
  base.dtype = foldkit::dtype_name(c.dtype);
  base.bar = c.bar;
  AxesRow fk = base, cub = base, ceil = base;
  fk.impl = "foldkit";
  cub.impl = "cub";
  ceil.impl = "ceiling";
  ceil.bar = axes::Bar{};

  // 1. The case: input layout, output size, the foldkit call and the rival.
  std::vector<std::int64_t> offsets;
  std::unique_ptr<DeviceBuffer> d_offsets;
  std::int64_t n = c.numel();
  if (c.kind == Kind::segmented) {
    offsets = axes::segment_offsets(c.segments);
    n = offsets.back();
    d_offsets = std::make_unique<DeviceBuffer>(offsets.size() * sizeof(std::int64_t));
    FKB_CHECK(cudaMemcpy(d_offsets->p, offsets.data(), offsets.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  }
  ensure_input(c.dtype, n);
  InputPool& pool = sess_.pool();
  const std::size_t esize = foldkit::dtype_size(c.dtype);
  const std::uint64_t read = static_cast<std::uint64_t>(n) * esize;
  const std::int64_t num_segments = offsets.empty() ? 0 : static_cast<std::int64_t>(offsets.size()) - 1;
  const std::int64_t* d_off = d_offsets ? static_cast<const std::int64_t*>(d_offsets->p) : nullptr;

  DType out_dtype = c.dtype;
  std::vector<std::int64_t> out_shape;
  std::uint64_t written = 0;
  std::function<void(const void*, void*)> fk_call;
  const ReduceOp op = c.reduce_op();
  const std::vector<std::int64_t> shape = c.shape;
  const std::vector<int> axes_list = c.axes;
  const DType dtype = c.dtype;
  try {
    if (c.kind == Kind::reduce) {
      const foldkit::ReduceOutput ro =
          foldkit::cuda::reduce_output_shape(op, view(pool.copy(0), dtype, shape), foldkit::AxisList(axes_list), false);
      out_dtype = ro.dtype;
      out_shape.assign(ro.shape, ro.shape + ro.rank);
      written = static_cast<std::uint64_t>(ro.numel()) * foldkit::dtype_size(ro.dtype);
      fk_call = [this, op, dtype, shape, axes_list, out_dtype, out_shape, s](const void* in, void* out) {
        foldkit::cuda::reduce(op, view(in, dtype, shape), foldkit::AxisList(axes_list), false,
                              view(out, out_dtype, out_shape), s);
      };
    } else if (c.kind == Kind::scan) {
      out_dtype = foldkit::scan_result_dtype(ReduceOp::sum, dtype);
      out_shape = shape;
      written = static_cast<std::uint64_t>(n) * foldkit::dtype_size(out_dtype);
      const int axis = axes_list[0];
      fk_call = [this, dtype, shape, axis, out_dtype, s](const void* in, void* out) {
        foldkit::cuda::inclusive_scan(ReduceOp::sum, view(in, dtype, shape), axis, view(out, out_dtype, shape), s);
      };
    } else {
      out_dtype = foldkit::reduce_result_dtype(ReduceOp::sum, dtype);
      out_shape = {num_segments};
      written = 0;  // the measure for segmented sums: the input read
      fk_call = [dtype, n, d_off, num_segments, s](const void* in, void* out) {
        foldkit::cuda::segmented_reduce(ReduceOp::sum, dtype, in, n, d_off, num_segments, out, s);
      };
    }
  } catch (const std::exception& e) {
    fk.check = std::string("ERROR ") + e.what();
  }
  const std::uint64_t out_bytes = c.kind == Kind::segmented
                                      ? static_cast<std::uint64_t>(num_segments) * foldkit::dtype_size(out_dtype)
                                      : written;
  for (AxesRow* r : {&fk, &cub}) {
    r->read_bytes = read;
    r->written_bytes = written;
  }
  // The ceiling: reductions and segmented sums read the input once; scans copy (read + written) / 2.
  const bool copy_ceiling = c.kind == Kind::scan;
  const std::uint64_t copy_bytes = (read + written + 1) / 2;
  const std::uint64_t ceiling_bytes = copy_ceiling ? 2 * copy_bytes : read;
  for (AxesRow* r : {&fk, &cub, &ceil}) r->ceiling_bytes = ceiling_bytes;
  ceil.op = copy_ceiling ? "copy" : "read";
  ceil.read_bytes = copy_ceiling ? copy_bytes : read;
  ceil.written_bytes = copy_ceiling ? copy_bytes : 0;

  std::unique_ptr<CubReduce> cub_call;
  std::uint64_t cub_out_bytes = 0;
  if (c.cub_rows || c.kind == Kind::segmented) {
    try {
      if (c.kind == Kind::segmented) {
        cub_call = make_cub_segmented_sum_offsets(d_off, num_segments);
        cub_out_bytes = static_cast<std::uint64_t>(num_segments) * 4;
      } else {
        cub_call = make_cub_segmented_rows(op, shape[0], shape[1]);
        cub_out_bytes = static_cast<std::uint64_t>(shape[0]) * (op == ReduceOp::argmax ? kCubArgmaxBytes : 4);
      }
      cub.config = cub_call->api();
      if (c.kind != Kind::segmented) cub.written_bytes = cub_out_bytes;
    } catch (const std::exception& e) {
      cub.check = std::string("ERROR ") + e.what();
    }
  }
  // References for the column scans (f32 cumsum over dim 0): the whole-array scans of the same n
  // elements, foldkit's (foldkit::cuda::inclusive_scan) and CUB's (DeviceScan::InclusiveSum), the
  // same bytes read and written through one chain of tiles. Not this case's result: timed only
  // (each is checked by the scan suite and the tests), to show what a chained single-pass scan of
  // these bytes reads on this GPU. Only on the 2^26-element matrices: beside the small reported
  // shapes the reference calls moved the column scan's per-call median (cumsum (1e6, 2) 11.9 ->
  // 15.9 us, its batch mean unchanged; H200 2026-11-30), a call's time depending on the one
  // before it.
  AxesRow flat = base, cub_flat = base;
  flat.impl = "foldkit-1d";
  cub_flat.impl = "cub-1d";
  std::function<void(const void*, void*)> flat_call;
  std::unique_ptr<CubReduce> cub_flat_call;
  if (c.kind == Kind::scan && axes_list[0] == 0 && dtype == DType::f32 && fk_call && n >= (std::int64_t{1} << 26)) {
    flat_call = [n, s](const void* in, void* out) {
      foldkit::cuda::inclusive_scan<ReduceOp::sum>(static_cast<const float*>(in), n, static_cast<float*>(out), s);
    };
    try {
      cub_flat_call = make_cub_inclusive_sum(DType::f32, n);
    } catch (const std::exception& e) {
      cub_flat.check = std::string("ERROR ") + e.what();
    }
    for (AxesRow* r : {&flat, &cub_flat}) {
      r->bar = axes::Bar{};
      r->read_bytes = read;
      r->written_bytes = written;
      r->ceiling_bytes = ceiling_bytes;
      r->check = "not checked (a reference: the whole-array scan of the same bytes)";
    }
    flat.config = "foldkit::cuda::inclusive_scan<sum> of the " + std::to_string(n) + " elements as one array";
    if (cub_flat_call) cub_flat.config = "cub::DeviceScan::InclusiveSum of the " + std::to_string(n) + " elements as one array";
  }
  const std::uint64_t biggest_out = std::max({out_bytes, cub_out_bytes, copy_ceiling ? copy_bytes : 0});
  outs_.prepare(static_cast<std::size_t>(std::max<std::uint64_t>(biggest_out, std::uint64_t{1} << 20)));
  const std::string memory = memory_text();
  for (AxesRow* r : {&fk, &cub, &ceil}) r->memory = memory;

  // The plan, for the notes.
  if (fk_call) {
    if (c.kind == Kind::reduce) {
      try {
        const foldkit::detail::ReducePlan p = foldkit::detail::prepare_reduce(
            op, view(pool.copy(0), dtype, shape), foldkit::AxisList(axes_list), false,
            view(outs_.check(0), out_dtype, out_shape), nullptr);
        fk.plan = foldkit::detail::plan_family(p);
        fk.config = foldkit::detail::describe_plan(p);
      } catch (const std::exception& e) {
        fk.config = std::string("plan: ") + e.what();
      }
    } else if (c.kind == Kind::scan) {
      std::tie(fk.plan, fk.config) =
          scan_plan_text(c, view(pool.copy(0), dtype, shape), view(outs_.check(0), out_dtype, out_shape));
    } else {
      fk.plan = foldkit::cuda::detail::segmented_path_name(foldkit::cuda::detail::segmented_reduce_path(ReduceOp::sum));
      fk.config = std::to_string(num_segments) + " segments, n = " + std::to_string(n) +
                  "; bytes count the input only (the int64 offsets and the outputs are not counted)";
    }
  }

  // 2. Checks, once, on input copy 0, into poisoned outputs.
  const axes::HostTensor host_in_view = [&] {
    axes::HostTensor t;
    t.dtype = dtype;
    t.shape = c.kind == Kind::segmented ? std::vector<std::int64_t>{n} : shape;
    return t;
  }();
  // result_dtype: what the checked call writes; cub_pairs: CUB's ArgMax (index, value) pairs.
  auto check = [&](const std::function<void(const void*, void*)>& call, void* out, std::uint64_t bytes,
                   DType result_dtype, bool cub_pairs) -> std::string {
    FKB_CHECK(cudaMemsetAsync(out, 0xFF, static_cast<std::size_t>(bytes), s));
    call(pool.copy(0), out);
    FKB_CHECK_LAUNCH("checked call");
    FKB_CHECK(cudaStreamSynchronize(s));
    const std::vector<unsigned char> h = to_host(out, static_cast<std::size_t>(bytes));
    axes::HostTensor in = host_in_view;
    in.data = host_input();
    const axes::HostOutput o{h.data(), result_dtype, cub_pairs};
    if (c.kind == Kind::reduce) return axes::check_reduce(c.op, in, axes_list, o);
    if (c.kind == Kind::scan) return axes::check_scan(in, axes_list[0], o);
    return axes::check_segmented_sum(in, offsets, o);
  };
  if (fk_call) {
    try {
      fk.check = check(fk_call, outs_.check(0), out_bytes, out_dtype, false);
    } catch (const std::exception& e) {
      fk.check = std::string("ERROR ") + e.what();
      fk_call = nullptr;
      cudaStreamSynchronize(s);
    }
  }
  if (cub_call) {
    try {
      CubReduce* cc = cub_call.get();
      const std::function<void(const void*, void*)> call = [cc, s](const void* in, void* out) { cc->run(in, out, s); };
      const bool pairs = op == ReduceOp::argmax && c.kind == Kind::reduce;
      cub.check = check(call, outs_.check(1), cub_out_bytes, DType::f32, pairs);  // CUB writes f32 sums and maxima
    } catch (const std::exception& e) {
      cub.check = std::string("ERROR ") + e.what();
      cub_call = nullptr;
      cudaStreamSynchronize(s);
    }
  }

  // 3. Timing: the ceiling's calls first, then CUB, then foldkit.
  std::vector<Call> calls;
  std::size_t ceiling_calls = 0;
  if (copy_ceiling) {
    calls = copy_ceiling_calls(static_cast<std::size_t>(copy_bytes), outs_, sess_.info().sm_count, s);
    ceiling_calls = calls.size();
  } else {
    for (Call& call : sess_.ceiling_calls(static_cast<std::size_t>(read))) calls.push_back(std::move(call));
    ceiling_calls = calls.size();
  }
  const std::size_t cub_at = cub_call ? calls.size() : SIZE_MAX;
  if (cub_call) {
    CubReduce* cc = cub_call.get();
    calls.push_back([this, cc, s](const void* in) { cc->run(in, outs_.next(), s); });
  }
  const std::size_t fk_at = fk_call ? calls.size() : SIZE_MAX;
  if (fk_call) calls.push_back([this, fk_call](const void* in) { fk_call(in, outs_.next()); });
  const std::size_t flat_at = flat_call ? calls.size() : SIZE_MAX;
  if (flat_call) calls.push_back([this, flat_call](const void* in) { flat_call(in, outs_.next()); });
  const std::size_t cub_flat_at = cub_flat_call ? calls.size() : SIZE_MAX;
  if (cub_flat_call) {
    CubReduce* cc = cub_flat_call.get();
    calls.push_back([this, cc, s](const void* in) { cc->run(in, outs_.next(), s); });
  }
  sess_.label_samples(c.name());
  const RivalTimes rt = time_rivals(calls);

  if (copy_ceiling) {
    const BestOf b = best_of(copy_ceiling_named(rt.t[0], rt.t[1]));
    ceil.median_us = b.median_us;
    ceil.batch_us = b.batch_us;
    char buf[48];
    std::snprintf(buf, sizeof buf, "copy %.1f MB; ", copy_bytes / 1e6);
    ceil.config = buf + b.config;
  } else {
    const CeilingResult cr = sess_.ceiling_from(std::vector<Timing>(rt.t.begin(), rt.t.begin() + ceiling_calls));
    ceil.median_us = cr.median_us;
    ceil.batch_us = cr.batch_us;
    ceil.config = "read " + std::to_string(read >> 20) + " MiB; " + cr.config;
  }
  auto record = [&](AxesRow& row, std::size_t at) {
    const Timing& t = rt.t[at];
    if (!t.error.empty()) {
      row.check = "ERROR " + t.error;
      return;
    }
    row.median_us = t.median_us;
    row.batch_us = t.batch_us;
    std::string note = rt.note[at];
    if (t.gate_timed_out) note += (note.empty() ? "" : "; ") + std::string("gate timed out");
    if (!note.empty()) row.config = note + (row.config.empty() ? "" : "; " + row.config);
  };
  if (cub_call) record(cub, cub_at);
  if (fk_call) record(fk, fk_at);
  if (flat_call) record(flat, flat_at);
  if (cub_flat_call) record(cub_flat, cub_flat_at);
  for (AxesRow* r : {&fk, &cub, &flat, &cub_flat}) {
    r->ceil_median_us = ceil.median_us;
    r->ceil_batch_us = ceil.batch_us;
  }
  fk.cub_median_us = cub.median_us;
  fk.cub_batch_us = cub.batch_us;

  std::vector<AxesRow> rows{fk};
  if (c.cub_rows || c.kind == Kind::segmented) rows.push_back(cub);
  if (flat_call) rows.push_back(flat);
  if (cub_flat_call) rows.push_back(cub_flat);
  rows.push_back(ceil);
  return rows;
}

int AxesGpu::run() {
  Header h = sess_.make_header(
      "foldkit-bench axes: reductions and scans along tensor axes, segmented sums (GPU) vs the memory's ceiling "
      "and CUB DeviceSegmentedReduce",
      opt_, "ceiling (its launch shapes, or its 2 copies), CUB and foldkit interleaved call by call in every case, "
            "shuffled rounds");
  for (auto& [key, value] : h.lines) {
    if (key == "ratios")
      value = "/ceil and /CUB: time / time (< 1: foldkit faster); %ceil: (bytes / time) / (ceiling bytes / ceiling "
              "time), the GB/s ratio; bytes = read + written per call (segmented sums: the input read)";
    if (key == "memory")
      value += "; outputs rotated over >= 1 GiB too (buffers of >= 1 MiB, each call writes the next)";
  }
  h.lines.emplace_back("foldkit", "cuda::reduce(op, TensorView, axes, keepdims=false, out, stream), "
                                  "cuda::inclusive_scan(sum, TensorView, axis, out, stream), cuda::segmented_reduce(sum, "
                                  "f32, in, n, int64 offsets, ...): the forms without a workspace (per-stream cache)");
  h.lines.emplace_back("cub", "DeviceSegmentedReduce::Sum/Max/ArgMax with one segment per row (offsets r * cols from "
                              "an iterator) beside the dim-1 reductions of f32 matrices and two reported shapes; "
                              "::Sum with the same int64 offsets beside the segmented sums");
  h.lines.emplace_back("ceiling", "reductions and segmented sums: the streaming-read kernel over the input (best of its "
                                  "launch shapes); scans: the faster of cudaMemcpyAsync and a 16-byte copy kernel over "
                                  "(read + written) / 2 bytes");
  h.lines.emplace_back("checks", "every foldkit and CUB result once per case, against a double reference on the host "
                                 "over sampled outputs (sums within 1e-3 relative; max and argmax exact)");
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "a rival whose single call takes over %.0f ms is timed apart: median of %d single calls, no batch "
                "(said on its row)",
                kSlowCallUs / 1e3, kSlowReps);
  h.lines.emplace_back("slow", buf);
  h.lines.emplace_back("plan", "the planner's family and canonical form (detail::prepare_reduce / describe_plan; "
                               "scans: detail::prepare_scan / describe_scan_plan)");
  print_header(h);
  if (!opt_.csv_path.empty() && !csv_.open(opt_.csv_path, h)) return 1;

  outs_.prepare(std::size_t{256} << 20);  // the largest case's output first: later cases reuse it
  std::string section;
  for (const Case& c : axes::gpu_cases()) {
    if (!axes::selected(c, opt_.only)) continue;
    if (c.section != section) {
      section = c.section;
      axes::print_axes_section(section);
    }
    std::vector<AxesRow> rows;
    try {
      rows = run_case(c);
    } catch (const std::exception& e) {  // a CUDA failure outside a rival's call
      AxesRow r;
      r.section = c.section;
      r.case_name = c.name();
      r.impl = "foldkit";
      r.op = c.op;
      r.shape = c.shape_text();
      r.axes = c.axes_text;
      r.dtype = foldkit::dtype_name(c.dtype);
      r.bar = c.bar;
      r.check = std::string("ERROR ") + e.what();
      rows = {r};
      cudaGetLastError();
    }
    axes::print_axes_case(rows);
    for (const AxesRow& r : rows) csv_.write(r);
    summary_.add(rows);
  }
  summary_.print();
  return summary_.failures();
}

}  // namespace

int run_axes_gpu(const Options& opt) {
  AxesGpu t(opt);
  return t.run();
}

}  // namespace fkbench
