// The full-array reduction for small grids (up to 16 blocks): one thread-block cluster.
//
// Each block reduces its share exactly as reduce_full_kernel does; then the blocks exchange
// their partials through distributed shared memory behind one hardware cluster barrier, and
// block rank 0 combines them in rank order. Nothing crosses L2 except the input and the
// result, which removes the global flag-slot round trips from the critical path of
// mid-sized reductions (where that tail is a large part of the time). Needs sm_90.
#pragma once

#include <cooperative_groups.h>

#include "foldkit/cuda/device/reduce_full_kernel.cuh"

namespace foldkit::cuda {

template <int kUnroll, class Spec>
__global__ void __launch_bounds__(1024)
    reduce_cluster_kernel(const typename Spec::input_type* __restrict__ in, std::int64_t n, ReduceSplit split,
                          typename Spec::result_type* __restrict__ out, Spec spec) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  using Acc = typename Spec::accum_type;
  __shared__ BlockReduceStorage<Acc> storage;
  __shared__ Acc block_result;

  wait_for_prior_grid();
  const Acc acc = reduce_block_share<kUnroll>(in, n, split, spec, storage);
  allow_next_grid();

  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) block_result = acc;
  cluster.sync();  // release this block's partial, acquire everyone else's
  if (cluster.block_rank() == 0 && threadIdx.x < 32) {
    const unsigned blocks = cluster.num_blocks();
    Acc v = threadIdx.x < blocks ? *cluster.map_shared_rank(&block_result, threadIdx.x) : spec.identity();
    v = warp_reduce(v, spec.combine);
    if (threadIdx.x == 0) *out = spec.finalize(v, n, in);
  }
  cluster.sync();  // no block may exit (freeing its shared memory) before rank 0 has read it
#endif
}

}  // namespace foldkit::cuda
