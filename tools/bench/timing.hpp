// GPU timing for foldkit-bench and the probes (the one timing core): CUDA error checks, the
// input and output rotation pools, the launch gate and the two measurements every table row
// carries, taken for several rivals at once, interleaved.
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
//   host submission cost in: it is the throughput a stream-ordered pipeline sees; below ~2^20
//   elements it mostly measures how fast the host submits, ~2-4 us a call.)
// - Interleaving: rivals (the ceiling's launch shapes, CUB, foldkit) are timed in rounds, call
//   by call for the median and block by block for the batch, each round in its own shuffled
//   order, so that drift during a run is shared by all of them instead of landing on whichever
//   was timed last (it was the size of the margins at 2^26-2^28), and each rival follows every
//   other about equally often (a call's time depends on the call before it).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

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
  // first, hence the one least likely to still be in L2 after the fill). span_bytes > bytes:
  // each copy is that long (filled too), for a rival that reads more than the input, such as
  // the scans' copy ceiling, which copies (read + written) / 2 bytes: 6n for i32 -> i64.
  void prepare(foldkit::DType dtype, std::int64_t count, std::uint64_t seed, cudaStream_t s,
               std::size_t span_bytes = 0);

  const void* copy(std::size_t k) const { return base_ + (k % copies_) * stride_; }
  const void* next() { return copy(cursor_++); }  // the rotation: every call a different copy
  std::size_t next_index() const { return copies_ ? cursor_ % copies_ : 0; }  // the copy next() returns
  std::size_t copies() const { return copies_; }
  std::size_t bytes() const { return bytes_; }
  std::size_t footprint() const { return copies_ * stride_; }
  std::string memory_text() const;  // "inputs rotated over 1024 MiB (4 copies)"

 private:
  unsigned char* base_ = nullptr;
  std::size_t capacity_ = 0, stride_ = 0, copies_ = 0, bytes_ = 0, cursor_ = 0;
};

// Output buffers for calls that write n elements (scans): two fixed buffers for the checks
// (check(0), check(1): foldkit's output and the rival's, compared after a call each) and a
// rotation over >= 1 GiB for the timed calls, so that a call never writes into lines the
// previous call left dirty in L2 (at 2^20 f32 a scan's 4 MiB of output would otherwise stay
// there from call to call). Uninitialised: every call writes all of its output.
class OutputPool {
 public:
  OutputPool() = default;
  ~OutputPool();
  OutputPool(const OutputPool&) = delete;
  OutputPool& operator=(const OutputPool&) = delete;

  // Lays out 2 + ceil(1 GiB / bytes) buffers of `bytes`; reuses the allocation when it fits.
  void prepare(std::size_t bytes);
  void* check(int k) const { return base_ + static_cast<std::size_t>(k) * stride_; }  // k = 0, 1
  void* next() { return base_ + (2 + cursor_++ % copies_) * stride_; }
  std::string memory_text() const;  // "outputs rotated over 1024 MiB (4 copies)"

 private:
  unsigned char* base_ = nullptr;
  std::size_t capacity_ = 0, stride_ = 0, copies_ = 0, cursor_ = 0;
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
  // Diagnostics ($FOLDKIT_BENCH_SAMPLES=FILE): every per-call sample is appended to this file as
  // "label,rival,round,position,input_copy,us", to see a median's distribution behind it.
  std::FILE* samples = nullptr;
  std::string label;
};

struct Timing {
  double median_us = std::numeric_limits<double>::quiet_NaN();
  double batch_us = std::numeric_limits<double>::quiet_NaN();  // mean per call over the batch
  bool gate_timed_out = false;
  std::string error;  // non-empty: the call threw (the message); it was not timed further
};

// The batch is taken in this many rounds; each round times a block of reps_batch / rounds
// consecutive calls of every rival between its own pair of events (an event between two calls
// would stop a kernel launched with programmatic dependent launch from overlapping the previous
// one, which is part of what a back-to-back figure measures).
inline constexpr int kBatchRounds = 10;

// A call to time: it reads the input at d_in and must be stream-ordered on the stream given to
// time_calls. It may throw (foldkit::Error, std::runtime_error); time_calls lets that through.
using Call = std::function<void(const void* d_in)>;

// The q-quantile (0 <= q <= 1) of v by rank: the sorted values' element floor(q * (n - 1)); 0
// when v is empty (the probes' phase tables print it for an empty group).
double rank_quantile(std::vector<double> v, double q);

// Times every call of `calls` over the same rotated inputs (each call reads pool.next()),
// interleaved: warm-up rounds, then (a) reps_median rounds of one gated call of each rival, each
// between its own event pair (per-call median), then (b) kBatchRounds rounds of a block of
// back-to-back calls of each rival (batch mean), each round in a shuffled order (fixed seed). gate
// may be null (or plan.gate false): then (a) times from start event to stop event with the host
// submitting in between. A call that throws gets Timing::error and drops out; the others go on.
std::vector<Timing> time_interleaved(const TimingPlan& plan, cudaStream_t s, InputPool& pool, LaunchGate* gate,
                                     const std::vector<Call>& calls);
// One call alone (the sweep, the ladder's rungs). Throws what the call throws.
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
