// Instantiations of the segmented reduction kernels (segmented_reduce_kernel.cuh: every op, both
// forms; segmented_group_kernel.cuh: the group path's ops), for half and bfloat16 (the 8 dtypes are split over 4 files to compile in parallel).
#include <cstdint>

#include "segmented_group_kernel.cuh"
#include "segmented_reduce_kernel.cuh"

namespace foldkit::cuda::seg {
FOLDKIT_SEG_INSTANTIATE(half)
FOLDKIT_SEG_INSTANTIATE(bfloat16)
FOLDKIT_SEG_GROUP_INSTANTIATE(half)
FOLDKIT_SEG_GROUP_INSTANTIATE(bfloat16)
}  // namespace foldkit::cuda::seg
