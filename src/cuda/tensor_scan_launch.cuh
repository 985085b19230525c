// The CUDA tensor scans' tile kernel for the built-in ops as the host dispatch (tensor_scan.cu)
// sees it: the launcher, defined in tensor_scan_kernel.cuh and instantiated per dtype in
// tensor_scan_<dtypes>.cu (4 ops each). Its parameter, TileArgs: foldkit/cuda/device/tensor_scan_args.hpp.
#pragma once

#include <cuda_runtime_api.h>

#include "foldkit/cuda/device/tensor_scan_args.hpp"
#include "foldkit/ops.hpp"

namespace foldkit::cuda::tensor_scan {

// Launches the kernel for (Op, T) on `stream` (device: the current one, for per-device memos).
// Throws Error(cuda_error) when the launch fails.
template <ReduceOp Op, class T>
void launch_tiles(const TileArgs& args, cudaStream_t stream, int device);

}  // namespace foldkit::cuda::tensor_scan
