// The benchmark's input values, identical on host (CPU suite) and device (GPU fill kernel):
// a hash of (seed, index) mapped to a non-zero value whose sums never wrap or overflow.
#pragma once

#include <cstdint>
#include <type_traits>

#include "foldkit/dtype.hpp"

namespace foldkit_bench {

// A 64-bit finaliser (xor-shift-multiply rounds): consecutive indices give unrelated bits.
FOLDKIT_HD std::uint64_t hash64(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  x ^= x >> 33;
  return x;
}

template <class T>
FOLDKIT_HD T value_from_hash(std::uint64_t h) {
  if constexpr (std::is_same_v<T, double>) {
    return 0.5 + static_cast<double>(h >> 11) * 0x1.0p-53;  // [0.5, 1.5)
  } else if constexpr (std::is_same_v<T, float> || foldkit::is_16bit_float_v<T>) {
    const float f = 0.5f + static_cast<float>(h >> 40) * 0x1.0p-24f;  // [0.5, 1.5)
    return T(f);
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    const std::int32_t v = static_cast<std::int32_t>(h >> 43) - (1 << 20);  // [-2^20, 2^20)
    return v != 0 ? v : 1;
  } else if constexpr (std::is_same_v<T, std::uint32_t>) {
    return static_cast<std::uint32_t>(h >> 40) + 1u;  // [1, 2^24]
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    const std::int64_t v = static_cast<std::int64_t>(h >> 30) - (std::int64_t{1} << 33);  // [-2^33, 2^33)
    return v != 0 ? v : 1;
  } else {
    static_assert(std::is_same_v<T, std::uint64_t>);
    return (h >> 31) + 1u;  // [1, 2^33]
  }
}

}  // namespace foldkit_bench
