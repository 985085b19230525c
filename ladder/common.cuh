// Small helpers every ladder rung shares: launch checks, shape validation, wrapping int32 adds
// and the element traits the rungs are templated on. Device code here is rung-neutral; anything
// that changes what a rung teaches belongs in that rung's own file.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "foldkit/error.hpp"
#include "ladder/variant.hpp"

namespace foldkit::ladder {

// Throws Errc::cuda_error naming `what` when the last launch failed.
inline void check_launch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw Error(Errc::cuda_error, std::string(what) + ": " + cudaGetErrorString(status));
}
inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error(Errc::cuda_error, std::string(what) + ": " + cudaGetErrorString(status));
}

// Throws Errc::invalid_argument with the variant's name when a shape is not accepted.
inline void require_shape(bool accepted, const char* variant, const Shape& s) {
  if (!accepted)
    throw Error(Errc::invalid_argument, std::string(variant) + ": shape not accepted (block_threads=" +
                                            std::to_string(s.block_threads) + ", grid_blocks=" +
                                            std::to_string(s.grid_blocks) + ", items_per_thread=" +
                                            std::to_string(s.items_per_thread) + ")");
}

constexpr bool is_power_of_two(long long v) { return v > 0 && (v & (v - 1)) == 0; }

// Addition as the ladder defines it: float adds as float; int32 wraps modulo 2^32 (computed in
// unsigned, so overflow is defined behaviour in C++ and the same on host and device).
template <class T>
__host__ __device__ __forceinline__ T wrap_add(T a, T b) {
  if constexpr (std::is_same_v<T, int>)
    return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
  else
    return a + b;
}

// Calls f(std::integral_constant<int, B>{}) for B == block, a power of two in [32, 1024]: the
// rungs whose tree is unrolled at compile time dispatch their run-time block size through this.
// Throws Errc::invalid_argument naming `who` for any other value (accepts() rejects those first).
template <class F>
void with_pow2_block(int block, const char* who, F&& f) {
  switch (block) {
    case 32: f(std::integral_constant<int, 32>{}); break;
    case 64: f(std::integral_constant<int, 64>{}); break;
    case 128: f(std::integral_constant<int, 128>{}); break;
    case 256: f(std::integral_constant<int, 256>{}); break;
    case 512: f(std::integral_constant<int, 512>{}); break;
    case 1024: f(std::integral_constant<int, 1024>{}); break;
    default: throw Error(Errc::invalid_argument, std::string(who) + ": no kernel for block size " + std::to_string(block));
  }
}

}  // namespace foldkit::ladder
