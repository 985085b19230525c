// foldkit::cuda::reduce_custom over tensors (foldkit/cuda/tensor_reduce_custom.cuh) with user
// functors, on the problems of tests/common/tensor_random_cases.hpp through tensor_custom_cases.hpp
// (one exact, associative and commutative functor per dtype; values and guards redrawn for it):
// every edge shape twice and 120 random problems per functor, each against the logical-index
// reference, with the bytes outside the output view still poisoned and the input unchanged. The
// calls alternate between a created stream and the default stream; every third call that needs a
// workspace passes an explicit one (which must come back zeroed); every fifth problem runs twice
// and must give the same bytes. The run must reach every kernel family and split launches.
// Also: empty reduced extents write the identity, and bad arguments (the CPU test's table over
// device memory, host memory for the CUDA backend, bad workspaces) throw, enqueue nothing and
// leave every buffer as it was. SKIPPED where no GPU is usable.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "common/tensor_custom_cases.hpp"
#include "foldkit/cuda/tensor_reduce_custom.cuh"
#include "support/cuda_backend.hpp"
#include "support/custom_functors.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using CudaTensorCustom = CudaTest;

constexpr int kMaxReported = 20;  // failures printed in full per test; all are counted
constexpr std::size_t kAlign = 256;

std::size_t align_up(std::size_t b) { return (b + kAlign - 1) / kAlign * kAlign; }

// The kernel family describe_reduce_custom names ("kernel=outer vec16 ..." -> "outer").
std::string kernel_of(const std::string& described) {
  const std::size_t at = described.find("kernel=");
  if (at == std::string::npos) return "?";
  const std::size_t end = described.find(' ', at);
  return described.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7);
}

// Runs problems one by one in one device arena: the input's storage, the poisoned output and, for
// a repeated call, a second output, each 256-byte aligned (the views' offsets keep the
// misalignments the problems chose).
class Runner {
 public:
  explicit Runner(CoverageSummary& summary) : summary_(summary), device_(Device::cuda(current_device())) {}

  std::map<std::string, int> kernels;  // kernel family -> problems
  int split_launches = 0, explicit_workspaces = 0, repeated = 0;

  template <class C> void run(RandomProblem& p) {
    const std::size_t in_at = 0, out_at = align_up(p.storage_bytes), again_at = out_at + align_up(p.out->bytes.size());
    const bool twice = p.out_numel > 0 && p.id % 5 == 0;
    const std::size_t total = again_at + align_up(p.out->bytes.size());
    if (arena_.bytes() < total) arena_ = DeviceBuffer(std::max(total, arena_.bytes() * 2));
    auto* base = arena_.as<unsigned char>();
    FOLDKIT_CUDA_CHECK(cudaMemcpy(base + in_at, p.storage, p.storage_bytes, cudaMemcpyHostToDevice));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(base + out_at, p.out->bytes.data(), p.out->bytes.size(), cudaMemcpyHostToDevice));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(base + again_at, p.out->bytes.data(), p.out->bytes.size(), cudaMemcpyHostToDevice));
    const TensorView in = p.input_view(base + in_at, device_);
    const TensorView out = p.out_view(base + out_at, device_), again = p.out_view(base + again_at, device_);
    cudaStream_t stream = calls_ % 2 == 0 ? static_cast<cudaStream_t>(stream_) : nullptr;
    ++calls_;

    const std::string described = cuda::describe_reduce_custom(in, p.axes, p.keepdims, out);
    const std::size_t ws_bytes = cuda::tensor_reduce_custom_workspace_bytes(in, p.axes, p.keepdims, out);
    if (p.out_numel > 0) ++kernels[kernel_of(described)];
    if (ws_bytes > 0) ++split_launches;
    DeviceBuffer ws;
    const bool explicit_ws = ws_bytes > 0 && split_launches % 3 == 0;
    if (explicit_ws) {
      ++explicit_workspaces;
      ws = DeviceBuffer(ws_bytes);
      FOLDKIT_CUDA_CHECK(cudaMemset(ws.get(), 0, ws_bytes));
    }
    // The uploads and the memset are on the legacy default stream, which a non-blocking stream
    // does not wait for (and a pageable copy may return before its DMA lands).
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    auto call = [&](const TensorView& o) {
      try {
        if (explicit_ws) cuda::reduce_custom(in, p.axes, p.keepdims, o, typename C::F{}, C::identity(), cuda::Workspace{ws.get(), ws_bytes}, stream);
        else cuda::reduce_custom(in, p.axes, p.keepdims, o, typename C::F{}, C::identity(), stream);
      } catch (const Error& e) {
        return Outcome{true, e.code(), e.what()};
      }
      return Outcome{};
    };
    const Outcome outcome = call(out);
    const Outcome second = twice ? call(again) : Outcome{};
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    FOLDKIT_CUDA_CHECK(cudaGetLastError());

    std::vector<unsigned char> got_in(p.storage_bytes), got_again(p.out->bytes.size());
    FOLDKIT_CUDA_CHECK(cudaMemcpy(got_in.data(), base + in_at, p.storage_bytes, cudaMemcpyDeviceToHost));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(p.out->bytes.data(), base + out_at, p.out->bytes.size(), cudaMemcpyDeviceToHost));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(got_again.data(), base + again_at, p.out->bytes.size(), cudaMemcpyDeviceToHost));
    summary_.add(p);
    ::testing::AssertionResult r = check_custom_problem<C>(p, outcome);
    if (r && std::memcmp(got_in.data(), p.storage, p.storage_bytes) != 0) r = ::testing::AssertionFailure() << "the input changed";
    if (r && twice) {
      ++repeated;
      if (second.threw) r = ::testing::AssertionFailure() << "the second call threw " << second.what;
      else if (got_again != p.out->bytes) r = ::testing::AssertionFailure() << "a second identical call gave different bytes";
    }
    if (r && explicit_ws) {
      std::vector<unsigned char> left(ws_bytes);
      FOLDKIT_CUDA_CHECK(cudaMemcpy(left.data(), ws.get(), ws_bytes, cudaMemcpyDeviceToHost));
      if (std::any_of(left.begin(), left.end(), [](unsigned char b) { return b != 0; }))
        r = ::testing::AssertionFailure() << "the explicit workspace was not left zeroed";
    }
    if (!r && ++summary_.failures <= kMaxReported)
      ADD_FAILURE() << C::kName << ": " << p.describe() << "\n  launch: " << described << "\n  " << r.message();
  }

  std::string text() const {
    std::string s = "  kernels:";
    for (const auto& [k, n] : kernels) s += " " + k + "=" + std::to_string(n);
    return s + "\n  split launches " + std::to_string(split_launches) + " (explicit workspace " + std::to_string(explicit_workspaces) +
           "), repeated " + std::to_string(repeated) + "\n";
  }
  ::testing::AssertionResult reached_every_kernel() const {
    for (const char* k : {"rows-packed", "rows-dense", "rows-group", "rows-block", "outer", "generic"})
      if (kernels.find(k) == kernels.end()) return ::testing::AssertionFailure() << "kernel family " << k << " never ran";
    if (split_launches == 0 || explicit_workspaces == 0) return ::testing::AssertionFailure() << "no split launch (workspace)";
    return ::testing::AssertionSuccess();
  }

 private:
  CoverageSummary& summary_;
  Device device_;
  Stream stream_;
  DeviceBuffer arena_;
  int calls_ = 0;
};

RandomCaseLimits gpu_limits() {
  RandomCaseLimits l;
  l.small_numel = 8192;
  l.big_numel = 1 << 19;
  return l;
}

TEST_F(CudaTensorCustom, EdgeShapesMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  CoverageSummary summary;
  Runner runner(summary);
  int id = 0;
  const std::vector<ShapeSpec> specs = edge_specs();
  for_each_custom_case([&](auto tag) {
    using C = typename decltype(tag)::type;
    for (int round = 0; round < 2; ++round)
      for (const ShapeSpec& spec : specs) {
        RandomProblem p = make_custom_problem<C>(spec, rng, id++);
        runner.run<C>(p);
      }
  });
  std::cout << "[ CudaTensorCustom.EdgeShapes ]\n" << summary.text() << runner.text();
  EXPECT_EQ(summary.failures, 0);
  EXPECT_TRUE(summary.reached_every_structure(18));
  if (max_n() >= 4 * 300007) {
    EXPECT_TRUE(runner.reached_every_kernel());
  }
}

TEST_F(CudaTensorCustom, RandomProblemsMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  CoverageSummary summary;
  Runner runner(summary);
  constexpr int kPerFunctor = 120;
  int id = 0;
  for_each_custom_case([&](auto tag) {
    using C = typename decltype(tag)::type;
    for (int i = 0; i < kPerFunctor; ++i) {
      RandomProblem p = make_custom_problem<C>(random_spec(random_regime(rng), gpu_limits(), rng), rng, id++);
      runner.run<C>(p);
    }
  });
  std::cout << "[ CudaTensorCustom.RandomProblems ]\n" << summary.text() << runner.text();
  EXPECT_EQ(summary.failures, 0);
  EXPECT_EQ(summary.cases, 9 * kPerFunctor);
  EXPECT_TRUE(summary.reached_every_structure(10));
}

TEST_F(CudaTensorCustom, EmptyReducedExtentWritesTheIdentity) {
  const Device cu = Device::cuda(current_device());
  DeviceBuffer out(64);
  FOLDKIT_CUDA_CHECK(cudaMemset(out.get(), 0x5a, 64));
  std::int64_t dummy = 0;  // an empty view's pointer is never read (nor checked)
  cuda::reduce_custom(TensorView::contiguous(&dummy, DType::i64, {5, 0}, cu), {1}, false,
                      TensorView::contiguous(out.get(), DType::i64, {5}, cu), SaturatingAdd{}, std::int64_t{0});
  cuda::reduce_custom(TensorView::contiguous(nullptr, DType::i32, {0, 2, 3}, cu), {0}, true,
                      TensorView::contiguous(out.as<std::int32_t>() + 10, DType::i32, {1, 2, 3}, cu), BitwiseAnd{}, std::int32_t{-1});
  std::int64_t got64[5];
  std::int32_t got32[6];
  FOLDKIT_CUDA_CHECK(cudaMemcpy(got64, out.get(), sizeof got64, cudaMemcpyDeviceToHost));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(got32, out.as<std::int32_t>() + 10, sizeof got32, cudaMemcpyDeviceToHost));
  for (std::int64_t v : got64) EXPECT_EQ(v, 0);
  for (std::int32_t v : got32) EXPECT_EQ(v, -1);
}

// ---- bad arguments: the right Errc, nothing enqueued, nothing written ---------------------------------

using Bytes = std::vector<unsigned char, AlignedAllocator<unsigned char>>;

template <class C> void call_custom(const CustomBadCall& c, const cuda::Workspace* ws) {
  if (ws != nullptr) cuda::reduce_custom(c.in, c.axes, c.keepdims, c.out, typename C::F{}, C::identity(), *ws);
  else cuda::reduce_custom(c.in, c.axes, c.keepdims, c.out, typename C::F{}, C::identity());
}

TEST_F(CudaTensorCustom, BadArgumentsThrowAndWriteNothing) {
  const int dev = current_device();
  const Device cu = Device::cuda(dev);
  Bytes pattern(kBadInBytes);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<unsigned char>(mix64(i) >> 56);
  const Bytes poison(kBadOutBytes, 0xFF);
  DeviceBuffer d_in(kBadInBytes), d_out(kBadOutBytes);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_in.get(), pattern.data(), kBadInBytes, cudaMemcpyHostToDevice));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_out.get(), poison.data(), kBadOutBytes, cudaMemcpyHostToDevice));
  Bytes h_in = pattern, h_out = poison;  // host memory handed to the CUDA backend

  std::vector<CustomBadCall> calls = custom_bad_calls(d_in.get(), d_out.get(), cu);
  auto* dx = static_cast<float*>(d_in.get()) + 256;
  auto* hx = reinterpret_cast<float*>(h_in.data()) + 256;
  auto* dob = static_cast<unsigned char*>(d_out.get());
  const TensorView x = TensorView::contiguous(dx, DType::f32, {4, 16}, cu);
  const TensorView out4 = TensorView::contiguous(dob, DType::f32, {4}, cu);
  auto add = [&](const char* what, TensorView in, TensorView out) {
    calls.push_back(CustomBadCall{what, Errc::wrong_memory, DType::f32, in, {1}, false, out});
  };
  add("host view of device input memory", TensorView::contiguous(dx, DType::f32, {4, 16}), out4);
  add("CUDA view of host (pageable) input memory", TensorView::contiguous(hx, DType::f32, {4, 16}, cu), out4);
  add("host view of device output memory", x, TensorView::contiguous(dob, DType::f32, {4}));
  add("CUDA view of host (pageable) output memory", x, TensorView::contiguous(h_out.data(), DType::f32, {4}, cu));
  add("input view of device id + 1", TensorView::contiguous(dx, DType::f32, {4, 16}, Device::cuda(dev + 1)), out4);

  int checked = 0;
  for (const CustomBadCall& c : calls) {
    SCOPED_TRACE(custom_bad_call_text(c));
    bool called = false;
    visit_custom_case(c.as, [&](auto tag) {
      called = true;
      EXPECT_TRUE(throws_errc(c.want, [&] { call_custom<typename decltype(tag)::type>(c, nullptr); }));
    });
    EXPECT_TRUE(called) << "no functor for dtype " << dtype_name(c.as);
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    FOLDKIT_CUDA_CHECK(cudaGetLastError());
    Bytes now_in(kBadInBytes), now_out(kBadOutBytes);
    FOLDKIT_CUDA_CHECK(cudaMemcpy(now_in.data(), d_in.get(), kBadInBytes, cudaMemcpyDeviceToHost));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(now_out.data(), d_out.get(), kBadOutBytes, cudaMemcpyDeviceToHost));
    EXPECT_TRUE(now_in == pattern) << "the device input buffer changed";
    EXPECT_TRUE(now_out == poison) << "the device output buffer was written";
    EXPECT_TRUE(h_in == pattern && h_out == poison) << "a host buffer was written";
    if (now_in != pattern) FOLDKIT_CUDA_CHECK(cudaMemcpy(d_in.get(), pattern.data(), kBadInBytes, cudaMemcpyHostToDevice));
    if (now_out != poison) FOLDKIT_CUDA_CHECK(cudaMemcpy(d_out.get(), poison.data(), kBadOutBytes, cudaMemcpyHostToDevice));
    h_in = pattern;
    h_out = poison;
    ++checked;
  }
  EXPECT_GE(checked, 60);
}

// A shape that splits its rows over several blocks: the explicit workspace must be there, big
// enough, aligned and device memory; otherwise the call throws and writes nothing.
TEST_F(CudaTensorCustom, BadWorkspacesThrowAndWriteNothing) {
  const Device cu = Device::cuda(current_device());
  const std::int64_t rows = 2, len = std::int64_t{1} << 18;
  DeviceBuffer d_in(static_cast<std::size_t>(rows * len) * sizeof(float)), d_out(256);
  FOLDKIT_CUDA_CHECK(cudaMemset(d_in.get(), 0, d_in.bytes()));
  FOLDKIT_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, d_out.bytes()));
  const TensorView in = TensorView::contiguous(d_in.get(), DType::f32, {rows, len}, cu);
  const TensorView out = TensorView::contiguous(d_out.get(), DType::f32, {rows}, cu);
  const std::size_t need = cuda::tensor_reduce_custom_workspace_bytes(in, {1}, false, out);
  ASSERT_GT(need, 0u) << cuda::describe_reduce_custom(in, {1}, false, out);
  DeviceBuffer ws(need + 16);
  FOLDKIT_CUDA_CHECK(cudaMemset(ws.get(), 0, ws.bytes()));
  std::vector<unsigned char> host_ws(need);
  struct Bad {
    const char* what;
    Errc want;
    cuda::Workspace ws;
  };
  const Bad bad[] = {
      {"null workspace", Errc::invalid_argument, cuda::Workspace{nullptr, 0}},
      {"one byte short", Errc::invalid_argument, cuda::Workspace{ws.get(), need - 1}},
      {"not 16-byte aligned", Errc::invalid_argument, cuda::Workspace{ws.as<unsigned char>() + 8, need}},
      {"host memory", Errc::wrong_memory, cuda::Workspace{host_ws.data(), need}},
  };
  for (const Bad& b : bad) {
    EXPECT_TRUE(throws_errc(b.want, [&] { cuda::reduce_custom(in, {1}, false, out, MaxAbs{}, 0.0f, b.ws); })) << b.what;
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    unsigned char got[256];
    FOLDKIT_CUDA_CHECK(cudaMemcpy(got, d_out.get(), sizeof got, cudaMemcpyDeviceToHost));
    EXPECT_TRUE(std::all_of(got, got + sizeof got, [](unsigned char c) { return c == 0xFF; })) << b.what << ": the output was written";
  }
  cuda::reduce_custom(in, {1}, false, out, MaxAbs{}, 0.0f, cuda::Workspace{ws.get(), need});
  float rows_max[2];
  FOLDKIT_CUDA_CHECK(cudaMemcpy(rows_max, d_out.get(), sizeof rows_max, cudaMemcpyDeviceToHost));
  EXPECT_EQ(rows_max[0], 0.0f);
  EXPECT_EQ(rows_max[1], 0.0f);
}

}  // namespace
}  // namespace foldkit::test
