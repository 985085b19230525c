// Seed 003's ladder (Mark Harris' "Optimizing Parallel Reduction in CUDA"): launchers, shape
// rules and registry entries of reduce0 .. reduce6 and reduce7_shuffle. Kernels: kernels_tree.cuh
// (reduce0-4) and kernels_unrolled.cuh (reduce5-7).
//
// Passes: as in the seed, a kernel launch is the only global barrier, so a pass writes one
// partial per block and the same kernel (same block size) runs again over those partials,
// stream-ordered, until a pass has a single block; that pass writes the answer to out. Later
// passes use the derived grid. Partials ping-pong between two workspace buffers.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "ladder/common.cuh"
#include "ladder/seed003/kernels_tree.cuh"
#include "ladder/seed003/kernels_unrolled.cuh"
#include "ladder/variant.hpp"

namespace foldkit::ladder {
namespace {

using namespace seed003;

using LaunchFn = void (*)(const void*, std::size_t, void*, void*, const Shape&, cudaStream_t);

constexpr std::size_t kAlign = 256;
// reduce6/7's derived grid stops at about one wave of resident threads on an H100 (132 SMs x
// 2048 threads): more blocks would only queue, each extra block is one more partial. A
// constant, so that workspace_bytes() needs no device query.
constexpr std::size_t kWaveThreads = 132 * 2048;

constexpr std::size_t align_up(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// How a rung maps elements to blocks: `tile` elements per block per step, and whether the
// derived grid is capped (grid-stride rungs) or one tile per block (reduce0-5, the seed's grid).
struct Tiling {
  std::size_t tile;
  bool capped;
};
Tiling tiling_one(const Shape& s) { return {static_cast<std::size_t>(std::max(s.block_threads, 1)), false}; }
Tiling tiling_pair(const Shape& s) { return {2 * static_cast<std::size_t>(std::max(s.block_threads, 1)), false}; }
Tiling tiling_chunk(const Shape& s) {
  const std::size_t block = static_cast<std::size_t>(std::max(s.block_threads, 1));
  return {block * static_cast<std::size_t>(std::max(s.items_per_thread, 1)), true};
}

// The derived grid for m elements: ceil(m / tile), at least 1, capped for grid-stride rungs.
int derived_grid(std::size_t m, const Shape& s, Tiling t) {
  const std::size_t cap =
      t.capped ? std::max<std::size_t>(1, kWaveThreads / static_cast<std::size_t>(std::max(s.block_threads, 1)))
               : static_cast<std::size_t>(INT_MAX);
  return static_cast<int>(std::clamp<std::size_t>((m + t.tile - 1) / t.tile, 1, cap));
}
int first_grid(std::size_t n, const Shape& s, Tiling t) {
  return s.grid_blocks > 0 ? s.grid_blocks : derived_grid(n, s, t);
}

// Two partial buffers: the first pass's grid, and the second pass's (the largest later passes
// need, since each pass's grid is smaller than its input).
std::size_t workspace_for(std::size_t n, const Shape& s, Tiling t) {
  const int g1 = first_grid(n, s, t);
  if (g1 == 1) return 0;
  const int g2 = derived_grid(static_cast<std::size_t>(g1), s, t);
  return align_up(static_cast<std::size_t>(g1) * 4) + (g2 > 1 ? align_up(static_cast<std::size_t>(g2) * 4) : 0);
}
std::size_t ws_one(std::size_t n, const Shape& s) { return workspace_for(n, s, tiling_one(s)); }
std::size_t ws_pair(std::size_t n, const Shape& s) { return workspace_for(n, s, tiling_pair(s)); }
std::size_t ws_chunk(std::size_t n, const Shape& s) { return workspace_for(n, s, tiling_chunk(s)); }

// Runs `pass(src, m, dst, grid)` (one kernel launch) until a pass has one block. After the first
// pass (whose grid the shape may set), each derived grid is smaller than its m (tile >= 32), so
// this ends. n = 0 with a derived grid is one pass of one block writing 0.
template <class T, class Pass>
void multi_pass(const char* name, const void* in, std::size_t n, void* out, void* ws, const Shape& s, Tiling t,
                Pass pass) {
  const T* src = static_cast<const T*>(in);
  std::size_t m = n;
  int grid = first_grid(n, s, t);
  T* buffers[2] = {nullptr, nullptr};
  if (grid > 1) {
    buffers[0] = static_cast<T*>(ws);
    buffers[1] = reinterpret_cast<T*>(static_cast<char*>(ws) + align_up(static_cast<std::size_t>(grid) * sizeof(T)));
  }
  for (int p = 0;; ++p) {
    T* dst = grid == 1 ? static_cast<T*>(out) : buffers[p % 2];
    pass(src, m, dst, grid);
    check_launch(name);
    if (grid == 1) return;
    src = dst;
    m = static_cast<std::size_t>(grid);
    grid = derived_grid(m, s, t);
  }
}

// --- accepts() -------------------------------------------------------------------------------
bool valid_ipt(int ipt) { return ipt == 1 || ipt == 2 || ipt == 4 || ipt == 8 || ipt == 16 || ipt == 32; }
// The trees halve the block: power-of-two blocks of 32..1024 threads (a full warp for the tail).
bool accepts_tree(const Shape& s) {
  return s.block_threads >= 32 && s.block_threads <= 1024 && is_power_of_two(s.block_threads) &&
         s.grid_blocks >= 0;
}
bool accepts_reduce6(const Shape& s) { return accepts_tree(s) && valid_ipt(s.items_per_thread); }
// Shuffles need full warps only: any multiple of 32 up to 1024.
bool accepts_reduce7(const Shape& s) {
  return s.block_threads >= 32 && s.block_threads <= 1024 && s.block_threads % 32 == 0 && s.grid_blocks >= 0 &&
         valid_ipt(s.items_per_thread);
}

// Calls f(std::integral_constant<int, V>) for an accepted block size or items_per_thread.
template <class F>
void with_power_of_two(int v, F&& f) {
  switch (v) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 8: f(std::integral_constant<int, 8>{}); break;
    case 16: f(std::integral_constant<int, 16>{}); break;
    case 32: f(std::integral_constant<int, 32>{}); break;
    case 64: f(std::integral_constant<int, 64>{}); break;
    case 128: f(std::integral_constant<int, 128>{}); break;
    case 256: f(std::integral_constant<int, 256>{}); break;
    case 512: f(std::integral_constant<int, 512>{}); break;
    case 1024: f(std::integral_constant<int, 1024>{}); break;
    default: throw Error(Errc::invalid_argument, "seed003: no kernel for " + std::to_string(v));
  }
}
template <class F>
void with_items_per_thread(int ipt, F&& f) {
  if (ipt > 32) throw Error(Errc::invalid_argument, "seed003: no kernel for items_per_thread " + std::to_string(ipt));
  with_power_of_two(ipt, [&](auto k) {
    if constexpr (decltype(k)::value <= 32) f(k);
  });
}

// --- launchers -------------------------------------------------------------------------------
template <class T>
using TreeKernel = void (*)(const T*, std::size_t, T*);

// reduce0-4: run-time block size, blockDim.x elements of dynamic shared memory.
template <class T>
void launch_dynamic(TreeKernel<T> kernel, const char* name, Tiling t, const void* in, std::size_t n, void* out,
                    void* ws, const Shape& s, cudaStream_t st) {
  require_shape(accepts_tree(s), name, s);
  const std::size_t shared_bytes = static_cast<std::size_t>(s.block_threads) * sizeof(T);
  multi_pass<T>(name, in, n, out, ws, s, t, [&](const T* src, std::size_t m, T* dst, int grid) {
    kernel<<<grid, s.block_threads, shared_bytes, st>>>(src, m, dst);
  });
}
template <class T>
void launch_reduce0(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  launch_dynamic<T>(&reduce0<T>, "seed003/reduce0", tiling_one(s), in, n, out, ws, s, st);
}
template <class T>
void launch_reduce1(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  launch_dynamic<T>(&reduce1<T>, "seed003/reduce1", tiling_one(s), in, n, out, ws, s, st);
}
template <class T>
void launch_reduce2(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  launch_dynamic<T>(&reduce2<T>, "seed003/reduce2", tiling_one(s), in, n, out, ws, s, st);
}
template <class T>
void launch_reduce3(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  launch_dynamic<T>(&reduce3<T>, "seed003/reduce3", tiling_pair(s), in, n, out, ws, s, st);
}
template <class T>
void launch_reduce4(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  launch_dynamic<T>(&reduce4<T>, "seed003/reduce4", tiling_pair(s), in, n, out, ws, s, st);
}

template <class T>
void launch_reduce5(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  require_shape(accepts_tree(s), "seed003/reduce5", s);
  with_pow2_block(s.block_threads, "seed003", [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    multi_pass<T>("seed003/reduce5", in, n, out, ws, s, tiling_pair(s),
                  [&](const T* src, std::size_t m, T* dst, int grid) {
                    reduce5<T, B><<<grid, B, 0, st>>>(src, m, dst);
                  });
  });
}

template <class T>
void launch_reduce6(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  require_shape(accepts_reduce6(s), "seed003/reduce6", s);
  with_pow2_block(s.block_threads, "seed003", [&](auto b) {
    with_items_per_thread(s.items_per_thread, [&](auto k) {
      constexpr unsigned B = decltype(b)::value;
      constexpr int IPT = decltype(k)::value;
      multi_pass<T>("seed003/reduce6", in, n, out, ws, s, tiling_chunk(s),
                    [&](const T* src, std::size_t m, T* dst, int grid) {
                      reduce6<T, B, IPT><<<grid, B, 0, st>>>(src, m, dst);
                    });
    });
  });
}

template <class T>
void launch_reduce7(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  require_shape(accepts_reduce7(s), "seed003/reduce7_shuffle", s);
  with_items_per_thread(s.items_per_thread, [&](auto k) {
    constexpr int IPT = decltype(k)::value;
    multi_pass<T>("seed003/reduce7_shuffle", in, n, out, ws, s, tiling_chunk(s),
                  [&](const T* src, std::size_t m, T* dst, int grid) {
                    reduce7_shuffle<T, IPT><<<grid, s.block_threads, 0, st>>>(src, m, dst);
                  });
  });
}

// --- registry --------------------------------------------------------------------------------
// reduce0-5: power-of-two blocks x first-pass grids (0 = one tile per block, the seed's grid).
std::vector<Shape> tree_sweep() {
  std::vector<Shape> sweep;
  for (int block = 32; block <= 1024; block *= 2)
    for (int grid : {0, 132, 264, 528, 1056, 2112}) sweep.push_back(Shape{block, grid, 1});
  return sweep;
}
// reduce6/7: blocks x elements per thread x (derived, 528) blocks: 40 shapes.
std::vector<Shape> chunk_sweep() {
  std::vector<Shape> sweep;
  for (int block : {128, 256, 512, 1024})
    for (int ipt : {1, 4, 8, 16, 32})
      for (int grid : {0, 528}) sweep.push_back(Shape{block, grid, ipt});
  return sweep;
}

struct Rung {
  const char* name;
  const char* change;
  const char* shape_help;
  bool (*accepts)(const Shape&);
  std::size_t (*workspace_bytes)(std::size_t, const Shape&);
  LaunchFn launch_i32, launch_f32;
  Shape seed_shape;
  std::vector<Shape> sweep;
};

constexpr const char* kOneHelp =
    "block_threads = block size (power of two); grid_blocks = first-pass blocks (0: ceil(n / block), one "
    "tile each; fewer blocks loop over tiles); later passes derive ceil(m / block)";
constexpr const char* kPairHelp =
    "block_threads = block size (power of two); grid_blocks = first-pass blocks (0: ceil(n / (2 * block)), "
    "one tile each; fewer blocks loop over tiles); later passes derive ceil(m / (2 * block))";
constexpr const char* kChunkHelp =
    "block_threads = block size; items_per_thread = 1..32 (power of two) loads per thread per chunk; "
    "grid_blocks = first-pass blocks (0: ceil(n / (block * items)), at most 270336 / block, about one H100 "
    "wave); later passes derive the same way";

}  // namespace

std::vector<Variant> seed003_variants() {
  const Shape seed_tree{256, 0, 1};  // the seed's THREAD_PER_BLOCK is not given: 256, grid from n
  const Shape seed_chunk{256, 0, 8};
  const Rung rungs[] = {
      {"reduce0", "baseline tree: one element per thread, interleaved addressing with tid % (2s): divergent warps",
       kOneHelp, accepts_tree, ws_one, launch_reduce0<int>, launch_reduce0<float>, seed_tree, tree_sweep()},
      {"reduce1",
       "strided index (2 * s * tid) keeps active threads contiguous, removing divergence; its stride causes "
       "shared-memory bank conflicts",
       kOneHelp, accepts_tree, ws_one, launch_reduce1<int>, launch_reduce1<float>, seed_tree, tree_sweep()},
      {"reduce2",
       "sequential addressing (upper half onto lower half): no bank conflicts; half the threads idle from the "
       "first step",
       kOneHelp, accepts_tree, ws_one, launch_reduce2<int>, launch_reduce2<float>, seed_tree, tree_sweep()},
      {"reduce3",
       "first add during the global load: two elements per thread, half the blocks, no idle first step",
       kPairHelp, accepts_tree, ws_pair, launch_reduce3<int>, launch_reduce3<float>, seed_tree, tree_sweep()},
      {"reduce4",
       "unroll the last warp: no __syncthreads below 64 live slots (warp-synchronous with __syncwarp), less "
       "instruction overhead",
       kPairHelp, accepts_tree, ws_pair, launch_reduce4<int>, launch_reduce4<float>, seed_tree, tree_sweep()},
      {"reduce5", "block size as a template parameter: the whole tree is unrolled, no loop overhead", kPairHelp,
       accepts_tree, ws_pair, launch_reduce5<int>, launch_reduce5<float>, seed_tree, tree_sweep()},
      {"reduce6",
       "many elements per thread over a grid-stride loop with a capped grid: more loads in flight per thread, "
       "fewer blocks and partials",
       kChunkHelp, accepts_reduce6, ws_chunk, launch_reduce6<int>, launch_reduce6<float>, seed_chunk, chunk_sweep()},
      {"reduce7_shuffle",
       "the seed's unimplemented optimisation 7: warp shuffles replace the shared-memory tree (one barrier, "
       "one shared slot per warp)",
       "block_threads = block size (any multiple of 32); otherwise as reduce6", accepts_reduce7, ws_chunk,
       launch_reduce7<int>, launch_reduce7<float>, seed_chunk, chunk_sweep()},
  };

  std::vector<Variant> variants;
  int rung_number = 0;
  for (const Rung& r : rungs) {
    Variant v;
    v.seed = "003";
    v.name = r.name;
    v.change = r.change;
    v.shape_help = r.shape_help;
    v.algorithm = Algorithm::reduce_sum;
    v.rung = rung_number++;
    v.seed_shape = r.seed_shape;
    v.sweep = r.sweep;
    v.deterministic = true;  // no atomics: the order of adds is fixed by the shape
    v.accepts = r.accepts;
    v.workspace_bytes = r.workspace_bytes;
    v.element = Element::i32;
    v.launch = r.launch_i32;
    variants.push_back(v);
    v.element = Element::f32;
    v.launch = r.launch_f32;
    variants.push_back(v);
  }
  return variants;
}

}  // namespace foldkit::ladder
