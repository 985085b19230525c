// foldkit::cuda::reduce / arg_reduce over tensors on randomized problems (tests/common/tensor_random_cases.hpp):
// the fixed edge shapes four times over (every row length 1..40, 2^k +- 1 rows, (4, 3e5) rows,
// (2^17 + 3, 3) over dim 0, wide outer reductions, transposed / stepped / broadcast views, rank 0
// and 6, size-0 dims; each time with another op x dtype and layout), then 3,000 random problems
// across every regime (short rows, long rows, outer, strided, transposed, broadcast, all, map,
// empty, general), each with an op x dtype dealt from all 56, random layouts (data pointers offset
// by 0..3 elements from a 256-byte aligned base, so 16-byte loads are misaligned), axes, keepdims
// and output layouts. Problems run in batches: one device arena per batch holds every problem's
// input and poisoned outputs (256-byte aligned regions with patterned gaps between them), one
// upload, the calls (alternately on a created stream and the default stream), one download; then
// every output element against the long double / wrapping-integer reference, argmin/argmax indices
// and values exact, and every arena byte outside the output regions (inputs, gaps) unchanged.
// Every fifth problem with outputs is run twice into two regions that must match bit for bit.
// The run prints what it covered (plan families, regimes, tags); the seed is printed on failure.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "common/tensor_random_cases.hpp"
#include "foldkit/cuda/tensor_reduce.hpp"
#include "support/cuda_backend.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using CudaTensorRandom = CudaTest;

constexpr int kMaxReported = 20;               // failures printed in full per test; all are counted
constexpr std::size_t kAlign = 256, kGap = 256;  // region alignment, and the patterned gap before each
constexpr unsigned char kGapByte = 0xA5;
constexpr std::size_t kBatchBytes = std::size_t{48} << 20;
constexpr std::size_t kBatchCases = 160;

struct Regions {
  std::size_t in = 0, out = 0, vals = 0, again = 0;
  bool twice = false;
};

class BatchRunner {
 public:
  explicit BatchRunner(CoverageSummary& summary) : summary_(summary), device_(Device::cuda(current_device())) {}

  // False once a CUDA error made the device unusable (reported already).
  bool ok() const { return !fatal_; }

  void add(RandomProblem p) {
    bytes_ += p.storage_bytes + 2 * p.out->bytes.size() + (p.vals ? p.vals->bytes.size() : 0) + 4 * (kGap + kAlign);
    batch_.push_back(std::move(p));
    if (batch_.size() >= kBatchCases || bytes_ >= kBatchBytes) flush();
  }

  void flush() {
    if (batch_.empty() || fatal_) return;
    run_batch();
    batch_.clear();
    bytes_ = 0;
    ++batches_;
  }

 private:
  Outcome call(const RandomProblem& p, unsigned char* base, std::size_t in_at, std::size_t out_at, std::size_t vals_at,
               cudaStream_t stream) const {
    const TensorView in = p.input_view(base + in_at, device_);
    try {
      if (p.vals)
        cuda::arg_reduce(p.op, in, p.axes, p.keepdims, p.out_view(base + out_at, device_), p.vals_view(base + vals_at, device_), stream);
      else
        cuda::reduce(p.op, in, p.axes, p.keepdims, p.out_view(base + out_at, device_), stream);
    } catch (const Error& e) {
      return Outcome{true, e.code(), e.what()};
    }
    return Outcome{};
  }

  void fail(const RandomProblem& p, const std::string& why) {
    if (++summary_.failures <= kMaxReported) ADD_FAILURE() << p.describe() << "\n  " << why;
  }

  void run_batch() {
    std::vector<Regions> reg(batch_.size());
    std::size_t cursor = 0;
    auto place = [&](std::size_t bytes) {
      cursor = (cursor + kGap + kAlign - 1) / kAlign * kAlign;
      const std::size_t at = cursor;
      cursor += bytes;
      return at;
    };
    for (std::size_t i = 0; i < batch_.size(); ++i) {
      const RandomProblem& p = batch_[i];
      reg[i].in = place(p.storage_bytes);
      reg[i].out = place(p.out->bytes.size());
      if (p.vals) reg[i].vals = place(p.vals->bytes.size());
      reg[i].twice = !p.vals && !p.expect_empty_error && p.out_numel > 0 && p.id % 5 == 0;
      if (reg[i].twice) reg[i].again = place(p.out->bytes.size());
    }
    const std::size_t total = cursor + kGap;
    std::vector<unsigned char> staged(total, kGapByte);
    for (std::size_t i = 0; i < batch_.size(); ++i) {
      const RandomProblem& p = batch_[i];
      std::memcpy(&staged[reg[i].in], p.storage, p.storage_bytes);
      std::memcpy(&staged[reg[i].out], p.out->bytes.data(), p.out->bytes.size());
      if (p.vals) std::memcpy(&staged[reg[i].vals], p.vals->bytes.data(), p.vals->bytes.size());
      if (reg[i].twice) std::memcpy(&staged[reg[i].again], p.out->bytes.data(), p.out->bytes.size());
    }
    if (arena_.bytes() < total) arena_ = DeviceBuffer(std::max(total, arena_.bytes() * 2));
    auto* base = arena_.as<unsigned char>();
    cudaStream_t stream = batches_ % 2 == 0 ? static_cast<cudaStream_t>(stream_) : nullptr;
    FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(base, staged.data(), total, cudaMemcpyHostToDevice, stream));
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));

    std::vector<Outcome> outcomes(batch_.size());
    std::vector<Outcome> again(batch_.size());
    for (std::size_t i = 0; i < batch_.size(); ++i) {
      const RandomProblem& p = batch_[i];
      outcomes[i] = call(p, base, reg[i].in, reg[i].out, reg[i].vals, stream);
      if (reg[i].twice && !outcomes[i].threw) again[i] = call(p, base, reg[i].in, reg[i].again, 0, stream);
    }
    const cudaError_t sync = cudaStreamSynchronize(stream);
    const cudaError_t last = cudaGetLastError();
    if (sync != cudaSuccess || last != cudaSuccess) {
      fatal_ = true;
      std::ostringstream os;
      os << "CUDA error after a batch of " << batch_.size() << " problems: "
         << cudaGetErrorString(sync != cudaSuccess ? sync : last) << "; the batch:";
      for (const RandomProblem& p : batch_) os << "\n  " << p.describe();
      ADD_FAILURE() << os.str();
      return;
    }
    std::vector<unsigned char> got(total);
    FOLDKIT_CUDA_CHECK(cudaMemcpy(got.data(), base, total, cudaMemcpyDeviceToHost));

    std::vector<std::pair<std::size_t, std::size_t>> outputs;  // regions the calls may write
    for (std::size_t i = 0; i < batch_.size(); ++i) {
      RandomProblem& p = batch_[i];
      std::memcpy(p.out->bytes.data(), &got[reg[i].out], p.out->bytes.size());
      outputs.emplace_back(reg[i].out, p.out->bytes.size());
      if (p.vals) {
        std::memcpy(p.vals->bytes.data(), &got[reg[i].vals], p.vals->bytes.size());
        outputs.emplace_back(reg[i].vals, p.vals->bytes.size());
      }
      if (reg[i].twice) outputs.emplace_back(reg[i].again, p.out->bytes.size());
      summary_.add(p);
      const auto r = check_problem(p, outcomes[i]);
      if (!r) {
        fail(p, r.message());
        continue;
      }
      if (reg[i].twice) {
        if (again[i].threw) fail(p, "the second call threw " + again[i].what);
        else if (std::memcmp(&got[reg[i].again], &got[reg[i].out], p.out->bytes.size()) != 0)
          fail(p, "a second identical call gave different bytes (not deterministic)");
      }
    }
    // Inputs and gaps: untouched.
    std::vector<char> writable(total, 0);
    for (const auto& [at, bytes] : outputs) std::fill(writable.begin() + static_cast<std::ptrdiff_t>(at), writable.begin() + static_cast<std::ptrdiff_t>(at + bytes), 1);
    for (std::size_t b = 0; b < total; ++b) {
      if (writable[b] || got[b] == staged[b]) continue;
      std::size_t owner = 0;  // the problem whose input holds byte b, or the region after which the gap lies
      for (std::size_t i = 0; i < batch_.size(); ++i)
        if (reg[i].in <= b) owner = i;
      const bool in_input = b >= reg[owner].in && b < reg[owner].in + batch_[owner].storage_bytes;
      ADD_FAILURE() << "arena byte " << b << " changed (" << (in_input ? "inside the input of" : "in a gap after the regions of") << " "
                    << batch_[owner].describe() << "; some problem of this batch wrote outside its output views)";
      ++summary_.failures;
      break;
    }
  }

  CoverageSummary& summary_;
  Device device_;
  Stream stream_;
  DeviceBuffer arena_;
  std::vector<RandomProblem> batch_;
  std::size_t bytes_ = 0;
  int batches_ = 0;
  bool fatal_ = false;
};

RandomCaseLimits gpu_limits() {
  RandomCaseLimits l;
  l.small_numel = 8192;
  l.big_numel = 1 << 19;
  return l;
}

TEST_F(CudaTensorRandom, EdgeShapesMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  ProblemSource source(test_seed(), gpu_limits());
  CoverageSummary summary;
  BatchRunner runner(summary);
  int id = 0;
  const std::vector<ShapeSpec> specs = edge_specs();
  for (int round = 0; round < 4 && runner.ok(); ++round)
    for (const ShapeSpec& spec : specs) runner.add(source.next_edge(spec, id++));
  runner.flush();
  std::cout << "[ CudaTensorRandom.EdgeShapes ]\n" << summary.text();
  EXPECT_EQ(summary.failures, 0);
  if (runner.ok()) {
    EXPECT_TRUE(summary.reached_every_structure(4));
    EXPECT_TRUE(summary.reached_tags(required_tags()));
  }
}

TEST_F(CudaTensorRandom, RandomProblemsMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  ProblemSource source(test_seed(), gpu_limits());
  CoverageSummary summary;
  BatchRunner runner(summary);
  constexpr int kCases = 3000;
  for (int id = 0; id < kCases && runner.ok(); ++id) runner.add(source.next_random(id));
  runner.flush();
  std::cout << "[ CudaTensorRandom.RandomProblems ]\n" << summary.text();
  EXPECT_EQ(summary.failures, 0);
  if (runner.ok()) {
    EXPECT_EQ(summary.cases, kCases);
    EXPECT_TRUE(summary.reached_every_structure(20));
  }
}

// Rows-dense (rows of 1-64 whole 16-byte vectors, back to back, aligned) for every lane count it
// takes, every op and dtype: 3001 rows each (a partial round of loads), then a few shapes with
// more vectors than the grid takes in one round of 8 loads a thread (several rounds and a partial
// last one), and long rows of 256 vectors. Its group_reduce_scatter shares a lane group's rows
// out while reducing them: a row written by the wrong lane, from the wrong load, or combined out
// of order fails here.
TEST_F(CudaTensorRandom, RowsDenseEveryGroupWidthOpAndDtype) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  CoverageSummary summary;
  BatchRunner runner(summary);
  int id = 0;
  auto add = [&](ReduceOp op, DType dt, std::int64_t rows, std::int64_t vectors) {
    const std::int64_t per_vector = 16 / static_cast<std::int64_t>(dtype_size(dt));
    ShapeSpec spec;
    spec.regime = "rows-dense " + std::to_string(vectors) + " vectors a row";
    spec.shape = {rows, vectors * per_vector};
    fit_max_n(spec.shape);
    spec.axes = {1};
    spec.max_offset = 0;  // 16-byte aligned rows: the rows-dense kernel
    // Every case's plan is rows-dense (a device input: alignment decides it), unless
    // FOLDKIT_TEST_MAX_N cut a long-row case below the rows that long rows-dense takes.
    if (vectors <= 64 || spec.shape[0] == rows) {
      const DeviceBuffer d(static_cast<std::size_t>(spec.shape[0] * spec.shape[1]) * dtype_size(dt));
      const TensorView in = TensorView::contiguous(d.get(), dt, spec.shape.data(), 2, Device::cuda(current_device()));
      const ReduceOutput os = cuda::reduce_output_shape(op, in, {1}, false);
      const DeviceBuffer o(static_cast<std::size_t>(os.numel()) * dtype_size(os.dtype));
      const std::string plan = cuda::describe_reduce(op, in, {1}, false,
                                                     TensorView::contiguous(o.get(), os.dtype, os.shape, os.rank, in.device));
      EXPECT_NE(plan.find("kernel=rows-dense"), std::string::npos) << plan;
    }
    runner.add(make_problem(spec, op, dt, rng, id++));
  };
  for (DType dt : kAllDTypes)
    for_each_reduce_op([&](auto op) {
      for (std::int64_t vectors = 1; vectors <= 64; vectors *= 2) add(decltype(op)::value, dt, 3001, vectors);
    });
  // An H100's or H200's full grid (132 SMs x 8 blocks x 256 threads x 8 loads) takes 2.16M vectors a round.
  add(ReduceOp::argmax, DType::f32, 600001, 4);
  add(ReduceOp::sum, DType::i32, 300007, 8);
  add(ReduceOp::max, DType::bf16, 70001, 32);
  add(ReduceOp::argmin, DType::f64, 1100003, 2);
  // Long rows (256 vectors, a warp a row, at least 64 rows an SM): the grid gives every warp the
  // same number of rows (tuning: kDenseLongBlocksPerSm), 16411 rows not a multiple of it.
  add(ReduceOp::sum, DType::f32, 16411, 256);
  add(ReduceOp::argmax, DType::bf16, 16411, 256);
  add(ReduceOp::min, DType::i64, 16411, 256);
  runner.flush();
  std::cout << "[ CudaTensorRandom.RowsDense ]\n" << summary.text();
  EXPECT_EQ(summary.failures, 0);
  if (runner.ok()) EXPECT_EQ(summary.cases, id);
}

}  // namespace
}  // namespace foldkit::test
