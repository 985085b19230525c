// foldkit-copy-probe: how fast can kernels on the SMs copy, against cudaMemcpyAsync?
//
// Issue #4 measures the scans against the device-to-device memcpy. On the H100 the bench's own
// 16-byte copy kernel reaches ~92 % of cudaMemcpyAsync (2.75-2.80 against 3.01 TB/s at 256 MiB-1
// GiB), about where the whole-array scan stands. This probe times copy kernels that differ in one
// way each from the scan kernel's I/O, to learn which memory access pattern (if any) reaches the
// memcpy from the SMs before the scan kernel is rebuilt around it:
//   - grid-stride 16-byte copies, plain and with streaming (.cs) hints, 1 and 4 in flight;
//   - one 32 KiB chunk per block through registers (the scan's tile, without the scan);
//   - the same through shared memory by cp.async (exactly the scan kernel's I/O), with and
//     without L2 evict-first hints on the loads and .cs stores;
//   - TMA bulk copies (cp.async.bulk) of whole chunks, one chunk per block and as a persistent
//     ring of stages per block.
// Usage: foldkit-copy-probe [MiB ...]   (default 256 1024; bytes copied per call)
// Prints median and batch mean per call, GB/s (read + write) and the rate as % of memcpy's;
// writes copy-probe.csv.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "foldkit/cuda/device/scan_tile_io.cuh"
#include "foldkit/cuda/scan.hpp"
#include "timing.hpp"

namespace {

constexpr int kChunkBytes = 32 * 1024;  // the f32 scan's tile

namespace fc = foldkit::cuda;

// Chunk c of a swizzled tile: the scan's layout (scan_tile_io.cuh), 16-byte pieces XOR-swizzled
// within each 128 bytes so that striped and blocked accesses are both free of bank conflicts.
__device__ __forceinline__ int swizzle(int c) { return fc::SwizzledTile<float>::chunk(c); }

// The scan's load (scan_tile_io.cuh): kPer * 256 pieces copied striped by cp.async into `tile`
// (swizzled when kSwizzle), then waited for and made visible to the block.
template <int kPer, bool kSwizzle>
__device__ __forceinline__ void load_tile_striped(int4* tile, const int4* __restrict__ src) {
#pragma unroll
  for (int r = 0; r < kPer; ++r) {
    const int c = r * 256 + static_cast<int>(threadIdx.x);
    fc::tile_io::copy_async<16>(tile + (kSwizzle ? swizzle(c) : c), src + c);
  }
  fc::tile_io::wait_all_copies();
  __syncthreads();
}

// ---- grid-stride copies -----------------------------------------------------------------------

template <int kUnroll, bool kStreaming>
__global__ void __launch_bounds__(256) grid_stride_copy(const int4* __restrict__ in, int4* __restrict__ out,
                                                         std::size_t nvec) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < nvec; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = kStreaming ? __ldcs(in + i + u * stride) : in[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (kStreaming) __stcs(out + i + u * stride, v[u]);
      else out[i + u * stride] = v[u];
    }
  }
  for (; i < nvec; i += stride) out[i] = in[i];
}

// ---- one 32 KiB chunk per block -----------------------------------------------------------------

// Through registers: 256 threads x 8 striped 16-byte loads, then the 8 stores.
__global__ void __launch_bounds__(256) chunk_copy_registers(const int4* __restrict__ in, int4* __restrict__ out) {
  constexpr int kPer = kChunkBytes / 16 / 256;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * (kChunkBytes / 16);
  int4 v[kPer];
#pragma unroll
  for (int r = 0; r < kPer; ++r) v[r] = in[base + r * 256 + threadIdx.x];
#pragma unroll
  for (int r = 0; r < kPer; ++r) out[base + r * 256 + threadIdx.x] = v[r];
}

__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// Through shared memory by cp.async, as the scan kernel does (scan_tile_io.cuh): striped
// 16-byte copies in, a barrier, striped 16-byte stores out. kEvictFirst: the loads carry an L2
// evict-first policy; kStreamStores: st.global.cs.
template <bool kEvictFirst, bool kStreamStores>
__global__ void __launch_bounds__(256, 6) chunk_copy_cp_async(const int4* __restrict__ in, int4* __restrict__ out) {
  constexpr int kPer = kChunkBytes / 16 / 256;
  __shared__ int4 tile[kChunkBytes / 16];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * (kChunkBytes / 16);
  unsigned long long policy = 0;
  if (kEvictFirst) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#pragma unroll
  for (int r = 0; r < kPer; ++r) {
    const int c = r * 256 + threadIdx.x;
    if (kEvictFirst)
      asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(smem_addr(tile + c)),
                   "l"(in + base + c), "l"(policy)
                   : "memory");
    else
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(tile + c)), "l"(in + base + c) : "memory");
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kPer; ++r) {
    const int c = r * 256 + threadIdx.x;
    if (kStreamStores) __stcs(out + base + c, tile[c]);
    else out[base + c] = tile[c];
  }
}

// The scan kernel's I/O plus its start ticket (scan_kernel.cuh): thread 0 draws the chunk index
// from a counter, the block waits for it, then copies as chunk_copy_cp_async. kPersistent: a
// grid of 6 blocks per SM loops over chunks, each block drawing its next ticket while its current
// chunk's copies are in flight (the ticket's round trip off the critical path). The counter is
// left at 0 by the call's last draw (draws: chunks, plus one per block when persistent).
template <bool kPersistent>
__global__ void __launch_bounds__(256, 6) chunk_copy_ticket(const int4* __restrict__ in, int4* __restrict__ out,
                                                            unsigned* counter, unsigned chunks) {
  constexpr int kPer = kChunkBytes / 16 / 256;
  constexpr int kVecs = kChunkBytes / 16;
  __shared__ int4 tile[kVecs];
  __shared__ unsigned s_ticket;
  const unsigned last_draw = kPersistent ? chunks + gridDim.x - 1 : chunks - 1;
  if (threadIdx.x == 0) {
    const unsigned t = atomicAdd(counter, 1u);
    if (t == last_draw) *counter = 0;
    s_ticket = t;
  }
  __syncthreads();
  unsigned t = s_ticket;
  while (t < chunks) {
    const std::size_t base = static_cast<std::size_t>(t) * kVecs;
    const int4* src = in + base + threadIdx.x;
    const unsigned dst = smem_addr(tile + threadIdx.x);
#pragma unroll
    for (int r = 0; r < kPer; ++r)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst + r * 256 * 16), "l"(src + r * 256) : "memory");
    unsigned next = chunks;
    if (kPersistent && threadIdx.x == 0) {
      next = atomicAdd(counter, 1u);
      if (next == last_draw) *counter = 0;
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int c = r * 256 + threadIdx.x;
      out[base + c] = tile[c];
    }
    if (!kPersistent) break;
    if (threadIdx.x == 0) s_ticket = next;
    __syncthreads();  // the stores have read the tile, and the next ticket is visible
    t = s_ticket;
  }
}

// ---- stores in blocked order (no transposition of the outputs through shared memory) -------

// The chunk lands in shared memory as in the scan (striped cp.async); then each thread stores
// ITS 8 consecutive 16-byte pieces straight to global memory: a warp's store instruction writes
// 16 bytes into each of 32 lines, and the 8 instructions fill them. The scan could then skip
// the output's pass through shared memory (a barrier and 8 shared stores and loads a thread).
__global__ void __launch_bounds__(256, 6) chunk_copy_blocked_stores(const int4* __restrict__ in, int4* __restrict__ out) {
  constexpr int kPer = kChunkBytes / 16 / 256;
  __shared__ int4 tile[kChunkBytes / 16];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * (kChunkBytes / 16);
  load_tile_striped<kPer, true>(tile, in + base);
#pragma unroll
  for (int r = 0; r < kPer; ++r) {
    const int c = threadIdx.x * kPer + r;
    out[base + c] = tile[swizzle(c)];
  }
}

// The widening scans' shape (i32 in, i64 out): 16 KiB of u32 in per block, 32 KiB of u64 out.
// kBlockedStores: each thread widens its 4 consecutive input pieces into 8 output pieces and
// stores them straight to global memory (shared memory: the input only, 16 KiB). Else, as the
// scan does now: inputs to registers, a barrier, the 8 output pieces into shared memory over
// the inputs (32 KiB), a barrier, striped stores.
template <bool kBlockedStores>
__global__ void __launch_bounds__(256, 6) widen_copy(const int4* __restrict__ in, int4* __restrict__ out) {
  constexpr int kInPer = 4;  // 16 KiB / 16 B / 256 threads
  constexpr int kInVecs = 256 * kInPer;
  __shared__ int4 tile[kBlockedStores ? kInVecs : 2 * kInVecs];
  const std::size_t in_base = static_cast<std::size_t>(blockIdx.x) * kInVecs;
  const std::size_t out_base = 2 * in_base;
  load_tile_striped<kInPer, true>(tile, in + in_base);
  int4 x[kInPer];
#pragma unroll
  for (int r = 0; r < kInPer; ++r) x[r] = tile[swizzle(threadIdx.x * kInPer + r)];
  auto widen = [](int a, int b) { return make_int4(a, 0, b, 0); };  // two u32 as two little-endian u64
  if (kBlockedStores) {
#pragma unroll
    for (int r = 0; r < kInPer; ++r) {
      const std::size_t c = out_base + 2 * (threadIdx.x * kInPer + r);
      out[c] = widen(x[r].x, x[r].y);
      out[c + 1] = widen(x[r].z, x[r].w);
    }
  } else {
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kInPer; ++r) {
      const int c = 2 * (threadIdx.x * kInPer + r);
      tile[swizzle(c)] = widen(x[r].x, x[r].y);
      tile[swizzle(c + 1)] = widen(x[r].z, x[r].w);
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < 2 * kInPer; ++r) {
      const int c = r * 256 + threadIdx.x;
      out[out_base + c] = tile[swizzle(c)];
    }
  }
}

// ---- TMA bulk copies --------------------------------------------------------------------------

__device__ __forceinline__ void mbar_init(unsigned long long* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned phase) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra WAIT_%=;\n}" ::"r"(smem_addr(bar)),
      "r"(phase)
      : "memory");
}
__device__ __forceinline__ void bulk_store(void* dst, const void* src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(smem_addr(src)), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPending) : "memory");
}

// One chunk per block: one thread loads the chunk with one bulk copy, then stores it with one.
__global__ void __launch_bounds__(32) chunk_copy_bulk(const char* __restrict__ in, char* __restrict__ out) {
  __shared__ alignas(128) char tile[kChunkBytes];
  __shared__ unsigned long long bar;
  if (threadIdx.x != 0) return;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * kChunkBytes;
  mbar_init(&bar);
  bulk_load(tile, in + base, kChunkBytes, &bar);
  mbar_wait(&bar, 0);
  bulk_store(out + base, tile, kChunkBytes);
  bulk_wait_read<0>();
}

// Persistent: a block per SM keeps kStages chunks of kStageBytes in flight, chunks grid-strided;
// one thread drives the ring (load, wait, store; a stage is reloaded once its store has read it).
template <int kStages, int kStageBytes>
__global__ void __launch_bounds__(32) ring_copy_bulk(const char* __restrict__ in, char* __restrict__ out,
                                                       std::size_t chunks) {
  extern __shared__ __align__(128) char ring[];
  __shared__ unsigned long long bar[kStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < kStages; ++s) mbar_init(&bar[s]);
  const std::size_t first = blockIdx.x, step = gridDim.x;
  const std::size_t mine = first < chunks ? (chunks - first + step - 1) / step : 0;
  for (std::size_t k = 0; k < mine && k < kStages; ++k)
    bulk_load(ring + k * kStageBytes, in + (first + k * step) * kStageBytes, kStageBytes, &bar[k]);
  for (std::size_t k = 0; k < mine; ++k) {
    const int s = static_cast<int>(k % kStages);
    mbar_wait(&bar[s], static_cast<unsigned>((k / kStages) & 1));
    bulk_store(out + (first + k * step) * kStageBytes, ring + s * kStageBytes, kStageBytes);
    // Refill the stage of chunk k-1 (its store was committed one group earlier) with chunk k-1+kStages.
    if (k >= 1 && k - 1 + kStages < mine) {
      bulk_wait_read<1>();
      const int r = static_cast<int>((k - 1) % kStages);
      bulk_load(ring + r * kStageBytes, in + (first + (k - 1 + kStages) * step) * kStageBytes, kStageBytes, &bar[r]);
    }
  }
  bulk_wait_read<0>();
}

// ---- the table ------------------------------------------------------------------------------------

struct Variant {
  std::string name;
  bool is_copy;  // false: a scan, whose output is not its input (not checked here; the tests check it)
  // Copies bytes (a multiple of kChunkBytes) from in to out on stream s.
  void (*run)(const void* in, void* out, std::size_t bytes, int sms, cudaStream_t s);
  bool widens = false;  // reads bytes / 2 of u32 and writes bytes of u64 (3/4 of a copy's traffic)
};

template <int kUnroll, bool kStreaming, int kBlocksPerSm>
void run_grid_stride(const void* in, void* out, std::size_t bytes, int sms, cudaStream_t s) {
  const std::size_t nvec = bytes / 16;
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(std::size_t(kBlocksPerSm) * sms, (nvec + 255) / 256));
  grid_stride_copy<kUnroll, kStreaming><<<grid, 256, 0, s>>>(static_cast<const int4*>(in), static_cast<int4*>(out), nvec);
}
void run_chunk_registers(const void* in, void* out, std::size_t bytes, int, cudaStream_t s) {
  chunk_copy_registers<<<static_cast<unsigned>(bytes / kChunkBytes), 256, 0, s>>>(static_cast<const int4*>(in),
                                                                                  static_cast<int4*>(out));
}
template <bool kEvictFirst, bool kStreamStores>
void run_chunk_cp_async(const void* in, void* out, std::size_t bytes, int, cudaStream_t s) {
  chunk_copy_cp_async<kEvictFirst, kStreamStores><<<static_cast<unsigned>(bytes / kChunkBytes), 256, 0, s>>>(
      static_cast<const int4*>(in), static_cast<int4*>(out));
}
void run_chunk_bulk(const void* in, void* out, std::size_t bytes, int, cudaStream_t s) {
  chunk_copy_bulk<<<static_cast<unsigned>(bytes / kChunkBytes), 32, 0, s>>>(static_cast<const char*>(in),
                                                                            static_cast<char*>(out));
}
template <int kStages, int kStageBytes, int kBlocksPerSm>
void run_ring_bulk(const void* in, void* out, std::size_t bytes, int sms, cudaStream_t s) {
  const auto kernel = ring_copy_bulk<kStages, kStageBytes>;
  const int smem = kStages * kStageBytes;
  static bool configured = false;
  if (!configured) {
    FKB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    configured = true;
  }
  kernel<<<static_cast<unsigned>(kBlocksPerSm * sms), 32, smem, s>>>(static_cast<const char*>(in), static_cast<char*>(out),
                                                                     bytes / kStageBytes);
}
void run_chunk_blocked_stores(const void* in, void* out, std::size_t bytes, int, cudaStream_t s) {
  chunk_copy_blocked_stores<<<static_cast<unsigned>(bytes / kChunkBytes), 256, 0, s>>>(static_cast<const int4*>(in),
                                                                                       static_cast<int4*>(out));
}
// Widening: reads bytes / 2 of u32, writes bytes of u64.
template <bool kBlockedStores>
void run_widen(const void* in, void* out, std::size_t bytes, int, cudaStream_t s) {
  widen_copy<kBlockedStores><<<static_cast<unsigned>(bytes / 2 / 16384), 256, 0, s>>>(static_cast<const int4*>(in),
                                                                                     static_cast<int4*>(out));
}
unsigned* ticket_counter() {
  static unsigned* d = [] {
    unsigned* p = nullptr;
    FKB_CHECK(cudaMalloc(&p, sizeof *p));
    FKB_CHECK(cudaMemset(p, 0, sizeof *p));
    return p;
  }();
  return d;
}
template <bool kPersistent>
void run_chunk_ticket(const void* in, void* out, std::size_t bytes, int sms, cudaStream_t s) {
  const auto chunks = static_cast<unsigned>(bytes / kChunkBytes);
  const unsigned grid = kPersistent ? std::min(chunks, 6u * static_cast<unsigned>(sms)) : chunks;
  chunk_copy_ticket<kPersistent><<<grid, 256, 0, s>>>(static_cast<const int4*>(in), static_cast<int4*>(out),
                                                      ticket_counter(), chunks);
}
// The library's f32 sums over bytes / 4 elements (not copies: their check is skipped).
void run_scan_whole(const void* in, void* out, std::size_t bytes, int, cudaStream_t s) {
  foldkit::cuda::inclusive_scan<foldkit::ReduceOp::sum, float>(static_cast<const float*>(in),
                                                               static_cast<std::int64_t>(bytes / 4),
                                                               static_cast<float*>(out), s);
}
void run_scan_blocked_tile(const void* in, void* out, std::size_t bytes, int, cudaStream_t s) {
  foldkit::cuda::inclusive_scan_blocked<foldkit::ReduceOp::sum, float>(
      static_cast<const float*>(in), static_cast<std::int64_t>(bytes / 4), static_cast<float*>(out),
      kChunkBytes / 4, s);
}
void run_memcpy(const void* in, void* out, std::size_t bytes, int, cudaStream_t s) {
  FKB_CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, s));
}

std::vector<Variant> variants() {
  return {
      {"cudaMemcpyAsync", true, &run_memcpy},
      {"grid-stride 16 B, 8x256/SM (the bench's copy kernel)", true, &run_grid_stride<1, false, 8>},
      {"grid-stride 16 B .cs, 8x256/SM", true, &run_grid_stride<1, true, 8>},
      {"grid-stride 4x16 B in flight, 4x256/SM", true, &run_grid_stride<4, false, 4>},
      {"grid-stride 4x16 B .cs, 4x256/SM", true, &run_grid_stride<4, true, 4>},
      {"32 KiB chunk per block, registers (8x256/SM)", true, &run_chunk_registers},
      {"32 KiB chunk per block, cp.async -> smem -> st (scan I/O, 6/SM)", true, &run_chunk_cp_async<false, false>},
      {"  same, loads L2::evict_first", true, &run_chunk_cp_async<true, false>},
      {"  same, stores .cs", true, &run_chunk_cp_async<false, true>},
      {"  same, loads evict_first + stores .cs", true, &run_chunk_cp_async<true, true>},
      {"  same, blocked-order stores straight from registers (no output transpose)", true, &run_chunk_blocked_stores},
      {"widening u32 -> u64, 16 KiB in, outputs through 32 KiB of smem (the i32 scan's I/O)", true, &run_widen<false>, true},
      {"widening u32 -> u64, 16 KiB in, blocked-order stores from registers (16 KiB smem)", true, &run_widen<true>, true},
      {"  same + the scan's start ticket (thread 0 atomicAdd, barrier)", true, &run_chunk_ticket<false>},
      {"  same, persistent 6/SM, next ticket drawn while copies fly", true, &run_chunk_ticket<true>},
      {"foldkit blocked f32 sum, block = 8192 (scan kernel, no look-back)", false, &run_scan_blocked_tile},
      {"foldkit inclusive f32 sum (scan kernel with look-back)", false, &run_scan_whole},
      {"32 KiB chunk per block, TMA bulk load + bulk store (6/SM by smem)", true, &run_chunk_bulk},
      {"TMA ring, 1 block/SM, 6 x 32 KiB stages", true, &run_ring_bulk<6, 32768, 1>},
      {"TMA ring, 1 block/SM, 12 x 16 KiB stages", true, &run_ring_bulk<12, 16384, 1>},
      {"TMA ring, 2 blocks/SM, 3 x 32 KiB stages", true, &run_ring_bulk<3, 32768, 2>},
      {"TMA ring, 1 block/SM, 3 x 64 KiB stages", true, &run_ring_bulk<3, 65536, 1>},
  };
}

__global__ void count_mismatches(const unsigned* a, const unsigned* b, std::size_t n, unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    local += a[i] != b[i];
  if (local != 0) atomicAdd(bad, local);
}

__global__ void count_widen_mismatches(const unsigned* a, const unsigned long long* b, std::size_t n,
                                       unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    local += static_cast<unsigned long long>(a[i]) != b[i];
  if (local != 0) atomicAdd(bad, local);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> mib;
  for (int i = 1; i < argc; ++i) mib.push_back(std::strtoull(argv[i], nullptr, 10));
  if (mib.empty()) mib = {256, 1024};
  const fkbench::GpuInfo gpu = fkbench::query_gpu();
  std::printf("foldkit-copy-probe on %s\n", fkbench::describe(gpu).c_str());
  cudaStream_t s;
  FKB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  fkbench::LaunchGate gate;
  fkbench::TimingPlan plan;
  plan.reps_median = 30;
  plan.reps_batch = 50;
  FILE* csv = std::fopen("copy-probe.csv", "w");
  std::fprintf(csv, "gpu,mib,variant,median_us,batch_us,gbps_median,gbps_batch,pct_memcpy_median,pct_memcpy_batch,check\n");
  unsigned long long* d_bad = nullptr;
  FKB_CHECK(cudaMalloc(&d_bad, sizeof *d_bad));
  for (std::size_t m : mib) {
    const std::size_t bytes = m << 20;
    fkbench::InputPool pool;
    pool.prepare(foldkit::DType::u32, static_cast<std::int64_t>(bytes / 4), 777 + m, s);
    void* d_out = nullptr;
    FKB_CHECK(cudaMalloc(&d_out, bytes));
    std::printf("\n%zu MiB copied per call (GB/s counts read + write)\n", m);
    std::printf("%-66s %10s %10s %9s %9s %7s %7s\n", "variant", "med us", "batch us", "GB/s med", "GB/s bat", "%memcpy",
                "check");
    double memcpy_med = 0, memcpy_batch = 0;
    for (const Variant& v : variants()) {
      // Correctness first: one copy of input 0, compared word for word.
      FKB_CHECK(cudaMemsetAsync(d_out, 0xA5, bytes, s));
      v.run(pool.copy(0), d_out, bytes, gpu.sm_count, s);
      FKB_CHECK_LAUNCH(v.name.c_str());
      FKB_CHECK(cudaMemsetAsync(d_bad, 0, sizeof *d_bad, s));
      if (v.widens)
        count_widen_mismatches<<<4 * gpu.sm_count, 256, 0, s>>>(static_cast<const unsigned*>(pool.copy(0)),
                                                                static_cast<const unsigned long long*>(d_out), bytes / 8,
                                                                d_bad);
      else
        count_mismatches<<<4 * gpu.sm_count, 256, 0, s>>>(static_cast<const unsigned*>(pool.copy(0)),
                                                          static_cast<const unsigned*>(d_out), bytes / 4, d_bad);
      unsigned long long bad = 0;
      FKB_CHECK(cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, s));
      FKB_CHECK(cudaStreamSynchronize(s));
      const fkbench::Timing t = fkbench::time_calls(plan, s, pool, &gate,
                                                    [&](const void* in) { v.run(in, d_out, bytes, gpu.sm_count, s); });
      if (memcpy_med == 0) {
        memcpy_med = t.median_us;
        memcpy_batch = t.batch_us;
      }
      // %memcpy compares rates (bytes moved per us): a widening copy moves 3/4 of a copy's bytes.
      const double traffic = (v.widens ? 1.5 : 2.0) * static_cast<double>(bytes);
      const double gb = traffic / 1e3;
      const double pct_med = 100.0 * (traffic / t.median_us) / (2.0 * bytes / memcpy_med);
      const double pct_batch = 100.0 * (traffic / t.batch_us) / (2.0 * bytes / memcpy_batch);
      const char* check = !v.is_copy ? "n/a" : bad == 0 ? "ok" : "FAIL";
      std::printf("%-66s %10.2f %10.2f %9.1f %9.1f %7.1f %7s\n", v.name.c_str(), t.median_us, t.batch_us, gb / t.median_us,
                  gb / t.batch_us, pct_med, check);
      std::fprintf(csv, "%s,%zu,\"%s\",%.3f,%.3f,%.1f,%.1f,%.2f,%.2f,%s\n", gpu.name.c_str(), m, v.name.c_str(),
                   t.median_us, t.batch_us, gb / t.median_us, gb / t.batch_us, pct_med, pct_batch, check);
    }
    FKB_CHECK(cudaFree(d_out));
  }
  std::fclose(csv);
  return 0;
}
