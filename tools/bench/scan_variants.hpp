// `foldkit-bench scan --sweep`: alternative launch policies of foldkit's whole-array scan (and the
// previous, non-persistent scan kernel), timed beside the library's choice so that one GPU run
// shows which policy to keep (tuning/scan_tuning.hpp). Host-only interface; the kernels are
// instantiated in scan_variants.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "foldkit/dtype.hpp"

namespace fkbench {

struct ScanVariant {
  std::string name;  // e.g. "tiled 256 x 24 (24 KiB), >= 7/SM"
  // Inclusive sum of n elements (foldkit's types: i32 -> int64), into out, using `workspace`
  // (scan_variant_workspace_bytes, zeroed once). Launches only; no synchronisation.
  void (*run)(const void* in, void* out, std::int64_t n, void* workspace, cudaStream_t s);
};

// The variants for inclusive sums of dtype (f32 and i32; empty for any other).
std::vector<ScanVariant> scan_variants(foldkit::DType dtype);
// Workspace bytes every variant of scan_variants(dtype) can use for n elements.
std::size_t scan_variant_workspace_bytes(foldkit::DType dtype, std::int64_t n);

}  // namespace fkbench
