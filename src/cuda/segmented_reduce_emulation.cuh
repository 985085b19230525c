// Host emulation of the segmented reduction's kernels (segmented_reduce_kernel.cuh and
// segmented_reduce_prepare.cuh), for the CPU tests: the kernels' own source, compiled by the host
// compiler, on host memory. Lets the algorithm (merge path, walk, carries, the look-back over
// spanning segments, the validation flag, the workspace left zeroed) be tested where no GPU is
// present; the GPU tests run the real thing.
//
// How: each CUDA thread is a fiber (ucontext) with its own stack. Up to kMaxResident blocks are
// resident at once, started in block order as earlier ones finish (as the hardware schedules a
// grid); every pass runs each live fiber of every resident block until it yields, in a random
// order. __syncthreads, __syncthreads_count and the warp shuffles are barriers at which a fiber
// yields until its block (or warp) has arrived; a look-back poll yields too. Each resident block
// has its own shared memory, filled with garbage when the block starts. Atomics are plain
// read-modify-writes, fences no-ops, cp.async a copy. Not emulated: the memory model (every
// store is visible at once).
//
// Must be the FIRST include of its translation unit: it defines __device__, __global__ and
// __shared__ before the CUDA headers see them. Host only.
#pragma once

#if defined(__CUDACC__)
#error "segmented_reduce_emulation.cuh is for the host compiler only"
#endif

#define FOLDKIT_SEG_EMULATION 1
// The kernels' `#pragma unroll`s mean nothing to the host compiler.
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#define __device__
#define __host__
#define __global__
#define __shared__ static

#include <cuda_runtime_api.h>
#include <ucontext.h>
#include <vector_functions.h>

#undef __launch_bounds__
#define __launch_bounds__(...)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "foldkit/cuda/tuning/segmented_reduce_tuning.hpp"

namespace foldkit::cuda::seg::emu {

struct Dim {
  unsigned x = 0, y = 0, z = 0;
};
inline Dim thread_idx, block_idx, grid_dim, block_dim;

constexpr int kMaxThreads = tuning::kSegThreads;
constexpr int kMaxResident = 4;
constexpr std::size_t kStackBytes = 64 << 10;
constexpr std::size_t kSharedBytes = 64 << 10;  // above the 48 KiB the kernel's static __shared__ state may have

struct BlockSlot {
  bool active = false;
  unsigned block = 0;
  int live = 0, threads = 0;
  int block_arrived = 0, count_acc = 0;
  unsigned block_gen = 0;
  int count_result[2] = {0, 0};
  int warp_arrived[kMaxThreads / 32] = {};
  unsigned warp_gen[kMaxThreads / 32] = {};
  unsigned long long shfl[kMaxThreads] = {};
  alignas(128) unsigned char shared[kSharedBytes];
};
struct Fiber {
  ucontext_t ctx;
  bool done = true;
  int slot = 0;
  unsigned tid = 0;
};
struct Scheduler {
  ucontext_t main_ctx;
  BlockSlot slots[kMaxResident];
  Fiber fibers[kMaxResident * kMaxThreads];
  std::unique_ptr<char[]> stacks;
  int cur = 0;
  std::function<void()> body;
};
inline Scheduler& sched() {
  static Scheduler* s = new Scheduler;  // never destroyed: fibers may hold pointers into it
  return *s;
}
inline BlockSlot& cur_slot() {
  Scheduler& s = sched();
  return s.slots[s.fibers[s.cur].slot];
}

// The current block's shared memory, as T.
template <class T>
inline T& block_shared() {
  static_assert(sizeof(T) <= kSharedBytes && alignof(T) <= 128);
  return *reinterpret_cast<T*>(cur_slot().shared);
}

inline void yield() {
  Scheduler& s = sched();
  swapcontext(&s.fibers[s.cur].ctx, &s.main_ctx);
}

inline void release_block(BlockSlot& b) {
  b.count_result[b.block_gen & 1u] = b.count_acc;
  b.count_acc = 0;
  b.block_arrived = 0;
  ++b.block_gen;
}

// __syncthreads_count: every live thread of the block arrives; returns how many passed pred.
inline int block_sync(int pred) {
  BlockSlot& b = cur_slot();
  const unsigned gen = b.block_gen;
  b.count_acc += pred != 0 ? 1 : 0;
  if (++b.block_arrived == b.live) release_block(b);
  else
    while (b.block_gen == gen) yield();
  return b.count_result[gen & 1u];
}

inline void warp_sync() {
  BlockSlot& b = cur_slot();
  const int w = static_cast<int>(thread_idx.x) / 32;
  const int size = std::min(32, b.threads - w * 32);
  const unsigned gen = b.warp_gen[w];
  if (++b.warp_arrived[w] == size) {
    b.warp_arrived[w] = 0;
    ++b.warp_gen[w];
  } else {
    while (b.warp_gen[w] == gen) yield();
  }
}

// Lane `src` of this warp's v (this thread's own v when src is outside the warp).
template <class T>
inline T shfl(T v, int src) {
  static_assert(sizeof(T) <= 8);
  BlockSlot& b = cur_slot();
  const int t = static_cast<int>(thread_idx.x);
  std::memcpy(&b.shfl[t], &v, sizeof(T));
  warp_sync();
  T r = v;
  if (src >= 0 && src < 32) std::memcpy(&r, &b.shfl[(t & ~31) + src], sizeof(T));
  warp_sync();
  return r;
}

inline void trampoline() {
  Scheduler& s = sched();
  s.body();
  Fiber& f = s.fibers[s.cur];
  f.done = true;
  BlockSlot& b = s.slots[f.slot];
  --b.live;
  if (b.block_arrived > 0 && b.block_arrived == b.live) release_block(b);
  if (b.live == 0) b.active = false;
}

// Runs body() as every thread of `grid` blocks of `threads`, at most `resident` blocks at once,
// started in block order; fibers run in an order drawn from `seed`.
inline void run_grid(unsigned grid, int threads, int resident, std::uint64_t seed, const std::function<void()>& body) {
  Scheduler& s = sched();
  if (!s.stacks) s.stacks.reset(new char[kStackBytes * kMaxResident * kMaxThreads]);
  resident = std::max(1, std::min(resident, kMaxResident));
  grid_dim = Dim{grid, 1, 1};
  block_dim = Dim{static_cast<unsigned>(threads), 1, 1};
  s.body = body;
  std::mt19937_64 rng(seed);
  unsigned next = 0;
  std::vector<int> order;
  for (long pass = 0;; ++pass) {
    if (pass > 50000000) {
      std::fprintf(stderr, "segmented_reduce emulation: no progress (deadlock?)\n");
      std::abort();
    }
    bool any = false;
    for (int r = 0; r < resident; ++r) {
      BlockSlot& b = s.slots[r];
      if (!b.active && next < grid) {
        b.active = true;
        b.block = next++;
        b.live = b.threads = threads;
        b.block_arrived = b.count_acc = 0;
        std::fill(std::begin(b.warp_arrived), std::end(b.warp_arrived), 0);
        std::memset(b.shared, 0xCD, kSharedBytes);  // shared memory starts as garbage
        for (int t = 0; t < threads; ++t) {
          Fiber& f = s.fibers[r * kMaxThreads + t];
          getcontext(&f.ctx);
          f.ctx.uc_stack.ss_sp = s.stacks.get() + kStackBytes * static_cast<std::size_t>(r * kMaxThreads + t);
          f.ctx.uc_stack.ss_size = kStackBytes;
          f.ctx.uc_link = &s.main_ctx;
          makecontext(&f.ctx, trampoline, 0);
          f.done = false;
          f.slot = r;
          f.tid = static_cast<unsigned>(t);
        }
      }
      any |= b.active;
    }
    if (!any) break;
    order.clear();
    for (int r = 0; r < resident; ++r)
      if (s.slots[r].active)
        for (int t = 0; t < threads; ++t) order.push_back(r * kMaxThreads + t);
    if (seed != 0) std::shuffle(order.begin(), order.end(), rng);
    for (const int i : order) {
      Fiber& f = s.fibers[i];
      if (f.done) continue;
      s.cur = i;
      thread_idx = Dim{f.tid, 0, 0};
      block_idx = Dim{s.slots[f.slot].block, 0, 0};
      swapcontext(&s.main_ctx, &f.ctx);
    }
  }
}

// A kernel without barriers (the preparation kernels): every thread in turn, plainly.
template <class F>
inline void run_simple(unsigned blocks, unsigned threads, F&& f) {
  grid_dim = Dim{blocks, 1, 1};
  block_dim = Dim{threads, 1, 1};
  for (unsigned b = 0; b < blocks; ++b) {
    block_idx = Dim{b, 0, 0};
    for (unsigned t = 0; t < threads; ++t) {
      thread_idx = Dim{t, 0, 0};
      f();
    }
  }
}

}  // namespace foldkit::cuda::seg::emu

#define threadIdx (::foldkit::cuda::seg::emu::thread_idx)
#define blockIdx (::foldkit::cuda::seg::emu::block_idx)
#define gridDim (::foldkit::cuda::seg::emu::grid_dim)
#define blockDim (::foldkit::cuda::seg::emu::block_dim)

inline void __syncthreads() { ::foldkit::cuda::seg::emu::block_sync(0); }
inline int __syncthreads_count(int pred) { return ::foldkit::cuda::seg::emu::block_sync(pred); }
template <class T>
inline T __shfl_up_sync(unsigned, T v, unsigned delta, int = 32) {
  return ::foldkit::cuda::seg::emu::shfl(v, static_cast<int>(threadIdx.x & 31u) - static_cast<int>(delta));
}
template <class T>
inline T __shfl_down_sync(unsigned, T v, unsigned delta, int = 32) {
  const int src = static_cast<int>(threadIdx.x & 31u) + static_cast<int>(delta);
  return ::foldkit::cuda::seg::emu::shfl(v, src < 32 ? src : -1);
}
template <class T>
inline T __shfl_sync(unsigned, T v, int src, int = 32) {
  return ::foldkit::cuda::seg::emu::shfl(v, src);
}
template <class T>
inline T __shfl_xor_sync(unsigned, T v, int lane_mask, int = 32) {
  return ::foldkit::cuda::seg::emu::shfl(v, static_cast<int>(threadIdx.x & 31u) ^ lane_mask);
}
inline unsigned atomicAdd(unsigned* p, unsigned v) {
  const unsigned old = *p;
  *p = old + v;
  return old;
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline unsigned atomicOr(unsigned* p, unsigned v) {
  const unsigned old = *p;
  *p = old | v;
  return old;
}
inline int atomicExch(int* p, int v) {
  const int old = *p;
  *p = v;
  return old;
}
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
  const unsigned long long old = *p;
  *p = old + v;
  return old;
}
inline unsigned long long atomicMin(unsigned long long* p, unsigned long long v) {
  const unsigned long long old = *p;
  if (v < old) *p = v;
  return old;
}
inline void __threadfence() {}
inline std::size_t __cvta_generic_to_shared(const void* p) { return reinterpret_cast<std::size_t>(p); }

namespace foldkit::cuda::seg {
inline unsigned load_acquire(const unsigned* p) { return *p; }
inline void copy16_async(void* dst, const void* src) { std::memcpy(dst, src, 16); }
inline void wait_copies() {}
inline void slot_store(unsigned long long* p, unsigned long long w) { *p = w; }
inline unsigned long long slot_load(const unsigned long long* p) { return *p; }
inline void poll_pause() { emu::yield(); }
// The group path's (segmented_group_kernel.cuh).
inline uint4 load16_stream(const void* p) {
  uint4 v;
  std::memcpy(&v, p, 16);
  return v;
}
inline unsigned warp_max(unsigned v) {
  for (int o = 16; o > 0; o >>= 1) v = std::max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
inline unsigned warp_sum(unsigned v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
inline bool warp_any(bool b) {
  unsigned v = b ? 1u : 0u;
  for (int o = 16; o > 0; o >>= 1) v |= __shfl_xor_sync(0xffffffffu, v, o);
  return v != 0u;
}
}  // namespace foldkit::cuda::seg

#include "segmented_group_kernel.cuh"
#include "segmented_reduce_kernel.cuh"
#include "segmented_reduce_prepare.cuh"

namespace foldkit::cuda::seg::emu {

// A whole call on host memory, as segmented_reduce.cu enqueues it (the begin/end form's scan of
// the lengths done on the host). `ws` is the call's workspace, zero-filled when grown (pass the
// same vector to later calls: the kernels must leave it zeroed). `resident` blocks run at once
// (1: one after another), fibers in an order drawn from `order_seed` (0: in thread order). The
// offsets form's blocks take `tiles_per_block` consecutive tiles each.
//
// group_blocks > 0: the offsets form on the group path (segmented_group_kernel.cuh; not
// argmin/argmax), its group and chunk kernels on that many blocks each; < 0: its prepare kernel,
// then the fused kernel on -group_blocks blocks.
template <ReduceOp Op, class T>
Params run_call(const T* in, std::int64_t n, bool by_offsets, const std::int64_t* offsets, const std::int64_t* begin,
                const std::int64_t* end, std::int64_t num_segments, void* out, void* values, std::int32_t* status,
                std::vector<unsigned char>& ws, std::uint64_t order_seed, int resident = 3,
                int tiles_per_block = tuning::kSegTilesPerBlock, int group_blocks = 0) {
  const std::int64_t tile = tuning::seg_tile_items(sizeof(T));
  const std::int64_t tiles = (n + num_segments + tile - 1) / tile;
  const Layout l = layout(tiles, num_segments, by_offsets, 0);
  const GroupLayout gl = group_layout(n, sizeof(T));
  const std::size_t need = by_offsets && gl.bytes > l.bytes ? gl.bytes : l.bytes;  // segmented_reduce.cu's size
  if (ws.size() < need + 16) ws.resize(need + 16, 0);
  // 16-byte aligned base inside the vector.
  auto* base = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(ws.data()) + 15) & ~std::uintptr_t{15});
  Params p{};
  p.in = in;
  p.n = n;
  p.num_segments = num_segments;
  p.out = out;
  p.values = values;
  p.header = reinterpret_cast<unsigned*>(base + kSegFlagOffset);
  p.slots = reinterpret_cast<unsigned long long*>(base + l.slots);
  p.starts = reinterpret_cast<longlong2*>(base + l.starts);
  p.stops = reinterpret_cast<longlong2*>(base + l.stops);
  p.status = status;
  p.tiles = tiles;
  p.tiles_per_block = tiles_per_block;
  constexpr unsigned kT = tuning::kSegPrepareThreads;
  if (num_segments == 0) {  // as segmented_reduce.cu: only the status
    if (status != nullptr) {
      if (by_offsets) run_simple(1, 1, [&] { offsets_status_kernel(offsets, n, status); });
      else *status = 0;
    }
    return p;
  }
  if constexpr (Op != ReduceOp::argmin && Op != ReduceOp::argmax) {
    if (by_offsets && group_blocks != 0) {  // as segmented_reduce.cu's enqueue_group
      const GroupParams q = group_params(gl, base, in, n, offsets, num_segments, out, status);
      run_grid(group_prepare_blocks(num_segments, 1), kT, resident, order_seed, [&] { prepare_group_kernel<sizeof(T)>(q); });
      p.offsets = offsets;
      if (group_blocks < 0) {
        run_grid(static_cast<unsigned>(-group_blocks), tuning::kSegThreads, resident, order_seed,
                 [&] { segmented_group_fused_kernel<Op, T>(q); });
        return p;
      }
      const auto g = static_cast<unsigned>(group_blocks);
      run_grid(g, tuning::kSegThreads, resident, order_seed, [&] { segmented_group_kernel<Op, T>(q); });
      run_grid(g, tuning::kSegThreads, resident, order_seed, [&] { short_steps_kernel<Op, T>(q); });
      run_grid(g, tuning::kSegThreads, resident, order_seed, [&] { segmented_group_chunks_kernel<Op, T>(q); });
      return p;
    }
  }
  if (by_offsets) {
    p.offsets = offsets;
    run_grid(prepare_offsets_blocks(num_segments, tiles), kT, resident, order_seed, [&] {
      prepare_offsets_kernel(offsets, num_segments, n, tiles, tile, p.header, p.starts, p.stops, p.slots);
    });
  } else {
    std::memset(base + kSegFlagOffset, 0, l.starts - kSegFlagOffset);  // segmented_reduce.cu's clear_flag_and_slots
    auto* voff = reinterpret_cast<std::int64_t*>(base + l.voff);
    p.offsets = voff;
    p.begin = begin;
    run_simple(static_cast<unsigned>((num_segments + kT - 1) / kT), kT, [&] {
      prepare_begin_end_kernel(begin, end, num_segments, n, p.header, voff, 0, nullptr);
    });
    for (std::int64_t s = 1; s <= num_segments; ++s) voff[s] += voff[s - 1];  // the inclusive scan
  }
  const auto grid = static_cast<unsigned>(by_offsets ? (tiles + tiles_per_block - 1) / tiles_per_block
                                                     : std::max<std::int64_t>(tiles, tuning::kSegBeginEndMinBlocks));
  if (by_offsets) {
    run_grid(grid, tuning::kSegThreads, resident, order_seed, [&] { segmented_reduce_kernel<Op, T, true>(p); });
  } else {
    run_grid(grid, tuning::kSegThreads, resident, order_seed, [&] { segmented_reduce_kernel<Op, T, false>(p); });
    std::memset(base + l.voff, 0, l.bytes - l.voff);  // segmented_reduce.cu's memset
  }
  return p;
}

}  // namespace foldkit::cuda::seg::emu
