// The tensor scans' tile kernel (tensor_scan_kernel.cuh) for std::int32_t and std::uint32_t, every scan op: the
// instantiations are split over a few files to keep each compile short.
#include <cstdint>

#include "cuda/tensor_scan_kernel.cuh"

FOLDKIT_INSTANTIATE_TENSOR_SCAN(std::int32_t)
FOLDKIT_INSTANTIATE_TENSOR_SCAN(std::uint32_t)
