// Instantiations of the segmented reduction kernel (segmented_reduce_kernel.cuh): every op, both
// forms, for float and double (the 8 dtypes are split over 4 files to compile in parallel).
#include <cstdint>

#include "segmented_reduce_kernel.cuh"

namespace foldkit::cuda::seg {
FOLDKIT_SEG_INSTANTIATE(float)
FOLDKIT_SEG_INSTANTIATE(double)
}  // namespace foldkit::cuda::seg
