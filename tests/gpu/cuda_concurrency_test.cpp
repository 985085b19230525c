// Concurrent use: 4 streams in flight at once from one thread, and 4 host threads at once, with
// the convenient form (each thread's cache of per-stream workspaces, at most 8 per device) and
// with explicit per-stream workspaces; and one thread using every GPU of the machine in turn.
// Every result is checked; a shared or racing workspace shows up as a wrong or unwritten
// (poisoned) result.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/reduce_checks.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "support/cuda_backend.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

constexpr int kLanes = 4;
constexpr int kRounds = 10;

// One independent job: its own input (exact-sum i32 data and planted-max f32 data), expected
// answers, and output slots.
struct Lane {
  TestArray<std::int32_t> ints;
  TestArray<float> floats;
  DeviceArray<std::int32_t> d_ints;
  DeviceArray<float> d_floats;
  std::int64_t want_sum;
  std::int64_t want_argmax;
  DeviceSlot sum_out, argmax_out;

  Lane(std::int64_t n, Rng& rng)
      : ints(make_exact_sum_data<std::int32_t>(n, rng.uniform(0, 3), rng.counter())),
        floats(make_extreme_data<float>(n, rng.uniform(0, 3), rng.counter(), true, {rng.uniform(0, n - 1)})),
        d_ints(to_device(ints)),
        d_floats(to_device(floats)),
        want_sum(ref_int_sum(ints)),
        want_argmax(ref_arg_index<true>(floats)) {}

  // Enqueue both reductions on `stream` without waiting. ws == nullopt: the convenient form.
  void enqueue(cudaStream_t stream, const std::optional<cuda::Workspace>& ws) {
    sum_out.poison(stream);
    argmax_out.poison(stream);
    if (ws) {
      cuda::reduce<ReduceOp::sum>(d_ints.ptr, d_ints.n, sum_out.get<std::int64_t>(), *ws, stream);
      cuda::reduce<ReduceOp::argmax>(d_floats.ptr, d_floats.n, argmax_out.get<ArgResult<float>>(), *ws, stream);
    } else {
      cuda::reduce<ReduceOp::sum>(d_ints.ptr, d_ints.n, sum_out.get<std::int64_t>(), stream);
      cuda::reduce<ReduceOp::argmax>(d_floats.ptr, d_floats.n, argmax_out.get<ArgResult<float>>(), stream);
    }
  }
  // Wait for `stream` and describe any wrong result ("" when both are right).
  std::string collect(cudaStream_t stream) {
    std::string problems;
    const auto sum = sum_out.take<std::int64_t>("sum", stream);
    if (sum != want_sum) problems += "sum " + std::to_string(sum) + " != " + std::to_string(want_sum) + "; ";
    const ::testing::AssertionResult arg_ok =
        matches_arg(argmax_out.take<ArgResult<float>>("argmax", stream), floats, want_argmax);
    if (!static_cast<bool>(arg_ok)) problems += arg_ok.message();
    return problems;
  }
};

std::vector<std::unique_ptr<Lane>> make_lanes(Rng& rng) {
  // Large enough that each launch spans the whole GPU, so launches on different streams overlap.
  const std::int64_t n = capped({(std::int64_t{1} << 22) + 1}).front();
  std::vector<std::unique_ptr<Lane>> lanes;
  for (int i = 0; i < kLanes; ++i) lanes.push_back(std::make_unique<Lane>(n, rng));
  return lanes;
}

using CudaConcurrency = CudaTest;

// All 4 streams are enqueued before any is waited for.
void run_streams(std::vector<std::unique_ptr<Lane>>& lanes, bool explicit_ws) {
  std::array<Stream, kLanes> streams;
  std::vector<std::optional<OwnedWorkspace>> owned(kLanes);
  for (int i = 0; i < kLanes; ++i)
    if (explicit_ws) owned[i].emplace(streams[i]);
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kLanes; ++i)
      lanes[i]->enqueue(streams[i], explicit_ws ? std::optional(owned[i]->get()) : std::nullopt);
    for (int i = 0; i < kLanes; ++i) {
      const std::string problems = lanes[i]->collect(streams[i]);
      ASSERT_EQ(problems, "") << "round " << round << ", stream " << i;
    }
  }
}

TEST_F(CudaConcurrency, FourStreamsFromOneThreadConvenientForm) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  auto lanes = make_lanes(rng);
  run_streams(lanes, false);
}

TEST_F(CudaConcurrency, FourStreamsFromOneThreadExplicitWorkspaces) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  auto lanes = make_lanes(rng);
  run_streams(lanes, true);
}

// 4 host threads call at once, each on its own stream (or all on the legacy default stream),
// each enqueuing several rounds before waiting.
void run_threads(std::vector<std::unique_ptr<Lane>>& lanes, bool explicit_ws, bool default_stream) {
  std::array<std::string, kLanes> problems;
  std::vector<std::thread> threads;
  for (int i = 0; i < kLanes; ++i) {
    threads.emplace_back([&, i] {
      try {
        std::optional<Stream> own;
        if (!default_stream) own.emplace();
        const cudaStream_t stream = default_stream ? nullptr : static_cast<cudaStream_t>(*own);
        std::optional<OwnedWorkspace> ws;
        if (explicit_ws) ws.emplace(stream);
        for (int round = 0; round < kRounds && problems[i].empty(); ++round) {
          lanes[i]->enqueue(stream, explicit_ws ? std::optional(ws->get()) : std::nullopt);
          problems[i] = lanes[i]->collect(stream);
          if (!problems[i].empty()) problems[i] = "round " + std::to_string(round) + ": " + problems[i];
        }
      } catch (const std::exception& e) {
        problems[i] = std::string("exception: ") + e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kLanes; ++i) EXPECT_EQ(problems[i], "") << "thread " << i;
}

// Threads x {own stream, legacy default stream} x {convenient form, explicit workspaces}.
TEST_F(CudaConcurrency, FourHostThreadsOwnStreamsConvenientForm) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  auto lanes = make_lanes(rng);
  run_threads(lanes, false, false);
}

TEST_F(CudaConcurrency, FourHostThreadsOwnStreamsExplicitWorkspaces) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  auto lanes = make_lanes(rng);
  run_threads(lanes, true, false);
}

TEST_F(CudaConcurrency, FourHostThreadsDefaultStreamConvenientForm) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  auto lanes = make_lanes(rng);
  run_threads(lanes, false, true);
}

TEST_F(CudaConcurrency, FourHostThreadsDefaultStreamExplicitWorkspaces) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  auto lanes = make_lanes(rng);
  run_threads(lanes, true, true);
}

// One thread uses every GPU in turn, twice round: what the library remembers per device (SM
// counts, occupancies, the cluster-size attribute, which the runtime sets per device) must be
// asked again on each device, not carried over from the first. Sizes for both the one-cluster
// launch (small grids) and the grid kernel. Needs two or more GPUs; skips otherwise.
TEST_F(CudaConcurrency, EveryDeviceInTurn) {
  int devices = 0;
  FOLDKIT_CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (devices < 2) GTEST_SKIP() << "needs 2 or more GPUs; this machine has " << devices;
  struct RestoreDevice {  // the later tests run on the device they started on, even after a throw
    int device = 0;
    ~RestoreDevice() { (void)cudaSetDevice(device); }
  } restore;
  FOLDKIT_CUDA_CHECK(cudaGetDevice(&restore.device));
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  std::string problems;
  for (int round = 0; round < 2 && problems.empty(); ++round) {
    for (int device = 0; device < devices && problems.empty(); ++device) {
      FOLDKIT_CUDA_CHECK(cudaSetDevice(device));
      for (const std::int64_t n : capped({(std::int64_t{1} << 16) + 3, (std::int64_t{1} << 22) + 1})) {
        Lane lane(n, rng);  // allocated on `device`
        lane.enqueue(nullptr, std::nullopt);
        const std::string p = lane.collect(nullptr);
        if (!p.empty())
          problems = "round " + std::to_string(round) + ", device " + std::to_string(device) + ", n = " +
                     std::to_string(n) + ": " + p;
      }
    }
  }
  EXPECT_EQ(problems, "");
}

}  // namespace
}  // namespace foldkit::test
