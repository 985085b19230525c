// What the GPU table and the sweep share: one GpuSession (device, stream, foldkit workspace,
// rotation pool, launch gate, result slots), the ceiling measurement and result comparison.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ceiling_kernel.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/ops.hpp"
#include "options.hpp"
#include "table.hpp"
#include "timing.hpp"

namespace fkbench {

// The read ceiling over one byte count: every variant timed, the best median and the best batch
// mean kept (each may come from a different launch shape: the ceiling is the best this GPU did).
struct CeilingResult {
  double median_us = kNaN, batch_us = kNaN;
  std::string config;  // which variants gave the two figures
  std::vector<std::pair<CeilingVariant, Timing>> variants;
};

// The best median and the best batch of several timings of the same bytes (the ceiling's launch
// shapes, or its copies); `names` says which one gave each, in CeilingResult::config's words.
struct BestOf {
  double median_us = kNaN, batch_us = kNaN;
  std::string config;
};
BestOf best_of(const std::vector<std::pair<std::string, Timing>>& named);

// The scans' copy ceiling: cudaMemcpyAsync and the 16-byte copy kernel, each copying `bytes` of
// its input into the next buffer of `outs`, as calls for time_all (in that order);
// copy_ceiling_named pairs their two timings with those names (for best_of and the CSV).
std::vector<Call> copy_ceiling_calls(std::size_t bytes, OutputPool& outs, int sm_count, cudaStream_t s);
std::vector<std::pair<std::string, Timing>> copy_ceiling_named(const Timing& memcpy_t, const Timing& kernel_t);

class GpuSession {
 public:
  explicit GpuSession(const Options& opt);
  ~GpuSession();
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  const GpuInfo& info() const { return info_; }
  cudaStream_t stream() const { return stream_; }
  InputPool& pool() { return pool_; }
  const InputPool& pool() const { return pool_; }
  foldkit::cuda::Workspace workspace() const { return ws_; }
  const TimingPlan& plan() const { return plan_; }
  // Names the next timings in the per-call sample file ($FOLDKIT_BENCH_SAMPLES), if any.
  void label_samples(const std::string& label) { plan_.label = label; }
  void* out(int slot) const { return static_cast<char*>(d_out_) + 64 * slot; }  // slots 0..3, 64 B each

  // The pool's current input is rotated over; see time_calls.
  Timing time(const Call& call) { return time_calls(plan_, stream_, pool_, &gate_, call); }
  // Rivals timed together, interleaved in shuffled rounds (time_interleaved).
  std::vector<Timing> time_all(const std::vector<Call>& calls) {
    return time_interleaved(plan_, stream_, pool_, &gate_, calls);
  }
  // The ceiling's launch shapes reading `bytes` of each input, as calls for time_all.
  std::vector<Call> ceiling_calls(std::size_t bytes);
  // The ceiling from the timings of ceiling_calls(bytes), in the same order.
  CeilingResult ceiling_from(const std::vector<Timing>& timings) const;
  // The same with another plan (foldkit-bench ladder: 3 calls for a rung that takes ~0.1 s each).
  Timing time(const Call& call, const TimingPlan& plan) { return time_calls(plan, stream_, pool_, &gate_, call); }
  // Times every ceiling variant reading `bytes` of each copy of the pool's current input
  // (interleaved among themselves; the tables time them interleaved with the rivals instead).
  CeilingResult measure_ceiling(std::size_t bytes);
  // Synchronises the stream, then copies `bytes` of result slot `slot` to host.
  void read_result(int slot, void* host, std::size_t bytes);

  // The title, the GPU, the CUDA versions, the commit and how every number is taken; `order`
  // says how the suite times its rivals ("interleaved ...", "sequential ...").
  Header make_header(const std::string& title, const Options& opt, const std::string& order) const;

  // A Timing taken by time_all into row.median_us / row.batch_us; a gate that timed out is noted
  // in row.config, a call that threw becomes row.check ("ERROR ...").
  static void record(Row& row, const Timing& t);

 private:
  GpuInfo info_;
  cudaStream_t stream_ = nullptr;
  InputPool pool_;
  LaunchGate gate_;
  TimingPlan plan_;
  foldkit::cuda::Workspace ws_{};
  void* d_out_ = nullptr;
  unsigned* d_sink_ = nullptr;
};

// "ok", or "MISMATCH <a_name>=... <b_name>=..." comparing two reduce_result_t<op, dtype> values
// in host memory: exactly for integers, min/max and argmax (value bits and index); within a
// relative tolerance for floating sums (1e-4 for float accumulation, 1e-10 for double), because
// two correct reductions add in different orders.
std::string compare_results(foldkit::ReduceOp op, foldkit::DType dtype, const void* a, const void* b,
                            const char* a_name, const char* b_name);

// A seed for the input of (dtype, n): reproducible, different for every case.
std::uint64_t input_seed(foldkit::DType dtype, std::int64_t n);

}  // namespace fkbench
