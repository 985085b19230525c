// How the scan kernel (scan_kernel.cuh) moves one tile between global memory and shared memory.
//
// A tile is kTile consecutive elements, scanned in blocked order: thread t owns elements
// [t * kItems, (t + 1) * kItems). Global memory is read and written striped (coalesced), so the
// tile passes through shared memory in both directions.
//
// Loads are asynchronous copies (cp.async): global memory goes straight into shared memory
// without passing through registers. So a thread keeps no registers for the loads in flight,
// the kernel fits its register budget at any tile size, and the segmented scan's head search
// runs while the copies land. A tile whose start is 16-byte aligned is copied in 16-byte chunks
// (the last tile's partial chunk element by element); a misaligned one element by element,
// 4- and 8-byte elements with 4- and 8-byte copies, 2-byte elements through registers (cp.async
// copies at least 4 bytes). Positions past the array's end are filled with the identity, so that the scan
// itself needs no bounds tests.
//
// Layout in shared memory: 16-byte chunks, XOR-swizzled within each group of 8 chunks (128
// bytes, all 32 banks): chunk c lives at c ^ ((c / 8) % 8). Striped accesses (consecutive chunks
// per thread) and blocked ones (each thread its 2, 4 or 8 consecutive chunks) then both spread
// a quarter-warp's 16-byte accesses over 8 different bank groups: no bank conflicts, and no
// padding (a padded layout would break the 16-byte alignment of the chunks).
#pragma once

#include <cstdint>
#include <cstring>

namespace foldkit::cuda {

// Position of element i of a tile of E in the swizzled layout (in elements).
template <class E>
struct SwizzledTile {
  static_assert(16 % sizeof(E) == 0, "elements must tile 16-byte chunks");
  static constexpr int kVec = 16 / static_cast<int>(sizeof(E));
  __device__ __forceinline__ static int chunk(int c) { return c ^ ((c >> 3) & 7); }
  __device__ __forceinline__ static int pos(int i) { return chunk(i / kVec) * kVec + (i % kVec); }
};

namespace tile_io {

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// cp.async of 4, 8 or 16 bytes; 16-byte copies bypass L1 (.cg: the input is read once).
template <int kBytes>
__device__ __forceinline__ void copy_async(void* dst_shared, const void* src) {
  if constexpr (kBytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(dst_shared)), "l"(src) : "memory");
  } else {
    static_assert(kBytes == 4 || kBytes == 8, "cp.async copies 4, 8 or 16 bytes");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(shared_address(dst_shared)), "l"(src),
                 "n"(kBytes)
                 : "memory");
  }
}

// Waits for this thread's copies; the caller then synchronises the block.
__device__ __forceinline__ void wait_all_copies() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
// Copy groups, for several tiles in flight: commit_copies closes this thread's copies issued
// since the last commit into one group; wait_copies_but<N> waits until at most the N newest
// groups are still in flight.
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wait_copies_but() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Named barriers (ids 1-15; __syncthreads uses 0) of kCount threads, whole warps: sync waits
// until kCount threads have arrived at barrier kId; arrive counts the warp in and goes on.
template <int kId, int kCount>
__device__ __forceinline__ void named_barrier_sync() {
  static_assert(kId > 0 && kId < 16 && kCount % 32 == 0);
  asm volatile("bar.sync %0, %1;" ::"n"(kId), "n"(kCount) : "memory");
}
template <int kId, int kCount>
__device__ __forceinline__ void named_barrier_arrive() {
  static_assert(kId > 0 && kId < 16 && kCount % 32 == 0);
  asm volatile("bar.arrive %0, %1;" ::"n"(kId), "n"(kCount) : "memory");
}

// %nsmid: one more than the largest SM id, so at least the number of SMs (ids need not be
// contiguous). Good enough for a size heuristic.
__device__ __forceinline__ unsigned sm_id_count() {
  unsigned n;
  asm("mov.u32 %0, %%nsmid;" : "=r"(n));
  return n;
}

// Asks the L2 to fetch [begin, end) (bulk prefetch, sm_90): nothing waits for it and nothing
// holds its bytes but the L2. Only the 16-byte-aligned whole chunks inside the range are
// fetched, so no byte outside it is touched. Built for an older GPU, it does nothing (a hint).
__device__ __forceinline__ void prefetch_l2(const void* begin, const void* end) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const auto b = (reinterpret_cast<std::uintptr_t>(begin) + 15u) & ~std::uintptr_t{15};
  const auto e = reinterpret_cast<std::uintptr_t>(end) & ~std::uintptr_t{15};
  if (e > b)
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(b), "r"(static_cast<unsigned>(e - b)) : "memory");
#else
  (void)begin;
  (void)end;
#endif
}

}  // namespace tile_io

// Starts loading the tile's `valid` elements in[0 .. valid) into `tile` (kTile elements of T,
// 16-byte aligned), positions [valid, kTile) set to `fill`. Every thread of the block calls it;
// the data is there after wait_all_copies() and a barrier.
template <int kThreads, int kTile, class T>
__device__ __forceinline__ void start_tile_load(const T* in, int valid, T fill, T* tile) {
  using Layout = SwizzledTile<T>;
  constexpr int kVec = Layout::kVec;
  constexpr int kChunks = kTile / kVec;
  static_assert(kChunks % kThreads == 0 && kTile % 8 == 0, "a tile is whole chunks per thread");
  const int tid = static_cast<int>(threadIdx.x);
  if (reinterpret_cast<std::uintptr_t>(in) % 16 == 0) {
    // Whole chunks inside [0, valid) as 16-byte copies; the last tile's partial chunk element
    // by element, and the chunks past it filled.
    auto* chunks = reinterpret_cast<uint4*>(tile);
    const int whole = valid / kVec;
#pragma unroll
    for (int r = 0; r < kChunks / kThreads; ++r) {
      const int c = r * kThreads + tid;
      if (c < whole) {
        tile_io::copy_async<16>(chunks + Layout::chunk(c), in + static_cast<std::int64_t>(c) * kVec);
      } else {
        T x[kVec];
#pragma unroll
        for (int e = 0; e < kVec; ++e) x[e] = c * kVec + e < valid ? in[c * kVec + e] : fill;
        memcpy(chunks + Layout::chunk(c), x, 16);
      }
    }
    return;
  }
  if constexpr (sizeof(T) >= 4) {
#pragma unroll 1
    for (int r = 0; r < kTile / kThreads; ++r) {
      const int i = r * kThreads + tid;
      T* dst = tile + Layout::pos(i);
      if (i < valid) tile_io::copy_async<sizeof(T)>(dst, in + i);
      else *dst = fill;
    }
  } else {
    // Through registers, 8 loads in flight before their stores (all of them spill registers).
    constexpr int kGroup = 8;
    static_assert((kTile / kThreads) % kGroup == 0);
#pragma unroll 1
    for (int r0 = 0; r0 < kTile / kThreads; r0 += kGroup) {
      T x[kGroup];
#pragma unroll
      for (int r = 0; r < kGroup; ++r) {
        const int i = (r0 + r) * kThreads + tid;
        x[r] = i < valid ? in[i] : fill;
      }
#pragma unroll
      for (int r = 0; r < kGroup; ++r) tile[Layout::pos((r0 + r) * kThreads + tid)] = x[r];
    }
  }
}

// Chunk j of this thread's kItems consecutive elements of the tile (blocked order): elements
// [tid * kItems + j * kVec, + kVec), one 16-byte read.
template <int kItems, class E>
__device__ __forceinline__ void read_thread_chunk(const E* tile, int tid, int j, E (&chunk)[SwizzledTile<E>::kVec]) {
  using Layout = SwizzledTile<E>;
  constexpr int kPerThread = kItems / Layout::kVec;
  static_assert(kItems % Layout::kVec == 0, "a thread's items are whole chunks");
  const uint4 v = reinterpret_cast<const uint4*>(tile)[Layout::chunk(tid * kPerThread + j)];
  memcpy(chunk, &v, 16);
}

// Writes one 16-byte chunk (chunk j of this thread's items, blocked order) of the tile.
template <int kItems, class E>
__device__ __forceinline__ void write_thread_chunk(E* tile, int tid, int j, const E (&chunk)[SwizzledTile<E>::kVec]) {
  using Layout = SwizzledTile<E>;
  constexpr int kPerThread = kItems / Layout::kVec;
  uint4 v;
  memcpy(&v, chunk, 16);
  reinterpret_cast<uint4*>(tile)[Layout::chunk(tid * kPerThread + j)] = v;
}

// The store pass's default: every element as it stands in the tile.
struct StoreAsIs {
  template <class O>
  __device__ __forceinline__ O operator()(int /*chunk*/, O v) const {
    return v;
  }
};

// Stores the tile's first `valid` elements to out[0 .. valid), striped: 16-byte stores for a
// chunk of a tile whose start is 16-byte aligned (the partial last one element by element), else
// element by element. Each element passes through transform(chunk, value) on its way out (chunk:
// its 16-byte chunk's index in the tile, in element order). kUnroll: how many of a thread's
// chunks the aligned loop unrolls (0: all of them). Kernels near their register cap that
// transform every element need less: fully unrolled, the loop's shared-memory loads were all
// hoisted and spilled (ptxas, sm_90).
template <int kThreads, int kTile, int kUnroll = 0, class O, class Transform = StoreAsIs>
__device__ __forceinline__ void store_tile(const O* tile, int valid, O* out, Transform transform = {}) {
  using Layout = SwizzledTile<O>;
  constexpr int kVec = Layout::kVec;
  constexpr int kChunks = kTile / kVec;
  static_assert(kChunks % kThreads == 0, "a tile is whole chunks per thread");
  constexpr int kUnrollChunks = kUnroll == 0 ? kChunks / kThreads : kUnroll;
  const int tid = static_cast<int>(threadIdx.x);
  if (reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
    // Whole chunks inside [0, valid) as 16-byte stores; the last tile's partial chunk element
    // by element.
    const auto* chunks = reinterpret_cast<const uint4*>(tile);
    const int whole = valid / kVec;
#pragma unroll kUnrollChunks
    for (int r = 0; r < kChunks / kThreads; ++r) {
      const int c = r * kThreads + tid;
      if (c < whole) {
        O x[kVec];
        const uint4 v = chunks[Layout::chunk(c)];
        memcpy(x, &v, 16);
#pragma unroll
        for (int e = 0; e < kVec; ++e) x[e] = transform(c, x[e]);
        uint4 w;
        memcpy(&w, x, 16);
        reinterpret_cast<uint4*>(out + static_cast<std::int64_t>(c) * kVec)[0] = w;
      } else if (c * kVec < valid) {
        for (int e = 0; c * kVec + e < valid; ++e) out[c * kVec + e] = transform(c, tile[Layout::chunk(c) * kVec + e]);
      }
    }
    return;
  }
#pragma unroll 4
  for (int r = 0; r < kTile / kThreads; ++r) {
    const int i = r * kThreads + tid;
    if (i < valid) out[i] = transform(i / kVec, tile[Layout::pos(i)]);
  }
}

}  // namespace foldkit::cuda
