// The streaming-read ceiling kernel (see ceiling_kernel.hpp).
#include "ceiling_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "foldkit/cuda/device/grid_dependency.cuh"
#include "foldkit/cuda/dispatch/programmatic_launch.cuh"
#include "timing.hpp"

namespace fkbench {
namespace {

__device__ __forceinline__ unsigned fold(int4 v) {
  return static_cast<unsigned>(v.x ^ v.y ^ v.z ^ v.w);
}

// The buffer is split into an unaligned head (< 16 bytes), a body of 16-byte words and a tail
// (< 16 bytes). The body is read grid-stride; in each iteration a thread issues kUnroll loads,
// each one grid-stride apart so that a warp's loads are 512 contiguous bytes, and only then
// consumes them. Launch bounds come from the variant: ptxas sizes the register budget for
// kThreads x kMinBlocks resident threads, and with full occupancy (32 registers) it cannot keep
// 8 int4 loads live, so it interleaves the XORs and fewer loads are really in flight (seen in
// the SASS). Each variant is therefore compiled for its own occupancy.
// Launched as foldkit launches its reductions, with programmatic dependent launch: it waits for
// the previous grid before its first load and lets the next grid launch once its own loads are
// issued, so that back to back it overlaps launches exactly as the library may (without it the
// library beat this "ceiling" back to back at 12-20 of 50 points, issue #20).
template <int kThreads, int kMinBlocks, int kUnroll>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    read_ceiling_kernel(const unsigned char* __restrict__ base, std::size_t bytes, unsigned* __restrict__ sink,
                        unsigned sentinel) {
  foldkit::cuda::wait_for_prior_grid();
  const std::size_t misalign = reinterpret_cast<std::uintptr_t>(base) & 15u;
  const std::size_t head = misalign ? std::min<std::size_t>(16 - misalign, bytes) : 0;
  const int4* __restrict__ body = reinterpret_cast<const int4*>(base + head);
  const std::size_t nvec = (bytes - head) / 16;
  const std::size_t tail_begin = head + nvec * 16;

  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  unsigned acc = 0;

  if (nvec >= (kUnroll - 1) * stride) {
    const std::size_t full_end = nvec - (kUnroll - 1) * stride;  // i < full_end: all kUnroll loads in range
    for (; i < full_end; i += kUnroll * stride) {
      int4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(body + i + u * stride);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc ^= fold(v[u]);
    }
  }
  for (; i < nvec; i += stride) acc ^= fold(__ldcs(body + i));  // at most kUnroll - 1 left
  foldkit::cuda::allow_next_grid();

  // Head and tail bytes: one byte per thread of block 0.
  if (blockIdx.x == 0 && threadIdx.x < 16) {
    if (threadIdx.x < head) acc ^= base[threadIdx.x];
    if (tail_begin + threadIdx.x < bytes) acc ^= base[tail_begin + threadIdx.x];
  }
  // The store is conditional on data the compiler cannot know, so no load can be removed, and
  // it (practically) never happens, so the kernel writes nothing to memory.
  if (acc == sentinel) *sink = acc;
}

template <int kThreads, int kBlocksPerSm, int kUnroll>
void launch(const void* d, std::size_t bytes, int sm_count, unsigned* d_sink, unsigned sentinel, cudaStream_t s) {
  const unsigned grid = ceiling_grid(bytes, CeilingVariant{kBlocksPerSm, kThreads, kUnroll}, sm_count);
  FKB_CHECK(foldkit::cuda::launch_programmatic(read_ceiling_kernel<kThreads, kBlocksPerSm, kUnroll>, dim3(grid),
                                               dim3(kThreads), s, static_cast<const unsigned char*>(d), bytes, d_sink,
                                               sentinel));
}

using LaunchFn = void (*)(const void*, std::size_t, int, unsigned*, unsigned, cudaStream_t);
struct Entry {
  CeilingVariant v;
  LaunchFn fn;
};

// 8 x 256 per SM is full occupancy on sm_90 (2048 threads, 32 registers each); 8 x 256 with one
// load per iteration is the kernel ANCHORS.md measured (3098 GB/s at 1 GiB). The others trade
// occupancy for loads in flight per thread.
const Entry kVariants[] = {
    {{8, 256, 1}, &launch<256, 8, 1>},  {{8, 256, 2}, &launch<256, 8, 2>}, {{8, 256, 4}, &launch<256, 8, 4>},
    {{4, 256, 8}, &launch<256, 4, 8>},  {{4, 512, 4}, &launch<512, 4, 4>}, {{2, 512, 8}, &launch<512, 2, 8>},
    {{16, 128, 4}, &launch<128, 16, 4>},
};

}  // namespace

unsigned ceiling_grid(std::size_t bytes, const CeilingVariant& v, int sm_count) {
  const std::size_t nvec = bytes / 16 + 1;
  const std::size_t useful = (nvec + v.block_threads - 1) / v.block_threads;  // more blocks would have no load at all
  return static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(v.blocks_per_sm) * sm_count, useful)));
}

std::vector<CeilingVariant> ceiling_variants() {
  std::vector<CeilingVariant> out;
  for (const Entry& e : kVariants) out.push_back(e.v);
  return out;
}

std::string describe(const CeilingVariant& v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%dx%d/SM u%d", v.blocks_per_sm, v.block_threads, v.unroll);
  return buf;
}

void launch_read_ceiling(const void* d, std::size_t bytes, const CeilingVariant& v, int sm_count, unsigned* d_sink,
                         unsigned sentinel, cudaStream_t s) {
  for (const Entry& e : kVariants) {
    if (e.v.blocks_per_sm == v.blocks_per_sm && e.v.block_threads == v.block_threads && e.v.unroll == v.unroll) {
      e.fn(d, bytes, sm_count, d_sink, sentinel, s);
      FKB_CHECK_LAUNCH("read_ceiling_kernel");
      return;
    }
  }
  throw std::runtime_error("read ceiling: no compiled variant " + describe(v));
}

}  // namespace fkbench
