// Planning and launching the full-array reduction kernel. The plan is a plain value (grid,
// block, unroll) computed from n, the element size, the tuning, the SM count and the kernel's
// occupancy.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "foldkit/cuda/device/reduce_cluster_kernel.cuh"
#include "foldkit/cuda/device/reduce_full_kernel.cuh"
#include "foldkit/cuda/dispatch/programmatic_launch.cuh"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/tuning/reduce_tuning.hpp"

namespace foldkit::cuda::detail {

struct ReducePlan {
  int block_threads;
  int grid;              // blocks launched
  int unroll;
  std::int64_t wanted;   // blocks that would give every thread exactly one unrolled iteration
};

// Enough blocks that each thread has one full unrolled iteration of work, but never more than
// fit on the GPU at once (tuning's blocks per SM, capped by occupancy): small arrays get few
// blocks (often one, which skips the cross-block phase), large arrays a full, persistent grid.
inline ReducePlan plan_full_reduce(std::int64_t n, std::size_t element_bytes, tuning::ReduceTuning t, int sm_count,
                                   int resident_blocks_per_sm) {
  const std::int64_t lanes = static_cast<std::int64_t>(16 / element_bytes);
  const std::int64_t per_block = static_cast<std::int64_t>(t.block_threads) * t.unroll * lanes;
  const std::int64_t wanted = (n + per_block - 1) / per_block;
  const int per_sm = std::max(1, std::min({t.blocks_per_sm, resident_blocks_per_sm, tuning::kMaxBlocksPerSm}));
  const std::int64_t most = static_cast<std::int64_t>(sm_count) * per_sm;
  return ReducePlan{t.block_threads, static_cast<int>(std::clamp<std::int64_t>(wanted, 1, most)), t.unroll, wanted};
}

// Resident blocks per SM of reduce_full_kernel<kUnroll, Spec> at one block size on one device,
// asked of the runtime once per (instantiation, block size, device) and remembered. Keyed by
// the instantiation, not by the kernel's pointer type: kernels of one signature differ in
// registers; and by the device: devices of one process may differ in architecture.
template <int kUnroll, class Spec>
int resident_blocks_per_sm(int device, int block_threads) {
  static std::atomic<int> known[33][kMemoDevices] = {};
  return per_device_memo(known[block_threads / 32], device, [block_threads] {
    int blocks = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reduce_full_kernel<kUnroll, Spec>, block_threads, 0),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    if (blocks < 1) throw Error(Errc::invalid_argument, "reduce: block size does not fit on this GPU");
    return blocks;
  });
}

// Blocks one cluster of reduce_cluster_kernel<kUnroll, Spec> may hold on the current device
// (`device`): 16 with the non-portable size allowed (Hopper), else the portable 8. The
// attribute is set once per (instantiation, device): the runtime keeps a kernel's attributes
// per device, so a process that uses a second GPU sets it there too.
template <int kUnroll, class Spec>
int max_cluster_blocks(int device) {
  static std::atomic<int> known[kMemoDevices] = {};
  return per_device_memo(known, device, [] {
    if (cudaFuncSetAttribute(reduce_cluster_kernel<kUnroll, Spec>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) ==
        cudaSuccess)
      return tuning::kMaxClusterBlocks;
    (void)cudaGetLastError();
    return std::min(8, tuning::kMaxClusterBlocks);
  });
}

// Small grids run as one cluster (reduce_cluster_kernel.cuh); returns false (having launched
// nothing) when the plan does not fit in one, or the device refuses the cluster. Unrolls above
// 4 take the grid kernel: the cluster kernel spills registers there (8 bytes for f32 at 8), and
// the table gives small inputs smaller unrolls.
template <int kUnroll, class Spec>
bool try_launch_reduce_cluster(const typename Spec::input_type* d_in, std::int64_t n,
                               typename Spec::result_type* d_out, const Spec& spec, tuning::ReduceTuning t,
                               std::int64_t wanted_blocks, cudaStream_t stream, int device) {
  if constexpr (kUnroll > 4) {
    return false;
  } else {
    if (!t.use_clusters || wanted_blocks < 2) return false;
    const auto kernel = reduce_cluster_kernel<kUnroll, Spec>;
    const int most = max_cluster_blocks<kUnroll, Spec>(device);
    if (wanted_blocks > static_cast<std::int64_t>(most) * tuning::kClusterWaves) return false;
    const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>(wanted_blocks, most));
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(static_cast<unsigned>(t.block_threads));
    config.stream = stream;
    cudaLaunchAttribute attribute[2];
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = blocks;
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    attribute[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[1].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = t.programmatic_launch ? 2 : 1;
    const cudaError_t status = cudaLaunchKernelEx(&config, kernel, d_in, n, split_for_vectors(d_in, n), d_out, spec);
    if (status == cudaSuccess) return true;
    (void)cudaGetLastError();  // e.g. no GPC with room for the cluster: use the grid kernel
    return false;
  }
}

template <int kUnroll, class Spec>
void launch_reduce_full_unrolled(const typename Spec::input_type* d_in, std::int64_t n,
                                 typename Spec::result_type* d_out, Workspace ws, const Spec& spec,
                                 tuning::ReduceTuning t, cudaStream_t stream, DeviceFacts dev) {
  using Slot = FlaggedSlot<typename Spec::accum_type>;
  static_assert(sizeof(Slot) <= tuning::kPartialSlotBytes, "accumulator too large");
  const auto kernel = reduce_full_kernel<kUnroll, Spec>;
  const ReducePlan plan = plan_full_reduce(n, sizeof(typename Spec::input_type), t, dev.sm_count,
                                           resident_blocks_per_sm<kUnroll, Spec>(dev.device, t.block_threads));
  if (plan.grid > 1 && plan.grid == plan.wanted &&
      try_launch_reduce_cluster<kUnroll>(d_in, n, d_out, spec, t, plan.wanted, stream, dev.device))
    return;
  auto* bytes = static_cast<char*>(ws.ptr);
  auto* ticket = reinterpret_cast<unsigned int*>(bytes + kTicketOffset);
  auto* slots = reinterpret_cast<Slot*>(bytes + kPartialsOffset);
  check_cuda(launch_programmatic_if(t.programmatic_launch, kernel, dim3(static_cast<unsigned>(plan.grid)),
                                    dim3(static_cast<unsigned>(plan.block_threads)), stream, d_in, n,
                                    split_for_vectors(d_in, n), d_out, slots, ticket, spec),
             "launching reduce_full_kernel");
}

// Launches with the tuning's unroll if Unrolls::has(unroll): only those unrolls are compiled
// (TableUnrolls: the ones the tuning table uses for a family; FittingUnrolls: every unroll the
// family fits without spills, for the sweep). An unroll outside the set is an invalid_argument.
template <tuning::ReduceFamily kFamily>
struct TableUnrolls {
  static constexpr bool has(int u) { return tuning::table_uses_unroll(kFamily, u); }
};
template <tuning::ReduceFamily kFamily>
struct FittingUnrolls {
  static constexpr bool has(int u) { return tuning::unroll_fits(kFamily, u); }
};

template <int kOnly>
struct OnlyUnroll {
  static constexpr bool has(int u) { return u == kOnly; }
};

template <int kUnroll, class Unrolls, class Spec>
bool launch_reduce_full_if(const typename Spec::input_type* d_in, std::int64_t n, typename Spec::result_type* d_out,
                           Workspace ws, const Spec& spec, tuning::ReduceTuning t, cudaStream_t stream, DeviceFacts dev) {
  if constexpr (Unrolls::has(kUnroll)) {
    if (t.unroll != kUnroll) return false;
    launch_reduce_full_unrolled<kUnroll>(d_in, n, d_out, ws, spec, t, stream, dev);
    return true;
  } else {
    return false;
  }
}

// Launches reduce over [d_in, d_in + n) with tuning t. dev: the current device and its SM
// count, as validate_reduce_args returned them (the device is asked once per call).
template <class Unrolls, class Spec>
void launch_reduce_full(const typename Spec::input_type* d_in, std::int64_t n, typename Spec::result_type* d_out,
                        Workspace ws, const Spec& spec, tuning::ReduceTuning t, cudaStream_t stream, DeviceFacts dev) {
  if (t.block_threads < 32 || t.block_threads > 1024 || t.block_threads % 32 != 0)
    throw Error(Errc::invalid_argument, "reduce: block_threads must be a multiple of 32 in [32, 1024]");
  const bool launched = launch_reduce_full_if<1, Unrolls>(d_in, n, d_out, ws, spec, t, stream, dev) ||
                        launch_reduce_full_if<2, Unrolls>(d_in, n, d_out, ws, spec, t, stream, dev) ||
                        launch_reduce_full_if<4, Unrolls>(d_in, n, d_out, ws, spec, t, stream, dev) ||
                        launch_reduce_full_if<8, Unrolls>(d_in, n, d_out, ws, spec, t, stream, dev);
  if (!launched) throw Error(Errc::invalid_argument, "reduce: unroll factor not available");
}

}  // namespace foldkit::cuda::detail
