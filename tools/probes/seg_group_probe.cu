// foldkit-seg-group-probe: segmented sums by lane groups, one group a segment, beside the read
// ceiling and foldkit::cuda::segmented_reduce, on foldkit-bench axes' two segment layouts.
//
// The library's segmented sums read at 64.6 / 58.1 % of the ceiling on the H200 (2^22 segments of
// 0-128 f32, and 4 of 2^24 among 2^20 of 0-16): a merge path over elements and segment ends,
// 32 KiB tiles staged by cp.async, masks, a block scan and a look-back for segments that span
// tiles. Its tile pipeline alone read 82 % on the H100, and a streaming design with per-warp masks
// and scans 32 %: too many instructions an element (perf-log 2026-11-28). The question here: do
// the short segments, which are nearly all of both layouts, read at the ceiling when each is
// summed where it lies by a group of G lanes, with no staging, masks, scans or look-back?
//   group<G, U>  a warp takes 32 / G consecutive segments at a time (warps grid-stride over
//                those groups of segments, so the grid reads the input front to back): lanes
//                0 .. 32/G load the group's offsets, each group's lanes then load the segment's
//                aligned 16-byte vectors, U at a time each (vector k of the segment to lane k % G),
//                add the elements inside the segment in order, and fold the group by a fixed
//                shuffle tree; lane 0 of the group writes the sum. Bits depend only on the input,
//                its alignment and G.
//   group_deep<G, U, D>  the same, D batches a step and the next step's offsets loaded before
//                this step's data (the first run found group<G, U> latency-bound).
// Segments longer than kLongMin are left to:
//   long         (the power-law layout's 4 segments of 2^24) chunks of kChunk elements, one block
//                a chunk (16-byte loads, a fixed block tree), the chunk sums in a workspace; the
//                segment's last chunk to finish (a ticket a segment) folds them in chunk order.
//                The list of long segments and their chunks is built on the host for these rows;
//   validation + list  rows build it on the device, as a library call would: the validation
//                pass appends each long segment to a list by atomics, and list_chunks_kernel
//                grid-strides over its chunk slots (the whole call, nothing built on the host).
//   lib kernels  rows launch the library's own group path kernels (src/cuda/segmented_group_kernel.cuh:
//                prepare, a group kernel in the library's shapes or others, chunks) on this probe's
//                workspace, and "library: merge / group path" rows force each path of the library.
// Every kernel is checked against a double reference of every segment (relative to the sum of
// the segment's |x|); timings are foldkit-bench's gated medians, rivals interleaved call by call,
// inputs rotated over >= 1 GiB.
//
// Usage: foldkit-seg-group-probe [LAYOUT]   (0: 2^22 segments of 0-128, 1: the power-law mix; both by default)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "axes_common.hpp"
#include "cuda/segmented_group_kernel.cuh"  // the library's group path kernels, in other shapes too
#include "ceiling_kernel.hpp"
#include "common/segmented_prepare.hpp"  // the offsets' rule
#include "foldkit/cuda/block/block_reduce.cuh"
#include "foldkit/cuda/segmented_reduce.hpp"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/dispatch/segmented_runtime.hpp"
#include "timing.hpp"

namespace {

using foldkit::cuda::detail::check_cuda;

constexpr int kThreads = 256;
template <int V>
using I = std::integral_constant<int, V>;  // template arguments of the rows
constexpr std::int64_t kLongMin = std::int64_t{1} << 16;  // longer segments go to long_kernel
constexpr int kChunk = 1 << 16;                           // long_kernel's elements a block
constexpr int kLongLoadsInFlight = 8;  // long_kernel's 16-byte loads in flight a thread

__device__ __forceinline__ float4 load_stream(const float4* p) { return __ldcs(p); }

// Adds x's elements whose positions (relative to the segment's first element: r, r + 1, ...)
// lie in [0, len), in order; the others are skipped, not added as zeros (acc keeps its bits).
__device__ __forceinline__ void add_inside(float& acc, const float4& x, int r, unsigned len) {
  if (static_cast<unsigned>(r) < len) acc += x.x;
  if (static_cast<unsigned>(r + 1) < len) acc += x.y;
  if (static_cast<unsigned>(r + 2) < len) acc += x.z;
  if (static_cast<unsigned>(r + 3) < len) acc += x.w;
}

// Elements [b, b + len) of `in`, read as the aligned 16-byte vectors that cover them: this lane
// takes the range's vectors lane, lane + stride, ... (`rounds` of them, U loads in flight), and
// returns the sum of the elements inside, in its order. len 0: nothing read. (rounds must be
// the same for lanes that shuffle afterwards; vectors past the range are not read.)
template <int U>
__device__ __forceinline__ float sum_range(const float4* in, std::int64_t b, unsigned len, int lane, int stride, int rounds) {
  const std::int64_t q0 = b >> 2;  // the range's first vector
  const int span = len > 0 ? static_cast<int>(((b + len + 3) >> 2) - q0) : 0;
  const float4* p = in + q0 + lane;
  const int r = static_cast<int>((q0 << 2) - b) + 4 * lane;  // lane's first element, relative to b (vector q0's: -3 .. 0)
  float acc = 0.0f;
  for (int k = 0; k < rounds; k += U) {
    float4 x[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      x[u] = (k + u) * stride + lane < span ? load_stream(p + (k + u) * stride) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int u = 0; u < U; ++u) add_inside(acc, x[u], r + 4 * stride * (k + u), len);
  }
  return acc;
}

// Offsets i = 2k and 2k + 1 of 0 .. S from one 16-byte load (and 2k + 2, for the second's rule),
// and whether either breaks the library's rule (common/segmented_prepare.hpp).
struct OffsetPair {
  std::int64_t i, v0, v1, v2;
  bool bad;
};
__device__ __forceinline__ OffsetPair read_pair(const std::int64_t* __restrict__ off, std::int64_t S, std::int64_t n,
                                                std::int64_t k) {
  OffsetPair q{2 * k, 0, 0, 0, false};
  if (q.i + 1 <= S) {
    const longlong2 two = reinterpret_cast<const longlong2*>(off)[k];
    q.v0 = two.x, q.v1 = two.y;
  } else {
    q.v0 = off[q.i];
  }
  if (q.i + 2 <= S) q.v2 = off[q.i + 2];
  q.bad = foldkit::detail::bad_offset(q.v0, q.i < S, q.v1, n) ||
          (q.i + 1 <= S && foldkit::detail::bad_offset(q.v1, q.i + 1 < S, q.v2, n));
  return q;
}

// The validation a library call needs before it writes anything (offsets in [0, n], never
// decreasing: the library's own rule, common/segmented_prepare.hpp): one pass over the offsets,
// two a thread from one 16-byte load and the next one; a bad pair sets *flag to this call's token
// (a token a call, so that no memset has to clear the flag between calls).
__global__ void __launch_bounds__(kThreads) validate_kernel(const std::int64_t* __restrict__ off, std::int64_t S,
                                                            std::int64_t n, unsigned* flag, unsigned token) {
  const std::int64_t pairs = (S + 2) / 2;  // offsets 0 .. S, two a thread
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; k < pairs;
       k += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const OffsetPair q = read_pair(off, S, n, k);
    if (q.bad) *flag = token;
  }
}

// (SASS sm_90: with no minimum of blocks in __launch_bounds__ ptxas keeps 32-34 registers and
// issues 2 of G=8 U=4's 4 loads before adding the first: see group_deep_kernel.)
// kValidated: the call ran validate_kernel first; every warp reads the flag before it reads
// anything else and leaves if this call's offsets are bad (stream order makes the flag final).
template <int G, int U, bool kValidated = false>
__global__ void __launch_bounds__(kThreads) group_kernel(const float* __restrict__ in, const std::int64_t* __restrict__ off,
                                                         std::int64_t S, float* __restrict__ out,
                                                         const unsigned* flag = nullptr, unsigned token = 0) {
  constexpr int kPerWarp = 32 / G;  // segments a warp takes at a time
  if constexpr (kValidated) {
    if (*flag == token) return;  // (warp-uniform: every lane reads the same word)
  }
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int g = lane / G, gl = lane % G;
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x) >> 5;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (kThreads / 32);
  const float4* v4 = reinterpret_cast<const float4*>(in);
  for (std::int64_t s0 = warp * kPerWarp; s0 < S; s0 += warps * kPerWarp) {
    // Offsets s0 .. s0 + kPerWarp (clamped to S) by the first lanes, then each group's pair.
    const std::int64_t mine = lane <= kPerWarp && s0 + lane <= S ? off[s0 + lane] : 0;
    const std::int64_t b = __shfl_sync(0xffffffffu, mine, g);
    const std::int64_t e = __shfl_sync(0xffffffffu, mine, g + 1);
    const std::int64_t s = s0 + g;
    const bool mine_to_write = s < S && e - b <= kLongMin;
    const unsigned len = mine_to_write && e > b ? static_cast<unsigned>(e - b) : 0u;
    const int span = len > 0 ? static_cast<int>(((e + 3) >> 2) - (b >> 2)) : 0;  // 16-byte vectors
    const int warp_rounds = __reduce_max_sync(0xffffffffu, static_cast<unsigned>((span + G - 1) / G));
    float acc = sum_range<U>(v4, b, len, gl, G, warp_rounds);
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o, G);
    if (gl == 0 && mine_to_write) out[s] = acc;
  }
}

// group_deep<G, U, D>: group<G, U> with D batches of 32 / G segments a warp at a time (D times
// the loads in flight a lane), and the next step's offsets loaded before this step's data, so
// that a step waits for one latency, not two. The rows of 2026-11-29 (G=8: U=1 / 2 / 4 read
// 55.9 / 59.0 / 80.8 % of the ceiling) say group<G, U> is latency-bound: a warp waits for its
// offsets, then for its data, a batch of 32 / G segments at a time. Same bits as group<G, U>.
// B: the blocks an SM that __launch_bounds__ asks for. Without it ptxas keeps registers low by
// placing the adds of each vector right after its load, so that the next loads wait for it
// (SASS sm_90: group<8, 4> has 2 of its 4 loads in flight, deep<8, 4, 2> 3 of its 8); with
// B = 3 all 8 issue first (64 registers). Tying the loads instead (the library's
// after_all_loads) at B = 6 or 8 spilled 20-136 bytes (ptxas, sm_90): not a row here.
template <int G, int U, int D, int B, bool kClamp, bool kValidated = false>
__global__ void __launch_bounds__(kThreads, B) group_deep_kernel(const float* __restrict__ in, const std::int64_t* __restrict__ off,
                                                              std::int64_t S, float* __restrict__ out,
                                                              const unsigned* flag = nullptr, unsigned token = 0) {
  constexpr int kPerWarp = 32 / G;   // segments a batch
  constexpr int kSegs = kPerWarp * D;  // segments a step
  static_assert(kSegs < 32, "a step's kSegs + 1 offsets, one a lane");
  if constexpr (kValidated) {
    if (*flag == token) return;
  }
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int g = lane / G, gl = lane % G;
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x) >> 5;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * (kThreads / 32) * kSegs;
  const float4* v4 = reinterpret_cast<const float4*>(in);
  auto load_offsets = [&](std::int64_t s0) { return lane <= kSegs && s0 + lane <= S ? off[s0 + lane] : std::int64_t{0}; };
  std::int64_t s0 = warp * kSegs;
  std::int64_t mine = load_offsets(s0);
  for (; s0 < S; s0 += step) {
    const std::int64_t mine_next = load_offsets(s0 + step);  // in flight while this step's data loads
    const float4* p[D];
    int r[D], span[D], last[D];
    unsigned len[D];
    bool to_write[D];
    unsigned rounds = 0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      const std::int64_t b = __shfl_sync(0xffffffffu, mine, d * kPerWarp + g);
      const std::int64_t e = __shfl_sync(0xffffffffu, mine, d * kPerWarp + g + 1);
      to_write[d] = s0 + d * kPerWarp + g < S && e - b <= kLongMin;
      len[d] = to_write[d] && e > b ? static_cast<unsigned>(e - b) : 0u;
      span[d] = len[d] > 0 ? static_cast<int>(((e + 3) >> 2) - (b >> 2)) : 0;
      p[d] = span[d] > gl ? v4 + (b >> 2) + gl : v4;  // (a lane past the segment's vectors: see kClamp)
      r[d] = static_cast<int>(((b >> 2) << 2) - b) + 4 * gl;  // as in sum_range
      rounds = max(rounds, static_cast<unsigned>((span[d] + G - 1) / G));
      // kClamp: the lane's vectors past the segment load its last vector again (every load
      // unconditional; add_inside skips their elements, whose positions lie past len; a lane
      // with no vector loads v4[0]). Otherwise they are not loaded (predicated loads).
      last[d] = span[d] > gl ? (span[d] - 1 - gl) / G * G : 0;
    }
    const int warp_rounds = static_cast<int>(__reduce_max_sync(0xffffffffu, rounds));
    float acc[D];
#pragma unroll
    for (int d = 0; d < D; ++d) acc[d] = 0.0f;
    for (int k = 0; k < warp_rounds; k += U) {
      float4 x[D][U];
#pragma unroll
      for (int d = 0; d < D; ++d)
#pragma unroll
        for (int u = 0; u < U; ++u)
          x[d][u] = kClamp                             ? load_stream(p[d] + min((k + u) * G, last[d]))
                    : (k + u) * G + gl < span[d] ? load_stream(p[d] + (k + u) * G)
                                                 : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int d = 0; d < D; ++d)
#pragma unroll
        for (int u = 0; u < U; ++u) add_inside(acc[d], x[d][u], r[d] + 4 * G * (k + u), len[d]);
    }
#pragma unroll
    for (int d = 0; d < D; ++d) {
#pragma unroll
      for (int o = G / 2; o > 0; o >>= 1) acc[d] += __shfl_down_sync(0xffffffffu, acc[d], o, G);
      if (gl == 0 && to_write[d]) out[s0 + d * kPerWarp + g] = acc[d];
    }
    mine = mine_next;
  }
}

// One long segment's chunk c: elements [c * kChunk, (c + 1) * kChunk) of the segment.
struct LongChunk {
  std::int64_t segment;  // its index among the layout's segments
  int long_index;        // its index among the long segments
  int chunk;             // c
};

// Chunk `chunk` of a long segment [b, e): its sum into partials[chunk]; the segment's last chunk
// to finish (ticket) folds its `count` partials in chunk order into *out and clears the ticket.
// Block-uniform arguments; red and last are the caller's shared memory.
__device__ __forceinline__ void sum_chunk(const float4* v4, std::int64_t b, std::int64_t e, int chunk, int count,
                                          float* partials, unsigned* ticket, float* out,
                                          foldkit::cuda::BlockReduceStorage<float>& red, bool& last) {
  const int tid = static_cast<int>(threadIdx.x);
  const auto add = [](float x, float y) { return x + y; };
  const std::int64_t cb = b + static_cast<std::int64_t>(chunk) * kChunk;
  const std::int64_t ce = cb + kChunk < e ? cb + kChunk : e;
  // Its 16-byte vectors: kChunk / 4, one more when it starts off a vector's boundary (block-uniform).
  const int span = static_cast<int>(((ce + 3) >> 2) - (cb >> 2));
  const float acc =
      sum_range<kLongLoadsInFlight>(v4, cb, static_cast<unsigned>(ce - cb), tid, kThreads, (span + kThreads - 1) / kThreads);
  // The library's block_reduce: a fixed tree (thread 0 gets the sum).
  const float y = foldkit::cuda::block_reduce(acc, add, 0.0f, red);
  if (tid == 0) {
    partials[chunk] = y;
    __threadfence();
    last = atomicAdd(ticket, 1u) == static_cast<unsigned>(count - 1);
  }
  __syncthreads();
  if (last) {
    // The segment's chunk sums in chunk order: thread t folds chunks t, t + kThreads, ..., then
    // the same fixed tree.
    __threadfence();
    float z = 0.0f;
    for (int i = tid; i < count; i += kThreads) z += __ldcg(partials + i);
    __syncthreads();  // red is reused
    const float total = foldkit::cuda::block_reduce(z, add, 0.0f, red);
    if (tid == 0) {
      *out = total;
      *ticket = 0u;  // for the next call
    }
  }
  __syncthreads();  // red and last are reused by the next chunk
}

__device__ __forceinline__ void long_chunks(const float* __restrict__ in, const std::int64_t* __restrict__ off,
                                            const LongChunk* __restrict__ chunks, int num_chunks,
                                            const int* __restrict__ chunk_base, const int* __restrict__ chunk_count,
                                            float* __restrict__ partials, unsigned* __restrict__ tickets,
                                            float* __restrict__ out) {
  __shared__ foldkit::cuda::BlockReduceStorage<float> red;
  __shared__ bool last;
  const float4* v4 = reinterpret_cast<const float4*>(in);
  for (int w = static_cast<int>(blockIdx.x); w < num_chunks; w += static_cast<int>(gridDim.x)) {
    const LongChunk c = chunks[w];
    sum_chunk(v4, off[c.segment], off[c.segment + 1], c.chunk, chunk_count[c.long_index], partials + chunk_base[c.long_index],
              &tickets[c.long_index], out + c.segment, red, last);
  }
}

// The long segments found on the device, as a library call would (no host round trip): the
// validation pass appends each segment longer than kLongMin to a list by two atomics (its entry,
// and a run of chunk slots); the entries' order varies from call to call, the bits do not (a
// chunk's sum and a segment's fold in chunk order do not depend on where they are stored).
struct LongEntry {
  std::int64_t segment;
  int base;   // its first chunk slot
  int count;  // its chunks
};
// counters: [0] entries, [1] chunk slots, [2] the chunk kernel's finished blocks (its last block
// zeroes all three for the next call).
__global__ void __launch_bounds__(kThreads) validate_list_kernel(const std::int64_t* __restrict__ off, std::int64_t S,
                                                                 std::int64_t n, unsigned* flag, unsigned token,
                                                                 LongEntry* entries, unsigned* counters) {
  const std::int64_t pairs = (S + 2) / 2;  // offsets 0 .. S, two a thread (as validate_kernel)
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; k < pairs;
       k += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const OffsetPair q = read_pair(off, S, n, k);
    if (q.bad) {
      *flag = token;
      continue;
    }
    const auto append = [&](std::int64_t segment, std::int64_t len) {
      const int count = static_cast<int>((len + kChunk - 1) / kChunk);
      const unsigned entry = atomicAdd(&counters[0], 1u);
      const unsigned base = atomicAdd(&counters[1], static_cast<unsigned>(count));
      entries[entry] = {segment, static_cast<int>(base), count};
    };
    if (q.i < S && q.v1 - q.v0 > kLongMin) append(q.i, q.v1 - q.v0);
    if (q.i + 1 < S && q.v2 - q.v1 > kLongMin) append(q.i + 1, q.v2 - q.v1);
  }
}

// The listed segments' chunks, grid-strided over the chunk slots; a slot's entry found by a walk
// of the list (a probe's shortcut: the list is short here; a library would search a sorted one).
__global__ void __launch_bounds__(kThreads, 4) list_chunks_kernel(const float* __restrict__ in, const std::int64_t* __restrict__ off,
                                                                  const LongEntry* __restrict__ entries, unsigned* counters,
                                                                  float* __restrict__ partials, unsigned* __restrict__ tickets,
                                                                  float* __restrict__ out, const unsigned* flag, unsigned token) {
  __shared__ foldkit::cuda::BlockReduceStorage<float> red;
  __shared__ bool last, last_block;
  const float4* v4 = reinterpret_cast<const float4*>(in);
  const bool bad = *flag == token;
  const int listed = bad ? 0 : static_cast<int>(__ldcg(&counters[0]));
  const unsigned slots = bad ? 0u : __ldcg(&counters[1]);
  int e = 0;
  for (unsigned g = blockIdx.x; g < slots; g += gridDim.x) {
    while (e < listed && !(static_cast<unsigned>(entries[e].base) <= g && g < static_cast<unsigned>(entries[e].base + entries[e].count)))
      e = e + 1 < listed ? e + 1 : 0;  // (slots rise with g: the walk resumes where it found the last one)
    const LongEntry le = entries[e];
    sum_chunk(v4, off[le.segment], off[le.segment + 1], static_cast<int>(g - le.base), le.count, partials + le.base,
              &tickets[e], out + le.segment, red, last);
  }
  if (threadIdx.x == 0) {
    __threadfence();
    last_block = atomicAdd(&counters[2], 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last_block && threadIdx.x == 0) counters[0] = counters[1] = counters[2] = 0u;
}

// The long chunks as the first run had them (no minimum of blocks: ptxas keeps 32 registers and
// places each vector's adds right after its load, so a thread has 1 of its 8 loads in flight,
// SASS sm_90), and with 4 blocks an SM asked for (all 8 loads in flight).
__global__ void __launch_bounds__(kThreads) long_kernel(const float* __restrict__ in, const std::int64_t* __restrict__ off,
                                                        const LongChunk* __restrict__ chunks, int num_chunks,
                                                        const int* __restrict__ chunk_base, const int* __restrict__ chunk_count,
                                                        float* __restrict__ partials, unsigned* __restrict__ tickets,
                                                        float* __restrict__ out) {
  long_chunks(in, off, chunks, num_chunks, chunk_base, chunk_count, partials, tickets, out);
}
__global__ void __launch_bounds__(kThreads, 4) long_kernel_b4(const float* __restrict__ in, const std::int64_t* __restrict__ off,
                                                              const LongChunk* __restrict__ chunks, int num_chunks,
                                                              const int* __restrict__ chunk_base, const int* __restrict__ chunk_count,
                                                              float* __restrict__ partials, unsigned* __restrict__ tickets,
                                                              float* __restrict__ out) {
  long_chunks(in, off, chunks, num_chunks, chunk_base, chunk_count, partials, tickets, out);
}

template <class T>
T* device_copy(const std::vector<T>& v) {
  T* d = nullptr;
  check_cuda(cudaMalloc(&d, std::max<std::size_t>(v.size(), 1) * sizeof(T)), "cudaMalloc");
  if (!v.empty()) check_cuda(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

struct Row {
  std::string what;
  fkbench::Call call;
  std::string check;
  fkbench::Timing timing;
};

int run_layout(int layout, const fkbench::GpuInfo& gpu, cudaStream_t s) {
  const std::vector<std::int64_t> offsets = fkbench::axes::segment_offsets(layout);
  const std::int64_t S = static_cast<std::int64_t>(offsets.size()) - 1;
  const std::int64_t n = offsets.back();
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  std::printf("\n== %s: %lld segments, %lld floats (%.1f MiB)\n", fkbench::axes::segments_text(layout).c_str(),
              static_cast<long long>(S), static_cast<long long>(n), bytes / 1048576.0);
  fkbench::LaunchGate gate;
  fkbench::InputPool pool;
  pool.prepare(foldkit::DType::f32, n, 4242, s);
  std::int64_t* d_off = device_copy(offsets);
  float* d_out = nullptr;
  unsigned* d_sink = nullptr;
  check_cuda(cudaMalloc(&d_out, static_cast<std::size_t>(S) * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMalloc(&d_sink, 64), "cudaMalloc");
  unsigned* d_flag = nullptr;
  check_cuda(cudaMalloc(&d_flag, sizeof(unsigned)), "cudaMalloc");
  check_cuda(cudaMemset(d_flag, 0, sizeof(unsigned)), "cudaMemset");

  // The long segments and their chunks (host-built here: see the header).
  std::vector<LongChunk> chunks;
  std::vector<int> chunk_base, chunk_count;
  for (std::int64_t i = 0; i < S; ++i) {
    const std::int64_t len = offsets[static_cast<std::size_t>(i) + 1] - offsets[static_cast<std::size_t>(i)];
    if (len <= kLongMin) continue;
    const int count = static_cast<int>((len + kChunk - 1) / kChunk);
    chunk_base.push_back(static_cast<int>(chunks.size()));
    chunk_count.push_back(count);
    for (int c = 0; c < count; ++c) chunks.push_back({i, static_cast<int>(chunk_count.size()) - 1, c});
  }
  const int num_chunks = static_cast<int>(chunks.size());
  LongChunk* d_chunks = device_copy(chunks);
  int* d_base = device_copy(chunk_base);
  int* d_count = device_copy(chunk_count);
  float* d_partials = nullptr;
  unsigned* d_tickets = nullptr;
  check_cuda(cudaMalloc(&d_partials, std::max(num_chunks, 1) * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMalloc(&d_tickets, std::max<std::size_t>(chunk_count.size(), 1) * sizeof(unsigned)), "cudaMalloc");
  check_cuda(cudaMemset(d_tickets, 0, std::max<std::size_t>(chunk_count.size(), 1) * sizeof(unsigned)), "cudaMemset");
  std::printf("   %zu segments longer than %lld (%d chunks of %d); inputs: %s\n", chunk_count.size(),
              static_cast<long long>(kLongMin), num_chunks, kChunk, pool.memory_text().c_str());

  // The reference: every segment of copy 0 in double, and the sum of its |x| for the tolerance.
  std::vector<float> host(static_cast<std::size_t>(n));
  check_cuda(cudaMemcpy(host.data(), pool.copy(0), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::vector<double> want(static_cast<std::size_t>(S)), scale(static_cast<std::size_t>(S));
  for (std::int64_t i = 0; i < S; ++i) {
    double sum = 0, mag = 0;
    for (std::int64_t j = offsets[static_cast<std::size_t>(i)]; j < offsets[static_cast<std::size_t>(i) + 1]; ++j) {
      sum += host[static_cast<std::size_t>(j)];
      mag += std::fabs(host[static_cast<std::size_t>(j)]);
    }
    want[static_cast<std::size_t>(i)] = sum;
    scale[static_cast<std::size_t>(i)] = std::max(mag, 1e-30);
  }
  std::vector<float> got(static_cast<std::size_t>(S));
  auto check = [&](const fkbench::Call& call) {
    check_cuda(cudaMemsetAsync(d_out, 0xFF, got.size() * sizeof(float), s), "cudaMemsetAsync");  // poison
    call(pool.copy(0));
    check_cuda(cudaStreamSynchronize(s), "sync");
    check_cuda(cudaMemcpy(got.data(), d_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    std::int64_t bad = 0, first = -1;
    for (std::int64_t i = 0; i < S; ++i) {
      const double err = std::fabs(got[static_cast<std::size_t>(i)] - want[static_cast<std::size_t>(i)]) / scale[static_cast<std::size_t>(i)];
      if (!(err <= 1e-5)) {
        if (first < 0) first = i;
        ++bad;
      }
    }
    if (bad == 0) return std::string("ok");
    return "WRONG: " + std::to_string(bad) + " segments, first " + std::to_string(first);
  };

  fkbench::TimingPlan tp;
  tp.reps_median = 30;
  tp.reps_batch = 60;
  fkbench::CeilingVariant best{};
  double best_us = 1e30;
  for (const fkbench::CeilingVariant& v : fkbench::ceiling_variants()) {
    const fkbench::Timing t = fkbench::time_calls(tp, s, pool, &gate, [&, v](const void* in) {
      fkbench::launch_read_ceiling(in, bytes, v, gpu.sm_count, d_sink, 0x9e3779b9u, s);
    });
    if (t.median_us < best_us) {
      best_us = t.median_us;
      best = v;
    }
  }

  std::vector<Row> rows;
  auto add = [&](std::string what, fkbench::Call call) {
    std::string c = check(call);
    rows.push_back({std::move(what), std::move(call), std::move(c), {}});
  };
  auto add_part = [&](std::string what, fkbench::Call call) { rows.push_back({std::move(what), std::move(call), "part", {}}); };
  add("library: foldkit::cuda::segmented_reduce", [&](const void* in) {
    foldkit::cuda::segmented_reduce(foldkit::ReduceOp::sum, foldkit::DType::f32, in, n, d_off, S, d_out, s);
  });
  // The library's group path (src/cuda/segmented_group_kernel.cuh), forced: this probe's design
  // with the library's tuning, every op and dtype but argmin/argmax.
  const std::size_t lib_ws_bytes = foldkit::cuda::segmented_reduce_workspace_bytes(n, S, foldkit::ReduceOp::sum, foldkit::DType::f32);
  void* d_lib_ws = nullptr;
  check_cuda(cudaMalloc(&d_lib_ws, lib_ws_bytes), "cudaMalloc");
  foldkit::cuda::init_workspace(foldkit::cuda::Workspace{d_lib_ws, lib_ws_bytes}, s);
  add("library: group path (detail::segmented_reduce_on_path)", [&](const void* in) {
    foldkit::cuda::detail::segmented_reduce_on_path(foldkit::cuda::detail::SegmentedPath::group, foldkit::ReduceOp::sum,
                                                    foldkit::DType::f32, in, n, d_off, S, d_out,
                                                    foldkit::cuda::Workspace{d_lib_ws, lib_ws_bytes}, s);
  });
  add("library: merge path (detail::segmented_reduce_on_path)", [&](const void* in) {
    foldkit::cuda::detail::segmented_reduce_on_path(foldkit::cuda::detail::SegmentedPath::merge, foldkit::ReduceOp::sum,
                                                    foldkit::DType::f32, in, n, d_off, S, d_out,
                                                    foldkit::cuda::Workspace{d_lib_ws, lib_ws_bytes}, s);
  });
  auto launch_long = [&, num_chunks](const void* in) {
    if (num_chunks == 0) return;
    const unsigned grid = static_cast<unsigned>(std::min(num_chunks, gpu.sm_count * 8));
    long_kernel<<<grid, kThreads, 0, s>>>(static_cast<const float*>(in), d_off, d_chunks, num_chunks, d_base, d_count,
                                          d_partials, d_tickets, d_out);
    check_cuda(cudaGetLastError(), "long_kernel launch");
  };
  int long_b4_fit = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&long_b4_fit, long_kernel_b4, kThreads, 0), "occupancy");
  auto launch_long_b4 = [&, num_chunks, long_b4_fit](const void* in) {  // (group_deep's rows)
    if (num_chunks == 0) return;
    const unsigned grid = static_cast<unsigned>(std::min(num_chunks, gpu.sm_count * long_b4_fit));
    long_kernel_b4<<<grid, kThreads, 0, s>>>(static_cast<const float*>(in), d_off, d_chunks, num_chunks, d_base, d_count,
                                             d_partials, d_tickets, d_out);
    check_cuda(cudaGetLastError(), "long_kernel_b4 launch");
  };
  unsigned token = 0;  // validated calls: this call's token (validate_kernel)
  auto group_row = [&](auto g_tag, auto u_tag, int blocks_per_sm, auto validated_tag) {
    constexpr int G = decltype(g_tag)::value;
    constexpr int U = decltype(u_tag)::value;
    constexpr bool kValidated = decltype(validated_tag)::value;
    const unsigned grid = static_cast<unsigned>(gpu.sm_count * blocks_per_sm);
    add(std::string(kValidated ? "validation + " : "") + "group G=" + std::to_string(G) + " U=" + std::to_string(U) + ", " +
            std::to_string(blocks_per_sm) + " blocks/SM" + (num_chunks > 0 ? " + long" : ""),
        [&, grid, launch_long](const void* in) {
          if constexpr (kValidated) {
            ++token;
            const unsigned vgrid = static_cast<unsigned>(std::min<std::int64_t>((S + 2) / 2 / kThreads + 1, gpu.sm_count * 8));
            validate_kernel<<<vgrid, kThreads, 0, s>>>(d_off, S, n, d_flag, token);
            check_cuda(cudaGetLastError(), "validate_kernel launch");
          }
          group_kernel<G, U, kValidated><<<grid, kThreads, 0, s>>>(static_cast<const float*>(in), d_off, S, d_out, d_flag, token);
          check_cuda(cudaGetLastError(), "group_kernel launch");
          launch_long(in);
        });
  };
  // The same with D batches a step and the offsets one step ahead (group_deep_kernel).
  auto group_deep_row = [&](auto g_tag, auto u_tag, auto d_tag, auto b_tag, auto clamp_tag, auto validated_tag) {
    constexpr int G = decltype(g_tag)::value;
    constexpr int U = decltype(u_tag)::value;
    constexpr int D = decltype(d_tag)::value;
    constexpr int B = decltype(b_tag)::value;
    constexpr bool kClamp = decltype(clamp_tag)::value;
    constexpr bool kValidated = decltype(validated_tag)::value;
    // As many blocks as fit at once (D = 2 and 3 take 42-74 registers: 3-6 blocks an SM), since
    // the warps divide the segments evenly: a second wave of blocks would double the time.
    int fit = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, group_deep_kernel<G, U, D, B, kClamp, kValidated>, kThreads, 0), "occupancy");
    const int blocks_per_sm = std::min(fit, 8);
    const unsigned grid = static_cast<unsigned>(gpu.sm_count * blocks_per_sm);
    add(std::string(kValidated ? "validation + " : "") + "deep G=" + std::to_string(G) + " U=" + std::to_string(U) +
            " D=" + std::to_string(D) + (kClamp ? " clamp" : "") + ", " + std::to_string(blocks_per_sm) + " blocks/SM" +
            (num_chunks > 0 ? " + long B=4" : ""),
        [&, grid, launch_long_b4](const void* in) {
          if constexpr (kValidated) {
            ++token;
            const unsigned vgrid = static_cast<unsigned>(std::min<std::int64_t>((S + 2) / 2 / kThreads + 1, gpu.sm_count * 8));
            validate_kernel<<<vgrid, kThreads, 0, s>>>(d_off, S, n, d_flag, token);
            check_cuda(cudaGetLastError(), "validate_kernel launch");
          }
          group_deep_kernel<G, U, D, B, kClamp, kValidated><<<grid, kThreads, 0, s>>>(static_cast<const float*>(in), d_off, S, d_out, d_flag, token);
          check_cuda(cudaGetLastError(), "group_deep_kernel launch");
          launch_long_b4(in);
        });
  };
  using G4 = std::integral_constant<int, 4>;
  using G8 = std::integral_constant<int, 8>;
  using U2 = std::integral_constant<int, 2>;
  using U4 = std::integral_constant<int, 4>;
  using Plain = std::false_type;
  using Pred = std::false_type;   // predicated loads
  using Clamp = std::true_type;  // clamped loads
  using Validated = std::true_type;
  // The best two of 2026-11-29 (uniform: G=8 U=4 80.8 %; power-law: G=4 U=2 69.4 %), and U=2.
  group_row(G8{}, U4{}, 8, Plain{});
  group_row(G4{}, U2{}, 8, Plain{});
  group_row(G8{}, U2{}, 8, Plain{});
  // group_deep rows: B chosen so that ptxas issues a step's loads before its adds (SASS sm_90,
  // loads before the first add: G=8 U=4 D=1 B=6 4 of 4; D=2 B=3 8 of 8 (64 registers, 4 blocks
  // an SM fit; clamped 71, 3 blocks), clamped at B=4 6 of 8 (63, 4 blocks); D=3 B=3 10 of 12;
  // G=8 U=2 D=2 B=4, G=4 U=2 D=2 B=4 4 of 4; G=4 U=2 D=3 B=4 6 of 6; G=4 U=4 D=2 B=3 clamped 8
  // of 8; G=2 U=4 D=1 B=4 4 of 4; no spills). Predicted: on the
  // uniform layout G=8 U=4 D=2 >= 88 % (the rows of the first run: latency-bound); on the
  // power-law mix the short segments' part (2^20 of them, ~15 serial batches a warp at
  // group<4, 2>) shrinks most, the long chunks' stays.
  group_deep_row(I<8>{}, I<4>{}, I<1>{}, I<6>{}, Pred{}, Plain{});
  group_deep_row(I<8>{}, I<4>{}, I<2>{}, I<3>{}, Pred{}, Plain{});
  group_deep_row(I<8>{}, I<4>{}, I<2>{}, I<3>{}, Clamp{}, Plain{});
  group_deep_row(I<8>{}, I<4>{}, I<2>{}, I<4>{}, Clamp{}, Plain{});
  group_deep_row(I<8>{}, I<4>{}, I<3>{}, I<3>{}, Pred{}, Plain{});
  group_deep_row(I<8>{}, I<2>{}, I<2>{}, I<4>{}, Pred{}, Plain{});
  group_deep_row(I<4>{}, I<2>{}, I<2>{}, I<4>{}, Pred{}, Plain{});
  group_deep_row(I<4>{}, I<2>{}, I<3>{}, I<4>{}, Pred{}, Plain{});
  group_deep_row(I<4>{}, I<4>{}, I<2>{}, I<3>{}, Clamp{}, Plain{});
  group_deep_row(I<2>{}, I<4>{}, I<1>{}, I<4>{}, Pred{}, Plain{});
  // As a library call would run: the offsets validated first (one more pass over them).
  group_row(G8{}, U4{}, 8, Validated{});
  group_deep_row(I<8>{}, I<4>{}, I<2>{}, I<3>{}, Pred{}, Validated{});
  group_deep_row(I<4>{}, I<2>{}, I<3>{}, I<4>{}, Pred{}, Validated{});
  // As a library call would run, with the long segments found on the device (validate_list_kernel,
  // list_chunks_kernel): the whole call's cost, nothing built on the host.
  const std::int64_t max_entries = n / kLongMin + 1, max_slots = n / kChunk + max_entries;
  LongEntry* d_entries = nullptr;
  unsigned *d_counters = nullptr, *d_list_tickets = nullptr;
  float* d_list_partials = nullptr;
  check_cuda(cudaMalloc(&d_entries, static_cast<std::size_t>(max_entries) * sizeof(LongEntry)), "cudaMalloc");
  check_cuda(cudaMalloc(&d_counters, 3 * sizeof(unsigned)), "cudaMalloc");
  check_cuda(cudaMalloc(&d_list_tickets, static_cast<std::size_t>(max_entries) * sizeof(unsigned)), "cudaMalloc");
  check_cuda(cudaMalloc(&d_list_partials, static_cast<std::size_t>(max_slots) * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMemset(d_counters, 0, 3 * sizeof(unsigned)), "cudaMemset");
  check_cuda(cudaMemset(d_list_tickets, 0, static_cast<std::size_t>(max_entries) * sizeof(unsigned)), "cudaMemset");
  int list_fit = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&list_fit, list_chunks_kernel, kThreads, 0), "occupancy");
  auto library_row = [&](auto g_tag, auto u_tag, auto d_tag, auto b_tag, auto clamp_tag) {
    constexpr int G = decltype(g_tag)::value;
    constexpr int U = decltype(u_tag)::value;
    constexpr int D = decltype(d_tag)::value;
    constexpr int B = decltype(b_tag)::value;
    constexpr bool kClamp = decltype(clamp_tag)::value;
    int fit = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, group_deep_kernel<G, U, D, B, kClamp, true>, kThreads, 0), "occupancy");
    const unsigned grid = static_cast<unsigned>(gpu.sm_count * std::min(fit, 8));
    const unsigned list_grid = static_cast<unsigned>(gpu.sm_count * list_fit);
    add("validation + list + deep G=" + std::to_string(G) + " U=" + std::to_string(U) + " D=" + std::to_string(D) +
            (kClamp ? " clamp" : "") + " + list chunks",
        [&, grid, list_grid](const void* in) {
          ++token;
          const unsigned vgrid = static_cast<unsigned>(std::min<std::int64_t>((S + 2) / 2 / kThreads + 1, gpu.sm_count * 8));
          validate_list_kernel<<<vgrid, kThreads, 0, s>>>(d_off, S, n, d_flag, token, d_entries, d_counters);
          check_cuda(cudaGetLastError(), "validate_list_kernel launch");
          group_deep_kernel<G, U, D, B, kClamp, true><<<grid, kThreads, 0, s>>>(static_cast<const float*>(in), d_off, S, d_out, d_flag, token);
          check_cuda(cudaGetLastError(), "group_deep_kernel launch");
          list_chunks_kernel<<<list_grid, kThreads, 0, s>>>(static_cast<const float*>(in), d_off, d_entries, d_counters, d_list_partials,
                                                            d_list_tickets, d_out, d_flag, token);
          check_cuda(cudaGetLastError(), "list_chunks_kernel launch");
        });
  };
  library_row(I<8>{}, I<4>{}, I<2>{}, I<3>{}, Pred{});
  library_row(I<4>{}, I<2>{}, I<3>{}, I<4>{}, Pred{});

  // The library's own group path kernels (src/cuda/segmented_group_kernel.cuh), launched here with
  // the library's prepare and chunk kernels on a workspace of this probe's: the group kernel in
  // the library's shape and in others (lanes G, loads U, batches D, launch-bounds blocks B).
  namespace seg = foldkit::cuda::seg;
  const seg::GroupLayout glay = seg::group_layout(n, sizeof(float));
  unsigned char* d_gws = nullptr;
  check_cuda(cudaMalloc(&d_gws, glay.bytes), "cudaMalloc");
  check_cuda(cudaMemset(d_gws, 0, glay.bytes), "cudaMemset");  // (every call leaves it zeroed)
  int chunk_fit = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&chunk_fit, seg::segmented_group_chunks_kernel<foldkit::ReduceOp::sum, float>,
                                                           kThreads, 0),
             "occupancy");
  const auto gparams = [&](const void* in) {
    seg::GroupParams p = seg::group_params(glay, d_gws, in, n, d_off, S, d_out, nullptr);
    p.gated = false;  // each row's group kernel runs, whatever the call's count of short segments
    return p;
  };
  const auto lib_prepare = [&](const seg::GroupParams& p) {
    seg::prepare_group_kernel<4><<<seg::group_prepare_blocks(S, gpu.sm_count), foldkit::cuda::tuning::kSegPrepareThreads, 0, s>>>(p);
    check_cuda(cudaGetLastError(), "prepare_group_kernel launch");
  };
  const auto lib_chunks = [&](const seg::GroupParams& p) {
    seg::segmented_group_chunks_kernel<foldkit::ReduceOp::sum, float><<<static_cast<unsigned>(gpu.sm_count * chunk_fit), kThreads, 0, s>>>(p);
    check_cuda(cudaGetLastError(), "segmented_group_chunks_kernel launch");
  };
  // <G, U, D, B, SG, SU>: SG lanes a segment and SU loads a lane in a short step (SG 0: none).
  auto lib_group_row = [&](auto g_tag, auto u_tag, auto d_tag, auto b_tag, auto sg_tag, auto su_tag, bool alone) {
    constexpr int G = decltype(g_tag)::value, U = decltype(u_tag)::value, D = decltype(d_tag)::value, B = decltype(b_tag)::value;
    constexpr int SG = decltype(sg_tag)::value, SU = decltype(su_tag)::value;
    const auto kernel = seg::segmented_group_kernel<foldkit::ReduceOp::sum, float, SG, SU, G, U, D, B>;
    int fit = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kThreads, 0), "occupancy");
    const unsigned grid = static_cast<unsigned>(gpu.sm_count * std::min(fit, 8));
    const std::string what = "lib kernels: group<" + std::to_string(G) + "," + std::to_string(U) + "," + std::to_string(D) + "," +
                             std::to_string(B) + "," + std::to_string(SG) + "," + std::to_string(SU) + "> " +
                             std::to_string(std::min(fit, 8)) + "/SM";
    const fkbench::Call call = [&, grid, kernel, alone](const void* in) {
      const seg::GroupParams p = gparams(in);
      if (!alone) lib_prepare(p);
      kernel<<<grid, kThreads, 0, s>>>(p);
      check_cuda(cudaGetLastError(), "segmented_group_kernel launch");
      if (!alone) lib_chunks(p);
    };
    if (alone) add_part("part: " + what + " alone", call);
    else add(what + " + prepare + chunks", call);
  };
  // The library's two kernels (tuning file: the first for calls of mostly longer segments, the
  // second with short steps), and short steps of 8 segments at 4 lanes.
  lib_group_row(I<8>{}, I<4>{}, I<2>{}, I<3>{}, I<0>{}, I<4>{}, false);
  lib_group_row(I<8>{}, I<4>{}, I<1>{}, I<4>{}, I<2>{}, I<4>{}, false);
  lib_group_row(I<8>{}, I<4>{}, I<1>{}, I<4>{}, I<4>{}, I<2>{}, false);
  // (U = 5, a uniform step's 5 rounds in one batch of loads: 309.5 / 340.7 us at 3 / 2 blocks an
  // SM against U = 4's 302.7, H200 2026-11-29: refuted, removed.) The probe's best uniform kernel
  // ran 4 blocks an SM (deep G=8 U=4 D=2, 280.7 us alone against the library kernel's 285.7 at 3):
  // the library's kernel at 4 blocks an SM, 2 batches and 1.
  lib_group_row(I<8>{}, I<4>{}, I<2>{}, I<4>{}, I<0>{}, I<4>{}, false);
  lib_group_row(I<8>{}, I<4>{}, I<1>{}, I<4>{}, I<0>{}, I<4>{}, false);
  lib_group_row(I<8>{}, I<4>{}, I<2>{}, I<3>{}, I<0>{}, I<4>{}, true);
  lib_group_row(I<8>{}, I<4>{}, I<2>{}, I<4>{}, I<0>{}, I<4>{}, true);
  lib_group_row(I<8>{}, I<4>{}, I<1>{}, I<4>{}, I<0>{}, I<4>{}, true);
  lib_group_row(I<8>{}, I<4>{}, I<1>{}, I<4>{}, I<2>{}, I<4>{}, true);
  // One launch for both parts (segmented_group_fused_kernel: chunks and steps from one counter
  // of work units), with and without short steps.
  auto lib_fused_row = [&](auto sg_tag, auto b_tag) {
    constexpr int SG = decltype(sg_tag)::value, B = decltype(b_tag)::value;
    const auto kernel = seg::segmented_group_fused_kernel<foldkit::ReduceOp::sum, float, SG, 4, 8, 4, 1, B>;
    int fit = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kThreads, 0), "occupancy");
    const unsigned grid = static_cast<unsigned>(gpu.sm_count * std::min(fit, 8));
    add("lib kernels: prepare + fused<" + std::to_string(SG) + ",4,8,4,1," + std::to_string(B) + "> " +
            std::to_string(std::min(fit, 8)) + "/SM",
        [&, grid, kernel](const void* in) {
          const seg::GroupParams p = gparams(in);
          lib_prepare(p);
          kernel<<<grid, kThreads, 0, s>>>(p);
          check_cuda(cudaGetLastError(), "segmented_group_fused_kernel launch");
        });
  };
  // (ptxas sm_90: at B = 4, 64 registers, the short-step variant spills 40 bytes, the other 8;
  // at B = 3 none.)
  lib_fused_row(I<2>{}, I<4>{});
  lib_fused_row(I<2>{}, I<3>{});
  lib_fused_row(I<0>{}, I<3>{});
  add_part("part: lib kernels: prepare + chunks", [&](const void* in) {
    const seg::GroupParams p = gparams(in);
    lib_prepare(p);
    lib_chunks(p);
  });

  // The power-law mix's two parts alone (not checked: each leaves the other's segments unwritten).
  if (num_chunks > 0) {
    add_part("part: long chunks alone (long_kernel)", launch_long);
    add_part("part: long chunks alone (long_kernel_b4)", launch_long_b4);
    int fit = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, group_deep_kernel<4, 2, 3, 4, false>, kThreads, 0), "occupancy");
    const unsigned grid = static_cast<unsigned>(gpu.sm_count * std::min(fit, 8));
    add_part("part: short segments alone (deep G=4 U=2 D=3)", [&, grid](const void* in) {
      group_deep_kernel<4, 2, 3, 4, false><<<grid, kThreads, 0, s>>>(static_cast<const float*>(in), d_off, S, d_out);
      check_cuda(cudaGetLastError(), "group_deep_kernel launch");
    });
  }

  std::vector<fkbench::Call> calls{[&, best](const void* in) {
    fkbench::launch_read_ceiling(in, bytes, best, gpu.sm_count, d_sink, 0x9e3779b9u, s);
  }};
  for (const Row& r : rows) calls.push_back(r.call);
  const std::vector<fkbench::Timing> times = fkbench::time_interleaved(tp, s, pool, &gate, calls);
  const fkbench::Timing ceiling = times[0];
  std::printf("\n  %-48s %10s %10s %8s %7s  %s\n", "kernel", "median us", "batch us", "% ceil", "vs lib", "check");
  std::printf("  %-48s %10.2f %10.2f %8s %7s  -   (%s)\n", "ceiling: streaming read", ceiling.median_us, ceiling.batch_us,
              "100.0", "-", fkbench::describe(best).c_str());
  int bad = 0;
  const double lib_us = times[1].median_us;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const fkbench::Timing& t = times[i + 1];
    bad += rows[i].check == "ok" || rows[i].check == "part" ? 0 : 1;
    std::printf("  %-48s %10.2f %10.2f %8.1f %7.3f  %s%s\n", rows[i].what.c_str(), t.median_us, t.batch_us,
                100.0 * ceiling.median_us / t.median_us, t.median_us / lib_us, rows[i].check.c_str(),
                t.error.empty() ? "" : (" ERROR " + t.error).c_str());
  }
  for (void* p : {static_cast<void*>(d_off), static_cast<void*>(d_out), static_cast<void*>(d_sink), static_cast<void*>(d_chunks),
                  static_cast<void*>(d_base), static_cast<void*>(d_count), static_cast<void*>(d_partials),
                  static_cast<void*>(d_tickets), static_cast<void*>(d_flag), static_cast<void*>(d_entries),
                  static_cast<void*>(d_counters), static_cast<void*>(d_list_tickets), static_cast<void*>(d_list_partials),
                  d_lib_ws, static_cast<void*>(d_gws)})
    cudaFree(p);
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  const int only = argc > 1 ? std::atoi(argv[1]) : -1;
  if (argc > 2 || (argc > 1 && only != 0 && only != 1)) {
    std::fprintf(stderr, "usage: foldkit-seg-group-probe [0|1]   (0: 2^22 segments of 0-128, 1: the power-law mix)\n");
    return 2;
  }
  const fkbench::GpuInfo gpu = fkbench::query_gpu();
  std::printf("foldkit-seg-group-probe on %s\n", fkbench::describe(gpu).c_str());
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  int bad = 0;
  for (int layout = 0; layout < 2; ++layout)
    if (only < 0 || only == layout) bad += run_layout(layout, gpu, s);
  cudaStreamDestroy(s);
  return bad == 0 ? 0 : 1;
}
