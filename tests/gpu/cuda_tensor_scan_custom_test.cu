// foldkit::cuda::inclusive_scan_custom / exclusive_scan_custom over tensors
// (foldkit/cuda/tensor_scan_custom.cuh) against the CPU backend (foldkit/tensor_scan_custom.hpp)
// and the plain left-to-right reference of tests/common/tensor_scan_custom_cases.hpp, on the
// built-in tensor scans' random cases with one or two exact functors per dtype (two of them not
// commutative: a combine with its operands swapped, or a missed or repeated element, changes
// the result). The functors are exact, so the GPU's bracketing (tiles, warps, the look-back)
// must give the CPU's bits: the whole output buffer is compared byte for byte, poison and in
// place included. Every other call passes the explicit shared workspace; every fifth case runs
// twice and must give the same bytes. Shapes around the tiles and long chained axes by hand; a
// rounding functor (float +) is deterministic and within a summation bound of the CPU result
// (only there do the two orders differ); empty tensors; bad arguments and bad workspaces throw,
// enqueue nothing and write nothing. SKIPPED where no GPU is usable.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/tensor_scan_custom_cases.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/tensor_scan_custom.cuh"
#include "foldkit/tensor_scan_custom.hpp"
#include "support/cuda_backend.hpp"
#include "support/custom_functors.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test::tscan {
namespace {

using CudaTensorScanCustom = CudaTest;

// The CUDA backend on a case: the buffers to the device whole, the call on the default stream
// (with the shared explicit workspace when asked), the output buffer back whole.
template <class C>
std::vector<unsigned char> run_gpu(const CustomScanCase<C>& k, bool explicit_ws, const typename C::F& op = {}) {
  const ScanCase& c = k.c;
  const Device dev = Device::cuda(current_device());
  const DeviceBuffer d_in = upload_bytes(c.in_bytes);
  const DeviceBuffer d_out = c.in_place ? DeviceBuffer() : upload_bytes(c.out_bytes);
  const TensorView iv = c.in.view(d_in.get(), c.dtype, dev);
  const TensorView ov = c.in_place ? iv : c.out.view(d_out.get(), c.dtype, dev);
  if (explicit_ws) {
    const cuda::Workspace ws = shared_workspace(cuda::tensor_scan_custom_workspace_bytes(iv, c.axis));
    if (c.exclusive) cuda::exclusive_scan_custom(iv, c.axis, ov, op, C::identity(), k.init, ws);
    else cuda::inclusive_scan_custom(iv, c.axis, ov, op, C::identity(), ws);
  } else {
    if (c.exclusive) cuda::exclusive_scan_custom(iv, c.axis, ov, op, C::identity(), k.init);
    else cuda::inclusive_scan_custom(iv, c.axis, ov, op, C::identity());
  }
  FOLDKIT_CUDA_CHECK(cudaGetLastError());
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  return c.in_place ? download_bytes(d_in, c.in_bytes.size()) : download_bytes(d_out, c.out_bytes.size());
}

template <class C> std::vector<unsigned char> run_cpu(const CustomScanCase<C>& k, const typename C::F& op = {}) {
  const ScanCase& c = k.c;
  std::vector<unsigned char> in = c.in_bytes, out = c.out_bytes;
  const TensorView iv = c.in.view(in.data(), c.dtype);
  const TensorView ov = c.in_place ? iv : c.out.view(out.data(), c.dtype);
  if (c.exclusive) cpu::exclusive_scan_custom(iv, c.axis, ov, op, C::identity(), k.init);
  else cpu::inclusive_scan_custom(iv, c.axis, ov, op, C::identity());
  return c.in_place ? in : out;
}

// The GPU's buffer equals the CPU backend's byte for byte, and the reference's elements.
template <class C> ::testing::AssertionResult check_against_cpu(const CustomScanCase<C>& k, bool explicit_ws, bool twice) {
  std::vector<unsigned char> gpu;
  try {
    gpu = run_gpu(k, explicit_ws);
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << "threw " << errc_name(e.code()) << ": " << e.what();
  }
  const std::vector<unsigned char> cpu = run_cpu(k);
  if (gpu != cpu) {
    ::testing::AssertionResult r = check_custom_scan(k, gpu, custom_scan_reference(k));
    return ::testing::AssertionFailure() << "the GPU's bytes differ from the CPU backend's; against the reference: "
                                         << (r ? std::string("equal (?)") : std::string(r.message()));
  }
  ::testing::AssertionResult r = check_custom_scan(k, gpu, custom_scan_reference(k));
  if (r && twice && run_gpu(k, !explicit_ws) != gpu) r = ::testing::AssertionFailure() << "a second call gave other bytes";
  return r;
}

TEST_F(CudaTensorScanCustom, RandomCasesMatchTheCpuBackend) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  constexpr int kPerFunctor = 60, kLongEvery = 4;
  int cases = 0;
  for_each_scan_custom_case([&](auto tag) {
    using C = typename decltype(tag)::type;
    for (int i = 0; i < kPerFunctor; ++i, ++cases) {
      const CustomScanCase<C> k = make_custom_scan_case<C>(rng, /*max_numel=*/3000, i % kLongEvery == kLongEvery - 1);
      const auto r = check_against_cpu(k, /*explicit_ws=*/i % 2 == 1, /*twice=*/i % 5 == 0);
      if (!r) {
        ADD_FAILURE() << "case " << cases << ": " << k.describe() << "\n  plan " << plan_of(k.c) << "\n  " << r.message();
        return;
      }
    }
  });
  EXPECT_EQ(cases, kScanCustomCases * kPerFunctor);
}

// Shapes on and around the tiles: narrow and wide matrices along each axis, long axes that chain
// many tiles (the look-back), 2-byte elements on rows-contiguous lines (the tile kernel, not the
// core's scan), transposed and offset outputs, in place.
TEST_F(CudaTensorScanCustom, TilesAndChainsMatchTheCpuBackend) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::vector<std::vector<std::int64_t>> shapes = {{100003, 2}, {70001, 4}, {2049, 33}, {33, 1024}, {3, 70001},
                                                         {7, 3000, 3}, {2, 9000, 5}, {1, 300007}, {513, 1}};
  int checked = 0;
  auto one = [&](auto tag, const std::vector<std::int64_t>& shape, int axis, int variant) {
    using C = typename decltype(tag)::type;
    CustomScanCase<C> k;
    k.c.op = ReduceOp::max;
    k.c.dtype = k.c.out_dtype = dtype_v<typename C::T>;
    k.c.in = variant == 2 ? make_layout(shape, rng, true, false, false, 1) : row_major(shape);
    k.c.axis = axis;
    k.c.exclusive = variant != 0;
    k.c.in_place = variant == 3;
    k.c.out = k.c.in_place ? k.c.in : variant == 1 ? make_layout(shape, rng, true, false, false, 1) : row_major(shape, variant);
    k.c.in_bytes.resize(static_cast<std::size_t>(k.c.in.storage) * sizeof(typename C::T));
    if (!k.c.in_place) k.c.out_bytes.assign(static_cast<std::size_t>(k.c.out.storage + 4) * sizeof(typename C::T), 0xFF);
    redraw_values(k, rng);
    const auto r = check_against_cpu(k, variant % 2 == 0, variant == 0);
    EXPECT_TRUE(r) << k.describe() << "\n  plan " << plan_of(k.c) << "\n  " << r.message();
    ++checked;
  };
  for (const auto& shape : shapes)
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis)
      for (int variant = 0; variant < 4; ++variant) {
        one(CaseTag<AffineU64>{}, shape, axis, variant);
        one(CaseTag<AffineU32>{}, shape, axis, variant);
        one(CaseTag<MagnitudeF16>{}, shape, axis, variant);
        one(CaseTag<PlusQuartersF32>{}, shape, axis, variant);
      }
  EXPECT_EQ(checked, 4 * 4 * (2 + 2 + 2 + 2 + 2 + 3 + 3 + 2 + 2));
}

// float + rounds, so only here do the GPU's bracketing and the CPU's left folds differ: each
// output must be within the summation bound len * eps * sum |x| of the exact prefix (the CPU's
// too), and two GPU calls must give the same bits.
TEST_F(CudaTensorScanCustom, RoundingFunctorIsDeterministicAndClose) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  struct Shape {
    std::vector<std::int64_t> shape;
    int axis;
  };
  for (const Shape& s : std::vector<Shape>{{{40000, 8}, 0}, {{8, 40000}, 1}, {{300, 300}, 0}, {{5, 20000, 3}, 1}}) {
    CustomScanCase<PlusQuartersF32> k;
    k.c.dtype = k.c.out_dtype = DType::f32;
    k.c.in = row_major(s.shape);
    k.c.out = row_major(s.shape);
    k.c.axis = s.axis;
    k.c.in_bytes.resize(static_cast<std::size_t>(k.c.in.storage) * sizeof(float));
    k.c.out_bytes.assign(static_cast<std::size_t>(k.c.out.storage + 4) * sizeof(float), 0xFF);
    const CounterRng r = rng.counter();
    for (std::int64_t i = 0; i < k.c.in.storage; ++i) {
      const float v = static_cast<float>(r.unit(static_cast<std::uint64_t>(i)) * 2 - 1);
      std::memcpy(k.c.in_bytes.data() + i * 4, &v, 4);
    }
    const std::vector<unsigned char> gpu = run_gpu(k, false), again = run_gpu(k, true), cpu = run_cpu(k);
    EXPECT_TRUE(gpu == again) << "two calls gave different bits";
    // The exact prefixes and their magnitudes, in double, line by line (row-major logical order).
    const std::int64_t n = k.c.in.numel(), len = s.shape[static_cast<std::size_t>(s.axis)];
    std::int64_t inner = 1;
    for (std::size_t d = static_cast<std::size_t>(s.axis) + 1; d < s.shape.size(); ++d) inner *= s.shape[d];
    std::int64_t bad = 0;
    for (std::int64_t first = 0; first < n; ++first) {
      if ((first / inner) % len != 0) continue;
      double exact = 0, magnitude = 0;
      for (std::int64_t i = 0; i < len; ++i) {
        const std::int64_t at = first + i * inner;
        const float x = load_at<float>(k.c.in_bytes.data(), at);
        exact += x;
        magnitude += std::fabs(x);
        const double bound = static_cast<double>(i + 1) * std::numeric_limits<float>::epsilon() * magnitude;
        const float g = load_at<float>(gpu.data(), at), h = load_at<float>(cpu.data(), at);
        if (std::fabs(g - exact) > bound || std::fabs(h - exact) > bound) ++bad;
      }
    }
    EXPECT_EQ(bad, 0) << "outputs outside the summation bound, shape axis " << s.axis;
  }
}

TEST_F(CudaTensorScanCustom, EmptyTensorsAndRankZero) {
  const Device cu = Device::cuda(current_device());
  EXPECT_NO_THROW(cuda::inclusive_scan_custom(TensorView::contiguous(nullptr, DType::i64, {5, 0}, cu), 1,
                                              TensorView::contiguous(nullptr, DType::i64, {5, 0}, cu), SaturatingAdd{},
                                              std::int64_t{0}));
  EXPECT_EQ(cuda::tensor_scan_custom_workspace_bytes(TensorView::contiguous(nullptr, DType::i64, {5, 0}, cu), 1), 0u);
  using P = PackedThenApply<std::uint64_t>;
  DeviceBuffer d(16);
  const std::uint64_t x = P::pack(3, 4);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d.get(), &x, 8, cudaMemcpyHostToDevice));
  const TensorView in = TensorView::contiguous(d.get(), DType::u64, {}, cu);
  const TensorView out = TensorView::contiguous(d.as<std::uint64_t>() + 1, DType::u64, {}, cu);
  cuda::exclusive_scan_custom(in, 0, out, P{}, P::pack(1, 0), P::pack(5, 6));
  cuda::inclusive_scan_custom(in, -1, in, P{}, P::pack(1, 0));  // in place
  std::uint64_t got[2];
  FOLDKIT_CUDA_CHECK(cudaMemcpy(got, d.get(), 16, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got[0], x);
  EXPECT_EQ(got[1], P::pack(5, 6));
}

// ---- bad arguments: the right Errc, nothing enqueued, nothing written ---------------------------------

TEST_F(CudaTensorScanCustom, BadArgumentsThrowAndWriteNothing) {
  using Bytes = std::vector<unsigned char, AlignedAllocator<unsigned char>>;
  const int dev = current_device();
  const Device cu = Device::cuda(dev);
  constexpr std::size_t kBytes = 1024;
  Bytes pattern(kBytes);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<unsigned char>(mix64(i) >> 56);
  const Bytes poison(kBytes, 0xFF);
  DeviceBuffer d_in(kBytes), d_out(kBytes);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_in.get(), pattern.data(), kBytes, cudaMemcpyHostToDevice));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_out.get(), poison.data(), kBytes, cudaMemcpyHostToDevice));
  Bytes h_in = pattern, h_out = poison;  // host memory handed to the CUDA backend
  std::vector<ScanCustomBadCall> calls = scan_custom_bad_calls(d_in.get(), d_out.get(), cu);
  auto* dx = d_in.as<float>();
  const TensorView x = TensorView::contiguous(dx, DType::f32, {4, 16}, cu);
  const TensorView out = TensorView::contiguous(d_out.get(), DType::f32, {4, 16}, cu);
  auto add = [&](const char* what, Errc want, TensorView in, TensorView o) {
    calls.push_back(ScanCustomBadCall{what, want, DType::f32, in, 1, o});
  };
  add("host view of device input memory", Errc::wrong_memory, TensorView::contiguous(dx, DType::f32, {4, 16}), out);
  add("CUDA view of host (pageable) input memory", Errc::wrong_memory,
      TensorView::contiguous(h_in.data(), DType::f32, {4, 16}, cu), out);
  add("host view of device output memory", Errc::wrong_memory, x, TensorView::contiguous(d_out.get(), DType::f32, {4, 16}));
  add("CUDA view of host (pageable) output memory", Errc::wrong_memory, x,
      TensorView::contiguous(h_out.data(), DType::f32, {4, 16}, cu));
  add("input view of device id + 1", Errc::wrong_memory, TensorView::contiguous(dx, DType::f32, {4, 16}, Device::cuda(dev + 1)), out);
  add("misaligned input", Errc::invalid_argument,
      TensorView::contiguous(d_in.as<unsigned char>() + 2, DType::f32, {4, 16}, cu), out);
  auto check_untouched = [&](const std::string& what) {
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    FOLDKIT_CUDA_CHECK(cudaGetLastError());
    Bytes now_in(kBytes), now_out(kBytes);
    FOLDKIT_CUDA_CHECK(cudaMemcpy(now_in.data(), d_in.get(), kBytes, cudaMemcpyDeviceToHost));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(now_out.data(), d_out.get(), kBytes, cudaMemcpyDeviceToHost));
    EXPECT_TRUE(now_in == pattern) << what << ": the device input buffer changed";
    EXPECT_TRUE(now_out == poison) << what << ": the device output buffer was written";
    EXPECT_TRUE(h_in == pattern && h_out == poison) << what << ": a host buffer was written";
    if (now_in != pattern) FOLDKIT_CUDA_CHECK(cudaMemcpy(d_in.get(), pattern.data(), kBytes, cudaMemcpyHostToDevice));
    if (now_out != poison) FOLDKIT_CUDA_CHECK(cudaMemcpy(d_out.get(), poison.data(), kBytes, cudaMemcpyHostToDevice));
    h_in = pattern;
    h_out = poison;
  };
  for (const ScanCustomBadCall& c : calls) {
    SCOPED_TRACE(c.what + " (as " + dtype_name(c.as) + ", want Error " + errc_name(c.want) + ")");
    bool called = false;
    visit_scan_custom_case(c.as, [&](auto tag) {
      using C = typename decltype(tag)::type;
      called = true;
      EXPECT_TRUE(throws_errc(c.want, [&] { cuda::inclusive_scan_custom(c.in, c.axis, c.out, typename C::F{}, C::identity()); }));
      EXPECT_TRUE(throws_errc(c.want, [&] {
        cuda::exclusive_scan_custom(c.in, c.axis, c.out, typename C::F{}, C::identity(), C::identity());
      }));
    });
    EXPECT_TRUE(called) << "no functor for dtype " << dtype_name(c.as);
    check_untouched(c.what);
  }
  EXPECT_GE(calls.size(), 26u);
}

// A shape whose tiles chain (rows-contiguous elsewhere): the explicit workspace must be there, big
// enough, aligned and device memory; otherwise the call throws and writes nothing.
TEST_F(CudaTensorScanCustom, BadWorkspacesThrowAndWriteNothing) {
  const Device cu = Device::cuda(current_device());
  const std::int64_t rows = 20000, cols = 4;
  const std::size_t bytes = static_cast<std::size_t>(rows * cols) * sizeof(std::uint64_t);
  DeviceBuffer d_in(bytes), d_out(bytes);
  FOLDKIT_CUDA_CHECK(cudaMemset(d_in.get(), 0, bytes));
  FOLDKIT_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, bytes));
  const TensorView in = TensorView::contiguous(d_in.get(), DType::u64, {rows, cols}, cu);
  const TensorView out = TensorView::contiguous(d_out.get(), DType::u64, {rows, cols}, cu);
  for (int axis : {0, 1}) {
    const std::size_t need = cuda::tensor_scan_custom_workspace_bytes(in, axis);
    ASSERT_GT(need, 0u);
    DeviceBuffer ws(need + 64);
    std::vector<unsigned char> host_ws(need + 64);
    using P = PackedThenApply<std::uint64_t>;
    auto call = [&](cuda::Workspace w) { cuda::inclusive_scan_custom(in, axis, out, P{}, P::pack(1, 0), w); };
    EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { call(cuda::Workspace{nullptr, 0}); }));
    EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { call(cuda::Workspace{ws.get(), need - 1}); }));
    EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { call(cuda::Workspace{ws.as<unsigned char>() + 8, need}); }));
    EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { call(cuda::Workspace{host_ws.data(), need}); }));
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> now(bytes);
    FOLDKIT_CUDA_CHECK(cudaMemcpy(now.data(), d_out.get(), bytes, cudaMemcpyDeviceToHost));
    EXPECT_TRUE(std::all_of(now.begin(), now.end(), [](unsigned char b) { return b == 0xFF; })) << "axis " << axis;
  }
}

}  // namespace
}  // namespace foldkit::test::tscan
