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

}  // namespace foldkit::ladder
