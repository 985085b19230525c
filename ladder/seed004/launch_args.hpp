// What every seed 004 launcher computes before its kernel: typed pointers, the tile count and
// the grid (dispatch.hpp's resolve_grid).
#pragma once

#include <cstddef>

#include "ladder/seed004/dispatch.hpp"

namespace foldkit::ladder::seed004 {

template <class T>
struct LaunchArgs {
  const T* in;
  T* out;
  std::size_t n;
  std::size_t tiles;  // ceil(n / tile): the last tile may be partial
  int grid;
};

template <class T>
LaunchArgs<T> launch_args(const void* in, std::size_t n, void* out, std::size_t tile,
                          const Shape& s) {
  const std::size_t tiles = (n + tile - 1) / tile;
  return LaunchArgs<T>{static_cast<const T*>(in), static_cast<T*>(out), n, tiles,
                       resolve_grid(tiles, s)};
}

}  // namespace foldkit::ladder::seed004
