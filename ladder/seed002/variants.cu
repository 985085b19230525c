// Seed 002's ladder (../shared/seeds/002, "CUDA reduction evolution" with cooperative groups):
// reduce6 -> reduce7 -> reduce7_v1 -> reduce8, each on int32 and float32, as ladder variants
// (ladder/variant.hpp). This file holds the host side: shape checks, grid derivation, the
// launches and the registry entries; the kernels are in kernels.cuh.
#include <cstdint>
#include <utility>
#include <vector>
#include <type_traits>

#include "ladder/common.cuh"
#include "ladder/seed002/kernels.cuh"

namespace foldkit::ladder {
namespace seed002 {
namespace {

constexpr int kMaxItems = 64;  // reduce6's elements per thread per step: any value in [1, 64]

bool block_is_warps(int b) { return b >= 32 && b <= 1024 && b % 32 == 0; }
bool block_is_tree(int b) { return b >= 32 && b <= 1024 && is_power_of_two(b); }

// reduce6: power-of-two blocks (its unrolled tree), any grid, 1..64 elements per step.
bool accepts_reduce6(const Shape& s) {
  return block_is_tree(s.block_threads) && s.grid_blocks >= 0 && s.items_per_thread >= 1 &&
         s.items_per_thread <= kMaxItems;
}
// reduce7 / reduce7_v1 / reduce8: whole warps, any grid; items_per_thread is not used.
bool accepts_warp_atomic(const Shape& s) {
  return block_is_warps(s.block_threads) && s.grid_blocks >= 0;
}

// grid_blocks == 0: one block per `per_block` elements (block_threads x elements each thread
// takes per grid-stride step), at most 2^18 / block_threads blocks (about one resident wave of
// 2048 threads per SM on an H100's 132 SMs); the grid-stride loops cover the rest. At least 1.
int resolve_grid(std::size_t n, std::size_t per_block, const Shape& s) {
  if (s.grid_blocks > 0) return s.grid_blocks;
  const std::size_t cap = std::size_t{1} << 18;
  const std::size_t max_blocks = cap / static_cast<std::size_t>(s.block_threads);
  std::size_t blocks = (n + per_block - 1) / per_block;
  if (blocks > max_blocks) blocks = max_blocks;
  return blocks < 1 ? 1 : static_cast<int>(blocks);
}

int reduce6_grid(std::size_t n, const Shape& s) {
  return resolve_grid(n, static_cast<std::size_t>(s.block_threads) * s.items_per_thread, s);
}

// reduce6's block partials live in the workspace (one element per block) when there is more
// than one block; a single block writes the result straight to `out`.
template <class T>
std::size_t reduce6_workspace(std::size_t n, const Shape& s) {
  if (!accepts_reduce6(s)) return 0;
  const int grid = reduce6_grid(n, s);
  if (grid <= 1) return 0;
  const std::size_t bytes = static_cast<std::size_t>(grid) * sizeof(T);
  return (bytes + 255) / 256 * 256;
}
std::size_t no_workspace(std::size_t, const Shape&) { return 0; }


// Two passes, as the seed's reduce6 (which writes g_odata[blockIdx.x]): pass 1 writes one
// partial per block into the workspace, pass 2 (one block) reduces them into *out and zeroes
// them again, so the workspace is left as the caller gave it. Deterministic: the order of adds
// depends only on n and the shape.
template <class T>
void launch_reduce6(const void* in, std::size_t n, void* out, void* workspace, const Shape& s,
                    cudaStream_t stream) {
  require_shape(accepts_reduce6(s), "seed002/reduce6", s);
  const int grid = reduce6_grid(n, s);
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  with_pow2_block(s.block_threads, "seed002", [&](auto block) {
    constexpr int B = decltype(block)::value;
    if (grid == 1) {
      reduce6<T, B><<<1, B, 0, stream>>>(src, n, s.items_per_thread, dst, nullptr);
      check_launch("seed002/reduce6");
      return;
    }
    T* partials = static_cast<T*>(workspace);
    reduce6<T, B><<<grid, B, 0, stream>>>(src, n, s.items_per_thread, partials, nullptr);
    check_launch("seed002/reduce6 (block partials)");
    reduce6<T, B><<<1, B, 0, stream>>>(partials, static_cast<std::size_t>(grid), 1, dst,
                                       partials);
    check_launch("seed002/reduce6 (final block)");
  });
}

// The atomic rungs accumulate into *out, so it must start at 0: the launch zeroes it on the
// same stream (part of the rung's cost; the seed left this to its caller).
template <class T>
void zero_output(void* out, cudaStream_t stream, const char* what) {
  check_cuda(cudaMemsetAsync(out, 0, sizeof(T), stream), what);
}

template <class T>
void launch_reduce7(const void* in, std::size_t n, void* out, void*, const Shape& s,
                    cudaStream_t stream) {
  require_shape(accepts_warp_atomic(s), "seed002/reduce7", s);
  zero_output<T>(out, stream, "seed002/reduce7: zeroing the output");
  if (n == 0) return;
  const int grid = resolve_grid(n, static_cast<std::size_t>(s.block_threads), s);
  reduce7<T><<<grid, s.block_threads, 0, stream>>>(static_cast<const T*>(in), n,
                                                    static_cast<T*>(out));
  check_launch("seed002/reduce7");
}

template <class T>
void launch_reduce7_v1(const void* in, std::size_t n, void* out, void*, const Shape& s,
                       cudaStream_t stream) {
  require_shape(accepts_warp_atomic(s), "seed002/reduce7_v1", s);
  zero_output<T>(out, stream, "seed002/reduce7_v1: zeroing the output");
  if (n == 0) return;
  // Elements before the first 16-byte boundary (a T* is element-aligned, so 0..3 of them).
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  std::size_t head = ((16 - address % 16) % 16) / sizeof(T);
  if (head > n) head = n;
  const std::size_t nvec = (n - head) / 4;
  // One block per block_threads vectors (4 elements each); the head and tail need thread 0..2.
  const std::size_t work = nvec > 0 ? nvec : 1;
  const int grid = resolve_grid(work, static_cast<std::size_t>(s.block_threads), s);
  reduce7_v1<T><<<grid, s.block_threads, 0, stream>>>(static_cast<const T*>(in), n, head, nvec,
                                                       static_cast<T*>(out));
  check_launch("seed002/reduce7_v1");
}

template <class T>
void launch_reduce8(const void* in, std::size_t n, void* out, void*, const Shape& s,
                    cudaStream_t stream) {
  require_shape(accepts_warp_atomic(s), "seed002/reduce8", s);
  zero_output<T>(out, stream, "seed002/reduce8: zeroing the output");
  if (n == 0) return;
  const int grid = resolve_grid(n, static_cast<std::size_t>(s.block_threads), s);
  reduce8<T><<<grid, s.block_threads, 0, stream>>>(static_cast<const T*>(in), n,
                                                    static_cast<T*>(out));
  check_launch("seed002/reduce8");
}

constexpr int kBlocks[] = {32, 64, 128, 256, 512, 1024};
constexpr int kGrids[] = {0, 132, 264, 528, 1056, 2112};

// Every block size x grid size (36 shapes), with items_per_thread = `items`.
std::vector<Shape> block_grid_sweep(int items) {
  std::vector<Shape> sweep;
  for (int grid : kGrids)
    for (int block : kBlocks) sweep.push_back(Shape{block, grid, items});
  return sweep;
}

// reduce6: the 36 block x grid shapes at 2 elements per step, plus 256 threads with a derived
// grid at 1, 4 and 8 elements per step (39 shapes).
std::vector<Shape> reduce6_sweep() {
  std::vector<Shape> sweep = block_grid_sweep(2);
  for (int items : {1, 4, 8}) sweep.push_back(Shape{256, 0, items});
  return sweep;
}

Variant make(const char* name, const char* change, const char* shape_help, Element element,
             int rung, Shape seed_shape, std::vector<Shape> sweep, bool deterministic,
             bool (*accepts)(const Shape&), std::size_t (*workspace)(std::size_t, const Shape&),
             void (*launch)(const void*, std::size_t, void*, void*, const Shape&, cudaStream_t)) {
  Variant v;
  v.seed = "002";
  v.name = name;
  v.change = change;
  v.shape_help = shape_help;
  v.algorithm = Algorithm::reduce_sum;
  v.element = element;
  v.rung = rung;
  v.seed_shape = seed_shape;
  v.sweep = std::move(sweep);
  v.deterministic = deterministic;
  v.accepts = accepts;
  v.workspace_bytes = workspace;
  v.tile_elements = nullptr;
  v.launch = launch;
  return v;
}

constexpr const char* kReduce6Change =
    "reduce5 rewritten with cooperative groups (thread_block, block.sync()) and a grid-stride "
    "loop summing items_per_thread elements per thread per step before the unrolled "
    "shared-memory tree: fewer blocks and tree passes per element; block partials are reduced "
    "by a second one-block launch";
constexpr const char* kReduce6Help =
    "block_threads: power of two in [32, 1024] (compile-time unrolled tree); items_per_thread: "
    "1..64 coalesced elements per thread per grid-stride step; grid_blocks: any >= 1, 0 = "
    "ceil(n / (block_threads*items_per_thread)) capped at 2^18/block_threads; workspace: one "
    "partial per block when grid > 1 (left zeroed)";
constexpr const char* kReduce7Change =
    "drops shared memory, block barriers and the second launch: per-thread grid-stride sums, a "
    "register shfl_down warp reduction (tiled_partition<32>) and one atomicAdd per warp";
constexpr const char* kWarpAtomicHelp =
    "block_threads: any multiple of 32 in [32, 1024]; grid_blocks: any >= 1, 0 = "
    "ceil(n / block_threads) capped at 2^18/block_threads; items_per_thread unused; zeroes "
    "*out with cudaMemsetAsync before the kernel";
constexpr const char* kReduce7v1Change =
    "reduce7 with 16-byte float4/int4 loads (a quarter of the load instructions, more bytes in "
    "flight); scalar head up to the first 16-byte boundary and scalar tail make any n and any "
    "alignment correct";
constexpr const char* kReduce7v1Help =
    "block_threads: any multiple of 32 in [32, 1024]; grid_blocks: any >= 1, 0 = "
    "ceil(n/4 / block_threads) capped at 2^18/block_threads; one 4-element vector per thread "
    "per step, items_per_thread unused; zeroes *out before the kernel";
constexpr const char* kReduce8Change =
    "reduce7 (scalar loads) with the hand-written shuffle ladder replaced by cg::reduce(warp, "
    "sum, cg::plus) (a single redux.sync for int on sm_80+): same traffic, simpler and safer "
    "code";

}  // namespace
}  // namespace seed002

std::vector<Variant> seed002_variants() {
  using namespace seed002;
  const Shape reduce6_shape{256, 0, 2};  // reduce5/6's classic 256 threads, two loads per step
  const Shape atomic_shape{256, 0, 1};   // the text gives no launch configuration
  std::vector<Variant> v;
  v.push_back(make("reduce6", kReduce6Change, kReduce6Help, Element::i32, 0, reduce6_shape,
                   reduce6_sweep(), true, &accepts_reduce6, &reduce6_workspace<int>,
                   &launch_reduce6<int>));
  v.push_back(make("reduce6", kReduce6Change, kReduce6Help, Element::f32, 0, reduce6_shape,
                   reduce6_sweep(), true, &accepts_reduce6, &reduce6_workspace<float>,
                   &launch_reduce6<float>));
  // int32 atomics are associative and commutative (wrapping), so the i32 sums are exact and
  // repeatable; float atomics make the order of the per-warp adds vary from run to run.
  v.push_back(make("reduce7", kReduce7Change, kWarpAtomicHelp, Element::i32, 1, atomic_shape,
                   block_grid_sweep(1), true, &accepts_warp_atomic, &no_workspace,
                   &launch_reduce7<int>));
  v.push_back(make("reduce7", kReduce7Change, kWarpAtomicHelp, Element::f32, 1, atomic_shape,
                   block_grid_sweep(1), false, &accepts_warp_atomic, &no_workspace,
                   &launch_reduce7<float>));
  v.push_back(make("reduce7_v1", kReduce7v1Change, kReduce7v1Help, Element::i32, 2, atomic_shape,
                   block_grid_sweep(1), true, &accepts_warp_atomic, &no_workspace,
                   &launch_reduce7_v1<int>));
  v.push_back(make("reduce7_v1", kReduce7v1Change, kReduce7v1Help, Element::f32, 2, atomic_shape,
                   block_grid_sweep(1), false, &accepts_warp_atomic, &no_workspace,
                   &launch_reduce7_v1<float>));
  v.push_back(make("reduce8", kReduce8Change, kWarpAtomicHelp, Element::i32, 3, atomic_shape,
                   block_grid_sweep(1), true, &accepts_warp_atomic, &no_workspace,
                   &launch_reduce8<int>));
  v.push_back(make("reduce8", kReduce8Change, kWarpAtomicHelp, Element::f32, 3, atomic_shape,
                   block_grid_sweep(1), false, &accepts_warp_atomic, &no_workspace,
                   &launch_reduce8<float>));
  return v;
}

}  // namespace foldkit::ladder
