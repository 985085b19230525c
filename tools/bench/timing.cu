// GPU timing machinery of foldkit-bench (see timing.hpp for why each piece exists).
#include "timing.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "fill_values.hpp"
#include "foldkit/dtype.hpp"
#include "table.hpp"  // rotation_text

namespace fkbench {

void cuda_check(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaSuccess) return;
  char buf[512];
  std::snprintf(buf, sizeof buf, "CUDA error %s (%s) in %s at %s:%d", cudaGetErrorName(err),
                cudaGetErrorString(err), what, file, line);
  throw std::runtime_error(buf);
}

// ---------------------------------------------------------------------------------------------
// Random fill
// ---------------------------------------------------------------------------------------------
namespace {

template <class T>
__global__ void fill_kernel(T* d, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    d[i] = foldkit_bench::value_from_hash<T>(foldkit_bench::hash64(seed * 0x9e3779b97f4a7c15ull + i));
}

}  // namespace

void fill_random(foldkit::DType dtype, void* d, std::size_t count, std::uint64_t seed, cudaStream_t s) {
  if (count == 0) return;
  foldkit::visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((count + 255) / 256, 8192));
    fill_kernel<T><<<blocks, 256, 0, s>>>(static_cast<T*>(d), count, seed);
    FKB_CHECK_LAUNCH("fill_kernel");
  });
}

// ---------------------------------------------------------------------------------------------
// InputPool
// ---------------------------------------------------------------------------------------------
namespace {

// Makes base hold at least `need` bytes of device memory (contents not kept), reusing it when it
// does already.
void reserve_device_bytes(unsigned char*& base, std::size_t& capacity, std::size_t need) {
  if (need <= capacity) return;
  if (base) FKB_CHECK(cudaFree(base));
  base = nullptr;
  capacity = 0;
  FKB_CHECK(cudaMalloc(reinterpret_cast<void**>(&base), need));
  capacity = need;
}

}  // namespace

InputPool::~InputPool() {
  if (base_) cudaFree(base_);  // no throwing from a destructor
}

void InputPool::prepare(foldkit::DType dtype, std::int64_t count, std::uint64_t seed, cudaStream_t s,
                        std::size_t span_bytes) {
  if (count <= 0) throw std::runtime_error("InputPool::prepare: count must be positive");
  const std::size_t esize = foldkit::dtype_size(dtype);
  bytes_ = static_cast<std::size_t>(count) * esize;
  const std::size_t span = std::max(bytes_, span_bytes);
  copies_ = std::max<std::size_t>(2, (kRotateBytes + span - 1) / span);
  stride_ = (span + kAlign - 1) / kAlign * kAlign;
  const std::size_t need = copies_ * stride_;
  reserve_device_bytes(base_, capacity_, need);
  // Every copy (and the padding between copies) gets different data.
  fill_random(dtype, base_, need / esize, seed, s);
  FKB_CHECK(cudaStreamSynchronize(s));
  cursor_ = 0;
}

std::string InputPool::memory_text() const { return rotation_text("input", copies_, footprint()); }

// ---------------------------------------------------------------------------------------------
// OutputPool
// ---------------------------------------------------------------------------------------------
OutputPool::~OutputPool() {
  if (base_) cudaFree(base_);
}

void OutputPool::prepare(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  stride_ = (bytes + InputPool::kAlign - 1) / InputPool::kAlign * InputPool::kAlign;
  copies_ = (InputPool::kRotateBytes + bytes - 1) / bytes;
  const std::size_t need = (2 + copies_) * stride_;
  reserve_device_bytes(base_, capacity_, need);
  cursor_ = 0;
}

std::string OutputPool::memory_text() const { return rotation_text("output", copies_, copies_ * stride_); }

// ---------------------------------------------------------------------------------------------
// LaunchGate
// ---------------------------------------------------------------------------------------------
namespace {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void gate_kernel(volatile int* flags, unsigned long long timeout_ns) {
  const unsigned long long t0 = global_ns();
  while (flags[0] == 0) {
    if (global_ns() - t0 > timeout_ns) {
      flags[1] = 1;
      return;
    }
    __nanosleep(200);
  }
}

}  // namespace

LaunchGate::LaunchGate() {
  void* p = nullptr;
  FKB_CHECK(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
  flags_ = static_cast<volatile int*>(p);
  flags_[0] = 0;
  flags_[1] = 0;
  void* d = nullptr;
  FKB_CHECK(cudaHostGetDevicePointer(&d, p, 0));
  d_flags_ = static_cast<int*>(d);
}

LaunchGate::~LaunchGate() {
  if (flags_) cudaFreeHost(const_cast<int*>(flags_));
}

void LaunchGate::hold(cudaStream_t s) {
  flags_[0] = 0;  // the previous gate kernel has finished: time_calls synchronised after it
  gate_kernel<<<1, 1, 0, s>>>(d_flags_, 200ull * 1000 * 1000);
  FKB_CHECK_LAUNCH("gate_kernel");
}

void LaunchGate::release() { flags_[0] = 1; }
bool LaunchGate::timed_out() const { return flags_[1] != 0; }
void LaunchGate::clear_timeout() { flags_[1] = 0; }

// ---------------------------------------------------------------------------------------------
// time_calls
// ---------------------------------------------------------------------------------------------
namespace {

struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    FKB_CHECK(cudaEventCreate(&start));
    FKB_CHECK(cudaEventCreate(&stop));
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  double elapsed_us() const {
    float ms = 0;
    FKB_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return 1e3 * static_cast<double>(ms);
  }
};

double median_of(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

double rank_quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

std::vector<Timing> time_interleaved(const TimingPlan& plan, cudaStream_t s, InputPool& pool, LaunchGate* gate,
                                     const std::vector<Call>& calls) {
  const std::size_t k = calls.size();
  std::vector<Timing> t(k);
  const bool gated = plan.gate && gate != nullptr;
  // Runs call c on the next input; a throw marks c and keeps the stream usable for the others.
  auto run = [&](std::size_t c, const char* what) {
    try {
      calls[c](pool.next());
      FKB_CHECK_LAUNCH(what);
    } catch (const std::exception& e) {
      t[c].error = e.what();
    }
  };
  auto active = [&](std::size_t c) { return t[c].error.empty(); };
  // Each round visits the rivals in its own shuffled order (a fixed seed: the same orders in
  // every run), so that each rival follows every other about equally often. A rotation (round r
  // starting at rival r) is not enough: a rival then nearly always follows the same one, and a
  // call's time depends on the call before it (H100, 2026-11-26: the read ceiling's 8x256 u4
  // shape read 256 MiB in 83.5 us after one neighbour and 89.4 after another, and took the
  // ceiling's median with it).
  std::mt19937 shuffle_rng(0x5eed1234u);
  auto shuffled_order = [&] {
    std::vector<std::size_t> o(k);
    std::iota(o.begin(), o.end(), std::size_t{0});
    for (std::size_t i = k; i > 1; --i) std::swap(o[i - 1], o[shuffle_rng() % i]);  // Fisher-Yates
    return o;
  };
  const int rounds = std::max({plan.warmup, plan.reps_median, kBatchRounds});
  std::vector<std::vector<std::size_t>> orders;
  for (int r = 0; r < rounds; ++r) orders.push_back(shuffled_order());
  auto order = [&](int round, std::size_t j) { return orders[static_cast<std::size_t>(round)][j]; };

  for (int r = 0; r < plan.warmup; ++r)
    for (std::size_t j = 0; j < k; ++j)
      if (active(order(r, j))) run(order(r, j), "warm-up call");
  FKB_CHECK(cudaStreamSynchronize(s));

  // (a) per-call median: one event pair per call, the host synchronised after each.
  EventPair ev;
  std::vector<std::vector<double>> samples(k);
  for (int r = 0; r < plan.reps_median; ++r) {
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t c = order(r, j);
      if (!active(c)) continue;
      if (gated) {
        gate->clear_timeout();
        gate->hold(s);
      }
      const std::size_t input_copy = pool.next_index();
      try {
        FKB_CHECK(cudaEventRecord(ev.start, s));
        run(c, "timed call");
        FKB_CHECK(cudaEventRecord(ev.stop, s));
      } catch (...) {
        if (gated) gate->release();  // do not leave the stream parked for the timeout
        throw;
      }
      if (gated) gate->release();
      FKB_CHECK(cudaEventSynchronize(ev.stop));
      if (!active(c)) continue;
      samples[c].push_back(ev.elapsed_us());
      if (plan.samples)
        std::fprintf(plan.samples, "%s,%zu,%d,%zu,%zu,%.3f\n", plan.label.c_str(), c, r, j, input_copy,
                     samples[c].back());
      if (gated && gate->timed_out()) t[c].gate_timed_out = true;
    }
  }
  for (std::size_t c = 0; c < k; ++c) t[c].median_us = median_of(std::move(samples[c]));

  // (b) batch mean: blocks of back-to-back calls, the host submitting as fast as it can and
  // never waiting between blocks (what a pipeline of calls sees). Each block has its own events.
  const int per_block = std::max(1, plan.reps_batch / kBatchRounds);
  std::vector<EventPair> blocks(static_cast<std::size_t>(kBatchRounds) * k);
  for (int r = 0; r < kBatchRounds; ++r) {
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t c = order(r, j);
      if (!active(c)) continue;
      EventPair& e = blocks[static_cast<std::size_t>(r) * k + c];
      FKB_CHECK(cudaEventRecord(e.start, s));
      for (int i = 0; i < per_block && active(c); ++i) run(c, "batched call");
      FKB_CHECK(cudaEventRecord(e.stop, s));
    }
  }
  FKB_CHECK(cudaStreamSynchronize(s));
  for (std::size_t c = 0; c < k; ++c) {
    if (!active(c)) continue;
    double total = 0;
    for (int r = 0; r < kBatchRounds; ++r) total += blocks[static_cast<std::size_t>(r) * k + c].elapsed_us();
    t[c].batch_us = total / (static_cast<double>(kBatchRounds) * per_block);
  }
  return t;
}

Timing time_calls(const TimingPlan& plan, cudaStream_t s, InputPool& pool, LaunchGate* gate, const Call& call) {
  Timing t = time_interleaved(plan, s, pool, gate, {call})[0];
  if (!t.error.empty()) throw std::runtime_error(t.error);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Device facts
// ---------------------------------------------------------------------------------------------
GpuInfo query_gpu() {
  GpuInfo g;
  FKB_CHECK(cudaGetDevice(&g.device));
  cudaDeviceProp p{};
  FKB_CHECK(cudaGetDeviceProperties(&p, g.device));
  g.name = p.name;
  g.sm_count = p.multiProcessorCount;
  g.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  g.global_mem = p.totalGlobalMem;
  g.cc_major = p.major;
  g.cc_minor = p.minor;
  int mem_khz = 0;
  if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, g.device) == cudaSuccess && mem_khz > 0)
    g.peak_gbps = 2.0 * mem_khz * 1e3 * (p.memoryBusWidth / 8.0) / 1e9;  // DDR: two transfers a clock
  cudaGetLastError();  // the attribute query may be unsupported; that is not an error here
  return g;
}

std::string describe(const GpuInfo& g) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%d SMs, sm_%d%d, L2 %.1f MB, %.1f GiB, theoretical DRAM %.0f GB/s", g.sm_count,
                g.cc_major, g.cc_minor, g.l2_bytes / 1e6, g.global_mem / double(1ull << 30), g.peak_gbps);
  return buf;
}

}  // namespace fkbench
