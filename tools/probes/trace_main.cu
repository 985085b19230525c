// foldkit-trace: where the time of one full-array reduction goes. Thread 0 of every block
// stamps %globaltimer (nanoseconds, one clock for every SM) at the kernel's trace points
// (include/foldkit/cuda/device/reduce_trace.cuh): block start, block share reduced, and for the
// collector block the start and end of its polling and the final store. The kernel is the
// library's own, launched by the library's own planner with the tuning table's shape; only the
// spec differs (it carries the trace buffer). Inputs rotate over 1 GiB (foldkit-bench's InputPool).
//
// Usage: foldkit-trace CASE N [CALLS] [--batch]   |   foldkit-trace block-reduce   |   foldkit-trace launch-ab N
//        |   foldkit-trace floor N (trace_floor.cu: the least a many-block reduction can cost)
//   CASE: sum-f32 | sum-f64 | sum-i32 | argmax-f32
//   --batch: calls back to back (PDL overlap as in the bench's batch mean); default: the
//   stream is synchronised after every call (as in its per-call median).
// Prints, per call and then as the median over calls, times in ns from the first block's start.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>


#include "foldkit/cuda/block/block_reduce.cuh"
#include "foldkit/cuda/device/reduce_spec.cuh"
#include "foldkit/cuda/device/reduce_trace.cuh"
#include "foldkit/cuda/dispatch/programmatic_launch.cuh"
#include "foldkit/cuda/dispatch/reduce_launch.cuh"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/tuning/reduce_tuning.hpp"
#include "timing.hpp"
#include "trace_f32_sum_rivals.cuh"

int floor_report(std::int64_t n);  // trace_floor.cu

namespace {

using foldkit::cuda::detail::check_cuda;
namespace fc = foldkit::cuda;

// A library spec plus a trace buffer: the kernel calls trace_point from thread 0 of each block.
// Every point keeps the SM's cycle counter (exact, cheap, but per SM); the block's start and the
// result's store also keep %globaltimer (ns, one clock for every SM, but it advances in steps of
// up to 256 ns, and reading it takes long enough to disturb what follows). A point's time is its
// block's start in ns plus its cycles since then at the SM clock (measured over the collector).
constexpr int kStamps = 2 * fc::kTracePoints;  // per block: [point] ns (or 1: passed), [kTracePoints + point] cycles
template <class Base>
struct Traced : Base {
  unsigned long long* trace = nullptr;
  // The stamps wait in shared memory until the block exits (trace_flush): a global store in the
  // middle of the kernel's tail would delay the code it times.
  __device__ __forceinline__ static unsigned long long* stamps() {
    __shared__ unsigned long long s[kStamps];
    return s;
  }
  __device__ __forceinline__ void trace_point(int point) const {
    const long long cycles = clock64();
    unsigned long long t = 1;
    if (point == fc::kTraceEntry || point == fc::kTraceDone) {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      if (point == fc::kTraceEntry)
        for (int k = 0; k < kStamps; ++k) stamps()[k] = 0;
    }
    stamps()[point] = t;
    stamps()[fc::kTracePoints + point] = static_cast<unsigned long long>(cycles);
  }
  __device__ __forceinline__ void trace_flush() const {
    unsigned long long* block = trace + static_cast<unsigned>(blockIdx.x) * kStamps;
    for (int k = 0; k < kStamps; ++k) block[k] = stamps()[k];
  }
};

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct CallSummary {
  double ramp, first_reduced, median_reduced, last_reduced, collector_entry, collector_reduced, collect_start,
      seen0, all_seen, done, event_us;
  // The collector's own intervals in SM cycles: poll start -> thread 0 saw its slots -> every
  // thread saw its slots -> result stored; and its cycles per ns over entry -> done.
  double cyc_seen0, cyc_all_seen, cyc_final, cyc_done, cycles_per_ns;
  // Median over blocks of the block_reduce after phase 1 (loop done -> reduced), cycles.
  double cyc_block_reduce;
  int blocks;
};

template <class Spec, bool kArg = false>
int run(const char* name, std::int64_t n, int calls, bool batch) {
  using T = typename Spec::input_type;
  using Acc = typename Spec::accum_type;
  constexpr fc::tuning::ReduceFamily kFamily = fc::tuning::reduce_family(sizeof(T), sizeof(Acc), kArg);
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(T);
  const fc::detail::DeviceFacts dev = fc::detail::current_device_facts();
  const int sms = dev.sm_count;
  const std::size_t max_blocks = static_cast<std::size_t>(sms) * fc::tuning::kMaxBlocksPerSm;
  const std::size_t per_call = max_blocks * kStamps;

  void* d_out = nullptr;
  unsigned long long* d_trace = nullptr;
  check_cuda(cudaMalloc(&d_out, 64), "cudaMalloc (output)");
  check_cuda(cudaMalloc(&d_trace, calls * per_call * sizeof(unsigned long long)), "cudaMalloc (trace)");
  check_cuda(cudaMemset(d_trace, 0, calls * per_call * sizeof(unsigned long long)), "cudaMemset (trace)");
  fc::Workspace ws;
  ws.bytes = fc::reduce_workspace_bytes();
  check_cuda(cudaMalloc(&ws.ptr, ws.bytes), "cudaMalloc (workspace)");
  fc::init_workspace(ws, nullptr);
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  fkbench::InputPool pool;  // foldkit-bench's rotation over >= 1 GiB of random inputs
  pool.prepare(foldkit::dtype_of<T>::value, n, 12345, stream);
  check_cuda(cudaDeviceSynchronize(), "fill");

  const fc::tuning::ReduceTuning t = fc::tuning::reduce_tuning_for(kFamily, bytes);
  std::printf("foldkit-trace %s n=%lld (%zu bytes), shape threads=%d blocks/SM=%d unroll=%d, %s\n", name,
              static_cast<long long>(n), bytes, t.block_threads, t.blocks_per_sm, t.unroll,
              batch ? "back to back" : "synchronised after each call");

  cudaEvent_t e0, e1;
  check_cuda(cudaEventCreate(&e0), "cudaEventCreate");
  check_cuda(cudaEventCreate(&e1), "cudaEventCreate");
  std::vector<double> event_us(static_cast<std::size_t>(calls), 0.0);
  const int warmup = 5;
  for (int c = -warmup; c < calls; ++c) {
    Traced<Spec> spec{};
    spec.trace = d_trace + static_cast<std::size_t>(c < 0 ? 0 : c) * per_call;
    const auto* in = static_cast<const T*>(pool.next());
    if (!batch) check_cuda(cudaEventRecord(e0, stream), "cudaEventRecord");
    fc::detail::launch_reduce_full<fc::detail::TableUnrolls<kFamily>>(
        in, n, static_cast<typename Spec::result_type*>(d_out), ws, spec, t, stream, dev);
    if (!batch) {
      check_cuda(cudaEventRecord(e1, stream), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(e1), "cudaEventSynchronize");
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
      if (c >= 0) event_us[static_cast<std::size_t>(c)] = 1e3 * ms;
    }
    if (c == -1) check_cuda(cudaMemsetAsync(d_trace, 0, per_call * sizeof(unsigned long long), stream), "memset");
  }
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");

  std::vector<unsigned long long> h(calls * per_call);
  check_cuda(cudaMemcpy(h.data(), d_trace, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost), "copy");

  std::vector<CallSummary> s;
  unsigned long long resolution = ~0ull;
  for (int c = 0; c < calls; ++c) {
    const unsigned long long* tr = h.data() + static_cast<std::size_t>(c) * per_call;
    // The SM clock in cycles per ns, from the collector's start and end (both stamped in ns).
    double cpn = 1.98;
    for (std::size_t b = 0; b < max_blocks; ++b) {
      const unsigned long long* p = tr + b * kStamps;
      if (p[fc::kTraceCollectStart] == 0 || p[fc::kTraceDone] <= p[fc::kTraceEntry]) continue;
      cpn = static_cast<double>(p[fc::kTracePoints + fc::kTraceDone] - p[fc::kTracePoints + fc::kTraceEntry]) /
            static_cast<double>(p[fc::kTraceDone] - p[fc::kTraceEntry]);
    }
    std::vector<unsigned long long> entries;
    std::vector<double> reduced;
    std::vector<double> block_reduce_cycles;
    int collector = -1;
    for (std::size_t b = 0; b < max_blocks; ++b) {
      const unsigned long long* p = tr + b * kStamps;
      if (p[fc::kTraceEntry] == 0) continue;
      const unsigned long long* cyc = p + fc::kTracePoints;
      entries.push_back(p[fc::kTraceEntry]);
      reduced.push_back(static_cast<double>(p[fc::kTraceEntry]) +
                        static_cast<double>(cyc[fc::kTraceReduced] - cyc[fc::kTraceEntry]) / cpn);
      block_reduce_cycles.push_back(static_cast<double>(cyc[fc::kTraceReduced] - cyc[fc::kTraceLoopDone]));
      if (p[fc::kTraceCollectStart] != 0) collector = static_cast<int>(b);
    }
    if (entries.empty()) {
      std::printf("call %d: no trace (the cluster kernel ran: it has no trace points)\n", c);
      continue;
    }
    std::sort(entries.begin(), entries.end());
    for (std::size_t i = 1; i < entries.size(); ++i)
      if (entries[i] > entries[i - 1]) resolution = std::min(resolution, entries[i] - entries[i - 1]);
    const double t0 = static_cast<double>(entries.front());
    std::vector<double> red;
    for (double r : reduced) red.push_back(r - t0);
    std::sort(red.begin(), red.end());
    CallSummary cs{};
    cs.blocks = static_cast<int>(entries.size());
    cs.ramp = static_cast<double>(entries.back()) - t0;
    cs.first_reduced = red.front();
    cs.median_reduced = red[red.size() / 2];
    cs.last_reduced = red.back();
    if (collector >= 0) {
      const unsigned long long* p = tr + static_cast<std::size_t>(collector) * kStamps;
      const unsigned long long* cyc = p + fc::kTracePoints;
      const double entry = static_cast<double>(p[fc::kTraceEntry]);
      const auto at = [&](int point) {  // ns from t0, by the SM clock from the collector's start
        return entry - t0 + static_cast<double>(cyc[point] - cyc[fc::kTraceEntry]) / cpn;
      };
      cs.collector_entry = entry - t0;
      cs.collector_reduced = at(fc::kTraceReduced);
      cs.collect_start = at(fc::kTraceCollectStart);
      cs.seen0 = at(fc::kTraceSeen0);
      cs.all_seen = at(fc::kTraceAllSeen);
      cs.done = at(fc::kTraceDone);
      const auto since_poll = [&](int point) {
        return static_cast<double>(cyc[point]) - static_cast<double>(cyc[fc::kTraceCollectStart]);
      };
      cs.cyc_seen0 = since_poll(fc::kTraceSeen0);
      cs.cyc_all_seen = since_poll(fc::kTraceAllSeen);
      cs.cyc_done = since_poll(fc::kTraceDone);
      cs.cyc_final = since_poll(fc::kTraceFinalReduced);
      cs.cycles_per_ns = cpn;
    } else {  // one block
      cs.done = static_cast<double>(tr[fc::kTraceDone]) - t0;
    }
    cs.event_us = event_us[static_cast<std::size_t>(c)];
    cs.cyc_block_reduce = median(block_reduce_cycles);
    s.push_back(cs);
  }
  if (s.empty()) return 0;
  std::printf("blocks %d; globaltimer step seen between block starts: %llu ns\n", s.front().blocks,
              resolution == ~0ull ? 0ull : resolution);
  std::printf("ns from the first block's start; cyc: the collector's SM cycles since it began polling\n");
  std::printf("%-6s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s | %7s %7s %7s %7s %6s %7s | %8s\n", "call", "ramp",
              "red.1st", "red.med", "red.lst", "col.in", "col.red", "col.pol", "seen0", "allseen", "done", "cyc.s0",
              "cyc.all", "cyc.fin", "cyc.done", "cyc/ns", "cyc.brd", "event_us");
  auto row = [](const char* label, const CallSummary& c) {
    std::printf(
        "%-6s %7.0f %7.0f %7.0f %7.0f %7.0f %7.0f %7.0f %7.0f %7.0f %7.0f | %7.0f %7.0f %7.0f %7.0f %6.2f %7.0f | %8.2f\n",
        label, c.ramp, c.first_reduced, c.median_reduced, c.last_reduced, c.collector_entry, c.collector_reduced,
        c.collect_start, c.seen0, c.all_seen, c.done, c.cyc_seen0, c.cyc_all_seen, c.cyc_final, c.cyc_done,
        c.cycles_per_ns, c.cyc_block_reduce, c.event_us);
  };
  for (std::size_t c = 0; c < s.size() && c < 5; ++c) row(std::to_string(c).c_str(), s[c]);
  CallSummary m{};
  auto med = [&](double CallSummary::*f) {
    std::vector<double> v;
    for (const auto& c : s) v.push_back(c.*f);
    return median(v);
  };
  m.ramp = med(&CallSummary::ramp);
  m.first_reduced = med(&CallSummary::first_reduced);
  m.median_reduced = med(&CallSummary::median_reduced);
  m.last_reduced = med(&CallSummary::last_reduced);
  m.collector_entry = med(&CallSummary::collector_entry);
  m.collector_reduced = med(&CallSummary::collector_reduced);
  m.collect_start = med(&CallSummary::collect_start);
  m.seen0 = med(&CallSummary::seen0);
  m.all_seen = med(&CallSummary::all_seen);
  m.done = med(&CallSummary::done);
  m.cyc_seen0 = med(&CallSummary::cyc_seen0);
  m.cyc_all_seen = med(&CallSummary::cyc_all_seen);
  m.cyc_done = med(&CallSummary::cyc_done);
  m.cyc_final = med(&CallSummary::cyc_final);
  m.cyc_block_reduce = med(&CallSummary::cyc_block_reduce);
  m.cycles_per_ns = med(&CallSummary::cycles_per_ns);
  m.event_us = med(&CallSummary::event_us);
  row("median", m);

  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(stream);
  cudaFree(ws.ptr);
  cudaFree(d_trace);
  cudaFree(d_out);
  return 0;
}

// The block_reduce of block_reduce.cuh alone, in SM cycles: one block per SM, each thread's
// value reduced `reps` times, with (store_first) or without a global store from every thread
// just before each reduce (the collector zeroes its slots just before its final reduce).
template <class T, bool kStoreFirst>
__global__ void block_reduce_cycles_kernel(unsigned long long* cycles, T* sink, int reps) {
  __shared__ fc::BlockReduceStorage<T> storage;
  T v = static_cast<T>(threadIdx.x + 1);
  long long total = 0;
  for (int r = 0; r < reps; ++r) {
    if constexpr (kStoreFirst) sink[blockIdx.x * blockDim.x + threadIdx.x] = v;
    __syncthreads();
    const long long t0 = clock64();
    T out = fc::block_reduce(v, [](T a, T b) { return a + b; }, T(0), storage);
    if (threadIdx.x == 0) v = v + out * static_cast<T>(0);  // a use of the result
    __syncthreads();
    total += clock64() - t0;
  }
  if (threadIdx.x == 0) cycles[blockIdx.x] = static_cast<unsigned long long>(total / reps);
  if (v == static_cast<T>(-7)) sink[0] = v;
}

// The same, once per launch (the code cold in the SM's instruction cache, as in a reduction
// kernel, which runs its block_reduce once), after `vectors` 16-byte streaming loads per thread
// from `data` (the memory pipeline busy until just before, as after phase 1).
template <class T>
__global__ void block_reduce_once_kernel(unsigned long long* cycles, const uint4* data, int vectors, T* sink) {
  __shared__ fc::BlockReduceStorage<T> storage;
  T v = static_cast<T>(threadIdx.x + 1);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int k = 0; k < vectors; k += 4, i += 4 * stride) {
    uint4 a[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) a[u] = __ldcs(data + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) v += static_cast<T>(a[u].x & 1u);
  }
  __syncthreads();
  const long long t0 = clock64();
  T out = fc::block_reduce(v, [](T a, T b) { return a + b; }, T(0), storage);
  const long long t1 = clock64();
  if (threadIdx.x == 0) {
    cycles[blockIdx.x] = static_cast<unsigned long long>(t1 - t0);
    if (out == static_cast<T>(-7)) sink[0] = out;
  }
}

template <class T>
void time_block_reduce_once(const char* type, int threads, int vectors) {
  const int sms = fc::detail::current_sm_count();
  unsigned long long* d_cycles = nullptr;
  T* sink = nullptr;
  uint4* data = nullptr;
  const std::size_t n16 = static_cast<std::size_t>(sms) * threads * (vectors + 4);
  check_cuda(cudaMalloc(&d_cycles, sms * sizeof(unsigned long long)), "cudaMalloc");
  check_cuda(cudaMalloc(&sink, sizeof(T)), "cudaMalloc");
  check_cuda(cudaMalloc(&data, n16 * 16), "cudaMalloc");
  check_cuda(cudaMemset(data, 1, n16 * 16), "cudaMemset");
  std::vector<double> per_launch;
  for (int launch = 0; launch < 21; ++launch) {
    block_reduce_once_kernel<T><<<sms, threads>>>(d_cycles, data, vectors, sink);
    check_cuda(cudaDeviceSynchronize(), "block_reduce_once_kernel");
    std::vector<unsigned long long> h(static_cast<std::size_t>(sms));
    check_cuda(cudaMemcpy(h.data(), d_cycles, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost), "copy");
    if (launch > 0) per_launch.push_back(median(std::vector<double>(h.begin(), h.end())));
  }
  std::printf("block_reduce %-4s %4d threads, once per launch after %3d loads/thread: %6.0f cycles (median)\n", type,
              threads, vectors, median(per_launch));
  cudaFree(d_cycles);
  cudaFree(sink);
  cudaFree(data);
}

template <class T, bool kStoreFirst>
void time_block_reduce(const char* type, int threads) {
  const int sms = fc::detail::current_sm_count();
  unsigned long long* d_cycles = nullptr;
  T* sink = nullptr;
  check_cuda(cudaMalloc(&d_cycles, sms * sizeof(unsigned long long)), "cudaMalloc");
  check_cuda(cudaMalloc(&sink, static_cast<std::size_t>(sms) * threads * sizeof(T)), "cudaMalloc");
  block_reduce_cycles_kernel<T, kStoreFirst><<<sms, threads>>>(d_cycles, sink, 200);
  check_cuda(cudaDeviceSynchronize(), "block_reduce_cycles_kernel");
  std::vector<unsigned long long> h(static_cast<std::size_t>(sms));
  check_cuda(cudaMemcpy(h.data(), d_cycles, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost), "copy");
  std::vector<double> v(h.begin(), h.end());
  std::printf("block_reduce %-4s %4d threads%s: %6.0f cycles (median over %d SMs; barrier to barrier)\n", type, threads,
              kStoreFirst ? ", after a global store by every thread" : "", median(v), sms);
  cudaFree(d_cycles);
  cudaFree(sink);
}

int block_reduce_report() {
  for (int threads : {256, 1024})
    for (int vectors : {0, 4, 64}) {
      time_block_reduce_once<float>("f32", threads, vectors);
      time_block_reduce_once<double>("f64", threads, vectors);
    }
  for (int threads : {256, 512, 1024}) {
    time_block_reduce<float, false>("f32", threads);
    time_block_reduce<double, false>("f64", threads);
    time_block_reduce<unsigned long long, false>("u64", threads);
    time_block_reduce<float, true>("f32", threads);
    time_block_reduce<double, true>("f64", threads);
  }
  return 0;
}

int usage(const char* why) {
  std::fprintf(stderr, "foldkit-trace: %s\nusage: foldkit-trace sum-f32|sum-f64|sum-i32|argmax-f32 N [CALLS] [--batch] | block-reduce | launch-ab N | floor N\n",
               why);
  return 2;
}

}  // namespace

// ---- launch-ab: is a one-block call's per-call time its launch or its body? ----------------------

// The smallest one-block f32 sum: 256 threads, 4 streaming 16-byte loads each (n = 4096 exactly),
// a warp shuffle tree, the warps' results through shared memory, one store. Bisection switches:
// kWait: griddepcontrol.wait first (as the library's kernel); kLibraryBlockReduce: the library's
// block_reduce instead of the two shuffle levels.
// kExtra (before the loads, as the library kernel's prologue): 0 nothing; 1: 256 integer adds,
// straight-line code (4 KiB of instructions); 2: the same 256 adds as a loop of 32 x 8 (little
// code). 1 against 2 tells what fetching a cold kernel's instructions costs.
// kExtra 3: griddepcontrol.launch_dependents before the result's store (as the library);
// kMaxThreads: the launch bound (the library's kernel declares 1024).
template <bool kWait, bool kLibraryBlockReduce, int kExtra = 0, int kMaxThreads = 256>
__global__ void __launch_bounds__(kMaxThreads) minimal_sum_kernel(const float4* __restrict__ in, float* __restrict__ out) {
  __shared__ float warp_sum[8];
  __shared__ fc::BlockReduceStorage<float> storage;
  if (kWait) fc::wait_for_prior_grid();
  unsigned r[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) r[k] = threadIdx.x + k;
  if (kExtra == 1) {
#pragma unroll
    for (int i = 0; i < 32; ++i)
#pragma unroll
      for (int k = 0; k < 8; ++k) asm volatile("add.u32 %0, %0, %1;" : "+r"(r[k]) : "r"(i * 8 + k + 1));
  } else if (kExtra == 2) {
#pragma unroll 1
    for (int i = 0; i < 32; ++i)
#pragma unroll
      for (int k = 0; k < 8; ++k) asm volatile("add.u32 %0, %0, %1;" : "+r"(r[k]) : "r"(i * 8 + k + 1));
  }
  if (kExtra != 0) {
    unsigned x = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) x ^= r[k];
    if (x == 0x9e3779b9u) in += 1;  // practically never: keeps the adds
  }
  float4 v[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) v[u] = __ldcs(in + u * 256 + threadIdx.x);
  float s = 0;
#pragma unroll
  for (int u = 0; u < 4; ++u) s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  if constexpr (kLibraryBlockReduce) {
    s = fc::block_reduce(s, [](float a, float b) { return a + b; }, 0.f, storage);
    if (kExtra == 3) fc::allow_next_grid();
    if (threadIdx.x == 0) *out = s;
  } else {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d);
    if ((threadIdx.x & 31) == 0) warp_sum[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
      s = threadIdx.x < 8 ? warp_sum[threadIdx.x] : 0.f;
#pragma unroll
      for (int d = 4; d > 0; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d);
      if (threadIdx.x == 0) *out = s;
    }
  }
}

// The library's one-block path as a kernel of its own, as CUB's single-tile kernel is: no start
// ticket, no slots, no two-pass loop; the same phase 1 (reduce_one_batch), block_reduce and
// finalize. Against the library's kernel in one run: is the one-block gap to CUB the shared
// kernel's extra code (its branches, jumps and size), or outside the kernel?
template <int kUnroll, class Spec>
__global__ void __launch_bounds__(1024) one_block_kernel(const typename Spec::input_type* __restrict__ in, std::int64_t n,
                                                         fc::ReduceSplit split, typename Spec::result_type* __restrict__ out,
                                                         Spec spec) {
  __shared__ fc::BlockReduceStorage<typename Spec::accum_type> storage;
  fc::wait_for_prior_grid();
  auto acc = fc::reduce_one_batch<kUnroll>(in, n, split, spec);
  fc::allow_next_grid();
  acc = fc::block_reduce(acc, spec.combine, spec.identity(), storage);
  if (threadIdx.x == 0) *out = spec.finalize(acc, n, in);
}

// Gated per-call medians and batch means (foldkit-bench's time_calls) of one f32 sum of n
// elements, called five ways: the library; the library's kernel and plan with the programmatic
// (PDL) launch attribute off; the same kernel by <<<>>>; CUB; and (n = 4096) the minimal kernel.
int launch_ab(std::int64_t n) {
  using Spec = fc::BuiltinReduceSpec<foldkit::ReduceOp::sum, float>;
  constexpr auto kFamily = fc::tuning::ReduceFamily::value4;
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  fkbench::InputPool pool;
  pool.prepare(foldkit::DType::f32, n, 4242, s);
  float* d_out = nullptr;
  check_cuda(cudaMalloc(&d_out, 64), "cudaMalloc");
  const fkbench::F32SumRivals rivals(n, d_out, s);
  const fc::Workspace& ws = rivals.workspace();
  const std::size_t bytes = static_cast<std::size_t>(n) * 4;
  fc::tuning::ReduceTuning t = fc::tuning::reduce_tuning_for(kFamily, bytes);
  const fc::detail::DeviceFacts plan_dev = fc::detail::current_device_facts();
  const fc::detail::ReducePlan plan = fc::detail::plan_full_reduce(
      n, 4, t, plan_dev.sm_count, fc::detail::resident_blocks_per_sm<4, Spec>(plan_dev.device, t.block_threads));
  fkbench::LaunchGate gate;
  fkbench::TimingPlan tp;
  tp.reps_median = 50;
  tp.reps_batch = 200;
  std::printf("launch-ab: f32 sum, n = %lld (%zu bytes); table shape %d threads x unroll %d, grid %d\n",
              static_cast<long long>(n), bytes, t.block_threads, t.unroll, plan.grid);
  // host: the host's own time per call (wall clock over 100 submissions after an idle stream,
  // fewer than the launch queue holds): what a batch mean is bounded by when the GPU keeps up.
  auto report = [&](const char* what, const fkbench::Call& call) {
    const fkbench::Timing r = fkbench::time_calls(tp, s, pool, &gate, call);
    float h = 0;
    check_cuda(cudaMemcpy(&h, d_out, 4, cudaMemcpyDeviceToHost), "result");
    std::vector<double> host;
    for (int rep = 0; rep < 5; ++rep) {
      check_cuda(cudaStreamSynchronize(s), "sync");
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 100; ++i) call(pool.next());
      const auto t1 = std::chrono::steady_clock::now();
      host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 100);
    }
    check_cuda(cudaStreamSynchronize(s), "sync");
    std::sort(host.begin(), host.end());
    std::printf("  %-62s median %7.3f us   batch %7.3f us   host %6.3f us/call   (last result %.6g)\n", what, r.median_us,
                r.batch_us, host[2], h);
  };
  for (int round = 0; round < 2; ++round) {
    report("library: foldkit::cuda::reduce<sum, float>", [&](const void* in) {
      rivals.library(static_cast<const float*>(in), n);
    });
    fc::tuning::ReduceTuning no_pdl = t;
    no_pdl.programmatic_launch = false;
    report("library kernel + plan, cudaLaunchKernelEx without PDL", [&](const void* in) {
      fc::detail::launch_reduce_full<fc::detail::TableUnrolls<kFamily>>(static_cast<const float*>(in), n, d_out, ws,
                                                                          Spec{}, no_pdl, s, plan_dev);
    });
    if (t.unroll == 4 && plan.grid == 1) {
      auto* bytes_ws = static_cast<char*>(ws.ptr);
      auto* ticket = reinterpret_cast<unsigned*>(bytes_ws + fc::detail::kTicketOffset);
      auto* slots = reinterpret_cast<fc::FlaggedSlot<float>*>(bytes_ws + fc::detail::kPartialsOffset);
      report("library kernel, one block by <<<>>>", [&](const void* in) {
        fc::reduce_full_kernel<4, Spec><<<1, t.block_threads, 0, s>>>(static_cast<const float*>(in), n,
                                                                       fc::split_for_vectors(static_cast<const float*>(in), n), d_out, slots,
                                                                       ticket, Spec{});
      });
      report("one-block kernel of its own (library phase 1 + block_reduce)", [&](const void* in) {
        one_block_kernel<4, Spec><<<1, t.block_threads, 0, s>>>(static_cast<const float*>(in), n,
                                                                fc::split_for_vectors(static_cast<const float*>(in), n), d_out, Spec{});
      });
    }
    report("cub::DeviceReduce::Sum", [&](const void* in) {
      rivals.cub(static_cast<const float*>(in));
    });
    if (n == 4096) {
      report("minimal one-block kernel (256 x 4 float4, shuffles)", [&](const void* in) {
        minimal_sum_kernel<false, false><<<1, 256, 0, s>>>(static_cast<const float4*>(in), d_out);
      });
      // Host-cost breakdown of a library call (the `host` column): the bare launch above, then
      // the same kernel through cudaLaunchKernelEx with the PDL attribute, then the library's
      // argument validation (pointer checks, SM count) before a bare launch.
      report("  host: by cudaLaunchKernelEx + PDL attribute", [&](const void* in) {
        check_cuda(fc::launch_programmatic(minimal_sum_kernel<false, false>, dim3(1), dim3(256), s,
                                           static_cast<const float4*>(in), d_out),
                   "launch");
      });
      report("  host: + the library's validate_reduce_args", [&](const void* in) {
        fc::detail::validate_reduce_args(in, n, d_out, ws, false);
        minimal_sum_kernel<false, false><<<1, 256, 0, s>>>(static_cast<const float4*>(in), d_out);
      });
      report("  host: + 5 cudaGetDevice", [&](const void* in) {
        int d = 0;
        for (int k = 0; k < 5; ++k) check_cuda(cudaGetDevice(&d), "cudaGetDevice");
        minimal_sum_kernel<false, false><<<1, 256, 0, s>>>(static_cast<const float4*>(in), d_out);
      });
      report("  + griddepcontrol.wait", [&](const void* in) {
        minimal_sum_kernel<true, false><<<1, 256, 0, s>>>(static_cast<const float4*>(in), d_out);
      });
      report("  + the library's block_reduce", [&](const void* in) {
        minimal_sum_kernel<false, true><<<1, 256, 0, s>>>(static_cast<const float4*>(in), d_out);
      });
      report("  + both", [&](const void* in) {
        minimal_sum_kernel<true, true><<<1, 256, 0, s>>>(static_cast<const float4*>(in), d_out);
      });
      report("  + 256 adds before the loads, straight-line (4 KiB code)", [&](const void* in) {
        minimal_sum_kernel<false, false, 1><<<1, 256, 0, s>>>(static_cast<const float4*>(in), d_out);
      });
      report("  + 256 adds before the loads, as a loop (little code)", [&](const void* in) {
        minimal_sum_kernel<false, false, 2><<<1, 256, 0, s>>>(static_cast<const float4*>(in), d_out);
      });
      report("  + wait + library block_reduce + launch_dependents", [&](const void* in) {
        minimal_sum_kernel<true, true, 3><<<1, 256, 0, s>>>(static_cast<const float4*>(in), d_out);
      });
      report("  + all that, __launch_bounds__(1024)", [&](const void* in) {
        minimal_sum_kernel<true, true, 3, 1024><<<1, 256, 0, s>>>(static_cast<const float4*>(in), d_out);
      });
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "block-reduce") == 0) return block_reduce_report();
  if (argc == 3 && std::strcmp(argv[1], "launch-ab") == 0) return launch_ab(std::atoll(argv[2]));
  if (argc == 3 && std::strcmp(argv[1], "floor") == 0) return floor_report(std::atoll(argv[2]));
  if (argc < 3) return usage("missing arguments");
  const std::string which = argv[1];
  const std::int64_t n = std::atoll(argv[2]);
  int calls = 20;
  bool batch = false;
  for (int a = 3; a < argc; ++a) {
    if (std::strcmp(argv[a], "--batch") == 0) batch = true;
    else calls = std::atoi(argv[a]);
  }
  if (n <= 0 || calls <= 0) return usage("N and CALLS must be positive");
  using foldkit::ReduceOp;
  try {
    if (which == "sum-f32") return run<fc::BuiltinReduceSpec<ReduceOp::sum, float>>(argv[1], n, calls, batch);
    if (which == "sum-f64") return run<fc::BuiltinReduceSpec<ReduceOp::sum, double>>(argv[1], n, calls, batch);
    if (which == "sum-i32") return run<fc::BuiltinReduceSpec<ReduceOp::sum, std::int32_t>>(argv[1], n, calls, batch);
    if (which == "argmax-f32") return run<fc::VectorArgSpec<ReduceOp::argmax, float>, true>(argv[1], n, calls, batch);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "foldkit-trace: %s\n", e.what());
    return 1;
  }
  return usage("unknown case");
}
