// What the header-only user-functor tensor scans (foldkit/cuda/tensor_scan_custom.cuh) take from
// the library (src/cuda/tensor_scan.cu): the checks, the plan, the choice between the core's
// blocked scan and the tile kernel, and the tile kernel's parameter, as the built-in tensor scans
// get them. Internal (namespace detail), installed because that header needs it; the planner and
// the geometry stay compiled once, in the library, whatever functors a program uses.
#pragma once

#include <cstddef>
#include <cstdint>

#include "foldkit/cuda/device/tensor_scan_args.hpp"
#include "foldkit/cuda/reduce.hpp"  // Workspace
#include "foldkit/dtype.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit::cuda::detail {

// A checked call.
struct TensorScanSetup {
  bool empty = true;    // no element: nothing to launch
  bool blocked = false;  // rows-contiguous lines of a 4- or 8-byte T: the core's blocked custom
                         // scan (foldkit/cuda/scan_custom.cuh) of numel elements in blocks of len
  std::int64_t numel = 0, len = 1;
  tensor_scan::TileArgs tiles;   // otherwise: the tile kernel's parameter, all but init_bits and header
  std::size_t state_bytes = 0;   // the tiles' look-back state (0: none, no workspace needed)
  int device = -1;               // the current device
};

// Every check the built-in tensor scans make (views, axis, output shape and strides, overlap,
// memory of the current device, alignment, an explicit workspace (ws non-null) against
// tensor_scan_workspace_bytes()), for a functor over `dtype` whose output is of that dtype too
// (the input's and the output's dtype must both be `dtype`), then the plan's launch: the core's
// blocked scan for rows-contiguous lines of 4- or 8-byte elements, else the tile kernel with the
// geometry the built-in ops of that element size get for an accumulator as wide as the element.
// Throws as the built-in tensor scans do.
TensorScanSetup prepare_tensor_scan_custom(DType dtype, const TensorView& in, int axis, const TensorView& out,
                                           bool exclusive, const Workspace* ws);

}  // namespace foldkit::cuda::detail
