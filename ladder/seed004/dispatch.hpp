// Seed 004's host side shared by its launch files: which shapes each kernel accepts, tile sizes,
// the grid, the run-time -> template dispatch, and the launchers' declarations.
#pragma once

#include <cuda_runtime_api.h>

#include <climits>
#include <cstddef>
#include <type_traits>

#include "ladder/common.cuh"
#include "ladder/variant.hpp"

namespace foldkit::ladder::seed004 {

// The seed templates every kernel on threadsPerBlock (its shared arrays and unrolled steps need
// it at compile time): the ladder instantiates the powers of two 32..1024 and picks at run time.
inline bool accepts_block(const Shape& s) {
  return s.block_threads >= 32 && s.block_threads <= 1024 && is_power_of_two(s.block_threads) &&
         s.grid_blocks >= 0;
}
// kernel_4 also templates the batch (its per-thread register array): 1, 2, 4, 8 or 16.
inline bool accepts_coarsened(const Shape& s) {
  return accepts_block(s) && s.items_per_thread >= 1 && s.items_per_thread <= 16 &&
         is_power_of_two(s.items_per_thread);
}

inline std::size_t tile_of_block(const Shape& s) {
  return static_cast<std::size_t>(s.block_threads);
}
inline std::size_t tile_of_coarsened(const Shape& s) {
  return static_cast<std::size_t>(s.block_threads) * static_cast<std::size_t>(s.items_per_thread);
}

inline std::size_t no_workspace(std::size_t, const Shape&) { return 0; }

// grid_blocks == 0: one block per tile, as the seed launched (capped at CUDA's 2^31 - 1 blocks;
// the kernels' tile loop covers any remainder). Any explicit grid >= 1 is taken as given.
inline int resolve_grid(std::size_t tiles, const Shape& s) {
  if (s.grid_blocks > 0) return s.grid_blocks;
  return tiles > static_cast<std::size_t>(INT_MAX) ? INT_MAX : static_cast<int>(tiles);
}


// Runs f(std::integral_constant<int, B>{}) for B == batch (1, 2, 4, 8 or 16).
template <class F>
void with_batch(int batch, F&& f) {
  switch (batch) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 8: f(std::integral_constant<int, 8>{}); break;
    case 16: f(std::integral_constant<int, 16>{}); break;
    default: break;  // unreachable: launch_kernel_4 checks accepts_coarsened first
  }
}

// Launchers (Variant::launch), T = int or float; defined in launch_smem.cu (kernel_0..2) and
// launch_shuffle.cu (kernel_3, kernel_4).
template <class T>
void launch_kernel_0(const void* in, std::size_t n, void* out, void* workspace, const Shape& s,
                     cudaStream_t stream);
template <class T>
void launch_kernel_1(const void* in, std::size_t n, void* out, void* workspace, const Shape& s,
                     cudaStream_t stream);
template <class T>
void launch_kernel_2(const void* in, std::size_t n, void* out, void* workspace, const Shape& s,
                     cudaStream_t stream);
template <class T>
void launch_kernel_3(const void* in, std::size_t n, void* out, void* workspace, const Shape& s,
                     cudaStream_t stream);
template <class T>
void launch_kernel_4(const void* in, std::size_t n, void* out, void* workspace, const Shape& s,
                     cudaStream_t stream);

}  // namespace foldkit::ladder::seed004
