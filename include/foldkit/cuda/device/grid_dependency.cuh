// Programmatic dependent launch (Hopper): a kernel launched with the programmatic-stream-
// serialization attribute may start while the previous kernel in its stream is still running.
// It must wait for that grid before touching memory (wait_for_prior_grid), and it may let the
// next kernel begin launching once it no longer needs the SMs' issue slots for loads
// (allow_next_grid). Both are no-ops before sm_90 and for kernels launched without the attribute.
#pragma once

namespace foldkit::cuda {

__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace foldkit::cuda
