// Launches a kernel with programmatic stream serialization (Hopper PDL: its launch overlaps the
// previous kernel's end in the stream; the kernel waits for that grid before touching memory,
// device/grid_dependency.cuh). The one place the library, the benchmark and the probes build
// that launch (the full-array reduction's cluster launch adds a cluster attribute to its own).
#pragma once

#include <cuda_runtime_api.h>

namespace foldkit::cuda {

// kernel<<<grid, block, 0, stream>>>(args...), programmatic when `programmatic` (a tuning's
// switch; without it a plain launch through the same call). Returns the launch's error; callers
// that ignore it leave it for cudaGetLastError, as the library's <<<>>> launches do.
template <class... Params, class... Args>
cudaError_t launch_programmatic_if(bool programmatic, void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                                   const Args&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = programmatic ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

template <class... Params, class... Args>
cudaError_t launch_programmatic(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, const Args&... args) {
  return launch_programmatic_if(true, kernel, grid, block, stream, args...);
}

}  // namespace foldkit::cuda
