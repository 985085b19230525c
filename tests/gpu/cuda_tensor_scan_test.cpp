// foldkit::cuda::inclusive_scan / exclusive_scan over tensors (foldkit/cuda/tensor_scan.hpp)
// against the reference shared with the CPU tests (tests/common/tensor_scan_reference.hpp):
//   - random cases (1,600: 50 per op x dtype, every 5th with a long axis so that the look-back
//     chains several tiles), every family and layout, in place, exclusive inits, NaNs; device
//     buffers poisoned, every byte outside the output view checked; half of the calls with one
//     explicit workspace reused without re-zeroing, half with the per-stream cache;
//   - shapes placed on and around the tile kernel's tiles (narrow flat tiles, thread columns 1 to
//     128, shallow and deep tiles, chains of row tiles, one past the one-round look-back's reach,
//     padded rows, single strided lines, outer dimensions), every op on f32, i32 (widening), f64
//     and f16;
//   - the same bits on every call, workspace rules (size, alignment, reuse with core scans),
//     graph capture, a non-default stream, bad arguments (nothing written);
//   - the performance bar's shapes at full size (2^26 f32 elements, exact integer data).
// Every test reports SKIPPED where no GPU is usable.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/tensor_scan_reference.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/tensor_scan.hpp"
#include "foldkit/detail/scan_plan.hpp"
#include "foldkit/tensor_scan.hpp"
#include "support/cuda_backend.hpp"
#include "support/test_config.hpp"

namespace foldkit::test::tscan {
namespace {

using CudaTensorScan = CudaTest;

// The CUDA backend as the cases' runner: buffers to the device whole, the call on the default
// stream (every other call with the shared explicit workspace), the output buffer back whole
// (also when the call throws).
void cuda_run(const ScanCase& c, std::vector<unsigned char>& result) {
  static int calls = 0;
  const bool explicit_ws = (calls++ % 2) == 1;
  const Device dev = Device::cuda(current_device());
  const DeviceBuffer d_in = upload_bytes(c.in_bytes);
  const DeviceBuffer d_out = c.in_place ? DeviceBuffer() : upload_bytes(c.out_bytes);
  const TensorView iv = c.in.view(d_in.get(), c.dtype, dev);
  const TensorView ov = c.in_place ? iv : c.out.view(d_out.get(), c.out_dtype, dev);
  auto back = [&] {
    (void)cudaDeviceSynchronize();
    result = c.in_place ? download_bytes(d_in, c.in_bytes.size()) : download_bytes(d_out, c.out_bytes.size());
  };
  try {
    if (explicit_ws) {
      const cuda::Workspace ws = shared_workspace(cuda::tensor_scan_workspace_bytes(iv, c.axis));
      if (c.exclusive) cuda::exclusive_scan(c.op, iv, c.axis, ov, c.init, ws);
      else cuda::inclusive_scan(c.op, iv, c.axis, ov, ws);
    } else {
      if (c.exclusive) cuda::exclusive_scan(c.op, iv, c.axis, ov, c.init);
      else cuda::inclusive_scan(c.op, iv, c.axis, ov);
    }
  } catch (...) {
    back();
    throw;
  }
  FOLDKIT_CUDA_CHECK(cudaGetLastError());
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  back();
}

TEST_F(CudaTensorScan, RandomCasesMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const int cases = run_random_cases(rng, /*count=*/50, /*long_every=*/5, /*max_numel=*/3000, &cuda_run);
  EXPECT_EQ(cases, 50 * 4 * 8);
}

// ---- shapes on and around the tiles -------------------------------------------------------------

struct Fixed {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> in_strides;  // empty: row-major
  std::int64_t in_offset;
  std::vector<std::int64_t> out_strides;  // empty: row-major
  int axis;
  const char* what;
};

Layout layout_of(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides, std::int64_t offset) {
  if (strides.empty()) return row_major(shape, offset);
  Layout l;
  l.shape = shape;
  l.strides = strides;
  l.offset = offset;
  std::int64_t max_off = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) max_off += std::max<std::int64_t>(shape[i] - 1, 0) * strides[i];
  l.storage = offset + max_off + 1;
  return l;
}

TEST_F(CudaTensorScan, ShapesAroundTheTiles) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::vector<Fixed> shapes = {
      {{20011, 2}, {}, 0, {}, 0, "flat tiles of 2 columns, 3 row tiles (f32: 8192 rows a deep tile)"},
      {{12289, 4}, {}, 0, {}, 0, "4 columns: flat (16-bit types) or one thread column"},
      {{9000, 3}, {}, 0, {}, 0, "3 columns: padded vectors, element-wise copies"},
      {{8193, 8}, {}, 1, {}, 0, "8 columns, misaligned start"},
      {{5000, 16}, {}, 0, {}, 0, "16 columns"},
      {{3000, 33}, {}, 0, {}, 0, "33 columns: a second column tile of 1"},
      {{2050, 64}, {}, 0, {}, 0, "64 columns"},
      {{700, 1000}, {}, 0, {}, 0, "1000 columns, 700 rows: one deep tile of 16 columns per column tile"},
      {{5000, 100}, {}, 0, {}, 0, "7 chains of 5 deep tiles (f32: 1024 x 16)"},
      {{150001, 16}, {}, 0, {}, 0, "a chain of 147 deep tiles: past the one-round look-back's 128 predecessors"},
      {{3000, 1000}, {}, 0, {}, 0, "63 chains of 3 deep tiles"},
      {{3000, 4096}, {}, 0, {}, 0, "256 chains of 6 shallow tiles (f32: 512 x 16)"},
      {{40, 5000}, {}, 0, {}, 0, "5000 columns, 40 rows"},
      {{16, 20000}, {}, 0, {}, 0, "16 rows: one row tile, no look-back"},
      {{3, 2, 3000, 8}, {}, 0, {}, 2, "outer dimensions around a columns matrix"},
      {{5, 9001}, {9004, 1}, 0, {}, 1, "padded rows along the last axis"},
      {{3, 30000}, {30007, 1}, 2, {30001, 1}, 1, "few long padded rows, padded output"},
      {{30001}, {3}, 0, {}, 0, "one strided line"},
      {{7, 5000}, {1, 7}, 0, {}, 1, "transposed input"},
      {{5000, 7}, {}, 0, {1, 5000}, 0, "transposed output"},
      {{6000, 5}, {0, 1}, 0, {}, 0, "broadcast along the axis"},
      {{4000, 6}, {}, 0, {}, 0, "in place"},
  };
  for (const Fixed& f : shapes) {
    const Layout in = layout_of(f.shape, f.in_strides, f.in_offset);
    const Layout out = layout_of(f.shape, f.out_strides, 0);
    const bool in_place = std::string(f.what) == "in place";
    for (bool exclusive : {false, true}) {
      auto one = [&](auto op, auto tag) {
        constexpr ReduceOp kOp = decltype(op)::value;
        using T = decltype(tag);
        if (in_place && !std::is_same_v<scan_result_t<kOp, T>, T>) return;
        // The product data's exponent walks (a step in 32 elements): past ~2^16 elements a line's
        // partial products may leave float's range and come back, which a float accumulator (f32,
        // f16) cannot follow; f64's range holds them.
        if (kOp == ReduceOp::prod && is_floating_v<T> && !std::is_same_v<T, double> &&
            f.shape[static_cast<std::size_t>(f.axis)] > 65536)
          return;
        const ScanCase c = make_fixed_case<kOp, T>(rng, in, out, f.axis, in_place, exclusive, Scalar(1));
        const auto r = check_case<kOp, T>(c, &cuda_run);
        EXPECT_TRUE(r) << f.what << ": " << c.describe() << "\n  plan " << plan_of(c);
      };
      for_each_scan_op([&](auto op) {
        one(op, float{});
        one(op, std::int32_t{});
        one(op, double{});
        one(op, half{});
      });
    }
  }
}

// ---- the same bits on every call ------------------------------------------------------------------

TEST_F(CudaTensorScan, SameBitsOnEveryCall) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const Device dev = Device::cuda(current_device());
  const std::int64_t n = std::int64_t{1} << 22;
  std::vector<float> host(static_cast<std::size_t>(n));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(r.unit(i) * 2 - 1) * (i % 97 == 0 ? 4096.0f : 1.0f);
  DeviceBuffer d(host.size() * sizeof(float));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  DeviceBuffer d_out(host.size() * sizeof(float));
  const std::vector<std::vector<std::int64_t>> shapes = {{n / 2, 2}, {n / 4, 4}, {n / 64, 64}, {n / 4096, 4096}, {n / 3, 3}};
  for (const auto& shape : shapes)
    for (int axis : {0, 1}) {
      const TensorView in = TensorView::contiguous(d.get(), DType::f32, shape.data(), 2, dev);
      const TensorView out = TensorView::contiguous(d_out.get(), DType::f32, shape.data(), 2, dev);
      const std::size_t bytes = static_cast<std::size_t>(shape[0] * shape[1]) * sizeof(float);
      auto run = [&](int k) {
        FOLDKIT_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, bytes));
        if (k % 2) cuda::inclusive_scan(ReduceOp::sum, in, axis, out, shared_workspace(cuda::tensor_scan_workspace_bytes(in, axis)));
        else cuda::inclusive_scan(ReduceOp::sum, in, axis, out);
        return download_bytes(d_out, bytes);
      };
      const auto one = run(0);
      for (int k = 1; k < 4; ++k)
        EXPECT_TRUE(run(k) == one) << "call " << k << ", plan " << detail::describe_scan_plan(detail::plan_scan(in, axis));
    }
}

// ---- workspace rules ------------------------------------------------------------------------------

TEST_F(CudaTensorScan, WorkspaceRules) {
  const Device dev = Device::cuda(current_device());
  const std::int64_t rows = 10000, cols = 8;
  std::vector<float> host(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  DeviceBuffer d_in(host.size() * sizeof(float)), d_out(host.size() * sizeof(float));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_in.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  FOLDKIT_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, d_out.bytes()));
  const TensorView in = TensorView::contiguous(d_in.get(), DType::f32, {rows, cols}, dev);
  const TensorView out = TensorView::contiguous(d_out.get(), DType::f32, {rows, cols}, dev);
  // Along dim 0 the look-back needs tile states; along dim 1 the core's blocked scan needs its own.
  const std::size_t need0 = cuda::tensor_scan_workspace_bytes(in, 0);
  const std::size_t need1 = cuda::tensor_scan_workspace_bytes(in, -1);
  EXPECT_GT(need0, 0u);
  EXPECT_GE(need1, cuda::scan_workspace_bytes(rows * cols, DType::f32));
  // Rows that fit one tile, not along a contiguous axis: no workspace at all.
  EXPECT_EQ(cuda::tensor_scan_workspace_bytes(TensorView::contiguous(d_in.get(), DType::f32, {8, rows}, dev), 0), 0u);
  DeviceBuffer d_ws(std::max(need0, need1) + 64);
  cuda::init_scan_workspace(cuda::Workspace{d_ws.get(), d_ws.bytes()});
  auto untouched = [&] {
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    const auto now = download_bytes(d_out, d_out.bytes());
    return std::all_of(now.begin(), now.end(), [](unsigned char c) { return c == 0xFF; });
  };
  for (int axis : {0, 1}) {
    const std::size_t need = axis == 0 ? need0 : need1;
    EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, in, axis, out, cuda::Workspace{d_ws.get(), need - 1}); })) << axis;
    EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, in, axis, out, cuda::Workspace{nullptr, 0}); })) << axis;
    EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, in, axis, out, cuda::Workspace{static_cast<char*>(d_ws.get()) + 8, need}); })) << axis;
    EXPECT_TRUE(untouched()) << "a refused workspace wrote the output, axis " << axis;
  }
  // One workspace serving tensor scans and core scans alternately, never re-zeroed.
  const cuda::Workspace ws{d_ws.get(), d_ws.bytes()};
  std::vector<float> got(host.size());
  for (int round = 0; round < 3; ++round) {
    cuda::inclusive_scan(ReduceOp::sum, in, 0, out, ws);
    FOLDKIT_CUDA_CHECK(cudaMemcpy(got.data(), d_out.get(), d_out.bytes(), cudaMemcpyDeviceToHost));
    for (std::int64_t c = 0; c < cols; ++c) {
      float run = 0;
      for (std::int64_t r = 0; r < rows; ++r) {
        run += host[static_cast<std::size_t>(r * cols + c)];
        ASSERT_EQ(got[static_cast<std::size_t>(r * cols + c)], run) << "round " << round << " (" << r << ", " << c << ")";
      }
    }
    cuda::inclusive_scan(ReduceOp::max, DType::f32, d_in.get(), rows * cols, d_out.get(), ws);  // a core scan
    cuda::exclusive_scan(ReduceOp::sum, in, -1, out, Scalar(1), ws);                               // blocked
  }
}

// ---- streams and graphs ---------------------------------------------------------------------------

TEST_F(CudaTensorScan, StreamOrderAndGraphCapture) {
  const Device dev = Device::cuda(current_device());
  Stream stream;
  const std::int64_t rows = 9000, cols = 5;
  std::vector<std::int32_t> host(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::int32_t>((i * 7919u) % 21) - 10;
  DeviceBuffer d_in(host.size() * 4), d_out(host.size() * 8);
  const TensorView in = TensorView::contiguous(d_in.get(), DType::i32, {rows, cols}, dev);
  const TensorView out = TensorView::contiguous(d_out.get(), DType::i64, {rows, cols}, dev);
  auto check = [&](const char* what) {
    std::vector<std::int64_t> got(host.size());
    FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(got.data(), d_out.get(), d_out.bytes(), cudaMemcpyDeviceToHost, stream));
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::int64_t c = 0; c < cols; ++c) {
      std::int64_t run = 5;  // exclusive, init 5
      for (std::int64_t r = 0; r < rows; ++r) {
        ASSERT_EQ(got[static_cast<std::size_t>(r * cols + c)], run) << what << " (" << r << ", " << c << ")";
        run += host[static_cast<std::size_t>(r * cols + c)];
      }
    }
  };
  FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(d_in.get(), host.data(), d_in.bytes(), cudaMemcpyHostToDevice, stream));
  FOLDKIT_CUDA_CHECK(cudaMemsetAsync(d_out.get(), 0xFF, d_out.bytes(), stream));
  cuda::exclusive_scan(ReduceOp::sum, in, 0, out, Scalar(5), stream);
  check("stream");
  // Captured with an explicit workspace, launched twice.
  DeviceBuffer d_ws(cuda::tensor_scan_workspace_bytes(in, 0));
  cuda::init_scan_workspace(cuda::Workspace{d_ws.get(), d_ws.bytes()}, stream);
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph;
  FOLDKIT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  cuda::exclusive_scan(ReduceOp::sum, in, 0, out, Scalar(5), cuda::Workspace{d_ws.get(), d_ws.bytes()}, stream);
  FOLDKIT_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  FOLDKIT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int k = 0; k < 2; ++k) {
    FOLDKIT_CUDA_CHECK(cudaMemsetAsync(d_out.get(), 0xFF, d_out.bytes(), stream));
    FOLDKIT_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    check("graph");
  }
  FOLDKIT_CUDA_CHECK(cudaGraphExecDestroy(exec));
  FOLDKIT_CUDA_CHECK(cudaGraphDestroy(graph));
}

// ---- bad arguments: the right Errc, nothing written ------------------------------------------------

TEST_F(CudaTensorScan, BadArgumentsThrowAndWriteNothing) {
  const int dev = current_device();
  const Device cu = Device::cuda(dev);
  std::vector<float> host(64, 1.0f);
  DeviceBuffer d_in(host.size() * sizeof(float));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_in.get(), host.data(), d_in.bytes(), cudaMemcpyHostToDevice));
  DeviceBuffer d_out(1024);
  FOLDKIT_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, 1024));
  void* o = d_out.get();
  float* di = d_in.as<float>();
  const TensorView in = TensorView::contiguous(di, DType::f32, {4, 16}, cu);
  const TensorView out = TensorView::contiguous(o, DType::f32, {4, 16}, cu);
  std::vector<unsigned char> host_out(1024, 0xFF);
  auto expect = [&](Errc want, auto&& f, const char* what) {
    EXPECT_TRUE(throws_errc(want, f)) << what;
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    const auto now = download_bytes(d_out, 1024);
    EXPECT_TRUE(std::all_of(now.begin(), now.end(), [](unsigned char c) { return c == 0xFF; })) << what << " wrote";
    const auto in_now = download_bytes(d_in, d_in.bytes());
    EXPECT_EQ(0, std::memcmp(in_now.data(), host.data(), in_now.size())) << what << " wrote into the input";
    EXPECT_TRUE(std::all_of(host_out.begin(), host_out.end(), [](unsigned char c) { return c == 0xFF; })) << what << " wrote host memory";
  };
  // Memory spaces.
  expect(Errc::wrong_memory, [&] { cuda::inclusive_scan(ReduceOp::sum, TensorView::contiguous(host.data(), DType::f32, {4, 16}), 1, out); }, "host input view");
  expect(Errc::wrong_memory, [&] { cuda::inclusive_scan(ReduceOp::sum, TensorView::contiguous(host.data(), DType::f32, {4, 16}, cu), 1, out); }, "cuda view of host memory");
  expect(Errc::wrong_memory, [&] { cuda::inclusive_scan(ReduceOp::sum, in, 1, TensorView::contiguous(host_out.data(), DType::f32, {4, 16})); }, "host output view");
  expect(Errc::wrong_memory, [&] { cuda::inclusive_scan(ReduceOp::sum, in, 1, TensorView::contiguous(host_out.data(), DType::f32, {4, 16}, cu)); }, "cuda view of host output memory");
  expect(Errc::wrong_memory, [&] { cuda::inclusive_scan(ReduceOp::sum, TensorView::contiguous(di, DType::f32, {4, 16}, Device::cuda(dev + 1)), 1, out); }, "view of another device");
  // Views, axis, output, overlap, init, op.
  const std::int64_t shape9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  TensorView rank9 = TensorView::contiguous(di, DType::f32, shape9, 8, cu);
  rank9.rank = 9;
  TensorView out9 = TensorView::contiguous(o, DType::f32, shape9, 8, cu);
  out9.rank = 9;
  expect(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, rank9, 0, out9); }, "rank 9");
  expect(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, in, 2, out); }, "axis out of range");
  expect(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, in, -3, out); }, "negative axis out of range");
  expect(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, in, 1, TensorView::contiguous(o, DType::f32, {16, 4}, cu)); }, "wrong out shape");
  expect(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, in, 1, TensorView::contiguous(o, DType::f64, {4, 16}, cu)); }, "wrong out dtype");
  expect(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, in, 0, TensorView::strided(o, DType::f32, {4, 16}, {16, 0}, cu)); }, "zero out stride");
  expect(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, in, 0, TensorView::strided(o, DType::f32, {4, 16}, {4, 1}, cu)); }, "self-overlapping out");
  expect(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, TensorView::contiguous(di, DType::f32, {4, 8}, cu), 0, TensorView::contiguous(di + 8, DType::f32, {4, 8}, cu)); }, "out overlaps the input");
  expect(Errc::invalid_argument, [&] { cuda::inclusive_scan(ReduceOp::sum, TensorView::contiguous(di, DType::i32, {4, 8}, cu), 0, TensorView::contiguous(di, DType::i64, {4, 8}, cu)); }, "in place with a wider dtype");
  expect(Errc::invalid_argument, [&] { cuda::exclusive_scan(ReduceOp::sum, in, 0, out, Scalar(0.1)); }, "init 0.1 into f32");
  expect(Errc::invalid_argument, [&] { cuda::exclusive_scan(ReduceOp::sum, in, 0, out, Scalar(0.1), cuda::Workspace{nullptr, 0}); }, "init 0.1 into f32, explicit workspace");
  expect(Errc::unsupported, [&] { cuda::inclusive_scan(ReduceOp::argmin, in, 0, TensorView::contiguous(o, DType::i64, {4, 16}, cu)); }, "argmin");
  expect(Errc::unsupported, [&] { cuda::inclusive_scan(static_cast<ReduceOp>(42), in, 0, out); }, "unknown op");
  // Empty: nothing to launch; null pointers are fine.
  EXPECT_NO_THROW(cuda::inclusive_scan(ReduceOp::max, TensorView::contiguous(nullptr, DType::f32, {0, 4}, cu), 1,
                                       TensorView::contiguous(nullptr, DType::f32, {0, 4}, cu)));
}

// ---- the performance bar's shapes at full size --------------------------------------------------

TEST_F(CudaTensorScan, BarShapesAtFullSize) {
  constexpr std::int64_t kN = std::int64_t{1} << 26;
  if (max_n() < kN) GTEST_SKIP() << "FOLDKIT_TEST_MAX_N is below 2^26";
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const Device dev = Device::cuda(current_device());
  // Whole numbers in {-1, 0, 1}: every prefix is a whole number below 2^24, exact in f32 in any order.
  std::vector<float> host(static_cast<std::size_t>(kN));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(r.in_range<std::int64_t>(i, -1, 1));
  DeviceBuffer d_in(host.size() * sizeof(float)), d_out(host.size() * sizeof(float));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_in.get(), host.data(), d_in.bytes(), cudaMemcpyHostToDevice));
  std::vector<float> got(host.size());
  struct Shape { std::int64_t rows, cols; int axis; };
  std::vector<Shape> shapes;
  for (int k = 2; k <= 22; k += (k < 12 ? 2 : k < 14 ? 2 : 4)) {
    const std::int64_t cols = std::int64_t{1} << k;
    shapes.push_back({kN / cols, cols, 1});
    shapes.push_back({kN / cols, cols, 0});
  }
  for (std::int64_t cols : {2, 8, 32}) shapes.push_back({1000000, cols, 0});
  for (const Shape& s : shapes) {
    const std::vector<std::int64_t> shape = {s.rows, s.cols};
    const TensorView in = TensorView::contiguous(d_in.get(), DType::f32, shape.data(), 2, dev);
    const TensorView out = TensorView::contiguous(d_out.get(), DType::f32, shape.data(), 2, dev);
    FOLDKIT_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, d_out.bytes()));
    cuda::inclusive_scan(ReduceOp::sum, in, s.axis, out);
    FOLDKIT_CUDA_CHECK(cudaMemcpy(got.data(), d_out.get(), static_cast<std::size_t>(s.rows * s.cols) * sizeof(float), cudaMemcpyDeviceToHost));
    const std::string what = "(" + std::to_string(s.rows) + ", " + std::to_string(s.cols) + ") along " +
                             std::to_string(s.axis) + ", plan " + detail::describe_scan_plan(detail::plan_scan(in, s.axis));
    std::int64_t bad = 0;
    if (s.axis == 1) {
      for (std::int64_t i = 0; i < s.rows && bad == 0; ++i) {
        float run = 0;
        for (std::int64_t j = 0; j < s.cols; ++j) {
          run += host[static_cast<std::size_t>(i * s.cols + j)];
          if (got[static_cast<std::size_t>(i * s.cols + j)] != run) ++bad;
        }
      }
    } else {
      std::vector<float> run(static_cast<std::size_t>(s.cols), 0.0f);
      for (std::int64_t i = 0; i < s.rows && bad == 0; ++i)
        for (std::int64_t j = 0; j < s.cols; ++j) {
          run[static_cast<std::size_t>(j)] += host[static_cast<std::size_t>(i * s.cols + j)];
          if (got[static_cast<std::size_t>(i * s.cols + j)] != run[static_cast<std::size_t>(j)]) ++bad;
        }
    }
    EXPECT_EQ(bad, 0) << what;
  }
}

}  // namespace
}  // namespace foldkit::test::tscan
