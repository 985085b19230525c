// Seed 004's ladder (../shared/seeds/004, "making prefix sum really fast"): the blocked
// inclusive scan kernel_0 -> kernel_4, each on int32 (the seed's type) and float32, as ladder
// variants (ladder/variant.hpp). Kernels: kernels.cuh, block_scan.cuh; launchers:
// launch_smem.cu, launch_shuffle.cu; shapes and dispatch: dispatch.hpp.
#include <utility>
#include <vector>

#include "ladder/seed004/dispatch.hpp"

namespace foldkit::ladder {
namespace seed004 {
namespace {

using LaunchFn = void (*)(const void*, std::size_t, void*, void*, const Shape&, cudaStream_t);

constexpr int kBlocks[] = {32, 64, 128, 256, 512, 1024};

// kernel_0..3: every block size, with one tile per block (grid 0, the seed's launch) and with
// grids of 528, 1056 and 2112 blocks walking the tiles (24 shapes).
std::vector<Shape> block_sweep() {
  std::vector<Shape> sweep;
  for (int grid : {0, 528, 1056, 2112})
    for (int block : kBlocks) sweep.push_back(Shape{block, grid, 1});
  return sweep;
}

// kernel_4: every block size x batch 1, 2, 4, 8, 16, one tile per block (30 shapes).
std::vector<Shape> coarsened_sweep() {
  std::vector<Shape> sweep;
  for (int batch : {1, 2, 4, 8, 16})
    for (int block : kBlocks) sweep.push_back(Shape{block, 0, batch});
  return sweep;
}

struct Rung {
  const char* name;
  const char* change;
  const char* shape_help;
  Shape seed_shape;
  bool coarsened;  // kernel_4: items_per_thread is the batch
  LaunchFn launch_i32;
  LaunchFn launch_f32;
};

constexpr const char* kBlockHelp =
    "block_threads: power of two in [32, 1024] (template instantiations), tile = block_threads "
    "elements; grid_blocks: any >= 1 (blocks loop over tiles), 0 = ceil(n / tile), one tile "
    "per block as the seed; items_per_thread unused";
constexpr const char* kCoarsenedHelp =
    "block_threads: power of two in [32, 1024]; items_per_thread: the batch, 1, 2, 4, 8 or 16 "
    "consecutive elements per thread; tile = block_threads * batch elements; grid_blocks: any "
    ">= 1 (blocks loop over tiles), 0 = ceil(n / tile), one tile per block as the seed";

// The seed's text gives no launch configuration; its linked repository's kernels use 512
// threads (kernel_0, kernel_1), 256 (kernel_2, kernel_3) and 128 threads x batch 4 (kernel_4).
const Rung kRungs[] = {
    {"kernel_0",
     "baseline: Hillis-Steele scan of each block-sized tile in place in global memory "
     "(log2(block) steps of read, barrier, write, barrier); bound by global/L2 traffic",
     kBlockHelp, Shape{512, 0, 1}, false, &launch_kernel_0<int>, &launch_kernel_0<float>},
    {"kernel_1",
     "the same steps on a shared-memory copy of the tile: one global read and write per "
     "element instead of two global accesses per element per step",
     kBlockHelp, Shape{512, 0, 1}, false, &launch_kernel_1<int>, &launch_kernel_1<float>},
    {"kernel_2",
     "double-buffered shared memory: each step reads one buffer and writes the other, one "
     "barrier per step instead of two",
     kBlockHelp, Shape{256, 0, 1}, false, &launch_kernel_2<int>, &launch_kernel_2<float>},
    {"kernel_3",
     "warp-shuffle block scan (__shfl_up_sync per warp, one warp scans the warp totals): "
     "registers instead of log2(block) shared-memory steps, a few barriers per tile",
     kBlockHelp, Shape{256, 0, 1}, false, &launch_kernel_3<int>, &launch_kernel_3<float>},
    {"kernel_4",
     "thread coarsening: each thread scans a batch of consecutive elements in registers and the "
     "block scan runs once per batch, amortising its shuffles and barriers",
     kCoarsenedHelp, Shape{128, 0, 4}, true, &launch_kernel_4<int>, &launch_kernel_4<float>},
};

Variant make(const Rung& r, int rung, Element element) {
  Variant v;
  v.seed = "004";
  v.name = r.name;
  v.change = r.change;
  v.shape_help = r.shape_help;
  v.algorithm = Algorithm::blocked_inclusive_scan;
  v.element = element;
  v.rung = rung;
  v.seed_shape = r.seed_shape;
  v.sweep = r.coarsened ? coarsened_sweep() : block_sweep();
  v.deterministic = true;  // no atomics: the order of adds depends only on n and the shape
  v.accepts = r.coarsened ? &accepts_coarsened : &accepts_block;
  v.workspace_bytes = &no_workspace;
  v.tile_elements = r.coarsened ? &tile_of_coarsened : &tile_of_block;
  v.launch = element == Element::i32 ? r.launch_i32 : r.launch_f32;
  return v;
}

}  // namespace
}  // namespace seed004

std::vector<Variant> seed004_variants() {
  std::vector<Variant> v;
  int rung = 0;
  for (const seed004::Rung& r : seed004::kRungs) {
    v.push_back(seed004::make(r, rung, Element::i32));
    v.push_back(seed004::make(r, rung, Element::f32));
    ++rung;
  }
  return v;
}

}  // namespace foldkit::ladder
