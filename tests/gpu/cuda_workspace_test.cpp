// Explicit workspaces: size query, reuse across many calls, the "left zeroed" promise, rejection
// of bad workspaces, and CUDA graph capture (explicit form, and convenient form after warm-up).
// The convenient form's cache: tests/gpu/cuda_workspace_cache_test.cpp (run alone).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/reduce_checks.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/scan.hpp"
#include "support/captured_graph.hpp"
#include "support/cuda_backend.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using CudaWorkspace = CudaTest;

TEST_F(CudaWorkspace, SizeDependsOnlyOnTheDevice) {
  int device = 0;
  FOLDKIT_CUDA_CHECK(cudaGetDevice(&device));
  const std::size_t bytes = cuda::reduce_workspace_bytes();
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(cuda::reduce_workspace_bytes(device), bytes);
  EXPECT_EQ(cuda::reduce_workspace_bytes(-1), bytes);
}

bool all_zero(const cuda::Workspace& ws) {
  std::vector<unsigned char> host(ws.bytes);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(host.data(), ws.ptr, ws.bytes, cudaMemcpyDeviceToHost));
  for (unsigned char b : host)
    if (b != 0) return false;
  return true;
}

// One workspace, many calls of different dtypes, ops and sizes; each result exact.
template <class T> void sum_and_argmax_with(const cuda::Workspace& ws, std::int64_t n, Rng& rng) {
  using S = reduce_result_t<ReduceOp::sum, T>;
  const auto sums = make_exact_sum_data<T>(n, rng.uniform(0, 3), rng.counter());
  SCOPED_TRACE(sums.describe());
  const auto in = to_device(sums);
  DeviceSlot out;
  out.poison();
  cuda::reduce<ReduceOp::sum>(in.ptr, in.n, out.get<S>(), ws);
  const S got = out.take<S>("reduce<sum> with workspace");
  if constexpr (std::is_integral_v<T>) EXPECT_TRUE(bits_equal(got, ref_int_sum(sums)));
  else EXPECT_TRUE(exactly(got, static_cast<S>(ref_real_sum(sums).sum)));

  const auto maxes = make_extreme_data<T>(n, rng.uniform(0, 3), rng.counter(), true, {rng.uniform(0, n - 1)});
  const auto max_in = to_device(maxes);
  out.poison();
  cuda::reduce<ReduceOp::argmax>(max_in.ptr, max_in.n, out.get<ArgResult<T>>(), ws);
  EXPECT_TRUE(matches_arg(out.take<ArgResult<T>>("reduce<argmax> with workspace"), maxes, ref_arg_index<true>(maxes)));
}

TEST_F(CudaWorkspace, ReusedAcrossManyCallsAndLeftZeroed) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const OwnedWorkspace owned;
  const cuda::Workspace ws = owned.get();
  const std::vector<std::int64_t> sizes = standard_sizes();
  for (int round = 0; round < 25 && !HasFailure(); ++round) {
    const std::int64_t n = sizes[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(sizes.size()) - 1))];
    sum_and_argmax_with<std::int32_t>(ws, n, rng);
    sum_and_argmax_with<float>(ws, n, rng);
    sum_and_argmax_with<double>(ws, n, rng);
    sum_and_argmax_with<half>(ws, n, rng);
  }
  EXPECT_TRUE(all_zero(ws)) << "documented: each call leaves the workspace zeroed";
}

TEST_F(CudaWorkspace, BadWorkspaceIsInvalidArgument) {
  const auto in = to_device(make_exact_sum_data<float>(4096, 0, CounterRng{7}));
  DeviceSlot out;
  const std::size_t need = cuda::reduce_workspace_bytes();
  const DeviceBuffer buffer(need + 64);
  auto sum_with = [&](cuda::Workspace ws) { cuda::reduce<ReduceOp::sum>(in.ptr, in.n, out.get<float>(), ws); };
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { sum_with({buffer.get(), need - 1}); })) << "too small";
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { sum_with({buffer.get(), 0}); })) << "zero bytes";
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { sum_with({nullptr, need}); })) << "null";
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { sum_with({buffer.as<char>() + 8, need}); }))
      << "not 16-byte aligned";
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::reduce(ReduceOp::sum, DType::f32, in.ptr, in.n, out.get<void>(), cuda::Workspace{buffer.get(), need - 1});
  })) << "too small, type-erased";
}


// Capture a sum and an argmax sharing one explicit workspace into a graph; replay it on new
// input data each time, outputs poisoned in between: every replay must recompute correctly.
TEST_F(CudaWorkspace, GraphCaptureWithExplicitWorkspaceReplays) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const Stream stream;
  const OwnedWorkspace owned(stream);
  const std::int64_t n = capped({(1 << 20) + 3}).front(), offset = 1;
  auto data = make_exact_sum_data<float>(n, offset, rng.counter());
  const DeviceArray<float> in = to_device(data);
  DeviceSlot sum_out, argmax_out;
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));

  const CapturedGraph graph(stream, [&] {
    cuda::reduce<ReduceOp::sum>(in.ptr, n, sum_out.get<float>(), owned.get(), stream);
    cuda::reduce<ReduceOp::argmax>(in.ptr, n, argmax_out.get<ArgResult<float>>(), owned.get(), stream);
  });

  for (int replay = 0; replay < 5 && !HasFailure(); ++replay) {
    SCOPED_TRACE("replay " + std::to_string(replay));
    data = make_exact_sum_data<float>(n, offset, rng.counter());
    data[rng.uniform(0, n - 1)] = 100.0f;  // a unique maximum at a new place each time
    FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(in.buffer.get(), data.storage.data(), data.storage.size() * sizeof(float),
                                       cudaMemcpyHostToDevice, stream));
    sum_out.poison(stream);
    argmax_out.poison(stream);
    graph.launch(stream);
    EXPECT_TRUE(exactly(sum_out.take<float>("graph sum", stream), static_cast<float>(ref_real_sum(data).sum)));
    EXPECT_TRUE(matches_arg(argmax_out.take<ArgResult<float>>("graph argmax", stream), data, ref_arg_index<true>(data)));
  }
  EXPECT_TRUE(all_zero(owned.get()));
}

// Documented: the convenient form can be captured once a call has been made on that stream
// (and while that stream's workspace stays cached: no other stream is used in between here).
TEST_F(CudaWorkspace, GraphCaptureOfConvenientFormAfterWarmUp) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const Stream stream;
  const std::int64_t n = capped({65537}).front();
  auto data = make_exact_sum_data<std::int32_t>(n, 2, rng.counter());
  const DeviceArray<std::int32_t> in = to_device(data);
  DeviceSlot out;
  cuda::reduce<ReduceOp::sum>(in.ptr, n, out.get<std::int64_t>(), stream);  // warm-up: creates the workspace
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));

  const CapturedGraph graph(stream, [&] { cuda::reduce<ReduceOp::sum>(in.ptr, n, out.get<std::int64_t>(), stream); });
  for (int replay = 0; replay < 3; ++replay) {
    data = make_exact_sum_data<std::int32_t>(n, 2, rng.counter());
    FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(in.buffer.get(), data.storage.data(), data.storage.size() * sizeof(std::int32_t),
                                       cudaMemcpyHostToDevice, stream));
    out.poison(stream);
    graph.launch(stream);
    EXPECT_TRUE(bits_equal(out.take<std::int64_t>("graph sum", stream), ref_int_sum(data))) << "replay " << replay;
  }
}

}  // namespace
}  // namespace foldkit::test
