// The reduction's occupancy memo (resident_blocks_per_sm, include/foldkit/cuda/dispatch/
// reduce_launch.cuh) answers per kernel (issue #21, item 9). Kernels of one signature (the same
// Spec at different unrolls) differ in registers and so in resident blocks; a memo keyed by the
// kernel's function-pointer type would hand the second kernel the first one's grid cap.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <string>
#include <type_traits>

#include "foldkit/cuda/device/reduce_spec.cuh"
#include "foldkit/cuda/dispatch/reduce_launch.cuh"
#include "support/cuda_backend.hpp"

namespace foldkit::test {
namespace {

using CudaOccupancyMemo = CudaTest;

template <int kUnroll, class Spec> int asked_directly(int block_threads) {
  int blocks = 0;
  FOLDKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, cuda::reduce_full_kernel<kUnroll, Spec>, block_threads, 0));
  return blocks;
}

// For each block size: the memo's answer for unroll 1, then for unroll 8 (same signature), each
// against the runtime asked directly. The test insists that the two kernels differ at some block
// size on this GPU; otherwise it could not tell a shared slot from per-kernel ones.
template <class Spec> int memo_is_per_kernel(const char* name) {
  static_assert(std::is_same_v<decltype(&cuda::reduce_full_kernel<1, Spec>), decltype(&cuda::reduce_full_kernel<8, Spec>)>,
                "the two kernels share a signature");
  int device = 0;
  FOLDKIT_CUDA_CHECK(cudaGetDevice(&device));
  int differing = 0;
  for (int threads = 32; threads <= 1024; threads += 32) {
    const int direct1 = asked_directly<1, Spec>(threads), direct8 = asked_directly<8, Spec>(threads);
    differing += direct1 != direct8;
    EXPECT_EQ((cuda::detail::resident_blocks_per_sm<1, Spec>(device, threads)), direct1)
        << name << ", unroll 1, " << threads << " threads";
    EXPECT_EQ((cuda::detail::resident_blocks_per_sm<8, Spec>(device, threads)), direct8)
        << name << ", unroll 8, " << threads << " threads";
  }
  return differing;
}

TEST_F(CudaOccupancyMemo, EachKernelOfOneSignatureGetsItsOwnAnswer) {
  const int differing = memo_is_per_kernel<cuda::BuiltinReduceSpec<ReduceOp::sum, double>>("sum f64") +
                        memo_is_per_kernel<cuda::BuiltinReduceSpec<ReduceOp::sum, float>>("sum f32");
  EXPECT_GT(differing, 0) << "unrolls 1 and 8 have the same occupancy at every block size here, so this GPU "
                          << "cannot tell a shared memo slot from per-kernel ones";
}

}  // namespace
}  // namespace foldkit::test
