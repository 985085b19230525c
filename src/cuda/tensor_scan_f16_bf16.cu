// The tensor scans' tile kernel (tensor_scan_kernel.cuh) for foldkit::half and foldkit::bfloat16, every scan op: the
// instantiations are split over a few files to keep each compile short.
#include <cstdint>

#include "cuda/tensor_scan_kernel.cuh"

FOLDKIT_INSTANTIATE_TENSOR_SCAN(foldkit::half)
FOLDKIT_INSTANTIATE_TENSOR_SCAN(foldkit::bfloat16)
