// Launches the tensor scans' tile kernel (device/tensor_scan_kernel.cuh) for one policy Spec: the
// library's built-in ops (src/cuda/tensor_scan_kernel.cuh) and the header-only user functors
// (foldkit/cuda/tensor_scan_custom.cuh) go through this one launcher, so both run the same tiles
// with the same shapes (the host fills TileArgs: src/cuda/tensor_scan.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>

#include "foldkit/cuda/device/tensor_scan_args.hpp"
#include "foldkit/cuda/device/tensor_scan_kernel.cuh"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/error.hpp"

namespace foldkit::cuda::tensor_scan {

// The kernel asks for its dynamic shared memory (above 48 KiB needs an opt-in) and the largest
// carveout, once per (instantiation, device).
template <class Spec, int kV, int kIn>
void prepare_kernel(int device) {
  static std::atomic<int> asked[detail::kMemoDevices] = {};
  detail::per_device_memo(asked, device, [] {
    detail::check_cuda(cudaFuncSetAttribute(tile_scan_kernel<Spec, kV, kIn>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(tile_smem_bytes<Spec, kV, kIn>())),
                       "cudaFuncSetAttribute (tensor scan shared memory)");
    if (cudaFuncSetAttribute(tile_scan_kernel<Spec, kV, kIn>, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared) != cudaSuccess)
      (void)cudaGetLastError();  // a hint
    return 1;
  });
}

template <class Spec, int kV, int kIn>
void launch_at(const typename Spec::Args& args, cudaStream_t stream, int device) {
  prepare_kernel<Spec, kV, kIn>(device);
  tile_scan_kernel<Spec, kV, kIn>
      <<<args.num_tiles, Spec::kThreads, tile_smem_bytes<Spec, kV, kIn>(), stream>>>(args);
  detail::check_cuda(cudaGetLastError(), "launching the tensor scan kernel");
}

// The kernel of kV columns per thread and args.in_chunks chunks per thread.
template <class Spec, int kV>
void launch_with(const typename Spec::Args& args, cudaStream_t stream, int device) {
  if constexpr (Spec::kWide) {
    if (args.in_chunks == tuning::kTensorScanWideChunks)
      return launch_at<Spec, kV, tuning::kTensorScanWideChunks>(args, stream, device);
  } else {
    if (args.in_chunks == tuning::kTensorScanShallowChunks)
      return launch_at<Spec, kV, tuning::kTensorScanShallowChunks>(args, stream, device);
    if (args.in_chunks == tuning::kTensorScanDeepChunks)
      return launch_at<Spec, kV, tuning::kTensorScanDeepChunks>(args, stream, device);
  }
  throw Error(Errc::cuda_error, "tensor scan: no kernel for this tile depth");
}

// Enqueues the kernel of args.vec columns per thread. Throws Error(cuda_error) when the launch
// fails or no kernel has that width.
template <class Spec>
void launch_tile_scan(const typename Spec::Args& args, cudaStream_t stream, int device) {
  constexpr int kVc = Spec::kVc;
  if (args.vec == kVc) return launch_with<Spec, kVc>(args, stream, device);
  if constexpr (kVc >= 4) {
    if (args.vec == 2) return launch_with<Spec, 2>(args, stream, device);
  }
  if constexpr (kVc >= 8) {
    if (args.vec == 4) return launch_with<Spec, 4>(args, stream, device);
  }
  throw Error(Errc::cuda_error, "tensor scan: no kernel for this vector width");
}

}  // namespace foldkit::cuda::tensor_scan
