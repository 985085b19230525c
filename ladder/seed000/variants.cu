// Seed 000's ladder ("CUDA高性能计算经典问题（一）—— 归约"): the launchers, shape rules and
// registry entries of its nine rungs. The kernels are in kernels_two_pass.cuh (rungs 0-4) and
// kernels_unrolled.cuh (rungs 5-8).
//
// Shapes: block_threads is the block size; grid_blocks the number of blocks of the first (or
// only) pass, 0 = derived: ceil(n / block_threads) capped at the seed's tuned 1024 blocks (at
// least 1). items_per_thread is unused. The two-pass rungs run the same kernel a second time as
// one block of block_threads threads over the grid's partials (the seed's ReduceByTwoPass); when
// the grid is a single block, its one partial is the answer and the second launch is skipped.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "ladder/common.cuh"
#include "ladder/seed000/kernels_two_pass.cuh"
#include "ladder/seed000/kernels_unrolled.cuh"
#include "ladder/variant.hpp"

namespace foldkit::ladder {
namespace {

using namespace seed000;

using LaunchFn = void (*)(const void*, std::size_t, void*, void*, const Shape&, cudaStream_t);

constexpr int kSeedBlocks = 1024;  // the seed's tuned block_num (and thread_num_per_block)
constexpr std::size_t kAlign = 256;

constexpr std::size_t align_up(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// The first pass's grid: the shape's, or ceil(n / block) capped at kSeedBlocks, at least 1.
int grid_for(std::size_t n, const Shape& s) {
  if (s.grid_blocks > 0) return s.grid_blocks;
  const std::size_t block = static_cast<std::size_t>(std::max(s.block_threads, 1));
  return static_cast<int>(std::clamp<std::size_t>((n + block - 1) / block, 1, kSeedBlocks));
}

// --- accepts() -------------------------------------------------------------------------------
// Serial always runs <<<1, 1>>>: it uses no Shape field, so (as variant.hpp says) it accepts
// every shape and ignores it.
bool accepts_serial(const Shape&) { return true; }
// Per-thread loops and a serial (or atomic) block sum: correct for any block size.
bool accepts_any_block(const Shape& s) {
  return s.block_threads >= 1 && s.block_threads <= 1024 && s.grid_blocks >= 0;
}
// The halving trees: power-of-two blocks of 32..1024 threads (the warp tail needs a full warp).
bool accepts_tree(const Shape& s) {
  return s.block_threads >= 32 && s.block_threads <= 1024 && is_power_of_two(s.block_threads) &&
         s.grid_blocks >= 0;
}

// --- workspace_bytes() -----------------------------------------------------------------------
std::size_t ws_none(std::size_t, const Shape&) { return 0; }
// One partial per first-pass block (4-byte elements), none when the grid is one block.
std::size_t ws_two_pass(std::size_t n, const Shape& s) {
  const int grid = grid_for(n, s);
  return grid > 1 ? align_up(static_cast<std::size_t>(grid) * 4) : 0;
}
// SinglePassMerged: the ticket in the first 256 bytes, then one partial per block.
std::size_t ws_merged(std::size_t n, const Shape& s) {
  return kAlign + align_up(static_cast<std::size_t>(grid_for(n, s)) * 4);
}


// --- launchers -------------------------------------------------------------------------------
template <class T>
using PassKernel = void (*)(const T*, T*, std::size_t);

// The seed's ReduceByTwoPass: `kernel` over the input into per-block partials in the
// workspace, then `kernel` again as one block over the partials into out. Stream-ordered.
template <class T>
void two_pass(PassKernel<T> kernel, std::size_t shared_bytes, const char* name, const void* in, std::size_t n,
              void* out, void* workspace, const Shape& s, cudaStream_t stream) {
  const int block = s.block_threads, grid = grid_for(n, s);
  const T* input = static_cast<const T*>(in);
  T* result = static_cast<T*>(out);
  if (grid == 1) {
    kernel<<<1, block, shared_bytes, stream>>>(input, result, n);
    check_launch(name);
    return;
  }
  T* part_sum = static_cast<T*>(workspace);
  kernel<<<grid, block, shared_bytes, stream>>>(input, part_sum, n);
  check_launch(name);
  kernel<<<1, block, shared_bytes, stream>>>(part_sum, result, static_cast<std::size_t>(grid));
  check_launch(name);
}

template <class T>
void launch_serial(const void* in, std::size_t n, void* out, void*, const Shape&, cudaStream_t stream) {
  SerialKernel<T><<<1, 1, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), n);
  check_launch("seed000/Serial");
}

// Two-pass rungs with a run-time block size and blockDim.x elements of dynamic shared memory.
template <class T>
void launch_dynamic(PassKernel<T> kernel, bool accepted, const char* name, const void* in, std::size_t n, void* out,
                    void* ws, const Shape& s, cudaStream_t stream) {
  require_shape(accepted, name, s);
  two_pass<T>(kernel, static_cast<std::size_t>(s.block_threads) * sizeof(T), name, in, n, out, ws, s, stream);
}
template <class T>
void launch_simple(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  launch_dynamic<T>(&TwoPassSimpleKernel<T>, accepts_any_block(s), "seed000/TwoPassSimple", in, n, out, ws, s, st);
}
template <class T>
void launch_interleaved(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  launch_dynamic<T>(&TwoPassInterleavedKernel<T>, accepts_any_block(s), "seed000/TwoPassInterleaved", in, n, out,
                    ws, s, st);
}
template <class T>
void launch_shared_optimized(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  launch_dynamic<T>(&TwoPassSharedOptimizedKernel<T>, accepts_tree(s), "seed000/TwoPassSharedOptimized", in, n, out,
                    ws, s, st);
}
template <class T>
void launch_warp_sync(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  launch_dynamic<T>(&TwoPassWarpSyncKernel<T>, accepts_tree(s), "seed000/TwoPassWarpSync", in, n, out, ws, s, st);
}

template <class T>
void launch_unroll(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  require_shape(accepts_tree(s), "seed000/TwoPassUnroll", s);
  with_pow2_block(s.block_threads, "seed000", [&](auto b) {
    two_pass<T>(&TwoPassUnrollKernel<T, decltype(b)::value>, 0, "seed000/TwoPassUnroll", in, n, out, ws, s, st);
  });
}

template <class T>
void launch_warp_shuffle(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  require_shape(accepts_tree(s), "seed000/WarpShuffle", s);
  with_pow2_block(s.block_threads, "seed000", [&](auto b) {
    two_pass<T>(&WarpShuffleKernel<T, decltype(b)::value>, 0, "seed000/WarpShuffle", in, n, out, ws, s, st);
  });
}

template <class T>
void launch_merged(const void* in, std::size_t n, void* out, void* ws, const Shape& s, cudaStream_t st) {
  require_shape(accepts_tree(s), "seed000/SinglePassMerged", s);
  const int grid = grid_for(n, s);
  unsigned* ticket = static_cast<unsigned*>(ws);
  T* part_sum = reinterpret_cast<T*>(static_cast<char*>(ws) + kAlign);
  with_pow2_block(s.block_threads, "seed000", [&](auto b) {
    constexpr int B = decltype(b)::value;
    SinglePassMergedKernel<T, B><<<grid, B, 0, st>>>(static_cast<const T*>(in), part_sum, ticket,
                                                      static_cast<T*>(out), n);
  });
  check_launch("seed000/SinglePassMerged");
}

template <class T>
void launch_atomic(const void* in, std::size_t n, void* out, void*, const Shape& s, cudaStream_t st) {
  require_shape(accepts_any_block(s), "seed000/SinglePassAtomic", s);
  // The atomics add onto the output, so it starts at 0 (all-zero bits: 0 and 0.0f). Enqueued
  // here, on the same stream, as part of the rung's cost.
  check_cuda(cudaMemsetAsync(out, 0, sizeof(T), st), "seed000/SinglePassAtomic: cudaMemsetAsync");
  SinglePassAtomicKernel<T><<<grid_for(n, s), s.block_threads, 0, st>>>(static_cast<const T*>(in),
                                                                       static_cast<T*>(out), n);
  check_launch("seed000/SinglePassAtomic");
}

// --- registry --------------------------------------------------------------------------------
// Power-of-two blocks 32..1024 x first-pass grids (0 = derived; 132 = one block per H100 SM).
std::vector<Shape> block_grid_sweep() {
  std::vector<Shape> sweep;
  for (int block = 32; block <= 1024; block *= 2)
    for (int grid : {0, 132, 264, 528, 1056, 2112}) sweep.push_back(Shape{block, grid, 1});
  return sweep;
}

struct Rung {
  const char* name;
  const char* change;
  const char* shape_help;
  bool (*accepts)(const Shape&);
  std::size_t (*workspace_bytes)(std::size_t, const Shape&);
  LaunchFn launch_i32, launch_f32;
  bool f32_deterministic;
};

constexpr const char* kTwoPassHelp =
    "block_threads = block size; grid_blocks = first-pass blocks (0: ceil(n / block) capped at 1024, the "
    "seed's count); second pass: one block over the partials";

}  // namespace

std::vector<Variant> seed000_variants() {
  const Rung rungs[] = {
      {"Serial", "baseline: a single GPU thread adds all n elements in order (no parallelism at all)",
       "ignores the shape: always one block of one thread", accepts_serial, ws_none, launch_serial<int>,
       launch_serial<float>, true},
      {"TwoPassSimple",
       "two passes (blocks write partials, one block adds them); each thread sums a contiguous range, so a "
       "warp's loads are a range apart and do not coalesce",
       kTwoPassHelp, accepts_any_block, ws_two_pass, launch_simple<int>, launch_simple<float>, true},
      {"TwoPassInterleaved",
       "threads read grid-strided (interleaved) elements so a warp's loads coalesce; thread 0 still adds the "
       "block's shared-memory sums serially",
       kTwoPassHelp, accepts_any_block, ws_two_pass, launch_interleaved<int>, launch_interleaved<float>, true},
      {"TwoPassSharedOptimized",
       "thread 0's serial shared-memory loop becomes a conflict-free halving tree: log2(block) steps instead "
       "of block adds",
       kTwoPassHelp, accepts_tree, ws_two_pass, launch_shared_optimized<int>, launch_shared_optimized<float>,
       true},
      {"TwoPassWarpSync",
       "the tree's last warp runs warp-synchronously (__syncwarp, no __syncthreads): five fewer block-wide "
       "barriers",
       kTwoPassHelp, accepts_tree, ws_two_pass, launch_warp_sync<int>, launch_warp_sync<float>, true},
      {"TwoPassUnroll",
       "block size as a template parameter: the tree is fully unrolled (no loop counter or per-step branch)",
       kTwoPassHelp, accepts_tree, ws_two_pass, launch_unroll<int>, launch_unroll<float>, true},
      {"SinglePassMerged",
       "both passes in one launch: blocks take a ticket (in the workspace) and the last block adds the "
       "partials, saving the second launch",
       "block_threads = block size; grid_blocks = blocks (0: ceil(n / block) capped at 1024); the last block "
       "to finish adds the partials",
       accepts_tree, ws_merged, launch_merged<int>, launch_merged<float>, true},
      {"SinglePassAtomic",
       "no partials or tree: every thread atomicAdds its grid-stride sum into the output (one contended "
       "address is the bottleneck); output zeroed by a memset on the stream",
       "block_threads = block size; grid_blocks = blocks (0: ceil(n / block) capped at 1024)", accepts_any_block,
       ws_none, launch_atomic<int>, launch_atomic<float>, false},
      {"WarpShuffle",
       "TwoPassUnroll with the last warp reduced by __shfl_xor_sync in registers instead of shared memory",
       kTwoPassHelp, accepts_tree, ws_two_pass, launch_warp_shuffle<int>, launch_warp_shuffle<float>, true},
  };

  std::vector<Variant> variants;
  int rung_number = 0;
  for (const Rung& r : rungs) {
    Variant v;
    v.seed = "000";
    v.name = r.name;
    v.change = r.change;
    v.shape_help = r.shape_help;
    v.algorithm = Algorithm::reduce_sum;
    v.rung = rung_number++;
    const bool serial = r.accepts == accepts_serial;
    v.seed_shape = serial ? Shape{1, 1, 1} : Shape{kSeedBlocks, kSeedBlocks, 1};  // the seed's 1024 x 1024
    v.sweep = serial ? std::vector<Shape>{Shape{1, 1, 1}} : block_grid_sweep();
    v.accepts = r.accepts;
    v.workspace_bytes = r.workspace_bytes;
    v.element = Element::i32;
    v.deterministic = true;  // int32 adds commute exactly, atomics included
    v.launch = r.launch_i32;
    variants.push_back(v);
    v.element = Element::f32;
    v.deterministic = r.f32_deterministic;
    v.launch = r.launch_f32;
    variants.push_back(v);
  }
  return variants;
}

}  // namespace foldkit::ladder
