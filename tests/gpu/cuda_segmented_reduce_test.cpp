// foldkit::cuda::segmented_reduce / segmented_arg_reduce / validate_offsets
// (foldkit/cuda/segmented_reduce.hpp) against an independent host reference (long double sums,
// 64-bit wrapping integer arithmetic, first-index scans; the same checks as
// tests/cpu/cpu_segmented_reduce_test.cpp), and bit for bit against the CPU backend where results
// are exact (integers, min/max, argmin/argmax). Random layouts: uniform lengths, tiny segments
// among huge ones (spanning hundreds of the kernel's tiles), runs of empty segments, a few long
// segments, tile-sized ones, offsets starting after 0 and ending before n, begin/end pairs
// overlapping and out of order; misaligned inputs; NaNs and ties. RandomCases runs >= 1000 cases
// (every op x dtype, every form: explicit workspace reused across sizes, convenient, begin/end,
// arg_reduce) in one process; LargeLayouts the benchmark's two shapes at test scale. Outputs and
// *d_status are poisoned before each call. Then determinism, graph capture, invalid device
// offsets (nothing written, *d_status == 1), validate_offsets, and every host-side bad input
// (the right Errc, nothing enqueued). SKIPPED without a GPU. Seed: FOLDKIT_TEST_SEED.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/segmented_reference.hpp"
#include "foldkit/cuda/dispatch/segmented_runtime.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/segmented_reduce.hpp"
#include "foldkit/error.hpp"
#include "foldkit/segmented_reduce.hpp"
#include "support/cuda_backend.hpp"
#include "support/random_arrays.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using CudaSegmentedReduce = CudaTest;

// ---- device plumbing ---------------------------------------------------------------------------

constexpr unsigned char kPoison = 0xA5;
constexpr std::size_t kGuard = 64;

template <ReduceOp Op>
constexpr bool kIsArg = Op == ReduceOp::argmin || Op == ReduceOp::argmax;
template <ReduceOp Op, class T>
constexpr std::size_t out_size() {
  return kIsArg<Op> ? sizeof(I64) : sizeof(reduce_result_t<Op, T>);
}

// A device copy (complete before any stream's next work: a pageable cudaMemcpy may return before
// its DMA lands, and non-blocking streams are not ordered after it).
DeviceBuffer upload(const void* host, std::size_t bytes) {
  DeviceBuffer d(bytes > 0 ? bytes : 16);
  if (bytes > 0) FOLDKIT_CUDA_CHECK(cudaMemcpy(d.get(), host, bytes, cudaMemcpyHostToDevice));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  return d;
}
std::vector<unsigned char> download(const DeviceBuffer& d, std::size_t bytes) {
  std::vector<unsigned char> h(bytes);
  if (bytes > 0) FOLDKIT_CUDA_CHECK(cudaMemcpy(h.data(), d.get(), bytes, cudaMemcpyDeviceToHost));
  return h;
}
// Poisoned device memory, the poison complete before any stream's next work (cudaMemset runs on
// the legacy stream, which non-blocking streams do not wait for).
DeviceBuffer poisoned(std::size_t bytes) {
  DeviceBuffer d(bytes);
  FOLDKIT_CUDA_CHECK(cudaMemset(d.get(), kPoison, bytes));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  return d;
}
void repoison(const DeviceBuffer& d, std::size_t bytes) {
  FOLDKIT_CUDA_CHECK(cudaMemset(d.get(), kPoison, bytes));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
}

// group_path: the offsets form with an explicit workspace on the group path
// (detail::segmented_reduce_on_path; every op but argmin/argmax) whatever the library picks.
enum class Form { explicit_ws, convenient, begin_end, arg_reduce, group_path, merge_path };
const char* form_name(Form f) {
  switch (f) {
    case Form::explicit_ws: return "explicit workspace";
    case Form::convenient: return "convenient";
    case Form::begin_end: return "begin/end";
    case Form::arg_reduce: return "arg_reduce";
    case Form::group_path: return "group path";
    case Form::merge_path: return "merge path";
  }
  return "?";
}

// A growing explicit workspace, zeroed once and then reused by every call (calls leave it zeroed).
struct SharedWorkspace {
  DeviceBuffer buffer;
  cuda::Workspace get(std::size_t bytes) {
    if (buffer.bytes() < bytes) {
      buffer = DeviceBuffer(bytes * 2);
      cuda::init_workspace(cuda::Workspace{buffer.get(), buffer.bytes()});
      FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());  // before calls on any stream
    }
    return cuda::Workspace{buffer.get(), buffer.bytes()};
  }
};

struct DeviceCase {
  DeviceBuffer in, offsets, begin, end, out, values, status;
};

// One call: uploads, poisons, runs `form`, downloads. Returns the outputs (S results, then kGuard
// guard bytes) and the status.
template <ReduceOp Op, class T>
void run_on_device(const Segs& g, const Data<T>& d, Form form, cudaStream_t stream, SharedWorkspace& ws,
                   std::vector<unsigned char>& out, std::vector<unsigned char>& values, std::int32_t& status) {
  const I64 S = g.count();
  DeviceCase c;
  c.in = upload(d.storage.data(), d.storage.size() * sizeof(T));
  const T* d_in = c.in.as<T>() + d.shift;
  if (g.by_offsets) c.offsets = upload(g.offsets.data(), g.offsets.size() * sizeof(I64));
  else {
    c.begin = upload(g.begin.data(), g.begin.size() * sizeof(I64));
    c.end = upload(g.end.data(), g.end.size() * sizeof(I64));
  }
  const std::size_t out_bytes = static_cast<std::size_t>(S) * out_size<Op, T>();
  const std::size_t values_bytes = static_cast<std::size_t>(S) * sizeof(T);
  c.out = poisoned(out_bytes + kGuard);
  c.values = poisoned(values_bytes + kGuard);
  c.status = poisoned(sizeof(std::int32_t));
  auto* st = c.status.as<std::int32_t>();
  switch (form) {
    case Form::explicit_ws:
      cuda::segmented_reduce(Op, dtype_v<T>, d_in, g.n, c.offsets.as<I64>(), S, c.out.get(),
                             ws.get(cuda::segmented_reduce_workspace_bytes(g.n, S, Op, dtype_v<T>)), stream, st);
      break;
    case Form::convenient:
      cuda::segmented_reduce(Op, dtype_v<T>, d_in, g.n, c.offsets.as<I64>(), S, c.out.get(), stream, st);
      break;
    case Form::begin_end:
      cuda::segmented_reduce(Op, dtype_v<T>, d_in, g.n, c.begin.as<I64>(), c.end.as<I64>(), S, c.out.get(), stream, st);
      break;
    case Form::arg_reduce:
      cuda::segmented_arg_reduce(Op, dtype_v<T>, d_in, g.n, c.offsets.as<I64>(), S, c.out.as<I64>(), c.values.get(),
                                 stream, st);
      break;
    case Form::group_path:
    case Form::merge_path:  // (the library picks one of them: both tested whichever it is)
      cuda::detail::segmented_reduce_on_path(form == Form::group_path ? cuda::detail::SegmentedPath::group
                                                                      : cuda::detail::SegmentedPath::merge,
                                             Op, dtype_v<T>, d_in, g.n, c.offsets.as<I64>(), S, c.out.get(),
                                             ws.get(cuda::segmented_reduce_workspace_bytes(g.n, S, Op, dtype_v<T>)), stream,
                                             st);
      break;
  }
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  FOLDKIT_CUDA_CHECK(cudaGetLastError());
  out = download(c.out, out_bytes + kGuard);
  values = download(c.values, values_bytes + kGuard);
  const auto s = download(c.status, sizeof status);
  std::memcpy(&status, s.data(), sizeof status);
}

// Runs and checks one case; returns false after reporting a failure.
template <ReduceOp Op, class T>
bool check_case(const Segs& g, const Data<T>& d, Form form, cudaStream_t stream, SharedWorkspace& ws) {
  const I64 S = g.count();
  std::vector<unsigned char> out, values;
  std::int32_t status = 0;
  run_on_device<Op, T>(g, d, form, stream, ws, out, values, status);
  const std::string where = std::string(op_name(Op)) + " " + dtype_name(dtype_v<T>) + " " + form_name(form) + " " +
                            g.what + " shift=" + std::to_string(d.shift);
  bool ok = true;
  auto report = [&](const std::string& why) {
    ADD_FAILURE() << where << ": " << why;
    ok = false;
  };
  if (status != 0) report("*d_status = " + std::to_string(status) + " for valid offsets");
  const std::size_t out_bytes = static_cast<std::size_t>(S) * out_size<Op, T>();
  if (!std::all_of(out.begin() + static_cast<std::ptrdiff_t>(out_bytes), out.end(), [](unsigned char c) { return c == kPoison; }))
    report("written past the output");
  const bool with_values = form == Form::arg_reduce;
  const std::size_t values_bytes = with_values ? static_cast<std::size_t>(S) * sizeof(T) : 0;
  if (!std::all_of(values.begin() + static_cast<std::ptrdiff_t>(values_bytes), values.end(), [](unsigned char c) { return c == kPoison; }))
    report("written past the values (or values written by segmented_reduce)");
  int failures = 0;
  for (I64 s = 0; s < S && failures < 5; ++s) {
    const I64 b = g.first(s), len = g.last(s) - b;
    const auto r = check_segment<Op, T>(d.data() + b, len, out.data() + s * out_size<Op, T>(),
                                        with_values ? values.data() + s * sizeof(T) : nullptr);
    if (!r) {
      ++failures;
      report("segment " + std::to_string(s) + " [" + std::to_string(b) + ", " + std::to_string(b + len) + "): " +
             r.message());
    }
  }
  // Exact results: the CPU backend's bytes (integers, min/max, argmin/argmax indices).
  constexpr bool kExact = std::is_integral_v<T> ? Op != ReduceOp::mean || sizeof(T) == 4
                                                : Op == ReduceOp::min || Op == ReduceOp::max || kIsArg<Op>;
  if (kExact && failures == 0) {
    std::vector<unsigned char> cpu_out(out_bytes + 1);
    if (g.by_offsets) cpu::segmented_reduce(Op, dtype_v<T>, d.data(), g.n, g.offsets.data(), S, cpu_out.data());
    else cpu::segmented_reduce(Op, dtype_v<T>, d.data(), g.n, g.begin.data(), g.end.data(), S, cpu_out.data());
    bool same = std::memcmp(cpu_out.data(), out.data(), out_bytes) == 0;
    if constexpr (!std::is_integral_v<T> && (Op == ReduceOp::min || Op == ReduceOp::max)) {
      // min/max promise "a NaN", not which one: the device converts f16 NaNs to the canonical
      // NaN (seen on the H100: 11 f16 min/max cases differed from the CPU only in NaN bits).
      same = true;
      for (I64 s = 0; s < S && same; ++s) {
        T a, b;
        std::memcpy(&a, cpu_out.data() + s * sizeof(T), sizeof(T));
        std::memcpy(&b, out.data() + s * sizeof(T), sizeof(T));
        const double da = static_cast<double>(static_cast<float>(a)), db = static_cast<double>(static_cast<float>(b));
        same = (da != da && db != db) || std::memcmp(&a, &b, sizeof(T)) == 0;
      }
    }
    if (!same) report("differs from the CPU backend's exact result");
  }
  return ok;
}

template <class F>
void visit(ReduceOp op, DType dtype, F&& f) {
  auto with_op = [&](auto tag) {
    switch (op) {
      case ReduceOp::sum: return f(std::integral_constant<ReduceOp, ReduceOp::sum>{}, tag);
      case ReduceOp::prod: return f(std::integral_constant<ReduceOp, ReduceOp::prod>{}, tag);
      case ReduceOp::min: return f(std::integral_constant<ReduceOp, ReduceOp::min>{}, tag);
      case ReduceOp::max: return f(std::integral_constant<ReduceOp, ReduceOp::max>{}, tag);
      case ReduceOp::mean: return f(std::integral_constant<ReduceOp, ReduceOp::mean>{}, tag);
      case ReduceOp::argmin: return f(std::integral_constant<ReduceOp, ReduceOp::argmin>{}, tag);
      case ReduceOp::argmax: return f(std::integral_constant<ReduceOp, ReduceOp::argmax>{}, tag);
    }
  };
  visit_dtype(dtype, with_op);
}

// One random case of (op, dtype, form) at a cheap size.
bool random_case(Rng& rng, ReduceOp op, DType dtype, Form form, I64 budget, cudaStream_t stream, SharedWorkspace& ws) {
  bool ok = true;
  visit(op, dtype, [&](auto op_tag, auto tag) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    const double nan_rate = rng.uniform(0, 2) == 0 ? 0.002 : 0.0;
    if (form == Form::begin_end) {
      const I64 n = rng.uniform(0, budget);
      const Segs g = random_begin_end(rng, n, rng.uniform(0, 500), rng.uniform(0, n));
      ok = check_case<Op, T>(g, make_data<Op, T>(rng, g.n, nan_rate), form, stream, ws);
    } else {
      const Segs g = random_offsets(rng, rng.uniform(1, budget), static_cast<int>(rng.uniform(0, 5)));
      ok = check_case<Op, T>(g, make_data<Op, T>(rng, g.n, nan_rate), form, stream, ws);
    }
  });
  return ok;
}

// ---- tests -------------------------------------------------------------------------------------

// Every op x dtype x form, and then random (op, dtype, form) up to 1200 cases in all.
TEST_F(CudaSegmentedReduce, RandomCases) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  Stream stream;
  SharedWorkspace ws;
  const I64 budget = std::min<I64>(max_n(), 60000);
  int cases = 0, failed = 0;
  for (DType dtype : kAllDTypes)
    for (ReduceOp op : kAllReduceOps)
      for (Form form : {Form::explicit_ws, Form::convenient, Form::begin_end, Form::arg_reduce, Form::group_path, Form::merge_path}) {
        const bool arg = op == ReduceOp::argmin || op == ReduceOp::argmax;
        if ((form == Form::arg_reduce && !arg) || ((form == Form::group_path || form == Form::merge_path) && arg)) continue;
        failed += !random_case(rng, op, dtype, form, budget, stream, ws);
        ++cases;
      }
  while (cases < 1200 && failed < 10) {
    const DType dtype = kAllDTypes[rng.uniform(0, 7)];
    const ReduceOp op = kAllReduceOps[rng.uniform(0, 6)];
    Form form = static_cast<Form>(rng.uniform(0, 5));
    const bool arg = op == ReduceOp::argmin || op == ReduceOp::argmax;
    if ((form == Form::arg_reduce && !arg) || ((form == Form::group_path || form == Form::merge_path) && arg)) form = Form::explicit_ws;
    failed += !random_case(rng, op, dtype, form, rng.uniform(0, 4) == 0 ? budget * 4 : budget / 4 + 1, stream, ws);
    ++cases;
  }
  EXPECT_EQ(failed, 0) << "of " << cases << " cases";
  std::printf("[          ] %d random cases\n", cases);
}

// The benchmark's two shapes at test scale: 2^20 segments of 0..128 elements, and 2 segments of
// 2^24 among 2^18 segments of 0..16 (capped by FOLDKIT_TEST_MAX_N).
TEST_F(CudaSegmentedReduce, LargeLayouts) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  Stream stream;
  SharedWorkspace ws;
  const I64 cap = max_n();
  {
    std::vector<I64> lens;
    for (I64 total = 0; total < std::min<I64>(cap, I64{64} << 20) && lens.size() < (1u << 20);) {
      lens.push_back(rng.uniform(0, 128));
      total += lens.back();
    }
    const Segs g = from_lengths(lens, 0, 0, "uniform 0..128");
    EXPECT_TRUE((check_case<ReduceOp::sum, float>(g, make_data<ReduceOp::sum, float>(rng, g.n), Form::explicit_ws, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::argmax, float>(g, make_data<ReduceOp::argmax, float>(rng, g.n), Form::arg_reduce, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::sum, float>(g, make_data<ReduceOp::sum, float>(rng, g.n), Form::group_path, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::sum, float>(g, make_data<ReduceOp::sum, float>(rng, g.n), Form::merge_path, stream, ws)));
  }
  {
    std::vector<I64> lens;
    const I64 huge = std::min<I64>(cap / 4 + 1, I64{1} << 24);
    for (I64 i = 0; i < (I64{1} << 18); ++i) lens.push_back(i == 1000 || i == 200000 ? huge : rng.uniform(0, 16));
    const Segs g = from_lengths(lens, 3, 5, "2 huge among tiny");
    EXPECT_TRUE((check_case<ReduceOp::sum, float>(g, make_data<ReduceOp::sum, float>(rng, g.n), Form::convenient, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::sum, std::int32_t>(g, make_data<ReduceOp::sum, std::int32_t>(rng, g.n), Form::explicit_ws, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::min, half>(g, make_data<ReduceOp::min, half>(rng, g.n, 1e-7), Form::explicit_ws, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::sum, float>(g, make_data<ReduceOp::sum, float>(rng, g.n), Form::group_path, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::sum, float>(g, make_data<ReduceOp::sum, float>(rng, g.n), Form::merge_path, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::prod, double>(g, make_data<ReduceOp::prod, double>(rng, g.n), Form::group_path, stream, ws)));
    EXPECT_TRUE((check_case<ReduceOp::max, half>(g, make_data<ReduceOp::max, half>(rng, g.n, 1e-7), Form::group_path, stream, ws)));
  }
}

// The same call twice: the same bits (float sums of a huge segment spread over many tiles).
TEST_F(CudaSegmentedReduce, Deterministic) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  SharedWorkspace ws;
  const Segs g = random_offsets(rng, std::min<I64>(max_n(), 3000000), 1);
  const Data<float> d = make_data<ReduceOp::sum, float>(rng, g.n);
  std::vector<unsigned char> first, out, values;
  std::int32_t status = 0;
  for (int k = 0; k < 5; ++k) {
    run_on_device<ReduceOp::sum, float>(g, d, k % 2 == 0 ? Form::explicit_ws : Form::convenient, nullptr, ws, out, values,
                                        status);
    if (k == 0) first = out;
    else EXPECT_TRUE(out == first) << "call " << k << " gave other bits (" << g.what << ")";
  }
  for (int k = 0; k < 5; ++k) {  // the group path, which lists the long segments in a varying order
    run_on_device<ReduceOp::sum, float>(g, d, Form::group_path, nullptr, ws, out, values, status);
    if (k == 0) first = out;
    else EXPECT_TRUE(out == first) << "group path, call " << k << " gave other bits (" << g.what << ")";
  }
  for (int k = 0; k < 3; ++k) {  // the merge path (which the library may not pick for sums)
    run_on_device<ReduceOp::sum, float>(g, d, Form::merge_path, nullptr, ws, out, values, status);
    if (k == 0) first = out;
    else EXPECT_TRUE(out == first) << "merge path, call " << k << " gave other bits (" << g.what << ")";
  }
}

// The convenient forms share a stream's cached workspace with the scans, whose tile states stay
// flagged with their epoch after a call: segmented calls (both forms) between scans on one stream
// give the bits they give on a stream of their own, and so do the scans (2026-11-27: stale scan
// words read as published partials gave rare wrong segmented results).
TEST_F(CudaSegmentedReduce, SharesTheStreamWorkspaceWithScans) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const Segs g = random_offsets(rng, std::min<I64>(max_n(), 1000000), 1);
  const Data<float> d = make_data<ReduceOp::sum, float>(rng, g.n);
  const I64 S = g.count(), n_scan = std::min<I64>(max_n(), 4000000);
  std::vector<float> scan_in(static_cast<std::size_t>(n_scan));
  for (auto& v : scan_in) v = static_cast<float>(rng.uniform(0, 8)) - 4.0f;
  DeviceBuffer d_in = upload(d.storage.data(), d.storage.size() * sizeof(float));
  DeviceBuffer d_offs = upload(g.offsets.data(), g.offsets.size() * sizeof(I64));
  std::vector<I64> begin(g.offsets.begin(), g.offsets.end() - 1), end(g.offsets.begin() + 1, g.offsets.end());
  DeviceBuffer d_begin = upload(begin.data(), begin.size() * sizeof(I64)), d_end = upload(end.data(), end.size() * sizeof(I64));
  DeviceBuffer d_scan_in = upload(scan_in.data(), scan_in.size() * sizeof(float));
  DeviceBuffer d_seg = poisoned(static_cast<std::size_t>(S) * sizeof(float));
  DeviceBuffer d_scan = poisoned(static_cast<std::size_t>(n_scan) * sizeof(float));
  const float* in = d_in.as<float>() + d.shift;
  auto seg_call = [&](cudaStream_t st, bool by_offsets) {
    if (by_offsets) cuda::segmented_reduce(ReduceOp::sum, DType::f32, in, g.n, d_offs.as<I64>(), S, d_seg.get(), st);
    else cuda::segmented_reduce(ReduceOp::sum, DType::f32, in, g.n, d_begin.as<I64>(), d_end.as<I64>(), S, d_seg.get(), st);
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(st));
    return download(d_seg, static_cast<std::size_t>(S) * sizeof(float));
  };
  auto scan_call = [&](cudaStream_t st) {
    cuda::inclusive_scan<ReduceOp::sum, float>(d_scan_in.as<float>(), n_scan, d_scan.as<float>(), st);
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(st));
    return download(d_scan, static_cast<std::size_t>(n_scan) * sizeof(float));
  };
  // Each form against itself on a stream of its own: the two forms walk a segment in different
  // orders (offsets: accumulators in place; begin/end: direct), so float sums may differ between
  // them in the last bits (the header promises the same bits per form, input and device).
  std::vector<unsigned char> seg_alone[2], scan_alone;
  {
    Stream own;
    seg_alone[0] = seg_call(own, false);
    seg_alone[1] = seg_call(own, true);
  }
  {
    Stream own;
    scan_alone = scan_call(own);
  }
  Stream shared;
  for (int k = 0; k < 6; ++k) {
    EXPECT_TRUE(scan_call(shared) == scan_alone) << "scan " << k << " after segmented calls on its stream";
    const bool by_offsets = k % 2 == 0;
    EXPECT_TRUE(seg_call(shared, by_offsets) == seg_alone[by_offsets])
        << "segmented call " << k << (by_offsets ? " (offsets)" : " (begin/end)") << " after a scan (" << g.what << ")";
  }
}

// n = 0, num_segments = 0, all-empty segments.
TEST_F(CudaSegmentedReduce, EdgeCases) {
  Stream stream;
  SharedWorkspace ws;
  const I64 zeros[] = {0, 0, 0};
  DeviceBuffer d_offs = upload(zeros, sizeof zeros);
  DeviceBuffer d_out = poisoned(64), d_status = poisoned(4);
  // n = 0 (null input), two empty segments.
  cuda::segmented_reduce(ReduceOp::max, DType::f32, nullptr, 0, d_offs.as<I64>(), 2, d_out.get(), stream,
                         d_status.as<std::int32_t>());
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  auto out = download(d_out, 8);
  float f[2];
  std::memcpy(f, out.data(), 8);
  EXPECT_EQ(f[0], -HUGE_VALF);
  EXPECT_EQ(f[1], -HUGE_VALF);
  std::int32_t status = 5;
  std::memcpy(&status, download(d_status, 4).data(), 4);
  EXPECT_EQ(status, 0);
  // num_segments = 0: nothing written (out may be null), status set from the one offset.
  const I64 bad_one[] = {7};
  DeviceBuffer d_bad = upload(bad_one, sizeof bad_one);
  repoison(d_status, 4);
  cuda::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 0, d_bad.as<I64>(), 0, nullptr, stream,
                         d_status.as<std::int32_t>());
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::memcpy(&status, download(d_status, 4).data(), 4);
  EXPECT_EQ(status, 1);
  cuda::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 0, d_offs.as<I64>(), 0, nullptr,
                         ws.get(cuda::segmented_reduce_workspace_bytes(0, 0, ReduceOp::sum, DType::f32)), stream,
                         d_status.as<std::int32_t>());
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::memcpy(&status, download(d_status, 4).data(), 4);
  EXPECT_EQ(status, 0);
  cuda::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 0, nullptr, nullptr, 0, nullptr, stream);
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Invalid device offsets: nothing written, *d_status == 1, later valid calls on the same
// workspace still right; validate_offsets names the first bad entry.
TEST_F(CudaSegmentedReduce, InvalidDeviceOffsets) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  Stream stream;
  SharedWorkspace ws;
  for (int k = 0; k < 12; ++k) {
    Segs g = random_offsets(rng, 200000, static_cast<int>(rng.uniform(0, 4)));
    const I64 S = g.count();
    const I64 at = rng.uniform(0, S);
    switch (k % 4) {
      case 0: g.offsets[static_cast<std::size_t>(at)] = g.n + 1 + rng.uniform(0, 1000); break;
      case 1: g.offsets[static_cast<std::size_t>(at)] = -1 - rng.uniform(0, 1000); break;
      case 2:
        if (S > 0) std::swap(g.offsets[0], g.offsets[static_cast<std::size_t>(S)]);
        if (g.offsets[0] == g.offsets[static_cast<std::size_t>(S)]) g.offsets[0] = -5;
        break;
      default: break_by_one(g, rng); break;  // a decrease by exactly one, the rule's edge
    }
    const Data<float> d = make_data<ReduceOp::sum, float>(rng, g.n);
    std::vector<unsigned char> out, values;
    std::int32_t status = 0;
    for (Form form : {Form::explicit_ws, Form::convenient}) {
      run_on_device<ReduceOp::sum, float>(g, d, form, stream, ws, out, values, status);
      EXPECT_EQ(status, 1) << g.what;
      EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](unsigned char c) { return c == kPoison; }))
          << "written despite bad offsets (" << g.what << ")";
    }
    DeviceBuffer d_offs = upload(g.offsets.data(), g.offsets.size() * sizeof(I64));
    const I64 first = [&] {
      for (I64 i = 0; i <= S; ++i)
        if (g.offsets[i] < 0 || g.offsets[i] > g.n || (i < S && g.offsets[i] > g.offsets[i + 1])) return i;
      return I64{-1};
    }();
    try {
      cuda::validate_offsets(d_offs.as<I64>(), S, g.n, stream);
      ADD_FAILURE() << "validate_offsets accepted bad offsets";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("offsets[" + std::to_string(first) + "]"), std::string::npos) << e.what();
    }
    const Segs ok = random_offsets(rng, 200000, 1);
    EXPECT_TRUE((check_case<ReduceOp::sum, float>(ok, make_data<ReduceOp::sum, float>(rng, ok.n), Form::explicit_ws, stream, ws)));
    DeviceBuffer d_ok = upload(ok.offsets.data(), ok.offsets.size() * sizeof(I64));
    EXPECT_NO_THROW(cuda::validate_offsets(d_ok.as<I64>(), ok.count(), ok.n, stream));
  }
  // Begin/end: a pair with begin > end, one past n.
  const I64 b[] = {0, 9, 2}, e[] = {4, 3, 5}, e2[] = {4, 9, 11};
  std::vector<float> x(10, 1.0f);
  DeviceBuffer d_x = upload(x.data(), 40), d_b = upload(b, 24), d_e = upload(e, 24), d_e2 = upload(e2, 24);
  for (const DeviceBuffer* ends : {&d_e, &d_e2}) {
    DeviceBuffer d_out = poisoned(12), d_status = poisoned(4);
    cuda::segmented_reduce(ReduceOp::sum, DType::f32, d_x.get(), 10, d_b.as<I64>(), ends->as<I64>(), 3, d_out.get(),
                           stream, d_status.as<std::int32_t>());
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::int32_t status = 0;
    std::memcpy(&status, download(d_status, 4).data(), 4);
    EXPECT_EQ(status, 1);
    const auto out = download(d_out, 12);
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](unsigned char c) { return c == kPoison; })) << "written";
  }
}

// The explicit form under graph capture, replayed.
TEST_F(CudaSegmentedReduce, GraphCapture) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  Stream stream;
  const Segs g = random_offsets(rng, 500000, 1);
  const Data<float> d = make_data<ReduceOp::sum, float>(rng, g.n);
  const I64 S = g.count();
  DeviceBuffer d_in = upload(d.storage.data(), d.storage.size() * sizeof(float));
  DeviceBuffer d_offs = upload(g.offsets.data(), g.offsets.size() * sizeof(I64));
  DeviceBuffer d_out = poisoned(static_cast<std::size_t>(S) * 4 + 4);
  DeviceBuffer d_ws(cuda::segmented_reduce_workspace_bytes(g.n, S, ReduceOp::sum, DType::f32));
  cuda::init_workspace(cuda::Workspace{d_ws.get(), d_ws.bytes()}, stream);
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph;
  FOLDKIT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  cuda::segmented_reduce(ReduceOp::sum, DType::f32, d_in.as<float>() + d.shift, g.n, d_offs.as<I64>(), S, d_out.get(),
                         cuda::Workspace{d_ws.get(), d_ws.bytes()}, stream);
  FOLDKIT_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  FOLDKIT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<unsigned char> first;
  for (int k = 0; k < 3; ++k) {
    FOLDKIT_CUDA_CHECK(cudaMemsetAsync(d_out.get(), kPoison, d_out.bytes(), stream));
    FOLDKIT_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto out = download(d_out, static_cast<std::size_t>(S) * 4);
    if (k == 0) {
      first = out;
      for (I64 s = 0; s < S; ++s) {
        const auto r = check_segment<ReduceOp::sum, float>(d.data() + g.offsets[s], g.offsets[s + 1] - g.offsets[s],
                                                           out.data() + s * 4, nullptr);
        if (!r) {
          ADD_FAILURE() << "segment " << s << ": " << r.message();
          break;
        }
      }
    } else {
      EXPECT_TRUE(out == first) << "replay " << k;
    }
  }
  FOLDKIT_CUDA_CHECK(cudaGraphExecDestroy(exec));
  FOLDKIT_CUDA_CHECK(cudaGraphDestroy(graph));
}

// Host-side bad input: the right Errc, nothing enqueued (the poisoned output stays poisoned).
TEST_F(CudaSegmentedReduce, BadArguments) {
  std::vector<float> hx(16, 1.0f);
  const I64 offs[] = {0, 4, 8};
  DeviceBuffer d_x = upload(hx.data(), 64), d_offs = upload(offs, sizeof offs), d_out = poisoned(64),
               d_vals = poisoned(64);
  const I64 host_offs[] = {0, 4, 8};
  DeviceBuffer small_ws(16);
  const std::size_t need = cuda::segmented_reduce_workspace_bytes(16, 2, ReduceOp::sum, DType::f32);
  DeviceBuffer ws_buf(need + 16);
  const cuda::Workspace ws{ws_buf.get(), need};
  auto expect = [&](Errc code, auto&& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << what << ": " << e.what();
    }
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    const auto out = download(d_out, 64);
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](unsigned char c) { return c == kPoison; })) << what << ": written";
  };
  const float* x = d_x.as<float>();
  const I64* o = d_offs.as<I64>();
  void* out = d_out.get();
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, -1, o, 2, out); }, "n < 0");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, -2, out); }, "S < 0");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 16, o, 2, out); }, "null in");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, nullptr, 2, out); }, "null offsets");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, nullptr); }, "null out");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, d_x.get()); },
         "out overlapping the input");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::i64, x, 16, o, 2, d_offs.as<I64>() + 1); },
         "out overlapping the offsets");
  expect(Errc::invalid_argument,
         [&] { cuda::segmented_arg_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, d_out.as<I64>(), d_vals.get()); },
         "arg_reduce of sum");
  expect(Errc::invalid_argument,
         [&] { cuda::segmented_arg_reduce(ReduceOp::argmax, DType::f32, x, 16, o, 2, d_out.as<I64>(), nullptr); },
         "null values");
  expect(Errc::invalid_argument,
         [&] {
           cuda::detail::segmented_reduce_on_path(cuda::detail::SegmentedPath::group, ReduceOp::argmax, DType::f32, x, 16,
                                                  o, 2, out, ws, nullptr);
         },
         "argmax on the group path");
  expect(Errc::unsupported, [&] { cuda::segmented_reduce(static_cast<ReduceOp>(9), DType::f32, x, 16, o, 2, out); },
         "unknown op");
  expect(Errc::unsupported, [&] { cuda::segmented_reduce(ReduceOp::sum, static_cast<DType>(9), x, 16, o, 2, out); },
         "unknown dtype");
  expect(Errc::wrong_memory, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, hx.data(), 16, o, 2, out); },
         "host input");
  expect(Errc::wrong_memory, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, host_offs, 2, out); },
         "host offsets");
  expect(Errc::invalid_argument,
         [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, out, cuda::Workspace{small_ws.get(), 16}); },
         "workspace too small");
  expect(Errc::invalid_argument,
         [&] {
           cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, out,
                                  cuda::Workspace{static_cast<char*>(ws_buf.get()) + 4, need});
         },
         "misaligned workspace");
  expect(Errc::invalid_argument,
         [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, o, 2, out, cuda::Workspace{nullptr, need}); },
         "null workspace");
  expect(Errc::invalid_argument, [&] { cuda::segmented_reduce(ReduceOp::sum, DType::f32, x, 16, nullptr, o, 2, out); },
         "null begin");
  EXPECT_THROW(cuda::validate_offsets(host_offs, 2, 16), Error);
  EXPECT_THROW(cuda::validate_offsets(nullptr, 2, 16), Error);
  (void)ws;
}

}  // namespace
}  // namespace foldkit::test
