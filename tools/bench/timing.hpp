// GPU timing for foldkit-bench: CUDA error checks, the input rotation pool, the launch gate and
// the two measurements every table row carries.
//
// Why each piece exists:
// - Rotation: H100's L2 holds 50 MB. Timing the same 4 MB input 100 times would time L2, not
//   HBM. InputPool lays out enough copies of the input to cover >= 1 GiB and each call reads the
//   next copy, so a copy is only re-read after >= 1 GiB of other traffic has evicted it.
// - Gate: a per-call time from a pair of events includes any gap between the start event and
//   the moment the host finishes submitting the call (foldkit's validation, CUB's two launches).
//   LaunchGate parks the stream on a spinning kernel while the host records the start event,
//   submits the call and records the stop event; releasing it lets the GPU run the three back
//   to back, so the pair times the call's GPU work alone. (The batch mean, by contrast, keeps
//   host submission cost in: it is the throughput a stream-ordered pipeline sees.)
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "foldkit/dtype.hpp"

namespace fkbench {

// Throws std::runtime_error naming the call, the place and CUDA's message unless err == cudaSuccess.
void cuda_check(cudaError_t err, const char* what, const char* file, int line);
#define FKB_CHECK(expr) ::fkbench::cuda_check((expr), #expr, __FILE__, __LINE__)
// After every kernel launch: a bad launch is reported where it happened, not at the next sync.
#define FKB_CHECK_LAUNCH(what) ::fkbench::cuda_check(cudaGetLastError(), what, __FILE__, __LINE__)

// Fills d[0, count) with pseudo-random non-zero values of dtype: a hash of (seed, index), so
// the data are reproducible and no copy of the input equals another. Floats lie in [0.5, 1.5)
// (sums of 2^28 of them stay well inside float's range and compare within a tolerance),
// integers in a range whose 64-bit sum never wraps.
void fill_random(foldkit::DType dtype, void* d, std::size_t count, std::uint64_t seed, cudaStream_t s);

class InputPool {
 public:
  static constexpr std::size_t kRotateBytes = std::size_t{1} << 30;  // >= 20x the L2
  static constexpr std::size_t kAlign = 256;                         // cudaMalloc's alignment

  InputPool() = default;
  ~InputPool();
  InputPool(const InputPool&) = delete;
  InputPool& operator=(const InputPool&) = delete;

  // Lays out max(2, ceil(1 GiB / bytes)) copies of an input of `count` elements of `dtype`
  // (bytes = count * dtype size), each 256-byte aligned, and fills them all. Reuses the device
  // allocation when it is large enough. Restarts the rotation at copy 0 (the copy written
  // first, hence the one least likely to still be in L2 after the fill).
  void prepare(foldkit::DType dtype, std::int64_t count, std::uint64_t seed, cudaStream_t s);

  const void* copy(std::size_t k) const { return base_ + (k % copies_) * stride_; }
  const void* next() { return copy(cursor_++); }  // the rotation: every call a different copy
  std::size_t copies() const { return copies_; }
  std::size_t bytes() const { return bytes_; }
  std::size_t footprint() const { return copies_ * stride_; }

 private:
  unsigned char* base_ = nullptr;
  std::size_t capacity_ = 0, stride_ = 0, copies_ = 0, bytes_ = 0, cursor_ = 0;
};

// A launch configuration with the programmatic-stream-serialization (PDL) attribute, as the
// library launches its kernels: for cudaLaunchKernelEx(&pdl.config, kernel, args...). Not
// copyable: config.attrs points into it.
struct PdlLaunch {
  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute attribute[1] = {};
  PdlLaunch(unsigned grid, unsigned block, cudaStream_t s) {
    config.gridDim = dim3(grid);
    config.blockDim = dim3(block);
    config.stream = s;
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
  PdlLaunch(const PdlLaunch&) = delete;
  PdlLaunch& operator=(const PdlLaunch&) = delete;
};

class LaunchGate {
 public:
  LaunchGate();
  ~LaunchGate();
  LaunchGate(const LaunchGate&) = delete;
  LaunchGate& operator=(const LaunchGate&) = delete;

  void hold(cudaStream_t s);  // enqueue a one-thread kernel that spins until release()
  void release();
  // True if a hold ended by its timeout (200 ms) instead of release(): the call being timed
  // synchronised with the host, and its per-call time includes host submission after all.
  bool timed_out() const;
  void clear_timeout();

 private:
  volatile int* flags_ = nullptr;  // host-mapped: [0] release, [1] timed out
  int* d_flags_ = nullptr;
};

struct TimingPlan {
  int warmup = 5;         // untimed calls first: module loading, clocks, TLB
  int reps_median = 20;   // per-call median over this many calls, each with its own event pair
  int reps_batch = 100;   // one event pair around this many back-to-back calls
  bool gate = true;
};

struct Timing {
  double median_us = std::numeric_limits<double>::quiet_NaN();
  double batch_us = std::numeric_limits<double>::quiet_NaN();  // mean per call over the batch
  bool gate_timed_out = false;
};

// A call to time: it reads the input at d_in and must be stream-ordered on the stream given to
// time_calls. It may throw (foldkit::Error, std::runtime_error); time_calls lets that through.
using Call = std::function<void(const void* d_in)>;

// Warm-up, then (a) per-call median, then (b) batch mean. Every call reads pool.next().
// gate may be null (or plan.gate false): then (a) times from start event to stop event with
// the host submitting in between.
Timing time_calls(const TimingPlan& plan, cudaStream_t s, InputPool& pool, LaunchGate* gate, const Call& call);

// Name, SM count and related facts of the current device.
struct GpuInfo {
  int device = 0;
  std::string name;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t global_mem = 0;
  double peak_gbps = 0;  // 2 * memory clock * bus width; 0 when the driver does not say
  int cc_major = 0, cc_minor = 0;
};
GpuInfo query_gpu();
std::string describe(const GpuInfo& g);

}  // namespace fkbench
