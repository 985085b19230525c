// Launches a kernel with programmatic stream serialization (Hopper PDL: its launch overlaps the
// previous kernel's end in the stream; the kernel waits for that grid before touching memory,
// device/grid_dependency.cuh), as the full-array reduction launches.
#pragma once

#include <cuda_runtime_api.h>

namespace foldkit::cuda {

// kernel<<<grid, block, 0, stream>>>(args...), programmatic. Launch errors are left for
// cudaGetLastError, as every launch here.
template <class... Params, class... Args>
void launch_programmatic(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, const Args&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  (void)cudaLaunchKernelEx(&config, kernel, args...);
}

}  // namespace foldkit::cuda
